/* SobelFilter: edge detection on an RGBA image, one work-item per pixel, held either in
 * a buffer or (--image) in an OpenCL image object read with a sampler.
 *
 * Usage: sobelfilter [common options] [--image] [--input FILE] [--output FILE]
 * --input reads a binary PPM (P6) or PGM (P5) file; without it a synthetic image of
 * --size x --size pixels (default 4096) is generated. --output writes the edges as PPM.
 * Border pixels use the nearest pixel inside the image for their missing neighbours. */
#include "../common/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kernel_source =
    "__kernel void sobel(__global const uchar4 *in, __global uchar4 *out, int width,\n"
    "                    int height) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= width || y >= height) return;\n"
    "  int xl = max(x - 1, 0), xr = min(x + 1, width - 1);\n"
    "  int ya = max(y - 1, 0) * width, yc = y * width, yb = min(y + 1, height - 1) * width;\n"
    "  float4 p00 = convert_float4(in[ya + xl]), p01 = convert_float4(in[ya + x]);\n"
    "  float4 p02 = convert_float4(in[ya + xr]), p10 = convert_float4(in[yc + xl]);\n"
    "  float4 p12 = convert_float4(in[yc + xr]), p20 = convert_float4(in[yb + xl]);\n"
    "  float4 p21 = convert_float4(in[yb + x]), p22 = convert_float4(in[yb + xr]);\n"
    "  float4 gx = (p02 - p00) + 2.0f * (p12 - p10) + (p22 - p20);\n"
    "  float4 gy = (p20 - p00) + 2.0f * (p21 - p01) + (p22 - p02);\n"
    "  /* Halved so that most edges stay below saturation. */\n"
    "  float4 g = sqrt(gx * gx + gy * gy) * 0.5f;\n"
    "  uchar4 result = convert_uchar4_sat(g);\n"
    "  result.w = 255;\n"
    "  out[yc + x] = result;\n"
    "}\n";

/* The same filter on image objects: the sampler's clamp-to-edge addressing gives
 * border pixels their nearest neighbours inside the image, as the buffer version
 * does by hand. */
static const char *image_kernel_source =
    "__constant sampler_t nearest_edge =\n"
    "    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n"
    "float4 at(read_only image2d_t in, int x, int y) {\n"
    "  return convert_float4(read_imageui(in, nearest_edge, (int2)(x, y)));\n"
    "}\n"
    "__kernel void sobel_image(read_only image2d_t in, write_only image2d_t out) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= get_image_width(in) || y >= get_image_height(in)) return;\n"
    "  float4 p00 = at(in, x - 1, y - 1), p01 = at(in, x, y - 1), p02 = at(in, x + 1, y - 1);\n"
    "  float4 p10 = at(in, x - 1, y), p12 = at(in, x + 1, y);\n"
    "  float4 p20 = at(in, x - 1, y + 1), p21 = at(in, x, y + 1), p22 = at(in, x + 1, y + 1);\n"
    "  float4 gx = (p02 - p00) + 2.0f * (p12 - p10) + (p22 - p20);\n"
    "  float4 gy = (p20 - p00) + 2.0f * (p21 - p01) + (p22 - p02);\n"
    "  uint4 result = convert_uint4_sat(sqrt(gx * gx + gy * gy) * 0.5f);\n"
    "  result.w = 255;\n"
    "  write_imageui(out, (int2)(x, y), min(result, (uint4)(255)));\n"
    "}\n";

/* Reads a binary PPM/PGM into RGBA; returns NULL on a format it does not handle. */
static unsigned char *read_pnm(const char *path, int *width, int *height) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char magic[3] = "";
  int maxval = 0;
  unsigned char *rgba = NULL;
  if (fscanf(f, "%2s", magic) == 1 && (!strcmp(magic, "P6") || !strcmp(magic, "P5"))) {
    int values[3], got = 0;
    /* Header fields may be separated by comments. */
    while (got < 3) {
      int c = fgetc(f);
      if (c == '#') {
        while (c != '\n' && c != EOF)
          c = fgetc(f);
      } else if (c == EOF) {
        break;
      } else if (c >= '0' && c <= '9') {
        ungetc(c, f);
        if (fscanf(f, "%d", &values[got++]) != 1) break;
      }
    }
    *width = values[0], *height = values[1], maxval = values[2];
    if (got == 3 && maxval > 0 && maxval < 256 && *width > 0 && *height > 0) {
      fgetc(f); /* the single whitespace before the raster */
      int channels = magic[1] == '6' ? 3 : 1;
      size_t pixels = (size_t)*width * *height;
      unsigned char *raw = malloc(pixels * channels);
      if (fread(raw, channels, pixels, f) == pixels) {
        rgba = malloc(pixels * 4);
        for (size_t i = 0; i < pixels; i++) {
          for (int c = 0; c < 3; c++)
            rgba[4 * i + c] = raw[i * channels + (channels == 3 ? c : 0)];
          rgba[4 * i + 3] = 255;
        }
      }
      free(raw);
    }
  }
  fclose(f);
  return rgba;
}

static int write_ppm(const char *path, const unsigned char *rgba, int width, int height) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  fprintf(f, "P6\n%d %d\n255\n", width, height);
  for (size_t i = 0; i < (size_t)width * height; i++)
    fwrite(rgba + 4 * i, 1, 3, f);
  return fclose(f);
}

/* Rings, a diagonal ramp and noise: edges in every direction, in every channel. */
static void synthesize(unsigned char *rgba, int width, int height) {
  unsigned s = 12345;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      unsigned char *p = rgba + 4 * ((size_t)y * width + x);
      float dx = x - width * 0.5f, dy = y - height * 0.5f;
      s = s * 1103515245u + 12345u;
      p[0] = (unsigned char)(((int)sqrtf(dx * dx + dy * dy) / 16 % 2) * 200 + (s >> 28));
      p[1] = (unsigned char)((x + y) * 255 / (width + height));
      p[2] = (unsigned char)((x / 64 + y / 64) % 2 ? 220 : 30);
      p[3] = 255;
    }
}

static void sobel_reference(const unsigned char *in, unsigned char *out, int width, int height) {
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      int xs[3] = {x > 0 ? x - 1 : 0, x, x < width - 1 ? x + 1 : x};
      int ys[3] = {y > 0 ? y - 1 : 0, y, y < height - 1 ? y + 1 : y};
      for (int c = 0; c < 4; c++) {
        float p[3][3];
        for (int j = 0; j < 3; j++)
          for (int i = 0; i < 3; i++)
            p[j][i] = in[4 * ((size_t)ys[j] * width + xs[i]) + c];
        float gx = (p[0][2] - p[0][0]) + 2 * (p[1][2] - p[1][0]) + (p[2][2] - p[2][0]);
        float gy = (p[2][0] - p[0][0]) + 2 * (p[2][1] - p[0][1]) + (p[2][2] - p[0][2]);
        float g = sqrtf(gx * gx + gy * gy) * 0.5f;
        out[4 * ((size_t)y * width + x) + c] = c == 3 ? 255 : g >= 255 ? 255 : (unsigned char)g;
      }
    }
}

int main(int argc, char **argv) {
  const char *input = NULL, *output = NULL;
  int use_images = 0;
  const struct sample_extra_option extra[] = {
      {"--input", SAMPLE_STRING, &input, "binary PPM (P6) or PGM (P5) image to filter"},
      {"--output", SAMPLE_STRING, &output, "write the edge image as PPM"},
      {"--image", SAMPLE_FLAG, &use_images, "use image objects and a sampler, not buffers"},
      {0}};
  struct sample_options opts;
  sample_parse(argc, argv, "[options] [--image] [--input FILE] [--output FILE]", extra, &opts);

  int width, height;
  unsigned char *image;
  if (input) {
    image = read_pnm(input, &width, &height);
    if (!image) {
      fprintf(stderr, "sobelfilter: %s is not a readable binary PPM/PGM file\n", input);
      return 1;
    }
  } else {
    width = height = opts.size ? (int)opts.size : 4096;
    image = malloc((size_t)width * height * 4);
    synthesize(image, width, height);
  }
  size_t bytes = (size_t)width * height * 4;

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = use_images ? "SobelFilter (image)" : "SobelFilter",
                                 .rate_unit = "Mpixel/s"};
  cl_bool image_support = CL_FALSE;
  CHECK_CL(clGetDeviceInfo(cl.device, CL_DEVICE_IMAGE_SUPPORT, sizeof image_support, &image_support,
                           NULL));
  if (use_images && !image_support) {
    printf("SobelFilter (image): skipped, the device has no image support\n");
    sample_release(&cl);
    free(image);
    return 0;
  }
  cl_program program = sample_build(&opts, &cl, use_images ? image_kernel_source : kernel_source,
                                    "", &result.build_ms);
  cl_kernel kernel = sample_kernel(program, use_images ? "sobel_image" : "sobel");
  cl_mem din, dout;
  if (use_images) {
    const cl_image_format rgba8 = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {0};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = (size_t)width;
    desc.image_height = (size_t)height;
    cl_int err;
    din = clCreateImage(cl.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rgba8, &desc, image,
                        &err);
    CHECK_CL(err);
    dout = clCreateImage(cl.context, CL_MEM_WRITE_ONLY, &rgba8, &desc, NULL, &err);
    CHECK_CL(err);
  } else {
    din = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, image);
    dout = sample_buffer(&cl, CL_MEM_WRITE_ONLY, bytes, NULL);
  }
  CHECK_CL(clSetKernelArg(kernel, 0, sizeof din, &din));
  CHECK_CL(clSetKernelArg(kernel, 1, sizeof dout, &dout));
  if (!use_images) {
    CHECK_CL(clSetKernelArg(kernel, 2, sizeof width, &width));
    CHECK_CL(clSetKernelArg(kernel, 3, sizeof height, &height));
  }

  /* 16x16 groups; the range is padded to whole groups and the kernel skips the padding. */
  size_t local[2] = {16, 16};
  size_t global[2] = {sample_round_up(width, 16), sample_round_up(height, 16)};
  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, kernel, 2, NULL, global, local, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  unsigned char *edges = malloc(bytes);
  if (use_images) {
    size_t origin[3] = {0, 0, 0}, region[3] = {(size_t)width, (size_t)height, 1};
    CHECK_CL(
        clEnqueueReadImage(cl.queue, dout, CL_TRUE, origin, region, 0, 0, edges, 0, NULL, NULL));
  } else {
    CHECK_CL(clEnqueueReadBuffer(cl.queue, dout, CL_TRUE, 0, bytes, edges, 0, NULL, NULL));
  }

  result.verified = -1;
  if (opts.verify) {
    /* sqrt may differ by an ulp between platforms, which can move a value across an
     * integer: allow a difference of one. */
    unsigned char *ref = malloc(bytes);
    sobel_reference(image, ref, width, height);
    size_t wrong = 0;
    for (size_t i = 0; i < bytes; i++)
      if (abs(edges[i] - ref[i]) > 1 && wrong++ < 5)
        fprintf(stderr, "sobelfilter: pixel (%zu, %zu) channel %zu = %d, expected %d\n",
                i / 4 % width, i / 4 / width, i % 4, edges[i], ref[i]);
    result.verified = wrong == 0;
    free(ref);
  }
  if (output && write_ppm(output, edges, width, height)) {
    fprintf(stderr, "sobelfilter: cannot write %s\n", output);
    return 1;
  }

  snprintf(result.size, sizeof result.size, "%dx%d RGBA", width, height);
  result.time_ms = t * 1e3;
  result.rate = (double)width * height / t / 1e6;
  int status = sample_report(&opts, &cl, &result);

  clReleaseMemObject(din);
  clReleaseMemObject(dout);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(image);
  free(edges);
  return status;
}
