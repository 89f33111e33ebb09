/* Convolution2D: a float image convolved with a square filter (7x7 by default), edges
 * clamped.
 *
 * Usage: convolution [common options] [--height H] [--radius R]
 *   (--size: width, default 4096; --height: rows, default the width; --radius: the filter
 *    is (2R+1)x(2R+1), default 3)
 * The filter is a __constant argument. Each 16x16 work-group loads the 16x16 tile of the
 * image it computes plus a halo of R pixels on every side into local memory (each
 * work-item loads several pixels: the tile with its halo has more pixels than the group
 * has work-items), waits at a barrier, and then computes every output pixel from local
 * memory only. */
#include "../common/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TILE 16

static const char *kernel_source =
    "/* RADIUS comes from the build options. */\n"
    "#define TILE 16\n"
    "#define SPAN (TILE + 2 * RADIUS)\n"
    "#define TAPS (2 * RADIUS + 1)\n"
    "__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))\n"
    "void convolve(__global const float *in, __global float *out,\n"
    "              __constant float *filter, int width, int height) {\n"
    "  __local float tile[SPAN][SPAN];\n"
    "  int lx = get_local_id(0), ly = get_local_id(1);\n"
    "  int x0 = get_group_id(0) * TILE - RADIUS, y0 = get_group_id(1) * TILE - RADIUS;\n"
    "  for (int i = ly * TILE + lx; i < SPAN * SPAN; i += TILE * TILE) {\n"
    "    int tx = i % SPAN, ty = i / SPAN;\n"
    "    int x = clamp(x0 + tx, 0, width - 1), y = clamp(y0 + ty, 0, height - 1);\n"
    "    tile[ty][tx] = in[y * width + x];\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= width || y >= height) return;\n"
    "  float sum = 0.0f;\n"
    "  for (int fy = 0; fy < TAPS; fy++)\n"
    "    for (int fx = 0; fx < TAPS; fx++)\n"
    "      sum += filter[fy * TAPS + fx] * tile[ly + fy][lx + fx];\n"
    "  out[y * width + x] = sum;\n"
    "}\n";

static size_t clamp_index(long v, size_t n) {
  return v < 0 ? 0 : (size_t)v >= n ? n - 1 : (size_t)v;
}

int main(int argc, char **argv) {
  struct sample_options opts;
  size_t height = 0;
  int radius = 3;
  const struct sample_extra_option extra[] = {
      {"--height", SAMPLE_SIZE, &height, "rows of the image (default: --size)"},
      {"--radius", SAMPLE_INT, &radius, "filter radius R: (2R+1)x(2R+1) taps (default 3)"},
      {0}};
  sample_parse(argc, argv, "[options] [--height H] [--radius R]", extra, &opts);
  size_t width = opts.size ? opts.size : 4096;
  if (!height) height = width;
  if (radius < 0 || radius > 16) {
    fprintf(stderr, "convolution: --radius must be 0 to 16\n");
    return 2;
  }
  int taps = 2 * radius + 1;

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "Convolution2D", .rate_unit = "GFLOP/s"};
  char build_options[64];
  snprintf(build_options, sizeof build_options, "-DRADIUS=%d", radius);
  cl_program program = sample_build(&opts, &cl, kernel_source, build_options, &result.build_ms);
  cl_kernel kernel = sample_kernel(program, "convolve");

  size_t n = width * height, bytes = n * sizeof(float);
  size_t filter_bytes = (size_t)taps * taps * sizeof(float);
  float *in = malloc(bytes), *out = malloc(bytes), *filter = malloc(filter_bytes);
  sample_fill_random(in, n, 0.0f, 1.0f, 3);
  /* Unequal weights of both signs: a tap applied at the wrong offset changes the result. */
  sample_fill_random(filter, (size_t)taps * taps, -0.5f, 1.0f, 4);
  cl_mem din = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in);
  cl_mem dout = sample_buffer(&cl, CL_MEM_WRITE_ONLY, bytes, NULL);
  cl_mem dfilter =
      sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, filter_bytes, filter);
  cl_int w32 = (cl_int)width, h32 = (cl_int)height;
  CHECK_CL(clSetKernelArg(kernel, 0, sizeof din, &din));
  CHECK_CL(clSetKernelArg(kernel, 1, sizeof dout, &dout));
  CHECK_CL(clSetKernelArg(kernel, 2, sizeof dfilter, &dfilter));
  CHECK_CL(clSetKernelArg(kernel, 3, sizeof w32, &w32));
  CHECK_CL(clSetKernelArg(kernel, 4, sizeof h32, &h32));

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
    /* The tolerance scales with sum |w * p|, the size of what float rounding of the
     * products and their sum can reach. */
    size_t wrong = 0;
    for (size_t y = 0; y < height; y++)
      for (size_t x = 0; x < width; x++) {
        double sum = 0, magnitude = 0;
        for (int fy = 0; fy < taps; fy++) {
          const float *row = in + clamp_index((long)y + fy - radius, height) * width;
          for (int fx = 0; fx < taps; fx++) {
            double p =
                (double)filter[fy * taps + fx] * row[clamp_index((long)x + fx - radius, width)];
            sum += p;
            magnitude += fabs(p);
          }
        }
        if (!(fabs(out[y * width + x] - sum) <= 1e-5 * magnitude + 1e-6) && wrong++ < 5)
          fprintf(stderr, "convolution: out[%zu][%zu] = %g, expected %g\n", y, x,
                  out[y * width + x], sum);
      }
    result.verified = wrong == 0;
  }

  snprintf(result.size, sizeof result.size, "%zux%zu %dx%d filter", width, height, taps, taps);
  result.time_ms = t * 1e3;
  result.rate = 2.0 * taps * taps * n / t / 1e9;
  int status = sample_report(&opts, &cl, &result);

  clReleaseMemObject(din);
  clReleaseMemObject(dout);
  clReleaseMemObject(dfilter);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(in);
  free(out);
  free(filter);
  return status;
}
