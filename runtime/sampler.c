/* Samplers: a cl_sampler keeps its three properties for clGetSamplerInfo
 * and the HSA sampler made from them, whose handle is OpenCL C's sampler
 * bits (cpu_abi.h): that value is what a sampler_t kernel argument carries
 * (kernel.c). */
#include <hsa/hsa_ext_image.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static int sampler_is_valid(cl_sampler s) {
  return object_is(s, OBJECT_SAMPLER);
}

static int addressing_to_hsa(cl_addressing_mode m, hsa_ext_sampler_addressing_mode32_t *out) {
  switch (m) {
  case CL_ADDRESS_NONE:
    *out = HSA_EXT_SAMPLER_ADDRESSING_MODE_UNDEFINED;
    return 1;
  case CL_ADDRESS_CLAMP_TO_EDGE:
    *out = HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_EDGE;
    return 1;
  case CL_ADDRESS_CLAMP:
    *out = HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_BORDER;
    return 1;
  case CL_ADDRESS_REPEAT:
    *out = HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT;
    return 1;
  case CL_ADDRESS_MIRRORED_REPEAT:
    *out = HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT;
    return 1;
  default:
    return 0;
  }
}

AQUILA_API cl_sampler clCreateSampler(cl_context context, cl_bool normalized_coords,
                                      cl_addressing_mode addressing_mode,
                                      cl_filter_mode filter_mode, cl_int *errcode_ret) {
  cl_int err;
  hsa_ext_sampler_descriptor_t d;
  if (!object_is(context, OBJECT_CONTEXT)) {
    err = CL_INVALID_CONTEXT;
    goto fail;
  }
  /* Repeat and mirrored repeat are defined for normalized coordinates only;
   * the specification makes other combinations CL_INVALID_VALUE. */
  if ((normalized_coords != CL_TRUE && normalized_coords != CL_FALSE) ||
      !addressing_to_hsa(addressing_mode, &d.address_mode) ||
      (filter_mode != CL_FILTER_NEAREST && filter_mode != CL_FILTER_LINEAR) ||
      (!normalized_coords &&
       (addressing_mode == CL_ADDRESS_REPEAT || addressing_mode == CL_ADDRESS_MIRRORED_REPEAT))) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  d.coordinate_mode = normalized_coords ? HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED
                                        : HSA_EXT_SAMPLER_COORDINATE_MODE_UNNORMALIZED;
  d.filter_mode = filter_mode == CL_FILTER_LINEAR ? HSA_EXT_SAMPLER_FILTER_MODE_LINEAR
                                                  : HSA_EXT_SAMPLER_FILTER_MODE_NEAREST;
  /* A sampler is a value that every agent's kernels decode alike
   * (hsa/image.c): this machine's agent makes it for all of them. */
  hsa_agent_t agent = aquila_host_agent;
  hsa_ext_sampler_t hs;
  if (hsa_ext_sampler_create(agent, &d, &hs) != HSA_STATUS_SUCCESS) {
    err = CL_OUT_OF_RESOURCES;
    goto fail;
  }
  cl_sampler s = calloc(1, sizeof *s);
  if (!s) {
    hsa_ext_sampler_destroy(agent, hs);
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  object_init(&s->header, OBJECT_SAMPLER);
  s->context = context;
  s->normalized_coords = normalized_coords;
  s->addressing_mode = addressing_mode;
  s->filter_mode = filter_mode;
  s->bits = hs.handle;
  object_retain(&context->header);
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return s;
fail:
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

/* OpenCL 2.0's sampler creation: the three 1.2 settings as a 0-terminated
 * property list, each at most once; the list is kept for
 * CL_SAMPLER_PROPERTIES. */
AQUILA_API cl_sampler clCreateSamplerWithProperties(cl_context context,
                                                    const cl_sampler_properties *properties,
                                                    cl_int *errcode_ret) {
  cl_bool normalized = CL_TRUE;
  cl_addressing_mode addressing = CL_ADDRESS_CLAMP;
  cl_filter_mode filter = CL_FILTER_NEAREST;
  unsigned seen = 0;
  size_t n = 0;
  cl_int err = CL_SUCCESS;
  if (!object_is(context, OBJECT_CONTEXT)) {
    err = CL_INVALID_CONTEXT;
    goto fail;
  }
  for (; properties && properties[n]; n += 2) {
    unsigned bit;
    switch (properties[n]) {
    case CL_SAMPLER_NORMALIZED_COORDS:
      bit = 1;
      normalized = (cl_bool)properties[n + 1];
      break;
    case CL_SAMPLER_ADDRESSING_MODE:
      bit = 2;
      addressing = (cl_addressing_mode)properties[n + 1];
      break;
    case CL_SAMPLER_FILTER_MODE:
      bit = 4;
      filter = (cl_filter_mode)properties[n + 1];
      break;
    default:
      err = CL_INVALID_VALUE;
      goto fail;
    }
    if (seen & bit) {
      err = CL_INVALID_VALUE; /* named twice */
      goto fail;
    }
    seen |= bit;
  }
  void *copy;
  size_t copy_size;
  if (property_list_copy(properties, n, sizeof *properties, &copy, &copy_size)) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  cl_sampler s = clCreateSampler(context, normalized, addressing, filter, &err);
  if (!s) {
    free(copy);
    goto fail;
  }
  s->properties = copy;
  s->properties_size = copy_size;
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return s;
fail:
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

AQUILA_API cl_int clRetainSampler(cl_sampler sampler) {
  if (!sampler_is_valid(sampler)) return CL_INVALID_SAMPLER;
  object_retain(&sampler->header);
  return CL_SUCCESS;
}

AQUILA_API cl_int clReleaseSampler(cl_sampler sampler) {
  if (!sampler_is_valid(sampler)) return CL_INVALID_SAMPLER;
  if (!object_release(&sampler->header)) return CL_SUCCESS;
  cl_context ctx = sampler->context;
  hsa_ext_sampler_t hs = {sampler->bits};
  hsa_ext_sampler_destroy(aquila_host_agent, hs);
  free(sampler->properties);
  object_free(sampler);
  clReleaseContext(ctx);
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetSamplerInfo(cl_sampler sampler, cl_sampler_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret) {
  if (!sampler_is_valid(sampler)) return CL_INVALID_SAMPLER;
  switch (param_name) {
  case CL_SAMPLER_REFERENCE_COUNT:
    INFO_VALUE(cl_uint, atomic_load(&sampler->header.refcount));
  case CL_SAMPLER_CONTEXT:
    INFO_VALUE(cl_context, sampler->context);
  case CL_SAMPLER_NORMALIZED_COORDS:
    INFO_VALUE(cl_bool, sampler->normalized_coords);
  case CL_SAMPLER_ADDRESSING_MODE:
    INFO_VALUE(cl_addressing_mode, sampler->addressing_mode);
  case CL_SAMPLER_FILTER_MODE:
    INFO_VALUE(cl_filter_mode, sampler->filter_mode);
  case CL_SAMPLER_PROPERTIES:
    return info_copy(sampler->properties, sampler->properties_size, param_value_size, param_value,
                     param_value_size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}
