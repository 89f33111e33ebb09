/* Sub-devices through the ICD loader: the partition schemes and their
 * errors, the queries a sub-device answers itself, reference counts, and
 * contexts, queues, programs and kernels on sub-devices (and on
 * sub-devices of sub-devices). Runs with AQUILA_CPU_UNITS=4, so the device
 * has 4 compute units whatever the machine. */
#include "api.h"

enum { UNITS = 4 };

static cl_uint device_uint(cl_device_id d, cl_device_info param) {
  cl_uint v = 0;
  clGetDeviceInfo(d, param, sizeof v, &v, NULL);
  return v;
}

static cl_uint refcount(cl_device_id d) {
  return device_uint(d, CL_DEVICE_REFERENCE_COUNT);
}

static cl_device_id parent_of(cl_device_id d) {
  cl_device_id p = (cl_device_id)1;
  clGetDeviceInfo(d, CL_DEVICE_PARENT_DEVICE, sizeof p, &p, NULL);
  return p;
}

static void release_all(cl_device_id *subs, cl_uint n) {
  for (cl_uint i = 0; i < n; i++)
    CHECK_EQ_INT(clReleaseDevice(subs[i]), CL_SUCCESS);
}

static void test_root_info(void) {
  CHECK_EQ_INT(device_uint(device, CL_DEVICE_MAX_COMPUTE_UNITS), UNITS);
  CHECK_EQ_INT(device_uint(device, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), UNITS);
  CHECK(parent_of(device) == NULL);
  size_t size = 99;
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_PARTITION_TYPE, 0, NULL, &size), CL_SUCCESS);
  CHECK_EQ_INT(size, 0);
  cl_device_partition_property props[8] = {0};
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_PARTITION_PROPERTIES, sizeof props, props, &size),
               CL_SUCCESS);
  int equally = 0, counts = 0;
  for (size_t i = 0; i < size / sizeof props[0]; i++) {
    equally |= props[i] == CL_DEVICE_PARTITION_EQUALLY;
    counts |= props[i] == CL_DEVICE_PARTITION_BY_COUNTS;
  }
  CHECK(equally && counts);
  cl_device_affinity_domain domains = 0;
  CHECK_EQ_INT(
      clGetDeviceInfo(device, CL_DEVICE_PARTITION_AFFINITY_DOMAIN, sizeof domains, &domains, NULL),
      CL_SUCCESS);
  /* Root devices are not counted. */
  CHECK_EQ_INT(refcount(device), 1);
  CHECK_EQ_INT(clRetainDevice(device), CL_SUCCESS);
  CHECK_EQ_INT(refcount(device), 1);
  CHECK_EQ_INT(clReleaseDevice(device), CL_SUCCESS);
  CHECK_EQ_INT(clRetainDevice(NULL), CL_INVALID_DEVICE);
  CHECK_EQ_INT(clReleaseDevice(NULL), CL_INVALID_DEVICE);
  CHECK_EQ_INT(clRetainDevice((cl_device_id)context), CL_INVALID_DEVICE);
}

static cl_int partition(cl_device_id d, const cl_device_partition_property *props, cl_uint num,
                        cl_device_id *out, cl_uint *ret) {
  return clCreateSubDevices(d, props, num, out, ret);
}

static void test_errors(void) {
  cl_device_id out[8];
  cl_uint n = 77;
  const cl_device_partition_property eq2[] = {CL_DEVICE_PARTITION_EQUALLY, 2, 0};
  CHECK_EQ_INT(partition(NULL, eq2, 8, out, &n), CL_INVALID_DEVICE);
  CHECK_EQ_INT(partition((cl_device_id)context, eq2, 8, out, &n), CL_INVALID_DEVICE);
  CHECK_EQ_INT(partition(device, NULL, 8, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property unknown[] = {0x4242, 1, 0};
  CHECK_EQ_INT(partition(device, unknown, 8, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property empty[] = {0};
  CHECK_EQ_INT(partition(device, empty, 8, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property eq0[] = {CL_DEVICE_PARTITION_EQUALLY, 0, 0};
  CHECK_EQ_INT(partition(device, eq0, 8, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property eqneg[] = {CL_DEVICE_PARTITION_EQUALLY, -2, 0};
  CHECK_EQ_INT(partition(device, eqneg, 8, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property two[] = {CL_DEVICE_PARTITION_EQUALLY, 2,
                                              CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  CHECK_EQ_INT(partition(device, two, 8, out, &n), CL_INVALID_VALUE);
  /* More units per sub-device than the device has (as the CTS expects), and
   * one sub-device holding every unit, which is no partition. */
  const cl_device_partition_property eq5[] = {CL_DEVICE_PARTITION_EQUALLY, UNITS + 1, 0};
  CHECK_EQ_INT(partition(device, eq5, 8, out, &n), CL_INVALID_DEVICE_PARTITION_COUNT);
  const cl_device_partition_property eq_all[] = {CL_DEVICE_PARTITION_EQUALLY, UNITS, 0};
  CHECK_EQ_INT(partition(device, eq_all, 8, out, &n), CL_DEVICE_PARTITION_FAILED);
  /* Too small an out_devices array. */
  const cl_device_partition_property eq1[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  CHECK_EQ_INT(partition(device, eq1, UNITS - 1, out, &n), CL_INVALID_VALUE);
  CHECK_EQ_INT(partition(device, eq1, 0, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property c_none[] = {CL_DEVICE_PARTITION_BY_COUNTS,
                                                 CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  CHECK_EQ_INT(partition(device, c_none, 8, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property c_sum[] = {CL_DEVICE_PARTITION_BY_COUNTS, 3, 2,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  CHECK_EQ_INT(partition(device, c_sum, 8, out, &n), CL_INVALID_DEVICE_PARTITION_COUNT);
  const cl_device_partition_property c_neg[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1, -1,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  CHECK_EQ_INT(partition(device, c_neg, 8, out, &n), CL_INVALID_DEVICE_PARTITION_COUNT);
  const cl_device_partition_property c_zero[] = {CL_DEVICE_PARTITION_BY_COUNTS,          1, 0, 1,
                                                 CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  CHECK_EQ_INT(partition(device, c_zero, 8, out, &n), CL_INVALID_VALUE); /* 0 ends the list */
  const cl_device_partition_property c_many[] = {
      CL_DEVICE_PARTITION_BY_COUNTS, 1, 1, 1, 1, 1, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  CHECK_EQ_INT(partition(device, c_many, 8, NULL, &n), CL_INVALID_DEVICE_PARTITION_COUNT);
  CHECK_EQ_INT(partition(device, c_many, 2, out, &n), CL_INVALID_VALUE); /* 5 > 2 entries */
  const cl_device_partition_property c_trail[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1,
                                                  CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 5, 0};
  CHECK_EQ_INT(partition(device, c_trail, 8, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property a_zero[] = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0, 0};
  CHECK_EQ_INT(partition(device, a_zero, 8, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property a_two[] = {
      CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
      CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE | CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE, 0};
  CHECK_EQ_INT(partition(device, a_two, 8, out, &n), CL_INVALID_VALUE);
  const cl_device_partition_property a_bad[] = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 1 << 20, 0};
  CHECK_EQ_INT(partition(device, a_bad, 8, out, &n), CL_INVALID_VALUE);
  CHECK_EQ_INT(n, 77); /* untouched on error */
}

static void test_equally(void) {
  const cl_device_partition_property eq2[] = {CL_DEVICE_PARTITION_EQUALLY, 2, 0};
  cl_uint n = 0;
  CHECK_EQ_INT(partition(device, eq2, 0, NULL, &n), CL_SUCCESS); /* count only */
  CHECK_EQ_INT(n, 2);
  CHECK_EQ_INT(partition(device, eq2, 0, NULL, NULL), CL_SUCCESS);
  cl_device_id subs[4] = {0};
  n = 0;
  REQUIRE(partition(device, eq2, 4, subs, &n) == CL_SUCCESS);
  CHECK_EQ_INT(n, 2);
  CHECK(subs[0] && subs[1] && subs[0] != subs[1] && subs[0] != device && !subs[2]);
  for (int i = 0; i < 2; i++) {
    CHECK_EQ_INT(device_uint(subs[i], CL_DEVICE_MAX_COMPUTE_UNITS), 2);
    CHECK_EQ_INT(device_uint(subs[i], CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 2);
    CHECK(parent_of(subs[i]) == device);
    CHECK_EQ_INT(refcount(subs[i]), 1);
    cl_device_partition_property type[4] = {0};
    size_t size = 0;
    CHECK_EQ_INT(clGetDeviceInfo(subs[i], CL_DEVICE_PARTITION_TYPE, sizeof type, type, &size),
                 CL_SUCCESS);
    CHECK_EQ_INT(size, 3 * sizeof type[0]);
    CHECK(type[0] == CL_DEVICE_PARTITION_EQUALLY && type[1] == 2 && type[2] == 0);
    CHECK_EQ_INT(clGetDeviceInfo(subs[i], CL_DEVICE_PARTITION_TYPE, 1, type, NULL),
                 CL_INVALID_VALUE);
    /* Everything else is the root's answer. */
    char a[256] = "", b[256] = "";
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof a, a, NULL);
    clGetDeviceInfo(subs[i], CL_DEVICE_NAME, sizeof b, b, NULL);
    CHECK(strcmp(a, b) == 0);
    cl_device_type type_bits = 0;
    CHECK_EQ_INT(clGetDeviceInfo(subs[i], CL_DEVICE_TYPE, sizeof type_bits, &type_bits, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(type_bits, CL_DEVICE_TYPE_CPU);
    size_t wg = 0;
    CHECK_EQ_INT(clGetDeviceInfo(subs[i], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
                 CL_SUCCESS);
    CHECK(wg > 0);
    cl_platform_id plat = NULL;
    clGetDeviceInfo(subs[i], CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL);
    CHECK(plat == platform);
    CHECK_EQ_INT(clGetDeviceInfo(subs[i], 0x7fff, sizeof wg, &wg, NULL), CL_INVALID_VALUE);
  }
  release_all(subs, 2);
  /* 3 units each: one sub-device, the fourth unit unused. */
  const cl_device_partition_property eq3[] = {CL_DEVICE_PARTITION_EQUALLY, 3, 0};
  REQUIRE(partition(device, eq3, 4, subs, &n) == CL_SUCCESS);
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(device_uint(subs[0], CL_DEVICE_MAX_COMPUTE_UNITS), 3);
  release_all(subs, 1);
  /* Sub-devices are not listed by clGetDeviceIDs. */
  cl_uint total = 0;
  CHECK_EQ_INT(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &total), CL_SUCCESS);
  CHECK_EQ_INT(total, 1);
}

static void test_by_counts(void) {
  const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_BY_COUNTS, 3, 1,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  cl_device_id subs[2] = {0};
  cl_uint n = 0;
  CHECK_EQ_INT(partition(device, props, 0, NULL, &n), CL_SUCCESS);
  CHECK_EQ_INT(n, 2);
  REQUIRE(partition(device, props, 2, subs, NULL) == CL_SUCCESS);
  CHECK_EQ_INT(device_uint(subs[0], CL_DEVICE_MAX_COMPUTE_UNITS), 3);
  CHECK_EQ_INT(device_uint(subs[1], CL_DEVICE_MAX_COMPUTE_UNITS), 1);
  cl_device_partition_property type[8] = {0};
  size_t size = 0;
  CHECK_EQ_INT(clGetDeviceInfo(subs[1], CL_DEVICE_PARTITION_TYPE, sizeof type, type, &size),
               CL_SUCCESS);
  CHECK_EQ_INT(size, sizeof props);
  CHECK(memcmp(type, props, sizeof props) == 0);
  /* One unit cannot be split; it lists no scheme. */
  const cl_device_partition_property eq1[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_device_id out[2];
  CHECK_EQ_INT(partition(subs[1], eq1, 2, out, &n), CL_DEVICE_PARTITION_FAILED);
  cl_device_partition_property listed[4] = {1, 1, 1, 1};
  CHECK_EQ_INT(
      clGetDeviceInfo(subs[1], CL_DEVICE_PARTITION_PROPERTIES, sizeof listed, listed, &size),
      CL_SUCCESS);
  CHECK_EQ_INT(size, sizeof listed[0]);
  CHECK_EQ_INT(listed[0], 0);
  release_all(subs, 2);
}

static void test_affinity(void) {
  cl_device_affinity_domain supported = 0;
  clGetDeviceInfo(device, CL_DEVICE_PARTITION_AFFINITY_DOMAIN, sizeof supported, &supported, NULL);
  const cl_device_affinity_domain all[] = {
      CL_DEVICE_AFFINITY_DOMAIN_NUMA,     CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE,
      CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE, CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE,
      CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE, CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
    const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                                                  (cl_device_partition_property)all[k], 0};
    cl_device_id subs[UNITS];
    cl_uint n = 0;
    cl_int err = partition(device, props, UNITS, subs, &n);
    if (!(supported & all[k])) {
      CHECK_EQ_INT(err, CL_INVALID_VALUE);
      continue;
    }
    /* Depends on the machine: a domain with one instance cannot split. */
    CHECK(err == CL_SUCCESS || err == CL_DEVICE_PARTITION_FAILED);
    if (err != CL_SUCCESS) continue;
    CHECK(n >= 2 && n <= UNITS);
    cl_uint units = 0;
    for (cl_uint i = 0; i < n; i++) {
      units += device_uint(subs[i], CL_DEVICE_MAX_COMPUTE_UNITS);
      cl_device_partition_property type[3] = {0};
      clGetDeviceInfo(subs[i], CL_DEVICE_PARTITION_TYPE, sizeof type, type, NULL);
      CHECK(type[0] == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN && type[2] == 0);
      /* NEXT_PARTITIONABLE reports the domain it chose. */
      if (all[k] == CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE)
        CHECK(type[1] != (cl_device_partition_property)all[k] && (type[1] & supported) &&
              !(type[1] & (type[1] - 1)));
      else
        CHECK(type[1] == (cl_device_partition_property)all[k]);
    }
    CHECK_EQ_INT(units, UNITS);
    release_all(subs, n);
  }
  if (supported) CHECK(supported & CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE);
}

static void test_refcounts(void) {
  const cl_device_partition_property eq2[] = {CL_DEVICE_PARTITION_EQUALLY, 2, 0};
  cl_device_id subs[2];
  REQUIRE(partition(device, eq2, 2, subs, NULL) == CL_SUCCESS);
  CHECK_EQ_INT(clRetainDevice(subs[0]), CL_SUCCESS);
  CHECK_EQ_INT(refcount(subs[0]), 2);
  CHECK_EQ_INT(clReleaseDevice(subs[0]), CL_SUCCESS);
  CHECK_EQ_INT(refcount(subs[0]), 1);
  /* A context keeps its sub-device alive after the application's release. */
  cl_int err;
  cl_context c = clCreateContext(NULL, 1, &subs[0], NULL, NULL, &err);
  REQUIRE(c);
  CHECK_EQ_INT(clReleaseDevice(subs[0]), CL_SUCCESS);
  cl_device_id listed = NULL;
  CHECK_EQ_INT(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof listed, &listed, NULL), CL_SUCCESS);
  CHECK(listed == subs[0]);
  CHECK_EQ_INT(device_uint(listed, CL_DEVICE_MAX_COMPUTE_UNITS), 2);
  CHECK(parent_of(listed) == device);
  CHECK_EQ_INT(clReleaseContext(c), CL_SUCCESS);
  /* Sub-devices of a sub-device keep it alive too. */
  const cl_device_partition_property eq1[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_device_id grand[2];
  REQUIRE(partition(subs[1], eq1, 2, grand, NULL) == CL_SUCCESS);
  CHECK_EQ_INT(refcount(subs[1]), 3); /* one reference per child */
  CHECK_EQ_INT(clReleaseDevice(subs[1]), CL_SUCCESS);
  CHECK(parent_of(grand[0]) == subs[1]);
  CHECK(parent_of(subs[1]) == device);
  release_all(grand, 2);
}

static const char *src = "__kernel void scale(__global const int *in, __global int *out, int k) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  out[i] = in[i] * k + (int)get_group_id(0) % 3;\n"
                         "}\n";

/* Builds and runs scale on queue q of context c for device d; checks it. */
static void run_scale(cl_context c, cl_device_id d, cl_command_queue q, cl_program p, int k) {
  enum { N = 1 << 16 };
  cl_int err;
  cl_kernel kern = clCreateKernel(p, "scale", &err);
  REQUIRE(kern);
  size_t wg = 0;
  CHECK_EQ_INT(clGetKernelWorkGroupInfo(kern, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
               CL_SUCCESS);
  CHECK(wg > 0);
  int *in = malloc(N * sizeof(int)), *out = malloc(N * sizeof(int));
  REQUIRE(in && out);
  for (int i = 0; i < N; i++)
    in[i] = i;
  cl_mem bin =
      clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof(int), in, &err);
  cl_mem bout = clCreateBuffer(c, CL_MEM_WRITE_ONLY, N * sizeof(int), NULL, &err);
  REQUIRE(bin && bout);
  clSetKernelArg(kern, 0, sizeof bin, &bin);
  clSetKernelArg(kern, 1, sizeof bout, &bout);
  clSetKernelArg(kern, 2, sizeof k, &k);
  size_t global = N, local = 64;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, kern, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(q, bout, CL_TRUE, 0, N * sizeof(int), out, 0, NULL, NULL),
               CL_SUCCESS);
  int wrong = 0;
  for (int i = 0; i < N; i++)
    wrong += out[i] != i * k + (i / 64) % 3;
  CHECK_EQ_INT(wrong, 0);
  clReleaseMemObject(bin);
  clReleaseMemObject(bout);
  clReleaseKernel(kern);
  free(in);
  free(out);
}

static cl_program build_for(cl_context c, cl_uint n, const cl_device_id *devs) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
  if (!p) return NULL;
  err = clBuildProgram(p, n, devs, NULL, NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(p, devs[0], CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    printf("  build failed (%d): %s\n", err, log);
    clReleaseProgram(p);
    return NULL;
  }
  return p;
}

/* One context and queue per sub-device, each running a kernel. */
static void test_context_per_sub_device(void) {
  const cl_device_partition_property eq2[] = {CL_DEVICE_PARTITION_EQUALLY, 2, 0};
  cl_device_id subs[2];
  REQUIRE(partition(device, eq2, 2, subs, NULL) == CL_SUCCESS);
  for (int i = 0; i < 2; i++) {
    cl_int err;
    cl_context c = clCreateContext(NULL, 1, &subs[i], NULL, NULL, &err);
    REQUIRE(c);
    cl_command_queue q = clCreateCommandQueue(c, subs[i], 0, &err);
    REQUIRE(q);
    cl_device_id qd = NULL;
    clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL);
    CHECK(qd == subs[i]);
    /* The root device is not in this context. */
    CHECK(clCreateCommandQueue(c, device, 0, &err) == NULL);
    CHECK_EQ_INT(err, CL_INVALID_DEVICE);
    cl_program p = build_for(c, 1, &subs[i]);
    REQUIRE(p);
    cl_build_status status = CL_BUILD_NONE;
    clGetProgramBuildInfo(p, subs[i], CL_PROGRAM_BUILD_STATUS, sizeof status, &status, NULL);
    CHECK_EQ_INT(status, CL_BUILD_SUCCESS);
    run_scale(c, subs[i], q, p, 3 + i);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(c);
  }
  release_all(subs, 2);
}

/* One context with the root and two nested sub-devices; a program built for
 * all of them; queues on each run at the same time. */
static void test_shared_context(void) {
  const cl_device_partition_property eq2[] = {CL_DEVICE_PARTITION_EQUALLY, 2, 0};
  const cl_device_partition_property eq1[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_device_id subs[2], grand[2];
  REQUIRE(partition(device, eq2, 2, subs, NULL) == CL_SUCCESS);
  REQUIRE(partition(subs[0], eq1, 2, grand, NULL) == CL_SUCCESS);
  CHECK_EQ_INT(device_uint(grand[1], CL_DEVICE_MAX_COMPUTE_UNITS), 1);
  cl_device_id devs[4] = {device, subs[1], grand[0], grand[1]};
  cl_int err;
  cl_context c = clCreateContext(NULL, 4, devs, NULL, NULL, &err);
  REQUIRE(c);
  cl_program p = build_for(c, 0, NULL);
  if (!p) p = build_for(c, 4, devs);
  REQUIRE(p);
  cl_command_queue qs[4];
  for (int i = 0; i < 4; i++) {
    qs[i] = clCreateCommandQueue(c, devs[i], 0, &err);
    REQUIRE(qs[i]);
  }
  for (int i = 0; i < 4; i++)
    run_scale(c, devs[i], qs[i], p, 7 + i);
  for (int i = 0; i < 4; i++)
    clReleaseCommandQueue(qs[i]);
  clReleaseProgram(p);
  clReleaseContext(c);
  release_all(grand, 2);
  release_all(subs, 2);
}

/* The cl_ext_device_fission entry point is not supported. */
static void test_fission_ext(void) {
  typedef cl_int (*create_ext_fn)(cl_device_id, const cl_ulong *, cl_uint, cl_device_id *,
                                  cl_uint *);
  create_ext_fn fn =
      (create_ext_fn)clGetExtensionFunctionAddressForPlatform(platform, "clCreateSubDevicesEXT");
  if (fn) {
    const cl_ulong props[] = {0x4050 /* CL_DEVICE_PARTITION_EQUALLY_EXT */, 1, 0};
    cl_device_id out[UNITS];
    cl_uint n;
    CHECK_EQ_INT(fn(device, props, UNITS, out, &n), CL_INVALID_OPERATION);
  }
}

int main(void) {
  /* Before the first OpenCL call: the agent then has 4 compute units. */
  setenv("AQUILA_CPU_UNITS", "4", 1);
  api_setup();
  RUN(test_root_info);
  RUN(test_errors);
  RUN(test_equally);
  RUN(test_by_counts);
  RUN(test_affinity);
  RUN(test_refcounts);
  RUN(test_context_per_sub_device);
  RUN(test_shared_context);
  RUN(test_fission_ext);
  api_teardown();
  CHECK_EXIT();
}
