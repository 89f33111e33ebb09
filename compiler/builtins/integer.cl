/* Integer functions (OpenCL 1.2 section 6.12.3) for char, uchar, short,
 * ushort, int, uint, long and ulong, scalar and every vector width. Bodies
 * are written once with OpenCL's vector operators, so the same text serves
 * the scalar and the vector overloads. */
#include "clc.h"

/* Instantiate M(N, T, UT, BITS) for every width of every signed type, of
 * every unsigned type, or both. */
#define FOR_SIGNED(M)                                                          \
  FOR_ALL_WIDTHS(M, char, uchar, 8) FOR_ALL_WIDTHS(M, short, ushort, 16)      \
  FOR_ALL_WIDTHS(M, int, uint, 32) FOR_ALL_WIDTHS(M, long, ulong, 64)
#define FOR_UNSIGNED(M)                                                        \
  FOR_ALL_WIDTHS(M, uchar, uchar, 8) FOR_ALL_WIDTHS(M, ushort, ushort, 16)    \
  FOR_ALL_WIDTHS(M, uint, uint, 32) FOR_ALL_WIDTHS(M, ulong, ulong, 64)
#define FOR_INTS(M) FOR_SIGNED(M) FOR_UNSIGNED(M)
#define FOR_INTS_VEC(M)                                                        \
  FOR_VEC_WIDTHS(M, char, uchar, 8) FOR_VEC_WIDTHS(M, short, ushort, 16)      \
  FOR_VEC_WIDTHS(M, int, uint, 32) FOR_VEC_WIDTHS(M, long, ulong, 64)         \
  FOR_VEC_WIDTHS(M, uchar, uchar, 8) FOR_VEC_WIDTHS(M, ushort, ushort, 16)    \
  FOR_VEC_WIDTHS(M, uint, uint, 32) FOR_VEC_WIDTHS(M, ulong, ulong, 64)

/* llvm.abs leaves INT_MIN as is, whose unsigned reading is the answer. */
#define ABS_S(N, T, UT, B) CNST UT##N abs(T##N x) { return AS_TYPE((T##N)__builtin_elementwise_abs(x), UT##N); }
#define ABS_U(N, T, UT, B) CNST UT##N abs(T##N x) { return x; }
FOR_SIGNED(ABS_S) FOR_UNSIGNED(ABS_U)

/* The difference taken modulo 2^BITS is exact once the sign is known. */
#define ABS_DIFF(N, T, UT, B)                                                  \
  CNST UT##N abs_diff(T##N x, T##N y) {                                       \
    UT##N d = AS_TYPE(x, UT##N) - AS_TYPE(y, UT##N);                          \
    UT##N e = AS_TYPE(y, UT##N) - AS_TYPE(x, UT##N);                          \
    return x > y ? d : e;                                                     \
  }
FOR_INTS(ABS_DIFF)

#define SAT(N, T, UT, B)                                                       \
  CNST T##N add_sat(T##N x, T##N y) { return __builtin_elementwise_add_sat(x, y); } \
  CNST T##N sub_sat(T##N x, T##N y) { return __builtin_elementwise_sub_sat(x, y); }
FOR_INTS_VEC(SAT)
SAT(, int, uint, 32) SAT(, uint, uint, 32) SAT(, long, ulong, 64) SAT(, ulong, ulong, 64)
/* Scalar char and short are promoted to int by the elementwise builtins,
 * which would then never saturate; int holds the exact sum instead. */
#define SAT_NARROW(T, LO, HI)                                                  \
  CNST T add_sat(T x, T y) { return (T)__builtin_elementwise_min(__builtin_elementwise_max((int)x + y, LO), HI); } \
  CNST T sub_sat(T x, T y) { return (T)__builtin_elementwise_min(__builtin_elementwise_max((int)x - y, LO), HI); }
SAT_NARROW(char, CHAR_MIN, CHAR_MAX) SAT_NARROW(uchar, 0, UCHAR_MAX)
SAT_NARROW(short, SHRT_MIN, SHRT_MAX) SAT_NARROW(ushort, 0, USHRT_MAX)

/* Halving adds without the overflow of (x + y) >> 1. */
#define HADD(N, T, UT, B)                                                      \
  CNST T##N hadd(T##N x, T##N y) { return (T##N)((x >> (T)1) + (y >> (T)1) + (x & y & (T)1)); } \
  CNST T##N rhadd(T##N x, T##N y) { return (T##N)((x >> (T)1) + (y >> (T)1) + ((x | y) & (T)1)); }
FOR_INTS(HADD)

#define MINMAX(N, T, UT, B)                                                    \
  CNST T##N max(T##N x, T##N y) { return __builtin_elementwise_max(x, y); }   \
  CNST T##N min(T##N x, T##N y) { return __builtin_elementwise_min(x, y); }   \
  CNST T##N clamp(T##N x, T##N lo, T##N hi) {                                 \
    return __builtin_elementwise_min(__builtin_elementwise_max(x, lo), hi);   \
  }
#define MINMAX_S(N, T, UT, B)                                                  \
  CNST T##N max(T##N x, T y) { return __builtin_elementwise_max(x, (T##N)(y)); } \
  CNST T##N min(T##N x, T y) { return __builtin_elementwise_min(x, (T##N)(y)); } \
  CNST T##N clamp(T##N x, T lo, T hi) {                                       \
    return __builtin_elementwise_min(__builtin_elementwise_max(x, (T##N)(lo)), (T##N)(hi)); \
  }
FOR_INTS(MINMAX)
FOR_INTS_VEC(MINMAX_S)

/* Shift counts are masked here because a scalar char is promoted to int
 * before shifting, which would otherwise mask with 31, not 7. */
#define ROTATE(N, T, UT, B)                                                    \
  CNST T##N rotate(T##N v, T##N i) {                                          \
    UT##N u = AS_TYPE(v, UT##N);                                              \
    UT##N s = AS_TYPE(i, UT##N) & (UT)(B - 1);                                \
    UT##N r = (UT##N)((u << s) | (u >> ((UT)(B) - s & (UT)(B - 1))));         \
    return AS_TYPE(r, T##N);                                                  \
  }
FOR_INTS(ROTATE)

#define MAD24(N, T, UT, B)                                                     \
  CNST T##N mul24(T##N x, T##N y) { return x * y; }                           \
  CNST T##N mad24(T##N x, T##N y, T##N z) { return x * y + z; }
FOR_ALL_WIDTHS(MAD24, int, uint, 32) FOR_ALL_WIDTHS(MAD24, uint, uint, 32)

/* ---- scalar definitions split into vectors ---- */
#define SCALAR_FAMILY(T, UT, B, WT)                                            \
  CNST T clz(T x) { return (T)__builtin_clzg((UT)x, B); }                     \
  CNST T popcount(T x) { return (T)__builtin_popcountg((UT)x); }              \
  /* OpenCL C 2.0's (the library is 1.2: clang declares it for 3.0 only). */  \
  CNST T ctz(T x) { return (T)__builtin_ctzg((UT)x, B); }                     \
  CNST T mul_hi(T x, T y) { return (T)(((WT)x * (WT)y) >> B); }               \
  CNST T mad_hi(T x, T y, T z) { return mul_hi(x, y) + z; }                   \
  VEC_UNARY(T, clz, T) VEC_UNARY(T, popcount, T) VEC_UNARY(T, ctz, T)         \
  VEC_BINARY(T, mul_hi, T, T) VEC_TERNARY(T, mad_hi, T, T, T)
SCALAR_FAMILY(char, uchar, 8, short)
SCALAR_FAMILY(uchar, uchar, 8, ushort)
SCALAR_FAMILY(short, ushort, 16, int)
SCALAR_FAMILY(ushort, ushort, 16, uint)
SCALAR_FAMILY(int, uint, 32, long)
SCALAR_FAMILY(uint, uint, 32, ulong)
SCALAR_FAMILY(long, ulong, 64, __int128)
SCALAR_FAMILY(ulong, ulong, 64, unsigned __int128)

/* a*b + c is exact in the wider type; saturate once at the end. */
#define MAD_SAT(T, WT, LO, HI)                                                 \
  CNST T mad_sat(T a, T b, T c) {                                             \
    WT r = (WT)a * (WT)b + (WT)c;                                             \
    return (T)(r < (WT)(LO) ? (WT)(LO) : r > (WT)(HI) ? (WT)(HI) : r);        \
  }                                                                           \
  VEC_TERNARY(T, mad_sat, T, T, T)
MAD_SAT(char, int, CHAR_MIN, CHAR_MAX)
MAD_SAT(uchar, uint, 0, UCHAR_MAX)
MAD_SAT(short, int, SHRT_MIN, SHRT_MAX)
MAD_SAT(ushort, uint, 0, USHRT_MAX)
MAD_SAT(int, long, INT_MIN, INT_MAX)
MAD_SAT(uint, ulong, 0, UINT_MAX)
MAD_SAT(long, __int128, LONG_MIN, LONG_MAX)
MAD_SAT(ulong, unsigned __int128, 0, ULONG_MAX)

#define UPSAMPLE(T, UT, WT, B)                                                 \
  CNST WT upsample(T hi, UT lo) { return (WT)((WT)hi << B) | (WT)lo; }        \
  VEC_BINARY(WT, upsample, T, UT)
UPSAMPLE(char, uchar, short, 8)
UPSAMPLE(uchar, uchar, ushort, 8)
UPSAMPLE(short, ushort, int, 16)
UPSAMPLE(ushort, ushort, uint, 16)
UPSAMPLE(int, uint, long, 32)
UPSAMPLE(uint, uint, ulong, 32)
