/* Aquila's vendor extension to the HSA runtime: what its HSA clients (the
 * OpenCL runtime among them) may use beyond hsa.h and hsa_ext_amd.h. */
#ifndef AQUILA_HSA_EXT_AQUILA_H
#define AQUILA_HSA_EXT_AQUILA_H

#include <hsa/hsa.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Waits like hsa_signal_wait_scacquire for signal, the completion signal of
 * the kernel dispatch packet packet_id of queue (a queue of the CPU agent),
 * and meanwhile runs work of that dispatch on the calling thread instead of
 * sleeping until a compute unit has run it: it launches the packet when no
 * unit has launched it yet, runs its work-groups and takes work-groups of
 * it from the units (after its first work-groups, only while some unit
 * sleeps or has not run since it was woken). When the packet has the
 * barrier bit, the packets before it in queue are part of what it waits
 * for, and it helps with them too; it never runs other work. Work-groups
 * run on a stack of the agent's, not the caller's. A queue with a
 * compute-unit mask, a soft queue, or a packet not yet published gets a
 * plain wait. Returns the signal's value, as the wait does. */
hsa_signal_value_t hsa_ven_aquila_signal_wait_helping(hsa_signal_t signal,
                                                      hsa_signal_condition_t condition,
                                                      hsa_signal_value_t compare_value,
                                                      uint64_t timeout_hint,
                                                      hsa_wait_state_t wait_state_hint,
                                                      hsa_queue_t *queue, uint64_t packet_id);

/* For a thread that asks rather than waits (a status query, a server's
 * network thread): runs the kernel dispatch of packet_id on the calling
 * thread, as hsa_ven_aquila_signal_wait_helping does, only when it is the
 * queue's next packet, no compute unit has taken it, and the same kernel's
 * last dispatch on this agent ran under 50 us; otherwise returns at once.
 * So the caller is held about as long as such a kernel takes, never for a
 * long one. Returns the signal's value afterwards (0: it ran to its end);
 * when a handler of hsa_ven_aquila_signal_on_zero may have destroyed the
 * signal meanwhile, the value means nothing: the queue's read index past
 * packet_id says that the packet was taken. */
hsa_signal_value_t hsa_ven_aquila_signal_help_short(hsa_signal_t signal, hsa_queue_t *queue,
                                                    uint64_t packet_id);

/* A fault in a kernel's code (a load or store at an address nothing is
 * mapped at, a misaligned access the instruction does not allow, an
 * instruction the processor lacks) ends that dispatch instead of the
 * process: the work-group stops where it faulted, the dispatch's other
 * work-groups are not started (those already running finish), the queue's
 * error callback is called with the status below (the queue stays active),
 * and the completion signal is decremented as usual. What happened is kept
 * with the completion signal until the host next stores to it. A fault
 * outside kernel code, or in a process whose own handler for the signal
 * was installed after Aquila's, is handled as it would be without Aquila.
 * AQUILA_KERNEL_FAULTS=crash leaves every fault to the process (for a core
 * dump of the faulting kernel). */
typedef struct hsa_ven_aquila_dispatch_fault_s {
  int signal;           /* SIGSEGV, SIGBUS, SIGILL or SIGFPE; 0: the dispatch ran to its end */
  uint64_t address;     /* the address the faulting instruction accessed */
  uint32_t group_id[3]; /* the work-group that faulted */
} hsa_ven_aquila_dispatch_fault_t;

/* How the last kernel dispatch that completed signal ended (call it after
 * waiting for the completion): HSA_STATUS_SUCCESS, or
 * HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION (SIGSEGV, SIGBUS),
 * HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION (SIGILL), HSA_STATUS_ERROR_EXCEPTION
 * (SIGFPE). fault, when not NULL, gets the details. */
hsa_status_t hsa_ven_aquila_signal_dispatch_status(hsa_signal_t signal,
                                                   hsa_ven_aquila_dispatch_fault_t *fault);

/* Calls handler(signal, arg) once, when the signal's value becomes 0, on
 * the thread that made it 0: for a kernel dispatch's completion signal,
 * the compute unit that finished its last work-group, right after the
 * decrement (the fault and the profiling times are readable then); at once
 * on the calling thread when the value is 0 already. It saves the wake-up
 * of a thread that waits for the signal only to pass the news on (aquilad
 * sends a dispatch's end to its client this way). The handler runs where
 * kernels run: it must be short and must not wait for other dispatches.
 * The signal may be destroyed in it. One handler per signal at a time:
 * HSA_STATUS_ERROR_INVALID_ARGUMENT when one is set and has not run; a
 * NULL handler removes the one set. */
typedef void (*hsa_ven_aquila_signal_zero_handler_t)(hsa_signal_t signal, void *arg);
hsa_status_t hsa_ven_aquila_signal_on_zero(hsa_signal_t signal,
                                           hsa_ven_aquila_signal_zero_handler_t handler, void *arg);

/* Self-check of the vectorizer (AQUILA_VECTORIZE=check). A kernel built
 * in that mode has, beside its work-group function, a scalar one that runs
 * its work-items one after another without the vectorizer's work
 * (cpu_abi.h: AQUILA_KERNEL_HAS_SCALAR_TWIN). A client registers a check
 * for a dispatch's kernarg segment before it publishes the packet: the
 * memory ranges the kernel may touch and the kernarg slots that point into
 * them. The agent then runs that dispatch on one compute unit: every
 * work-group with the vectorized function on the real memory, and with the
 * scalar one on copies of the ranges (their pointers in a copy of the
 * kernarg segment moved to the copies, with printf silenced), and compares
 * the ranges. Where they differ it replays both from the starting contents,
 * one work-group at a time, to name the first work-group after which the
 * first differing bytes differ, and leaves the real memory as the
 * vectorized function wrote it. The results are written before the
 * completion signal changes. */
typedef enum {
  HSA_VEN_AQUILA_CHECK_BYTES = 0,   /* any difference counts */
  HSA_VEN_AQUILA_CHECK_FLOAT32 = 1, /* floats: see close_ulps */
  HSA_VEN_AQUILA_CHECK_FLOAT64 = 2  /* doubles: see close_ulps */
} hsa_ven_aquila_check_element_t;

typedef struct hsa_ven_aquila_check_range_s {
  uint64_t base;    /* address of the range's first byte */
  uint64_t size;    /* bytes */
  uint32_t element; /* hsa_ven_aquila_check_element_t: how its contents compare */
  /* Not 0: the range holds 3-element vectors of components this many bytes
   * wide, each in the room of 4; the fourth is padding, not compared. */
  uint32_t vec3_component_size;
} hsa_ven_aquila_check_range_t;

typedef struct hsa_ven_aquila_check_slot_s {
  uint32_t kernarg_offset; /* an 8-byte pointer in the kernarg segment */
  uint32_t range;          /* the range it points into */
} hsa_ven_aquila_check_slot_t;

typedef enum {
  HSA_VEN_AQUILA_CHECK_NOT_RUN = 0,   /* the dispatch has not run (yet) */
  HSA_VEN_AQUILA_CHECK_SAME = 1,      /* both functions wrote the same bytes */
  HSA_VEN_AQUILA_CHECK_DIFFERENT = 2, /* see range, offset, group_id */
  HSA_VEN_AQUILA_CHECK_NO_SCALAR = 3, /* the kernel has no scalar twin: run as usual */
  HSA_VEN_AQUILA_CHECK_SKIPPED = 4,   /* no memory for the copies, or a fault: run as usual */
  HSA_VEN_AQUILA_CHECK_CLOSE = 5      /* only floating-point differences within close_ulps
                                         (range, offset and bytes: the first of them) */
} hsa_ven_aquila_check_result_t;

typedef struct hsa_ven_aquila_dispatch_check_s {
  uint32_t num_ranges;
  uint32_t num_slots;
  const hsa_ven_aquila_check_range_t *ranges;
  const hsa_ven_aquila_check_slot_t *slots;
  /* In FLOAT32 and FLOAT64 ranges, two values count as close (not as a
   * difference) when both are NaN, when they are at most close_ulps units
   * in the last place apart, or, with finite_math_only, when either is not
   * finite: two correct implementations of a math builtin may round
   * differently within the specification's bounds, and NaN's bits are
   * unspecified. With denormals_may_flush, a zero and a subnormal value
   * (of either sign) count as close too: -cl-unsafe-math-optimizations
   * and -cl-denorms-are-zero let either side flush. */
  uint32_t close_ulps;
  uint32_t finite_math_only;
  uint32_t denormals_may_flush;
  /* Written by the agent. */
  uint32_t result;         /* hsa_ven_aquila_check_result_t */
  uint32_t range;          /* DIFFERENT: the range of the first differing byte */
  uint64_t offset;         /* its offset in that range */
  uint32_t group_known;    /* 1 when group_id is set */
  uint32_t group_id[3];    /* the first work-group after which they differ there */
  uint32_t num_bytes;      /* bytes of each below, from offset (at most 16) */
  uint8_t vector_bytes[16];
  uint8_t scalar_bytes[16];
} hsa_ven_aquila_dispatch_check_t;

/* Registers check for the kernel dispatch whose kernarg_address is
 * kernarg (before its packet is published; check stays the caller's and
 * must live until the dispatch's completion signal has changed, or until
 * the registration is withdrawn). check NULL withdraws a registration for
 * kernarg that no dispatch has taken (its packet never ran).
 * HSA_STATUS_ERROR_INVALID_ARGUMENT for a NULL kernarg, or a slot or range
 * out of bounds. A DIFFERENT result with range UINT32_MAX: the scalar
 * function faulted where the vectorized one did not. */
hsa_status_t hsa_ven_aquila_dispatch_check(const void *kernarg,
                                           hsa_ven_aquila_dispatch_check_t *check);

/* Tiered code (runtime/tiers.c): from now on, dispatches of old_object on
 * the CPU agent, queued or running, run the work-groups they have not yet
 * started with new_object, a kernel of the same kernarg layout and static
 * group segment size (the same kernel, compiled again). For one switch
 * each: old_object may be superseded once. The supersession ends when the
 * executable of either is destroyed. HSA_STATUS_ERROR_INVALID_AGENT for
 * any other agent (a remote agent's dispatches keep their code);
 * HSA_STATUS_ERROR_INVALID_CODE_OBJECT when either is not a kernel object
 * of a live executable loaded on it, or their layouts differ. Under
 * AQUILA_DEBUG a dispatch says where it switched. */
hsa_status_t hsa_ven_aquila_kernel_object_supersede(hsa_agent_t agent, uint64_t old_object,
                                                    uint64_t new_object);

/* uint32_t: a kernel symbol's descriptor flags (AQUILA_KERNEL_* of
 * aquila/cpu_abi.h: barriers, the sub-group width). Not for kernels of
 * remote agents (HSA_STATUS_ERROR_INVALID_ARGUMENT). */
#define HSA_VEN_AQUILA_EXECUTABLE_SYMBOL_INFO_KERNEL_FLAGS ((hsa_executable_symbol_info_t)0x5A10)

/* Places the pages of host memory that the host is about to fill for the
 * CPU agent's kernels and that nothing has touched yet (address
 * page-aligned): interleaved over the NUMA nodes of the CPUs the agent's
 * units may run on, since which unit will read each page is not known
 * (memory a kernel fills first needs nothing: its pages land on the nodes
 * of the units that write them). HSA_STATUS_INFO_BREAK when nothing was
 * done: the CPUs are on one node, or the kernel has no NUMA policy. */
hsa_status_t hsa_ven_aquila_memory_place(hsa_agent_t agent, void *address, size_t size);

/* One NDRange's work-groups spread over several agents: a kernel dispatch
 * packet whose reserved2 field is not 0 runs only the work-groups of flat
 * indices [begin, end) (x fastest, then y, then z) of the grid it
 * describes, with reserved2 = HSA_VEN_AQUILA_GROUP_RANGE(begin, end); every
 * work-item sees the whole grid's sizes and its own ids in it. end must not
 * be past the grid's work-groups, begin below end (else the packet is
 * invalid). For the CPU agent and remote agents. */
#define HSA_VEN_AQUILA_GROUP_RANGE(begin, end)                                                   \
  ((uint64_t)(uint32_t)(begin) | ((uint64_t)(uint32_t)(end) << 32))

/* Remote agents (docs/REMOTE.md): with AQUILA_REMOTE=ADDR:PORT[,...] and
 * AQUILA_REMOTE_KEY_FILE, hsa_iterate_agents lists, after the CPU agent,
 * one agent per daemon (aquilad) that admitted this process, in that
 * order. Each is a CPU agent of another machine (HSA_AGENT_INFO_DEVICE is
 * HSA_DEVICE_TYPE_CPU) whose memory this process cannot touch: it has no
 * regions; its memory is reached through the calls below, whose addresses
 * are the agent's own (what its kernels see). Queues, code objects and
 * kernel dispatch packets work as on the CPU agent (other packet types
 * fail their completion signal). A dispatch on a lost agent completes with
 * a fault (hsa_ven_aquila_signal_dispatch_status: HSA_STATUS_ERROR_EXCEPTION,
 * signal SIGPIPE). */
#define HSA_VEN_AQUILA_AGENT_INFO_REMOTE ((hsa_agent_info_t)0x5A00)      /* bool */
#define HSA_VEN_AQUILA_AGENT_INFO_CODE_TARGET ((hsa_agent_info_t)0x5A01) /* char[128] */
#define HSA_VEN_AQUILA_AGENT_INFO_AVAILABLE ((hsa_agent_info_t)0x5A02)   /* bool */
#define HSA_VEN_AQUILA_AGENT_INFO_LOCATION ((hsa_agent_info_t)0x5A03)    /* char[96] */
#define HSA_VEN_AQUILA_AGENT_INFO_MEMORY_SIZE ((hsa_agent_info_t)0x5A04) /* uint64_t, bytes */
/* uint32_t: how many times a lost agent's daemon admitted this process
 * again (0 for the CPU agent). A lost agent is reconnected in the
 * background; memory and code objects of an earlier epoch are gone
 * (dispatches of its kernels fail). */
#define HSA_VEN_AQUILA_AGENT_INFO_EPOCH ((hsa_agent_info_t)0x5A05)

/* Allocates size bytes (at least 64-byte aligned) in the agent's memory. */
hsa_status_t hsa_ven_aquila_agent_memory_allocate(hsa_agent_t agent, size_t size,
                                                  uint64_t *address);
hsa_status_t hsa_ven_aquila_agent_memory_free(hsa_agent_t agent, uint64_t address);
/* Copies into the agent's memory; ordered after the kernels dispatched to
 * the agent before it and before those after it. src may be reused when
 * the call returns. */
hsa_status_t hsa_ven_aquila_agent_memory_write(hsa_agent_t agent, uint64_t address, const void *src,
                                               size_t size);
/* Fills size bytes (a multiple of pattern_size, 1 to 128) with pattern;
 * ordered like a write. */
hsa_status_t hsa_ven_aquila_agent_memory_fill(hsa_agent_t agent, uint64_t address, size_t size,
                                              const void *pattern, uint32_t pattern_size);
/* Copies between two remote agents' memories, daemon to daemon: the bytes
 * do not pass through this process (the source grants the destination a
 * one-use read of that range). Returns when they are in place. Within one
 * agent (the same agent twice), a copy ordered like a write, overlapping
 * ranges allowed. */
hsa_status_t hsa_ven_aquila_agent_memory_copy(hsa_agent_t dst_agent, uint64_t dst,
                                              hsa_agent_t src_agent, uint64_t src, size_t size);
/* Copies out of the agent's memory, after the kernels dispatched to it
 * before; returns when dst holds the bytes. */
hsa_status_t hsa_ven_aquila_agent_memory_read(hsa_agent_t agent, void *dst, uint64_t address,
                                              size_t size);

#ifdef __cplusplus
}
#endif

#endif
