/* OpenCL C 2.0's work-group collective functions (section 6.15.14 of the
 * 3.0 specification): work_group_all, any, broadcast, and reduce and
 * inclusive and exclusive scans of add, min and max, for int, uint, long,
 * ulong, float and double. Compiled as OpenCL C 3.0 (builtins.mk).
 *
 * A work-group runs on one thread, its work-items in the order of their
 * linear local id between barriers (work-item loops, fibers), and the
 * vectorizer runs atomics once per lane in lane order, which is that order
 * too (compiler/vectorize/vectorize.c). So a collective is an atomic
 * update of one __local scratch word by every work-item in turn, between
 * barriers: a reduction is the word after every update, an exclusive scan
 * is the word each work-item found before its own update. The result is
 * the sequential one, floating-point sums included, on every run. The first
 * barrier keeps a collective from starting before every work-item has read
 * the previous one's result. */
#include "clc.h"

#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

local void *__aq_collective_scratch(void);
void __aquila_barrier(uint flags);

#define ORDER memory_order_relaxed
#define SCOPE memory_scope_work_group
#define SYNC() __aquila_barrier(CLK_LOCAL_MEM_FENCE)
#define SCRATCH(A) ((local A *)__aq_collective_scratch())

/* The scratch word holding identity, every work-item's update done in
 * order, and what each found (before) and left (the last one's after). */
#define START(A, IDENTITY)                                                                         \
  local A *s = SCRATCH(A);                                                                         \
  SYNC();                                                                                          \
  if (get_local_linear_id() == 0) __opencl_atomic_store(s, IDENTITY, ORDER, SCOPE);                \
  SYNC();

#define OPERATION(T, A, NAME, FETCH, COMBINE, IDENTITY)                                            \
  INL T work_group_reduce_##NAME(T x) {                                                            \
    START(A, IDENTITY)                                                                             \
    FETCH(s, x, ORDER, SCOPE);                                                                     \
    SYNC();                                                                                        \
    return __opencl_atomic_load(s, ORDER, SCOPE);                                                  \
  }                                                                                                \
  INL T work_group_scan_exclusive_##NAME(T x) {                                                    \
    START(A, IDENTITY)                                                                             \
    return FETCH(s, x, ORDER, SCOPE);                                                              \
  }                                                                                                \
  INL T work_group_scan_inclusive_##NAME(T x) {                                                    \
    START(A, IDENTITY)                                                                             \
    T before = FETCH(s, x, ORDER, SCOPE);                                                          \
    return COMBINE(before, x);                                                                     \
  }

#define ADD(a, b) ((a) + (b))
#define BROADCAST(T, A)                                                                            \
  static __attribute__((always_inline)) T aq_broadcast_##T(T x, bool mine) {                       \
    local A *s = SCRATCH(A);                                                                       \
    SYNC();                                                                                        \
    if (mine) __opencl_atomic_store(s, x, ORDER, SCOPE);                                           \
    SYNC();                                                                                        \
    return __opencl_atomic_load(s, ORDER, SCOPE);                                                  \
  }                                                                                                \
  INL T work_group_broadcast(T x, size_t lx) {                                                     \
    return aq_broadcast_##T(x, get_local_id(0) == lx);                                             \
  }                                                                                                \
  INL T work_group_broadcast(T x, size_t lx, size_t ly) {                                          \
    return aq_broadcast_##T(x, get_local_id(0) == lx && get_local_id(1) == ly);                    \
  }                                                                                                \
  INL T work_group_broadcast(T x, size_t lx, size_t ly, size_t lz) {                               \
    return aq_broadcast_##T(x, get_local_id(0) == lx && get_local_id(1) == ly &&                   \
                                   get_local_id(2) == lz);                                         \
  }

#define INTEGER(T, A, MIN_VALUE, MAX_VALUE)                                                        \
  OPERATION(T, A, add, __opencl_atomic_fetch_add, ADD, (T)0)                                       \
  OPERATION(T, A, min, __opencl_atomic_fetch_min, min, MAX_VALUE)                                  \
  OPERATION(T, A, max, __opencl_atomic_fetch_max, max, MIN_VALUE)                                  \
  BROADCAST(T, A)
INTEGER(int, atomic_int, INT_MIN, INT_MAX)
INTEGER(uint, atomic_uint, 0u, UINT_MAX)
INTEGER(long, atomic_long, LONG_MIN, LONG_MAX)
INTEGER(ulong, atomic_ulong, 0ul, ULONG_MAX)

/* fmin and fmax: a NaN loses to a number, as min and max of floats do. */
#define FLOATING(T, A)                                                                             \
  OPERATION(T, A, add, __opencl_atomic_fetch_add, ADD, (T)0)                                       \
  OPERATION(T, A, min, __opencl_atomic_fetch_min, fmin, (T)INFINITY)                               \
  OPERATION(T, A, max, __opencl_atomic_fetch_max, fmax, (T)-INFINITY)                              \
  BROADCAST(T, A)
FLOATING(float, atomic_float)
FLOATING(double, atomic_double)

INL int work_group_all(int predicate) {
  START(atomic_int, 1)
  if (!predicate) __opencl_atomic_store(s, 0, ORDER, SCOPE);
  SYNC();
  return __opencl_atomic_load(s, ORDER, SCOPE);
}

INL int work_group_any(int predicate) {
  START(atomic_int, 0)
  if (predicate) __opencl_atomic_store(s, 1, ORDER, SCOPE);
  SYNC();
  return __opencl_atomic_load(s, ORDER, SCOPE);
}
