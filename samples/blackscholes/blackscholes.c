/* BlackScholes: prices European call and put options, one work-item per option.
 *
 * Usage: blackscholes [common options]   (--size: number of options, default 4194304) */
#include "../common/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The cumulative normal distribution uses the Abramowitz-Stegun polynomial (error below
 * 1e-7), the host reference evaluates the same formula in double. */
static const char *kernel_source =
    "float cnd(float d) {\n"
    "  const float a1 = 0.319381530f, a2 = -0.356563782f, a3 = 1.781477937f;\n"
    "  const float a4 = -1.821255978f, a5 = 1.330274429f, rsqrt2pi = 0.39894228040143267794f;\n"
    "  float k = 1.0f / (1.0f + 0.2316419f * fabs(d));\n"
    "  float c = rsqrt2pi * exp(-0.5f * d * d) *\n"
    "            (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));\n"
    "  return d > 0.0f ? 1.0f - c : c;\n"
    "}\n"
    "__kernel void black_scholes(__global const float *spot, __global const float *strike,\n"
    "                            __global const float *years, __global float *call,\n"
    "                            __global float *put, float rate, float volatility) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float s = spot[i], x = strike[i], t = years[i];\n"
    "  float sqrt_t = sqrt(t);\n"
    "  float d1 = (log(s / x) + (rate + 0.5f * volatility * volatility) * t) /\n"
    "             (volatility * sqrt_t);\n"
    "  float d2 = d1 - volatility * sqrt_t;\n"
    "  float discounted = x * exp(-rate * t);\n"
    "  call[i] = s * cnd(d1) - discounted * cnd(d2);\n"
    "  put[i] = discounted * cnd(-d2) - s * cnd(-d1);\n"
    "}\n";

static double cnd(double d) {
  double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
  double c = 0.39894228040143267794 * exp(-0.5 * d * d) *
             (k * (0.319381530 +
                   k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))));
  return d > 0 ? 1.0 - c : c;
}

static void reference(double s, double x, double t, double r, double v, double *call, double *put) {
  double d1 = (log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt(t)), d2 = d1 - v * sqrt(t);
  double discounted = x * exp(-r * t);
  *call = s * cnd(d1) - discounted * cnd(d2);
  *put = discounted * cnd(-d2) - s * cnd(-d1);
}

int main(int argc, char **argv) {
  struct sample_options opts;
  sample_parse(argc, argv, "[options]", NULL, &opts);
  size_t n = opts.size ? opts.size : (size_t)1 << 22;
  const float rate = 0.02f, volatility = 0.30f;

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "BlackScholes", .rate_unit = "Moptions/s"};
  cl_program program = sample_build(&opts, &cl, kernel_source, "", &result.build_ms);
  cl_kernel kernel = sample_kernel(program, "black_scholes");

  size_t bytes = n * sizeof(float);
  float *spot = malloc(bytes), *strike = malloc(bytes), *years = malloc(bytes);
  float *call = malloc(bytes), *put = malloc(bytes);
  sample_fill_random(spot, n, 5.0f, 30.0f, 1);
  sample_fill_random(strike, n, 1.0f, 100.0f, 2);
  sample_fill_random(years, n, 0.25f, 10.0f, 3);
  cl_mem dspot = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, spot);
  cl_mem dstrike = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, strike);
  cl_mem dyears = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, years);
  cl_mem dcall = sample_buffer(&cl, CL_MEM_WRITE_ONLY, bytes, NULL);
  cl_mem dput = sample_buffer(&cl, CL_MEM_WRITE_ONLY, bytes, NULL);
  cl_mem args[] = {dspot, dstrike, dyears, dcall, dput};
  for (cl_uint a = 0; a < 5; a++)
    CHECK_CL(clSetKernelArg(kernel, a, sizeof(cl_mem), &args[a]));
  CHECK_CL(clSetKernelArg(kernel, 5, sizeof rate, &rate));
  CHECK_CL(clSetKernelArg(kernel, 6, sizeof volatility, &volatility));

  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, kernel, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  CHECK_CL(clEnqueueReadBuffer(cl.queue, dcall, CL_FALSE, 0, bytes, call, 0, NULL, NULL));
  CHECK_CL(clEnqueueReadBuffer(cl.queue, dput, CL_TRUE, 0, bytes, put, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    /* Prices are differences of products of order 100: float rounding leaves absolute
     * errors of order 1e-4, whatever the size of the price. */
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
      double rc, rp;
      reference(spot[i], strike[i], years[i], rate, volatility, &rc, &rp);
      if ((fabs(call[i] - rc) > 1e-3 + 1e-5 * fabs(rc) ||
           fabs(put[i] - rp) > 1e-3 + 1e-5 * fabs(rp)) &&
          wrong++ < 5)
        fprintf(stderr, "blackscholes: option %zu: call %g put %g, expected %g %g\n", i, call[i],
                put[i], rc, rp);
    }
    result.verified = wrong == 0;
  }

  snprintf(result.size, sizeof result.size, "%zu options", n);
  result.time_ms = t * 1e3;
  result.rate = n / t / 1e6;
  int status = sample_report(&opts, &cl, &result);

  for (int a = 0; a < 5; a++)
    clReleaseMemObject(args[a]);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(spot);
  free(strike);
  free(years);
  free(call);
  free(put);
  return status;
}
