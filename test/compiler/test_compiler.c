/* The compiler and fat binaries end to end, through the ICD loader: build
 * logs, the kernel cache, loading binaries without a compiler, code object
 * selection (also next to GPU code objects), bitcode fallback, and barrier
 * kernels in both barrier modes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../api/api.h"

static const char *scale_source =
    "__kernel void scale(__global float *x, float f) { x[get_global_id(0)] *= f; }\n";

static char cache_dir[256];
static const char *build_dir;

static size_t count_cache_entries(void) {
  DIR *d = opendir(cache_dir);
  size_t n = 0;
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".fatbin")) n++;
  closedir(d);
  return n;
}

static cl_program build_source(const char *src, const char *options, cl_int *err) {
  cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, err);
  if (!p) return NULL;
  *err = clBuildProgram(p, 1, &device, options, NULL, NULL);
  return p;
}

/* Runs kernel k (scale) on 1024 ones with factor 3 and checks every
 * element. */
static int run_scale_kernel(cl_kernel k) {
  cl_int err;
  float host[1024];
  for (int i = 0; i < 1024; i++)
    host[i] = 1.0f;
  cl_mem buf = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  float f = 3.0f;
  size_t n = 1024;
  clSetKernelArg(k, 0, sizeof buf, &buf);
  clSetKernelArg(k, 1, sizeof f, &f);
  err = clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL);
  int ok = err == CL_SUCCESS;
  for (int i = 0; i < 1024 && ok; i++)
    ok = host[i] == 3.0f;
  clReleaseMemObject(buf);
  return ok;
}

/* Creates scale from p, runs it as run_scale_kernel does, releases it. */
static int run_scale(cl_program p) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, "scale", &err);
  if (!k) return 0;
  int ok = run_scale_kernel(k);
  clReleaseKernel(k);
  return ok;
}

static void build_log_has_line_and_column(void) {
  const char *src = "__kernel void broken(__global int *x) {\n  x[0] = undefined_name;\n}\n";
  cl_int err;
  cl_program p = build_source(src, "", &err);
  CHECK_EQ_INT(err, CL_BUILD_PROGRAM_FAILURE);
  char log[4096] = "";
  CHECK_EQ_INT(clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL),
               CL_SUCCESS);
  CHECK(strstr(log, ":2:10: error:") != NULL);
  CHECK(strstr(log, "undefined_name") != NULL);
  cl_build_status st;
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL);
  CHECK_EQ_INT(st, CL_BUILD_ERROR);
  clReleaseProgram(p);
}

static void unknown_option_is_invalid(void) {
  cl_int err;
  cl_program p = build_source(scale_source, "-cl-no-such-option", &err);
  CHECK_EQ_INT(err, CL_INVALID_BUILD_OPTIONS);
  char log[1024] = "";
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
  CHECK(strstr(log, "-cl-no-such-option") != NULL);
  clReleaseProgram(p);
}

static void cache_hit_and_invalidation(void) {
  size_t before = count_cache_entries();
  cl_int err;
  cl_program p = build_source(scale_source, "-DFIRST", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(run_scale(p));
  clReleaseProgram(p);
  /* The program (bitcode and metadata) and its kernel's machine code. */
  CHECK_EQ_INT(count_cache_entries(), before + 2);
  /* The same build again is served from the cache. */
  p = build_source(scale_source, "-DFIRST", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(run_scale(p));
  clReleaseProgram(p);
  CHECK_EQ_INT(count_cache_entries(), before + 2);
  /* Other options are another entry; no kernel made, no code. */
  p = build_source(scale_source, "-DSECOND", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  clReleaseProgram(p);
  CHECK_EQ_INT(count_cache_entries(), before + 3);
}

static void corrupt_cache_entry_is_rebuilt(void) {
  cl_int err;
  const char *src =
      "__kernel void scale(__global float *x, float f) { x[get_global_id(0)] *= f; }\n"
      "// corrupt-entry test\n";
  cl_program p = build_source(src, "", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  clReleaseProgram(p);
  /* Truncate every entry to half its size: the next build must not load it. */
  DIR *d = opendir(cache_dir);
  REQUIRE(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strstr(e->d_name, ".fatbin")) continue;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
    struct stat sb;
    if (stat(path, &sb) == 0) CHECK(truncate(path, sb.st_size / 2) == 0);
  }
  closedir(d);
  p = build_source(src, "", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(run_scale(p));
  clReleaseProgram(p);
}

static void cache_off(void) {
  setenv("AQUILA_CACHE", "0", 1);
  size_t before = count_cache_entries();
  cl_int err;
  cl_program p = build_source(scale_source, "-DCACHE_OFF", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  clReleaseProgram(p);
  CHECK_EQ_INT(count_cache_entries(), before);
  unsetenv("AQUILA_CACHE");
}

/* A binary with a code object for this CPU loads with no compiler at all.
 * Builds make machine code on demand, so that binary comes from a build
 * with AQUILA_CODEGEN=eager; one from a build on demand holds the bitcode,
 * and its kernels' code comes from the kernel cache, here with no compiler
 * either. */
static void binary_needs_no_compiler(void) {
  cl_int err;
  cl_program lazy = build_source(scale_source, "-DON_DEMAND", &err);
  REQUIRE(err == CL_SUCCESS);
  CHECK(run_scale(lazy)); /* its code is now in the kernel cache */
  size_t lazy_size = 0;
  clGetProgramInfo(lazy, CL_PROGRAM_BINARY_SIZES, sizeof lazy_size, &lazy_size, NULL);
  REQUIRE(lazy_size > 0);
  unsigned char *lazy_bin = malloc(lazy_size);
  clGetProgramInfo(lazy, CL_PROGRAM_BINARIES, sizeof lazy_bin, &lazy_bin, NULL);
  clReleaseProgram(lazy);
  setenv("AQUILA_CLANG", "/nonexistent/clang", 1);
  setenv("AQUILA_LLD", "/nonexistent/ld.lld", 1);
  const unsigned char *lazy_bins[1] = {lazy_bin};
  lazy = clCreateProgramWithBinary(context, 1, &device, &lazy_size, lazy_bins, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK_EQ_INT(clBuildProgram(lazy, 1, &device, "", NULL, NULL), CL_SUCCESS);
  CHECK(run_scale(lazy));
  clReleaseProgram(lazy);
  unsetenv("AQUILA_CLANG");
  unsetenv("AQUILA_LLD");
  free(lazy_bin);

  setenv("AQUILA_CODEGEN", "eager", 1);
  cl_program p = build_source(scale_source, "", &err);
  unsetenv("AQUILA_CODEGEN");
  REQUIRE(err == CL_SUCCESS);
  size_t size = 0;
  clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
  REQUIRE(size > 0);
  unsigned char *bin = malloc(size);
  clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
  clReleaseProgram(p);
  setenv("AQUILA_CLANG", "/nonexistent/clang", 1);
  setenv("AQUILA_LLD", "/nonexistent/ld.lld", 1);
  setenv("AQUILA_CACHE", "0", 1);
  const unsigned char *bins[1] = {bin};
  cl_int status = -1;
  p = clCreateProgramWithBinary(context, 1, &device, &size, bins, &status, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK_EQ_INT(status, CL_SUCCESS);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "", NULL, NULL), CL_SUCCESS);
  CHECK(run_scale(p));
  clReleaseProgram(p);
  /* From source, the missing compiler is reported as such. */
  p = build_source(scale_source, "", &err);
  CHECK_EQ_INT(err, CL_COMPILER_NOT_AVAILABLE);
  clReleaseProgram(p);
  unsetenv("AQUILA_CLANG");
  unsetenv("AQUILA_LLD");
  unsetenv("AQUILA_CACHE");
  free(bin);
}

static unsigned char *read_whole(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n + 1 : 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
  buf[n > 0 ? n : 0] = 0; /* text files read as strings */
  fclose(f);
  *size = (size_t)n;
  return buf;
}

/* Fat binaries made by clfatbin for other targets: an x86-64 level is
 * selected without the compiler; bitcode alone is compiled at load time. */
static void fatbin_target_selection(void) {
  char src_path[300], cmd[1200], bin_path[300];
  snprintf(src_path, sizeof src_path, "%s/scale.cl", cache_dir);
  FILE *f = fopen(src_path, "w");
  REQUIRE(f);
  fputs(scale_source, f);
  fclose(f);
  static const char *const targets[] = {"x86-64-v2", "bitcode"};
  for (int i = 0; i < 2; i++) {
    snprintf(bin_path, sizeof bin_path, "%s/scale-%s.bin", cache_dir, targets[i]);
    snprintf(cmd, sizeof cmd, "%s/clfatbin build --target %s -o %s %s", build_dir, targets[i],
             bin_path, src_path);
    REQUIRE(system(cmd) == 0);
    size_t size = 0;
    unsigned char *bin = read_whole(bin_path, &size);
    REQUIRE(bin);
    if (i == 0) {
      setenv("AQUILA_CLANG", "/nonexistent/clang", 1);
      setenv("AQUILA_LLD", "/nonexistent/ld.lld", 1);
    }
    const unsigned char *bins[1] = {bin};
    cl_int err, status = -1;
    cl_program p = clCreateProgramWithBinary(context, 1, &device, &size, bins, &status, &err);
    CHECK_EQ_INT(err, CL_SUCCESS);
    CHECK_EQ_INT(clBuildProgram(p, 1, &device, "", NULL, NULL), CL_SUCCESS);
    CHECK(run_scale(p));
    clReleaseProgram(p);
    unsetenv("AQUILA_CLANG");
    unsetenv("AQUILA_LLD");
    free(bin);
  }
}

/* A fat binary that also carries GPU code objects (AMD, NVIDIA) loads and
 * runs on the CPU device: the CPU code object is selected without the
 * compiler, and with GPU code and bitcode only, the bitcode is compiled at
 * load time. GPU code objects never reach the CPU agent. */
static void gpu_targets_run_on_cpu(void) {
  if (access("/usr/lib/clc/amdgcn--amdhsa.bc", R_OK) ||
      access("/usr/lib/clc/nvptx64--nvidiacl.bc", R_OK)) {
    printf("  libclc-19 is not installed: skipped\n");
    return;
  }
  char src_path[300], cmd[1400], bin_path[300];
  snprintf(src_path, sizeof src_path, "%s/scale-gpu.cl", cache_dir);
  FILE *f = fopen(src_path, "w");
  REQUIRE(f);
  fputs(scale_source, f);
  fclose(f);
  static const char *const cpu_targets[] = {"--target x86-64-v2", ""};
  for (int i = 0; i < 2; i++) {
    snprintf(bin_path, sizeof bin_path, "%s/scale-gpu-%d.bin", cache_dir, i);
    snprintf(cmd, sizeof cmd,
             "%s/clfatbin build --target amdgcn-amd-amdhsa--gfx90a --target nvptx64-nvidia-cuda "
             "%s -o %s %s",
             build_dir, cpu_targets[i], bin_path, src_path);
    REQUIRE(system(cmd) == 0);
    size_t size = 0;
    unsigned char *bin = read_whole(bin_path, &size);
    REQUIRE(bin);
    if (i == 0) {
      setenv("AQUILA_CLANG", "/nonexistent/clang", 1);
      setenv("AQUILA_LLD", "/nonexistent/ld.lld", 1);
    }
    const unsigned char *bins[1] = {bin};
    cl_int err, status = -1;
    cl_program p = clCreateProgramWithBinary(context, 1, &device, &size, bins, &status, &err);
    CHECK_EQ_INT(err, CL_SUCCESS);
    CHECK_EQ_INT(status, CL_SUCCESS);
    CHECK_EQ_INT(clBuildProgram(p, 1, &device, "", NULL, NULL), CL_SUCCESS);
    CHECK(run_scale(p));
    clReleaseProgram(p);
    unsetenv("AQUILA_CLANG");
    unsetenv("AQUILA_LLD");
    free(bin);
  }
}

/* A tiled reduction with barriers in a loop and in a called function, built
 * once per barrier mode (loops split at barriers, and fibers). */
static const char *reduce_source =
    "static void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "__kernel void reduce(__global const int *in, __global int *out, __local int *scratch) {\n"
    "  __local int bonus[4];\n"
    "  size_t l = get_local_id(0);\n"
    "  int priv[3] = {1, 2, 3};\n"
    "  if (l < 4) bonus[l] = (int)l;\n"
    "  scratch[l] = in[get_global_id(0)] + priv[l % 3];\n"
    "  sync();\n"
    "  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "    if (l < s) scratch[l] += scratch[l + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0) out[get_group_id(0)] = scratch[0] + bonus[3];\n"
    "}\n";

static void check_reduce(const char *mode) {
  /* Kept until the kernel has run: its machine code is made at its first
   * launch, under the environment of that moment. */
  setenv("AQUILA_BARRIERS", mode, 1);
  cl_int err;
  cl_program p = build_source(reduce_source, "", &err);
  if (err != CL_SUCCESS) unsetenv("AQUILA_BARRIERS");
  REQUIRE(err == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "reduce", &err);
  REQUIRE(k);
  enum { N = 4096, WG = 128 };
  int in[N], out[N / WG];
  for (int i = 0; i < N; i++)
    in[i] = i % 13;
  cl_mem bi = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
  cl_mem bo = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  clSetKernelArg(k, 0, sizeof bi, &bi);
  clSetKernelArg(k, 1, sizeof bo, &bo);
  clSetKernelArg(k, 2, WG * sizeof(int), NULL);
  size_t g = N, l = WG;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, bo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
               CL_SUCCESS);
  unsetenv("AQUILA_BARRIERS");
  for (int grp = 0; grp < N / WG; grp++) {
    int expect = 3;
    for (int i = 0; i < WG; i++)
      expect += in[grp * WG + i] + 1 + i % 3;
    CHECK_EQ_INT(out[grp], expect);
  }
  clReleaseMemObject(bi);
  clReleaseMemObject(bo);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

static void barriers_split_into_loops(void) {
  check_reduce("loops");
}

static void barriers_as_fibers(void) {
  check_reduce("fibers");
}

/* printf output, vectors included, is in standard output when clFinish
 * returns: redirect it to a file and read it back. */
static void printf_output_is_flushed_at_completion(void) {
  const char *src =
      "__kernel void say(int x) {\n"
      "  if (get_global_id(0) == 1)\n"
      "    printf(\"x=%d f=%.2f s=%s v=%v4hld d=%v2lf\\n\", x, 0.5f, \"ok\", (int4)(1, -2, 3, 4),\n"
      "           (double2)(1.5, 2.5));\n"
      /* What C's printf("%s\n", s) would become puts(s) (piglit's build test). */
      "  if (get_global_id(0) == 2) printf(\"%s\\n\", \"two\");\n"
      "}\n";
  cl_int err;
  cl_program p = build_source(src, "", &err);
  REQUIRE(err == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "say", &err);
  REQUIRE(k);
  int x = 7;
  clSetKernelArg(k, 0, sizeof x, &x);
  char path[300];
  snprintf(path, sizeof path, "%s/printf.out", cache_dir);
  fflush(stdout);
  int saved = dup(1);
  FILE *f = fopen(path, "w");
  REQUIRE(f && saved >= 0);
  dup2(fileno(f), 1);
  size_t g = 4;
  cl_int enq = clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL);
  clFinish(queue);
  char got[256] = "";
  FILE *r = fopen(path, "r");
  size_t n = r ? fread(got, 1, sizeof got - 1, r) : 0;
  got[n] = 0;
  if (r) fclose(r);
  dup2(saved, 1);
  close(saved);
  fclose(f);
  CHECK_EQ_INT(enq, CL_SUCCESS);
  const char *want = "x=7 f=0.50 s=ok v=1,-2,3,4 d=1.500000,2.500000\ntwo\n";
  CHECK(!strcmp(got, want));
  if (strcmp(got, want)) printf("  got: %s\n", got);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* clCompileProgram with an embedded header, clLinkProgram of two objects,
 * a library in between, and a link that cannot resolve a function. */
static void compile_and_link(void) {
  const char *header_src = "#define FACTOR 3.0f\nfloat times(float v);\n";
  const char *helper_src =
      "#include \"inc/factor.h\"\nfloat times(float v) { return v * FACTOR; }\n";
  const char *kernel_src =
      "#include \"inc/factor.h\"\n"
      "__kernel void scale(__global float *x, float f) {\n"
      "  x[get_global_id(0)] = times(x[get_global_id(0)]) * f / FACTOR * 3.0f / f;\n"
      "}\n";
  cl_int err;
  cl_program header = clCreateProgramWithSource(context, 1, &header_src, NULL, &err);
  cl_program helper = clCreateProgramWithSource(context, 1, &helper_src, NULL, &err);
  cl_program kernel = clCreateProgramWithSource(context, 1, &kernel_src, NULL, &err);
  const char *names[1] = {"inc/factor.h"};
  CHECK_EQ_INT(clCompileProgram(helper, 1, &device, "", 1, &header, names, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clCompileProgram(kernel, 1, &device, "", 1, &header, names, NULL, NULL), CL_SUCCESS);
  cl_program_binary_type type = 0;
  clGetProgramBuildInfo(kernel, device, CL_PROGRAM_BINARY_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
  /* helper becomes a library, then is linked with the kernel's object. */
  cl_program lib =
      clLinkProgram(context, 1, &device, "-create-library", 1, &helper, NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  clGetProgramBuildInfo(lib, device, CL_PROGRAM_BINARY_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_PROGRAM_BINARY_TYPE_LIBRARY);
  cl_program inputs[2] = {kernel, lib};
  cl_program exe = clLinkProgram(context, 1, &device, "", 2, inputs, NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  clGetProgramBuildInfo(exe, device, CL_PROGRAM_BINARY_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
  CHECK(run_scale(exe));
  /* The kernel's object alone leaves times() unresolved. */
  cl_program bad = clLinkProgram(context, 1, &device, "", 1, &kernel, NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_LINK_PROGRAM_FAILURE);
  char log[2048] = "";
  if (bad) clGetProgramBuildInfo(bad, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
  CHECK(strstr(log, "times") != NULL);
  /* Unknown link options and executables as inputs are refused. */
  CHECK(clLinkProgram(context, 1, &device, "-bogus", 1, &kernel, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_LINKER_OPTIONS);
  CHECK(clLinkProgram(context, 1, &device, "", 1, &exe, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
  if (bad) clReleaseProgram(bad);
  clReleaseProgram(exe);
  clReleaseProgram(lib);
  clReleaseProgram(kernel);
  clReleaseProgram(helper);
  clReleaseProgram(header);
}

/* C99 inline functions (`inline` alone: an inline definition, no external
 * one), as shared OpenCL headers write them (Random123 in pyopencl): calls to
 * them resolve in a build, and in compile + link where two objects include
 * the same header. `extern inline` is an external definition, as in C99. */
static void c99_inline_functions(void) {
  const char *header_src = "inline float twice(float v) { return 2.0f * v; }\n"
                           "static inline float minus_one(float v) { return v - 1.0f; }\n";
  const char *build_src =
      "inline float twice(float v) { return 2.0f * v; }\n"
      "static inline float half_of(float v) { return 0.5f * v; }\n"
      "extern inline float plus_one(float v) { return v + 1.0f; }\n"
      "__kernel void scale(__global float *x, float f) {\n"
      "  size_t i = get_global_id(0); x[i] = half_of(twice(x[i]) * f) + plus_one(0.0f) - 1.0f;\n"
      "}\n";
  cl_int err;
  cl_program p = build_source(build_src, "", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(run_scale(p));
  clReleaseProgram(p);

  const char *helper_src = "#include \"r123.h\"\nfloat helper(float v) { return twice(v); }\n";
  const char *kernel_src = "#include \"r123.h\"\nfloat helper(float v);\n"
                           "__kernel void scale(__global float *x, float f) {\n"
                           "  size_t i = get_global_id(0);\n"
                           "  x[i] = minus_one(1.0f + helper(x[i]) * f / twice(1.0f));\n"
                           "}\n";
  cl_program header = clCreateProgramWithSource(context, 1, &header_src, NULL, &err);
  cl_program objs[2] = {clCreateProgramWithSource(context, 1, &helper_src, NULL, &err),
                        clCreateProgramWithSource(context, 1, &kernel_src, NULL, &err)};
  const char *names[1] = {"r123.h"};
  for (int i = 0; i < 2; i++)
    CHECK_EQ_INT(clCompileProgram(objs[i], 1, &device, "", 1, &header, names, NULL, NULL),
                 CL_SUCCESS);
  cl_program exe = clLinkProgram(context, 1, &device, "", 2, objs, NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  if (exe && err != CL_SUCCESS) {
    char log[2048] = "";
    clGetProgramBuildInfo(exe, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    printf("  link log: %s\n", log);
  }
  if (exe) {
    CHECK(run_scale(exe));
    clReleaseProgram(exe);
  }
  for (int i = 0; i < 2; i++)
    clReleaseProgram(objs[i]);
  clReleaseProgram(header);
}

/* `__kernel` spelled through a macro, from the build options or from an
 * included header (hashcat's KERNEL_FQ): the function is still a kernel. */
/* Runs fill() of static_local_arrays_of_successive_programs; 0 if wrong. */
static int run_fill(cl_kernel k, cl_mem out, int round) {
  enum { GROUP = 64, N = GROUP * 64 };
  clSetKernelArg(k, 0, sizeof out, &out);
  clSetKernelArg(k, 1, GROUP * sizeof(cl_int), NULL);
  size_t global = N, local = GROUP;
  static cl_int host[N];
  if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS ||
      clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL) != CL_SUCCESS)
    return 0;
  for (int i = 0; i < N; i++) {
    int next = (i % GROUP + 1) % GROUP;
    int want = next * (round + 1) + (int)((float)next * 0.5f + (float)round) - next;
    if (host[i] != want) {
      printf("  round %d item %d: %d, expected %d\n", round, i, host[i], want);
      return 0;
    }
  }
  return 1;
}

/* Static __local arrays of programs built, run and released while others
 * live and run, on every compute unit: each program's arrays must be its
 * own (gpyfft's suite read one kernel's __local array through another's
 * when they were thread-local storage of code objects, some unloaded), and a
 * static array and a __local argument must not overlap. */
static void static_local_arrays_of_successive_programs(void) {
  cl_int err;
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * 64 * sizeof(cl_int), NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_program programs[3] = {0};
  cl_kernel kernels[3] = {0};
  int ok = 1;
  for (int round = 0; round < 48 && ok; round++) {
    char src[1400];
    snprintf(src, sizeof src,
             "__kernel void fill(__global int *out, __local int *arg) {\n"
             "  __local int ids[%d];\n"
             "  __local float scaled[%d];\n"
             "  int l = get_local_id(0);\n"
             "  ids[l] = l * %d;\n"
             "  scaled[l] = (float)l * 0.5f + %d.0f;\n"
             "  arg[l] = -l;\n"
             "  barrier(CLK_LOCAL_MEM_FENCE);\n"
             "  int n = get_local_size(0), next = (l + 1) %% n;\n"
             "  out[get_global_id(0)] = ids[next] + (int)scaled[next] + arg[next];\n"
             "}\n",
             64 + round, 64 + 2 * round, round + 1, round);
    int slot = round % 3;
    if (kernels[slot]) clReleaseKernel(kernels[slot]);
    if (programs[slot]) clReleaseProgram(programs[slot]);
    programs[slot] = build_source(src, "", &err);
    CHECK_EQ_INT(err, CL_SUCCESS);
    if (err != CL_SUCCESS) break;
    kernels[slot] = clCreateKernel(programs[slot], "fill", &err);
    CHECK_EQ_INT(err, CL_SUCCESS);
    /* this round's kernel, then the two older ones still alive */
    for (int age = 0; age < 3 && ok && age <= round; age++)
      ok = run_fill(kernels[(round - age) % 3], out, round - age);
  }
  CHECK(ok);
  for (int i = 0; i < 3; i++) {
    if (kernels[i]) clReleaseKernel(kernels[i]);
    if (programs[i]) clReleaseProgram(programs[i]);
  }
  clReleaseMemObject(out);
}

/* A kernel that writes past its __local array, but within the device's
 * local memory size (undefined behaviour that real programs have): the
 * writes stay inside the compute units' group segments, so the host heap
 * and later kernels are unharmed. */
static void local_overrun_stays_in_group_memory(void) {
  const char *src = "__kernel void overrun(__global int *out) {\n"
                    "  __local int a[16];\n"
                    "  int l = get_local_id(0);\n"
                    "  for (int i = l; i < 8192; i += get_local_size(0)) a[i] = 0x5a5a5a5a;\n"
                    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                    "  out[get_global_id(0)] = a[l & 15];\n"
                    "}\n"
                    "__kernel void bigger(__global int *out, __local int *tmp) {\n"
                    "  int l = get_local_id(0);\n"
                    "  tmp[l] = l;\n"
                    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                    "  out[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];\n"
                    "}\n";
  cl_int err;
  cl_program p = build_source(src, "", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "overrun", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096 * sizeof(cl_int), NULL, &err);
  clSetKernelArg(k, 0, sizeof out, &out);
  size_t global = 4096, local = 64;
  for (int round = 0; round < 4; round++) {
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
    /* the heap still works: blocks of every size, written and freed */
    for (int i = 1; i < 2000; i++) {
      void *block = malloc((size_t)i * 37);
      CHECK(block != NULL);
      memset(block, i, (size_t)i * 37);
      free(block);
    }
  }
  static cl_int host[4096];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(host[0], 0x5a5a5a5a);
  /* a kernel that needs more group memory than any before it */
  cl_kernel bigger = clCreateKernel(p, "bigger", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  clSetKernelArg(bigger, 0, sizeof out, &out);
  clSetKernelArg(bigger, 1, 16384, NULL);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, bigger, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(host[1], 62);
  clReleaseKernel(bigger);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
  cl_program later = build_source("__kernel void scale(__global float *x, float f) {\n"
                                  "  x[get_global_id(0)] *= f;\n}\n",
                                  "", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(run_scale(later));
  clReleaseProgram(later);
}

static void kernel_qualifier_from_a_macro(void) {
  cl_int err;
  cl_program p = build_source("KFQ void scale(__global float *x, float f) {\n"
                              "  x[get_global_id(0)] *= f;\n"
                              "}\n",
                              "-DKFQ=__kernel", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(run_scale(p));
  clReleaseProgram(p);
  const char *header_src = "#define KERNEL_FQ __kernel\n";
  const char *src =
      "#include \"vendor.h\"\n"
      "KERNEL_FQ void scale(__global float *x, float f) { x[get_global_id(0)] *= f; }\n";
  cl_program header = clCreateProgramWithSource(context, 1, &header_src, NULL, &err);
  cl_program obj = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  const char *names[1] = {"vendor.h"};
  CHECK_EQ_INT(clCompileProgram(obj, 1, &device, "", 1, &header, names, NULL, NULL), CL_SUCCESS);
  cl_program exe = clLinkProgram(context, 1, &device, "", 1, &obj, NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  size_t num_kernels = 0;
  if (exe) clGetProgramInfo(exe, CL_PROGRAM_NUM_KERNELS, sizeof num_kernels, &num_kernels, NULL);
  CHECK(num_kernels == 1);
  if (exe) {
    CHECK(run_scale(exe));
    clReleaseProgram(exe);
  }
  clReleaseProgram(obj);
  clReleaseProgram(header);
}

/* Reduced from CLBlast's Xgemm: a loop whose body is a loop that runs once.
 * LLVM 19's InstCombine, run as a pipeline string, verified that it reached
 * a fixpoint here and raised a fatal error that ended the application. */
static void clblast_xgemm_loop_builds(void) {
  const char *src = "__kernel void k(__global const float *in, __global float *out) {\n"
                    "  float acc = 0.0f;\n"
                    "  for (int mi;;) {\n"
                    "    for (mi = 0; mi < 1; mi += 1) acc += in[mi];\n"
                    "    if (acc > 100.0f) break;\n"
                    "  }\n"
                    "  out[get_global_id(0)] = acc;\n"
                    "}\n";
  cl_int err;
  cl_program p = build_source(src, "", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_kernel k = p ? clCreateKernel(p, "k", &err) : NULL;
  REQUIRE(k);
  float in[1] = {30.0f}, out[64];
  cl_mem bin = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
  cl_mem bout = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof out, NULL, &err);
  clSetKernelArg(k, 0, sizeof bin, &bin);
  clSetKernelArg(k, 1, sizeof bout, &bout);
  size_t g = 64, l = 16;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, bout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < 64; i++)
    CHECK(out[i] == 120.0f);
  clReleaseMemObject(bin);
  clReleaseMemObject(bout);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* Writes an executable shell script to stand in for the clang driver. */
static void write_fake_clang(const char *path, const char *body) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "#!/bin/sh\n%s\n", body);
  fclose(f);
  chmod(path, 0755);
}

static void build_log_of(cl_program p, char *log, size_t size) {
  log[0] = 0;
  if (p) clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
}

/* The compiler runs in a helper process: when it crashes or hangs on a
 * program, that build fails with the reason in its log, the application
 * lives on, programs built before still run, and the next build works. */
static void compiler_crash_is_a_build_failure(void) {
  cl_int err;
  cl_program before = build_source(scale_source, "", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  char fake[300], log[4096];
  snprintf(fake, sizeof fake, "%s/crashing-clang", cache_dir);
  /* The driver's parent is the compiler process: this is it dying. (Not of
   * a SIGSEGV sent from outside: once clang has run in the process, LLVM's
   * handler takes SIGSEGV for a fault, which would fault again on return,
   * and carries on after one that was only sent.) */
  write_fake_clang(fake, "echo 'fatal: about to crash' >&2; kill -KILL $PPID; sleep 5");
  setenv("AQUILA_CLANG", fake, 1);
  cl_program p = build_source("__kernel void k(__global int *x) { x[0] = 1; }\n", "", &err);
  unsetenv("AQUILA_CLANG");
  CHECK_EQ_INT(err, CL_BUILD_PROGRAM_FAILURE);
  build_log_of(p, log, sizeof log);
  CHECK(strstr(log, "crashed (signal 9") != NULL);
  if (p) clReleaseProgram(p);
  CHECK(run_scale(before));
  cl_program after = build_source(scale_source, "-DAFTER_THE_CRASH", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(run_scale(after));
  clReleaseProgram(after);
  clReleaseProgram(before);
}

/* Scratch directories (aquila-build-<pid>-XXXXXX under this test's
 * TMPDIR) of compiler processes that have ended: those a killed process
 * left are the application's to remove. */
static int scratch_dirs_of_ended_processes(void) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s/tmp", cache_dir);
  DIR *d = opendir(tmp);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    long pid;
    if (sscanf(e->d_name, "aquila-build-%ld-", &pid) == 1 && kill((pid_t)pid, 0) != 0) {
      printf("  left behind: %s\n", e->d_name);
      n++;
    }
  }
  if (d) closedir(d);
  return n;
}

/* Clang 19's front end crashes on this program (a vector literal around a
 * statement expression whose value depends on an undeclared name): the
 * build fails with the program's real error in the log, as for any typo.
 * The compiler process it ended leaves no scratch files. */
static void front_end_crash_keeps_the_diagnostics(void) {
  const char *src = "__kernel void k(__global int *p) {\n"
                    "  *p = (int4)(({ int4 a = 1; undeclared_t ? a : a; })).z;\n"
                    "}\n";
  cl_int err;
  cl_program p = build_source(src, "", &err);
  CHECK_EQ_INT(err, CL_BUILD_PROGRAM_FAILURE);
  char log[4096];
  build_log_of(p, log, sizeof log);
  CHECK(strstr(log, ":2:30: error: use of undeclared identifier 'undeclared_t'") != NULL);
  CHECK(strstr(log, "failed to start") == NULL);
  if (p) clReleaseProgram(p);
  CHECK_EQ_INT(scratch_dirs_of_ended_processes(), 0);
  cl_program after = build_source(scale_source, "-DAFTER_THE_FRONT_END_CRASH", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(run_scale(after));
  clReleaseProgram(after);
}

static void compiler_hang_is_stopped(void) {
  char fake[300], log[4096];
  snprintf(fake, sizeof fake, "%s/hanging-clang", cache_dir);
  write_fake_clang(fake, "exec sleep 60");
  setenv("AQUILA_CLANG", fake, 1);
  setenv("AQUILA_COMPILE_TIMEOUT", "2", 1);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cl_int err;
  cl_program p = build_source("__kernel void k(__global int *x) { x[0] = 2; }\n", "", &err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  unsetenv("AQUILA_CLANG");
  unsetenv("AQUILA_COMPILE_TIMEOUT");
  CHECK_EQ_INT(err, CL_BUILD_PROGRAM_FAILURE);
  CHECK(t1.tv_sec - t0.tv_sec < 30);
  build_log_of(p, log, sizeof log);
  CHECK(strstr(log, "did not finish within 2 s") != NULL);
  if (p) clReleaseProgram(p);
  cl_program after = build_source(scale_source, "-DAFTER_THE_HANG", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(run_scale(after));
  clReleaseProgram(after);
}

/* What the compiler process prints (AQUILA_DEBUG_REGIONS here) reaches the
 * application's standard error, as it did when the compiler ran in-process. */
static void compiler_diagnostics_reach_stderr(void) {
  char path[300];
  snprintf(path, sizeof path, "%s/stderr.txt", cache_dir);
  int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  REQUIRE(saved >= 0 && fd >= 0);
  fflush(stderr);
  dup2(fd, 2);
  close(fd);
  setenv("AQUILA_DEBUG_REGIONS", "1", 1);
  cl_int err;
  cl_program p =
      build_source("__kernel void regions_report(__global float *x, __local float *t) {\n"
                   "  t[get_local_id(0)] = x[get_global_id(0)];\n"
                   "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                   "  x[get_global_id(0)] += t[0];\n"
                   "}\n",
                   "", &err);
  /* The report comes with the kernel's machine code, made at its first
   * launch (or a query that needs the code). */
  cl_kernel k = p ? clCreateKernel(p, "regions_report", NULL) : NULL;
  cl_ulong private_size = 0;
  if (k)
    CHECK_EQ_INT(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_PRIVATE_MEM_SIZE,
                                          sizeof private_size, &private_size, NULL),
                 CL_SUCCESS);
  if (k) clReleaseKernel(k);
  unsetenv("AQUILA_DEBUG_REGIONS");
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  CHECK_EQ_INT(err, CL_SUCCESS);
  size_t size = 0;
  char *text = (char *)read_whole(path, &size);
  CHECK(text && strstr(text, "regions: regions_report.wi") != NULL);
  free(text);
  if (p) clReleaseProgram(p);
}

/* A small program's kernels get their code together, at the first launch
 * of one, in parts built side by side (codegen.c): one a kernel here. Each
 * runs right: with a __constant table and a function every part has its own
 * copy of, a kernel that calls another, and one with a barrier. */
static const char *parts_source =
    "__constant float weights[4] = {1.0f, 2.0f, 4.0f, 8.0f};\n"
    "float weigh(float v, int i) { return v * weights[i & 3]; }\n"
    "__kernel void part_a(__global float *x) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = weigh(x[i], (int)i);\n"
    "}\n"
    "__kernel void part_b(__global float *x) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = weigh(x[i], (int)i + 1) + 1.0f;\n"
    "}\n"
    "__kernel void part_c(__global float *x) { part_a(x); }\n"
    "__kernel void part_d(__global float *x, __local float *t) {\n"
    "  t[get_local_id(0)] = x[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  x[get_global_id(0)] = t[get_local_size(0) - 1 - get_local_id(0)];\n"
    "}\n";

/* In a child process, whose AQUILA_DEBUG=phases the runtime reads at its
 * start: builds parts_source, runs each kernel and checks every element. */
static int parts_child(void) {
  cl_int err;
  cl_program p = build_source(parts_source, "", &err);
  static const char *const names[] = {"part_a", "part_b", "part_c", "part_d"};
  cl_kernel k[4] = {0};
  for (int i = 0; i < 4 && p; i++)
    k[i] = clCreateKernel(p, names[i], NULL);
  int all_right = p && err == CL_SUCCESS && k[0] && k[1] && k[2] && k[3];
  static const float w[4] = {1.0f, 2.0f, 4.0f, 8.0f};
  for (int i = 0; i < 4 && all_right; i++) {
    float x[64];
    for (int j = 0; j < 64; j++)
      x[j] = (float)j;
    cl_mem buf = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
    size_t global = 64, local = 16;
    clSetKernelArg(k[i], 0, sizeof buf, &buf);
    if (i == 3) clSetKernelArg(k[i], 1, 16 * sizeof(float), NULL);
    err = clEnqueueNDRangeKernel(queue, k[i], 1, NULL, &global, &local, 0, NULL, NULL);
    if (err == CL_SUCCESS)
      err = clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL);
    clReleaseMemObject(buf);
    all_right = err == CL_SUCCESS;
    for (int j = 0; j < 64 && all_right; j++) {
      float want = i == 1   ? (float)j * w[(j + 1) & 3] + 1.0f
                   : i == 3 ? (float)(j / 16 * 16 + 15 - j % 16)
                            : (float)j * w[j & 3];
      if (x[j] != want) {
        printf("%s: x[%d] = %g, not %g\n", names[i], j, x[j], want);
        all_right = 0;
      }
    }
  }
  for (int i = 0; i < 4; i++)
    if (k[i]) clReleaseKernel(k[i]);
  if (p) clReleaseProgram(p);
  return all_right;
}

static void kernels_built_in_parts_side_by_side(void) {
  char dir[300], cmd[1400], path[340];
  snprintf(dir, sizeof dir, "%s/parts", cache_dir);
  mkdir(dir, 0700);
  snprintf(path, sizeof path, "%s/out.txt", dir);
  /* Four threads on any machine, one CPU or many. */
  snprintf(cmd, sizeof cmd,
           "AQUILA_DEBUG=phases AQUILA_CODEGEN_THREADS=4 AQUILA_CACHE_DIR=%s "
           "%s/test/compiler/test_compiler --parts-child >%s 2>&1",
           dir, build_dir, path);
  int status = system(cmd);
  size_t size = 0;
  char *text = (char *)read_whole(path, &size);
  int parts = 0;
  for (const char *t = text; t && (t = strstr(t, "(a part of its own thread)")); t++)
    parts++;
  CHECK_EQ_INT(status, 0);
  CHECK_EQ_INT(parts, 4);
  if (status != 0 || parts != 4) printf("  child's output:\n%s\n", text ? text : "");
  free(text);
}

/* Code is made at a kernel's first launch: a build succeeds without a
 * linker, and so does creating the kernel; its launch then fails with the
 * linker's message in the build log (and the application goes on), and
 * once the linker is back the same kernel's next launch makes its code and
 * runs. */
static void code_made_at_the_first_launch(void) {
  setenv("AQUILA_CACHE", "0", 1);
  setenv("AQUILA_LLD", "/nonexistent/ld", 1);
  cl_int err;
  cl_program p = build_source(scale_source, "-DNO_LINKER_YET", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_kernel k = p ? clCreateKernel(p, "scale", &err) : NULL;
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(k != NULL);
  float f = 3.0f;
  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE, 1024 * sizeof(float), NULL, &err);
  clSetKernelArg(k, 0, sizeof buf, &buf);
  clSetKernelArg(k, 1, sizeof f, &f);
  size_t n = 1024;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL),
               CL_INVALID_PROGRAM_EXECUTABLE);
  clReleaseMemObject(buf);
  char log[4096];
  build_log_of(p, log, sizeof log);
  CHECK(strstr(log, "linking the code object failed") != NULL);
  unsetenv("AQUILA_LLD");
  CHECK(run_scale_kernel(k));
  clReleaseKernel(k);
  CHECK(p && run_scale(p));
  unsetenv("AQUILA_CACHE");
  if (p) clReleaseProgram(p);
}

/* The binary of a program whose kernel has run carries that kernel's
 * machine code: a program made from it, with the kernel cache off and no
 * linker (making code would fail), runs the kernel; a kernel of a program
 * of more than 16 KB that never ran has no code in it, and its launch
 * fails as any kernel's without a linker. */
static void binaries_carry_machine_code(void) {
  setenv("AQUILA_CACHE", "0", 1);
  enum { PADDING = 17 * 1024 };
  static const char kernels[] =
      "__kernel void scale(__global float *x, float f) { x[get_global_id(0)] *= f; }\n"
      "__kernel void unused(__global float *x, float f) { x[get_global_id(0)] += f; }\n";
  char *src = malloc(PADDING + sizeof kernels + 8);
  REQUIRE(src);
  memcpy(src, "/*", 2);
  memset(src + 2, ' ', PADDING);
  memcpy(src + 2 + PADDING, "*/\n", 3);
  memcpy(src + 5 + PADDING, kernels, sizeof kernels);
  cl_int err;
  cl_program p = build_source(src, "-DCARRIED", &err);
  free(src);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(p && run_scale(p));
  size_t size = 0;
  if (p) clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
  unsigned char *binary = size ? malloc(size) : NULL;
  REQUIRE(binary);
  CHECK_EQ_INT(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL), CL_SUCCESS);
  clReleaseProgram(p);
  setenv("AQUILA_LLD", "/nonexistent/ld", 1);
  const unsigned char *bin = binary;
  cl_int status;
  cl_program q = clCreateProgramWithBinary(context, 1, &device, &size, &bin, &status, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  if (q) CHECK_EQ_INT(clBuildProgram(q, 1, &device, "", NULL, NULL), CL_SUCCESS);
  CHECK(q && run_scale(q));
  cl_kernel unused = q ? clCreateKernel(q, "unused", &err) : NULL;
  REQUIRE(unused);
  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(float), NULL, &err);
  float f = 1.0f;
  size_t n = 64;
  clSetKernelArg(unused, 0, sizeof buf, &buf);
  clSetKernelArg(unused, 1, sizeof f, &f);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, unused, 1, NULL, &n, NULL, 0, NULL, NULL),
               CL_INVALID_PROGRAM_EXECUTABLE);
  clReleaseMemObject(buf);
  clReleaseKernel(unused);
  unsetenv("AQUILA_LLD");
  if (q) clReleaseProgram(q);
  free(binary);
  unsetenv("AQUILA_CACHE");
}

/* Runs this program as "--NAME-child" with every kernel taken for the
 * quick tier, AQUILA_DEBUG on and a kernel cache of its own; returns what
 * it wrote to standard error (NULL if nothing could be read), and to
 * standard output in *out when out is not NULL. */
static char *run_tiers_child(const char *name, char **out) {
  char dir[300], log_path[340], out_path[340], cmd[1400];
  snprintf(dir, sizeof dir, "%s/%s", cache_dir, name);
  snprintf(log_path, sizeof log_path, "%s/%s-stderr.txt", cache_dir, name);
  snprintf(out_path, sizeof out_path, "%s/%s-stdout.txt", cache_dir, name);
  mkdir(dir, 0700);
  snprintf(cmd, sizeof cmd,
           "AQUILA_DEBUG=1 AQUILA_QUICK_TIER_MIN_INSTRUCTIONS=0 AQUILA_CACHE_DIR=%s "
           "%s/test/compiler/test_compiler --%s-child >%s 2>%s",
           dir, build_dir, name, out_path, log_path);
  CHECK_EQ_INT(system(cmd), 0);
  size_t size = 0;
  if (out) *out = (char *)read_whole(out_path, &size);
  char *text = (char *)read_whole(log_path, &size);
  CHECK(text != NULL);
  return text;
}

/* Whether this process's standard error (a file: run_tiers_child sends it
 * there) has text in it so far. */
static int own_stderr_has(const char *text) {
  int fd = open("/proc/self/fd/2", O_RDONLY);
  if (fd < 0) return 0;
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap + 1);
  ssize_t n;
  while (buf && (n = read(fd, buf + len, cap - len)) > 0) {
    len += (size_t)n;
    if (len == cap) {
      char *more = realloc(buf, 2 * cap + 1);
      if (!more) break;
      buf = more;
      cap *= 2;
    }
  }
  close(fd);
  int found = 0;
  if (buf) {
    buf[len] = 0;
    found = strstr(buf, text) != NULL;
  }
  free(buf);
  return found;
}

/* Tiers, in a child process of this test (AQUILA_DEBUG is read once per
 * process) with every kernel taken for a large one: the kernel's first
 * code is the quick tier's (scalar, not kept in the kernel cache), its
 * vector version is built in the background (kept in the cache) and
 * replaces it between launches of the same cl_kernel; every launch's
 * result is right. */
static int tiers_child(void) {
  cl_int err;
  cl_program p = build_source(scale_source, "-DTIERS", &err);
  cl_kernel k = p && err == CL_SUCCESS ? clCreateKernel(p, "scale", &err) : NULL;
  if (!k) return 0;
  int ok = 1, upgraded = 0;
  /* Launches go on until one has run the vector version (AQUILA_DEBUG
   * says so on standard error), so that the program is not released while
   * its build is under way (which drops the build). Not until the version
   * is in the kernel cache and a fixed time more: on a busy machine
   * (two spinning processes on two cores) loading it took longer than
   * that. Bounded: 60 s in all, as the build runs at nice 10 and a busy
   * machine leaves it a tenth of a core. */
  for (int i = 0; i < 3000 && ok && !upgraded; i++) {
    ok = run_scale_kernel(k);
    upgraded = own_stderr_has("kernel 'scale': launched with its vector version");
    usleep(20000);
  }
  if (!upgraded) printf("  no vector version within 60 s\n");
  clReleaseKernel(k);
  clReleaseProgram(p);
  return ok && upgraded;
}

static void quick_tier_first_then_the_vector_version(void) {
  char *child_out = NULL;
  char *text = run_tiers_child("tiers", &child_out);
  if (child_out && *child_out) printf("  child's stdout:\n%s", child_out);
  free(child_out);
  if (!text) return;
  const char *quick = strstr(text, "(quick tier: scalar code;");
  const char *ran_quick =
      strstr(text, "kernel 'scale': launched with its quick tier's scalar code");
  const char *replaced = strstr(text, "replaces the quick tier's scalar code");
  const char *ran_vector = strstr(text, "kernel 'scale': launched with its vector version");
  CHECK(quick && ran_quick && replaced && ran_vector);
  CHECK(quick < ran_quick && replaced < ran_vector);
  if (!(quick && ran_quick && replaced && ran_vector)) printf("  child's stderr:\n%s\n", text);
  free(text);
}

/* A short run: the program built, its kernel created and launched once,
 * and the process gone at once, before its vector version is built. */
static int short_run_child(void) {
  cl_int err;
  cl_program p = build_source(scale_source, "-DSHORT_RUN", &err);
  cl_kernel k = p && err == CL_SUCCESS ? clCreateKernel(p, "scale", &err) : NULL;
  if (!k) {
    printf("clCreateKernel: %d\n", err);
    return 0;
  }
  return run_scale_kernel(k);
}

/* A short program must not pay its build again on every run, whatever
 * tier ran (issue 48: an SDK sample's three kernels took 0.5 s on every
 * run, as it ended before their vector versions were built and quick code
 * was not cached). The second run has no compiler at all (AQUILA_COMPILER
 * names none): its kernel comes from the cache, and runs right. */
static void quick_code_is_cached_for_the_next_run(void) {
  char dir[300], cmd[1400];
  snprintf(dir, sizeof dir, "%s/short-run", cache_dir);
  mkdir(dir, 0700);
  for (int run = 0; run < 2; run++) {
    snprintf(cmd, sizeof cmd,
             "AQUILA_QUICK_TIER_MIN_INSTRUCTIONS=0 AQUILA_CACHE_DIR=%s %s "
             "%s/test/compiler/test_compiler --short-run-child >%s/run%d.txt 2>&1",
             dir, run ? "AQUILA_COMPILER=/nonexistent/aquila-compiler" : "", build_dir, dir, run);
    int status = system(cmd);
    if (status != 0) {
      char path[340];
      snprintf(path, sizeof path, "%s/run%d.txt", dir, run);
      size_t size = 0;
      char *text = (char *)read_whole(path, &size);
      printf("  run %d: status %d: %s\n", run + 1, status, text ? text : "");
      free(text);
    }
    CHECK_EQ_INT(status, 0);
  }
}

/* Scratch directories that processes killed outright left: a later
 * application's first compiler removes those whose process is gone and that
 * have not changed for an hour, and no other. */
static void stale_scratch_dirs_are_removed(void) {
  pid_t dead = fork();
  REQUIRE(dead >= 0);
  if (dead == 0) _exit(0);
  waitpid(dead, NULL, 0);
  char stale[400], recent[400], alive[400], file[440], dir[300], cmd[1400];
  snprintf(stale, sizeof stale, "%s/tmp/aquila-build-%ld-AbCdEf", cache_dir, (long)dead);
  snprintf(recent, sizeof recent, "%s/tmp/aquila-build-%ld-GhIjKl", cache_dir, (long)dead);
  snprintf(alive, sizeof alive, "%s/tmp/aquila-build-%ld-MnOpQr", cache_dir, (long)getpid());
  const char *dirs[] = {stale, recent, alive};
  struct timeval two_hours_ago[2];
  gettimeofday(&two_hours_ago[0], NULL);
  two_hours_ago[0].tv_sec -= 7200;
  two_hours_ago[1] = two_hours_ago[0];
  for (int i = 0; i < 3; i++) {
    REQUIRE(mkdir(dirs[i], 0700) == 0);
    snprintf(file, sizeof file, "%s/kernel.o", dirs[i]);
    FILE *f = fopen(file, "w");
    REQUIRE(f != NULL);
    fclose(f);
    if (i != 1) REQUIRE(utimes(dirs[i], two_hours_ago) == 0);
  }
  snprintf(dir, sizeof dir, "%s/stale-scratch", cache_dir);
  mkdir(dir, 0700);
  snprintf(cmd, sizeof cmd,
           "AQUILA_CACHE_DIR=%s %s/test/compiler/test_compiler --short-run-child >%s/run.txt 2>&1",
           dir, build_dir, dir);
  CHECK_EQ_INT(system(cmd), 0);
  struct stat st;
  CHECK(stat(stale, &st) != 0 && errno == ENOENT);
  CHECK(stat(recent, &st) == 0);
  CHECK(stat(alive, &st) == 0);
  for (int i = 1; i < 3; i++) {
    snprintf(file, sizeof file, "%s/kernel.o", dirs[i]);
    unlink(file);
    rmdir(dirs[i]);
  }
}

/* Whether this process has a compiler helper of background priority (one
 * that builds an upgrade: the vector version of quick-tier code). */
/* Whether helper pid serves an upgrade's build now: its serving thread is
 * named so while it does. The helper process alone is not enough: its
 * request may not have arrived yet, and a helper with none ends with the
 * application. */
static int has_upgrade_thread(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *tasks = opendir(path);
  int found = 0;
  for (struct dirent *e; tasks && !found && (e = readdir(tasks));) {
    if (e->d_name[0] == '.') continue;
    char comm_path[340], comm[64] = "";
    snprintf(comm_path, sizeof comm_path, "%s/%s/comm", path, e->d_name);
    FILE *f = fopen(comm_path, "r");
    if (!f) continue;
    if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
    fclose(f);
    found = !strncmp(comm, "aquila-upgrade", 14);
  }
  if (tasks) closedir(tasks);
  return found;
}

static int background_helper_running(void) {
  DIR *proc = opendir("/proc");
  int found = 0;
  for (struct dirent *e; proc && !found && (e = readdir(proc));) {
    pid_t pid = (pid_t)atoi(e->d_name);
    char path[64], comm[64] = "";
    long ppid = 0, nice = 0;
    if (pid <= 0 || !proc_stat_field(pid, 4, &ppid) || ppid != getpid()) continue;
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "r");
    if (f) {
      if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
      fclose(f);
    }
    /* Field 19: the nice value. */
    found = !strncmp(comm, "aquila-compiler", 15) && proc_stat_field(pid, 19, &nice) && nice > 0 &&
            has_upgrade_thread(pid);
  }
  if (proc) closedir(proc);
  return found;
}

/* A large kernel (a long chain of arithmetic and branches), whose vector
 * build takes a while. */
static char *large_kernel_source(void) {
  enum { STATEMENTS = 1500, LINE = 80 };
  char *src = malloc(STATEMENTS * LINE + 256);
  if (!src) return NULL;
  size_t at = (size_t)sprintf(src, "__kernel void large(__global float *out, float a) {\n"
                                   "  size_t i = get_global_id(0);\n"
                                   "  float x = out[i];\n");
  for (int n = 0; n < STATEMENTS; n++)
    at += (size_t)snprintf(src + at, LINE, "  x = x * %d.0001f + a; if (x > %d.0f) x -= %d.5f;\n",
                           n % 3 + 1, 100 + n % 17, n % 5);
  sprintf(src + at, "  out[i] = x;\n}\n");
  return src;
}

/* A short run of a large kernel: built, launched once on its quick tier's
 * code, and the process gone as soon as its vector version's build has
 * started (at most 10 s later: the helper serving it), before that build
 * can end. */
static int upgrade_run_child(void) {
  char *src = large_kernel_source();
  cl_int err;
  cl_program p = src ? build_source(src, "", &err) : NULL;
  free(src);
  cl_kernel k = p && err == CL_SUCCESS ? clCreateKernel(p, "large", &err) : NULL;
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 1024 * sizeof(float), NULL, &err);
  if (!k || !out) return 0;
  float zero = 0.0f, a = 0.5f;
  size_t global = 1024, local = 64;
  clSetKernelArg(k, 0, sizeof out, &out);
  clSetKernelArg(k, 1, sizeof a, &a);
  if (clEnqueueFillBuffer(queue, out, &zero, sizeof zero, 0, 1024 * sizeof(float), 0, NULL, NULL) !=
          CL_SUCCESS ||
      clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS ||
      clFinish(queue) != CL_SUCCESS)
    return 0;
  for (int i = 0; i < 1000 && !background_helper_running(); i++)
    usleep(10000);
  fflush(NULL);
  _exit(0); /* no release, no teardown: as a program ends */
}

/* The vector version a short run's background build had under way when
 * the run ended still reaches the kernel cache (the compiler process
 * finishes it, AQUILA_BUILD_AFTER_EXIT), so the next run starts from it:
 * John the Ripper's 3-second benchmarks ran their quick tier's code on
 * every run before. The next run has no compiler at all: its code is the
 * vector version's, not quick code. */
static void vector_version_of_a_short_run_is_cached(void) {
  char dir[300], cmd[1400];
  snprintf(dir, sizeof dir, "%s/upgrade-run", cache_dir);
  mkdir(dir, 0700);
  /* The build after the exit runs at nice 10: on a busy machine (other
   * tests, a CTS run beside) it took longer than the default 60 s. */
  snprintf(cmd, sizeof cmd,
           "AQUILA_QUICK_TIER_MIN_INSTRUCTIONS=0 AQUILA_SPECIALIZE=0 AQUILA_CACHE_DIR=%s "
           "AQUILA_BUILD_AFTER_EXIT=200 "
           "%s/test/compiler/test_compiler --upgrade-run-child >%s/run0.txt 2>&1",
           dir, build_dir, dir);
  CHECK_EQ_INT(system(cmd), 0);
  /* The program's entry and its quick code's, then the vector version's;
   * bounded: 200 s. */
  size_t entries = 0;
  for (int i = 0; i < 2000; i++) {
    DIR *d = opendir(dir);
    entries = 0;
    for (struct dirent *e; d && (e = readdir(d));)
      entries += strstr(e->d_name, ".fatbin") != NULL;
    if (d) closedir(d);
    if (entries >= 3) break;
    usleep(100000);
  }
  CHECK(entries >= 3);
  snprintf(cmd, sizeof cmd,
           "AQUILA_QUICK_TIER_MIN_INSTRUCTIONS=0 AQUILA_SPECIALIZE=0 AQUILA_CACHE_DIR=%s "
           "AQUILA_DEBUG=1 "
           "AQUILA_COMPILER=/nonexistent/aquila-compiler "
           "%s/test/compiler/test_compiler --upgrade-run-child >%s/run1.txt 2>&1",
           dir, build_dir, dir);
  CHECK_EQ_INT(system(cmd), 0);
  char path[340];
  snprintf(path, sizeof path, "%s/run1.txt", dir);
  size_t size = 0;
  char *text = (char *)read_whole(path, &size);
  CHECK(text && strstr(text, "machine code for 1 kernel ('large')") && !strstr(text, "quick tier"));
  if (text && strstr(text, "quick tier")) printf("  second run:\n%s\n", text);
  free(text);
}

/* A first launch long enough to matter, in a child process with every
 * kernel tiered: quick code keeps the device busy, so its vector version is
 * built at once and the running launch takes it from its next range of
 * work-groups; every work-item's result is right whichever code ran it.
 * Prints the launch's time in ms. */
static const char *long_launch_source =
    "__kernel void long_launch(__global float *out, int iterations) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float a = (float)(i & 1023) * 0.001f, s = 0.0f;\n"
    "  for (int k = 0; k < iterations; k++) s = s * 0.999f + a;\n"
    "  out[i] = s;\n"
    "}\n";

static int long_launch_child(void) {
  enum { N = 1 << 20, ITERATIONS = 3000 };
  cl_int err;
  cl_program p = build_source(long_launch_source, "", &err);
  cl_kernel k = p && err == CL_SUCCESS ? clCreateKernel(p, "long_launch", &err) : NULL;
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, N * sizeof(float), NULL, &err);
  if (!k || !out) return 0;
  int iterations = ITERATIONS;
  clSetKernelArg(k, 0, sizeof out, &out);
  clSetKernelArg(k, 1, sizeof iterations, &iterations);
  size_t global = N, local = 64;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  err = clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clFinish(queue);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  float *host = malloc(N * sizeof(float));
  if (err == CL_SUCCESS && host)
    err = clEnqueueReadBuffer(queue, out, CL_TRUE, 0, N * sizeof(float), host, 0, NULL, NULL);
  int wrong = err != CL_SUCCESS || !host;
  /* A sample (every 61st, and the last ranges, where the switch comes). */
  for (size_t i = 0; i < N && !wrong; i += i >= N - 4096 ? 1 : 61) {
    float a = (float)(i & 1023) * 0.001f, s = 0.0f;
    for (int n = 0; n < ITERATIONS; n++)
      s = s * 0.999f + a;
    if (fabsf(host[i] - s) > 1e-3f * fabsf(s) + 1e-6f) {
      printf("  work-item %zu: %g, expected %g\n", i, host[i], s);
      wrong = 1;
    }
  }
  printf("%ld\n", (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
  free(host);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
  return !wrong;
}

static void long_first_launch_switches_to_the_vector_version(void) {
  char *out = NULL;
  char *text = run_tiers_child("long-launch", &out);
  CHECK(out != NULL);
  if (text && out) {
    long ms = atol(out);
    const char *switched =
        strstr(text, "kernel 'long_launch': a running dispatch switched to the code that "
                     "superseded its own");
    /* Scalar, the launch takes seconds on two cores; a machine so fast
     * that it ends before the vector version is ready need not switch.
     * The build is urgent when it starts during the launch; the devices
     * may also have idled for 50 ms between the kernel's creation and its
     * launch (a loaded machine), and then the build started before it, at
     * its lower priority: either way the running launch must switch.
     * Under make check-vectorize (AQUILA_VECTORIZE=check) the CPU agent
     * runs a checked dispatch as one range of work-groups, so a running
     * launch has no next range to switch at: the vector version must be
     * put in place for the next launch. */
    const char *mode = getenv("AQUILA_VECTORIZE");
    if (mode && !strcmp(mode, "check"))
      switched = strstr(text, "the vector version, made in the background");
    CHECK(switched || ms < 1000);
    if (!(switched || ms < 1000)) printf("  launch took %ld ms; child's stderr:\n%s\n", ms, text);
  }
  free(text);
  free(out);
}

/* Two tiered kernels of one program, in a child process: 'busy' keeps the
 * device busy for 3 s (past the 2 s after which a launched kernel's build
 * goes ahead without idle devices), 'unused' is created and not launched.
 * 'busy' has its vector version built while it runs; 'unused' gets no
 * machine code at all, of either tier: code is made at a kernel's first
 * launch, and building what the application never runs takes its cores'
 * time for nothing. */
static const char *busy_and_unused_source =
    "__kernel void busy(__global float *out, int iterations) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float a = (float)(i & 1023) * 0.001f, s = 0.0f;\n"
    "  for (int k = 0; k < iterations; k++) s = s * 0.999f + a;\n"
    "  out[i] = s;\n"
    "}\n"
    "__kernel void unused(__global float *out) { out[get_global_id(0)] *= 2.0f; }\n";

static int unlaunched_child(void) {
  /* Past 16 KB of source the program is not small: each kernel's code is
   * made at its own first launch (program.c), not with another's. */
  enum { PADDING = 17 * 1024 };
  size_t length = strlen(busy_and_unused_source);
  char *source = malloc(length + PADDING + 8);
  if (!source) return 0;
  memcpy(source, "/*", 2);
  memset(source + 2, ' ', PADDING);
  memcpy(source + 2 + PADDING, "*/\n", 3);
  memcpy(source + 5 + PADDING, busy_and_unused_source, length + 1);
  cl_int err;
  cl_program p = build_source(source, "", &err);
  free(source);
  cl_kernel busy = p && err == CL_SUCCESS ? clCreateKernel(p, "busy", &err) : NULL;
  cl_kernel unused = busy ? clCreateKernel(p, "unused", &err) : NULL;
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, (1 << 16) * sizeof(float), NULL, &err);
  if (!busy || !unused || !out) return 0;
  size_t quick_entries = count_cache_entries();
  int iterations = 2000;
  clSetKernelArg(busy, 0, sizeof out, &out);
  clSetKernelArg(busy, 1, sizeof iterations, &iterations);
  size_t global = 1 << 16, local = 64;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* Two launches in flight at every moment, so that the device never idles
   * for a poll of the background worker; bounded by 3 s and 2000 launches. */
  cl_event prev = NULL;
  long ms = 0;
  for (int n = 0; n < 2000 && ms < 3000; n++) {
    cl_event ev = NULL;
    if (clEnqueueNDRangeKernel(queue, busy, 1, NULL, &global, &local, 0, NULL, &ev) != CL_SUCCESS)
      return 0;
    clFlush(queue);
    if (prev) {
      clWaitForEvents(1, &prev);
      clReleaseEvent(prev);
    }
    prev = ev;
    clock_gettime(CLOCK_MONOTONIC, &t);
    ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
  }
  if (prev) clWaitForEvents(1, &prev), clReleaseEvent(prev);
  fprintf(stderr, "test: the busy spell is over\n");
  fflush(stderr);
  /* Idle now: busy's vector version reaches the cache within 10 s (it
   * was built while busy). */
  for (int i = 0; i < 500 && count_cache_entries() < quick_entries + 1; i++)
    usleep(20000);
  int built = count_cache_entries() >= quick_entries + 1;
  /* Idle for a while: nothing is built for 'unused'. */
  usleep(500000);
  if (!built) printf("  no vector version of 'busy' within 10 s of idle\n");
  clReleaseMemObject(out);
  clReleaseKernel(unused);
  clReleaseKernel(busy);
  clReleaseProgram(p);
  return built;
}

static void unlaunched_kernels_get_no_code(void) {
  char *text = run_tiers_child("unlaunched", NULL);
  if (!text) return;
  const char *busy_built = strstr(text, "('busy'): the vector version, made in the background");
  const char *over = strstr(text, "test: the busy spell is over");
  const char *unused_code = strstr(text, "('unused'");
  CHECK(busy_built && over && !unused_code);
  CHECK(busy_built < over);
  if (!(busy_built && over && !unused_code && busy_built < over))
    printf("  child's stderr:\n%s\n", text);
  free(text);
}

/* A program rebuilt, and a program released, while their kernels' vector
 * versions are still to be built in the background: the rebuild's code
 * runs, nothing of the old build is used, nothing leaks or hangs. */
static void rebuild_and_release_with_background_builds_pending(void) {
  setenv("AQUILA_QUICK_TIER_MIN_INSTRUCTIONS", "0", 1);
  setenv("AQUILA_CACHE", "0", 1);
  cl_int err;
  cl_program p = build_source(scale_source, "-DPENDING_1", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK(p && run_scale(p));
  if (p) CHECK_EQ_INT(clBuildProgram(p, 1, &device, "-DPENDING_2", NULL, NULL), CL_SUCCESS);
  CHECK(p && run_scale(p));
  cl_uint refs = 0;
  if (p) clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  CHECK_EQ_INT(refs, 1);
  if (p) clReleaseProgram(p);
  cl_program q = build_source(scale_source, "-DPENDING_3", &err);
  cl_kernel k = q ? clCreateKernel(q, "scale", &err) : NULL;
  CHECK(k != NULL);
  if (k) clReleaseKernel(k);
  if (q) clReleaseProgram(q);
  unsetenv("AQUILA_CACHE");
  unsetenv("AQUILA_QUICK_TIER_MIN_INSTRUCTIONS");
}

/* A warning goes to the build log, and nothing of the compiler's to the
 * application's standard error (clang, run inside the compiler process,
 * would print "1 warning generated." there). */
static void warnings_stay_in_the_build_log(void) {
  char path[300];
  snprintf(path, sizeof path, "%s/stderr-warning.txt", cache_dir);
  int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  REQUIRE(saved >= 0 && fd >= 0);
  fflush(stderr);
  dup2(fd, 2);
  close(fd);
  setenv("AQUILA_CACHE", "0", 1);
  cl_int err;
  cl_program p = build_source("#warning \"a warning for the log\"\n"
                              "__kernel void warned(__global float *x) { x[0] = 1.0f; }\n",
                              "", &err);
  unsetenv("AQUILA_CACHE");
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  CHECK_EQ_INT(err, CL_SUCCESS);
  char log[4096];
  build_log_of(p, log, sizeof log);
  CHECK(strstr(log, "a warning for the log") != NULL);
  size_t size = 0;
  char *text = (char *)read_whole(path, &size);
  CHECK(text != NULL && size == 0);
  if (text && size) printf("  on standard error: %s\n", text);
  free(text);
  if (p) clReleaseProgram(p);
}

/* The compiler under Valgrind's memcheck (through clfatbin, which runs the
 * same compiler in-process: under Valgrind's emulated CPU the compiler
 * process would name another host target), building a kernel with a
 * barrier inside a loop (a tree reduction): no invalid access. The barrier
 * transformation used to write into a basic block it had just freed, which
 * corrupted the heap of whatever process compiled (clFFT's kernels). */
static void compiler_memory_is_clean(void) {
  char src_path[300], cmd[1200];
  snprintf(src_path, sizeof src_path, "%s/tree_sum.cl", cache_dir);
  FILE *f = fopen(src_path, "w");
  REQUIRE(f);
  fputs("__kernel void tree_sum(__global float *x, __local float *t) {\n"
        "  uint l = get_local_id(0);\n"
        "  t[l] = x[get_global_id(0)];\n"
        "  for (uint s = get_local_size(0) / 2; s > 0; s /= 2) {\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    if (l < s) t[l] += t[l + s];\n"
        "  }\n"
        "  if (l == 0) x[get_group_id(0)] = t[0];\n"
        "}\n",
        f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "AQUILA_CACHE=0 valgrind -q --error-exitcode=99 --suppressions=test/valgrind.supp "
           "%s/clfatbin build --target x86-64-v2 -o %s/tree_sum.bin %s",
           build_dir, cache_dir, src_path);
  int status = system(cmd);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Kernels whose loops the compiler may split into work-item loops
 * (implicit loop barriers) next to look-alikes it must not split; every
 * result is compared with the host's. */
static const char *loops_source =
    "__kernel void uniform_bound(__global const float *x, __global float *y, int n) {\n"
    "  size_t i = get_global_id(0); float acc = 0.0f; float priv[4] = {1, 2, 3, 4};\n"
    "  for (int j = 0; j < n; j++) { acc += x[j] * priv[j & 3] + x[i % 64]; if (acc > 1e6f) acc = "
    "0; }\n"
    "  y[i] = acc;\n"
    "}\n"
    "__kernel void varying_bound(__global const float *x, __global float *y, int n) {\n"
    "  size_t i = get_global_id(0); float acc = 0.0f;\n"
    "  for (int j = 0; j < (int)(i % 7) + n; j++) acc += x[j];\n"
    "  y[i] = acc;\n"
    "}\n"
    "__kernel void loop_in_varying_if(__global const float *x, __global float *y, int n) {\n"
    "  size_t i = get_global_id(0); float acc = -1.0f;\n"
    "  if (i % 3 == 0) { acc = 0.0f; for (int j = 0; j < n; j++) acc += x[j] * 2.0f; }\n"
    "  y[i] = acc;\n"
    "}\n"
    "__kernel void uniform_break_nested(__global const float *x, __global float *y, int n, int m) "
    "{\n"
    "  size_t i = get_global_id(0); float acc = 0.0f;\n"
    "  for (int j = 0; j < n; j++) {\n"
    "    if (j == m) break;\n"
    "    if (j % 5 == 1) continue;\n"
    "    for (int k = 0; k < m; k++) acc += x[(j + k) % n] * (float)(i % 5);\n"
    "  }\n"
    "  y[i] = acc;\n"
    "}\n"
    "__kernel void atomics_in_loop(__global int *hist, __global const int *data, int n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  for (int j = 0; j < n; j++) atomic_add(&hist[(data[j] + i) % 16], 1);\n"
    "}\n";

static void run_loops_kernel(cl_program p, const char *name, int n, int m, float *out, size_t g,
                             size_t l, const float *x, size_t nx) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, name, &err);
  if (!k) return;
  cl_mem bx = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, nx * sizeof(float), (void *)x, &err);
  cl_mem by = clCreateBuffer(context, CL_MEM_READ_WRITE, g * sizeof(float), NULL, &err);
  clSetKernelArg(k, 0, sizeof bx, &bx);
  clSetKernelArg(k, 1, sizeof by, &by);
  clSetKernelArg(k, 2, sizeof n, &n);
  if (!strcmp(name, "uniform_break_nested")) clSetKernelArg(k, 3, sizeof m, &m);
  clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, by, CL_TRUE, 0, g * sizeof(float), out, 0, NULL, NULL);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseKernel(k);
}

static void check_loops(const char *mode) {
  /* Kept until the kernels have run: machine code is made at a kernel's
   * first launch, under the environment of that moment. */
  setenv("AQUILA_LOOP_BARRIERS", mode, 1);
  cl_int err;
  cl_program p = build_source(loops_source, "", &err);
  if (err != CL_SUCCESS) unsetenv("AQUILA_LOOP_BARRIERS");
  REQUIRE(err == CL_SUCCESS);
  enum { G = 96, L = 32, NX = 64 };
  float x[NX], out[G];
  for (int j = 0; j < NX; j++)
    x[j] = (float)(j % 9) * 0.5f;
  int n = 40, m = 6;
  run_loops_kernel(p, "uniform_bound", n, m, out, G, L, x, NX);
  for (int i = 0; i < G; i++) {
    float acc = 0, priv[4] = {1, 2, 3, 4};
    for (int j = 0; j < n; j++) {
      acc += x[j] * priv[j & 3] + x[i % NX];
      if (acc > 1e6f) acc = 0;
    }
    CHECK(out[i] == acc);
  }
  run_loops_kernel(p, "varying_bound", n, m, out, G, L, x, NX);
  for (int i = 0; i < G; i++) {
    float acc = 0;
    for (int j = 0; j < i % 7 + n; j++)
      acc += x[j];
    CHECK(out[i] == acc);
  }
  run_loops_kernel(p, "loop_in_varying_if", n, m, out, G, L, x, NX);
  for (int i = 0; i < G; i++) {
    float acc = -1;
    if (i % 3 == 0) {
      acc = 0;
      for (int j = 0; j < n; j++)
        acc += x[j] * 2.0f;
    }
    CHECK(out[i] == acc);
  }
  run_loops_kernel(p, "uniform_break_nested", n, m, out, G, L, x, NX);
  for (int i = 0; i < G; i++) {
    float acc = 0;
    for (int j = 0; j < n; j++) {
      if (j == m) break;
      if (j % 5 == 1) continue;
      for (int k = 0; k < m; k++)
        acc += x[(j + k) % n] * (float)(i % 5);
    }
    CHECK(out[i] == acc);
  }
  /* Atomics: every (item, j) pair counted exactly once. */
  cl_kernel k = clCreateKernel(p, "atomics_in_loop", &err);
  REQUIRE(k);
  int hist[16] = {0}, data[NX];
  for (int j = 0; j < NX; j++)
    data[j] = j * 7;
  cl_mem bh = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof hist, hist, &err);
  cl_mem bd = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
  clSetKernelArg(k, 0, sizeof bh, &bh);
  clSetKernelArg(k, 1, sizeof bd, &bd);
  clSetKernelArg(k, 2, sizeof n, &n);
  size_t g = G, l = L;
  clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, bh, CL_TRUE, 0, sizeof hist, hist, 0, NULL, NULL);
  int expect[16] = {0};
  for (int i = 0; i < G; i++)
    for (int j = 0; j < n; j++)
      expect[(data[j] + i) % 16]++;
  for (int b = 0; b < 16; b++)
    CHECK_EQ_INT(hist[b], expect[b]);
  clReleaseMemObject(bh);
  clReleaseMemObject(bd);
  clReleaseKernel(k);
  clReleaseProgram(p);
  unsetenv("AQUILA_LOOP_BARRIERS");
}

/* a * b and + c in separate statements: only -cl-mad-enable (and the
 * options that imply it) may fuse them, and then an FMA gives fmaf's result
 * where the CPU has one. Without the option both roundings must stay. */
static const char *mad_source =
    "__kernel void mad2(__global float *o, __global const float *a, __global const float *b,\n"
    "                   __global const float *c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float t = a[i] * b[i];\n"
    "  o[i] = t + c[i];\n"
    "}\n";

static void run_mad2(const char *options, float *out, const float *a, const float *b,
                     const float *c, size_t n) {
  cl_int err;
  cl_program p = build_source(mad_source, options, &err);
  REQUIRE(p && err == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "mad2", &err);
  REQUIRE(k);
  cl_mem bo = clCreateBuffer(context, CL_MEM_WRITE_ONLY, n * 4, NULL, &err);
  cl_mem ba = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4, (void *)a, &err);
  cl_mem bb = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4, (void *)b, &err);
  cl_mem bc = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4, (void *)c, &err);
  clSetKernelArg(k, 0, sizeof bo, &bo);
  clSetKernelArg(k, 1, sizeof ba, &ba);
  clSetKernelArg(k, 2, sizeof bb, &bb);
  clSetKernelArg(k, 3, sizeof bc, &bc);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, bo, CL_TRUE, 0, n * 4, out, 0, NULL, NULL), CL_SUCCESS);
  clReleaseMemObject(bo);
  clReleaseMemObject(ba);
  clReleaseMemObject(bb);
  clReleaseMemObject(bc);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

static void mad_enable_contracts(void) {
  enum { N = 256 };
  static float a[N], b[N], c[N], out[N];
  /* (1 + e)(1 - e) - 1 = -e^2: lost by the rounded product, kept by an FMA. */
  for (int i = 0; i < N; i++) {
    float e = ldexpf(1.0f + (float)i / N, -13);
    a[i] = 1.0f + e;
    b[i] = 1.0f - e;
    c[i] = -1.0f;
  }
  volatile float vol_a, vol_b;
  int fused = 0, split = 0;
  run_mad2("", out, a, b, c, N);
  for (int i = 0; i < N; i++) {
    vol_a = a[i];
    vol_b = b[i];
    float t = vol_a * vol_b; /* rounded here: -ffp-contract does not cross statements */
    split += out[i] == t + c[i];
  }
  CHECK_EQ_INT(split, N);
  /* The code's target, not only the host: x86-64-v2 has no FMA. */
  const char *target = getenv("AQUILA_CPU_TARGET");
  int has_fma = __builtin_cpu_supports("fma") && !(target && !strcmp(target, "x86-64-v2"));
  static const char *const options[] = {"-cl-mad-enable", "-cl-fast-relaxed-math",
                                        "-cl-unsafe-math-optimizations"};
  for (int o = 0; o < 3; o++) {
    run_mad2(options[o], out, a, b, c, N);
    fused = 0;
    for (int i = 0; i < N; i++)
      fused += out[i] == fmaf(a[i], b[i], c[i]);
    if (has_fma) {
      if (fused != N) printf("  %s: %d of %d results fused\n", options[o], fused, N);
      CHECK_EQ_INT(fused, N);
    }
  }
}

/* Hash-like rounds on integer vectors of each lane width, the terms of
 * each sum ready at different depths of a long chain, with constant terms:
 * reassociate.c reorders such sums for latency before code generation
 * (and takes their constants from the entry block); integer addition
 * wraps, so every result must be the host's, lane for lane. */
struct rounds_case {
  const char *type, *scalar, *iota;
  unsigned lanes, bits;
};

static uint64_t rotl_bits(uint64_t x, unsigned s, unsigned bits) {
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  s %= bits;
  x &= mask;
  return s ? ((x << s) | (x >> (bits - s))) & mask : x;
}

static void hash_rounds_case(const struct rounds_case *rc) {
  enum { GROUPS = 64, WORDS = 16, ITERATIONS = 37 };
  char src[4096];
  snprintf(src, sizeof src,
           "#define T %s\n"
           "#define R(a, b, c, d, w, k1, k2, s)                                  \\\n"
           "  a = b + rotate(a + w + (T)(k1) + ((b & c) | (~b & d)), (T)(s));       \\\n"
           "  d = a + rotate(d + (T)(k2) + (a ^ b ^ c), (T)(s + 5));\n"
           "__kernel void rounds(__global T *out, __global const T *in, uint n) {\n"
           "  size_t g = get_global_id(0);\n"
           "  T a = (T)((%s)g) + (T)(%s), b = a * (T)3 + (T)1, c = ~a, d = a ^ (T)0x55;\n"
           "  for (uint i = 0; i < n; i++) {\n"
           "    T w = in[(g + i) %% %d];\n"
           "    R(a, b, c, d, w, 0x5a827999u, 0x6ed9eba1u, 7)\n"
           "    R(c, d, a, b, w, 0x8f1bbcdcu, 0xca62c1d6u, 12)\n"
           "    R(b, c, d, a, w, 0xd76aa478u, 0xe8c7b756u, 17)\n"
           "    R(d, a, b, c, w, 0x242070dbu, 0xc1bdceeeu, 22)\n"
           "  }\n"
           "  out[g] = a ^ b ^ c ^ d;\n"
           "}\n",
           rc->type, rc->scalar, rc->iota, WORDS);
  unsigned bits = rc->bits, lanes = rc->lanes;
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  size_t elem = bits / 8;
  unsigned char in[WORDS * 16 * 8], out[GROUPS * 16 * 8];
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < sizeof in; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    in[i] = (unsigned char)(x >> 56);
  }
  cl_int err;
  cl_program p = build_source(src, "", &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_kernel k = p ? clCreateKernel(p, "rounds", &err) : NULL;
  cl_mem in_buf = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 WORDS * lanes * elem, in, &err);
  cl_mem out_buf = clCreateBuffer(context, CL_MEM_WRITE_ONLY, GROUPS * lanes * elem, NULL, &err);
  CHECK(k && in_buf && out_buf);
  if (k && in_buf && out_buf) {
    cl_uint n = ITERATIONS;
    clSetKernelArg(k, 0, sizeof out_buf, &out_buf);
    clSetKernelArg(k, 1, sizeof in_buf, &in_buf);
    clSetKernelArg(k, 2, sizeof n, &n);
    size_t global = GROUPS, local = 8;
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(
        clEnqueueReadBuffer(queue, out_buf, CL_TRUE, 0, GROUPS * lanes * elem, out, 0, NULL, NULL),
        CL_SUCCESS);
    int wrong = 0;
    for (unsigned g = 0; g < GROUPS; g++)
      for (unsigned l = 0; l < lanes; l++) {
        uint64_t a = (g + l) & mask, b = (a * 3 + 1) & mask, c = ~a & mask, d = (a ^ 0x55) & mask;
        static const uint64_t k1[] = {0x5a827999u, 0x8f1bbcdcu, 0xd76aa478u, 0x242070dbu};
        static const uint64_t k2[] = {0x6ed9eba1u, 0xca62c1d6u, 0xe8c7b756u, 0xc1bdceeeu};
        static const unsigned sh[] = {7, 12, 17, 22};
        for (unsigned i = 0; i < ITERATIONS; i++) {
          uint64_t w = 0;
          memcpy(&w, in + (((g + i) % WORDS) * lanes + l) * elem, elem);
          uint64_t *v[4] = {&a, &b, &c, &d};
          /* R(a,b,c,d), R(c,d,a,b), R(b,c,d,a), R(d,a,b,c) */
          static const unsigned order[4][4] = {
              {0, 1, 2, 3}, {2, 3, 0, 1}, {1, 2, 3, 0}, {3, 0, 1, 2}};
          for (unsigned r = 0; r < 4; r++) {
            uint64_t *ra = v[order[r][0]], *rb = v[order[r][1]], *rc2 = v[order[r][2]],
                     *rd = v[order[r][3]];
            uint64_t f = ((*rb & *rc2) | (~*rb & *rd)) & mask;
            *ra = (*rb + rotl_bits((*ra + w + (k1[r] & mask) + f) & mask, sh[r], bits)) & mask;
            uint64_t h = (*ra ^ *rb ^ *rc2) & mask;
            *rd = (*ra + rotl_bits((*rd + (k2[r] & mask) + h) & mask, sh[r] + 5, bits)) & mask;
          }
        }
        uint64_t want = (a ^ b ^ c ^ d) & mask, got = 0;
        memcpy(&got, out + (g * lanes + l) * elem, elem);
        if (got != want && wrong++ < 3)
          printf("  %s: work-item %u lane %u: %llx, expected %llx\n", rc->type, g, l,
                 (unsigned long long)got, (unsigned long long)want);
      }
    CHECK_EQ_INT(wrong, 0);
  }
  if (in_buf) clReleaseMemObject(in_buf);
  if (out_buf) clReleaseMemObject(out_buf);
  if (k) clReleaseKernel(k);
  if (p) clReleaseProgram(p);
}

static void hash_rounds_reassociated(void) {
  static const struct rounds_case cases[] = {
      {"uint16", "uint", "(uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)", 16, 32},
      {"ushort8", "ushort", "(ushort8)(0, 1, 2, 3, 4, 5, 6, 7)", 8, 16},
      {"uchar16", "uchar", "(uchar16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)", 16,
       8},
      {"ulong4", "ulong", "(ulong4)(0, 1, 2, 3)", 4, 64},
      {"uint4", "uint", "(uint4)(0, 1, 2, 3)", 4, 32},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    hash_rounds_case(&cases[i]);
}

/* sin, cos and tan keep their large-argument path out of line
 * (__aquila_vv_*, workgroup.c): two compiled objects that both use them
 * bring two copies, which clLinkProgram renames; arguments alternating
 * small and huge send every vector through both paths. */
static void math_rare_paths_across_link(void) {
  const char *a = "float f1(float x) { return sin(x) + cos(x); }\n";
  const char *b = "float f1(float x);\n"
                  "__kernel void k(__global float *o, __global const float *in) {\n"
                  "  size_t i = get_global_id(0);\n"
                  "  o[i] = f1(in[i]) + sin(in[i]) * tan(in[i]);\n"
                  "}\n";
  cl_int err;
  cl_program pa = clCreateProgramWithSource(context, 1, &a, NULL, &err);
  cl_program pb = clCreateProgramWithSource(context, 1, &b, NULL, &err);
  REQUIRE(pa && pb);
  CHECK_EQ_INT(clCompileProgram(pa, 1, &device, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clCompileProgram(pb, 1, &device, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_program objs[2] = {pa, pb};
  cl_program linked = clLinkProgram(context, 1, &device, "", 2, objs, NULL, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(linked);
  cl_kernel k = clCreateKernel(linked, "k", &err);
  REQUIRE(k);
  enum { N = 1024 };
  static float x[N], y[N];
  for (int i = 0; i < N; i++)
    x[i] = i % 2 ? (float)i * 1e5f : (float)i * 0.01f;
  cl_mem in = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof y, NULL, &err);
  clSetKernelArg(k, 0, sizeof out, &out);
  clSetKernelArg(k, 1, sizeof in, &in);
  size_t n = N;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL), CL_SUCCESS);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    double r = sin(x[i]) + cos(x[i]) + sin(x[i]) * tan(x[i]);
    /* each term within a few ulp: the sum within 2^-20 of its largest term */
    double scale = 2 + fabs(sin(x[i]) * tan(x[i]));
    if (!(fabs(y[i] - r) <= scale * 0x1p-20) && bad++ < 3)
      printf("  x = %a: %a, want %.9g\n", x[i], y[i], r);
  }
  CHECK_EQ_INT(bad, 0);
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(linked);
  clReleaseProgram(pa);
  clReleaseProgram(pb);
}

/* OpenCL C allows type-based alias analysis only under -cl-strict-aliasing
 * (OpenCL 1.2 5.6.4.3): by default, a store through a pointer of one type
 * must be seen by a load of another type from the same place (John the
 * Ripper's sha256crypt fills a buffer through ulong * and reads it as uint
 * words). z is 0 at run time, but the compiler cannot know that the
 * pointers meet; the same for vstore4 of floats read back by vload4 of
 * ints, which are the builtin library's accesses. */
static void aliasing_is_not_strict_by_default(void) {
  const char *src = "__kernel void k(__global const int *in, __global uint *out, int n) {\n"
                    "  int i = get_global_id(0);\n"
                    "  int z = in[i] == 12345;\n"
                    "  __global uint *w = out + 8 * i;\n"
                    "  __global ulong *q = (__global ulong *)(w + z);\n"
                    "  w[0] = 1u;\n"
                    "  q[0] = ((ulong)(uint)in[i] << 32) | 7u;\n"
                    "  uint first = w[0];\n"
                    "  __global float *f = (__global float *)(w + z + 1);\n"
                    "  w[1] = 5u;\n"
                    "  f[0] = 2.0f;\n"
                    "  uint second = w[1];\n"
                    "  vstore4((float4)(1.0f, 2.0f, 3.0f, 4.0f), 1, (__global float *)(w + z));\n"
                    "  int4 bits = vload4(1, (__global int *)w);\n"
                    "  w[2] = first;\n"
                    "  w[3] = second;\n"
                    "  w[4] = (uint)bits.x;\n"
                    "  w[5] = (uint)bits.w;\n"
                    "}\n";
  for (int strict = 0; strict < 2; strict++) {
    cl_int err;
    cl_program p = build_source(src, strict ? "-cl-strict-aliasing" : "", &err);
    CHECK_EQ_INT(err, CL_SUCCESS);
    if (err != CL_SUCCESS || strict) {
      /* Accepted; what a program that breaks the rule gets then is undefined. */
      if (p) clReleaseProgram(p);
      continue;
    }
    cl_kernel k = clCreateKernel(p, "k", &err);
    REQUIRE(k);
    enum { N = 64 };
    int in[N];
    cl_uint out[8 * N];
    for (int i = 0; i < N; i++)
      in[i] = i * 3;
    cl_mem a = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
    cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
    int n = N;
    clSetKernelArg(k, 0, sizeof a, &a);
    clSetKernelArg(k, 1, sizeof b, &b);
    clSetKernelArg(k, 2, sizeof n, &n);
    size_t global = N, local = 16;
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
                 CL_SUCCESS);
    float two = 2.0f, one = 1.0f, four = 4.0f;
    cl_uint two_bits, one_bits, four_bits;
    memcpy(&two_bits, &two, 4);
    memcpy(&one_bits, &one, 4);
    memcpy(&four_bits, &four, 4);
    for (int i = 0; i < N; i++) {
      if (out[8 * i + 2] != 7u || out[8 * i + 3] != two_bits || out[8 * i + 4] != one_bits ||
          out[8 * i + 5] != four_bits) {
        printf("  work-item %d: %#x %#x %#x %#x, expected 0x7 %#x %#x %#x\n", i, out[8 * i + 2],
               out[8 * i + 3], out[8 * i + 4], out[8 * i + 5], two_bits, one_bits, four_bits);
        CHECK(0);
        break;
      }
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
}

static void loops_split_at_implicit_barriers(void) {
  check_loops("1");
}

static void loops_kept_whole(void) {
  check_loops("0");
}

/* Tiled loops (a tile copied to __local memory, a barrier, work on it, a
 * barrier) get a prefetch of the next tile's lines (compiler/workgroup/prefetch.c):
 * the tile's step a constant, a work-item query (computed in the latch,
 * after the load) or a kernel argument; and the next tile's address past
 * the data in the last iteration, which a prefetch may name. A walk down
 * columns (a row pitch known at run time, forward and backward, the
 * accesses under a bounds check) gets prefetches ahead too. Run in a
 * child process with AQUILA_DEBUG=vectorize (whose report the build log
 * gets) and a cache of its own; with AQUILA_PREFETCH=0 there are none.
 * Either way every result is right. */
static const char *tiled_source =
    "#define T 16\n"
    /* clFFT's transpose: rows of a tile a 8 KiB step apart, indexed by
     * the local size's quotients (uniform: a vector load and a prefetch
     * each, not a gather). */
    "__kernel __attribute__((reqd_work_group_size(16, 16, 1)))\n"
    "void tile_by_size(__global const float2 *in, __global float2 *out) {\n"
    "  __local float2 lds[64][64];\n"
    "  size_t lx = get_local_id(0), ly = get_local_id(1), ey = get_local_size(1) / 4;\n"
    "  for (uint t = 0; t < 16; t++) {\n"
    "    size_t x = lx + get_local_size(0) * (ly % ey), y = ly / ey + t * ey;\n"
    "    lds[x][y] = in[x + 1024 * y + get_group_id(0) * 64];\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[get_global_id(1) * 1024 + get_global_id(0)] = lds[ly][lx];\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(T, T, 1)))\n"
    "void tiled_const(__global const float *a, __global const float *b, __global float *c,\n"
    "                 uint n) {\n"
    "  __local float ta[T][T], tb[T][T];\n"
    "  size_t col = get_global_id(0), row = get_global_id(1);\n"
    "  size_t lx = get_local_id(0), ly = get_local_id(1);\n"
    "  float sum = 0.0f;\n"
    "  for (uint k0 = 0; k0 < n; k0 += T) {\n"
    "    ta[ly][lx] = a[row * n + k0 + lx];\n"
    "    tb[ly][lx] = b[(k0 + ly) * n + col];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint k = 0; k < T; k++) sum += ta[ly][k] * tb[k][lx];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  c[row * n + col] = sum;\n"
    "}\n"
    "__kernel void tiled_query(__global const float4 *pos, __global float *out, uint n,\n"
    "                          __local float4 *tile) {\n"
    "  size_t i = get_global_id(0), lid = get_local_id(0), ts = get_local_size(0);\n"
    "  float s = 0.0f;\n"
    "  for (uint base = 0; base < n; base += ts) {\n"
    "    tile[lid] = pos[base + lid];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint j = 0; j < ts; j++) s += tile[j].x * (float)(i & 3) + tile[j].w;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  out[i] = s;\n"
    "}\n"
    "__kernel void tiled_arg(__global const float *in, __global float *out, uint n, uint step,\n"
    "                        __local float *tile) {\n"
    "  size_t i = get_global_id(0), lid = get_local_id(0), ts = get_local_size(0);\n"
    "  float s = 0.0f;\n"
    "  for (uint k = 0; k + ts <= n; k += step) {\n"
    "    tile[lid] = in[k + lid];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    s += tile[(lid + 1) % ts];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  out[i] = s;\n"
    "}\n"
    "__kernel void column_walk(__global const float *in, __global float *out, int width,\n"
    "                          int height) {\n"
    "  int x = get_global_id(0);\n"
    "  if (x >= width) return;\n"
    "  float y1 = 0.0f;\n"
    "  for (int y = 0; y < height; y++) {\n"
    "    y1 = 0.5f * y1 + in[y * width + x];\n"
    "    out[y * width + x] = y1;\n"
    "  }\n"
    "  for (int y = height - 1; y >= 0; y--) out[y * width + x] += in[y * width + x];\n"
    "}\n";

static int prefetch_child(void) {
  enum { N = 64, BODIES = 128, LOCAL = 32, STEP = 48 };
  cl_int err;
  cl_program p = build_source(tiled_source, "", &err);
  if (err != CL_SUCCESS) return 0;
  int ok = 1;
  float a[N * N], b[N * N], c[N * N], pos[BODIES * 4], out[BODIES], in[N * 4];
  for (int i = 0; i < N * N; i++) {
    a[i] = (float)((i * 7) % 13) - 6.0f;
    b[i] = (float)((i * 5) % 11) - 5.0f;
  }
  for (int i = 0; i < BODIES * 4; i++)
    pos[i] = (float)(i % 9) - 4.0f;
  for (int i = 0; i < N * 4; i++)
    in[i] = (float)(i % 17);
  cl_mem da = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  cl_mem db = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof b, b, &err);
  cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof c, NULL, &err);
  cl_mem dp = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof pos, pos, &err);
  cl_mem dout = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  cl_mem din = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
  cl_kernel k0 = clCreateKernel(p, "tiled_const", &err);
  cl_kernel k1 = clCreateKernel(p, "tiled_query", &err);
  cl_kernel k2 = clCreateKernel(p, "tiled_arg", &err);
  cl_uint n = N, bodies = BODIES, in_n = N * 4, step = STEP;
  size_t g2[2] = {N, N}, l2[2] = {16, 16}, g1 = BODIES, l1 = LOCAL;
  clSetKernelArg(k0, 0, sizeof da, &da);
  clSetKernelArg(k0, 1, sizeof db, &db);
  clSetKernelArg(k0, 2, sizeof dc, &dc);
  clSetKernelArg(k0, 3, sizeof n, &n);
  clSetKernelArg(k1, 0, sizeof dp, &dp);
  clSetKernelArg(k1, 1, sizeof dout, &dout);
  clSetKernelArg(k1, 2, sizeof bodies, &bodies);
  clSetKernelArg(k1, 3, LOCAL * 4 * sizeof(float), NULL);
  clSetKernelArg(k2, 0, sizeof din, &din);
  clSetKernelArg(k2, 1, sizeof dout, &dout);
  clSetKernelArg(k2, 2, sizeof in_n, &in_n);
  clSetKernelArg(k2, 3, sizeof step, &step);
  clSetKernelArg(k2, 4, LOCAL * sizeof(float), NULL);
  ok &= clEnqueueNDRangeKernel(queue, k0, 2, NULL, g2, l2, 0, NULL, NULL) == CL_SUCCESS;
  ok &= clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL) == CL_SUCCESS;
  int wrong = 0;
  for (int r = 0; r < N; r++)
    for (int col = 0; col < N; col++) {
      float want_c = 0.0f; /* small integers: exact in any order */
      for (int k = 0; k < N; k++)
        want_c += a[r * N + k] * b[k * N + col];
      wrong += c[r * N + col] != want_c;
    }
  ok &= clEnqueueNDRangeKernel(queue, k1, 1, NULL, &g1, &l1, 0, NULL, NULL) == CL_SUCCESS;
  ok &= clEnqueueReadBuffer(queue, dout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL) == CL_SUCCESS;
  for (int i = 0; i < BODIES; i++) {
    float s = 0.0f;
    for (int j = 0; j < BODIES; j++)
      s += pos[j * 4] * (float)(i & 3) + pos[j * 4 + 3];
    wrong += out[i] != s;
  }
  ok &= clEnqueueNDRangeKernel(queue, k2, 1, NULL, &g1, &l1, 0, NULL, NULL) == CL_SUCCESS;
  ok &= clEnqueueReadBuffer(queue, dout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL) == CL_SUCCESS;
  for (int i = 0; i < BODIES; i++) {
    float s = 0.0f;
    for (unsigned k = 0; k + LOCAL <= (unsigned)N * 4; k += STEP)
      s += in[k + (i % LOCAL + 1) % LOCAL];
    wrong += out[i] != s;
  }
  {
    enum { W = 40, H = 23 }; /* a partial vector in each row */
    float img[W * H], res[W * H];
    for (int i = 0; i < W * H; i++)
      img[i] = (float)(i % 29);
    cl_mem dimg = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof img, img, &err);
    cl_mem dres = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof res, NULL, &err);
    cl_kernel k3 = clCreateKernel(p, "column_walk", &err);
    cl_int w = W, h = H;
    size_t gw = 48;
    clSetKernelArg(k3, 0, sizeof dimg, &dimg);
    clSetKernelArg(k3, 1, sizeof dres, &dres);
    clSetKernelArg(k3, 2, sizeof w, &w);
    clSetKernelArg(k3, 3, sizeof h, &h);
    ok &= clEnqueueNDRangeKernel(queue, k3, 1, NULL, &gw, NULL, 0, NULL, NULL) == CL_SUCCESS;
    ok &=
        clEnqueueReadBuffer(queue, dres, CL_TRUE, 0, sizeof res, res, 0, NULL, NULL) == CL_SUCCESS;
    for (int x = 0; x < W; x++) {
      float y1 = 0.0f;
      for (int y = 0; y < H; y++) {
        y1 = 0.5f * y1 + img[y * W + x];
        wrong += res[y * W + x] != y1 + img[y * W + x];
      }
    }
    if (k3) clReleaseKernel(k3);
    if (dimg) clReleaseMemObject(dimg);
    if (dres) clReleaseMemObject(dres);
  }
  if (wrong) printf("  %d wrong results\n", wrong);
  cl_mem mems[] = {da, db, dc, dp, dout, din};
  for (int i = 0; i < 6; i++)
    if (mems[i]) clReleaseMemObject(mems[i]);
  cl_kernel ks[] = {k0, k1, k2};
  for (int i = 0; i < 3; i++)
    if (ks[i]) clReleaseKernel(ks[i]);
  clReleaseProgram(p);
  return ok && !wrong;
}

static void tiled_loops_prefetch_the_next_tile(void) {
  static const char *names[] = {"tiled_const", "tiled_query", "tiled_arg", "column_walk",
                                "tile_by_size"};
  for (int off = 0; off < 2; off++) {
    char dir[300], path[340], cmd[1000];
    snprintf(dir, sizeof dir, "%s/prefetch%d", cache_dir, off);
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    mkdir(dir, 0700);
    snprintf(cmd, sizeof cmd,
             "AQUILA_DEBUG=vectorize AQUILA_PREFETCH=%d AQUILA_CACHE_DIR=%s "
             "%s/test/compiler/test_compiler --prefetch-child 2>%s",
             !off, dir, build_dir, path);
    CHECK_EQ_INT(system(cmd), 0);
    size_t size = 0;
    char *text = (char *)read_whole(path, &size);
    CHECK(text != NULL);
    for (int i = 0; text && i < 5; i++) {
      char key[64];
      snprintf(key, sizeof key, "kernel '%s': vectorized", names[i]);
      const char *line = strstr(text, key), *end = line ? strchr(line, '\n') : NULL;
      const char *pf = line ? strstr(line, "prefetches ahead") : NULL;
      int has = pf && (!end || pf < end);
      if (!line || has == off)
        printf("  AQUILA_PREFETCH=%d: %s: %s\n", !off, names[i],
               !line ? "not vectorized"
               : has ? "prefetches"
                     : "none");
      CHECK(line && has != off);
    }
    free(text);
  }
}

/* A 16 x 16 tile's dot products (tiled_const: one accumulator per row, a
 * short loop between barriers), where a row is one vector, run with the
 * rows' loops jammed
 * (compiler/workgroup/regions.c), so that their FMA chains overlap; a loop that only
 * copies (tile_by_size, clFFT's transpose) and a 1D group (tiled_query)
 * are not jammed so. With AQUILA_REGION_JAM=0 nothing is. The child checks
 * every result against the host's either way. */
static void accumulating_rows_run_jammed(void) {
  for (int off = 0; off < 2; off++) {
    char dir[300], path[340], cmd[1000];
    snprintf(dir, sizeof dir, "%s/jam%d", cache_dir, off);
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    mkdir(dir, 0700);
    snprintf(cmd, sizeof cmd,
             "AQUILA_DEBUG=vectorize %s AQUILA_CACHE_DIR=%s "
             "%s/test/compiler/test_compiler --prefetch-child 2>%s",
             off ? "AQUILA_REGION_JAM=0" : "", dir, build_dir, path);
    CHECK_EQ_INT(system(cmd), 0);
    size_t size = 0;
    char *text = (char *)read_whole(path, &size);
    CHECK(text != NULL);
    static const char *names[] = {"tiled_const", "tile_by_size", "tiled_query"};
    for (int i = 0; text && i < 3; i++) {
      char key[64];
      snprintf(key, sizeof key, "kernel '%s': vectorized", names[i]);
      const char *line = strstr(text, key), *end = line ? strchr(line, '\n') : NULL;
      const char *jam = line ? strstr(line, "16 rows' accumulating loops jammed") : NULL;
      int has = jam && (!end || jam < end);
      /* Rows are jammed where a 16-wide row is one vector (AVX-512); an
       * x86-64-v3 or -v2 target's narrower vectors take several a row. */
      int width = 0;
      if (line) sscanf(line + strlen(key), ", %d work-items", &width);
      int want = i == 0 && !off && width == 16;
      if (!line || has != want)
        printf("  %s: %s: %s\n", off ? "AQUILA_REGION_JAM=0" : "default", names[i],
               !line ? "not vectorized"
               : has ? "rows jammed"
                     : "not jammed");
      CHECK(line && has == want);
    }
    free(text);
  }
}

/* Builds source with clfatbin under AQUILA_DEBUG=vectorize (the kernel
 * cache off; with ir_path, AQUILA_DUMP_IR there too) and returns what it
 * printed, or NULL. name names the files in the cache directory. */
static char *vectorize_report_for(const char *name, const char *source, const char *ir_path,
                                  const char *env) {
  char src_path[300], bin_path[300], log_path[300], dump[340] = "", cmd[1600];
  snprintf(src_path, sizeof src_path, "%s/%s.cl", cache_dir, name);
  snprintf(bin_path, sizeof bin_path, "%s/%s.bin", cache_dir, name);
  snprintf(log_path, sizeof log_path, "%s/%s.log", cache_dir, name);
  if (ir_path) snprintf(dump, sizeof dump, "AQUILA_DUMP_IR=%s", ir_path);
  FILE *f = fopen(src_path, "w");
  if (!f) return NULL;
  fputs(source, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "AQUILA_CACHE=0 AQUILA_DEBUG=vectorize %s %s %s/clfatbin build -o %s %s 2>%s", env, dump,
           build_dir, bin_path, src_path, log_path);
  if (system(cmd) != 0) return NULL;
  size_t size = 0;
  return (char *)read_whole(log_path, &size);
}

static char *vectorize_report(const char *name, const char *source, const char *ir_path) {
  return vectorize_report_for(name, source, ir_path, "");
}

/* A local id read before a barrier in the same block and used after it is
 * recomputed in each region, not kept in a context array: kept there, its
 * value would hide that x % 8 of a vector's first work-item is 0 (clFFT's
 * twiddle indices). Only the two floats live across barriers are kept; the
 * kernel's results are checked too. */
static const char *ids_after_barrier_source =
    "__constant float2 tw[8] = {(float2)(1.0f, 2.0f), (float2)(3.0f, 4.0f), (float2)(5.0f, 6.0f),\n"
    "                           (float2)(7.0f, 8.0f), (float2)(9.0f, 10.0f), (float2)(11.0f, "
    "12.0f),\n"
    "                           (float2)(13.0f, 14.0f), (float2)(15.0f, 16.0f)};\n"
    "__kernel __attribute__((reqd_work_group_size(128, 1, 1)))\n"
    "void ids_after_barrier(__global const float2 *in, __global float2 *out) {\n"
    "  uint me = get_local_id(0);\n"
    "  __local float lds[128];\n"
    "  float2 r = in[get_global_id(0)];\n"
    "  lds[me] = r.x;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  float2 w = tw[me % 8];\n"
    "  r.x = lds[(me + 1) % 128] * w.x + w.y;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  lds[me] = r.y;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[get_global_id(0)] = (float2)(r.x, lds[(me * 3) % 128]);\n"
    "}\n";

static void ids_after_barrier_are_recomputed(void) {
  char *log = vectorize_report("ids", ids_after_barrier_source, NULL);
  REQUIRE(log);
  const char *line = strstr(log, "kernel 'ids_after_barrier': vectorized");
  if (!line || !strstr(line, "2 values in context arrays (8 bytes per work-item), 0 kept once"))
    printf("  %.300s\n", line ? line : log);
  CHECK(line && strstr(line, "2 values in context arrays (8 bytes per work-item), 0 kept once"));
  free(log);

  enum { N = 256 };
  cl_int err;
  cl_program p = build_source(ids_after_barrier_source, "", &err);
  REQUIRE(err == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "ids_after_barrier", &err);
  REQUIRE(k);
  float in[2 * N], out[2 * N];
  for (int i = 0; i < 2 * N; i++)
    in[i] = (float)(i % 37) - 18.0f;
  cl_mem din = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
  cl_mem dout = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  clSetKernelArg(k, 0, sizeof din, &din);
  clSetKernelArg(k, 1, sizeof dout, &dout);
  size_t g = N, l = 128;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, dout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
               CL_SUCCESS);
  int wrong = 0;
  for (int i = 0; i < N; i++) {
    int group = i / 128 * 128, me = i % 128;
    float w_x = (float)(2 * (me % 8) + 1), w_y = w_x + 1.0f;
    /* small integers: exact whether or not the multiply-add is fused */
    float want_x = in[2 * (group + (me + 1) % 128)] * w_x + w_y;
    float want_y = in[2 * (group + me * 3 % 128) + 1];
    wrong += out[2 * i] != want_x || out[2 * i + 1] != want_y;
  }
  CHECK_EQ_INT(wrong, 0);
  clReleaseMemObject(din);
  clReleaseMemObject(dout);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* A private array at indices every work-item shares, in a loop each
 * work-item runs its own number of times (John the Ripper's PBKDF2-SHA256:
 * 1000 rounds of SHA-256 on a W[16]): the vectorizer reads and writes its
 * lanes' copies as whole vectors, never gathered, scattered or masked
 * (each masked gather was a branch per lane on AVX2), so that SROA keeps
 * the array in registers. Only the global loads may gather. Results
 * checked against the host. */
static const char *private_state_source =
    "__kernel void rounds(__global const uint *in, __global uint *out) {\n"
    "  uint i = get_global_id(0), h[8], w[16];\n"
    "  for (int j = 0; j < 16; j++) w[j] = in[(i * 16 + j) % 64];\n"
    "  for (int j = 0; j < 8; j++) h[j] = j + i;\n"
    "  for (uint r = 0; r < (i & 7) * 3; r++) {\n"
    "    for (int j = 0; j < 16; j++) {\n"
    "      uint t = rotate(h[7], 7u) + (h[1] ^ h[2]) + w[j];\n"
    "      for (int q = 7; q > 0; q--) h[q] = h[q - 1];\n"
    "      h[0] = t;\n"
    "    }\n"
    "    for (int j = 0; j < 16; j++) w[j] += rotate(w[(j + 1) % 16], 3u) ^ h[j % 8];\n"
    "  }\n"
    "  for (int j = 0; j < 8; j++) out[i * 8 + j] = h[j] ^ w[j] ^ w[j + 8];\n"
    "}\n";

static void host_rounds(const cl_uint *in, cl_uint i, cl_uint *out) {
  cl_uint h[8], w[16];
  for (int j = 0; j < 16; j++)
    w[j] = in[(i * 16 + j) % 64];
  for (int j = 0; j < 8; j++)
    h[j] = j + i;
  for (cl_uint r = 0; r < (i & 7) * 3; r++) {
    for (int j = 0; j < 16; j++) {
      cl_uint t = (h[7] << 7 | h[7] >> 25) + (h[1] ^ h[2]) + w[j];
      for (int q = 7; q > 0; q--)
        h[q] = h[q - 1];
      h[0] = t;
    }
    for (int j = 0; j < 16; j++) {
      cl_uint x = w[(j + 1) % 16];
      w[j] += (x << 3 | x >> 29) ^ h[j % 8];
    }
  }
  for (int j = 0; j < 8; j++)
    out[j] = h[j] ^ w[j] ^ w[j + 8];
}

/* Whether ir calls a masked or gathering intrinsic on private (address
 * space 0) pointers: llvm.masked.<op>.<types> ending in p0. */
static int private_masked_access(const char *ir) {
  for (const char *at = strstr(ir, "@llvm.masked."); at; at = strstr(at + 1, "@llvm.masked.")) {
    const char *paren = strchr(at, '(');
    if (paren && paren - at > 2 && paren[-2] == 'p' && paren[-1] == '0') {
      printf("  %.*s\n", (int)(paren - at), at);
      return 1;
    }
  }
  return 0;
}

/* Builds source (env before clfatbin) and returns its IR before
 * optimization, or NULL; checks that kernel was vectorized. */
static char *vectorized_ir(const char *name, const char *source, const char *kernel,
                           const char *env) {
  char ir_path[300], want[200];
  snprintf(ir_path, sizeof ir_path, "%s/%s.ll", cache_dir, name);
  snprintf(want, sizeof want, "kernel '%s': vectorized", kernel);
  char *log = vectorize_report_for(name, source, ir_path, env);
  if (!log) return NULL;
  if (!strstr(log, want)) printf("  %.300s\n", log);
  CHECK(strstr(log, want) != NULL);
  free(log);
  size_t size = 0;
  return (char *)read_whole(ir_path, &size);
}

static void private_state_stays_in_vectors(void) {
  char *ir = vectorized_ir("state", private_state_source, "rounds", "");
  REQUIRE(ir);
  CHECK(strstr(ir, "lanes.interleaved") != NULL);
  CHECK(!private_masked_access(ir));
  free(ir);

  enum { N = 200 };
  cl_int err;
  cl_program p = build_source(private_state_source, "", &err);
  REQUIRE(err == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "rounds", &err);
  REQUIRE(k);
  cl_uint in[64], out[N * 8], want[8];
  for (int i = 0; i < 64; i++)
    in[i] = (cl_uint)i * 2654435761u;
  cl_mem din = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
  cl_mem dout = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  clSetKernelArg(k, 0, sizeof din, &din);
  clSetKernelArg(k, 1, sizeof dout, &dout);
  static const size_t locals[] = {8, 40, 1};
  for (size_t c = 0; c < sizeof locals / sizeof locals[0]; c++) {
    size_t g = N, l = locals[c];
    memset(out, 0, sizeof out);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, dout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
                 CL_SUCCESS);
    int wrong = 0;
    for (cl_uint i = 0; i < N; i++) {
      host_rounds(in, i, want);
      wrong += memcmp(want, out + i * 8, sizeof want) != 0;
    }
    CHECK_EQ_INT(wrong, 0);
  }
  clReleaseMemObject(din);
  clReleaseMemObject(dout);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* Stores whose indices differ by a constant that LLVM writes apart (an
 * FFT's exchange through __local memory, clFFT's
 * lds[((2*me + 1)/64)*256 + (2*me + 1)%64 + k] beside the same with
 * 2*me + 0: after instcombine, (2me | 1) & 63 beside 2me & 62, each on a
 * copy of 2me & -64) are one interleaved store, not a masked store (or a
 * scatter) per member; the results are checked for a few work-group
 * counts. */
static const char *index_pairs_source =
    "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
    "void pairs(__global const float4 *in, __global float *out) {\n"
    "  uint me = get_local_id(0);\n"
    "  __local float lds[512];\n"
    "  float4 r = in[get_global_id(0)];\n"
    "  lds[((2*me + 0)/64)*256 + (2*me + 0)%64 + 0] = r.x;\n"
    "  lds[((2*me + 0)/64)*256 + (2*me + 0)%64 + 64] = r.y;\n"
    "  lds[((2*me + 1)/64)*256 + (2*me + 1)%64 + 0] = r.z;\n"
    "  lds[((2*me + 1)/64)*256 + (2*me + 1)%64 + 64] = r.w;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  float a = lds[(me * 2) % 128] + lds[(me * 2) % 128 + 256 * (me & 1)];\n"
    "  float b = lds[(me * 2 + 1) % 128] + lds[(me * 2 + 1) % 128 + 256 * (me & 1)];\n"
    "  out[get_global_id(0) * 2] = a;\n"
    "  out[get_global_id(0) * 2 + 1] = b;\n"
    "}\n";

static void index_pairs_are_one_store(void) {
  char *ir = vectorized_ir("pairs", index_pairs_source, "pairs", "");
  REQUIRE(ir);
  const char *fn = strstr(ir, "pairs.vec");
  if (!fn) fn = ir;
  const char *strided = strstr(fn, "@llvm.masked.store");
  if (!strided) strided = strstr(fn, "@llvm.masked.scatter");
  if (strided) printf("  a member stored alone: %.200s\n", strided);
  CHECK(!strided);
  free(ir);

  enum { N = 256 };
  cl_int err;
  cl_program p = build_source(index_pairs_source, "", &err);
  REQUIRE(err == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "pairs", &err);
  REQUIRE(k);
  float in[4 * N], out[2 * N], lds[512];
  for (int i = 0; i < 4 * N; i++)
    in[i] = (float)(i % 53) - 26.0f;
  cl_mem din = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
  cl_mem dout = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  clSetKernelArg(k, 0, sizeof din, &din);
  clSetKernelArg(k, 1, sizeof dout, &dout);
  for (size_t g = 64; g <= N; g *= 2) {
    size_t l = 64;
    memset(out, 0, sizeof out);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, dout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
                 CL_SUCCESS);
    int wrong = 0;
    for (size_t group = 0; group < g / 64; group++) {
      for (int i = 0; i < 512; i++)
        lds[i] = -1000.0f; /* never read: each read slot is written */
      for (unsigned me = 0; me < 64; me++) {
        const float *r = in + 4 * (group * 64 + me);
        lds[(2 * me) / 64 * 256 + (2 * me) % 64] = r[0];
        lds[(2 * me) / 64 * 256 + (2 * me) % 64 + 64] = r[1];
        lds[(2 * me + 1) / 64 * 256 + (2 * me + 1) % 64] = r[2];
        lds[(2 * me + 1) / 64 * 256 + (2 * me + 1) % 64 + 64] = r[3];
      }
      for (unsigned me = 0; me < 64; me++)
        for (unsigned j = 0; j < 2; j++) {
          float want = lds[(me * 2 + j) % 128] + lds[(me * 2 + j) % 128 + 256 * (me & 1)];
          wrong += out[(group * 64 + me) * 2 + j] != want;
        }
    }
    CHECK_EQ_INT(wrong, 0);
  }
  clReleaseMemObject(din);
  clReleaseMemObject(dout);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* Built for x86-64-v3 (AVX2 without AVX-512), whatever this machine is:
 * a table lookup and a store at a data-dependent address, in a loop each
 * work-item runs its own number of times, become a gather and a scatter
 * without a mask, lanes that are off reading and writing a private spare
 * slot: LLVM turns a masked one into a branch per lane there (KeePass's
 * AES rounds). */
static const char *spare_slot_source =
    "__kernel void lookups(__global const uint *in, __constant uint *t, __global uint *out) {\n"
    "  uint i = get_global_id(0), s = in[i];\n"
    "  for (uint r = 0; r < (s & 7); r++) {\n"
    "    s = t[s & 63] ^ (s >> 3);\n"
    "    s ^= (s << 7) + (s >> 9) * 3u;\n"
    "    s = s * 2654435761u ^ (s >> 13);\n"
    "    out[i * 8 + (s & 7)] = r;\n"
    "  }\n"
    "}\n";

/* Whether every masked gather and scatter in ir has a constant mask of
 * all lanes on. */
static int gathers_unmasked(const char *ir) {
  int ok = 1, seen = 0;
  for (const char *at = strstr(ir, "call "); at; at = strstr(at + 1, "call ")) {
    const char *eol = strchr(at, '\n');
    const char *name = strstr(at, "@llvm.masked.");
    if (!eol || !name || name > eol) continue;
    if (strncmp(name, "@llvm.masked.gather", 19) && strncmp(name, "@llvm.masked.scatter", 20))
      continue;
    seen++;
    /* The mask: the last "x i1> " operand on the line. */
    const char *mask = NULL;
    for (const char *m = strstr(at, " x i1> "); m && m < eol; m = strstr(m + 1, " x i1> "))
      mask = m + 7;
    if (!mask || (strncmp(mask, "<i1 true", 8) && strncmp(mask, "splat (i1 true)", 15))) {
      printf("  %.*s\n", (int)(eol - at), at);
      ok = 0;
    }
  }
  return ok && seen >= 2;
}

static void gathers_without_avx512_have_no_mask(void) {
  char *ir = vectorized_ir("spare", spare_slot_source, "lookups", "AQUILA_CPU_TARGET=x86-64-v3");
  REQUIRE(ir);
  CHECK(strstr(ir, "spare.slot") != NULL);
  CHECK(gathers_unmasked(ir));
  free(ir);
}

/* Built for x86-64-v3 (AVX2 without AVX-512, where LLVM makes a gather
 * one load per lane): a round of four table lookups, each indexed by the
 * last round's lookups, and a key read from each work-item's own copy of a
 * private struct (bytes and words: not lane-interleaved), is faster as
 * scalar code and stays scalar, the report says why (KeePass's AES
 * rounds); a chain of one lookup per round among more arithmetic is
 * vectorized; Blowfish-like rounds on a private table, whose branches let
 * work-items run in pairs, stay scalar and run paired. */
static const char *lookup_rounds_source =
    "typedef struct { uint k[16]; uchar tag; } key_t;\n"
    "__kernel void aes_like(__global const uint *in, __constant uint *t, __global uint *out) {\n"
    "  uint i = get_global_id(0);\n"
    "  key_t key;\n"
    "  for (int j = 0; j < 16; j++) key.k[j] = in[(i + j) % 64];\n"
    "  key.tag = (uchar)i;\n"
    "  uint a = in[i % 64], b = a ^ 1u, c = a ^ 2u, d = a ^ 3u;\n"
    "  for (uint r = 0; r < (i & 3) + 8; r++) {\n"
    "    uint na = t[a & 255] ^ t[256 + (b >> 24)] ^ key.k[r % 16];\n"
    "    uint nb = t[b & 255] ^ t[256 + (c >> 24)] ^ key.k[(r + 1) % 16];\n"
    "    uint nc = t[c & 255] ^ t[256 + (d >> 24)] ^ key.k[(r + 2) % 16];\n"
    "    uint nd = t[d & 255] ^ t[256 + (a >> 24)] ^ key.tag;\n"
    "    a = na; b = nb; c = nc; d = nd;\n"
    "  }\n"
    "  out[i] = a ^ b ^ c ^ d;\n"
    "}\n"
    "__kernel void lut_chain(__global const uint *in, __constant uint *t, __global uint *out) {\n"
    "  uint i = get_global_id(0), s = in[i], a = s * 7u, b = s ^ 0x55u, c = s + 3u;\n"
    "  for (int r = 0; r < 64; r++) {\n"
    "    uint x = t[s & 255] ^ t[256 + ((a >> 8) & 255)];\n"
    "    a = a * 3u + (b >> 3) + x; b = (b << 5) ^ (c >> 2) ^ a; c = c + (a ^ b) * 9u;\n"
    "    s = x ^ a;\n"
    "  }\n"
    "  out[i] = s + a + b + c;\n"
    "}\n"
    "__kernel void private_rounds(__global const uint *in, __constant uint *t, __global uint *out) "
    "{\n"
    "  uint i = get_global_id(0), S[1024];\n"
    "  for (int j = 0; j < 1024; j++) S[j] = t[j] ^ (in[i] * (uint)j);\n"
    "  uint L = in[i], R = ~L;\n"
    "  for (uint r = 0; r < 4096; r++) {\n"
    "    R ^= ((S[L >> 24] + S[256 + ((L >> 16) & 255)]) ^ S[512 + ((L >> 8) & 255)]) +\n"
    "         S[768 + (L & 255)];\n"
    "    uint x = L; L = R; R = x;\n"
    "    S[r & 1023] ^= L;\n"
    "  }\n"
    "  out[i] = L ^ R;\n"
    "}\n";

/* A candidate loop as hashcat writes it: each iteration a long chain (its
 * rounds written out, as hashcat's macros do), a
 * compare, and a rare path with side effects (a hit counted and recorded;
 * here it may also shorten the loop, whose count is read again every
 * iteration). The compiler runs two iterations at once (interleave.c);
 * every hit must still be found, in order within a work-item, with rare
 * paths taken often, never, in consecutive iterations and at odd counts. */
#define SEARCH_STEPS 48
static const char *search_loop_source =
    "#define STEP(a, b, c, d, k, s) a = rotate(a + (b ^ c ^ d) + k, (uint)s) + b;\n"
    "#define ROUNDS(r) STEP(a, b, c, d, 0x5a827999u + r, 7) STEP(d, a, b, c, 0x6ed9eba1u + r, 12) "
    "\\\n"
    "  STEP(c, d, a, b, 0x8f1bbcdcu + r, 17) STEP(b, c, d, a, 0xca62c1d6u + r, 22)\n"
    "__kernel void search(__global const uint *words, __global uint *hits,\n"
    "                     __global uint *limit, uint mask) {\n"
    "  uint gid = get_global_id(0), seed = gid * 0x9e3779b9u;\n"
    "  for (uint i = 0; i < limit[gid]; i++) {\n"
    "    uint a = words[i] ^ seed, b = 0x67452301u, c = 0xefcdab89u, d = 0x98badcfeu;\n"
    "    ROUNDS(0) ROUNDS(4) ROUNDS(8) ROUNDS(12) ROUNDS(16) ROUNDS(20)\n"
    "    ROUNDS(24) ROUNDS(28) ROUNDS(32) ROUNDS(36) ROUNDS(40) ROUNDS(44)\n"
    "    if ((a & mask) != 0) continue;\n"
    "    uint n = atomic_inc(&hits[0]);\n"
    "    if (n < 16383) hits[1 + n] = gid << 16 | i;\n"
    "    if (words[i] == 7u) limit[gid] = i + 2;\n"
    "  }\n"
    "}\n"
    "#define HIT(j) if ((a.s##j & mask) == 0) { uint n = atomic_inc(&hits[0]); \\\n"
    "    if (n < 16383) hits[1 + n] = gid << 16 | i << 2 | j; }\n"
    "__kernel void search4(__global const uint *words, __global uint *hits,\n"
    "                      __global uint *limit, uint mask) {\n"
    "  uint gid = get_global_id(0), seed = gid * 0x9e3779b9u;\n"
    "  uint4 lanes = (uint4)(0, 1, 2, 3) * 0x01000193u;\n"
    "  for (uint i = 0; i < limit[gid]; i++) {\n"
    "    uint4 a = (words[i] ^ lanes) ^ seed, b = 0x67452301u, c = 0xefcdab89u, d = 0x98badcfeu;\n"
    "    ROUNDS(0) ROUNDS(4) ROUNDS(8) ROUNDS(12) ROUNDS(16) ROUNDS(20)\n"
    "    ROUNDS(24) ROUNDS(28) ROUNDS(32) ROUNDS(36) ROUNDS(40) ROUNDS(44)\n"
    "    if (!any((a & mask) == 0)) continue;\n"
    "    HIT(0) HIT(1) HIT(2) HIT(3)\n"
    "    if (words[i] == 7u) limit[gid] = i + 2;\n"
    "  }\n"
    "}\n";

static uint32_t rotl32(uint32_t x, unsigned s) {
  return x << s | x >> (32 - s);
}

static uint32_t search_hash(uint32_t w, uint32_t seed) {
  uint32_t a = w ^ seed, b = 0x67452301u, c = 0xefcdab89u, d = 0x98badcfeu;
  for (uint32_t r = 0; r < SEARCH_STEPS; r += 4) {
    a = rotl32(a + (b ^ c ^ d) + 0x5a827999u + r, 7) + b;
    d = rotl32(d + (a ^ b ^ c) + 0x6ed9eba1u + r, 12) + a;
    c = rotl32(c + (d ^ a ^ b) + 0x8f1bbcdcu + r, 17) + d;
    b = rotl32(b + (c ^ d ^ a) + 0xca62c1d6u + r, 22) + c;
  }
  return a;
}

static int compare_u32(const void *x, const void *y) {
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return a < b ? -1 : a > b;
}

/* Runs kernel name of search_loop_source (lanes candidates an iteration:
 * "search" 1, "search4" 4, in a uint4 as hashcat's u32x) for every mask,
 * count and local size, checking its hits against the host's. */
static void search_hits_match(cl_program p, const char *name, unsigned lanes) {
  /* Room for every hit: the first ones kept by the atomic's order would
   * not be the host's. */
  enum { WORDS = 70, ITEMS = 32, HITS = 16384 };
  cl_int err;
  cl_kernel k = clCreateKernel(p, name, &err);
  REQUIRE(k);
  static cl_uint words[WORDS], hits[HITS], limit[ITEMS], want[HITS];
  for (int i = 0; i < WORDS; i++)
    words[i] = (cl_uint)i * 2654435761u + 11u;
  words[9] = words[40] = 7u; /* a hit here ends its loop two iterations later */
  cl_mem dwords = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof words, words, &err);
  cl_mem dhits = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof hits, NULL, &err);
  cl_mem dlimit = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof limit, NULL, &err);
  clSetKernelArg(k, 0, sizeof dwords, &dwords);
  clSetKernelArg(k, 1, sizeof dhits, &dhits);
  clSetKernelArg(k, 2, sizeof dlimit, &dlimit);
  /* Every iteration a hit, one in 4, one in 64, none (a mask no hash fits
   * is unlikely: the expected list says what the host found). */
  static const cl_uint masks[] = {0u, 3u, 63u, 0xffffffffu};
  static const cl_uint counts[] = {0, 1, 2, 3, 5, 64, 70};
  static const size_t locals[] = {1, 16};
  for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++)
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
      for (size_t l = 0; l < sizeof locals / sizeof locals[0]; l++) {
        unsigned num_want = 0;
        for (cl_uint g = 0; g < ITEMS; g++) {
          limit[g] = counts[c] - (g % 3 == 2 && counts[c] ? 1 : 0);
          for (cl_uint i = 0, end = limit[g]; i < end; i++) {
            int hit = 0;
            for (cl_uint j = 0; j < lanes; j++) {
              cl_uint w = lanes == 1 ? words[i] : words[i] ^ (j * 0x01000193u);
              if (search_hash(w, g * 0x9e3779b9u) & masks[m]) continue;
              if (num_want < HITS - 1)
                want[num_want] = lanes == 1 ? g << 16 | i : g << 16 | i << 2 | j;
              num_want++;
              hit = 1;
            }
            if (hit && words[i] == 7u) end = i + 2;
          }
        }
        memset(hits, 0, sizeof hits);
        clEnqueueWriteBuffer(queue, dhits, CL_TRUE, 0, sizeof hits, hits, 0, NULL, NULL);
        clEnqueueWriteBuffer(queue, dlimit, CL_TRUE, 0, sizeof limit, limit, 0, NULL, NULL);
        clSetKernelArg(k, 3, sizeof masks[m], &masks[m]);
        size_t global = ITEMS;
        CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &locals[l], 0, NULL, NULL),
                     CL_SUCCESS);
        CHECK_EQ_INT(
            clEnqueueReadBuffer(queue, dhits, CL_TRUE, 0, sizeof hits, hits, 0, NULL, NULL),
            CL_SUCCESS);
        int same = hits[0] == num_want;
        unsigned kept = num_want < HITS - 1 ? num_want : HITS - 1;
        qsort(hits + 1, kept, sizeof hits[0], compare_u32);
        qsort(want, kept, sizeof want[0], compare_u32);
        for (unsigned i = 0; same && i < kept; i++)
          same = hits[1 + i] == want[i];
        if (!same)
          printf("  %s, mask %#x, count %u, local size %zu: %u hits, %u expected\n", name, masks[m],
                 counts[c], locals[l], hits[0], num_want);
        CHECK(same);
      }
  clReleaseMemObject(dwords);
  clReleaseMemObject(dhits);
  clReleaseMemObject(dlimit);
  clReleaseKernel(k);
}

static void search_loop_pairs_keep_every_hit(void) {
  char *log =
      vectorize_report_for("search", search_loop_source, NULL, "AQUILA_DEBUG=vectorize,interleave");
  REQUIRE(log);
  int scalar = strstr(log, "'search.wg': a loop's iterations run in pairs") != NULL;
  int vector = strstr(log, "'search4.wg': a loop's iterations run in pairs") != NULL;
  if (!scalar || !vector) printf("  %.600s\n", log);
  CHECK(scalar);
  CHECK(vector);
  free(log);
  cl_int err;
  cl_program p = build_source(search_loop_source, "", &err);
  REQUIRE(err == CL_SUCCESS);
  search_hits_match(p, "search", 1);
  search_hits_match(p, "search4", 4);
  clReleaseProgram(p);
}

static void lookup_rounds_stay_scalar_without_avx512(void) {
  char *log =
      vectorize_report_for("lookups", lookup_rounds_source, NULL, "AQUILA_CPU_TARGET=x86-64-v3");
  REQUIRE(log);
  const char *aes = strstr(log, "kernel 'aes_like': not vectorized (its loops' ");
  const char *lut = strstr(log, "kernel 'lut_chain': vectorized");
  /* A private table's lookup chain: its gathers weighed against paired
   * scalar code (61.8 ms against 72.8 vectorized on this machine). */
  const char *rounds = strstr(log, "kernel 'private_rounds': not vectorized (");
  const char *end = rounds ? strchr(rounds, '\n') : NULL;
  const char *paired = rounds ? strstr(rounds, "scalar code in pairs") : NULL;
  paired = paired && (!end || paired < end) ? strstr(paired, "work-items in pairs") : NULL;
  if (!aes || !lut || !paired || (end && paired > end)) printf("  %.900s\n", log);
  CHECK(aes != NULL);
  CHECK(lut != NULL);
  CHECK(paired != NULL && (!end || paired < end));
  free(log);
}

/* Work-items in pairs (compiler/workgroup/workitem_pairs.c): a kernel the
 * vectorizer leaves scalar (here by a limit of 20 instructions) whose
 * branches are the same for every work-item runs two work-items in one
 * body. Blowfish-like rounds on a private table each work-item rewrites as
 * it goes, an atomic per work-item, odd local sizes (the scalar code takes
 * a row's last work-item): every result as the host computes it. A kernel
 * whose loop branches on its own data stays unpaired. */
static const char *pairs_source =
    "__kernel void rounds(__global const uint *in, __constant uint *init, __global uint *out,\n"
    "                     volatile __global uint *count, uint n) {\n"
    "  uint i = get_global_id(0);\n"
    "  uint S[256];\n"
    "  for (int j = 0; j < 256; j++) S[j] = init[j] ^ (in[i] * (uint)j);\n"
    "  uint L = in[i], R = ~in[i];\n"
    "  for (uint r = 0; r < n; r++) {\n"
    "    L ^= S[R & 255] + S[(R >> 8) & 255];\n"
    "    R ^= S[(L >> 16) & 255] ^ (S[L >> 24] + r);\n"
    "    S[r & 255] = L;\n"
    "  }\n"
    "  out[i] = L ^ R;\n"
    "  atomic_add(count, (L & 3) == 0 ? 1u : 0u);\n"
    "}\n"
    "__kernel void divergent(__global const uint *in, __global uint *out, uint n) {\n"
    "  uint i = get_global_id(0), s = in[i], steps = 0;\n"
    "  while (s > 1 && steps < n) {\n"
    "    s = (s & 1) ? s * 3u + 1u : s >> 1;\n"
    "    steps++;\n"
    "  }\n"
    "  out[i] = steps;\n"
    "}\n";

static cl_uint pairs_expected(const cl_uint *in, const cl_uint *init, cl_uint i, cl_uint n,
                              cl_uint *hits) {
  cl_uint S[256];
  for (cl_uint j = 0; j < 256; j++)
    S[j] = init[j] ^ (in[i] * j);
  cl_uint L = in[i], R = ~in[i];
  for (cl_uint r = 0; r < n; r++) {
    L ^= S[R & 255] + S[(R >> 8) & 255];
    R ^= S[(L >> 16) & 255] ^ (S[L >> 24] + r);
    S[r & 255] = L;
  }
  *hits += (L & 3) == 0;
  return L ^ R;
}

static void workitems_in_pairs_match_the_host(void) {
  char *log =
      vectorize_report_for("pairs", pairs_source, NULL, "AQUILA_VECTORIZE_MAX_INSTRUCTIONS=20");
  REQUIRE(log);
  const char *paired = strstr(log, "kernel 'rounds': not vectorized (");
  paired = paired ? strstr(paired, "work-items in pairs") : NULL;
  const char *unpaired = strstr(log, "kernel 'divergent': not vectorized (");
  unpaired =
      unpaired ? strstr(unpaired, "not paired (a branch that differs between work-items)") : NULL;
  if (!paired || !unpaired) printf("  %.600s\n", log);
  CHECK(paired != NULL);
  CHECK(unpaired != NULL);
  free(log);

  enum { N = 70 };
  setenv("AQUILA_VECTORIZE_MAX_INSTRUCTIONS", "20", 1);
  setenv("AQUILA_TIERS", "0", 1);
  setenv("AQUILA_CACHE", "0", 1);
  cl_int err;
  cl_program p = build_source(pairs_source, "", &err);
  REQUIRE(err == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "rounds", &err);
  REQUIRE(k);
  static cl_uint in[N], init[256], out[N];
  for (cl_uint i = 0; i < N; i++)
    in[i] = i * 2654435761u + 12345u;
  for (cl_uint j = 0; j < 256; j++)
    init[j] = j * 0x9e3779b9u ^ 0xa5a5a5a5u;
  cl_mem din = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
  cl_mem dinit = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof init, init, &err);
  cl_mem dout = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  cl_mem dcount = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
  cl_uint n = 1000;
  clSetKernelArg(k, 0, sizeof din, &din);
  clSetKernelArg(k, 1, sizeof dinit, &dinit);
  clSetKernelArg(k, 2, sizeof dout, &dout);
  clSetKernelArg(k, 3, sizeof dcount, &dcount);
  clSetKernelArg(k, 4, sizeof n, &n);
  static const size_t globals[] = {64, 63, 70, 33};
  static const size_t locals[] = {16, 7, 2, 11};
  for (size_t c = 0; c < sizeof globals / sizeof globals[0]; c++) {
    cl_uint zero = 0, count = 0, hits = 0;
    memset(out, 0, sizeof out);
    clEnqueueWriteBuffer(queue, dout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
    clEnqueueWriteBuffer(queue, dcount, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &globals[c], &locals[c], 0, NULL, NULL),
                 CL_SUCCESS);
    clEnqueueReadBuffer(queue, dout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
    clEnqueueReadBuffer(queue, dcount, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL);
    int wrong = 0;
    for (cl_uint i = 0; i < N; i++)
      wrong += out[i] != (i < globals[c] ? pairs_expected(in, init, i, n, &hits) : 0u);
    if (wrong || count != hits)
      printf("  global %zu, local %zu: %d wrong, %u hits counted, %u expected\n", globals[c],
             locals[c], wrong, count, hits);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(count, hits);
  }
  unsetenv("AQUILA_VECTORIZE_MAX_INSTRUCTIONS");
  unsetenv("AQUILA_TIERS");
  unsetenv("AQUILA_CACHE");
  clReleaseMemObject(din);
  clReleaseMemObject(dinit);
  clReleaseMemObject(dout);
  clReleaseMemObject(dcount);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* A grid-stride loop with int ids (pyopencl's elementwise kernels: `int
 * work_group_start = get_local_size(0) * get_group_id(0)`, a long i): i
 * stays lane 0's scalar, so the loop's accesses are plain vectors and its
 * walk by the global size gets prefetches. That holds because a range of
 * 2^31 - 2^17 work-items or more runs the scalar version: the work-group
 * function compares the global sizes with that bound. Results checked
 * against the host on a length that is no multiple of the global size. */
static const char *grid_stride_source =
    "__kernel void axpbyz(__global float *z, float a, __global const float *x, float b,\n"
    "                     __global const float *y, long n) {\n"
    "  int lid = get_local_id(0);\n"
    "  int gsize = get_global_size(0);\n"
    "  int work_group_start = get_local_size(0) * get_group_id(0);\n"
    "  long i;\n"
    "  for (i = work_group_start + lid; i < n; i += gsize) z[i] = a * x[i] + b * y[i];\n"
    "}\n";

static void grid_stride_loops_stay_affine(void) {
  char ir_path[300];
  snprintf(ir_path, sizeof ir_path, "%s/grid.ll", cache_dir);
  char *log = vectorize_report("grid", grid_stride_source, ir_path);
  REQUIRE(log);
  const char *line = strstr(log, "kernel 'axpbyz': vectorized");
  const char *end = line ? strchr(line, '\n') : NULL;
  const char *pf = line ? strstr(line, "prefetches ahead") : NULL;
  if (!pf || (end && pf > end)) printf("  %.300s\n", line ? line : log);
  CHECK(pf && (!end || pf < end));
  free(log);
  size_t size = 0;
  char *ir = (char *)read_whole(ir_path, &size);
  REQUIRE(ir);
  /* VECTORIZE_GLOBAL_SIZE_LIMIT, compared with the global sizes. */
  CHECK(strstr(ir, "icmp ult i64") && strstr(ir, ", 2147352576"));
  free(ir);

  enum { N = 100003 };
  cl_int err;
  cl_program p = build_source(grid_stride_source, "", &err);
  REQUIRE(err == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "axpbyz", &err);
  REQUIRE(k);
  static float x[N], y[N], z[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 251);
    y[i] = (float)(i % 13) - 6.0f;
  }
  cl_mem dz = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof z, NULL, &err);
  cl_mem dx = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
  cl_mem dy = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof y, y, &err);
  float a = 2.0f, b = 3.0f;
  cl_long n = N;
  clSetKernelArg(k, 0, sizeof dz, &dz);
  clSetKernelArg(k, 1, sizeof a, &a);
  clSetKernelArg(k, 2, sizeof dx, &dx);
  clSetKernelArg(k, 3, sizeof b, &b);
  clSetKernelArg(k, 4, sizeof dy, &dy);
  clSetKernelArg(k, 5, sizeof n, &n);
  size_t g = 8192, l = 128;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, dz, CL_TRUE, 0, sizeof z, z, 0, NULL, NULL), CL_SUCCESS);
  int wrong = 0;
  for (int i = 0; i < N; i++)
    wrong += z[i] != a * x[i] + b * y[i]; /* small integers: exact */
  CHECK_EQ_INT(wrong, 0);
  clReleaseMemObject(dz);
  clReleaseMemObject(dx);
  clReleaseMemObject(dy);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* Versions for the work-group sizes launches use (runtime/specialize.c),
 * in a child process with AQUILA_DEBUG on: a kernel without
 * reqd_work_group_size whose result depends on its work-group size (a
 * tile in __local memory, a barrier, loops over the size) is launched
 * with 8 x 8 and 16 x 4 groups in turn; each size gets its own version,
 * built in the background, and every launch's result is right whichever
 * code ran it. A second run takes both versions from the kernel cache at
 * their sizes' first launches. */
static const char *specialize_source =
    "__kernel void tiled(__global const float *a, __global float *out, __local float *tile) {\n"
    "  size_t lx = get_local_id(0), ly = get_local_id(1);\n"
    "  size_t w = get_local_size(0), h = get_local_size(1);\n"
    "  size_t gx = get_global_id(0), gy = get_global_id(1), n = get_global_size(0);\n"
    "  tile[ly * w + lx] = a[gy * n + gx];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  float s = 0.0f;\n"
    "  for (size_t i = 0; i < w; i++) s += tile[ly * w + (w - 1 - i)] * (float)(i + 1);\n"
    "  for (size_t j = 0; j < h; j++) s += tile[j * w + lx];\n"
    "  out[gy * n + gx] = s;\n"
    "}\n";

/* One launch of tiled on an n x n grid in groups of w x h; 1 when every
 * element is right. */
static int run_tiled(cl_kernel k, cl_mem a, cl_mem out, const float *host_a, size_t n, size_t w,
                     size_t h) {
  size_t global[2] = {n, n}, local[2] = {w, h};
  clSetKernelArg(k, 0, sizeof a, &a);
  clSetKernelArg(k, 1, sizeof out, &out);
  clSetKernelArg(k, 2, w * h * sizeof(float), NULL);
  float *got = malloc(n * n * sizeof(float));
  cl_int err = got ? clEnqueueNDRangeKernel(queue, k, 2, NULL, global, local, 0, NULL, NULL)
                   : CL_OUT_OF_HOST_MEMORY;
  if (err == CL_SUCCESS)
    err = clEnqueueReadBuffer(queue, out, CL_TRUE, 0, n * n * sizeof(float), got, 0, NULL, NULL);
  int ok = err == CL_SUCCESS;
  for (size_t y = 0; y < n && ok; y++)
    for (size_t x = 0; x < n && ok; x++) {
      size_t x0 = x / w * w, y0 = y / h * h, lx = x - x0, ly = y - y0;
      float s = 0.0f;
      for (size_t i = 0; i < w; i++)
        s += host_a[y * n + x0 + (w - 1 - i)] * (float)(i + 1);
      for (size_t j = 0; j < h; j++)
        s += host_a[(y0 + j) * n + x0 + lx];
      (void)ly;
      if (fabsf(got[y * n + x] - s) > 1e-4f * fabsf(s) + 1e-4f) {
        printf("  %zu x %zu groups: element (%zu, %zu) is %g, expected %g\n", w, h, x, y,
               got[y * n + x], s);
        ok = 0;
      }
    }
  free(got);
  return ok;
}

/* A kernel whose code says a known work-group size gains it nothing
 * (AQUILA_KERNEL_SIZE_INDIFFERENT: no barriers, and float8 arithmetic,
 * which the vectorizer leaves alone): launched with two sizes, it gets no
 * versions, and its results are right. 1 when they are. */
static const char *indifferent_source =
    "__kernel void wide(__global const float8 *a, __global float8 *out) {\n"
    "  size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);\n"
    "  out[i] = a[i] * (float8)(2.0f) + (float8)((float)get_local_size(0));\n"
    "}\n";

static int run_indifferent(void) {
  enum { N = 32 };
  cl_int err;
  cl_program p = build_source(indifferent_source, "", &err);
  cl_kernel k = p && err == CL_SUCCESS ? clCreateKernel(p, "wide", &err) : NULL;
  static float host_a[N * N * 8], got[N * N * 8];
  for (int i = 0; i < N * N * 8; i++)
    host_a[i] = (float)(i % 29) - 14.0f;
  cl_mem a = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof host_a, host_a, &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof host_a, NULL, &err);
  int ok = k && a && out;
  const size_t sizes[2][2] = {{8, 8}, {16, 4}};
  for (int round = 0; round < 4 && ok; round++) {
    size_t global[2] = {N, N}, local[2] = {sizes[round % 2][0], sizes[round % 2][1]};
    clSetKernelArg(k, 0, sizeof a, &a);
    clSetKernelArg(k, 1, sizeof out, &out);
    ok = clEnqueueNDRangeKernel(queue, k, 2, NULL, global, local, 0, NULL, NULL) == CL_SUCCESS &&
         clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL) == CL_SUCCESS;
    for (int i = 0; i < N * N * 8 && ok; i++)
      if (got[i] != host_a[i] * 2.0f + (float)local[0]) {
        printf("  wide, %zu x %zu groups: element %d is %g\n", local[0], local[1], i, got[i]);
        ok = 0;
      }
  }
  if (out) clReleaseMemObject(out);
  if (a) clReleaseMemObject(a);
  if (k) clReleaseKernel(k);
  if (p) clReleaseProgram(p);
  return ok;
}

static int specialize_child(void) {
  enum { N = 64 };
  if (getenv("TEST_SPECIALIZE_INDIFFERENT") && !run_indifferent()) return 0;
  cl_int err;
  cl_program p = build_source(specialize_source, "", &err);
  cl_kernel k = p && err == CL_SUCCESS ? clCreateKernel(p, "tiled", &err) : NULL;
  float host_a[N * N];
  for (int i = 0; i < N * N; i++)
    host_a[i] = (float)((i * 7) % 13) - 6.0f;
  cl_mem a = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof host_a, host_a, &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof host_a, NULL, &err);
  if (!k || !a || !out) return 0;
  size_t entries = count_cache_entries();
  int ok = 1, both_built = 0, second_run = getenv("TEST_SPECIALIZE_SECOND_RUN") != NULL;
  /* Both versions are in the cache a moment before they are in place:
   * launches go on for a while after, so that they run. Bounded: 15 s. */
  for (int i = 0; i < 500 && ok && both_built < 20; i++) {
    ok = run_tiled(k, a, out, host_a, N, 8, 8) && run_tiled(k, a, out, host_a, N, 16, 4);
    if (second_run || count_cache_entries() >= entries + 2) both_built++;
    usleep(30000);
  }
  if (both_built < 20) printf("  no versions for both sizes within 15 s\n");
  clReleaseMemObject(a);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
  return ok && both_built == 20;
}

/* Runs the specialize child with the kernel cache dir and env (a few
 * launches only with TEST_SPECIALIZE_SECOND_RUN in it); returns what it
 * wrote to standard error. */
static char *run_specialize_child(const char *dir, int run, const char *env) {
  char log_path[340], cmd[1400];
  snprintf(log_path, sizeof log_path, "%s-stderr-%d.txt", dir, run);
  snprintf(cmd, sizeof cmd,
           "AQUILA_DEBUG=1 AQUILA_CACHE_DIR=%s %s %s/test/compiler/test_compiler "
           "--specialize-child 2>%s",
           dir, env, build_dir, log_path);
  CHECK_EQ_INT(system(cmd), 0);
  size_t size = 0;
  char *text = (char *)read_whole(log_path, &size);
  CHECK(text != NULL);
  return text;
}

static void versions_for_the_launched_work_group_sizes(void) {
  char dir[300];
  snprintf(dir, sizeof dir, "%s/specialize", cache_dir);
  mkdir(dir, 0700);
  char *text = run_specialize_child(dir, 0, "AQUILA_SPECIALIZE=1");
  if (!text) return;
  const char *asked = strstr(text, "with work-groups of 8 x 8 x 1: a version for that size is "
                                   "built in the background");
  const char *made_8 = strstr(text, "its version for work-groups of 8 x 8 x 1, made in");
  const char *made_16 = strstr(text, "its version for work-groups of 16 x 4 x 1, made in");
  const char *ran_8 = strstr(text, "kernel 'tiled': launched with its version for work-groups "
                                   "of 8 x 8 x 1");
  const char *ran_16 = strstr(text, "kernel 'tiled': launched with its version for work-groups "
                                    "of 16 x 4 x 1");
  CHECK(asked && made_8 && made_16 && ran_8 && ran_16);
  CHECK(asked < made_8 && made_8 < ran_8 && made_16 < ran_16);
  if (!(asked && made_8 && made_16 && ran_8 && ran_16)) printf("  child's stderr:\n%s\n", text);
  free(text);
  text = run_specialize_child(dir, 1, "AQUILA_SPECIALIZE=1 TEST_SPECIALIZE_SECOND_RUN=1");
  if (!text) return;
  const char *cached_8 = strstr(text, "its version for work-groups of 8 x 8 x 1, from the kernel "
                                      "cache");
  const char *cached_16 = strstr(text, "its version for work-groups of 16 x 4 x 1, from the "
                                       "kernel cache");
  CHECK(cached_8 && cached_16 && !strstr(text, "a version for that size is built"));
  if (!(cached_8 && cached_16)) printf("  second run's stderr:\n%s\n", text);
  free(text);
}

/* AQUILA_SPECIALIZE=now (the conformance suites' mode): a size's first
 * launch waits for its version and runs it; every result is right. */
static void versions_made_at_the_first_launch_with_now(void) {
  char dir[300];
  snprintf(dir, sizeof dir, "%s/specialize-now", cache_dir);
  mkdir(dir, 0700);
  char *text = run_specialize_child(
      dir, 0, "AQUILA_SPECIALIZE=now TEST_SPECIALIZE_SECOND_RUN=1 TEST_SPECIALIZE_INDIFFERENT=1");
  if (!text) return;
  const char *made_8 = strstr(text, "its version for work-groups of 8 x 8 x 1, made in");
  const char *ran_8 = strstr(text, "launched with its version for work-groups of 8 x 8 x 1");
  const char *ran_16 = strstr(text, "launched with its version for work-groups of 16 x 4 x 1");
  CHECK(made_8 && ran_8 && ran_16 && made_8 < ran_8 &&
        !strstr(text, "a version for that size is built"));
  /* The kernel that gains nothing from a size gets no version. */
  CHECK(!strstr(text, "kernel 'wide': its version") &&
        !strstr(text, "kernel 'wide': launched with its version"));
  if (!(made_8 && ran_8 && ran_16)) printf("  child's stderr:\n%s\n", text);
  free(text);
}

int main(int argc, char **argv) {
  build_dir = getenv("BUILD") ? getenv("BUILD") : "build";
  if (argc > 1 &&
      (!strcmp(argv[1], "--tiers-child") || !strcmp(argv[1], "--long-launch-child") ||
       !strcmp(argv[1], "--unlaunched-child") || !strcmp(argv[1], "--prefetch-child") ||
       !strcmp(argv[1], "--short-run-child") || !strcmp(argv[1], "--specialize-child") ||
       !strcmp(argv[1], "--upgrade-run-child") || !strcmp(argv[1], "--parts-child"))) {
    snprintf(cache_dir, sizeof cache_dir, "%s", getenv("AQUILA_CACHE_DIR"));
    api_setup();
    int ok = !strcmp(argv[1], "--tiers-child")         ? tiers_child()
             : !strcmp(argv[1], "--long-launch-child") ? long_launch_child()
             : !strcmp(argv[1], "--prefetch-child")    ? prefetch_child()
             : !strcmp(argv[1], "--short-run-child")   ? short_run_child()
             : !strcmp(argv[1], "--specialize-child")  ? specialize_child()
             : !strcmp(argv[1], "--upgrade-run-child") ? upgrade_run_child()
             : !strcmp(argv[1], "--parts-child")       ? parts_child()
                                                       : unlaunched_child();
    api_teardown();
    return ok ? 0 : 1;
  }
  snprintf(cache_dir, sizeof cache_dir, "/tmp/aquila-test-cache-%ld", (long)getpid());
  mkdir(cache_dir, 0700);
  setenv("AQUILA_CACHE_DIR", cache_dir, 1);
  /* The compiler's scratch files, where the tests can see them. */
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s/tmp", cache_dir);
  mkdir(tmp, 0700);
  setenv("TMPDIR", tmp, 1);
  /* These tests count kernel-cache entries and name the code that ran:
   * versions for launches' work-group sizes (built in the background when
   * the devices idle) would add entries at any moment. Only the tests of
   * those versions have them (in their child processes). */
  setenv("AQUILA_SPECIALIZE", "0", 1);
  api_setup();
  RUN(build_log_has_line_and_column);
  RUN(unknown_option_is_invalid);
  RUN(cache_hit_and_invalidation);
  RUN(corrupt_cache_entry_is_rebuilt);
  RUN(cache_off);
  RUN(binary_needs_no_compiler);
  RUN(fatbin_target_selection);
  RUN(gpu_targets_run_on_cpu);
  RUN(barriers_split_into_loops);
  RUN(barriers_as_fibers);
  RUN(printf_output_is_flushed_at_completion);
  RUN(compile_and_link);
  RUN(c99_inline_functions);
  RUN(kernel_qualifier_from_a_macro);
  RUN(static_local_arrays_of_successive_programs);
  RUN(local_overrun_stays_in_group_memory);
  RUN(clblast_xgemm_loop_builds);
  RUN(code_made_at_the_first_launch);
  RUN(binaries_carry_machine_code);
  RUN(quick_tier_first_then_the_vector_version);
  RUN(quick_code_is_cached_for_the_next_run);
  RUN(stale_scratch_dirs_are_removed);
  RUN(vector_version_of_a_short_run_is_cached);
  RUN(versions_for_the_launched_work_group_sizes);
  RUN(versions_made_at_the_first_launch_with_now);
  RUN(long_first_launch_switches_to_the_vector_version);
  RUN(unlaunched_kernels_get_no_code);
  RUN(rebuild_and_release_with_background_builds_pending);
  RUN(warnings_stay_in_the_build_log);
  RUN(compiler_crash_is_a_build_failure);
  RUN(front_end_crash_keeps_the_diagnostics);
  RUN(compiler_hang_is_stopped);
  RUN(compiler_diagnostics_reach_stderr);
  RUN(kernels_built_in_parts_side_by_side);
  RUN(compiler_memory_is_clean);
  RUN(mad_enable_contracts);
  RUN(hash_rounds_reassociated);
  RUN(math_rare_paths_across_link);
  RUN(loops_split_at_implicit_barriers);
  RUN(loops_kept_whole);
  RUN(aliasing_is_not_strict_by_default);
  RUN(tiled_loops_prefetch_the_next_tile);
  RUN(accumulating_rows_run_jammed);
  RUN(ids_after_barrier_are_recomputed);
  RUN(grid_stride_loops_stay_affine);
  RUN(index_pairs_are_one_store);
  RUN(private_state_stays_in_vectors);
  RUN(gathers_without_avx512_have_no_mask);
  RUN(lookup_rounds_stay_scalar_without_avx512);
  RUN(workitems_in_pairs_match_the_host);
  RUN(search_loop_pairs_keep_every_hit);
  api_teardown();
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
  if (system(cmd) != 0) printf("  could not remove %s\n", cache_dir);
  CHECK_EXIT();
}
