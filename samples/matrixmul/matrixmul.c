/* MatrixMultiplication: C = A * B for square float matrices, tiled in local memory.
 *
 * Usage: matrixmul [common options] [--no-reqd]   (--size: matrix order, a multiple of 16;
 * default 1024). --no-reqd builds the kernel without its reqd_work_group_size (the
 * textbook tiled SGEMM as most programs write it, launched with the same 16x16 groups).
 * Each 16x16 work-group computes a 16x16 block of C, walking along K one tile at a time:
 * the group loads a tile of A and of B into local memory once and every work-item then
 * reads 16 values of each from there instead of from global memory. */
#include "../common/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TILE 16

static const char *kernel_source =
    "#define TILE 16\n"
    "#ifdef NO_REQD\n"
    "__kernel\n"
    "#else\n"
    "__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))\n"
    "#endif\n"
    "void matrix_multiply(__global const float *a, __global const float *b,\n"
    "                     __global float *c, uint n) {\n"
    "  __local float ta[TILE][TILE], tb[TILE][TILE];\n"
    "  size_t col = get_global_id(0), row = get_global_id(1);\n"
    "  size_t lx = get_local_id(0), ly = get_local_id(1);\n"
    "  float sum = 0.0f;\n"
    "  for (uint k0 = 0; k0 < n; k0 += TILE) {\n"
    "    ta[ly][lx] = a[row * n + k0 + lx];\n"
    "    tb[ly][lx] = b[(k0 + ly) * n + col];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint k = 0; k < TILE; k++) sum += ta[ly][k] * tb[k][lx];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  c[row * n + col] = sum;\n"
    "}\n";

int main(int argc, char **argv) {
  int no_reqd = 0;
  const struct sample_extra_option extra[] = {
      {"--no-reqd", SAMPLE_FLAG, &no_reqd, "build the kernel without reqd_work_group_size"},
      {0}};
  struct sample_options opts;
  sample_parse(argc, argv, "[options] [--no-reqd]", extra, &opts);
  size_t n = opts.size ? opts.size : 1024;
  if (n % TILE) {
    fprintf(stderr, "matrixmul: --size must be a multiple of %d\n", TILE);
    return 2;
  }

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "MatrixMultiplication", .rate_unit = "GFLOP/s"};
  cl_program program =
      sample_build(&opts, &cl, kernel_source, no_reqd ? "-DNO_REQD" : "", &result.build_ms);
  cl_kernel kernel = sample_kernel(program, "matrix_multiply");

  size_t bytes = n * n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  sample_fill_random(a, n * n, -1.0f, 1.0f, 1);
  sample_fill_random(b, n * n, -1.0f, 1.0f, 2);
  cl_mem da = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a);
  cl_mem db = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b);
  cl_mem dc = sample_buffer(&cl, CL_MEM_WRITE_ONLY, bytes, NULL);
  cl_uint n32 = (cl_uint)n;
  CHECK_CL(clSetKernelArg(kernel, 0, sizeof da, &da));
  CHECK_CL(clSetKernelArg(kernel, 1, sizeof db, &db));
  CHECK_CL(clSetKernelArg(kernel, 2, sizeof dc, &dc));
  CHECK_CL(clSetKernelArg(kernel, 3, sizeof n32, &n32));

  size_t global[2] = {n, n}, local[2] = {TILE, TILE};
  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, kernel, 2, NULL, global, local, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  CHECK_CL(clEnqueueReadBuffer(cl.queue, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    /* The full O(n^3) reference would take longer than the device; 64 rows spread over
     * the matrix cover every tile column and many tile rows. The tolerance scales with
     * sum |a_ik * b_kj|, the size of the rounding a float dot product may accumulate. */
    size_t row_step = n > 64 ? n / 64 : 1, wrong = 0;
    for (size_t i = 0; i < n; i += row_step)
      for (size_t j = 0; j < n; j++) {
        double sum = 0, magnitude = 0;
        for (size_t k = 0; k < n; k++) {
          double p = (double)a[i * n + k] * b[k * n + j];
          sum += p;
          magnitude += fabs(p);
        }
        if (fabs(c[i * n + j] - sum) > 1e-5 * magnitude + 1e-6 && wrong++ < 5)
          fprintf(stderr, "matrixmul: c[%zu][%zu] = %g, expected %g\n", i, j, c[i * n + j], sum);
      }
    result.verified = wrong == 0;
  }

  snprintf(result.size, sizeof result.size, "%zux%zu", n, n);
  result.time_ms = t * 1e3;
  result.rate = 2.0 * n * n * n / t / 1e9;
  int status = sample_report(&opts, &cl, &result);

  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(a);
  free(b);
  free(c);
  return status;
}
