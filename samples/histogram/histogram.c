/* Histogram: 256-bin histogram of bytes.
 *
 * Usage: histogram [common options]   (--size: bytes, default 67108864)
 * Each work-group counts its part of the data in local memory with atomic_inc, then
 * writes its sub-histogram; a second kernel adds the sub-histograms bin by bin. Local
 * atomics keep the contended traffic inside the work-group. */
#include "../common/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BINS 256
#define GROUP_SIZE 256
#define BYTES_PER_ITEM 64

static const char *kernel_source =
    "#define BINS 256\n"
    "__kernel void histogram_local(__global const uchar *data, uint bytes_per_item,\n"
    "                              __global uint *sub_histograms) {\n"
    "  __local uint bins[BINS];\n"
    "  size_t lid = get_local_id(0), group_size = get_local_size(0);\n"
    "  for (size_t b = lid; b < BINS; b += group_size) bins[b] = 0;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  /* Consecutive work-items read consecutive bytes on every pass. */\n"
    "  size_t base = get_group_id(0) * group_size * bytes_per_item + lid;\n"
    "  for (uint k = 0; k < bytes_per_item; k++) atomic_inc(&bins[data[base + k * group_size]]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t b = lid; b < BINS; b += group_size)\n"
    "    sub_histograms[get_group_id(0) * BINS + b] = bins[b];\n"
    "}\n"
    "__kernel void histogram_merge(__global const uint *sub_histograms, uint groups,\n"
    "                              __global uint *histogram) {\n"
    "  size_t b = get_global_id(0);\n"
    "  uint sum = 0;\n"
    "  for (uint g = 0; g < groups; g++) sum += sub_histograms[g * BINS + b];\n"
    "  histogram[b] = sum;\n"
    "}\n";

int main(int argc, char **argv) {
  struct sample_options opts;
  sample_parse(argc, argv, "[options]", NULL, &opts);
  /* Whole work-groups only: the size is rounded up to a multiple of what one covers. */
  const size_t per_group = (size_t)GROUP_SIZE * BYTES_PER_ITEM;
  size_t n = sample_round_up(opts.size ? opts.size : (size_t)1 << 26, per_group);
  size_t groups = n / per_group;

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "Histogram", .rate_unit = "GB/s"};
  cl_program program = sample_build(&opts, &cl, kernel_source, "", &result.build_ms);
  cl_kernel count = sample_kernel(program, "histogram_local");
  cl_kernel merge = sample_kernel(program, "histogram_merge");

  /* Skewed data, so some bins are hot and the atomics really contend. */
  unsigned char *data = malloc(n);
  unsigned long long s = 42;
  for (size_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    unsigned r = (unsigned)(s >> 33);
    data[i] = (unsigned char)((r & 3) ? (r >> 8) % 32 : r >> 8);
  }
  cl_mem ddata = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n, data);
  cl_mem dsub = sample_buffer(&cl, CL_MEM_READ_WRITE, groups * BINS * sizeof(cl_uint), NULL);
  cl_mem dhist = sample_buffer(&cl, CL_MEM_WRITE_ONLY, BINS * sizeof(cl_uint), NULL);
  cl_uint bytes_per_item = BYTES_PER_ITEM, groups32 = (cl_uint)groups;
  CHECK_CL(clSetKernelArg(count, 0, sizeof ddata, &ddata));
  CHECK_CL(clSetKernelArg(count, 1, sizeof bytes_per_item, &bytes_per_item));
  CHECK_CL(clSetKernelArg(count, 2, sizeof dsub, &dsub));
  CHECK_CL(clSetKernelArg(merge, 0, sizeof dsub, &dsub));
  CHECK_CL(clSetKernelArg(merge, 1, sizeof groups32, &groups32));
  CHECK_CL(clSetKernelArg(merge, 2, sizeof dhist, &dhist));

  size_t global = groups * GROUP_SIZE, local = GROUP_SIZE, bins = BINS;
  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, count, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, merge, 1, NULL, &bins, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  cl_uint histogram[BINS];
  CHECK_CL(
      clEnqueueReadBuffer(cl.queue, dhist, CL_TRUE, 0, sizeof histogram, histogram, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    size_t ref[BINS] = {0}, wrong = 0;
    for (size_t i = 0; i < n; i++)
      ref[data[i]]++;
    for (int b = 0; b < BINS; b++)
      if (histogram[b] != ref[b] && wrong++ < 5)
        fprintf(stderr, "histogram: bin %d = %u, expected %zu\n", b, histogram[b], ref[b]);
    result.verified = wrong == 0;
  }

  snprintf(result.size, sizeof result.size, "%zu bytes", n);
  result.time_ms = t * 1e3;
  result.rate = n / t / 1e9;
  int status = sample_report(&opts, &cl, &result);

  clReleaseMemObject(ddata);
  clReleaseMemObject(dsub);
  clReleaseMemObject(dhist);
  clReleaseKernel(count);
  clReleaseKernel(merge);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(data);
  return status;
}
