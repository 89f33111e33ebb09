/* Asynchronous copies and prefetch (OpenCL 1.2 section 6.12.10). Every
 * work-item of the group makes the same call, so each copies its own
 * strided share, at once; wait_group_events, which every work-item must
 * also reach, is then a barrier that makes the whole copy visible. The
 * event is only passed through: completion is tracked by that barrier. */
#include "clc.h"

#pragma OPENCL EXTENSION cl_khr_fp16 : enable

static INL size_t aq_flat_local_id(void) {
  return get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
}
static INL size_t aq_flat_local_size(void) {
  return get_local_size(0) * get_local_size(1) * get_local_size(2);
}

#define ASYNC(T)                                                               \
  INL event_t async_work_group_copy(__local T *dst, const __global T *src, size_t n, event_t ev) { \
    for (size_t i = aq_flat_local_id(), s = aq_flat_local_size(); i < n; i += s) \
      dst[i] = src[i];                                                        \
    return ev;                                                                \
  }                                                                           \
  INL event_t async_work_group_copy(__global T *dst, const __local T *src, size_t n, event_t ev) { \
    for (size_t i = aq_flat_local_id(), s = aq_flat_local_size(); i < n; i += s) \
      dst[i] = src[i];                                                        \
    return ev;                                                                \
  }                                                                           \
  INL event_t async_work_group_strided_copy(__local T *dst, const __global T *src, size_t n, \
                                            size_t stride, event_t ev) {      \
    for (size_t i = aq_flat_local_id(), s = aq_flat_local_size(); i < n; i += s) \
      dst[i] = src[i * stride];                                               \
    return ev;                                                                \
  }                                                                           \
  INL event_t async_work_group_strided_copy(__global T *dst, const __local T *src, size_t n, \
                                            size_t stride, event_t ev) {      \
    for (size_t i = aq_flat_local_id(), s = aq_flat_local_size(); i < n; i += s) \
      dst[i * stride] = src[i];                                               \
    return ev;                                                                \
  }                                                                           \
  /* A hint only; not acting on it is correct. */                             \
  INL void prefetch(const __global T *p, size_t n) {}
#define ASYNC_W(N, T) ASYNC(T##N)
#define ASYNC_ALL(T) FOR_ALL_WIDTHS(ASYNC_W, T)
ASYNC_ALL(char) ASYNC_ALL(uchar) ASYNC_ALL(short) ASYNC_ALL(ushort)
ASYNC_ALL(int) ASYNC_ALL(uint) ASYNC_ALL(long) ASYNC_ALL(ulong)
ASYNC_ALL(float) ASYNC_ALL(double) ASYNC_ALL(half)

INL void wait_group_events(int n, event_t *events) {
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

/* The overload user programs call (generic event pointer) is in events.ll. */
