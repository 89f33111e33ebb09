/* native_* and half_* math (OpenCL 1.2 sections 6.12.2, table 6.9): native_
 * accuracy is implementation-defined, half_ allows 8192 ulp (sin, cos, tan
 * for |x| <= 2^16). Each maps to the fastest sequence of fmath.cl that stays
 * within a few ulp where it is meant to be used:
 *   sin, cos, tan   the Cody-Waite reduction only (no Payne-Hanek path): a
 *                   few ulp for |x| up to 2^16, no accuracy beyond
 *   powr            log2 in float instead of double: up to about 100 ulp
 *   divide, recip   the division, correctly rounded and one instruction
 *   the rest        the full-precision function, already branch-free and
 *                   without a cheaper form worth its error
 * Float only, as declared. */
#include "clc.h"
#include "fmath.h"

#define FWD1(N, F, G) CNST float##N F(float##N x) { return G(x); }
#define FWD2(N, F, G) CNST float##N F(float##N x, float##N y) { return G(x, y); }
#define DIV(N, F, X) CNST float##N F(float##N x, float##N y) { return x / y; }
#define RECIP(N, F, X) CNST float##N F(float##N x) { return 1.0f / x; }

#define FAST1(F, G)                                                            \
  CNST float F(float x) { return G(x); }                                      \
  VEC_UNARY(float, F, float)
#define FAST2(F, G)                                                            \
  CNST float F(float x, float y) { return G(x, y); }                          \
  VEC_BINARY(float, F, float, float)

#define PREFIXED(P)                                                            \
  FAST1(P##cos, __aquila_cos_fast)                                            \
  FAST1(P##sin, __aquila_sin_fast)                                            \
  FAST1(P##tan, __aquila_tan_fast)                                            \
  FAST2(P##powr, __aquila_powr_fast)                                          \
  FOR_ALL_WIDTHS(FWD1, P##exp, exp)                                           \
  FOR_ALL_WIDTHS(FWD1, P##exp2, exp2)                                         \
  FOR_ALL_WIDTHS(FWD1, P##exp10, exp10)                                       \
  FOR_ALL_WIDTHS(FWD1, P##log, log)                                           \
  FOR_ALL_WIDTHS(FWD1, P##log2, log2)                                         \
  FOR_ALL_WIDTHS(FWD1, P##log10, log10)                                       \
  FOR_ALL_WIDTHS(FWD1, P##sqrt, sqrt)                                         \
  FOR_ALL_WIDTHS(FWD1, P##rsqrt, rsqrt)                                       \
  FOR_ALL_WIDTHS(DIV, P##divide, 0)                                           \
  FOR_ALL_WIDTHS(RECIP, P##recip, 0)

PREFIXED(native_)
PREFIXED(half_)
