/* The work-item and synchronization functions OpenCL C 2.0 added and 3.0
 * keeps in its core (sections 6.15.1 and 6.15.8): the enqueued local size,
 * the linear ids, and work_group_barrier. clang declares them only for
 * OpenCL C 2.0 and later, so this file is compiled as OpenCL C 3.0, with
 * the same feature macros as atomic_c11.cl (builtins.mk). A memory scope
 * asks nothing more of a CPU than the barrier's fence flags do. */
#include "clc.h"

size_t __aquila_enqueued_local_size(uint dim);
void __aquila_barrier(uint flags);

INL size_t get_enqueued_local_size(uint d) {
  return d == 0 || d < get_work_dim() ? __aquila_enqueued_local_size(d) : 1;
}

INL size_t get_global_linear_id(void) {
  return (get_global_id(2) - get_global_offset(2)) * get_global_size(1) * get_global_size(0) +
         (get_global_id(1) - get_global_offset(1)) * get_global_size(0) +
         (get_global_id(0) - get_global_offset(0));
}

INL size_t get_local_linear_id(void) {
  return get_local_id(2) * get_local_size(1) * get_local_size(0) +
         get_local_id(1) * get_local_size(0) + get_local_id(0);
}

INL void work_group_barrier(cl_mem_fence_flags flags) { __aquila_barrier(flags); }
INL void work_group_barrier(cl_mem_fence_flags flags, memory_scope scope) {
  __aquila_barrier(flags);
}
