/* Signals: every value operation, waits with each condition, timeouts,
 * wake-ups from another thread, signal groups and handlers run when a value
 * becomes 0 (hsa_ven_aquila_signal_on_zero). */
#include "check.h"
#include "hsa_test_util.h"

#include <aquila/hsa_ext_aquila.h>

#include <pthread.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_create_destroy(void) {
  hsa_signal_t s;
  CHECK_EQ_INT(hsa_signal_create(5, 0, NULL, &s), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_signal_load_relaxed(s), 5);
  CHECK_EQ_INT(hsa_signal_create(5, 0, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_signal_create(5, 1, NULL, &s), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_agent_t agents[2] = {util_cpu_agent(), util_cpu_agent()};
  hsa_signal_t t;
  CHECK_EQ_INT(hsa_signal_create(0, 2, agents, &t), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_signal_create(0, 1, agents, &t), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_signal_destroy(t), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_signal_destroy(s), HSA_STATUS_SUCCESS);
  hsa_signal_t zero = {0};
  CHECK_EQ_INT(hsa_signal_destroy(zero), HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

static void test_value_operations(void) {
  hsa_signal_t s;
  REQUIRE(hsa_signal_create(0, 0, NULL, &s) == HSA_STATUS_SUCCESS);
  hsa_signal_store_relaxed(s, 10);
  CHECK_EQ_INT(hsa_signal_load_scacquire(s), 10);
  hsa_signal_store_screlease(s, 11);
  CHECK_EQ_INT(hsa_signal_load_acquire(s), 11);
  hsa_signal_store_release(s, 12);
  hsa_signal_silent_store_relaxed(s, 13);
  CHECK_EQ_INT(hsa_signal_load_relaxed(s), 13);
  hsa_signal_silent_store_screlease(s, 14);
  CHECK_EQ_INT(hsa_signal_load_relaxed(s), 14);

  CHECK_EQ_INT(hsa_signal_exchange_scacq_screl(s, 1), 14);
  CHECK_EQ_INT(hsa_signal_exchange_acq_rel(s, 2), 1);
  CHECK_EQ_INT(hsa_signal_exchange_scacquire(s, 3), 2);
  CHECK_EQ_INT(hsa_signal_exchange_acquire(s, 4), 3);
  CHECK_EQ_INT(hsa_signal_exchange_relaxed(s, 5), 4);
  CHECK_EQ_INT(hsa_signal_exchange_screlease(s, 6), 5);
  CHECK_EQ_INT(hsa_signal_exchange_release(s, 7), 6);

  CHECK_EQ_INT(hsa_signal_cas_scacq_screl(s, 7, 8), 7);
  CHECK_EQ_INT(hsa_signal_cas_acq_rel(s, 0, 100), 8); /* fails: value stays 8 */
  CHECK_EQ_INT(hsa_signal_cas_scacquire(s, 8, 9), 8);
  CHECK_EQ_INT(hsa_signal_cas_acquire(s, 9, 10), 9);
  CHECK_EQ_INT(hsa_signal_cas_relaxed(s, 10, 11), 10);
  CHECK_EQ_INT(hsa_signal_cas_screlease(s, 11, 12), 11);
  CHECK_EQ_INT(hsa_signal_cas_release(s, 12, 0), 12);
  CHECK_EQ_INT(hsa_signal_load_relaxed(s), 0);

  hsa_signal_add_scacq_screl(s, 1);
  hsa_signal_add_acq_rel(s, 1);
  hsa_signal_add_scacquire(s, 1);
  hsa_signal_add_acquire(s, 1);
  hsa_signal_add_relaxed(s, 1);
  hsa_signal_add_screlease(s, 1);
  hsa_signal_add_release(s, 1);
  CHECK_EQ_INT(hsa_signal_load_relaxed(s), 7);
  hsa_signal_subtract_scacq_screl(s, 1);
  hsa_signal_subtract_acq_rel(s, 1);
  hsa_signal_subtract_scacquire(s, 1);
  hsa_signal_subtract_acquire(s, 1);
  hsa_signal_subtract_relaxed(s, 1);
  hsa_signal_subtract_screlease(s, 1);
  hsa_signal_subtract_release(s, 1);
  CHECK_EQ_INT(hsa_signal_load_relaxed(s), 0);

  hsa_signal_store_relaxed(s, 0xff);
  hsa_signal_and_scacq_screl(s, 0x7f);
  hsa_signal_and_acq_rel(s, 0x3f);
  hsa_signal_and_scacquire(s, 0x1f);
  hsa_signal_and_acquire(s, 0x0f);
  hsa_signal_and_relaxed(s, 0x07);
  hsa_signal_and_screlease(s, 0x03);
  hsa_signal_and_release(s, 0x01);
  CHECK_EQ_INT(hsa_signal_load_relaxed(s), 1);
  hsa_signal_or_scacq_screl(s, 0x2);
  hsa_signal_or_acq_rel(s, 0x4);
  hsa_signal_or_scacquire(s, 0x8);
  hsa_signal_or_acquire(s, 0x10);
  hsa_signal_or_relaxed(s, 0x20);
  hsa_signal_or_screlease(s, 0x40);
  hsa_signal_or_release(s, 0x80);
  CHECK_EQ_INT(hsa_signal_load_relaxed(s), 0xff);
  hsa_signal_xor_scacq_screl(s, 0x1);
  hsa_signal_xor_acq_rel(s, 0x2);
  hsa_signal_xor_scacquire(s, 0x4);
  hsa_signal_xor_acquire(s, 0x8);
  hsa_signal_xor_relaxed(s, 0x10);
  hsa_signal_xor_screlease(s, 0x20);
  hsa_signal_xor_release(s, 0x40);
  CHECK_EQ_INT(hsa_signal_load_relaxed(s), 0x80);
  hsa_signal_destroy(s);
}

static void test_wait_conditions(void) {
  hsa_signal_t s;
  hsa_signal_create(5, 0, NULL, &s);
  CHECK_EQ_INT(
      hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 5, UINT64_MAX, HSA_WAIT_STATE_BLOCKED),
      5);
  CHECK_EQ_INT(
      hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_NE, 4, UINT64_MAX, HSA_WAIT_STATE_ACTIVE), 5);
  CHECK_EQ_INT(
      hsa_signal_wait_acquire(s, HSA_SIGNAL_CONDITION_LT, 6, UINT64_MAX, HSA_WAIT_STATE_BLOCKED),
      5);
  CHECK_EQ_INT(
      hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_GTE, 5, UINT64_MAX, HSA_WAIT_STATE_BLOCKED),
      5);
  hsa_signal_destroy(s);
}

static void test_wait_timeouts(void) {
  hsa_signal_t s;
  hsa_signal_create(1, 0, NULL, &s);
  hsa_signal_condition_t conditions[4] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_NE,
                                          HSA_SIGNAL_CONDITION_LT, HSA_SIGNAL_CONDITION_GTE};
  hsa_signal_value_t compares[4] = {0, 1, 1, 2};
  for (int i = 0; i < 4; i++) {
    for (int state = 0; state < 2; state++) {
      uint64_t start = now_ns();
      hsa_signal_value_t v = hsa_signal_wait_scacquire(s, conditions[i], compares[i], 20000000,
                                                       (hsa_wait_state_t)state);
      uint64_t waited = now_ns() - start;
      CHECK_EQ_INT(v, 1);
      CHECK(waited >= 19000000 && waited < 500000000); /* about 20 ms */
    }
  }
  hsa_signal_destroy(s);
}

struct setter {
  hsa_signal_t signal;
  useconds_t delay;
  hsa_signal_value_t value;
};

static void *set_later(void *arg) {
  struct setter *st = arg;
  usleep(st->delay);
  hsa_signal_store_screlease(st->signal, st->value);
  return NULL;
}

static void test_cross_thread_wake(void) {
  hsa_signal_condition_t conditions[4] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_NE,
                                          HSA_SIGNAL_CONDITION_LT, HSA_SIGNAL_CONDITION_GTE};
  hsa_signal_value_t compares[4] = {0, 1, 1, 2};
  hsa_signal_value_t new_values[4] = {0, 2, -5, 7};
  for (int i = 0; i < 4; i++) {
    hsa_signal_t s;
    hsa_signal_create(1, 0, NULL, &s);
    struct setter st = {s, 20000, new_values[i]};
    pthread_t thread;
    pthread_create(&thread, NULL, set_later, &st);
    uint64_t start = now_ns();
    hsa_signal_value_t v = hsa_signal_wait_scacquire(s, conditions[i], compares[i], UINT64_MAX,
                                                     HSA_WAIT_STATE_BLOCKED);
    uint64_t waited = now_ns() - start;
    CHECK_EQ_INT(v, new_values[i]);
    CHECK(waited < 2000000000ull);
    pthread_join(thread, NULL);
    hsa_signal_destroy(s);
  }
}

static void *add_many(void *arg) {
  hsa_signal_t *s = arg;
  for (int i = 0; i < 100000; i++)
    hsa_signal_add_relaxed(*s, 1);
  return NULL;
}

static void test_concurrent_adds(void) {
  hsa_signal_t s;
  hsa_signal_create(0, 0, NULL, &s);
  pthread_t threads[4];
  for (int i = 0; i < 4; i++)
    pthread_create(&threads[i], NULL, add_many, &s);
  CHECK_EQ_INT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_GTE, 400000, UINT64_MAX,
                                         HSA_WAIT_STATE_BLOCKED),
               400000);
  for (int i = 0; i < 4; i++)
    pthread_join(threads[i], NULL);
  hsa_signal_destroy(s);
}

static void test_signal_group(void) {
  hsa_signal_t signals[3];
  for (int i = 0; i < 3; i++)
    hsa_signal_create(1, 0, NULL, &signals[i]);
  hsa_signal_group_t group;
  CHECK_EQ_INT(hsa_signal_group_create(0, signals, 0, NULL, &group),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_signal_t dup[2] = {signals[0], signals[0]};
  CHECK_EQ_INT(hsa_signal_group_create(2, dup, 0, NULL, &group), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  REQUIRE(hsa_signal_group_create(3, signals, 0, NULL, &group) == HSA_STATUS_SUCCESS);
  hsa_signal_condition_t conds[3] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ,
                                     HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t values[3] = {0, 0, 0};
  struct setter st = {signals[2], 20000, 0};
  pthread_t thread;
  pthread_create(&thread, NULL, set_later, &st);
  hsa_signal_t which = {0};
  hsa_signal_value_t value = -1;
  CHECK_EQ_INT(hsa_signal_group_wait_any_scacquire(group, conds, values, HSA_WAIT_STATE_BLOCKED,
                                                   &which, &value),
               HSA_STATUS_SUCCESS);
  CHECK(which.handle == signals[2].handle);
  CHECK_EQ_INT(value, 0);
  pthread_join(thread, NULL);
  CHECK_EQ_INT(hsa_signal_group_wait_any_relaxed(group, conds, values, HSA_WAIT_STATE_ACTIVE,
                                                 &which, &value),
               HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_signal_group_destroy(group), HSA_STATUS_SUCCESS);
  hsa_signal_group_t bogus = {8};
  CHECK_EQ_INT(hsa_signal_group_destroy(bogus), HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);
  for (int i = 0; i < 3; i++)
    hsa_signal_destroy(signals[i]);
}

struct zero_count {
  int calls;
  hsa_signal_t seen;
  pthread_t thread;
};

static void count_zero(hsa_signal_t signal, void *arg) {
  struct zero_count *z = arg;
  z->calls++;
  z->seen = signal;
  z->thread = pthread_self();
}

static void *subtract_later(void *arg) {
  usleep(10000);
  hsa_signal_subtract_screlease(*(hsa_signal_t *)arg, 1);
  return NULL;
}

/* The handler runs once, on the thread whose change makes the value 0, or
 * at once when it is 0 already; not for changes to other values; a second
 * handler is refused while one waits; NULL removes it. */
static void test_on_zero(void) {
  hsa_signal_t s;
  REQUIRE(hsa_signal_create(2, 0, NULL, &s) == HSA_STATUS_SUCCESS);
  struct zero_count z = {0};
  CHECK_EQ_INT(hsa_ven_aquila_signal_on_zero(s, count_zero, &z), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_ven_aquila_signal_on_zero(s, count_zero, &z), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_signal_subtract_relaxed(s, 1);
  CHECK_EQ_INT(z.calls, 0);
  hsa_signal_store_relaxed(s, 5);
  CHECK_EQ_INT(z.calls, 0);
  hsa_signal_store_screlease(s, 0);
  CHECK_EQ_INT(z.calls, 1);
  CHECK(z.seen.handle == s.handle);
  hsa_signal_store_relaxed(s, 0); /* once only */
  CHECK_EQ_INT(z.calls, 1);
  /* Already 0: at once, on this thread. */
  CHECK_EQ_INT(hsa_ven_aquila_signal_on_zero(s, count_zero, &z), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(z.calls, 2);
  /* Made 0 by another thread: run there. */
  hsa_signal_store_relaxed(s, 1);
  CHECK_EQ_INT(hsa_ven_aquila_signal_on_zero(s, count_zero, &z), HSA_STATUS_SUCCESS);
  pthread_t thread;
  pthread_create(&thread, NULL, subtract_later, &s);
  hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  pthread_join(thread, NULL);
  CHECK_EQ_INT(z.calls, 3);
  CHECK(pthread_equal(z.thread, thread));
  /* Removed: not run. */
  hsa_signal_store_relaxed(s, 1);
  CHECK_EQ_INT(hsa_ven_aquila_signal_on_zero(s, count_zero, &z), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_ven_aquila_signal_on_zero(s, NULL, NULL), HSA_STATUS_SUCCESS);
  hsa_signal_store_relaxed(s, 0);
  CHECK_EQ_INT(z.calls, 3);
  hsa_signal_t bogus = {12345};
  CHECK_EQ_INT(hsa_ven_aquila_signal_on_zero(bogus, count_zero, &z),
               HSA_STATUS_ERROR_INVALID_SIGNAL);
  hsa_signal_destroy(s);
}

int main(void) {
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  RUN(test_create_destroy);
  RUN(test_value_operations);
  RUN(test_wait_conditions);
  RUN(test_wait_timeouts);
  RUN(test_cross_thread_wake);
  RUN(test_concurrent_adds);
  RUN(test_signal_group);
  RUN(test_on_zero);
  hsa_shut_down();
  CHECK_EXIT();
}
