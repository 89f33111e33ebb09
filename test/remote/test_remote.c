/* Remote devices through the ICD loader (docs/REMOTE.md): run by
 * test/remote/run.sh, which starts two aquilad daemons on loopback and sets
 * AQUILA_REMOTE to them. The cases: the device list, kernels and buffer
 * commands on a remote device, a buffer moved between two daemons and the
 * local device, events between queues of different devices, a kernel fault
 * on a daemon, images moved and sampled across the devices, SVM only on the
 * local device. With the argument "lost", the daemon
 * whose pid is in AQUILA_TEST_DAEMON_PID is killed while a kernel runs on it: the command and its
 * dependants fail, nothing hangs, the device turns unavailable. */
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdint.h>

#include "../check.h"

static cl_platform_id platform;
static cl_device_id devices[8];
static cl_uint num_devices;
static cl_device_id local_device, remote_a, remote_b;
static cl_context ctx;
static cl_program program;

static const char *source =
    "__kernel void add(__global const float *a, __global const float *b, __global float *c) {\n"
    "  size_t i = get_global_id(0); c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void scale(__global float *a, float f) { a[get_global_id(0)] *= f; }\n"
    "__kernel void fault(__global int *p) { if (get_global_id(0) == 7) ((__global int *)16)[0] = "
    "1; "
    "p[get_global_id(0)] = 1; }\n"
    "__kernel void spin(__global int *p, int n) {\n"
    "  int x = p[get_global_id(0)];\n"
    "  for (int i = 0; i < n; i++) x = x * 1103515245 + 12345;\n"
    "  p[get_global_id(0)] = x;\n"
    "}\n";

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int is_remote(cl_device_id d) {
  char name[256] = "";
  clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL);
  return strstr(name, "(remote, ") != NULL;
}

static void setup(void) {
  cl_platform_id ps[16];
  cl_uint n = 0;
  clGetPlatformIDs(16, ps, &n);
  for (cl_uint i = 0; i < n && i < 16; i++) {
    char name[64] = "";
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (!strcmp(name, "Aquila")) platform = ps[i];
  }
  if (!platform || clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 8, devices, &num_devices)) {
    printf("not ok setup: no Aquila devices\n");
    exit(1);
  }
  for (cl_uint i = 0; i < num_devices; i++) {
    if (!is_remote(devices[i]))
      local_device = devices[i];
    else if (!remote_a)
      remote_a = devices[i];
    else if (!remote_b)
      remote_b = devices[i];
  }
}

/* The local device first, then the daemons in AQUILA_REMOTE's order, each
 * named by its address. */
static void device_list(void) {
  const char *list = getenv("AQUILA_REMOTE");
  REQUIRE(list);
  CHECK_EQ_INT(num_devices, 3);
  REQUIRE(num_devices == 3);
  CHECK(!is_remote(devices[0]));
  char name[256] = "", first[128] = "";
  snprintf(first, sizeof first, "%.*s", (int)strcspn(list, ","), list);
  clGetDeviceInfo(devices[1], CL_DEVICE_NAME, sizeof name, name, NULL);
  CHECK(strstr(name, first) != NULL);
  cl_bool available = CL_FALSE, images = CL_TRUE, unified = CL_TRUE;
  clGetDeviceInfo(devices[1], CL_DEVICE_AVAILABLE, sizeof available, &available, NULL);
  clGetDeviceInfo(devices[1], CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
  clGetDeviceInfo(devices[1], CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
  CHECK(available == CL_TRUE);
  CHECK(images == CL_TRUE);
  CHECK(unified == CL_FALSE);
  cl_device_exec_capabilities caps = 0;
  clGetDeviceInfo(devices[1], CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
  CHECK_EQ_INT(caps, CL_EXEC_KERNEL);
  cl_uint units = 0;
  clGetDeviceInfo(devices[2], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  CHECK_EQ_INT(units, 1); /* run.sh starts the daemons with --units 1 */
}

static void build(void) {
  cl_int err;
  ctx = clCreateContext(NULL, num_devices, devices, NULL, NULL, &err);
  REQUIRE(ctx);
  program = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  REQUIRE(program);
  err = clBuildProgram(program, 0, NULL, "", NULL, NULL);
  if (err) {
    char log[4096] = "";
    clGetProgramBuildInfo(program, remote_a, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    printf("  build log: %s\n", log);
  }
  CHECK_EQ_INT(err, CL_SUCCESS);
}

static int run_add(cl_device_id d, size_t n) {
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &err);
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (size_t i = 0; i < n; i++) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i;
  }
  cl_mem ma = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, a, &err);
  cl_mem mb = clCreateBuffer(ctx, CL_MEM_READ_ONLY, n * 4, NULL, &err);
  cl_mem mc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * 4, NULL, &err);
  clEnqueueWriteBuffer(q, mb, CL_FALSE, 0, n * 4, b, 0, NULL, NULL);
  cl_kernel k = clCreateKernel(program, "add", &err);
  clSetKernelArg(k, 0, sizeof ma, &ma);
  clSetKernelArg(k, 1, sizeof mb, &mb);
  clSetKernelArg(k, 2, sizeof mc, &mc);
  err = clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
  if (!err) err = clEnqueueReadBuffer(q, mc, CL_TRUE, 0, n * 4, c, 0, NULL, NULL);
  int bad = err != CL_SUCCESS;
  for (size_t i = 0; !bad && i < n; i++)
    bad = c[i] != 3.0f * (float)i;
  clReleaseKernel(k);
  clReleaseMemObject(ma);
  clReleaseMemObject(mb);
  clReleaseMemObject(mc);
  clReleaseCommandQueue(q);
  free(a);
  free(b);
  free(c);
  return bad ? -1 : 0;
}

static void kernel_on_each_remote(void) {
  REQUIRE(program && remote_a && remote_b);
  CHECK_EQ_INT(run_add(remote_a, 1000), 0);
  CHECK_EQ_INT(run_add(remote_b, 1 << 20), 0); /* several messages per transfer */
  CHECK_EQ_INT(run_add(local_device, 4096), 0);
}

/* Fill, copy, rectangles, maps and sub-buffers on a remote device's queue. */
static void buffer_commands_on_remote(void) {
  REQUIRE(program && remote_a);
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, remote_a, 0, &err);
  enum { N = 4096 };
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * 4, NULL, &err);
  cl_mem m2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * 4, NULL, &err);
  float two = 2.0f, f3 = 3.0f;
  CHECK_EQ_INT(clEnqueueFillBuffer(q, m, &two, 4, 0, N * 4, 0, NULL, NULL), CL_SUCCESS);
  cl_kernel k = clCreateKernel(program, "scale", &err);
  clSetKernelArg(k, 0, sizeof m, &m);
  clSetKernelArg(k, 1, sizeof f3, &f3);
  size_t n = N;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueCopyBuffer(q, m, m2, 0, 0, N * 4, 0, NULL, NULL), CL_SUCCESS);
  float *p =
      clEnqueueMapBuffer(q, m2, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, N * 4, 0, NULL, NULL, &err);
  REQUIRE(p);
  CHECK(p[0] == 6.0f && p[N - 1] == 6.0f);
  p[5] = 10.0f;
  clEnqueueUnmapMemObject(q, m2, p, 0, NULL, NULL);
  /* The sub-buffer [1024, 2048) scaled on the device. */
  cl_buffer_region r = {1024 * 4, 1024 * 4};
  cl_mem sub = clCreateSubBuffer(m2, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  REQUIRE(sub);
  clSetKernelArg(k, 0, sizeof sub, &sub);
  n = 1024;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS);
  float rect[4 * 4] = {0};
  size_t bo[3] = {0, 64, 0}, ho[3] = {0, 0, 0}, region[3] = {16, 4, 1};
  CHECK_EQ_INT(
      clEnqueueReadBufferRect(q, m2, CL_TRUE, bo, ho, region, 64, 0, 16, 0, rect, 0, NULL, NULL),
      CL_SUCCESS);
  /* Rows 64..67 of 64-byte rows: floats 1024.. of the scaled sub-buffer. */
  CHECK(rect[0] == 18.0f && rect[15] == 18.0f);
  float all[N];
  CHECK_EQ_INT(clEnqueueReadBuffer(q, m2, CL_TRUE, 0, sizeof all, all, 0, NULL, NULL), CL_SUCCESS);
  CHECK(all[5] == 10.0f && all[1023] == 6.0f && all[1024] == 18.0f && all[2047] == 18.0f &&
        all[2048] == 6.0f);
  clReleaseMemObject(sub);
  clReleaseKernel(k);
  clReleaseMemObject(m);
  clReleaseMemObject(m2);
  clReleaseCommandQueue(q);
}

/* One buffer written on daemon A, scaled on daemon B, then on the local
 * device, with events between the three queues. */
static void buffer_across_devices(void) {
  REQUIRE(program && remote_a && remote_b && local_device);
  cl_int err;
  cl_command_queue qa = clCreateCommandQueue(ctx, remote_a, 0, &err);
  cl_command_queue qb = clCreateCommandQueue(ctx, remote_b, CL_QUEUE_PROFILING_ENABLE, &err);
  cl_command_queue ql = clCreateCommandQueue(ctx, local_device, 0, &err);
  enum { N = 65536 };
  static float data[N];
  for (int i = 0; i < N; i++)
    data[i] = (float)i;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
  cl_kernel k = clCreateKernel(program, "scale", &err);
  float f2 = 2.0f, f5 = 5.0f, f7 = 7.0f;
  size_t n = N;
  cl_event ea, eb, el;
  clSetKernelArg(k, 0, sizeof m, &m);
  clSetKernelArg(k, 1, sizeof f2, &f2);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(qa, k, 1, NULL, &n, NULL, 0, NULL, &ea), CL_SUCCESS);
  clSetKernelArg(k, 1, sizeof f5, &f5);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(qb, k, 1, NULL, &n, NULL, 1, &ea, &eb), CL_SUCCESS);
  clSetKernelArg(k, 1, sizeof f7, &f7);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(ql, k, 1, NULL, &n, NULL, 1, &eb, &el), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(qa, m, CL_TRUE, 0, sizeof data, data, 1, &el, NULL), CL_SUCCESS);
  int bad = 0;
  for (int i = 0; i < N && !bad; i++)
    bad = data[i] != 70.0f * (float)i;
  CHECK(!bad);
  /* Profiling times of the remote kernel on this process's clock: ordered and recent. */
  cl_ulong queued = 0, start = 0, end = 0;
  clGetEventProfilingInfo(eb, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL);
  clGetEventProfilingInfo(eb, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
  clGetEventProfilingInfo(eb, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
  CHECK(queued <= start && start <= end && end - queued < 10000000000ull);
  clReleaseEvent(ea);
  clReleaseEvent(eb);
  clReleaseEvent(el);
  clReleaseKernel(k);
  clReleaseMemObject(m);
  clReleaseCommandQueue(qa);
  clReleaseCommandQueue(qb);
  clReleaseCommandQueue(ql);
}

/* A wild store on the daemon ends that command with an error, and the
 * daemon serves the next one. */
static void kernel_fault_on_remote(void) {
  REQUIRE(program && remote_a);
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, remote_a, 0, &err);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * 4, NULL, &err);
  cl_kernel k = clCreateKernel(program, "fault", &err);
  clSetKernelArg(k, 0, sizeof m, &m);
  size_t n = 64, one = 1;
  cl_event e;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &one, 0, NULL, &e), CL_SUCCESS);
  clWaitForEvents(1, &e);
  cl_int status = 0;
  clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  CHECK(status < 0);
  clReleaseEvent(e);
  clReleaseKernel(k);
  clReleaseMemObject(m);
  clReleaseCommandQueue(q);
  CHECK_EQ_INT(run_add(remote_a, 100), 0);
}

/* __IMAGE_SUPPORT__ is defined for a remote device as for the local one. */
static int image_macro_on(cl_device_id d) {
  const char *src = "__kernel void k(__global int *o) {\n#ifdef __IMAGE_SUPPORT__\n o[0] = 1;\n"
                    "#else\n o[0] = 2;\n#endif\n}\n";
  cl_int err;
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
  cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
  int v = -1;
  if (clBuildProgram(p, 1, &d, "", NULL, NULL) == CL_SUCCESS) {
    cl_kernel k = clCreateKernel(p, "k", &err);
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof v, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &err);
    size_t one = 1;
    clSetKernelArg(k, 0, sizeof m, &m);
    clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL);
    clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL);
    clReleaseCommandQueue(q);
    clReleaseMemObject(m);
    clReleaseKernel(k);
  }
  clReleaseProgram(p);
  clReleaseContext(c);
  return v;
}

static void image_support_macro(void) {
  REQUIRE(remote_a && local_device);
  CHECK_EQ_INT(image_macro_on(remote_a), 1);
  CHECK_EQ_INT(image_macro_on(local_device), 1);
}

/* An image written by the host, shifted by a kernel on daemon A that
 * samples it (clamped at the edge), shifted again on daemon B (its bytes
 * move there), then on the local device, and read back; a write_only image
 * written on a daemon and read by the host; an image released while its
 * copies exist on both daemons. */
static cl_mem image2d(cl_mem_flags flags, const cl_image_format *f, size_t w, size_t h, void *host,
                      cl_int *err) {
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = w, .image_height = h};
  return clCreateImage(ctx, flags, f, &d, host, err);
}

static void image_across_devices(void) {
  REQUIRE(remote_a && remote_b && local_device);
  const char *src =
      "__constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |\n"
      "                         CLK_FILTER_NEAREST;\n"
      "__kernel void shift(read_only image2d_t in, write_only image2d_t out) {\n"
      "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
      "  float4 v = read_imagef(in, s, p + (int2)(1, 0));\n"
      "  write_imagef(out, p, v + (float4)(0, 0, 0, 1));\n"
      "}\n"
      "__kernel void ids(write_only image2d_t out) {\n"
      "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
      "  write_imageui(out, p, (uint4)(p.x, p.y, get_image_width(out), 7));\n"
      "}\n";
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  REQUIRE(p);
  CHECK_EQ_INT(clBuildProgram(p, 0, NULL, "", NULL, NULL), CL_SUCCESS);
  enum { W = 64, H = 32 };
  static float pixels[W * H * 4], back[W * H * 4];
  for (int i = 0; i < W * H; i++) {
    pixels[4 * i] = (float)(i % W);
    pixels[4 * i + 1] = (float)(i / W);
    pixels[4 * i + 2] = 0.5f;
    pixels[4 * i + 3] = 0.0f;
  }
  cl_image_format f = {CL_RGBA, CL_FLOAT};
  cl_mem a = image2d(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f, W, H, pixels, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_mem b = image2d(CL_MEM_READ_WRITE, &f, W, H, NULL, &err);
  REQUIRE(a && b);
  cl_kernel k = clCreateKernel(p, "shift", &err);
  cl_command_queue qa = clCreateCommandQueue(ctx, remote_a, 0, &err);
  cl_command_queue qb = clCreateCommandQueue(ctx, remote_b, 0, &err);
  cl_command_queue ql = clCreateCommandQueue(ctx, local_device, 0, &err);
  size_t g[2] = {W, H};
  cl_event e1, e2, e3;
  clSetKernelArg(k, 0, sizeof a, &a);
  clSetKernelArg(k, 1, sizeof b, &b);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(qa, k, 2, NULL, g, NULL, 0, NULL, &e1), CL_SUCCESS);
  clSetKernelArg(k, 0, sizeof b, &b);
  clSetKernelArg(k, 1, sizeof a, &a);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(qb, k, 2, NULL, g, NULL, 1, &e1, &e2), CL_SUCCESS);
  clSetKernelArg(k, 0, sizeof a, &a);
  clSetKernelArg(k, 1, sizeof b, &b);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(ql, k, 2, NULL, g, NULL, 1, &e2, &e3), CL_SUCCESS);
  size_t o[3] = {0, 0, 0}, r[3] = {W, H, 1};
  CHECK_EQ_INT(clEnqueueReadImage(qa, b, CL_TRUE, o, r, 0, 0, back, 1, &e3, NULL), CL_SUCCESS);
  int bad = 0;
  for (int y = 0; y < H && !bad; y++)
    for (int x = 0; x < W && !bad; x++) {
      const float *v = &back[4 * (y * W + x)];
      int sx = x + 3 < W ? x + 3 : W - 1;
      bad = v[0] != (float)sx || v[1] != (float)y || v[2] != 0.5f || v[3] != 3.0f;
      if (bad) printf("  (%d, %d): %g %g %g %g\n", x, y, v[0], v[1], v[2], v[3]);
    }
  CHECK(!bad);
  clReleaseEvent(e1);
  clReleaseEvent(e2);
  clReleaseEvent(e3);
  /* Written on the daemon alone, read by the host. */
  cl_image_format fu = {CL_RGBA, CL_UNSIGNED_INT32};
  cl_mem u = image2d(CL_MEM_WRITE_ONLY, &fu, W, H, NULL, &err);
  cl_kernel ids = clCreateKernel(p, "ids", &err);
  clSetKernelArg(ids, 0, sizeof u, &u);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(qb, ids, 2, NULL, g, NULL, 0, NULL, NULL), CL_SUCCESS);
  static cl_uint got[W * H * 4];
  CHECK_EQ_INT(clEnqueueReadImage(qb, u, CL_TRUE, o, r, 0, 0, got, 0, NULL, NULL), CL_SUCCESS);
  bad = 0;
  for (int i = 0; i < W * H && !bad; i++)
    bad = got[4 * i] != (cl_uint)(i % W) || got[4 * i + 1] != (cl_uint)(i / W) ||
          got[4 * i + 2] != W || got[4 * i + 3] != 7;
  CHECK(!bad);
  clReleaseKernel(ids);
  clReleaseMemObject(u);
  clReleaseKernel(k);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseProgram(p);
  clReleaseCommandQueue(qa);
  clReleaseCommandQueue(qb);
  clReleaseCommandQueue(ql);
  CHECK_EQ_INT(run_add(remote_a, 100), 0); /* the daemons go on */
  CHECK_EQ_INT(run_add(remote_b, 100), 0);
}

static void native_kernel_refused(void) {
  REQUIRE(remote_a);
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, remote_a, 0, &err);
  char arg = 0;
  CHECK_EQ_INT(
      clEnqueueNativeKernel(q, (void (*)(void *))abort, &arg, 1, 0, NULL, NULL, 0, NULL, NULL),
      CL_INVALID_OPERATION);
  clReleaseCommandQueue(q);
}

/* SVM in a context of the local device and the daemons: the local device
 * has it, a daemon none; an SVM pointer argument runs on the local device
 * and is refused on a daemon (its memory is another machine's), as are the
 * SVM commands of a daemon's queue. */
static void svm_only_where_the_memory_is(void) {
  REQUIRE(local_device && remote_a && program);
  cl_device_svm_capabilities local_caps = 0, remote_caps = 1;
  clGetDeviceInfo(local_device, CL_DEVICE_SVM_CAPABILITIES, sizeof local_caps, &local_caps, NULL);
  clGetDeviceInfo(remote_a, CL_DEVICE_SVM_CAPABILITIES, sizeof remote_caps, &remote_caps, NULL);
  CHECK(local_caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER);
  CHECK_EQ_INT(remote_caps, 0);
  enum { N = 64 };
  float *p = clSVMAlloc(ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, N * sizeof(float), 0);
  REQUIRE(p);
  for (int i = 0; i < N; i++)
    p[i] = (float)i;
  cl_int err;
  cl_kernel k = clCreateKernel(program, "scale", &err);
  float two = 2;
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 0, p), CL_SUCCESS);
  clSetKernelArg(k, 1, sizeof two, &two);
  cl_command_queue qr = clCreateCommandQueue(ctx, remote_a, 0, &err);
  cl_command_queue ql = clCreateCommandQueue(ctx, local_device, 0, &err);
  size_t global = N;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(qr, k, 1, NULL, &global, NULL, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  float x = 0;
  CHECK_EQ_INT(clEnqueueSVMMemcpy(qr, CL_TRUE, &x, p, sizeof x, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(ql, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(ql), CL_SUCCESS);
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += p[i] != 2.0f * (float)i;
  CHECK_EQ_INT(bad, 0);
  clReleaseKernel(k);
  clReleaseCommandQueue(qr);
  clReleaseCommandQueue(ql);
  clSVMFree(ctx, p);
}

/* AQUILA_SPREAD=1: one NDRange over the local device and both daemons
 * gives what one device gives: in-place updates, two outputs, work-group
 * ids and sizes of the whole grid, a 2D grid whose work-groups do not
 * divide into equal chunks. */
static void spread_matches_one_device(void) {
  REQUIRE(local_device && remote_a && remote_b);
  const char *src =
      "__kernel void mix(__global float *a, __global int *ids, __global float *sums,\n"
      "                  float f) {\n"
      "  size_t x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);\n"
      "  size_t i = y * w + x;\n"
      "  a[i] = a[i] * f + (float)i;\n"
      "  ids[i] = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));\n"
      "  if (get_local_id(0) == 0 && get_local_id(1) == 0)\n"
      "    sums[get_group_id(1) * get_num_groups(0) + get_group_id(0)] = "
      "(float)get_global_size(1);\n"
      "}\n";
  cl_int err;
  cl_device_id all[3] = {local_device, remote_a, remote_b};
  cl_context c = clCreateContext(NULL, 3, all, NULL, NULL, &err);
  REQUIRE(c);
  cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
  REQUIRE(clBuildProgram(p, 0, NULL, "", NULL, NULL) == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "mix", &err);
  enum { W = 208, H = 96, LX = 16, LY = 4 }; /* 13 x 24 = 312 work-groups */
  enum { N = W * H, G = (W / LX) * (H / LY) };
  static float a[N], expect[N], sums[G];
  static int ids[N];
  for (int i = 0; i < N; i++)
    a[i] = (float)(i % 97);
  cl_mem ma = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  cl_mem mi = clCreateBuffer(c, CL_MEM_WRITE_ONLY, sizeof ids, NULL, &err);
  cl_mem ms = clCreateBuffer(c, CL_MEM_WRITE_ONLY, sizeof sums, NULL, &err);
  cl_command_queue q = clCreateCommandQueue(c, local_device, 0, &err);
  float f = 3.0f;
  clSetKernelArg(k, 0, sizeof ma, &ma);
  clSetKernelArg(k, 1, sizeof mi, &mi);
  clSetKernelArg(k, 2, sizeof ms, &ms);
  clSetKernelArg(k, 3, sizeof f, &f);
  size_t global[2] = {W, H}, local[2] = {LX, LY};
  /* Twice: the second starts from the first's merged result. */
  for (int round = 0; round < 2; round++)
    CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 2, NULL, global, local, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(q, ma, CL_TRUE, 0, sizeof a, a, 0, NULL, NULL), CL_SUCCESS);
  clEnqueueReadBuffer(q, mi, CL_TRUE, 0, sizeof ids, ids, 0, NULL, NULL);
  clEnqueueReadBuffer(q, ms, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    float v = (float)(i % 97);
    for (int round = 0; round < 2; round++)
      v = v * 3.0f + (float)i;
    expect[i] = v;
    int x = i % W, y = i / W;
    if (a[i] != expect[i] || ids[i] != (y / LY) * (W / LX) + x / LX) bad++;
  }
  for (int g = 0; g < G; g++)
    if (sums[g] != (float)H) bad++;
  CHECK_EQ_INT(bad, 0);
  clReleaseMemObject(ma);
  clReleaseMemObject(mi);
  clReleaseMemObject(ms);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clReleaseCommandQueue(q);
  clReleaseContext(c);
}

/* Spread kernels whose written ranges the footprint gives, and kernels
 * where it must not be trusted, each against the host's answer (run.sh
 * checks the AQUILA_DEBUG lines for which way each buffer came back):
 * - offset_rows: a 2D grid with a global work offset, its rows written
 *   into a sub-buffer of a buffer whose other part it reads (ranges, in
 *   the root buffer past the sub-buffer's origin);
 * - wraps: an unsigned 32-bit index that wraps for most work-items (its
 *   check fails: compared instead; trusting the forms would lose them);
 * - columns: a transpose-like write of columns (chunks' ranges overlap:
 *   compared);
 * - in_loop: each work-item writes a run in a loop (written anywhere). */
static void spread_by_footprint(void) {
  REQUIRE(local_device && remote_a && remote_b);
  const char *src =
      "__kernel void offset_rows(__global const float *in, __global float *out, uint w) {\n"
      "  size_t x = get_global_id(0) - get_global_offset(0);\n"
      "  size_t y = get_global_id(1) - get_global_offset(1);\n"
      "  out[y * w + x] = in[y * w + x] + (float)(y * 1000 + x);\n"
      "}\n"
      "__kernel void wraps(__global float *out, uint off, uint n) {\n"
      "  uint i = (uint)get_global_id(0) + off;\n"
      "  if (i < n) out[i] = (float)get_global_id(0);\n"
      "}\n"
      "__kernel void columns(__global float *out, uint h) {\n"
      "  size_t x = get_global_id(0), y = get_global_id(1);\n"
      "  out[x * h + y] = (float)(x * 7 + y);\n"
      "}\n"
      "__kernel void put(__global float *out, float f) {\n"
      "  out[get_global_id(0)] = f * (float)get_global_id(0);\n"
      "}\n"
      "__kernel void in_loop(__global int *out) {\n"
      "  for (int k = 0; k < 4; k++) out[get_global_id(0) * 4 + (k ^ 1)] = (int)get_global_id(0) "
      "+ k;\n"
      "}\n";
  cl_int err;
  cl_device_id all[3] = {local_device, remote_a, remote_b};
  cl_context c = clCreateContext(NULL, 3, all, NULL, NULL, &err);
  REQUIRE(c);
  cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
  REQUIRE(clBuildProgram(p, 0, NULL, "", NULL, NULL) == CL_SUCCESS);
  cl_command_queue q = clCreateCommandQueue(c, local_device, 0, &err);
  REQUIRE(q);
  int bad = 0;

  /* offset_rows: W x H work-items at offset (5, 3); the root buffer holds
   * the input (the first half) and the output (the second). */
  enum { W = 96, H = 64, N = W * H };
  static float root[2 * N];
  for (int i = 0; i < 2 * N; i++)
    root[i] = (float)(i % 13);
  cl_mem mr = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof root, root, &err);
  cl_buffer_region rin = {0, N * sizeof(float)}, rout = {N * sizeof(float), N * sizeof(float)};
  cl_mem min = clCreateSubBuffer(mr, 0, CL_BUFFER_CREATE_TYPE_REGION, &rin, &err);
  cl_mem mout = clCreateSubBuffer(mr, 0, CL_BUFFER_CREATE_TYPE_REGION, &rout, &err);
  REQUIRE(min && mout);
  cl_kernel k = clCreateKernel(p, "offset_rows", &err);
  cl_uint w = W;
  clSetKernelArg(k, 0, sizeof min, &min);
  clSetKernelArg(k, 1, sizeof mout, &mout);
  clSetKernelArg(k, 2, sizeof w, &w);
  size_t offset[2] = {5, 3}, global[2] = {W, H}, local[2] = {16, 4};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 2, offset, global, local, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(q, mr, CL_TRUE, 0, sizeof root, root, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < 2 * N; i++) {
    float want = (float)(i % 13);
    if (i >= N) want = (float)((i - N) % 13) + (float)(((i - N) / W) * 1000 + (i - N) % W);
    bad += root[i] != want;
  }
  clReleaseKernel(k);
  clReleaseMemObject(min);
  clReleaseMemObject(mout);
  clReleaseMemObject(mr);

  /* wraps: 4096 + 256 work-items, the first 256 writing nothing. */
  enum { M = 4096 };
  static float out[M];
  for (int i = 0; i < M; i++)
    out[i] = -1.0f;
  cl_mem mo = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof out, out, &err);
  k = clCreateKernel(p, "wraps", &err);
  cl_uint off = 0xffffff00u, n = M;
  clSetKernelArg(k, 0, sizeof mo, &mo);
  clSetKernelArg(k, 1, sizeof off, &off);
  clSetKernelArg(k, 2, sizeof n, &n);
  size_t g1 = M + 256, l1 = 64;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &g1, &l1, 0, NULL, NULL), CL_SUCCESS);
  clEnqueueReadBuffer(q, mo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  for (int i = 0; i < M; i++)
    bad += out[i] != (float)(i + 256);
  clReleaseKernel(k);

  /* columns: a 64 x 64 grid writing out[x * 64 + y]. */
  k = clCreateKernel(p, "columns", &err);
  cl_uint h = 64;
  clSetKernelArg(k, 0, sizeof mo, &mo);
  clSetKernelArg(k, 1, sizeof h, &h);
  size_t g2[2] = {64, 64}, l2[2] = {8, 8};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 2, NULL, g2, l2, 0, NULL, NULL), CL_SUCCESS);
  clEnqueueReadBuffer(q, mo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  for (int i = 0; i < M; i++)
    bad += out[i] != (float)((i / 64) * 7 + i % 64);
  clReleaseKernel(k);

  /* in_loop: runs of 4 ints per work-item. */
  k = clCreateKernel(p, "in_loop", &err);
  clSetKernelArg(k, 0, sizeof mo, &mo);
  size_t g3 = M / 4, l3 = 32;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &g3, &l3, 0, NULL, NULL), CL_SUCCESS);
  static int ints[M];
  clEnqueueReadBuffer(q, mo, CL_TRUE, 0, sizeof ints, ints, 0, NULL, NULL);
  for (int i = 0; i < M; i++)
    bad += ints[i] != i / 4 + ((i % 4) ^ 1);
  clReleaseKernel(k);
  clReleaseMemObject(mo);

  /* put: overwrites a buffer whose only copy is on a daemon (written
   * through its queue): nothing moves before the kernel, and every chunk's
   * range comes back. */
  cl_command_queue qa = clCreateCommandQueue(c, remote_a, 0, &err);
  cl_mem mp = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  for (int i = 0; i < M; i++)
    out[i] = -3.0f;
  clEnqueueWriteBuffer(qa, mp, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  k = clCreateKernel(p, "put", &err);
  float f = 5.0f;
  clSetKernelArg(k, 0, sizeof mp, &mp);
  clSetKernelArg(k, 1, sizeof f, &f);
  size_t g4 = M, l4 = 64;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &g4, &l4, 0, NULL, NULL), CL_SUCCESS);
  clEnqueueReadBuffer(q, mp, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  for (int i = 0; i < M; i++)
    bad += out[i] != 5.0f * (float)i;
  clReleaseKernel(k);
  clReleaseMemObject(mp);
  clReleaseCommandQueue(qa);
  CHECK_EQ_INT(bad, 0);
  clReleaseProgram(p);
  clReleaseCommandQueue(q);
  clReleaseContext(c);
}

/* Buffers a kernel overwrites whole without reading them (the
 * footprint's "overwritten") are not moved to where it runs: each device's
 * result must still be what the host reads, whichever device held the
 * buffer's only copy before; a kernel that writes only part of a buffer
 * keeps the rest. */
static void overwritten_buffers(void) {
  REQUIRE(remote_a && remote_b && local_device);
  const char *src = "__kernel void put(__global float *out, float f) {\n"
                    "  out[get_global_id(0)] = f * (float)get_global_id(0);\n"
                    "}\n";
  cl_int err;
  cl_device_id all[3] = {local_device, remote_a, remote_b};
  cl_context c = clCreateContext(NULL, 3, all, NULL, NULL, &err);
  REQUIRE(c);
  cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
  REQUIRE(clBuildProgram(p, 0, NULL, "", NULL, NULL) == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "put", &err);
  cl_command_queue q[3];
  for (int i = 0; i < 3; i++)
    q[i] = clCreateCommandQueue(c, all[i], 0, &err);
  enum { N = 8192 };
  static float data[N];
  for (int i = 0; i < N; i++)
    data[i] = -1.0f;
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
  clSetKernelArg(k, 0, sizeof m, &m);
  int bad = 0;
  /* Whole: on A, then B (A had the only copy), then the local device (B
   * had it), then A again (the host had it); each read back. */
  int order[4] = {1, 2, 0, 1};
  for (int step = 0; step < 4; step++) {
    float f = (float)(step + 2);
    size_t n = N;
    clSetKernelArg(k, 1, sizeof f, &f);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(q[order[step]], k, 1, NULL, &n, NULL, 0, NULL, NULL),
                 CL_SUCCESS);
    clFinish(q[order[step]]);
    if (step == 1) continue; /* the next kernel runs with the only copy on B */
    CHECK_EQ_INT(clEnqueueReadBuffer(q[0], m, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL),
                 CL_SUCCESS);
    for (int i = 0; i < N; i++)
      bad += data[i] != f * (float)i;
  }
  /* Part: the first half on B, after A wrote it all; the second half must
   * stay A's. */
  float fa = 3.0f, fb = 9.0f;
  size_t n = N, half = N / 2;
  clSetKernelArg(k, 1, sizeof fa, &fa);
  clEnqueueNDRangeKernel(q[1], k, 1, NULL, &n, NULL, 0, NULL, NULL);
  clFinish(q[1]);
  clSetKernelArg(k, 1, sizeof fb, &fb);
  clEnqueueNDRangeKernel(q[2], k, 1, NULL, &half, NULL, 0, NULL, NULL);
  clFinish(q[2]);
  CHECK_EQ_INT(clEnqueueReadBuffer(q[0], m, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++)
    bad += data[i] != (i < N / 2 ? fb : fa) * (float)i;
  CHECK_EQ_INT(bad, 0);
  clReleaseMemObject(m);
  for (int i = 0; i < 3; i++)
    clReleaseCommandQueue(q[i]);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clReleaseContext(c);
}

/* The daemon of remote_a dies while a long kernel runs there. */
/* A lost device turns available again within seconds, and a program
 * built then runs there. */
static void comes_back(cl_device_id d, double seconds) {
  cl_bool available = CL_FALSE;
  for (double t0 = now(); !available && now() - t0 < seconds;) {
    usleep(100000);
    clGetDeviceInfo(d, CL_DEVICE_AVAILABLE, sizeof available, &available, NULL);
  }
  CHECK(available == CL_TRUE);
  if (!available) return;
  cl_int err;
  cl_program old = program;
  program = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  CHECK_EQ_INT(clBuildProgram(program, 0, NULL, "", NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(run_add(d, 1000), 0);
  clReleaseProgram(program);
  program = old;
}

static void daemon_lost_mid_kernel(void) {
  const char *pid_text = getenv("AQUILA_TEST_DAEMON_PID");
  REQUIRE(pid_text && program && remote_a);
  pid_t pid = (pid_t)atol(pid_text);
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, remote_a, 0, &err);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 256 * 4, NULL, &err);
  int zero = 0, spins = 2000000000;
  clEnqueueFillBuffer(q, m, &zero, 4, 0, 256 * 4, 0, NULL, NULL);
  cl_kernel k = clCreateKernel(program, "spin", &err);
  clSetKernelArg(k, 0, sizeof m, &m);
  clSetKernelArg(k, 1, sizeof spins, &spins);
  size_t n = 256, one = 1;
  cl_event e, after;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &one, 0, NULL, &e), CL_SUCCESS);
  int out[256];
  CHECK_EQ_INT(clEnqueueReadBuffer(q, m, CL_FALSE, 0, sizeof out, out, 0, NULL, &after),
               CL_SUCCESS);
  usleep(300000);
  kill(pid, SIGKILL);
  double t0 = now();
  clWaitForEvents(1, &e);
  clFinish(q);
  double waited = now() - t0;
  CHECK(waited < 20.0);
  cl_int status = 0, status_after = 0;
  clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  clGetEventInfo(after, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status_after, &status_after,
                 NULL);
  CHECK(status < 0);
  CHECK(status_after < 0);
  cl_bool available = CL_TRUE;
  clGetDeviceInfo(remote_a, CL_DEVICE_AVAILABLE, sizeof available, &available, NULL);
  CHECK(available == CL_FALSE);
  /* A new command on the lost device fails at once. */
  cl_event e2;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &one, 0, NULL, &e2), CL_SUCCESS);
  clWaitForEvents(1, &e2);
  clGetEventInfo(e2, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  CHECK(status < 0);
  /* The other daemon and the local device work on. */
  if (remote_b) CHECK_EQ_INT(run_add(remote_b, 1000), 0);
  CHECK_EQ_INT(run_add(local_device, 1000), 0);
  /* The daemon comes back (run.sh's command, on the same address): the
   * device turns available again, and a program built then runs there. */
  const char *restart = getenv("AQUILA_TEST_DAEMON_RESTART");
  if (restart) {
    pid_t again = fork();
    if (again == 0) {
      execl("/bin/sh", "sh", "-c", restart, (char *)NULL);
      _exit(127);
    }
    REQUIRE(again > 0);
    comes_back(remote_a, 20.0);
    kill(again, SIGTERM);
    int st;
    waitpid(again, &st, 0);
  }
  clReleaseEvent(e);
  clReleaseEvent(e2);
  clReleaseEvent(after);
  clReleaseKernel(k);
  clReleaseMemObject(m);
  clReleaseCommandQueue(q);
}

/* The network to daemon A goes silent while a kernel runs there (run.sh's
 * AQUILA_TEST_CUT command: every packet dropped, nothing closed): the
 * commands fail within the bound, nothing hangs, the device turns
 * unavailable; when the network is back (AQUILA_TEST_RESTORE) the device
 * comes back too. */
static void network_silent_mid_kernel(void) {
  const char *cut = getenv("AQUILA_TEST_CUT"), *restore = getenv("AQUILA_TEST_RESTORE");
  REQUIRE(cut && restore && program && remote_a);
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, remote_a, 0, &err);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * 4, NULL, &err);
  int zero = 0, spins = 20000000; /* a few seconds on one unit */
  clEnqueueFillBuffer(q, m, &zero, 4, 0, 64 * 4, 0, NULL, NULL);
  cl_kernel k = clCreateKernel(program, "spin", &err);
  clSetKernelArg(k, 0, sizeof m, &m);
  clSetKernelArg(k, 1, sizeof spins, &spins);
  size_t n = 64, one = 1;
  cl_event e, after;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &one, 0, NULL, &e), CL_SUCCESS);
  int out[64];
  CHECK_EQ_INT(clEnqueueReadBuffer(q, m, CL_FALSE, 0, sizeof out, out, 0, NULL, &after),
               CL_SUCCESS);
  usleep(300000);
  CHECK_EQ_INT(system(cut), 0);
  double t0 = now();
  clWaitForEvents(1, &e);
  clFinish(q);
  double waited = now() - t0;
  printf("  commands failed %.1f s after the network went silent\n", waited);
  CHECK(waited < 60.0);
  cl_int status = 0, status_after = 0;
  clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  clGetEventInfo(after, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status_after, &status_after,
                 NULL);
  CHECK(status < 0);
  CHECK(status_after < 0);
  cl_bool available = CL_TRUE;
  clGetDeviceInfo(remote_a, CL_DEVICE_AVAILABLE, sizeof available, &available, NULL);
  CHECK(available == CL_FALSE);
  CHECK_EQ_INT(system(restore), 0);
  t0 = now();
  comes_back(remote_a, 60.0);
  printf("  the device came back %.1f s after the network\n", now() - t0);
  clReleaseEvent(e);
  clReleaseEvent(after);
  clReleaseKernel(k);
  clReleaseMemObject(m);
  clReleaseCommandQueue(q);
}

int main(int argc, char **argv) {
  setup();
  if (argc > 1 && !strcmp(argv[1], "lost")) {
    RUN(build);
    RUN(daemon_lost_mid_kernel);
  } else if (argc > 1 && !strcmp(argv[1], "silence")) {
    RUN(build);
    RUN(network_silent_mid_kernel);
  } else if (argc > 1 && !strcmp(argv[1], "spread")) {
    RUN(spread_matches_one_device);
    RUN(spread_by_footprint);
  } else if (argc > 1 && !strcmp(argv[1], "count")) {
    /* Prints the number of devices (the wrong-key case). */
    printf("devices %u\n", num_devices);
    return 0;
  } else {
    RUN(device_list);
    RUN(build);
    RUN(kernel_on_each_remote);
    RUN(buffer_commands_on_remote);
    RUN(buffer_across_devices);
    RUN(kernel_fault_on_remote);
    RUN(native_kernel_refused);
    RUN(svm_only_where_the_memory_is);
    RUN(image_support_macro);
    RUN(image_across_devices);
    RUN(overwritten_buffers);
  }
  if (program) clReleaseProgram(program);
  if (ctx) clReleaseContext(ctx);
  CHECK_EXIT();
}
