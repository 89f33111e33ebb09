/* vload_half / vloada_half / vstore_half / vstorea_half (OpenCL 1.2
 * sections 6.12.7) in every width, address space and rounding mode. The
 * half <-> float conversions are done on the bits here, so no half
 * arithmetic, F16C instruction or compiler-rt helper is required. */
#include "clc.h"

/* Exact: normal halves rebias the exponent, subnormals scale by 2^-24. */
static INL float aq_half_to_float(ushort h) {
  uint s = (uint)(h & 0x8000) << 16;
  uint em = h & 0x7fff;
  uint bits;
  if (em >= 0x7c00)
    bits = (em << 13) | 0x7f800000u;
  else if (em >= 0x0400)
    bits = (em << 13) + ((127 - 15) << 23);
  else
    bits = as_uint((float)em * 0x1p-24f);
  return as_float(bits | s);
}

/* Modes: 0 nearest-even, 1 toward zero, 2 toward +inf, 3 toward -inf.
 * Works from double so one routine serves float (converted exactly) and
 * double sources. q is the truncated magnitude in half units and the
 * remainder is compared with half a unit to decide the increment, which
 * carries naturally into the exponent and up to infinity. */
static INL ushort aq_double_to_half(double x, int mode) {
  ulong b = as_ulong(x);
  ushort sign = (ushort)((b >> 48) & 0x8000);
  int neg = sign != 0;
  double a = __builtin_fabs(x);
  if (a != a)
    return sign | 0x7e00 | (ushort)((b >> 42) & 0x1ff);
  if (a == INFINITY)
    return sign | 0x7c00;
  int e = (int)((b >> 52) & 0x7ff) - 1023;
  uint q;
  int cmp;    /* remainder versus half a unit: -1, 0, 1 */
  int inexact;
  if (e > 15) {
    int to_inf = mode == 0 || (mode == 2 && !neg) || (mode == 3 && neg);
    return sign | (to_inf ? 0x7c00 : 0x7bff);
  }
  if (e >= -14) {
    ulong m = (b & 0xfffffffffffffUL) | 0x10000000000000UL;
    ulong rem = m & 0x3ffffffffffUL;
    q = (uint)(((ulong)(e + 15) << 10) + ((m >> 42) - 1024));
    inexact = rem != 0;
    cmp = rem > 0x20000000000UL ? 1 : rem == 0x20000000000UL ? 0 : -1;
  } else {
    double u = a * 0x1p24; /* exact: scaling by a power of two */
    double fl = __builtin_floor(u);
    double rem = u - fl;
    q = (uint)fl;
    inexact = rem != 0;
    cmp = rem > 0.5 ? 1 : rem == 0.5 ? 0 : -1;
  }
  int inc;
  switch (mode) {
  case 0: inc = cmp > 0 || (cmp == 0 && (q & 1)); break;
  case 1: inc = 0; break;
  case 2: inc = inexact && !neg; break;
  default: inc = inexact && neg; break;
  }
  return sign | (ushort)(q + inc);
}

/* ---- loads ---- */
#define HLOAD(AS)                                                              \
  INL float vload_half(size_t off, const AS half *p) {                        \
    return aq_half_to_float(((const AS ushort *)p)[off]);                     \
  }                                                                           \
  HLOAD_N(AS, 2, 2) HLOAD_N(AS, 4, 4) HLOAD_N(AS, 8, 8) HLOAD_N(AS, 16, 16)   \
  HLOAD_N(AS, 3, 3) HLOAD_A(AS, 2, 2) HLOAD_A(AS, 4, 4) HLOAD_A(AS, 8, 8)     \
  HLOAD_A(AS, 16, 16) HLOAD_A(AS, 3, 4)
/* vloada_half3 steps by 4 halves per offset (the aligned layout of half3). */
#define HLOAD_BODY(N, STRIDE, AS)                                              \
  const AS ushort *q = (const AS ushort *)p + off * STRIDE;                   \
  float##N r;                                                                 \
  for (int i = 0; i < N; i++)                                                 \
    r[i] = aq_half_to_float(q[i]);                                            \
  return r;
#define HLOAD_N(AS, N, STRIDE)                                                 \
  INL float##N vload_half##N(size_t off, const AS half *p) { HLOAD_BODY(N, STRIDE, AS) }
#define HLOAD_A(AS, N, STRIDE)                                                 \
  INL float##N vloada_half##N(size_t off, const AS half *p) { HLOAD_BODY(N, STRIDE, AS) }
HLOAD(__global) HLOAD(__local) HLOAD(__constant) HLOAD(__private)

/* ---- stores ---- */
#define HSTORE_ONE(T, AS, R, MODE)                                             \
  INL void vstore_half##R(T v, size_t off, AS half *p) {                      \
    ((AS ushort *)p)[off] = aq_double_to_half(v, MODE);                       \
  }
#define HSTORE_BODY(N, STRIDE, AS, MODE)                                       \
  AS ushort *q = (AS ushort *)p + off * STRIDE;                               \
  for (int i = 0; i < N; i++)                                                 \
    q[i] = aq_double_to_half(v[i], MODE);
#define HSTORE_VEC(T, AS, R, MODE, N, STRIDE)                                  \
  INL void vstore_half##N##R(T##N v, size_t off, AS half *p) { HSTORE_BODY(N, N, AS, MODE) } \
  INL void vstorea_half##N##R(T##N v, size_t off, AS half *p) { HSTORE_BODY(N, STRIDE, AS, MODE) }
#define HSTORE_MODE(T, AS, R, MODE)                                            \
  HSTORE_ONE(T, AS, R, MODE)                                                  \
  HSTORE_VEC(T, AS, R, MODE, 2, 2) HSTORE_VEC(T, AS, R, MODE, 3, 4)           \
  HSTORE_VEC(T, AS, R, MODE, 4, 4) HSTORE_VEC(T, AS, R, MODE, 8, 8)           \
  HSTORE_VEC(T, AS, R, MODE, 16, 16)
#define HSTORE_AS(T, AS)                                                       \
  HSTORE_MODE(T, AS, , 0) HSTORE_MODE(T, AS, _rte, 0) HSTORE_MODE(T, AS, _rtz, 1) \
  HSTORE_MODE(T, AS, _rtp, 2) HSTORE_MODE(T, AS, _rtn, 3)
HSTORE_AS(float, __global) HSTORE_AS(float, __local) HSTORE_AS(float, __private)
HSTORE_AS(double, __global) HSTORE_AS(double, __local) HSTORE_AS(double, __private)
