/* VectorAdd: c[i] = a[i] + b[i].
 *
 * Usage: vectoradd [common options] [--dims 1|2|3] [--local N]
 * The range may be 1-, 2- or 3-dimensional; the kernel flattens the global id, so the
 * same n elements are added in every shape. Exits non-zero when any element is wrong. */
#include "../common/sample.h"

#include <stdio.h>
#include <stdlib.h>

static const char *kernel_source =
    "__kernel void vector_add(__global const float *a, __global const float *b,\n"
    "                         __global float *c, uint n) {\n"
    "  size_t i = get_global_id(0) + get_global_size(0) *\n"
    "             (get_global_id(1) + get_global_size(1) * get_global_id(2));\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

int main(int argc, char **argv) {
  int dims = 1;
  size_t local = 0;
  const struct sample_extra_option extra[] = {
      {"--dims", SAMPLE_INT, &dims, "1, 2 or 3: shape of the NDRange (default 1)"},
      {"--local", SAMPLE_SIZE, &local, "work-group size in dimension 0 (default: the platform's)"},
      {0}};
  struct sample_options opts;
  sample_parse(argc, argv, "[options] [--dims 1|2|3] [--local N]", extra, &opts);
  size_t n = opts.size ? opts.size : (size_t)1 << 20;
  if (dims < 1 || dims > 3) {
    fprintf(stderr, "vectoradd: --dims must be 1, 2 or 3\n");
    return 2;
  }

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "VectorAdd", .rate_unit = "GB/s"};
  cl_program program = sample_build(&opts, &cl, kernel_source, "", &result.build_ms);
  cl_kernel kernel = sample_kernel(program, "vector_add");

  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (size_t i = 0; i < n; i++) {
    a[i] = (float)i * 0.5f;
    b[i] = (float)(n - i) * 0.25f;
  }
  size_t bytes = n * sizeof(float);
  cl_mem da = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a);
  cl_mem db = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b);
  cl_mem dc = sample_buffer(&cl, CL_MEM_WRITE_ONLY, bytes, NULL);
  cl_uint n32 = (cl_uint)n;
  CHECK_CL(clSetKernelArg(kernel, 0, sizeof da, &da));
  CHECK_CL(clSetKernelArg(kernel, 1, sizeof db, &db));
  CHECK_CL(clSetKernelArg(kernel, 2, sizeof dc, &dc));
  CHECK_CL(clSetKernelArg(kernel, 3, sizeof n32, &n32));

  /* The range covers at least n work-items; the kernel leaves the extra ones idle. */
  size_t global[3] = {n, 1, 1};
  if (dims == 2) {
    global[0] = 1024;
    global[1] = (n + 1023) / 1024;
  } else if (dims == 3) {
    global[0] = 64;
    global[1] = 64;
    global[2] = (n + 4095) / 4096;
  }
  size_t local_size[3] = {local, 1, 1};
  if (local) global[0] = sample_round_up(global[0], local);

  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, kernel, (cl_uint)dims, NULL, global,
                                    local ? local_size : NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  CHECK_CL(clEnqueueReadBuffer(cl.queue, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    /* Float addition is exact to round: every platform must give the same bits. */
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
      if (c[i] != a[i] + b[i] && wrong++ < 5)
        fprintf(stderr, "vectoradd: c[%zu] = %g, expected %g\n", i, c[i], a[i] + b[i]);
    result.verified = wrong == 0;
  }
  snprintf(result.size, sizeof result.size, "%zu floats %dD", n, dims);
  result.time_ms = t * 1e3;
  result.rate = 3.0 * bytes / t / 1e9;
  int status = sample_report(&opts, &cl, &result);

  free(times);
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  sample_release(&cl);
  free(a);
  free(b);
  free(c);
  return status;
}
