/* The dispatch slots of OpenCL 2.0 and later, reached through the loader
 * (which jumps through them unchecked): the 2.0 ways of creating queues,
 * samplers and buffers work on the 1.2 device, the host timer works, and
 * features a 1.2 device lacks give errors instead of a jump to NULL. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static cl_platform_id platform;
static cl_device_id device;
static cl_context context;

static void queues_samplers_buffers(void) {
  cl_int err;
  cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(context, device, qp, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(q);
  cl_command_queue_properties got = 0;
  clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof got, &got, NULL);
  CHECK_EQ_INT(got, CL_QUEUE_PROFILING_ENABLE);
  cl_queue_properties device_queue[] = {CL_QUEUE_SIZE, 1024, 0};
  CHECK(clCreateCommandQueueWithProperties(context, device, device_queue, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  cl_sampler_properties sp[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE, CL_SAMPLER_FILTER_MODE,
                                CL_FILTER_LINEAR, 0};
  cl_sampler s = clCreateSamplerWithProperties(context, sp, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_filter_mode filter = 0;
  if (s) clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof filter, &filter, NULL);
  CHECK_EQ_INT(filter, CL_FILTER_LINEAR);
  cl_mem b = clCreateBufferWithProperties(context, NULL, CL_MEM_READ_WRITE, 64, NULL, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  int value = 5, back = 0;
  CHECK_EQ_INT(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, sizeof value, &value, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(back, 5);
  if (s) clReleaseSampler(s);
  clReleaseMemObject(b);
  clReleaseCommandQueue(q);
}

static void timers_and_missing_features(void) {
  cl_ulong host = 0, dev = 0, host2 = 0;
  CHECK_EQ_INT(clGetHostTimer(device, &host), CL_SUCCESS);
  CHECK_EQ_INT(clGetDeviceAndHostTimer(device, &dev, &host2), CL_SUCCESS);
  CHECK(host > 0 && host2 >= host && dev > 0);
  CHECK(clSVMAlloc(context, CL_MEM_READ_WRITE, 64, 0) == NULL);
  clSVMFree(context, NULL);
  cl_int err;
  const char il[4] = {0};
  CHECK(clCreateProgramWithIL(context, il, sizeof il, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
  CHECK(clCreatePipe(context, 0, 4, 4, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
}

int main(void) {
  cl_platform_id ps[16];
  cl_uint n = 0;
  clGetPlatformIDs(16, ps, &n);
  for (cl_uint i = 0; i < n && i < 16; i++) {
    char name[64] = "";
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (!strcmp(name, "Aquila")) platform = ps[i];
  }
  cl_int err = CL_INVALID_PLATFORM;
  if (!platform || clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &device, NULL) != CL_SUCCESS ||
      !(context = clCreateContext(NULL, 1, &device, NULL, NULL, &err))) {
    printf("not ok setup: no Aquila device (%d)\n", err);
    return 1;
  }
  RUN(queues_samplers_buffers);
  RUN(timers_and_missing_features);
  clReleaseContext(context);
  CHECK_EXIT();
}
