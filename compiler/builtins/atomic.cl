/* OpenCL 1.2 atomic functions (section 6.12.11: atomic_*, 32-bit, global and
 * local, plus atomic_xchg on float) and the extension names atom_* of
 * cl_khr_{global,local}_int32_{base,extended}_atomics and
 * cl_khr_int64_{base,extended}_atomics. OpenCL 1.2 atomics order nothing
 * but themselves, hence relaxed. */
#include "clc.h"

#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#define RLX __ATOMIC_RELAXED
#define ATOMICS(P, T, AS)                                                      \
  INL T P##add(volatile AS T *p, T v) { return __atomic_fetch_add(p, v, RLX); } \
  INL T P##sub(volatile AS T *p, T v) { return __atomic_fetch_sub(p, v, RLX); } \
  INL T P##xchg(volatile AS T *p, T v) { return __atomic_exchange_n(p, v, RLX); } \
  INL T P##inc(volatile AS T *p) { return __atomic_fetch_add(p, (T)1, RLX); } \
  INL T P##dec(volatile AS T *p) { return __atomic_fetch_sub(p, (T)1, RLX); } \
  INL T P##min(volatile AS T *p, T v) { return __atomic_fetch_min(p, v, RLX); } \
  INL T P##max(volatile AS T *p, T v) { return __atomic_fetch_max(p, v, RLX); } \
  INL T P##and(volatile AS T *p, T v) { return __atomic_fetch_and(p, v, RLX); } \
  INL T P##or(volatile AS T *p, T v) { return __atomic_fetch_or(p, v, RLX); }  \
  INL T P##xor(volatile AS T *p, T v) { return __atomic_fetch_xor(p, v, RLX); } \
  INL T P##cmpxchg(volatile AS T *p, T cmp, T v) {                            \
    __atomic_compare_exchange_n(p, &cmp, v, 0, RLX, RLX);                     \
    return cmp;                                                               \
  }

ATOMICS(atomic_, int, __global) ATOMICS(atomic_, uint, __global)
ATOMICS(atomic_, int, __local) ATOMICS(atomic_, uint, __local)
ATOMICS(atom_, int, __global) ATOMICS(atom_, uint, __global)
ATOMICS(atom_, int, __local) ATOMICS(atom_, uint, __local)
ATOMICS(atom_, long, __global) ATOMICS(atom_, ulong, __global)
ATOMICS(atom_, long, __local) ATOMICS(atom_, ulong, __local)

#define XCHG_F(AS)                                                             \
  INL float atomic_xchg(volatile AS float *p, float v) {                      \
    return as_float(__atomic_exchange_n((volatile AS uint *)p, as_uint(v), RLX)); \
  }
XCHG_F(__global) XCHG_F(__local)
