/* Shared set-up for the API tests: every test reaches Aquila through the
 * system ICD loader, exactly as an application would. */
#ifndef AQUILA_TEST_API_H
#define AQUILA_TEST_API_H

/* OpenCL 1.2's API unless a test of later calls asks for more. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "../check.h"

static cl_platform_id platform;
static cl_device_id device;
static cl_context context;
static cl_command_queue queue;

/* The loader may list other vendors' platforms too: pick Aquila's. */
static void api_setup(void) {
  cl_platform_id ps[16];
  cl_uint n = 0;
  if (clGetPlatformIDs(16, ps, &n) != CL_SUCCESS || n == 0) {
    printf("not ok setup: no OpenCL platform (is OCL_ICD_VENDORS set?)\n");
    exit(1);
  }
  for (cl_uint i = 0; i < n && i < 16; i++) {
    char name[64] = "";
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (!strcmp(name, "Aquila")) platform = ps[i];
  }
  cl_int err = CL_SUCCESS;
  if (!platform || clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &device, NULL) != CL_SUCCESS ||
      !(context = clCreateContext(NULL, 1, &device, NULL, NULL, &err)) ||
      !(queue = clCreateCommandQueue(context, device, 0, &err))) {
    printf("not ok setup: Aquila platform/device/context/queue unavailable (%d)\n", err);
    exit(1);
  }
}

static void api_teardown(void) {
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
}

/* Builds src for the context's device; on failure prints the build log. */
__attribute__((unused)) static cl_program build_program(const char *src, const char *options,
                                                        cl_int *err_out) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  if (!p) {
    if (err_out) *err_out = err;
    return NULL;
  }
  err = clBuildProgram(p, 1, &device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    printf("  build failed (%d):\n%s\n", err, log);
    clReleaseProgram(p);
    p = NULL;
  }
  if (err_out) *err_out = err;
  return p;
}

/* Builds src with the compiler's report of each kernel in its build log
 * (AQUILA_DEBUG=vectorize; no kernel cache, so that it is compiled) and
 * copies the log into log. Machine code, and with it the report, is made
 * at a kernel's first launch or a query that needs the code: every kernel
 * is created and asked its private size here. */
__attribute__((unused)) static cl_program build_program_reporting(const char *src, char *log,
                                                                  size_t log_size) {
  setenv("AQUILA_DEBUG", "vectorize", 1);
  setenv("AQUILA_CACHE", "0", 1);
  cl_int err;
  cl_program p = build_program(src, "", &err);
  cl_uint n = 0;
  if (p && clCreateKernelsInProgram(p, 0, NULL, &n) == CL_SUCCESS && n > 0) {
    cl_kernel *kernels = calloc(n, sizeof *kernels);
    if (kernels && clCreateKernelsInProgram(p, n, kernels, NULL) == CL_SUCCESS)
      for (cl_uint i = 0; i < n; i++) {
        /* A kernel's code (and the report with it) is made at its first
         * launch, or by a query that needs the code, as this one. */
        cl_ulong private_size;
        clGetKernelWorkGroupInfo(kernels[i], device, CL_KERNEL_PRIVATE_MEM_SIZE,
                                 sizeof private_size, &private_size, NULL);
        clReleaseKernel(kernels[i]);
      }
    free(kernels);
  }
  unsetenv("AQUILA_DEBUG");
  unsetenv("AQUILA_CACHE");
  log[0] = '\0';
  if (p) clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, log_size, log, NULL);
  return p;
}

/* One kernel from a source; the program stays alive through the kernel. */
__attribute__((unused)) static cl_kernel build_kernel(const char *src, const char *name) {
  cl_program p = build_program(src, NULL, NULL);
  if (!p) return NULL;
  cl_int err;
  cl_kernel k = clCreateKernel(p, name, &err);
  if (!k) printf("  clCreateKernel(%s) failed: %d\n", name, err);
  clReleaseProgram(p);
  return k;
}

__attribute__((unused)) static cl_uint ref_count_of_mem(cl_mem m) {
  cl_uint n = 0;
  clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL);
  return n;
}

__attribute__((unused)) static cl_int event_status(cl_event e) {
  cl_int s = 12345;
  clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
  return s;
}

/* /proc/PID/stat read into line, from its third field on (the state; the
 * name before it may hold spaces and parentheses); NULL when the process
 * is gone. */
static inline const char *proc_stat_from_state(pid_t pid, char *line, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  bool ok = fgets(line, (int)size, f) != NULL;
  fclose(f);
  const char *p = ok ? strrchr(line, ')') : NULL;
  return p && p[1] == ' ' && p[2] ? p + 2 : NULL;
}

/* Field number field of /proc/PID/stat (as proc(5) counts them; from 4,
 * the parent, on: the numbers) into *value; false when the process is
 * gone. */
static inline bool proc_stat_field(pid_t pid, int field, long *value) {
  char line[1024];
  const char *p = proc_stat_from_state(pid, line, sizeof line);
  for (int n = 3; p && n < field; n++)
    p = strchr(p + 1, ' ');
  return p && field >= 4 && sscanf(p + 1, "%ld", value) == 1;
}

#endif
