/* native_* and half_* math (OpenCL 1.2 sections 6.12.2, table 6.9): both
 * allow implementation-defined or 8192-ulp accuracy; Aquila gives the
 * full-precision result, which satisfies either. Float only, as declared. */
#include "clc.h"

#define FWD1(N, F, G) CNST float##N F(float##N x) { return G(x); }
#define FWD2(N, F, G) CNST float##N F(float##N x, float##N y) { return G(x, y); }
#define DIV(N, F, X) CNST float##N F(float##N x, float##N y) { return x / y; }
#define RECIP(N, F, X) CNST float##N F(float##N x) { return 1.0f / x; }

#define PREFIXED(P)                                                            \
  FOR_ALL_WIDTHS(FWD1, P##cos, cos)                                           \
  FOR_ALL_WIDTHS(FWD1, P##sin, sin)                                           \
  FOR_ALL_WIDTHS(FWD1, P##tan, tan)                                           \
  FOR_ALL_WIDTHS(FWD1, P##exp, exp)                                           \
  FOR_ALL_WIDTHS(FWD1, P##exp2, exp2)                                         \
  FOR_ALL_WIDTHS(FWD1, P##exp10, exp10)                                       \
  FOR_ALL_WIDTHS(FWD1, P##log, log)                                           \
  FOR_ALL_WIDTHS(FWD1, P##log2, log2)                                         \
  FOR_ALL_WIDTHS(FWD1, P##log10, log10)                                       \
  FOR_ALL_WIDTHS(FWD1, P##sqrt, sqrt)                                         \
  FOR_ALL_WIDTHS(FWD1, P##rsqrt, rsqrt)                                       \
  FOR_ALL_WIDTHS(FWD2, P##powr, powr)                                         \
  FOR_ALL_WIDTHS(DIV, P##divide, 0)                                           \
  FOR_ALL_WIDTHS(RECIP, P##recip, 0)

PREFIXED(native_)
PREFIXED(half_)
