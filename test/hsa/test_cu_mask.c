/* hsa_amd_queue_cu_set_mask on the CPU agent: the work-groups of a masked
 * queue's dispatches run only on the units in its mask (no other unit takes
 * its packets or steals its ranges), and the work still completes when the
 * masked units are busy. Runs with 4 compute units whatever the machine. */
#include "check.h"
#include "hsa_test_util.h"

#include <hsa/hsa_ext_amd.h>

enum { UNITS = 4 };

static hsa_agent_t agent;
static hsa_executable_t exec;
static const uint64_t timeout = 30ull * 1000000000ull;
/* unit_id[u]: the id the "uneven" kernel records for work-groups run by unit u. */
static uint64_t unit_id[UNITS];

struct uneven_args {
  uint64_t *runner; /* per work-group: an id of the thread that ran it */
  uint32_t spin;
};

static hsa_queue_t *new_queue(void) {
  hsa_queue_t *q = NULL;
  if (hsa_queue_create(agent, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q) !=
      HSA_STATUS_SUCCESS)
    return NULL;
  return q;
}

/* Starts an "uneven" dispatch of groups work-groups; the caller waits on done. */
static void start(hsa_queue_t *q, struct uneven_args *args, uint32_t groups, hsa_signal_t done) {
  uint32_t grid[3] = {groups, 1, 1};
  uint16_t wg[3] = {1, 1, 1};
  util_dispatch(q, util_kernel_object(exec, agent, "uneven"), args, 1, grid, wg, 0, done, false);
}

/* Work-groups whose runner is not one of the units in mask (or none). */
static int outside(const uint64_t *runner, uint32_t groups, uint32_t mask) {
  int bad = 0;
  for (uint32_t i = 0; i < groups; i++) {
    int ok = 0;
    for (int u = 0; u < UNITS; u++)
      if (((mask >> u) & 1u) && runner[i] == unit_id[u]) ok = 1;
    bad += !ok;
  }
  return bad;
}

static void test_errors(void) {
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint32_t mask[2] = {1, 0};
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask(NULL, 32, mask), HSA_STATUS_ERROR_INVALID_QUEUE);
  /* Zeroed memory as large as any queue: not a queue. */
  static _Alignas(64) unsigned char bogus[4096];
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask((hsa_queue_t *)bogus, 32, mask),
               HSA_STATUS_ERROR_INVALID_QUEUE);
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask(q, 33, mask), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask(q, 16, mask), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask(q, 32, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  uint32_t empty[2] = {0, 0};
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask(q, 64, empty), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  uint32_t missing[1] = {1u << UNITS}; /* only a unit that does not exist */
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask(q, 32, missing), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask(q, 64, mask), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask(q, 0, NULL), HSA_STATUS_SUCCESS); /* every unit */
  /* A soft queue is not processed by the agent. */
  hsa_signal_t doorbell;
  REQUIRE(hsa_signal_create(0, 0, NULL, &doorbell) == HSA_STATUS_SUCCESS);
  hsa_queue_t *soft = NULL;
  REQUIRE(hsa_soft_queue_create(util_region(agent, HSA_REGION_GLOBAL_FLAG_KERNARG), 64,
                                HSA_QUEUE_TYPE_MULTI, HSA_QUEUE_FEATURE_KERNEL_DISPATCH, doorbell,
                                &soft) == HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_amd_queue_cu_set_mask(soft, 32, mask), HSA_STATUS_ERROR_INVALID_QUEUE);
  hsa_queue_destroy(soft);
  hsa_signal_destroy(doorbell);
  hsa_queue_destroy(q);
}

/* With a one-unit mask every work-group runs on that unit: this also learns
 * each unit's id for the other cases. */
static void test_single_unit(void) {
  enum { GROUPS = 512 };
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint64_t *runner = calloc(GROUPS, sizeof(uint64_t));
  REQUIRE(runner);
  hsa_signal_t done;
  REQUIRE(hsa_signal_create(1, 0, NULL, &done) == HSA_STATUS_SUCCESS);
  for (int u = 0; u < UNITS; u++) {
    uint32_t mask = 1u << u;
    REQUIRE(hsa_amd_queue_cu_set_mask(q, 32, &mask) == HSA_STATUS_SUCCESS);
    memset(runner, 0, GROUPS * sizeof(uint64_t));
    hsa_signal_store_relaxed(done, 1);
    struct uneven_args args = {runner, 200};
    start(q, &args, GROUPS, done);
    REQUIRE(util_wait_zero(done, timeout));
    unit_id[u] = runner[0];
    CHECK(unit_id[u] != 0);
    int others = 0;
    for (int i = 0; i < GROUPS; i++)
      others += runner[i] != unit_id[u];
    CHECK_EQ_INT(others, 0);
    for (int v = 0; v < u; v++)
      CHECK(unit_id[v] != unit_id[u]);
  }
  hsa_signal_destroy(done);
  free(runner);
  hsa_queue_destroy(q);
}

/* Two units out of four: only they appear, and both may (stealing inside
 * the mask still works; not checked, as a busy machine may leave one idle). */
static void test_two_units(void) {
  enum { GROUPS = 4096 };
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint32_t mask = 0x6; /* units 1 and 2 */
  REQUIRE(hsa_amd_queue_cu_set_mask(q, 32, &mask) == HSA_STATUS_SUCCESS);
  uint64_t *runner = calloc(GROUPS, sizeof(uint64_t));
  REQUIRE(runner);
  hsa_signal_t done;
  REQUIRE(hsa_signal_create(1, 0, NULL, &done) == HSA_STATUS_SUCCESS);
  struct uneven_args args = {runner, 2000};
  start(q, &args, GROUPS, done);
  CHECK(util_wait_zero(done, timeout));
  CHECK_EQ_INT(outside(runner, GROUPS, mask), 0);
  hsa_signal_destroy(done);
  free(runner);
  hsa_queue_destroy(q);
}

/* Disjoint masks on two queues with concurrent dispatches, plus an unmasked
 * queue at the same time: the masked dispatches stay on their units. */
static void test_disjoint_queues(void) {
  enum { GROUPS = 2048 };
  hsa_queue_t *a = new_queue(), *b = new_queue(), *c = new_queue();
  REQUIRE(a && b && c);
  uint32_t mask_a = 0x1, mask_b = 0xc;
  REQUIRE(hsa_amd_queue_cu_set_mask(a, 32, &mask_a) == HSA_STATUS_SUCCESS);
  REQUIRE(hsa_amd_queue_cu_set_mask(b, 32, &mask_b) == HSA_STATUS_SUCCESS);
  uint64_t *ra = calloc(GROUPS, 8), *rb = calloc(GROUPS, 8), *rc = calloc(GROUPS, 8);
  REQUIRE(ra && rb && rc);
  hsa_signal_t da, db, dc;
  REQUIRE(hsa_signal_create(1, 0, NULL, &da) == HSA_STATUS_SUCCESS);
  REQUIRE(hsa_signal_create(1, 0, NULL, &db) == HSA_STATUS_SUCCESS);
  REQUIRE(hsa_signal_create(1, 0, NULL, &dc) == HSA_STATUS_SUCCESS);
  struct uneven_args aa = {ra, 1000}, ab = {rb, 1000}, ac = {rc, 1000};
  start(c, &ac, GROUPS, dc);
  start(a, &aa, GROUPS, da);
  start(b, &ab, GROUPS, db);
  CHECK(util_wait_zero(da, timeout));
  CHECK(util_wait_zero(db, timeout));
  CHECK(util_wait_zero(dc, timeout));
  CHECK_EQ_INT(outside(ra, GROUPS, mask_a), 0);
  CHECK_EQ_INT(outside(rb, GROUPS, mask_b), 0);
  CHECK_EQ_INT(outside(rc, GROUPS, 0xf), 0);
  hsa_signal_destroy(da);
  hsa_signal_destroy(db);
  hsa_signal_destroy(dc);
  free(ra);
  free(rb);
  free(rc);
  hsa_queue_destroy(a);
  hsa_queue_destroy(b);
  hsa_queue_destroy(c);
}

/* The only unit of a mask is busy with a long dispatch of another queue
 * when the masked queue's packets arrive: it gets to them afterwards, and
 * no other unit runs them meanwhile. Many small dispatches too. */
static void test_busy_unit(void) {
  enum { LONG = 256, SMALL = 64 };
  hsa_queue_t *busy = new_queue(), *q = new_queue();
  REQUIRE(busy && q);
  uint32_t mask = 0x8;
  REQUIRE(hsa_amd_queue_cu_set_mask(busy, 32, &mask) == HSA_STATUS_SUCCESS);
  REQUIRE(hsa_amd_queue_cu_set_mask(q, 32, &mask) == HSA_STATUS_SUCCESS);
  uint64_t *rl = calloc(LONG, 8), *rs = calloc(SMALL * 4, 8);
  REQUIRE(rl && rs);
  hsa_signal_t dl, ds;
  REQUIRE(hsa_signal_create(1, 0, NULL, &dl) == HSA_STATUS_SUCCESS);
  REQUIRE(hsa_signal_create(SMALL, 0, NULL, &ds) == HSA_STATUS_SUCCESS);
  struct uneven_args al = {rl, 100000};
  struct uneven_args as[SMALL];
  start(busy, &al, LONG, dl);
  for (int i = 0; i < SMALL; i++) {
    as[i].runner = rs + 4 * i;
    as[i].spin = 10;
    start(q, &as[i], 4, ds);
  }
  CHECK(util_wait_zero(ds, timeout));
  CHECK(util_wait_zero(dl, timeout));
  CHECK_EQ_INT(outside(rl, LONG, mask), 0);
  CHECK_EQ_INT(outside(rs, SMALL * 4, mask), 0);
  hsa_signal_destroy(dl);
  hsa_signal_destroy(ds);
  free(rl);
  free(rs);
  hsa_queue_destroy(busy);
  hsa_queue_destroy(q);
}

/* Changing the mask between dispatches moves the next ones; a count of 0
 * gives the queue every unit back. */
static void test_change_and_reset(void) {
  enum { GROUPS = 1024 };
  hsa_queue_t *q = new_queue();
  REQUIRE(q);
  uint64_t *runner = calloc(GROUPS, 8);
  REQUIRE(runner);
  hsa_signal_t done;
  REQUIRE(hsa_signal_create(1, 0, NULL, &done) == HSA_STATUS_SUCCESS);
  uint32_t masks[3] = {0x2, 0x9, 0};
  for (int k = 0; k < 3; k++) {
    REQUIRE(hsa_amd_queue_cu_set_mask(q, masks[k] ? 32 : 0, &masks[k]) == HSA_STATUS_SUCCESS);
    memset(runner, 0, GROUPS * 8);
    hsa_signal_store_relaxed(done, 1);
    struct uneven_args args = {runner, 500};
    start(q, &args, GROUPS, done);
    CHECK(util_wait_zero(done, timeout));
    CHECK_EQ_INT(outside(runner, GROUPS, masks[k] ? masks[k] : 0xf), 0);
  }
  hsa_signal_destroy(done);
  free(runner);
  hsa_queue_destroy(q);
}

int main(void) {
  setenv("AQUILA_CPU_UNITS", "4", 1);
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  agent = util_cpu_agent();
  uint32_t units = 0;
  hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &units);
  if (units != UNITS || util_load_executable("test_kernels", agent, &exec) != HSA_STATUS_SUCCESS) {
    printf("not ok setup\n");
    return 1;
  }
  RUN(test_errors);
  RUN(test_single_unit);
  RUN(test_two_units);
  RUN(test_disjoint_queues);
  RUN(test_busy_unit);
  RUN(test_change_and_reset);
  hsa_executable_destroy(exec);
  hsa_shut_down();
  CHECK_EXIT();
}
