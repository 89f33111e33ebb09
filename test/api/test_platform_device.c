/* Platform and device queries through the loader: every 1.2 parameter, the
 * size protocol, and rejection of NULL and wrong-kind handles. */
#include <unistd.h>

#include "api.h"

static const cl_platform_info platform_params[] = {
    CL_PLATFORM_PROFILE, CL_PLATFORM_VERSION,    CL_PLATFORM_NAME,
    CL_PLATFORM_VENDOR,  CL_PLATFORM_EXTENSIONS,
};

static const cl_device_info device_params[] = {
    CL_DEVICE_TYPE,
    CL_DEVICE_VENDOR_ID,
    CL_DEVICE_MAX_COMPUTE_UNITS,
    CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
    CL_DEVICE_MAX_WORK_ITEM_SIZES,
    CL_DEVICE_MAX_WORK_GROUP_SIZE,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF,
    CL_DEVICE_MAX_CLOCK_FREQUENCY,
    CL_DEVICE_ADDRESS_BITS,
    CL_DEVICE_MAX_MEM_ALLOC_SIZE,
    CL_DEVICE_IMAGE_SUPPORT,
    CL_DEVICE_MAX_READ_IMAGE_ARGS,
    CL_DEVICE_MAX_WRITE_IMAGE_ARGS,
    CL_DEVICE_IMAGE2D_MAX_WIDTH,
    CL_DEVICE_IMAGE2D_MAX_HEIGHT,
    CL_DEVICE_IMAGE3D_MAX_WIDTH,
    CL_DEVICE_IMAGE3D_MAX_HEIGHT,
    CL_DEVICE_IMAGE3D_MAX_DEPTH,
    CL_DEVICE_IMAGE_MAX_BUFFER_SIZE,
    CL_DEVICE_IMAGE_MAX_ARRAY_SIZE,
    CL_DEVICE_MAX_SAMPLERS,
    CL_DEVICE_MAX_PARAMETER_SIZE,
    CL_DEVICE_MEM_BASE_ADDR_ALIGN,
    CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE,
    CL_DEVICE_SINGLE_FP_CONFIG,
    CL_DEVICE_DOUBLE_FP_CONFIG,
    CL_DEVICE_GLOBAL_MEM_CACHE_TYPE,
    CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE,
    CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
    CL_DEVICE_GLOBAL_MEM_SIZE,
    CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE,
    CL_DEVICE_MAX_CONSTANT_ARGS,
    CL_DEVICE_LOCAL_MEM_TYPE,
    CL_DEVICE_LOCAL_MEM_SIZE,
    CL_DEVICE_ERROR_CORRECTION_SUPPORT,
    CL_DEVICE_HOST_UNIFIED_MEMORY,
    CL_DEVICE_PROFILING_TIMER_RESOLUTION,
    CL_DEVICE_ENDIAN_LITTLE,
    CL_DEVICE_AVAILABLE,
    CL_DEVICE_COMPILER_AVAILABLE,
    CL_DEVICE_LINKER_AVAILABLE,
    CL_DEVICE_EXECUTION_CAPABILITIES,
    CL_DEVICE_QUEUE_PROPERTIES,
    CL_DEVICE_BUILT_IN_KERNELS,
    CL_DEVICE_PLATFORM,
    CL_DEVICE_NAME,
    CL_DEVICE_VENDOR,
    CL_DRIVER_VERSION,
    CL_DEVICE_PROFILE,
    CL_DEVICE_VERSION,
    CL_DEVICE_OPENCL_C_VERSION,
    CL_DEVICE_EXTENSIONS,
    CL_DEVICE_PRINTF_BUFFER_SIZE,
    CL_DEVICE_PREFERRED_INTEROP_USER_SYNC,
    CL_DEVICE_PARENT_DEVICE,
    CL_DEVICE_PARTITION_MAX_SUB_DEVICES,
    CL_DEVICE_PARTITION_PROPERTIES,
    CL_DEVICE_PARTITION_AFFINITY_DOMAIN,
    CL_DEVICE_PARTITION_TYPE,
    CL_DEVICE_REFERENCE_COUNT,
};

static void platform_ids(void) {
  cl_uint n = 0;
  CHECK_EQ_INT(clGetPlatformIDs(0, NULL, &n), CL_SUCCESS);
  CHECK(n >= 1);
  cl_platform_id p;
  CHECK_EQ_INT(clGetPlatformIDs(0, &p, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetPlatformIDs(1, NULL, NULL), CL_INVALID_VALUE);
}

static void platform_info_all(void) {
  for (size_t i = 0; i < sizeof platform_params / sizeof *platform_params; i++) {
    size_t size = 0;
    cl_int err = clGetPlatformInfo(platform, platform_params[i], 0, NULL, &size);
    CHECK_EQ_INT(err, CL_SUCCESS);
    REQUIRE(size > 0 && size < 4096);
    char buf[4096];
    size_t size2 = 0;
    memset(buf, 'x', sizeof buf);
    CHECK_EQ_INT(clGetPlatformInfo(platform, platform_params[i], size, buf, &size2), CL_SUCCESS);
    CHECK_EQ_INT(size2, size);
    CHECK_EQ_INT(strlen(buf) + 1, size);
    CHECK_EQ_INT(clGetPlatformInfo(platform, platform_params[i], size - 1, buf, NULL),
                 CL_INVALID_VALUE);
  }
  char s[256];
  clGetPlatformInfo(platform, CL_PLATFORM_PROFILE, sizeof s, s, NULL);
  CHECK(!strcmp(s, "FULL_PROFILE"));
  clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof s, s, NULL);
  CHECK(!strncmp(s, "OpenCL 3.0 ", 11));
  clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, sizeof s, s, NULL);
  CHECK(strstr(s, "cl_khr_icd") != NULL);
  CHECK_EQ_INT(clGetPlatformInfo(platform, 0x7777, sizeof s, s, NULL), CL_INVALID_VALUE);
}

static void platform_info_bad_handle(void) {
  char s[64];
  /* A device handle reaches the platform query through the same dispatch
   * table: it must be recognised as not a platform. */
  CHECK_EQ_INT(clGetPlatformInfo((cl_platform_id)device, CL_PLATFORM_NAME, sizeof s, s, NULL),
               CL_INVALID_PLATFORM);
  CHECK_EQ_INT(clGetPlatformInfo((cl_platform_id)context, CL_PLATFORM_NAME, sizeof s, s, NULL),
               CL_INVALID_PLATFORM);
  CHECK_EQ_INT(clUnloadPlatformCompiler((cl_platform_id)context), CL_INVALID_PLATFORM);
  CHECK_EQ_INT(clUnloadPlatformCompiler(platform), CL_SUCCESS);
}

static void device_ids(void) {
  cl_uint n = 0;
  cl_device_id d[4];
  CHECK_EQ_INT(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n), CL_SUCCESS);
  CHECK(n >= 1);
  CHECK_EQ_INT(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 4, d, &n), CL_SUCCESS);
  CHECK_EQ_INT(n, 1);
  CHECK(d[0] == device);
  CHECK_EQ_INT(clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 4, d, NULL), CL_SUCCESS);
  CHECK(d[0] == device);
  n = 99;
  CHECK_EQ_INT(clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 4, d, &n), CL_DEVICE_NOT_FOUND);
  CHECK_EQ_INT(n, 0);
  CHECK_EQ_INT(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ACCELERATOR, 0, NULL, &n),
               CL_DEVICE_NOT_FOUND);
  CHECK_EQ_INT(clGetDeviceIDs(platform, (cl_device_type)1 << 40, 4, d, &n), CL_INVALID_DEVICE_TYPE);
  /* Every bit set (an int -1 widened, as OpenCV passes it) means ALL, as
   * CL_DEVICE_TYPE_ALL's own bits are all there. */
  n = 0;
  CHECK_EQ_INT(clGetDeviceIDs(platform, (cl_device_type)(int)-1, 4, d, &n), CL_SUCCESS);
  CHECK(n >= 1 && d[0] == device);
  CHECK_EQ_INT(clGetDeviceIDs(platform, ~(cl_device_type)0 & ~CL_DEVICE_TYPE_ALL, 4, d, &n),
               CL_INVALID_DEVICE_TYPE);
  CHECK_EQ_INT(clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU | (cl_device_type)1 << 40, 4, d, &n),
               CL_INVALID_DEVICE_TYPE);
  CHECK_EQ_INT(clGetDeviceIDs(platform, 0, 4, d, &n), CL_INVALID_DEVICE_TYPE);
  CHECK_EQ_INT(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, d, &n), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, NULL, NULL), CL_INVALID_VALUE);
  /* Order: the platform is checked before the type and the values. */
  CHECK_EQ_INT(clGetDeviceIDs((cl_platform_id)device, 0, 0, d, NULL), CL_INVALID_PLATFORM);
  CHECK_EQ_INT(clGetDeviceIDs(platform, 0, 0, d, NULL), CL_INVALID_DEVICE_TYPE);
}

static void device_info_all(void) {
  for (size_t i = 0; i < sizeof device_params / sizeof *device_params; i++) {
    cl_device_info param = device_params[i];
    size_t size = 12345;
    cl_int err = clGetDeviceInfo(device, param, 0, NULL, &size);
    if (err != CL_SUCCESS || size > 8192) {
      printf("  param 0x%x: err %d size %zu\n", (unsigned)param, err, size);
      check_case_failed = 1;
      continue;
    }
    unsigned char buf[8192 + 1];
    memset(buf, 0xAB, sizeof buf);
    size_t size2 = 0;
    CHECK_EQ_INT(clGetDeviceInfo(device, param, size, buf, &size2), CL_SUCCESS);
    CHECK_EQ_INT(size2, size);
    CHECK_EQ_INT(buf[size], 0xAB); /* nothing written past the reported size */
    if (size > 0) {
      err = clGetDeviceInfo(device, param, size - 1, buf, NULL);
      if (err != CL_INVALID_VALUE) {
        printf("  param 0x%x: short buffer gave %d\n", (unsigned)param, err);
        check_case_failed = 1;
      }
    }
  }
  char buf[64];
  CHECK_EQ_INT(clGetDeviceInfo(device, 0x7777, sizeof buf, buf, NULL), CL_INVALID_VALUE);
}

static void device_info_values(void) {
  cl_uint units = 0, dims = 0, bits = 0, align = 0;
  size_t wg = 0, items[3] = {0};
  clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  const char *env = getenv("AQUILA_CPU_UNITS");
  long expect = env && *env ? atol(env) : sysconf(_SC_NPROCESSORS_ONLN);
  CHECK_EQ_INT(units, expect);
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof dims, &dims, NULL);
  CHECK_EQ_INT(dims, 3);
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  CHECK(wg >= 1);
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL);
  for (int i = 0; i < 3; i++)
    CHECK(items[i] >= 1 && items[i] <= wg);
  clGetDeviceInfo(device, CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits, NULL);
  CHECK_EQ_INT(bits, sizeof(void *) * 8);
  clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align, &align, NULL);
  CHECK(align >= 128 * 8 / 8 && (align & (align - 1)) == 0); /* bits, power of two */
  cl_ulong global = 0, alloc = 0, local = 0, cbuf = 0;
  clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL);
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL);
  clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
  clGetDeviceInfo(device, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, sizeof cbuf, &cbuf, NULL);
  CHECK(alloc >= 128ull << 20 || alloc >= global / 4);
  CHECK(local >= 32 * 1024);
  CHECK(cbuf >= 64 * 1024);
  size_t param = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_PARAMETER_SIZE, sizeof param, &param, NULL);
  CHECK(param >= 1024);
  cl_device_type type = 0;
  clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_DEVICE_TYPE_CPU);
  cl_platform_id p = NULL;
  clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof p, &p, NULL);
  CHECK(p == platform);
  cl_bool b = CL_TRUE;
  clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof b, &b, NULL);
  CHECK_EQ_INT(b, CL_TRUE);
  clGetDeviceInfo(device, CL_DEVICE_AVAILABLE, sizeof b, &b, NULL);
  CHECK_EQ_INT(b, CL_TRUE);
  cl_command_queue_properties qp = 0;
  clGetDeviceInfo(device, CL_DEVICE_QUEUE_PROPERTIES, sizeof qp, &qp, NULL);
  CHECK(qp & CL_QUEUE_PROFILING_ENABLE);
  char s[1024];
  clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof s, s, NULL);
  CHECK(!strncmp(s, "OpenCL 3.0 ", 11));
  clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_VERSION, sizeof s, s, NULL);
  CHECK(!strncmp(s, "OpenCL C 1.2 ", 13));
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof s, s, NULL);
  CHECK(strstr(s, "cl_khr_fp64") && strstr(s, "cl_khr_byte_addressable_store"));
  cl_device_fp_config fp = 0;
  clGetDeviceInfo(device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL);
  CHECK((fp & (CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN)) ==
        (CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN));
  cl_uint refs = 0;
  clGetDeviceInfo(device, CL_DEVICE_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  CHECK_EQ_INT(refs, 1);
  cl_device_id parent = device;
  clGetDeviceInfo(device, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL);
  CHECK(parent == NULL);
  CHECK_EQ_INT(clRetainDevice(device), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseDevice(device), CL_SUCCESS);
}

/* The driver version names the compiler build (major.minor.patch+8 hex
 * digits), so that applications' binary caches see a new compiler. */
static void driver_version_names_compiler(void) {
  char v[64] = "";
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DRIVER_VERSION, sizeof v, v, NULL), CL_SUCCESS);
  unsigned major = 0, minor = 0, patch = 0;
  char id[16] = "";
  CHECK_EQ_INT(sscanf(v, "%u.%u.%u+%15s", &major, &minor, &patch, id), 4);
  CHECK_EQ_INT(strlen(id), 8);
  CHECK(strspn(id, "0123456789abcdef") == 8);
}

static void device_bad_handles(void) {
  cl_uint v;
  CHECK_EQ_INT(clGetDeviceInfo(NULL, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof v, &v, NULL),
               CL_INVALID_DEVICE);
  CHECK_EQ_INT(
      clGetDeviceInfo((cl_device_id)context, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof v, &v, NULL),
      CL_INVALID_DEVICE);
  CHECK_EQ_INT(
      clGetDeviceInfo((cl_device_id)platform, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof v, &v, NULL),
      CL_INVALID_DEVICE);
  CHECK_EQ_INT(clRetainDevice((cl_device_id)queue), CL_INVALID_DEVICE);
  CHECK_EQ_INT(clReleaseDevice((cl_device_id)queue), CL_INVALID_DEVICE);
  /* A fake object that carries Aquila's dispatch table but is not one. */
  struct {
    void *dispatch;
    uint32_t kind;
    uint32_t refs;
    char pad[256];
  } fake;
  memset(&fake, 0x5A, sizeof fake);
  fake.dispatch = *(void **)device;
  CHECK_EQ_INT(
      clGetDeviceInfo((cl_device_id)&fake, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof v, &v, NULL),
      CL_INVALID_DEVICE);
  CHECK_EQ_INT(clRetainContext((cl_context)&fake), CL_INVALID_CONTEXT);
  CHECK_EQ_INT(clRetainCommandQueue((cl_command_queue)&fake), CL_INVALID_COMMAND_QUEUE);
  CHECK_EQ_INT(clRetainMemObject((cl_mem)&fake), CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clRetainProgram((cl_program)&fake), CL_INVALID_PROGRAM);
  CHECK_EQ_INT(clRetainKernel((cl_kernel)&fake), CL_INVALID_KERNEL);
  CHECK_EQ_INT(clRetainEvent((cl_event)&fake), CL_INVALID_EVENT);
  CHECK_EQ_INT(clGetPlatformInfo((cl_platform_id)&fake, CL_PLATFORM_NAME, 0, NULL, NULL),
               CL_INVALID_PLATFORM);
}

/* test_subdevices.c covers partitions; here, the one-unit-each split of
 * whatever this machine has (one unit cannot be split further). */
static void sub_devices(void) {
  cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_uint units = 0, n = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  cl_device_id *out = calloc(units, sizeof *out);
  REQUIRE(out);
  cl_int expect = units > 1 ? CL_SUCCESS : CL_DEVICE_PARTITION_FAILED;
  CHECK_EQ_INT(clCreateSubDevices(device, props, units, out, &n), expect);
  if (expect == CL_SUCCESS) {
    CHECK_EQ_INT(n, units);
    for (cl_uint i = 0; i < n; i++)
      CHECK_EQ_INT(clReleaseDevice(out[i]), CL_SUCCESS);
  }
  CHECK_EQ_INT(clCreateSubDevices((cl_device_id)context, props, units, out, &n), CL_INVALID_DEVICE);
  free(out);
}

static void extension_lookup(void) {
  CHECK(clGetExtensionFunctionAddressForPlatform(platform, "clIcdGetPlatformIDsKHR") != NULL);
  CHECK(clGetExtensionFunctionAddressForPlatform(platform, "clNoSuchFunctionAQUILA") == NULL);
}

int main(void) {
  api_setup();
  RUN(platform_ids);
  RUN(platform_info_all);
  RUN(platform_info_bad_handle);
  RUN(device_ids);
  RUN(device_info_all);
  RUN(device_info_values);
  RUN(driver_version_names_compiler);
  RUN(device_bad_handles);
  RUN(sub_devices);
  RUN(extension_lookup);
  api_teardown();
  CHECK_EXIT();
}
