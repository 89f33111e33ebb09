/* Reduction: the sum of n floats, in two passes on the device.
 *
 * Usage: reduction [common options]   (--size: number of floats, default 16777216)
 * Pass one runs a fixed number of work-groups; each work-item adds a strided slice of the
 * input, then the group combines its 256 partial sums by halving in local memory. Pass two
 * runs the same kernel as a single group over the per-group sums. */
#include "../common/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define GROUP_SIZE 256
#define GROUPS 256

static const char *kernel_source =
    "#define GROUP_SIZE 256\n"
    "__kernel __attribute__((reqd_work_group_size(GROUP_SIZE, 1, 1)))\n"
    "void reduce_sum(__global const float *in, uint n, __global float *out) {\n"
    "  __local float partial[GROUP_SIZE];\n"
    "  size_t lid = get_local_id(0);\n"
    "  float sum = 0.0f;\n"
    "  for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) sum += in[i];\n"
    "  partial[lid] = sum;\n"
    "  for (uint stride = GROUP_SIZE / 2; stride > 0; stride /= 2) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (lid < stride) partial[lid] += partial[lid + stride];\n"
    "  }\n"
    "  if (lid == 0) out[get_group_id(0)] = partial[0];\n"
    "}\n";

int main(int argc, char **argv) {
  struct sample_options opts;
  sample_parse(argc, argv, "[options]", NULL, &opts);
  size_t n = opts.size ? opts.size : (size_t)1 << 24;

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "Reduction", .rate_unit = "GB/s"};
  cl_program program = sample_build(&opts, &cl, kernel_source, "", &result.build_ms);
  cl_kernel kernel = sample_kernel(program, "reduce_sum");

  float *data = malloc(n * sizeof *data);
  sample_fill_random(data, n, 0.0f, 1.0f, 7);
  cl_mem din = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), data);
  cl_mem dpartial = sample_buffer(&cl, CL_MEM_READ_WRITE, GROUPS * sizeof(float), NULL);
  cl_mem dsum = sample_buffer(&cl, CL_MEM_WRITE_ONLY, sizeof(float), NULL);

  size_t local = GROUP_SIZE, global1 = GROUPS * GROUP_SIZE;
  cl_uint n32 = (cl_uint)n, groups = GROUPS;
  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    double t0 = sample_seconds();
    /* The arguments are captured at enqueue, so one kernel object serves both passes. */
    CHECK_CL(clSetKernelArg(kernel, 0, sizeof din, &din));
    CHECK_CL(clSetKernelArg(kernel, 1, sizeof n32, &n32));
    CHECK_CL(clSetKernelArg(kernel, 2, sizeof dpartial, &dpartial));
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, kernel, 1, NULL, &global1, &local, 0, NULL, NULL));
    CHECK_CL(clSetKernelArg(kernel, 0, sizeof dpartial, &dpartial));
    CHECK_CL(clSetKernelArg(kernel, 1, sizeof groups, &groups));
    CHECK_CL(clSetKernelArg(kernel, 2, sizeof dsum, &dsum));
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, kernel, 1, NULL, &local, &local, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  float sum;
  CHECK_CL(clEnqueueReadBuffer(cl.queue, dsum, CL_TRUE, 0, sizeof sum, &sum, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    /* Every term is positive, so the float sum's relative error stays near the rounding
     * of its longest serial chain (n / 65536 terms per work-item). */
    double ref = 0;
    for (size_t i = 0; i < n; i++)
      ref += data[i];
    result.verified = fabs(sum - ref) <= 1e-5 * ref + 1e-6;
    if (!result.verified) fprintf(stderr, "reduction: sum = %.9g, expected %.9g\n", sum, ref);
  }

  snprintf(result.size, sizeof result.size, "%zu floats", n);
  result.time_ms = t * 1e3;
  result.rate = n * sizeof(float) / t / 1e9;
  int status = sample_report(&opts, &cl, &result);

  clReleaseMemObject(din);
  clReleaseMemObject(dpartial);
  clReleaseMemObject(dsum);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(data);
  return status;
}
