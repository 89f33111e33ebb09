/* Relational functions (OpenCL 1.2 section 6.12.6). A scalar comparison in
 * OpenCL C yields 1/0 and a vector one -1/0 of the same-sized integer type,
 * exactly the results these functions must return, so one body serves every
 * width. */
#include "clc.h"

#define REL(N, T, RT)                                                          \
  CNST RT isequal(T x, T y) { return x == y; }                                \
  CNST RT isnotequal(T x, T y) { return x != y; }                             \
  CNST RT isgreater(T x, T y) { return x > y; }                               \
  CNST RT isgreaterequal(T x, T y) { return x >= y; }                         \
  CNST RT isless(T x, T y) { return x < y; }                                  \
  CNST RT islessequal(T x, T y) { return x <= y; }                            \
  CNST RT islessgreater(T x, T y) { return (x < y) | (x > y); }               \
  CNST RT isordered(T x, T y) { return (x == x) & (y == y); }                 \
  CNST RT isunordered(T x, T y) { return (x != x) | (y != y); }               \
  CNST RT isfinite(T x) { return __builtin_elementwise_abs(x) < INFINITY; }   \
  CNST RT isinf(T x) { return __builtin_elementwise_abs(x) == INFINITY; }     \
  CNST RT isnan(T x) { return x != x; }
#define REL_F(N, X) REL(N, float##N, int##N)                                  \
  CNST int##N isnormal(float##N x) {                                          \
    float##N a = __builtin_elementwise_abs(x);                                \
    return (a >= FLT_MIN) & (a < INFINITY);                                   \
  }                                                                           \
  CNST int##N signbit(float##N x) { return AS_TYPE(x, int##N) < 0; }
#define REL_D(N, RT)                                                           \
  REL(N, double##N, RT)                                                       \
  CNST RT isnormal(double##N x) {                                             \
    double##N a = __builtin_elementwise_abs(x);                               \
    return (a >= DBL_MIN) & (a < INFINITY);                                   \
  }                                                                           \
  CNST RT signbit(double##N x) { return AS_TYPE(x, long##N) < 0; }
FOR_ALL_WIDTHS(REL_F, 0)
REL_D(, int) REL_D(2, long2) REL_D(3, long3) REL_D(4, long4) REL_D(8, long8) REL_D(16, long16)

/* any/all look at the most significant bit of each component. */
#define ANYALL(T)                                                              \
  CNST int any(T x) { return x < 0; }                                         \
  CNST int all(T x) { return x < 0; }                                         \
  ANYALL_V(T, 2) ANYALL_V(T, 3) ANYALL_V(T, 4) ANYALL_V(T, 8) ANYALL_V(T, 16)
#define ANYALL_V(T, N)                                                         \
  CNST int any(T##N x) { return __builtin_reduce_or(x < (T)0) != 0; }         \
  CNST int all(T##N x) { return __builtin_reduce_and(x < (T)0) != 0; }
ANYALL(char) ANYALL(short) ANYALL(int) ANYALL(long)

#define BITSEL_I(N, T, UT)                                                     \
  CNST T##N bitselect(T##N a, T##N b, T##N c) { return (a & ~c) | (b & c); }
#define BITSEL_F(N, T, UT)                                                     \
  CNST T##N bitselect(T##N a, T##N b, T##N c) {                               \
    UT##N ua = AS_TYPE(a, UT##N), ub = AS_TYPE(b, UT##N), uc = AS_TYPE(c, UT##N); \
    return AS_TYPE((ua & ~uc) | (ub & uc), T##N);                             \
  }
#define FOR_GEN(M)                                                             \
  FOR_ALL_WIDTHS(M, char, char) FOR_ALL_WIDTHS(M, uchar, char)                \
  FOR_ALL_WIDTHS(M, short, short) FOR_ALL_WIDTHS(M, ushort, short)            \
  FOR_ALL_WIDTHS(M, int, int) FOR_ALL_WIDTHS(M, uint, int)                    \
  FOR_ALL_WIDTHS(M, long, long) FOR_ALL_WIDTHS(M, ulong, long)
FOR_GEN(BITSEL_I)
FOR_ALL_WIDTHS(BITSEL_F, float, uint) FOR_ALL_WIDTHS(BITSEL_F, double, ulong)

/* select: a scalar c tests non-zero, a vector c tests each component's
 * most significant bit. ST is the signed integer of T's size. */
#define SELECT_S(T, ST)                                                        \
  CNST T select(T a, T b, ST c) { return c ? b : a; }                         \
  CNST T select(T a, T b, u##ST c) { return c ? b : a; }
#define SELECT_V(N, T, ST)                                                     \
  CNST T##N select(T##N a, T##N b, ST##N c) { return c < (ST)0 ? b : a; }     \
  CNST T##N select(T##N a, T##N b, u##ST##N c) {                              \
    return AS_TYPE(c, ST##N) < (ST)0 ? b : a;                                 \
  }
#define SELECT(T, ST) SELECT_S(T, ST) FOR_VEC_WIDTHS(SELECT_V, T, ST)
SELECT(char, char) SELECT(uchar, char) SELECT(short, short) SELECT(ushort, short)
SELECT(int, int) SELECT(uint, int) SELECT(long, long) SELECT(ulong, long)
SELECT(float, int) SELECT(double, long)
