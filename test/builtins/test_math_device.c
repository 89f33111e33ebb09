/* The float math builtins end to end, as kernels get them: built by Aquila
 * for this CPU (vectorized across work-items, with FMA where the CPU has
 * one) and run through the ICD loader. test_builtins checks the same library
 * built for baseline x86-64 (no FMA) and called directly; this program checks
 * the code that applications run.
 *
 * Each function runs over about 2^17 arguments spread over the whole float
 * range (every bit pattern with a step of 32771), special values, a dense
 * sample of its usual range and hard cases (arguments closest to multiples
 * of pi/2, overflow and underflow thresholds, the edge of the fast paths),
 * against glibc's double-precision function: the OpenCL 1.2 limit in ulp
 * must hold, NaN exactly where the reference is NaN, and zeros must carry the
 * reference's sign. Neighbouring work-items mix small and large arguments, so
 * the vectors' rare paths (__aquila_vv_*, compiler/workgroup/vector_variants.c) run with
 * partial masks. The same kernels built with -cl-fast-relaxed-math are held
 * to OpenCL's relaxed limits on their usual ranges. */
#include <float.h>
#include <math.h>

#include "../api/api.h"

/* ---- references ---- */
static double ref_rsqrt(double x) {
  return 1.0 / sqrt(x);
}
static double ref_powr(double x, double y) {
  if (x < 0 || isnan(x) || isnan(y) || (x == 0 && y == 0) || (isinf(x) && y == 0) ||
      (x == 1 && isinf(y)))
    return NAN;
  return pow(fabs(x), y);
}
static double ref_rootn(double x, double n) {
  if (n == 0 || isnan(x) || (x < 0 && fmod(n, 2) == 0)) return NAN;
  if (x == 0)
    return n > 0 ? (fmod(n, 2) != 0 ? x : 0.0)
                 : (fmod(n, 2) != 0 ? copysign(INFINITY, x) : INFINITY);
  return copysign(pow(fabs(x), 1.0 / n), x);
}

/* sin(pi x), cos(pi x), tan(pi x) with the reduction exact in double. */
static double ref_sinpi(double x) {
  if (!isfinite(x)) return NAN;
  double r = fmod(fabs(x), 2), s = signbit(x) ? -1 : 1;
  if (r >= 1) {
    r -= 1;
    s = -s;
  }
  if (r > 0.5) r = 1 - r;
  double v = s * sin(M_PI * r);
  return v == 0 ? copysign(0.0, x) : v;
}
static double ref_cospi(double x) {
  if (!isfinite(x)) return NAN;
  double r = fmod(fabs(x), 2);
  if (r > 1) r = 2 - r;
  return r == 0.5 ? 0.0 : r > 0.5 ? -sin(M_PI * (r - 0.5)) : sin(M_PI * (0.5 - r));
}
/* The spec's zeros and poles at multiples of 1/2, the quotient elsewhere. */
static double ref_tanpi(double x) {
  if (!isfinite(x)) return NAN;
  double r = fmod(fabs(x), 2), s = signbit(x) ? -1 : 1;
  if (r == 0 || r == 1) return (r == 0 ? 0.0 : -0.0) * s;
  if (r == 0.5 || r == 1.5) return (r == 0.5 ? INFINITY : -INFINITY) * s;
  return ref_sinpi(x) / ref_cospi(x);
}
static double ref_asinpi(double x) {
  return asin(x) / M_PI;
}
static double ref_acospi(double x) {
  return acos(x) / M_PI;
}
static double ref_atanpi(double x) {
  return atan(x) / M_PI;
}
static double ref_atan2pi(double y, double x) {
  return atan2(y, x) / M_PI;
}

enum kind { UNARY, BINARY, BINARY_INT, SINCOS };
/* relaxed: how -cl-fast-relaxed-math is checked on lo..hi, after the
 * relaxed limits of OpenCL 2.0 and later (1.2 sets none), as the CTS tests
 * them: 1 absolute 2^-11 in [-pi, pi] (sin, cos), 2 3 + floor(|2x|) ulp
 * (exp, exp2), 3 absolute 2^-21 in [0.5, 2], else 3 ulp (logs), 5 4096 ulp
 * (asin, acos, atan), 4 8192 ulp (functions derived from others, and a
 * sane value for the rest: relaxed math may drop the compensation steps
 * that buy their last ulp). */
struct func {
  const char *name;
  enum kind kind;
  double ulp;
  float lo, hi;
  double (*ref1)(double);
  double (*ref2)(double, double);
  int relaxed;
};
#define U(n, ulp, lo, hi, ref, rx)                                                                 \
  { #n, UNARY, ulp, lo, hi, ref, NULL, rx }
#define B(n, ulp, lo, hi, ref, rx)                                                                 \
  { #n, BINARY, ulp, lo, hi, NULL, ref, rx }
static const struct func funcs[] = {
    U(sin, 4, -10, 10, sin, 1),
    U(cos, 4, -10, 10, cos, 1),
    U(tan, 5, -1.5f, 1.5f, tan, 4),
    U(asin, 4, -1, 1, asin, 5),
    U(acos, 4, -1, 1, acos, 5),
    U(atan, 5, -100, 100, atan, 5),
    U(sinh, 4, -20, 20, sinh, 4),
    U(cosh, 4, -20, 20, cosh, 4),
    U(tanh, 5, -10, 10, tanh, 4),
    U(exp, 3, -80, 80, exp, 2),
    U(exp2, 3, -120, 120, exp2, 2),
    U(exp10, 3, -30, 30, exp10, 4),
    U(expm1, 3, -10, 10, expm1, 4),
    U(log, 3, 1e-6f, 1e6f, log, 3),
    U(log2, 3, 1e-6f, 1e6f, log2, 3),
    U(log10, 3, 1e-6f, 1e6f, log10, 3),
    U(log1p, 2, -0.99f, 1e4f, log1p, 4),
    U(cbrt, 2, -1e4f, 1e4f, cbrt, 4),
    U(sqrt, 3, 0, 1e6f, sqrt, 4),
    U(rsqrt, 2, 1e-6f, 1e6f, ref_rsqrt, 4),
    U(asinh, 4, -100, 100, asinh, 4),
    U(acosh, 4, 1, 100, acosh, 4),
    U(atanh, 5, -1, 1, atanh, 4),
    U(sinpi, 4, -10, 10, ref_sinpi, 4),
    U(cospi, 4, -10, 10, ref_cospi, 4),
    U(tanpi, 6, -10, 10, ref_tanpi, 4),
    U(asinpi, 5, -1, 1, ref_asinpi, 4),
    U(acospi, 5, -1, 1, ref_acospi, 4),
    U(atanpi, 5, -100, 100, ref_atanpi, 4),
    B(pow, 16, 0.01f, 100, pow, 4),
    B(powr, 16, 0.01f, 100, ref_powr, 4),
    B(atan2, 6, -100, 100, atan2, 4),
    B(atan2pi, 6, -100, 100, ref_atan2pi, 4),
    B(hypot, 4, -1e4f, 1e4f, hypot, 4),
    {"pown", BINARY_INT, 16, 0.01f, 100, NULL, pow, 4},
    {"rootn", BINARY_INT, 16, 0.01f, 1e4f, NULL, ref_rootn, 4},
    {"sincos", SINCOS, 4, -10, 10, sin, NULL, 1},
};
#define NFUNCS (int)(sizeof funcs / sizeof funcs[0])

static const char *source =
    "#define U(F) __kernel void k_##F(__global float *o, __global const float *x) {\\\n"
    "  size_t i = get_global_id(0); o[i] = F(x[i]); }\n"
    "#define B(F) __kernel void k_##F(__global float *o, __global const float *x,\\\n"
    "                                 __global const float *y) {\\\n"
    "  size_t i = get_global_id(0); o[i] = F(x[i], y[i]); }\n"
    "#define I(F) __kernel void k_##F(__global float *o, __global const float *x,\\\n"
    "                                 __global const int *y) {\\\n"
    "  size_t i = get_global_id(0); o[i] = F(x[i], y[i]); }\n"
    "U(sin) U(cos) U(tan) U(asin) U(acos) U(atan) U(sinh) U(cosh) U(tanh) U(exp) U(exp2)\n"
    "U(exp10) U(expm1) U(log) U(log2) U(log10) U(log1p) U(cbrt) U(sqrt) U(rsqrt)\n"
    "U(asinh) U(acosh) U(atanh) U(sinpi) U(cospi) U(tanpi) U(asinpi) U(acospi) U(atanpi)\n"
    "B(pow) B(powr) B(atan2) B(hypot) B(atan2pi) I(pown) I(rootn)\n"
    "__kernel void k_sincos(__global float *o, __global const float *x) {\n"
    "  size_t i = get_global_id(0), n = get_global_size(0);\n"
    "  float c; o[i] = sincos(x[i], &c); o[n + i] = c;\n"
    "}\n";

/* ---- error measure ---- */
/* In ulps of the float result at the exact value ref; infinity counts as
 * 2^128 and is exact for values at least that large. NaN against a number,
 * and a zero of the wrong sign, are failures at any limit. */
static double ulp_error(float got, double ref) {
  if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
  if (isnan(got)) return INFINITY;
  if (isinf(ref)) return (double)got == ref ? 0 : INFINITY;
  if (got == 0 && ref == 0) return !signbit(got) == !signbit(ref) ? 0 : INFINITY;
  double g = got;
  if (isinf(got)) {
    if (!signbit(got) != !signbit(ref)) return INFINITY;
    if (fabs(ref) >= 0x1p128) return 0;
    g = copysign(0x1p128, got);
  }
  int e = ref == 0 ? -126 : ilogb(ref);
  if (e < -126) e = -126;
  return fabs(g - ref) / ldexp(1, e - 23);
}

/* The relaxed limit at x for the exact value ref. */
static int relaxed_ok(const struct func *f, float x, float got, double ref) {
  if (isnan(ref) || isinf(ref)) return 1; /* finite math only */
  double e = ulp_error(got, ref), a = fabs((double)got - ref);
  switch (f->relaxed) {
  case 1:
    return fabs(x) <= M_PI ? a <= 0x1p-11 : e <= 8192;
  case 2:
    return e <= 3 + floor(fabs(2.0 * x));
  case 3:
    return x >= 0.5f && x <= 2.0f ? a <= 0x1p-21 : e <= 3;
  case 5:
    return e <= 4096;
  default:
    return e <= 8192;
  }
}

/* ---- arguments ---- */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}
static float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static const float specials[] = {
    0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f,
    0x1p-149f, -0x1p-149f, 0x1.fffffcp-127f, 0x1p-126f, -0x1p-126f, FLT_MAX, -FLT_MAX,
    0x1.fffffep-1f, 0x1.000002p+0f, 1e-30f, -1e-30f, 1e30f, -1e30f,
    /* trig: pi/2 and pi/4 neighbourhoods, the fast path's edge (2^14), the
     * float closest to a multiple of pi/2, huge multiples */
    0x1.921fb6p+0f, -0x1.921fb6p+0f, 0x1.921fb6p-1f, 0x1.921fb4p-1f, 0x1.921fb6p+1f, 0x1p14f,
    0x1.fffffep+13f, -0x1p14f, 0x1.000002p+14f, 0x1.f37c8ap+95f, -0x1.f37c8ap+95f, 0x1.921fb6p+100f,
    0x1p+127f, 0x1.6a6a2ep+43f,
    /* exponentials: overflow, subnormal and zero thresholds */
    88.7228394f, 88.72284f, -87.33654f, -103.97208f, -103.9721f, -104.0f, 128.0f, -149.0f, -150.0f,
    38.5318394f, -45.1545f, 0x1p-25f, -0x1p-25f, -17.3f,
    /* logarithms near 1, powers of 2 and 10 */
    0x1.6a09e6p-1f, 0x1.6a09e4p-1f, 0x1.6a09e6p+0f, 1024.0f, 1e-5f, 10.0f, 100.0f, 1e10f,
    -0.2928932f, 0.41421356f, -0.99999994f};
#define NSPEC (int)(sizeof specials / sizeof specials[0])

/* x (and y) for f; returns the count. dense_from: where the usual-range
 * sample starts (the relaxed check uses it). */
static size_t make_args(const struct func *f, float *x, float *y, int *yi, size_t cap,
                        size_t *dense_from) {
  size_t n = 0;
  if (f->kind == UNARY || f->kind == SINCOS) {
    for (int i = 0; i < NSPEC; i++)
      x[n++] = specials[i];
    for (uint64_t u = 0; u < (1ull << 32) && n < cap; u += 32771)
      x[n++] = bits_float((uint32_t)u);
  } else {
    for (int i = 0; i < NSPEC && n < cap; i++)
      for (int j = 0; j < NSPEC && n < cap; j += 3, n++) {
        x[n] = specials[i];
        y[n] = specials[j];
        yi[n] = j - NSPEC / 2;
      }
    for (int i = 0; i < 65536 && n < cap; i++, n++) {
      uint32_t bx = rnd32(), by = rnd32();
      if (i & 1) bx = (bx & 0x807fffffu) | ((127u - 20 + rnd32() % 40) << 23);
      if (i & 2) by = (by & 0x807fffffu) | ((127u - 8 + rnd32() % 14) << 23);
      x[n] = bits_float(bx);
      y[n] = bits_float(by);
      yi[n] = (int)(rnd32() % 41) - 20;
    }
    /* pow of negative bases with integer exponents, and y near integers */
    for (int i = 0; i < 4096 && n < cap; i++, n++) {
      x[n] = -(float)(rnd32() % 1000) / 100.0f;
      y[n] = (float)((int)(rnd32() % 41) - 20);
      yi[n] = (int)y[n];
    }
  }
  *dense_from = n;
  for (int i = 0; i < 32768 && n < cap; i++, n++) {
    double t = (rnd32() >> 8) * 0x1p-24;
    x[n] = (float)(f->lo + (f->hi - f->lo) * t);
    y[n] = (float)(-10 + 20 * ((rnd32() >> 8) * 0x1p-24));
    yi[n] = (int)(rnd32() % 41) - 20;
  }
  return n;
}

/* ---- running ---- */
static int run_kernel(cl_program p, const struct func *f, float *out, const float *x,
                      const float *y, const int *yi, size_t n) {
  char kname[64];
  snprintf(kname, sizeof kname, "k_%s", f->name);
  cl_int err;
  cl_kernel k = clCreateKernel(p, kname, &err);
  if (!k) return -1;
  size_t outn = f->kind == SINCOS ? 2 * n : n;
  cl_mem bo = clCreateBuffer(context, CL_MEM_WRITE_ONLY, outn * 4, NULL, &err);
  cl_mem bx = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4, (void *)x, &err);
  cl_mem by = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4,
                             f->kind == BINARY_INT ? (void *)yi : (void *)y, &err);
  clSetKernelArg(k, 0, sizeof bo, &bo);
  clSetKernelArg(k, 1, sizeof bx, &bx);
  if (f->kind == BINARY || f->kind == BINARY_INT) clSetKernelArg(k, 2, sizeof by, &by);
  err = clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = clEnqueueReadBuffer(queue, bo, CL_TRUE, 0, outn * 4, out, 0, NULL, NULL);
  clReleaseMemObject(bo);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseKernel(k);
  return err == CL_SUCCESS ? 0 : -1;
}

#define CAP 200000
static float xs[CAP], ys[CAP], out[2 * CAP];
static int yis[CAP];

static double reference(const struct func *f, size_t i, int second) {
  if (f->kind == SINCOS) return second ? cos(xs[i]) : sin(xs[i]);
  if (f->kind == UNARY) return f->ref1(xs[i]);
  return f->ref2(xs[i], f->kind == BINARY_INT ? (double)yis[i] : ys[i]);
}

static void check_program(const char *options, int relaxed) {
  cl_int err;
  cl_program p = build_program(source, options, &err);
  REQUIRE(p);
  for (int fi = 0; fi < NFUNCS; fi++) {
    const struct func *f = &funcs[fi];
    size_t dense_from;
    size_t n = make_args(f, xs, ys, yis, CAP, &dense_from);
    /* -cl-fast-relaxed-math implies -cl-finite-math-only: an infinite or
     * NaN argument is outside the kernel's domain; and OpenCL 1.2 bounds
     * no relaxed result, so near the ends of the range (atan2(FLT_MAX,
     * FLT_MAX) through a reciprocal that underflows) the vectorized and
     * scalar code, which make check-vectorize compares, may answer
     * differently. Their relaxed arguments stay finite and within 2^+-100. */
    if (relaxed)
      for (size_t i = 0; i < n; i++) {
        if (!isfinite(xs[i]) || fabsf(xs[i]) > 0x1p100f) xs[i] = 1.5f;
        if (!isfinite(ys[i]) || fabsf(ys[i]) > 0x1p100f) ys[i] = -2.5f;
        if (xs[i] != 0.0f && fabsf(xs[i]) < 0x1p-100f) xs[i] = 0.25f;
        if (ys[i] != 0.0f && fabsf(ys[i]) < 0x1p-100f) ys[i] = -0.75f;
      }
    if (run_kernel(p, f, out, xs, ys, yis, n)) {
      printf("  %s: the kernel did not run\n", f->name);
      check_case_failed = 1;
      continue;
    }
    double worst = 0;
    size_t wi = 0;
    int wsecond = 0, bad = 0;
    for (int second = 0; second < (f->kind == SINCOS ? 2 : 1); second++)
      for (size_t i = relaxed ? dense_from : 0; i < n; i++) {
        float got = out[second * n + i];
        double ref = reference(f, i, second);
        if (relaxed) {
          if (!relaxed_ok(f, xs[i], got, ref) && !bad++)
            printf("  relaxed %s(%a, %a) = %a, want %.9g\n", f->name, xs[i], ys[i], got, ref);
          continue;
        }
        double e = ulp_error(got, ref);
        if (!(e <= worst)) {
          worst = e;
          wi = i;
          wsecond = second;
        }
      }
    if (relaxed) {
      if (bad) check_case_failed = 1;
      continue;
    }
    double yv = f->kind == BINARY_INT ? (double)yis[wi] : (double)ys[wi];
    printf("  %-7s max %.3f ulp (limit %g)", f->name, worst, f->ulp);
    if (worst > 0) printf(" at x = %a", xs[wi]);
    if (worst > 0 && (f->kind == BINARY || f->kind == BINARY_INT)) printf(", y = %a", yv);
    printf("\n");
    if (!(worst <= f->ulp)) {
      printf("  %s: got %a, want %.17g\n", f->name, out[wsecond * n + wi],
             reference(f, wi, wsecond));
      check_case_failed = 1;
    }
  }
  clReleaseProgram(p);
}

static void full_profile_limits(void) {
  check_program("", 0);
}
static void relaxed_math_limits(void) {
  check_program("-cl-fast-relaxed-math", 1);
}

int main(void) {
  api_setup();
  RUN(full_profile_limits);
  RUN(relaxed_math_limits);
  api_teardown();
  CHECK_EXIT();
}
