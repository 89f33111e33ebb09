/* Kernels reduced from what `make fuzz-compiler` found (CLSmith's random
 * programs on Aquila, pocl and Oclgrind: docs/CONFORMANCE.md, "CLSmith").
 * Each case is the small kernel a finding came down to, run through the
 * loader like cl_launcher runs CLSmith's kernels (one ulong a work-item), at
 * group sizes that take the vectorized and the scalar versions, and checked
 * against the same computation on the host. */
#include "../api/api.h"

/* Builds src, runs its kernel "entry" over global x 1 x 1 work-items in
 * groups of local, and reads one ulong a work-item into out. */
static int run_entry(const char *src, size_t global, size_t local, cl_ulong *out) {
  cl_kernel k = build_kernel(src, "entry");
  if (!k) return 0;
  cl_int err;
  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE, global * sizeof(cl_ulong), NULL, &err);
  int ok = buf != NULL && clSetKernelArg(k, 0, sizeof buf, &buf) == CL_SUCCESS;
  if (ok) {
    err = clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    if (err != CL_SUCCESS) printf("  clEnqueueNDRangeKernel: %d\n", err);
    ok = err == CL_SUCCESS && clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, global * sizeof(cl_ulong),
                                                  out, 0, NULL, NULL) == CL_SUCCESS;
  }
  if (buf) clReleaseMemObject(buf);
  clReleaseKernel(k);
  return ok;
}

/* CLSmith vectors mode, seeds 1, 2 and 4 (a crash of the host): a private
 * array live across a barrier becomes a context array with one element per
 * work-item. clang aligns private arrays of 16 bytes or more to 16, and the
 * optimizer then initializes them with aligned vector stores; a uchar[20]
 * element of 20 bytes put work-item 1's copy at offset 20, and the aligned
 * store there faulted. Elements are now padded to the alignment. */
static void barrier_private_array_keeps_alignment(void) {
  const char *src = "__kernel void entry(__global ulong *result) {\n"
                    "  volatile uchar a[20] = {0};\n"
                    "  uchar b[20] = {0};\n"
                    "  a[get_local_id(0) % 20] = 1;\n"
                    "  b[(get_local_id(0) + 3) % 20] = 2;\n"
                    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                    "  ulong s = 0;\n"
                    "  for (int i = 0; i < 20; i++) s = s * 3 + a[i] + b[(i * 7) % 20];\n"
                    "  result[get_global_id(0)] = s;\n"
                    "}\n";
  static const size_t locals[] = {1, 3, 16, 32, 48};
  for (unsigned l = 0; l < sizeof locals / sizeof *locals; l++) {
    size_t local = locals[l], global = 2 * local;
    cl_ulong out[96];
    REQUIRE(run_entry(src, global, local, out));
    for (size_t g = 0; g < global; g++) {
      unsigned char a[20] = {0}, b[20] = {0};
      a[(g % local) % 20] = 1;
      b[(g % local + 3) % 20] = 2;
      cl_ulong s = 0;
      for (int i = 0; i < 20; i++)
        s = s * 3 + a[i] + b[(i * 7) % 20];
      if (out[g] != s) {
        printf("  local size %zu, work-item %zu: %llu, expected %llu\n", local, g,
               (unsigned long long)out[g], (unsigned long long)s);
        CHECK(out[g] == s);
        break;
      }
    }
  }
}

int main(void) {
  api_setup();
  RUN(barrier_private_array_keeps_alignment);
  api_teardown();
  CHECK_EXIT();
}
