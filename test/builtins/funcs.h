/* Shared by cltests.cl and test_builtins.c: the math functions tested in
 * bulk, each with its OpenCL 1.2 ULP limits (float, double; 0.5 means
 * correctly rounded), the input range of the random arguments and the long
 * double reference. The OpenCL side uses only the names. */
#ifndef AQUILA_TEST_BUILTINS_FUNCS_H
#define AQUILA_TEST_BUILTINS_FUNCS_H

/* X(name, ulp_float, ulp_double, lo, hi, reference in x) */
#define UNARY_FUNCS(X)                                                         \
  X(sin, 4, 4, -100, 100, sinl(x))                                            \
  X(cos, 4, 4, -100, 100, cosl(x))                                            \
  X(tan, 5, 5, -100, 100, tanl(x))                                            \
  X(asin, 4, 4, -1, 1, asinl(x))                                              \
  X(acos, 4, 4, -1, 1, acosl(x))                                              \
  X(atan, 5, 5, -100, 100, atanl(x))                                          \
  X(sinh, 4, 4, -20, 20, sinhl(x))                                            \
  X(cosh, 4, 4, -20, 20, coshl(x))                                            \
  X(tanh, 5, 5, -10, 10, tanhl(x))                                            \
  X(asinh, 4, 4, -100, 100, asinhl(x))                                        \
  X(acosh, 4, 4, 1, 100, acoshl(x))                                           \
  X(atanh, 5, 5, -1, 1, atanhl(x))                                            \
  X(exp, 3, 3, -80, 80, expl(x))                                              \
  X(exp2, 3, 3, -100, 100, exp2l(x))                                          \
  X(exp10, 3, 3, -30, 30, exp10l(x))                                          \
  X(expm1, 3, 3, -10, 10, expm1l(x))                                          \
  X(log, 3, 3, 0, 1000, logl(x))                                              \
  X(log2, 3, 3, 0, 1000, log2l(x))                                            \
  X(log10, 3, 3, 0, 1000, log10l(x))                                          \
  X(log1p, 2, 2, -0.9, 100, log1pl(x))                                        \
  X(cbrt, 2, 2, -1000, 1000, cbrtl(x))                                        \
  X(sqrt, 0.5, 0.5, 0, 1e6, sqrtl(x))                                         \
  X(rsqrt, 2, 2, 0.001, 1e6, 1 / sqrtl(x))                                    \
  X(erf, 16, 16, -5, 5, erfl(x))                                              \
  X(erfc, 16, 16, -5, 5, erfcl(x))                                            \
  X(tgamma, 16, 16, 0.1, 20, tgammal(x))                                      \
  X(sinpi, 4, 4, -100, 100, ref_sinpi(x))                                     \
  X(cospi, 4, 4, -100, 100, ref_cospi(x))                                     \
  X(tanpi, 6, 6, -10, 10, ref_tanpi(x))                                       \
  X(asinpi, 5, 5, -1, 1, asinl(x) / PI_L)                                     \
  X(acospi, 5, 5, -1, 1, acosl(x) / PI_L)                                     \
  X(atanpi, 5, 5, -100, 100, atanl(x) / PI_L)                                 \
  X(floor, 0, 0, -1e5, 1e5, floorl(x))                                        \
  X(ceil, 0, 0, -1e5, 1e5, ceill(x))                                          \
  X(trunc, 0, 0, -1e5, 1e5, truncl(x))                                        \
  X(round, 0, 0, -1e5, 1e5, roundl(x))                                        \
  X(rint, 0, 0, -1e5, 1e5, rintl(x))                                          \
  X(fabs, 0, 0, -1e5, 1e5, fabsl(x))                                          \
  X(logb, 0, 0, -1e5, 1e5, logbl(x))

/* X(name, ulp_float, ulp_double, xlo, xhi, ylo, yhi, reference in x, y) */
#define BINARY_FUNCS(X)                                                        \
  X(pow, 16, 16, 0.1, 10, -10, 10, powl(x, y))                                \
  X(powr, 16, 16, 0.1, 10, -10, 10, ref_powr(x, y))                               \
  X(atan2, 6, 6, -10, 10, -10, 10, atan2l(x, y))                              \
  X(atan2pi, 6, 6, -10, 10, -10, 10, atan2l(x, y) / PI_L)                     \
  X(hypot, 4, 4, -1e3, 1e3, -1e3, 1e3, hypotl(x, y))                          \
  X(fmod, 0, 0, -1e3, 1e3, -10, 10, fmodl(x, y))                              \
  X(remainder, 0, 0, -1e3, 1e3, -10, 10, remainderl(x, y))                    \
  X(fmin, 0, 0, -10, 10, -10, 10, fminl(x, y))                                \
  X(fmax, 0, 0, -10, 10, -10, 10, fmaxl(x, y))                                \
  X(fdim, 0.5, 0.5, -10, 10, -10, 10, fdiml(x, y))                                \
  X(copysign, 0, 0, -10, 10, -10, 10, copysignl(x, y))                        \
  X(maxmag, 0, 0, -10, 10, -10, 10, ref_maxmag(x, y))                         \
  X(minmag, 0, 0, -10, 10, -10, 10, ref_minmag(x, y))

#define ENUM_U(N, ...) U_##N,
#define ENUM_B(N, ...) B_##N,
enum { UNARY_FUNCS(ENUM_U) U_COUNT };
enum { BINARY_FUNCS(ENUM_B) B_COUNT };

/* Integer operations tested per type: scalar against exact host values,
 * vectors against the scalar results. */
#define INT_OPS(X)                                                             \
  X(add_sat) X(sub_sat) X(hadd) X(rhadd) X(abs_diff) X(mul_hi) X(rotate)      \
  X(max) X(min) X(mad_hi) X(mad_sat) X(clamp) X(clz) X(popcount) X(abs)
#define ENUM_I(N) I_##N,
enum { INT_OPS(ENUM_I) I_COUNT };

#endif
