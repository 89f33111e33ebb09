/* shuffle and shuffle2 (OpenCL 1.2 section 6.12.12) for every element type
 * and every pair of widths 2, 4, 8, 16. Only the low bits of each mask
 * component that can index the input(s) are used, as the spec requires. */
#include "clc.h"

/* Moving half values needs no half arithmetic, only the type. */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#define SHUF(T, UT, N, M)                                                      \
  CNST T##M shuffle(T##N x, UT##M mask) {                                     \
    T##M r;                                                                   \
    for (int i = 0; i < M; i++)                                               \
      r[i] = x[mask[i] & (N - 1)];                                            \
    return r;                                                                 \
  }                                                                           \
  CNST T##M shuffle2(T##N x, T##N y, UT##M mask) {                            \
    T##M r;                                                                   \
    for (int i = 0; i < M; i++) {                                             \
      uint k = (uint)(mask[i] & (2 * N - 1));                                 \
      r[i] = k < N ? x[k] : y[k - N];                                         \
    }                                                                         \
    return r;                                                                 \
  }
#define SHUF_M(T, UT, N) SHUF(T, UT, N, 2) SHUF(T, UT, N, 4) SHUF(T, UT, N, 8) SHUF(T, UT, N, 16)
#define SHUF_T(T, UT) SHUF_M(T, UT, 2) SHUF_M(T, UT, 4) SHUF_M(T, UT, 8) SHUF_M(T, UT, 16)
SHUF_T(char, uchar) SHUF_T(uchar, uchar) SHUF_T(short, ushort) SHUF_T(ushort, ushort)
SHUF_T(int, uint) SHUF_T(uint, uint) SHUF_T(long, ulong) SHUF_T(ulong, ulong)
SHUF_T(float, uint) SHUF_T(double, ulong) SHUF_T(half, ushort)
