/* AQL queues: creation errors, index operations, several producers on one
 * queue, barrier-AND/OR packets across queues, invalid packets and
 * destruction with packets pending. */
#include "check.h"
#include "hsa_test_util.h"

#include <pthread.h>
#include <unistd.h>

static hsa_agent_t agent;
static hsa_executable_t exec;
static uint64_t empty_kernel;
static const uint64_t timeout = 10ull * 1000000000ull;

static void test_create_errors(void) {
  hsa_queue_t *q = NULL;
  CHECK_EQ_INT(
      hsa_queue_create(agent, 1000, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q),
      HSA_STATUS_ERROR_INVALID_ARGUMENT); /* not a power of two */
  CHECK_EQ_INT(
      hsa_queue_create(agent, 0, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q),
      HSA_STATUS_ERROR_INVALID_ARGUMENT);
  uint32_t max_size = 0;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &max_size);
  CHECK_EQ_INT(hsa_queue_create(agent, max_size * 2, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX,
                                UINT32_MAX, &q),
               HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
  CHECK_EQ_INT(
      hsa_queue_create(agent, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, NULL),
      HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_agent_t bogus = {4};
  CHECK_EQ_INT(
      hsa_queue_create(bogus, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q),
      HSA_STATUS_ERROR_INVALID_AGENT);
  CHECK_EQ_INT(hsa_queue_create(agent, 256, 77, NULL, NULL, UINT32_MAX, UINT32_MAX, &q),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_queue_destroy(NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

static void test_indices(void) {
  hsa_queue_t *q = NULL;
  REQUIRE(hsa_queue_create(agent, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &q) == HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(q->size, 256);
  CHECK(q->base_address != NULL && q->doorbell_signal.handle != 0);
  CHECK(q->features & HSA_QUEUE_FEATURE_KERNEL_DISPATCH);
  /* Inactivate first so that index games do not make the agent process
   * packets. */
  CHECK_EQ_INT(hsa_queue_inactivate(q), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_queue_load_read_index_scacquire(q), 0);
  CHECK_EQ_INT(hsa_queue_load_write_index_relaxed(q), 0);
  CHECK_EQ_INT(hsa_queue_add_write_index_relaxed(q, 2), 0);
  CHECK_EQ_INT(hsa_queue_add_write_index_scacquire(q, 1), 2);
  CHECK_EQ_INT(hsa_queue_add_write_index_screlease(q, 1), 3);
  CHECK_EQ_INT(hsa_queue_add_write_index_scacq_screl(q, 1), 4);
  CHECK_EQ_INT(hsa_queue_add_write_index_acq_rel(q, 1), 5);
  CHECK_EQ_INT(hsa_queue_add_write_index_acquire(q, 1), 6);
  CHECK_EQ_INT(hsa_queue_add_write_index_release(q, 1), 7);
  CHECK_EQ_INT(hsa_queue_load_write_index_scacquire(q), 8);
  CHECK_EQ_INT(hsa_queue_load_write_index_acquire(q), 8);
  CHECK_EQ_INT(hsa_queue_cas_write_index_relaxed(q, 8, 9), 8);
  CHECK_EQ_INT(hsa_queue_cas_write_index_scacquire(q, 0, 1), 9); /* fails */
  CHECK_EQ_INT(hsa_queue_cas_write_index_screlease(q, 9, 10), 9);
  CHECK_EQ_INT(hsa_queue_cas_write_index_scacq_screl(q, 10, 11), 10);
  CHECK_EQ_INT(hsa_queue_cas_write_index_acq_rel(q, 11, 12), 11);
  CHECK_EQ_INT(hsa_queue_cas_write_index_acquire(q, 12, 13), 12);
  CHECK_EQ_INT(hsa_queue_cas_write_index_release(q, 13, 14), 13);
  hsa_queue_store_write_index_relaxed(q, 20);
  hsa_queue_store_write_index_screlease(q, 21);
  hsa_queue_store_write_index_release(q, 22);
  CHECK_EQ_INT(hsa_queue_load_write_index_relaxed(q), 22);
  hsa_queue_store_read_index_relaxed(q, 3);
  hsa_queue_store_read_index_screlease(q, 4);
  hsa_queue_store_read_index_release(q, 5);
  CHECK_EQ_INT(hsa_queue_load_read_index_relaxed(q), 5);
  CHECK_EQ_INT(hsa_queue_load_read_index_acquire(q), 5);
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

struct producer {
  hsa_queue_t *queue;
  hsa_signal_t done;
  int count;
};

static void *produce(void *arg) {
  struct producer *p = arg;
  uint32_t grid[3] = {1, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  for (int i = 0; i < p->count; i++)
    util_dispatch(p->queue, empty_kernel, NULL, 1, grid, wg, 0, p->done, false);
  return NULL;
}

static void test_multiple_producers(void) {
  hsa_queue_t *q = NULL;
  REQUIRE(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &q) == HSA_STATUS_SUCCESS);
  enum { THREADS = 4, EACH = 2000 };
  hsa_signal_t done;
  hsa_signal_create(THREADS * EACH, 0, NULL, &done);
  struct producer p = {q, done, EACH};
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&threads[i], NULL, produce, &p);
  for (int i = 0; i < THREADS; i++)
    pthread_join(threads[i], NULL);
  CHECK(util_wait_zero(done, timeout));
  CHECK_EQ_INT(hsa_queue_load_read_index_scacquire(q), THREADS * EACH);
  hsa_signal_destroy(done);
  hsa_queue_destroy(q);
}

/* Queue B's barrier-AND waits for two signals that queue A's work and the
 * host complete; B's barrier-OR completes on whichever comes first. */
static void test_barrier_packets_across_queues(void) {
  hsa_queue_t *a = NULL, *b = NULL;
  REQUIRE(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &a) == HSA_STATUS_SUCCESS);
  REQUIRE(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &b) == HSA_STATUS_SUCCESS);
  hsa_signal_t host, kernel_done, and_done, or_done, after_and;
  hsa_signal_create(1, 0, NULL, &host);
  hsa_signal_create(1, 0, NULL, &kernel_done);
  hsa_signal_create(1, 0, NULL, &and_done);
  hsa_signal_create(1, 0, NULL, &or_done);
  hsa_signal_create(1, 0, NULL, &after_and);

  hsa_signal_t and_deps[5] = {host, {0}, kernel_done, {0}, {0}};
  util_barrier(b, HSA_PACKET_TYPE_BARRIER_AND, and_deps, and_done);
  /* Same queue, after the barrier-AND: must not start before it. */
  uint32_t grid[3] = {1, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  util_dispatch(b, empty_kernel, NULL, 1, grid, wg, 0, after_and, false);

  usleep(10000);
  CHECK_EQ_INT(hsa_signal_load_scacquire(and_done), 1);
  CHECK_EQ_INT(hsa_signal_load_scacquire(after_and), 1);
  util_dispatch(a, empty_kernel, NULL, 1, grid, wg, 0, kernel_done, false);
  CHECK(util_wait_zero(kernel_done, timeout));
  usleep(10000);
  CHECK_EQ_INT(hsa_signal_load_scacquire(and_done), 1); /* host signal still 1 */
  hsa_signal_store_screlease(host, 0);
  CHECK(util_wait_zero(and_done, timeout));
  CHECK(util_wait_zero(after_and, timeout));

  hsa_signal_t pending1, pending2;
  hsa_signal_create(1, 0, NULL, &pending1);
  hsa_signal_create(1, 0, NULL, &pending2);
  hsa_signal_t or_deps[5] = {pending1, {0}, {0}, {0}, pending2};
  util_barrier(a, HSA_PACKET_TYPE_BARRIER_OR, or_deps, or_done);
  usleep(10000);
  CHECK_EQ_INT(hsa_signal_load_scacquire(or_done), 1);
  hsa_signal_subtract_screlease(pending2, 1);
  CHECK(util_wait_zero(or_done, timeout));

  hsa_queue_destroy(a);
  hsa_queue_destroy(b);
  hsa_signal_t all[7] = {host, kernel_done, and_done, or_done, after_and, pending1, pending2};
  for (int i = 0; i < 7; i++)
    hsa_signal_destroy(all[i]);
}

struct error_report {
  _Atomic int calls;
  hsa_status_t status;
  hsa_queue_t *source;
};

static void on_queue_error(hsa_status_t status, hsa_queue_t *source, void *data) {
  struct error_report *r = data;
  r->status = status;
  r->source = source;
  atomic_fetch_add(&r->calls, 1);
}

static void test_invalid_packet(void) {
  struct error_report report = {0};
  hsa_queue_t *q = NULL;
  REQUIRE(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, &report, UINT32_MAX,
                           UINT32_MAX, &q) == HSA_STATUS_SUCCESS);
  uint64_t index = util_reserve(q);
  hsa_kernel_dispatch_packet_t *p = (hsa_kernel_dispatch_packet_t *)q->base_address + index;
  memset((char *)p + 4, 0, sizeof(*p) - 4);
  util_publish(q, index, p, util_header((hsa_packet_type_t)42, false), 0);
  for (int i = 0; i < 2000 && atomic_load(&report.calls) == 0; i++)
    usleep(1000);
  CHECK_EQ_INT(atomic_load(&report.calls), 1);
  CHECK_EQ_INT(report.status, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
  CHECK(report.source == q);
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);

  /* A dispatch with work-group size 0 is malformed as well. */
  struct error_report report2 = {0};
  REQUIRE(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, &report2, UINT32_MAX,
                           UINT32_MAX, &q) == HSA_STATUS_SUCCESS);
  uint32_t grid[3] = {4, 1, 1};
  uint16_t wg[3] = {0, 1, 1};
  hsa_signal_t none = {0};
  util_dispatch(q, empty_kernel, NULL, 1, grid, wg, 0, none, false);
  for (int i = 0; i < 2000 && atomic_load(&report2.calls) == 0; i++)
    usleep(1000);
  CHECK_EQ_INT(report2.status, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);

  /* A dispatch without a kernel object names no code: INVALID_CODE_OBJECT. */
  struct error_report report3 = {0};
  REQUIRE(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, &report3, UINT32_MAX,
                           UINT32_MAX, &q) == HSA_STATUS_SUCCESS);
  uint16_t wg1[3] = {1, 1, 1};
  util_dispatch(q, 0, NULL, 1, grid, wg1, 0, none, false);
  for (int i = 0; i < 2000 && atomic_load(&report3.calls) == 0; i++)
    usleep(1000);
  CHECK_EQ_INT(report3.status, HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

static void test_destroy_with_pending_packets(void) {
  hsa_queue_t *q = NULL;
  REQUIRE(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &q) == HSA_STATUS_SUCCESS);
  hsa_signal_t never, done;
  hsa_signal_create(1, 0, NULL, &never);
  hsa_signal_create(100, 0, NULL, &done);
  hsa_signal_t deps[5] = {never, {0}, {0}, {0}, {0}};
  util_barrier(q, HSA_PACKET_TYPE_BARRIER_AND, deps, done); /* blocks the queue forever */
  uint32_t grid[3] = {1, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  for (int i = 0; i < 20; i++)
    util_dispatch(q, empty_kernel, NULL, 1, grid, wg, 0, done, false);
  usleep(2000);
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
  /* The watched signal outlives the queue; changing it must be harmless. */
  hsa_signal_store_screlease(never, 0);
  usleep(2000);
  hsa_signal_destroy(never);
  hsa_signal_destroy(done);

  /* And with busy work in flight. */
  REQUIRE(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &q) == HSA_STATUS_SUCCESS);
  uint32_t big[3] = {100000, 1, 1};
  hsa_signal_t none = {0};
  for (int i = 0; i < 10; i++)
    util_dispatch(q, empty_kernel, NULL, 1, big, wg, 0, none, false);
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
}

static void test_soft_queue(void) {
  hsa_region_t region = util_region(agent, HSA_REGION_GLOBAL_FLAG_FINE_GRAINED);
  hsa_signal_t doorbell;
  hsa_signal_create(0, 0, NULL, &doorbell);
  hsa_queue_t *q = NULL;
  CHECK_EQ_INT(hsa_soft_queue_create(region, 100, HSA_QUEUE_TYPE_MULTI,
                                     HSA_QUEUE_FEATURE_AGENT_DISPATCH, doorbell, &q),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  REQUIRE(hsa_soft_queue_create(region, 128, HSA_QUEUE_TYPE_SINGLE,
                                HSA_QUEUE_FEATURE_AGENT_DISPATCH, doorbell,
                                &q) == HSA_STATUS_SUCCESS);
  CHECK(q->doorbell_signal.handle == doorbell.handle);
  CHECK_EQ_INT(hsa_queue_add_write_index_relaxed(q, 1), 0);
  hsa_signal_store_screlease(q->doorbell_signal, 0);
  CHECK_EQ_INT(hsa_queue_load_read_index_relaxed(q), 0); /* nobody processes a soft queue */
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
  hsa_signal_destroy(doorbell);
}

/* A destroyed queue's handle is refused, however often it is used again. */
static void test_stale_queue(void) {
  hsa_queue_t *q = NULL;
  REQUIRE(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &q) == HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_ERROR_INVALID_QUEUE);
  CHECK_EQ_INT(hsa_queue_inactivate(q), HSA_STATUS_ERROR_INVALID_QUEUE);
  CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_ERROR_INVALID_QUEUE);
}

/* hsa.h: any power of two up to the maximum; the queue gets at least the
 * agent's minimum. Small queues run dispatches through several laps. */
static void test_small_queues(void) {
  uint32_t min_size = 0;
  REQUIRE(hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &min_size) ==
          HSA_STATUS_SUCCESS);
  CHECK(min_size >= 1 && min_size <= 4);
  for (uint32_t size = 1; size <= 64; size *= 2) {
    hsa_queue_t *q = NULL;
    CHECK_EQ_INT(hsa_queue_create(agent, size, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX,
                                  UINT32_MAX, &q),
                 HSA_STATUS_SUCCESS);
    if (!q) continue;
    CHECK_EQ_INT(q->size, size < min_size ? min_size : size);
    hsa_signal_t done;
    REQUIRE(hsa_signal_create(1, 0, NULL, &done) == HSA_STATUS_SUCCESS);
    uint32_t grid[3] = {4, 1, 1};
    uint16_t wg[3] = {2, 1, 1};
    for (int i = 0; i < 10; i++) {
      hsa_signal_store_relaxed(done, 1);
      util_dispatch(q, empty_kernel, NULL, 1, grid, wg, 0, done, false);
      CHECK_EQ_INT(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 5000000000ull,
                                             HSA_WAIT_STATE_BLOCKED),
                   0);
    }
    hsa_signal_destroy(done);
    CHECK_EQ_INT(hsa_queue_destroy(q), HSA_STATUS_SUCCESS);
  }
}

/* Creating the most queues of the largest size either succeeds or reports
 * OUT_OF_RESOURCES; it must not exhaust the machine's memory. */
static void test_many_large_queues(void) {
  uint32_t queues_max = 0, max_size = 0;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUES_MAX, &queues_max);
  hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &max_size);
  hsa_queue_t **queues = calloc(queues_max, sizeof(*queues));
  REQUIRE(queues);
  uint32_t created = 0;
  hsa_status_t status = HSA_STATUS_SUCCESS;
  for (; created < queues_max; created++) {
    status = hsa_queue_create(agent, max_size, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX,
                              UINT32_MAX, &queues[created]);
    if (status != HSA_STATUS_SUCCESS) break;
  }
  CHECK(status == HSA_STATUS_SUCCESS || status == HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  CHECK(created > 0);
  for (uint32_t i = 0; i < created; i++)
    CHECK_EQ_INT(hsa_queue_destroy(queues[i]), HSA_STATUS_SUCCESS);
  free(queues);
}

int main(void) {
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  agent = util_cpu_agent();
  if (util_load_executable("test_kernels", agent, &exec) != HSA_STATUS_SUCCESS) return 1;
  empty_kernel = util_kernel_object(exec, agent, "empty");
  RUN(test_create_errors);
  RUN(test_indices);
  RUN(test_multiple_producers);
  RUN(test_barrier_packets_across_queues);
  RUN(test_invalid_packet);
  RUN(test_destroy_with_pending_packets);
  RUN(test_soft_queue);
  RUN(test_stale_queue);
  RUN(test_small_queues);
  RUN(test_many_large_queues);
  hsa_executable_destroy(exec);
  hsa_shut_down();
  CHECK_EXIT();
}
