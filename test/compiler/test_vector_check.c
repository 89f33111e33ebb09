/* AQUILA_VECTORIZE=check, the vectorizer's self-check, through the loader:
 * a kernel whose vectorized and scalar versions legitimately part (work-
 * items reading what their neighbours write, with no barrier: a race the
 * specification leaves undefined, and a deterministic one on this CPU) is
 * reported with its kernel, argument, offset, bytes and first work-group,
 * on the context's notification callback; the application sees what the
 * vectorized version wrote, as without the mode; kernels that agree,
 * arguments that share one buffer, sub-buffers, printf, local memory,
 * barriers and images give no report and their usual results. */
#include <math.h>

#include "../api/api.h"

static char reports[8][1024];
static int num_reports;

static void CL_CALLBACK notify(const char *message, const void *info, size_t size, void *data) {
  (void)info;
  (void)size;
  (void)data;
  if (num_reports < 8) snprintf(reports[num_reports], sizeof reports[0], "%s", message);
  num_reports++;
}

static cl_context check_context;
static cl_command_queue check_queue;

static cl_kernel kernel_of(const char *src, const char *name, cl_program *p) {
  cl_int err;
  *p = clCreateProgramWithSource(check_context, 1, &src, NULL, &err);
  if (!*p) return NULL;
  setenv("AQUILA_CACHE", "0", 1);
  err = clBuildProgram(*p, 1, &device, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(*p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    printf("  build failed (%d):\n%s\n", err, log);
    return NULL;
  }
  return clCreateKernel(*p, name, &err);
}

static void difference_is_reported(void) {
  const char *src = "__kernel void neighbours(__global int *b) {\n"
                    "  int i = get_global_id(0);\n"
                    "  if (get_local_id(0) > 0) b[i] = b[i - 1] + 1;\n"
                    "}\n";
  cl_program p;
  cl_kernel k = kernel_of(src, "neighbours", &p);
  REQUIRE(k);
  enum { N = 256 };
  int host[N] = {0};
  cl_int err;
  cl_mem b = clCreateBuffer(check_context, CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  REQUIRE(b);
  clSetKernelArg(k, 0, sizeof b, &b);
  size_t global = N, local = 64;
  num_reports = 0;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(check_queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(check_queue, b, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clFinish(check_queue), CL_SUCCESS);
  CHECK_EQ_INT(num_reports, 1);
  if (num_reports) printf("  report: %s\n", reports[0]);
  /* Element 2 is the first that differs: 1 vectorized (lanes read before
   * any lane writes), 2 one work-item after another; in work-group 0. */
  CHECK(strstr(reports[0], "kernel 'neighbours'") != NULL);
  CHECK(strstr(reports[0], "argument 0 at byte offset 8") != NULL);
  CHECK(strstr(reports[0], "work-group (0, 0, 0)") != NULL);
  CHECK(strstr(reports[0], "vectorized 01 00 00 00") != NULL);
  CHECK(strstr(reports[0], "scalar 02 00 00 00") != NULL);
  /* What the application gets is the vectorized version's result. */
  CHECK_EQ_INT(host[1], 1);
  CHECK_EQ_INT(host[2], 1);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

static void agreeing_kernels_are_quiet(void) {
  const char *src =
      "__kernel void saxpy(__global float *y, __global const float *x, float a) {\n"
      "  int i = get_global_id(0);\n"
      "  y[i] = a * x[i] + y[i];\n"
      "}\n"
      "__kernel void shared(__global int *a, __global int *b, __global int *sub) {\n"
      "  int i = get_global_id(0);\n"
      "  a[i] = b[i + 1] * 2;\n"
      "  sub[i] += i;\n"
      "}\n"
      "__kernel void reduce(__global const int *in, __global int *out, __local int *t) {\n"
      "  int l = get_local_id(0), n = get_local_size(0);\n"
      "  t[l] = in[get_global_id(0)];\n"
      "  for (int s = n / 2; s > 0; s /= 2) {\n"
      "    barrier(CLK_LOCAL_MEM_FENCE);\n"
      "    if (l < s) t[l] += t[l + s];\n"
      "  }\n"
      "  if (l == 0) out[get_group_id(0)] = t[0];\n"
      "}\n"
      "__kernel void talk(__global int *out) {\n"
      "  int i = get_global_id(0);\n"
      "  if (i == 3) printf(\"vector check printf %d\\n\", i);\n"
      "  out[i] = i * i;\n"
      "}\n";
  cl_program p;
  cl_kernel k = kernel_of(src, "saxpy", &p);
  REQUIRE(k);
  cl_int err;
  enum { N = 1024 };
  static float x[N], y[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }
  cl_mem bx = clCreateBuffer(check_context, CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
  cl_mem by = clCreateBuffer(check_context, CL_MEM_COPY_HOST_PTR, sizeof y, y, &err);
  float a = 2.0f;
  clSetKernelArg(k, 0, sizeof by, &by);
  clSetKernelArg(k, 1, sizeof bx, &bx);
  clSetKernelArg(k, 2, sizeof a, &a);
  size_t global = N, local = 64;
  num_reports = 0;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(check_queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(check_queue, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++)
    if (y[i] != 2.0f * (float)i + 1.0f) {
      CHECK(0);
      break;
    }
  clReleaseKernel(k);

  /* One buffer as two arguments, and a sub-buffer of it as a third. */
  k = clCreateKernel(p, "shared", &err);
  REQUIRE(k);
  static int ints[2 * N];
  for (int i = 0; i < 2 * N; i++)
    ints[i] = i;
  cl_mem bi = clCreateBuffer(check_context, CL_MEM_COPY_HOST_PTR, sizeof ints, ints, &err);
  cl_buffer_region region = {N * sizeof(int), N * sizeof(int)};
  cl_mem sub = clCreateSubBuffer(bi, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  REQUIRE(sub);
  clSetKernelArg(k, 0, sizeof bi, &bi);
  clSetKernelArg(k, 1, sizeof bi, &bi);
  clSetKernelArg(k, 2, sizeof sub, &sub);
  global = N / 2;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(check_queue, k, 1, NULL, &global, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  clReleaseKernel(k);

  k = clCreateKernel(p, "reduce", &err);
  REQUIRE(k);
  cl_mem out = clCreateBuffer(check_context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  clSetKernelArg(k, 0, sizeof bi, &bi);
  clSetKernelArg(k, 1, sizeof out, &out);
  clSetKernelArg(k, 2, 64 * sizeof(int), NULL);
  global = N;
  local = 64;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(check_queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  int sums[N / 64];
  CHECK_EQ_INT(clEnqueueReadBuffer(check_queue, out, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL),
               CL_SUCCESS);
  clReleaseKernel(k);

  k = clCreateKernel(p, "talk", &err);
  REQUIRE(k);
  clSetKernelArg(k, 0, sizeof out, &out);
  global = 64;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(check_queue, k, 1, NULL, &global, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clFinish(check_queue), CL_SUCCESS);
  CHECK_EQ_INT(num_reports, 0);
  if (num_reports) printf("  report: %s\n", reports[0]);
  clReleaseKernel(k);
  clReleaseMemObject(out);
  clReleaseMemObject(sub);
  clReleaseMemObject(bi);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseProgram(p);
}

/* NaNs whose bits differ are alike in a float buffer, and so are float
 * results a few ulp apart (the vectorized rsqrt is an estimate refined by
 * a Newton step, the scalar one a division by sqrt: both within OpenCL's
 * 2 ulp): counted as close, not reported. */
static void float_results_compare_as_numbers(void) {
  const char *src = "__kernel void roots(__global float *o, __global const float *x) {\n"
                    "  int i = get_global_id(0);\n"
                    "  o[i] = rsqrt(x[i]);\n"
                    "}\n";
  cl_program p;
  cl_kernel k = kernel_of(src, "roots", &p);
  REQUIRE(k);
  enum { N = 4096 };
  static float x[N], o[N];
  const uint32_t nan_bits = 0x7fffffffu; /* a NaN with a payload */
  for (int i = 0; i < N; i++)
    if (i % 7 == 0)
      memcpy(&x[i], &nan_bits, sizeof nan_bits);
    else
      x[i] = (float)i * 0.37f + 1e-3f;
  cl_int err;
  cl_mem bx = clCreateBuffer(check_context, CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
  cl_mem bo = clCreateBuffer(check_context, CL_MEM_READ_WRITE, sizeof o, NULL, &err);
  clSetKernelArg(k, 0, sizeof bo, &bo);
  clSetKernelArg(k, 1, sizeof bx, &bx);
  size_t global = N, local = 64;
  num_reports = 0;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(check_queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(check_queue, bo, CL_TRUE, 0, sizeof o, o, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(num_reports, 0);
  if (num_reports) printf("  report: %s\n", reports[0]);
  CHECK(isnan(o[0]) && isnan(o[7]));
  clReleaseMemObject(bx);
  clReleaseMemObject(bo);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

int main(void) {
  /* Read once by the library, at the first kernel command. */
  setenv("AQUILA_VECTORIZE", "check", 1);
  api_setup();
  cl_int err;
  check_context = clCreateContext(NULL, 1, &device, notify, NULL, &err);
  check_queue = clCreateCommandQueue(check_context, device, 0, &err);
  if (!check_context || !check_queue) {
    printf("not ok setup: context with a notification callback (%d)\n", err);
    return 1;
  }
  RUN(difference_is_reported);
  RUN(agreeing_kernels_are_quiet);
  RUN(float_results_compare_as_numbers);
  clReleaseCommandQueue(check_queue);
  clReleaseContext(check_context);
  api_teardown();
  CHECK_EXIT();
}
