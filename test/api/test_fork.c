/* fork: a process that used OpenCL and forks (as Python's multiprocessing
 * does) goes on using it in the child, and the parent too. The children
 * build programs (with the kernel cache off, so through a compiler process
 * of their own) and run kernels on queues made before the fork and after
 * it; others fork while a kernel, or a native kernel on a scheduler worker,
 * of the parent is running, whose event must fail in the child rather than
 * leave a wait there hanging. The parent waits for each child with a time
 * limit: a hang fails the case instead of hanging `make check`. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"

#define N 1000

static const char *fill_src = "__kernel void fill(__global int *a, int m, int b) {\n"
                              "  size_t i = get_global_id(0);\n"
                              "  a[i] = (int)i * m + b;\n"
                              "}\n";

/* Spins until the host releases it (f[0]), after saying it started (f[1]);
 * then says it finished (f[2], atomic: a plain store may move above the
 * loop, which the compiler may assume ends). */
static const char *spin_src = "__kernel void spin(__global int *f) {\n"
                              "  atomic_xchg(&f[1], 1);\n"
                              "  while (atomic_or(&f[0], 0) == 0) {}\n"
                              "  atomic_xchg(&f[2], 7);\n"
                              "}\n";

static cl_kernel fill; /* built before any fork */

/* In a child: checks count into child_failures, its exit status. */
static int child_failures;
#define CHILD_CHECK(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      printf("  child %d: %s:%d: %s failed\n", (int)getpid(), __FILE__, __LINE__, #cond);          \
      child_failures++;                                                                            \
    }                                                                                              \
  } while (0)
#define CHILD_EXIT()                                                                               \
  do {                                                                                             \
    fflush(stdout);                                                                                \
    exit(child_failures ? 1 : 0);                                                                  \
  } while (0)

/* Seconds a child may take: well within run-tests.sh's limit per program. */
static int child_limit_s(void) {
  const char *e = getenv("AQUILA_TEST_TIMEOUT");
  int limit = e && atoi(e) > 0 ? atoi(e) : 300;
  return limit / 3 > 10 ? limit / 3 : 10;
}

/* The child's exit status (0: all its checks passed), or -1 when it was
 * still running after the limit (it is killed then). */
static int wait_child(pid_t pid) {
  int limit_ms = child_limit_s() * 1000;
  for (int waited = 0; waited < limit_ms; waited += 10) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      printf("  child killed by signal %d\n", WTERMSIG(status));
      return 128 + WTERMSIG(status);
    }
    if (r < 0 && errno != EINTR) return -2;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  printf("  child %d still running after %d s: killed\n", (int)pid, child_limit_s());
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

/* Runs k(a, m, b) over N items on q and checks the results; returns the
 * number of wrong values, or -1 when a call failed. */
static int run_fill(cl_command_queue q, cl_kernel k, int m, int b) {
  cl_int err;
  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  if (!buf) return -1;
  int out[N];
  size_t global = N;
  int bad = -1;
  if (clSetKernelArg(k, 0, sizeof buf, &buf) == CL_SUCCESS &&
      clSetKernelArg(k, 1, sizeof m, &m) == CL_SUCCESS &&
      clSetKernelArg(k, 2, sizeof b, &b) == CL_SUCCESS &&
      clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) == CL_SUCCESS &&
      clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL) == CL_SUCCESS) {
    bad = 0;
    for (int i = 0; i < N; i++)
      if (out[i] != i * m + b) bad++;
  }
  clReleaseMemObject(buf);
  return bad;
}

/* What a child checks after any fork: a program built in the child (by a
 * compiler process of its own: the cache is off), kernels run on a new
 * queue and on the queue made before the fork. */
static void child_uses_opencl(void) {
  setenv("AQUILA_CACHE", "0", 1);
  static const char *src = "__kernel void fill2(__global int *a, int m, int b) {\n"
                           "  size_t i = get_global_id(0);\n"
                           "  a[i] = (int)i * m + b;\n"
                           "}\n";
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &src, NULL, &err);
  CHILD_CHECK(p != NULL);
  if (!p) return;
  err = clBuildProgram(p, 1, &device, NULL, NULL, NULL);
  CHILD_CHECK(err == CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "fill2", &err);
  CHILD_CHECK(k != NULL);
  cl_command_queue q2 = clCreateCommandQueue(context, device, 0, &err);
  CHILD_CHECK(q2 != NULL);
  if (k && q2) {
    CHILD_CHECK(run_fill(q2, k, 3, 1) == 0);
    CHILD_CHECK(run_fill(queue, k, 5, 2) == 0);
    CHILD_CHECK(run_fill(queue, fill, 7, 3) == 0);
    CHILD_CHECK(run_fill(q2, fill, 11, 4) == 0);
  }
  if (q2) CHILD_CHECK(clFinish(q2) == CL_SUCCESS);
  CHILD_CHECK(clFinish(queue) == CL_SUCCESS);
  if (q2) clReleaseCommandQueue(q2);
  if (k) clReleaseKernel(k);
  clReleaseProgram(p);
}

/* A kernel ran and finished; then the process forks. */
static void fork_after_kernel(void) {
  REQUIRE(run_fill(queue, fill, 2, 1) == 0);
  fflush(stdout);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    child_uses_opencl();
    CHILD_EXIT();
  }
  CHECK_EQ_INT(wait_child(pid), 0);
  /* The parent is unchanged. */
  CHECK(run_fill(queue, fill, 3, 5) == 0);
}

/* Two children at once, each forking again. */
static void fork_twice(void) {
  fflush(stdout);
  pid_t pids[2];
  for (int c = 0; c < 2; c++) {
    pids[c] = fork();
    REQUIRE(pids[c] >= 0);
    if (pids[c] == 0) {
      CHILD_CHECK(run_fill(queue, fill, 4, c) == 0);
      fflush(stdout);
      pid_t grandchild = fork();
      if (grandchild == 0) {
        child_uses_opencl();
        CHILD_EXIT();
      }
      CHILD_CHECK(grandchild > 0 && wait_child(grandchild) == 0);
      child_uses_opencl();
      CHILD_EXIT();
    }
  }
  for (int c = 0; c < 2; c++)
    CHECK_EQ_INT(wait_child(pids[c]), 0);
  CHECK(run_fill(queue, fill, 6, 6) == 0);
}

/* The process forks while its kernel runs (spinning until released), with
 * a read of that kernel's buffer behind it. In the child both commands were
 * the parent's: their events fail; then the child's own work runs, on the
 * same queue too. In the parent they complete. */
static void fork_while_kernel_runs(void) {
  static int flags[16] __attribute__((aligned(64)));
  memset(flags, 0, sizeof flags);
  cl_int err;
  cl_kernel spin = build_kernel(spin_src, "spin");
  REQUIRE(spin);
  cl_mem fbuf =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof flags, flags, &err);
  REQUIRE(fbuf);
  REQUIRE(clSetKernelArg(spin, 0, sizeof fbuf, &fbuf) == CL_SUCCESS);
  size_t one = 1;
  cl_event kev = NULL, rev = NULL;
  int copy[16] = {0};
  REQUIRE(clEnqueueNDRangeKernel(queue, spin, 1, NULL, &one, &one, 0, NULL, &kev) == CL_SUCCESS);
  REQUIRE(clEnqueueReadBuffer(queue, fbuf, CL_FALSE, 0, sizeof copy, copy, 0, NULL, &rev) ==
          CL_SUCCESS);
  /* Started: the fork happens with the kernel on a compute unit. */
  for (int i = 0; i < 60 * 1000 && !__atomic_load_n(&flags[1], __ATOMIC_ACQUIRE); i++) {
    struct timespec ts = {0, 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  REQUIRE(__atomic_load_n(&flags[1], __ATOMIC_ACQUIRE) == 1);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    /* The parent's kernel and the read behind it fail here. */
    CHILD_CHECK(clWaitForEvents(1, &kev) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    cl_int st = 0;
    clGetEventInfo(kev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    CHILD_CHECK(st < 0);
    CHILD_CHECK(clWaitForEvents(1, &rev) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    clGetEventInfo(rev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    CHILD_CHECK(st < 0);
    CHILD_CHECK(flags[2] == 0); /* it never ran here */
    child_uses_opencl();
    clReleaseEvent(kev);
    clReleaseEvent(rev);
    CHILD_EXIT();
  }
  /* In the parent, release the kernel: it and the read complete. */
  __atomic_store_n(&flags[0], 1, __ATOMIC_RELEASE);
  CHECK(pid > 0);
  CHECK_EQ_INT(clWaitForEvents(1, &kev), CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &rev), CL_SUCCESS);
  CHECK_EQ_INT(copy[2], 7);
  if (pid > 0) CHECK_EQ_INT(wait_child(pid), 0);
  clReleaseEvent(kev);
  clReleaseEvent(rev);
  clReleaseMemObject(fbuf);
  clReleaseKernel(spin);
  CHECK(run_fill(queue, fill, 9, 9) == 0);
}

/* A native kernel that spins until the host releases it. */
static int native_flags[2];
static void CL_CALLBACK native_spin(void *args) {
  (void)args;
  __atomic_store_n(&native_flags[1], 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&native_flags[0], __ATOMIC_ACQUIRE)) {
    struct timespec ts = {0, 100 * 1000};
    nanosleep(&ts, NULL);
  }
}

/* The process forks while a scheduler worker runs its native kernel, with
 * a marker behind it: in the child both fail, and the queue goes on. */
static void fork_while_native_kernel_runs(void) {
  native_flags[0] = native_flags[1] = 0;
  cl_event nev = NULL, mev = NULL;
  REQUIRE(clEnqueueNativeKernel(queue, native_spin, NULL, 0, 0, NULL, NULL, 0, NULL, &nev) ==
          CL_SUCCESS);
  REQUIRE(clEnqueueMarker(queue, &mev) == CL_SUCCESS);
  for (int i = 0; i < 60 * 1000 && !__atomic_load_n(&native_flags[1], __ATOMIC_ACQUIRE); i++) {
    struct timespec ts = {0, 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  REQUIRE(__atomic_load_n(&native_flags[1], __ATOMIC_ACQUIRE) == 1);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    CHILD_CHECK(clWaitForEvents(1, &nev) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CHILD_CHECK(clWaitForEvents(1, &mev) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CHILD_CHECK(clFinish(queue) == CL_SUCCESS);
    CHILD_CHECK(run_fill(queue, fill, 2, 2) == 0);
    clReleaseEvent(nev);
    clReleaseEvent(mev);
    CHILD_EXIT();
  }
  __atomic_store_n(&native_flags[0], 1, __ATOMIC_RELEASE);
  CHECK(pid > 0);
  CHECK_EQ_INT(clWaitForEvents(1, &nev), CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &mev), CL_SUCCESS);
  if (pid > 0) CHECK_EQ_INT(wait_child(pid), 0);
  clReleaseEvent(nev);
  clReleaseEvent(mev);
  CHECK(run_fill(queue, fill, 8, 1) == 0);
}

/* A child that never uses OpenCL and one that only exits: nothing to start. */
static void fork_child_exits(void) {
  fflush(stdout);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(0);
  CHECK_EQ_INT(wait_child(pid), 0);
  pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) exit(0);
  CHECK_EQ_INT(wait_child(pid), 0);
  CHECK(run_fill(queue, fill, 1, 1) == 0);
}

int main(void) {
#ifdef __SANITIZE_THREAD__
  /* ThreadSanitizer does not support threads started in the child of a
   * process that had several (it stops the child), and the child of these
   * cases starts threads. */
  printf("ok fork_after_kernel # skipped under ThreadSanitizer\n");
  printf("ok fork_twice # skipped under ThreadSanitizer\n");
  printf("ok fork_while_kernel_runs # skipped under ThreadSanitizer\n");
  printf("ok fork_while_native_kernel_runs # skipped under ThreadSanitizer\n");
  printf("ok fork_child_exits # skipped under ThreadSanitizer\n");
  return 0;
#endif
  api_setup();
  fill = build_kernel(fill_src, "fill");
  if (!fill) {
    printf("not ok setup: fill kernel\n");
    return 1;
  }
  RUN(fork_after_kernel);
  RUN(fork_twice);
  RUN(fork_while_kernel_runs);
  RUN(fork_while_native_kernel_runs);
  RUN(fork_child_exits);
  clReleaseKernel(fill);
  api_teardown();
  CHECK_EXIT();
}
