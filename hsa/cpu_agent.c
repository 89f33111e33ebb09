/* The CPU agent's packet processor and compute units.
 *
 * Each compute unit is a thread with a deque of work-group ranges. There is
 * no dispatcher thread: a doorbell marks its queue pending and wakes one
 * sleeping unit (or is seen by the one unit that spins briefly before it
 * sleeps); that unit pulls the packets itself, turns each kernel dispatch into
 * one range of work-groups on its own deque, and starts running it. Idle
 * units steal half of a range from the others. Barrier packets that cannot
 * complete yet mark their signals as watched and leave the queue stalled; a
 * change of a watched signal makes the units look at the queue again.
 *
 * A queue with a compute-unit mask (hsa_amd_queue_cu_set_mask) is scanned
 * only by the units in its mask, and each of its dispatches carries a copy of
 * the mask: a range is stolen only by a unit in it. Since a woken unit may be
 * outside the mask, events for masked queues wake every sleeper; the others
 * find nothing they may run and sleep again.
 *
 * Helping: a thread that waits for a dispatch's completion signal
 * (hsa_ven_aquila_signal_wait_helping) may run that dispatch itself rather
 * than sleep until a unit has: it takes a helper slot (a compute unit
 * without a thread of its own: a deque the units steal from, and a group
 * segment, a fiber pool and a stack made on first use), launches the packet
 * when no unit has yet, runs its work-groups, and steals ranges of it from
 * the units. That saves the wake-ups of a unit and of the waiter, which on
 * a machine whose processors are all busy each cost a wait for a time
 * slice. It helps only with what it waits for: its own dispatch, and the
 * earlier packets of the queue when its packet has the barrier bit.
 *
 * Supersessions (hsa_ven_aquila_kernel_object_supersede): a kernel object
 * may be replaced by another build of the same kernel, which dispatches of
 * it run from their next range of work-groups on (tiered code).
 *
 * Queue lifetime: a unit or helper touches a queue only inside a "visit"
 * (scanning the queue table, launching a packet, or completing a dispatch of
 * that queue). Destroying a queue removes it from the table, waits for its
 * launched dispatches, then waits until every unit and helper has left the
 * visit it may have been in.
 *
 * fork: the child has none of the units' threads, and the work the parent
 * had given the agent (packets not yet taken, dispatches running or on the
 * deques) is the parent's. In the child (aq_cpu_agent_fork), the deques are
 * emptied, every queue's packets up to its write index are dropped and its
 * launched dispatches forgotten (and freed: those on the deques and those
 * the units and helpers were running; their completion signals keep their
 * values: a child that waits on one without a time-out waits forever, as
 * for any dispatch that never completes), and the counters of sleeping and
 * polling units, of helpers and of visits start again from zero. The units'
 * threads are started again by the first event that may give them work
 * (agent_event), not in the fork handler: most children exec at once or
 * never dispatch anything, and should not pay for a thread per processor;
 * and starting them in the handler would run threads in the child before
 * the application's own child handlers have set the process up. */
#include "hsa_internal.h"
#include "cpu_share.h"
#include "cpu_topology.h"

#include <aquila/cpu_abi.h>
#include <aquila/trace.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define AQ_DEQUE_CAPACITY 256u
#define AQ_NODE_MASK_WORDS 4 /* nodes 0 to 255 */
/* Packets a unit takes from one queue before it looks at the others. */
#define AQ_PACKET_BATCH 64u
/* The one idle unit that polls before sleeping does so for this long, so
 * back-to-back dispatches avoid the futex wake-up latency. */
#define AQ_IDLE_SPIN_NS 50000u
/* It yields the processor between polls; a yield that returns this much
 * later means other threads were waiting for the processor (the machine is
 * oversubscribed), and the unit sleeps instead of polling on. */
#define AQ_IDLE_YIELD_CONTENDED_NS 10000u
#define AQ_INFLIGHT_DESTROYING 0x80000000u
/* The most work-groups a unit takes from its deque at a time; a helper
 * takes fewer, so that it soon sees whether it should wake the units
 * (wake_for_work_left) or leave the rest to them. */
#define AQ_UNIT_CHUNK_MAX 64u
#define AQ_HELPER_CHUNK_MAX 8u
/* Threads that can help at once; more wait without helping. */
#define AQ_HELPER_SLOTS 16u
/* A helper runs work-groups on a stack as large as a unit thread's. */
#define AQ_UNIT_STACK_SIZE (64u << 20)

struct aq_dispatch {
  const struct aquila_kernel_descriptor *kernel;
  const void *kernarg;
  struct aq_queue *queue;
  uint64_t packet_id; /* its index in queue */
  struct aq_signal *completion;
  uint64_t global_size[3];
  uint32_t workgroup_size[3];
  uint32_t num_groups[3];
  uint32_t work_dim;
  uint32_t group_segment_size;
  _Atomic uint64_t groups_left;
  uint64_t first_group; /* hsa_ven_aquila's group range: the first flat index it runs */
  /* Set when its first work-group begins: no other begins before (see
   * wait_for_first_group). */
  _Atomic bool first_begun;
  uint32_t unit_count; /* units that may run it: the chunk size divides by it */
  /* The first fault in its code (a signal number; see kernel_fault_handler)
   * and where: its other work-groups are not started. */
  _Atomic int fault_signal;
  uint64_t fault_address;
  uint32_t fault_group[3];
  bool masked; /* only the units in cu_mask may run it */
  /* AQUILA_VECTORIZE=check (dispatch_check.c): its one range is run whole by
   * one unit, never split or stolen. */
  struct hsa_ven_aquila_dispatch_check_s *check;
  uint64_t cu_mask[AQ_CU_MASK_WORDS];
  /* Its queue profiles (hsa_amd_profiling_set_profiler_enabled): when its
   * first work-group started, for the completion signal. */
  bool profiling;
  _Atomic uint64_t started;
  /* The code its next range runs (d->kernel, or what superseded it), as
   * of supersession generation kernel_generation (see kernel_now). */
  _Atomic(const struct aquila_kernel_descriptor *) kernel_now;
  _Atomic uint64_t kernel_generation;
  _Atomic bool switch_reported;
};

struct aq_range {
  struct aq_dispatch *dispatch;
  uint64_t begin, end; /* flat work-group indices */
  int32_t stolen_from; /* the unit it was stolen from, or -1 (AQUILA_TRACE) */
};

struct aq_compute_unit {
  _Alignas(AQ_CACHE_LINE) pthread_mutex_t deque_lock;
  struct aq_range deque[AQ_DEQUE_CAPACITY];
  uint32_t deque_head; /* owner takes from the head, thieves from the tail */
  _Atomic uint32_t deque_count;
  /* Ranges of masked dispatches in the deque: while every range is one,
   * an idle unit must look inside to know whether it may steal. */
  _Atomic uint32_t restricted_count;
  _Alignas(AQ_CACHE_LINE) _Atomic uint32_t visit_seq; /* odd while visiting queues */
  uint32_t visit_depth;
  uint32_t index;
  uint32_t seen_event;
  int cpu; /* the CPU its thread is pinned to, or -1 */
  /* With pinned units: the other units nearest first (cpu_topology.c),
   * unit_count - 1 of them; NULL: in turn from the next unit. */
  uint32_t *victims;
  pthread_t thread;
  void *group_segment; /* see group_segment_of */
  /* Units: the alternate stack its thread handles signals on (a fault in
   * kernel code, even a stack overflow). Made once, kept across a fork's
   * thread restart, freed when the agent stops. */
  void *signal_stack;
  size_t group_segment_mapping;
  struct aq_fiber_pool *fibers;
  /* The dispatch whose range it has taken (set under deque_lock) and not
   * yet counted as done: a forked child frees the parent's dispatches. */
  struct aq_dispatch *running;
  bool has_thread; /* units: its thread runs in this process */
  /* Helper slots only: 1 while a waiting thread uses the slot, and the
   * stack it runs work-groups on (made on first use). */
  _Atomic uint32_t helper_owned;
  void *helper_stack;
  unsigned helper_stack_id; /* AQ_STACK_REGISTER's */
  int helper_private_id;    /* aq_address_range_add's */
  /* AQUILA_VECTORIZE=check: the stack its scalar runs take (check_stack_top),
   * made on first use. */
  void *check_stack;
  unsigned check_stack_id;
  int check_private_id;
  int group_segment_id; /* aq_address_range_add's */
  uint32_t trace_track; /* AQUILA_TRACE's row for its work-groups, or 0 */
};

static struct {
  uint32_t unit_count;
  /* units[0, unit_count) have threads; units[unit_count, slot_count) are
   * helper slots. Thieves look at all of them. */
  uint32_t slot_count;
  struct aq_compute_unit *units;
  pthread_mutex_t table_lock;
  _Atomic(struct aq_queue *) queues[AQ_QUEUES_MAX];
  _Atomic uint32_t queue_slots; /* high-water mark of used slots */
  /* Bumped by every event that may give an idle unit work; futex word. */
  _Alignas(AQ_CACHE_LINE) _Atomic uint32_t event_seq;
  /* 1 in a forked child until the units' threads are started again. */
  _Atomic uint32_t units_missing;
  /* Units in the sleeping part of idle() (low half), and how many of them
   * a wake-up is on its way to (high half, never above the low half): one
   * word, so that both change together. */
  _Atomic uint64_t sleep_state;
  _Atomic uint32_t spinners;
  _Atomic uint32_t recheck_barriers;
  _Atomic uint32_t stopping;
  /* The NUMA nodes of the CPUs the process may run on (plan_pinning). */
  uint64_t node_mask[AQ_NODE_MASK_WORDS];
  int node_count;
} agent = {.table_lock = PTHREAD_MUTEX_INITIALIZER};

/* Serializes starting the units' threads again in a forked child. */
static pthread_mutex_t restart_lock = PTHREAD_MUTEX_INITIALIZER;
static void restart_units(void);

static inline void cpu_relax(void) {
  __builtin_ia32_pause();
}

#define SLEEPERS(state) ((uint32_t)(state))
#define WAKING(state) ((uint32_t)((state) >> 32))

/* Wakes up to wake_count sleeping units, leaving out those a wake-up is
 * already on its way to: on a busy machine a woken unit may wait a while
 * for a processor, and a producer that woke it again for every packet
 * would pay a system call each time for nothing. A unit counted as
 * sleeping or polling when the event is bumped looks at event_seq after
 * it, so it does not sleep through the event. */
static void agent_events(int wake_count, bool spinner_suffices) {
  if (__builtin_expect(atomic_load_explicit(&agent.units_missing, memory_order_relaxed), 0))
    restart_units();
  atomic_fetch_add(&agent.event_seq, 1);
  /* The polling unit sees a single event by itself. */
  if (spinner_suffices && wake_count == 1 && atomic_load(&agent.spinners)) return;
  uint64_t state = atomic_load(&agent.sleep_state);
  uint32_t want;
  do {
    uint32_t sleepers = SLEEPERS(state), waking = WAKING(state);
    if (waking >= sleepers) return;
    want = sleepers - waking < (uint32_t)wake_count ? sleepers - waking : (uint32_t)wake_count;
  } while (
      !atomic_compare_exchange_weak(&agent.sleep_state, &state, state + ((uint64_t)want << 32)));
  aq_futex_wake(&agent.event_seq, (int)want);
}

static void agent_event(int wake_count) {
  agent_events(wake_count, true);
}

/* A thread that has run work-groups for this long and still has some on
 * its deque wakes the sleeping units to share them. Not at once: a short
 * dispatch is over before a woken unit runs (a wake-up in a virtual
 * machine takes tens of microseconds), and the thread that waits for it
 * would then sleep and be woken in turn (enqueue and clFinish of a 16-group
 * kernel: 8 us alone, 28-30 us shared). But a launch's wake-up may not
 * have reached a unit that can run: the polling unit counts as awake while
 * it waits for the processor of the thread that made the dispatch, and a
 * launch-and-wait loop on two processors ran on one in about half its
 * launches (1024 groups, 3.2 ms against 1.6). */
#define AQ_WAKE_FOR_WORK_LEFT_NS 20000u

/* What a unit or helper has run since it last was idle: the clock is read
 * only after every few work-groups (after every one, it cost a sixteenth of
 * the launch of a 16-group kernel). */
struct busy_time {
  uint64_t since;
  uint32_t groups_unclocked;
};

static void wake_for_work_left(struct aq_compute_unit *cu, struct busy_time *busy,
                               uint64_t groups) {
  busy->groups_unclocked += (uint32_t)(groups < 8 ? groups : 8);
  /* Ranges of masked queues do not count: their launch woke every unit
   * already, and one outside the mask would only sleep again. */
  if (busy->groups_unclocked < 8 ||
      atomic_load_explicit(&cu->deque_count, memory_order_relaxed) <=
          atomic_load_explicit(&cu->restricted_count, memory_order_relaxed))
    return;
  busy->groups_unclocked = 0;
  uint64_t now = aq_now_ns();
  if (!busy->since) busy->since = now;
  if (now - busy->since < AQ_WAKE_FOR_WORK_LEFT_NS) return;
  /* Read last: other processors write it. */
  uint64_t state = atomic_load_explicit(&agent.sleep_state, memory_order_relaxed);
  if (SLEEPERS(state) > WAKING(state)) agent_events(INT_MAX, false);
}

/* Units outside a masked queue's mask ignore its events, so one woken unit
 * is not enough there: wake them all. */
static int wake_count_for(struct aq_queue *queue, int count) {
  return atomic_load(&queue->masked) ? INT_MAX : count;
}

static bool mask_has(const uint64_t *mask, uint32_t unit) {
  return unit < AQ_CU_MASK_WORDS * 64u && ((mask[unit / 64u] >> (unit % 64u)) & 1u);
}

static bool queue_allows(struct aq_queue *queue, uint32_t unit) {
  if (!atomic_load_explicit(&queue->masked, memory_order_acquire)) return true;
  if (unit >= AQ_CU_MASK_WORDS * 64u) return false;
  return (atomic_load_explicit(&queue->cu_mask[unit / 64u], memory_order_relaxed) >> (unit % 64u)) &
         1u;
}

static bool range_allowed(const struct aq_range *range, uint32_t unit) {
  return !range->dispatch->masked || mask_has(range->dispatch->cu_mask, unit);
}

void aq_cpu_agent_ring(struct aq_queue *queue) {
  atomic_store(&queue->pending, 1);
  agent_event(wake_count_for(queue, 1));
}

void aq_cpu_agent_watched_signal_changed(void) {
  atomic_store(&agent.recheck_barriers, 1);
  agent_event(1);
}

/* Visits nest (a scan may complete an empty dispatch); only the outermost
 * one moves visit_seq. */
static void visit_begin(struct aq_compute_unit *cu) {
  if (cu->visit_depth++ == 0) atomic_fetch_add(&cu->visit_seq, 1);
}
static void visit_end(struct aq_compute_unit *cu) {
  if (--cu->visit_depth == 0) atomic_fetch_add_explicit(&cu->visit_seq, 1, memory_order_release);
}

/* ---- deques ---- */

static bool deque_push(struct aq_compute_unit *cu, struct aq_range range) {
  pthread_mutex_lock(&cu->deque_lock);
  uint32_t count = atomic_load_explicit(&cu->deque_count, memory_order_relaxed);
  bool pushed = count < AQ_DEQUE_CAPACITY;
  if (pushed) {
    cu->deque[(cu->deque_head + count) % AQ_DEQUE_CAPACITY] = range;
    if (range.dispatch->masked) atomic_fetch_add(&cu->restricted_count, 1);
    atomic_store(&cu->deque_count, count + 1);
  }
  pthread_mutex_unlock(&cu->deque_lock);
  return pushed;
}

static bool deque_is_full(struct aq_compute_unit *cu) {
  return atomic_load_explicit(&cu->deque_count, memory_order_relaxed) >= AQ_DEQUE_CAPACITY;
}

/* Takes a chunk of the head range, at most max_chunk work-groups: small
 * enough that others can still steal the rest when work-groups have uneven
 * cost. */
static bool deque_take(struct aq_compute_unit *cu, uint64_t max_chunk, struct aq_range *out) {
  if (!atomic_load_explicit(&cu->deque_count, memory_order_relaxed)) return false;
  pthread_mutex_lock(&cu->deque_lock);
  uint32_t count = atomic_load_explicit(&cu->deque_count, memory_order_relaxed);
  if (!count) {
    pthread_mutex_unlock(&cu->deque_lock);
    return false;
  }
  struct aq_range *head = &cu->deque[cu->deque_head];
  uint64_t size = head->end - head->begin;
  uint64_t chunk = size / (8u * head->dispatch->unit_count);
  if (chunk < 1) chunk = 1;
  if (chunk > max_chunk) chunk = max_chunk;
  if (head->dispatch->check) chunk = size;
  *out = *head;
  cu->running = out->dispatch;
  if (chunk < size) {
    out->end = head->begin + chunk;
    head->begin += chunk;
  } else {
    if (head->dispatch->masked) atomic_fetch_sub(&cu->restricted_count, 1);
    cu->deque_head = (cu->deque_head + 1) % AQ_DEQUE_CAPACITY;
    atomic_store(&cu->deque_count, count - 1);
  }
  pthread_mutex_unlock(&cu->deque_lock);
  return true;
}

/* What a helper may steal: ranges of the dispatch of packet packet_id in
 * queue, and with earlier set those of the queue's packets before it. */
struct steal_filter {
  const struct aq_queue *queue;
  uint64_t packet_id;
  bool earlier;
};

static bool filter_allows(const struct steal_filter *filter, const struct aq_dispatch *d) {
  return !filter ||
         (d->queue == filter->queue && (d->packet_id == filter->packet_id ||
                                        (filter->earlier && d->packet_id < filter->packet_id)));
}

/* Steals the upper half of the victim's last range that thief may run (all
 * of it when it is a single work-group); with a filter, only a range it
 * allows. */
static bool deque_steal(struct aq_compute_unit *victim, uint32_t thief,
                        const struct steal_filter *filter, struct aq_range *out) {
  if (!atomic_load_explicit(&victim->deque_count, memory_order_relaxed)) return false;
  pthread_mutex_lock(&victim->deque_lock);
  uint32_t count = atomic_load_explicit(&victim->deque_count, memory_order_relaxed);
  for (uint32_t k = count; k-- > 0;) {
    struct aq_range *range = &victim->deque[(victim->deque_head + k) % AQ_DEQUE_CAPACITY];
    if (!range_allowed(range, thief) || !filter_allows(filter, range->dispatch) ||
        range->dispatch->check)
      continue;
    uint64_t size = range->end - range->begin;
    *out = *range;
    out->stolen_from = (int32_t)victim->index;
    if (size > 1 && range->begin == range->dispatch->first_group &&
        !atomic_load_explicit(&range->dispatch->first_begun, memory_order_relaxed)) {
      /* Nobody has taken its first work-group yet (its owner is busy, or
       * not running): the thief begins there, as the others wait for it. */
      out->end = range->begin + 1;
      range->begin++;
    } else if (size > 1) {
      uint64_t mid = range->begin + size / 2;
      out->begin = mid;
      range->end = mid;
    } else {
      /* Close the gap: the ranges after it move down one place. */
      for (uint32_t j = k; j + 1 < count; j++)
        victim->deque[(victim->deque_head + j) % AQ_DEQUE_CAPACITY] =
            victim->deque[(victim->deque_head + j + 1) % AQ_DEQUE_CAPACITY];
      if (out->dispatch->masked) atomic_fetch_sub(&victim->restricted_count, 1);
      atomic_store(&victim->deque_count, count - 1);
    }
    pthread_mutex_unlock(&victim->deque_lock);
    return true;
  }
  pthread_mutex_unlock(&victim->deque_lock);
  return false;
}

/* Whether victim's deque holds a range that unit may steal. */
static bool deque_has_work_for(struct aq_compute_unit *victim, uint32_t unit) {
  uint32_t count = atomic_load_explicit(&victim->deque_count, memory_order_relaxed);
  if (!count) return false;
  if (count > atomic_load_explicit(&victim->restricted_count, memory_order_relaxed)) return true;
  bool found = false;
  pthread_mutex_lock(&victim->deque_lock);
  count = atomic_load_explicit(&victim->deque_count, memory_order_relaxed);
  for (uint32_t k = 0; k < count && !found; k++)
    found = range_allowed(&victim->deque[(victim->deque_head + k) % AQ_DEQUE_CAPACITY], unit);
  pthread_mutex_unlock(&victim->deque_lock);
  return found;
}

/* ---- running work-groups ---- */

/* ---- faults in kernel code ---- */

/* A thread runs each work-group with its trap armed. The handler of
 * SIGSEGV, SIGBUS, SIGILL and SIGFPE ends a fault of an armed thread by
 * jumping back to run_range, which records it on the dispatch: a buggy
 * kernel (a wild pointer, a generated program's null dereference) fails
 * its command instead of killing the application, which is what a GPU
 * does with a memory fault too. Every other fault goes to the handler that
 * was installed before Aquila's, or gets the default action. SA_NODEFER: a
 * jump out of the handler leaves the signal unblocked without a
 * sigprocmask call per work-group (sigsetjmp does not save the mask). */
struct kernel_trap {
  sigjmp_buf resume;
  volatile sig_atomic_t armed;
  int signal;
  void *address;
};

/* initial-exec: the handler reads it in any thread, and the first access
 * of a dlopened library's ordinary thread-local variable allocates (not
 * allowed in a signal handler); one pointer fits glibc's static TLS
 * surplus for dlopened libraries. */
static _Thread_local struct kernel_trap *thread_trap __attribute__((tls_model("initial-exec")));
static const int trapped_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
#define TRAPPED_SIGNAL_COUNT (sizeof trapped_signals / sizeof trapped_signals[0])
static struct sigaction previous_actions[TRAPPED_SIGNAL_COUNT];
static pthread_once_t traps_once = PTHREAD_ONCE_INIT;
static bool traps_installed;

static void kernel_fault_handler(int sig, siginfo_t *info, void *context) {
  struct kernel_trap *trap = thread_trap;
  /* si_code > 0: raised by the processor, not sent by a process. */
  if (trap && trap->armed && info->si_code > 0) {
    trap->armed = 0;
    trap->signal = sig;
    trap->address = info->si_addr;
    siglongjmp(trap->resume, 1);
  }
  for (unsigned i = 0; i < TRAPPED_SIGNAL_COUNT; i++) {
    if (trapped_signals[i] != sig) continue;
    const struct sigaction *old = &previous_actions[i];
    if (old->sa_flags & SA_SIGINFO) {
      if (old->sa_sigaction) {
        old->sa_sigaction(sig, info, context);
        return;
      }
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
      old->sa_handler(sig);
      return;
    }
  }
  /* With the default action back, the faulting instruction runs again and
   * ends the process as it would have without Aquila; a signal that a
   * process sent is sent again. */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  if (info->si_code <= 0) raise(sig);
}

static void install_fault_handlers(void) {
  const char *e = getenv("AQUILA_KERNEL_FAULTS");
  if (e && !strcmp(e, "crash")) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = kernel_fault_handler;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (unsigned i = 0; i < TRAPPED_SIGNAL_COUNT; i++)
    sigaction(trapped_signals[i], &sa, &previous_actions[i]);
  traps_installed = true;
}

/* Unloaded, the library gives the signals back: its handler's code is
 * about to go away. Only where the handler is still Aquila's. */
__attribute__((destructor)) static void remove_fault_handlers(void) {
  if (!traps_installed) return;
  for (unsigned i = 0; i < TRAPPED_SIGNAL_COUNT; i++) {
    struct sigaction now;
    if (!sigaction(trapped_signals[i], NULL, &now) && (now.sa_flags & SA_SIGINFO) &&
        now.sa_sigaction == kernel_fault_handler)
      sigaction(trapped_signals[i], &previous_actions[i], NULL);
  }
}

/* The units' threads handle signals on a stack of their own, so that a
 * kernel that overflows the unit's stack is trapped too. */
#define AQ_SIGNAL_STACK_SIZE (64u * 1024u)

/* The work-group id of flat work-group index (x fastest). */
static void group_of_index(const struct aq_dispatch *d, uint64_t index, uint32_t id[3]) {
  uint64_t plane = (uint64_t)d->num_groups[0] * d->num_groups[1];
  id[0] = (uint32_t)(index % plane % d->num_groups[0]);
  id[1] = (uint32_t)(index % plane / d->num_groups[0]);
  id[2] = (uint32_t)(index / plane);
}

/* The dispatch's first fault is the one reported. */
static void record_fault(struct aq_dispatch *d, const struct kernel_trap *trap, uint64_t index) {
  int none = 0;
  if (!atomic_compare_exchange_strong(&d->fault_signal, &none, trap->signal)) return;
  d->fault_address = (uint64_t)(uintptr_t)trap->address;
  group_of_index(d, index, d->fault_group);
}

/* The group segment of every work-group a compute unit runs: a mapping of
 * the whole AQ_GROUP_SEGMENT_MAX (the device's local memory size), made on
 * first use and followed by an inaccessible guard page. A kernel that writes
 * past its __local arrays (undefined, and common in real code) then writes
 * into memory reserved for group segments, never into the malloc heap of
 * the runtime or the application; beyond the local memory size it faults
 * at once instead of corrupting something far away. */
static void *group_segment_of(struct aq_compute_unit *cu) {
  if (!cu->group_segment) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = ((size_t)AQ_GROUP_SEGMENT_MAX + page - 1) & ~(page - 1);
    unsigned char *memory =
        mmap(NULL, size + page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) return NULL;
    if (mprotect(memory, size, PROT_READ | PROT_WRITE)) {
      munmap(memory, size + page);
      return NULL;
    }
    cu->group_segment = memory;
    cu->group_segment_mapping = size + page;
    cu->group_segment_id = aq_address_range_add(memory, memory + size, AQUILA_ADDRESS_LOCAL);
  }
  return cu->group_segment;
}

/* cu->running is d until d is freed: a thread woken by the completion
 * signal may fork before then, and its child frees d (aq_cpu_agent_fork). */
/* How long each kernel's last dispatch ran, from its first work-group's
 * start to its last one's end, by kernel descriptor: a small table any
 * unit writes and a helper of a query reads (aq_cpu_agent_help_short); a
 * collision only makes one guess wrong. */
#define SHORT_KERNEL_NS 50000u
#define DURATION_SLOTS 256u
static struct {
  _Atomic(const void *) kernel;
  _Atomic uint64_t ns;
} durations[DURATION_SLOTS];

static size_t duration_slot(const void *kernel) {
  return (size_t)((((uintptr_t)kernel >> 4) * 0x9E3779B97F4A7C15ull) >> 56) % DURATION_SLOTS;
}

static void kernel_ran(const void *kernel, uint64_t ns) {
  size_t i = duration_slot(kernel);
  atomic_store_explicit(&durations[i].ns, ns, memory_order_relaxed);
  atomic_store_explicit(&durations[i].kernel, kernel, memory_order_relaxed);
}

static bool kernel_was_short(const void *kernel) {
  size_t i = duration_slot(kernel);
  return atomic_load_explicit(&durations[i].kernel, memory_order_relaxed) == kernel &&
         atomic_load_explicit(&durations[i].ns, memory_order_relaxed) < SHORT_KERNEL_NS;
}

static void finish_dispatch(struct aq_compute_unit *cu, struct aq_dispatch *d) {
  cu->running = d;
  struct aq_queue *q = d->queue;
  visit_begin(cu);
  aq_printf_flush();
  int fault = atomic_load_explicit(&d->fault_signal, memory_order_relaxed);
  if (fault) {
    if (d->completion) {
      d->completion->fault_address = d->fault_address;
      memcpy(d->completion->fault_group, d->fault_group, sizeof d->fault_group);
      atomic_store_explicit(&d->completion->fault_signal, fault, memory_order_relaxed);
    }
    /* The queue stays active: its later packets are the application's
     * other commands. */
    if (q->error_callback)
      q->error_callback(aq_fault_status(fault), &q->public_queue, q->error_data);
  }
  uint64_t end = aq_now_ns(), start = atomic_load_explicit(&d->started, memory_order_relaxed);
  kernel_ran(d->kernel, start ? end - start : 0);
  if (d->completion && d->profiling) {
    d->completion->dispatch_start = start ? start : end;
    d->completion->dispatch_end = end;
  }
  if (d->completion) aq_signal_subtract_release(d->completion, 1);
  uint32_t before = atomic_fetch_sub(&q->inflight, 1);
  if (before & AQ_INFLIGHT_DESTROYING) {
    if ((before & ~AQ_INFLIGHT_DESTROYING) == 1) aq_futex_wake(&q->inflight, INT_MAX);
  } else if (before == 1 && atomic_load(&q->read_index) != atomic_load(&q->write_index)) {
    /* A packet with the barrier bit may be waiting for this completion. */
    aq_cpu_agent_ring(q);
  }
  visit_end(cu);
  cu->running = NULL;
  free(d);
}

struct workgroup_call {
  aquila_workgroup_fn fn;
  const void *kernarg;
  const struct aquila_workgroup *wg;
};

static void call_workgroup(void *argument) {
  struct workgroup_call *call = argument;
  call->fn(call->kernarg, call->wg);
}

/* No work-group of a dispatch begins before its first one (flat index
 * first_group) has begun. OpenCL promises no order between work-groups,
 * but kernels written for GPUs, which start them in order, depend on it:
 * John the Ripper's kernel_cmp has work-item 0 clear the result, then a
 * barrier (which orders only its own group), then every work-item that
 * matches sets it. A thief that stole the last work-groups and ran them
 * while the unit holding the first was descheduled had its match cleared:
 * the XSHA512 and raw-SHA512 self-tests failed on a loaded machine, where
 * pocl, which hands out work-groups in order, passed. The wait is short
 * (the first group's holder begins it as soon as it runs) and bounded, so
 * that a holder that waits itself for another dispatch's first group (each
 * unit a thief of the other's) cannot deadlock: after 50 ms it goes on. */
#define FIRST_GROUP_WAIT_NS 50000000ull

static void wait_for_first_group(struct aq_dispatch *d) {
  if (atomic_load_explicit(&d->first_begun, memory_order_acquire)) return;
  for (int i = 0; i < 256; i++) {
    cpu_relax();
    if (atomic_load_explicit(&d->first_begun, memory_order_acquire)) return;
  }
  uint64_t deadline = aq_now_ns() + FIRST_GROUP_WAIT_NS;
  while (!atomic_load_explicit(&d->first_begun, memory_order_acquire) &&
         !atomic_load_explicit(&d->fault_signal, memory_order_relaxed) && aq_now_ns() < deadline)
    sched_yield();
}

/* Runs work-groups [begin, end) of d with fn on kernarg, on the calling
 * thread's stack or, with stack_top, on that stack; false when one faulted
 * (recorded on d: its other work-groups are not started). */
static bool run_groups(struct aq_compute_unit *cu, struct aq_dispatch *d, aquila_workgroup_fn fn,
                       const void *kernarg, const struct aquila_cpu_services *services,
                       void *stack_top, uint64_t begin, uint64_t end) {
  struct aquila_workgroup wg;
  memset(&wg, 0, sizeof(wg));
  for (int i = 0; i < 3; i++) {
    wg.global_size[i] = d->global_size[i];
    wg.enqueued_local_size[i] = d->workgroup_size[i];
    wg.num_groups[i] = d->num_groups[i];
  }
  wg.work_dim = d->work_dim;
  wg.group_segment_size = d->group_segment_size;
  wg.services = services;
  wg.group_segment = group_segment_of(cu);
  struct kernel_trap trap;
  trap.armed = 0;
  thread_trap = &trap;
  volatile bool ok = true;
  /* volatile: read after a fault's jump back. */
  volatile uint64_t index = begin;
  if (sigsetjmp(trap.resume, 0) == 0) {
    for (; index < end; index++) {
      if (atomic_load_explicit(&d->fault_signal, memory_order_relaxed)) {
        ok = false;
        break;
      }
      group_of_index(d, index, wg.group_id);
      for (int i = 0; i < 3; i++) {
        uint64_t first = (uint64_t)wg.group_id[i] * d->workgroup_size[i];
        uint64_t left = d->global_size[i] - first;
        wg.local_size[i] = left < d->workgroup_size[i] ? (uint32_t)left : d->workgroup_size[i];
      }
      if (index == d->first_group)
        atomic_store_explicit(&d->first_begun, true, memory_order_release);
      else if (index == begin)
        wait_for_first_group(d);
      trap.armed = 1;
      if (stack_top) {
        struct workgroup_call call = {fn, kernarg, &wg};
        aq_call_on_stack(stack_top, call_workgroup, &call);
      } else {
        fn(kernarg, &wg);
      }
      trap.armed = 0;
    }
  } else {
    record_fault(d, &trap, index);
    ok = false;
  }
  thread_trap = NULL;
  return ok;
}

static size_t helper_guard_size(void);

/* ---- AQUILA_VECTORIZE=check: dispatch_check.c runs a checked dispatch
 * through these. ---- */

struct check_context {
  struct aq_compute_unit *cu;
  struct aq_dispatch *d;
};

static int quiet_printf(const char *format, ...) {
  (void)format;
  return 0;
}

/* The scalar twin's private arrays are not kept in bounds as the
 * vectorized function's are (vectorize.c): a kernel that writes far past
 * one (undefined, and the vectorized run survived it) would overwrite the
 * frames above it. Scalar runs take a stack of their own, with 1 MiB above
 * its top for such writes to land in and a guard page beyond, whose fault
 * is trapped like any other. */
#define AQ_CHECK_STACK_SCRATCH (1u << 20)

static void *check_stack_top(struct aq_compute_unit *cu) {
  size_t guard = helper_guard_size(), size = AQ_UNIT_STACK_SIZE + AQ_CHECK_STACK_SCRATCH;
  if (!cu->check_stack) {
    void *stack = mmap(NULL, size + 2 * guard, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return NULL;
    if (mprotect((char *)stack + guard, size, PROT_READ | PROT_WRITE)) {
      munmap(stack, size + 2 * guard);
      return NULL;
    }
    cu->check_stack = stack;
    cu->check_stack_id = AQ_STACK_REGISTER((char *)stack + guard, (char *)stack + guard + size);
    cu->check_private_id = aq_address_range_add((char *)stack + guard,
                                                (char *)stack + guard + size,
                                                AQUILA_ADDRESS_PRIVATE);
  }
  return (char *)cu->check_stack + guard + AQ_UNIT_STACK_SIZE;
}

static bool check_run(void *context, aquila_workgroup_fn fn, const void *kernarg, int scalar,
                      uint64_t begin, uint64_t end) {
  struct check_context *c = context;
  struct aquila_cpu_services services = aq_cpu_services;
  void *stack_top = NULL;
  if (scalar) {
    services.printf = quiet_printf;
    stack_top = check_stack_top(c->cu);
    if (!stack_top) return false;
  }
  return run_groups(c->cu, c->d, fn, kernarg, &services, stack_top, begin, end);
}

static void check_clear_fault(void *context) {
  struct check_context *c = context;
  atomic_store(&c->d->fault_signal, 0);
}

static void check_group_of(void *context, uint64_t index, uint32_t id[3]) {
  struct check_context *c = context;
  group_of_index(c->d, index, id);
}

/* ---- supersessions (hsa_ven_aquila_kernel_object_supersede) ----
 * Tiered code: a running dispatch of a kernel's quick code takes the
 * kernel's vector version from its next range on. The few pairs live in a
 * list; a generation counter, bumped by each change, lets a dispatch look
 * again only when something changed: one relaxed load per range otherwise. */
struct supersession {
  const struct aquila_kernel_descriptor *old_kernel, *new_kernel;
  struct supersession *next;
};
static pthread_mutex_t supersessions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct supersession *supersessions;
static _Atomic uint64_t supersession_generation;

static const struct aquila_kernel_descriptor *
superseding_kernel(const struct aquila_kernel_descriptor *kernel) {
  const struct aquila_kernel_descriptor *found = kernel;
  pthread_mutex_lock(&supersessions_lock);
  for (struct supersession *s = supersessions; s; s = s->next)
    if (s->old_kernel == kernel) {
      found = s->new_kernel;
      break;
    }
  pthread_mutex_unlock(&supersessions_lock);
  return found;
}

/* The code d's next range runs. */
static const struct aquila_kernel_descriptor *kernel_now(struct aq_dispatch *d) {
  uint64_t generation = atomic_load_explicit(&supersession_generation, memory_order_acquire);
  if (generation == atomic_load_explicit(&d->kernel_generation, memory_order_acquire))
    return atomic_load_explicit(&d->kernel_now, memory_order_relaxed);
  const struct aquila_kernel_descriptor *kernel = superseding_kernel(d->kernel);
  atomic_store_explicit(&d->kernel_now, kernel, memory_order_relaxed);
  atomic_store_explicit(&d->kernel_generation, generation, memory_order_release);
  return kernel;
}

hsa_status_t hsa_ven_aquila_memory_place(hsa_agent_t agent_handle, void *address, size_t size) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (agent_handle.handle != aq_cpu_agent_handle().handle) return HSA_STATUS_ERROR_INVALID_AGENT;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (!address || ((uintptr_t)address & (page - 1))) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (agent.node_count < 2 || size == 0) return HSA_STATUS_INFO_BREAK;
  return aq_cpu_topology_interleave(address, size, agent.node_mask, AQ_NODE_MASK_WORDS)
             ? HSA_STATUS_SUCCESS
             : HSA_STATUS_INFO_BREAK;
}

hsa_status_t hsa_ven_aquila_kernel_object_supersede(hsa_agent_t agent, uint64_t old_object,
                                                    uint64_t new_object) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (agent.handle != aq_cpu_agent_handle().handle) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!aq_handle_is_live(old_object, AQ_HANDLE_KERNEL_OBJECT) ||
      !aq_handle_is_live(new_object, AQ_HANDLE_KERNEL_OBJECT) || old_object == new_object)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  const struct aquila_kernel_descriptor *old_kernel =
      (const struct aquila_kernel_descriptor *)(uintptr_t)old_object;
  const struct aquila_kernel_descriptor *new_kernel =
      (const struct aquila_kernel_descriptor *)(uintptr_t)new_object;
  if (old_kernel->kernarg_size != new_kernel->kernarg_size ||
      old_kernel->hidden_kernarg_offset != new_kernel->hidden_kernarg_offset ||
      old_kernel->group_segment_size != new_kernel->group_segment_size ||
      memcmp(old_kernel->reqd_workgroup_size, new_kernel->reqd_workgroup_size,
             sizeof old_kernel->reqd_workgroup_size) != 0)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  struct supersession *s = malloc(sizeof *s);
  if (!s) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  s->old_kernel = old_kernel;
  s->new_kernel = new_kernel;
  hsa_status_t status = HSA_STATUS_SUCCESS;
  pthread_mutex_lock(&supersessions_lock);
  for (struct supersession *e = supersessions; e; e = e->next)
    if (e->old_kernel == old_kernel || e->old_kernel == new_kernel || e->new_kernel == old_kernel)
      status = HSA_STATUS_ERROR_INVALID_CODE_OBJECT; /* no second switch, no chain */
  if (status == HSA_STATUS_SUCCESS) {
    s->next = supersessions;
    supersessions = s;
    atomic_fetch_add_explicit(&supersession_generation, 1, memory_order_acq_rel);
  }
  pthread_mutex_unlock(&supersessions_lock);
  if (status != HSA_STATUS_SUCCESS) free(s);
  return status;
}

void aq_cpu_agent_forget_kernel(const struct aquila_kernel_descriptor *kernel) {
  /* Its last duration too: a kernel loaded later at the same address is
   * another, and a long one judged short by it would be run by a thread
   * that only asked for its status (test_events' polled_long_kernel, now
   * and then under make check). */
  const void *expected = kernel;
  atomic_compare_exchange_strong(&durations[duration_slot(kernel)].kernel, &expected, NULL);
  struct supersession *gone = NULL;
  pthread_mutex_lock(&supersessions_lock);
  for (struct supersession **at = &supersessions; *at;) {
    struct supersession *s = *at;
    if (s->old_kernel != kernel && s->new_kernel != kernel) {
      at = &s->next;
      continue;
    }
    *at = s->next;
    s->next = gone;
    gone = s;
  }
  if (gone) atomic_fetch_add_explicit(&supersession_generation, 1, memory_order_acq_rel);
  pthread_mutex_unlock(&supersessions_lock);
  while (gone) {
    struct supersession *next = gone->next;
    free(gone);
    gone = next;
  }
}

static void run_range(struct aq_compute_unit *cu, struct aq_range range) {
  struct aq_dispatch *d = range.dispatch;
  uint64_t trace_start = AQ_TRACE_ON() ? aq_now_ns() : 0;
  if (!atomic_load_explicit(&d->started, memory_order_relaxed)) {
    uint64_t none = 0;
    atomic_compare_exchange_strong_explicit(&d->started, &none,
                                            trace_start ? trace_start : aq_now_ns(),
                                            memory_order_relaxed, memory_order_relaxed);
  }
  if (d->check) {
    struct check_context context = {cu, d};
    struct aq_check_runner runner = {&context, check_run, check_clear_fault, check_group_of};
    aq_check_run(d->check, d->kernel, d->kernarg, range.end - range.begin, &runner);
  } else {
    const struct aquila_kernel_descriptor *kernel = kernel_now(d);
    if (kernel != d->kernel && aq_debug_enabled() &&
        !atomic_exchange_explicit(&d->switch_reported, true, memory_order_relaxed))
      aq_debug("kernel '%s': a running dispatch switched to the code that superseded its own, "
               "from work-group %llu on",
               d->kernel->name, (unsigned long long)(range.begin - d->first_group));
    run_groups(cu, d, kernel->run_workgroup, d->kernarg, &aq_cpu_services, NULL, range.begin,
               range.end);
  }
  if (AQ_TRACE_ON())
    aq_trace_groups(cu->trace_track, d->kernel->name, d, d->packet_id, range.begin, range.end,
                    range.stolen_from, trace_start, aq_now_ns());
  uint64_t done = range.end - range.begin;
#if defined(__x86_64__)
  /* Kernels may write their output with non-temporal stores (the
   * vectorizer's streaming stores), which only a fence orders with what
   * other threads see: the range's results are in memory before they are
   * counted done. */
  __builtin_ia32_sfence();
#endif
  /* Another unit may finish and free d once this range is counted. */
  cu->running = NULL;
  if (atomic_fetch_sub_explicit(&d->groups_left, done, memory_order_acq_rel) == done)
    finish_dispatch(cu, d);
}

/* ---- packet processing ---- */

static void queue_error(struct aq_queue *q, hsa_status_t status) {
  atomic_store(&q->active, 0);
  if (q->error_callback) q->error_callback(status, &q->public_queue, q->error_data);
}

static void unwatch_barrier(struct aq_queue *q) {
  if (!q->barrier_watching) return;
  for (uint32_t i = 0; i < q->watched_count; i++)
    aq_signal_unwatch(q->watched[i]);
  q->watched_count = 0;
  q->barrier_watching = 0;
}

/* Returns 1 when the barrier packet is satisfied, 0 when it must wait, -1
 * when it names an invalid signal. */
static int barrier_ready(struct aq_queue *q, const hsa_barrier_and_packet_t *packet, bool any) {
  struct aq_signal *deps[5];
  uint32_t count = 0;
  for (int i = 0; i < 5; i++) {
    if (!packet->dep_signal[i].handle) continue;
    struct aq_signal *s = aq_signal_from_handle(packet->dep_signal[i]);
    if (!s) return -1;
    deps[count++] = s;
  }
  if (count == 0) return 1;
  /* Watch first, then check: a change after the check is then seen. */
  if (!q->barrier_watching) {
    for (uint32_t i = 0; i < count; i++) {
      aq_signal_watch(deps[i]);
      q->watched[i] = deps[i];
    }
    q->watched_count = count;
    q->barrier_watching = 1;
  }
  uint32_t zero = 0;
  for (uint32_t i = 0; i < count; i++)
    if (atomic_load_explicit(&deps[i]->value, memory_order_acquire) == 0) zero++;
  return any ? zero > 0 : zero == count;
}

static hsa_status_t make_dispatch(struct aq_queue *q, const hsa_kernel_dispatch_packet_t *p,
                                  uint64_t packet_id, struct aq_dispatch **out) {
  uint32_t dims = (p->setup >> HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) & 3u;
  if (dims < 1) return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  /* No kernel descriptor at all: the packet is well formed, its code is not. */
  if (!p->kernel_object) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  const struct aquila_kernel_descriptor *kernel =
      (const struct aquila_kernel_descriptor *)(uintptr_t)p->kernel_object;
  if (kernel->abi_version != AQUILA_CPU_ABI_VERSION || !kernel->run_workgroup)
    return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  uint32_t wg[3] = {p->workgroup_size_x, dims > 1 ? p->workgroup_size_y : 1u,
                    dims > 2 ? p->workgroup_size_z : 1u};
  uint64_t grid[3] = {p->grid_size_x, dims > 1 ? p->grid_size_y : 1u,
                      dims > 2 ? p->grid_size_z : 1u};
  if (!wg[0] || !wg[1] || !wg[2] || (uint64_t)wg[0] * wg[1] * wg[2] > AQ_WORKGROUP_MAX_SIZE)
    return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  if (p->group_segment_size > AQ_GROUP_SEGMENT_MAX ||
      kernel->group_segment_size > AQ_GROUP_SEGMENT_MAX ||
      kernel->private_segment_size > AQUILA_PRIVATE_SEGMENT_MAX)
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  struct aq_signal *completion = NULL;
  if (p->completion_signal.handle) {
    completion = aq_signal_from_handle(p->completion_signal);
    if (!completion) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  }
  struct aq_dispatch *d = malloc(sizeof(*d));
  if (!d) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  d->kernel = kernel;
  atomic_init(&d->kernel_now, kernel);
  atomic_init(&d->kernel_generation, 0);
  atomic_init(&d->switch_reported, false);
  atomic_init(&d->first_begun, false);
  d->kernarg = p->kernarg_address;
  d->check = NULL;
  d->queue = q;
  d->packet_id = packet_id;
  d->completion = completion;
  d->work_dim = dims;
  /* HSA has the packet's size include the kernel's static group memory;
   * a packet that leaves it out still gets room for it. */
  d->group_segment_size = p->group_segment_size > kernel->group_segment_size
                              ? p->group_segment_size
                              : kernel->group_segment_size;
  uint64_t groups = 1;
  for (int i = 0; i < 3; i++) {
    d->global_size[i] = grid[i];
    d->workgroup_size[i] = wg[i];
    d->num_groups[i] = (uint32_t)((grid[i] + wg[i] - 1) / wg[i]);
    groups *= d->num_groups[i];
  }
  /* Only a range of the grid's work-groups (hsa_ext_aquila.h). */
  d->first_group = 0;
  if (p->reserved2) {
    uint64_t begin = p->reserved2 & 0xffffffffu, end = p->reserved2 >> 32;
    if (begin >= end || end > groups) {
      free(d);
      return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    }
    d->first_group = begin;
    groups = end - begin;
  }
  atomic_init(&d->groups_left, groups);
  atomic_init(&d->fault_signal, 0);
  d->unit_count = agent.unit_count;
  d->profiling = atomic_load_explicit(&q->profiling, memory_order_relaxed) != 0;
  atomic_init(&d->started, 0);
  d->masked = atomic_load_explicit(&q->masked, memory_order_acquire);
  if (d->masked) {
    uint32_t units = 0;
    for (uint32_t w = 0; w < AQ_CU_MASK_WORDS; w++) {
      d->cu_mask[w] = atomic_load_explicit(&q->cu_mask[w], memory_order_relaxed);
      units += (uint32_t)__builtin_popcountll(d->cu_mask[w]);
    }
    d->unit_count = units ? units : 1;
  }
  *out = d;
  return HSA_STATUS_SUCCESS;
}

static void consume_packet(struct aq_queue *q, _Atomic uint16_t *header, uint64_t index) {
  atomic_store_explicit(header, HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE,
                        memory_order_relaxed);
  atomic_store_explicit(&q->read_index, index + 1, memory_order_release);
}

/* Caller holds q->processing. Processes packets up to index last; a unit
 * (last UINT64_MAX) takes the pending mark, a helper leaves it for the units,
 * as it may stop before the end of the queue. Returns true when it launched
 * work. */
static bool process_queue(struct aq_compute_unit *cu, struct aq_queue *q, uint64_t last) {
  if (last == UINT64_MAX) atomic_store(&q->pending, 0);
  bool launched = false;
  uint32_t mask = q->public_queue.size - 1;
  for (uint32_t n = 0; n < AQ_PACKET_BATCH; n++) {
    if (!atomic_load(&q->active)) break;
    uint64_t index = atomic_load_explicit(&q->read_index, memory_order_relaxed);
    if (index > last) break;
    if (index == atomic_load_explicit(&q->write_index, memory_order_acquire)) break;
    char *slot = (char *)q->ring + (size_t)(index & mask) * 64u;
    _Atomic uint16_t *header = (_Atomic uint16_t *)slot;
    uint16_t h = atomic_load_explicit(header, memory_order_acquire);
    uint32_t type = (h >> HSA_PACKET_HEADER_TYPE) & 0xffu;
    if (aq_queue_slot_unpublished(q, index, h)) break; /* the producer has not published it yet */
    if (((h >> HSA_PACKET_HEADER_BARRIER) & 1u) && atomic_load(&q->inflight) != 0)
      break; /* resumed by the completion that empties the queue */
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      if (deque_is_full(cu)) {
        atomic_store(&q->pending, 1);
        break;
      }
      struct aq_dispatch *d = NULL;
      hsa_status_t status = make_dispatch(q, (const hsa_kernel_dispatch_packet_t *)slot, index, &d);
      if (status != HSA_STATUS_SUCCESS) {
        queue_error(q, status);
        break;
      }
      if (d->masked && !mask_has(d->cu_mask, cu->index)) {
        /* The mask changed under this unit: leave the packet to the new units. */
        free(d);
        aq_cpu_agent_ring(q);
        break;
      }
      consume_packet(q, header, index);
      d->check = aq_check_take(d->kernarg);
      uint64_t groups = atomic_load_explicit(&d->groups_left, memory_order_relaxed);
      if (groups == 0) {
        atomic_fetch_add(&q->inflight, 1);
        finish_dispatch(cu, d);
        continue;
      }
      atomic_fetch_add(&q->inflight, 1);
      struct aq_range range = {d, d->first_group, d->first_group + groups, -1};
      deque_push(cu, range);
      launched = true;
      if (groups > 1)
        agent_event(wake_count_for(q, agent.unit_count > 1 ? (int)agent.unit_count - 1 : 1));
    } else if (type == HSA_PACKET_TYPE_BARRIER_AND || type == HSA_PACKET_TYPE_BARRIER_OR) {
      const hsa_barrier_and_packet_t *packet = (const hsa_barrier_and_packet_t *)slot;
      int ready = barrier_ready(q, packet, type == HSA_PACKET_TYPE_BARRIER_OR);
      if (ready < 0) {
        unwatch_barrier(q);
        queue_error(q, HSA_STATUS_ERROR_INVALID_SIGNAL);
        break;
      }
      if (!ready) break; /* resumed when a watched signal changes */
      unwatch_barrier(q);
      struct aq_signal *completion = aq_signal_from_handle(packet->completion_signal);
      consume_packet(q, header, index);
      if (completion) aq_signal_subtract_release(completion, 1);
    } else {
      /* Agent dispatch is not a feature of this agent; vendor-specific and
       * unknown packet types have no meaning here. */
      queue_error(q, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
      break;
    }
  }
  return launched;
}

static bool scan_queues(struct aq_compute_unit *cu) {
  uint32_t event = atomic_load(&agent.event_seq);
  if (event == cu->seen_event) return false;
  cu->seen_event = event;
  bool recheck = atomic_exchange(&agent.recheck_barriers, 0);
  bool launched = false;
  visit_begin(cu);
  uint32_t slots = atomic_load(&agent.queue_slots);
  for (uint32_t k = 0; k < slots; k++) {
    uint32_t i = (k + cu->index) % slots;
    struct aq_queue *q = atomic_load(&agent.queues[i]);
    if (!q) continue;
    if (recheck && q->barrier_watching && !atomic_exchange(&q->pending, 1) &&
        !queue_allows(q, cu->index))
      agent_event(INT_MAX); /* the units in its mask must see it */
    if (!queue_allows(q, cu->index) || !atomic_load(&q->pending)) continue;
    if (atomic_exchange(&q->processing, 1)) {
      cu->seen_event = event - 1; /* another unit has it: look again later */
      continue;
    }
    launched |= process_queue(cu, q, UINT64_MAX);
    atomic_store_explicit(&q->processing, 0, memory_order_release);
    if (atomic_load(&q->pending)) cu->seen_event = event - 1;
  }
  visit_end(cu);
  return launched;
}

static bool steal_work(struct aq_compute_unit *cu) {
  for (uint32_t k = 1; k < agent.slot_count; k++) {
    /* The units nearest first where their places are known, then the
     * helper slots; else every slot in turn from the next. */
    uint32_t v = (cu->index + k) % agent.slot_count;
    if (cu->victims) v = k < agent.unit_count ? cu->victims[k - 1] : k;
    struct aq_compute_unit *victim = &agent.units[v];
    struct aq_range range;
    if (deque_steal(victim, cu->index, NULL, &range)) {
      deque_push(cu, range);
      return true;
    }
  }
  return false;
}

static bool work_visible(struct aq_compute_unit *cu) {
  if (atomic_load(&agent.event_seq) != cu->seen_event) return true;
  if (atomic_load(&cu->deque_count)) return true;
  for (uint32_t k = 0; k < agent.slot_count; k++)
    if (k != cu->index && deque_has_work_for(&agent.units[k], cu->index)) return true;
  return false;
}

static void idle(struct aq_compute_unit *cu) {
  /* Only one unit polls at a time, so idle units do not crowd out the
   * application's threads. It polls only while the processor has nothing
   * else to run: a thread this unit just woke (the one waiting for the
   * dispatch it completed) is often queued on this very processor, and a
   * unit that kept polling would hold it back by the whole polling time. */
  if (atomic_fetch_add(&agent.spinners, 1) == 0) {
    uint64_t now = aq_now_ns(), end = now + AQ_IDLE_SPIN_NS;
    bool found = false;
    while (!found && now < end) {
      for (int i = 0; i < 64 && !found; i++) {
        found = work_visible(cu) || atomic_load(&agent.stopping);
        cpu_relax();
      }
      if (found) break;
      uint64_t before = aq_now_ns();
      sched_yield();
      now = aq_now_ns();
      if (now - before > AQ_IDLE_YIELD_CONTENDED_NS) break;
    }
    atomic_fetch_sub(&agent.spinners, 1);
    if (found) return;
  } else {
    atomic_fetch_sub(&agent.spinners, 1);
  }
  atomic_fetch_add(&agent.sleep_state, 1);
  uint32_t event = atomic_load(&agent.event_seq);
  if (!work_visible(cu) && !atomic_load(&agent.stopping))
    aq_futex_wait(&agent.event_seq, event, UINT64_MAX);
  /* Leaving takes one pending wake-up along (whether or not it was the one
   * that woke this unit), and keeps the pending ones at most the sleepers. */
  uint64_t state = atomic_load(&agent.sleep_state), next;
  do {
    uint32_t sleepers = SLEEPERS(state) - 1, waking = WAKING(state);
    if (waking) waking--;
    if (waking > sleepers) waking = sleepers;
    next = ((uint64_t)waking << 32) | sleepers;
  } while (!atomic_compare_exchange_weak(&agent.sleep_state, &state, next));
}

static void *compute_unit_main(void *arg) {
  struct aq_compute_unit *cu = arg;
  if (cu->cpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cu->cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  }
  aq_fiber_pool_bind_thread(cu->fibers);
  /* The thread's stack, where its work-items' private memory is. */
  int stack_id = aq_address_range_add_thread_stack();
  if (!cu->signal_stack) cu->signal_stack = malloc(AQ_SIGNAL_STACK_SIZE);
  stack_t signal_stack = {.ss_sp = cu->signal_stack, .ss_size = AQ_SIGNAL_STACK_SIZE};
  bool on_signal_stack = signal_stack.ss_sp && !sigaltstack(&signal_stack, NULL);
  struct busy_time busy = {0, 0};
  while (!atomic_load_explicit(&agent.stopping, memory_order_relaxed)) {
    bool progressed = scan_queues(cu);
    struct aq_range range;
    if (deque_take(cu, AQ_UNIT_CHUNK_MAX, &range)) {
      run_range(cu, range);
      wake_for_work_left(cu, &busy, range.end - range.begin);
      continue;
    }
    if (progressed || steal_work(cu)) continue;
    idle(cu);
    busy = (struct busy_time){0, 0};
  }
  if (on_signal_stack) {
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
  }
  aq_address_range_remove(stack_id);
  return NULL;
}

/* ---- helping waiters ---- */

static size_t helper_guard_size(void) {
  return (size_t)sysconf(_SC_PAGESIZE);
}

/* A free helper slot whose deque is empty (ranges a helper left behind are
 * its until the units have stolen them), with its stack made; NULL when
 * there is none. */
static struct aq_compute_unit *helper_claim(void) {
  for (uint32_t i = agent.unit_count; i < agent.slot_count; i++) {
    struct aq_compute_unit *cu = &agent.units[i];
    if (atomic_load_explicit(&cu->helper_owned, memory_order_relaxed) ||
        atomic_load(&cu->deque_count) || atomic_exchange(&cu->helper_owned, 1))
      continue;
    if (atomic_load(&cu->deque_count)) {
      atomic_store(&cu->helper_owned, 0);
      continue;
    }
    if (!cu->helper_stack) {
      size_t guard = helper_guard_size();
      void *stack = mmap(NULL, AQ_UNIT_STACK_SIZE + guard, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
      if (stack != MAP_FAILED &&
          mprotect((char *)stack + guard, AQ_UNIT_STACK_SIZE, PROT_READ | PROT_WRITE)) {
        munmap(stack, AQ_UNIT_STACK_SIZE + guard);
        stack = MAP_FAILED;
      }
      if (stack != MAP_FAILED) {
        cu->helper_stack = stack;
        cu->helper_stack_id =
            AQ_STACK_REGISTER((char *)stack + guard, (char *)stack + guard + AQ_UNIT_STACK_SIZE);
        cu->helper_private_id =
            aq_address_range_add((char *)stack + guard, (char *)stack + guard + AQ_UNIT_STACK_SIZE,
                                 AQUILA_ADDRESS_PRIVATE);
      }
    }
    if (!cu->helper_stack) {
      atomic_store(&cu->helper_owned, 0);
      return NULL;
    }
    return cu;
  }
  return NULL;
}

struct help {
  struct aq_compute_unit *cu;
  struct aq_queue *queue;
  uint64_t packet_id;
  struct aq_signal *signal;
  hsa_signal_condition_t condition;
  hsa_signal_value_t compare_value;
  struct steal_filter filter;
};

/* The barrier bit of the packet at index, 1 or 0, or -1 when it is not
 * there to read (launched already, or not published yet). */
static int packet_barrier_bit(struct aq_queue *q, uint64_t index) {
  if (atomic_load_explicit(&q->read_index, memory_order_acquire) > index) return -1;
  const char *slot = (const char *)q->ring + (size_t)(index & (q->public_queue.size - 1)) * 64u;
  uint16_t h = atomic_load_explicit((_Atomic uint16_t *)slot, memory_order_acquire);
  /* Read before the packet was consumed, or the header may be another's. */
  if (atomic_load_explicit(&q->read_index, memory_order_acquire) > index) return -1;
  if (aq_queue_slot_unpublished(q, index, h)) return -1;
  return (h >> HSA_PACKET_HEADER_BARRIER) & 1u;
}

/* Launches the packets from the queue's read index up to the helper's own
 * one, when no unit has: kernel dispatches go to the helper's deque.
 * Returns true when it took any packet. */
static bool help_launch(struct help *h) {
  struct aq_queue *q = h->queue;
  uint64_t read = atomic_load_explicit(&q->read_index, memory_order_acquire);
  if (read > h->packet_id || (read < h->packet_id && !h->filter.earlier)) return false;
  visit_begin(h->cu);
  /* A unit holds processing only while it turns packets into ranges. */
  for (int tries = 0; tries < 256 && atomic_load(&q->active); tries++) {
    if (!atomic_exchange(&q->processing, 1)) {
      process_queue(h->cu, q, h->packet_id);
      atomic_store_explicit(&q->processing, 0, memory_order_release);
      break;
    }
    cpu_relax();
    if (atomic_load_explicit(&q->read_index, memory_order_acquire) > h->packet_id) break;
  }
  visit_end(h->cu);
  return atomic_load_explicit(&q->read_index, memory_order_acquire) != read;
}

static bool help_steal(struct help *h) {
  for (uint32_t k = 0; k < agent.slot_count; k++) {
    struct aq_compute_unit *victim = &agent.units[k];
    struct aq_range range;
    if (victim != h->cu && deque_steal(victim, h->cu->index, &h->filter, &range)) {
      deque_push(h->cu, range);
      return true;
    }
  }
  return false;
}

static void help_loop(void *argument) {
  struct help *h = argument;
  struct aq_compute_unit *cu = h->cu;
  bool ran = false;
  struct busy_time busy = {aq_now_ns(), 0};
  for (;;) {
    int64_t value = atomic_load_explicit(&h->signal->value, memory_order_acquire);
    if (aq_signal_condition_holds(value, h->condition, h->compare_value)) break;
    /* After its first work-groups (a small dispatch is done then, whatever
     * the units do: an awake unit may still be waiting for a processor), a
     * helper goes on only while some unit sleeps or has been woken but has
     * not run yet: when every unit is up, one more thread would only share
     * their processors, and the units steal what is left on its deque. */
    if (ran && SLEEPERS(atomic_load(&agent.sleep_state)) == 0) break;
    struct aq_range range;
    if (deque_take(cu, AQ_HELPER_CHUNK_MAX, &range)) {
      run_range(cu, range);
      ran = true;
      wake_for_work_left(cu, &busy, range.end - range.begin);
      continue;
    }
    if (!help_launch(h) && !help_steal(h)) break;
  }
}

void aq_cpu_agent_help(struct aq_queue *queue, uint64_t packet_id, struct aq_signal *signal,
                       hsa_signal_condition_t condition, hsa_signal_value_t compare_value) {
  /* A masked queue's work runs only on the units of its mask. */
  if (atomic_load(&queue->masked) || !atomic_load(&queue->active)) return;
  /* Not a packet in the queue's ring (yet): nothing to read. */
  uint64_t read = atomic_load_explicit(&queue->read_index, memory_order_acquire);
  if (packet_id >= atomic_load_explicit(&queue->write_index, memory_order_acquire) ||
      (packet_id >= read && packet_id - read >= queue->public_queue.size))
    return;
  int barrier = packet_barrier_bit(queue, packet_id);
  bool queued = barrier >= 0;
  if (!queued && atomic_load_explicit(&queue->read_index, memory_order_acquire) <= packet_id)
    return; /* not published yet */
  struct aq_compute_unit *cu = helper_claim();
  if (!cu) return;
  struct help h = {
      cu, queue, packet_id, signal, condition, compare_value, {queue, packet_id, barrier == 1}};
  /* The slot's fiber pool is made when a work-group first needs one
   * (run_workitems makes it for the thread), and kept with the slot. */
  struct aq_fiber_pool *fibers = aq_fiber_pool_bind_thread(cu->fibers);
  aq_call_on_stack((char *)cu->helper_stack + helper_guard_size() + AQ_UNIT_STACK_SIZE, help_loop,
                   &h);
  cu->fibers = aq_fiber_pool_bind_thread(fibers);
  /* Ranges left on the deque (the condition held first) are the units'. */
  if (atomic_load(&cu->deque_count)) agent_event(INT_MAX);
  atomic_store_explicit(&cu->helper_owned, 0, memory_order_release);
}

void aq_cpu_agent_help_short(struct aq_queue *queue, uint64_t packet_id, struct aq_signal *signal) {
  /* The queue's next packet only (nothing before it to run first), a kernel
   * dispatch whose kernel ran briefly last time. */
  if (atomic_load_explicit(&queue->read_index, memory_order_acquire) != packet_id) return;
  const char *slot =
      (const char *)queue->ring + (size_t)(packet_id & (queue->public_queue.size - 1)) * 64u;
  uint16_t h = atomic_load_explicit((_Atomic uint16_t *)slot, memory_order_acquire);
  if (aq_queue_slot_unpublished(queue, packet_id, h) ||
      ((h >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1)) !=
          HSA_PACKET_TYPE_KERNEL_DISPATCH)
    return;
  uint64_t object;
  memcpy(&object, slot + offsetof(hsa_kernel_dispatch_packet_t, kernel_object), sizeof object);
  /* Read before the packet was consumed, or it may be another's. */
  if (atomic_load_explicit(&queue->read_index, memory_order_acquire) != packet_id ||
      !kernel_was_short((const void *)(uintptr_t)object))
    return;
  aq_cpu_agent_help(queue, packet_id, signal, HSA_SIGNAL_CONDITION_EQ, 0);
}

/* ---- lifetime ---- */

/* Each unit's thread is pinned to a CPU of its own when there are as many
 * units as CPUs in the process's affinity mask (unit i on the mask's i-th
 * CPU, which is also what a sub-device's affinity domains assume): a thread
 * then keeps its caches, and two units never share a CPU while another
 * idles. Not when a cgroup quota grants fewer CPUs than the mask has (the
 * scheduler places the threads within it), nor when AQUILA_CPU_UNITS asks
 * for another count, nor with AQUILA_CPU_PIN=0. */
static void plan_pinning(void) {
  static int cpus[AQ_CPU_SHARE_MAX];
  int allowed = aq_cpu_share_cpus(cpus, AQ_CPU_SHARE_MAX);
  const char *env = getenv("AQUILA_CPU_PIN");
  bool pin = allowed > 0 && (uint32_t)allowed == agent.unit_count && !(env && !strcmp(env, "0"));
  for (uint32_t i = 0; i < agent.unit_count; i++)
    agent.units[i].cpu = pin ? cpus[i] : -1;
  struct aq_cpu_place *places = allowed > 0 ? malloc(sizeof *places * (size_t)allowed) : NULL;
  if (!places) return;
  aq_cpu_topology_read("", cpus, allowed, places);
  agent.node_count = aq_cpu_topology_nodes(places, allowed, agent.node_mask, AQ_NODE_MASK_WORDS);
  if (!pin || agent.unit_count < 3) { /* two units: each other's only victim */
    free(places);
    return;
  }
  for (uint32_t i = 0; i < agent.unit_count; i++) {
    uint32_t *order = malloc(sizeof *order * (agent.unit_count - 1));
    if (order) aq_cpu_topology_victims(places, (int)agent.unit_count, (int)i, order);
    agent.units[i].victims = order;
  }
  free(places);
}

/* Starts the threads of the units that have none; returns false when one
 * could not be started. */
static bool start_unit_threads(void) {
  for (uint32_t i = 0; i < agent.unit_count; i++) {
    struct aq_compute_unit *cu = &agent.units[i];
    if (cu->has_thread) continue;
    cu->seen_event = atomic_load(&agent.event_seq) - 1;
    if (!cu->fibers) cu->fibers = aq_fiber_pool_create();
    /* Big stacks: work-groups split at barriers keep each private variable
     * that lives across a barrier in an array with one element per
     * work-item, on this stack. Only touched pages cost memory. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, AQ_UNIT_STACK_SIZE);
    cu->has_thread = cu->fibers && pthread_create(&cu->thread, &attr, compute_unit_main, cu) == 0;
    pthread_attr_destroy(&attr);
    if (!cu->has_thread) return false;
  }
  return true;
}

hsa_status_t aq_cpu_agent_start(void) {
  uint32_t count = aq_agent_compute_unit_count();
  uint32_t slots = count + AQ_HELPER_SLOTS;
  agent.units = aligned_alloc(AQ_CACHE_LINE, sizeof(struct aq_compute_unit) * slots);
  if (!agent.units) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memset(agent.units, 0, sizeof(struct aq_compute_unit) * slots);
  agent.unit_count = count;
  plan_pinning();
  atomic_store(&agent.stopping, 0);
  atomic_store(&agent.units_missing, 0);
  atomic_store(&agent.queue_slots, 0);
  for (uint32_t i = 0; i < AQ_QUEUES_MAX; i++)
    atomic_store(&agent.queues[i], NULL);
  /* Helper slots get their fiber pool and stack when first used. */
  /* AQUILA_TRACE: a row per unit; the threads that help while they wait
   * share one (its lanes show the ones that helped at once). */
  uint32_t helpers_track = AQ_TRACE_ON() ? aq_trace_track(3, "waiting threads helping") : 0;
  for (uint32_t i = 0; i < slots; i++) {
    pthread_mutex_init(&agent.units[i].deque_lock, NULL);
    agent.units[i].index = i;
    if (AQ_TRACE_ON())
      agent.units[i].trace_track = i < count ? aq_trace_track(2, "CPU unit %u", i) : helpers_track;
  }
  agent.slot_count = slots;
  pthread_once(&traps_once, install_fault_handlers);
  if (!start_unit_threads()) {
    aq_cpu_agent_stop();
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  return HSA_STATUS_SUCCESS;
}

void aq_cpu_agent_stop(void) {
  atomic_store(&agent.stopping, 1);
  atomic_fetch_add(&agent.event_seq, 1);
  aq_futex_wake(&agent.event_seq, INT_MAX);
  /* Every unit is joined before any unit's state goes: a running unit may
   * still be stealing from another's deque. */
  for (uint32_t i = 0; i < agent.unit_count; i++)
    if (agent.units[i].has_thread) pthread_join(agent.units[i].thread, NULL);
  for (uint32_t i = 0; i < agent.slot_count; i++) {
    struct aq_compute_unit *cu = &agent.units[i];
    aq_fiber_pool_destroy(cu->fibers);
    free(cu->signal_stack);
    if (cu->group_segment) {
      aq_address_range_remove(cu->group_segment_id);
      munmap(cu->group_segment, cu->group_segment_mapping);
    }
    free(cu->victims);
    cu->victims = NULL;
    if (cu->helper_stack) {
      AQ_STACK_DEREGISTER(cu->helper_stack_id);
      aq_address_range_remove(cu->helper_private_id);
      munmap(cu->helper_stack, AQ_UNIT_STACK_SIZE + helper_guard_size());
    }
    if (cu->check_stack) {
      AQ_STACK_DEREGISTER(cu->check_stack_id);
      aq_address_range_remove(cu->check_private_id);
      munmap(cu->check_stack,
             AQ_UNIT_STACK_SIZE + AQ_CHECK_STACK_SCRATCH + 2 * helper_guard_size());
    }
    pthread_mutex_destroy(&cu->deque_lock);
  }
  free(agent.units);
  agent.units = NULL;
  agent.unit_count = 0;
  agent.slot_count = 0;
  atomic_store(&agent.units_missing, 0);
}

/* ---- fork ---- */

static void restart_units(void) {
  pthread_mutex_lock(&restart_lock);
  /* A unit that cannot be started now is tried again at the next event;
   * meanwhile waiters that help run the work themselves. */
  if (atomic_load(&agent.units_missing) && agent.units && start_unit_threads())
    atomic_store(&agent.units_missing, 0);
  pthread_mutex_unlock(&restart_lock);
}

static int compare_pointers(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

/* Frees the parent's dispatches that the child can find: those a unit or
 * helper was running and those with ranges on a deque (one taken or stolen
 * at the very moment of the fork may be in neither, and stays). Child only,
 * before the deques are emptied. */
static void free_parent_dispatches(void) {
  size_t count = 0;
  for (uint32_t i = 0; i < agent.slot_count; i++)
    count += 1 + atomic_load(&agent.units[i].deque_count);
  struct aq_dispatch **all = malloc(count * sizeof *all);
  if (!all) return;
  size_t n = 0;
  for (uint32_t i = 0; i < agent.slot_count; i++) {
    struct aq_compute_unit *cu = &agent.units[i];
    if (cu->running) all[n++] = cu->running;
    cu->running = NULL;
    uint32_t ranges = atomic_load(&cu->deque_count);
    for (uint32_t k = 0; k < ranges; k++)
      all[n++] = cu->deque[(cu->deque_head + k) % AQ_DEQUE_CAPACITY].dispatch;
  }
  qsort(all, n, sizeof *all, compare_pointers);
  for (size_t k = 0; k < n; k++)
    if (k == 0 || all[k] != all[k - 1]) free(all[k]);
  free(all);
}

/* Drops what the parent had given the queue: the packets not yet taken
 * (published or still being written by a thread that the child does not
 * have) and the count of launched dispatches, which no unit of the child
 * will complete. Child only. */
static void queue_forget_parent_work(struct aq_queue *q) {
  uint64_t read = atomic_load(&q->read_index), write = atomic_load(&q->write_index);
  uint32_t mask = q->public_queue.size - 1;
  for (uint64_t index = read; index < write && index - read <= mask; index++)
    *(uint16_t *)((char *)q->ring + (size_t)(index & mask) * 64u) = HSA_PACKET_TYPE_INVALID
                                                                    << HSA_PACKET_HEADER_TYPE;
  atomic_store(&q->read_index, write);
  atomic_store(&q->inflight, 0);
  atomic_store(&q->processing, 0);
  atomic_store(&q->pending, 0);
  unwatch_barrier(q);
}

void aq_cpu_agent_fork(enum aq_fork_phase phase) {
  if (phase == AQ_FORK_PREPARE) {
    /* The same order as everywhere else: no code holds two of these. */
    pthread_mutex_lock(&restart_lock);
    pthread_mutex_lock(&agent.table_lock);
    for (uint32_t i = 0; i < agent.slot_count; i++)
      pthread_mutex_lock(&agent.units[i].deque_lock);
    pthread_mutex_lock(&supersessions_lock);
    return;
  }
  if (phase == AQ_FORK_PARENT) {
    pthread_mutex_unlock(&supersessions_lock);
    for (uint32_t i = agent.slot_count; i-- > 0;)
      pthread_mutex_unlock(&agent.units[i].deque_lock);
    pthread_mutex_unlock(&agent.table_lock);
    pthread_mutex_unlock(&restart_lock);
    return;
  }
  pthread_mutex_init(&restart_lock, NULL);
  pthread_mutex_init(&agent.table_lock, NULL);
  pthread_mutex_init(&supersessions_lock, NULL);
  if (!agent.units) return; /* not started, or shut down */
  free_parent_dispatches();
  for (uint32_t i = 0; i < agent.slot_count; i++) {
    struct aq_compute_unit *cu = &agent.units[i];
    pthread_mutex_init(&cu->deque_lock, NULL);
    /* The ranges were the parent's dispatches. */
    cu->deque_head = 0;
    atomic_store(&cu->deque_count, 0);
    atomic_store(&cu->restricted_count, 0);
    atomic_store(&cu->visit_seq, 0);
    cu->visit_depth = 0;
    /* A unit's fiber pool, or the one a helper was using, may have been in
     * the middle of a work-group: new ones are made when needed. */
    aq_fiber_pool_destroy(cu->fibers);
    cu->fibers = NULL;
    cu->has_thread = false;
    atomic_store(&cu->helper_owned, 0);
  }
  atomic_store(&agent.sleep_state, 0);
  atomic_store(&agent.spinners, 0);
  atomic_store(&agent.recheck_barriers, 0);
  uint32_t slots = atomic_load(&agent.queue_slots);
  for (uint32_t k = 0; k < slots; k++) {
    struct aq_queue *q = atomic_load(&agent.queues[k]);
    if (q) queue_forget_parent_work(q);
  }
  if (!atomic_load(&agent.stopping)) atomic_store(&agent.units_missing, 1);
}

hsa_status_t aq_cpu_agent_add_queue(struct aq_queue *queue) {
  pthread_mutex_lock(&agent.table_lock);
  uint32_t slot = 0;
  while (slot < AQ_QUEUES_MAX && atomic_load(&agent.queues[slot]))
    slot++;
  if (slot == AQ_QUEUES_MAX) {
    pthread_mutex_unlock(&agent.table_lock);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  queue->slot = slot;
  atomic_store(&agent.queues[slot], queue);
  if (slot >= atomic_load(&agent.queue_slots)) atomic_store(&agent.queue_slots, slot + 1);
  pthread_mutex_unlock(&agent.table_lock);
  return HSA_STATUS_SUCCESS;
}

void aq_cpu_agent_remove_queue(struct aq_queue *queue) {
  atomic_store(&queue->active, 0);
  pthread_mutex_lock(&agent.table_lock);
  atomic_store(&agent.queues[queue->slot], NULL);
  pthread_mutex_unlock(&agent.table_lock);

  uint32_t inflight = atomic_fetch_or(&queue->inflight, AQ_INFLIGHT_DESTROYING);
  while ((inflight & ~AQ_INFLIGHT_DESTROYING) != 0) {
    aq_futex_wait(&queue->inflight, inflight | AQ_INFLIGHT_DESTROYING, UINT64_MAX);
    inflight = atomic_load(&queue->inflight);
  }
  for (uint32_t i = 0; i < agent.slot_count; i++) {
    struct aq_compute_unit *cu = &agent.units[i];
    uint32_t seq = atomic_load(&cu->visit_seq);
    while ((seq & 1u) && atomic_load(&cu->visit_seq) == seq)
      sched_yield();
  }
  unwatch_barrier(queue);
}

hsa_status_t aq_cpu_agent_set_cu_mask(struct aq_queue *queue, uint32_t bits, const uint32_t *mask) {
  uint64_t words[AQ_CU_MASK_WORDS] = {0};
  uint32_t limit =
      agent.unit_count < AQ_CU_MASK_WORDS * 64u ? agent.unit_count : AQ_CU_MASK_WORDS * 64u;
  bool any = false;
  /* Bits of units that do not exist are ignored, as the mask only says
   * where the queue may run. */
  for (uint32_t i = 0; i < bits && i < limit; i++)
    if ((mask[i / 32u] >> (i % 32u)) & 1u) {
      words[i / 64u] |= 1ull << (i % 64u);
      any = true;
    }
  if (bits && !any) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&agent.table_lock);
  if (!bits) {
    atomic_store(&queue->masked, 0);
  } else {
    /* A unit reading the mask meanwhile sees the old one, the new one or
     * their union, never an empty one: add the new bits first, then drop the
     * old ones. */
    bool was_masked = atomic_load(&queue->masked);
    for (uint32_t w = 0; w < AQ_CU_MASK_WORDS; w++)
      atomic_store(&queue->cu_mask[w],
                   words[w] | (was_masked ? atomic_load(&queue->cu_mask[w]) : 0));
    atomic_store(&queue->masked, 1);
    for (uint32_t w = 0; w < AQ_CU_MASK_WORDS; w++)
      atomic_store(&queue->cu_mask[w], words[w]);
  }
  pthread_mutex_unlock(&agent.table_lock);
  /* Packets left behind by units that just lost the queue go to the new ones. */
  if (atomic_load(&queue->read_index) != atomic_load(&queue->write_index)) {
    atomic_store(&queue->pending, 1);
    agent_event(INT_MAX);
  }
  return HSA_STATUS_SUCCESS;
}
