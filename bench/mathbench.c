/* Single-precision math builtins on an OpenCL device: speed and accuracy per function.
 *
 *   mathbench [--func NAME] [--options "-cl-..."] [--size N] [--iterations N] [--json]
 *       speed: each work-item evaluates the function on 8 nearby arguments and sums them,
 *       so that the kernel is bound by the math, not by memory; Gelem/s = evaluations/s,
 *       median of the iterations. Arguments lie in a range typical for the function.
 *   mathbench --accuracy [--stride S] [--func NAME]
 *       accuracy: one-argument functions over every S-th float bit pattern (S = 1: all
 *       2^32), two-argument ones over special values crossed with each other and 2^24
 *       random pairs; the reference is glibc's double-precision function of the same
 *       arguments. Prints the largest error in ulp (of the float result) and where.
 *
 * Functions with an int argument (pown, rootn) take n in [-20, 20]. Uses the samples'
 * common options (--platform, --device). */
#include "../samples/common/sample.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum kind { UNARY, BINARY, BINARY_INT };

struct func {
  const char *name;
  enum kind kind;
  float lo, hi;   /* speed: range of x */
  float ylo, yhi; /* speed: range of y (two-argument functions) */
  double (*ref1)(double);
  double (*ref2)(double, double);
};

static double ref_rsqrt(double x) {
  return 1.0 / sqrt(x);
}
static double ref_recip(double x) {
  return 1.0 / x;
}
static double ref_divide(double x, double y) {
  return x / y;
}
static double ref_powr(double x, double y) {
  if (x < 0 || isnan(x) || isnan(y) || (x == 0 && y == 0) || (isinf(x) && y == 0) ||
      (x == 1 && isinf(y)))
    return NAN;
  return pow(fabs(x), y);
}
static double ref_pown(double x, double n) {
  return pow(x, n);
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
static double ref_rootn(double x, double n) {
  if (n == 0 || isnan(x) || (x < 0 && fmod(n, 2) == 0)) return NAN;
  if (x == 0)
    return n > 0 ? (fmod(n, 2) != 0 ? x : 0.0)
                 : (fmod(n, 2) != 0 ? copysign(INFINITY, x) : INFINITY);
  return copysign(pow(fabs(x), 1.0 / n), x);
}

#define U(n, lo, hi, ref)                                                                          \
  { #n, UNARY, lo, hi, 0, 0, ref, NULL }
#define B(n, lo, hi, ylo, yhi, ref)                                                                \
  { #n, BINARY, lo, hi, ylo, yhi, NULL, ref }
static const struct func funcs[] = {
    U(sin, -10, 10, sin),
    U(cos, -10, 10, cos),
    U(tan, -10, 10, tan),
    U(asin, -1, 1, asin),
    U(acos, -1, 1, acos),
    U(atan, -10, 10, atan),
    U(sinh, -10, 10, sinh),
    U(cosh, -10, 10, cosh),
    U(tanh, -5, 5, tanh),
    U(asinh, -100, 100, asinh),
    U(acosh, 1, 100, acosh),
    U(atanh, -1, 1, atanh),
    U(exp, -20, 20, exp),
    U(exp2, -30, 30, exp2),
    U(exp10, -10, 10, exp10),
    U(expm1, -5, 5, expm1),
    U(log, 0.001f, 1000, log),
    U(log2, 0.001f, 1000, log2),
    U(log10, 0.001f, 1000, log10),
    U(log1p, -0.9f, 100, log1p),
    U(cbrt, -1000, 1000, cbrt),
    U(sqrt, 0.001f, 1e6f, sqrt),
    U(rsqrt, 0.001f, 1e6f, ref_rsqrt),
    U(sinpi, -10, 10, ref_sinpi),
    U(cospi, -10, 10, ref_cospi),
    U(tanpi, -10, 10, ref_tanpi),
    U(asinpi, -1, 1, ref_asinpi),
    U(acospi, -1, 1, ref_acospi),
    U(atanpi, -10, 10, ref_atanpi),
    U(native_sin, -10, 10, sin),
    U(native_cos, -10, 10, cos),
    U(native_tan, -1, 1, tan),
    U(native_exp, -20, 20, exp),
    U(native_exp2, -30, 30, exp2),
    U(native_exp10, -10, 10, exp10),
    U(native_log, 0.001f, 1000, log),
    U(native_log2, 0.001f, 1000, log2),
    U(native_log10, 0.001f, 1000, log10),
    U(native_sqrt, 0.001f, 1e6f, sqrt),
    U(native_rsqrt, 0.001f, 1e6f, ref_rsqrt),
    U(native_recip, 0.001f, 1e6f, ref_recip),
    U(half_sin, -10, 10, sin),
    U(half_cos, -10, 10, cos),
    U(half_tan, -1, 1, tan),
    U(half_exp, -20, 20, exp),
    U(half_exp2, -30, 30, exp2),
    U(half_exp10, -10, 10, exp10),
    U(half_log, 0.001f, 1000, log),
    U(half_log2, 0.001f, 1000, log2),
    U(half_log10, 0.001f, 1000, log10),
    U(half_sqrt, 0.001f, 1e6f, sqrt),
    U(half_rsqrt, 0.001f, 1e6f, ref_rsqrt),
    U(half_recip, 0.001f, 1e6f, ref_recip),
    B(pow, 0.1f, 10, -10, 10, pow),
    B(powr, 0.1f, 10, -10, 10, ref_powr),
    B(atan2, -10, 10, -10, 10, atan2),
    B(atan2pi, -10, 10, -10, 10, ref_atan2pi),
    B(hypot, -1e3f, 1e3f, -1e3f, 1e3f, hypot),
    B(native_powr, 0.1f, 10, -10, 10, ref_powr),
    B(native_divide, -1e3f, 1e3f, 1, 1e3f, ref_divide),
    B(half_powr, 0.1f, 10, -10, 10, ref_powr),
    B(half_divide, -1e3f, 1e3f, 1, 1e3f, ref_divide),
    {"pown", BINARY_INT, 0.1f, 10, -20, 20, NULL, ref_pown},
    {"rootn", BINARY_INT, 0.1f, 1000, -20, 20, NULL, ref_rootn},
};
#define NFUNCS (int)(sizeof funcs / sizeof funcs[0])

/* ---- speed ---- */
static const char *speed_source =
    "#define S8(E) (E(0) + E(1) + E(2) + E(3) + E(4) + E(5) + E(6) + E(7))\n"
    "#define U1(k) F(x + (k) * h)\n"
    "#define B1(k) F(x + (k) * h, y + (k) * h)\n"
    "#define I1(k) F(x + (k) * h, n + (k))\n"
    "#if KIND == 0\n"
    "__kernel void unary(__global float *out, __global const float *in, float h) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float x = in[i];\n"
    "  out[i] = S8(U1);\n"
    "}\n"
    "#elif KIND == 1\n"
    "__kernel void binary(__global float *out, __global const float *in,\n"
    "                     __global const float *in2, float h) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float x = in[i], y = in2[i];\n"
    "  out[i] = S8(B1);\n"
    "}\n"
    "#else\n"
    "__kernel void binary_int(__global float *out, __global const float *in,\n"
    "                         __global const int *in2, float h) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float x = in[i];\n"
    "  int n = in2[i];\n"
    "  out[i] = S8(I1);\n"
    "}\n"
    "#endif\n";

static const char *kernel_name(enum kind k) {
  return k == UNARY ? "unary" : k == BINARY ? "binary" : "binary_int";
}

static cl_program build_for(const struct sample_options *opts, struct sample_cl *cl,
                            const char *source, const struct func *f, const char *extra) {
  char options[512];
  snprintf(options, sizeof options, "-DF=%s -DKIND=%d %s", f->name, (int)f->kind,
           extra ? extra : "");
  return sample_build(opts, cl, source, options, NULL);
}

static double speed(const struct sample_options *opts, struct sample_cl *cl, const struct func *f,
                    const char *extra, size_t n) {
  cl_program prog = build_for(opts, cl, speed_source, f, extra);
  cl_kernel k = sample_kernel(prog, kernel_name(f->kind));
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  /* h keeps the 8 arguments of a work-item within the range. */
  float h = (f->hi - f->lo) * 1e-4f;
  sample_fill_random(x, n, f->lo, f->hi - 8 * h, 11);
  if (f->kind == BINARY_INT) {
    int *yi = (int *)y;
    for (size_t i = 0; i < n; i++)
      yi[i] = (int)(i % 33) - 20 + (i % 33 >= 20 ? 1 : 0);
  } else {
    sample_fill_random(y, n, f->ylo, f->yhi - 8 * h, 12);
  }
  cl_mem din = sample_buffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, x);
  cl_mem din2 = sample_buffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, y);
  cl_mem dout = sample_buffer(cl, CL_MEM_WRITE_ONLY, n * 4, NULL);
  int a = 0;
  CHECK_CL(clSetKernelArg(k, a++, sizeof dout, &dout));
  CHECK_CL(clSetKernelArg(k, a++, sizeof din, &din));
  if (f->kind != UNARY) CHECK_CL(clSetKernelArg(k, a++, sizeof din2, &din2));
  CHECK_CL(clSetKernelArg(k, a++, sizeof h, &h));
  /* One untimed launch: first-use costs are not the steady state. */
  CHECK_CL(clEnqueueNDRangeKernel(cl->queue, k, 1, NULL, &n, NULL, 0, NULL, NULL));
  CHECK_CL(clFinish(cl->queue));
  double *t = malloc(opts->iterations * sizeof *t);
  for (int it = 0; it < opts->iterations; it++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl->queue, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl->queue));
    t[it] = sample_seconds() - t0;
  }
  double med = sample_median(t, opts->iterations);
  free(t);
  clReleaseMemObject(din);
  clReleaseMemObject(din2);
  clReleaseMemObject(dout);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  free(x);
  free(y);
  return 8.0 * n / med * 1e-9;
}

/* ---- accuracy ---- */
static const char *accuracy_source =
    "#if KIND == 0\n"
    "__kernel void unary(__global float *out, __global const float *in) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = F(in[i]);\n"
    "}\n"
    "#elif KIND == 1\n"
    "__kernel void binary(__global float *out, __global const float *in,\n"
    "                     __global const float *in2) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = F(in[i], in2[i]);\n"
    "}\n"
    "#else\n"
    "__kernel void binary_int(__global float *out, __global const float *in,\n"
    "                         __global const int *in2) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = F(in[i], in2[i]);\n"
    "}\n"
    "#endif\n";

/* Error of got in ulps of the float format at the exact value ref; infinity counts as
 * 2^128 and is exact for any value at least that large, so an overflow is accepted when
 * the exact value is beyond FLT_MAX. A zero of the wrong sign counts as 1 ulp. */
static double ulp_error(float got, double ref) {
  if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
  if (isnan(got)) return INFINITY;
  if (isinf(ref)) return (double)got == ref ? 0 : INFINITY;
  if (got == 0 && ref == 0) return !signbit(got) == !signbit(ref) ? 0 : 1;
  double g = got;
  if (isinf(got)) {
    if (!signbit(got) != !signbit(ref)) return INFINITY;
    g = copysign(0x1p128, got);
    if (fabs(ref) >= 0x1p128) return 0;
  }
  int e = ref == 0 ? -126 : ilogb(ref);
  if (e < -126) e = -126;
  return fabs(g - ref) / ldexp(1, e - 23);
}

struct acc_job {
  const struct func *f;
  const float *x, *y;
  const int *yi;
  const float *got;
  size_t begin, end;
  double worst;
  size_t worst_i;
};

static void *acc_worker(void *p) {
  struct acc_job *j = p;
  for (size_t i = j->begin; i < j->end; i++) {
    double ref = j->f->kind == UNARY        ? j->f->ref1(j->x[i])
                 : j->f->kind == BINARY_INT ? j->f->ref2(j->x[i], j->yi[i])
                                            : j->f->ref2(j->x[i], j->y[i]);
    double e = ulp_error(j->got[i], ref);
    if (!(e <= j->worst)) {
      j->worst = e;
      j->worst_i = i;
    }
  }
  return NULL;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t rnd32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

static const float specials[] = {0.0f,           -0.0f,         INFINITY, -INFINITY, NAN,
                                 1.0f,           -1.0f,         2.0f,     -2.0f,     0.5f,
                                 -0.5f,          3.0f,          -3.0f,    0x1p-149f, -0x1p-149f,
                                 0x1p-126f,      FLT_MAX,       -FLT_MAX, 1e-20f,    1e20f,
                                 0x1.fffffep-1f, 0x1.000002p0f, 1.5f,     -1.5f,     100.5f};
#define NSPECIALS (int)(sizeof specials / sizeof specials[0])

static int accuracy(const struct sample_options *opts, struct sample_cl *cl, const struct func *f,
                    const char *extra, uint64_t stride, int json) {
  cl_program prog = build_for(opts, cl, accuracy_source, f, extra);
  cl_kernel k = sample_kernel(prog, kernel_name(f->kind));
  const size_t chunk = (size_t)1 << 24;
  float *x = malloc(chunk * 4), *y = malloc(chunk * 4), *got = malloc(chunk * 4);
  cl_mem din = sample_buffer(cl, CL_MEM_READ_ONLY, chunk * 4, NULL);
  cl_mem din2 = sample_buffer(cl, CL_MEM_READ_ONLY, chunk * 4, NULL);
  cl_mem dout = sample_buffer(cl, CL_MEM_WRITE_ONLY, chunk * 4, NULL);
  CHECK_CL(clSetKernelArg(k, 0, sizeof dout, &dout));
  CHECK_CL(clSetKernelArg(k, 1, sizeof din, &din));
  if (f->kind != UNARY) CHECK_CL(clSetKernelArg(k, 2, sizeof din2, &din2));
  double worst = 0;
  float wx = 0, wy = 0, wgot = 0;
  uint64_t total = f->kind == UNARY ? ((uint64_t)1 << 32) / stride : (uint64_t)1 << 24;
  uint64_t done = 0, bits = 0;
  int nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (nthreads < 1) nthreads = 1;
  if (nthreads > 64) nthreads = 64;
  for (int pass = 0; done < total || pass == 0; pass++) {
    size_t n = 0;
    if (f->kind == UNARY) {
      for (; n < chunk && done < total; n++, done++, bits += stride) {
        uint32_t b = (uint32_t)bits;
        memcpy(&x[n], &b, 4);
      }
    } else {
      if (pass == 0) /* specials crossed, then random pairs */
        for (int a = 0; a < NSPECIALS; a++)
          for (int c = 0; c < NSPECIALS; c++, n++) {
            x[n] = specials[a];
            if (f->kind == BINARY_INT)
              ((int *)y)[n] = c - NSPECIALS / 2;
            else
              y[n] = specials[c];
          }
      for (; n < chunk && done < total; n++, done++) {
        uint32_t bx = rnd32(), by = rnd32();
        /* Half the pairs have a moderate exponent, where results are neither 0 nor inf. */
        if (n & 1) bx = (bx & 0x807fffffu) | ((uint32_t)(127 - 20 + rnd32() % 40) << 23);
        if (n & 2) by = (by & 0x807fffffu) | ((uint32_t)(127 - 8 + rnd32() % 14) << 23);
        memcpy(&x[n], &bx, 4);
        if (f->kind == BINARY_INT)
          ((int *)y)[n] = (int)(rnd32() % 41) - 20;
        else
          memcpy(&y[n], &by, 4);
      }
    }
    CHECK_CL(clEnqueueWriteBuffer(cl->queue, din, CL_FALSE, 0, n * 4, x, 0, NULL, NULL));
    if (f->kind != UNARY)
      CHECK_CL(clEnqueueWriteBuffer(cl->queue, din2, CL_FALSE, 0, n * 4, y, 0, NULL, NULL));
    CHECK_CL(clEnqueueNDRangeKernel(cl->queue, k, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadBuffer(cl->queue, dout, CL_TRUE, 0, n * 4, got, 0, NULL, NULL));
    struct acc_job jobs[64];
    pthread_t th[64];
    for (int t = 0; t < nthreads; t++) {
      jobs[t] = (struct acc_job){
          f, x, y, (const int *)y, got, n * t / nthreads, n * (t + 1) / nthreads, 0, 0};
      pthread_create(&th[t], NULL, acc_worker, &jobs[t]);
    }
    for (int t = 0; t < nthreads; t++) {
      pthread_join(th[t], NULL);
      if (!(jobs[t].worst <= worst)) {
        worst = jobs[t].worst;
        size_t i = jobs[t].worst_i;
        wx = x[i];
        wy = f->kind == BINARY_INT ? (float)((int *)y)[i] : y[i];
        wgot = got[i];
      }
    }
  }
  if (json)
    printf("{\"name\": \"%s\", \"max_ulp\": %.3f, \"x\": %a, \"y\": %a, \"got\": %a}\n", f->name,
           worst, wx, wy, wgot);
  else if (f->kind == UNARY)
    printf("%-14s max %9.3f ulp at x = %a (%.9g): got %a, want %.9g\n", f->name, worst, wx, wx,
           wgot, f->ref1(wx));
  else
    printf("%-14s max %9.3f ulp at (%a, %a): got %a, want %.9g\n", f->name, worst, wx, wy, wgot,
           f->ref2(wx, wy));
  fflush(stdout);
  clReleaseMemObject(din);
  clReleaseMemObject(din2);
  clReleaseMemObject(dout);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  free(x);
  free(y);
  free(got);
  return 0;
}

int main(int argc, char **argv) {
  const char *only = NULL, *extra = NULL;
  int do_accuracy = 0;
  size_t stride = 1;
  struct sample_extra_option ext[] = {
      {"--func", SAMPLE_STRING, &only, "comma-separated function names (default: all)"},
      {"--options", SAMPLE_STRING, &extra, "build options, e.g. -cl-fast-relaxed-math"},
      {"--accuracy", SAMPLE_FLAG, &do_accuracy, "measure the error instead of the speed"},
      {"--stride", SAMPLE_SIZE, &stride, "accuracy: test every S-th float (default 1)"},
      {NULL, 0, NULL, NULL}};
  struct sample_options opts;
  sample_parse(argc, argv, "[options]", ext, &opts);
  if (stride < 1) stride = 1;
  size_t n = opts.size ? opts.size : (size_t)1 << 20;
  struct sample_cl cl;
  sample_init(&opts, &cl);
  if (opts.json && !do_accuracy) printf("{\"device\": \"%s\", \"gelem_per_s\": {", cl.device_name);
  int first = 1;
  for (int i = 0; i < NFUNCS; i++) {
    const struct func *f = &funcs[i];
    if (only) {
      size_t len = strlen(f->name);
      const char *p = only;
      int match = 0;
      while (p && *p) {
        if (!strncmp(p, f->name, len) && (p[len] == ',' || p[len] == 0)) match = 1;
        p = strchr(p, ',');
        if (p) p++;
      }
      if (!match) continue;
    }
    if (do_accuracy) {
      accuracy(&opts, &cl, f, extra, stride, opts.json);
      continue;
    }
    double r = speed(&opts, &cl, f, extra, n);
    if (opts.json)
      printf("%s\"%s\": %.3f", first ? "" : ", ", f->name, r);
    else
      printf("%-14s %8.3f Gelem/s\n", f->name, r);
    fflush(stdout);
    first = 0;
  }
  if (opts.json && !do_accuracy) printf("}}\n");
  sample_release(&cl);
  return 0;
}
