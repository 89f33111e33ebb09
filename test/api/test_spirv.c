/* SPIR-V programs through the loader (cl_khr_il_program, OpenCL 2.1's
 * clCreateProgramWithIL): modules made at test time with clang-15 and the
 * SPIR-V/LLVM translator, or assembled with spirv-as; the kernel runs and
 * agrees with the same source built as OpenCL C; CL_PROGRAM_IL gives the
 * module back; specialization constants reach the code, and a new value
 * builds new code; a SPIR-V module links with OpenCL C; and what is not a
 * module, or not one the translator reads, gets the specified error and a
 * build log that says why. */
#define CL_TARGET_OPENCL_VERSION 300
#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"
static char work[64];

/* Runs a shell command without the sanitizer runtime that make check-asan
 * or check-tsan preloads into this test: the environment is passed on
 * without LD_PRELOAD (a shell started with ThreadSanitizer's runtime
 * preloaded crashes). */
static int run_command(const char *command) {
  extern char **environ;
  size_t n = 0;
  while (environ[n])
    n++;
  char **env = calloc(n + 1, sizeof *env);
  if (!env) return 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11)) env[k++] = environ[i];
  char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};
  pid_t pid;
  int status = -1;
  if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, env) == 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  free(env);
  int ok = status == 0;
  if (!ok) printf("# failed (status %d): %s\n", status, command);
  return ok;
}

/* The module of OpenCL C source, made as a SPIR-V producer would; NULL
 * when the tools fail. */
static unsigned char *spirv_of(const char *name, const char *source, const char *clang_flags,
                               size_t *size) {
  char path[256], command[1024];
  snprintf(path, sizeof path, "%s/%s.cl", work, name);
  FILE *f = fopen(path, "w");
  if (!f) return NULL;
  fputs(source, f);
  fclose(f);
  snprintf(command, sizeof command,
           "clang-15 -x cl -cl-std=CL1.2 -target spir64-unknown-unknown -emit-llvm -c %s "
           "-Xclang -finclude-default-header %s/%s.cl -o %s/%s.bc && "
           "llvm-spirv-15 %s/%s.bc -o %s/%s.spv",
           clang_flags, work, name, work, name, work, name, work, name);
  if (!run_command(command)) return NULL;
  snprintf(path, sizeof path, "%s/%s.spv", work, name);
  f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc((size_t)n);
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

static void print_log(cl_program p) {
  char log[4096] = "";
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
  printf("# build log:\n%s\n", log);
}

static const char *saxpy_source =
    "__kernel void saxpy(__global const float *x, __global float *y, float a,\n"
    "                    __local float *tile) {\n"
    "  size_t i = get_global_id(0), l = get_local_id(0);\n"
    "  tile[l] = x[i];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  float4 v = vload4(0, x);\n"
    "  y[i] = mad(a, tile[(l + 1) % get_local_size(0)], y[i]) + sin(v.y) * 0.0f;\n"
    "}\n";

/* Runs saxpy from p over n elements; the results in y. */
static void run_saxpy(cl_program p, float *y, size_t n) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, "saxpy", &err);
  REQUIRE(k);
  float *x = malloc(n * sizeof *x);
  REQUIRE(x);
  for (size_t i = 0; i < n; i++) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }
  cl_mem bx =
      clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *x, x, &err);
  cl_mem by =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *y, y, &err);
  float a = 2.0f;
  size_t local = 64;
  clSetKernelArg(k, 0, sizeof bx, &bx);
  clSetKernelArg(k, 1, sizeof by, &by);
  clSetKernelArg(k, 2, sizeof a, &a);
  clSetKernelArg(k, 3, local * sizeof(float), NULL);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, &local, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, by, CL_TRUE, 0, n * sizeof *y, y, 0, NULL, NULL),
               CL_SUCCESS);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseKernel(k);
  free(x);
}

static void kernel_from_spirv_matches_opencl_c(void) {
  enum { N = 4096 };
  static float from_source[N], from_spirv[N];
  cl_int err;
  cl_program src = clCreateProgramWithSource(context, 1, &saxpy_source, NULL, &err);
  CHECK_EQ_INT(clBuildProgram(src, 1, &device, "", NULL, NULL), CL_SUCCESS);
  run_saxpy(src, from_source, N);
  clReleaseProgram(src);
  const char *levels[] = {"-O0 -Xclang -disable-O0-optnone", "-O2"};
  for (int l = 0; l < 2; l++) {
    size_t size = 0;
    unsigned char *il = spirv_of("saxpy", saxpy_source, levels[l], &size);
    REQUIRE(il);
    cl_program p = clCreateProgramWithIL(context, il, size, &err);
    CHECK_EQ_INT(err, CL_SUCCESS);
    REQUIRE(p);
    err = clBuildProgram(p, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) print_log(p);
    CHECK_EQ_INT(err, CL_SUCCESS);
    /* The module, byte for byte; no source. */
    size_t got = 0;
    CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &got), CL_SUCCESS);
    CHECK_EQ_INT(got, size);
    unsigned char *back = malloc(size);
    REQUIRE(back);
    clGetProgramInfo(p, CL_PROGRAM_IL, size, back, NULL);
    CHECK(!memcmp(back, il, size));
    free(back);
    char text[8] = "x";
    CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_SOURCE, sizeof text, text, NULL), CL_SUCCESS);
    CHECK(text[0] == 0);
    /* Argument types as the kernel declares them. */
    cl_kernel k = clCreateKernel(p, "saxpy", &err);
    REQUIRE(k);
    cl_kernel_arg_address_qualifier q = 0;
    clGetKernelArgInfo(k, 3, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, NULL);
    CHECK_EQ_INT(q, CL_KERNEL_ARG_ADDRESS_LOCAL);
    clReleaseKernel(k);
    run_saxpy(p, from_spirv, N);
    int same = 0;
    for (int i = 0; i < N; i++)
      same += from_spirv[i] == from_source[i];
    CHECK_EQ_INT(same, N);
    clReleaseProgram(p);
    free(il);
  }
  /* The extension's name for the call, for 1.2 programs. */
  CHECK(clGetExtensionFunctionAddressForPlatform(platform, "clCreateProgramWithILKHR") != NULL);
}

/* A kernel storing three specialization constants: an int (SpecId 3,
 * default 42), a float (SpecId 5, default 1.5) and an 8-bit one (SpecId 7,
 * default 3, result id 8: an 8-bit type's width word equals it, which once
 * hid it), and a plain 7. */
static const char *spec_module_text = "OpCapability Addresses\n"
                                      "OpCapability Linkage\n"
                                      "OpCapability Kernel\n"
                                      "OpCapability Int64\n"
                                      "%1 = OpExtInstImport \"OpenCL.std\"\n"
                                      "OpMemoryModel Physical64 OpenCL\n"
                                      "OpEntryPoint Kernel %k \"k\"\n"
                                      "OpDecorate %int_42 SpecId 3\n"
                                      "OpDecorate %float_1_5 SpecId 5\n"
                                      "OpDecorate %8 SpecId 7\n"
                                      "%uint = OpTypeInt 32 0\n"
                                      "%ulong = OpTypeInt 64 0\n"
                                      "%int_42 = OpSpecConstant %uint 42\n"
                                      "%ulong_1 = OpConstant %ulong 1\n"
                                      "%uint_7 = OpConstant %uint 7\n"
                                      "%void = OpTypeVoid\n"
                                      "%p_uint = OpTypePointer CrossWorkgroup %uint\n"
                                      "%float = OpTypeFloat 32\n"
                                      "%p_float = OpTypePointer CrossWorkgroup %float\n"
                                      "%uchar = OpTypeInt 8 0\n"
                                      "%p_uchar = OpTypePointer CrossWorkgroup %uchar\n"
                                      "%fn = OpTypeFunction %void %p_uint %p_float %p_uchar\n"
                                      "%float_1_5 = OpSpecConstant %float 1.5\n"
                                      "%8 = OpSpecConstant %uchar 3\n"
                                      "%k = OpFunction %void None %fn\n"
                                      "%out = OpFunctionParameter %p_uint\n"
                                      "%f = OpFunctionParameter %p_float\n"
                                      "%c = OpFunctionParameter %p_uchar\n"
                                      "%entry = OpLabel\n"
                                      "OpStore %out %int_42 Aligned 4\n"
                                      "%second = OpInBoundsPtrAccessChain %p_uint %out %ulong_1\n"
                                      "OpStore %second %uint_7 Aligned 4\n"
                                      "OpStore %f %float_1_5 Aligned 4\n"
                                      "OpStore %c %8 Aligned 1\n"
                                      "OpReturn\n"
                                      "OpFunctionEnd\n";

static void run_spec_kernel(cl_program p, cl_uint out[2], float *f, cl_uchar *c) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, "k", &err);
  REQUIRE(k);
  cl_mem bo = clCreateBuffer(context, CL_MEM_READ_WRITE, 2 * sizeof(cl_uint), NULL, &err);
  cl_mem bf = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float), NULL, &err);
  cl_mem bc = clCreateBuffer(context, CL_MEM_READ_WRITE, 1, NULL, &err);
  clSetKernelArg(k, 0, sizeof bo, &bo);
  clSetKernelArg(k, 1, sizeof bf, &bf);
  clSetKernelArg(k, 2, sizeof bc, &bc);
  size_t one = 1;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &one, NULL, 0, NULL, NULL), CL_SUCCESS);
  clEnqueueReadBuffer(queue, bo, CL_TRUE, 0, 2 * sizeof(cl_uint), out, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, bf, CL_TRUE, 0, sizeof(float), f, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, bc, CL_TRUE, 0, 1, c, 0, NULL, NULL);
  clReleaseMemObject(bo);
  clReleaseMemObject(bf);
  clReleaseMemObject(bc);
  clReleaseKernel(k);
}

static void specialization_constants_reach_the_code(void) {
  char path[256], command[512];
  snprintf(path, sizeof path, "%s/spec.spvasm", work);
  FILE *f = fopen(path, "w");
  REQUIRE(f);
  fputs(spec_module_text, f);
  fclose(f);
  snprintf(command, sizeof command, "spirv-as --target-env spv1.0 %s/spec.spvasm -o %s/spec.spv",
           work, work);
  REQUIRE(run_command(command));
  snprintf(path, sizeof path, "%s/spec.spv", work);
  f = fopen(path, "rb");
  REQUIRE(f);
  unsigned char il[4096];
  size_t size = fread(il, 1, sizeof il, f);
  fclose(f);
  cl_int err;
  cl_program p = clCreateProgramWithIL(context, il, size, &err);
  REQUIRE(p);
  /* The defaults first. */
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "", NULL, NULL), CL_SUCCESS);
  cl_uint out[2] = {0, 0};
  float value = 0;
  cl_uchar small = 0;
  run_spec_kernel(p, out, &value, &small);
  CHECK(out[0] == 42 && out[1] == 7 && value == 1.5f && small == 3);
  /* Then set: a new build has them. */
  cl_uint n = 100;
  float g = 2.25f;
  CHECK_EQ_INT(clSetProgramSpecializationConstant(p, 3, sizeof n, &n), CL_SUCCESS);
  CHECK_EQ_INT(clSetProgramSpecializationConstant(p, 5, sizeof g, &g), CL_SUCCESS);
  cl_uchar eight = 200;
  CHECK_EQ_INT(clSetProgramSpecializationConstant(p, 7, sizeof eight, &eight), CL_SUCCESS);
  CHECK_EQ_INT(clSetProgramSpecializationConstant(p, 9, sizeof n, &n), CL_INVALID_SPEC_ID);
  CHECK_EQ_INT(clSetProgramSpecializationConstant(p, 3, 8, &n), CL_INVALID_VALUE);
  CHECK_EQ_INT(clSetProgramSpecializationConstant(p, 3, sizeof n, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "", NULL, NULL), CL_SUCCESS);
  run_spec_kernel(p, out, &value, &small);
  CHECK(out[0] == 100 && out[1] == 7 && value == 2.25f && small == 200);
  /* Another value is other code, not the cached build of the first. */
  n = 200;
  CHECK_EQ_INT(clSetProgramSpecializationConstant(p, 3, sizeof n, &n), CL_SUCCESS);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "", NULL, NULL), CL_SUCCESS);
  run_spec_kernel(p, out, &value, &small);
  CHECK_EQ_INT(out[0], 200);
  clReleaseProgram(p);
  /* A program not made from IL has none. */
  const char *src = "__kernel void k(__global int *p) { p[0] = 1; }";
  cl_program s = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  CHECK_EQ_INT(clSetProgramSpecializationConstant(s, 3, sizeof n, &n), CL_INVALID_PROGRAM);
  clReleaseProgram(s);
}

static const char *caller_source = "float scale(float x);\n"
                                   "__kernel void apply(__global float *p) { p[get_global_id(0)] = "
                                   "scale(p[get_global_id(0)]); }\n";

static void spirv_links_with_opencl_c(void) {
  size_t size = 0;
  unsigned char *il = spirv_of("caller", caller_source, "-O0 -Xclang -disable-O0-optnone", &size);
  REQUIRE(il);
  cl_int err;
  cl_program from_il = clCreateProgramWithIL(context, il, size, &err);
  free(il);
  REQUIRE(from_il);
  err = clCompileProgram(from_il, 1, &device, "", 0, NULL, NULL, NULL, NULL);
  if (err != CL_SUCCESS) print_log(from_il);
  CHECK_EQ_INT(err, CL_SUCCESS);
  const char *helper = "float scale(float x) { return x * 3.0f + 1.0f; }\n";
  cl_program from_source = clCreateProgramWithSource(context, 1, &helper, NULL, &err);
  CHECK_EQ_INT(clCompileProgram(from_source, 1, &device, "", 0, NULL, NULL, NULL, NULL),
               CL_SUCCESS);
  cl_program both[2] = {from_il, from_source};
  cl_program linked = clLinkProgram(context, 1, &device, "", 2, both, NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(linked);
  cl_kernel k = clCreateKernel(linked, "apply", &err);
  REQUIRE(k);
  float data[64];
  for (int i = 0; i < 64; i++)
    data[i] = (float)i;
  cl_mem b =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
  clSetKernelArg(k, 0, sizeof b, &b);
  size_t n = 64;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS);
  clEnqueueReadBuffer(queue, b, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL);
  int right = 0;
  for (int i = 0; i < 64; i++)
    right += data[i] == (float)i * 3.0f + 1.0f;
  CHECK_EQ_INT(right, 64);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(linked);
  clReleaseProgram(from_il);
  clReleaseProgram(from_source);
}

/* Vectors the x86-64 calling convention passes otherwise than SPIR does:
 * a float8 through memory, a uchar4 as an integer, a float3 widened. */
static const char *vector_source =
    "__kernel void wide(__global const float8 *a, __global float8 *b,\n"
    "                   __global const uchar4 *c, __global float4 *d) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = sin(a[i]) + fmax(a[i], (float8)(0.5f));\n"
    "  d[i] = convert_float4(c[i]) + (float4)(dot(a[i].s012, a[i].s345));\n"
    "}\n";

static void run_wide(cl_program p, const float *a, const cl_uchar *c, float *b, float *d,
                     size_t n) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, "wide", &err);
  REQUIRE(k);
  cl_mem ba =
      clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 32, (void *)a, &err);
  cl_mem bb = clCreateBuffer(context, CL_MEM_READ_WRITE, n * 32, NULL, &err);
  cl_mem bc =
      clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, (void *)c, &err);
  cl_mem bd = clCreateBuffer(context, CL_MEM_READ_WRITE, n * 16, NULL, &err);
  cl_mem args[4] = {ba, bb, bc, bd};
  for (int i = 0; i < 4; i++)
    clSetKernelArg(k, (cl_uint)i, sizeof args[i], &args[i]);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, bb, CL_TRUE, 0, n * 32, b, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, bd, CL_TRUE, 0, n * 16, d, 0, NULL, NULL), CL_SUCCESS);
  for (int i = 0; i < 4; i++)
    clReleaseMemObject(args[i]);
  clReleaseKernel(k);
}

static void builtins_take_spirv_vector_arguments(void) {
  enum { N = 256 };
  static float a[N * 8], b[2][N * 8], d[2][N * 4];
  static cl_uchar c[N * 4];
  for (int i = 0; i < N * 8; i++)
    a[i] = (float)(i % 97) / 31.0f;
  for (int i = 0; i < N * 4; i++)
    c[i] = (cl_uchar)(i * 7);
  cl_int err;
  cl_program src = clCreateProgramWithSource(context, 1, &vector_source, NULL, &err);
  CHECK_EQ_INT(clBuildProgram(src, 1, &device, "", NULL, NULL), CL_SUCCESS);
  run_wide(src, a, c, b[0], d[0], N);
  clReleaseProgram(src);
  size_t size = 0;
  unsigned char *il = spirv_of("wide", vector_source, "-O0 -Xclang -disable-O0-optnone", &size);
  REQUIRE(il);
  cl_program p = clCreateProgramWithIL(context, il, size, &err);
  free(il);
  REQUIRE(p);
  err = clBuildProgram(p, 1, &device, "", NULL, NULL);
  if (err != CL_SUCCESS) print_log(p);
  CHECK_EQ_INT(err, CL_SUCCESS);
  run_wide(p, a, c, b[1], d[1], N);
  clReleaseProgram(p);
  CHECK(!memcmp(b[0], b[1], sizeof b[0]));
  CHECK(!memcmp(d[0], d[1], sizeof d[0]));
}

static void what_is_not_a_module_is_refused(void) {
  cl_int err;
  const char text[] = "__kernel void k() {}";
  CHECK(clCreateProgramWithIL(context, text, sizeof text, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateProgramWithIL(context, NULL, 20, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateProgramWithIL(context, text, 0, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateProgramWithIL(NULL, text, sizeof text, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_CONTEXT);
  /* A SPIR-V header over words that are no instructions: taken at
   * creation, refused by the build with the translator's reason. */
  cl_uint words[16] = {0x07230203, 0x00010000, 0, 100, 0};
  for (int i = 5; i < 16; i++)
    words[i] = 0xdeadbeef;
  cl_program p = clCreateProgramWithIL(context, words, sizeof words, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(p);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "", NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
  char log[4096] = "";
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
  CHECK(strstr(log, "SPIR-V") != NULL);
  cl_build_status status = CL_BUILD_SUCCESS;
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, NULL);
  CHECK_EQ_INT(status, CL_BUILD_ERROR);
  clReleaseProgram(p);
}

static void the_device_says_it_takes_spirv(void) {
  char text[4096] = "";
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_IL_VERSION, sizeof text, text, NULL), CL_SUCCESS);
  CHECK(strstr(text, "SPIR-V_1.0") != NULL);
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof text, text, NULL), CL_SUCCESS);
  CHECK(strstr(text, "cl_khr_il_program") != NULL);
  cl_name_version ils[8];
  size_t size = 0;
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_ILS_WITH_VERSION, sizeof ils, ils, &size),
               CL_SUCCESS);
  CHECK(size >= sizeof ils[0] && !strcmp(ils[0].name, "SPIR-V"));
}

int main(void) {
  api_setup();
  snprintf(work, sizeof work, "/tmp/aquila-spirv-XXXXXX");
  if (!mkdtemp(work)) {
    printf("not ok setup: no scratch directory\n");
    return 1;
  }
  RUN(the_device_says_it_takes_spirv);
  RUN(kernel_from_spirv_matches_opencl_c);
  RUN(specialization_constants_reach_the_code);
  RUN(spirv_links_with_opencl_c);
  RUN(builtins_take_spirv_vector_arguments);
  RUN(what_is_not_a_module_is_refused);
  char command[128];
  snprintf(command, sizeof command, "rm -rf %s", work);
  run_command(command);
  api_teardown();
  CHECK_EXIT();
}
