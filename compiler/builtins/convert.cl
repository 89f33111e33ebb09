/* Explicit conversions convert_<type><n>[_sat][_rte|_rtz|_rtp|_rtn]
 * (OpenCL 1.2 section 6.2.3) between every pair of integer and floating
 * types (half excepted), scalar and every vector width. Where the default
 * conversion already rounds as asked it is one __builtin_convertvector; the
 * directed roundings to float/double correct the nearest result by one ulp
 * after an exact comparison with the source. */
#include "clc.h"

#define MIN_char CHAR_MIN
#define MAX_char CHAR_MAX
#define MIN_uchar 0
#define MAX_uchar UCHAR_MAX
#define MIN_short SHRT_MIN
#define MAX_short SHRT_MAX
#define MIN_ushort 0
#define MAX_ushort USHRT_MAX
#define MIN_int INT_MIN
#define MAX_int INT_MAX
#define MIN_uint 0
#define MAX_uint UINT_MAX
#define MIN_long LONG_MIN
#define MAX_long LONG_MAX
#define MIN_ulong 0
#define MAX_ulong ULONG_MAX
/* MAX + 1, a power of two that float and double hold exactly. */
#define POW2_char 0x1p7
#define POW2_uchar 0x1p8
#define POW2_short 0x1p15
#define POW2_ushort 0x1p16
#define POW2_int 0x1p31
#define POW2_uint 0x1p32
#define POW2_long 0x1p63
#define POW2_ulong 0x1p64
/* 1 - PRED_x is the float type's largest number below 1. */
#define PRED_float 0x1p-24
#define PRED_double 0x1p-53

/* Value conversion of a scalar or a vector; MASK turns a comparison result
 * (1/0 scalar, -1/0 vector) into an all-ones/zero mask of type T. */
#define CV(x, T, N) CV_##N(x, T##N)
#define CV_(x, T) ((T)(x))
#define CV_2(x, T) __builtin_convertvector(x, T)
#define CV_3(x, T) __builtin_convertvector(x, T)
#define CV_4(x, T) __builtin_convertvector(x, T)
#define CV_8(x, T) __builtin_convertvector(x, T)
#define CV_16(x, T) __builtin_convertvector(x, T)
#define MASK(c, T, N) MASK_##N(c, T##N)
#define MASK_(c, T) ((T) - (c))
#define MASK_2(c, T) __builtin_convertvector(c, T)
#define MASK_3(c, T) __builtin_convertvector(c, T)
#define MASK_4(c, T) __builtin_convertvector(c, T)
#define MASK_8(c, T) __builtin_convertvector(c, T)
#define MASK_16(c, T) __builtin_convertvector(c, T)

#define ROUND_(x) __builtin_elementwise_trunc(x)
#define ROUND_rtz(x) __builtin_elementwise_trunc(x)
#define ROUND_rte(x) __builtin_elementwise_rint(x)
#define ROUND_rtp(x) __builtin_elementwise_ceil(x)
#define ROUND_rtn(x) __builtin_elementwise_floor(x)

/* ---- integer to integer: the rounding suffix changes nothing ---- */
#define I2I_SAT(N, D, S, x)                                                    \
  S##N y = x;                                                                 \
  if ((__int128)(MIN_##S) < (__int128)(MIN_##D))                              \
    y = __builtin_elementwise_max(y, (S##N)((S)(MIN_##D)));                   \
  if ((__int128)(MAX_##S) > (__int128)(MAX_##D))                              \
    y = __builtin_elementwise_min(y, (S##N)((S)(MAX_##D)));                   \
  return CV(y, D, N);
#define I2I_R(N, D, S, R)                                                      \
  CNST D##N convert_##D##N##R(S##N x) { return CV(x, D, N); }                 \
  CNST D##N convert_##D##N##_sat##R(S##N x) { I2I_SAT(N, D, S, x) }
#define I2I(N, D, S)                                                           \
  I2I_R(N, D, S, ) I2I_R(N, D, S, _rte) I2I_R(N, D, S, _rtz)                  \
  I2I_R(N, D, S, _rtp) I2I_R(N, D, S, _rtn)

/* ---- float/double to integer ---- */
/* Saturating: clamp into [MIN, the float just below 2^k] so the conversion
 * is defined, then patch the too-large and NaN lanes through masks. A type
 * of 16 bits or less has its MIN and MAX exact in float: clamping into
 * [MIN, MAX] is all (maxnum takes a NaN to MIN, patched to 0 where MIN is
 * not 0), and the conversion itself truncates, so rounding towards zero
 * needs no rounding step (image kernels' convert_uchar4_sat: a max, a min,
 * a conversion and a pack). */
#define NARROW_ROUND_(x) (x)
#define NARROW_ROUND__rtz(x) (x)
#define NARROW_ROUND__rte(x) ROUND_rte(x)
#define NARROW_ROUND__rtp(x) ROUND_rtp(x)
#define NARROW_ROUND__rtn(x) ROUND_rtn(x)
#define F2I_R(N, D, S, R)                                                      \
  CNST D##N convert_##D##N##R(S##N x) { return CV(ROUND_##R(x), D, N); }       \
  CNST D##N convert_##D##N##_sat##R(S##N x) {                                 \
    if (POW2_##D <= 0x1p16) {                                                 \
      S##N n = __builtin_elementwise_max(NARROW_ROUND_##R(x), (S##N)((S)(MIN_##D))); \
      n = __builtin_elementwise_min(n, (S##N)((S)(MAX_##D)));                 \
      D##N w = CV(n, D, N);                                                   \
      if (MIN_##D != 0) w &= ~MASK(x != x, D, N);                             \
      return w;                                                               \
    }                                                                         \
    S##N r = ROUND_##R(x);                                                    \
    S##N c = __builtin_elementwise_max(r, (S##N)((S)(MIN_##D)));              \
    c = __builtin_elementwise_min(c, (S##N)((S)(POW2_##D) * ((S)1 - (S)PRED_##S))); \
    D##N v = CV(c, D, N);                                                     \
    D##N hi = MASK(r >= (S)(POW2_##D), D, N);                                 \
    D##N nan = MASK(r != r, D, N);                                            \
    return ((v & ~hi) | ((D##N)(MAX_##D) & hi)) & ~nan;                       \
  }
#define F2I(N, D, S)                                                           \
  F2I_R(N, D, S, ) F2I_R(N, D, S, _rte) F2I_R(N, D, S, _rtz)                  \
  F2I_R(N, D, S, _rtp) F2I_R(N, D, S, _rtn)
#define ROUND__rte ROUND_rte
#define ROUND__rtz ROUND_rtz
#define ROUND__rtp ROUND_rtp
#define ROUND__rtn ROUND_rtn

/* ---- to float/double ---- */
/* aq_cmp(f, x): the sign of f - x, computed exactly. Below 64 bits the
 * source converts to double exactly; for (u)long a result of 2^63 (2^64)
 * is above every source value, and every smaller one converts back exactly. */
#define CMP_SMALL(FT, S)                                                       \
  static INL int aq_cmp(FT f, S x) {                                          \
    double a = f, b = x;                                                      \
    return (a > b) - (a < b);                                                 \
  }
#define CMP_WIDE(FT, S, LIM)                                                   \
  static INL int aq_cmp(FT f, S x) {                                          \
    if (f >= LIM)                                                             \
      return 1;                                                               \
    S t = (S)f;                                                               \
    return (t > x) - (t < x);                                                 \
  }
#define CMPS(FT)                                                               \
  CMP_SMALL(FT, char) CMP_SMALL(FT, uchar) CMP_SMALL(FT, short)               \
  CMP_SMALL(FT, ushort) CMP_SMALL(FT, int) CMP_SMALL(FT, uint)                \
  CMP_WIDE(FT, long, 0x1p63) CMP_WIDE(FT, ulong, 0x1p64)
CMPS(float) CMPS(double) CMP_SMALL(float, double)

/* One ulp towards +inf (up) or -inf; zero steps to the smallest subnormal. */
static INL float aq_step(float f, int up) {
  if (f == 0)
    return up ? 0x1p-149f : -0x1p-149f;
  return as_float(as_uint(f) + ((f > 0) == (up != 0) ? 1 : -1));
}
static INL double aq_step(double f, int up) {
  if (f == 0)
    return up ? 0x1p-1074 : -0x1p-1074;
  return as_double(as_ulong(f) + ((f > 0) == (up != 0) ? 1 : -1));
}
#define FIX_rtz(f, c) (c > 0 && f > 0 ? aq_step(f, 0) : c < 0 && f < 0 ? aq_step(f, 1) : f)
#define FIX_rtp(f, c) (c < 0 ? aq_step(f, 1) : f)
#define FIX_rtn(f, c) (c > 0 ? aq_step(f, 0) : f)

/* Directed rounding: scalar, with the vectors split in halves. */
#define TOF_DIR(D, S, R)                                                       \
  CNST D convert_##D##_##R(S x) {                                             \
    D f = (D)x;                                                               \
    int c = aq_cmp(f, x);                                                     \
    return FIX_##R(f, c);                                                     \
  }                                                                           \
  CNST D##2 convert_##D##2_##R(S##2 x) {                                      \
    return (D##2)(convert_##D##_##R(x.lo), convert_##D##_##R(x.hi));          \
  }                                                                           \
  CNST D##3 convert_##D##3_##R(S##3 x) {                                      \
    return (D##3)(convert_##D##_##R(x.s0), convert_##D##_##R(x.s1), convert_##D##_##R(x.s2)); \
  }                                                                           \
  CNST D##4 convert_##D##4_##R(S##4 x) {                                      \
    return (D##4)(convert_##D##2_##R(x.lo), convert_##D##2_##R(x.hi));        \
  }                                                                           \
  CNST D##8 convert_##D##8_##R(S##8 x) {                                      \
    return (D##8)(convert_##D##4_##R(x.lo), convert_##D##4_##R(x.hi));        \
  }                                                                           \
  CNST D##16 convert_##D##16_##R(S##16 x) {                                   \
    return (D##16)(convert_##D##8_##R(x.lo), convert_##D##8_##R(x.hi));       \
  }
#define TOF_NEAREST(N, D, S)                                                   \
  CNST D##N convert_##D##N(S##N x) { return CV(x, D, N); }                    \
  CNST D##N convert_##D##N##_rte(S##N x) { return CV(x, D, N); }
#define TOF_EXACT(N, D, S)                                                     \
  TOF_NEAREST(N, D, S)                                                        \
  CNST D##N convert_##D##N##_rtz(S##N x) { return CV(x, D, N); }              \
  CNST D##N convert_##D##N##_rtp(S##N x) { return CV(x, D, N); }              \
  CNST D##N convert_##D##N##_rtn(S##N x) { return CV(x, D, N); }
#define TOF_ROUNDED(D, S)                                                      \
  FOR_ALL_WIDTHS(TOF_NEAREST, D, S)                                           \
  TOF_DIR(D, S, rtz) TOF_DIR(D, S, rtp) TOF_DIR(D, S, rtn)

/* ---- instantiation ---- */
#define INTS_FROM(M, N, S)                                                     \
  M(N, char, S) M(N, uchar, S) M(N, short, S) M(N, ushort, S)                 \
  M(N, int, S) M(N, uint, S) M(N, long, S) M(N, ulong, S)
#define I2I_ALL(N, S) INTS_FROM(I2I, N, S)
#define F2I_ALL(N, S) INTS_FROM(F2I, N, S)
#define FOR_INT_TYPES(M, ...)                                                  \
  M(char, __VA_ARGS__) M(uchar, __VA_ARGS__) M(short, __VA_ARGS__)            \
  M(ushort, __VA_ARGS__) M(int, __VA_ARGS__) M(uint, __VA_ARGS__)             \
  M(long, __VA_ARGS__) M(ulong, __VA_ARGS__)

#define I2I_SRC(S, X) FOR_ALL_WIDTHS(I2I_ALL, S)
FOR_INT_TYPES(I2I_SRC, 0)
FOR_ALL_WIDTHS(F2I_ALL, float)
FOR_ALL_WIDTHS(F2I_ALL, double)

/* Integers of 16 bits or less fit float exactly, 32 bits or less double. */
#define TOF_FLOAT_EXACT(S, X) FOR_ALL_WIDTHS(TOF_EXACT, float, S)
#define TOF_DOUBLE_EXACT(S, X) FOR_ALL_WIDTHS(TOF_EXACT, double, S)
TOF_FLOAT_EXACT(char, 0) TOF_FLOAT_EXACT(uchar, 0)
TOF_FLOAT_EXACT(short, 0) TOF_FLOAT_EXACT(ushort, 0)
TOF_ROUNDED(float, int) TOF_ROUNDED(float, uint)
TOF_ROUNDED(float, long) TOF_ROUNDED(float, ulong)
TOF_ROUNDED(float, double)
TOF_DOUBLE_EXACT(char, 0) TOF_DOUBLE_EXACT(uchar, 0) TOF_DOUBLE_EXACT(short, 0)
TOF_DOUBLE_EXACT(ushort, 0) TOF_DOUBLE_EXACT(int, 0) TOF_DOUBLE_EXACT(uint, 0)
TOF_ROUNDED(double, long) TOF_ROUNDED(double, ulong)
TOF_DOUBLE_EXACT(float, 0) TOF_DOUBLE_EXACT(double, 0)
TOF_FLOAT_EXACT(float, 0)
