/* fork with the HSA runtime in use: the child dispatches on the queue made
 * before the fork and on new ones, its compute units started again; a
 * dispatch the parent was running at the fork is the parent's (it does not
 * run in the child, and its completion signal keeps its value there), and
 * does not hold up the queue in the child, not even a packet with the
 * barrier bit. The parent waits for each child with a time limit. */
#include "check.h"
#include "hsa_test_util.h"

#include <aquila/cpu_abi.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static hsa_agent_t agent;
static hsa_executable_t exec;
static hsa_queue_t *queue;
static const uint64_t timeout = 60ull * 1000000000ull;

struct vector_add_args {
  const float *a;
  const float *b;
  float *c;
  uint64_t n;
  struct aquila_hidden_kernargs hidden;
};

struct spin_args {
  uint32_t *started;
  const uint32_t *release;
};

static int child_failures;
#define CHILD_CHECK(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      printf("  child %d: %s:%d: %s failed\n", (int)getpid(), __FILE__, __LINE__, #cond);          \
      child_failures++;                                                                            \
    }                                                                                              \
  } while (0)

static int wait_child(pid_t pid) {
  const char *e = getenv("AQUILA_TEST_TIMEOUT");
  int limit_s = e && atoi(e) > 30 ? atoi(e) / 3 : 100;
  for (int waited = 0; waited < limit_s * 100; waited++) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0 && errno != EINTR) return -2;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  printf("  child %d still running after %d s: killed\n", (int)pid, limit_s);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

/* c = a + b over n elements on q, checked; barrier: the packet's barrier
 * bit. Returns the number of wrong elements, -1 on a time-out. */
static int vector_add(hsa_queue_t *q, bool barrier) {
  enum { N = 10000 };
  static float a[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i;
    c[i] = 0;
  }
  struct vector_add_args args = {a, b, c, N, {{0}}};
  hsa_signal_t done;
  if (hsa_signal_create(1, 0, NULL, &done) != HSA_STATUS_SUCCESS) return -1;
  uint32_t grid[3] = {N, 1, 1};
  uint16_t wg[3] = {64, 1, 1};
  util_dispatch(q, util_kernel_object(exec, agent, "vector_add"), &args, 1, grid, wg, 0, done,
                barrier);
  int wrong = -1;
  if (util_wait_zero(done, timeout)) {
    wrong = 0;
    for (int i = 0; i < N; i++)
      wrong += c[i] != 3.0f * (float)i;
  }
  hsa_signal_destroy(done);
  return wrong;
}

static void child_dispatches(void) {
  CHILD_CHECK(vector_add(queue, false) == 0);
  CHILD_CHECK(vector_add(queue, true) == 0);
  hsa_queue_t *q2 = NULL;
  CHILD_CHECK(hsa_queue_create(agent, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                               &q2) == HSA_STATUS_SUCCESS);
  if (q2) {
    CHILD_CHECK(vector_add(q2, false) == 0);
    CHILD_CHECK(hsa_queue_destroy(q2) == HSA_STATUS_SUCCESS);
  }
}

static void test_fork_after_dispatch(void) {
  REQUIRE(vector_add(queue, false) == 0);
  fflush(stdout);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    child_dispatches();
    fflush(stdout);
    _exit(child_failures ? 1 : 0);
  }
  CHECK_EQ_INT(wait_child(pid), 0);
  CHECK(vector_add(queue, false) == 0);
}

static void test_fork_while_dispatch_runs(void) {
  static uint32_t started, release;
  started = release = 0;
  struct spin_args args = {&started, &release};
  hsa_signal_t done;
  REQUIRE(hsa_signal_create(1, 0, NULL, &done) == HSA_STATUS_SUCCESS);
  uint32_t grid[3] = {1, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  util_dispatch(queue, util_kernel_object(exec, agent, "spin"), &args, 1, grid, wg, 0, done, false);
  for (int i = 0; i < 60000 && !__atomic_load_n(&started, __ATOMIC_ACQUIRE); i++) {
    struct timespec ts = {0, 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  REQUIRE(__atomic_load_n(&started, __ATOMIC_ACQUIRE));
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    /* The parent's dispatch does not complete here. */
    CHILD_CHECK(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 50 * 1000 * 1000,
                                          HSA_WAIT_STATE_BLOCKED) == 1);
    child_dispatches();
    /* Destroying the queue does not wait for the parent's dispatch. */
    CHILD_CHECK(hsa_queue_destroy(queue) == HSA_STATUS_SUCCESS);
    fflush(stdout);
    _exit(child_failures ? 1 : 0);
  }
  __atomic_store_n(&release, 1, __ATOMIC_RELEASE);
  CHECK(pid > 0);
  CHECK(util_wait_zero(done, timeout));
  if (pid > 0) CHECK_EQ_INT(wait_child(pid), 0);
  hsa_signal_destroy(done);
  CHECK(vector_add(queue, true) == 0);
}

int main(void) {
#ifdef __SANITIZE_THREAD__
  /* ThreadSanitizer does not support threads started in the child of a
   * process that had several (it stops the child), and the child of these
   * cases starts threads. */
  printf("ok test_fork_after_dispatch # skipped under ThreadSanitizer\n");
  printf("ok test_fork_while_dispatch_runs # skipped under ThreadSanitizer\n");
  return 0;
#endif
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  agent = util_cpu_agent();
  if (util_load_executable("test_kernels", agent, &exec) != HSA_STATUS_SUCCESS) {
    printf("not ok load_executable\n");
    return 1;
  }
  if (hsa_queue_create(agent, 1024, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                       &queue) != HSA_STATUS_SUCCESS)
    return 1;
  RUN(test_fork_after_dispatch);
  RUN(test_fork_while_dispatch_runs);
  hsa_queue_destroy(queue);
  hsa_executable_destroy(exec);
  hsa_shut_down();
  CHECK_EXIT();
}
