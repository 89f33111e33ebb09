/* Image builtins (OpenCL 1.2 section 6.12.14) over struct aquila_image, the
 * CPU agent's image (hsa/include/aquila/cpu_abi.h): read_image{f,i,ui} with
 * and without a sampler, write_image{f,i,ui}, the get_image_* queries, and
 * __translate_sampler_initializer, which clang calls for sampler constants.
 *
 * An image argument is the address of a struct aquila_image; a sampler is a
 * pointer whose value is the sampler bits (CLK_NORMALIZED_COORDS_TRUE |
 * CLK_ADDRESS_* | CLK_FILTER_*). Addressing and filtering follow the 1.2
 * specification's section 8.2 formulas; pixel conversions section 8.3.
 * Coordinates the specification leaves undefined (out of range with
 * CLK_ADDRESS_NONE, out-of-range writes, array layers) are clamped or
 * dropped so that no access leaves the image. */
#include "clc.h"

/* Same layout as cpu_abi.h's struct aquila_image. */
struct aquila_image {
  __global uchar *data;
  ulong row_pitch, slice_pitch;
  uint width, height, depth, array_size, image_type;
  uint channel_order, channel_data_type, num_channels, element_size, reserved;
};
typedef __global const struct aquila_image img_t;

#define IM(i) __builtin_astype((i), __global const struct aquila_image *)
#define SMP(s) ((uint)(ulong)__builtin_astype((s), __constant void *))
#define HLP static inline __attribute__((always_inline))

/* A sampler's value is its bits; clang emits this call for every sampler
 * initializer (a constant sampler_t or a literal passed as a sampler). */
__constant void *__translate_sampler_initializer(int bits) {
  return (__constant void *)(ulong)(uint)bits;
}

/* NaN-proof clamp in float: fmin/fmax return the other operand for NaN, so
 * the result is always a valid index before it becomes an int. */
HLP float fclamp(float x, float lo, float hi) {
  return __builtin_fminf(__builtin_fmaxf(x, lo), hi);
}

HLP __global uchar *texel_ptr(img_t *im, int x, int y, int z) {
  return im->data + (ulong)z * im->slice_pitch + (ulong)y * im->row_pitch +
         (ulong)x * im->element_size;
}

/* ---- pixel decoding: stored channels, then the channel order ---- */

/* The first n (1 to 4) channels of a texel, widened, the others 0. Each
 * count is its own straight path: the texel's channels are then read
 * together, which the vectorizer turns into one wide load for a row of
 * work-items, and never past the texel's last channel. */
#define LOAD_CHANNELS(NAME, T, RT)                                             \
  HLP RT##4 NAME(__global const uchar *p, uint n) {                           \
    __global const T *q = (__global const T *)p;                              \
    if (n == 4) return convert_##RT##4(vload4(0, q));                         \
    if (n == 1) return (RT##4)(q[0], 0, 0, 0);                                \
    if (n == 2) return (RT##4)(convert_##RT##2(vload2(0, q)), 0, 0);          \
    return (RT##4)(convert_##RT##3(vload3(0, q)), 0);                         \
  }
LOAD_CHANNELS(load_uchar, uchar, uint)
LOAD_CHANNELS(load_char, char, int)
LOAD_CHANNELS(load_ushort, ushort, uint)
LOAD_CHANNELS(load_short, short, int)
LOAD_CHANNELS(load_uint, uint, uint)
LOAD_CHANNELS(load_float, float, float)

HLP float4 load_half(__global const uchar *p, uint n) {
  __global const half *q = (__global const half *)p;
  if (n == 4) return vload_half4(0, q);
  if (n == 1) return (float4)(vload_half(0, q), 0, 0, 0);
  if (n == 2) return (float4)(vload_half2(0, q), 0, 0);
  return (float4)(vload_half3(0, q), 0);
}

/* Only the first n channels exist; the others stay 0 after scaling. */
HLP float4 keep_channels(float4 v, uint n) {
  return (float4)(v.x, n > 1 ? v.y : 0.0f, n > 2 ? v.z : 0.0f, n > 3 ? v.w : 0.0f);
}

/* Formats a kernel meets less often are decoded and encoded out of line:
 * each texel access of a kernel inlines only the common formats' paths
 * (inlining every format at each of a kernel's reads made code that no
 * longer fit the instruction cache), and the vectorizer calls these
 * functions lane by lane for the others. */
#define OUTOFLINE __attribute__((noinline))

HLP float4 fetch_any_f(img_t *im, __global const uchar *p) {
  uint n = im->num_channels;
  switch (im->channel_data_type) {
  case CLK_UNORM_INT8:
    return convert_float4(load_uchar(p, n)) / 255.0f;
  case CLK_SNORM_INT8:
    return keep_channels(fmax(convert_float4(load_char(p, n)) / 127.0f, -1.0f), n);
  case CLK_UNORM_INT16:
    return convert_float4(load_ushort(p, n)) / 65535.0f;
  case CLK_SNORM_INT16:
    return keep_channels(fmax(convert_float4(load_short(p, n)) / 32767.0f, -1.0f), n);
  case CLK_HALF_FLOAT:
    return load_half(p, n);
  case CLK_FLOAT:
    return load_float(p, n);
  case CLK_UNORM_SHORT_565: {
    uint x = *(__global const ushort *)p;
    return (float4)((x >> 11) / 31.0f, ((x >> 5) & 63) / 63.0f, (x & 31) / 31.0f, 0);
  }
  case CLK_UNORM_SHORT_555: {
    uint x = *(__global const ushort *)p;
    return (float4)(((x >> 10) & 31) / 31.0f, ((x >> 5) & 31) / 31.0f, (x & 31) / 31.0f, 0);
  }
  case CLK_UNORM_INT_101010: {
    uint x = *(__global const uint *)p;
    return (float4)(((x >> 20) & 1023) / 1023.0f, ((x >> 10) & 1023) / 1023.0f,
                    (x & 1023) / 1023.0f, 0);
  }
  /* Integer formats read with read_imagef are undefined; give the values. */
  case CLK_SIGNED_INT8:
    return convert_float4(load_char(p, n));
  case CLK_SIGNED_INT16:
    return convert_float4(load_short(p, n));
  case CLK_SIGNED_INT32:
    return convert_float4(as_int4(load_uint(p, n)));
  case CLK_UNSIGNED_INT8:
    return convert_float4(load_uchar(p, n));
  case CLK_UNSIGNED_INT16:
    return convert_float4(load_ushort(p, n));
  default:
    return convert_float4(load_uint(p, n));
  }
}

/* Integer reads: signed types sign-extend, the others zero-extend; the
 * bits are the same for read_imagei and read_imageui. */
HLP int4 fetch_any_i(img_t *im, __global const uchar *p) {
  uint n = im->num_channels;
  switch (im->channel_data_type) {
  case CLK_SIGNED_INT8:
  case CLK_SNORM_INT8:
    return load_char(p, n);
  case CLK_SIGNED_INT16:
  case CLK_SNORM_INT16:
    return load_short(p, n);
  case CLK_UNSIGNED_INT8:
  case CLK_UNORM_INT8:
    return as_int4(load_uchar(p, n));
  case CLK_UNSIGNED_INT16:
  case CLK_UNORM_INT16:
  case CLK_HALF_FLOAT:
    return as_int4(load_ushort(p, n));
  case CLK_UNORM_SHORT_565:
  case CLK_UNORM_SHORT_555:
    return (int4)(*(__global const ushort *)p, 0, 0, 0);
  default:
    return as_int4(load_uint(p, n));
  }
}

/* Missing channels read as 0, a missing alpha as 1 (section 8.3). */
#define ORDER(T, ONE)                                                          \
  HLP T##4 order_##T(uint order, T##4 s) {                                    \
    switch (order) {                                                          \
    case CLK_R:                                                               \
    case CLK_Rx:                                                              \
      return (T##4)(s.x, 0, 0, ONE);                                          \
    case CLK_A:                                                               \
      return (T##4)(0, 0, 0, s.x);                                            \
    case CLK_RG:                                                              \
    case CLK_RGx:                                                             \
      return (T##4)(s.x, s.y, 0, ONE);                                        \
    case CLK_RA:                                                              \
      return (T##4)(s.x, 0, 0, s.y);                                          \
    case CLK_RGB:                                                             \
    case CLK_RGBx:                                                            \
      return (T##4)(s.x, s.y, s.z, ONE);                                      \
    case CLK_BGRA:                                                            \
      return s.zyxw;                                                          \
    case CLK_ARGB:                                                            \
      return s.yzwx;                                                          \
    case CLK_INTENSITY:                                                       \
      return s.xxxx;                                                          \
    case CLK_LUMINANCE:                                                       \
      return (T##4)(s.x, s.x, s.x, ONE);                                      \
    default:                                                                  \
      return s;                                                               \
    }                                                                         \
  }                                                                           \
  /* Border color (CLK_ADDRESS_CLAMP): transparent black where the order */  \
  /* has alpha, opaque black where it has none. */                            \
  HLP T##4 border_##T(uint order) {                                           \
    switch (order) {                                                          \
    case CLK_R:                                                               \
    case CLK_Rx:                                                              \
    case CLK_RG:                                                              \
    case CLK_RGx:                                                             \
    case CLK_RGB:                                                             \
    case CLK_RGBx:                                                            \
    case CLK_LUMINANCE:                                                       \
      return (T##4)(0, 0, 0, ONE);                                            \
    default:                                                                  \
      return (T##4)(0);                                                       \
    }                                                                         \
  }
ORDER(float, 1.0f)
ORDER(int, 1)
ORDER(uint, 1u)

/* A texel of any format, decoded and in RGBA order, out of line. */
OUTOFLINE float4 __outofline_texel_f(img_t *im, __global const uchar *p) {
  return order_float(im->channel_order, fetch_any_f(im, p));
}
OUTOFLINE int4 __outofline_texel_i(img_t *im, __global const uchar *p) {
  return order_int(im->channel_order, fetch_any_i(im, p));
}

/* Inline, the formats kernels use most (RGBA 8-bit and float, R float):
 * one test of the image's format per read, the same for every work-item, and
 * a load that a row of work-items turns into one vector load. */
HLP float4 texel_float(img_t *im, __global const uchar *p) {
  uint t = im->channel_data_type, order = im->channel_order;
  if (order == CLK_RGBA && t == CLK_UNORM_INT8) return convert_float4(vload4(0, p)) / 255.0f;
  if (order == CLK_RGBA && t == CLK_FLOAT) return vload4(0, (__global const float *)p);
  if (order == CLK_R && t == CLK_FLOAT) return (float4)(*(__global const float *)p, 0, 0, 1);
  return __outofline_texel_f(im, p);
}
HLP int4 texel_int(img_t *im, __global const uchar *p) {
  uint t = im->channel_data_type, order = im->channel_order;
  if (order == CLK_RGBA && t == CLK_UNSIGNED_INT8) return as_int4(convert_uint4(vload4(0, p)));
  if (order == CLK_RGBA && (t == CLK_SIGNED_INT32 || t == CLK_UNSIGNED_INT32))
    return vload4(0, (__global const int *)p);
  return __outofline_texel_i(im, p);
}
HLP uint4 texel_uint(img_t *im, __global const uchar *p) { return as_uint4(texel_int(im, p)); }

/* ---- addressing (section 8.2) ---- */

#define ADDR_MODE(smp) ((smp) & 0xeu)
#define IS_LINEAR(smp) (((smp) & 0x30u) == CLK_FILTER_LINEAR)

/* Repeat and mirrored repeat: the coordinate mapped into [0, size] (their
 * unnormalized use is undefined; it is treated as normalized). */
HLP float wrap_u(float s, float size, uint smp) {
  if (!(smp & CLK_NORMALIZED_COORDS_TRUE)) s = s / size;
  if (ADDR_MODE(smp) == CLK_ADDRESS_REPEAT) return (s - __builtin_floorf(s)) * size;
  return __builtin_fabsf(s - 2.0f * __builtin_rintf(0.5f * s)) * size;
}

/* Nearest: the texel index; -1 or size stand for the border. */
HLP int nearest_index(float s, int size, uint smp) {
  float fs = (float)size;
  uint mode = ADDR_MODE(smp);
  if (mode == CLK_ADDRESS_REPEAT || mode == CLK_ADDRESS_MIRRORED_REPEAT) {
    float i = __builtin_floorf(wrap_u(s, fs, smp));
    if (mode == CLK_ADDRESS_REPEAT && i > fs - 1) i -= fs;
    return (int)fclamp(i, 0, fs - 1);
  }
  float u = (smp & CLK_NORMALIZED_COORDS_TRUE) ? s * fs : s;
  float i = __builtin_floorf(u);
  return mode == CLK_ADDRESS_CLAMP ? (int)fclamp(i, -1, fs) : (int)fclamp(i, 0, fs - 1);
}

/* Linear: the two texel indices and the weight a of the second. */
HLP int linear_index(float s, int size, uint smp, __private int *i1, __private float *a) {
  float fs = (float)size;
  uint mode = ADDR_MODE(smp);
  bool wrap = mode == CLK_ADDRESS_REPEAT || mode == CLK_ADDRESS_MIRRORED_REPEAT;
  float u = wrap ? wrap_u(s, fs, smp) : (smp & CLK_NORMALIZED_COORDS_TRUE) ? s * fs : s;
  float t = u - 0.5f, f = __builtin_floorf(t), lo = 0, hi = fs - 1;
  float f0 = f, f1 = f + 1;
  *a = t - f;
  if (mode == CLK_ADDRESS_REPEAT) {
    if (f0 < 0) f0 += fs;
    if (f1 > fs - 1) f1 -= fs;
  } else if (mode == CLK_ADDRESS_CLAMP) {
    lo = -1;
    hi = fs;
  }
  *i1 = (int)fclamp(f1, lo, hi);
  return (int)fclamp(f0, lo, hi);
}

HLP int layer_of(float l, img_t *im) {
  return (int)fclamp(__builtin_rintf(l), 0, (float)im->array_size - 1);
}

/* One texel of a dims-dimensional image (z is the layer of an array), or
 * the border color where the index is outside. */
#define TEXEL_AT(T)                                                            \
  /* Only CLK_ADDRESS_CLAMP leaves an index outside (-1 or the size): with */ \
  /* the other modes (a constant sampler, nearly always) the test and the */  \
  /* border color fold away, and a row of reads stays one vector load. */    \
  HLP T##4 tex_##T(img_t *im, uint smp, int x, int y, int z, int dims) {      \
    if (ADDR_MODE(smp) == CLK_ADDRESS_CLAMP) {                                \
      bool out = x < 0 || x >= (int)im->width;                                \
      if (dims > 1) out |= y < 0 || y >= (int)im->height;                     \
      if (dims > 2) out |= z < 0 || z >= (int)im->depth;                      \
      if (out) return border_##T(im->channel_order);                          \
    }                                                                         \
    return texel_##T(im, texel_ptr(im, x, y, z));                             \
  }                                                                           \
  /* Nearest sampling with float coordinates c (x, y, z or layer). */        \
  HLP T##4 nearest_##T(img_t *im, uint smp, float4 c, int dims, bool layered) { \
    int x = nearest_index(c.x, im->width, smp), y = 0, z = 0;                 \
    if (dims > 1) y = nearest_index(c.y, im->height, smp);                    \
    if (dims > 2) z = nearest_index(c.z, im->depth, smp);                     \
    if (layered) z = layer_of(dims == 1 ? c.y : c.z, im);                     \
    return tex_##T(im, smp, x, y, z, dims);                                   \
  }                                                                           \
  /* Integer coordinates: unnormalized, nearest, clamp / clamp to edge / */   \
  /* none (the only modes 1.2 allows with them). */                           \
  HLP T##4 intcoord_##T(img_t *im, uint smp, int4 c, int dims, bool layered) { \
    int lo = ADDR_MODE(smp) == CLK_ADDRESS_CLAMP ? -1 : 0, d = 1 + lo;        \
    int x = clamp(c.x, lo, (int)im->width - d), y = 0, z = 0;                 \
    if (dims > 1) y = clamp(c.y, lo, (int)im->height - d);                    \
    if (dims > 2) z = clamp(c.z, lo, (int)im->depth - d);                     \
    if (layered) z = clamp(dims == 1 ? c.y : c.z, 0, (int)im->array_size - 1); \
    return tex_##T(im, smp, x, y, z, dims);                                   \
  }
TEXEL_AT(float)
TEXEL_AT(int)
TEXEL_AT(uint)

/* Linear filtering: the weighted sum of 2, 4 or 8 texels. */
HLP float4 sample_float(img_t *im, uint smp, float4 c, int dims, bool layered) {
  if (!IS_LINEAR(smp)) return nearest_float(im, smp, c, dims, layered);
  int x0, x1, y0 = 0, y1 = 0, z0 = 0, z1 = 0;
  float a, b = 0, g = 0;
  x0 = linear_index(c.x, im->width, smp, &x1, &a);
  if (dims > 1) y0 = linear_index(c.y, im->height, smp, &y1, &b);
  if (dims > 2) z0 = linear_index(c.z, im->depth, smp, &z1, &g);
  if (layered) z0 = z1 = layer_of(dims == 1 ? c.y : c.z, im);
  float4 r = (1 - a) * tex_float(im, smp, x0, y0, z0, dims) + a * tex_float(im, smp, x1, y0, z0, dims);
  if (dims == 1) return r;
  r = (1 - b) * r +
      b * ((1 - a) * tex_float(im, smp, x0, y1, z0, dims) + a * tex_float(im, smp, x1, y1, z0, dims));
  if (dims == 2) return r;
  float4 r1 = (1 - b) * ((1 - a) * tex_float(im, smp, x0, y0, z1, dims) +
                         a * tex_float(im, smp, x1, y0, z1, dims)) +
              b * ((1 - a) * tex_float(im, smp, x0, y1, z1, dims) + a * tex_float(im, smp, x1, y1, z1, dims));
  return (1 - g) * r + g * r1;
}
/* Linear filtering of integer formats is undefined: nearest. */
HLP int4 sample_int(img_t *im, uint smp, float4 c, int dims, bool layered) {
  return nearest_int(im, smp, c, dims, layered);
}
HLP uint4 sample_uint(img_t *im, uint smp, float4 c, int dims, bool layered) {
  return nearest_uint(im, smp, c, dims, layered);
}

/* ---- pixel encoding (section 8.3.1): round to nearest even, saturate ---- */

HLP uint unorm_enc(float f, float scale) {
  if (!(f > 0)) return 0; /* negative, zero and NaN */
  return (uint)__builtin_rintf(__builtin_fminf(f * scale, scale));
}
/* The same for four channels: no branch, no conversion of what is dropped. */
HLP uint4 unorm_enc4(float4 f, float scale) {
  float4 t = rint(fmin(f * scale, scale));
  return convert_uint4(select(t, (float4)(0.0f), f > 0.0f ? (int4)(0) : (int4)(-1)));
}
HLP int4 snorm_enc4(float4 f, float scale) {
  float4 t = rint(clamp(f * scale, -scale - 1, scale));
  return convert_int4(select(t, (float4)(0.0f), isnan(f)));
}

/* RGBA to the order the channels are stored in. */
#define STORED(T)                                                              \
  HLP T##4 stored_##T(uint order, T##4 c) {                                   \
    switch (order) {                                                          \
    case CLK_A:                                                               \
      return c.wwww;                                                          \
    case CLK_RA:                                                              \
      return c.xwzy;                                                          \
    case CLK_BGRA:                                                            \
      return c.zyxw;                                                          \
    case CLK_ARGB:                                                            \
      return c.wxyz;                                                          \
    default:                                                                  \
      return c;                                                               \
    }                                                                         \
  }
STORED(float)
STORED(long)

/* The first n (1 to 4) channels of v, narrowed, written together. */
#define STORE_CHANNELS(NAME, T, VT)                                            \
  HLP void NAME(__global uchar *p, VT##4 v, uint n) {                         \
    __global T *q = (__global T *)p;                                          \
    if (n == 4) vstore4(convert_##T##4(v), 0, q);                             \
    else if (n == 1) q[0] = (T)v.x;                                           \
    else if (n == 2) vstore2(convert_##T##2(v.xy), 0, q);                     \
    else vstore3(convert_##T##3(v.xyz), 0, q);                                \
  }
STORE_CHANNELS(store_uchar, uchar, uint)
STORE_CHANNELS(store_char, char, int)
STORE_CHANNELS(store_ushort, ushort, uint)
STORE_CHANNELS(store_short, short, int)
STORE_CHANNELS(store_uint, uint, uint)
STORE_CHANNELS(store_int, int, int)
STORE_CHANNELS(store_float, float, float)

HLP void store_half(__global uchar *p, float4 v, uint n) {
  __global half *q = (__global half *)p;
  if (n == 4) vstore_half4_rte(v, 0, q);
  else if (n == 1) vstore_half_rte(v.x, 0, q);
  else if (n == 2) vstore_half2_rte(v.xy, 0, q);
  else vstore_half3_rte(v.xyz, 0, q);
}

OUTOFLINE void __outofline_store_f(img_t *im, __global uchar *p, float4 color) {
  float4 v = stored_float(im->channel_order, color);
  uint n = im->num_channels;
  switch (im->channel_data_type) {
  case CLK_UNORM_INT8:
    store_uchar(p, unorm_enc4(v, 255.0f), n);
    break;
  case CLK_SNORM_INT8:
    store_char(p, snorm_enc4(v, 127.0f), n);
    break;
  case CLK_UNORM_INT16:
    store_ushort(p, unorm_enc4(v, 65535.0f), n);
    break;
  case CLK_SNORM_INT16:
    store_short(p, snorm_enc4(v, 32767.0f), n);
    break;
  case CLK_HALF_FLOAT:
    store_half(p, v, n);
    break;
  case CLK_FLOAT:
    store_float(p, v, n);
    break;
  case CLK_UNORM_SHORT_565:
    *(__global ushort *)p = (ushort)(unorm_enc(v.x, 31) << 11 | unorm_enc(v.y, 63) << 5 |
                                     unorm_enc(v.z, 31));
    break;
  case CLK_UNORM_SHORT_555:
    *(__global ushort *)p = (ushort)(unorm_enc(v.x, 31) << 10 | unorm_enc(v.y, 31) << 5 |
                                     unorm_enc(v.z, 31));
    break;
  case CLK_UNORM_INT_101010:
    *(__global uint *)p =
        unorm_enc(v.x, 1023) << 20 | unorm_enc(v.y, 1023) << 10 | unorm_enc(v.z, 1023);
    break;
  default: /* write_imagef to an integer format is undefined: nothing */
    break;
  }
}

/* write_imagei / write_imageui: saturate to the channel type's range. */
OUTOFLINE void __outofline_store_l(img_t *im, __global uchar *p, long4 color) {
  long4 v = stored_long(im->channel_order, color);
  uint n = im->num_channels;
  switch (im->channel_data_type) {
  case CLK_SIGNED_INT8:
    store_char(p, convert_int4(clamp(v, (long)CHAR_MIN, (long)CHAR_MAX)), n);
    break;
  case CLK_SIGNED_INT16:
    store_short(p, convert_int4(clamp(v, (long)SHRT_MIN, (long)SHRT_MAX)), n);
    break;
  case CLK_SIGNED_INT32:
    store_int(p, convert_int4(clamp(v, (long)INT_MIN, (long)INT_MAX)), n);
    break;
  case CLK_UNSIGNED_INT8:
    store_uchar(p, convert_uint4(clamp(v, 0l, (long)UCHAR_MAX)), n);
    break;
  case CLK_UNSIGNED_INT16:
    store_ushort(p, convert_uint4(clamp(v, 0l, (long)USHRT_MAX)), n);
    break;
  case CLK_UNSIGNED_INT32:
    store_uint(p, convert_uint4(clamp(v, 0l, (long)UINT_MAX)), n);
    break;
  default: /* integer writes to other formats are undefined: nothing */
    break;
  }
}

/* Inline, as for reads, the most common formats; the others out of line. */
HLP void store_f(img_t *im, __global uchar *p, float4 color) {
  uint t = im->channel_data_type, order = im->channel_order;
  if (order == CLK_RGBA && t == CLK_UNORM_INT8)
    vstore4(convert_uchar4(unorm_enc4(color, 255.0f)), 0, p);
  else if (order == CLK_RGBA && t == CLK_FLOAT)
    vstore4(color, 0, (__global float *)p);
  else if (order == CLK_R && t == CLK_FLOAT)
    *(__global float *)p = color.x;
  else
    __outofline_store_f(im, p, color);
}

HLP void store_l(img_t *im, __global uchar *p, long4 color) {
  uint t = im->channel_data_type, order = im->channel_order;
  if (order == CLK_RGBA && t == CLK_UNSIGNED_INT8)
    vstore4(convert_uchar4(clamp(color, 0l, (long)UCHAR_MAX)), 0, p);
  else if (order == CLK_RGBA && t == CLK_SIGNED_INT32)
    vstore4(convert_int4(clamp(color, (long)INT_MIN, (long)INT_MAX)), 0, (__global int *)p);
  else if (order == CLK_RGBA && t == CLK_UNSIGNED_INT32)
    vstore4(convert_uint4(clamp(color, 0l, (long)UINT_MAX)), 0, (__global uint *)p);
  else
    __outofline_store_l(im, p, color);
}

/* Where a write lands, or NULL outside the image (undefined: dropped). */
HLP __global uchar *write_ptr(img_t *im, int4 c, int dims, bool layered) {
  bool out = c.x < 0 || c.x >= (int)im->width;
  if (dims > 1) out |= c.y < 0 || c.y >= (int)im->height;
  if (dims > 2) out |= c.z < 0 || c.z >= (int)im->depth;
  int z = dims > 2 ? c.z : 0;
  if (layered) {
    z = dims == 1 ? c.y : c.z;
    out |= z < 0 || z >= (int)im->array_size;
  }
  return out ? 0 : texel_ptr(im, c.x, dims > 1 ? c.y : 0, z);
}

/* ---- the builtins ---- */

/* Widening coordinates to 4 components, per image type. */
#define C4F_1(c) ((float4)((c), 0, 0, 0))
#define C4F_2(c) ((float4)((c), 0, 0))
#define C4F_4(c) (c)
#define C4I_1(c) ((int4)((c), 0, 0, 0))
#define C4I_2(c) ((int4)((c), 0, 0))
#define C4I_4(c) (c)

/* IMG: type; W: coordinate width; DIMS: spatial dimensions; L: layered. */
#define READS(IMG, W, FT, IT, DIMS, L)                                         \
  READ_ONE(f, float, IMG, W, FT, IT, DIMS, L)                                 \
  READ_ONE(i, int, IMG, W, FT, IT, DIMS, L)                                   \
  READ_ONE(ui, uint, IMG, W, FT, IT, DIMS, L)
#define READ_ONE(S, T, IMG, W, FT, IT, DIMS, L)                                        \
  INL T##4 read_image##S(read_only IMG img, sampler_t smp, FT c) {       \
    return sample_##T(IM(img), SMP(smp), C4F_##W(c), DIMS, L);                 \
  }                                                                           \
  INL T##4 read_image##S(read_only IMG img, sampler_t smp, IT c) {         \
    return intcoord_##T(IM(img), SMP(smp), C4I_##W(c), DIMS, L);               \
  }                                                                           \
  INL T##4 read_image##S(read_only IMG img, IT c) {                        \
    return intcoord_##T(IM(img), CLK_ADDRESS_CLAMP_TO_EDGE, C4I_##W(c), DIMS, L); \
  }
READS(image1d_t, 1, float, int, 1, false)
READS(image1d_array_t, 2, float2, int2, 1, true)
READS(image2d_t, 2, float2, int2, 2, false)
READS(image2d_array_t, 4, float4, int4, 2, true)
READS(image3d_t, 4, float4, int4, 3, false)

/* image1d_buffer_t has only the samplerless reads. */
INL float4 read_imagef(read_only image1d_buffer_t img, int c) {
  return intcoord_float(IM(img), CLK_ADDRESS_CLAMP_TO_EDGE, C4I_1(c), 1, false);
}
INL int4 read_imagei(read_only image1d_buffer_t img, int c) {
  return intcoord_int(IM(img), CLK_ADDRESS_CLAMP_TO_EDGE, C4I_1(c), 1, false);
}
INL uint4 read_imageui(read_only image1d_buffer_t img, int c) {
  return intcoord_uint(IM(img), CLK_ADDRESS_CLAMP_TO_EDGE, C4I_1(c), 1, false);
}

#define WRITES(IMG, W, IT, DIMS, L)                                                \
  INL void write_imagef(write_only IMG img, IT c, float4 color) {          \
    img_t *im = IM(img);                                                      \
    __global uchar *p = write_ptr(im, C4I_##W(c), DIMS, L);                   \
    if (p) store_f(im, p, color);                                             \
  }                                                                           \
  INL void write_imagei(write_only IMG img, IT c, int4 color) {            \
    img_t *im = IM(img);                                                      \
    __global uchar *p = write_ptr(im, C4I_##W(c), DIMS, L);                   \
    if (p) store_l(im, p, convert_long4(color));                              \
  }                                                                           \
  INL void write_imageui(write_only IMG img, IT c, uint4 color) {          \
    img_t *im = IM(img);                                                      \
    __global uchar *p = write_ptr(im, C4I_##W(c), DIMS, L);                   \
    if (p) store_l(im, p, convert_long4(color));                              \
  }
WRITES(image1d_t, 1, int, 1, false)
WRITES(image1d_buffer_t, 1, int, 1, false)
WRITES(image1d_array_t, 2, int2, 1, true)
WRITES(image2d_t, 2, int2, 2, false)
WRITES(image2d_array_t, 4, int4, 2, true)
WRITES(image3d_t, 4, int4, 3, false)

/* ---- queries ---- */

#define QUERY_BOTH(M, IMG) M(read_only, IMG) M(write_only, IMG)
#define Q_COMMON(A, IMG)                                                       \
  INL int get_image_width(A IMG img) { return IM(img)->width; }               \
  INL int get_image_channel_data_type(A IMG img) { return IM(img)->channel_data_type; } \
  INL int get_image_channel_order(A IMG img) { return IM(img)->channel_order; }
#define Q_HEIGHT(A, IMG)                                                       \
  INL int get_image_height(A IMG img) { return IM(img)->height; }
#define Q_DIM2(A, IMG)                                                         \
  INL int2 get_image_dim(A IMG img) { return (int2)(IM(img)->width, IM(img)->height); }
#define Q_ARRAY(A, IMG)                                                        \
  INL size_t get_image_array_size(A IMG img) { return IM(img)->array_size; }
#define Q_3D(A, IMG)                                                           \
  INL int get_image_depth(A IMG img) { return IM(img)->depth; }               \
  INL int4 get_image_dim(A IMG img) {                                         \
    return (int4)(IM(img)->width, IM(img)->height, IM(img)->depth, 0);        \
  }
QUERY_BOTH(Q_COMMON, image1d_t)
QUERY_BOTH(Q_COMMON, image1d_buffer_t)
QUERY_BOTH(Q_COMMON, image1d_array_t)
QUERY_BOTH(Q_COMMON, image2d_t)
QUERY_BOTH(Q_COMMON, image2d_array_t)
QUERY_BOTH(Q_COMMON, image3d_t)
QUERY_BOTH(Q_HEIGHT, image2d_t)
QUERY_BOTH(Q_HEIGHT, image2d_array_t)
QUERY_BOTH(Q_HEIGHT, image3d_t)
QUERY_BOTH(Q_DIM2, image2d_t)
QUERY_BOTH(Q_DIM2, image2d_array_t)
QUERY_BOTH(Q_ARRAY, image1d_array_t)
QUERY_BOTH(Q_ARRAY, image2d_array_t)
QUERY_BOTH(Q_3D, image3d_t)
