/* Contexts and command queues: property validation, creation from a device
 * type, queue kinds, and exact reference counts. */
#include "api.h"

static cl_uint context_refs(cl_context c) {
  cl_uint n = 0;
  clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
  return n;
}

static cl_uint queue_refs(cl_command_queue q) {
  cl_uint n = 0;
  clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof n, &n, NULL);
  return n;
}

static void notify(const char *errinfo, const void *private_info, size_t cb, void *user_data) {}

static void context_create_properties(void) {
  cl_int err;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
  cl_context c = clCreateContext(props, 1, &device, notify, &err, &err);
  REQUIRE(c && err == CL_SUCCESS);
  size_t size = 0;
  CHECK_EQ_INT(clGetContextInfo(c, CL_CONTEXT_PROPERTIES, 0, NULL, &size), CL_SUCCESS);
  CHECK_EQ_INT(size, sizeof props);
  cl_context_properties got[3] = {0};
  CHECK_EQ_INT(clGetContextInfo(c, CL_CONTEXT_PROPERTIES, sizeof got, got, NULL), CL_SUCCESS);
  CHECK(!memcmp(got, props, sizeof props));
  CHECK_EQ_INT(clGetContextInfo(c, CL_CONTEXT_PROPERTIES, sizeof got - 1, got, NULL),
               CL_INVALID_VALUE);
  cl_uint nd = 0;
  CHECK_EQ_INT(clGetContextInfo(c, CL_CONTEXT_NUM_DEVICES, sizeof nd, &nd, NULL), CL_SUCCESS);
  CHECK_EQ_INT(nd, 1);
  cl_device_id d = NULL;
  CHECK_EQ_INT(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof d, &d, NULL), CL_SUCCESS);
  CHECK(d == device);
  CHECK_EQ_INT(context_refs(c), 1);
  CHECK_EQ_INT(clGetContextInfo(c, 0x7777, sizeof d, &d, NULL), CL_INVALID_VALUE);
  clReleaseContext(c);

  /* No properties: CL_CONTEXT_PROPERTIES answers with size 0. */
  size = 99;
  CHECK_EQ_INT(clGetContextInfo(context, CL_CONTEXT_PROPERTIES, 0, NULL, &size), CL_SUCCESS);
  CHECK_EQ_INT(size, 0);

  /* The same device twice counts once. */
  cl_device_id two[2] = {device, device};
  c = clCreateContext(NULL, 2, two, NULL, NULL, &err);
  REQUIRE(c);
  clGetContextInfo(c, CL_CONTEXT_NUM_DEVICES, sizeof nd, &nd, NULL);
  CHECK(nd == 1 || nd == 2);
  clReleaseContext(c);

  cl_context_properties sync[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                  CL_CONTEXT_INTEROP_USER_SYNC, CL_TRUE, 0};
  c = clCreateContext(sync, 1, &device, NULL, NULL, &err);
  CHECK(c && err == CL_SUCCESS);
  if (c) clReleaseContext(c);
}

static void context_create_errors(void) {
  cl_int err = 0;
  cl_context_properties bad_name[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0x7777,
                                      1, 0};
  CHECK(clCreateContext(bad_name, 1, &device, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROPERTY);
  cl_context_properties twice[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                   CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
  CHECK(clCreateContext(twice, 1, &device, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROPERTY);
  /* The property list is checked before the device list. */
  CHECK(clCreateContext(bad_name, 0, &device, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROPERTY);
  CHECK(clCreateContext(NULL, 0, &device, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateContext(NULL, 1, &device, NULL, &err, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  cl_device_id bad[2] = {device, (cl_device_id)context};
  CHECK(clCreateContext(NULL, 2, bad, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_DEVICE);
  /* NULL errcode_ret is allowed. */
  CHECK(clCreateContext(NULL, 2, bad, NULL, NULL, NULL) == NULL);
}

static void context_from_type(void) {
  cl_int err;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
  cl_context c = clCreateContextFromType(props, CL_DEVICE_TYPE_CPU, NULL, NULL, &err);
  REQUIRE(c && err == CL_SUCCESS);
  cl_device_id d = NULL;
  clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof d, &d, NULL);
  CHECK(d == device);
  clReleaseContext(c);
  c = clCreateContextFromType(props, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
  CHECK(c && err == CL_SUCCESS);
  if (c) clReleaseContext(c);
  c = clCreateContextFromType(props, CL_DEVICE_TYPE_DEFAULT, NULL, NULL, &err);
  CHECK(c && err == CL_SUCCESS);
  if (c) clReleaseContext(c);
  CHECK(clCreateContextFromType(props, CL_DEVICE_TYPE_GPU, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_DEVICE_NOT_FOUND);
  CHECK(clCreateContextFromType(props, (cl_device_type)1 << 40, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_DEVICE_TYPE);
  c = clCreateContextFromType(props, (cl_device_type)(int)-1, NULL, NULL, &err);
  CHECK(c && err == CL_SUCCESS);
  if (c) clReleaseContext(c);
  CHECK(clCreateContextFromType(props, 0, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_DEVICE_TYPE);
  CHECK(clCreateContextFromType(props, CL_DEVICE_TYPE_CPU, NULL, &err, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  cl_context_properties bad[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0x7777, 0,
                                 0};
  CHECK(clCreateContextFromType(bad, CL_DEVICE_TYPE_GPU, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROPERTY);
}

static void context_refcounts(void) {
  cl_int err;
  cl_context c = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  REQUIRE(c);
  CHECK_EQ_INT(context_refs(c), 1);
  CHECK_EQ_INT(clRetainContext(c), CL_SUCCESS);
  CHECK_EQ_INT(context_refs(c), 2);
  CHECK_EQ_INT(clReleaseContext(c), CL_SUCCESS);
  CHECK_EQ_INT(context_refs(c), 1);
  /* Objects created in the context keep it alive after the application's
   * last release. */
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 64, NULL, &err);
  REQUIRE(m);
  cl_command_queue q = clCreateCommandQueue(c, device, 0, &err);
  REQUIRE(q);
  CHECK_EQ_INT(clReleaseContext(c), CL_SUCCESS);
  int v = 42, r = 0;
  CHECK_EQ_INT(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof r, &r, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(r, 42);
  cl_context got = NULL;
  CHECK_EQ_INT(clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof got, &got, NULL), CL_SUCCESS);
  CHECK(got == c);
  clReleaseMemObject(m);
  clReleaseCommandQueue(q);
  CHECK_EQ_INT(clRetainContext((cl_context)queue), CL_INVALID_CONTEXT);
  CHECK_EQ_INT(clReleaseContext((cl_context)device), CL_INVALID_CONTEXT);
  CHECK_EQ_INT(clReleaseContext(NULL), CL_INVALID_CONTEXT);
}

static void queue_kinds(void) {
  const cl_command_queue_properties kinds[] = {
      0, CL_QUEUE_PROFILING_ENABLE, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
      CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  for (int i = 0; i < 4; i++) {
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(context, device, kinds[i], &err);
    REQUIRE(q && err == CL_SUCCESS);
    cl_command_queue_properties p = 99;
    CHECK_EQ_INT(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL), CL_SUCCESS);
    CHECK_EQ_INT(p, kinds[i]);
    cl_context c = NULL;
    cl_device_id d = NULL;
    clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL);
    clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL);
    CHECK(c == context && d == device);
    CHECK_EQ_INT(queue_refs(q), 1);
    CHECK_EQ_INT(clRetainCommandQueue(q), CL_SUCCESS);
    CHECK_EQ_INT(queue_refs(q), 2);
    CHECK_EQ_INT(clReleaseCommandQueue(q), CL_SUCCESS);
    CHECK_EQ_INT(queue_refs(q), 1);
    size_t size = 0;
    CHECK_EQ_INT(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, 0, NULL, &size), CL_SUCCESS);
    CHECK_EQ_INT(size, sizeof(cl_command_queue_properties));
    CHECK_EQ_INT(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, 1, &p, NULL), CL_INVALID_VALUE);
    CHECK_EQ_INT(clGetCommandQueueInfo(q, 0x7777, sizeof p, &p, NULL), CL_INVALID_VALUE);
    CHECK_EQ_INT(clFlush(q), CL_SUCCESS);
    CHECK_EQ_INT(clFinish(q), CL_SUCCESS);
    CHECK_EQ_INT(clReleaseCommandQueue(q), CL_SUCCESS);
  }
}

static void queue_errors(void) {
  cl_int err = 0;
  CHECK(clCreateCommandQueue((cl_context)device, device, 0, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_CONTEXT);
  CHECK(clCreateCommandQueue(context, (cl_device_id)context, 0, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_DEVICE);
  CHECK(clCreateCommandQueue(context, NULL, 0, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_DEVICE);
  CHECK(clCreateCommandQueue(context, device, (cl_command_queue_properties)1 << 20, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  /* Unlike a device type, queue properties have no "all" value: every bit
   * set is invalid (piglit checks 0xFFFFFFFF). */
  CHECK(clCreateCommandQueue(context, device, 0xFFFFFFFF, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK_EQ_INT(clFinish((cl_command_queue)context), CL_INVALID_COMMAND_QUEUE);
  CHECK_EQ_INT(clFlush((cl_command_queue)context), CL_INVALID_COMMAND_QUEUE);
  CHECK_EQ_INT(clRetainCommandQueue((cl_command_queue)context), CL_INVALID_COMMAND_QUEUE);
  CHECK_EQ_INT(clReleaseCommandQueue((cl_command_queue)device), CL_INVALID_COMMAND_QUEUE);
  cl_uint n;
  CHECK_EQ_INT(clGetCommandQueueInfo((cl_command_queue)context, CL_QUEUE_REFERENCE_COUNT, sizeof n,
                                     &n, NULL),
               CL_INVALID_COMMAND_QUEUE);
}

/* A queue released by the application while a command still waits in it
 * must live until that command has run. */
static void queue_release_with_pending_work(void) {
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(context, device, 0, &err);
  REQUIRE(q);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
  REQUIRE(m);
  cl_event gate = clCreateUserEvent(context, &err);
  REQUIRE(gate);
  static int value = 77;
  cl_event done;
  CHECK_EQ_INT(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, sizeof value, &value, 1, &gate, &done),
               CL_SUCCESS);
  CHECK_EQ_INT(clReleaseCommandQueue(q), CL_SUCCESS);
  CHECK_EQ_INT(event_status(done), CL_QUEUED);
  CHECK_EQ_INT(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &done), CL_SUCCESS);
  int r = 0;
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof r, &r, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(r, 77);
  clReleaseEvent(done);
  clReleaseEvent(gate);
  clReleaseMemObject(m);
}

int main(void) {
  api_setup();
  RUN(context_create_properties);
  RUN(context_create_errors);
  RUN(context_from_type);
  RUN(context_refcounts);
  RUN(queue_kinds);
  RUN(queue_errors);
  RUN(queue_release_with_pending_work);
  api_teardown();
  CHECK_EXIT();
}
