/* Aquila's vendor extension to the HSA runtime: what its HSA clients (the
 * OpenCL runtime among them) may use beyond hsa.h and hsa_ext_amd.h. */
#ifndef AQUILA_HSA_EXT_AQUILA_H
#define AQUILA_HSA_EXT_AQUILA_H

#include <hsa/hsa.h>

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

#ifdef __cplusplus
}
#endif

#endif
