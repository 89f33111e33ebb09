/* Runtime microbenchmark: what the platform costs around the kernels.
 *   launch:   enqueue + clFinish of an empty kernel, median in microseconds
 *   stream:   back-to-back small kernels with one clFinish at the end, kernels/s
 *   write, read, copy, map: 256 MiB buffer transfers, median GB/s
 * Prints one JSON object. Uses the samples' common options (--platform, --device). */
#include "../samples/common/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kernel_source = "__kernel void empty(void) {}\n"
                                   "__kernel void small(__global float *x) {\n"
                                   "  x[get_global_id(0)] += 1.0f;\n"
                                   "}\n";

#define REPS 5

int main(int argc, char **argv) {
  struct sample_options opts;
  sample_parse(argc, argv, "[options]", NULL, &opts);
  size_t bytes = opts.size ? opts.size : (size_t)256 << 20;
  struct sample_cl cl;
  sample_init(&opts, &cl);
  cl_program program = sample_build(&opts, &cl, kernel_source, "", NULL);
  cl_kernel empty = sample_kernel(program, "empty"), small = sample_kernel(program, "small");

  size_t one = 1, small_size = 1024;
  double launch[200];
  /* The first launches pay for lazy set-up on some platforms; they are not the steady state. */
  for (int i = 0; i < 10; i++) {
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, empty, 1, NULL, &one, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
  }
  for (int i = 0; i < 200; i++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, empty, 1, NULL, &one, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    launch[i] = sample_seconds() - t0;
  }

  float zeros[1024] = {0}, x0 = 0;
  cl_mem x = sample_buffer(&cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                           small_size * sizeof(float), zeros);
  CHECK_CL(clSetKernelArg(small, 0, sizeof x, &x));
  double stream[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = sample_seconds();
    for (int i = 0; i < 1000; i++)
      CHECK_CL(clEnqueueNDRangeKernel(cl.queue, small, 1, NULL, &small_size, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    stream[r] = 1000 / (sample_seconds() - t0);
  }

  /* Every small kernel must really have run. */
  CHECK_CL(clEnqueueReadBuffer(cl.queue, x, CL_TRUE, 0, sizeof x0, &x0, 0, NULL, NULL));
  if (x0 != 1000 * REPS) {
    fprintf(stderr, "micro: x[0] = %g after %d kernels\n", x0, 1000 * REPS);
    return 1;
  }

  char *host = malloc(bytes);
  memset(host, 1, bytes);
  cl_mem a = sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem b = sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL);
  /* Touch both buffers once so that page faults of first use are not timed. */
  CHECK_CL(clEnqueueWriteBuffer(cl.queue, a, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
  CHECK_CL(clEnqueueWriteBuffer(cl.queue, b, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
  double rate[4][REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueWriteBuffer(cl.queue, a, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    double t1 = sample_seconds();
    CHECK_CL(clEnqueueReadBuffer(cl.queue, a, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    double t2 = sample_seconds();
    CHECK_CL(clEnqueueCopyBuffer(cl.queue, a, b, 0, 0, bytes, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    double t3 = sample_seconds();
    /* A map for reading and writing must show the current contents and publish the
     * changes at unmap: the cost a zero-copy platform can avoid. */
    cl_int err;
    char *p = clEnqueueMapBuffer(cl.queue, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                 NULL, NULL, &err);
    CHECK_CL(err);
    p[r] ^= 1;
    CHECK_CL(clEnqueueUnmapMemObject(cl.queue, b, p, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    double t4 = sample_seconds();
    rate[0][r] = bytes / (t1 - t0) / 1e9;
    rate[1][r] = bytes / (t2 - t1) / 1e9;
    rate[2][r] = bytes / (t3 - t2) / 1e9;
    rate[3][r] = bytes / (t4 - t3) / 1e9;
  }

  printf("{\"device\": \"%s\", \"launch_us\": %.2f, \"kernels_per_s\": %.0f, \"write_GBs\": %.2f, "
         "\"read_GBs\": %.2f, \"copy_GBs\": %.2f, \"map_GBs\": %.2f}\n",
         cl.device_name, sample_median(launch, 200) * 1e6, sample_median(stream, REPS),
         sample_median(rate[0], REPS), sample_median(rate[1], REPS), sample_median(rate[2], REPS),
         sample_median(rate[3], REPS));
  clReleaseMemObject(x);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(empty);
  clReleaseKernel(small);
  clReleaseProgram(program);
  sample_release(&cl);
  free(host);
  return 0;
}
