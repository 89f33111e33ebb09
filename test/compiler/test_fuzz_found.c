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

/* Runs src's "entry" in two groups of each local size of locals (at most
 * 64) and checks every work-item's ulong against expected(local id, local
 * size); stops at the first wrong one of each size. */
static void check_entry(const char *src, const size_t *locals, unsigned num_locals,
                        cl_ulong (*expected)(size_t lid, size_t local)) {
  for (unsigned l = 0; l < num_locals; l++) {
    size_t local = locals[l], global = 2 * local;
    cl_ulong out[128];
    REQUIRE(local <= 64 && run_entry(src, global, local, out));
    for (size_t g = 0; g < global; g++) {
      cl_ulong want = expected(g % local, local);
      if (out[g] != want) {
        printf("  local size %zu, work-item %zu: %#llx, expected %#llx\n", local, g,
               (unsigned long long)out[g], (unsigned long long)want);
        CHECK(out[g] == want);
        break;
      }
    }
  }
}

/* What the kernel below computes, on the host. */
static cl_ulong private_array_expected(size_t lid, size_t local) {
  unsigned char a[20] = {0}, b[20] = {0};
  a[lid % 20] = 1;
  b[(lid + 3) % 20] = 2;
  cl_ulong s = 0;
  for (int i = 0; i < 20; i++)
    s = s * 3 + a[i] + b[(i * 7) % 20];
  return s;
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
  check_entry(src, locals, sizeof locals / sizeof *locals, private_array_expected);
}

/* What the kernel below computes, on the host. */
static cl_ulong late_struct_expected(size_t lid, size_t local) {
  unsigned v[4] = {1, 2, 3, 4};
  v[lid % 4] += (unsigned)lid;
  return 22u + v[0] + 3ull * v[1] + 5ull * v[2] + 7ull * v[3] + lid % 8;
}

/* CLSmith all mode, seed 145 (48 s where pocl took 3.8 s and the fiber
 * version 0.6 s): the kernel's private struct, declared after its __local
 * arrays, holds pointers to its own fields, so it stays one variable in
 * memory. Its alloca came after the group-segment addresses in the entry
 * block and was split off into the first region: a fresh stack allocation
 * for every work-item, reached in later regions through a context array of
 * pointers, which hid it from LLVM. A dead loop on one of its fields (it
 * ends only when the counter wraps, after 715,827,887 iterations) then ran
 * for every work-item instead of being deleted. The struct must now be a
 * context array of its own (its bytes in the report), and the result
 * right. */
static void late_private_struct_is_context_array(void) {
  const char *src =
      "struct S { uint c; __private uint *self; uint v[4]; };\n"
      "__kernel void entry(__global ulong *result) {\n"
      "  __local uint shared[8];\n"
      "  size_t lid = get_local_id(0);\n"
      "  if (lid == 0) for (int i = 0; i < 8; i++) shared[i] = i;\n"
      "  struct S s = {0, 0, {1, 2, 3, 4}};\n"
      "  struct S *p = &s;\n"
      "  s.self = &s.c;\n"
      "  s.v[lid % 4] += (uint)lid;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  for (p->c = 0xfffffffcu; p->c != 22u; p->c += 6u)\n"
      "    ;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  result[get_global_id(0)] = *p->self + p->v[0] + 3 * p->v[1] + 5 * p->v[2] +\n"
      "                             7 * p->v[3] + shared[lid % 8];\n"
      "}\n";
  char log[8192];
  cl_program p = build_program_reporting(src, log, sizeof log);
  REQUIRE(p);
  /* Every version of the kernel (vectorized or not) reports its context
   * arrays; each must hold the struct (32 bytes a work-item at least). */
  unsigned reports = 0;
  for (const char *at = strstr(log, "values in context arrays ("); at;
       at = strstr(at + 1, "values in context arrays (")) {
    unsigned bytes = 0;
    CHECK(sscanf(at, "values in context arrays (%u bytes", &bytes) == 1);
    if (bytes < 32) printf("  %u bytes per work-item in context arrays: %.200s\n", bytes, log);
    CHECK(bytes >= 32);
    reports++;
  }
  CHECK(reports > 0);
  clReleaseProgram(p);
  /* Group sizes that no vector width divides: the scalar version runs. In
   * the vectorized one the loop stays (each lane's copy of the counter is a
   * scatter, which LLVM does not promote) and takes seconds a group. */
  static const size_t locals[] = {1, 5, 7, 13};
  check_entry(src, locals, sizeof locals / sizeof *locals, late_struct_expected);
}

/* What the kernel below computes, on the host. */
static cl_ulong inlined_array_expected(size_t lid, size_t local) {
  unsigned id = (unsigned)lid, seed = id * 7u + 3u, a[6];
  for (unsigned i = 0; i < 6; i++)
    a[i] = seed * (i + 1) + id;
  a[id % 6] ^= 0x55u;
  unsigned s = ((id + 1) % (unsigned)local) * 7u + 3u;
  for (unsigned i = 0; i < 6; i++)
    s = s * 31u + a[(id + i) % 6];
  return s;
}

/* Found while reducing CLSmith atomics seed 412: a private array of a
 * function that the kernel calls, alive across a barrier inside it. Inlined,
 * its allocation comes after the kernel's group-segment addresses, and the
 * inliner puts lifetime markers around the call; the array must become a
 * context array with one element per work-item, its markers gone (on the
 * first work-item's element they would name the whole array). */
static void inlined_private_array_across_barrier(void) {
  const char *src =
      "static uint mix(__local uint *shared, uint seed) {\n"
      "  uint lid = get_local_id(0);\n"
      "  shared[lid] = seed;\n"
      "  uint a[6];\n"
      "  for (int i = 0; i < 6; i++) a[i] = seed * (uint)(i + 1) + lid;\n"
      "  a[lid % 6] ^= 0x55u;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  uint s = shared[(lid + 1) % get_local_size(0)];\n"
      "  for (int i = 0; i < 6; i++) s = s * 31u + a[(lid + i) % 6];\n"
      "  return s;\n"
      "}\n"
      "__kernel void entry(__global ulong *result) {\n"
      "  __local uint shared[64];\n"
      "  uint lid = get_local_id(0);\n"
      "  result[get_global_id(0)] = mix(shared, lid * 7u + 3u);\n"
      "}\n";
  static const size_t locals[] = {1, 5, 7, 13, 16, 32, 64};
  check_entry(src, locals, sizeof locals / sizeof *locals, inlined_array_expected);
}

/* What the kernel below computes, on the host. */
static cl_ulong union_copy_expected(size_t lid, size_t local) {
  return (0xffffffffull << 8) + 0xd4 + 0x2D374006;
}

/* CLSmith barriers mode, seed 3000652: a function that returns a union
 * by value, its result unused, between two barriers. Inlined, the copy for
 * the return is a private variable stored and loaded as an i64, not as its
 * union type; taken for a scalar slot, its loads were replaced by one of
 * the union's type: invalid code in this form (a build error), a union
 * read as 0 in the generated kernel's. */
static void union_copied_as_integer_across_barriers(void) {
  const char *src =
      "union U1 { volatile uint f0; char * volatile f1; };\n"
      "struct S5 { int g_3; long g_19; volatile uchar g_23; union U1 g_26; };\n"
      "union U1 func_1(struct S5 *p) { p->g_23--; return p->g_26; }\n"
      "__kernel void entry(__global ulong *result) {\n"
      "  struct S5 c_28;\n"
      "  struct S5 *p = &c_28;\n"
      "  struct S5 c_29 = {0x2D374006, -2, 0xD5, {4294967295u}};\n"
      "  c_28 = c_29;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
      "  func_1(p);\n"
      "  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
      "  result[get_global_id(0)] = ((ulong)p->g_26.f0 << 8) + p->g_23 + p->g_3;\n"
      "}\n";
  static const size_t locals[] = {1, 5, 16, 32};
  check_entry(src, locals, sizeof locals / sizeof *locals, union_copy_expected);
}

int main(void) {
  api_setup();
  RUN(barrier_private_array_keeps_alignment);
  RUN(late_private_struct_is_context_array);
  RUN(inlined_private_array_across_barrier);
  RUN(union_copied_as_integer_across_barriers);
  api_teardown();
  CHECK_EXIT();
}
