/* MatrixTranspose: out = transpose(in) for a float matrix, through a tile in local memory.
 *
 * Usage: transpose [common options] [--height H]
 *   (--size: width, default 4096; --height: rows, default the width; any sizes)
 * Each 16x16 work-group reads a 16x16 tile along rows of the input, so its reads are
 * contiguous, and writes the transposed tile along rows of the output, so its writes are
 * contiguous too; the exchange goes through local memory. The tile is 16x17: on a GPU the
 * extra column puts a column's 16 words in 16 different banks. */
#include "../common/sample.h"

#include <stdio.h>
#include <stdlib.h>

#define TILE 16

static const char *kernel_source =
    "#define TILE 16\n"
    "__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))\n"
    "void transpose(__global float *out, __global const float *in, uint width,\n"
    "               uint height) {\n"
    "  __local float tile[TILE][TILE + 1];\n"
    "  uint lx = get_local_id(0), ly = get_local_id(1);\n"
    "  uint x0 = get_group_id(0) * TILE, y0 = get_group_id(1) * TILE;\n"
    "  if (x0 + lx < width && y0 + ly < height)\n"
    "    tile[ly][lx] = in[(y0 + ly) * width + x0 + lx];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  /* The output has height columns; this group writes its rows x0..x0+15. */\n"
    "  if (y0 + lx < height && x0 + ly < width)\n"
    "    out[(x0 + ly) * height + y0 + lx] = tile[lx][ly];\n"
    "}\n";

int main(int argc, char **argv) {
  struct sample_options opts;
  size_t height = 0;
  const struct sample_extra_option extra[] = {
      {"--height", SAMPLE_SIZE, &height, "rows of the input (default: --size)"}, {0}};
  sample_parse(argc, argv, "[options] [--height H]", extra, &opts);
  size_t width = opts.size ? opts.size : 4096;
  if (!height) height = width;

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "MatrixTranspose", .rate_unit = "GB/s"};
  cl_program program = sample_build(&opts, &cl, kernel_source, "", &result.build_ms);
  cl_kernel kernel = sample_kernel(program, "transpose");

  size_t n = width * height, bytes = n * sizeof(float);
  float *in = malloc(bytes), *out = malloc(bytes);
  sample_fill_random(in, n, -1.0f, 1.0f, 7);
  cl_mem din = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in);
  cl_mem dout = sample_buffer(&cl, CL_MEM_WRITE_ONLY, bytes, NULL);
  cl_uint w32 = (cl_uint)width, h32 = (cl_uint)height;
  CHECK_CL(clSetKernelArg(kernel, 0, sizeof dout, &dout));
  CHECK_CL(clSetKernelArg(kernel, 1, sizeof din, &din));
  CHECK_CL(clSetKernelArg(kernel, 2, sizeof w32, &w32));
  CHECK_CL(clSetKernelArg(kernel, 3, sizeof h32, &h32));

  size_t global[2] = {sample_round_up(width, TILE), sample_round_up(height, TILE)};
  size_t local[2] = {TILE, TILE};
  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, kernel, 2, NULL, global, local, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  CHECK_CL(clEnqueueReadBuffer(cl.queue, dout, CL_TRUE, 0, bytes, out, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    /* A transpose only moves values, so every one must arrive bit for bit. */
    size_t wrong = 0;
    for (size_t y = 0; y < height; y++)
      for (size_t x = 0; x < width; x++)
        if (out[x * height + y] != in[y * width + x] && wrong++ < 5)
          fprintf(stderr, "transpose: out[%zu][%zu] = %g, expected %g\n", x, y, out[x * height + y],
                  in[y * width + x]);
    result.verified = wrong == 0;
  }

  snprintf(result.size, sizeof result.size, "%zux%zu", width, height);
  result.time_ms = t * 1e3;
  result.rate = 2.0 * bytes / t / 1e9;
  int status = sample_report(&opts, &cl, &result);

  clReleaseMemObject(din);
  clReleaseMemObject(dout);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(in);
  free(out);
  return status;
}
