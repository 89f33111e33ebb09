/* The HSA image extension (hsa/hsa_ext_image.h) for the CPU agent: which
 * formats and geometries it supports, image handles over caller memory in a
 * linear layout, host import/export, copy and clear, samplers, the agent's
 * image limits and the extension's function tables.
 *
 * An image handle is the address of a struct aquila_image (the CPU code
 * object contract in cpu_abi.h), so the runtime can pass the handle itself
 * as an OpenCL image kernel argument. A sampler handle is OpenCL C's sampler
 * bits, which is what a sampler_t argument carries. */
#include "hsa_internal.h"

#include <aquila/cpu_abi.h>
#include <hsa/hsa_ext_image.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* OpenCL's values, as struct aquila_image stores them (hsa/ does not include
 * the OpenCL headers). */
enum {
  CL_R_ = 0x10B0,
  CL_A_ = 0x10B1,
  CL_RG_ = 0x10B2,
  CL_RA_ = 0x10B3,
  CL_RGB_ = 0x10B4,
  CL_RGBA_ = 0x10B5,
  CL_BGRA_ = 0x10B6,
  CL_ARGB_ = 0x10B7,
  CL_INTENSITY_ = 0x10B8,
  CL_LUMINANCE_ = 0x10B9,
  CL_Rx_ = 0x10BA,
  CL_RGx_ = 0x10BB,
  CL_RGBx_ = 0x10BC
};
enum {
  CL_SNORM_INT8_ = 0x10D0,
  CL_SNORM_INT16_ = 0x10D1,
  CL_UNORM_INT8_ = 0x10D2,
  CL_UNORM_INT16_ = 0x10D3,
  CL_UNORM_SHORT_565_ = 0x10D4,
  CL_UNORM_SHORT_555_ = 0x10D5,
  CL_UNORM_INT_101010_ = 0x10D6,
  CL_SIGNED_INT8_ = 0x10D7,
  CL_SIGNED_INT16_ = 0x10D8,
  CL_SIGNED_INT32_ = 0x10D9,
  CL_UNSIGNED_INT8_ = 0x10DA,
  CL_UNSIGNED_INT16_ = 0x10DB,
  CL_UNSIGNED_INT32_ = 0x10DC,
  CL_HALF_FLOAT_ = 0x10DD,
  CL_FLOAT_ = 0x10DE
};
enum {
  CL_MEM_OBJECT_IMAGE2D_ = 0x10F1,
  CL_MEM_OBJECT_IMAGE3D_ = 0x10F2,
  CL_MEM_OBJECT_IMAGE2D_ARRAY_ = 0x10F3,
  CL_MEM_OBJECT_IMAGE1D_ = 0x10F4,
  CL_MEM_OBJECT_IMAGE1D_ARRAY_ = 0x10F5,
  CL_MEM_OBJECT_IMAGE1D_BUFFER_ = 0x10F6
};

/* Limits reported through hsa_agent_get_info. The CPU has no hardware
 * limit; these are OpenCL-sized values that keep every byte offset well
 * inside 64 bits and the coordinates inside int. */
#define AQ_IMAGE_1D_MAX 65536u
#define AQ_IMAGE_1DB_MAX (1u << 27)
#define AQ_IMAGE_2D_MAX 16384u
#define AQ_IMAGE_3D_MAX 2048u
#define AQ_IMAGE_LAYERS_MAX 2048u

#define AQ_IMAGE_MAGIC 0x1a6e0001u

/* The extension's statuses are a separate enum in hsa_ext_image.h. */
#define ERR_FORMAT ((hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED)
#define ERR_SIZE ((hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED)
#define ERR_PITCH ((hsa_status_t)HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED)
#define ERR_SAMPLER ((hsa_status_t)HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED)

/* The handle points at the first member, so it is the aquila_image code sees. */
struct aq_image {
  struct aquila_image image;
  uint32_t magic;
  uint32_t hsa_geometry;
  uint32_t component_size; /* bytes of one channel; the packed formats count as one */
  uint32_t slices;         /* depth, or the layers of an array: the z extent */
};

/* ---- formats ---- */

struct aq_format {
  uint32_t cl_order, cl_type, channels, element_size, component_size;
};

static uint32_t cl_type_of(uint32_t hsa_type) {
  static const uint32_t table[] = {
      [HSA_EXT_IMAGE_CHANNEL_TYPE_SNORM_INT8] = CL_SNORM_INT8_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_SNORM_INT16] = CL_SNORM_INT16_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8] = CL_UNORM_INT8_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16] = CL_UNORM_INT16_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT24] = 0, /* OpenCL 2.0 depth only */
      [HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_555] = CL_UNORM_SHORT_555_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565] = CL_UNORM_SHORT_565_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_101010] = CL_UNORM_INT_101010_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT8] = CL_SIGNED_INT8_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT16] = CL_SIGNED_INT16_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT32] = CL_SIGNED_INT32_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8] = CL_UNSIGNED_INT8_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16] = CL_UNSIGNED_INT16_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32] = CL_UNSIGNED_INT32_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_HALF_FLOAT] = CL_HALF_FLOAT_,
      [HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT] = CL_FLOAT_,
  };
  return hsa_type < sizeof table / sizeof table[0] ? table[hsa_type] : 0;
}

/* sRGB, ABGR and the depth orders are not OpenCL 1.2 formats. */
static uint32_t cl_order_of(uint32_t hsa_order) {
  switch (hsa_order) {
  case HSA_EXT_IMAGE_CHANNEL_ORDER_A:
    return CL_A_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_R:
    return CL_R_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_RX:
    return CL_Rx_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_RG:
    return CL_RG_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_RGX:
    return CL_RGx_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_RA:
    return CL_RA_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_RGB:
    return CL_RGB_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_RGBX:
    return CL_RGBx_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA:
    return CL_RGBA_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA:
    return CL_BGRA_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_ARGB:
    return CL_ARGB_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_INTENSITY:
    return CL_INTENSITY_;
  case HSA_EXT_IMAGE_CHANNEL_ORDER_LUMINANCE:
    return CL_LUMINANCE_;
  default:
    return 0;
  }
}

static bool type_is_packed(uint32_t t) {
  return t == CL_UNORM_SHORT_565_ || t == CL_UNORM_SHORT_555_ || t == CL_UNORM_INT_101010_;
}

static uint32_t type_size(uint32_t t) {
  switch (t) {
  case CL_SNORM_INT8_:
  case CL_UNORM_INT8_:
  case CL_SIGNED_INT8_:
  case CL_UNSIGNED_INT8_:
    return 1;
  case CL_SNORM_INT16_:
  case CL_UNORM_INT16_:
  case CL_SIGNED_INT16_:
  case CL_UNSIGNED_INT16_:
  case CL_HALF_FLOAT_:
  case CL_UNORM_SHORT_565_:
  case CL_UNORM_SHORT_555_:
    return 2;
  default:
    return 4;
  }
}

/* The OpenCL 1.2 rules (section 5.3.1.1): packed types only with RGB/RGBx,
 * BGRA/ARGB only with 8-bit types, INTENSITY/LUMINANCE only with the
 * normalized and float types. */
static bool format_lookup(const hsa_ext_image_format_t *f, struct aq_format *out) {
  uint32_t order = cl_order_of(f->channel_order), type = cl_type_of(f->channel_type);
  if (!order || !type) return false;
  uint32_t channels;
  switch (order) {
  case CL_RGB_:
  case CL_RGBx_:
    if (!type_is_packed(type)) return false;
    channels = 3;
    break;
  case CL_BGRA_:
  case CL_ARGB_:
    if (type_size(type) != 1) return false;
    channels = 4;
    break;
  case CL_INTENSITY_:
  case CL_LUMINANCE_:
    if (type != CL_UNORM_INT8_ && type != CL_UNORM_INT16_ && type != CL_SNORM_INT8_ &&
        type != CL_SNORM_INT16_ && type != CL_HALF_FLOAT_ && type != CL_FLOAT_)
      return false;
    channels = 1;
    break;
  case CL_RGBA_:
    channels = 4;
    break;
  case CL_RG_:
  case CL_RGx_:
  case CL_RA_:
    channels = 2;
    break;
  default:
    channels = 1;
    break;
  }
  if (type_is_packed(type) && channels != 3) return false;
  out->cl_order = order;
  out->cl_type = type;
  out->channels = channels;
  out->component_size = type_size(type);
  out->element_size = type_is_packed(type) ? type_size(type) : channels * type_size(type);
  return true;
}

static bool geometry_is_valid(uint32_t g) {
  return g <= HSA_EXT_IMAGE_GEOMETRY_2DADEPTH;
}

/* Depth geometries need the depth channel orders, which are not supported. */
static bool geometry_is_supported(uint32_t g) {
  return g <= HSA_EXT_IMAGE_GEOMETRY_1DB;
}

/* A remote agent's daemon runs this same code on its CPU agent: formats,
 * layouts and samplers are answered here for it too. */
static bool agent_has_images(hsa_agent_t agent) {
  return aq_agent_is_valid(agent) || aq_remote_agent_index(agent) >= 0;
}

static hsa_status_t capability(hsa_agent_t agent, hsa_ext_image_geometry_t geometry,
                               const hsa_ext_image_format_t *format, uint32_t *mask) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!agent_has_images(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!format || !mask || !geometry_is_valid(geometry)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct aq_format f;
  *mask = 0;
  /* Linear memory that the work-items address directly: every access mode
   * works, and the layout never depends on the access. */
  if (geometry_is_supported(geometry) && format_lookup(format, &f))
    *mask = HSA_EXT_IMAGE_CAPABILITY_READ_ONLY | HSA_EXT_IMAGE_CAPABILITY_WRITE_ONLY |
            HSA_EXT_IMAGE_CAPABILITY_READ_WRITE | HSA_EXT_IMAGE_CAPABILITY_READ_MODIFY_WRITE |
            HSA_EXT_IMAGE_CAPABILITY_ACCESS_INVARIANT_DATA_LAYOUT;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_ext_image_get_capability(hsa_agent_t agent, hsa_ext_image_geometry_t geometry,
                                          const hsa_ext_image_format_t *image_format,
                                          uint32_t *capability_mask) {
  return capability(agent, geometry, image_format, capability_mask);
}

hsa_status_t hsa_ext_image_get_capability_with_layout(hsa_agent_t agent,
                                                      hsa_ext_image_geometry_t geometry,
                                                      const hsa_ext_image_format_t *image_format,
                                                      hsa_ext_image_data_layout_t layout,
                                                      uint32_t *capability_mask) {
  if (layout != HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR && layout != HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE) {
    if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return capability(agent, geometry, image_format, capability_mask);
}

/* ---- descriptors and layout ---- */

/* The image's shape as struct aquila_image stores it: array layers of 1D
 * and 2D arrays are z, so one (x, y, z) addressing serves every geometry. */
struct aq_shape {
  struct aq_format format;
  uint32_t width, height, depth, layers, image_type;
  uint32_t slices; /* z extent: depth, or layers */
};

static hsa_status_t shape_of(const hsa_ext_image_descriptor_t *d, struct aq_shape *s) {
  if (!geometry_is_valid(d->geometry)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!geometry_is_supported(d->geometry) || !format_lookup(&d->format, &s->format))
    return ERR_FORMAT;
  size_t w = d->width, h = 1, z = 1, layers = 0, wmax = AQ_IMAGE_2D_MAX, hmax = 1, zmax = 1;
  switch (d->geometry) {
  case HSA_EXT_IMAGE_GEOMETRY_1D:
    wmax = AQ_IMAGE_1D_MAX;
    s->image_type = CL_MEM_OBJECT_IMAGE1D_;
    break;
  case HSA_EXT_IMAGE_GEOMETRY_1DB:
    wmax = AQ_IMAGE_1DB_MAX;
    s->image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER_;
    break;
  case HSA_EXT_IMAGE_GEOMETRY_1DA:
    wmax = AQ_IMAGE_1D_MAX;
    layers = z = d->array_size;
    zmax = AQ_IMAGE_LAYERS_MAX;
    s->image_type = CL_MEM_OBJECT_IMAGE1D_ARRAY_;
    break;
  case HSA_EXT_IMAGE_GEOMETRY_2D:
    h = d->height;
    hmax = AQ_IMAGE_2D_MAX;
    s->image_type = CL_MEM_OBJECT_IMAGE2D_;
    break;
  case HSA_EXT_IMAGE_GEOMETRY_2DA:
    h = d->height;
    hmax = AQ_IMAGE_2D_MAX;
    layers = z = d->array_size;
    zmax = AQ_IMAGE_LAYERS_MAX;
    s->image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY_;
    break;
  default: /* 3D */
    wmax = hmax = zmax = AQ_IMAGE_3D_MAX;
    h = d->height;
    z = d->depth;
    s->image_type = CL_MEM_OBJECT_IMAGE3D_;
    break;
  }
  if (w == 0 || h == 0 || z == 0 || w > wmax || h > hmax || z > zmax) return ERR_SIZE;
  s->width = (uint32_t)w;
  s->height = (uint32_t)h;
  s->slices = (uint32_t)z;
  s->depth = layers ? 1 : (uint32_t)z;
  s->layers = (uint32_t)layers;
  return HSA_STATUS_SUCCESS;
}

static bool access_is_valid(hsa_access_permission_t a) {
  return a == HSA_ACCESS_PERMISSION_RO || a == HSA_ACCESS_PERMISSION_WO ||
         a == HSA_ACCESS_PERMISSION_RW;
}

/* Pitches of 0 mean packed. A pitch must hold a row (a slice) and keep
 * every pixel on a multiple of the element size, as OpenCL requires of
 * host pitches; 1D arrays step layers by the slice pitch. */
static hsa_status_t pitches(const struct aq_shape *s, size_t *row_pitch, size_t *slice_pitch) {
  size_t row = (size_t)s->width * s->format.element_size;
  if (*row_pitch == 0) *row_pitch = row;
  if (*row_pitch < row || *row_pitch % s->format.element_size) return ERR_PITCH;
  size_t slice, size;
  /* Pitches the caller chose can be anything: a size that does not fit in
   * the address space is no image (a daemon checks the bytes an image
   * spans against the client's memory with it). */
  if (__builtin_mul_overflow(*row_pitch, (size_t)s->height, &slice)) return ERR_PITCH;
  if (*slice_pitch == 0) *slice_pitch = slice;
  if (s->slices > 1 && (*slice_pitch < slice || *slice_pitch % *row_pitch)) return ERR_PITCH;
  if (__builtin_mul_overflow(*slice_pitch, (size_t)s->slices, &size)) return ERR_PITCH;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t data_info(hsa_agent_t agent, const hsa_ext_image_descriptor_t *desc,
                              hsa_access_permission_t access, size_t row_pitch, size_t slice_pitch,
                              hsa_ext_image_data_info_t *info) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!agent_has_images(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!desc || !info || !access_is_valid(access)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct aq_shape s;
  hsa_status_t status = shape_of(desc, &s);
  if (status == HSA_STATUS_SUCCESS) status = pitches(&s, &row_pitch, &slice_pitch);
  if (status != HSA_STATUS_SUCCESS) return status;
  info->size = slice_pitch * s.slices;
  /* Code loads whole components, so the data must be aligned to one. */
  info->alignment = s.format.component_size;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_ext_image_data_get_info(hsa_agent_t agent,
                                         const hsa_ext_image_descriptor_t *image_descriptor,
                                         hsa_access_permission_t access_permission,
                                         hsa_ext_image_data_info_t *image_data_info) {
  return data_info(agent, image_descriptor, access_permission, 0, 0, image_data_info);
}

hsa_status_t hsa_ext_image_data_get_info_with_layout(
    hsa_agent_t agent, const hsa_ext_image_descriptor_t *image_descriptor,
    hsa_access_permission_t access_permission, hsa_ext_image_data_layout_t layout, size_t row_pitch,
    size_t slice_pitch, hsa_ext_image_data_info_t *image_data_info) {
  if (layout != HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR) {
    if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
    return layout == HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE ? ERR_FORMAT /* only linear takes pitches */
                                                      : HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return data_info(agent, image_descriptor, access_permission, row_pitch, slice_pitch,
                   image_data_info);
}

/* ---- images ---- */

static struct aq_image *image_from_handle(hsa_ext_image_t handle) {
  struct aq_image *im = (struct aq_image *)(uintptr_t)handle.handle;
  if (!aq_handle_is_live(handle.handle, AQ_HANDLE_IMAGE)) return NULL;
  return im;
}

static hsa_status_t create(hsa_agent_t agent, const hsa_ext_image_descriptor_t *desc,
                           const void *data, hsa_access_permission_t access, size_t row_pitch,
                           size_t slice_pitch, hsa_ext_image_t *out) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  int remote = aq_remote_agent_index(agent);
  if (!aq_agent_is_valid(agent) && remote < 0) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!desc || !data || !out || !access_is_valid(access)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct aq_shape s;
  hsa_status_t status = shape_of(desc, &s);
  if (status == HSA_STATUS_SUCCESS) status = pitches(&s, &row_pitch, &slice_pitch);
  if (status != HSA_STATUS_SUCCESS) return status;
  if ((uintptr_t)data % s.format.component_size) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  /* A remote agent's image: data is an address of its memory, the handle
   * the daemon's. */
  if (remote >= 0)
    return aq_remote_image_create((uint32_t)remote, desc, (uint64_t)(uintptr_t)data, access,
                                  row_pitch, slice_pitch, &out->handle);
  struct aq_image *im = calloc(1, sizeof *im);
  if (!im) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  im->image = (struct aquila_image){
      .data = (void *)data,
      .row_pitch = row_pitch,
      .slice_pitch = slice_pitch,
      .width = s.width,
      .height = s.height,
      .depth = s.depth,
      .array_size = s.layers,
      .image_type = s.image_type,
      .channel_order = s.format.cl_order,
      .channel_data_type = s.format.cl_type,
      .num_channels = s.format.channels,
      .element_size = s.format.element_size,
  };
  im->hsa_geometry = desc->geometry;
  im->component_size = s.format.component_size;
  im->slices = s.slices;
  if (!aq_handle_add(im, AQ_HANDLE_IMAGE)) {
    free(im);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  im->magic = AQ_IMAGE_MAGIC;
  out->handle = (uint64_t)(uintptr_t)im;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_ext_image_create(hsa_agent_t agent,
                                  const hsa_ext_image_descriptor_t *image_descriptor,
                                  const void *image_data, hsa_access_permission_t access_permission,
                                  hsa_ext_image_t *image) {
  return create(agent, image_descriptor, image_data, access_permission, 0, 0, image);
}

hsa_status_t hsa_ext_image_create_with_layout(hsa_agent_t agent,
                                              const hsa_ext_image_descriptor_t *image_descriptor,
                                              const void *image_data,
                                              hsa_access_permission_t access_permission,
                                              hsa_ext_image_data_layout_t layout, size_t row_pitch,
                                              size_t slice_pitch, hsa_ext_image_t *image) {
  if (layout != HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR) {
    if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
    return layout == HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE ? ERR_FORMAT
                                                      : HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return create(agent, image_descriptor, image_data, access_permission, row_pitch, slice_pitch,
                image);
}

hsa_status_t hsa_ext_image_destroy(hsa_agent_t agent, hsa_ext_image_t image) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  int remote = aq_remote_agent_index(agent);
  if (remote >= 0) {
    /* The daemon checks that it is one of this process's images. */
    if (!image.handle) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    aq_remote_image_destroy((uint32_t)remote, image.handle);
    return HSA_STATUS_SUCCESS;
  }
  if (!aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_image *im = image_from_handle(image);
  if (!im || !aq_handle_remove(im, AQ_HANDLE_IMAGE)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  im->magic = 0;
  free(im);
  return HSA_STATUS_SUCCESS;
}

/* A region in the image's (x, y, z) with array layers as z. HSA gives the
 * layer of a 1D array as y. */
struct aq_box {
  uint64_t x, y, z, w, h, d;
};

static bool box_of(const struct aq_image *im, const hsa_dim3_t *offset, const hsa_dim3_t *range,
                   struct aq_box *b) {
  *b = (struct aq_box){offset->x, offset->y, offset->z, range->x, range->y, range->z};
  if (im->hsa_geometry == HSA_EXT_IMAGE_GEOMETRY_1DA) {
    b->z = b->y;
    b->d = b->h;
    b->y = 0;
    b->h = 1;
  }
  /* Unused dimensions accept an offset of 0 and a range of 0 or 1. */
  if (im->image.height == 1 && b->h == 0) b->h = 1;
  if (im->slices == 1 && b->d == 0) b->d = 1;
  return b->w && b->h && b->d && b->x < im->image.width && b->w <= im->image.width - b->x &&
         b->y < im->image.height && b->h <= im->image.height - b->y && b->z < im->slices &&
         b->d <= im->slices - b->z;
}

static uint8_t *pixel(const struct aq_image *im, uint64_t x, uint64_t y, uint64_t z) {
  return (uint8_t *)im->image.data + z * im->image.slice_pitch + y * im->image.row_pitch +
         x * im->image.element_size;
}

/* Copies between the image and host memory laid out with the given pitches
 * (0: packed rows of the region, packed slices of those rows). */
static hsa_status_t transfer(hsa_agent_t agent, struct aq_image *im, void *host, size_t row_pitch,
                             size_t slice_pitch, const hsa_ext_image_region_t *region,
                             bool to_image) {
  struct aq_box b;
  if (!box_of(im, &region->offset, &region->range, &b)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  size_t row = b.w * im->image.element_size;
  if (row_pitch == 0) row_pitch = row;
  if (slice_pitch == 0) slice_pitch = row_pitch * b.h;
  if (row_pitch < row || slice_pitch < row_pitch * (b.h - 1) + row)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint64_t z = 0; z < b.d; z++)
    for (uint64_t y = 0; y < b.h; y++) {
      uint8_t *h = (uint8_t *)host + z * slice_pitch + y * row_pitch;
      uint8_t *p = pixel(im, b.x, b.y + y, b.z + z);
      memcpy(to_image ? p : h, to_image ? h : p, row);
    }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_ext_image_import(hsa_agent_t agent, const void *src_memory, size_t src_row_pitch,
                                  size_t src_slice_pitch, hsa_ext_image_t dst_image,
                                  const hsa_ext_image_region_t *image_region) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_image *im = image_from_handle(dst_image);
  if (!src_memory || !im || !image_region) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return transfer(agent, im, (void *)src_memory, src_row_pitch, src_slice_pitch, image_region,
                  true);
}

hsa_status_t hsa_ext_image_export(hsa_agent_t agent, hsa_ext_image_t src_image, void *dst_memory,
                                  size_t dst_row_pitch, size_t dst_slice_pitch,
                                  const hsa_ext_image_region_t *image_region) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_image *im = image_from_handle(src_image);
  if (!dst_memory || !im || !image_region) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return transfer(agent, im, dst_memory, dst_row_pitch, dst_slice_pitch, image_region, false);
}

hsa_status_t hsa_ext_image_copy(hsa_agent_t agent, hsa_ext_image_t src_image,
                                const hsa_dim3_t *src_offset, hsa_ext_image_t dst_image,
                                const hsa_dim3_t *dst_offset, const hsa_dim3_t *range) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_image *src = image_from_handle(src_image), *dst = image_from_handle(dst_image);
  if (!src || !dst || !src_offset || !dst_offset || !range)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct aq_box sb, db;
  if (!box_of(src, src_offset, range, &sb) || !box_of(dst, dst_offset, range, &db))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (src->image.channel_order != dst->image.channel_order ||
      src->image.channel_data_type != dst->image.channel_data_type || sb.w != db.w ||
      sb.h != db.h || sb.d != db.d)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  size_t row = sb.w * src->image.element_size;
  /* Rows of one image may overlap: copy in the direction that reads each
   * source row before it is overwritten, and memmove within a row. */
  bool backwards = pixel(dst, db.x, db.y, db.z) > pixel(src, sb.x, sb.y, sb.z);
  for (uint64_t i = 0; i < sb.d * sb.h; i++) {
    uint64_t k = backwards ? sb.d * sb.h - 1 - i : i, z = k / sb.h, y = k % sb.h;
    memmove(pixel(dst, db.x, db.y + y, db.z + z), pixel(src, sb.x, sb.y + y, sb.z + z), row);
  }
  return HSA_STATUS_SUCCESS;
}

/* ---- pixel encoding (the same conversions as write_image* in OpenCL C) ---- */

static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504 */
  if (ax < 0x38800000u) {                                   /* half subnormal or zero */
    float a;
    memcpy(&a, &ax, 4);
    return (uint16_t)(sign | (uint32_t)nearbyintf(a * 0x1p24f));
  }
  uint32_t m = ax - 0x38000000u; /* rebias the exponent from 127 to 15 */
  uint32_t h = m >> 13, rest = m & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

static uint32_t unorm(float f, float scale) {
  if (!(f > 0)) return 0; /* NaN too */
  f = f * scale;
  return (uint32_t)nearbyintf(f < scale ? f : scale);
}

static int32_t snorm(float f, float scale) {
  if (f != f) return 0;
  f = f * scale;
  f = f < -scale - 1 ? -scale - 1 : f > scale ? scale : f;
  return (int32_t)nearbyintf(f);
}

static int64_t clamp_i(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* color: float[4], int32_t[4] or uint32_t[4] in RGBA order, per the type. */
static void encode(const struct aquila_image *im, const void *color, uint8_t *out) {
  float f[4];
  int64_t v[4];
  uint32_t t = im->channel_data_type;
  bool is_signed = t == CL_SIGNED_INT8_ || t == CL_SIGNED_INT16_ || t == CL_SIGNED_INT32_;
  bool is_unsigned = t == CL_UNSIGNED_INT8_ || t == CL_UNSIGNED_INT16_ || t == CL_UNSIGNED_INT32_;
  for (int i = 0; i < 4; i++) {
    if (is_signed)
      v[i] = ((const int32_t *)color)[i];
    else if (is_unsigned)
      v[i] = ((const uint32_t *)color)[i];
    else
      memcpy(&f[i], (const char *)color + 4 * i, 4);
  }
  if (type_is_packed(t)) {
    uint32_t p;
    if (t == CL_UNORM_SHORT_565_)
      p = unorm(f[0], 31) << 11 | unorm(f[1], 63) << 5 | unorm(f[2], 31);
    else if (t == CL_UNORM_SHORT_555_)
      p = unorm(f[0], 31) << 10 | unorm(f[1], 31) << 5 | unorm(f[2], 31);
    else
      p = unorm(f[0], 1023) << 20 | unorm(f[1], 1023) << 10 | unorm(f[2], 1023);
    memcpy(out, &p, type_size(t));
    return;
  }
  /* Which RGBA component each stored channel holds. */
  static const int rgba[] = {0, 1, 2, 3}, bgra[] = {2, 1, 0, 3}, argb[] = {3, 0, 1, 2},
                   ra[] = {0, 3}, a[] = {3};
  const int *map = rgba;
  switch (im->channel_order) {
  case CL_BGRA_:
    map = bgra;
    break;
  case CL_ARGB_:
    map = argb;
    break;
  case CL_RA_:
    map = ra;
    break;
  case CL_A_:
    map = a;
    break;
  }
  for (uint32_t c = 0; c < im->num_channels; c++) {
    int s = map[c];
    uint8_t *o = out + c * type_size(t);
    switch (t) {
    case CL_UNORM_INT8_:
      *o = (uint8_t)unorm(f[s], 255);
      break;
    case CL_SNORM_INT8_:
      *(int8_t *)o = (int8_t)snorm(f[s], 127);
      break;
    case CL_UNORM_INT16_: {
      uint16_t x = (uint16_t)unorm(f[s], 65535);
      memcpy(o, &x, 2);
      break;
    }
    case CL_SNORM_INT16_: {
      int16_t x = (int16_t)snorm(f[s], 32767);
      memcpy(o, &x, 2);
      break;
    }
    case CL_HALF_FLOAT_: {
      uint16_t x = float_to_half(f[s]);
      memcpy(o, &x, 2);
      break;
    }
    case CL_FLOAT_:
      memcpy(o, &f[s], 4);
      break;
    case CL_SIGNED_INT8_:
      *(int8_t *)o = (int8_t)clamp_i(v[s], INT8_MIN, INT8_MAX);
      break;
    case CL_SIGNED_INT16_: {
      int16_t x = (int16_t)clamp_i(v[s], INT16_MIN, INT16_MAX);
      memcpy(o, &x, 2);
      break;
    }
    case CL_SIGNED_INT32_: {
      int32_t x = (int32_t)v[s];
      memcpy(o, &x, 4);
      break;
    }
    case CL_UNSIGNED_INT8_:
      *o = (uint8_t)clamp_i(v[s], 0, UINT8_MAX);
      break;
    case CL_UNSIGNED_INT16_: {
      uint16_t x = (uint16_t)clamp_i(v[s], 0, UINT16_MAX);
      memcpy(o, &x, 2);
      break;
    }
    default: {
      uint32_t x = (uint32_t)v[s];
      memcpy(o, &x, 4);
      break;
    }
    }
  }
}

/* data is the fill color in RGBA order: float[4] for normalized and float
 * types, int32_t[4] / uint32_t[4] for the signed / unsigned integer types. */
hsa_status_t hsa_ext_image_clear(hsa_agent_t agent, hsa_ext_image_t image, const void *data,
                                 const hsa_ext_image_region_t *image_region) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_image *im = image_from_handle(image);
  if (!im || !data || !image_region) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct aq_box b;
  if (!box_of(im, &image_region->offset, &image_region->range, &b))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  uint8_t element[16];
  uint32_t size = im->image.element_size;
  encode(&im->image, data, element);
  for (uint64_t z = 0; z < b.d; z++)
    for (uint64_t y = 0; y < b.h; y++) {
      uint8_t *p = pixel(im, b.x, b.y + y, b.z + z);
      for (uint64_t x = 0; x < b.w; x++)
        memcpy(p + x * size, element, size);
    }
  return HSA_STATUS_SUCCESS;
}

/* ---- samplers ---- */

/* OpenCL C's sampler bits (cpu_abi.h). */
#define AQ_SAMPLER_NORMALIZED 0x1u
#define AQ_SAMPLER_FILTER_NEAREST 0x10u
#define AQ_SAMPLER_FILTER_LINEAR 0x20u

hsa_status_t hsa_ext_sampler_create(hsa_agent_t agent,
                                    const hsa_ext_sampler_descriptor_t *sampler_descriptor,
                                    hsa_ext_sampler_t *sampler) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!agent_has_images(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!sampler_descriptor || !sampler) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const hsa_ext_sampler_descriptor_t *d = sampler_descriptor;
  if (d->coordinate_mode > HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED ||
      d->filter_mode > HSA_EXT_SAMPLER_FILTER_MODE_LINEAR ||
      d->address_mode > HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  /* OpenCL defines repeat and mirrored repeat for normalized coordinates only. */
  if (d->coordinate_mode == HSA_EXT_SAMPLER_COORDINATE_MODE_UNNORMALIZED &&
      d->address_mode >= HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT)
    return ERR_SAMPLER;
  /* UNDEFINED -> CLK_ADDRESS_NONE (0), then 0x2, 0x4, 0x6, 0x8 in HSA's order. */
  uint64_t bits = (uint64_t)d->address_mode * 2u;
  if (d->coordinate_mode == HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED)
    bits |= AQ_SAMPLER_NORMALIZED;
  bits |= d->filter_mode == HSA_EXT_SAMPLER_FILTER_MODE_LINEAR ? AQ_SAMPLER_FILTER_LINEAR
                                                               : AQ_SAMPLER_FILTER_NEAREST;
  sampler->handle = bits;
  return HSA_STATUS_SUCCESS;
}

/* Samplers own nothing; any value sampler_create can return is accepted.
 * A sampler is its value, the same for every agent: kernels decode it
 * (cpu_abi.h), on a daemon as here. */
hsa_status_t hsa_ext_sampler_destroy(hsa_agent_t agent, hsa_ext_sampler_t sampler) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!agent_has_images(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  uint64_t h = sampler.handle, filter = h & 0x30u, address = h & 0xeu;
  if ((h & ~0x3full) ||
      (filter != AQ_SAMPLER_FILTER_NEAREST && filter != AQ_SAMPLER_FILTER_LINEAR) ||
      address > 0x8u || (!(h & AQ_SAMPLER_NORMALIZED) && address >= 0x6u))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return HSA_STATUS_SUCCESS;
}

/* ---- agent attributes and the extension tables ---- */

bool aq_image_agent_info(uint32_t attribute, void *value) {
  size_t *dims = value;
  switch (attribute) {
  case HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS:
    dims[0] = AQ_IMAGE_1D_MAX;
    return true;
  case HSA_EXT_AGENT_INFO_IMAGE_1DA_MAX_ELEMENTS:
    dims[0] = AQ_IMAGE_1D_MAX;
    return true;
  case HSA_EXT_AGENT_INFO_IMAGE_1DB_MAX_ELEMENTS:
    dims[0] = AQ_IMAGE_1DB_MAX;
    return true;
  case HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS:
  case HSA_EXT_AGENT_INFO_IMAGE_2DA_MAX_ELEMENTS:
    dims[0] = dims[1] = AQ_IMAGE_2D_MAX;
    return true;
  case HSA_EXT_AGENT_INFO_IMAGE_2DDEPTH_MAX_ELEMENTS:
  case HSA_EXT_AGENT_INFO_IMAGE_2DADEPTH_MAX_ELEMENTS:
    dims[0] = dims[1] = 0; /* depth images are not supported */
    return true;
  case HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS:
    dims[0] = dims[1] = dims[2] = AQ_IMAGE_3D_MAX;
    return true;
  case HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS:
    *(uint32_t *)value = AQ_IMAGE_LAYERS_MAX;
    return true;
  /* Handles cost nothing here; these are OpenCL 1.2's minimums or more. */
  case HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES:
    *(uint32_t *)value = 128;
    return true;
  case HSA_EXT_AGENT_INFO_MAX_IMAGE_RORW_HANDLES:
    *(uint32_t *)value = 64;
    return true;
  case HSA_EXT_AGENT_INFO_MAX_SAMPLER_HANDLERS:
    *(uint32_t *)value = 16;
    return true;
  case HSA_EXT_AGENT_INFO_IMAGE_LINEAR_ROW_PITCH_ALIGNMENT:
    *(uint32_t *)value = 1; /* beyond a multiple of the element size */
    return true;
  default:
    return false;
  }
}

static const hsa_ext_images_1_pfn_t images_table = {
    .hsa_ext_image_get_capability = hsa_ext_image_get_capability,
    .hsa_ext_image_data_get_info = hsa_ext_image_data_get_info,
    .hsa_ext_image_create = hsa_ext_image_create,
    .hsa_ext_image_destroy = hsa_ext_image_destroy,
    .hsa_ext_image_copy = hsa_ext_image_copy,
    .hsa_ext_image_import = hsa_ext_image_import,
    .hsa_ext_image_export = hsa_ext_image_export,
    .hsa_ext_image_clear = hsa_ext_image_clear,
    .hsa_ext_sampler_create = hsa_ext_sampler_create,
    .hsa_ext_sampler_destroy = hsa_ext_sampler_destroy,
    .hsa_ext_image_get_capability_with_layout = hsa_ext_image_get_capability_with_layout,
    .hsa_ext_image_data_get_info_with_layout = hsa_ext_image_data_get_info_with_layout,
    .hsa_ext_image_create_with_layout = hsa_ext_image_create_with_layout,
};

/* The 1.00 table (hsa_system_get_extension_table) is a prefix of the major
 * version 1 table (hsa_system_get_major_extension_table), which copies as
 * much as the caller has room for. Returns the bytes written. */
size_t aq_image_table(bool major_table, void *table, size_t length) {
  size_t size = major_table ? sizeof images_table : sizeof(hsa_ext_images_1_00_pfn_t);
  if (major_table && length < size) size = length;
  memcpy(table, &images_table, size);
  return size;
}
