/* The last ways a program can hurt the runtime (issue 28), beside
 * test_misuse's: sixteen threads that set one kernel's arguments while
 * they enqueue it; callbacks that enqueue more work or block in clFinish
 * (which the specification leaves undefined: it must still neither hang
 * nor crash); a queue released while its commands run; a process that
 * exits with commands in flight; memory allocated until it runs out. Each
 * runs under make check-asan and make check-tsan too. */
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"

static const char *src = "__kernel void add(__global int *m, int v) {\n"
                         "  atomic_add(&m[get_global_id(0)], v); /* two queues may overlap */\n"
                         "}\n"
                         "__kernel void slow(__global int *m, int rounds) {\n"
                         "  int x = m[get_global_id(0)];\n"
                         "  for (int r = 0; r < rounds; r++) x = x * 3 + 1;\n"
                         "  m[get_global_id(0)] = x;\n"
                         "}\n";

static cl_program program;

static cl_kernel kernel(const char *name) {
  cl_int err;
  return clCreateKernel(program, name, &err);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

/* Waits (bounded, 20 s) until *counter reaches want; returns its value. */
static int wait_count(atomic_int *counter, int want) {
  for (int i = 0; i < 2000 && atomic_load(counter) < want; i++) sleep_ms(10);
  return atomic_load(counter);
}

/* ---- sixteen threads, one kernel ------------------------------------------ */

enum { THREADS = 16, ROUNDS = 50, ITEMS = 64 };

static cl_kernel shared;
static cl_mem buffers[THREADS];
static pthread_barrier_t start_line;
static atomic_int thread_errors;

/* Each round sets the shared kernel's buffer to the thread's own and
 * enqueues it: the specification makes two threads' clSetKernelArg on one
 * kernel the application's race, so a launch may take another thread's
 * buffer, but it takes exactly one (never half of two addresses). Between
 * rounds the threads wait for events, release them, retain and release the
 * kernel and read its information. */
static void *kernel_sharer(void *arg) {
  int id = (int)(intptr_t)arg;
  pthread_barrier_wait(&start_line);
  size_t global = ITEMS;
  int one = 1;
  for (int r = 0; r < ROUNDS; r++) {
    cl_int err = clSetKernelArg(shared, 0, sizeof buffers[id], &buffers[id]);
    err |= clSetKernelArg(shared, 1, sizeof one, &one);
    cl_event e = NULL;
    err |= clEnqueueNDRangeKernel(queue, shared, 1, NULL, &global, NULL, 0, NULL,
                                  r % 3 == 0 ? &e : NULL);
    if (e) {
      if (r % 2) err |= clWaitForEvents(1, &e);
      err |= clReleaseEvent(e);
    }
    if (r % 7 == 3) {
      err |= clRetainKernel(shared);
      cl_uint args = 0;
      err |= clGetKernelInfo(shared, CL_KERNEL_NUM_ARGS, sizeof args, &args, NULL);
      err |= clReleaseKernel(shared);
    }
    if (r % 11 == 5) err |= clFlush(queue);
    /* A wrong index fails alone, without disturbing the others. */
    if (clSetKernelArg(shared, 9, sizeof one, &one) != CL_INVALID_ARG_INDEX) err |= 1;
    if (err != CL_SUCCESS) atomic_fetch_add(&thread_errors, 1);
  }
  if (clFinish(queue) != CL_SUCCESS) atomic_fetch_add(&thread_errors, 1);
  return NULL;
}

static void sixteen_threads_one_kernel(void) {
  cl_int err;
  shared = kernel("add");
  REQUIRE(shared);
  for (int i = 0; i < THREADS; i++) {
    buffers[i] = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                ITEMS * sizeof(int), (int[ITEMS]){0}, &err);
    REQUIRE(buffers[i]);
  }
  atomic_store(&thread_errors, 0);
  pthread_barrier_init(&start_line, NULL, THREADS);
  pthread_t tid[THREADS];
  for (int i = 0; i < THREADS; i++)
    REQUIRE(!pthread_create(&tid[i], NULL, kernel_sharer, (void *)(intptr_t)i));
  for (int i = 0; i < THREADS; i++) pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&start_line);
  CHECK_EQ_INT(atomic_load(&thread_errors), 0);
  /* Every launch added 1 to each element of exactly one buffer. */
  long total = 0;
  for (int i = 0; i < THREADS; i++) {
    int r[ITEMS];
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, buffers[i], CL_TRUE, 0, sizeof r, r, 0, NULL, NULL),
                 CL_SUCCESS);
    for (int k = 1; k < ITEMS; k++) CHECK_EQ_INT(r[k], r[0]);
    total += r[0];
    clReleaseMemObject(buffers[i]);
  }
  CHECK_EQ_INT(total, THREADS * ROUNDS);
  clReleaseKernel(shared);
}

/* ---- callbacks that enqueue, and that block ------------------------------ */

static cl_kernel adder;
static cl_mem counter;
static atomic_int callbacks_done;

/* Enqueues one more launch from the callback of the previous one, until
 * CHAIN launches ran; every fourth link waits for its own launch with
 * clFinish inside the callback. */
enum { CHAIN = 24 };
static void CL_CALLBACK chain_link(cl_event e, cl_int status, void *data) {
  int link = (int)(intptr_t)data;
  if (status == CL_COMPLETE && link + 1 < CHAIN) {
    size_t global = ITEMS;
    cl_event next = NULL;
    if (clEnqueueNDRangeKernel(queue, adder, 1, NULL, &global, NULL, 0, NULL, &next) ==
        CL_SUCCESS) {
      clSetEventCallback(next, CL_COMPLETE, chain_link, (void *)(intptr_t)(link + 1));
      clReleaseEvent(next);
      if (link % 4 == 0) clFinish(queue);
    }
  }
  atomic_fetch_add(&callbacks_done, 1);
}

static void CL_CALLBACK finish_in_callback(cl_event e, cl_int status, void *data) {
  cl_command_queue q = data;
  clFinish(q);
  int r = 0;
  clEnqueueReadBuffer(q, counter, CL_TRUE, 0, sizeof r, &r, 0, NULL, NULL);
  atomic_fetch_add(&callbacks_done, 1);
}

static void CL_CALLBACK destructor_enqueues(cl_mem m, void *data) {
  size_t global = ITEMS;
  clEnqueueNDRangeKernel(queue, adder, 1, NULL, &global, NULL, 0, NULL, NULL);
  clFinish(queue);
  atomic_fetch_add(&callbacks_done, 1);
}

static void CL_CALLBACK build_enqueues(cl_program p, void *data) {
  size_t global = ITEMS;
  clEnqueueNDRangeKernel(queue, adder, 1, NULL, &global, NULL, 0, NULL, NULL);
  clFinish(queue);
  atomic_fetch_add(&callbacks_done, 1);
}

static void callbacks_enqueue_and_block(void) {
  cl_int err;
  adder = kernel("add");
  counter = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, ITEMS * sizeof(int),
                           (int[ITEMS]){0}, &err);
  REQUIRE(adder && counter);
  int one = 1;
  CHECK_EQ_INT(clSetKernelArg(adder, 0, sizeof counter, &counter), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(adder, 1, sizeof one, &one), CL_SUCCESS);
  size_t global = ITEMS;
  int launches = 0;

  /* A chain of launches, each enqueued by the callback of the one before. */
  atomic_store(&callbacks_done, 0);
  cl_event first;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, adder, 1, NULL, &global, NULL, 0, NULL, &first),
               CL_SUCCESS);
  CHECK_EQ_INT(clSetEventCallback(first, CL_COMPLETE, chain_link, (void *)(intptr_t)0),
               CL_SUCCESS);
  clReleaseEvent(first);
  CHECK_EQ_INT(wait_count(&callbacks_done, CHAIN), CHAIN);
  launches += CHAIN;

  /* Callbacks that block in clFinish and a blocking read: on a marker, a
   * kernel and a host command (the thread that completes each differs),
   * on the same queue and on another one. */
  cl_command_queue other = clCreateCommandQueue(context, device, 0, &err);
  REQUIRE(other);
  atomic_store(&callbacks_done, 0);
  cl_event events[4];
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, adder, 1, NULL, &global, NULL, 0, NULL, &events[0]),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueMarkerWithWaitList(queue, 0, NULL, &events[1]), CL_SUCCESS);
  int zero = 0;
  cl_mem scratch = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  REQUIRE(scratch);
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, scratch, &zero, sizeof zero, 0, 64, 0, NULL, &events[2]),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(other, adder, 1, NULL, &global, NULL, 0, NULL, &events[3]),
               CL_SUCCESS);
  launches += 2;
  for (int i = 0; i < 4; i++) {
    CHECK_EQ_INT(clSetEventCallback(events[i], CL_COMPLETE, finish_in_callback,
                                    i == 3 ? (void *)queue : (void *)other),
                 CL_SUCCESS);
    clReleaseEvent(events[i]);
  }
  CHECK_EQ_INT(wait_count(&callbacks_done, 4), 4);

  /* A memory object's destructor and a build's callback that enqueue and
   * wait. */
  atomic_store(&callbacks_done, 0);
  CHECK_EQ_INT(clSetMemObjectDestructorCallback(scratch, destructor_enqueues, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseMemObject(scratch), CL_SUCCESS);
  launches++;
  cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  REQUIRE(p);
  CHECK_EQ_INT(clBuildProgram(p, 1, &device, "", build_enqueues, NULL), CL_SUCCESS);
  launches++;
  CHECK_EQ_INT(wait_count(&callbacks_done, 2), 2);
  clReleaseProgram(p);

  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(other), CL_SUCCESS);
  int r[ITEMS];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, counter, CL_TRUE, 0, sizeof r, r, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(r[0], launches);
  CHECK_EQ_INT(r[ITEMS - 1], launches);
  clReleaseCommandQueue(other);
  clReleaseMemObject(counter);
  clReleaseKernel(adder);
}

/* ---- a queue released while its commands run ------------------------------ */

static void queue_released_while_commands_run(void) {
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(context, device, 0, &err);
  cl_kernel k = kernel("slow");
  enum { N = 4096 };
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof(int),
                            (int[N]){0}, &err);
  REQUIRE(q && k && m);
  int rounds = 20000;
  clSetKernelArg(k, 0, sizeof m, &m);
  clSetKernelArg(k, 1, sizeof rounds, &rounds);
  size_t global = N;
  cl_event last = NULL;
  for (int i = 0; i < 8; i++) {
    if (last) clReleaseEvent(last);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &last), CL_SUCCESS);
  }
  int host[N];
  CHECK_EQ_INT(clEnqueueReadBuffer(q, m, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL),
               CL_SUCCESS);
  cl_event read_done;
  CHECK_EQ_INT(clEnqueueMarkerWithWaitList(q, 0, NULL, &read_done), CL_SUCCESS);
  /* Everything but the events goes at once. */
  CHECK_EQ_INT(clReleaseCommandQueue(q), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseKernel(k), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseMemObject(m), CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &read_done), CL_SUCCESS);
  cl_int status = 1;
  clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  CHECK_EQ_INT(status, CL_COMPLETE);
  /* 8 x 20000 rounds of x = 3x + 1 from 0, modulo 2^32. */
  unsigned x = 0;
  for (int i = 0; i < 8 * rounds; i++) x = x * 3u + 1u;
  CHECK_EQ_INT((unsigned)host[0], x);
  CHECK_EQ_INT((unsigned)host[N - 1], x);
  clReleaseEvent(last);
  clReleaseEvent(read_done);
}

/* ---- a process that exits with commands in flight ------------------------- */

/* The child's ways to leave, with kernels running and more queued: return
 * from main holding everything (0), or having released everything (1),
 * and exit() from an event callback, on a runtime thread (2). */
static void CL_CALLBACK exit_from_callback(cl_event e, cl_int status, void *data) {
  exit(0);
}

static int run_exiting_child(int how) {
  api_setup();
  cl_int err;
  program = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  if (!program || clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS) return 2;
  cl_kernel k = kernel("slow");
  enum { N = 1 << 16 };
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  if (!k || !m) return 3;
  int rounds = 50000;
  clSetKernelArg(k, 0, sizeof m, &m);
  clSetKernelArg(k, 1, sizeof rounds, &rounds);
  size_t global = N;
  cl_event first = NULL;
  for (int i = 0; i < 50; i++)
    clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, i == 0 ? &first : NULL);
  clFlush(queue);
  if (how == 2) {
    /* exit() from the callback of the first kernel, on a runtime thread. */
    clSetEventCallback(first, CL_COMPLETE, exit_from_callback, NULL);
    sleep(60); /* the callback exits first */
    return 4;
  }
  clWaitForEvents(1, &first);
  if (how == 1) {
    clReleaseKernel(k);
    clReleaseMemObject(m);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
  }
  return 0; /* with 49 kernels of about 20 ms each still to run */
}

static void exit_with_commands_in_flight(void) {
  for (int how = 0; how < 3; how++) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      char arg[16];
      snprintf(arg, sizeof arg, "%d", how);
      execl("/proc/self/exe", "test_robust", "--exiting-child", arg, (char *)NULL);
      _exit(127);
    }
    /* Bounded: 30 s for a child that should leave at once. */
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 300 && (done = waitpid(pid, &status, WNOHANG)) == 0; i++) sleep_ms(100);
    if (done == 0) {
      printf("  child %d (way %d) still running after 30 s: killed\n", (int)pid, how);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    CHECK(done == pid);
    if (WIFSIGNALED(status)) printf("  way %d: the child died of signal %d\n", how, WTERMSIG(status));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

/* ---- __local memory overrun ----------------------------------------------- */

/* Writes past __local memory, near its end and past it, launched back to
 * back with the host allocating between launches (issue 45's program: a
 * static array of 8 written 64 ints a work-item; a __local argument of
 * CL_KERNEL_WORK_GROUP_SIZE ints written to 4x and 16x its length, which
 * passes the device's local memory): each command completes, or ends with
 * CL_OUT_OF_RESOURCES where it left the group segment; the process, its
 * heap and later kernels are unharmed (and under make check-asan, nothing
 * of the runtime's is overwritten). */
static void local_overrun_past_the_segment_fails_the_command(void) {
  const char *source = "__kernel void small(__global int *out) {\n"
                       "  __local int s[8];\n"
                       "  int l = get_local_id(0);\n"
                       "  for (int i = 0; i < 64; i++) s[8 + l * 64 + i] = l + i;\n"
                       "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                       "  out[get_global_id(0)] = s[8 + l * 64];\n"
                       "}\n"
                       "__kernel void arg(__global int *out, __local int *t, int times) {\n"
                       "  int l = get_local_id(0), n = get_local_size(0);\n"
                       "  for (int i = 0; i < times; i++) t[l + i * n] = l * i;\n"
                       "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                       "  out[get_global_id(0)] = t[l];\n"
                       "}\n";
#ifdef __SANITIZE_THREAD__
  /* ThreadSanitizer kills a process whose SIGSEGV handler leaves by
   * siglongjmp (see test_misuse's kernel_fault_fails_its_command): these
   * overruns' faults are trapped that way. Checked in the plain and ASan
   * builds. */
  return;
#endif
  cl_int err;
  cl_program p = build_program(source, "", &err);
  REQUIRE(p && err == CL_SUCCESS);
  cl_kernel small = clCreateKernel(p, "small", &err), arg = clCreateKernel(p, "arg", &err);
  REQUIRE(small && arg);
  size_t wg = 0;
  CHECK_EQ_INT(
      clGetKernelWorkGroupInfo(arg, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
      CL_SUCCESS);
  REQUIRE(wg >= 64);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, wg * 16 * sizeof(cl_int), NULL, &err);
  REQUIRE(out);
  clSetKernelArg(small, 0, sizeof out, &out);
  clSetKernelArg(arg, 0, sizeof out, &out);
  clSetKernelArg(arg, 1, wg * sizeof(cl_int), NULL);
  enum { LAUNCHES = 20 };
  cl_event events[2 * LAUNCHES];
  int n = 0;
  size_t small_global = 1024, small_local = 64, arg_global = wg * 4;
  for (int r = 0; r < LAUNCHES; r++) {
    int times = r % 2 ? 16 : 4;
    clSetKernelArg(arg, 2, sizeof times, &times);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, small, 1, NULL, &small_global, &small_local, 0,
                                        NULL, &events[n++]),
                 CL_SUCCESS);
    CHECK_EQ_INT(
        clEnqueueNDRangeKernel(queue, arg, 1, NULL, &arg_global, &wg, 0, NULL, &events[n++]),
        CL_SUCCESS);
    void *block = malloc(1000 + (size_t)r * 100);
    REQUIRE(block);
    memset(block, r, 1000);
    free(block);
  }
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  int completed = 0, faulted = 0;
  for (int i = 0; i < n; i++) {
    cl_int status = 1;
    clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    completed += status == CL_COMPLETE;
    faulted += status == CL_OUT_OF_RESOURCES;
    clReleaseEvent(events[i]);
  }
  CHECK_EQ_INT(completed + faulted, n);
  /* 16x an argument of the device's most work-items is past any segment. */
  CHECK(faulted >= LAUNCHES / 2);
  for (int i = 1; i < 2000; i++) {
    void *block = malloc((size_t)i * 37);
    CHECK(block != NULL);
    memset(block, i, (size_t)i * 37);
    free(block);
  }
  clReleaseMemObject(out);
  clReleaseKernel(small);
  clReleaseKernel(arg);
  clReleaseProgram(p);
  /* A later kernel computes as before. */
  cl_kernel k = kernel("add");
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 64 * sizeof(int),
                            (int[64]){0}, &err);
  REQUIRE(k && m);
  int three = 3, r[64];
  size_t items = 64;
  clSetKernelArg(k, 0, sizeof m, &m);
  clSetKernelArg(k, 1, sizeof three, &three);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &items, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof r, r, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(r[63], 3);
  clReleaseMemObject(m);
  clReleaseKernel(k);
}

/* ---- a helper that ends with its application ---------------------------- */

/* Builds a program whose machine code takes many seconds (20,000 small
 * functions, each called twice: about 25 s on the 2-core development
 * machine), with the kernel cache off, and says on BUILT_FD when
 * clBuildProgram has returned; the parent kills it in the kernel's first
 * launch, while the helper makes the machine code. */
enum { BUILT_FD = 9 };

static int run_slow_build_child(void) {
  setenv("AQUILA_CACHE", "0", 1);
  api_setup();
  enum { FUNCTIONS = 20000 };
  size_t cap = (size_t)FUNCTIONS * 128 + 4096, len = 0;
  char *s = malloc(cap);
  if (!s) return 2;
  for (int i = 0; i < FUNCTIONS; i++)
    len += (size_t)snprintf(
        s + len, cap - len,
        "float f%d(float x, float y) { return x * %d.5f + y / (x + %d.25f); }\n", i, i, i);
  len += (size_t)snprintf(s + len, cap - len,
                          "__kernel void k(__global float *m) {\n"
                          "  float x = m[get_global_id(0)], y = x;\n");
  for (int i = 0; i < FUNCTIONS; i++)
    len += (size_t)snprintf(s + len, cap - len, "  x = f%d(x, y); y = f%d(y, x);\n", i,
                            FUNCTIONS - 1 - i);
  snprintf(s + len, cap - len, "  m[get_global_id(0)] = x + y;\n}\n");
  cl_int err;
  const char *source = s;
  cl_program p = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  if (!p) return 3;
  if (clBuildProgram(p, 1, &device, "", NULL, NULL) != CL_SUCCESS) return 4;
  if (write(BUILT_FD, "b", 1) != 1) return 5;
  cl_kernel k = clCreateKernel(p, "k", &err);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(float), NULL, &err);
  if (!k || !m) return 6;
  clSetKernelArg(k, 0, sizeof m, &m);
  size_t items = 64;
  /* The launch makes the machine code. */
  clEnqueueNDRangeKernel(queue, k, 1, NULL, &items, NULL, 0, NULL, NULL);
  return 0; /* too soon: the parent kills this process mid-build */
}

/* Fields of /proc/PID/stat: state, parent, process group; false when the
 * process is gone. */
static bool process_stat(pid_t pid, char *state, pid_t *parent, pid_t *group) {
  char line[512];
  const char *p = proc_stat_from_state(pid, line, sizeof line);
  int pp = 0, pg = 0;
  if (!p || sscanf(p, "%c %d %d", state, &pp, &pg) != 3) return false;
  *parent = pp;
  *group = pg;
  return true;
}

/* The processor time a process has used, in clock ticks (0 when gone). */
static long process_ticks(pid_t pid) {
  long utime = 0, stime = 0;
  if (!proc_stat_field(pid, 14, &utime) || !proc_stat_field(pid, 15, &stime)) return 0;
  return utime + stime;
}

/* The compiler helper that a process started, or 0. */
static pid_t helper_of(pid_t parent) {
  DIR *proc = opendir("/proc");
  pid_t found = 0;
  for (struct dirent *e; proc && (e = readdir(proc));) {
    pid_t pid = (pid_t)atoi(e->d_name);
    char state, comm[64] = "", path[64];
    pid_t pp, pg;
    if (pid <= 0 || !process_stat(pid, &state, &pp, &pg) || pp != parent) continue;
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "r");
    if (f) {
      if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
      fclose(f);
    }
    if (!strncmp(comm, "aquila-compiler", 15) &&
        (!found || process_ticks(pid) > process_ticks(found)))
      found = pid;
  }
  if (proc) closedir(proc);
  return found;
}

/* Whether a live (not zombie) process of the group remains. */
static bool group_alive(pid_t group) {
  DIR *proc = opendir("/proc");
  bool alive = false;
  for (struct dirent *e; proc && !alive && (e = readdir(proc));) {
    pid_t pid = (pid_t)atoi(e->d_name);
    char state;
    pid_t pp, pg;
    if (pid > 0 && process_stat(pid, &state, &pp, &pg) && pg == group && state != 'Z') alive = true;
  }
  if (proc) closedir(proc);
  return alive;
}

/* An application killed mid-build (a time limit, a crash): its compiler
 * helper, and the clang driver or linker under it, end within seconds
 * instead of finishing a build nobody will read. The child says on
 * BUILT_FD when clBuildProgram has returned; its kernel's first launch then
 * makes the machine code, the long part, in which it is killed. */
static void helper_ends_with_its_application(void) {
  int built[2];
  REQUIRE(pipe(built) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(built[1], BUILT_FD);
    execl("/proc/self/exe", "test_robust", "--slow-build-child", (char *)NULL);
    _exit(127);
  }
  close(built[1]);
  struct pollfd p = {.fd = built[0], .events = POLLIN};
  char byte = 0;
  bool ready = poll(&p, 1, 120000) == 1 && read(built[0], &byte, 1) == 1;
  close(built[0]);
  pid_t helper = ready ? helper_of(pid) : 0;
  /* Killed once the helper has spent half a second on the machine code. */
  long start = process_ticks(helper), ticks = sysconf(_SC_CLK_TCK);
  for (int i = 0; i < 300 && helper && process_ticks(helper) < start + ticks / 2; i++)
    sleep_ms(100);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  REQUIRE(ready && helper > 0);
  /* Bounded: 10 s, where the machine code alone takes longer. */
  bool alive = true;
  for (int i = 0; i < 100 && (alive = group_alive(helper)); i++)
    sleep_ms(100);
  if (alive) {
    printf("  the helper %d outlived its application by 10 s: killed\n", (int)helper);
    kill(-helper, SIGKILL);
  }
  CHECK(!alive);
}

/* ---- memory that holds under pressure ------------------------------------ */

/* Run with AQUILA_GLOBAL_MEM_SIZE=256M: buffers of 32 MiB, each filled
 * (its pages touched), until an allocation fails; that must be the ninth,
 * with CL_MEM_OBJECT_ALLOCATION_FAILURE; then, with half of them freed,
 * allocation and kernels work again. Exit status: the failed check's
 * line, or 0. */
static int run_pressure_child(void) {
  api_setup();
  cl_ulong global = 0, max_alloc = 0;
  clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL);
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
  if (global != 256u << 20 || max_alloc != 128u << 20) return __LINE__ & 0x7f;
  enum { MB32 = 32 << 20, MOST = 64 };
  cl_mem held[MOST];
  int count = 0;
  cl_int err = CL_SUCCESS;
  char zero = 0;
  while (count < MOST) {
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, MB32, NULL, &err);
    if (!m) break;
    if (clEnqueueFillBuffer(queue, m, &zero, 1, 0, MB32, 0, NULL, NULL) != CL_SUCCESS)
      return __LINE__ & 0x7f;
    held[count++] = m;
  }
  clFinish(queue);
  if (count != 8 || err != CL_MEM_OBJECT_ALLOCATION_FAILURE) {
    printf("  %d buffers of 32 MiB, then error %d\n", count, err);
    return __LINE__ & 0x7f;
  }
  /* An image is device memory too. */
  cl_image_format format = {CL_RGBA, CL_UNSIGNED_INT8};
  if (clCreateImage2D(context, CL_MEM_READ_WRITE, &format, 1024, 1024, 0, NULL, &err) ||
      err != CL_MEM_OBJECT_ALLOCATION_FAILURE)
    return __LINE__ & 0x7f;
  for (int i = 0; i < count; i += 2) clReleaseMemObject(held[i]);
  program = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  if (!program || clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS)
    return __LINE__ & 0x7f;
  cl_kernel k = kernel("add");
  for (int i = 0; i < count; i += 2) {
    held[i] = clCreateBuffer(context, CL_MEM_READ_WRITE, MB32, NULL, &err);
    if (!held[i]) return __LINE__ & 0x7f;
  }
  int two = 2, r[4];
  clEnqueueFillBuffer(queue, held[0], &zero, 1, 0, MB32, 0, NULL, NULL);
  clSetKernelArg(k, 0, sizeof held[0], &held[0]);
  clSetKernelArg(k, 1, sizeof two, &two);
  size_t items = MB32 / sizeof(int);
  if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &items, NULL, 0, NULL, NULL) != CL_SUCCESS ||
      clEnqueueReadBuffer(queue, held[0], CL_TRUE, MB32 - sizeof r, sizeof r, r, 0, NULL, NULL) !=
          CL_SUCCESS ||
      r[3] != 2)
    return __LINE__ & 0x7f;
  for (int i = 0; i < count; i++) clReleaseMemObject(held[i]);
  clReleaseKernel(k);
  clReleaseProgram(program);
  api_teardown();
  return 0;
}

static void allocation_past_global_memory(void) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setenv("AQUILA_GLOBAL_MEM_SIZE", "256M", 1);
    execl("/proc/self/exe", "test_robust", "--pressure-child", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 600 && (done = waitpid(pid, &status, WNOHANG)) == 0; i++) sleep_ms(100);
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  CHECK(done == pid);
  if (WIFEXITED(status) && WEXITSTATUS(status))
    printf("  the child failed at test_robust.c line %d (modulo 128)\n", WEXITSTATUS(status));
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv) {
  if (argc > 2 && !strcmp(argv[1], "--exiting-child")) return run_exiting_child(atoi(argv[2]));
  if (argc > 1 && !strcmp(argv[1], "--pressure-child")) return run_pressure_child();
  if (argc > 1 && !strcmp(argv[1], "--slow-build-child")) return run_slow_build_child();
  api_setup();
  cl_int err;
  program = build_program(src, "", &err);
  if (!program) {
    printf("not ok setup: build\n");
    return 1;
  }
  RUN(sixteen_threads_one_kernel);
  RUN(callbacks_enqueue_and_block);
  RUN(queue_released_while_commands_run);
  RUN(exit_with_commands_in_flight);
  RUN(allocation_past_global_memory);
  RUN(local_overrun_past_the_segment_fails_the_command);
  RUN(helper_ends_with_its_application);
  clReleaseProgram(program);
  api_teardown();
  CHECK_EXIT();
}
