/* Math functions (OpenCL 1.2 section 6.12.2) for float and double, scalar
 * and every vector width: LLVM intrinsics where LLVM has one, glibc's libm
 * (within the spec's ULP limits) for the double transcendental functions and
 * the float ones fmath.cl does not compute itself, and the double *pi
 * variants and edge cases done here. The float exponentials, logarithms,
 * powers, trigonometric, hyperbolic and *pi functions are in fmath.cl; the
 * native_* and half_* forms in native.cl. */
#include "clc.h"

/* libm, reached through the IR wrappers of libm.ll (which see): the
 * OpenCL overloads own the plain C names (sin, pow, ...) in this language,
 * and a call emitted from OpenCL C would be marked convergent.
 * const: OpenCL ignores errno, and a pure call can be vectorized. */
#define LIBM1(n)                                                               \
  __attribute__((const)) float __libm_##n##f(float) __asm__("__aquila_libm_" #n "f"); \
  __attribute__((const)) double __libm_##n(double) __asm__("__aquila_libm_" #n);
#define LIBM2(n)                                                               \
  __attribute__((const)) float __libm_##n##f(float, float) __asm__("__aquila_libm_" #n "f"); \
  __attribute__((const)) double __libm_##n(double, double) __asm__("__aquila_libm_" #n);

LIBM1(acos) LIBM1(acosh) LIBM1(asin) LIBM1(asinh) LIBM1(atan) LIBM1(atanh)
LIBM1(cbrt) LIBM1(cos) LIBM1(cosh) LIBM1(erf) LIBM1(erfc) LIBM1(exp)
LIBM1(exp2) LIBM1(exp10) LIBM1(expm1) LIBM1(log) LIBM1(log2) LIBM1(log10)
LIBM1(log1p) LIBM1(logb) LIBM1(sin) LIBM1(sinh) LIBM1(tan) LIBM1(tanh)
LIBM1(tgamma)
LIBM2(atan2) LIBM2(pow) LIBM2(hypot) LIBM2(fdim) LIBM2(nextafter) LIBM2(remainder)

__attribute__((const)) int __libm_ilogbf(float) __asm__("__aquila_libm_ilogbf");
__attribute__((const)) int __libm_ilogb(double) __asm__("__aquila_libm_ilogb");
float __libm_lgammaf_r(float, __private int *) __asm__("lgammaf_r");
double __libm_lgamma_r(double, __private int *) __asm__("lgamma_r");

/* ---- straight libm wrappers ---- */
#define WRAP1(F)                                                               \
  CNST float F(float x) { return __libm_##F##f(x); }                          \
  CNST double F(double x) { return __libm_##F(x); }                           \
  VEC_UNARY(float, F, float) VEC_UNARY(double, F, double)
#define WRAP2(F)                                                               \
  CNST float F(float x, float y) { return __libm_##F##f(x, y); }              \
  CNST double F(double x, double y) { return __libm_##F(x, y); }              \
  VEC_BINARY(float, F, float, float) VEC_BINARY(double, F, double, double)

/* Double only: fmath.cl has the float forms. */
#define WRAP1D(F)                                                              \
  CNST double F(double x) { return __libm_##F(x); }                           \
  VEC_UNARY(double, F, double)
#define WRAP2D(F)                                                              \
  CNST double F(double x, double y) { return __libm_##F(x, y); }              \
  VEC_BINARY(double, F, double, double)

WRAP1(erf) WRAP1(erfc) WRAP1(logb) WRAP1(tgamma)
WRAP2(fdim) WRAP2(nextafter) WRAP2(remainder)
WRAP1D(acosh) WRAP1D(asinh) WRAP1D(atanh)
WRAP1D(acos) WRAP1D(asin) WRAP1D(atan) WRAP1D(cos) WRAP1D(cosh) WRAP1D(exp) WRAP1D(exp2)
WRAP1D(exp10) WRAP1D(expm1) WRAP1D(log) WRAP1D(log2) WRAP1D(log10) WRAP1D(log1p)
WRAP1D(sin) WRAP1D(sinh) WRAP1D(tan) WRAP1D(tanh)
WRAP2D(atan2) WRAP2D(pow) WRAP2D(hypot)

/* glibc's double cbrt is off by up to 4 ulp, OpenCL allows 2: one Newton
 * step with y^3 - x evaluated exactly enough through FMA error terms (y^3
 * is within a few ulp of x, so y^3 - x itself subtracts exactly). Tiny
 * inputs are scaled by 2^150 so that y^3 stays normal. */
CNST double cbrt(double x) {
  double ax = __builtin_fabs(x), scale = 1;
  if (ax < 0x1p-900) {
    x *= 0x1p150;
    scale = 0x1p-50;
  }
  double y = __libm_cbrt(x);
  if (y == 0 || !__builtin_isfinite(y))
    return y * scale;
  double p = y * y, pe = __builtin_fma(y, y, -p);
  double y3 = p * y, y3e = __builtin_fma(p, y, -y3) + pe * y;
  double r = (y3 - x) + y3e;
  return (y - r / (3 * p)) * scale;
}
VEC_UNARY(double, cbrt, double)

/* ---- LLVM intrinsics, written once for all widths ---- */
#define ELT1(N, T, F, B) CNST T##N F(T##N x) { return B(x); }
#define ELT2(N, T, F, B) CNST T##N F(T##N x, T##N y) { return B(x, y); }
#define ELT2S(N, T, F, B) CNST T##N F(T##N x, T y) { return B(x, (T##N)(y)); }
#define ELT3(N, T, F, B) CNST T##N F(T##N x, T##N y, T##N z) { return B(x, y, z); }
#define BOTH(M, ...) FOR_ALL_WIDTHS(M, float, __VA_ARGS__) FOR_ALL_WIDTHS(M, double, __VA_ARGS__)
#define BOTHV(M, ...) FOR_VEC_WIDTHS(M, float, __VA_ARGS__) FOR_VEC_WIDTHS(M, double, __VA_ARGS__)

BOTH(ELT1, sqrt, __builtin_elementwise_sqrt)
BOTH(ELT1, fabs, __builtin_elementwise_abs)
BOTH(ELT1, floor, __builtin_elementwise_floor)
BOTH(ELT1, ceil, __builtin_elementwise_ceil)
BOTH(ELT1, trunc, __builtin_elementwise_trunc)
BOTH(ELT1, rint, __builtin_elementwise_rint)
BOTH(ELT1, round, __builtin_elementwise_round)
/* llvm.minnum/maxnum return the non-NaN operand, as fmin/fmax require. */
BOTH(ELT2, fmin, __builtin_elementwise_min)
BOTH(ELT2, fmax, __builtin_elementwise_max)
BOTHV(ELT2S, fmin, __builtin_elementwise_min)
BOTHV(ELT2S, fmax, __builtin_elementwise_max)
BOTH(ELT2, copysign, __builtin_elementwise_copysign)
BOTH(ELT3, fma, __builtin_elementwise_fma)

/* mad trades accuracy for speed by definition; contraction may make it an
 * FMA where the target has one, a plain multiply-add elsewhere. */
#define MAD(N, T) CNST T##N mad(T##N a, T##N b, T##N c) { return a * b + c; }
FOR_ALL_WIDTHS(MAD, float) FOR_ALL_WIDTHS(MAD, double)

/* Two correctly rounded steps: within the 2 ulp allowed. */
#define RSQRT(N, T) CNST T##N rsqrt(T##N x) { return (T)1 / __builtin_elementwise_sqrt(x); }
FOR_ALL_WIDTHS(RSQRT, float) FOR_ALL_WIDTHS(RSQRT, double)

/* frem is exact and lowers to fmodf/fmod. */
CNST float fmod(float x, float y) { return __builtin_fmodf(x, y); }
CNST double fmod(double x, double y) { return __builtin_fmod(x, y); }
VEC_BINARY(float, fmod, float, float) VEC_BINARY(double, fmod, double, double)

CNST float ldexp(float x, int n) { return __builtin_ldexpf(x, n); }
CNST double ldexp(double x, int n) { return __builtin_ldexp(x, n); }
VEC_BINARY(float, ldexp, float, int) VEC_BINARY(double, ldexp, double, int)
VEC_BINARY_S(float, ldexp, float, int) VEC_BINARY_S(double, ldexp, double, int)

/* glibc gives INT_MIN for NaN; OpenCL's FP_ILOGBNAN is INT_MAX. */
CNST int ilogb(float x) { return x != x ? FP_ILOGBNAN : __libm_ilogbf(x); }
CNST int ilogb(double x) { return x != x ? FP_ILOGBNAN : __libm_ilogb(x); }
VEC_UNARY(int, ilogb, float) VEC_UNARY(int, ilogb, double)

#define NANF(N, X) CNST float##N nan(uint##N c) { return AS_TYPE(c | 0x7fc00000u, float##N); }
#define NAND(N, X)                                                             \
  CNST double##N nan(ulong##N c) { return AS_TYPE(c | 0x7ff8000000000000ul, double##N); }
FOR_ALL_WIDTHS(NANF, 0) FOR_ALL_WIDTHS(NAND, 0)

#define MAGS(N, T)                                                             \
  CNST T##N maxmag(T##N x, T##N y) {                                          \
    T##N ax = __builtin_elementwise_abs(x), ay = __builtin_elementwise_abs(y); \
    return ax > ay ? x : ay > ax ? y : __builtin_elementwise_max(x, y);       \
  }                                                                           \
  CNST T##N minmag(T##N x, T##N y) {                                          \
    T##N ax = __builtin_elementwise_abs(x), ay = __builtin_elementwise_abs(y); \
    return ax < ay ? x : ay < ax ? y : __builtin_elementwise_min(x, y);       \
  }
FOR_ALL_WIDTHS(MAGS, float) FOR_ALL_WIDTHS(MAGS, double)

/* ---- powers and roots ---- */
CNST double pown(double x, int n) { return __libm_pow(x, (double)n); }
VEC_BINARY(double, pown, double, int)

/* powr is pow restricted to x >= 0, with its own NaN cases (spec 7.5.1). */
#define POWR(T, LP)                                                            \
  CNST T powr(T x, T y) {                                                     \
    if (x < 0 || x != x || y != y)                                            \
      return (T)NAN;                                                          \
    T ay = __builtin_elementwise_abs(y);                                      \
    if (x == 0 && y == 0)                                                     \
      return (T)NAN;                                                          \
    if (__builtin_isinf(x) && y == 0)                                         \
      return (T)NAN;                                                          \
    if (x == 1 && __builtin_isinf(ay))                                        \
      return (T)NAN;                                                          \
    /* -0 is a zero here, not a negative base: powr(-0, -1) is +inf. */       \
    return LP(__builtin_elementwise_abs(x), y);                               \
  }
POWR(double, __libm_pow)
VEC_BINARY(double, powr, double, double)

/* x^(1/n). pow's result is corrected (1/n is rounded, which costs up to
 * ln(x)/n ulp) with one Newton step on y^n = x. */
#define ROOTN_EDGES(T)                                                         \
  if (n == 0 || x != x)                                                       \
    return (T)NAN;                                                            \
  int odd = n & 1;                                                            \
  if (x < 0 && !odd)                                                          \
    return (T)NAN;                                                            \
  if (x == 0) {                                                               \
    if (n > 0)                                                                \
      return odd ? x : (T)0;                                                  \
    return odd ? __builtin_elementwise_copysign((T)INFINITY, x) : (T)INFINITY; \
  }
static double rootn_positive(double ax, int n) {
  double y = __libm_pow(ax, 1.0 / n);
  if (__builtin_isfinite(y) && y != 0 && n != 1 && n != -1) {
    double yn = __libm_pow(y, (double)n);
    /* A subnormal y^n has lost the bits the correction needs. */
    if (__builtin_isfinite(yn) && yn >= 0x1p-1022)
      y = y + y * (ax / yn - 1.0) / n;
  }
  return y;
}
CNST double rootn(double x, int n) {
  ROOTN_EDGES(double)
  double ax = __builtin_fabs(x);
  /* Subnormal x: scale by 2^(|n| m), exact, so that x and y^n are normal,
   * and scale the root back by 2^-+m. */
  int an = n < 0 ? -n : n;
  if (ax < 0x1p-1022 && an > 1 && an < 2046) {
    int m = an >= 600 ? 1 : (600 + an - 1) / an;
    double y = rootn_positive(__builtin_ldexp(ax, an * m), n);
    return __builtin_copysign(__builtin_ldexp(y, n > 0 ? -m : m), x);
  }
  return __builtin_copysign(rootn_positive(ax, n), x);
}
VEC_BINARY(double, rootn, double, int)

/* ---- the *pi family (the float forms are in fmath.cl) ---- */
CNST double acospi(double x) { return __libm_acos(x) * M_1_PI; }
CNST double asinpi(double x) { return __libm_asin(x) * M_1_PI; }
CNST double atanpi(double x) { return __libm_atan(x) * M_1_PI; }
CNST double atan2pi(double y, double x) { return __libm_atan2(y, x) * M_1_PI; }
VEC_UNARY(double, acospi, double) VEC_UNARY(double, asinpi, double)
VEC_UNARY(double, atanpi, double) VEC_BINARY(double, atan2pi, double, double)

/* sin(pi x) and cos(pi x): reduce |x| exactly to r = |x| mod 2, then to
 * f = r - k/2 in [-1/4, 1/4] (exact: f lies on r's grid), so pi*f never
 * loses the digits a large argument would. */
static __attribute__((always_inline)) double aq_sincospi_red(double x, int *k) {
  double r = __builtin_fmod(__builtin_fabs(x), 2.0);
  double kk = __builtin_rint(r * 2.0);
  *k = (int)kk;
  return r - kk * 0.5;
}
static __attribute__((always_inline)) double aq_sinpi(double x) {
  if (!__builtin_isfinite(x))
    return __builtin_nan("");
  int k;
  double f = aq_sincospi_red(x, &k);
  double v;
  switch (k & 3) {
  case 0: v = __libm_sin(M_PI * f); break;
  case 1: v = __libm_cos(M_PI * f); break;
  case 2: v = -__libm_sin(M_PI * f); break;
  default: v = -__libm_cos(M_PI * f); break;
  }
  if (v == 0)
    v = 0; /* integers: the sign comes from x alone */
  return x < 0 || (x == 0 && __builtin_signbit(x)) ? -v : v;
}
static __attribute__((always_inline)) double aq_cospi(double x) {
  if (!__builtin_isfinite(x))
    return __builtin_nan("");
  int k;
  double f = aq_sincospi_red(x, &k);
  switch (k & 3) {
  case 0: return __libm_cos(M_PI * f);
  case 1: return f == 0 ? 0.0 : -__libm_sin(M_PI * f);
  case 2: return -__libm_cos(M_PI * f);
  default: return f == 0 ? 0.0 : __libm_sin(M_PI * f);
  }
}
/* tan(pi x) is odd: zeros are +0 at even n and -0 at odd n, poles +inf at
 * n + 1/2 with n even and -inf with n odd, all for x >= 0 and mirrored. */
static __attribute__((always_inline)) double aq_tanpi(double x) {
  if (!__builtin_isfinite(x))
    return __builtin_nan("");
  double ax = __builtin_fabs(x);
  double r = __builtin_fmod(ax, 2.0);
  double s = x < 0 || (x == 0 && __builtin_signbit(x)) ? -1.0 : 1.0;
  if (r == 0.0 || r == 1.0)
    return (r == 0.0 ? 0.0 : -0.0) * s;
  if (r == 0.5 || r == 1.5)
    return (r == 0.5 ? INFINITY : -INFINITY) * s;
  return aq_sinpi(x) / aq_cospi(x);
}
CNST double sinpi(double x) { return aq_sinpi(x); }
CNST double cospi(double x) { return aq_cospi(x); }
CNST double tanpi(double x) { return aq_tanpi(x); }
VEC_UNARY(double, sinpi, double) VEC_UNARY(double, cospi, double)
VEC_UNARY(double, tanpi, double)

/* ---- functions with a second result through a pointer ---- */
INL float frexp(float x, __private int *e) { return __builtin_frexpf(x, e); }
INL double frexp(double x, __private int *e) { return __builtin_frexp(x, e); }
OUTPTR_ALL(float, frexp, float, int) OUTPTR_ALL(double, frexp, double, int)

#define MODF(T)                                                                \
  INL T modf(T x, __private T *ip) {                                          \
    T i = __builtin_elementwise_trunc(x);                                     \
    *ip = i;                                                                  \
    return __builtin_elementwise_copysign(__builtin_isinf(x) ? (T)0 : x - i, x); \
  }
MODF(float) MODF(double)
OUTPTR_ALL(float, modf, float, float) OUTPTR_ALL(double, modf, double, double)

/* fmin(x - floor(x), largest below 1), with the spec's inf and NaN cases. */
#define FRACT(T, BELOW1)                                                       \
  INL T fract(T x, __private T *ip) {                                         \
    T fl = __builtin_elementwise_floor(x);                                    \
    *ip = fl;                                                                 \
    if (x != x)                                                               \
      return x;                                                               \
    if (__builtin_isinf(x))                                                   \
      return __builtin_elementwise_copysign((T)0, x);                         \
    return __builtin_elementwise_min(x - fl, BELOW1);                         \
  }
FRACT(float, 0x1.fffffep-1f) FRACT(double, 0x1.fffffffffffffp-1)
OUTPTR_ALL(float, fract, float, float) OUTPTR_ALL(double, fract, double, double)

INL double sincos(double x, __private double *c) {
  *c = __libm_cos(x);
  return __libm_sin(x);
}
OUTPTR_ALL(double, sincos, double, double)

/* lgamma_r keeps the sign per call instead of in glibc's global signgam,
 * which concurrent work-items would race on. */
INL float lgamma_r(float x, __private int *s) { return __libm_lgammaf_r(x, s); }
INL double lgamma_r(double x, __private int *s) { return __libm_lgamma_r(x, s); }
OUTPTR_ALL(float, lgamma_r, float, int) OUTPTR_ALL(double, lgamma_r, double, int)
INL float lgamma(float x) {
  int s;
  return __libm_lgammaf_r(x, &s);
}
INL double lgamma(double x) {
  int s;
  return __libm_lgamma_r(x, &s);
}
VEC_UNARY(float, lgamma, float) VEC_UNARY(double, lgamma, double)

/* remquo: two inputs and an out-pointer, so its own generators. */
/* glibc keeps 3 bits of the quotient; OpenCL asks for 7. fmod by 128 |y|
 * (exact) leaves a quotient below 129 with the same low 7 bits and the
 * same parity for round-to-even ties; remainder then gives the rest. */
#define REMQUO1(T, REM)                                                        \
  INL T remquo(T x, T y, __private int *q) {                                  \
    *q = 0;                                                                   \
    if (x != x || y != y || y == 0 || __builtin_isinf(x))                     \
      return (T)NAN;                                                          \
    if (__builtin_isinf(y))                                                   \
      return x;                                                               \
    T ax = __builtin_fabs(x), ay = __builtin_fabs(y);                         \
    T x1 = fmod(ax, 128 * ay);                                              \
    T r1 = REM(x1, ay);                                                       \
    int n1 = (int)__builtin_rint(x1 / ay - r1 / ay) & 127; /* no overflow */  \
    *q = (x < 0) != (y < 0) ? -n1 : n1;                                       \
    return x < 0 ? -r1 : r1;                                                  \
  }
REMQUO1(float, __libm_remainderf) REMQUO1(double, __libm_remainder)
#define REMQUO_PRIV(T)                                                         \
  INL T##2 remquo(T##2 x, T##2 y, __private int2 *q) {                        \
    int a, b;                                                                 \
    T##2 r = (T##2)(remquo(x.lo, y.lo, &a), remquo(x.hi, y.hi, &b));          \
    *q = (int2)(a, b);                                                        \
    return r;                                                                 \
  }                                                                           \
  INL T##3 remquo(T##3 x, T##3 y, __private int3 *q) {                        \
    int a, b, c;                                                              \
    T##3 r = (T##3)(remquo(x.s0, y.s0, &a), remquo(x.s1, y.s1, &b), remquo(x.s2, y.s2, &c)); \
    *q = (int3)(a, b, c);                                                     \
    return r;                                                                 \
  }                                                                           \
  REMQUO_HALF(T, 4, 2) REMQUO_HALF(T, 8, 4) REMQUO_HALF(T, 16, 8)
#define REMQUO_HALF(T, N, H)                                                   \
  INL T##N remquo(T##N x, T##N y, __private int##N *q) {                      \
    int##H a, b;                                                              \
    T##N r = (T##N)(remquo(x.lo, y.lo, &a), remquo(x.hi, y.hi, &b));          \
    *q = (int##N)(a, b);                                                      \
    return r;                                                                 \
  }
#define REMQUO_AS(N, T, AS)                                                    \
  INL T##N remquo(T##N x, T##N y, AS int##N *q) {                             \
    int##N t;                                                                 \
    T##N r = remquo(x, y, &t);                                                \
    *q = t;                                                                   \
    return r;                                                                 \
  }
REMQUO_PRIV(float) REMQUO_PRIV(double)
FOR_ALL_WIDTHS(REMQUO_AS, float, __global) FOR_ALL_WIDTHS(REMQUO_AS, float, __local)
FOR_ALL_WIDTHS(REMQUO_AS, double, __global) FOR_ALL_WIDTHS(REMQUO_AS, double, __local)
