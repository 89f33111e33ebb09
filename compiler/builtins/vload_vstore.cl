/* vloadn / vstoren (OpenCL 1.2 section 6.12.7) for every element type,
 * width and address space. The pointer need only be aligned to the element,
 * so accesses go through a vector type whose alignment is lowered to it. */
#include "clc.h"

/* Moving half values needs no half arithmetic, only the type. */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#define VLS(N, T, AS)                                                          \
  typedef T##N __attribute__((aligned(sizeof(T)))) aq_u_##T##N##_##AS;        \
  INL T##N vload##N(size_t off, const AS T *p) {                              \
    return *(const AS aq_u_##T##N##_##AS *)(p + off * N);                     \
  }
#define VST(N, T, AS)                                                          \
  INL void vstore##N(T##N v, size_t off, AS T *p) { *(AS aq_u_##T##N##_##AS *)(p + off * N) = v; }
/* A 3-vector occupies 4 elements in memory, so n=3 goes element-wise. */
#define VLS3(T, AS)                                                            \
  INL T##3 vload3(size_t off, const AS T *p) {                                \
    const AS T *q = p + off * 3;                                              \
    return (T##3)(q[0], q[1], q[2]);                                          \
  }
#define VST3(T, AS)                                                            \
  INL void vstore3(T##3 v, size_t off, AS T *p) {                             \
    AS T *q = p + off * 3;                                                    \
    q[0] = v.x;                                                               \
    q[1] = v.y;                                                               \
    q[2] = v.z;                                                               \
  }
#define LOAD_ALL(T, AS) VLS(2, T, AS) VLS(4, T, AS) VLS(8, T, AS) VLS(16, T, AS) VLS3(T, AS)
#define STORE_ALL(T, AS) VST(2, T, AS) VST(4, T, AS) VST(8, T, AS) VST(16, T, AS) VST3(T, AS)
#define TYPE_ALL(T)                                                            \
  LOAD_ALL(T, __global) LOAD_ALL(T, __local) LOAD_ALL(T, __constant) LOAD_ALL(T, __private) \
  STORE_ALL(T, __global) STORE_ALL(T, __local) STORE_ALL(T, __private)

TYPE_ALL(char) TYPE_ALL(uchar) TYPE_ALL(short) TYPE_ALL(ushort)
TYPE_ALL(int) TYPE_ALL(uint) TYPE_ALL(long) TYPE_ALL(ulong)
TYPE_ALL(float) TYPE_ALL(double) TYPE_ALL(half)
