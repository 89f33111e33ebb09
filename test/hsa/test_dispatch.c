/* Kernel dispatch on the CPU agent: 1/2/3-D grids with partial work-groups,
 * the group segment, barriers between work-items, uneven work-groups, and
 * the barrier bit. */
#include "check.h"
#include "hsa_test_util.h"

#include <aquila/cpu_abi.h>
#include <hsa/hsa_ext_amd.h>
#include <aquila/hsa_ext_aquila.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static hsa_agent_t agent;
static hsa_executable_t exec;
static hsa_queue_t *queue;
static const uint64_t timeout = 10ull * 1000000000ull;

struct record_args {
  uint32_t *hits;
  uint32_t *errors;
};

static void run_record(uint32_t dims, uint32_t gx, uint32_t gy, uint32_t gz, uint16_t wx,
                       uint16_t wy, uint16_t wz) {
  uint64_t count = (uint64_t)gx * gy * gz;
  uint32_t *hits = calloc(count, sizeof(uint32_t));
  uint32_t errors = 0;
  REQUIRE(hits);
  struct record_args args = {hits, &errors};
  hsa_signal_t done;
  REQUIRE(hsa_signal_create(1, 0, NULL, &done) == HSA_STATUS_SUCCESS);
  uint32_t grid[3] = {gx, gy, gz};
  uint16_t wg[3] = {wx, wy, wz};
  util_dispatch(queue, util_kernel_object(exec, agent, "record"), &args, dims, grid, wg, 0, done,
                false);
  CHECK(util_wait_zero(done, timeout));
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < count; i++)
    wrong += hits[i] != 1;
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(errors, 0);
  hsa_signal_destroy(done);
  free(hits);
}

static void test_grid_1d(void) {
  run_record(1, 1000, 1, 1, 64, 1, 1); /* last group partial (1000 = 15*64 + 40) */
  run_record(1, 1, 1, 1, 1, 1, 1);
  run_record(1, 4096, 1, 1, 4096, 1, 1);
}

static void test_grid_2d(void) {
  run_record(2, 33, 17, 1, 8, 4, 1);
  run_record(2, 100, 3, 1, 16, 16, 1); /* work-group larger than the grid in y */
}

static void test_grid_3d(void) {
  run_record(3, 9, 10, 11, 4, 3, 2);
  run_record(3, 64, 2, 5, 64, 1, 5);
}

struct vector_add_args {
  const float *a;
  const float *b;
  float *c;
  uint64_t n;
  struct aquila_hidden_kernargs hidden;
};

static void test_vector_add(void) {
  hsa_region_t kernarg_region = util_region(agent, HSA_REGION_GLOBAL_FLAG_KERNARG);
  enum { N = 100000 };
  float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float)),
        *c = calloc(N, sizeof(float));
  REQUIRE(a && b && c);
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i;
  }
  struct vector_add_args *args = NULL;
  REQUIRE(hsa_memory_allocate(kernarg_region, sizeof(*args), (void **)&args) == HSA_STATUS_SUCCESS);
  memset(args, 0, sizeof(*args));
  args->a = a;
  args->b = b;
  args->c = c;
  args->n = N;
  hsa_signal_t done;
  hsa_signal_create(1, 0, NULL, &done);
  uint32_t grid[3] = {N, 1, 1};
  uint16_t wg[3] = {256, 1, 1};
  util_dispatch(queue, util_kernel_object(exec, agent, "vector_add"), args, 1, grid, wg, 0, done,
                false);
  CHECK(util_wait_zero(done, timeout));
  int wrong = 0;
  for (int i = 0; i < N; i++)
    wrong += c[i] != 3.0f * (float)i;
  CHECK_EQ_INT(wrong, 0);
  hsa_signal_destroy(done);
  hsa_memory_free(args);
  free(a);
  free(b);
  free(c);
}

struct group_memory_args {
  uint32_t *results;
  uint32_t bytes;
};

static void test_group_segment(void) {
  enum { GROUPS = 64 };
  uint32_t results[GROUPS] = {0};
  struct group_memory_args args = {results, 40000};
  hsa_signal_t done;
  hsa_signal_create(1, 0, NULL, &done);
  uint32_t grid[3] = {GROUPS, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  util_dispatch(queue, util_kernel_object(exec, agent, "group_memory"), &args, 1, grid, wg, 40000,
                done, false);
  CHECK(util_wait_zero(done, timeout));
  int ok = 0;
  for (int i = 0; i < GROUPS; i++)
    ok += results[i] == 1;
  CHECK_EQ_INT(ok, GROUPS);
  hsa_signal_destroy(done);
}

struct barrier_args {
  uint32_t *results;
};

static void run_barrier(uint32_t dims, uint32_t gx, uint32_t gy, uint16_t wx, uint16_t wy) {
  uint64_t count = (uint64_t)gx * gy;
  uint32_t *results = calloc(count, sizeof(uint32_t));
  REQUIRE(results);
  struct barrier_args args = {results};
  hsa_signal_t done;
  hsa_signal_create(1, 0, NULL, &done);
  uint32_t grid[3] = {gx, gy, 1};
  uint16_t wg[3] = {wx, wy, 1};
  util_dispatch(queue, util_kernel_object(exec, agent, "barrier"), &args, dims, grid, wg,
                (uint32_t)wx * wy * 4, done, false);
  CHECK(util_wait_zero(done, timeout));
  uint64_t ok = 0;
  for (uint64_t i = 0; i < count; i++)
    ok += results[i] == 1;
  CHECK_EQ_INT(ok, count);
  hsa_signal_destroy(done);
  free(results);
}

static void test_barrier_kernel(void) {
  run_barrier(1, 1000, 1, 128, 1); /* partial last group of 104 work-items */
  run_barrier(2, 40, 30, 8, 8);
  run_barrier(1, 4096, 1, 4096, 1); /* the largest work-group */
  run_barrier(1, 3, 1, 1, 1);       /* single work-item groups */
}

struct uneven_args {
  uint64_t *runner;
  uint32_t spin;
};

static void test_uneven_groups(void) {
  enum { GROUPS = 4096 };
  uint64_t *runner = calloc(GROUPS, sizeof(uint64_t));
  REQUIRE(runner);
  struct uneven_args args = {runner, 2000};
  hsa_signal_t done;
  hsa_signal_create(1, 0, NULL, &done);
  uint32_t grid[3] = {GROUPS, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  util_dispatch(queue, util_kernel_object(exec, agent, "uneven"), &args, 1, grid, wg, 0, done,
                false);
  CHECK(util_wait_zero(done, timeout));
  int missing = 0;
  for (int i = 0; i < GROUPS; i++)
    missing += runner[i] == 0;
  CHECK_EQ_INT(missing, 0);
  hsa_signal_destroy(done);
  free(runner);
}

/* A dispatch with the barrier bit starts only after the previous packets of
 * the queue completed: the second record dispatch checks the first one's
 * counters through a completion signal it must already see at 0. */
static void test_barrier_bit(void) {
  enum { N = 20000 };
  uint32_t *hits = calloc(N, sizeof(uint32_t));
  uint32_t errors = 0;
  REQUIRE(hits);
  struct record_args args = {hits, &errors};
  hsa_signal_t first, second;
  hsa_signal_create(1, 0, NULL, &first);
  hsa_signal_create(1, 0, NULL, &second);
  uint32_t grid[3] = {N, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  uint64_t record = util_kernel_object(exec, agent, "record");
  util_dispatch(queue, record, &args, 1, grid, wg, 0, first, false);
  /* The barrier-AND with the barrier bit then observes `first` at 0. */
  hsa_signal_t deps[5] = {{0}};
  uint64_t index = util_reserve(queue);
  hsa_barrier_and_packet_t *p =
      (hsa_barrier_and_packet_t *)queue->base_address + (index & (queue->size - 1));
  memset((char *)p + 4, 0, sizeof(*p) - 4);
  memcpy(p->dep_signal, deps, sizeof(deps));
  p->completion_signal = second;
  util_publish(queue, index, p, util_header(HSA_PACKET_TYPE_BARRIER_AND, true), 0);
  CHECK(util_wait_zero(second, timeout));
  CHECK_EQ_INT(hsa_signal_load_scacquire(first), 0);
  hsa_signal_destroy(first);
  hsa_signal_destroy(second);
  free(hits);
}

static void test_many_small_dispatches(void) {
  enum { COUNT = 2000 };
  hsa_signal_t done;
  hsa_signal_create(COUNT, 0, NULL, &done);
  uint32_t grid[3] = {1, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  uint64_t empty = util_kernel_object(exec, agent, "empty");
  for (int i = 0; i < COUNT; i++)
    util_dispatch(queue, empty, NULL, 1, grid, wg, 0, done, false);
  CHECK(util_wait_zero(done, timeout));
  CHECK(hsa_queue_load_read_index_scacquire(queue) == hsa_queue_load_write_index_scacquire(queue));
  hsa_signal_destroy(done);
}

struct ended {
  hsa_signal_t all;
  pthread_t main_thread;
  _Atomic int on_main;
};

static void dispatch_ended(hsa_signal_t signal, void *arg) {
  struct ended *e = arg;
  if (pthread_equal(pthread_self(), e->main_thread)) atomic_fetch_add(&e->on_main, 1);
  hsa_signal_destroy(signal); /* allowed in the handler */
  hsa_signal_subtract_screlease(e->all, 1);
}

/* hsa_ven_aquila_signal_on_zero on completion signals: each dispatch's
 * handler runs once, on a compute unit (this thread only waits for all of
 * them), and may destroy the signal it was called for. */
static void test_completion_handlers(void) {
  enum { COUNT = 500 };
  struct ended e = {.main_thread = pthread_self()};
  REQUIRE(hsa_signal_create(COUNT, 0, NULL, &e.all) == HSA_STATUS_SUCCESS);
  uint32_t grid[3] = {64, 1, 1};
  uint16_t wg[3] = {16, 1, 1};
  uint64_t empty = util_kernel_object(exec, agent, "empty");
  for (int i = 0; i < COUNT; i++) {
    hsa_signal_t done;
    REQUIRE(hsa_signal_create(1, 0, NULL, &done) == HSA_STATUS_SUCCESS);
    CHECK_EQ_INT(hsa_ven_aquila_signal_on_zero(done, dispatch_ended, &e), HSA_STATUS_SUCCESS);
    util_dispatch(queue, empty, NULL, 1, grid, wg, 0, done, false);
  }
  CHECK(util_wait_zero(e.all, timeout));
  CHECK_EQ_INT(atomic_load(&e.on_main), 0);
  hsa_signal_destroy(e.all);
}

/* hsa_amd_profiling_*: a profiling queue's dispatch leaves in its
 * completion signal when its work-groups ran, inside the time the host saw
 * it run (system timestamps); a bad queue, agent or signal is refused. */
static void test_dispatch_time(void) {
  CHECK_EQ_INT(hsa_amd_profiling_set_profiler_enabled(queue, 1), HSA_STATUS_SUCCESS);
  hsa_signal_t done;
  REQUIRE(hsa_signal_create(1, 0, NULL, &done) == HSA_STATUS_SUCCESS);
  uint32_t *hits = calloc(100000, sizeof(uint32_t)), errors = 0;
  REQUIRE(hits);
  struct record_args args = {hits, &errors};
  uint32_t grid[3] = {100000, 1, 1};
  uint16_t wg[3] = {100, 1, 1};
  uint64_t before = 0, after = 0;
  hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &before);
  util_dispatch(queue, util_kernel_object(exec, agent, "record"), &args, 1, grid, wg, 0, done,
                false);
  CHECK(util_wait_zero(done, timeout));
  hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &after);
  hsa_amd_profiling_dispatch_time_t t = {0, 0};
  CHECK_EQ_INT(hsa_amd_profiling_get_dispatch_time(agent, done, &t), HSA_STATUS_SUCCESS);
  CHECK(before <= t.start && t.start <= t.end && t.end <= after);
  CHECK_EQ_INT(errors, 0);
  CHECK_EQ_INT(hsa_amd_profiling_get_dispatch_time(agent, done, NULL),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_signal_t bogus = {12345};
  CHECK_EQ_INT(hsa_amd_profiling_get_dispatch_time(agent, bogus, &t),
               HSA_STATUS_ERROR_INVALID_SIGNAL);
  hsa_agent_t no_agent = {77};
  CHECK_EQ_INT(hsa_amd_profiling_get_dispatch_time(no_agent, done, &t),
               HSA_STATUS_ERROR_INVALID_AGENT);
  CHECK_EQ_INT(hsa_amd_profiling_set_profiler_enabled(NULL, 1), HSA_STATUS_ERROR_INVALID_QUEUE);
  CHECK_EQ_INT(hsa_amd_profiling_set_profiler_enabled(queue, 0), HSA_STATUS_SUCCESS);
  hsa_signal_destroy(done);
  free(hits);
}

/* hsa_ven_aquila_kernel_object_supersede: a dispatch of mark_first held
 * at its gate is superseded by mark_second; the work-groups it had not
 * started leave mark_second's mark, the ones it had leave their own; a new
 * dispatch runs mark_second whole. Misuse is refused. */
static void test_supersede(void) {
  enum { GROUPS = 4096 };
  uint64_t first = util_kernel_object(exec, agent, "mark_first");
  uint64_t second = util_kernel_object(exec, agent, "mark_second");
  uint64_t add = util_kernel_object(exec, agent, "vector_add");
  REQUIRE(first && second && add);
  hsa_agent_t no_agent = {77};
  CHECK_EQ_INT(hsa_ven_aquila_kernel_object_supersede(no_agent, first, second),
               HSA_STATUS_ERROR_INVALID_AGENT);
  CHECK_EQ_INT(hsa_ven_aquila_kernel_object_supersede(agent, first, first),
               HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  CHECK_EQ_INT(hsa_ven_aquila_kernel_object_supersede(agent, first, add),
               HSA_STATUS_ERROR_INVALID_CODE_OBJECT); /* another layout */
  CHECK_EQ_INT(hsa_ven_aquila_kernel_object_supersede(agent, first, 0x123450),
               HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  uint32_t *marks = calloc(GROUPS, sizeof *marks), gate = 0;
  REQUIRE(marks);
  struct mark_args {
    uint32_t *marks;
    const uint32_t *gate;
  } args = {marks, &gate};
  hsa_signal_t done;
  REQUIRE(hsa_signal_create(1, 0, NULL, &done) == HSA_STATUS_SUCCESS);
  uint32_t grid[3] = {GROUPS, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  util_dispatch(queue, first, &args, 1, grid, wg, 0, done, false);
  /* Until a work-group of it is held at the gate (bounded: 10 s). */
  bool held = false;
  for (int waited = 0; waited < 10000 && !held; waited++) {
    for (uint32_t g = 0; g < GROUPS && !held; g++)
      held = __atomic_load_n(&marks[g], __ATOMIC_ACQUIRE) == 1;
    if (!held) usleep(1000);
  }
  CHECK(held);
  CHECK_EQ_INT(hsa_ven_aquila_kernel_object_supersede(agent, first, second), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_ven_aquila_kernel_object_supersede(agent, first, second),
               HSA_STATUS_ERROR_INVALID_CODE_OBJECT); /* once only */
  CHECK_EQ_INT(hsa_ven_aquila_kernel_object_supersede(agent, second, first),
               HSA_STATUS_ERROR_INVALID_CODE_OBJECT); /* no chain */
  __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
  CHECK(util_wait_zero(done, timeout));
  uint32_t ones = 0, twos = 0;
  for (uint32_t g = 0; g < GROUPS; g++) {
    ones += marks[g] == 1;
    twos += marks[g] == 2;
  }
  CHECK_EQ_INT(ones + twos, GROUPS);
  CHECK(ones >= 1);
  /* At most the ranges the units had taken when it was superseded. */
  CHECK(twos >= GROUPS / 2);
  memset(marks, 0, GROUPS * sizeof *marks);
  gate = 0;
  hsa_signal_store_relaxed(done, 1);
  util_dispatch(queue, first, &args, 1, grid, wg, 0, done, false);
  bool ended = util_wait_zero(done, timeout);
  __atomic_store_n(&gate, 1, __ATOMIC_RELEASE); /* a failure ends, not hangs */
  if (!ended) util_wait_zero(done, timeout);
  CHECK(ended);
  twos = 0;
  for (uint32_t g = 0; g < GROUPS; g++)
    twos += marks[g] == 2;
  CHECK_EQ_INT(twos, GROUPS);
  hsa_signal_destroy(done);
  free(marks);
}

int main(void) {
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  agent = util_cpu_agent();
  if (util_load_executable("test_kernels", agent, &exec) != HSA_STATUS_SUCCESS) {
    printf("not ok load_executable\n");
    return 1;
  }
  if (hsa_queue_create(agent, 1024, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                       &queue) != HSA_STATUS_SUCCESS)
    return 1;
  RUN(test_grid_1d);
  RUN(test_grid_2d);
  RUN(test_grid_3d);
  RUN(test_vector_add);
  RUN(test_group_segment);
  RUN(test_barrier_kernel);
  RUN(test_uneven_groups);
  RUN(test_barrier_bit);
  RUN(test_many_small_dispatches);
  RUN(test_completion_handlers);
  RUN(test_dispatch_time);
  RUN(test_supersede);
  hsa_queue_destroy(queue);
  hsa_executable_destroy(exec);
  hsa_shut_down();
  CHECK_EXIT();
}
