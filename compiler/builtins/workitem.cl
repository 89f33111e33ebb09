/* Work-item functions (OpenCL 1.2 section 6.12.1). Each reads one of the
 * __aquila_* intrinsics, which Aquila's work-group pass replaces with values
 * from the dispatch; this library only declares them. Dimensions at or past
 * get_work_dim() answer the spec's defaults (1 for sizes, 0 for ids). */
#include "clc.h"

uint __aquila_work_dim(void);
size_t __aquila_global_size(uint dim);
size_t __aquila_local_size(uint dim);
size_t __aquila_enqueued_local_size(uint dim);
size_t __aquila_num_groups(uint dim);
size_t __aquila_group_id(uint dim);
size_t __aquila_local_id(uint dim);
size_t __aquila_global_offset(uint dim);

INL uint get_work_dim(void) { return __aquila_work_dim(); }

/* Dimension 0 always exists (work_dim >= 1): saying so keeps
 * get_global_id(0) a plain sum of the ids, which the vectorizer sees as
 * consecutive across work-items, and leaves no branch in the work-item loop
 * for kernels that are not vectorized. */
#define AQ_DIM_OK(d) ((d) == 0 || (d) < __aquila_work_dim())

INL size_t get_global_size(uint d) { return AQ_DIM_OK(d) ? __aquila_global_size(d) : 1; }
INL size_t get_local_size(uint d) { return AQ_DIM_OK(d) ? __aquila_local_size(d) : 1; }
INL size_t get_num_groups(uint d) { return AQ_DIM_OK(d) ? __aquila_num_groups(d) : 1; }
INL size_t get_group_id(uint d) { return AQ_DIM_OK(d) ? __aquila_group_id(d) : 0; }
INL size_t get_local_id(uint d) { return AQ_DIM_OK(d) ? __aquila_local_id(d) : 0; }
INL size_t get_global_offset(uint d) { return AQ_DIM_OK(d) ? __aquila_global_offset(d) : 0; }

/* The last group of a non-uniform NDRange is smaller, so the global id is
 * built from the enqueued size, not the actual local size of this group. */
INL size_t get_global_id(uint d) {
  if (!AQ_DIM_OK(d))
    return 0;
  return __aquila_group_id(d) * __aquila_enqueued_local_size(d) + __aquila_local_id(d) +
         __aquila_global_offset(d);
}
