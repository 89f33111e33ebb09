/* hsa_ven_aquila_signal_wait_helping: a thread waiting for a dispatch runs
 * it itself when no compute unit has taken it (and
 * hsa_ven_aquila_signal_help_short: a querying thread, when the kernel ran
 * briefly last time). Packets published without
 * ringing the doorbell are never seen by the units, so whatever runs them
 * is the waiting thread: it must run exactly what it waits for (its own
 * packet, and the earlier ones only when its packet has the barrier bit),
 * on a stack large enough for work-groups whatever the caller's stack, with
 * the group segment and barriers working, from many threads at once. */
#include "check.h"
#include "hsa_test_util.h"

#include <aquila/hsa_ext_aquila.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <time.h>

static hsa_agent_t agent;
static hsa_executable_t exec;
static const uint64_t timeout = 30ull * 1000000000ull;

struct whoami_args {
  uint64_t *runner;
  uint32_t *counter;
  uint32_t *ticket;
  uint32_t stack_bytes;
};

struct group_memory_args {
  uint32_t *results;
  uint32_t bytes;
};

struct barrier_args {
  uint32_t *results;
};

struct spin_args {
  uint32_t *started;
  const uint32_t *release;
};

static hsa_queue_t *new_queue(void) {
  hsa_queue_t *q = NULL;
  if (hsa_queue_create(agent, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q) !=
      HSA_STATUS_SUCCESS)
    return NULL;
  return q;
}

/* Writes a kernel dispatch packet and publishes it; rings the doorbell only
 * when ring is set. Returns its index. */
static uint64_t put(hsa_queue_t *q, const char *kernel, void *kernarg, uint32_t groups,
                    uint16_t group_size, uint32_t group_segment, hsa_signal_t done, bool barrier,
                    bool ring) {
  uint64_t index = util_reserve(q);
  hsa_kernel_dispatch_packet_t *p =
      (hsa_kernel_dispatch_packet_t *)q->base_address + (index & (q->size - 1));
  memset((char *)p + 4, 0, sizeof(*p) - 4);
  p->workgroup_size_x = group_size;
  p->workgroup_size_y = 1;
  p->workgroup_size_z = 1;
  p->grid_size_x = groups * group_size;
  p->grid_size_y = 1;
  p->grid_size_z = 1;
  p->group_segment_size = group_segment;
  p->kernel_object = util_kernel_object(exec, agent, kernel);
  p->kernarg_address = kernarg;
  p->completion_signal = done;
  uint32_t word = util_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier) |
                  (1u << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS << 16);
  __atomic_store_n((uint32_t *)p, word, __ATOMIC_RELEASE);
  if (ring) hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
  return index;
}

static hsa_signal_value_t wait_helping(hsa_signal_t done, hsa_queue_t *q, uint64_t index,
                                       uint64_t timeout_ns) {
  return hsa_ven_aquila_signal_wait_helping(done, HSA_SIGNAL_CONDITION_EQ, 0, timeout_ns,
                                            HSA_WAIT_STATE_BLOCKED, q, index);
}

/* Units poll for 50 us after their last work, then sleep until a doorbell
 * or a dispatch with several work-groups wakes them: after this, none is
 * awake to take a single work-group from a helper's deque. */
static void let_units_sleep(void) {
  struct timespec ts = {0, 100 * 1000000L};
  nanosleep(&ts, NULL);
}

static hsa_signal_t new_signal(void) {
  hsa_signal_t s = {0};
  hsa_signal_create(1, 0, NULL, &s);
  return s;
}

/* A dispatch nobody rang for runs on the thread that waits for it. */
static void test_runs_on_waiting_thread(void) {
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint64_t runner = 0;
  struct whoami_args args = {&runner, NULL, NULL, 0};
  hsa_signal_t done = new_signal();
  let_units_sleep();
  uint64_t index = put(q, "whoami", &args, 1, 1, 0, done, false, false);
  CHECK_EQ_INT(wait_helping(done, q, index, timeout), 0);
  CHECK(runner == (uint64_t)pthread_self());

  /* The group segment of a helper. */
  uint32_t results[4] = {0};
  struct group_memory_args gm = {results, 4096};
  hsa_signal_store_relaxed(done, 1);
  index = put(q, "group_memory", &gm, 4, 1, 4096, done, false, false);
  CHECK_EQ_INT(wait_helping(done, q, index, timeout), 0);
  for (int i = 0; i < 4; i++)
    CHECK_EQ_INT(results[i], 1);

  /* Work-item barriers (fibers) on a helper. */
  uint32_t items[2 * 64] = {0};
  struct barrier_args ba = {items};
  hsa_signal_store_relaxed(done, 1);
  index = put(q, "barrier", &ba, 2, 64, 64 * sizeof(uint32_t), done, false, false);
  CHECK_EQ_INT(wait_helping(done, q, index, timeout), 0);
  int bad = 0;
  for (int i = 0; i < 2 * 64; i++)
    bad += items[i] != 1;
  CHECK_EQ_INT(bad, 0);
  hsa_signal_destroy(done);
  hsa_queue_destroy(q);
}

/* Many work-groups: the helper and the units it wakes share them (which
 * of them runs how many depends on the scheduler); each runs once. */
static void test_units_share_with_helper(void) {
  enum { GROUPS = 512 };
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint64_t *runner = calloc(GROUPS, sizeof *runner);
  uint32_t *ticket = calloc(GROUPS, sizeof *ticket);
  uint32_t counter = 0;
  REQUIRE(runner && ticket);
  struct whoami_args args = {runner, &counter, ticket, 4096};
  hsa_signal_t done = new_signal();
  uint64_t index = put(q, "whoami", &args, GROUPS, 1, 0, done, false, false);
  CHECK_EQ_INT(wait_helping(done, q, index, timeout), 0);
  int missing = 0;
  for (int i = 0; i < GROUPS; i++)
    missing += runner[i] == 0;
  CHECK_EQ_INT(missing, 0);
  CHECK_EQ_INT(counter, GROUPS);
  hsa_signal_destroy(done);
  hsa_queue_destroy(q);
  free(runner);
  free(ticket);
}

/* Work-groups that need far more stack than the waiting thread has. */
static void *small_stack_thread(void *arg) {
  hsa_queue_t *q = arg;
  uint64_t runner = 0;
  struct whoami_args args = {&runner, NULL, NULL, 8u << 20};
  hsa_signal_t done = new_signal();
  let_units_sleep();
  uint64_t index = put(q, "whoami", &args, 1, 1, 0, done, false, false);
  hsa_signal_value_t value = wait_helping(done, q, index, timeout);
  hsa_signal_destroy(done);
  return value == 0 && runner == (uint64_t)pthread_self() ? q : NULL;
}

static void test_big_stack(void) {
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 * 1024);
  pthread_t thread;
  REQUIRE(pthread_create(&thread, &attr, small_stack_thread, q) == 0);
  pthread_attr_destroy(&attr);
  void *result = NULL;
  pthread_join(thread, &result);
  CHECK(result == q);
  hsa_queue_destroy(q);
}

/* A packet with the barrier bit waits for the ones before it, so the
 * waiting thread runs them, in order (a unit may take a later one: a
 * completion with packets left in the queue wakes the units). */
static void test_barrier_bit_chain(void) {
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint64_t runner[3] = {0};
  uint32_t ticket[3] = {0}, counter = 0;
  struct whoami_args args[3];
  hsa_signal_t done[3];
  uint64_t index = 0;
  let_units_sleep();
  for (int i = 0; i < 3; i++) {
    args[i] = (struct whoami_args){&runner[i], &counter, &ticket[i], 0};
    done[i] = new_signal();
    index = put(q, "whoami", &args[i], 1, 1, 0, done[i], i > 0, false);
  }
  CHECK_EQ_INT(wait_helping(done[2], q, index, timeout), 0);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_INT(hsa_signal_load_scacquire(done[i]), 0);
    CHECK_EQ_INT(ticket[i], i);
    CHECK(runner[i] != 0);
    hsa_signal_destroy(done[i]);
  }
  CHECK(runner[0] == (uint64_t)pthread_self());
  hsa_queue_destroy(q);
}

/* Without the barrier bit the packets before it are no dependency: the
 * waiting thread leaves them (and so its own, which is not at the head yet)
 * to the units. */
static void test_no_unrelated_work(void) {
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint64_t runner[2] = {0};
  struct whoami_args args[2] = {{&runner[0], NULL, NULL, 0}, {&runner[1], NULL, NULL, 0}};
  hsa_signal_t first = new_signal(), second = new_signal();
  put(q, "whoami", &args[0], 1, 1, 0, first, false, false);
  uint64_t index = put(q, "whoami", &args[1], 1, 1, 0, second, false, false);
  CHECK_EQ_INT(wait_helping(second, q, index, 20 * 1000000ull), 1);
  CHECK_EQ_INT(hsa_signal_load_scacquire(first), 1);
  CHECK(runner[0] == 0 && runner[1] == 0);
  /* Rung, the units run both. */
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
  CHECK(util_wait_zero(first, timeout));
  CHECK(util_wait_zero(second, timeout));
  hsa_signal_destroy(first);
  hsa_signal_destroy(second);
  hsa_queue_destroy(q);
}

/* A queue with a compute-unit mask runs only on its units: no help. */
static void test_masked_queue_not_helped(void) {
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint32_t mask = 1;
  REQUIRE(hsa_amd_queue_cu_set_mask(q, 32, &mask) == HSA_STATUS_SUCCESS);
  uint64_t runner = 0;
  struct whoami_args args = {&runner, NULL, NULL, 0};
  hsa_signal_t done = new_signal();
  uint64_t index = put(q, "whoami", &args, 1, 1, 0, done, false, false);
  CHECK_EQ_INT(wait_helping(done, q, index, 20 * 1000000ull), 1);
  CHECK(runner == 0);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
  CHECK_EQ_INT(wait_helping(done, q, index, timeout), 0);
  CHECK(runner != 0 && runner != (uint64_t)pthread_self());
  hsa_signal_destroy(done);
  hsa_queue_destroy(q);
}

/* Threads waiting at once, each on a queue of its own and on a shared one,
 * on packets rung or not, with and without the barrier bit: every dispatch
 * runs exactly once. There are more threads than helper slots, and a
 * thread that finds none waits without helping: a packet nobody rang for
 * then stays where it is, so such a wait rings after a while. */
enum { THREADS = 24, ROUNDS = 150, GROUPS = 8 };
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* hsa_ven_aquila_signal_help_short: a query runs a packet nobody rang for
 * when its kernel's last dispatch was short; a kernel that ran long last
 * time is left to the units, and the caller is not held. */
static void test_help_short(void) {
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint64_t runner = 0;
  struct whoami_args args = {&runner, NULL, NULL, 0};
  hsa_signal_t done = new_signal();
  uint64_t index;
  /* "Short" is under 50 us: on a busy machine a unit may be preempted in
   * the middle of even this one work-group, or still awake and take the
   * packet itself; then the packet is rung for the units and the whole
   * tried again (at most 20 times). */
  hsa_signal_value_t left = 1;
  for (int attempt = 0; attempt < 20 && (left != 0 || runner != (uint64_t)pthread_self());
       attempt++) {
    hsa_signal_store_relaxed(done, 1);
    index = put(q, "whoami", &args, 1, 1, 0, done, false, true);
    REQUIRE(util_wait_zero(done, timeout));
    hsa_signal_store_relaxed(done, 1);
    runner = 0;
    let_units_sleep();
    index = put(q, "whoami", &args, 1, 1, 0, done, false, false);
    left = hsa_ven_aquila_signal_help_short(done, q, index);
    if (left != 0) hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
    REQUIRE(util_wait_zero(done, timeout));
  }
  CHECK_EQ_INT(left, 0);
  CHECK(runner == (uint64_t)pthread_self());

  /* 20 ms the first time (rung, released by this thread). */
  uint32_t started = 0, release = 0;
  struct spin_args sa = {&started, &release};
  hsa_signal_store_relaxed(done, 1);
  index = put(q, "spin", &sa, 1, 1, 0, done, false, true);
  for (uint64_t t0 = now_ns(); !__atomic_load_n(&started, __ATOMIC_ACQUIRE);)
    if (now_ns() - t0 > timeout) break;
  struct timespec ts = {0, 20 * 1000000L};
  nanosleep(&ts, NULL);
  __atomic_store_n(&release, 1, __ATOMIC_RELEASE);
  REQUIRE(util_wait_zero(done, timeout));
  /* Not rung: the query leaves it. */
  __atomic_store_n(&started, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&release, 0, __ATOMIC_RELAXED);
  hsa_signal_store_relaxed(done, 1);
  index = put(q, "spin", &sa, 1, 1, 0, done, false, false);
  uint64_t t0 = now_ns();
  CHECK_EQ_INT(hsa_ven_aquila_signal_help_short(done, q, index), 1);
  CHECK(now_ns() - t0 < 10000000ull);
  CHECK_EQ_INT(__atomic_load_n(&started, __ATOMIC_ACQUIRE), 0);
  __atomic_store_n(&release, 1, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
  CHECK(util_wait_zero(done, timeout));
  hsa_signal_destroy(done);
  hsa_queue_destroy(q);
}

static hsa_queue_t *shared_queue;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int thread_failures;

static void *many_thread(void *arg) {
  int id = (int)(intptr_t)arg;
  hsa_queue_t *own = new_queue();
  if (!own) {
    atomic_fetch_add(&thread_failures, 1);
    return NULL;
  }
  uint64_t runner[GROUPS];
  uint32_t counter = 0, ticket[GROUPS];
  struct whoami_args args = {runner, &counter, ticket, 0};
  hsa_signal_t done = new_signal();
  for (int round = 0; round < ROUNDS; round++) {
    memset(runner, 0, sizeof runner);
    counter = 0;
    hsa_signal_store_relaxed(done, 1);
    bool shared = round % 5 == 4, ring = (round + id) % 3 == 0;
    uint64_t index;
    if (shared) {
      /* Another thread may ring the shared doorbell for a later packet at
       * any time, so these run on the units or on this thread. */
      pthread_mutex_lock(&shared_lock);
      index = put(shared_queue, "whoami", &args, GROUPS, 1, 0, done, round % 2, true);
      pthread_mutex_unlock(&shared_lock);
    } else {
      index = put(own, "whoami", &args, round % 4 ? 1 : GROUPS, 1, 0, done, round % 2, ring);
    }
    hsa_queue_t *q = shared ? shared_queue : own;
    if (!ring && wait_helping(done, q, index, 200 * 1000000ull) != 0)
      hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
    if (wait_helping(done, q, index, timeout) != 0) {
      atomic_fetch_add(&thread_failures, 1);
      printf("  thread %d round %d: not done\n", id, round);
      break;
    }
    uint32_t groups = shared || round % 4 == 0 ? GROUPS : 1;
    for (uint32_t g = 0; g < groups; g++)
      if (runner[g] == 0) atomic_fetch_add(&thread_failures, 1);
    if (counter != groups) atomic_fetch_add(&thread_failures, 1);
  }
  hsa_signal_destroy(done);
  hsa_queue_destroy(own);
  return NULL;
}

static void test_many_threads(void) {
  shared_queue = new_queue();
  REQUIRE(shared_queue);
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++)
    REQUIRE(pthread_create(&threads[i], NULL, many_thread, (void *)(intptr_t)i) == 0);
  for (int i = 0; i < THREADS; i++)
    pthread_join(threads[i], NULL);
  CHECK_EQ_INT(atomic_load(&thread_failures), 0);
  hsa_queue_destroy(shared_queue);
}

int main(void) {
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  agent = util_cpu_agent();
  if (util_load_executable("test_kernels", agent, &exec) != HSA_STATUS_SUCCESS) {
    printf("not ok load_executable\n");
    return 1;
  }
  RUN(test_runs_on_waiting_thread);
  RUN(test_units_share_with_helper);
  RUN(test_big_stack);
  RUN(test_barrier_bit_chain);
  RUN(test_no_unrelated_work);
  RUN(test_masked_queue_not_helped);
  RUN(test_help_short);
  RUN(test_many_threads);
  hsa_executable_destroy(exec);
  hsa_shut_down();
  CHECK_EXIT();
}
