/* Synchronization (OpenCL 1.2 section 6.12.8): barrier and the memory fences.
 * The barrier itself is the __aquila_barrier intrinsic, which the
 * work-group pass turns into a loop split or a fiber switch. */
#include "clc.h"

void __aquila_barrier(uint flags);

INL void barrier(cl_mem_fence_flags flags) { __aquila_barrier(flags); }

/* Work-items of a group may run on one thread, but a fence must still order
 * the compiler's loads and stores across it, and across threads when a
 * group is spread; a real fence does both. */
INL void mem_fence(cl_mem_fence_flags flags) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
INL void read_mem_fence(cl_mem_fence_flags flags) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
INL void write_mem_fence(cl_mem_fence_flags flags) { __atomic_thread_fence(__ATOMIC_RELEASE); }
