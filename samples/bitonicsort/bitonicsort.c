/* BitonicSort: sorts unsigned int keys ascending with a bitonic sorting network.
 *
 * Usage: bitonicsort [common options] [--poll]   (--size: number of keys, default 4194304;
 * any size; --poll: each launch awaited by polling its event, see launch())
 * The network over N = 2^m keys runs, for each size 2, 4, ..., N, the strides size/2 ... 1;
 * at every (size, stride) stage each pair (i, i + stride) with bit `stride` of i clear is
 * put in order, ascending where bit `size` of i is clear and descending where it is set.
 * As in the vendor SDK samples, a work-group of 256 first sorts each block of 512 keys in
 * local memory (every stage up to size 512, 45 barriers). Each larger size then needs one
 * kernel launch per stride of 512 or more, over global memory, and a last launch that
 * finishes the strides below 512 in local memory. Keys beyond --size are padded with
 * UINT_MAX up to a power of two, so they end up at the end and the first --size keys are
 * the sorted input. */
#include "../common/sample.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_SIZE 256
#define BLOCK (2 * GROUP_SIZE)

static const char *kernel_source =
    "#define GROUP_SIZE 256\n"
    "#define BLOCK (2 * GROUP_SIZE)\n"
    "/* Orders the pair (s[a], s[b]) ascending, or descending when up is 0. */\n"
    "#define ORDER(s, a, b, up)                  \\\n"
    "  do {                                      \\\n"
    "    uint ka = s[a], kb = s[b];              \\\n"
    "    if ((ka > kb) == (up)) {                \\\n"
    "      s[a] = kb;                            \\\n"
    "      s[b] = ka;                            \\\n"
    "    }                                       \\\n"
    "  } while (0)\n"
    "\n"
    "/* Every stage with size <= BLOCK, for one block of BLOCK keys per group. */\n"
    "__kernel __attribute__((reqd_work_group_size(GROUP_SIZE, 1, 1)))\n"
    "void sort_block(__global uint *keys) {\n"
    "  __local uint s[BLOCK];\n"
    "  uint lid = get_local_id(0), base = get_group_id(0) * BLOCK;\n"
    "  s[lid] = keys[base + lid];\n"
    "  s[lid + GROUP_SIZE] = keys[base + lid + GROUP_SIZE];\n"
    "  for (uint size = 2; size <= BLOCK; size <<= 1) {\n"
    "    for (uint stride = size / 2; stride > 0; stride >>= 1) {\n"
    "      barrier(CLK_LOCAL_MEM_FENCE);\n"
    "      uint pos = 2 * lid - (lid & (stride - 1));\n"
    "      ORDER(s, pos, pos + stride, ((base + pos) & size) == 0);\n"
    "    }\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  keys[base + lid] = s[lid];\n"
    "  keys[base + lid + GROUP_SIZE] = s[lid + GROUP_SIZE];\n"
    "}\n"
    "\n"
    "/* One stage (size, stride) with stride >= BLOCK: one comparison per work-item. */\n"
    "__kernel void merge_global(__global uint *keys, uint size, uint stride) {\n"
    "  uint i = get_global_id(0);\n"
    "  uint pos = 2 * i - (i & (stride - 1));\n"
    "  ORDER(keys, pos, pos + stride, (pos & size) == 0);\n"
    "}\n"
    "\n"
    "/* The stages of one size with strides BLOCK/2 ... 1, which stay inside a block. */\n"
    "__kernel __attribute__((reqd_work_group_size(GROUP_SIZE, 1, 1)))\n"
    "void merge_block(__global uint *keys, uint size) {\n"
    "  __local uint s[BLOCK];\n"
    "  uint lid = get_local_id(0), base = get_group_id(0) * BLOCK;\n"
    "  /* size > BLOCK, so the direction is the same for the whole block. */\n"
    "  uint up = (base & size) == 0;\n"
    "  s[lid] = keys[base + lid];\n"
    "  s[lid + GROUP_SIZE] = keys[base + lid + GROUP_SIZE];\n"
    "  for (uint stride = BLOCK / 2; stride > 0; stride >>= 1) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    uint pos = 2 * lid - (lid & (stride - 1));\n"
    "    ORDER(s, pos, pos + stride, up);\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  keys[base + lid] = s[lid];\n"
    "  keys[base + lid + GROUP_SIZE] = s[lid + GROUP_SIZE];\n"
    "}\n";

static int compare_uint(const void *a, const void *b) {
  cl_uint x = *(const cl_uint *)a, y = *(const cl_uint *)b;
  return (x > y) - (x < y);
}

/* With --poll, each launch is awaited as many vendor SDK samples and older applications
 * do: flushed, then its event's execution status read until it is CL_COMPLETE, before
 * the next is enqueued (no more than 10 s each). */
static void launch(cl_command_queue queue, cl_kernel kernel, const size_t *global,
                   const size_t *local, int poll) {
  cl_event event = NULL;
  CHECK_CL(
      clEnqueueNDRangeKernel(queue, kernel, 1, NULL, global, local, 0, NULL, poll ? &event : NULL));
  if (!poll) return;
  CHECK_CL(clFlush(queue));
  double deadline = sample_seconds() + 10;
  cl_int status;
  do {
    CHECK_CL(
        clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
  } while (status > CL_COMPLETE && sample_seconds() < deadline);
  CHECK_CL(clReleaseEvent(event));
  if (status != CL_COMPLETE) {
    fprintf(stderr, "bitonicsort: a launch %s\n",
            status < 0 ? "failed" : "was not complete after 10 s of polling");
    exit(1);
  }
}

int main(int argc, char **argv) {
  struct sample_options opts;
  int poll = 0;
  const struct sample_extra_option extra[] = {
      {"--poll", SAMPLE_FLAG, &poll,
       "await each launch by polling its event's status, as SDK samples do"},
      {0}};
  sample_parse(argc, argv, "[options] [--poll]", extra, &opts);
  size_t n = opts.size ? opts.size : (size_t)1 << 22;
  size_t padded = BLOCK;
  while (padded < n)
    padded *= 2;
  if (padded > (size_t)1 << 31) {
    fprintf(stderr, "bitonicsort: --size too large (at most 2^31 keys)\n");
    return 2;
  }

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "BitonicSort", .rate_unit = "Mkeys/s"};
  cl_program program = sample_build(&opts, &cl, kernel_source, "", &result.build_ms);
  cl_kernel sort_block = sample_kernel(program, "sort_block");
  cl_kernel merge_global = sample_kernel(program, "merge_global");
  cl_kernel merge_block = sample_kernel(program, "merge_block");

  cl_uint *keys = malloc(padded * sizeof *keys), *out = malloc(padded * sizeof *out);
  /* Full 32-bit keys, with repeats (the top bits of an LCG), so equal keys and keys near
   * UINT_MAX both occur. */
  unsigned long long s = 12345;
  for (size_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    keys[i] = (cl_uint)(s >> 32);
    if (i % 7 == 3) keys[i] = keys[i / 2];
  }
  for (size_t i = n; i < padded; i++)
    keys[i] = UINT32_MAX;
  cl_mem dkeys = sample_buffer(&cl, CL_MEM_READ_WRITE, padded * sizeof(cl_uint), NULL);

  CHECK_CL(clSetKernelArg(sort_block, 0, sizeof dkeys, &dkeys));
  CHECK_CL(clSetKernelArg(merge_global, 0, sizeof dkeys, &dkeys));
  CHECK_CL(clSetKernelArg(merge_block, 0, sizeof dkeys, &dkeys));
  size_t local = GROUP_SIZE, global = padded / 2;
  int launches = 0;
  double *times = malloc(opts.iterations * sizeof *times);
  for (int it = 0; it < opts.iterations; it++) {
    /* The sort works in place, so every iteration starts from the unsorted keys. */
    CHECK_CL(clEnqueueWriteBuffer(cl.queue, dkeys, CL_TRUE, 0, padded * sizeof(cl_uint), keys, 0,
                                  NULL, NULL));
    double t0 = sample_seconds();
    launches = 1;
    launch(cl.queue, sort_block, &global, &local, poll);
    for (size_t wide = 2 * BLOCK; wide <= padded; wide <<= 1) {
      cl_uint size = (cl_uint)wide;
      for (cl_uint stride = size / 2; stride >= BLOCK; stride >>= 1) {
        CHECK_CL(clSetKernelArg(merge_global, 1, sizeof size, &size));
        CHECK_CL(clSetKernelArg(merge_global, 2, sizeof stride, &stride));
        launch(cl.queue, merge_global, &global, NULL, poll);
        launches++;
      }
      CHECK_CL(clSetKernelArg(merge_block, 1, sizeof size, &size));
      launch(cl.queue, merge_block, &global, &local, poll);
      launches++;
    }
    CHECK_CL(clFinish(cl.queue));
    times[it] = sample_seconds() - t0;
  }
  double t = sample_median(times, opts.iterations);
  CHECK_CL(clEnqueueReadBuffer(cl.queue, dkeys, CL_TRUE, 0, padded * sizeof(cl_uint), out, 0, NULL,
                               NULL));

  result.verified = -1;
  if (opts.verify) {
    /* Sorted, and the same multiset as the input: equal to qsort's result key by key
     * checks both at once, but the first unsorted place says more when it fails. */
    size_t wrong = 0;
    for (size_t i = 1; i < n; i++)
      if (out[i - 1] > out[i] && wrong++ < 5)
        fprintf(stderr, "bitonicsort: out[%zu] = %u > out[%zu] = %u\n", i - 1, out[i - 1], i,
                out[i]);
    qsort(keys, n, sizeof *keys, compare_uint);
    for (size_t i = 0; i < n; i++)
      if (out[i] != keys[i] && wrong++ < 10)
        fprintf(stderr, "bitonicsort: out[%zu] = %u, qsort has %u\n", i, out[i], keys[i]);
    result.verified = wrong == 0;
  }

  snprintf(result.size, sizeof result.size, "%zu uints", n);
  result.time_ms = t * 1e3;
  result.rate = n / t / 1e6;
  int status = sample_report(&opts, &cl, &result);
  if (!opts.json && !opts.quiet) printf("  %d kernel launches per sort\n", launches);

  clReleaseMemObject(dkeys);
  clReleaseKernel(sort_block);
  clReleaseKernel(merge_global);
  clReleaseKernel(merge_block);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(keys);
  free(out);
  return status;
}
