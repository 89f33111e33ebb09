/* HSA signals and signal groups: the value operations in every memory order,
 * waits (a short spin, then a futex sleep) and the wake-up protocol.
 *
 * Wake-up protocol: a writer changes the value, issues a full fence, and only
 * when the signal has sleepers bumps change_seq and wakes them; a waiter
 * counts itself in sleepers (a full barrier), reads change_seq, re-checks the
 * value and sleeps on change_seq. Either the writer sees the sleeper or the
 * sleeper sees the new value, so no wake-up is lost and writers pay no
 * system call while nobody sleeps.
 *
 * Waits on several signals at once (signal groups, stalled barrier packets in
 * the CPU agent) mark the signals as watched; a change of a watched signal
 * bumps one process-wide epoch that those waiters sleep on. */
#include "hsa_internal.h"

#include <aquila/hsa_ext_aquila.h>
#include <hsa/hsa_ext_amd.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define AQ_SIGNAL_MAGIC 0x5167a1u
#define AQ_SIGNAL_GROUP_MAGIC 0x5167b2u

/* How long a waiter polls before it sleeps. Short, so that waiters do not
 * take CPU time from the compute units; long enough to catch a dispatch
 * that completes within a few microseconds. */
#define AQ_SPIN_NS_BLOCKED 4000u
#define AQ_SPIN_NS_ACTIVE 50000u

static _Atomic uint32_t watch_epoch;
static _Atomic uint32_t watch_epoch_sleepers;

int aq_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns) {
  struct timespec ts, *tsp = NULL;
  if (timeout_ns != UINT64_MAX) {
    ts.tv_sec = (time_t)(timeout_ns / 1000000000ull);
    ts.tv_nsec = (long)(timeout_ns % 1000000000ull);
    tsp = &ts;
  }
  long rc = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, tsp, NULL, 0);
  if (rc == -1 && errno == ETIMEDOUT) return -1;
  return 0;
}

void aq_futex_wake(_Atomic uint32_t *word, int count) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

struct aq_signal *aq_signal_from_handle(hsa_signal_t signal) {
  struct aq_signal *s = (struct aq_signal *)(uintptr_t)signal.handle;
  if (!aq_handle_plausible(signal.handle, AQ_CACHE_LINE) ||
      atomic_load_explicit(&s->magic, memory_order_relaxed) != AQ_SIGNAL_MAGIC)
    return NULL;
  return s;
}

hsa_signal_t aq_signal_to_handle(struct aq_signal *signal) {
  hsa_signal_t handle = {(uint64_t)(uintptr_t)signal};
  return handle;
}

/* Signals are recycled through a free list and never returned to the heap:
 * a writer that is still inside signal_changed() when the waiter it woke
 * destroys the signal then reads a stale but valid aq_signal, which at worst
 * costs a spurious wake-up. */
static pthread_mutex_t signal_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aq_signal *signal_pool;

void aq_signal_fork(enum aq_fork_phase phase) {
  aq_fork_lock(&signal_pool_lock, phase);
}

struct aq_signal *aq_signal_new(int64_t initial_value) {
  pthread_mutex_lock(&signal_pool_lock);
  struct aq_signal *s = signal_pool;
  if (s) signal_pool = s->next_free;
  pthread_mutex_unlock(&signal_pool_lock);
  if (!s) s = aligned_alloc(AQ_CACHE_LINE, sizeof(*s));
  if (!s) return NULL;
  atomic_init(&s->value, initial_value);
  atomic_init(&s->change_seq, 0);
  atomic_init(&s->sleepers, 0);
  atomic_init(&s->watchers, 0);
  s->doorbell_queue = NULL;
  atomic_init(&s->fault_signal, 0);
  atomic_init(&s->zero_handler, NULL);
  s->zero_arg = NULL;
  atomic_store_explicit(&s->magic, AQ_SIGNAL_MAGIC, memory_order_relaxed);
  return s;
}

void aq_signal_free(struct aq_signal *signal) {
  if (!signal) return;
  atomic_store_explicit(&signal->magic, 0, memory_order_relaxed);
  signal->doorbell_queue = NULL;
  atomic_store(&signal->zero_handler, NULL);
  pthread_mutex_lock(&signal_pool_lock);
  signal->next_free = signal_pool;
  signal_pool = signal;
  pthread_mutex_unlock(&signal_pool_lock);
}

bool aq_signal_condition_holds(int64_t value, hsa_signal_condition_t condition,
                               int64_t compare_value) {
  switch (condition) {
  case HSA_SIGNAL_CONDITION_EQ:
    return value == compare_value;
  case HSA_SIGNAL_CONDITION_NE:
    return value != compare_value;
  case HSA_SIGNAL_CONDITION_LT:
    return value < compare_value;
  case HSA_SIGNAL_CONDITION_GTE:
    return value >= compare_value;
  }
  return false;
}

static void run_zero_handler(struct aq_signal *s) {
  void (*handler)(hsa_signal_t, void *) = atomic_exchange(&s->zero_handler, NULL);
  if (handler) handler(aq_signal_to_handle(s), s->zero_arg);
}

/* Called after every change of a signal's value (not after silent stores). */
static inline void signal_changed(struct aq_signal *s) {
  atomic_thread_fence(memory_order_seq_cst);
  struct aq_queue *doorbell_queue = atomic_load_explicit(&s->doorbell_queue, memory_order_relaxed);
  if (doorbell_queue) {
    if (doorbell_queue->remote)
      aq_remote_ring(doorbell_queue);
    else
      aq_cpu_agent_ring(doorbell_queue);
  }
  if (atomic_load_explicit(&s->sleepers, memory_order_relaxed)) {
    atomic_fetch_add(&s->change_seq, 1);
    aq_futex_wake(&s->change_seq, INT_MAX);
  }
  if (atomic_load_explicit(&s->watchers, memory_order_relaxed)) {
    atomic_fetch_add(&watch_epoch, 1);
    if (atomic_load(&watch_epoch_sleepers)) aq_futex_wake(&watch_epoch, INT_MAX);
    aq_cpu_agent_watched_signal_changed();
  }
  /* Last: the handler may destroy the signal. */
  if (atomic_load_explicit(&s->zero_handler, memory_order_relaxed) &&
      atomic_load_explicit(&s->value, memory_order_acquire) == 0)
    run_zero_handler(s);
}

void aq_signal_subtract_release(struct aq_signal *signal, int64_t amount) {
  atomic_fetch_sub_explicit(&signal->value, amount, memory_order_release);
  signal_changed(signal);
}

hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                               const hsa_agent_t *consumers, hsa_signal_t *signal) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!signal || (num_consumers > 0 && !consumers)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < num_consumers; i++) {
    if (!aq_agent_exists(consumers[i])) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (uint32_t j = 0; j < i; j++)
      if (consumers[j].handle == consumers[i].handle) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  struct aq_signal *s = aq_signal_new(initial_value);
  if (!s) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  *signal = aq_signal_to_handle(s);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_destroy(hsa_signal_t signal) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (signal.handle == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct aq_signal *s = aq_signal_from_handle(signal);
  /* A queue's doorbell belongs to the queue and dies with it. */
  if (!s || s->doorbell_queue) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  aq_signal_free(s);
  return HSA_STATUS_SUCCESS;
}

/* ---- loads and stores ---- */

#define SIGNAL_OR_RETURN(var, handle, ret)                                                         \
  struct aq_signal *var = aq_signal_from_handle(handle);                                           \
  if (!var) return ret

hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t signal) {
  SIGNAL_OR_RETURN(s, signal, 0);
  return atomic_load_explicit(&s->value, memory_order_acquire);
}
hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t signal) {
  SIGNAL_OR_RETURN(s, signal, 0);
  return atomic_load_explicit(&s->value, memory_order_relaxed);
}
hsa_signal_value_t hsa_signal_load_acquire(hsa_signal_t signal) {
  return hsa_signal_load_scacquire(signal);
}

void hsa_signal_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
  SIGNAL_OR_RETURN(s, signal, );
  atomic_store_explicit(&s->fault_signal, 0, memory_order_relaxed);
  atomic_store_explicit(&s->value, value, memory_order_relaxed);
  signal_changed(s);
}
void hsa_signal_store_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
  SIGNAL_OR_RETURN(s, signal, );
  atomic_store_explicit(&s->fault_signal, 0, memory_order_relaxed);
  atomic_store_explicit(&s->value, value, memory_order_release);
  signal_changed(s);
}
void hsa_signal_store_release(hsa_signal_t signal, hsa_signal_value_t value) {
  hsa_signal_store_screlease(signal, value);
}
void hsa_signal_silent_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value) {
  SIGNAL_OR_RETURN(s, signal, );
  atomic_store_explicit(&s->fault_signal, 0, memory_order_relaxed);
  atomic_store_explicit(&s->value, value, memory_order_relaxed);
}
void hsa_signal_silent_store_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
  SIGNAL_OR_RETURN(s, signal, );
  atomic_store_explicit(&s->fault_signal, 0, memory_order_relaxed);
  atomic_store_explicit(&s->value, value, memory_order_release);
}

/* ---- read-modify-write operations, one function per memory order ---- */

#define SIGNAL_EXCHANGE(suffix, order)                                                             \
  hsa_signal_value_t hsa_signal_exchange_##suffix(hsa_signal_t signal, hsa_signal_value_t value) { \
    SIGNAL_OR_RETURN(s, signal, 0);                                                                \
    hsa_signal_value_t old = atomic_exchange_explicit(&s->value, value, order);                    \
    signal_changed(s);                                                                             \
    return old;                                                                                    \
  }

#define SIGNAL_CAS(suffix, order)                                                                  \
  hsa_signal_value_t hsa_signal_cas_##suffix(hsa_signal_t signal, hsa_signal_value_t expected,     \
                                             hsa_signal_value_t value) {                           \
    SIGNAL_OR_RETURN(s, signal, 0);                                                                \
    hsa_signal_value_t observed = expected;                                                        \
    if (atomic_compare_exchange_strong_explicit(&s->value, &observed, value, order,                \
                                                memory_order_relaxed))                             \
      signal_changed(s);                                                                           \
    return observed;                                                                               \
  }

#define SIGNAL_RMW(name, op, suffix, order)                                                        \
  void hsa_signal_##name##_##suffix(hsa_signal_t signal, hsa_signal_value_t value) {               \
    SIGNAL_OR_RETURN(s, signal, );                                                                 \
    atomic_fetch_##op##_explicit(&s->value, value, order);                                         \
    signal_changed(s);                                                                             \
  }

#define SIGNAL_ALL_ORDERS(GEN, ...)                                                                \
  GEN(__VA_ARGS__ scacq_screl, memory_order_acq_rel)                                               \
  GEN(__VA_ARGS__ acq_rel, memory_order_acq_rel)                                                   \
  GEN(__VA_ARGS__ scacquire, memory_order_acquire)                                                 \
  GEN(__VA_ARGS__ acquire, memory_order_acquire)                                                   \
  GEN(__VA_ARGS__ relaxed, memory_order_relaxed)                                                   \
  GEN(__VA_ARGS__ screlease, memory_order_release)                                                 \
  GEN(__VA_ARGS__ release, memory_order_release)

SIGNAL_ALL_ORDERS(SIGNAL_EXCHANGE)
SIGNAL_ALL_ORDERS(SIGNAL_CAS)
SIGNAL_ALL_ORDERS(SIGNAL_RMW, add, add, )
SIGNAL_ALL_ORDERS(SIGNAL_RMW, subtract, sub, )
SIGNAL_ALL_ORDERS(SIGNAL_RMW, and, and, )
SIGNAL_ALL_ORDERS(SIGNAL_RMW, or, or, )
SIGNAL_ALL_ORDERS(SIGNAL_RMW, xor, xor, )

/* ---- waits ---- */

static uint64_t deadline_from_timeout(uint64_t start, uint64_t timeout_hint) {
  if (timeout_hint == UINT64_MAX || start + timeout_hint < start) return UINT64_MAX;
  return start + timeout_hint;
}

static hsa_signal_value_t signal_wait(hsa_signal_t signal, hsa_signal_condition_t condition,
                                      hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                      hsa_wait_state_t wait_state, memory_order order) {
  SIGNAL_OR_RETURN(s, signal, 0);
  int64_t value = atomic_load_explicit(&s->value, order);
  if (aq_signal_condition_holds(value, condition, compare_value)) return value;
  if ((unsigned)condition > HSA_SIGNAL_CONDITION_GTE) return value;

  uint64_t start = aq_now_ns();
  uint64_t deadline = deadline_from_timeout(start, timeout_hint);
  uint64_t spin_end =
      start + (wait_state == HSA_WAIT_STATE_ACTIVE ? AQ_SPIN_NS_ACTIVE : AQ_SPIN_NS_BLOCKED);
  if (spin_end > deadline) spin_end = deadline;
  for (uint64_t now = start; now < spin_end;) {
    for (int i = 0; i < 32; i++) {
      value = atomic_load_explicit(&s->value, order);
      if (aq_signal_condition_holds(value, condition, compare_value)) return value;
      cpu_relax();
    }
    now = aq_now_ns();
  }
  for (;;) {
    atomic_fetch_add(&s->sleepers, 1);
    uint32_t seq = atomic_load(&s->change_seq);
    value = atomic_load_explicit(&s->value, order);
    uint64_t now = aq_now_ns();
    if (aq_signal_condition_holds(value, condition, compare_value) || now >= deadline) {
      atomic_fetch_sub(&s->sleepers, 1);
      return value;
    }
    aq_futex_wait(&s->change_seq, seq, deadline == UINT64_MAX ? UINT64_MAX : deadline - now);
    atomic_fetch_sub(&s->sleepers, 1);
  }
}

hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal, hsa_signal_condition_t condition,
                                             hsa_signal_value_t compare_value,
                                             uint64_t timeout_hint,
                                             hsa_wait_state_t wait_state_hint) {
  return signal_wait(signal, condition, compare_value, timeout_hint, wait_state_hint,
                     memory_order_acquire);
}

hsa_signal_value_t hsa_ven_aquila_signal_wait_helping(hsa_signal_t signal,
                                                      hsa_signal_condition_t condition,
                                                      hsa_signal_value_t compare_value,
                                                      uint64_t timeout_hint,
                                                      hsa_wait_state_t wait_state_hint,
                                                      hsa_queue_t *queue, uint64_t packet_id) {
  SIGNAL_OR_RETURN(s, signal, 0);
  struct aq_queue *q = queue ? aq_queue_from_public(queue) : NULL;
  if (q && (unsigned)condition <= HSA_SIGNAL_CONDITION_GTE &&
      !aq_signal_condition_holds(atomic_load_explicit(&s->value, memory_order_acquire), condition,
                                 compare_value)) {
    if (q->remote) {
      uint64_t receive =
          wait_state_hint == HSA_WAIT_STATE_ACTIVE ? AQ_SPIN_NS_ACTIVE : AQ_SPIN_NS_BLOCKED;
      aq_remote_receive_while_waiting(s, condition, compare_value,
                                      receive < timeout_hint ? receive : timeout_hint);
    } else if (!q->soft)
      aq_cpu_agent_help(q, packet_id, s, condition, compare_value);
  }
  return signal_wait(signal, condition, compare_value, timeout_hint, wait_state_hint,
                     memory_order_acquire);
}

hsa_signal_value_t hsa_ven_aquila_signal_help_short(hsa_signal_t signal, hsa_queue_t *queue,
                                                    uint64_t packet_id) {
  SIGNAL_OR_RETURN(s, signal, 0);
  struct aq_queue *q = queue ? aq_queue_from_public(queue) : NULL;
  int64_t value = atomic_load_explicit(&s->value, memory_order_acquire);
  if (q && !q->soft && value != 0) {
    aq_cpu_agent_help_short(q, packet_id, s);
    /* Pooled memory: readable even if a handler the end ran destroyed it. */
    value = atomic_load_explicit(&s->value, memory_order_acquire);
  }
  return value;
}

hsa_status_t hsa_ven_aquila_signal_dispatch_status(hsa_signal_t signal,
                                                   hsa_ven_aquila_dispatch_fault_t *fault) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_signal *s = aq_signal_from_handle(signal);
  if (!s) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  int sig = atomic_load_explicit(&s->fault_signal, memory_order_acquire);
  if (fault) {
    memset(fault, 0, sizeof *fault);
    fault->signal = sig;
    if (sig) {
      fault->address = s->fault_address;
      memcpy(fault->group_id, s->fault_group, sizeof fault->group_id);
    }
  }
  return aq_fault_status(sig);
}

hsa_status_t hsa_ven_aquila_signal_on_zero(hsa_signal_t signal,
                                           hsa_ven_aquila_signal_zero_handler_t handler,
                                           void *arg) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_signal *s = aq_signal_from_handle(signal);
  if (!s) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  if (!handler) {
    atomic_store(&s->zero_handler, NULL);
    return HSA_STATUS_SUCCESS;
  }
  if (atomic_load(&s->zero_handler)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  s->zero_arg = arg;
  atomic_store(&s->zero_handler, handler);
  /* A change to 0 before the store above did not see the handler. */
  if (atomic_load(&s->value) == 0) run_zero_handler(s);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal,
                                                 hsa_amd_profiling_dispatch_time_t *time) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_is_valid(agent) && aq_remote_agent_index(agent) < 0)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_signal *s = aq_signal_from_handle(signal);
  if (!s) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  if (!time) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  /* Written before the completion's decrement: the caller waited for it. */
  atomic_thread_fence(memory_order_acquire);
  time->start = s->dispatch_start;
  time->end = s->dispatch_end;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t aq_fault_status(int sig) {
  switch (sig) {
  case 0:
    return HSA_STATUS_SUCCESS;
  case SIGSEGV:
  case SIGBUS:
    return (hsa_status_t)HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION;
  case SIGILL:
    return (hsa_status_t)HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION;
  default:
    return HSA_STATUS_ERROR_EXCEPTION;
  }
}

hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t signal, hsa_signal_condition_t condition,
                                           hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                           hsa_wait_state_t wait_state_hint) {
  return signal_wait(signal, condition, compare_value, timeout_hint, wait_state_hint,
                     memory_order_relaxed);
}

hsa_signal_value_t hsa_signal_wait_acquire(hsa_signal_t signal, hsa_signal_condition_t condition,
                                           hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                           hsa_wait_state_t wait_state_hint) {
  return hsa_signal_wait_scacquire(signal, condition, compare_value, timeout_hint, wait_state_hint);
}

/* ---- watching several signals (signal groups and the CPU agent) ---- */

void aq_signal_watch(struct aq_signal *signal) {
  atomic_fetch_add(&signal->watchers, 1);
}

void aq_signal_unwatch(struct aq_signal *signal) {
  atomic_fetch_sub(&signal->watchers, 1);
}

/* ---- signal groups ---- */

struct aq_signal_group {
  uint32_t magic;
  uint32_t count;
  struct aq_signal *signals[];
};

static struct aq_signal_group *group_from_handle(hsa_signal_group_t handle) {
  struct aq_signal_group *g = (struct aq_signal_group *)(uintptr_t)handle.handle;
  if (!aq_handle_is_live(handle.handle, AQ_HANDLE_SIGNAL_GROUP)) return NULL;
  return g;
}

hsa_status_t hsa_signal_group_create(uint32_t num_signals, const hsa_signal_t *signals,
                                     uint32_t num_consumers, const hsa_agent_t *consumers,
                                     hsa_signal_group_t *signal_group) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (num_signals == 0 || !signals || !signal_group || (num_consumers > 0 && !consumers))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < num_consumers; i++)
    if (!aq_agent_exists(consumers[i])) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < num_signals; i++) {
    if (!aq_signal_from_handle(signals[i])) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (uint32_t j = 0; j < i; j++)
      if (signals[j].handle == signals[i].handle) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  struct aq_signal_group *g = malloc(sizeof(*g) + num_signals * sizeof(g->signals[0]));
  if (!g) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  if (!aq_handle_add(g, AQ_HANDLE_SIGNAL_GROUP)) {
    free(g);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  g->magic = AQ_SIGNAL_GROUP_MAGIC;
  g->count = num_signals;
  for (uint32_t i = 0; i < num_signals; i++)
    g->signals[i] = aq_signal_from_handle(signals[i]);
  signal_group->handle = (uint64_t)(uintptr_t)g;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_group_destroy(hsa_signal_group_t signal_group) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_signal_group *g = group_from_handle(signal_group);
  if (!g || !aq_handle_remove(g, AQ_HANDLE_SIGNAL_GROUP))
    return HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP;
  g->magic = 0;
  free(g);
  return HSA_STATUS_SUCCESS;
}

static bool group_find_satisfied(struct aq_signal_group *g, const hsa_signal_condition_t *conds,
                                 const hsa_signal_value_t *values, memory_order order,
                                 hsa_signal_t *signal, hsa_signal_value_t *value) {
  for (uint32_t i = 0; i < g->count; i++) {
    int64_t v = atomic_load_explicit(&g->signals[i]->value, order);
    if (aq_signal_condition_holds(v, conds[i], values[i])) {
      if (signal) *signal = aq_signal_to_handle(g->signals[i]);
      if (value) *value = v;
      return true;
    }
  }
  return false;
}

static hsa_status_t group_wait_any(hsa_signal_group_t signal_group,
                                   const hsa_signal_condition_t *conditions,
                                   const hsa_signal_value_t *compare_values,
                                   hsa_wait_state_t wait_state, hsa_signal_t *signal,
                                   hsa_signal_value_t *value, memory_order order) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_signal_group *g = group_from_handle(signal_group);
  if (!g) return HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP;
  if (!conditions || !compare_values || !signal || !value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < g->count; i++)
    if ((unsigned)conditions[i] > HSA_SIGNAL_CONDITION_GTE)
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;

  uint64_t spin_end =
      aq_now_ns() + (wait_state == HSA_WAIT_STATE_ACTIVE ? AQ_SPIN_NS_ACTIVE : AQ_SPIN_NS_BLOCKED);
  do {
    if (group_find_satisfied(g, conditions, compare_values, order, signal, value))
      return HSA_STATUS_SUCCESS;
    cpu_relax();
  } while (aq_now_ns() < spin_end);

  for (uint32_t i = 0; i < g->count; i++)
    aq_signal_watch(g->signals[i]);
  for (;;) {
    atomic_fetch_add(&watch_epoch_sleepers, 1);
    uint32_t epoch = atomic_load(&watch_epoch);
    if (group_find_satisfied(g, conditions, compare_values, order, signal, value)) {
      atomic_fetch_sub(&watch_epoch_sleepers, 1);
      break;
    }
    aq_futex_wait(&watch_epoch, epoch, UINT64_MAX);
    atomic_fetch_sub(&watch_epoch_sleepers, 1);
  }
  for (uint32_t i = 0; i < g->count; i++)
    aq_signal_unwatch(g->signals[i]);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_group_wait_any_scacquire(hsa_signal_group_t signal_group,
                                                 const hsa_signal_condition_t *conditions,
                                                 const hsa_signal_value_t *compare_values,
                                                 hsa_wait_state_t wait_state_hint,
                                                 hsa_signal_t *signal, hsa_signal_value_t *value) {
  return group_wait_any(signal_group, conditions, compare_values, wait_state_hint, signal, value,
                        memory_order_acquire);
}

hsa_status_t hsa_signal_group_wait_any_relaxed(hsa_signal_group_t signal_group,
                                               const hsa_signal_condition_t *conditions,
                                               const hsa_signal_value_t *compare_values,
                                               hsa_wait_state_t wait_state_hint,
                                               hsa_signal_t *signal, hsa_signal_value_t *value) {
  return group_wait_any(signal_group, conditions, compare_values, wait_state_hint, signal, value,
                        memory_order_relaxed);
}
