/* Images: cl_mem objects of type CL_MEM_OBJECT_IMAGE*, each backed by an HSA
 * image (hsa_ext_image_t) in the linear layout over host memory, and the
 * image commands. The HSA image extension does the pixel work: write and
 * read are hsa_ext_image_import / export, copy is hsa_ext_image_copy and fill
 * is hsa_ext_image_clear, all run on a scheduler worker. Because the layout
 * is linear and known (row pitch, slice pitch), mapping returns a pointer
 * into the storage and image <-> buffer copies are rectangular byte copies.
 *
 * On a remote device an image's bytes move like a buffer's (residency.c):
 * a kernel there takes the handle of an image the daemon made over the
 * device's copy (image_device_handle); image commands run on the host
 * storage, made current first.
 *
 * Coordinates follow OpenCL: a 1D array's layer is origin[1], a 2D array's
 * origin[2], which is also how HSA regions take them. In memory, layers are
 * stepped by the slice pitch (1D arrays too), as OpenCL's image_slice_pitch
 * describes. */
#include <hsa/hsa_ext_image.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/hsa_ext_aquila.h"
#include "runtime.h"


int mem_is_image(cl_mem m) {
  return object_is(m, OBJECT_MEM) && m->image_handle != 0;
}

/* The agent whose image extension works on the host storage: this
 * machine's, a device of the context or not. */
static hsa_agent_t context_agent(cl_context c) {
  (void)c;
  return aquila_host_agent;
}

/* ---- formats ---------------------------------------------------------------- */

static const cl_channel_order all_orders[] = {
    CL_RGBA, CL_BGRA, CL_ARGB, CL_R,    CL_A,         CL_RG,        CL_RA,
    CL_RGB,  CL_Rx,   CL_RGx,  CL_RGBx, CL_INTENSITY, CL_LUMINANCE,
};
static const cl_channel_type all_types[] = {
    CL_UNORM_INT8,   CL_UNORM_INT16,  CL_SNORM_INT8,      CL_SNORM_INT16,     CL_SIGNED_INT8,
    CL_SIGNED_INT16, CL_SIGNED_INT32, CL_UNSIGNED_INT8,   CL_UNSIGNED_INT16,  CL_UNSIGNED_INT32,
    CL_HALF_FLOAT,   CL_FLOAT,        CL_UNORM_SHORT_565, CL_UNORM_SHORT_555, CL_UNORM_INT_101010,
};

static int type_is_packed(cl_channel_type t) {
  return t == CL_UNORM_SHORT_565 || t == CL_UNORM_SHORT_555 || t == CL_UNORM_INT_101010;
}

/* Bytes of one channel (of the whole pixel for the packed types); 0 when t
 * is not an OpenCL 1.2 channel type. */
static size_t type_size(cl_channel_type t) {
  switch (t) {
  case CL_SNORM_INT8:
  case CL_UNORM_INT8:
  case CL_SIGNED_INT8:
  case CL_UNSIGNED_INT8:
    return 1;
  case CL_SNORM_INT16:
  case CL_UNORM_INT16:
  case CL_SIGNED_INT16:
  case CL_UNSIGNED_INT16:
  case CL_HALF_FLOAT:
  case CL_UNORM_SHORT_565:
  case CL_UNORM_SHORT_555:
    return 2;
  case CL_SIGNED_INT32:
  case CL_UNSIGNED_INT32:
  case CL_FLOAT:
  case CL_UNORM_INT_101010:
    return 4;
  default:
    return 0;
  }
}

/* Bytes per pixel, or 0 when the format is not a valid OpenCL 1.2 format
 * (section 5.3.1.1: RGB/RGBx only with the packed types and the packed
 * types only with them, BGRA/ARGB only with 8-bit channels, INTENSITY and
 * LUMINANCE only with normalized and float channels). The x channels of
 * Rx/RGx take no room, as the HSA agent lays them out. */
static size_t format_element_size(const cl_image_format *f) {
  if (!f) return 0;
  cl_channel_type t = f->image_channel_data_type;
  size_t size = type_size(t), channels;
  if (!size) return 0;
  switch (f->image_channel_order) {
  case CL_RGB:
  case CL_RGBx:
    return type_is_packed(t) ? size : 0;
  case CL_BGRA:
  case CL_ARGB:
    channels = size == 1 ? 4 : 0;
    break;
  case CL_INTENSITY:
  case CL_LUMINANCE:
    channels = (t == CL_UNORM_INT8 || t == CL_UNORM_INT16 || t == CL_SNORM_INT8 ||
                t == CL_SNORM_INT16 || t == CL_HALF_FLOAT || t == CL_FLOAT)
                   ? 1
                   : 0;
    break;
  case CL_RGBA:
    channels = 4;
    break;
  case CL_RG:
  case CL_RGx:
  case CL_RA:
    channels = 2;
    break;
  case CL_R:
  case CL_Rx:
  case CL_A:
    channels = 1;
    break;
  default:
    return 0;
  }
  if (type_is_packed(t)) return 0;
  return channels * size;
}

/* Only valid formats reach these tables. */
static hsa_ext_image_format_t hsa_format_of(const cl_image_format *f) {
  hsa_ext_image_format_t h;
  switch (f->image_channel_order) {
  case CL_R:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_R;
    break;
  case CL_A:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_A;
    break;
  case CL_RG:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RG;
    break;
  case CL_RA:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RA;
    break;
  case CL_RGB:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RGB;
    break;
  case CL_RGBA:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA;
    break;
  case CL_BGRA:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA;
    break;
  case CL_ARGB:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_ARGB;
    break;
  case CL_INTENSITY:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_INTENSITY;
    break;
  case CL_LUMINANCE:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_LUMINANCE;
    break;
  case CL_Rx:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RX;
    break;
  case CL_RGx:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RGX;
    break;
  default:
    h.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RGBX;
    break;
  }
  switch (f->image_channel_data_type) {
  case CL_SNORM_INT8:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_SNORM_INT8;
    break;
  case CL_SNORM_INT16:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_SNORM_INT16;
    break;
  case CL_UNORM_INT8:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8;
    break;
  case CL_UNORM_INT16:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16;
    break;
  case CL_UNORM_SHORT_565:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565;
    break;
  case CL_UNORM_SHORT_555:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_555;
    break;
  case CL_UNORM_INT_101010:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_101010;
    break;
  case CL_SIGNED_INT8:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT8;
    break;
  case CL_SIGNED_INT16:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT16;
    break;
  case CL_SIGNED_INT32:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT32;
    break;
  case CL_UNSIGNED_INT8:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8;
    break;
  case CL_UNSIGNED_INT16:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16;
    break;
  case CL_UNSIGNED_INT32:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32;
    break;
  case CL_HALF_FLOAT:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_HALF_FLOAT;
    break;
  default:
    h.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT;
    break;
  }
  return h;
}

/* The HSA geometry of an OpenCL image type; -1 for anything else. */
static int hsa_geometry_of(cl_mem_object_type t) {
  switch (t) {
  case CL_MEM_OBJECT_IMAGE1D:
    return HSA_EXT_IMAGE_GEOMETRY_1D;
  case CL_MEM_OBJECT_IMAGE1D_BUFFER:
    return HSA_EXT_IMAGE_GEOMETRY_1DB;
  case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    return HSA_EXT_IMAGE_GEOMETRY_1DA;
  case CL_MEM_OBJECT_IMAGE2D:
    return HSA_EXT_IMAGE_GEOMETRY_2D;
  case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    return HSA_EXT_IMAGE_GEOMETRY_2DA;
  case CL_MEM_OBJECT_IMAGE3D:
    return HSA_EXT_IMAGE_GEOMETRY_3D;
  default:
    return -1;
  }
}

/* The access a kernel may make, as HSA capability bits: CL_MEM_READ_WRITE
 * in OpenCL 1.2 means read by some kernels and written by others. */
static uint32_t capability_needed(cl_mem_flags flags) {
  if (flags & CL_MEM_READ_ONLY) return HSA_EXT_IMAGE_CAPABILITY_READ_ONLY;
  if (flags & CL_MEM_WRITE_ONLY) return HSA_EXT_IMAGE_CAPABILITY_WRITE_ONLY;
  return HSA_EXT_IMAGE_CAPABILITY_READ_ONLY | HSA_EXT_IMAGE_CAPABILITY_WRITE_ONLY;
}

/* Whether every device of the context takes the format for this geometry
 * and access (the context's formats are those all its devices support). */
static int format_supported(cl_context c, int geometry, const cl_image_format *f,
                            cl_mem_flags flags) {
  hsa_ext_image_format_t hf = hsa_format_of(f);
  uint32_t need = capability_needed(flags);
  for (cl_uint i = 0; i < c->num_devices; i++) {
    uint32_t mask = 0;
    if (hsa_ext_image_get_capability(c->devices[i]->agent, (hsa_ext_image_geometry_t)geometry, &hf,
                                     &mask) != HSA_STATUS_SUCCESS ||
        (mask & need) != need)
      return 0;
  }
  return 1;
}

/* ---- device limits ------------------------------------------------------------ */

void device_image_limits(cl_device_id d, struct image_limits *l) {
  size_t dims[3] = {0, 0, 0};
  uint32_t v = 0;
  memset(l, 0, sizeof *l);
  if (hsa_agent_get_info(d->agent, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS,
                         dims) == HSA_STATUS_SUCCESS) {
    l->width_2d = dims[0];
    l->height_2d = dims[1];
  }
  if (hsa_agent_get_info(d->agent, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS,
                         dims) == HSA_STATUS_SUCCESS) {
    l->width_3d = dims[0];
    l->height_3d = dims[1];
    l->depth_3d = dims[2];
  }
  if (hsa_agent_get_info(d->agent, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_1DB_MAX_ELEMENTS,
                         dims) == HSA_STATUS_SUCCESS)
    l->buffer_size = dims[0];
  if (hsa_agent_get_info(d->agent, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS,
                         &v) == HSA_STATUS_SUCCESS)
    l->array_size = v;
  /* Read-only handles bound image2d_t read_only arguments; the read-write
   * (or read-only) handle count bounds write_only arguments. */
  if (hsa_agent_get_info(d->agent, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES, &v) ==
      HSA_STATUS_SUCCESS)
    l->read_args = v;
  if (hsa_agent_get_info(d->agent, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_MAX_IMAGE_RORW_HANDLES,
                         &v) == HSA_STATUS_SUCCESS)
    l->write_args = v;
  if (hsa_agent_get_info(d->agent, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_MAX_SAMPLER_HANDLERS, &v) ==
      HSA_STATUS_SUCCESS)
    l->samplers = v;
}

/* Whether some device of the context takes an image of this size. The
 * limits are the ones clGetDeviceInfo reports: 1D images (arrays too) are
 * bounded by CL_DEVICE_IMAGE2D_MAX_WIDTH, as OpenCL 1.2 says. */
static int size_supported(cl_context c, const cl_image_desc *d) {
  for (cl_uint i = 0; i < c->num_devices; i++) {
    struct image_limits l;
    device_image_limits(c->devices[i], &l);
    int ok;
    switch (d->image_type) {
    case CL_MEM_OBJECT_IMAGE1D:
      ok = d->image_width <= l.width_2d;
      break;
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
      ok = d->image_width <= l.buffer_size;
      break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
      ok = d->image_width <= l.width_2d && d->image_array_size <= l.array_size;
      break;
    case CL_MEM_OBJECT_IMAGE2D:
      ok = d->image_width <= l.width_2d && d->image_height <= l.height_2d;
      break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
      ok = d->image_width <= l.width_2d && d->image_height <= l.height_2d &&
           d->image_array_size <= l.array_size;
      break;
    default:
      ok = d->image_width <= l.width_3d && d->image_height <= l.height_3d &&
           d->image_depth <= l.depth_3d;
      break;
    }
    if (ok) return 1;
  }
  return 0;
}

/* ---- creation ------------------------------------------------------------------ */

/* The image's extent in OpenCL coordinates: (width, height or layers of a
 * 1D array, depth or layers of a 2D array), 1 where unused. */
static void extent_of(const cl_image_desc *d, size_t ext[3]) {
  ext[0] = d->image_width;
  ext[1] = ext[2] = 1;
  switch (d->image_type) {
  case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    ext[1] = d->image_array_size;
    break;
  case CL_MEM_OBJECT_IMAGE2D:
    ext[1] = d->image_height;
    break;
  case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    ext[1] = d->image_height;
    ext[2] = d->image_array_size;
    break;
  case CL_MEM_OBJECT_IMAGE3D:
    ext[1] = d->image_height;
    ext[2] = d->image_depth;
    break;
  default:
    break;
  }
}

static int is_array_or_3d(cl_mem_object_type t) {
  return t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
         t == CL_MEM_OBJECT_IMAGE3D;
}

/* The HSA descriptor of image m (its geometry's fields only). */
static void hsa_descriptor_of(cl_mem m, hsa_ext_image_descriptor_t *hd) {
  *hd = (hsa_ext_image_descriptor_t){
      .geometry = (hsa_ext_image_geometry_t)hsa_geometry_of(m->type),
      .width = m->image_desc.image_width,
      .height = m->image_desc.image_height,
      .depth = m->image_desc.image_depth,
      .array_size = m->image_desc.image_array_size,
      .format = hsa_format_of(&m->image_format),
  };
}

/* Slice pitch the layout needs at least: one row for the 1D types (a 1D
 * array's layers are rows), else a row per line. */
static int min_slice_pitch(const cl_image_desc *d, size_t row_pitch, size_t *slice) {
  if (d->image_type != CL_MEM_OBJECT_IMAGE2D && d->image_type != CL_MEM_OBJECT_IMAGE2D_ARRAY &&
      d->image_type != CL_MEM_OBJECT_IMAGE3D) {
    *slice = row_pitch;
    return 1;
  }
  return !__builtin_mul_overflow(row_pitch, d->image_height, slice);
}

/* How many slices the storage holds: depth, or the layers of an array. */
static size_t num_slices(const cl_image_desc *d) {
  switch (d->image_type) {
  case CL_MEM_OBJECT_IMAGE1D_ARRAY:
  case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    return d->image_array_size;
  case CL_MEM_OBJECT_IMAGE3D:
    return d->image_depth;
  default:
    return 1;
  }
}

/* CL_INVALID_IMAGE_DESCRIPTOR checks (the sizes against the device limits
 * come later, as CL_INVALID_IMAGE_SIZE). Resolves the host pitches. */
static cl_int check_desc(cl_context c, const cl_image_desc *d, size_t elem, const void *host_ptr,
                         size_t *row_pitch, size_t *slice_pitch) {
  if (!d || hsa_geometry_of(d->image_type) < 0) return CL_INVALID_IMAGE_DESCRIPTOR;
  cl_mem_object_type t = d->image_type;
  if (d->image_width == 0) return CL_INVALID_IMAGE_DESCRIPTOR;
  if ((t == CL_MEM_OBJECT_IMAGE2D || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
       t == CL_MEM_OBJECT_IMAGE3D) &&
      d->image_height == 0)
    return CL_INVALID_IMAGE_DESCRIPTOR;
  if (t == CL_MEM_OBJECT_IMAGE3D && d->image_depth == 0) return CL_INVALID_IMAGE_DESCRIPTOR;
  if ((t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY) &&
      d->image_array_size == 0)
    return CL_INVALID_IMAGE_DESCRIPTOR;
  if (d->num_mip_levels != 0 || d->num_samples != 0) return CL_INVALID_IMAGE_DESCRIPTOR;
  if (t == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
    cl_mem b = d->buffer;
    size_t bytes;
    if (!mem_is_buffer(b) || b->context != c) return CL_INVALID_IMAGE_DESCRIPTOR;
    if (__builtin_mul_overflow(d->image_width, elem, &bytes) || bytes > b->size)
      return CL_INVALID_IMAGE_DESCRIPTOR;
  } else if (d->buffer) {
    /* A 2D image over a buffer (cl_khr_image2d_from_buffer, optional in 3.0)
     * is not supported: CL_DEVICE_IMAGE_PITCH_ALIGNMENT is 0. */
    return t == CL_MEM_OBJECT_IMAGE2D ? CL_INVALID_OPERATION : CL_INVALID_IMAGE_DESCRIPTOR;
  }
  /* A 1D buffer image has no host pointer of its own but a buffer whose
   * pitch programs pass along (as the CTS does); it only has to fit. */
  if (!host_ptr && t != CL_MEM_OBJECT_IMAGE1D_BUFFER &&
      (d->image_row_pitch || d->image_slice_pitch))
    return CL_INVALID_IMAGE_DESCRIPTOR;
  size_t row;
  if (__builtin_mul_overflow(d->image_width, elem, &row)) return CL_INVALID_IMAGE_DESCRIPTOR;
  *row_pitch = d->image_row_pitch ? d->image_row_pitch : row;
  if (*row_pitch < row || *row_pitch % elem) return CL_INVALID_IMAGE_DESCRIPTOR;
  size_t slice;
  if (!min_slice_pitch(d, *row_pitch, &slice)) return CL_INVALID_IMAGE_DESCRIPTOR;
  /* The slice pitch only means something for 3D images and arrays. */
  *slice_pitch = slice;
  if (is_array_or_3d(t) && d->image_slice_pitch) {
    if (d->image_slice_pitch < slice || d->image_slice_pitch % *row_pitch)
      return CL_INVALID_IMAGE_DESCRIPTOR;
    *slice_pitch = d->image_slice_pitch;
  }
  size_t total;
  if (__builtin_mul_overflow(*slice_pitch, num_slices(d), &total))
    return CL_INVALID_IMAGE_DESCRIPTOR;
  return CL_SUCCESS;
}

/* The checks a 1D buffer image's flags need against its buffer's. */
static cl_int check_buffer_flags(cl_mem_flags flags, cl_mem buffer) {
  cl_mem_flags bf = buffer->flags;
  if (((bf & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) ||
      ((bf & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))) ||
      ((bf & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY)) ||
      ((bf & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY)) ||
      ((bf & CL_MEM_HOST_NO_ACCESS) && (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))))
    return CL_INVALID_VALUE;
  if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))
    return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

static cl_int status_to_cl(hsa_status_t st) {
  switch ((int)st) {
  case HSA_STATUS_SUCCESS:
    return CL_SUCCESS;
  case HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED:
    return CL_IMAGE_FORMAT_NOT_SUPPORTED;
  case HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED:
    return CL_INVALID_IMAGE_SIZE;
  case HSA_STATUS_ERROR_OUT_OF_RESOURCES:
    return CL_OUT_OF_HOST_MEMORY;
  default:
    return CL_OUT_OF_RESOURCES;
  }
}

/* legacy: clCreateImage2D/3D, whose size and pitch errors are all
 * CL_INVALID_IMAGE_SIZE and whose 3D images have a depth above 1. */
static cl_mem image_create(cl_context context, cl_mem_flags flags, const cl_image_format *format,
                           const cl_image_desc *desc, void *host_ptr, int legacy,
                           cl_int *errcode_ret) {
  cl_int err;
  cl_mem m = NULL;
  size_t elem, row_pitch = 0, slice_pitch = 0;
  if (!object_is(context, OBJECT_CONTEXT)) {
    err = CL_INVALID_CONTEXT;
    goto fail;
  }
  if ((err = mem_check_flags(flags)) != CL_SUCCESS) goto fail;
  if (!(elem = format_element_size(format))) {
    err = CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
    goto fail;
  }
  if ((err = check_desc(context, desc, elem, host_ptr, &row_pitch, &slice_pitch)) != CL_SUCCESS) {
    if (legacy) err = CL_INVALID_IMAGE_SIZE;
    goto fail;
  }
  if (!size_supported(context, desc) ||
      (legacy && desc->image_type == CL_MEM_OBJECT_IMAGE3D && desc->image_depth <= 1)) {
    err = CL_INVALID_IMAGE_SIZE;
    goto fail;
  }
  if ((host_ptr == NULL) == !!(flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR))) {
    err = CL_INVALID_HOST_PTR;
    goto fail;
  }
  cl_mem buffer = desc->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER ? desc->buffer : NULL;
  if (buffer && (err = check_buffer_flags(flags, buffer)) != CL_SUCCESS) goto fail;
  /* Access flags left out are CL_MEM_READ_WRITE, or a buffer image's
   * buffer's; its host-pointer flags always come from the buffer. */
  const cl_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
  const cl_mem_flags host_access =
      CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
  if (buffer) {
    if (!(flags & access)) flags |= buffer->flags & access;
    if (!(flags & host_access)) flags |= buffer->flags & host_access;
    flags |= buffer->flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  } else if (!(flags & access)) {
    flags |= CL_MEM_READ_WRITE;
  }
  int geometry = hsa_geometry_of(desc->image_type);
  if (!format_supported(context, geometry, format, flags)) {
    err = CL_IMAGE_FORMAT_NOT_SUPPORTED;
    goto fail;
  }

  m = calloc(1, sizeof *m);
  if (!m) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  object_init(&m->header, OBJECT_MEM);
  m->context = context;
  m->type = desc->image_type;
  m->flags = flags;
  m->image_format = *format;
  m->element_size = elem;
  /* Only the fields of its geometry: clGetImageInfo answers 0 for the rest. */
  size_t ext[3];
  extent_of(desc, ext);
  m->image_desc.image_type = desc->image_type;
  m->image_desc.image_width = desc->image_width;
  if (desc->image_type == CL_MEM_OBJECT_IMAGE2D ||
      desc->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY || desc->image_type == CL_MEM_OBJECT_IMAGE3D)
    m->image_desc.image_height = desc->image_height;
  if (desc->image_type == CL_MEM_OBJECT_IMAGE3D) m->image_desc.image_depth = desc->image_depth;
  if (desc->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
      desc->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
    m->image_desc.image_array_size = desc->image_array_size;
  m->image_desc.buffer = buffer;
  pthread_mutex_init(&m->lock, NULL);

  /* The storage: the caller's with CL_MEM_USE_HOST_PTR (its pitches), the
   * buffer's for a buffer image, else packed memory of our own. */
  if (buffer) {
    m->data = buffer->data;
    m->host_ptr = buffer->host_ptr;
    m->row_pitch = elem * desc->image_width;
    m->slice_pitch = m->row_pitch;
    m->parent = buffer;
  } else if (flags & CL_MEM_USE_HOST_PTR) {
    m->data = host_ptr;
    m->host_ptr = host_ptr;
    m->row_pitch = row_pitch;
    m->slice_pitch = slice_pitch;
  } else {
    m->row_pitch = elem * desc->image_width;
    min_slice_pitch(desc, m->row_pitch, &m->slice_pitch);
    int fresh;
    if (!(m->data =
              mem_storage_alloc(m->slice_pitch * num_slices(desc), &m->storage_size, &fresh))) {
      err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
      goto fail_free;
    }
    m->owns_data = 1;
    m->pages_untouched = fresh;
  }
  m->size = m->slice_pitch * num_slices(desc);
  /* In a context with a remote device, its bytes move like a buffer's (a
   * buffer image's are its buffer's). */
  if (!buffer && (err = mem_residency_init(m)) != CL_SUCCESS) goto fail_free;

  hsa_ext_image_descriptor_t hd;
  hsa_descriptor_of(m, &hd);
  hsa_agent_t agent = context_agent(context);
  hsa_ext_image_data_info_t info;
  hsa_status_t st = hsa_ext_image_data_get_info_with_layout(
      agent, &hd, HSA_ACCESS_PERMISSION_RW, HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, m->row_pitch,
      is_array_or_3d(m->type) ? m->slice_pitch : 0, &info);
  if (st != HSA_STATUS_SUCCESS) {
    err = status_to_cl(st);
    goto fail_free;
  }
  /* The agent loads whole channels: the caller's (or buffer's) memory must
   * be aligned to one. */
  if ((uintptr_t)m->data % info.alignment) {
    debug_log("clCreateImage: storage %p is not aligned to %zu bytes", (void *)m->data,
              info.alignment);
    err = buffer ? CL_INVALID_IMAGE_DESCRIPTOR : CL_INVALID_HOST_PTR;
    goto fail_free;
  }
  hsa_ext_image_t img;
  st = hsa_ext_image_create_with_layout(agent, &hd, m->data, HSA_ACCESS_PERMISSION_RW,
                                        HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, m->row_pitch,
                                        is_array_or_3d(m->type) ? m->slice_pitch : 0, &img);
  if (st != HSA_STATUS_SUCCESS) {
    err = status_to_cl(st);
    goto fail_free;
  }
  m->image_handle = img.handle;
  if (!buffer && (flags & CL_MEM_COPY_HOST_PTR)) { /* a buffer image's flag is its buffer's */
    hsa_ext_image_region_t r = {{0, 0, 0}, {(uint32_t)ext[0], (uint32_t)ext[1], (uint32_t)ext[2]}};
    mem_place_for_host(m);
    st = hsa_ext_image_import(agent, host_ptr, row_pitch, slice_pitch, img, &r);
    if (st != HSA_STATUS_SUCCESS) {
      hsa_ext_image_destroy(agent, img);
      err = status_to_cl(st);
      goto fail_free;
    }
  }
  if (buffer) object_retain(&buffer->header);
  object_retain(&context->header);
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return m;

fail_free:
  mem_residency_free(m);
  if (m->owns_data) mem_storage_free(m->data, m->storage_size);
  pthread_mutex_destroy(&m->lock);
  free(m);
fail:
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

struct image_remote {
  uint64_t handle[AQ_MAX_REMOTE_DEVICES]; /* 0: none */
  cl_device_id device[AQ_MAX_REMOTE_DEVICES];
  uint32_t epoch[AQ_MAX_REMOTE_DEVICES]; /* the agent's when made */
};

static uint32_t agent_epoch(cl_device_id d) {
  uint32_t e = 0;
  hsa_agent_get_info(d->agent, HSA_VEN_AQUILA_AGENT_INFO_EPOCH, &e);
  return e;
}

cl_int image_device_handle(cl_mem m, cl_device_id d, uint64_t *handle) {
  d = device_root(d);
  uint32_t i = d->remote_index, epoch = agent_epoch(d);
  pthread_mutex_lock(&m->lock);
  if (!m->remote_images && !(m->remote_images = calloc(1, sizeof *m->remote_images))) {
    pthread_mutex_unlock(&m->lock);
    return CL_OUT_OF_HOST_MEMORY;
  }
  struct image_remote *r = m->remote_images;
  /* One made before the daemon was lost went with its memory. */
  if (r->handle[i] && r->epoch[i] != epoch) r->handle[i] = 0;
  cl_int err = CL_SUCCESS;
  if (!r->handle[i]) {
    uint64_t address = 0;
    err = mem_device_address(m, d, &address);
    hsa_ext_image_descriptor_t hd;
    hsa_descriptor_of(m, &hd);
    hsa_ext_image_t img = {0};
    hsa_status_t st = err ? HSA_STATUS_SUCCESS
                          : hsa_ext_image_create_with_layout(
                                d->agent, &hd, (void *)(uintptr_t)address, HSA_ACCESS_PERMISSION_RW,
                                HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, m->row_pitch,
                                is_array_or_3d(m->type) ? m->slice_pitch : 0, &img);
    if (!err && st != HSA_STATUS_SUCCESS) {
      debug_log("image of %zu bytes: %s could not make it (HSA status 0x%x)", m->size, d->name,
                (unsigned)st);
      err = CL_OUT_OF_RESOURCES;
    }
    if (!err) {
      r->handle[i] = img.handle;
      r->device[i] = d;
      r->epoch[i] = epoch;
    }
  }
  *handle = r->handle[i];
  pthread_mutex_unlock(&m->lock);
  return err;
}

void image_destroy(cl_mem m) {
  hsa_ext_image_t img = {m->image_handle};
  hsa_ext_image_destroy(context_agent(m->context), img);
  m->image_handle = 0;
  struct image_remote *r = m->remote_images;
  for (int i = 0; r && i < AQ_MAX_REMOTE_DEVICES; i++)
    if (r->handle[i] && agent_epoch(r->device[i]) == r->epoch[i])
      hsa_ext_image_destroy(r->device[i]->agent, (hsa_ext_image_t){r->handle[i]});
  free(r);
  m->remote_images = NULL;
}

AQUILA_API cl_mem clCreateImageWithProperties(cl_context context,
                                              const cl_mem_properties *properties,
                                              cl_mem_flags flags, const cl_image_format *format,
                                              const cl_image_desc *desc, void *host_ptr,
                                              cl_int *errcode_ret) {
  if (!memory_properties_check(context, properties, errcode_ret)) return NULL;
  cl_mem m = clCreateImage(context, flags, format, desc, host_ptr, errcode_ret);
  if (m) m->has_properties = properties != NULL;
  return m;
}

AQUILA_API cl_mem clCreateImage(cl_context context, cl_mem_flags flags,
                                const cl_image_format *image_format,
                                const cl_image_desc *image_desc, void *host_ptr,
                                cl_int *errcode_ret) {
  return image_create(context, flags, image_format, image_desc, host_ptr, 0, errcode_ret);
}

AQUILA_API cl_mem clCreateImage2D(cl_context context, cl_mem_flags flags,
                                  const cl_image_format *image_format, size_t width, size_t height,
                                  size_t row_pitch, void *host_ptr, cl_int *errcode_ret) {
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D,
                     .image_width = width,
                     .image_height = height,
                     .image_row_pitch = row_pitch};
  return image_create(context, flags, image_format, &d, host_ptr, 1, errcode_ret);
}

AQUILA_API cl_mem clCreateImage3D(cl_context context, cl_mem_flags flags,
                                  const cl_image_format *image_format, size_t width, size_t height,
                                  size_t depth, size_t row_pitch, size_t slice_pitch,
                                  void *host_ptr, cl_int *errcode_ret) {
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE3D,
                     .image_width = width,
                     .image_height = height,
                     .image_depth = depth,
                     .image_row_pitch = row_pitch,
                     .image_slice_pitch = slice_pitch};
  return image_create(context, flags, image_format, &d, host_ptr, 1, errcode_ret);
}

AQUILA_API cl_int clGetSupportedImageFormats(cl_context context, cl_mem_flags flags,
                                             cl_mem_object_type image_type, cl_uint num_entries,
                                             cl_image_format *image_formats,
                                             cl_uint *num_image_formats) {
  if (!object_is(context, OBJECT_CONTEXT)) return CL_INVALID_CONTEXT;
  /* CL_MEM_KERNEL_READ_AND_WRITE (2.0) asks for formats a kernel may read
   * and write: there are none, read-write images being an optional
   * feature these devices do not have (runtime/features.c). */
  int read_and_write = (flags & CL_MEM_KERNEL_READ_AND_WRITE) != 0;
  if (mem_check_flags(flags & ~(cl_mem_flags)CL_MEM_KERNEL_READ_AND_WRITE) != CL_SUCCESS)
    return CL_INVALID_VALUE;
  int geometry = hsa_geometry_of(image_type);
  if (geometry < 0 || (num_entries == 0 && image_formats)) return CL_INVALID_VALUE;
  cl_uint n = 0;
  for (size_t o = 0; !read_and_write && o < sizeof all_orders / sizeof all_orders[0]; o++)
    for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
      cl_image_format f = {all_orders[o], all_types[t]};
      if (!format_element_size(&f) || !format_supported(context, geometry, &f, flags)) continue;
      if (image_formats && n < num_entries) image_formats[n] = f;
      n++;
    }
  if (num_image_formats) *num_image_formats = n;
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetImageInfo(cl_mem image, cl_image_info param_name, size_t param_value_size,
                                 void *param_value, size_t *param_value_size_ret) {
  if (!mem_is_image(image)) return CL_INVALID_MEM_OBJECT;
  const cl_image_desc *d = &image->image_desc;
  switch (param_name) {
  case CL_IMAGE_FORMAT:
    INFO_VALUE(cl_image_format, image->image_format);
  case CL_IMAGE_ELEMENT_SIZE:
    INFO_VALUE(size_t, image->element_size);
  case CL_IMAGE_ROW_PITCH:
    INFO_VALUE(size_t, image->row_pitch);
  /* 0 for images without slices, as the specification says. */
  case CL_IMAGE_SLICE_PITCH:
    INFO_VALUE(size_t, is_array_or_3d(image->type) ? image->slice_pitch : 0);
  case CL_IMAGE_WIDTH:
    INFO_VALUE(size_t, d->image_width);
  case CL_IMAGE_HEIGHT:
    INFO_VALUE(size_t, d->image_height);
  case CL_IMAGE_DEPTH:
    INFO_VALUE(size_t, d->image_depth);
  case CL_IMAGE_ARRAY_SIZE:
    INFO_VALUE(size_t, d->image_array_size);
  case CL_IMAGE_BUFFER:
    INFO_VALUE(cl_mem, d->buffer);
  case CL_IMAGE_NUM_MIP_LEVELS:
    INFO_VALUE(cl_uint, 0);
  case CL_IMAGE_NUM_SAMPLES:
    INFO_VALUE(cl_uint, 0);
  default:
    return CL_INVALID_VALUE;
  }
}

/* ---- commands -------------------------------------------------------------------- */

/* Whether origin/region name a non-empty box inside the image that follows
 * its geometry's rules (unused coordinates 0, unused extents 1). */
static int region_valid(cl_mem m, const size_t *origin, const size_t *region) {
  if (!origin || !region) return 0;
  size_t ext[3];
  extent_of(&m->image_desc, ext);
  for (int i = 0; i < 3; i++)
    if (region[i] == 0 || origin[i] >= ext[i] || region[i] > ext[i] - origin[i]) return 0;
  return 1;
}

/* Byte offset of a pixel in the storage; a 1D array's layer (y) steps by
 * the slice pitch. */
static size_t pixel_offset(cl_mem m, const size_t *origin) {
  size_t ystep = m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? m->slice_pitch : m->row_pitch;
  return origin[0] * m->element_size + origin[1] * ystep + origin[2] * m->slice_pitch;
}

static cl_int host_access_check(cl_mem m, int reading) {
  if (m->flags & CL_MEM_HOST_NO_ACCESS) return CL_INVALID_OPERATION;
  if (reading && (m->flags & CL_MEM_HOST_WRITE_ONLY)) return CL_INVALID_OPERATION;
  if (!reading && (m->flags & CL_MEM_HOST_READ_ONLY)) return CL_INVALID_OPERATION;
  return CL_SUCCESS;
}

/* Resolves the host pitches of a read or write (0: packed) and checks them. */
static int host_pitches(cl_mem m, const size_t *region, size_t *row_pitch, size_t *slice_pitch) {
  size_t row = region[0] * m->element_size;
  if (*row_pitch == 0) *row_pitch = row;
  if (*row_pitch < row) return 0;
  if (!is_array_or_3d(m->type)) {
    if (*slice_pitch) return 0; /* 1D and 2D images take no slice pitch */
    *slice_pitch = *row_pitch * region[1];
    return 1;
  }
  size_t slice = m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? *row_pitch : *row_pitch * region[1];
  if (*slice_pitch == 0) *slice_pitch = slice;
  return *slice_pitch >= slice;
}

/* writes: whether the command writes image (residency.c: only the host's
 * bytes are current after it). */
static cl_event image_command(cl_command_queue q, cl_command_type type, cl_mem image,
                              const size_t *origin, const size_t *region, int writes) {
  cl_event ev = event_create_command(q, type, COMMAND_IMAGE);
  if (!ev) return NULL;
  ev->u.image.image = image;
  memcpy(ev->u.image.origin, origin, sizeof ev->u.image.origin);
  memcpy(ev->u.image.region, region, sizeof ev->u.image.region);
  if (retain_mem_access(ev, image, writes)) {
    event_release_internal(ev);
    return NULL;
  }
  return ev;
}

static cl_int enqueue_transfer(cl_command_queue q, cl_command_type type, cl_mem image,
                               cl_bool blocking, const size_t *origin, const size_t *region,
                               size_t row_pitch, size_t slice_pitch, const void *ptr,
                               cl_uint num_wait, const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_image(image)) return CL_INVALID_MEM_OBJECT;
  if (image->context != q->context) return CL_INVALID_CONTEXT;
  if (!ptr || !region_valid(image, origin, region) ||
      !host_pitches(image, region, &row_pitch, &slice_pitch))
    return CL_INVALID_VALUE;
  cl_int err = event_check_wait_list(q->context, num_wait, wait_list);
  if (err) return err;
  if ((err = host_access_check(image, type == CL_COMMAND_READ_IMAGE))) return err;
  cl_event ev = image_command(q, type, image, origin, region, type == CL_COMMAND_WRITE_IMAGE);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  ev->u.image.host = (void *)ptr;
  ev->u.image.row_pitch = row_pitch;
  ev->u.image.slice_pitch = slice_pitch;
  return finish_enqueue(ev, num_wait, wait_list, blocking, event);
}

AQUILA_API cl_int clEnqueueReadImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                     const size_t *origin, const size_t *region, size_t row_pitch,
                                     size_t slice_pitch, void *ptr, cl_uint num_wait,
                                     const cl_event *wait_list, cl_event *event) {
  return enqueue_transfer(q, CL_COMMAND_READ_IMAGE, image, blocking, origin, region, row_pitch,
                          slice_pitch, ptr, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueWriteImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                      const size_t *origin, const size_t *region,
                                      size_t input_row_pitch, size_t input_slice_pitch,
                                      const void *ptr, cl_uint num_wait, const cl_event *wait_list,
                                      cl_event *event) {
  return enqueue_transfer(q, CL_COMMAND_WRITE_IMAGE, image, blocking, origin, region,
                          input_row_pitch, input_slice_pitch, ptr, num_wait, wait_list, event);
}

static int boxes_overlap(const size_t *a, const size_t *b, const size_t *region) {
  for (int i = 0; i < 3; i++)
    if (a[i] >= b[i] + region[i] || b[i] >= a[i] + region[i]) return 0;
  return 1;
}

AQUILA_API cl_int clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                     const size_t *src_origin, const size_t *dst_origin,
                                     const size_t *region, cl_uint num_wait,
                                     const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_image(src) || !mem_is_image(dst)) return CL_INVALID_MEM_OBJECT;
  if (src->context != q->context || dst->context != q->context) return CL_INVALID_CONTEXT;
  if (src->image_format.image_channel_order != dst->image_format.image_channel_order ||
      src->image_format.image_channel_data_type != dst->image_format.image_channel_data_type)
    return CL_IMAGE_FORMAT_MISMATCH;
  if (!region_valid(src, src_origin, region) || !region_valid(dst, dst_origin, region))
    return CL_INVALID_VALUE;
  cl_int err = event_check_wait_list(q->context, num_wait, wait_list);
  if (err) return err;
  if (src == dst && boxes_overlap(src_origin, dst_origin, region)) return CL_MEM_COPY_OVERLAP;
  cl_event ev = image_command(q, CL_COMMAND_COPY_IMAGE, src, src_origin, region, 0);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  ev->u.image.other = dst;
  memcpy(ev->u.image.other_origin, dst_origin, sizeof ev->u.image.other_origin);
  if (retain_mem(ev, dst)) {
    event_release_internal(ev);
    return CL_OUT_OF_HOST_MEMORY;
  }
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

AQUILA_API cl_int clEnqueueFillImage(cl_command_queue q, cl_mem image, const void *fill_color,
                                     const size_t *origin, const size_t *region, cl_uint num_wait,
                                     const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_image(image)) return CL_INVALID_MEM_OBJECT;
  if (image->context != q->context) return CL_INVALID_CONTEXT;
  if (!fill_color || !region_valid(image, origin, region)) return CL_INVALID_VALUE;
  cl_int err = event_check_wait_list(q->context, num_wait, wait_list);
  if (err) return err;
  cl_event ev = image_command(q, CL_COMMAND_FILL_IMAGE, image, origin, region, 1);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  /* float4, int4 or uint4 by the image's channel type: 16 bytes in all cases. */
  memcpy(ev->u.image.color, fill_color, sizeof ev->u.image.color);
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

/* Image <-> buffer: the buffer side is packed (rows of region[0] pixels,
 * then region[1] rows, region[2] slices), the image side its storage's
 * pitches, so each is a rectangular byte copy on a worker. A 1D array's
 * layers count as slices. */
static cl_int enqueue_image_buffer(cl_command_queue q, cl_command_type type, cl_mem image,
                                   cl_mem buffer, const size_t *origin, const size_t *region,
                                   size_t offset, cl_uint num_wait, const cl_event *wait_list,
                                   cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_image(image) || !mem_is_buffer(buffer)) return CL_INVALID_MEM_OBJECT;
  if (image->context != q->context || buffer->context != q->context) return CL_INVALID_CONTEXT;
  if (!region_valid(image, origin, region)) return CL_INVALID_VALUE;
  size_t bytes = region[0] * image->element_size * region[1] * region[2];
  if (offset > buffer->size || bytes > buffer->size - offset) return CL_INVALID_VALUE;
  cl_int err = event_check_wait_list(q->context, num_wait, wait_list);
  if (err) return err;
  cl_event ev = event_create_command(q, type, COMMAND_COPY_RECT);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  int layers_as_slices = image->type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  size_t row = region[0] * image->element_size;
  char *image_ptr = image->data + pixel_offset(image, origin);
  char *buffer_ptr = buffer->data + offset;
  __typeof__(ev->u.copy) *c = &ev->u.copy;
  c->region[0] = row;
  c->region[1] = layers_as_slices ? 1 : region[1];
  c->region[2] = layers_as_slices ? region[1] : region[2];
  size_t buffer_row = row, buffer_slice = row * c->region[1];
  int to_buffer = type == CL_COMMAND_COPY_IMAGE_TO_BUFFER;
  c->dst = to_buffer ? buffer_ptr : image_ptr;
  c->src = to_buffer ? image_ptr : buffer_ptr;
  c->dst_row = to_buffer ? buffer_row : image->row_pitch;
  c->dst_slice = to_buffer ? buffer_slice : image->slice_pitch;
  c->src_row = to_buffer ? image->row_pitch : buffer_row;
  c->src_slice = to_buffer ? image->slice_pitch : buffer_slice;
  if (retain_mem_access(ev, image, !to_buffer) || retain_mem_access(ev, buffer, to_buffer)) {
    event_release_internal(ev);
    return CL_OUT_OF_HOST_MEMORY;
  }
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

AQUILA_API cl_int clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                             const size_t *src_origin, const size_t *region,
                                             size_t dst_offset, cl_uint num_wait,
                                             const cl_event *wait_list, cl_event *event) {
  return enqueue_image_buffer(q, CL_COMMAND_COPY_IMAGE_TO_BUFFER, src, dst, src_origin, region,
                              dst_offset, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                             size_t src_offset, const size_t *dst_origin,
                                             const size_t *region, cl_uint num_wait,
                                             const cl_event *wait_list, cl_event *event) {
  return enqueue_image_buffer(q, CL_COMMAND_COPY_BUFFER_TO_IMAGE, dst, src, dst_origin, region,
                              src_offset, num_wait, wait_list, event);
}

AQUILA_API void *clEnqueueMapImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                   cl_map_flags map_flags, const size_t *origin,
                                   const size_t *region, size_t *image_row_pitch,
                                   size_t *image_slice_pitch, cl_uint num_wait,
                                   const cl_event *wait_list, cl_event *event,
                                   cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  void *result = NULL;
  if (queue_check(q))
    err = CL_INVALID_COMMAND_QUEUE;
  else if (!mem_is_image(image))
    err = CL_INVALID_MEM_OBJECT;
  else if (image->context != q->context)
    err = CL_INVALID_CONTEXT;
  else if (!region_valid(image, origin, region) ||
           (map_flags &
            ~(cl_map_flags)(CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) ||
           ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) &&
            (map_flags & (CL_MAP_READ | CL_MAP_WRITE))) ||
           !image_row_pitch || (is_array_or_3d(image->type) && !image_slice_pitch))
    err = CL_INVALID_VALUE;
  else if ((err = event_check_wait_list(q->context, num_wait, wait_list)) != CL_SUCCESS) {
  } else if ((map_flags & CL_MAP_READ) &&
             (image->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)))
    err = CL_INVALID_OPERATION;
  else if ((map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) &&
           (image->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)))
    err = CL_INVALID_OPERATION;
  else {
    cl_event ev = event_create_command(q, CL_COMMAND_MAP_IMAGE, COMMAND_MAP);
    int writes = (map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0;
    if (!ev || retain_mem_access(ev, image, writes)) {
      if (ev) event_release_internal(ev);
      err = CL_OUT_OF_HOST_MEMORY;
    } else {
      /* The linear storage is the mapping: no copy either way. */
      atomic_fetch_add(&image->map_count, 1);
      result = image->data + pixel_offset(image, origin);
      *image_row_pitch = image->row_pitch;
      if (image_slice_pitch)
        *image_slice_pitch = is_array_or_3d(image->type) ? image->slice_pitch : 0;
      err = finish_enqueue(ev, num_wait, wait_list, blocking, event);
      if (err) result = NULL;
    }
  }
  if (errcode_ret) *errcode_ret = err;
  return result;
}

static hsa_dim3_t dim3(const size_t v[3]) {
  return (hsa_dim3_t){(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2]};
}

cl_int image_command_execute(cl_event ev) {
  __typeof__(ev->u.image) *c = &ev->u.image;
  hsa_agent_t agent = context_agent(ev->context); /* the pixels are in host memory */
  hsa_ext_image_t img = {c->image->image_handle};
  hsa_ext_image_region_t r = {dim3(c->origin), dim3(c->region)};
  hsa_status_t st;
  switch (ev->type) {
  case CL_COMMAND_READ_IMAGE:
    st = hsa_ext_image_export(agent, img, c->host, c->row_pitch, c->slice_pitch, &r);
    break;
  case CL_COMMAND_WRITE_IMAGE:
    st = hsa_ext_image_import(agent, c->host, c->row_pitch, c->slice_pitch, img, &r);
    break;
  case CL_COMMAND_COPY_IMAGE: {
    hsa_ext_image_t dst = {c->other->image_handle};
    hsa_dim3_t dst_origin = dim3(c->other_origin);
    st = hsa_ext_image_copy(agent, img, &r.offset, dst, &dst_origin, &r.range);
    break;
  }
  default: /* CL_COMMAND_FILL_IMAGE */
    st = hsa_ext_image_clear(agent, img, c->color, &r);
    break;
  }
  if (st != HSA_STATUS_SUCCESS) {
    /* Validation at enqueue makes this unreachable; fail the event rather
     * than pretend. */
    debug_log("image command 0x%x: HSA status 0x%x", (unsigned)ev->type, (unsigned)st);
    return CL_OUT_OF_RESOURCES;
  }
  return CL_COMPLETE;
}
