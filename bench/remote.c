/* Remote device microbenchmark (docs/REMOTE.md): what a command to a
 * daemon costs. Run with AQUILA_REMOTE naming one daemon; uses the first
 * remote device.
 *   rtt:    enqueue + clFinish of an empty kernel, median microseconds
 *   rate:   10000 empty kernels in one in-order queue, one clFinish: commands/s
 *   write:  clEnqueueWriteBuffer of 64 MiB (blocking) on the device's queue, GB/s
 *   read:   clEnqueueReadBuffer of 64 MiB written there by a kernel, GB/s
 * Medians over the repetitions. Prints one JSON object. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define DIE(msg)                                                                                   \
  do {                                                                                             \
    fprintf(stderr, "remote bench: %s\n", msg);                                                    \
    return 1;                                                                                      \
  } while (0)

int main(void) {
  cl_platform_id ps[8];
  cl_uint np = 0;
  clGetPlatformIDs(8, ps, &np);
  cl_device_id dev = NULL;
  char name[256] = "";
  for (cl_uint p = 0; p < np && !dev; p++) {
    cl_device_id ds[16];
    cl_uint nd = 0;
    if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 16, ds, &nd)) continue;
    for (cl_uint i = 0; i < nd && !dev; i++) {
      clGetDeviceInfo(ds[i], CL_DEVICE_NAME, sizeof name, name, NULL);
      if (strstr(name, "(remote, ")) dev = ds[i];
    }
  }
  if (!dev) DIE("no remote device (set AQUILA_REMOTE and AQUILA_REMOTE_KEY_FILE)");
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  const char *src = "__kernel void empty(void) {}\n"
                    "__kernel void touch(__global int *p) { p[get_global_id(0)] = 1; }\n";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (clBuildProgram(prog, 1, &dev, "", NULL, NULL)) DIE("build failed");
  cl_kernel empty = clCreateKernel(prog, "empty", &err);
  cl_kernel touch = clCreateKernel(prog, "touch", &err);
  size_t one = 1;

  enum { RTT_N = 2000, RATE_N = 10000, BW_N = 7 };
  static double t[RTT_N];
  for (int i = 0; i < 50; i++) clEnqueueNDRangeKernel(q, empty, 1, NULL, &one, &one, 0, NULL, NULL);
  clFinish(q);
  for (int i = 0; i < RTT_N; i++) {
    double t0 = now();
    clEnqueueNDRangeKernel(q, empty, 1, NULL, &one, &one, 0, NULL, NULL);
    clFinish(q);
    t[i] = (now() - t0) * 1e6;
  }
  double rtt = median(t, RTT_N);

  double rates[3];
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    for (int i = 0; i < RATE_N; i++)
      clEnqueueNDRangeKernel(q, empty, 1, NULL, &one, &one, 0, NULL, NULL);
    clFinish(q);
    rates[r] = RATE_N / (now() - t0);
  }
  double rate = median(rates, 3);

  size_t size = 64u << 20;
  char *host = malloc(size);
  memset(host, 7, size);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
  clSetKernelArg(touch, 0, sizeof m, &m);
  double w[BW_N], rd[BW_N];
  for (int i = 0; i < BW_N; i++) {
    double t0 = now();
    clEnqueueWriteBuffer(q, m, CL_TRUE, 0, size, host, 0, NULL, NULL);
    w[i] = size / (now() - t0) / 1e9;
    /* One element written there: the device's copy alone is current. */
    clEnqueueNDRangeKernel(q, touch, 1, NULL, &one, &one, 0, NULL, NULL);
    clFinish(q);
    t0 = now();
    clEnqueueReadBuffer(q, m, CL_TRUE, 0, size, host, 0, NULL, NULL);
    rd[i] = size / (now() - t0) / 1e9;
  }
  printf("{\"device\": \"%s\", \"rtt_us\": %.1f, \"commands_per_s\": %.0f, \"write_GBs\": %.2f, "
         "\"read_GBs\": %.2f}\n",
         name, rtt, rate, median(w, BW_N), median(rd, BW_N));
  free(host);
  clReleaseMemObject(m);
  clReleaseKernel(empty);
  clReleaseKernel(touch);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return 0;
}
