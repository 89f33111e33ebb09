/* Thread safety: every OpenCL API function may be called from any host thread
 * at once (OpenCL 1.2, appendix A.2), except clSetKernelArg on one kernel
 * object from two threads. Each case starts several threads together on one
 * context, with queues they share and queues of their own, and checks every
 * result. `make check-tsan` runs this under ThreadSanitizer, which also sees
 * the races a lucky schedule would hide. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "api.h"

#define NTHREADS 6
#define N 256 /* ints per buffer */

/* CHECK writes a plain static flag: from worker threads, count failures in an
 * atomic instead and let the main thread check the count after the join. */
static atomic_int thread_failures;
#define TCHECK(cond)                                                                               \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      printf("  %s:%d: thread %d: TCHECK(%s) failed\n", __FILE__, __LINE__, t->id, #cond);         \
      atomic_fetch_add(&thread_failures, 1);                                                       \
    }                                                                                              \
  } while (0)
#define TCHECK_EQ(a, b)                                                                            \
  do {                                                                                             \
    long long tc_a_ = (long long)(a), tc_b_ = (long long)(b);                                      \
    if (tc_a_ != tc_b_) {                                                                          \
      printf("  %s:%d: thread %d: %s == %lld, expected %lld\n", __FILE__, __LINE__, t->id, #a,     \
             tc_a_, tc_b_);                                                                        \
      atomic_fetch_add(&thread_failures, 1);                                                       \
    }                                                                                              \
  } while (0)
#define TREQUIRE(cond)                                                                             \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      printf("  %s:%d: thread %d: TREQUIRE(%s) failed\n", __FILE__, __LINE__, t->id, #cond);       \
      atomic_fetch_add(&thread_failures, 1);                                                       \
      return NULL;                                                                                 \
    }                                                                                              \
  } while (0)

static const char *shared_src = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n"
                                "__kernel void axpb(__global int *a, int m, int b) {\n"
                                "  size_t i = get_global_id(0);\n"
                                "  a[i] = a[i] * m + b;\n"
                                "}\n";

static cl_command_queue ooq;      /* shared out-of-order queue; `queue` is the in-order one */
static cl_program shared_program; /* built once; each thread makes its own kernels from it */
static pthread_barrier_t start_line;
static char cache_dir[] = "/tmp/aquila-threads-XXXXXX";

struct thread {
  int id;
  pthread_t handle;
  cl_command_queue own; /* this thread's own in-order queue */
  /* Per-case inputs the main thread prepares. */
  cl_event gate, mine, next, bad;
  cl_mem parent;
  size_t stride;
};
static struct thread threads[NTHREADS];

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Starts fn on every thread, all released together by a barrier so that
 * they reach the runtime at the same time, and checks that none failed. */
static void run_threads(void *(*fn)(void *)) {
  atomic_store(&thread_failures, 0);
  pthread_barrier_init(&start_line, NULL, NTHREADS);
  int started = 0;
  for (int i = 0; i < NTHREADS; i++) {
    threads[i].id = i;
    if (pthread_create(&threads[i].handle, NULL, fn, &threads[i]) != 0) break;
    started++;
  }
  REQUIRE(started == NTHREADS); /* a barrier for NTHREADS would never open */
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(threads[i].handle, NULL);
  pthread_barrier_destroy(&start_line);
  CHECK_EQ_INT(atomic_load(&thread_failures), 0);
}

static int all_equal(const int *a, int n, int v) {
  for (int i = 0; i < n; i++)
    if (a[i] != v) return 0;
  return 1;
}

/* Builds src with options; NULL (and a failure counted) when it does not build. */
static cl_program thread_build(struct thread *t, const char *src, const char *options) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  TCHECK_EQ(err, CL_SUCCESS);
  if (!p) return NULL;
  err = clBuildProgram(p, 1, &device, options, NULL, NULL);
  TCHECK_EQ(err, CL_SUCCESS);
  cl_build_status st = CL_BUILD_NONE;
  clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL);
  TCHECK_EQ(st, CL_BUILD_SUCCESS);
  if (err != CL_SUCCESS) {
    clReleaseProgram(p);
    return NULL;
  }
  return p;
}

/* Runs kernel k (first argument: a buffer of N ints, filled with `fill`
 * first) on q and returns the buffer's contents in out. */
static cl_int run_on_buffer(cl_command_queue q, cl_kernel k, int fill, int *out) {
  cl_int err;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  if (!m) return err;
  size_t g = N;
  if ((err = clEnqueueFillBuffer(q, m, &fill, sizeof fill, 0, N * sizeof(int), 0, NULL, NULL)) ||
      (err = clSetKernelArg(k, 0, sizeof m, &m)) ||
      (err = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL)) ||
      (err = clEnqueueReadBuffer(q, m, CL_TRUE, 0, N * sizeof(int), out, 0, NULL, NULL))) {
    clReleaseMemObject(m);
    return err;
  }
  return clReleaseMemObject(m);
}

/* ---- builds ---------------------------------------------------------------- */

/* Every thread builds the same source (its own program object: they meet in
 * the compiler and in the kernel cache, which starts empty, so they compile
 * and store the same entry at once), a source of its own, and the same source
 * again (now from the cache); and makes kernels from one shared program. */
static void *builds_thread(void *arg) {
  struct thread *t = arg;
  int out[N];
  pthread_barrier_wait(&start_line);

  cl_int err;
  t->own = clCreateCommandQueue(context, device, 0, &err);
  TREQUIRE(t->own && err == CL_SUCCESS);

  for (int round = 0; round < 2; round++) {
    cl_program same = thread_build(t, shared_src, "-DSAME_FOR_ALL=1");
    if (same) {
      size_t num = 0; /* CL_PROGRAM_NUM_KERNELS is a size_t */
      TCHECK_EQ(clGetProgramInfo(same, CL_PROGRAM_NUM_KERNELS, sizeof num, &num, NULL), CL_SUCCESS);
      TCHECK_EQ(num, 2);
      cl_uint nk = 0;
      cl_kernel ks[2] = {NULL, NULL};
      TCHECK_EQ(clCreateKernelsInProgram(same, 2, ks, &nk), CL_SUCCESS);
      TCHECK_EQ(nk, 2);
      cl_kernel k = clCreateKernel(same, "axpb", &err);
      TCHECK(k != NULL);
      if (k) {
        cl_int m = 3, b = t->id;
        clSetKernelArg(k, 1, sizeof m, &m);
        clSetKernelArg(k, 2, sizeof b, &b);
        TCHECK_EQ(run_on_buffer(t->own, k, 2, out), CL_SUCCESS);
        TCHECK(all_equal(out, N, 2 * 3 + t->id));
        clReleaseKernel(k);
      }
      for (int i = 0; i < 2; i++)
        if (ks[i]) clReleaseKernel(ks[i]);
      clReleaseProgram(same);
    }

    /* A source only this thread builds (once: compiling is the slow part),
     * its constants making the code differ. */
    if (round) continue;
    char src[256];
    snprintf(src, sizeof src,
             "__kernel void own(__global int *a) { a[get_global_id(0)] += %d * 1000 + %d; }\n",
             t->id, round);
    cl_program own = thread_build(t, src, NULL);
    if (own) {
      cl_kernel k = clCreateKernel(own, "own", &err);
      TCHECK(k != NULL);
      if (k) {
        TCHECK_EQ(run_on_buffer(t->own, k, 5, out), CL_SUCCESS);
        TCHECK(all_equal(out, N, 5 + t->id * 1000 + round));
        clReleaseKernel(k);
      }
      clReleaseProgram(own);
    }
  }

  /* One program, many threads: clCreateKernel and queries on it at once, and
   * each thread's kernel on the shared in-order queue. */
  cl_kernel k = clCreateKernel(shared_program, "axpb", &err);
  TREQUIRE(k);
  cl_int m = t->id + 1, b = 7;
  clSetKernelArg(k, 1, sizeof m, &m);
  clSetKernelArg(k, 2, sizeof b, &b);
  TCHECK_EQ(run_on_buffer(queue, k, 10, out), CL_SUCCESS);
  TCHECK(all_equal(out, N, 10 * (t->id + 1) + 7));
  char name[16] = "";
  TCHECK_EQ(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL), CL_SUCCESS);
  TCHECK(!strcmp(name, "axpb"));
  clReleaseKernel(k);
  clReleaseCommandQueue(t->own);
  return NULL;
}

static void builds(void) {
  run_threads(builds_thread);
}

/* ---- buffers ------------------------------------------------------------- */

/* Buffers created, written, copied, mapped, read and released by every
 * thread at once through shared and own queues; sub-buffers of one shared
 * parent, a region per thread; retains and releases of the parent. */
static void *buffers_thread(void *arg) {
  struct thread *t = arg;
  cl_int err;
  pthread_barrier_wait(&start_line);
  t->own = clCreateCommandQueue(context, device, 0, &err);
  TREQUIRE(t->own);
  int src[N], out[N];
  cl_event last_fill = NULL;
  for (int iter = 0; iter < 24; iter++) {
    for (int i = 0; i < N; i++)
      src[i] = t->id * 100000 + iter * 1000 + i;
    cl_mem_flags flags = iter % 3 == 0   ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR
                         : iter % 3 == 1 ? CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR
                                         : CL_MEM_READ_WRITE;
    cl_mem a = clCreateBuffer(context, flags, sizeof src, iter % 3 == 0 ? src : NULL, &err);
    cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof src, NULL, &err);
    TREQUIRE(a && b);
    /* Write on the shared in-order queue, copy on the shared out-of-order
     * queue after it, read on this thread's queue after the copy. */
    cl_event w, c;
    TCHECK_EQ(clEnqueueWriteBuffer(queue, a, CL_FALSE, 0, sizeof src, src, 0, NULL, &w),
              CL_SUCCESS);
    TCHECK_EQ(clEnqueueCopyBuffer(ooq, a, b, 0, 0, sizeof src, 1, &w, &c), CL_SUCCESS);
    memset(out, 0, sizeof out);
    TCHECK_EQ(clEnqueueReadBuffer(t->own, b, CL_TRUE, 0, sizeof out, out, 1, &c, NULL), CL_SUCCESS);
    TCHECK(!memcmp(out, src, sizeof out));
    TCHECK_EQ(event_status(w), CL_COMPLETE);
    TCHECK_EQ(event_status(c), CL_COMPLETE);
    int *p = clEnqueueMapBuffer(t->own, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, sizeof src, 0,
                                NULL, NULL, &err);
    TCHECK(p != NULL);
    if (p) {
      TCHECK(!memcmp(p, src, sizeof src));
      p[0] = -1;
      TCHECK_EQ(clEnqueueUnmapMemObject(t->own, b, p, 0, NULL, NULL), CL_SUCCESS);
      int first = 0;
      clEnqueueReadBuffer(t->own, b, CL_TRUE, 0, sizeof first, &first, 0, NULL, NULL);
      TCHECK_EQ(first, -1);
    }
    clReleaseEvent(w);
    clReleaseEvent(c);
    clReleaseMemObject(a);
    clReleaseMemObject(b);

    clRetainMemObject(t->parent);
    cl_buffer_region r = {t->id * t->stride, t->stride};
    cl_mem sub =
        clCreateSubBuffer(t->parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    TCHECK(sub && err == CL_SUCCESS);
    if (sub) {
      /* The fills of one region alternate between the shared queues; each
       * waits for the one before, so the last one wins. */
      int v = t->id * 1000 + iter;
      cl_event f;
      TCHECK_EQ(clEnqueueFillBuffer(iter % 2 ? queue : ooq, sub, &v, sizeof v, 0, t->stride,
                                    last_fill ? 1 : 0, last_fill ? &last_fill : NULL, &f),
                CL_SUCCESS);
      if (last_fill) clReleaseEvent(last_fill);
      last_fill = f;
      clReleaseMemObject(sub);
    }
    clReleaseMemObject(t->parent);
  }
  if (last_fill) {
    TCHECK_EQ(clWaitForEvents(1, &last_fill), CL_SUCCESS);
    clReleaseEvent(last_fill);
  }
  TCHECK_EQ(clFinish(queue), CL_SUCCESS);
  TCHECK_EQ(clFinish(ooq), CL_SUCCESS);
  clReleaseCommandQueue(t->own);
  return NULL;
}

static void buffers(void) {
  cl_uint align_bits = 0;
  clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
  size_t stride = align_bits / 8 > 64 * sizeof(int) ? align_bits / 8 : 64 * sizeof(int);
  cl_int err;
  cl_mem parent = clCreateBuffer(context, CL_MEM_READ_WRITE, stride * NTHREADS, NULL, &err);
  REQUIRE(parent);
  for (int i = 0; i < NTHREADS; i++) {
    threads[i].parent = parent;
    threads[i].stride = stride;
  }
  run_threads(buffers_thread);
  /* Each region holds its thread's last fill (iteration 23). */
  size_t count = stride * NTHREADS / sizeof(int);
  int *all = malloc(stride * NTHREADS);
  REQUIRE(all);
  CHECK_EQ_INT(
      clEnqueueReadBuffer(queue, parent, CL_TRUE, 0, stride * NTHREADS, all, 0, NULL, NULL),
      CL_SUCCESS);
  for (size_t i = 0; i < count; i++) {
    int owner = (int)(i * sizeof(int) / stride);
    if (all[i] != owner * 1000 + 23) {
      printf("  region of thread %d: element %zu is %d\n", owner, i, all[i]);
      CHECK(0);
      break;
    }
  }
  free(all);
  CHECK_EQ_INT(ref_count_of_mem(parent), 1);
  clReleaseMemObject(parent);
}

/* ---- kernels across queues ------------------------------------------------ */

/* Each thread's chain of kernels hops between its own queue, the shared
 * in-order queue and the shared out-of-order queue, each step waiting on
 * the previous step's event, with markers between; the result counts the
 * steps. */
static void *chains_thread(void *arg) {
  struct thread *t = arg;
  cl_int err;
  pthread_barrier_wait(&start_line);
  t->own = clCreateCommandQueue(context, device, 0, &err);
  cl_kernel inc = clCreateKernel(shared_program, "inc", &err);
  cl_kernel axpb = clCreateKernel(shared_program, "axpb", &err);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  TREQUIRE(t->own && inc && axpb && m);
  int zero = 0, out[N];
  size_t g = N;
  cl_event prev;
  TCHECK_EQ(clEnqueueFillBuffer(t->own, m, &zero, sizeof zero, 0, sizeof out, 0, NULL, &prev),
            CL_SUCCESS);
  clSetKernelArg(inc, 0, sizeof m, &m);
  clSetKernelArg(axpb, 0, sizeof m, &m);
  const int rounds = 12;
  int expect = 0;
  for (int r = 0; r < rounds; r++) {
    cl_event e1, e2, e3, mk;
    TCHECK_EQ(clEnqueueNDRangeKernel(t->own, inc, 1, NULL, &g, NULL, 1, &prev, &e1), CL_SUCCESS);
    TCHECK_EQ(clEnqueueNDRangeKernel(ooq, inc, 1, NULL, &g, NULL, 1, &e1, &e2), CL_SUCCESS);
    /* Arguments are captured at enqueue: set them anew for each command. */
    cl_int mul = 2, add = r;
    clSetKernelArg(axpb, 1, sizeof mul, &mul);
    clSetKernelArg(axpb, 2, sizeof add, &add);
    TCHECK_EQ(clEnqueueNDRangeKernel(queue, axpb, 1, NULL, &g, NULL, 1, &e2, &e3), CL_SUCCESS);
    TCHECK_EQ(clEnqueueMarkerWithWaitList(t->own, 1, &e3, &mk), CL_SUCCESS);
    expect = (expect + 2) * 2 + r;
    clReleaseEvent(prev);
    clReleaseEvent(e1);
    clReleaseEvent(e2);
    clReleaseEvent(e3);
    prev = mk;
  }
  TCHECK_EQ(clEnqueueReadBuffer(t->own, m, CL_TRUE, 0, sizeof out, out, 1, &prev, NULL),
            CL_SUCCESS);
  TCHECK_EQ(event_status(prev), CL_COMPLETE);
  TCHECK(all_equal(out, N, expect));
  clReleaseEvent(prev);
  clReleaseMemObject(m);
  clReleaseKernel(inc);
  clReleaseKernel(axpb);
  clReleaseCommandQueue(t->own);
  return NULL;
}

static void kernels_across_queues(void) {
  run_threads(chains_thread);
}

/* ---- user events and callbacks --------------------------------------------- */

static atomic_int gate_callbacks, kernel_callbacks, error_callbacks;

static void CL_CALLBACK count_complete(cl_event e, cl_int status, void *data) {
  if (status == CL_COMPLETE) atomic_fetch_add((atomic_int *)data, 1);
}
static void CL_CALLBACK count_error(cl_event e, cl_int status, void *data) {
  if (status < 0) atomic_fetch_add((atomic_int *)data, 1);
}

/* Waits (bounded) until *counter reaches want: a callback may still be
 * running when clWaitForEvents returns. */
static int wait_count(atomic_int *counter, int want) {
  for (int i = 0; i < 2000 && atomic_load(counter) < want; i++)
    sleep_ms(1);
  return atomic_load(counter);
}

/* Thread i's kernel waits for the shared gate and for user event `mine`,
 * which thread i+1 completes; its second kernel waits for `bad`, which
 * thread i+1 fails. Every thread registers a callback on the shared gate,
 * which one of them opens once all have enqueued. */
static void *user_events_thread(void *arg) {
  struct thread *t = arg;
  cl_int err;
  t->own = clCreateCommandQueue(context, device, 0, &err);
  cl_kernel inc = clCreateKernel(shared_program, "inc", &err);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  cl_mem never = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  if (!(t->own && inc && m && never)) {
    /* The others wait at the barrier for this thread: pass it, then stop. */
    pthread_barrier_wait(&start_line);
    TREQUIRE(t->own && inc && m && never);
  }
  int zero = 0, out[N];
  size_t g = N;
  clEnqueueFillBuffer(t->own, m, &zero, sizeof zero, 0, sizeof out, 0, NULL, NULL);
  clEnqueueFillBuffer(t->own, never, &zero, sizeof zero, 0, sizeof out, 0, NULL, NULL);
  TCHECK_EQ(clFinish(t->own), CL_SUCCESS);
  TCHECK_EQ(clSetEventCallback(t->gate, CL_COMPLETE, count_complete, &gate_callbacks), CL_SUCCESS);

  cl_event k, kbad, waits[2] = {t->gate, t->mine};
  clSetKernelArg(inc, 0, sizeof m, &m);
  TCHECK_EQ(
      clEnqueueNDRangeKernel(t->id % 2 ? queue : t->own, inc, 1, NULL, &g, NULL, 2, waits, &k),
      CL_SUCCESS);
  TCHECK_EQ(clSetEventCallback(k, CL_COMPLETE, count_complete, &kernel_callbacks), CL_SUCCESS);
  clSetKernelArg(inc, 0, sizeof never, &never);
  TCHECK_EQ(clEnqueueNDRangeKernel(ooq, inc, 1, NULL, &g, NULL, 1, &t->bad, &kbad), CL_SUCCESS);
  TCHECK_EQ(clSetEventCallback(kbad, CL_COMPLETE, count_error, &error_callbacks), CL_SUCCESS);

  /* All enqueued: one thread opens the shared gate; each completes its
   * neighbour's event and fails the neighbour's other one. */
  if (pthread_barrier_wait(&start_line) == PTHREAD_BARRIER_SERIAL_THREAD)
    TCHECK_EQ(clSetUserEventStatus(t->gate, CL_COMPLETE), CL_SUCCESS);
  struct thread *next = &threads[(t->id + 1) % NTHREADS];
  TCHECK_EQ(clSetUserEventStatus(next->mine, CL_COMPLETE), CL_SUCCESS);
  TCHECK_EQ(clSetUserEventStatus(next->bad, -77), CL_SUCCESS);

  TCHECK_EQ(clWaitForEvents(1, &k), CL_SUCCESS);
  TCHECK_EQ(event_status(k), CL_COMPLETE);
  TCHECK_EQ(clWaitForEvents(1, &kbad), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  TCHECK(event_status(kbad) < 0);
  TCHECK_EQ(clEnqueueReadBuffer(t->own, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
  TCHECK(all_equal(out, N, 1));
  /* The kernel behind the failed event never ran. */
  TCHECK_EQ(clEnqueueReadBuffer(t->own, never, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
            CL_SUCCESS);
  TCHECK(all_equal(out, N, 0));
  clReleaseEvent(k);
  clReleaseEvent(kbad);
  clReleaseMemObject(m);
  clReleaseMemObject(never);
  clReleaseKernel(inc);
  clReleaseCommandQueue(t->own);
  return NULL;
}

static void user_events_and_callbacks(void) {
  cl_int err;
  cl_event gate = clCreateUserEvent(context, &err);
  REQUIRE(gate);
  atomic_store(&gate_callbacks, 0);
  atomic_store(&kernel_callbacks, 0);
  atomic_store(&error_callbacks, 0);
  for (int i = 0; i < NTHREADS; i++) {
    threads[i].gate = gate;
    threads[i].mine = clCreateUserEvent(context, &err);
    threads[i].bad = clCreateUserEvent(context, &err);
    REQUIRE(threads[i].mine && threads[i].bad);
  }
  run_threads(user_events_thread);
  CHECK_EQ_INT(event_status(gate), CL_COMPLETE);
  CHECK_EQ_INT(wait_count(&gate_callbacks, NTHREADS), NTHREADS);
  CHECK_EQ_INT(wait_count(&kernel_callbacks, NTHREADS), NTHREADS);
  CHECK_EQ_INT(wait_count(&error_callbacks, NTHREADS), NTHREADS);
  for (int i = 0; i < NTHREADS; i++) {
    CHECK_EQ_INT(event_status(threads[i].mine), CL_COMPLETE);
    CHECK_EQ_INT(event_status(threads[i].bad), -77);
    clReleaseEvent(threads[i].mine);
    clReleaseEvent(threads[i].bad);
  }
  clReleaseEvent(gate);
}

/* ---- clFinish, markers, barriers, queue and context references ------------ */

/* Threads enqueue on the shared queues and call clFinish on them at the same
 * time; each clFinish must return only after everything this thread enqueued
 * before it. Queues are created and released in a loop meanwhile, and the
 * shared queue is retained and released. */
static void *finish_thread(void *arg) {
  struct thread *t = arg;
  cl_int err;
  pthread_barrier_wait(&start_line);
  cl_kernel inc = clCreateKernel(shared_program, "inc", &err);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  TREQUIRE(inc && m);
  int v = t->id, out[N];
  size_t g = N;
  clSetKernelArg(inc, 0, sizeof m, &m);
  TCHECK_EQ(clEnqueueFillBuffer(queue, m, &v, sizeof v, 0, sizeof out, 0, NULL, NULL), CL_SUCCESS);
  TCHECK_EQ(clFinish(queue), CL_SUCCESS);
  for (int r = 0; r < 10; r++) {
    cl_command_queue q = r % 2 ? queue : ooq;
    clRetainCommandQueue(q);
    TCHECK_EQ(clEnqueueNDRangeKernel(q, inc, 1, NULL, &g, NULL, 0, NULL, NULL), CL_SUCCESS);
    if (q == ooq) {
      /* Barriers from several threads at once on the shared out-of-order
       * queue, between their kernels. */
      TCHECK_EQ(clEnqueueBarrierWithWaitList(ooq, 0, NULL, NULL), CL_SUCCESS);
    }
    cl_event mk;
    TCHECK_EQ(clEnqueueMarkerWithWaitList(q, 0, NULL, &mk), CL_SUCCESS);
    TCHECK_EQ(clFinish(q), CL_SUCCESS);
    TCHECK_EQ(event_status(mk), CL_COMPLETE);
    clReleaseEvent(mk);
    clReleaseCommandQueue(q);

    cl_command_queue extra = clCreateCommandQueue(
        context, device, r % 3 ? CL_QUEUE_PROFILING_ENABLE : CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        &err);
    TCHECK(extra != NULL);
    if (extra) {
      TCHECK_EQ(clEnqueueMarkerWithWaitList(extra, 0, NULL, NULL), CL_SUCCESS);
      TCHECK_EQ(clReleaseCommandQueue(extra), CL_SUCCESS);
    }
  }
  TCHECK_EQ(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
  TCHECK(all_equal(out, N, t->id + 10));
  clReleaseMemObject(m);
  clReleaseKernel(inc);
  return NULL;
}

static cl_uint refs_of_context(void) {
  cl_uint n = 0;
  clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
  return n;
}

/* What the main thread's own objects hold on the context (set in main). */
static cl_uint base_context_refs;

/* Waits (bounded) for the context's references to drop to `want`: a released
 * queue lives on until its last command has completed, and an event
 * completes (releasing its queue) just after a waiter has seen it complete. */
static cl_uint settled_context_refs(cl_uint want) {
  for (int i = 0; i < 2000 && refs_of_context() != want; i++)
    sleep_ms(1);
  return refs_of_context();
}

static void finish_and_markers(void) {
  /* Nothing of the earlier cases may keep a reference. */
  CHECK_EQ_INT(settled_context_refs(base_context_refs), base_context_refs);
  run_threads(finish_thread);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(ooq), CL_SUCCESS);
  /* Every queue the threads made is gone again. */
  CHECK_EQ_INT(settled_context_refs(base_context_refs), base_context_refs);
  /* Completed events drop their hold on the queue just after clFinish has
   * seen them complete: wait (bounded) for that too. */
  cl_uint qrefs = 0;
  for (int i = 0; i < 2000; i++) {
    clGetCommandQueueInfo(queue, CL_QUEUE_REFERENCE_COUNT, sizeof qrefs, &qrefs, NULL);
    if (qrefs == 1) break;
    sleep_ms(1);
  }
  CHECK_EQ_INT(qrefs, 1);
}

/* ---- waits that run the kernels they wait for --------------------------- */

/* clFinish and clWaitForEvents run kernels on the waiting thread when no
 * compute unit has taken them yet. Threads with small stacks (work-groups
 * run on a stack of the runtime's) wait at once for chains of kernels on
 * queues of their own and on the shared in-order queue; a kernel with a
 * barrier keeps a private array across it, and uses __local memory. */
static const char *waits_src =
    "__kernel void step(__global uint *a, uint k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  a[i] = a[i] * 3u + k;\n"
    "}\n"
    "__kernel void stage(__global uint *a, __local uint *tmp) {\n"
    "  size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0);\n"
    "  uint priv[512];\n"
    "  for (int j = 0; j < 512; j++) priv[j] = a[i] + (uint)j;\n"
    "  tmp[l] = a[i];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  uint s = 0;\n"
    "  for (int j = 0; j < 512; j += 64) s += priv[(j + (int)l) % 512];\n"
    "  a[i] = tmp[n - 1 - l] + s;\n"
    "}\n";
static cl_program waits_program;
enum { WAIT_ROUNDS = 40, WAIT_STEPS = 5, WAIT_LOCAL = 64 };

static void *waits_thread(void *arg) {
  struct thread *t = arg;
  cl_int err;
  pthread_barrier_wait(&start_line);
  cl_command_queue own = clCreateCommandQueue(context, device, 0, &err);
  cl_kernel step = clCreateKernel(waits_program, "step", &err);
  cl_kernel stage = clCreateKernel(waits_program, "stage", &err);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(cl_uint), NULL, &err);
  TREQUIRE(own && step && stage && m);
  clSetKernelArg(step, 0, sizeof m, &m);
  clSetKernelArg(stage, 0, sizeof m, &m);
  clSetKernelArg(stage, 1, WAIT_LOCAL * sizeof(cl_uint), NULL);
  size_t global = N, local = WAIT_LOCAL, one = 1;
  for (int round = 0; round < WAIT_ROUNDS; round++) {
    cl_command_queue q = round % 4 == 3 ? queue : own;
    cl_uint start = (cl_uint)(t->id * 1000 + round), expect[N], out[N];
    for (int i = 0; i < N; i++)
      expect[i] = start;
    TCHECK_EQ(clEnqueueFillBuffer(q, m, &start, sizeof start, 0, sizeof out, 0, NULL, NULL),
              CL_SUCCESS);
    cl_event last = NULL;
    for (cl_uint k = 0; k < WAIT_STEPS; k++) {
      cl_uint key = k + 1;
      /* Some steps are one work-item wide: only a[0] changes. */
      size_t *size = (round + k) % 3 ? &global : &one;
      TCHECK_EQ(clSetKernelArg(step, 1, sizeof key, &key), CL_SUCCESS);
      TCHECK_EQ(clEnqueueNDRangeKernel(q, step, 1, NULL, size, NULL, 0, NULL, NULL), CL_SUCCESS);
      for (size_t i = 0; i < *size; i++)
        expect[i] = expect[i] * 3u + key;
    }
    TCHECK_EQ(clEnqueueNDRangeKernel(q, stage, 1, NULL, &global, &local, 0, NULL, &last),
              CL_SUCCESS);
    cl_uint staged[N];
    for (int i = 0; i < N; i++) {
      int l = i % WAIT_LOCAL, base = i - l;
      cl_uint sum = 0;
      for (int j = 0; j < 512; j += 64)
        sum += expect[i] + (cl_uint)((j + l) % 512);
      staged[i] = expect[base + WAIT_LOCAL - 1 - l] + sum;
    }
    if (round % 2) {
      TCHECK_EQ(clFinish(q), CL_SUCCESS);
    } else {
      TCHECK_EQ(clWaitForEvents(1, &last), CL_SUCCESS);
    }
    TCHECK_EQ(event_status(last), CL_COMPLETE);
    clReleaseEvent(last);
    TCHECK_EQ(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
    TCHECK(!memcmp(out, staged, sizeof out));
  }
  clReleaseMemObject(m);
  clReleaseKernel(step);
  clReleaseKernel(stage);
  clReleaseCommandQueue(own);
  return NULL;
}

static void waits_that_run_kernels(void) {
  cl_int err;
  waits_program = build_program(waits_src, NULL, &err);
  REQUIRE(waits_program);
  atomic_store(&thread_failures, 0);
  pthread_barrier_init(&start_line, NULL, NTHREADS);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  int started = 0;
  for (int i = 0; i < NTHREADS; i++) {
    threads[i].id = i;
    if (pthread_create(&threads[i].handle, &attr, waits_thread, &threads[i]) != 0) break;
    started++;
  }
  pthread_attr_destroy(&attr);
  REQUIRE(started == NTHREADS);
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(threads[i].handle, NULL);
  pthread_barrier_destroy(&start_line);
  CHECK_EQ_INT(atomic_load(&thread_failures), 0);
  clReleaseProgram(waits_program);
}

/* Removes the private kernel cache directory this program used. */
static void remove_cache_dir(void) {
  DIR *d = opendir(cache_dir);
  if (!d) return;
  struct dirent *e;
  char path[512];
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(cache_dir);
}

int main(void) {
  /* An empty kernel cache of its own, so that the threads of `builds`
   * really compile, and store the same entry together, on every run. */
  if (!mkdtemp(cache_dir)) {
    printf("not ok setup: mkdtemp\n");
    return 1;
  }
  setenv("AQUILA_CACHE_DIR", cache_dir, 1);
  api_setup();
  cl_int err;
  ooq = clCreateCommandQueue(context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  shared_program = build_program(shared_src, NULL, &err);
  if (!ooq || !shared_program) {
    printf("not ok setup: out-of-order queue or shared program (%d)\n", err);
    remove_cache_dir();
    return 1;
  }
  base_context_refs = refs_of_context();
  RUN(builds);
  RUN(buffers);
  RUN(kernels_across_queues);
  RUN(user_events_and_callbacks);
  RUN(finish_and_markers);
  RUN(waits_that_run_kernels);
  clReleaseProgram(shared_program);
  clReleaseCommandQueue(ooq);
  api_teardown();
  remove_cache_dir();
  CHECK_EXIT();
}
