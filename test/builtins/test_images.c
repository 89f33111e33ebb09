/* Tests of the image builtins (compiler/builtins/image.cl). imagetests.cl is
 * compiled like user code, linked with the builtin library and built into
 * imagetests.so; this program builds small images in memory as struct
 * aquila_image, calls the test functions and compares them with host
 * references written from the OpenCL 1.2 formulas: section 8.2 for
 * addressing and filtering (in double), section 8.3 for conversions. */
#include <CL/cl.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>

#include "aquila/cpu_abi.h"
#include "check.h"
#include "testlib.h"

#define SAMPLER(bits) ((void *)(uintptr_t)(bits))

/* OpenCL C's sampler bits (cpu_abi.h); the host headers do not have them. */
#define CLK_ADDRESS_NONE 0x0u
#define CLK_ADDRESS_CLAMP_TO_EDGE 0x2u
#define CLK_ADDRESS_CLAMP 0x4u
#define CLK_ADDRESS_REPEAT 0x6u
#define CLK_ADDRESS_MIRRORED_REPEAT 0x8u
#define CLK_FILTER_NEAREST 0x10u
#define CLK_FILTER_LINEAR 0x20u

typedef void (*read_f_fn)(struct aquila_image *, void *, const float *, int, float *);
typedef void (*read_fi_fn)(struct aquila_image *, void *, const int *, int, float *);

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint32_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}
static double rnd_range(double lo, double hi) {
  return lo + (hi - lo) * (rnd() / 4294967296.0);
}

/* ---- images in memory ---- */
static struct aquila_image make(uint32_t type, uint32_t order, uint32_t nch, uint32_t esize,
                                uint32_t w, uint32_t h, uint32_t d, uint32_t layers,
                                uint32_t image_type, uint32_t pad) {
  struct aquila_image im = {0};
  im.row_pitch = (uint64_t)w * esize + pad * esize;
  im.slice_pitch = im.row_pitch * h;
  uint64_t slices = layers ? layers : d;
  im.data = calloc(1, im.slice_pitch * slices + 64);
  for (uint64_t i = 0; i < im.slice_pitch * slices; i++)
    ((uint8_t *)im.data)[i] = (uint8_t)rnd();
  im.width = w;
  im.height = h;
  im.depth = d;
  im.array_size = layers;
  im.image_type = image_type;
  im.channel_order = order;
  im.channel_data_type = type;
  im.num_channels = nch;
  im.element_size = esize;
  return im;
}

static uint8_t *at(const struct aquila_image *im, int x, int y, int z) {
  return (uint8_t *)im->data + (uint64_t)z * im->slice_pitch + (uint64_t)y * im->row_pitch +
         (uint64_t)x * im->element_size;
}

static double half_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return h & 0x8000 ? -v : v;
}

/* Reference decode to RGBA (section 8.3, missing channels 0, alpha 1). */
static void ref_texel(const struct aquila_image *im, int x, int y, int z, double out[4]) {
  const uint8_t *p = at(im, x, y, z);
  double s[4] = {0, 0, 0, 0};
  for (uint32_t c = 0; c < im->num_channels; c++) {
    switch (im->channel_data_type) {
    case CL_UNORM_INT8:
      s[c] = p[c] / 255.0;
      break;
    case CL_SNORM_INT8:
      s[c] = fmax(((int8_t *)p)[c] / 127.0, -1);
      break;
    case CL_UNORM_INT16:
      s[c] = ((uint16_t *)p)[c] / 65535.0;
      break;
    case CL_SNORM_INT16:
      s[c] = fmax(((int16_t *)p)[c] / 32767.0, -1);
      break;
    case CL_HALF_FLOAT:
      s[c] = half_value(((uint16_t *)p)[c]);
      break;
    case CL_FLOAT:
      s[c] = ((float *)p)[c];
      break;
    case CL_SIGNED_INT8:
      s[c] = ((int8_t *)p)[c];
      break;
    case CL_SIGNED_INT16:
      s[c] = ((int16_t *)p)[c];
      break;
    case CL_SIGNED_INT32:
      s[c] = ((int32_t *)p)[c];
      break;
    case CL_UNSIGNED_INT8:
      s[c] = p[c];
      break;
    case CL_UNSIGNED_INT16:
      s[c] = ((uint16_t *)p)[c];
      break;
    case CL_UNSIGNED_INT32:
      s[c] = ((uint32_t *)p)[c];
      break;
    }
  }
  if (im->channel_data_type == CL_UNORM_SHORT_565) {
    uint16_t v = *(uint16_t *)p;
    s[0] = (v >> 11) / 31.0, s[1] = ((v >> 5) & 63) / 63.0, s[2] = (v & 31) / 31.0;
  } else if (im->channel_data_type == CL_UNORM_INT_101010) {
    uint32_t v = *(uint32_t *)p;
    s[0] = ((v >> 20) & 1023) / 1023.0, s[1] = ((v >> 10) & 1023) / 1023.0,
    s[2] = (v & 1023) / 1023.0;
  }
  double r = s[0], g = 0, b = 0, a = 1;
  switch (im->channel_order) {
  case CL_RGBA:
    g = s[1], b = s[2], a = s[3];
    break;
  case CL_BGRA:
    r = s[2], g = s[1], b = s[0], a = s[3];
    break;
  case CL_ARGB:
    r = s[1], g = s[2], b = s[3], a = s[0];
    break;
  case CL_RG:
    g = s[1];
    break;
  case CL_RA:
    a = s[1];
    break;
  case CL_A:
    r = 0, a = s[0];
    break;
  case CL_RGB:
    g = s[1], b = s[2];
    break;
  case CL_INTENSITY:
    g = b = a = s[0];
    break;
  case CL_LUMINANCE:
    g = b = s[0];
    break;
  }
  out[0] = r, out[1] = g, out[2] = b, out[3] = a;
}

static int has_alpha(uint32_t order) {
  return order == CL_RGBA || order == CL_BGRA || order == CL_ARGB || order == CL_A ||
         order == CL_RA || order == CL_INTENSITY;
}

/* Reference texel or border color (dims spatial axes checked). */
static void ref_tex(const struct aquila_image *im, int dims, int x, int y, int z, double o[4]) {
  int out = x < 0 || x >= (int)im->width || (dims > 1 && (y < 0 || y >= (int)im->height)) ||
            (dims > 2 && (z < 0 || z >= (int)im->depth));
  if (out) {
    o[0] = o[1] = o[2] = 0;
    o[3] = has_alpha(im->channel_order) ? 0 : 1;
    return;
  }
  ref_texel(im, x, y, z, o);
}

/* Section 8.2: one axis. For nearest returns i in i0; for linear i0, i1, a. */
static void ref_axis(double s, int size, unsigned smp, int linear, int *i0, int *i1, double *a) {
  unsigned mode = smp & 0xe;
  int norm = smp & 1;
  double w = size;
  if (mode == CLK_ADDRESS_REPEAT) {
    double u = (s - floor(s)) * w;
    if (!linear) {
      int i = (int)floor(u);
      *i0 = i > size - 1 ? i - size : i;
      return;
    }
    int j = (int)floor(u - 0.5);
    *i0 = j < 0 ? j + size : j;
    *i1 = j + 1 > size - 1 ? j + 1 - size : j + 1;
    *a = (u - 0.5) - floor(u - 0.5);
    return;
  }
  if (mode == CLK_ADDRESS_MIRRORED_REPEAT) {
    double sp = fabs(s - 2 * rint(0.5 * s)), u = sp * w;
    if (!linear) {
      int i = (int)floor(u);
      *i0 = i < size - 1 ? i : size - 1;
      return;
    }
    int j = (int)floor(u - 0.5);
    *i0 = j < 0 ? 0 : j;
    *i1 = j + 1 > size - 1 ? size - 1 : j + 1;
    *a = (u - 0.5) - floor(u - 0.5);
    return;
  }
  double u = norm ? s * w : s;
  int lo = mode == CLK_ADDRESS_CLAMP ? -1 : 0, hi = mode == CLK_ADDRESS_CLAMP ? size : size - 1;
#define CL(v) ((v) < lo ? lo : (v) > hi ? hi : (v))
  if (!linear) {
    int i = (int)floor(u);
    *i0 = CL(i);
    return;
  }
  int j = (int)floor(u - 0.5);
  *i0 = CL(j);
  *i1 = CL(j + 1);
  *a = (u - 0.5) - floor(u - 0.5);
#undef CL
}

/* Reference read_imagef with float coordinates c[dims]. */
/* mag (if not NULL) gets the largest magnitude among the texels used: the
 * scale of the error that float weights may add. */
static double ref_mag;
static void ref_sample(const struct aquila_image *im, unsigned smp, const float *c, int dims,
                       double o[4]) {
  ref_mag = 0;
  int linear = (smp & 0x30) == CLK_FILTER_LINEAR;
  int x0 = 0, x1 = 0, y0 = 0, y1 = 0, z0 = 0, z1 = 0;
  double a = 0, b = 0, g = 0;
  ref_axis(c[0], im->width, smp, linear, &x0, &x1, &a);
  if (dims > 1) ref_axis(c[1], im->height, smp, linear, &y0, &y1, &b);
  if (dims > 2) ref_axis(c[2], im->depth, smp, linear, &z0, &z1, &g);
  if (!linear) {
    ref_tex(im, dims, x0, y0, z0, o);
    for (int ch = 0; ch < 4; ch++)
      ref_mag = fmax(ref_mag, fabs(o[ch]));
    return;
  }
  double t[8][4];
  for (int k = 0; k < 8; k++) {
    ref_tex(im, dims, k & 1 ? x1 : x0, k & 2 ? y1 : y0, k & 4 ? z1 : z0, t[k]);
    for (int ch = 0; ch < 4; ch++)
      ref_mag = fmax(ref_mag, fabs(t[k][ch]));
  }
  for (int ch = 0; ch < 4; ch++) {
    double v = 0;
    for (int k = 0; k < 8; k++) {
      double wt = (k & 1 ? a : 1 - a) * (k & 2 ? b : 1 - b) * (k & 4 ? g : 1 - g);
      if (wt != 0) v += wt * t[k][ch];
    }
    o[ch] = v;
  }
}

static int close_to(float got, double ref, double tol) {
  if (isnan(ref)) return isnan(got);
  if (isinf(ref)) return got == ref;
  return fabs(got - ref) <= tol * fmax(1, fabs(ref));
}

static const unsigned address_modes[] = {CLK_ADDRESS_NONE, CLK_ADDRESS_CLAMP_TO_EDGE,
                                         CLK_ADDRESS_CLAMP, CLK_ADDRESS_REPEAT,
                                         CLK_ADDRESS_MIRRORED_REPEAT};

struct fmt {
  uint32_t type, order, nch, esize;
};

/* Float reads of 2D or 3D images: every address mode, both filters, both
 * coordinate kinds, over formats that read as floats. */
static int sample_checks(const struct fmt *f, int dims) {
  enum { N = 64 };
  int bad = 0;
  struct aquila_image im =
      make(f->type, f->order, f->nch, f->esize, 5, dims > 1 ? 4 : 1, dims > 2 ? 3 : 1, 0,
           dims == 3 ? CL_MEM_OBJECT_IMAGE3D : CL_MEM_OBJECT_IMAGE2D, 3);
  if (f->type == CL_FLOAT || f->type == CL_HALF_FLOAT) { /* finite values only */
    for (uint32_t z = 0; z < im.depth; z++)
      for (uint32_t y = 0; y < im.height; y++)
        for (uint32_t x = 0; x < im.width * f->nch; x++) {
          uint8_t *p = at(&im, 0, y, z);
          if (f->type == CL_FLOAT)
            ((float *)p)[x] = (float)rnd_range(-4, 4);
          else
            ((uint16_t *)p)[x] = (uint16_t)(rnd() % 0x7800) | (rnd() & 0x8000);
        }
  }
  read_f_fn rd = dims == 3 ? FN(read_f_fn, "t_read3d_f") : FN(read_f_fn, "t_read2d_f");
  for (int norm = 0; norm < 2; norm++)
    for (int m = 0; m < 5; m++)
      for (int lin = 0; lin < 2; lin++) {
        unsigned mode = address_modes[m];
        if (!norm && mode >= CLK_ADDRESS_REPEAT) continue;
        unsigned smp = (norm ? 1 : 0) | mode | (lin ? CLK_FILTER_LINEAR : CLK_FILTER_NEAREST);
        float c[N * 3], out[N * 4];
        for (int i = 0; i < N; i++)
          for (int k = 0; k < 3; k++) {
            double size = k == 0 ? im.width : k == 1 ? im.height : im.depth;
            /* NONE must stay inside; the others may go outside. */
            double lo = mode == CLK_ADDRESS_NONE ? (lin ? 0.5 : 0) : -1.5 * size,
                   hi = mode == CLK_ADDRESS_NONE ? (lin ? size - 0.5 : size - 0.01) : 2.5 * size;
            double v = rnd_range(lo, hi);
            if (i % 4 == 0) v = floor(v) + 0.5; /* texel centres */
            c[i * 3 + k] = (float)(norm ? v / size : v);
          }
        float c2[N * 2];
        for (int i = 0; i < N; i++)
          c2[2 * i] = c[3 * i], c2[2 * i + 1] = c[3 * i + 1];
        rd(&im, SAMPLER(smp), dims == 3 ? c : c2, N, out);
        for (int i = 0; i < N; i++) {
          double ref[4];
          ref_sample(&im, smp, &c[3 * i], dims, ref);
          for (int ch = 0; ch < 4; ch++)
            /* Weights come from float coordinates: up to about 1e-6 off. */
            if (!close_to(out[4 * i + ch], ref[ch], 4e-6 * fmax(1, ref_mag))) {
              if (bad++ < 5)
                printf(
                    "  type %#x order %#x dims %d sampler %#x coord (%g, %g, %g) ch %d: got %.9g "
                    "want %.9g\n",
                    f->type, f->order, dims, smp, c[3 * i], c[3 * i + 1], c[3 * i + 2], ch,
                    out[4 * i + ch], ref[ch]);
            }
        }
      }
  free(im.data);
  return bad;
}

static const struct fmt float_formats[] = {
    {CL_UNORM_INT8, CL_RGBA, 4, 4},
    {CL_UNORM_INT8, CL_BGRA, 4, 4},
    {CL_UNORM_INT16, CL_RGBA, 4, 8},
    {CL_SNORM_INT8, CL_RGBA, 4, 4},
    {CL_SNORM_INT16, CL_RGBA, 4, 8},
    {CL_HALF_FLOAT, CL_RGBA, 4, 8},
    {CL_FLOAT, CL_RGBA, 4, 16},
    {CL_UNORM_INT8, CL_R, 1, 1},
    {CL_UNORM_INT8, CL_A, 1, 1},
    {CL_UNORM_INT16, CL_RG, 2, 4},
    {CL_FLOAT, CL_RA, 2, 8},
    {CL_UNORM_INT8, CL_ARGB, 4, 4},
    {CL_UNORM_INT8, CL_INTENSITY, 1, 1},
    {CL_SNORM_INT16, CL_LUMINANCE, 1, 2},
    {CL_UNORM_SHORT_565, CL_RGB, 3, 2},
    {CL_UNORM_INT_101010, CL_RGB, 3, 4},
};

static void test_sample_2d(void) {
  for (size_t i = 0; i < sizeof float_formats / sizeof float_formats[0]; i++)
    CHECK_EQ_INT(sample_checks(&float_formats[i], 2), 0);
}

static void test_sample_3d(void) {
  for (size_t i = 0; i < 7; i++)
    CHECK_EQ_INT(sample_checks(&float_formats[i], 3), 0);
}

/* A hand-checked bilinear value, independent of the reference code. */
static void test_linear_known(void) {
  struct aquila_image im = make(CL_FLOAT, CL_R, 1, 4, 2, 2, 1, 0, CL_MEM_OBJECT_IMAGE2D, 0);
  float *p = im.data;
  p[0] = 0, p[1] = 1, p[2] = 2, p[3] = 4;
  float c[4] = {1.0f, 1.0f, 0.75f, 1.25f}, out[8];
  FN(read_f_fn, "t_read2d_f")
  (&im, SAMPLER(CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR), c, 2, out);
  CHECK(out[0] == 1.75f && out[1] == 0 && out[2] == 0 && out[3] == 1);
  /* (0.75, 1.25): a = 0.25, b = 0.75 -> 0.75*(0.25*0 + 0.75*... ) */
  double want = 0.25 * (0.75 * 0 + 0.25 * 1) + 0.75 * (0.75 * 2 + 0.25 * 4);
  CHECK(fabs(out[4] - want) < 1e-6);
  free(im.data);
}

static void test_int_coords(void) {
  struct aquila_image im = make(CL_UNORM_INT8, CL_RGBA, 4, 4, 3, 3, 1, 0, CL_MEM_OBJECT_IMAGE2D, 1);
  int c[] = {0, 0, 2, 1, -1, 1, 3, 2, 1, 5};
  float out[5 * 4];
  for (int m = 0; m < 3; m++) {
    unsigned smp = address_modes[m] | CLK_FILTER_NEAREST;
    FN(read_fi_fn, "t_read2d_fi")(&im, SAMPLER(smp), c, 5, out);
    for (int i = 0; i < 5; i++) {
      double ref[4];
      float fc[2] = {(float)c[2 * i] + 0.5f, (float)c[2 * i + 1] + 0.5f};
      unsigned rs = m == 0 ? CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST : smp;
      ref_sample(&im, rs, fc, 2, ref);
      for (int ch = 0; ch < 4; ch++)
        if (!close_to(out[4 * i + ch], ref[ch], 1e-7)) {
          printf("  sampler %#x coord (%d, %d) ch %d: got %.9g want %.9g\n", smp, c[2 * i],
                 c[2 * i + 1], ch, out[4 * i + ch], ref[ch]);
          check_case_failed = 1;
        }
    }
  }
  /* Samplerless reads. */
  typedef void (*nos_fn)(struct aquila_image *, const int *, int, float *);
  FN(nos_fn, "t_read2d_nos")(&im, c, 2, out);
  for (int i = 0; i < 2; i++) {
    double ref[4];
    ref_texel(&im, c[2 * i], c[2 * i + 1], 0, ref);
    for (int ch = 0; ch < 4; ch++)
      CHECK(close_to(out[4 * i + ch], ref[ch], 1e-7));
  }
  free(im.data);
}

static void test_integer_reads(void) {
  typedef void (*ri_fn)(struct aquila_image *, void *, const float *, int, int *);
  typedef void (*rui_fn)(struct aquila_image *, void *, const int *, int, uint32_t *);
  const struct fmt fi[] = {{CL_SIGNED_INT8, CL_RGBA, 4, 4},
                           {CL_SIGNED_INT16, CL_RG, 2, 4},
                           {CL_SIGNED_INT32, CL_RGBA, 4, 16},
                           {CL_SIGNED_INT8, CL_A, 1, 1}};
  for (int f = 0; f < 4; f++) {
    struct aquila_image im =
        make(fi[f].type, fi[f].order, fi[f].nch, fi[f].esize, 4, 3, 1, 0, CL_MEM_OBJECT_IMAGE2D, 0);
    float c[] = {0.5f, 0.5f, 3.9f, 2.1f, -3, 1, 9, 9, 1.2f, 1.7f};
    int out[5 * 4];
    unsigned smp = CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
    FN(ri_fn, "t_read2d_i")(&im, SAMPLER(smp), c, 5, out);
    for (int i = 0; i < 5; i++) {
      double ref[4];
      ref_sample(&im, smp, &c[2 * i], 2, ref);
      for (int ch = 0; ch < 4; ch++)
        CHECK_EQ_INT(out[4 * i + ch], (int)ref[ch]);
    }
    free(im.data);
  }
  const struct fmt fu[] = {{CL_UNSIGNED_INT8, CL_RGBA, 4, 4},
                           {CL_UNSIGNED_INT16, CL_RGBA, 4, 8},
                           {CL_UNSIGNED_INT32, CL_R, 1, 4},
                           {CL_UNSIGNED_INT8, CL_BGRA, 4, 4}};
  for (int f = 0; f < 4; f++) {
    struct aquila_image im =
        make(fu[f].type, fu[f].order, fu[f].nch, fu[f].esize, 4, 3, 1, 0, CL_MEM_OBJECT_IMAGE2D, 2);
    int c[] = {0, 0, 3, 2, -3, 1, 9, 9};
    uint32_t out[4 * 4];
    unsigned smp = CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
    FN(rui_fn, "t_read2d_ui")(&im, SAMPLER(smp), c, 4, out);
    for (int i = 0; i < 4; i++) {
      double ref[4];
      float fc[2] = {c[2 * i] + 0.5f, c[2 * i + 1] + 0.5f};
      ref_sample(&im, smp, fc, 2, ref);
      for (int ch = 0; ch < 4; ch++)
        CHECK_EQ_INT(out[4 * i + ch], (uint32_t)ref[ch]);
    }
    free(im.data);
  }
}

/* Writes: conversion with round to nearest even and saturation. */
static void test_writes(void) {
  typedef void (*wf_fn)(struct aquila_image *, const int *, const float *, int);
  typedef void (*wi_fn)(struct aquila_image *, const int *, const int *, int);
  struct aquila_image im = make(CL_UNORM_INT8, CL_BGRA, 4, 4, 2, 2, 1, 0, CL_MEM_OBJECT_IMAGE2D, 1);
  int c[] = {0, 0, 1, 1, 5, 0, 0, -1};
  float v[] = {0.5f, -1.0f, 2.0f, NAN, 1.0f / 255 * 2.5f, 1.0f / 255 * 3.5f, 1, 0, 9, 9, 9, 9,
               9,    9,     9,    9};
  uint8_t before[2 * 12];
  memcpy(before, im.data, sizeof before);
  FN(wf_fn, "t_write2d_f")(&im, c, v, 4);
  uint8_t *p = at(&im, 0, 0, 0);
  CHECK(p[0] == 255 && p[1] == 0 && p[2] == 128 && p[3] == 0); /* stored B G R A */
  p = at(&im, 1, 1, 0);
  CHECK(p[0] == 255 && p[1] == 4 && p[2] == 2 && p[3] == 0); /* 2.5 -> 2, 3.5 -> 4 */
  CHECK(memcmp(at(&im, 1, 0, 0), before + 4, 4) == 0);       /* out of range: untouched */
  free(im.data);

  struct aquila_image sn =
      make(CL_SNORM_INT16, CL_RGBA, 4, 8, 1, 1, 1, 0, CL_MEM_OBJECT_IMAGE2D, 0);
  float sv[] = {-2.0f, 0.5f, 1.5f, -1.0f};
  int c0[] = {0, 0};
  FN(wf_fn, "t_write2d_f")(&sn, c0, sv, 1);
  int16_t *q = sn.data;
  CHECK(q[0] == -32768 && q[1] == 16384 && q[2] == 32767 && q[3] == -32767);
  free(sn.data);

  struct aquila_image hf = make(CL_HALF_FLOAT, CL_RG, 2, 4, 1, 1, 1, 0, CL_MEM_OBJECT_IMAGE2D, 0);
  float hv[] = {1.0f + 0x1p-11f, 65520.0f, 0, 0}; /* ties to even -> 1.0; overflow -> inf */
  FN(wf_fn, "t_write2d_f")(&hf, c0, hv, 1);
  uint16_t *h = hf.data;
  CHECK(h[0] == 0x3c00 && h[1] == 0x7c00);
  free(hf.data);

  struct aquila_image si =
      make(CL_SIGNED_INT8, CL_RGBA, 4, 4, 1, 1, 1, 0, CL_MEM_OBJECT_IMAGE2D, 0);
  int iv[] = {-300, 300, 5, -5};
  FN(wi_fn, "t_write2d_i")(&si, c0, iv, 1);
  int8_t *s8 = si.data;
  CHECK(s8[0] == -128 && s8[1] == 127 && s8[2] == 5 && s8[3] == -5);
  free(si.data);

  struct aquila_image ui =
      make(CL_UNSIGNED_INT16, CL_RA, 2, 4, 1, 1, 1, 0, CL_MEM_OBJECT_IMAGE2D, 0);
  uint32_t uv[] = {70000, 1, 2, 3};
  FN(wi_fn, "t_write2d_ui")(&ui, c0, (const int *)uv, 1);
  uint16_t *u16 = ui.data;
  CHECK(u16[0] == 65535 && u16[1] == 3);
  free(ui.data);

  /* Write then read back through the reference decoder: 3D and 2D arrays. */
  struct aquila_image v3 = make(CL_FLOAT, CL_RGBA, 4, 16, 3, 2, 4, 0, CL_MEM_OBJECT_IMAGE3D, 1);
  int c3[] = {2, 1, 3};
  float col[] = {1, 2, 3, 4};
  FN(wf_fn, "t_write3d_f")(&v3, c3, col, 1);
  CHECK(memcmp(at(&v3, 2, 1, 3), col, 16) == 0);
  free(v3.data);
  struct aquila_image a2 =
      make(CL_UNSIGNED_INT8, CL_RGBA, 4, 4, 3, 2, 1, 5, CL_MEM_OBJECT_IMAGE2D_ARRAY, 0);
  int ca[] = {1, 1, 4, 0, 0, 5};
  uint32_t ucol[] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint8_t last[4];
  memcpy(last, (uint8_t *)a2.data + a2.slice_pitch * 5 - 4, 4);
  FN(wi_fn, "t_write2da_ui")(&a2, ca, (const int *)ucol, 2);
  uint8_t *pa = at(&a2, 1, 1, 4);
  CHECK(pa[0] == 1 && pa[3] == 4);
  CHECK(memcmp((uint8_t *)a2.data + a2.slice_pitch * 5 - 4, last, 4) == 0); /* layer 5 dropped */
  free(a2.data);
}

/* 1D, 1D array, 2D array and 1D buffer images, and a constant sampler. */
static void test_other_geometries(void) {
  struct aquila_image im = make(CL_UNORM_INT8, CL_RGBA, 4, 4, 6, 1, 1, 0, CL_MEM_OBJECT_IMAGE1D, 0);
  float c[] = {-0.3f, 0.1f, 0.55f, 0.99f, 1.7f};
  float out[5 * 4];
  unsigned smp = 1 | CLK_ADDRESS_MIRRORED_REPEAT | CLK_FILTER_LINEAR;
  FN(read_f_fn, "t_read1d_f")(&im, SAMPLER(smp), c, 5, out);
  for (int i = 0; i < 5; i++) {
    double ref[4];
    ref_sample(&im, smp, &c[i], 1, ref);
    for (int ch = 0; ch < 4; ch++)
      CHECK(close_to(out[4 * i + ch], ref[ch], 2e-6));
  }
  free(im.data);

  /* 1D array: layers step by slice_pitch; the layer is rounded and clamped. */
  struct aquila_image la = make(CL_FLOAT, CL_R, 1, 4, 4, 1, 1, 3, CL_MEM_OBJECT_IMAGE1D_ARRAY, 0);
  float *lp = la.data;
  for (int i = 0; i < 12; i++)
    lp[i] = (float)i;
  float lc[] = {1.5f, 0.4f, 1.5f, 1.4f, 2.0f, 7.0f, 2.0f, -3.0f};
  FN(read_f_fn, "t_read1da_f")
  (&la, SAMPLER(CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR), lc, 4, out);
  CHECK(out[0] == 1.0f && out[4] == 5.0f && out[8] == 9.5f && out[12] == 1.5f);
  CHECK(out[3] == 1.0f);
  free(la.data);

  struct aquila_image a2 = make(CL_FLOAT, CL_R, 1, 4, 2, 2, 1, 2, CL_MEM_OBJECT_IMAGE2D_ARRAY, 1);
  for (int l = 0; l < 2; l++)
    for (int y = 0; y < 2; y++)
      for (int x = 0; x < 2; x++)
        *(float *)at(&a2, x, y, l) = (float)(l * 100 + y * 10 + x);
  float ac[] = {0.75f, 0.25f, 1.0f, 0.0f, 0.0f, 0.0f};
  FN(read_f_fn, "t_read2da_f")
  (&a2, SAMPLER(1 | CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST), ac, 2, out);
  CHECK(out[0] == 101.0f && out[4] == 0.0f);
  free(a2.data);

  struct aquila_image b =
      make(CL_UNSIGNED_INT32, CL_RGBA, 4, 16, 8, 1, 1, 0, CL_MEM_OBJECT_IMAGE1D_BUFFER, 0);
  int bc[] = {3, 7};
  uint32_t bout[8];
  typedef void (*rb_fn)(struct aquila_image *, const int *, int, uint32_t *);
  FN(rb_fn, "t_read1db_ui")(&b, bc, 2, bout);
  CHECK(memcmp(bout, at(&b, 3, 0, 0), 16) == 0 && memcmp(bout + 4, at(&b, 7, 0, 0), 16) == 0);
  free(b.data);

  struct aquila_image im2 =
      make(CL_UNORM_INT16, CL_RGBA, 4, 8, 5, 3, 1, 0, CL_MEM_OBJECT_IMAGE2D, 0);
  float cc[] = {-0.2f, 0.3f, 1.37f, 0.9f, 0.5f, 0.5f};
  typedef void (*rc_fn)(struct aquila_image *, const float *, int, float *);
  FN(rc_fn, "t_read_const_sampler")(&im2, cc, 3, out);
  for (int i = 0; i < 3; i++) {
    double ref[4];
    ref_sample(&im2, 1 | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR, &cc[2 * i], 2, ref);
    for (int ch = 0; ch < 4; ch++)
      CHECK(close_to(out[4 * i + ch], ref[ch], 2e-6));
  }
  free(im2.data);
}

static void test_queries(void) {
  struct aquila_image a = make(CL_UNORM_INT8, CL_BGRA, 4, 4, 7, 5, 1, 0, CL_MEM_OBJECT_IMAGE2D, 0);
  struct aquila_image b = make(CL_FLOAT, CL_R, 1, 4, 4, 3, 2, 0, CL_MEM_OBJECT_IMAGE3D, 0);
  struct aquila_image c = make(CL_FLOAT, CL_R, 1, 4, 9, 1, 1, 6, CL_MEM_OBJECT_IMAGE1D_ARRAY, 0);
  struct aquila_image d = make(CL_FLOAT, CL_R, 1, 4, 3, 2, 1, 4, CL_MEM_OBJECT_IMAGE2D_ARRAY, 0);
  struct aquila_image e = make(CL_FLOAT, CL_R, 1, 4, 11, 1, 1, 0, CL_MEM_OBJECT_IMAGE1D_BUFFER, 0);
  int64_t out[13];
  typedef void (*q_fn)(void *, void *, void *, void *, void *, int64_t *);
  FN(q_fn, "t_query")(&a, &b, &c, &d, &e, out);
  int64_t want[] = {7, 5, 5, CL_BGRA, CL_UNORM_INT8, 2, 40302, 6, 9, 4, 3, 11, CL_R};
  for (int i = 0; i < 13; i++)
    CHECK_EQ_INT(out[i], want[i]);
  free(a.data), free(b.data), free(c.data), free(d.data), free(e.data);
}

int main(int argc, char **argv) {
  char path[4096];
  const char *dir = argc > 1 ? argv[1] : NULL;
  if (!dir) {
    snprintf(path, sizeof path, "%s", argv[0]);
    char *slash = strrchr(path, '/');
    if (slash)
      slash[1] = 0;
    else
      strcpy(path, "./");
    strncat(path, "imagetests.so", sizeof path - strlen(path) - 1);
  } else {
    snprintf(path, sizeof path, "%s/imagetests.so", dir);
  }
  lib = dlopen(path, RTLD_NOW);
  if (!lib) {
    printf("not ok load: %s\n", dlerror());
    return 1;
  }
  RUN(test_sample_2d);
  RUN(test_sample_3d);
  RUN(test_linear_known);
  RUN(test_int_coords);
  RUN(test_integer_reads);
  RUN(test_writes);
  RUN(test_other_geometries);
  RUN(test_queries);
  CHECK_EXIT();
}
