/* VectorAdd: c[i] = a[i] + b[i], written against the plain OpenCL 1.2 API.
 *
 * Usage: vectoradd [--size N] [--iterations N] [--dims 1|2|3] [--local N]
 *                  [--device cpu|gpu|all] [--platform NAME] [--quiet]
 * Exits non-zero when any element is wrong. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *kernel_source =
    "__kernel void vector_add(__global const float *a, __global const float *b,\n"
    "                         __global float *c, uint n) {\n"
    "  size_t i = get_global_id(0) + get_global_size(0) *\n"
    "             (get_global_id(1) + get_global_size(1) * get_global_id(2));\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

#define CHECK_CL(call)                                                                            \
  do {                                                                                            \
    cl_int err_ = (call);                                                                         \
    if (err_ != CL_SUCCESS) {                                                                     \
      fprintf(stderr, "vectoradd: %s failed: %d\n", #call, err_);                                 \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  size_t n = 1 << 20, local = 0;
  int iterations = 1, dims = 1, quiet = 0;
  const char *platform_name = NULL;
  cl_device_type type = CL_DEVICE_TYPE_ALL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc) n = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dims") && i + 1 < argc) dims = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--local") && i + 1 < argc) local = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--platform") && i + 1 < argc) platform_name = argv[++i];
    else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
      const char *d = argv[++i];
      type = !strcmp(d, "cpu") ? CL_DEVICE_TYPE_CPU : !strcmp(d, "gpu") ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
    } else if (!strcmp(argv[i], "--quiet")) quiet = 1;
    else {
      fprintf(stderr, "usage: %s [--size N] [--iterations N] [--dims 1|2|3] [--local N] "
                      "[--device cpu|gpu|all] [--platform NAME] [--quiet]\n", argv[0]);
      return 2;
    }
  }
  if (dims < 1 || dims > 3 || n == 0) {
    fprintf(stderr, "vectoradd: bad --dims or --size\n");
    return 2;
  }

  cl_uint num_platforms = 0;
  CHECK_CL(clGetPlatformIDs(0, NULL, &num_platforms));
  cl_platform_id *platforms = malloc(num_platforms * sizeof *platforms);
  CHECK_CL(clGetPlatformIDs(num_platforms, platforms, NULL));
  cl_platform_id platform = NULL;
  for (cl_uint i = 0; i < num_platforms && !platform; i++) {
    char name[256];
    CHECK_CL(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
    if (!platform_name || strstr(name, platform_name)) platform = platforms[i];
  }
  if (!platform) {
    fprintf(stderr, "vectoradd: no platform matches '%s'\n", platform_name);
    return 1;
  }
  cl_device_id device;
  CHECK_CL(clGetDeviceIDs(platform, type, 1, &device, NULL));
  char device_name[256];
  CHECK_CL(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof device_name, device_name, NULL));

  cl_int err;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK_CL(err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  CHECK_CL(err);
  cl_program program = clCreateProgramWithSource(context, 1, &kernel_source, NULL, &err);
  CHECK_CL(err);
  double t0 = seconds();
  err = clBuildProgram(program, 1, &device, "", NULL, NULL);
  double build_time = seconds() - t0;
  if (err != CL_SUCCESS) {
    char log[16384] = "";
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "vectoradd: build failed (%d):\n%s\n", err, log);
    return 1;
  }
  cl_kernel kernel = clCreateKernel(program, "vector_add", &err);
  CHECK_CL(err);

  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (size_t i = 0; i < n; i++) {
    a[i] = (float)i * 0.5f;
    b[i] = (float)(n - i) * 0.25f;
    c[i] = -1.0f;
  }
  cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY, n * sizeof(float), NULL, &err);
  CHECK_CL(err);
  cl_mem db = clCreateBuffer(context, CL_MEM_READ_ONLY, n * sizeof(float), NULL, &err);
  CHECK_CL(err);
  cl_mem dc = clCreateBuffer(context, CL_MEM_WRITE_ONLY, n * sizeof(float), NULL, &err);
  CHECK_CL(err);
  CHECK_CL(clEnqueueWriteBuffer(queue, da, CL_FALSE, 0, n * sizeof(float), a, 0, NULL, NULL));
  CHECK_CL(clEnqueueWriteBuffer(queue, db, CL_FALSE, 0, n * sizeof(float), b, 0, NULL, NULL));
  cl_uint n32 = (cl_uint)n;
  CHECK_CL(clSetKernelArg(kernel, 0, sizeof da, &da));
  CHECK_CL(clSetKernelArg(kernel, 1, sizeof db, &db));
  CHECK_CL(clSetKernelArg(kernel, 2, sizeof dc, &dc));
  CHECK_CL(clSetKernelArg(kernel, 3, sizeof n32, &n32));

  /* The range covers n work-items in dims dimensions; extra ones are idle. */
  size_t global[3] = {n, 1, 1};
  if (dims == 2) {
    global[0] = 1024;
    global[1] = (n + 1023) / 1024;
  } else if (dims == 3) {
    global[0] = 64;
    global[1] = 64;
    global[2] = (n + 4095) / 4096;
  }
  size_t local_size[3] = {local, 1, 1};
  if (local && global[0] % local) global[0] += local - global[0] % local;
  CHECK_CL(clFinish(queue));
  t0 = seconds();
  for (int it = 0; it < iterations; it++)
    CHECK_CL(clEnqueueNDRangeKernel(queue, kernel, (cl_uint)dims, NULL, global,
                                    local ? local_size : NULL, 0, NULL, NULL));
  CHECK_CL(clFinish(queue));
  double kernel_time = (seconds() - t0) / iterations;
  CHECK_CL(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, n * sizeof(float), c, 0, NULL, NULL));

  size_t wrong = 0;
  for (size_t i = 0; i < n; i++)
    if (c[i] != a[i] + b[i]) {
      if (wrong < 5) fprintf(stderr, "vectoradd: c[%zu] = %g, expected %g\n", i, c[i], a[i] + b[i]);
      wrong++;
    }
  if (!quiet)
    printf("VectorAdd: %zu floats, %dD, on %s: build %.1f ms, kernel %.3f ms (%.2f GB/s): %s\n", n,
           dims, device_name, build_time * 1e3, kernel_time * 1e3,
           3.0 * n * sizeof(float) / kernel_time / 1e9, wrong ? "FAILED" : "verified");
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  free(a);
  free(b);
  free(c);
  free(platforms);
  return wrong ? 1 : 0;
}
