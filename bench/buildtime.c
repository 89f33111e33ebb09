/* What building programs costs, in one fresh process with an empty kernel
 * cache of its own (AQUILA_CACHE_DIR and POCL_CACHE_DIR point at a new
 * temporary directory):
 *   startup_ms      clGetPlatformIDs, clGetDeviceIDs, clCreateContext
 *   cold_build_ms   the first clBuildProgram (a kernel of NBody's size)
 *   second_build_ms another program, not in the cache (the compiler is warm)
 *   cache_hit_ms    the first program's source again, from the kernel cache
 * and, each from clCreateProgramWithSource to its first result read back
 * (an implementation may generate code at the build or at the first launch:
 * the user waits for both), programs in the shapes applications build:
 *   many_kernels_ms 200 small elementwise kernels, one of them launched
 *                   (pyopencl's and OpenCV's many-kernel programs)
 *   all_created_ms  the same with every kernel created, one launched
 *                   (darktable creates each program's kernels at start)
 *   reduction_ms    a two-stage tree reduction over __local memory with
 *                   barriers, unrolled by the group size (pyopencl's
 *                   ReductionKernel)
 *   scan_ms         a work-group scan with barriers in loops, a carry pass
 *                   and an update pass (pyopencl's GenericScanKernel)
 *   huge_kernel_ms  one generated kernel of about 100 KB of source
 * Prints one JSON object; the platform is the first one the loader lists. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *source =
    "__kernel void nbody(__global const float4 *pos, __global float4 *acc, int n, float eps) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float4 p = pos[i], a = (float4)(0.0f);\n"
    "  for (int j = 0; j < n; j++) {\n"
    "    float4 d = pos[j] - p;\n"
    "    float r2 = d.x * d.x + d.y * d.y + d.z * d.z + eps;\n"
    "    float inv = rsqrt(r2);\n"
    "    a += d * (pos[j].w * inv * inv * inv);\n"
    "  }\n"
    "  acc[i] = a;\n"
    "}\n";

static const char *reduction_source =
    "#define GROUP_SIZE 256\n"
    "#define REDUCE(a, b) ((a) + (b))\n"
    "typedef float out_type;\n"
    "__kernel __attribute__((reqd_work_group_size(GROUP_SIZE, 1, 1)))\n"
    "void reduce_stage(__global out_type *out, __global const float *in, uint seq_count,\n"
    "                  uint n) {\n"
    "  __local out_type ldata[GROUP_SIZE];\n"
    "  uint lid = get_local_id(0);\n"
    "  uint i = get_group_id(0) * GROUP_SIZE * seq_count + lid;\n"
    "  out_type acc = 0;\n"
    "  for (uint s = 0; s < seq_count; s++) {\n"
    "    if (i >= n) break;\n"
    "    acc = REDUCE(acc, in[i] * in[i]);\n"
    "    i += GROUP_SIZE;\n"
    "  }\n"
    "  ldata[lid] = acc;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "#if GROUP_SIZE >= 512\n"
    "  if (lid < 256) ldata[lid] = REDUCE(ldata[lid], ldata[lid + 256]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "#endif\n"
    "  if (lid < 128) ldata[lid] = REDUCE(ldata[lid], ldata[lid + 128]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid < 64) ldata[lid] = REDUCE(ldata[lid], ldata[lid + 64]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid < 32) ldata[lid] = REDUCE(ldata[lid], ldata[lid + 32]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid < 16) ldata[lid] = REDUCE(ldata[lid], ldata[lid + 16]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid < 8) ldata[lid] = REDUCE(ldata[lid], ldata[lid + 8]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid < 4) ldata[lid] = REDUCE(ldata[lid], ldata[lid + 4]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid < 2) ldata[lid] = REDUCE(ldata[lid], ldata[lid + 2]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lid == 0) out[get_group_id(0)] = REDUCE(ldata[0], ldata[1]);\n"
    "}\n";

static const char *scan_source =
    "#define WG 256\n"
    "__kernel void scan_local(__global float *data, __global float *carries, uint n) {\n"
    "  __local float tmp[2 * WG];\n"
    "  uint lid = get_local_id(0), gid = get_global_id(0);\n"
    "  int pout = 0, pin = 1;\n"
    "  tmp[lid] = gid < n ? data[gid] : 0.0f;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (uint offset = 1; offset < WG; offset *= 2) {\n"
    "    pout = 1 - pout;\n"
    "    pin = 1 - pout;\n"
    "    float v = tmp[pin * WG + lid];\n"
    "    if (lid >= offset) v += tmp[pin * WG + lid - offset];\n"
    "    tmp[pout * WG + lid] = v;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (gid < n) data[gid] = tmp[pout * WG + lid];\n"
    "  if (lid == WG - 1) carries[get_group_id(0)] = tmp[pout * WG + lid];\n"
    "}\n"
    "__kernel void scan_carries(__global float *carries, uint groups) {\n"
    "  if (get_global_id(0) != 0) return;\n"
    "  float sum = 0.0f;\n"
    "  for (uint g = 0; g < groups; g++) {\n"
    "    float c = carries[g];\n"
    "    carries[g] = sum;\n"
    "    sum += c;\n"
    "  }\n"
    "}\n"
    "__kernel void scan_update(__global float *data, __global const float *carries, uint n) {\n"
    "  uint gid = get_global_id(0);\n"
    "  if (gid < n) data[gid] += carries[get_group_id(0)];\n"
    "}\n";

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void fail(const char *what) {
  fprintf(stderr, "buildtime: %s failed\n", what);
  exit(1);
}

static cl_program build(cl_context ctx, cl_device_id dev, const char *src, const char *options) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (!p || clBuildProgram(p, 1, &dev, options, NULL, NULL) != CL_SUCCESS) {
    size_t size = 0;
    if (p) clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = calloc(1, size + 1);
    if (p && log) clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    fprintf(stderr, "%s\n", log ? log : "");
    fail("build");
  }
  return p;
}

static double build_ms(cl_context ctx, cl_device_id dev, const char *src, const char *options) {
  double t0 = now_ms();
  cl_program p = build(ctx, dev, src, options);
  double t = now_ms() - t0;
  clReleaseProgram(p);
  return t;
}

static cl_mem buffer(cl_context ctx, size_t size, const void *host) {
  cl_int err;
  cl_mem m =
      clCreateBuffer(ctx, host ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE, size,
                     (void *)host, &err);
  if (!m) fail("clCreateBuffer");
  return m;
}

static void launch(cl_command_queue q, cl_kernel k, size_t global, size_t local) {
  if (clEnqueueNDRangeKernel(q, k, 1, NULL, &global, local ? &local : NULL, 0, NULL, NULL) !=
      CL_SUCCESS)
    fail("clEnqueueNDRangeKernel");
}

static void read_back(cl_command_queue q, cl_mem m, size_t size, void *host) {
  if (clEnqueueReadBuffer(q, m, CL_TRUE, 0, size, host, 0, NULL, NULL) != CL_SUCCESS)
    fail("clEnqueueReadBuffer");
}

#define N_ELEMENTS (1 << 20)

/* 200 kernels of pyopencl's elementwise shape (a strided loop over n); the
 * 100th is launched. */
static double many_kernels_ms(cl_context ctx, cl_device_id dev, cl_command_queue q, float *x,
                              float *y, int create_all) {
  size_t cap = 200 * 600, len = 0;
  char *src = malloc(cap);
  if (!src) fail("malloc");
  for (int k = 0; k < 200; k++)
    len += (size_t)snprintf(src + len, cap - len,
                            "__kernel void elementwise_%d(__global float *z, __global const "
                            "float *x, __global const float *y, float a, long n) {\n"
                            "  for (long i = get_global_id(0); i < n; i += get_global_size(0))\n"
                            "    z[i] = a * x[i] %c y[i] * %d.0f + (float)(i %% %d);\n"
                            "}\n",
                            k, "+-*"[k % 3], k + 1, k % 7 + 1);
  double t0 = now_ms();
  /* Another option, another program for every cache. */
  cl_program p = build(ctx, dev, src, create_all ? "-DALL_CREATED" : "");
  cl_int err;
  cl_kernel all[200] = {0};
  for (int j = 0; create_all && j < 200; j++) {
    char name[32];
    snprintf(name, sizeof name, "elementwise_%d", j);
    if (!(all[j] = clCreateKernel(p, name, &err))) fail("clCreateKernel");
  }
  cl_kernel k = clCreateKernel(p, "elementwise_99", &err);
  if (!k) fail("clCreateKernel");
  cl_mem mx = buffer(ctx, N_ELEMENTS * sizeof(float), x);
  cl_mem my = buffer(ctx, N_ELEMENTS * sizeof(float), y);
  cl_mem mz = buffer(ctx, N_ELEMENTS * sizeof(float), NULL);
  float a = 2.0f;
  cl_long n = N_ELEMENTS;
  clSetKernelArg(k, 0, sizeof mz, &mz);
  clSetKernelArg(k, 1, sizeof mx, &mx);
  clSetKernelArg(k, 2, sizeof my, &my);
  clSetKernelArg(k, 3, sizeof a, &a);
  clSetKernelArg(k, 4, sizeof n, &n);
  launch(q, k, N_ELEMENTS, 0);
  float *z = malloc(N_ELEMENTS * sizeof(float));
  if (!z) fail("malloc");
  read_back(q, mz, N_ELEMENTS * sizeof(float), z);
  double t = now_ms() - t0;
  /* elementwise_99: '+' (99 % 3 == 0), y * 100, i % 2. */
  for (int i = 0; i < N_ELEMENTS; i += 4099)
    if (fabsf(z[i] - (a * x[i] + y[i] * 100.0f + (float)(i % 2))) > 1e-3f * fabsf(z[i]) + 1e-3f)
      fail("many_kernels check");
  free(z);
  free(src);
  clReleaseMemObject(mx);
  clReleaseMemObject(my);
  clReleaseMemObject(mz);
  clReleaseKernel(k);
  for (int j = 0; j < 200; j++)
    if (all[j]) clReleaseKernel(all[j]);
  clReleaseProgram(p);
  return t;
}

static double reduction_ms(cl_context ctx, cl_device_id dev, cl_command_queue q, float *x) {
  double t0 = now_ms();
  cl_program p = build(ctx, dev, reduction_source, "");
  cl_int err;
  cl_kernel k = clCreateKernel(p, "reduce_stage", &err);
  if (!k) fail("clCreateKernel");
  cl_uint seq = 16, n = N_ELEMENTS, groups = N_ELEMENTS / (256 * 16);
  cl_mem in = buffer(ctx, N_ELEMENTS * sizeof(float), x);
  cl_mem out = buffer(ctx, groups * sizeof(float), NULL);
  clSetKernelArg(k, 0, sizeof out, &out);
  clSetKernelArg(k, 1, sizeof in, &in);
  clSetKernelArg(k, 2, sizeof seq, &seq);
  clSetKernelArg(k, 3, sizeof n, &n);
  launch(q, k, (size_t)groups * 256, 256);
  float *partial = malloc(groups * sizeof(float));
  if (!partial) fail("malloc");
  read_back(q, out, groups * sizeof(float), partial);
  double t = now_ms() - t0;
  double got = 0, want = 0;
  for (cl_uint g = 0; g < groups; g++)
    got += partial[g];
  for (int i = 0; i < N_ELEMENTS; i++)
    want += (double)x[i] * x[i];
  if (fabs(got - want) > 1e-3 * want) fail("reduction check");
  free(partial);
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
  return t;
}

static double scan_ms(cl_context ctx, cl_device_id dev, cl_command_queue q) {
  enum { n = 1 << 18, groups = n / 256 };
  float *ones = malloc(n * sizeof(float));
  if (!ones) fail("malloc");
  for (int i = 0; i < n; i++)
    ones[i] = 1.0f;
  double t0 = now_ms();
  cl_program p = build(ctx, dev, scan_source, "");
  cl_int err;
  cl_kernel local = clCreateKernel(p, "scan_local", &err);
  cl_kernel carries = clCreateKernel(p, "scan_carries", &err);
  cl_kernel update = clCreateKernel(p, "scan_update", &err);
  if (!local || !carries || !update) fail("clCreateKernel");
  cl_mem data = buffer(ctx, n * sizeof(float), ones);
  cl_mem sums = buffer(ctx, groups * sizeof(float), NULL);
  cl_uint un = n, ug = groups;
  clSetKernelArg(local, 0, sizeof data, &data);
  clSetKernelArg(local, 1, sizeof sums, &sums);
  clSetKernelArg(local, 2, sizeof un, &un);
  clSetKernelArg(carries, 0, sizeof sums, &sums);
  clSetKernelArg(carries, 1, sizeof ug, &ug);
  clSetKernelArg(update, 0, sizeof data, &data);
  clSetKernelArg(update, 1, sizeof sums, &sums);
  clSetKernelArg(update, 2, sizeof un, &un);
  launch(q, local, n, 256);
  launch(q, carries, 1, 1);
  launch(q, update, n, 256);
  read_back(q, data, n * sizeof(float), ones);
  double t = now_ms() - t0;
  for (int i = 0; i < n; i += 997)
    if (ones[i] != (float)(i + 1)) fail("scan check");
  free(ones);
  clReleaseMemObject(data);
  clReleaseMemObject(sums);
  clReleaseKernel(local);
  clReleaseKernel(carries);
  clReleaseKernel(update);
  clReleaseProgram(p);
  return t;
}

/* About 100 KB of straight-line arithmetic over 8 private values with
 * data-dependent branches, the shape of generated kernels (CLSmith's, a
 * code generator's unrolled stencil). */
static double huge_kernel_ms(cl_context ctx, cl_device_id dev, cl_command_queue q) {
  size_t cap = 160 * 1024, len = 0;
  char *src = malloc(cap);
  if (!src) fail("malloc");
  len += (size_t)snprintf(src + len, cap - len,
                          "__kernel void generated(__global float *out, __global const float "
                          "*in) {\n  size_t i = get_global_id(0);\n"
                          "  float v0 = in[i], v1 = v0 + 1.0f, v2 = v0 * 0.5f, v3 = v0 - 2.0f,\n"
                          "        v4 = v1 * v2, v5 = v3 + v4, v6 = v5 * 0.25f, v7 = v6 + v0;\n");
  unsigned seed = 12345;
  while (len < 100 * 1024) {
    seed = seed * 1103515245u + 12345u;
    int a = (seed >> 8) % 8, b = (seed >> 12) % 8, c = (seed >> 16) % 8;
    if ((seed >> 20) % 5 == 0)
      len += (size_t)snprintf(
          src + len, cap - len,
          "  if (v%d > v%d) v%d = v%d * 0.999f + 0.125f; else v%d -= 0.0625f;\n", a, b, c, a, c);
    else
      len +=
          (size_t)snprintf(src + len, cap - len, "  v%d = fma(v%d, 0.5f, v%d * 0.25f) + %u.0f;\n",
                           c, a, b, (seed >> 24) % 16);
  }
  len += (size_t)snprintf(src + len, cap - len,
                          "  out[i] = v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;\n}\n");
  enum { n = 1 << 16 };
  float *in = malloc(n * sizeof(float));
  if (!in) fail("malloc");
  for (int i = 0; i < n; i++)
    in[i] = (float)(i % 100) * 0.01f;
  double t0 = now_ms();
  cl_program p = build(ctx, dev, src, "");
  cl_int err;
  cl_kernel k = clCreateKernel(p, "generated", &err);
  if (!k) fail("clCreateKernel");
  cl_mem min = buffer(ctx, n * sizeof(float), in);
  cl_mem mout = buffer(ctx, n * sizeof(float), NULL);
  clSetKernelArg(k, 0, sizeof mout, &mout);
  clSetKernelArg(k, 1, sizeof min, &min);
  launch(q, k, n, 0);
  read_back(q, mout, n * sizeof(float), in);
  double t = now_ms() - t0;
  free(in);
  free(src);
  clReleaseMemObject(min);
  clReleaseMemObject(mout);
  clReleaseKernel(k);
  clReleaseProgram(p);
  return t;
}

int main(void) {
  char dir[] = "/tmp/aquila-buildtime-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("AQUILA_CACHE_DIR", dir, 1);
  setenv("POCL_CACHE_DIR", dir, 1);
  double t0 = now_ms();
  cl_platform_id platform;
  cl_device_id dev;
  cl_int err;
  if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
    return 1;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (!ctx) return 1;
  double startup = now_ms() - t0;
  double cold = build_ms(ctx, dev, source, "");
  double second = build_ms(ctx, dev, source, "-DSECOND");
  double hit = build_ms(ctx, dev, source, "");
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  if (!q) return 1;
  float *x = malloc(N_ELEMENTS * sizeof(float)), *y = malloc(N_ELEMENTS * sizeof(float));
  if (!x || !y) return 1;
  for (int i = 0; i < N_ELEMENTS; i++) {
    x[i] = (float)(i % 1000) * 0.001f;
    y[i] = (float)(i % 37);
  }
  double many = many_kernels_ms(ctx, dev, q, x, y, 0);
  double all_created = many_kernels_ms(ctx, dev, q, x, y, 1);
  double reduction = reduction_ms(ctx, dev, q, x);
  double scan = scan_ms(ctx, dev, q);
  double huge = huge_kernel_ms(ctx, dev, q);
  printf("{\"startup_ms\": %.3f, \"cold_build_ms\": %.2f, \"second_build_ms\": %.2f, "
         "\"cache_hit_ms\": %.3f, \"many_kernels_ms\": %.1f, \"all_created_ms\": %.1f, "
         "\"reduction_ms\": %.1f, \"scan_ms\": %.1f, \"huge_kernel_ms\": %.1f}\n",
         startup, cold, second, hit, many, all_created, reduction, scan, huge);
  free(x);
  free(y);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  char cmd[100];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : 1;
}
