/* Declarations shared between the modules of Aquila's HSA runtime: the
 * internal shapes behind the opaque HSA handles, and the few calls modules
 * make into each other. Nothing here is visible to HSA clients. */
#ifndef AQUILA_HSA_INTERNAL_H
#define AQUILA_HSA_INTERNAL_H

#include <hsa/hsa.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define AQ_CACHE_LINE 64

/* Handles are addresses of runtime objects. Before reading an object's magic
 * number, reject values no object can have: the first 64 KiB (never mapped,
 * where small integers and NULL land), misaligned or non-canonical values.
 * Destroyed objects stay mapped (freed to the heap or pooled), so a stale
 * handle fails the magic check instead of faulting. */
static inline bool aq_handle_plausible(uint64_t handle, uint64_t alignment) {
  return handle >= 65536 && handle < (1ull << 47) && !(handle & (alignment - 1));
}

/* ---- handle.c: the registry of live objects ---- */
enum aq_handle_kind {
  AQ_HANDLE_EXECUTABLE = 1,
  AQ_HANDLE_EXECUTABLE_SYMBOL,
  AQ_HANDLE_CODE_OBJECT_READER,
  AQ_HANDLE_SIGNAL_GROUP,
  AQ_HANDLE_IMAGE,
  /* A CPU kernel descriptor of a loaded code object: as many entries as
   * executables hold it (a library loaded twice is mapped once). */
  AQ_HANDLE_KERNEL_OBJECT,
};
/* Records object as live; false when out of memory. */
bool aq_handle_add(const void *object, enum aq_handle_kind kind);
/* Forgets object; false when it was not live (so that of two racing
 * destroys, only one frees it). */
bool aq_handle_remove(const void *object, enum aq_handle_kind kind);
/* True when handle is a live object of that kind; reads no object memory. */
bool aq_handle_is_live(uint64_t handle, enum aq_handle_kind kind);

/* ---- runtime.c ---- */
bool aq_runtime_is_initialized(void);
uint64_t aq_now_ns(void);
/* An extension id hsa.h or hsa_ext_amd.h defines (supported or not). */
bool aq_extension_id_is_known(uint16_t extension);

/* ---- futex helpers (signal.c) ---- */
/* Returns 0 when woken or the value differed, -1 on timeout. timeout_ns
 * UINT64_MAX waits forever. */
int aq_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns);
void aq_futex_wake(_Atomic uint32_t *word, int count);

/* ---- signal.c ---- */
struct aq_queue;

struct aq_signal {
  _Alignas(AQ_CACHE_LINE) _Atomic int64_t value;
  /* Bumped on every change while someone sleeps on it; the futex word. */
  _Atomic uint32_t change_seq;
  /* Threads inside a futex wait on change_seq. */
  _Atomic uint32_t sleepers;
  /* Barrier packets stalled on this signal; the agent rechecks them. */
  _Atomic uint32_t watchers;
  /* AQ_SIGNAL_MAGIC while live; read by handle checks that may race with
   * a destroy (the memory stays in the pool). */
  _Atomic uint32_t magic;
  /* Set for a queue's doorbell: a store wakes the agent for that queue.
   * Atomic: the thread that completes a signal reads it after the value
   * change, while a waiter that saw the change may already be destroying
   * the signal (hsa_signal_destroy clears it; pooled memory stays valid). */
  _Atomic(struct aq_queue *) doorbell_queue;
  struct aq_signal *next_free; /* in the pool of destroyed signals */
  /* How the last kernel dispatch that completed this signal ended: 0, or
   * the signal number of a fault in its code, with where it happened.
   * Written before the completion's decrement (release), read after a wait
   * (acquire); a store of the value from the host clears it. */
  _Atomic int fault_signal;
  uint64_t fault_address;
  uint32_t fault_group[3];
  /* hsa_amd_profiling_get_dispatch_time: when the last kernel dispatch
   * that completed this signal from a profiling queue began running its
   * first work-group and finished its last (written like fault_signal). */
  uint64_t dispatch_start, dispatch_end;
  /* hsa_ven_aquila_signal_on_zero: run by the change that makes the value
   * 0 (the one that exchanges it for NULL), with its argument. */
  _Atomic(void (*)(hsa_signal_t, void *)) zero_handler;
  void *zero_arg;
};

/* The status a kernel dispatch that faulted with signal sig ends with
 * (HSA_STATUS_SUCCESS for 0; hsa_ext_aquila.h). */
hsa_status_t aq_fault_status(int sig);
struct aq_signal *aq_signal_from_handle(hsa_signal_t signal);
hsa_signal_t aq_signal_to_handle(struct aq_signal *signal);
struct aq_signal *aq_signal_new(int64_t initial_value);
void aq_signal_free(struct aq_signal *signal);
/* True when value satisfies condition against compare_value. */
bool aq_signal_condition_holds(int64_t value, hsa_signal_condition_t condition,
                               int64_t compare_value);
void aq_signal_subtract_release(struct aq_signal *signal, int64_t amount);
/* Marks signal as watched: its changes bump the watch epoch and call
 * aq_cpu_agent_watched_signal_changed. */
void aq_signal_watch(struct aq_signal *signal);
void aq_signal_unwatch(struct aq_signal *signal);

/* ---- agent.c ---- */
uint32_t aq_agent_compute_unit_count(void);
bool aq_agent_is_valid(hsa_agent_t agent);
/* The CPU agent or a live remote agent. */
bool aq_agent_exists(hsa_agent_t agent);
hsa_agent_t aq_cpu_agent_handle(void);
struct aquila_kernel_descriptor;
/* cpu_agent.c: ends the supersessions (hsa_ven_aquila_kernel_object_supersede)
 * of a kernel descriptor about to be unloaded. */
void aq_cpu_agent_forget_kernel(const struct aquila_kernel_descriptor *kernel);
#define AQ_WORKGROUP_MAX_SIZE 4096u
/* hsa.h: a requested size below the minimum gets a queue of the minimum. */
#define AQ_QUEUE_MIN_SIZE 4u
#define AQ_QUEUE_MAX_SIZE (1u << 20)
#define AQ_QUEUES_MAX 1024u
#define AQ_GROUP_SEGMENT_MAX (64u * 1024u)
/* Alignment of the group segment each compute unit gives a work-group. */
#define AQ_GROUP_SEGMENT_ALIGNMENT 128u
/* hsa.h: "Must be at least 32." No kernel uses fbarriers (they are HSAIL's). */
#define AQ_FBARRIER_MAX 32u

/* ---- memory.c ---- */
void aq_memory_release_all(void);

/* ---- queue.c ---- */
/* A compute-unit mask holds AQUILA_CPU_UNITS's limit of 1024 units. */
#define AQ_CU_MASK_WORDS 16u

struct aq_queue {
  hsa_queue_t public_queue; /* first: the public pointer is this struct */
  _Alignas(AQ_CACHE_LINE) _Atomic uint64_t write_index;
  _Alignas(AQ_CACHE_LINE) _Atomic uint64_t read_index;
  /* Set by doorbells; cleared by the compute unit that processes the queue. */
  _Alignas(AQ_CACHE_LINE) _Atomic uint32_t pending;
  /* 1 while a compute unit is processing packets of this queue. */
  _Atomic uint32_t processing;
  /* Launched packets that have not completed yet (futex word for destroy). */
  _Atomic uint32_t inflight;
  _Atomic uint32_t active;     /* 0 after inactivate, destroy or an error */
  _Atomic uint32_t destroying; /* destroy waits for inflight to reach 0 */
  /* A barrier packet at read_index registered itself as watcher. */
  uint32_t barrier_watching;
  uint32_t watched_count;
  struct aq_signal *watched[5];
  struct aq_signal *doorbell;
  bool owns_doorbell;
  bool soft; /* processed by the application, not by the CPU agent */
  void (*error_callback)(hsa_status_t status, hsa_queue_t *source, void *data);
  void *error_data;
  void *ring;
  size_t ring_bytes; /* mapped for ring, whole pages */
  /* AQ_QUEUE_MAGIC while live; the destroy that swaps it to 0 owns the queue. */
  _Atomic uint32_t magic;
  struct aq_queue *next_free; /* in the pool of destroyed queues */
  uint32_t slot;              /* index in the agent's queue table */
  /* hsa_amd_queue_cu_set_mask: when masked is 1, only the units whose bits
   * are set in cu_mask take this queue's packets and run their work-groups. */
  _Atomic uint32_t masked;
  /* hsa_amd_profiling_set_profiler_enabled: its dispatches record when
   * they run into their completion signals. */
  _Atomic uint32_t profiling;
  _Atomic uint64_t cu_mask[AQ_CU_MASK_WORDS];
  /* A remote agent's queue (1 + its index; 0 for the CPU agent's): its
   * packets are forwarded to the daemon by whoever rings the doorbell,
   * one thread at a time. */
  uint32_t remote;
  pthread_mutex_t forward_lock;
};

struct aq_queue *aq_queue_from_public(const hsa_queue_t *queue);
/* True when the packet processor may not read the slot at index yet: its
 * header is INVALID, or it is still the zero page the ring was mapped with
 * (headers are not written ahead, so that untouched slots cost no memory). */
bool aq_queue_slot_unpublished(const struct aq_queue *queue, uint64_t index, uint16_t header);

/* ---- cpu_agent.c ---- */
hsa_status_t aq_cpu_agent_start(void);
void aq_cpu_agent_stop(void);
hsa_status_t aq_cpu_agent_add_queue(struct aq_queue *queue);
void aq_cpu_agent_remove_queue(struct aq_queue *queue);
/* Restricts queue to the units set in the first bits of mask (bits == 0:
 * every unit). INVALID_ARGUMENT when no existing unit is in the mask. */
hsa_status_t aq_cpu_agent_set_cu_mask(struct aq_queue *queue, uint32_t bits, const uint32_t *mask);
/* A doorbell of queue was rung. */
void aq_cpu_agent_ring(struct aq_queue *queue);
/* A signal watched by a stalled barrier packet changed. */
void aq_cpu_agent_watched_signal_changed(void);
/* Runs, on the calling thread, work that the kernel dispatch packet_id of
 * queue needs before its completion signal satisfies condition (see
 * hsa_ven_aquila_signal_wait_helping); returns when there is none left to
 * take, or when the condition holds. */
/* Helps (as aq_cpu_agent_help, until signal is 0) only when packet_id is
 * the queue's next packet and its kernel's last dispatch was short. */
void aq_cpu_agent_help_short(struct aq_queue *queue, uint64_t packet_id, struct aq_signal *signal);
void aq_cpu_agent_help(struct aq_queue *queue, uint64_t packet_id, struct aq_signal *signal,
                       hsa_signal_condition_t condition, hsa_signal_value_t compare_value);

/* ---- fork (runtime.c registers these with pthread_atfork at the first
 * hsa_init): before a fork each module takes its global locks, so that the
 * child gets them in a consistent state; after it the parent releases them
 * and the child, whose only thread is the one that forked, makes them anew
 * and forgets the state of the parent's other threads (cpu_agent.c). ---- */
enum aq_fork_phase { AQ_FORK_PREPARE, AQ_FORK_PARENT, AQ_FORK_CHILD };
void aq_cpu_agent_fork(enum aq_fork_phase phase);
void aq_signal_fork(enum aq_fork_phase phase);
void aq_queue_fork(enum aq_fork_phase phase);
void aq_handle_fork(enum aq_fork_phase phase);
void aq_memory_fork(enum aq_fork_phase phase);

/* What each module does with a global lock at each phase of a fork. */
static inline void aq_fork_lock(pthread_mutex_t *lock, enum aq_fork_phase phase) {
  if (phase == AQ_FORK_PREPARE)
    pthread_mutex_lock(lock);
  else if (phase == AQ_FORK_PARENT)
    pthread_mutex_unlock(lock);
  else
    pthread_mutex_init(lock, NULL);
}

/* ---- remote/agents.c: remote agents (hsa_ext_aquila.h) ---- */
struct aq_remote_kernel;
/* Loads the remote agents' library and connects when AQUILA_REMOTE is set. */
/* A client setting of remote agents: the environment's, else the
 * configuration file's (hsa/remote/settings.c); NULL when neither. */
const char *aq_remote_setting(const char *name);
/* A line on standard error under AQUILA_DEBUG. */
bool aq_debug_enabled(void);
void aq_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void aq_remote_start(void);
void aq_remote_stop(void);
uint32_t aq_remote_agent_count(void);
hsa_agent_t aq_remote_agent_handle(uint32_t index);
/* The remote agent's index, or -1 when agent is not a live remote agent. */
int aq_remote_agent_index(hsa_agent_t agent);
/* hsa_agent_get_info for a remote agent (value checked non-NULL). */
hsa_status_t aq_remote_agent_info(uint32_t index, hsa_agent_info_t attribute, void *value);
/* Loads a code object on the agent; kernels freed with aq_remote_free_kernels. */
hsa_status_t aq_remote_load(uint32_t index, const void *code, size_t size, uint64_t *executable,
                            struct aq_remote_kernel **kernels, uint32_t *num_kernels);
void aq_remote_free_kernels(struct aq_remote_kernel *kernels, uint32_t num_kernels);
void aq_remote_unload(uint32_t index, uint64_t executable);
/* An image of the remote agent over its memory at address (hsa/image.c
 * checks the arguments first): the daemon's handle. */
struct hsa_ext_image_descriptor_s;
hsa_status_t aq_remote_image_create(uint32_t index, const struct hsa_ext_image_descriptor_s *desc,
                                    uint64_t address, hsa_access_permission_t access,
                                    size_t row_pitch, size_t slice_pitch, uint64_t *handle);
void aq_remote_image_destroy(uint32_t index, uint64_t handle);
/* A doorbell of a remote agent's queue was rung: forwards its packets. */
void aq_remote_ring(struct aq_queue *queue);
/* Receives the remote agents' messages on the calling thread until s meets
 * the condition or none came for max_ns: the wait of a thread whose
 * dispatch's end comes from a daemon, without a wake-up of another thread
 * on the way. false when another thread received them meanwhile. */
bool aq_remote_receive_while_waiting(struct aq_signal *s, hsa_signal_condition_t condition,
                                     hsa_signal_value_t compare_value, uint64_t max_ns);

/* ---- image.c ---- */
/* Answers the HSA_EXT_AGENT_INFO_* image attributes; false for others. */
bool aq_image_agent_info(uint32_t attribute, void *value);
/* Copies the images extension's function table: hsa_ext_images_1_00_pfn_t,
 * or for major_table the first length bytes of hsa_ext_images_1_pfn_t. */
size_t aq_image_table(bool major_table, void *table, size_t length);

/* ---- stacks of our own (fibers, helpers) made known to Valgrind, so
 * that memcheck takes a switch to one for a switch of stacks and not for a
 * huge frame; no-ops unless the program runs under Valgrind. ---- */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define AQ_STACK_REGISTER(low, high) ((unsigned)VALGRIND_STACK_REGISTER((low), (high)))
#define AQ_STACK_DEREGISTER(id) VALGRIND_STACK_DEREGISTER(id)
#endif
#endif
#ifndef AQ_STACK_REGISTER
#define AQ_STACK_REGISTER(low, high) ((void)(low), (void)(high), 0u)
#define AQ_STACK_DEREGISTER(id) ((void)(id))
#endif

/* ---- address_spaces.c: where private and local memory are ---- */
/* Adds [low, high) as space (AQUILA_ADDRESS_PRIVATE for a stack work-items
 * run on, AQUILA_ADDRESS_LOCAL for a group segment); returns its id, or -1
 * when the table is full. */
int aq_address_range_add(const void *low, const void *high, int space);
/* The calling thread's own stack, as private. */
int aq_address_range_add_thread_stack(void);
void aq_address_range_remove(int id);
/* The space of the range holding address; AQUILA_ADDRESS_GLOBAL if none. */
int aq_address_space_of(const void *address);

/* ---- fiber.c ---- */
struct aq_fiber_pool;
struct aq_fiber_pool *aq_fiber_pool_create(void);
void aq_fiber_pool_destroy(struct aq_fiber_pool *pool);
/* Makes pool the one that run_workitems uses on the calling thread;
 * returns the one it used before. */
struct aq_fiber_pool *aq_fiber_pool_bind_thread(struct aq_fiber_pool *pool);
/* Calls fn(argument) on another stack (its top: the highest address) and
 * returns when fn returns. */
void aq_call_on_stack(void *stack_top, void (*fn)(void *), void *argument);
extern const struct aquila_cpu_services aq_cpu_services;

/* ---- dispatch_check.c: AQUILA_VECTORIZE=check (hsa_ext_aquila.h) ---- */
struct hsa_ven_aquila_dispatch_check_s;
struct aquila_kernel_descriptor;
struct aquila_workgroup;
/* What the agent does for a checked dispatch: runs its work-groups
 * [begin, end) with fn on kernarg (scalar: the twin, printf silenced, on
 * a stack of its own with room above for overruns) and returns
 * false when one faulted (the fault is recorded on the dispatch);
 * clear_fault forgets such a fault; group_of turns a flat index into an id. */
struct aq_check_runner {
  void *context;
  bool (*run)(void *context, void (*fn)(const void *, const struct aquila_workgroup *),
              const void *kernarg, int scalar, uint64_t begin, uint64_t end);
  void (*clear_fault)(void *context);
  void (*group_of)(void *context, uint64_t index, uint32_t id[3]);
};
/* The check registered for a dispatch with this kernarg segment, taken out
 * of the registry; NULL when none (one atomic load while none is). */
struct hsa_ven_aquila_dispatch_check_s *aq_check_take(const void *kernarg);
/* Runs the dispatch's groups work-groups checked, on the calling thread. */
void aq_check_run(struct hsa_ven_aquila_dispatch_check_s *check,
                  const struct aquila_kernel_descriptor *kernel, const void *kernarg,
                  uint64_t groups, const struct aq_check_runner *runner);

/* printf.c: the printf service, and the flush when a dispatch that printed completes. */
int aq_printf(const char *format, ...);
void aq_printf_flush(void);

#endif
