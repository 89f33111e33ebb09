/* Images and samplers. This device reports CL_DEVICE_IMAGE_SUPPORT = CL_FALSE
 * (the HSA image extension is not wired to OpenCL yet), so each entry point
 * validates what it can and returns the error the specification gives for a
 * context without image support: CL_INVALID_OPERATION for creation, and
 * CL_INVALID_MEM_OBJECT / CL_INVALID_SAMPLER for handles, which can never
 * name an Aquila image or sampler. */
#include "runtime.h"

static cl_mem fail_create(cl_context context, cl_int *errcode_ret) {
  if (errcode_ret)
    *errcode_ret = object_is(context, OBJECT_CONTEXT) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT;
  debug_log("images are not supported by this device");
  return NULL;
}

AQUILA_API cl_mem clCreateImage(cl_context context, cl_mem_flags flags,
                                const cl_image_format *image_format,
                                const cl_image_desc *image_desc, void *host_ptr,
                                cl_int *errcode_ret) {
  return fail_create(context, errcode_ret);
}

AQUILA_API cl_mem clCreateImage2D(cl_context context, cl_mem_flags flags,
                                  const cl_image_format *image_format, size_t width,
                                  size_t height, size_t row_pitch, void *host_ptr,
                                  cl_int *errcode_ret) {
  return fail_create(context, errcode_ret);
}

AQUILA_API cl_mem clCreateImage3D(cl_context context, cl_mem_flags flags,
                                  const cl_image_format *image_format, size_t width,
                                  size_t height, size_t depth, size_t row_pitch,
                                  size_t slice_pitch, void *host_ptr, cl_int *errcode_ret) {
  return fail_create(context, errcode_ret);
}

/* No device of the context supports images: the list of formats is empty. */
AQUILA_API cl_int clGetSupportedImageFormats(cl_context context, cl_mem_flags flags,
                                             cl_mem_object_type image_type, cl_uint num_entries,
                                             cl_image_format *image_formats,
                                             cl_uint *num_image_formats) {
  if (!object_is(context, OBJECT_CONTEXT)) return CL_INVALID_CONTEXT;
  if (num_entries == 0 && image_formats) return CL_INVALID_VALUE;
  switch (image_type) {
  case CL_MEM_OBJECT_IMAGE1D:
  case CL_MEM_OBJECT_IMAGE1D_BUFFER:
  case CL_MEM_OBJECT_IMAGE1D_ARRAY:
  case CL_MEM_OBJECT_IMAGE2D:
  case CL_MEM_OBJECT_IMAGE2D_ARRAY:
  case CL_MEM_OBJECT_IMAGE3D: break;
  default: return CL_INVALID_VALUE;
  }
  if (num_image_formats) *num_image_formats = 0;
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetImageInfo(cl_mem image, cl_image_info param_name, size_t param_value_size,
                                 void *param_value, size_t *param_value_size_ret) {
  return CL_INVALID_MEM_OBJECT;
}

AQUILA_API cl_int clEnqueueReadImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                     const size_t *origin, const size_t *region, size_t row_pitch,
                                     size_t slice_pitch, void *ptr, cl_uint num_wait,
                                     const cl_event *wait_list, cl_event *event) {
  return queue_check(q) ? CL_INVALID_COMMAND_QUEUE : CL_INVALID_MEM_OBJECT;
}

AQUILA_API cl_int clEnqueueWriteImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                      const size_t *origin, const size_t *region,
                                      size_t input_row_pitch, size_t input_slice_pitch,
                                      const void *ptr, cl_uint num_wait,
                                      const cl_event *wait_list, cl_event *event) {
  return queue_check(q) ? CL_INVALID_COMMAND_QUEUE : CL_INVALID_MEM_OBJECT;
}

AQUILA_API cl_int clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                     const size_t *src_origin, const size_t *dst_origin,
                                     const size_t *region, cl_uint num_wait,
                                     const cl_event *wait_list, cl_event *event) {
  return queue_check(q) ? CL_INVALID_COMMAND_QUEUE : CL_INVALID_MEM_OBJECT;
}

AQUILA_API cl_int clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                             const size_t *src_origin, const size_t *region,
                                             size_t dst_offset, cl_uint num_wait,
                                             const cl_event *wait_list, cl_event *event) {
  return queue_check(q) ? CL_INVALID_COMMAND_QUEUE : CL_INVALID_MEM_OBJECT;
}

AQUILA_API cl_int clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                             size_t src_offset, const size_t *dst_origin,
                                             const size_t *region, cl_uint num_wait,
                                             const cl_event *wait_list, cl_event *event) {
  return queue_check(q) ? CL_INVALID_COMMAND_QUEUE : CL_INVALID_MEM_OBJECT;
}

AQUILA_API void *clEnqueueMapImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                   cl_map_flags map_flags, const size_t *origin,
                                   const size_t *region, size_t *image_row_pitch,
                                   size_t *image_slice_pitch, cl_uint num_wait,
                                   const cl_event *wait_list, cl_event *event,
                                   cl_int *errcode_ret) {
  if (errcode_ret) *errcode_ret = queue_check(q) ? CL_INVALID_COMMAND_QUEUE : CL_INVALID_MEM_OBJECT;
  return NULL;
}

AQUILA_API cl_int clEnqueueFillImage(cl_command_queue q, cl_mem image, const void *fill_color,
                                     const size_t *origin, const size_t *region,
                                     cl_uint num_wait, const cl_event *wait_list,
                                     cl_event *event) {
  return queue_check(q) ? CL_INVALID_COMMAND_QUEUE : CL_INVALID_MEM_OBJECT;
}

AQUILA_API cl_sampler clCreateSampler(cl_context context, cl_bool normalized_coords,
                                      cl_addressing_mode addressing_mode,
                                      cl_filter_mode filter_mode, cl_int *errcode_ret) {
  if (errcode_ret)
    *errcode_ret = object_is(context, OBJECT_CONTEXT) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT;
  return NULL;
}

AQUILA_API cl_int clRetainSampler(cl_sampler sampler) {
  return CL_INVALID_SAMPLER;
}

AQUILA_API cl_int clReleaseSampler(cl_sampler sampler) {
  return CL_INVALID_SAMPLER;
}

AQUILA_API cl_int clGetSamplerInfo(cl_sampler sampler, cl_sampler_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret) {
  return CL_INVALID_SAMPLER;
}
