/* PrefixSum: exclusive scan of n unsigned integers (unsigned, so the result is exact).
 *
 * Usage: prefixsum [common options]   (--size: number of elements, default 4194304)
 * A work-group of 256 scans a block of 512 elements in local memory (up-sweep and
 * down-sweep) and writes the block's total. The totals are scanned the same way, level
 * by level, until one block holds them all; then each level's scanned totals are added
 * back to the blocks below. */
#include "../common/sample.h"

#include <stdio.h>
#include <stdlib.h>

#define GROUP_SIZE 256
#define BLOCK (2 * GROUP_SIZE)
#define MAX_LEVELS 8

static const char *kernel_source =
    "#define GROUP_SIZE 256\n"
    "#define BLOCK (2 * GROUP_SIZE)\n"
    "__kernel __attribute__((reqd_work_group_size(GROUP_SIZE, 1, 1)))\n"
    "void scan_blocks(__global uint *data, uint n, __global uint *block_sums) {\n"
    "  __local uint s[BLOCK];\n"
    "  size_t lid = get_local_id(0), base = get_group_id(0) * BLOCK;\n"
    "  size_t i0 = base + lid, i1 = base + lid + GROUP_SIZE;\n"
    "  s[lid] = i0 < n ? data[i0] : 0;\n"
    "  s[lid + GROUP_SIZE] = i1 < n ? data[i1] : 0;\n"
    "  uint offset = 1;\n"
    "  for (uint d = GROUP_SIZE; d > 0; d >>= 1, offset <<= 1) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (lid < d) s[offset * (2 * lid + 2) - 1] += s[offset * (2 * lid + 1) - 1];\n"
    "  }\n"
    "  if (lid == 0) {\n"
    "    block_sums[get_group_id(0)] = s[BLOCK - 1];\n"
    "    s[BLOCK - 1] = 0;\n"
    "  }\n"
    "  for (uint d = 1; d <= GROUP_SIZE; d <<= 1) {\n"
    "    offset >>= 1;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (lid < d) {\n"
    "      uint left = offset * (2 * lid + 1) - 1, right = offset * (2 * lid + 2) - 1;\n"
    "      uint t = s[left];\n"
    "      s[left] = s[right];\n"
    "      s[right] += t;\n"
    "    }\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (i0 < n) data[i0] = s[lid];\n"
    "  if (i1 < n) data[i1] = s[lid + GROUP_SIZE];\n"
    "}\n"
    "__kernel void add_block_offsets(__global uint *data, uint n,\n"
    "                                __global const uint *scanned_sums) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) data[i] += scanned_sums[i / BLOCK];\n"
    "}\n";

int main(int argc, char **argv) {
  struct sample_options opts;
  sample_parse(argc, argv, "[options]", NULL, &opts);
  size_t n = opts.size ? opts.size : (size_t)1 << 22;

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "PrefixSum", .rate_unit = "Melements/s"};
  cl_program program = sample_build(&opts, &cl, kernel_source, "", &result.build_ms);
  cl_kernel scan = sample_kernel(program, "scan_blocks");
  cl_kernel add = sample_kernel(program, "add_block_offsets");

  cl_uint *data = malloc(n * sizeof *data), *out = malloc(n * sizeof *out);
  for (size_t i = 0; i < n; i++)
    data[i] = (cl_uint)((i * 2654435761u) >> 28);

  /* level[0] is the data; level[k+1] holds the block totals of level[k]. */
  cl_mem level[MAX_LEVELS + 1];
  size_t count[MAX_LEVELS + 1];
  int levels = 0;
  count[0] = n;
  level[0] = sample_buffer(&cl, CL_MEM_READ_WRITE, n * sizeof(cl_uint), NULL);
  while (count[levels] > 1 && levels < MAX_LEVELS) {
    count[levels + 1] = (count[levels] + BLOCK - 1) / BLOCK;
    level[levels + 1] =
        sample_buffer(&cl, CL_MEM_READ_WRITE, count[levels + 1] * sizeof(cl_uint), NULL);
    levels++;
  }
  if (count[levels] > 1) {
    fprintf(stderr, "prefixsum: --size too large\n");
    return 2;
  }

  double *times = malloc(opts.iterations * sizeof *times);
  size_t local = GROUP_SIZE;
  for (int it = 0; it < opts.iterations; it++) {
    /* The scan works in place, so every iteration starts from a fresh copy. */
    CHECK_CL(clEnqueueWriteBuffer(cl.queue, level[0], CL_TRUE, 0, n * sizeof(cl_uint), data, 0,
                                  NULL, NULL));
    double t0 = sample_seconds();
    for (int k = 0; k < levels; k++) {
      cl_uint n32 = (cl_uint)count[k];
      size_t global = count[k + 1] * GROUP_SIZE;
      CHECK_CL(clSetKernelArg(scan, 0, sizeof(cl_mem), &level[k]));
      CHECK_CL(clSetKernelArg(scan, 1, sizeof n32, &n32));
      CHECK_CL(clSetKernelArg(scan, 2, sizeof(cl_mem), &level[k + 1]));
      CHECK_CL(clEnqueueNDRangeKernel(cl.queue, scan, 1, NULL, &global, &local, 0, NULL, NULL));
    }
    for (int k = levels - 2; k >= 0; k--) {
      cl_uint n32 = (cl_uint)count[k];
      size_t global = sample_round_up(count[k], GROUP_SIZE);
      CHECK_CL(clSetKernelArg(add, 0, sizeof(cl_mem), &level[k]));
      CHECK_CL(clSetKernelArg(add, 1, sizeof n32, &n32));
      CHECK_CL(clSetKernelArg(add, 2, sizeof(cl_mem), &level[k + 1]));
      CHECK_CL(clEnqueueNDRangeKernel(cl.queue, add, 1, NULL, &global, &local, 0, NULL, NULL));
    }
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  CHECK_CL(
      clEnqueueReadBuffer(cl.queue, level[0], CL_TRUE, 0, n * sizeof(cl_uint), out, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    size_t wrong = 0;
    cl_uint sum = 0;
    for (size_t i = 0; i < n; sum += data[i++])
      if (out[i] != sum && wrong++ < 5)
        fprintf(stderr, "prefixsum: out[%zu] = %u, expected %u\n", i, out[i], sum);
    result.verified = wrong == 0;
  }

  snprintf(result.size, sizeof result.size, "%zu uints", n);
  result.time_ms = t * 1e3;
  result.rate = n / t / 1e6;
  int status = sample_report(&opts, &cl, &result);

  for (int k = 0; k <= levels; k++)
    clReleaseMemObject(level[k]);
  clReleaseKernel(scan);
  clReleaseKernel(add);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(data);
  free(out);
  return status;
}
