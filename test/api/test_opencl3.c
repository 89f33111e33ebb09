/* OpenCL 3.0 through the loader: the platform and device report 3.0 and its
 * queries consistently (the extensions' names and name-version arrays agree,
 * OpenCL C 3.0 is listed with its features), the 2.x calls a 3.0 device has
 * work (queues, samplers, buffers and images with property lists and their
 * queries, clCloneKernel, context destructor callbacks, the host timer), an
 * OpenCL C 3.0 kernel with C11 atomics of every order and scope runs, and
 * the optional features the device lacks give the specified errors after
 * the argument checks (SPIR-V programs: test_spirv). */
#define CL_TARGET_OPENCL_VERSION 300
#include <unistd.h>

#include "api.h"

static void versions_and_queries(void) {
  char text[4096];
  CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof text, text, NULL),
               CL_SUCCESS);
  CHECK(!strncmp(text, "OpenCL 3.0 ", 11));
  cl_version v = 0;
  CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_NUMERIC_VERSION, sizeof v, &v, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(v, CL_MAKE_VERSION(3, 0, 0));
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof text, text, NULL), CL_SUCCESS);
  CHECK(!strncmp(text, "OpenCL 3.0 ", 11));
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_NUMERIC_VERSION, sizeof v, &v, NULL), CL_SUCCESS);
  CHECK_EQ_INT(v, CL_MAKE_VERSION(3, 0, 0));
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_VERSION, sizeof text, text, NULL),
               CL_SUCCESS);
  CHECK(!strncmp(text, "OpenCL C 1.2", 12));

  /* Every extension in the string is in the array, and as many. */
  cl_name_version ext[64];
  size_t size = 0;
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, sizeof ext, ext, &size),
               CL_SUCCESS);
  size_t n = size / sizeof ext[0];
  CHECK(n >= 2 && size % sizeof ext[0] == 0);
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof text, text, NULL), CL_SUCCESS);
  size_t words = 0;
  for (char *w = strtok(text, " "); w; w = strtok(NULL, " ")) {
    int found = 0;
    for (size_t i = 0; i < n; i++)
      found |= !strcmp(ext[i].name, w);
    if (!found) printf("# %s is not in CL_DEVICE_EXTENSIONS_WITH_VERSION\n", w);
    CHECK(found);
    words++;
  }
  CHECK_EQ_INT(words, n);

  cl_name_version c[16];
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, sizeof c, c, &size),
               CL_SUCCESS);
  int has_3 = 0;
  for (size_t i = 0; i < size / sizeof c[0]; i++) {
    CHECK(!strcmp(c[i].name, "OpenCL C"));
    has_3 |= c[i].version == CL_MAKE_VERSION(3, 0, 0);
  }
  CHECK(has_3);
  cl_name_version f[32];
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_FEATURES, sizeof f, f, &size),
               CL_SUCCESS);
  int int64 = 0, generic = 0;
  for (size_t i = 0; i < size / sizeof f[0]; i++) {
    int64 |= !strcmp(f[i].name, "__opencl_c_int64");
    generic |= !strcmp(f[i].name, "__opencl_c_generic_address_space");
  }
  CHECK(int64 && generic);
  /* An empty array is a size of 0. */
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION, 0, NULL, &size),
               CL_SUCCESS);
  CHECK_EQ_INT(size, 0);

  cl_device_atomic_capabilities atomics = 0;
  CHECK_EQ_INT(
      clGetDeviceInfo(device, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, sizeof atomics, &atomics, NULL),
      CL_SUCCESS);
  CHECK((atomics & (CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP)) ==
        (CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP));
  cl_device_svm_capabilities svm = 1;
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL),
               CL_SUCCESS);
  /* The CPU agent has every kind of SVM (test_svm tests it). */
  CHECK_EQ_INT(svm, CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER |
                        CL_DEVICE_SVM_FINE_GRAIN_SYSTEM | CL_DEVICE_SVM_ATOMICS);
  cl_bool flag = CL_TRUE;
  CHECK_EQ_INT(
      clGetDeviceInfo(device, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, sizeof flag, &flag, NULL),
      CL_SUCCESS);
  CHECK_EQ_INT(flag, CL_TRUE);
  cl_ulong resolution = 0;
  CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_HOST_TIMER_RESOLUTION, sizeof resolution,
                                 &resolution, NULL),
               CL_SUCCESS);
  CHECK(resolution > 0);
}

static void queues_samplers_buffers(void) {
  cl_int err;
  cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(context, device, qp, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(q);
  cl_command_queue_properties got = 0;
  clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof got, &got, NULL);
  CHECK_EQ_INT(got, CL_QUEUE_PROFILING_ENABLE);
  cl_queue_properties back_props[8];
  size_t size = 0;
  CHECK_EQ_INT(
      clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof back_props, back_props, &size),
      CL_SUCCESS);
  CHECK(size == sizeof qp && !memcmp(back_props, qp, sizeof qp));
  CHECK_EQ_INT(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &size), CL_SUCCESS);
  CHECK_EQ_INT(size, 0); /* made without a property list */
  size_t queue_size;
  CHECK_EQ_INT(clGetCommandQueueInfo(q, CL_QUEUE_SIZE, sizeof queue_size, &queue_size, NULL),
               CL_INVALID_COMMAND_QUEUE);
  cl_queue_properties device_queue[] = {CL_QUEUE_SIZE, 1024, 0};
  CHECK(clCreateCommandQueueWithProperties(context, device, device_queue, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  cl_queue_properties on_device[] = {
      CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  CHECK(clCreateCommandQueueWithProperties(context, device, on_device, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_QUEUE_PROPERTIES);
  CHECK(clCreateCommandQueueWithProperties(NULL, device, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_CONTEXT);

  cl_sampler_properties sp[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE, CL_SAMPLER_FILTER_MODE,
                                CL_FILTER_LINEAR, 0};
  cl_sampler s = clCreateSamplerWithProperties(context, sp, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_filter_mode filter = 0;
  cl_sampler_properties sp_back[8];
  if (s) {
    clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof filter, &filter, NULL);
    CHECK_EQ_INT(clGetSamplerInfo(s, CL_SAMPLER_PROPERTIES, sizeof sp_back, sp_back, &size),
                 CL_SUCCESS);
    CHECK(size == sizeof sp && !memcmp(sp_back, sp, sizeof sp));
  }
  CHECK_EQ_INT(filter, CL_FILTER_LINEAR);
  cl_sampler_properties twice[] = {CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, CL_SAMPLER_FILTER_MODE,
                                   CL_FILTER_NEAREST, 0};
  CHECK(clCreateSamplerWithProperties(context, twice, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);

  cl_mem_properties none[] = {0};
  cl_mem b = clCreateBufferWithProperties(context, none, CL_MEM_READ_WRITE, 64, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(b);
  cl_mem_properties mp_back[4] = {1, 1, 1, 1};
  CHECK_EQ_INT(clGetMemObjectInfo(b, CL_MEM_PROPERTIES, sizeof mp_back, mp_back, &size),
               CL_SUCCESS);
  CHECK(size == sizeof none && mp_back[0] == 0);
  cl_mem plain = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  CHECK_EQ_INT(clGetMemObjectInfo(plain, CL_MEM_PROPERTIES, 0, NULL, &size), CL_SUCCESS);
  CHECK_EQ_INT(size, 0);
  cl_bool uses_svm = CL_TRUE;
  CHECK_EQ_INT(clGetMemObjectInfo(plain, CL_MEM_USES_SVM_POINTER, sizeof uses_svm, &uses_svm, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(uses_svm, CL_FALSE);
  cl_mem_properties unknown[] = {0x12345, 1, 0};
  CHECK(clCreateBufferWithProperties(context, unknown, CL_MEM_READ_WRITE, 64, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROPERTY);
  int value = 5, back = 0;
  CHECK_EQ_INT(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, sizeof value, &value, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(back, 5);
  if (s) clReleaseSampler(s);
  clReleaseMemObject(plain);
  clReleaseMemObject(b);
  clReleaseCommandQueue(q);
}

static int destructor_order[4], destructors_run;
static void CL_CALLBACK on_context_destroyed(cl_context c, void *data) {
  if (destructors_run < 4) destructor_order[destructors_run] = (int)(size_t)data;
  destructors_run++;
}

static void context_destructors_run_newest_first(void) {
  cl_int err;
  cl_context c = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  REQUIRE(c);
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 16, NULL, &err);
  CHECK_EQ_INT(clSetContextDestructorCallback(c, on_context_destroyed, (void *)1), CL_SUCCESS);
  CHECK_EQ_INT(clSetContextDestructorCallback(c, on_context_destroyed, (void *)2), CL_SUCCESS);
  CHECK_EQ_INT(clSetContextDestructorCallback(c, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clSetContextDestructorCallback(NULL, on_context_destroyed, NULL),
               CL_INVALID_CONTEXT);
  clReleaseContext(c);
  CHECK_EQ_INT(destructors_run, 0); /* the buffer still holds the context */
  clReleaseMemObject(m);
  CHECK_EQ_INT(destructors_run, 2);
  CHECK(destructor_order[0] == 2 && destructor_order[1] == 1);
}

static const char *c11_source =
    "__kernel void count(__global atomic_int *total, __global atomic_uint *flags,\n"
    "                    __global int *seen) {\n"
    "  __local atomic_int group;\n"
    "  if (get_local_id(0) == 0) atomic_init(&group, 0);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  atomic_fetch_add_explicit(&group, 1, memory_order_relaxed, memory_scope_work_group);\n"
    "  atomic_fetch_add(total, 1);\n"
    "  atomic_fetch_or_explicit(flags, 1u << (get_group_id(0) % 32), memory_order_acq_rel,\n"
    "                           memory_scope_device);\n"
    "  int expected = 0;\n"
    "  atomic_compare_exchange_strong(&total[1], &expected, 7);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (get_local_id(0) == 0)\n"
    "    seen[get_group_id(0)] = atomic_load_explicit(&group, memory_order_acquire);\n"
    "#if __OPENCL_C_VERSION__ != 300 || !defined(__opencl_c_atomic_scope_all_devices) || \\\n"
    "    !defined(__opencl_c_generic_address_space) || defined(__opencl_c_pipes)\n"
    "  seen[0] = -1;\n"
    "#endif\n"
    "}\n";

static void opencl_c_3_kernel_with_c11_atomics(void) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &c11_source, NULL, &err);
  REQUIRE(p);
  err = clBuildProgram(p, 1, &device, "-cl-std=CL3.0", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    printf("# build log:\n%s\n", log);
  }
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "count", &err);
  REQUIRE(k);
  enum { GROUPS = 40, LOCAL = 64 };
  int zero[2] = {0, 0};
  cl_mem total =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
  cl_uint no_flags = 0;
  cl_mem flags = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof no_flags,
                                &no_flags, &err);
  cl_mem seen = clCreateBuffer(context, CL_MEM_READ_WRITE, GROUPS * sizeof(int), NULL, &err);
  clSetKernelArg(k, 0, sizeof total, &total);
  clSetKernelArg(k, 1, sizeof flags, &flags);
  clSetKernelArg(k, 2, sizeof seen, &seen);
  /* A clone made now keeps these arguments; the original's next change is
   * its own. */
  cl_kernel clone = clCloneKernel(k, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(clone);
  cl_mem other = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof zero, NULL, &err);
  clSetKernelArg(k, 0, sizeof other, &other);
  size_t global = GROUPS * LOCAL, local = LOCAL;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, clone, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  int totals[2] = {0, 0}, seen_back[GROUPS];
  cl_uint flags_back = 0;
  clEnqueueReadBuffer(queue, total, CL_TRUE, 0, sizeof totals, totals, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, flags, CL_TRUE, 0, sizeof flags_back, &flags_back, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, seen, CL_TRUE, 0, sizeof seen_back, seen_back, 0, NULL, NULL);
  CHECK_EQ_INT(totals[0], GROUPS * LOCAL);
  CHECK_EQ_INT(totals[1], 7);
  CHECK_EQ_INT(flags_back, 0xffffffffu);
  int groups_right = 0;
  for (int g = 0; g < GROUPS; g++)
    groups_right += seen_back[g] == LOCAL;
  CHECK_EQ_INT(groups_right, GROUPS);
  CHECK(clCloneKernel(NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_KERNEL);
  clReleaseMemObject(other);
  clReleaseMemObject(total);
  clReleaseMemObject(flags);
  clReleaseMemObject(seen);
  clReleaseKernel(clone);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* Non-uniform work-groups (OpenCL 2.0): an OpenCL C 3.0 program's last
 * work-group may be partial, with get_local_size that group's size and
 * get_enqueued_local_size the launch's, in a plain kernel (vectorized),
 * one with barriers and __local memory, and one with a required size; an
 * OpenCL C 1.2 program, or one built with -cl-uniform-work-group-size,
 * refuses such a launch. */
static const char *partial_source =
    "#if __OPENCL_C_VERSION__ >= 200\n"
    "kernel void sizes(global uint *out) {\n"
    "  out[get_global_id(0)] = (uint)(get_local_size(0) * 1000 + get_enqueued_local_size(0));\n"
    "}\n"
    "#endif\n"
    "kernel void reverse(global int *out, local int *tmp) {\n"
    "  size_t l = get_local_id(0), n = get_local_size(0);\n"
    "  tmp[l] = (int)get_global_id(0);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[get_global_id(0)] = tmp[n - 1 - l];\n"
    "}\n"
    "__attribute__((reqd_work_group_size(16, 1, 1)))\n"
    "kernel void required(global uint *out) {\n"
    "  out[get_global_id(0)] = (uint)get_local_size(0);\n"
    "}\n";

static cl_program partial_program(const char *options) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &partial_source, NULL, &err);
  if (p && clBuildProgram(p, 1, &device, options, NULL, NULL) != CL_SUCCESS) {
    clReleaseProgram(p);
    return NULL;
  }
  return p;
}

static void partial_work_groups(void) {
  cl_bool supported = CL_FALSE;
  clGetDeviceInfo(device, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof supported, &supported,
                  NULL);
  CHECK_EQ_INT(supported, CL_TRUE);
  enum { N = 1001 };
  cl_int err;
  cl_program p = partial_program("-cl-std=CL3.0");
  REQUIRE(p);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(cl_uint), NULL, &err);
  cl_uint back[N];
  size_t global = N, local = 64;
  cl_kernel k = clCreateKernel(p, "sizes", &err);
  clSetKernelArg(k, 0, sizeof out, &out);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += back[i] != (i < 960 ? 64064u : 41064u);
  CHECK_EQ_INT(bad, 0);
  /* No local size for a prime global size: whole groups and a partial one. */
  global = 1009;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
  CHECK(back[0] / 1000 > 1 && back[0] % 1000 == back[0] / 1000);
  clReleaseKernel(k);

  k = clCreateKernel(p, "reverse", &err);
  clSetKernelArg(k, 0, sizeof out, &out);
  clSetKernelArg(k, 1, 64 * sizeof(int), NULL);
  global = N;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
  bad = 0;
  for (int i = 0; i < N; i++) {
    int first = i / 64 * 64, size = i < 960 ? 64 : 41;
    bad += (int)back[i] != first + size - 1 - (i - first);
  }
  CHECK_EQ_INT(bad, 0);
  clReleaseKernel(k);

  k = clCreateKernel(p, "required", &err);
  clSetKernelArg(k, 0, sizeof out, &out);
  global = 40;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, 40 * sizeof(cl_uint), back, 0, NULL, NULL);
  bad = 0;
  for (int i = 0; i < 40; i++)
    bad += back[i] != (i < 32 ? 16u : 8u);
  CHECK_EQ_INT(bad, 0);
  clReleaseKernel(k);
  clReleaseProgram(p);

  /* Refused where the program promises whole groups. */
  const char *uniform_options[] = {"", "-cl-std=CL1.2", "-cl-std=CL3.0 -cl-uniform-work-group-size"};
  for (int i = 0; i < 3; i++) {
    p = partial_program(uniform_options[i]);
    REQUIRE(p);
    k = clCreateKernel(p, "reverse", &err);
    clSetKernelArg(k, 0, sizeof out, &out);
    clSetKernelArg(k, 1, 64 * sizeof(int), NULL);
    global = N;
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
                 CL_INVALID_WORK_GROUP_SIZE);
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
  clReleaseMemObject(out);
}

/* The generic address space: one function reads through a pointer to any
 * space, to_global/to_local/to_private and get_fence say where a pointer
 * points (in a kernel with a barrier too, whose private values live
 * across it), and the builtins that take a pointer (vload/vstore, fract,
 * C11 atomics) take generic ones. */
static const char *generic_source =
    "int read(int *p) { return *p; }\n"
    "kernel void where(global int *out, local int *l) {\n"
    "  size_t i = get_global_id(0), lid = get_local_id(0);\n"
    "  int priv = 3;\n"
    "  l[lid] = 1;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  int *p = i & 1 ? (int *)(out + i) : (int *)(l + lid);\n"
    "  int *q = &priv;\n"
    "  out[i] = 0;\n"
    "  int v = read(p) + read(q);\n"
    "  v += (to_global(p) != 0) * 10 + (to_local(p) != 0) * 100 + (to_private(q) != 0) * 1000;\n"
    "  v += (to_private(p) != 0) * 10000 + (to_global(q) != 0) * 100000;\n"
    "  v += (get_fence(p) == (i & 1 ? CLK_GLOBAL_MEM_FENCE : CLK_LOCAL_MEM_FENCE)) * 1000000;\n"
    "  out[i] = v;\n"
    "}\n"
    "kernel void builtins(global float *a, global float *b, global atomic_int *count) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float *p = a, *q = b;\n"
    "  float4 x = vload4(i, p);\n"
    "  float whole;\n"
    "  float f = fract(x.x + 0.25f, &whole);\n"
    "  vstore4(x * 2 + f, i, q);\n"
    "  atomic_int *c = count;\n"
    "  atomic_fetch_add(c, 1);\n"
    "  int expected = 0;\n"
    "  atomic_compare_exchange_strong(c + 1, &expected, 7);\n"
    "}\n";

static void generic_address_space(void) {
  cl_int err;
  cl_program p = build_program(generic_source, "-cl-std=CL3.0", &err);
  REQUIRE(p);
  enum { N = 256 };
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  cl_kernel k = clCreateKernel(p, "where", &err);
  clSetKernelArg(k, 0, sizeof out, &out);
  clSetKernelArg(k, 1, 32 * sizeof(int), NULL);
  size_t global = N, local = 32;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  int back[N];
  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += back[i] != (i & 1 ? 1001013 : 1001104);
  if (bad) printf("# where: %d %d\n", back[0], back[1]);
  CHECK_EQ_INT(bad, 0);
  clReleaseKernel(k);

  float a[4 * N], b[4 * N];
  for (int i = 0; i < 4 * N; i++)
    a[i] = (float)i;
  cl_mem ma = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  cl_mem mb = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof b, NULL, &err);
  int zero[2] = {0, 0};
  cl_mem count = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
  k = clCreateKernel(p, "builtins", &err);
  clSetKernelArg(k, 0, sizeof ma, &ma);
  clSetKernelArg(k, 1, sizeof mb, &mb);
  clSetKernelArg(k, 2, sizeof count, &count);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  clEnqueueReadBuffer(queue, mb, CL_TRUE, 0, sizeof b, b, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, count, CL_TRUE, 0, sizeof zero, zero, 0, NULL, NULL);
  bad = 0;
  for (int i = 0; i < 4 * N; i++)
    bad += b[i] != a[i] * 2 + 0.25f;
  CHECK_EQ_INT(bad, 0);
  CHECK(zero[0] == N && zero[1] == 7);
  clReleaseKernel(k);
  clReleaseMemObject(ma);
  clReleaseMemObject(mb);
  clReleaseMemObject(count);
  clReleaseMemObject(out);
  clReleaseProgram(p);
}

/* Program-scope variables: initialized, shared by every kernel of the
 * program (one kernel updates, another reads), a pointer to one in
 * another's initializer, a static one inside a function; their total size
 * is reported, one over the largest size is refused with a log. */
static const char *variables_source =
    "global int counter = 5;\n"
    "global float table[4] = {1, 2, 3, 4};\n"
    "global int *pointer = &counter;\n"
    "int calls(void) { static global int n; return ++n; }\n"
    "kernel void add(int v) { atomic_add(&counter, v); }\n"
    "kernel void scale(float f) { table[get_global_id(0)] *= f; }\n"
    "kernel void read(global int *out) {\n"
    "  out[0] = counter; out[1] = (int)(table[0] + table[3]); out[2] = *pointer;\n"
    "  out[3] = calls();\n"
    "}\n";

static void program_scope_variables(void) {
  size_t max = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE, sizeof max, &max, NULL);
  CHECK(max >= 65536);
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &variables_source, NULL, &err);
  REQUIRE(p);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "-cl-std=CL3.0", NULL, NULL), CL_SUCCESS);
  size_t total = 0;
  CHECK_EQ_INT(clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
                                     sizeof total, &total, NULL),
               CL_SUCCESS);
  CHECK(total >= 4 + 16 + 8 + 4);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 4 * sizeof(int), NULL, &err);
  cl_kernel add = clCreateKernel(p, "add", &err), scale = clCreateKernel(p, "scale", &err),
            read = clCreateKernel(p, "read", &err);
  REQUIRE(add && scale && read);
  int two = 2;
  float half = 0.5f;
  clSetKernelArg(add, 0, sizeof two, &two);
  clSetKernelArg(scale, 0, sizeof half, &half);
  clSetKernelArg(read, 0, sizeof out, &out);
  size_t hundred = 100, four = 4, one = 1;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, add, 1, NULL, &hundred, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, scale, 1, NULL, &four, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  int back[4];
  for (int run = 1; run <= 2; run++) {
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, read, 1, NULL, &one, NULL, 0, NULL, NULL),
                 CL_SUCCESS);
    clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
    CHECK(back[0] == 205 && back[1] == 2 && back[2] == 205 && back[3] == run);
  }
  clReleaseKernel(add);
  clReleaseKernel(scale);
  clReleaseKernel(read);
  clReleaseMemObject(out);
  clReleaseProgram(p);

  const char *big = "global char big[65537];\n"
                    "kernel void k(global char *o) { o[0] = big[get_global_id(0)]; }\n";
  p = clCreateProgramWithSource(context, 1, &big, NULL, &err);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "-cl-std=CL3.0", NULL, NULL),
               CL_BUILD_PROGRAM_FAILURE);
  char log[2048] = "";
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
  CHECK(strstr(log, "CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE") != NULL);
  clReleaseProgram(p);
}

/* Work-group collective functions: reductions, scans (floats in the
 * sequential order: exact), broadcast, all and any, twice in a row, in
 * groups of 64 and in a partial last group. */
static const char *collectives_source =
    "kernel void collect(global const int *a, global const float *f, global int *out,\n"
    "                    global float *fout) {\n"
    "  size_t i = get_global_id(0);\n"
    "  int x = a[i];\n"
    "  out[6 * i + 0] = work_group_reduce_add(x);\n"
    "  out[6 * i + 1] = work_group_scan_exclusive_add(x);\n"
    "  out[6 * i + 2] = work_group_scan_inclusive_max(x);\n"
    "  out[6 * i + 3] = work_group_broadcast(x, 3);\n"
    "  out[6 * i + 4] = work_group_all(x > -1000) + 2 * work_group_any(x == 7);\n"
    "  out[6 * i + 5] = work_group_reduce_min(x);\n"
    "  fout[i] = work_group_scan_inclusive_add(f[i]);\n"
    "}\n";

static void work_group_collectives(void) {
  cl_bool supported = CL_FALSE;
  clGetDeviceInfo(device, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT, sizeof supported,
                  &supported, NULL);
  CHECK_EQ_INT(supported, CL_TRUE);
  enum { N = 1000, L = 64 };
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &collectives_source, NULL, &err);
  REQUIRE(p);
  REQUIRE(clBuildProgram(p, 1, &device, "-cl-std=CL3.0", NULL, NULL) == CL_SUCCESS);
  static int a[N], out[6 * N];
  static float f[N], fout[N];
  for (int i = 0; i < N; i++) {
    a[i] = (i * 37) % 101 - 50;
    f[i] = (float)((i * 13) % 7) * 0.1f;
  }
  cl_mem ma = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  cl_mem mf = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof f, f, &err);
  cl_mem mo = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  cl_mem mfo = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof fout, NULL, &err);
  cl_kernel k = clCreateKernel(p, "collect", &err);
  clSetKernelArg(k, 0, sizeof ma, &ma);
  clSetKernelArg(k, 1, sizeof mf, &mf);
  clSetKernelArg(k, 2, sizeof mo, &mo);
  clSetKernelArg(k, 3, sizeof mfo, &mfo);
  size_t global = N, local = L;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  clEnqueueReadBuffer(queue, mo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, mfo, CL_TRUE, 0, sizeof fout, fout, 0, NULL, NULL);
  int bad = 0;
  for (int g = 0; g * L < N; g++) {
    int first = g * L, size = N - first < L ? N - first : L;
    int sum = 0, min = a[first], any7 = 0;
    for (int j = 0; j < size; j++) {
      sum += a[first + j];
      min = a[first + j] < min ? a[first + j] : min;
      any7 |= a[first + j] == 7;
    }
    int prefix = 0, running = a[first];
    float fsum = 0;
    for (int j = 0; j < size; j++) {
      const int *o = &out[6 * (first + j)];
      running = a[first + j] > running ? a[first + j] : running;
      fsum += f[first + j];
      bad += o[0] != sum || o[1] != prefix || o[2] != running || o[3] != a[first + 3] ||
             o[4] != 1 + 2 * any7 || o[5] != min || fout[first + j] != fsum;
      prefix += a[first + j];
    }
  }
  CHECK_EQ_INT(bad, 0);
  clReleaseKernel(k);
  clReleaseMemObject(ma);
  clReleaseMemObject(mf);
  clReleaseMemObject(mo);
  clReleaseMemObject(mfo);
  clReleaseProgram(p);
}

/* Sub-groups: each work-item records its sub-group's id, its id in it, the
 * sizes and counts, and the results of the collectives; the host groups
 * the work-items by those ids and checks every result against them, and
 * the queries against clGetKernelSubGroupInfo. */
#define SG_FIELDS 17
static const char *sub_groups_source =
    "kernel void sg(global const int *a, global const float *f, global int *out,\n"
    "               global float *fout, int with_barrier) {\n"
    "  size_t i = get_global_id(0) + get_global_size(0) * get_global_id(1);\n"
    "  int x = a[i];\n"
    "  global int *o = out + 17 * i;\n"
    "  local int scratch[256];\n"
    "#ifdef WITH_BARRIER\n"
    "  if (with_barrier) {\n"
    "    scratch[get_local_linear_id() % 256] = x;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "#endif\n"
    "  o[0] = get_sub_group_id();\n"
    "  o[1] = get_sub_group_local_id();\n"
    "  o[2] = get_sub_group_size();\n"
    "  o[3] = get_max_sub_group_size();\n"
    "  o[4] = get_num_sub_groups();\n"
    "  o[5] = sub_group_reduce_add(x);\n"
    "  o[6] = sub_group_scan_inclusive_add(x);\n"
    "  o[7] = sub_group_scan_exclusive_max(x);\n"
    "  o[8] = sub_group_broadcast(x, 0);\n"
    "  o[9] = sub_group_shuffle_xor(x, 1);\n"
    "  o[10] = sub_group_all(x > -1000) + 2 * sub_group_any(x == 7);\n"
    "  o[11] = sub_group_ballot(x > 0).x;\n"
    "  o[12] = -1;\n"
    "  if (x % 3 != 0) o[12] = sub_group_non_uniform_reduce_add(x);\n"
    "  o[13] = sub_group_shuffle_down(x, 1);\n"
    "  o[14] = sub_group_elect();\n"
    "  o[15] = get_enqueued_num_sub_groups();\n"
    "  o[16] = sub_group_clustered_reduce_add(x, 4u);\n"
    "  fout[i] = sub_group_scan_inclusive_add(f[i]);\n"
    "}\n";

/* Checks one launch's records: n work-items in groups of lx * ly. */
static int check_sub_groups(const int *a, const float *f, const int *out, const float *fout,
                            size_t gx, size_t gy, size_t lx, size_t ly, size_t max_query) {
  int bad = 0;
  size_t groups_x = (gx + lx - 1) / lx, groups_y = (gy + ly - 1) / ly;
  unsigned max_seen = 0;
  for (size_t g = 0; g < groups_x * groups_y; g++) {
    size_t x0 = (g % groups_x) * lx, y0 = (g / groups_x) * ly;
    size_t wx = gx - x0 < lx ? gx - x0 : lx, wy = gy - y0 < ly ? gy - y0 : ly;
    int members[1024];
    int count = 0, num = -1, seen_ids = 0;
    for (size_t y = 0; y < wy; y++)
      for (size_t x = 0; x < wx; x++) members[count++] = (int)((y0 + y) * gx + x0 + x);
    for (int m = 0; m < count; m++) {
      const int *o = out + SG_FIELDS * members[m];
      if (num < 0) num = o[4];
      bad += o[4] != num;
      if ((unsigned)o[2] > max_seen) max_seen = (unsigned)o[2];
      bad += o[1] < 0 || o[1] >= o[2] || o[3] != (int)max_query;
      bad += o[0] < 0 || o[0] >= num;
    }
    /* Each sub-group: its members in local-id order, as many as its size. */
    for (int id = 0; id < num; id++) {
      int lane_of[64], size = -1, n = 0;
      for (int m = 0; m < count; m++) {
        const int *o = out + SG_FIELDS * members[m];
        if (o[0] != id) continue;
        if (size < 0) size = o[2];
        bad += o[2] != size || n >= 64 || o[1] >= 64;
        if (n < 64 && o[1] < 64) lane_of[o[1]] = members[m];
        n++;
      }
      if (n == 0) continue;
      seen_ids++;
      bad += n != size;
      if (n != size) continue;
      int sum = 0, all = 1, any7 = 0, ballot = 0, first = lane_of[0];
      for (int l = 0; l < size; l++) {
        int v = a[lane_of[l]];
        sum += v;
        all &= v > -1000;
        any7 |= v == 7;
        ballot |= (v > 0) << l;
      }
      int prefix = 0, maxp = INT32_MIN, nu = 0;
      float fsum = 0;
      for (int l = 0; l < size; l++)
        if (a[lane_of[l]] % 3 != 0) nu += a[lane_of[l]];
      for (int l = 0; l < size; l++) {
        int w = lane_of[l], v = a[w];
        const int *o = out + SG_FIELDS * w;
        prefix += v;
        fsum += f[w];
        bad += o[5] != sum || o[6] != prefix || o[7] != maxp || o[8] != a[first];
        bad += o[9] != ((l ^ 1) < size ? a[lane_of[l ^ 1]] : o[9]);
        bad += o[10] != all + 2 * any7 || o[11] != ballot || o[14] != (l == 0);
        bad += o[12] != (v % 3 != 0 ? nu : -1);
        bad += l + 1 < size && o[13] != a[lane_of[l + 1]];
        bad += fout[w] != fsum;
        int cluster = 0; /* lanes l - l % 4 up to 3 more, within the sub-group */
        for (int c = l - l % 4; c < l - l % 4 + 4 && c < size; c++) cluster += a[lane_of[c]];
        bad += o[16] != cluster;
        maxp = v > maxp ? v : maxp;
      }
    }
    bad += seen_ids != num;
  }
  bad += max_seen > max_query;
  return bad;
}

static void sub_groups_run(cl_program p, const char *what, int barriers) {
  enum { GX = 200, GY = 6 };
  static int a[GX * GY], out[SG_FIELDS * GX * GY];
  static float f[GX * GY], fout[GX * GY];
  for (int i = 0; i < GX * GY; i++) {
    a[i] = (i * 37) % 101 - 50;
    f[i] = (float)((i * 13) % 7) * 0.25f;
  }
  cl_int err;
  cl_mem ma = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  cl_mem mf = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof f, f, &err);
  cl_mem mo = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  cl_mem mfo = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof fout, NULL, &err);
  cl_kernel k = clCreateKernel(p, "sg", &err);
  REQUIRE(k);
  clSetKernelArg(k, 0, sizeof ma, &ma);
  clSetKernelArg(k, 1, sizeof mf, &mf);
  clSetKernelArg(k, 2, sizeof mo, &mo);
  clSetKernelArg(k, 3, sizeof mfo, &mfo);
  /* Whole vectors, a row with a tail, narrow rows, and a partial last
   * group; with and without a barrier. */
  static const size_t shapes[][4] = {{192, 6, 64, 1}, {200, 6, 20, 3}, {200, 6, 8, 6},
                                     {200, 6, 48, 2}, {200, 1, 200, 1}, {37, 6, 37, 2}};
  for (int with_barrier = 0; with_barrier <= barriers; with_barrier++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      size_t global[2] = {shapes[s][0], shapes[s][1]}, local[2] = {shapes[s][2], shapes[s][3]};
      size_t max_sg = 0, count = 0;
      REQUIRE(clGetKernelSubGroupInfo(k, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                      sizeof local, local, sizeof max_sg, &max_sg,
                                      NULL) == CL_SUCCESS);
      CHECK_EQ_INT(clGetKernelSubGroupInfo(k, device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                                           sizeof local, local, sizeof count, &count, NULL),
                   CL_SUCCESS);
      /* 64 x 1 groups: whole vectors, of 4 to 16 lanes by the CPU. */
      if (!strcmp(what, "vector") && s == 0) CHECK(max_sg >= 4 && count == 64 / max_sg);
      clSetKernelArg(k, 4, sizeof with_barrier, &with_barrier);
      memset(out, 0xff, sizeof out);
      clEnqueueWriteBuffer(queue, mo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
      CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, global, local, 0, NULL, NULL),
                   CL_SUCCESS);
      clEnqueueReadBuffer(queue, mo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
      clEnqueueReadBuffer(queue, mfo, CL_TRUE, 0, sizeof fout, fout, 0, NULL, NULL);
      /* The records are laid out by global x + GX-wide rows only when the
       * range is GX wide: narrower ranges are checked as their own width. */
      int bad = check_sub_groups(a, f, out, fout, global[0], global[1], local[0], local[1], max_sg);
      if (bad)
        printf("  %s: %zu x %zu in groups of %zu x %zu%s: %d wrong (max sub-group size %zu)\n",
               what, global[0], global[1], local[0], local[1], with_barrier ? ", barrier" : "",
               bad, max_sg);
      CHECK_EQ_INT(bad, 0);
      CHECK_EQ_INT(out[SG_FIELDS * 0 + 15], (int)count);
    }
  clReleaseKernel(k);
  clReleaseMemObject(ma);
  clReleaseMemObject(mf);
  clReleaseMemObject(mo);
  clReleaseMemObject(mfo);
}

static void sub_groups(void) {
  char ext[4096] = "";
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
  /* The 3.0 feature and its extensions; not cl_khr_subgroups, which
   * requires independent forward progress. */
  CHECK(strstr(ext, "cl_khr_subgroup_ballot") != NULL && strstr(ext, "cl_khr_subgroups ") == NULL);
  cl_bool ifp = CL_TRUE;
  clGetDeviceInfo(device, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS, sizeof ifp, &ifp, NULL);
  CHECK_EQ_INT(ifp, CL_FALSE);
  cl_uint max_num = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof max_num, &max_num, NULL);
  CHECK(max_num > 0);
  cl_int err;
  /* The vector version, then the scalar one (sub-groups of one); a
   * kernel whose groups are loops over vectors and then the row's tail,
   * and one split at a barrier, whose groups run one way or the other. */
  static const char *const modes[] = {NULL, "0"};
  for (int run = 0; run < 4; run++) {
    int mode = run / 2, barriers = run % 2;
    if (modes[mode]) setenv("AQUILA_VECTORIZE", modes[mode], 1);
    cl_program p = clCreateProgramWithSource(context, 1, &sub_groups_source, NULL, &err);
    REQUIRE(p);
    err = clBuildProgram(p, 1, &device, barriers ? "-cl-std=CL3.0 -DWITH_BARRIER" : "-cl-std=CL3.0",
                         NULL, NULL);
    if (err) {
      char log[8192] = "";
      clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
      printf("%s\n", log);
    }
    REQUIRE(err == CL_SUCCESS);
    sub_groups_run(p, modes[mode] ? "scalar" : "vector", barriers);
    clReleaseProgram(p);
    unsetenv("AQUILA_VECTORIZE");
  }
  /* A required sub-group size: met (4, a vector on every x86-64 CPU), or
   * a build error that says why; cl_intel_subgroups' two-source shuffle
   * (declared by the program: clang's builtin declarations leave Intel's
   * out; SPIR-V modules call it by its mangled name). */
  const char *required =
      "int __attribute__((overloadable)) intel_sub_group_shuffle_down(int, int, uint);\n"
      "__attribute__((intel_reqd_sub_group_size(4)))\n"
      "kernel void four(global int *out) {\n"
      "  int i = get_global_id(0);\n"
      "  out[2 * i] = get_sub_group_size();\n"
      "  out[2 * i + 1] = intel_sub_group_shuffle_down(i, i + 100, 3u);\n"
      "}\n";
  cl_program p = clCreateProgramWithSource(context, 1, &required, NULL, &err);
  REQUIRE(p);
  REQUIRE(clBuildProgram(p, 1, &device, "-cl-std=CL3.0", NULL, NULL) == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "four", &err);
  REQUIRE(k);
  int out[2 * 64];
  cl_mem mo = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
  clSetKernelArg(k, 0, sizeof mo, &mo);
  size_t global = 64, local = 16, max_sg = 0;
  clGetKernelSubGroupInfo(k, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof local,
                          &local, sizeof max_sg, &max_sg, NULL);
  CHECK_EQ_INT(max_sg, 4);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  clEnqueueReadBuffer(queue, mo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  int bad = 0;
  for (int i = 0; i < 64; i++) {
    int lane = i % 4, from = lane + 3;
    bad += out[2 * i] != 4 ||
           out[2 * i + 1] != (from < 4 ? i - lane + from : i - lane + from - 4 + 100);
  }
  CHECK_EQ_INT(bad, 0);
  clReleaseMemObject(mo);
  clReleaseKernel(k);
  clReleaseProgram(p);
  const char *impossible = "__attribute__((intel_reqd_sub_group_size(32)))\n"
                           "kernel void wide(global int *out) { out[0] = get_sub_group_size(); }\n";
  p = clCreateProgramWithSource(context, 1, &impossible, NULL, &err);
  REQUIRE(p);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "-cl-std=CL3.0", NULL, NULL),
               CL_BUILD_PROGRAM_FAILURE);
  char log[2048] = "";
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
  CHECK(strstr(log, "intel_reqd_sub_group_size(32) cannot be met") != NULL);
  clReleaseProgram(p);
}

static void opencl_c_2_0_is_refused_with_a_reason(void) {
  const char *src = "__kernel void k(__global int *p) { p[0] = 1; }";
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  REQUIRE(p);
  err = clBuildProgram(p, 1, &device, "-cl-std=CL2.0", NULL, NULL);
  CHECK_EQ_INT(err, CL_INVALID_BUILD_OPTIONS);
  char log[1024] = "";
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
  CHECK(strstr(log, "CL2.0") != NULL);
  clReleaseProgram(p);
}

static void timers_and_missing_features(void) {
  cl_ulong host = 0, dev = 0, host2 = 0;
  CHECK_EQ_INT(clGetHostTimer(device, &host), CL_SUCCESS);
  CHECK_EQ_INT(clGetDeviceAndHostTimer(device, &dev, &host2), CL_SUCCESS);
  CHECK(host > 0 && host2 >= host && dev > 0);
  cl_int err;
  CHECK(clCreatePipe(context, 0, 4, 4, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
  CHECK_EQ_INT(clSetDefaultDeviceCommandQueue(context, device, queue), CL_INVALID_OPERATION);
}

int main(void) {
  api_setup();
  RUN(versions_and_queries);
  RUN(queues_samplers_buffers);
  RUN(context_destructors_run_newest_first);
  RUN(opencl_c_3_kernel_with_c11_atomics);
  RUN(partial_work_groups);
  RUN(generic_address_space);
  RUN(program_scope_variables);
  RUN(work_group_collectives);
  RUN(sub_groups);
  RUN(opencl_c_2_0_is_refused_with_a_reason);
  RUN(timers_and_missing_features);
  api_teardown();
  CHECK_EXIT();
}
