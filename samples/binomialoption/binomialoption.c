/* BinomialOption: prices European call options on a binomial (Cox-Ross-Rubinstein)
 * lattice, after the AMD APP SDK sample.
 *
 * Usage: binomialoption [common options] [--steps S]
 *   (--size: number of options, default 16384; --steps: lattice steps, default 255)
 * One work-group of S + 1 work-items prices one option: work-item i holds the lattice
 * node i, starting from the payoff at expiry, and each step back in time replaces node i
 * by the discounted expectation of nodes i and i + 1. The lattice lives in local memory
 * in two arrays that the steps alternate between, with a barrier after each step. */
#include "../common/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define RISK_FREE 0.02
#define VOLATILITY 0.30

static const char *kernel_source =
    "/* STEPS comes from the build options; the group has STEPS + 1 work-items. */\n"
    "#define RISK_FREE 0.02f\n"
    "#define VOLATILITY 0.30f\n"
    "__kernel __attribute__((reqd_work_group_size(STEPS + 1, 1, 1)))\n"
    "void binomial_option(__global const float *rand, __global float *price) {\n"
    "  __local float a[STEPS + 1], b[STEPS + 1];\n"
    "  uint i = get_local_id(0);\n"
    "  float r = rand[get_group_id(0)];\n"
    "  /* The option's stock price, strike and years to expiry, from one uniform value. */\n"
    "  float s = (1.0f - r) * 5.0f + r * 30.0f;\n"
    "  float x = (1.0f - r) * 1.0f + r * 100.0f;\n"
    "  float years = (1.0f - r) * 0.25f + r * 10.0f;\n"
    "  float dt = years / STEPS;\n"
    "  float vsdt = VOLATILITY * sqrt(dt);\n"
    "  float growth = exp(RISK_FREE * dt);\n"
    "  float u = exp(vsdt), d = 1.0f / u;\n"
    "  float pu = (growth - d) / (u - d);\n"
    "  float pu_r = pu / growth, pd_r = (1.0f - pu) / growth;\n"
    "  /* Node i at expiry: the stock went up i times and down STEPS - i times. */\n"
    "  a[i] = fmax(s * exp(vsdt * (2.0f * i - STEPS)) - x, 0.0f);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  /* Two steps per iteration, a -> b -> a, so no copy back is needed. */\n"
    "  for (int j = STEPS; j > 0; j -= 2) {\n"
    "    if (i < j) b[i] = pu_r * a[i + 1] + pd_r * a[i];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (i < j - 1) a[i] = pu_r * b[i + 1] + pd_r * b[i];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  /* An odd STEPS ends on b: its last iteration's second step does nothing. */\n"
    "  if (i == 0) price[get_group_id(0)] = STEPS % 2 ? b[0] : a[0];\n"
    "}\n";

/* The same lattice in double precision, from the same float input. */
static double host_price(float rf, int steps, double *v) {
  double r = rf;
  double s = (1.0 - r) * 5.0 + r * 30.0;
  double x = (1.0 - r) * 1.0 + r * 100.0;
  double years = (1.0 - r) * 0.25 + r * 10.0;
  double dt = years / steps;
  double vsdt = VOLATILITY * sqrt(dt);
  double growth = exp(RISK_FREE * dt);
  double u = exp(vsdt), d = 1.0 / u;
  double pu = (growth - d) / (u - d);
  double pu_r = pu / growth, pd_r = (1.0 - pu) / growth;
  for (int i = 0; i <= steps; i++)
    v[i] = fmax(s * exp(vsdt * (2.0 * i - steps)) - x, 0.0);
  for (int j = steps; j > 0; j--)
    for (int i = 0; i < j; i++)
      v[i] = pu_r * v[i + 1] + pd_r * v[i];
  return v[0];
}

int main(int argc, char **argv) {
  struct sample_options opts;
  int steps = 255;
  const struct sample_extra_option extra[] = {
      {"--steps", SAMPLE_INT, &steps, "lattice steps (work-group size - 1; default 255)"}, {0}};
  sample_parse(argc, argv, "[options] [--steps S]", extra, &opts);
  size_t n = opts.size ? opts.size : 16384;
  if (steps < 1) {
    fprintf(stderr, "binomialoption: --steps must be at least 1\n");
    return 2;
  }

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "BinomialOption", .rate_unit = "GFLOP/s"};
  char build_options[64];
  snprintf(build_options, sizeof build_options, "-DSTEPS=%d", steps);
  cl_program program = sample_build(&opts, &cl, kernel_source, build_options, &result.build_ms);
  cl_kernel kernel = sample_kernel(program, "binomial_option");

  float *rand = malloc(n * sizeof *rand), *price = malloc(n * sizeof *price);
  sample_fill_random(rand, n, 0.0f, 1.0f, 5);
  cl_mem drand =
      sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), rand);
  cl_mem dprice = sample_buffer(&cl, CL_MEM_WRITE_ONLY, n * sizeof(float), NULL);
  CHECK_CL(clSetKernelArg(kernel, 0, sizeof drand, &drand));
  CHECK_CL(clSetKernelArg(kernel, 1, sizeof dprice, &dprice));

  size_t local = (size_t)steps + 1, global = n * local;
  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  CHECK_CL(
      clEnqueueReadBuffer(cl.queue, dprice, CL_TRUE, 0, n * sizeof(float), price, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    /* Float rounding grows about linearly with the steps: the largest error measured
     * (on Aquila and pocl alike) is about 1.3e-7 * steps * (1 + price), so 5e-7 leaves a
     * margin of four while a lost or stale step is off by far more. */
    double *v = malloc(((size_t)steps + 1) * sizeof *v);
    size_t wrong = 0;
    for (size_t k = 0; k < n; k++) {
      double want = host_price(rand[k], steps, v);
      if (!(fabs(price[k] - want) <= 5e-7 * steps * (1 + fabs(want))) && wrong++ < 5)
        fprintf(stderr, "binomialoption: option %zu: %.7g, expected %.7g\n", k, price[k], want);
    }
    free(v);
    result.verified = wrong == 0;
  }

  snprintf(result.size, sizeof result.size, "%zu options %d steps", n, steps);
  result.time_ms = t * 1e3;
  /* Each node update is two multiplies and an add. */
  result.rate = 3.0 * n * steps * (steps + 1) / 2 / t / 1e9;
  int status = sample_report(&opts, &cl, &result);

  clReleaseMemObject(drand);
  clReleaseMemObject(dprice);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(rand);
  free(price);
  return status;
}
