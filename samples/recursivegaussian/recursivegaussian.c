/* RecursiveGaussian: Gaussian blur of an RGBA float image with Deriche's recursive filter,
 * whose cost per pixel does not depend on the blur radius.
 *
 * Usage: recursivegaussian [common options] [--sigma X]
 *        (--size: image width and height, default 2048)
 * One work-item filters one column, forward then backward. Rows are filtered the same way
 * after a transpose, which goes through local memory in 16x16 tiles so that both its reads
 * and its writes walk along rows. */
#include "../common/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TILE 16

static const char *kernel_source =
    "#define TILE 16\n"
    "__kernel void gaussian_columns(__global const float4 *in, __global float4 *out,\n"
    "                               int width, int height, float a0, float a1, float a2,\n"
    "                               float a3, float b1, float b2, float coefp, float coefn) {\n"
    "  int x = get_global_id(0);\n"
    "  if (x >= width) return;\n"
    "  /* Edges repeat the border pixel, hence the steady-state start values. */\n"
    "  float4 xp = in[x], yp = coefp * xp, yb = yp;\n"
    "  for (int y = 0; y < height; y++) {\n"
    "    float4 xc = in[y * width + x];\n"
    "    float4 yc = a0 * xc + a1 * xp - b1 * yp - b2 * yb;\n"
    "    out[y * width + x] = yc;\n"
    "    xp = xc;\n"
    "    yb = yp;\n"
    "    yp = yc;\n"
    "  }\n"
    "  float4 xn = in[(height - 1) * width + x], xa = xn, yn = coefn * xn, ya = yn;\n"
    "  for (int y = height - 1; y >= 0; y--) {\n"
    "    float4 xc = in[y * width + x];\n"
    "    float4 yc = a2 * xn + a3 * xa - b1 * yn - b2 * ya;\n"
    "    xa = xn;\n"
    "    xn = xc;\n"
    "    ya = yn;\n"
    "    yn = yc;\n"
    "    out[y * width + x] += yc;\n"
    "  }\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))\n"
    "void transpose(__global const float4 *in, __global float4 *out, int width, int height) {\n"
    "  __local float4 tile[TILE][TILE + 1];\n"
    "  int lx = get_local_id(0), ly = get_local_id(1);\n"
    "  int x = get_group_id(0) * TILE + lx, y = get_group_id(1) * TILE + ly;\n"
    "  if (x < width && y < height) tile[ly][lx] = in[y * width + x];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  x = get_group_id(1) * TILE + lx;\n"
    "  y = get_group_id(0) * TILE + ly;\n"
    "  if (x < height && y < width) out[y * height + x] = tile[lx][ly];\n"
    "}\n";

/* Deriche's coefficients for a zero-order (smoothing) filter of the given sigma. */
struct coefficients {
  float a0, a1, a2, a3, b1, b2, coefp, coefn;
};
static struct coefficients deriche(float sigma) {
  float alpha = 1.695f / sigma, ema = expf(-alpha), ema2 = expf(-2.0f * alpha);
  float k = (1.0f - ema) * (1.0f - ema) / (1.0f + 2.0f * alpha * ema - ema2);
  struct coefficients c = {.a0 = k,
                           .a1 = k * (alpha - 1.0f) * ema,
                           .a2 = k * (alpha + 1.0f) * ema,
                           .a3 = -k * ema2,
                           .b1 = -2.0f * ema,
                           .b2 = ema2};
  c.coefp = (c.a0 + c.a1) / (1.0f + c.b1 + c.b2);
  c.coefn = (c.a2 + c.a3) / (1.0f + c.b1 + c.b2);
  return c;
}

/* One line of the reference, in double: count values stride apart. */
static void reference_line(const double *in, double *out, int count, size_t stride,
                           const struct coefficients *c) {
  double xp = in[0], yp = c->coefp * xp, yb = yp;
  for (int i = 0; i < count; i++) {
    double xc = in[i * stride], yc = c->a0 * xc + c->a1 * xp - c->b1 * yp - c->b2 * yb;
    out[i * stride] = yc;
    xp = xc, yb = yp, yp = yc;
  }
  double xn = in[(count - 1) * stride], xa = xn, yn = c->coefn * xn, ya = yn;
  for (int i = count - 1; i >= 0; i--) {
    double xc = in[i * stride], yc = c->a2 * xn + c->a3 * xa - c->b1 * yn - c->b2 * ya;
    xa = xn, xn = xc, ya = yn, yn = yc;
    out[i * stride] += yc;
  }
}

int main(int argc, char **argv) {
  const char *sigma_text = "8";
  const struct sample_extra_option extra[] = {
      {"--sigma", SAMPLE_STRING, &sigma_text, "standard deviation in pixels (default 8)"}, {0}};
  struct sample_options opts;
  sample_parse(argc, argv, "[options] [--sigma X]", extra, &opts);
  int width = opts.size ? (int)opts.size : 2048, height = width;
  struct coefficients c = deriche(strtof(sigma_text, NULL));

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "RecursiveGaussian", .rate_unit = "Mpixel/s"};
  cl_program program = sample_build(&opts, &cl, kernel_source, "", &result.build_ms);
  cl_kernel columns = sample_kernel(program, "gaussian_columns");
  cl_kernel transpose = sample_kernel(program, "transpose");

  size_t pixels = (size_t)width * height, bytes = pixels * 4 * sizeof(float);
  float *image = malloc(bytes), *blurred = malloc(bytes);
  /* Noise over large blocks: both sharp edges and fine detail to smooth. */
  sample_fill_random(image, pixels * 4, 0.0f, 0.25f, 3);
  for (size_t i = 0; i < pixels; i++)
    if ((i % width / 100 + i / width / 100) % 2)
      for (int k = 0; k < 3; k++)
        image[4 * i + k] += 0.75f;
  cl_mem din = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, image);
  cl_mem dtmp = sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem dtransposed = sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem dout = sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL);
  float coef[8] = {c.a0, c.a1, c.a2, c.a3, c.b1, c.b2, c.coefp, c.coefn};
  for (cl_uint k = 0; k < 8; k++)
    CHECK_CL(clSetKernelArg(columns, 4 + k, sizeof(float), &coef[k]));

  size_t local[2] = {TILE, TILE};
  size_t tiles_wh[2] = {sample_round_up(width, TILE), sample_round_up(height, TILE)};
  size_t tiles_hw[2] = {tiles_wh[1], tiles_wh[0]};
  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    double t0 = sample_seconds();
    /* Columns of the image, then columns of its transpose (the rows), then back. */
    const cl_mem stage_in[2] = {din, dtransposed}, stage_out[2] = {dtmp, dout};
    const int stage_w[2] = {width, height}, stage_h[2] = {height, width};
    for (int s = 0; s < 2; s++) {
      size_t global = sample_round_up(stage_w[s], 64);
      CHECK_CL(clSetKernelArg(columns, 0, sizeof(cl_mem), &stage_in[s]));
      CHECK_CL(clSetKernelArg(columns, 1, sizeof(cl_mem), &stage_out[s]));
      CHECK_CL(clSetKernelArg(columns, 2, sizeof(int), &stage_w[s]));
      CHECK_CL(clSetKernelArg(columns, 3, sizeof(int), &stage_h[s]));
      CHECK_CL(clEnqueueNDRangeKernel(cl.queue, columns, 1, NULL, &global, NULL, 0, NULL, NULL));
      const cl_mem from = stage_out[s], to = s == 0 ? dtransposed : dtmp;
      CHECK_CL(clSetKernelArg(transpose, 0, sizeof(cl_mem), &from));
      CHECK_CL(clSetKernelArg(transpose, 1, sizeof(cl_mem), &to));
      CHECK_CL(clSetKernelArg(transpose, 2, sizeof(int), &stage_w[s]));
      CHECK_CL(clSetKernelArg(transpose, 3, sizeof(int), &stage_h[s]));
      CHECK_CL(clEnqueueNDRangeKernel(cl.queue, transpose, 2, NULL, s == 0 ? tiles_wh : tiles_hw,
                                      local, 0, NULL, NULL));
    }
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  CHECK_CL(clEnqueueReadBuffer(cl.queue, dtmp, CL_TRUE, 0, bytes, blurred, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    /* Values stay within [0, 1] and the recursion is stable, so float rounding stays
     * far below 1e-3 of full scale. */
    double *in = malloc(pixels * sizeof *in), *mid = malloc(pixels * sizeof *mid);
    double *ref = malloc(pixels * sizeof *ref);
    size_t wrong = 0;
    for (int ch = 0; ch < 4; ch++) {
      for (size_t i = 0; i < pixels; i++)
        in[i] = image[4 * i + ch];
      for (int x = 0; x < width; x++)
        reference_line(in + x, mid + x, height, width, &c);
      for (int y = 0; y < height; y++)
        reference_line(mid + (size_t)y * width, ref + (size_t)y * width, width, 1, &c);
      for (size_t i = 0; i < pixels; i++)
        if (fabs(blurred[4 * i + ch] - ref[i]) > 1e-3 && wrong++ < 5)
          fprintf(stderr, "recursivegaussian: pixel (%zu, %zu) channel %d = %g, expected %g\n",
                  i % width, i / width, ch, blurred[4 * i + ch], ref[i]);
    }
    result.verified = wrong == 0;
    free(in);
    free(mid);
    free(ref);
  }

  snprintf(result.size, sizeof result.size, "%dx%d RGBA float", width, height);
  result.time_ms = t * 1e3;
  result.rate = pixels / t / 1e6;
  int status = sample_report(&opts, &cl, &result);

  clReleaseMemObject(din);
  clReleaseMemObject(dtmp);
  clReleaseMemObject(dtransposed);
  clReleaseMemObject(dout);
  clReleaseKernel(columns);
  clReleaseKernel(transpose);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(image);
  free(blurred);
  return status;
}
