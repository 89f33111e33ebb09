/* Events: user events gating work, error propagation, callbacks, markers
 * and barriers, cross-queue wait lists, profiling, and long chains. */
#include <stdatomic.h>
#include <pthread.h>
#include <time.h>

#include "api.h"

static const char *inc_src = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n";
static cl_kernel inc;

static cl_uint context_refs(void) {
  cl_uint n = 0;
  clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
  return n;
}

static void sleep_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

static void user_event_basics(void) {
  cl_int err;
  cl_event u = clCreateUserEvent(context, &err);
  REQUIRE(u && err == CL_SUCCESS);
  CHECK_EQ_INT(event_status(u), CL_SUBMITTED);
  cl_command_type t = 0;
  cl_command_queue q = queue;
  cl_context c = NULL;
  cl_uint refs = 0;
  CHECK_EQ_INT(clGetEventInfo(u, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
  CHECK_EQ_INT(t, CL_COMMAND_USER);
  CHECK_EQ_INT(clGetEventInfo(u, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL), CL_SUCCESS);
  CHECK(q == NULL);
  CHECK_EQ_INT(clGetEventInfo(u, CL_EVENT_CONTEXT, sizeof c, &c, NULL), CL_SUCCESS);
  CHECK(c == context);
  CHECK_EQ_INT(clGetEventInfo(u, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
  CHECK_EQ_INT(refs, 1);
  clRetainEvent(u);
  clGetEventInfo(u, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  CHECK_EQ_INT(refs, 2);
  clReleaseEvent(u);
  CHECK_EQ_INT(clGetEventInfo(u, 0x7777, sizeof refs, &refs, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetEventInfo(u, CL_EVENT_REFERENCE_COUNT, 1, &refs, NULL), CL_INVALID_VALUE);
  cl_ulong ts;
  CHECK_EQ_INT(clGetEventProfilingInfo(u, CL_PROFILING_COMMAND_START, sizeof ts, &ts, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
  CHECK_EQ_INT(clSetUserEventStatus(u, 1), CL_INVALID_VALUE);
  CHECK_EQ_INT(clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  CHECK_EQ_INT(clSetUserEventStatus(u, CL_COMPLETE), CL_INVALID_OPERATION);
  CHECK_EQ_INT(event_status(u), CL_COMPLETE);
  CHECK_EQ_INT(clWaitForEvents(1, &u), CL_SUCCESS);
  clReleaseEvent(u);
  CHECK(clCreateUserEvent((cl_context)queue, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_CONTEXT);
  cl_event marker;
  CHECK_EQ_INT(clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker), CL_SUCCESS);
  CHECK_EQ_INT(clSetUserEventStatus(marker, CL_COMPLETE), CL_INVALID_EVENT);
  clWaitForEvents(1, &marker);
  clReleaseEvent(marker);
  CHECK_EQ_INT(clSetUserEventStatus((cl_event)context, CL_COMPLETE), CL_INVALID_EVENT);
  CHECK_EQ_INT(clReleaseEvent((cl_event)context), CL_INVALID_EVENT);
}

static void gate_in_order(void) {
  cl_int err;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
  REQUIRE(m);
  int zero = 0;
  clEnqueueFillBuffer(queue, m, &zero, sizeof zero, 0, 64 * sizeof(int), 0, NULL, NULL);
  cl_event u = clCreateUserEvent(context, &err);
  cl_event k, r;
  int out[64];
  size_t g = 64;
  clSetKernelArg(inc, 0, sizeof m, &m);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, inc, 1, NULL, &g, NULL, 1, &u, &k), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_FALSE, 0, sizeof out, out, 0, NULL, &r),
               CL_SUCCESS);
  sleep_ms(30);
  CHECK_EQ_INT(event_status(k), CL_QUEUED);
  CHECK_EQ_INT(event_status(r), CL_QUEUED);
  CHECK_EQ_INT(clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &r), CL_SUCCESS);
  CHECK_EQ_INT(event_status(k), CL_COMPLETE);
  for (int i = 0; i < 64; i++)
    CHECK_EQ_INT(out[i], 1);
  clReleaseEvent(u);
  clReleaseEvent(k);
  clReleaseEvent(r);
  clReleaseMemObject(m);
}

static void gate_out_of_order(void) {
  cl_int err;
  cl_command_queue q =
      clCreateCommandQueue(context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  REQUIRE(q);
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
  REQUIRE(a && b);
  int zero = 0;
  clEnqueueFillBuffer(queue, a, &zero, sizeof zero, 0, 64 * sizeof(int), 0, NULL, NULL);
  clEnqueueFillBuffer(queue, b, &zero, sizeof zero, 0, 64 * sizeof(int), 0, NULL, NULL);
  clFinish(queue);
  cl_event u = clCreateUserEvent(context, &err);
  cl_event ka, kb;
  size_t g = 64;
  clSetKernelArg(inc, 0, sizeof a, &a);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, inc, 1, NULL, &g, NULL, 1, &u, &ka), CL_SUCCESS);
  clSetKernelArg(inc, 0, sizeof b, &b);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, inc, 1, NULL, &g, NULL, 0, NULL, &kb), CL_SUCCESS);
  /* The ungated command runs although it came later. */
  CHECK_EQ_INT(clWaitForEvents(1, &kb), CL_SUCCESS);
  CHECK_EQ_INT(event_status(ka), CL_QUEUED);
  int v = 0;
  clEnqueueReadBuffer(queue, a, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL);
  CHECK_EQ_INT(v, 0);
  clSetUserEventStatus(u, CL_COMPLETE);
  CHECK_EQ_INT(clWaitForEvents(1, &ka), CL_SUCCESS);
  clEnqueueReadBuffer(queue, a, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL);
  CHECK_EQ_INT(v, 1);
  clReleaseEvent(u);
  clReleaseEvent(ka);
  clReleaseEvent(kb);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseCommandQueue(q);
}

static void user_event_error(void) {
  cl_int err;
  cl_command_queue q =
      clCreateCommandQueue(context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  REQUIRE(q);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  REQUIRE(m);
  cl_event u = clCreateUserEvent(context, &err);
  static int data[16];
  int before = 0x77;
  clEnqueueFillBuffer(queue, m, &before, sizeof before, 0, 64, 0, NULL, NULL);
  clFinish(queue);
  cl_event w, marker, k;
  data[0] = 1234;
  CHECK_EQ_INT(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, 64, data, 1, &u, &w), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueMarkerWithWaitList(q, 1, &w, &marker), CL_SUCCESS);
  size_t g = 16;
  clSetKernelArg(inc, 0, sizeof m, &m);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, inc, 1, NULL, &g, NULL, 1, &marker, &k), CL_SUCCESS);
  CHECK_EQ_INT(clSetUserEventStatus(u, -1234), CL_SUCCESS);
  CHECK_EQ_INT(event_status(u), -1234);
  CHECK_EQ_INT(clWaitForEvents(1, &w), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  CHECK_EQ_INT(clWaitForEvents(1, &k), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  CHECK(event_status(w) < 0);
  CHECK(event_status(marker) < 0);
  CHECK(event_status(k) < 0);
  /* Neither the write nor the kernel ran. */
  int v = 0;
  clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL);
  CHECK_EQ_INT(v, 0x77);
  /* A blocking call whose wait list failed says so. */
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof v, &v, 1, &w, NULL),
               CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  clFinish(queue);
  clFinish(q);
  clReleaseEvent(u);
  clReleaseEvent(w);
  clReleaseEvent(marker);
  clReleaseEvent(k);
  clReleaseMemObject(m);
  clReleaseCommandQueue(q);
}

struct cb_log {
  pthread_mutex_t lock;
  int calls[3];
  int order[8];
  int n;
  cl_int status_seen[3];
};

static void CL_CALLBACK cb_fn(cl_event e, cl_int status, void *data) {
  struct cb_log *log = data;
  pthread_mutex_lock(&log->lock);
  int idx = status == CL_SUBMITTED ? 0 : status == CL_RUNNING ? 1 : 2;
  log->calls[idx]++;
  log->status_seen[idx] = status;
  if (log->n < 8) log->order[log->n] = idx;
  log->n++;
  pthread_mutex_unlock(&log->lock);
}

static void callbacks(void) {
  cl_int err;
  struct cb_log log = {PTHREAD_MUTEX_INITIALIZER};
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
  REQUIRE(m);
  cl_event u = clCreateUserEvent(context, &err);
  cl_event k;
  size_t g = 64;
  clSetKernelArg(inc, 0, sizeof m, &m);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, inc, 1, NULL, &g, NULL, 1, &u, &k), CL_SUCCESS);
  /* Registered in reverse order of the statuses. */
  CHECK_EQ_INT(clSetEventCallback(k, CL_COMPLETE, cb_fn, &log), CL_SUCCESS);
  CHECK_EQ_INT(clSetEventCallback(k, CL_RUNNING, cb_fn, &log), CL_SUCCESS);
  CHECK_EQ_INT(clSetEventCallback(k, CL_SUBMITTED, cb_fn, &log), CL_SUCCESS);
  CHECK_EQ_INT(clSetEventCallback(k, CL_QUEUED, cb_fn, &log), CL_INVALID_VALUE);
  CHECK_EQ_INT(clSetEventCallback(k, CL_COMPLETE, NULL, &log), CL_INVALID_VALUE);
  CHECK_EQ_INT(clSetEventCallback((cl_event)context, CL_COMPLETE, cb_fn, &log), CL_INVALID_EVENT);
  sleep_ms(10);
  CHECK_EQ_INT(log.n, 0);
  clSetUserEventStatus(u, CL_COMPLETE);
  clWaitForEvents(1, &k);
  clFinish(queue);
  /* The COMPLETE callback may run just after the wait returns. */
  for (int i = 0; i < 200 && log.n < 3; i++)
    sleep_ms(5);
  CHECK_EQ_INT(log.calls[0], 1);
  CHECK_EQ_INT(log.calls[1], 1);
  CHECK_EQ_INT(log.calls[2], 1);
  CHECK_EQ_INT(log.n, 3);
  CHECK_EQ_INT(log.order[0], 0);
  CHECK_EQ_INT(log.order[1], 1);
  CHECK_EQ_INT(log.order[2], 2);
  /* Registered after the fact: called at once, exactly once. */
  struct cb_log late = {PTHREAD_MUTEX_INITIALIZER};
  CHECK_EQ_INT(clSetEventCallback(k, CL_SUBMITTED, cb_fn, &late), CL_SUCCESS);
  CHECK_EQ_INT(clSetEventCallback(k, CL_COMPLETE, cb_fn, &late), CL_SUCCESS);
  CHECK_EQ_INT(late.n, 2);
  CHECK_EQ_INT(late.calls[0], 1);
  CHECK_EQ_INT(late.calls[2], 1);
  /* User events: the COMPLETE callback of a failed event gets the error. */
  struct cb_log uf = {PTHREAD_MUTEX_INITIALIZER};
  cl_event u2 = clCreateUserEvent(context, &err);
  clSetEventCallback(u2, CL_COMPLETE, cb_fn, &uf);
  clSetUserEventStatus(u2, -55);
  CHECK_EQ_INT(uf.n, 1);
  CHECK_EQ_INT(uf.calls[2], 1);
  CHECK_EQ_INT(uf.status_seen[2], -55);
  clReleaseEvent(u2);
  clReleaseEvent(u);
  clReleaseEvent(k);
  clReleaseMemObject(m);
}

static void markers_and_barriers(void) {
  cl_int err;
  for (int ooo = 0; ooo < 2; ooo++) {
    cl_command_queue q = clCreateCommandQueue(
        context, device, ooo ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, &err);
    REQUIRE(q);
    cl_event u1 = clCreateUserEvent(context, &err), u2 = clCreateUserEvent(context, &err);
    cl_event c1, c2, mk_all, mk_one, bar, after;
    static int d1 = 1, d2 = 2;
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
    clEnqueueWriteBuffer(q, m, CL_FALSE, 0, 4, &d1, 1, &u1, &c1);
    clEnqueueWriteBuffer(q, m, CL_FALSE, 4, 4, &d2, 1, &u2, &c2);
    CHECK_EQ_INT(clEnqueueMarkerWithWaitList(q, 0, NULL, &mk_all), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueMarkerWithWaitList(q, 1, &c2, &mk_one), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueBarrierWithWaitList(q, 0, NULL, &bar), CL_SUCCESS);
    /* A command after the barrier, with no wait list of its own. */
    CHECK_EQ_INT(clEnqueueMarkerWithWaitList(q, 1, &c2, &after), CL_SUCCESS);
    cl_command_type t = 0;
    clGetEventInfo(mk_all, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL);
    CHECK_EQ_INT(t, CL_COMMAND_MARKER);
    clGetEventInfo(bar, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL);
    CHECK_EQ_INT(t, CL_COMMAND_BARRIER);
    clSetUserEventStatus(u2, CL_COMPLETE);
    /* In order, c2 still waits for c1 (and so for u1). */
    if (ooo) clWaitForEvents(1, &c2);
    sleep_ms(10);
    if (ooo)
      CHECK_EQ_INT(event_status(mk_one), CL_COMPLETE);
    else
      CHECK(event_status(c2) > CL_COMPLETE);
    CHECK(event_status(mk_all) > CL_COMPLETE);
    CHECK(event_status(bar) > CL_COMPLETE);
    CHECK(event_status(after) > CL_COMPLETE);
    clSetUserEventStatus(u1, CL_COMPLETE);
    CHECK_EQ_INT(clWaitForEvents(1, &after), CL_SUCCESS);
    CHECK_EQ_INT(event_status(mk_all), CL_COMPLETE);
    CHECK_EQ_INT(event_status(bar), CL_COMPLETE);
    /* Legacy forms. */
    cl_event legacy;
    CHECK_EQ_INT(clEnqueueMarker(q, &legacy), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueMarker(q, NULL), CL_INVALID_VALUE);
    CHECK_EQ_INT(clEnqueueBarrier(q), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueWaitForEvents(q, 1, &legacy), CL_SUCCESS);
    CHECK_EQ_INT(clEnqueueWaitForEvents(q, 0, NULL), CL_INVALID_VALUE);
    CHECK_EQ_INT(clEnqueueWaitForEvents(q, 1, (cl_event *)&context), CL_INVALID_EVENT);
    CHECK_EQ_INT(clFinish(q), CL_SUCCESS);
    CHECK_EQ_INT(event_status(legacy), CL_COMPLETE);
    CHECK_EQ_INT(clEnqueueMarkerWithWaitList(q, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
    CHECK_EQ_INT(clEnqueueBarrierWithWaitList(q, 0, &legacy, NULL), CL_INVALID_EVENT_WAIT_LIST);
    CHECK_EQ_INT(clEnqueueMarkerWithWaitList((cl_command_queue)m, 0, NULL, NULL),
                 CL_INVALID_COMMAND_QUEUE);
    int back[2];
    clEnqueueReadBuffer(q, m, CL_TRUE, 0, 8, back, 0, NULL, NULL);
    CHECK_EQ_INT(back[0], 1);
    CHECK_EQ_INT(back[1], 2);
    cl_event all[] = {u1, u2, c1, c2, mk_all, mk_one, bar, after, legacy};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
      clReleaseEvent(all[i]);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
  }
}

/* Out-of-order: a barrier without a wait list orders everything around it. */
static void ooo_barrier_orders_kernels(void) {
  cl_int err;
  cl_command_queue q =
      clCreateCommandQueue(context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  REQUIRE(q);
  enum { N = 4096 };
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  int zero = 0;
  clEnqueueFillBuffer(q, m, &zero, sizeof zero, 0, N * sizeof(int), 0, NULL, NULL);
  clEnqueueBarrierWithWaitList(q, 0, NULL, NULL);
  size_t g = N;
  clSetKernelArg(inc, 0, sizeof m, &m);
  for (int round = 0; round < 20; round++) {
    clEnqueueNDRangeKernel(q, inc, 1, NULL, &g, NULL, 0, NULL, NULL);
    clEnqueueBarrierWithWaitList(q, 0, NULL, NULL);
  }
  int *out = malloc(N * sizeof(int));
  CHECK_EQ_INT(clEnqueueReadBuffer(q, m, CL_TRUE, 0, N * sizeof(int), out, 0, NULL, NULL),
               CL_SUCCESS);
  int good = 1;
  for (int i = 0; i < N; i++)
    good &= out[i] == 20;
  CHECK(good);
  free(out);
  clReleaseMemObject(m);
  clReleaseCommandQueue(q);
}

static void two_queues(void) {
  cl_int err;
  cl_command_queue q1 = clCreateCommandQueue(context, device, 0, &err);
  cl_command_queue q2 = clCreateCommandQueue(context, device, 0, &err);
  REQUIRE(q1 && q2);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 256 * sizeof(int), NULL, &err);
  int zero = 0;
  clEnqueueFillBuffer(q1, m, &zero, sizeof zero, 0, 256 * sizeof(int), 0, NULL, NULL);
  cl_event u = clCreateUserEvent(context, &err);
  cl_event k1, k2;
  size_t g = 256;
  clSetKernelArg(inc, 0, sizeof m, &m);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q1, inc, 1, NULL, &g, NULL, 1, &u, &k1), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q2, inc, 1, NULL, &g, NULL, 1, &k1, &k2), CL_SUCCESS);
  sleep_ms(10);
  CHECK_EQ_INT(event_status(k2), CL_QUEUED);
  clSetUserEventStatus(u, CL_COMPLETE);
  cl_event both[2] = {k1, k2};
  CHECK_EQ_INT(clWaitForEvents(2, both), CL_SUCCESS);
  int v[256];
  clEnqueueReadBuffer(q2, m, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
  int good = 1;
  for (int i = 0; i < 256; i++)
    good &= v[i] == 2;
  CHECK(good);
  /* clWaitForEvents errors. */
  CHECK_EQ_INT(clWaitForEvents(0, both), CL_INVALID_VALUE);
  CHECK_EQ_INT(clWaitForEvents(1, NULL), CL_INVALID_VALUE);
  cl_event bad[2] = {k1, (cl_event)context};
  CHECK_EQ_INT(clWaitForEvents(2, bad), CL_INVALID_EVENT);
  cl_context other = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  cl_event ou = clCreateUserEvent(other, &err);
  cl_event mixed[2] = {k1, ou};
  CHECK_EQ_INT(clWaitForEvents(2, mixed), CL_INVALID_CONTEXT);
  clSetUserEventStatus(ou, CL_COMPLETE);
  clReleaseEvent(ou);
  clReleaseContext(other);
  clReleaseEvent(u);
  clReleaseEvent(k1);
  clReleaseEvent(k2);
  clReleaseMemObject(m);
  clReleaseCommandQueue(q1);
  clReleaseCommandQueue(q2);
}

/* A kernel that runs until the host sets *flag (or for a very long time). */
static const char *wait_flag_src =
    "__kernel void wait_flag(volatile __global int *flag) {\n"
    "  for (uint i = 0; i < 1000000000u && atomic_add(flag, 0) == 0; i++) {}\n"
    "}\n";

/* clFinish on one queue does not wait for a kernel of another queue that
 * started before its kernels and is still running: the second queue's
 * kernel spins until the host sets a flag, which it does only after
 * clFinish of the first queue has returned. (It gives up after about 10^9
 * spins, so that a clFinish that does wait fails instead of hanging.) */
static void finish_ignores_other_queues(void) {
  /* The flag travels through memory the host and the running kernel share:
   * not so on a device without host-unified memory (a remote one). */
  cl_bool unified = CL_TRUE;
  clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
  if (!unified) return;
  cl_int err;
  cl_kernel wait_flag = build_kernel(wait_flag_src, "wait_flag");
  cl_command_queue qa = clCreateCommandQueue(context, device, 0, &err);
  cl_command_queue qb = clCreateCommandQueue(context, device, 0, &err);
  cl_command_queue qc = clCreateCommandQueue(context, device, 0, &err);
  REQUIRE(wait_flag && qa && qb && qc);
  cl_mem flag = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 256 * sizeof(int), NULL, &err);
  int zero = 0, one = 1;
  clEnqueueWriteBuffer(qc, flag, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL);
  clEnqueueFillBuffer(qa, m, &zero, sizeof zero, 0, 256 * sizeof(int), 0, NULL, NULL);
  CHECK_EQ_INT(clFinish(qa), CL_SUCCESS);
  size_t g1 = 1, g = 256;
  cl_event spin;
  clSetKernelArg(wait_flag, 0, sizeof flag, &flag);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(qb, wait_flag, 1, NULL, &g1, NULL, 0, NULL, &spin),
               CL_SUCCESS);
  clSetKernelArg(inc, 0, sizeof m, &m);
  for (int i = 0; i < 4; i++)
    CHECK_EQ_INT(clEnqueueNDRangeKernel(qa, inc, 1, NULL, &g, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(qa), CL_SUCCESS);
  CHECK(event_status(spin) > CL_COMPLETE);
  clEnqueueWriteBuffer(qc, flag, CL_TRUE, 0, sizeof one, &one, 0, NULL, NULL);
  CHECK_EQ_INT(clFinish(qb), CL_SUCCESS);
  CHECK_EQ_INT(event_status(spin), CL_COMPLETE);
  int v[256];
  clEnqueueReadBuffer(qa, m, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
  int good = 1;
  for (int i = 0; i < 256; i++)
    good &= v[i] == 4;
  CHECK(good);
  clReleaseEvent(spin);
  clReleaseMemObject(flag);
  clReleaseMemObject(m);
  clReleaseKernel(wait_flag);
  clReleaseCommandQueue(qa);
  clReleaseCommandQueue(qb);
  clReleaseCommandQueue(qc);
}

/* For the tests that run wait_flag: the kernel, the queue it runs on and
 * one the host writes the flag through, the flag set to 0. Returns 0 where
 * the host and a running kernel share no memory (a remote device: the test
 * does not apply), or, with the case failed, where one is missing. */
static int flag_setup(cl_kernel *wait_flag, cl_command_queue *run, cl_command_queue *host,
                      cl_mem *flag) {
  cl_bool unified = CL_TRUE;
  clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
  if (!unified) return 0;
  cl_int err;
  *wait_flag = build_kernel(wait_flag_src, "wait_flag");
  *run = clCreateCommandQueue(context, device, 0, &err);
  *host = clCreateCommandQueue(context, device, 0, &err);
  *flag = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
  CHECK(*wait_flag && *run && *host && *flag); /* a failure, not a skip */
  if (!*wait_flag || !*run || !*host || !*flag) return 0;
  int zero = 0;
  clEnqueueWriteBuffer(*host, *flag, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL);
  clSetKernelArg(*wait_flag, 0, sizeof *flag, flag);
  return 1;
}

static void set_flag_callback(cl_event e, cl_int status, void *data) {
  (void)e;
  atomic_store((atomic_int *)data, status == CL_COMPLETE ? 1 : -1);
}

/* A kernel's end waits for the next kernel's when nothing waits for it
 * (device.c): a callback set on it, or a command made to depend on it,
 * once it has ended, still comes while that next kernel runs on. */
static void ended_kernel_still_completes_alone(void) {
  cl_int err;
  cl_kernel wait_flag = NULL;
  cl_command_queue q = NULL, other = NULL;
  cl_mem flag = NULL;
  if (!flag_setup(&wait_flag, &q, &other, &flag)) return;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
  int zero = 0, one = 1;
  clEnqueueFillBuffer(other, m, &zero, sizeof zero, 0, 64 * sizeof(int), 0, NULL, NULL);
  CHECK_EQ_INT(clFinish(other), CL_SUCCESS);
  size_t g = 64, g1 = 1;
  cl_event first, spin;
  clSetKernelArg(inc, 0, sizeof m, &m);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, inc, 1, NULL, &g, NULL, 0, NULL, &first), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(q, wait_flag, 1, NULL, &g1, NULL, 0, NULL, &spin),
               CL_SUCCESS);
  clFlush(q);
  sleep_ms(50); /* the first kernel has ended by now, most likely */
  atomic_int called = 0;
  CHECK_EQ_INT(clSetEventCallback(first, CL_COMPLETE, set_flag_callback, &called), CL_SUCCESS);
  cl_event after;
  CHECK_EQ_INT(clEnqueueMarkerWithWaitList(other, 1, &first, &after), CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &after), CL_SUCCESS);
  for (int i = 0; i < 1000 && !atomic_load(&called); i++)
    sleep_ms(10);
  CHECK_EQ_INT(atomic_load(&called), 1);
  CHECK(event_status(spin) > CL_COMPLETE); /* all that while, the next kernel ran */
  clEnqueueWriteBuffer(other, flag, CL_TRUE, 0, sizeof one, &one, 0, NULL, NULL);
  CHECK_EQ_INT(clFinish(q), CL_SUCCESS);
  CHECK_EQ_INT(event_status(spin), CL_COMPLETE);
  int v[64];
  clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
  CHECK_EQ_INT(v[0], 1);
  CHECK_EQ_INT(v[63], 1);
  clReleaseEvent(first);
  clReleaseEvent(spin);
  clReleaseEvent(after);
  clReleaseMemObject(flag);
  clReleaseMemObject(m);
  clReleaseKernel(wait_flag);
  clReleaseCommandQueue(q);
  clReleaseCommandQueue(other);
}

static int check_profile(cl_event e, const char *what) {
  cl_ulong t[4] = {0};
  const cl_profiling_info p[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                  CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  for (int i = 0; i < 4; i++)
    if (clGetEventProfilingInfo(e, p[i], sizeof t[i], &t[i], NULL) != CL_SUCCESS) {
      printf("  %s: profiling info %d unavailable\n", what, i);
      return 0;
    }
  if (!(t[0] > 0 && t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3])) {
    printf("  %s: %llu %llu %llu %llu\n", what, (unsigned long long)t[0], (unsigned long long)t[1],
           (unsigned long long)t[2], (unsigned long long)t[3]);
    return 0;
  }
  return 1;
}

static void profiling(void) {
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &err);
  REQUIRE(q);
  enum { N = 1 << 16 };
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  cl_mem m2 = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  cl_event u = clCreateUserEvent(context, &err);
  cl_event ev[6];
  int zero = 0;
  size_t g = N;
  clSetKernelArg(inc, 0, sizeof m, &m);
  clEnqueueFillBuffer(q, m, &zero, sizeof zero, 0, N * sizeof(int), 1, &u, &ev[0]);
  clEnqueueNDRangeKernel(q, inc, 1, NULL, &g, NULL, 0, NULL, &ev[1]);
  clEnqueueCopyBuffer(q, m, m2, 0, 0, N * sizeof(int), 0, NULL, &ev[2]);
  clEnqueueMarkerWithWaitList(q, 0, NULL, &ev[3]);
  clEnqueueNDRangeKernel(q, inc, 1, NULL, &g, NULL, 0, NULL, &ev[4]);
  void *p = clEnqueueMapBuffer(q, m, CL_FALSE, CL_MAP_READ, 0, 64, 0, NULL, &ev[5], &err);
  cl_ulong ts;
  CHECK_EQ_INT(clGetEventProfilingInfo(ev[1], CL_PROFILING_COMMAND_END, sizeof ts, &ts, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
  sleep_ms(5);
  clSetUserEventStatus(u, CL_COMPLETE);
  clFinish(q);
  const char *names[] = {"fill", "kernel", "copy", "marker", "kernel2", "map"};
  for (int i = 0; i < 6; i++)
    CHECK(check_profile(ev[i], names[i]));
  /* In order: each command starts after the previous one ended. */
  for (int i = 1; i < 6; i++) {
    cl_ulong end_prev = 0, start = 0;
    clGetEventProfilingInfo(ev[i - 1], CL_PROFILING_COMMAND_END, sizeof end_prev, &end_prev, NULL);
    clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    if (start < end_prev) printf("  %s started before %s ended\n", names[i], names[i - 1]);
    CHECK(start >= end_prev);
  }
  CHECK_EQ_INT(clGetEventProfilingInfo(ev[1], 0x7777, sizeof ts, &ts, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetEventProfilingInfo(ev[1], CL_PROFILING_COMMAND_END, 4, &ts, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetEventProfilingInfo((cl_event)q, CL_PROFILING_COMMAND_END, sizeof ts, &ts, NULL),
               CL_INVALID_EVENT);
  clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL);
  /* A queue without profiling. */
  cl_event plain;
  clEnqueueMarkerWithWaitList(queue, 0, NULL, &plain);
  clWaitForEvents(1, &plain);
  CHECK_EQ_INT(clGetEventProfilingInfo(plain, CL_PROFILING_COMMAND_END, sizeof ts, &ts, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
  clReleaseEvent(plain);
  clFinish(q);
  for (int i = 0; i < 6; i++)
    clReleaseEvent(ev[i]);
  clReleaseEvent(u);
  clReleaseMemObject(m);
  clReleaseMemObject(m2);
  clReleaseCommandQueue(q);
}

static void blocking_and_finish(void) {
  cl_int err;
  enum { N = 1 << 18 };
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  int *h = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++)
    h[i] = i;
  /* Non-blocking write, kernel, then a blocking read: the read sees both. */
  clEnqueueWriteBuffer(queue, m, CL_FALSE, 0, N * sizeof(int), h, 0, NULL, NULL);
  size_t g = N;
  clSetKernelArg(inc, 0, sizeof m, &m);
  clEnqueueNDRangeKernel(queue, inc, 1, NULL, &g, NULL, 0, NULL, NULL);
  clEnqueueNDRangeKernel(queue, inc, 1, NULL, &g, NULL, 0, NULL, NULL);
  int *out = calloc(N, sizeof(int));
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, N * sizeof(int), out, 0, NULL, NULL),
               CL_SUCCESS);
  int good = 1;
  for (int i = 0; i < N; i++)
    good &= out[i] == i + 2;
  CHECK(good);
  clEnqueueNDRangeKernel(queue, inc, 1, NULL, &g, NULL, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, m, CL_FALSE, 0, N * sizeof(int), out, 0, NULL, NULL);
  CHECK_EQ_INT(clFlush(queue), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  good = 1;
  for (int i = 0; i < N; i++)
    good &= out[i] == i + 3;
  CHECK(good);
  free(h);
  free(out);
  clReleaseMemObject(m);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A program that awaits its kernels by polling the status until it reads
 * CL_COMPLETE (as SDK samples do): each poll sees the status move only
 * forward, the results are there once it reads CL_COMPLETE, and a chain of
 * 200 launches awaited so completes in well under the limit (the status
 * query completes a finished kernel itself instead of waiting for the
 * watcher thread; finish_ignores_other_queues checks that it runs none of
 * a kernel's work-groups). */
static void polled_status(void) {
  cl_int err;
  enum { N = 4096, LAUNCHES = 200 };
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof(int),
                            (int[N]){0}, &err);
  REQUIRE(m);
  CHECK_EQ_INT(clSetKernelArg(inc, 0, sizeof m, &m), CL_SUCCESS);
  size_t g = N;
  double start = now_s();
  for (int i = 0; i < LAUNCHES; i++) {
    cl_event e;
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, inc, 1, NULL, &g, NULL, 0, NULL, &e), CL_SUCCESS);
    clFlush(queue);
    cl_int status = CL_QUEUED, previous = CL_QUEUED;
    while (status > CL_COMPLETE && now_s() - start < 60) {
      CHECK_EQ_INT(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                  NULL),
                   CL_SUCCESS);
      CHECK(status <= previous);
      previous = status;
    }
    CHECK_EQ_INT(status, CL_COMPLETE);
    int first = -1;
    /* Complete means done: the read sees the kernel's result. */
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof first, &first, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(first, i + 1);
    clReleaseEvent(e);
    if (status != CL_COMPLETE) break;
  }
  CHECK(now_s() - start < 60);
  clReleaseMemObject(m);
}

/* A status query waits for a running kernel's end only a moment
 * (event_poll): polling a kernel that runs until the host says so returns
 * each time while it runs, and reads CL_COMPLETE soon after it ends. */
static void polled_long_kernel(void) {
  cl_kernel wait_flag = NULL;
  cl_command_queue qb = NULL, qc = NULL;
  cl_mem flag = NULL;
  if (!flag_setup(&wait_flag, &qb, &qc, &flag)) return;
  int one = 1;
  size_t g1 = 1;
  cl_event spin;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(qb, wait_flag, 1, NULL, &g1, NULL, 0, NULL, &spin),
               CL_SUCCESS);
  clFlush(qb);
  double start = now_s(), longest = 0;
  int polls = 0;
  cl_int status = CL_QUEUED;
  while (polls < 20 && now_s() - start < 10) {
    double t = now_s();
    clGetEventInfo(spin, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    t = now_s() - t;
    if (t > longest) longest = t;
    polls++;
    if (status <= CL_COMPLETE) break;
  }
  /* Still running, and no query held until the kernel's end, which comes
   * only when the host says so (each waits at most 50 us; a loaded machine,
   * or a sanitizer's, may hold a thread off the CPU for tens of ms, which
   * 2 s covers while still telling a query that waited). */
  CHECK(status > CL_COMPLETE);
  CHECK(polls >= 20);
  if (longest >= 2.0) printf("  a status query took %.1f ms\n", longest * 1e3);
  CHECK(longest < 2.0);
  clEnqueueWriteBuffer(qc, flag, CL_TRUE, 0, sizeof one, &one, 0, NULL, NULL);
  double end = now_s();
  while (status > CL_COMPLETE && now_s() - end < 30)
    clGetEventInfo(spin, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  CHECK_EQ_INT(status, CL_COMPLETE);
  clReleaseEvent(spin);
  clReleaseMemObject(flag);
  clReleaseCommandQueue(qb);
  clReleaseCommandQueue(qc);
  clReleaseKernel(wait_flag);
}

static void long_chains(void) {
  cl_int err;
  cl_uint ctx_refs = context_refs();
  cl_command_queue q =
      clCreateCommandQueue(context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  REQUIRE(q);
  enum { CHAIN = 10000 };
  double t0 = now_s();
  /* Each marker waits for the one before; completing the head completes
   * all of them, which must not recurse 10000 deep. */
  cl_event u = clCreateUserEvent(context, &err);
  cl_event prev = u;
  clRetainEvent(prev);
  for (int i = 0; i < CHAIN; i++) {
    cl_event e;
    if (clEnqueueMarkerWithWaitList(q, 1, &prev, &e) != CL_SUCCESS) {
      CHECK(0);
      break;
    }
    clReleaseEvent(prev);
    prev = e;
  }
  CHECK(event_status(prev) > CL_COMPLETE);
  clSetUserEventStatus(u, CL_COMPLETE);
  CHECK_EQ_INT(clWaitForEvents(1, &prev), CL_SUCCESS);
  clReleaseEvent(prev);
  clReleaseEvent(u);
  CHECK_EQ_INT(clFinish(q), CL_SUCCESS);
  clReleaseCommandQueue(q);

  /* An in-order queue of 10000 kernels behind a gate. */
  q = clCreateCommandQueue(context, device, 0, &err);
  REQUIRE(q);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
  int zero = 0;
  clEnqueueFillBuffer(q, m, &zero, sizeof zero, 0, sizeof zero, 0, NULL, NULL);
  u = clCreateUserEvent(context, &err);
  clEnqueueMarkerWithWaitList(q, 1, &u, NULL);
  clSetKernelArg(inc, 0, sizeof m, &m);
  size_t one = 1;
  for (int i = 0; i < CHAIN; i++)
    if (clEnqueueNDRangeKernel(q, inc, 1, NULL, &one, NULL, 0, NULL, NULL) != CL_SUCCESS) {
      CHECK(0);
      break;
    }
  clSetUserEventStatus(u, CL_COMPLETE);
  int v = 0;
  CHECK_EQ_INT(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(v, CHAIN);
  /* And 10000 more without a gate, each already ordered behind the last. */
  for (int i = 0; i < CHAIN; i++)
    clEnqueueNDRangeKernel(q, inc, 1, NULL, &one, NULL, 0, NULL, NULL);
  CHECK_EQ_INT(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(v, 2 * CHAIN);
  clReleaseEvent(u);

  /* 10000 small writes and copies behind a gate: host commands this small
   * run where they become ready (enqueue.c), all of them here in the
   * thread that opens the gate, without recursing. */
  static int values[CHAIN], back[CHAIN];
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof values, NULL, &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof values, NULL, &err);
  REQUIRE(a && b);
  for (int i = 0; i < CHAIN; i++)
    values[i] = 3 * i + 1;
  u = clCreateUserEvent(context, &err);
  clEnqueueMarkerWithWaitList(q, 1, &u, NULL);
  for (int i = 0; i < CHAIN; i += 2) {
    size_t at = (size_t)i * sizeof(int);
    clEnqueueWriteBuffer(q, a, CL_FALSE, at, 2 * sizeof(int), &values[i], 0, NULL, NULL);
    clEnqueueCopyBuffer(q, a, b, at, at, 2 * sizeof(int), 0, NULL, NULL);
  }
  /* And after a kernel: its copy and write, then the next kernel. */
  clSetKernelArg(inc, 0, sizeof b, &b);
  clEnqueueNDRangeKernel(q, inc, 1, NULL, &one, NULL, 0, NULL, NULL);
  clEnqueueCopyBuffer(q, b, a, 0, sizeof(int), sizeof(int), 0, NULL, NULL);
  clEnqueueWriteBuffer(q, a, CL_FALSE, 2 * sizeof(int), sizeof(int), &values[0], 0, NULL, NULL);
  clSetKernelArg(inc, 0, sizeof a, &a);
  clEnqueueNDRangeKernel(q, inc, 1, NULL, &one, NULL, 0, NULL, NULL);
  clSetUserEventStatus(u, CL_COMPLETE);
  CHECK_EQ_INT(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL), CL_SUCCESS);
  int wrong = 0;
  for (int i = 0; i < CHAIN; i++)
    wrong += back[i] != values[i] + (i == 0);
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 3 * sizeof(int), back, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(back[0], values[0] + 1);
  CHECK_EQ_INT(back[1], values[0] + 1);
  CHECK_EQ_INT(back[2], values[0]);
  clReleaseEvent(u);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseMemObject(m);
  cl_uint qrefs = 0;
  clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof qrefs, &qrefs, NULL);
  /* Every command's reference on the queue is gone once they completed. */
  for (int i = 0; i < 100 && qrefs != 1; i++) {
    sleep_ms(5);
    clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof qrefs, &qrefs, NULL);
  }
  CHECK_EQ_INT(qrefs, 1);
  clReleaseCommandQueue(q);
  CHECK_EQ_INT(context_refs(), ctx_refs);
  double t = now_s() - t0;
  if (t > 10) printf("  long chains took %.1f s\n", t);
}

int main(void) {
  api_setup();
  inc = build_kernel(inc_src, "inc");
  if (!inc) {
    printf("not ok build_inc\n");
    return 1;
  }
  RUN(user_event_basics);
  RUN(gate_in_order);
  RUN(gate_out_of_order);
  RUN(user_event_error);
  RUN(callbacks);
  RUN(markers_and_barriers);
  RUN(ooo_barrier_orders_kernels);
  RUN(two_queues);
  RUN(finish_ignores_other_queues);
  RUN(ended_kernel_still_completes_alone);
  RUN(profiling);
  RUN(blocking_and_finish);
  RUN(long_chains);
  RUN(polled_status);
  RUN(polled_long_kernel);
  clReleaseKernel(inc);
  api_teardown();
  CHECK_EXIT();
}
