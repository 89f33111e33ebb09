/* OpenCL C 2.0's generic address space (section 6.5.5 of the 3.0 C
 * specification): to_global, to_local, to_private and get_fence. On a CPU
 * every address space is the one address space of the process, so a
 * generic pointer is the address itself; what these ask is where it
 * points. This file is compiled as OpenCL C 3.0 with the generic address
 * space (builtins.mk). The builtins that take a pointer, in their generic
 * form, are made from their __global form when the library is linked
 * (generic_variants.c).
 *
 * Where a pointer points, for any pointer a correct kernel can hold:
 * - __local: inside this work-group's group segment (the agent's bytes
 *   for the dispatch, cpu_abi.h);
 * - __private: on the stack of the work-item, at or above the current
 *   stack pointer (less the 128-byte red zone below it, where x86-64 puts
 *   a leaf function's variables) and within the largest private segment a work-group may have
 *   (its work-item frames, and the work-group function's around them,
 *   lie there; a fiber's stack too), or on another of the stacks work-items
 *   run on (another work-item's, on another thread: the agent's
 *   services->address_space_of, which knows every group segment too).
 *   Nothing else a kernel can point to is on a stack: buffers, SVM, program variables, __constant data and
 *   group segments are all mappings of their own;
 * - __global: everything else. */
#include "clc.h"

size_t __aquila_group_segment_base(void);
size_t __aquila_group_segment_size(void);
size_t __aquila_stack_pointer(void);
int __aquila_address_space_of(size_t address);
/* AQUILA_ADDRESS_* of cpu_abi.h. */
#define AQ_ADDRESS_LOCAL 3
#define AQ_ADDRESS_PRIVATE 0

/* The largest private segment of a work-group: AQUILA_PRIVATE_SEGMENT_MAX
 * in cpu_abi.h (the runtime refuses a kernel over it). */
#define AQ_PRIVATE_SEGMENT_MAX ((size_t)48 << 20)

static __attribute__((always_inline)) bool aq_is_local(size_t a) {
  size_t base = __aquila_group_segment_base();
  return a - base < __aquila_group_segment_size() ||
         __aquila_address_space_of(a) == AQ_ADDRESS_LOCAL;
}

#define AQ_RED_ZONE 128

static __attribute__((always_inline)) bool aq_is_private(size_t a) {
  /* The stack pointer here is below every frame of the work-item; another
   * work-item's memory may be on another thread's stack (the agent knows
   * them all). */
  return a - (__aquila_stack_pointer() - AQ_RED_ZONE) < AQ_PRIVATE_SEGMENT_MAX + AQ_RED_ZONE ||
         __aquila_address_space_of(a) == AQ_ADDRESS_PRIVATE;
}

__attribute__((always_inline)) __global void *__to_global(__generic void *p) {
  size_t a = (size_t)p;
  return p && !aq_is_local(a) && !aq_is_private(a) ? (__global void *)p : NULL;
}

__attribute__((always_inline)) __local void *__to_local(__generic void *p) {
  return p && aq_is_local((size_t)p) ? (__local void *)p : NULL;
}

__attribute__((always_inline)) __private void *__to_private(__generic void *p) {
  return p && aq_is_private((size_t)p) ? (__private void *)p : NULL;
}

INL cl_mem_fence_flags get_fence(__generic void *p) {
  size_t a = (size_t)p;
  if (aq_is_local(a)) return CLK_LOCAL_MEM_FENCE;
  return aq_is_private(a) ? 0 : CLK_GLOBAL_MEM_FENCE;
}

INL cl_mem_fence_flags get_fence(const __generic void *p) {
  return get_fence((__generic void *)p);
}

/* ---- builtins that take a pointer, in their generic form ------------------
 * clang's header declares only these once the generic address space is on,
 * so every call of an OpenCL C 3.0 program names one. Each forwards to the
 * __global form (declared here: the header no longer does), which on a CPU
 * reaches any address; the casts cancel once inlined. The C11 atomics'
 * generic forms are atomic_c11.cl's own. */

/* fract, frexp, lgamma_r, modf, sincos: one out-pointer. */
#define FWD_OUT_ONE(RT, F, AT, PT)                                                                 \
  OVL RT F(AT, __global PT *);                                                                     \
  INL RT F(AT x, __generic PT *p) {                                                                \
    return F(x, (__global PT *)p);                                                                 \
  }
#define FWD_OUT(RT, F, AT, PT)                                                                     \
  FWD_OUT_ONE(RT, F, AT, PT)                                                                       \
  FWD_OUT_ONE(RT##2, F, AT##2, PT##2)                                                              \
  FWD_OUT_ONE(RT##3, F, AT##3, PT##3)                                                              \
  FWD_OUT_ONE(RT##4, F, AT##4, PT##4)                                                              \
  FWD_OUT_ONE(RT##8, F, AT##8, PT##8) FWD_OUT_ONE(RT##16, F, AT##16, PT##16)
#define FWD_OUT_FP(F, PT_FLOAT, PT_DOUBLE)                                                         \
  FWD_OUT(float, F, float, PT_FLOAT) FWD_OUT(double, F, double, PT_DOUBLE)
FWD_OUT_FP(fract, float, double)
FWD_OUT_FP(modf, float, double)
FWD_OUT_FP(sincos, float, double)
FWD_OUT_FP(frexp, int, int)
FWD_OUT_FP(lgamma_r, int, int)

/* remquo: two inputs and the quotient's pointer. */
#define FWD_REMQUO_ONE(T, Q)                                                                       \
  OVL T remquo(T, T, __global Q *);                                                                \
  INL T remquo(T x, T y, __generic Q *q) {                                                         \
    return remquo(x, y, (__global Q *)q);                                                          \
  }
#define FWD_REMQUO(T)                                                                              \
  FWD_REMQUO_ONE(T, int)                                                                           \
  FWD_REMQUO_ONE(T##2, int2)                                                                       \
  FWD_REMQUO_ONE(T##3, int3)                                                                       \
  FWD_REMQUO_ONE(T##4, int4) FWD_REMQUO_ONE(T##8, int8) FWD_REMQUO_ONE(T##16, int16)
FWD_REMQUO(float)
FWD_REMQUO(double)

/* vloadn and vstoren. */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define FWD_VLS(N, T)                                                                              \
  OVL T##N vload##N(size_t, const __global T *);                                                   \
  INL T##N vload##N(size_t o, const __generic T *p) {                                              \
    return vload##N(o, (const __global T *)p);                                                     \
  }                                                                                                \
  OVL void vstore##N(T##N, size_t, __global T *);                                                  \
  INL void vstore##N(T##N v, size_t o, __generic T *p) {                                           \
    vstore##N(v, o, (__global T *)p);                                                              \
  }
#define FWD_VLS_ALL(T) FWD_VLS(2, T) FWD_VLS(3, T) FWD_VLS(4, T) FWD_VLS(8, T) FWD_VLS(16, T)
FWD_VLS_ALL(char)
FWD_VLS_ALL(uchar)
FWD_VLS_ALL(short)
FWD_VLS_ALL(ushort)
FWD_VLS_ALL(int)
FWD_VLS_ALL(uint)
FWD_VLS_ALL(long)
FWD_VLS_ALL(ulong)
FWD_VLS_ALL(float)
FWD_VLS_ALL(double)
FWD_VLS_ALL(half)

/* vload_half, vloada_half and the half stores in every rounding mode. */
#define FWD_HLOAD(NAME, RT)                                                                        \
  OVL RT NAME(size_t, const __global half *);                                                      \
  INL RT NAME(size_t o, const __generic half *p) {                                                 \
    return NAME(o, (const __global half *)p);                                                      \
  }
FWD_HLOAD(vload_half, float)
#define FWD_HLOAD_N(N) FWD_HLOAD(vload_half##N, float##N) FWD_HLOAD(vloada_half##N, float##N)
FWD_HLOAD_N(2)
FWD_HLOAD_N(3)
FWD_HLOAD_N(4)
FWD_HLOAD_N(8)
FWD_HLOAD_N(16)
#define FWD_HSTORE(NAME, T)                                                                        \
  OVL void NAME(T, size_t, __global half *);                                                       \
  INL void NAME(T v, size_t o, __generic half *p) {                                                \
    NAME(v, o, (__global half *)p);                                                                \
  }
#define FWD_HSTORE_R(R, T)                                                                         \
  FWD_HSTORE(vstore_half##R, T)                                                                    \
  FWD_HSTORE(vstore_half2##R, T##2)                                                                \
  FWD_HSTORE(vstore_half3##R, T##3)                                                                \
  FWD_HSTORE(vstore_half4##R, T##4)                                                                \
  FWD_HSTORE(vstore_half8##R, T##8)                                                                \
  FWD_HSTORE(vstore_half16##R, T##16)                                                              \
  FWD_HSTORE(vstorea_half2##R, T##2)                                                               \
  FWD_HSTORE(vstorea_half3##R, T##3)                                                               \
  FWD_HSTORE(vstorea_half4##R, T##4)                                                               \
  FWD_HSTORE(vstorea_half8##R, T##8) FWD_HSTORE(vstorea_half16##R, T##16)
#define FWD_HSTORE_ALL(T)                                                                          \
  FWD_HSTORE_R(, T)                                                                                \
  FWD_HSTORE_R(_rte, T) FWD_HSTORE_R(_rtz, T) FWD_HSTORE_R(_rtp, T) FWD_HSTORE_R(_rtn, T)
FWD_HSTORE_ALL(float)
FWD_HSTORE_ALL(double)
