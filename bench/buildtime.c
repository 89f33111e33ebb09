/* What building programs costs, in one fresh process with an empty kernel
 * cache of its own (AQUILA_CACHE_DIR and POCL_CACHE_DIR point at a new
 * temporary directory):
 *   startup_ms      clGetPlatformIDs, clGetDeviceIDs, clCreateContext
 *   cold_build_ms   the first clBuildProgram (a kernel of NBody's size)
 *   second_build_ms another program, not in the cache (the compiler is warm)
 *   cache_hit_ms    the first program's source again, from the kernel cache
 * Prints one JSON object; the platform is the first one the loader lists. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
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

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double build_ms(cl_context ctx, cl_device_id dev, const char *src, const char *options) {
  cl_int err;
  double t0 = now_ms();
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (!p || clBuildProgram(p, 1, &dev, options, NULL, NULL) != CL_SUCCESS) {
    fprintf(stderr, "buildtime: build failed\n");
    exit(1);
  }
  double t = now_ms() - t0;
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
  printf("{\"startup_ms\": %.3f, \"cold_build_ms\": %.2f, \"second_build_ms\": %.2f, "
         "\"cache_hit_ms\": %.3f}\n",
         startup, cold, second, hit);
  clReleaseContext(ctx);
  char cmd[100];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : 1;
}
