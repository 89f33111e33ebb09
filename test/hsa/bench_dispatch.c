/* Dispatch benchmark for the CPU agent (built, not part of the tests):
 *   1. round trip of an empty 1-work-group dispatch (packet write to the
 *      completion seen by hsa_signal_wait_scacquire), median and p90;
 *   2. empty dispatches per second from one producer;
 *   3. a grid of 4096 work-groups of uneven cost: wall time and CPU time
 *      (CPU time / wall time ~ the number of busy cores). */
#include "hsa_test_util.h"

#include <sys/resource.h>
#include <time.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double cpu_seconds(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

struct uneven_args {
  uint64_t *runner;
  uint32_t spin;
};

int main(void) {
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  hsa_agent_t agent = util_cpu_agent();
  hsa_executable_t exec;
  if (util_load_executable("test_kernels", agent, &exec) != HSA_STATUS_SUCCESS) return 1;
  uint64_t empty = util_kernel_object(exec, agent, "empty");
  hsa_queue_t *queue;
  hsa_queue_create(agent, 4096, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue);
  uint32_t units = 0;
  hsa_agent_get_info(agent, (hsa_agent_info_t)0xA002, &units);
  printf("compute units: %u\n", units);

  uint32_t one[3] = {1, 1, 1};
  uint16_t wg1[3] = {1, 1, 1};
  enum { ROUNDS = 20000 };
  static uint64_t samples[ROUNDS];
  hsa_signal_t done;
  hsa_signal_create(1, 0, NULL, &done);
  for (int i = 0; i < ROUNDS; i++) {
    hsa_signal_store_relaxed(done, 1);
    uint64_t start = now_ns();
    util_dispatch(queue, empty, NULL, 1, one, wg1, 0, done, false);
    hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
    samples[i] = now_ns() - start;
  }
  qsort(samples, ROUNDS, sizeof(samples[0]), compare_u64);
  printf("round trip: median %.2f us, p90 %.2f us, p99 %.2f us\n", samples[ROUNDS / 2] / 1e3,
         samples[ROUNDS * 9 / 10] / 1e3, samples[ROUNDS * 99 / 100] / 1e3);

  enum { BURST = 1000000 };
  hsa_signal_store_relaxed(done, BURST);
  uint64_t start = now_ns();
  for (int i = 0; i < BURST; i++)
    util_dispatch(queue, empty, NULL, 1, one, wg1, 0, done, false);
  hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  double seconds = (now_ns() - start) / 1e9;
  printf("throughput: %.2f million empty dispatches/s\n", BURST / seconds / 1e6);

  enum { GROUPS = 4096 };
  uint64_t *runner = calloc(GROUPS, sizeof(uint64_t));
  struct uneven_args args = {runner, 200000};
  uint32_t grid[3] = {GROUPS, 1, 1};
  hsa_signal_store_relaxed(done, 1);
  double cpu0 = cpu_seconds();
  start = now_ns();
  util_dispatch(queue, util_kernel_object(exec, agent, "uneven"), &args, 1, grid, wg1, 0, done,
                false);
  hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  seconds = (now_ns() - start) / 1e9;
  double cpu = cpu_seconds() - cpu0;
  printf("uneven grid: %.3f s wall, %.3f s CPU, %.2f cores busy (of %u units)\n", seconds, cpu,
         cpu / seconds, units);
  free(runner);
  hsa_signal_destroy(done);
  hsa_queue_destroy(queue);
  hsa_executable_destroy(exec);
  hsa_shut_down();
  return 0;
}
