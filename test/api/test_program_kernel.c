/* Programs and kernels: building, build errors and options, binaries,
 * kernel creation, arguments and their metadata, work-group queries. */
#include "api.h"

static const char *two_kernels =
    "__kernel void scale(__global float *restrict out, __global const float *in, float k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * k;\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(8, 2, 1)))\n"
    "void fixed(__global int *o, __local int *scratch, __constant int *c, const uint n) {\n"
    "  size_t i = get_global_id(0) + get_global_size(0) * get_global_id(1);\n"
    "  scratch[get_local_id(0)] = c[0];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  o[i] = scratch[get_local_id(0)] + (int)n;\n"
    "}\n";

static int run_scale(cl_program p, float k) {
  cl_int err;
  cl_kernel kern = clCreateKernel(p, "scale", &err);
  if (!kern) return 0;
  float in[32], out[32];
  for (int i = 0; i < 32; i++)
    in[i] = (float)i;
  cl_mem a = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof out, NULL, &err);
  clSetKernelArg(kern, 0, sizeof b, &b);
  clSetKernelArg(kern, 1, sizeof a, &a);
  clSetKernelArg(kern, 2, sizeof k, &k);
  size_t g = 32;
  err = clEnqueueNDRangeKernel(queue, kern, 1, NULL, &g, NULL, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  int good = err == CL_SUCCESS;
  for (int i = 0; i < 32; i++)
    good &= out[i] == i * k;
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(kern);
  return good;
}

static void build_and_info(void) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &two_kernels, NULL, &err);
  REQUIRE(p && err == CL_SUCCESS);
  size_t nk = 0;
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL),
               CL_INVALID_PROGRAM_EXECUTABLE);
  CHECK(clCreateKernel(p, "scale", &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROGRAM_EXECUTABLE);
  cl_build_status bs = 99;
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, sizeof bs, &bs, NULL);
  CHECK_EQ_INT(bs, CL_BUILD_NONE);
  CHECK_EQ_INT(clBuildProgram(p, 0, NULL, "-cl-kernel-arg-info", NULL, NULL), CL_SUCCESS);
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, sizeof bs, &bs, NULL);
  CHECK_EQ_INT(bs, CL_BUILD_SUCCESS);
  cl_program_binary_type bt = 0;
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt, NULL);
  CHECK_EQ_INT(bt, CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
  char buf[1024];
  CHECK_EQ_INT(clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_OPTIONS, sizeof buf, buf, NULL),
               CL_SUCCESS);
  CHECK(!strcmp(buf, "-cl-kernel-arg-info"));
  size_t size = 0;
  CHECK_EQ_INT(clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size), CL_SUCCESS);
  CHECK(size >= 1);
  CHECK_EQ_INT(
      clGetProgramBuildInfo(p, (cl_device_id)context, CL_PROGRAM_BUILD_LOG, 0, NULL, &size),
      CL_INVALID_DEVICE);
  CHECK_EQ_INT(clGetProgramBuildInfo(p, device, 0x7777, 0, NULL, &size), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL), CL_SUCCESS);
  CHECK_EQ_INT(nk, 2);
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof buf, buf, &size), CL_SUCCESS);
  CHECK(!strcmp(buf, "scale;fixed") || !strcmp(buf, "fixed;scale"));
  CHECK_EQ_INT(size, strlen("scale;fixed") + 1);
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 3, buf, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_SOURCE, sizeof buf, buf, &size), CL_SUCCESS);
  CHECK(!strcmp(buf, two_kernels));
  cl_uint nd = 0, refs = 0;
  cl_context c = NULL;
  cl_device_id d = NULL;
  clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, NULL);
  clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof d, &d, NULL);
  clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof c, &c, NULL);
  clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  CHECK(nd == 1 && d == device && c == context && refs == 1);
  CHECK_EQ_INT(clGetProgramInfo(p, 0x7777, sizeof nd, &nd, NULL), CL_INVALID_VALUE);
  CHECK(run_scale(p, 2.5f));
  /* Kernels attached: no rebuild. */
  cl_kernel k = clCreateKernel(p, "scale", &err);
  REQUIRE(k);
  CHECK_EQ_INT(clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION);
  clReleaseKernel(k);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, NULL, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clBuildProgram(p, 1, NULL, NULL, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clBuildProgram(p, 0, &device, NULL, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clBuildProgram(p, 0, NULL, NULL, NULL, &err), CL_INVALID_VALUE);
  cl_device_id bad = (cl_device_id)context;
  CHECK_EQ_INT(clBuildProgram(p, 1, &bad, NULL, NULL, NULL), CL_INVALID_DEVICE);
  CHECK_EQ_INT(clBuildProgram((cl_program)context, 0, NULL, NULL, NULL, NULL), CL_INVALID_PROGRAM);
  clReleaseProgram(p);
}

static void create_with_source_errors(void) {
  cl_int err;
  CHECK(clCreateProgramWithSource(context, 0, &two_kernels, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateProgramWithSource(context, 1, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  const char *strs[2] = {two_kernels, NULL};
  CHECK(clCreateProgramWithSource(context, 2, strs, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateProgramWithSource((cl_context)queue, 1, &two_kernels, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_CONTEXT);
  /* Several strings with lengths, one of them 0 (NUL-terminated). */
  const char *parts[3] = {"__kernel void k(__global int *o) { o[0] = 4", "2; }garbage", "\n"};
  size_t lens[3] = {strlen(parts[0]), 4, 0};
  cl_program p = clCreateProgramWithSource(context, 3, parts, lens, &err);
  REQUIRE(p);
  CHECK_EQ_INT(clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  clReleaseProgram(p);
}

static void build_failure_log(void) {
  const char *src = "__kernel void broken(__global int *o) {\n"
                    "  o[0] = 1;\n"
                    "  o[1] = undefined_name + 2;\n"
                    "}\n";
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  REQUIRE(p);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, NULL, NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
  cl_build_status bs = 0;
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, sizeof bs, &bs, NULL);
  CHECK_EQ_INT(bs, CL_BUILD_ERROR);
  char log[8192] = "";
  CHECK_EQ_INT(clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL),
               CL_SUCCESS);
  CHECK(strstr(log, "3:10") != NULL);
  CHECK(strstr(log, "undefined_name") != NULL);
  CHECK(strstr(log, "error") != NULL);
  if (!strstr(log, "3:10")) printf("  log: %s\n", log);
  CHECK(clCreateKernel(p, "broken", &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROGRAM_EXECUTABLE);
  size_t nk;
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL),
               CL_INVALID_PROGRAM_EXECUTABLE);
  /* The same program object builds once the source problem is gone? No:
   * the source is fixed at creation. A bad option instead: */
  CHECK_EQ_INT(clBuildProgram(p, 0, NULL, "-no-such-option", NULL, NULL), CL_INVALID_BUILD_OPTIONS);
  clReleaseProgram(p);
}

/* A sum of 50,000 terms nests that deep in clang's trees: with an 8 MiB
 * stack clang itself crashed on it (the build failed with "the compiler
 * process crashed"; pocl takes the application down). The compiler helper
 * serves builds on a large stack, so it builds and computes. */
static void deep_expression_builds(void) {
  const unsigned terms = 50000;
  size_t cap = 64 + (size_t)terms * 8;
  char *src = malloc(cap);
  REQUIRE(src);
  size_t len = (size_t)snprintf(src, cap, "__kernel void sum(__global int *a) { a[0] = a[1]");
  for (unsigned i = 1; i < terms; i++)
    len += (size_t)snprintf(src + len, cap - len, "+a[%u]", 1 + i % 7);
  snprintf(src + len, cap - len, "; }");
  cl_int err;
  const char *csrc = src;
  cl_program p = clCreateProgramWithSource(context, 1, &csrc, NULL, &err);
  free(src);
  REQUIRE(p);
  err = clBuildProgram(p, 1, &device, NULL, NULL, NULL);
  CHECK_EQ_INT(err, CL_SUCCESS);
  if (err != CL_SUCCESS) {
    char log[2048] = "";
    clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    printf("  log: %s\n", log);
    clReleaseProgram(p);
    return;
  }
  cl_kernel k = clCreateKernel(p, "sum", &err);
  int host[8] = {0, 1, 1, 1, 1, 1, 1, 1};
  cl_mem a =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  clSetKernelArg(k, 0, sizeof a, &a);
  CHECK_EQ_INT(clEnqueueTask(queue, k, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(host[0], (int)terms);
  clReleaseMemObject(a);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

static int notify_calls;
static void CL_CALLBACK build_notify(cl_program p, void *data) {
  notify_calls += *(int *)data;
}

static void build_options(void) {
  const char *src = "__kernel void k(__global float *o) { o[0] = 1.0f / 3.0f; }\n";
  const char *options[] = {
      "-cl-single-precision-constant",
      "-cl-denorms-are-zero",
      "-cl-fp32-correctly-rounded-divide-sqrt",
      "-cl-opt-disable",
      "-cl-mad-enable",
      "-cl-no-signed-zeros",
      "-cl-unsafe-math-optimizations",
      "-cl-finite-math-only",
      "-cl-fast-relaxed-math",
      "-w",
      "-Werror",
      "-cl-std=CL1.1",
      "-cl-std=CL1.2",
      "-cl-kernel-arg-info",
      "-I /tmp",
      "-I/tmp",
      "-D FOO",
      "-DFOO=1",
      "-cl-mad-enable -cl-no-signed-zeros -cl-fast-relaxed-math -w",
      "",
      "   ",
  };
  for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
    cl_int err;
    cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &err);
    REQUIRE(p);
    err = clBuildProgram(p, 0, NULL, options[i], NULL, NULL);
    if (err != CL_SUCCESS) printf("  option '%s': %d\n", options[i], err);
    CHECK_EQ_INT(err, CL_SUCCESS);
    clReleaseProgram(p);
  }
  const char *bad[] = {"-cl-no-such-thing", "--bogus", "-cl-std=CL9.9", "-fsanitize=address"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cl_int err;
    cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &err);
    err = clBuildProgram(p, 0, NULL, bad[i], NULL, NULL);
    if (err != CL_INVALID_BUILD_OPTIONS) printf("  bad option '%s': %d\n", bad[i], err);
    CHECK_EQ_INT(err, CL_INVALID_BUILD_OPTIONS);
    clReleaseProgram(p);
  }
  /* The notify callback is called once per build. */
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  int one = 1;
  notify_calls = 0;
  CHECK_EQ_INT(clBuildProgram(p, 0, NULL, NULL, build_notify, &one), CL_SUCCESS);
  CHECK_EQ_INT(notify_calls, 1);
  clReleaseProgram(p);
}

static void defines(void) {
  const char *src = "__kernel void k(__global int *o) { o[0] = VALUE * 2;\n"
                    "#ifdef FLAG\n o[1] = 1;\n#else\n o[1] = 0;\n#endif\n}\n";
  cl_int err;
  cl_program p = build_program(src, "-D VALUE=21 -DFLAG", &err);
  REQUIRE(p);
  cl_kernel k = clCreateKernel(p, "k", &err);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 8, NULL, &err);
  clSetKernelArg(k, 0, sizeof m, &m);
  CHECK_EQ_INT(clEnqueueTask(queue, k, 0, NULL, NULL), CL_SUCCESS);
  int out[2] = {0, 0};
  clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  CHECK_EQ_INT(out[0], 42);
  CHECK_EQ_INT(out[1], 1);
  clReleaseKernel(k);
  clReleaseProgram(p);
  p = build_program(src, "-DVALUE=5", &err);
  REQUIRE(p);
  k = clCreateKernel(p, "k", &err);
  clSetKernelArg(k, 0, sizeof m, &m);
  clEnqueueTask(queue, k, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  CHECK_EQ_INT(out[0], 10);
  CHECK_EQ_INT(out[1], 0);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clReleaseMemObject(m);
}

static void binaries(void) {
  cl_int err;
  cl_program p = build_program(two_kernels, NULL, &err);
  REQUIRE(p);
  size_t bsize = 0, got = 0;
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsize, &bsize, &got),
               CL_SUCCESS);
  CHECK_EQ_INT(got, sizeof(size_t));
  REQUIRE(bsize > 16);
  unsigned char *bin = malloc(bsize);
  unsigned char *ptrs[1] = {bin};
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptrs, ptrs, &got), CL_SUCCESS);
  CHECK_EQ_INT(got, sizeof ptrs);
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 1, ptrs, NULL), CL_INVALID_VALUE);
  clReleaseProgram(p);

  const unsigned char *cbin = bin;
  cl_int status = 99;
  p = clCreateProgramWithBinary(context, 1, &device, &bsize, &cbin, &status, &err);
  REQUIRE(p && err == CL_SUCCESS);
  CHECK_EQ_INT(status, CL_SUCCESS);
  CHECK_EQ_INT(clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  CHECK(run_scale(p, -3.0f));
  size_t nk = 0;
  clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL);
  CHECK_EQ_INT(nk, 2);
  clReleaseProgram(p);

  /* Truncated at many lengths and corrupted at many offsets: an error,
   * never a crash. */
  int bad = 0;
  for (size_t len = 1; len < bsize; len = len < 64 ? len + 1 : len * 3 / 2) {
    status = 99;
    p = clCreateProgramWithBinary(context, 1, &device, &len, &cbin, &status, &err);
    if (p) {
      clReleaseProgram(p);
      bad++;
      continue;
    }
    if (err != CL_INVALID_BINARY || status != CL_INVALID_BINARY) {
      if (bad++ < 3) printf("  truncated to %zu: err %d status %d\n", len, err, status);
    }
  }
  CHECK_EQ_INT(bad, 0);
  unsigned char garbage[4096];
  for (size_t i = 0; i < sizeof garbage; i++)
    garbage[i] = (unsigned char)(i * 37 + 11);
  memcpy(garbage, "\177ELF", 4);
  const unsigned char *gp = garbage;
  size_t glen = sizeof garbage;
  status = 99;
  CHECK(clCreateProgramWithBinary(context, 1, &device, &glen, &gp, &status, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_BINARY);
  CHECK_EQ_INT(status, CL_INVALID_BINARY);
  /* Argument errors. */
  size_t zero = 0;
  CHECK(clCreateProgramWithBinary(context, 1, &device, &zero, &cbin, &status, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  const unsigned char *nul = NULL;
  CHECK(clCreateProgramWithBinary(context, 1, &device, &bsize, &nul, &status, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateProgramWithBinary(context, 0, &device, &bsize, &cbin, &status, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  cl_device_id badd = (cl_device_id)context;
  CHECK(clCreateProgramWithBinary(context, 1, &badd, &bsize, &cbin, &status, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_DEVICE);
  free(bin);
}

static unsigned char *program_binary(cl_program p, size_t *size) {
  *size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof *size, size, NULL) != CL_SUCCESS ||
      *size == 0)
    return NULL;
  unsigned char *bin = malloc(*size);
  if (bin && clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
    free(bin);
    bin = NULL;
  }
  return bin;
}

static cl_program program_from_binary_of(cl_program p) {
  size_t size;
  unsigned char *bin = program_binary(p, &size);
  if (!bin) return NULL;
  const unsigned char *cbin = bin;
  cl_int err, status;
  cl_program q = clCreateProgramWithBinary(context, 1, &device, &size, &cbin, &status, &err);
  free(bin);
  return q;
}

static cl_program_binary_type binary_type_of(cl_program p) {
  cl_program_binary_type t = 99;
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BINARY_TYPE, sizeof t, &t, NULL);
  return t;
}

/* CL_PROGRAM_BINARIES of every kind of program (built, compiled, linked, a
 * library) loads back with its kind and kernels; executables run with or
 * without clBuildProgram (piglit's clCreateProgramWithBinary creates kernels
 * straight from the binary), objects and libraries only once linked or
 * built. */
static void binaries_of_every_kind(void) {
  cl_int err;
  cl_program built = build_program(two_kernels, NULL, &err);
  REQUIRE(built);
  cl_program exe = program_from_binary_of(built);
  REQUIRE(exe);
  CHECK_EQ_INT(binary_type_of(exe), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
  size_t nk = 0;
  CHECK_EQ_INT(clGetProgramInfo(exe, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL), CL_SUCCESS);
  CHECK_EQ_INT(nk, 2);
  CHECK(run_scale(exe, 2.0f));
  cl_build_status bs = 99;
  clGetProgramBuildInfo(exe, device, CL_PROGRAM_BUILD_STATUS, sizeof bs, &bs, NULL);
  CHECK_EQ_INT(bs, CL_BUILD_SUCCESS);
  /* Kernels the application released no longer block a rebuild, even while
   * a command still runs one (piglit enqueues, releases, rebuilds). */
  cl_kernel k = clCreateKernel(exe, "scale", &err);
  REQUIRE(k);
  enum { N = 1 << 20 };
  cl_mem in = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
  float two = 2.0f;
  clSetKernelArg(k, 0, sizeof out, &out);
  clSetKernelArg(k, 1, sizeof in, &in);
  clSetKernelArg(k, 2, sizeof two, &two);
  size_t g = N;
  for (int i = 0; i < 4; i++)
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL), CL_SUCCESS);
  cl_kernel held = clCreateKernel(exe, "fixed", &err);
  CHECK_EQ_INT(clBuildProgram(exe, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION);
  clReleaseKernel(held);
  CHECK_EQ_INT(clReleaseKernel(k), CL_SUCCESS);
  CHECK_EQ_INT(clBuildProgram(exe, 0, NULL, "-cl-mad-enable", NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  CHECK(run_scale(exe, 3.0f));
  /* A binary of a program built from a binary loads too. */
  cl_program exe2 = program_from_binary_of(exe);
  CHECK(exe2 && run_scale(exe2, 4.0f));
  if (exe2) clReleaseProgram(exe2);
  clReleaseProgram(exe);
  clReleaseProgram(built);

  cl_program compiled = clCreateProgramWithSource(context, 1, &two_kernels, NULL, &err);
  REQUIRE(compiled);
  REQUIRE(clCompileProgram(compiled, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL) == CL_SUCCESS);
  cl_program object = program_from_binary_of(compiled);
  REQUIRE(object);
  CHECK_EQ_INT(binary_type_of(object), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
  CHECK(clCreateKernel(object, "scale", &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROGRAM_EXECUTABLE);
  CHECK_EQ_INT(clGetProgramInfo(object, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL),
               CL_INVALID_PROGRAM_EXECUTABLE);
  cl_program linked = clLinkProgram(context, 0, NULL, NULL, 1, &object, NULL, NULL, &err);
  CHECK(linked && err == CL_SUCCESS && run_scale(linked, 5.0f));
  cl_program linked_exe = linked ? program_from_binary_of(linked) : NULL;
  CHECK(linked_exe && run_scale(linked_exe, 6.0f));
  if (linked_exe) clReleaseProgram(linked_exe);
  if (linked) clReleaseProgram(linked);
  CHECK_EQ_INT(clBuildProgram(object, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  CHECK(run_scale(object, 7.0f));
  clReleaseProgram(object);

  cl_program lib =
      clLinkProgram(context, 0, NULL, "-create-library", 1, &compiled, NULL, NULL, &err);
  REQUIRE(lib && err == CL_SUCCESS);
  cl_program lib_bin = program_from_binary_of(lib);
  REQUIRE(lib_bin);
  CHECK_EQ_INT(binary_type_of(lib_bin), CL_PROGRAM_BINARY_TYPE_LIBRARY);
  CHECK(clCreateKernel(lib_bin, "scale", &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROGRAM_EXECUTABLE);
  linked = clLinkProgram(context, 0, NULL, NULL, 1, &lib_bin, NULL, NULL, &err);
  CHECK(linked && err == CL_SUCCESS && run_scale(linked, 8.0f));
  if (linked) clReleaseProgram(linked);
  clReleaseProgram(lib_bin);
  clReleaseProgram(lib);
  clReleaseProgram(compiled);
}

/* Whether kernel "scale" of p describes its arguments' names and types;
 * address and access qualifiers are always there. */
static int scale_has_arg_info(cl_program p) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, "scale", &err);
  if (!k) return -1;
  char name[32] = "";
  cl_kernel_arg_type_qualifier tq;
  cl_kernel_arg_address_qualifier aq = 0;
  cl_kernel_arg_access_qualifier acc = 0;
  cl_int name_err = clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, sizeof name, name, NULL);
  cl_int type_err = clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_TYPE_NAME, sizeof name, name, NULL);
  cl_int tq_err = clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL);
  int result = -1;
  if (clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL) ==
          CL_SUCCESS &&
      aq == CL_KERNEL_ARG_ADDRESS_GLOBAL &&
      clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof acc, &acc, NULL) ==
          CL_SUCCESS &&
      acc == CL_KERNEL_ARG_ACCESS_NONE &&
      clGetKernelArgInfo(k, 1, 0x7777, sizeof acc, &acc, NULL) == CL_INVALID_VALUE) {
    if (name_err == CL_SUCCESS && type_err == CL_SUCCESS && tq_err == CL_SUCCESS)
      result = 1;
    else if (name_err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE &&
             type_err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE &&
             tq_err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
      result = 0;
  }
  clReleaseKernel(k);
  return result;
}

/* OpenCL 1.2, 5.7.3: argument names and types only for programs created
 * from source and built or compiled with -cl-kernel-arg-info (piglit's
 * clGetKernelArgInfo test checks the CL_KERNEL_ARG_INFO_NOT_AVAILABLE). */
static void kernel_arg_info_availability(void) {
  cl_int err;
  cl_program plain = build_program(two_kernels, "-cl-fast-relaxed-math", &err);
  cl_program described = build_program(two_kernels, "-D X=1 -cl-kernel-arg-info", &err);
  REQUIRE(plain && described);
  CHECK_EQ_INT(scale_has_arg_info(plain), 0);
  CHECK_EQ_INT(scale_has_arg_info(described), 1);
  /* A binary is not a source, whatever it was built with. */
  cl_program from_binary = program_from_binary_of(described);
  REQUIRE(from_binary);
  CHECK_EQ_INT(clBuildProgram(from_binary, 0, NULL, "-cl-kernel-arg-info", NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(scale_has_arg_info(from_binary), 0);
  clReleaseProgram(from_binary);
  /* Rebuilt without the option, the source describes nothing any more. */
  CHECK_EQ_INT(clBuildProgram(described, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(scale_has_arg_info(described), 0);
  clReleaseProgram(described);
  clReleaseProgram(plain);

  /* Compiled with the option and linked: described; compiled without: not. */
  for (int with = 0; with < 2; with++) {
    cl_program obj = clCreateProgramWithSource(context, 1, &two_kernels, NULL, &err);
    REQUIRE(obj);
    CHECK_EQ_INT(clCompileProgram(obj, 0, NULL, with ? "-cl-kernel-arg-info" : "", 0, NULL, NULL,
                                  NULL, NULL),
                 CL_SUCCESS);
    cl_program linked = clLinkProgram(context, 0, NULL, NULL, 1, &obj, NULL, NULL, &err);
    CHECK(linked && err == CL_SUCCESS);
    if (linked) {
      CHECK_EQ_INT(scale_has_arg_info(linked), with);
      clReleaseProgram(linked);
    }
    clReleaseProgram(obj);
  }
}

/* Random corruption of a valid binary: either CL_INVALID_BINARY or a program
 * that still works, never the end of the process. Last, because a failure
 * here can take the process down. */
static void corrupted_binaries(void) {
  cl_int err, status;
  cl_program p = build_program(two_kernels, NULL, &err);
  REQUIRE(p);
  size_t bsize = 0;
  clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsize, &bsize, NULL);
  unsigned char *bin = malloc(bsize);
  clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
  clReleaseProgram(p);
  int bad = 0;
  unsigned char *copy = malloc(bsize);
  unsigned seed = 7;
  for (int iter = 0; iter < 200; iter++) {
    memcpy(copy, bin, bsize);
    for (int j = 0; j < 8; j++) {
      seed = seed * 1103515245u + 12345u;
      copy[(seed >> 4) % bsize] ^= (unsigned char)(1 + (seed >> 20) % 255);
    }
    const unsigned char *cc = copy;
    p = clCreateProgramWithBinary(context, 1, &device, &bsize, &cc, &status, &err);
    /* Corruption may hit bytes that do not matter; then it must still work. */
    if (p) {
      if (clBuildProgram(p, 0, NULL, NULL, NULL, NULL) == CL_SUCCESS) {
        cl_kernel ks[4];
        cl_uint n = 0;
        if (clCreateKernelsInProgram(p, 4, ks, &n) == CL_SUCCESS)
          for (cl_uint i = 0; i < n; i++)
            clReleaseKernel(ks[i]);
      }
      clReleaseProgram(p);
    } else if (err != CL_INVALID_BINARY || status != CL_INVALID_BINARY) {
      if (bad++ < 3) printf("  corrupted: err %d status %d\n", err, status);
    }
  }
  CHECK_EQ_INT(bad, 0);
  free(copy);
  free(bin);
}

static void two_live_programs(void) {
  cl_int err;
  const char *s1 = "__kernel void first(__global int *o) { o[0] = 1; }\n";
  const char *s2 = "__kernel void second(__global int *o) { o[1] = 2; }\n";
  cl_program p1 = build_program(s1, NULL, &err);
  cl_program p2 = build_program(s2, NULL, &err);
  REQUIRE(p1 && p2);
  cl_kernel k1 = clCreateKernel(p1, "first", &err);
  cl_kernel k2 = clCreateKernel(p2, "second", &err);
  REQUIRE(k1 && k2);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 8, NULL, &err);
  clSetKernelArg(k1, 0, sizeof m, &m);
  clSetKernelArg(k2, 0, sizeof m, &m);
  CHECK_EQ_INT(clEnqueueTask(queue, k1, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueTask(queue, k2, 0, NULL, NULL), CL_SUCCESS);
  int out[2] = {0, 0};
  clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  CHECK(out[0] == 1 && out[1] == 2);
  clReleaseMemObject(m);
  clReleaseKernel(k1);
  clReleaseKernel(k2);
  clReleaseProgram(p1);
  clReleaseProgram(p2);
}

static void kernels(void) {
  cl_int err;
  cl_program p = build_program(two_kernels, "-cl-kernel-arg-info", &err);
  REQUIRE(p);
  CHECK(clCreateKernel(p, "nope", &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_KERNEL_NAME);
  CHECK(clCreateKernel(p, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateKernel((cl_program)context, "scale", &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROGRAM);
  cl_uint n = 0;
  CHECK_EQ_INT(clCreateKernelsInProgram(p, 0, NULL, &n), CL_SUCCESS);
  CHECK_EQ_INT(n, 2);
  cl_kernel ks[2];
  CHECK_EQ_INT(clCreateKernelsInProgram(p, 1, ks, &n), CL_INVALID_VALUE);
  CHECK_EQ_INT(clCreateKernelsInProgram(p, 2, ks, &n), CL_SUCCESS);
  char name[64];
  clGetKernelInfo(ks[0], CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
  CHECK(!strcmp(name, "scale") || !strcmp(name, "fixed"));
  clReleaseKernel(ks[0]);
  clReleaseKernel(ks[1]);
  cl_uint prefs = 0;
  clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof prefs, &prefs, NULL);
  CHECK_EQ_INT(prefs, 1);

  cl_kernel k = clCreateKernel(p, "fixed", &err);
  REQUIRE(k);
  cl_uint nargs = 0, krefs = 0;
  cl_program kp = NULL;
  cl_context kc = NULL;
  clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
  clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof krefs, &krefs, NULL);
  clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof kp, &kp, NULL);
  clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof kc, &kc, NULL);
  CHECK(nargs == 4 && krefs == 1 && kp == p && kc == context);
  size_t asize = 0;
  CHECK_EQ_INT(clGetKernelInfo(k, CL_KERNEL_ATTRIBUTES, 0, NULL, &asize), CL_SUCCESS);
  CHECK_EQ_INT(clGetKernelInfo(k, 0x7777, sizeof nargs, &nargs, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 2, name, NULL), CL_INVALID_VALUE);

  /* Argument metadata. */
  const char *names[] = {"o", "scratch", "c", "n"};
  const char *types[] = {"int*", "int*", "int*", "uint"};
  const cl_kernel_arg_address_qualifier aq[] = {
      CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_ADDRESS_CONSTANT,
      CL_KERNEL_ARG_ADDRESS_PRIVATE};
  for (cl_uint i = 0; i < 4; i++) {
    char s[64] = "";
    cl_kernel_arg_address_qualifier a = 0;
    cl_kernel_arg_access_qualifier acc = 0;
    cl_kernel_arg_type_qualifier tq = 99;
    CHECK_EQ_INT(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_NAME, sizeof s, s, NULL), CL_SUCCESS);
    if (strcmp(s, names[i])) printf("  arg %u name '%s'\n", i, s);
    CHECK(!strcmp(s, names[i]));
    CHECK_EQ_INT(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof s, s, NULL), CL_SUCCESS);
    if (strcmp(s, types[i])) printf("  arg %u type '%s'\n", i, s);
    CHECK(!strcmp(s, types[i]));
    CHECK_EQ_INT(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof a, &a, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(a, aq[i]);
    CHECK_EQ_INT(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof acc, &acc, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(acc, CL_KERNEL_ARG_ACCESS_NONE);
    CHECK_EQ_INT(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL),
                 CL_SUCCESS);
    /* const by value and __constant pointers: implementations differ. */
    if (i < 2)
      CHECK_EQ_INT(tq, CL_KERNEL_ARG_TYPE_NONE);
    else
      CHECK(tq == CL_KERNEL_ARG_TYPE_NONE || tq == CL_KERNEL_ARG_TYPE_CONST);
  }
  char s[64];
  CHECK_EQ_INT(clGetKernelArgInfo(k, 4, CL_KERNEL_ARG_NAME, sizeof s, s, NULL),
               CL_INVALID_ARG_INDEX);
  CHECK_EQ_INT(clGetKernelArgInfo(k, 0, 0x7777, sizeof s, s, NULL), CL_INVALID_VALUE);
  cl_kernel sk = clCreateKernel(p, "scale", &err);
  cl_kernel_arg_type_qualifier tq = 0;
  clGetKernelArgInfo(sk, 0, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL);
  CHECK_EQ_INT(tq, CL_KERNEL_ARG_TYPE_RESTRICT);
  clGetKernelArgInfo(sk, 1, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL);
  CHECK_EQ_INT(tq, CL_KERNEL_ARG_TYPE_CONST);
  clGetKernelArgInfo(sk, 2, CL_KERNEL_ARG_TYPE_NAME, sizeof s, s, NULL);
  CHECK(!strcmp(s, "float"));

  /* clSetKernelArg errors. */
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 32 * sizeof(int), NULL, &err);
  cl_uint nv = 7;
  CHECK_EQ_INT(clSetKernelArg(k, 4, sizeof nv, &nv), CL_INVALID_ARG_INDEX);
  CHECK_EQ_INT(clSetKernelArg(k, 3, 2, &nv), CL_INVALID_ARG_SIZE);
  CHECK_EQ_INT(clSetKernelArg(k, 3, sizeof nv, NULL), CL_INVALID_ARG_VALUE);
  CHECK_EQ_INT(clSetKernelArg(k, 1, 64, &nv), CL_INVALID_ARG_VALUE);
  CHECK_EQ_INT(clSetKernelArg(k, 1, 0, NULL), CL_INVALID_ARG_SIZE);
  CHECK_EQ_INT(clSetKernelArg(k, 0, 4, &m), CL_INVALID_ARG_SIZE);
  cl_mem notmem = (cl_mem)queue;
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof notmem, &notmem), CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clSetKernelArg((cl_kernel)context, 0, sizeof m, &m), CL_INVALID_KERNEL);
  cl_mem nullmem = NULL;
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof nullmem, &nullmem), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof m, NULL), CL_SUCCESS);
  /* Not every argument set yet. */
  size_t g[2] = {16, 2}, l[2] = {8, 2};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, g, l, 0, NULL, NULL),
               CL_INVALID_KERNEL_ARGS);
  int cval = 100;
  cl_mem cm =
      clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof cval, &cval, &err);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 1, 8 * sizeof(int), NULL), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 2, sizeof cm, &cm), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 3, sizeof nv, &nv), CL_SUCCESS);

  /* Work-group queries and reqd_work_group_size. */
  size_t wg = 0, cwg[3] = {0}, mult = 0, devmax = 0;
  cl_ulong lmem = 0, pmem = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof devmax, &devmax, NULL);
  CHECK_EQ_INT(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
               CL_SUCCESS);
  CHECK(wg >= 1 && wg <= devmax);
  CHECK_EQ_INT(
      clGetKernelWorkGroupInfo(k, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, NULL),
      CL_SUCCESS);
  CHECK(cwg[0] == 8 && cwg[1] == 2 && cwg[2] == 1);
  CHECK_EQ_INT(
      clGetKernelWorkGroupInfo(k, NULL, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL),
      CL_SUCCESS);
  CHECK(lmem >= 8 * sizeof(int));
  CHECK_EQ_INT(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                        sizeof mult, &mult, NULL),
               CL_SUCCESS);
  CHECK(mult >= 1);
  CHECK_EQ_INT(
      clGetKernelWorkGroupInfo(k, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof pmem, &pmem, NULL),
      CL_SUCCESS);
  size_t gws[3];
  CHECK_EQ_INT(
      clGetKernelWorkGroupInfo(k, device, CL_KERNEL_GLOBAL_WORK_SIZE, sizeof gws, gws, NULL),
      CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetKernelWorkGroupInfo(k, (cl_device_id)context, CL_KERNEL_WORK_GROUP_SIZE,
                                        sizeof wg, &wg, NULL),
               CL_INVALID_DEVICE);
  CHECK_EQ_INT(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_WORK_GROUP_SIZE, 1, &wg, NULL),
               CL_INVALID_VALUE);
  clGetKernelWorkGroupInfo(sk, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, NULL);
  CHECK(cwg[0] == 0 && cwg[1] == 0 && cwg[2] == 0);

  size_t wrong[2] = {4, 4}, wrong2[2] = {16, 1};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, g, wrong, 0, NULL, NULL),
               CL_INVALID_WORK_GROUP_SIZE);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, g, wrong2, 0, NULL, NULL),
               CL_INVALID_WORK_GROUP_SIZE);
  size_t g_bad[2] = {12, 2};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, g_bad, NULL, 0, NULL, NULL),
               CL_INVALID_WORK_GROUP_SIZE);
  /* A range of fewer dimensions has groups of 1 along the others, not 2. */
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, g, l, 0, NULL, NULL),
               CL_INVALID_WORK_GROUP_SIZE);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_WORK_GROUP_SIZE);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, g, l, 0, NULL, NULL), CL_SUCCESS);
  int out[32];
  clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  int good = 1;
  for (int i = 0; i < 32; i++)
    good &= out[i] == 107;
  if (!good)
    printf("  fixed: out[0..3] = %d %d %d %d, expected 107\n", out[0], out[1], out[2], out[3]);
  CHECK(good);
  /* With no local size, the required one is used. */
  clEnqueueFillBuffer(queue, m, &cval, sizeof cval, 0, sizeof out, 0, NULL, NULL);
  nv = 1;
  clSetKernelArg(k, 3, sizeof nv, &nv);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, g, NULL, 0, NULL, NULL), CL_SUCCESS);
  clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  good = 1;
  for (int i = 0; i < 32; i++)
    good &= out[i] == 101;
  CHECK(good);
  /* The kernel keeps its program alive. */
  clReleaseProgram(p);
  CHECK_EQ_INT(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof kp, &kp, NULL), CL_SUCCESS);
  clReleaseKernel(sk);
  clReleaseKernel(k);
  clReleaseMemObject(m);
  clReleaseMemObject(cm);
  CHECK_EQ_INT(clReleaseKernel((cl_kernel)context), CL_INVALID_KERNEL);
}

/* Compile and link errors (the working paths are in test/compiler). */
static void unsupported_paths(void) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &two_kernels, NULL, &err);
  REQUIRE(p);
  /* A source program is not a compiled object: it cannot be linked. */
  CHECK(clLinkProgram(context, 0, NULL, NULL, 1, &p, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
  CHECK_EQ_INT(clCompileProgram(p, 0, NULL, "-bogus-option", 0, NULL, NULL, NULL, NULL),
               CL_INVALID_COMPILER_OPTIONS);
  CHECK_EQ_INT(clCompileProgram(p, 0, NULL, NULL, 1, NULL, NULL, NULL, NULL), CL_INVALID_VALUE);
  /* No built-in kernels on this device. */
  CHECK(clCreateProgramWithBuiltInKernels(context, 1, &device, "foo", &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  clReleaseProgram(p);
}

/* Handles released once too often: pyopencl releases the program of a
 * failed clLinkProgram twice. Through the loader the second release must
 * get CL_INVALID_PROGRAM, not crash on freed memory; the same for every
 * other kind of object. */
static void released_handles_are_refused(void) {
  const char *src = "float helper(float v);\n"
                    "__kernel void k(__global float *x) { x[0] = helper(x[0]); }\n";
  cl_int err;
  cl_program obj = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  REQUIRE(obj);
  CHECK_EQ_INT(clCompileProgram(obj, 1, &device, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_program bad = clLinkProgram(context, 1, &device, "", 1, &obj, NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_LINK_PROGRAM_FAILURE);
  REQUIRE(bad);
  CHECK_EQ_INT(clReleaseProgram(bad), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseProgram(bad), CL_INVALID_PROGRAM);
  CHECK_EQ_INT(clRetainProgram(bad), CL_INVALID_PROGRAM);
  CHECK_EQ_INT(clReleaseProgram(obj), CL_SUCCESS);

  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  REQUIRE(buf);
  CHECK_EQ_INT(clReleaseMemObject(buf), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseMemObject(buf), CL_INVALID_MEM_OBJECT);
  cl_event ev = clCreateUserEvent(context, &err);
  REQUIRE(ev);
  CHECK_EQ_INT(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseEvent(ev), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseEvent(ev), CL_INVALID_EVENT);
  cl_program p = clCreateProgramWithSource(context, 1, &two_kernels, NULL, &err);
  REQUIRE(p);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "", NULL, NULL), CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "scale", &err);
  REQUIRE(k);
  CHECK_EQ_INT(clReleaseKernel(k), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseKernel(k), CL_INVALID_KERNEL);
  clReleaseProgram(p);
}

int main(void) {
  api_setup();
  RUN(build_and_info);
  RUN(create_with_source_errors);
  RUN(build_failure_log);
  RUN(deep_expression_builds);
  RUN(build_options);
  RUN(defines);
  RUN(binaries);
  RUN(binaries_of_every_kind);
  RUN(kernel_arg_info_availability);
  RUN(kernels);
  RUN(unsupported_paths);
  RUN(two_live_programs);
  RUN(corrupted_binaries);
  RUN(released_handles_are_refused);
  api_teardown();
  CHECK_EXIT();
}
