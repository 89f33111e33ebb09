/* Single-precision elementary functions (OpenCL 1.2 section 6.12.2) written
 * as branch-free OpenCL C: a range reduction, a polynomial evaluated with
 * multiply-adds, and the special cases (NaN, infinities, zeros, subnormals,
 * overflow, underflow) chosen by selects at the end. Once inlined, the
 * work-item loop vectorizer (or a whole-function vectorizer) widens this code
 * itself, with no call into a vector math library and within the OpenCL 1.2
 * limits, which glibc's libmvec (up to 4 ulp) is not. The one exception is
 * the Payne-Hanek reduction of sin, cos and tan beyond 2^14, a rare path that
 * a select would make every lane pay for: it sits behind a branch, in an
 * out-of-line function the compiler vectorizes with a mask test (see
 * __aquila_vv_sinf). Also the float pow family and the fast forms behind
 * native_* and half_* (native.cl).
 *
 * The polynomials are minimax approximations with float coefficients for
 * relative error, from fmath.sollya; each is named after its function and
 * written in Horner form. Multiply-adds written as a * b + c contract to
 * llvm.fmuladd, an FMA where the target has one; fma() is used where only a
 * single rounding is correct. Double precision stays on libm (math.cl). */
#include "clc.h"
#include "fmath.h"

#define FI static inline __attribute__((always_inline, const))

/* ---- shared pieces ---- */

/* p * 2^k for k in [-252, 254]: two multiplications by normal powers of two,
 * the first one exact, so that a subnormal result is rounded only once. */
FI float fm_ldexp(float p, int k) {
  int k1 = k >> 1;
  return p * as_float((k1 + 127) << 23) * as_float((k - k1 + 127) << 23);
}

/* Selects that keep NaN: a comparison with NaN is false. */
FI float fm_min(float x, float hi) { return x > hi ? hi : x; }
FI float fm_max(float x, float lo) { return x < lo ? lo : x; }

/* ln 2 split so that k * LN2_HI is exact for |k| < 512; likewise log10(2). */
#define LN2_HI 0x1.62e4p-1f
#define LN2_LO 0x1.7f7d1cp-20f
#define LG2_HI 0x1.344p-2f
#define LG2_LO 0x1.3509f8p-18f
#define PIO2_HI 0x1.921fb6p+0f
#define PIO2_LO -0x1.777a5cp-25f
#define PI_HI 0x1.921fb6p+1f
#define PI_LO -0x1.777a5cp-24f

/* exp(r) - 1 - r for |r| <= ln2/2, as r^2 times a polynomial. */
FI float fm_exp_tail(float r) {
  float q = 0x1.694cd2p-10f;
  q = q * r + 0x1.123988p-7f;
  q = q * r + 0x1.555a26p-5f;
  q = q * r + 0x1.555492p-3f;
  q = q * r + 0x1.fffffap-2f;
  return r * r * q;
}

/* e^x = p * 2^k with p in [0.7, 1.42]: the reduction x = k ln2 + r is
 * Cody-Waite's, whose first step is exact. x must be within [-170, 100]. */
FI float fm_exp_parts(float x, int *k) {
  float kf = __builtin_rintf(x * 0x1.715476p+0f);
  float r = x - kf * LN2_HI;
  r = r - kf * LN2_LO;
  *k = (int)kf;
  return 1.0f + (r + fm_exp_tail(r));
}

/* ---- exponentials ---- */

/* Outside [-170, 100] e^x is 0 or inf all the same; the clamp keeps k in
 * fm_ldexp's range. NaN passes the clamp and is returned at the end, before
 * its undefined conversion to int can matter. */
CNST float exp(float x) {
  int k;
  float p = fm_exp_parts(fm_max(fm_min(x, 100.0f), -170.0f), &k);
  float r = fm_ldexp(p, k);
  return x != x ? x : r;
}

CNST float exp2(float x) {
  float xc = fm_max(fm_min(x, 250.0f), -250.0f);
  float k = __builtin_rintf(xc);
  float r = xc - k;
  float p = 0x1.3fa206p-13f;
  p = p * r + 0x1.5f0b82p-10f;
  p = p * r + 0x1.3b30ap-7f;
  p = p * r + 0x1.c6af76p-5f;
  p = p * r + 0x1.ebfbd8p-3f;
  p = p * r + 0x1.62e43p-1f;
  float res = fm_ldexp(p * r + 1.0f, (int)k);
  return x != x ? x : res;
}

CNST float exp10(float x) {
  float xc = fm_max(fm_min(x, 40.0f), -50.0f);
  float k = __builtin_rintf(xc * 0x1.a934fp+1f);
  float r = xc - k * LG2_HI;
  r = r - k * LG2_LO;
  float p = 0x1.a4985p-3f;
  p = p * r + 0x1.156bbcp-1f;
  p = p * r + 0x1.2bdbdap+0f;
  p = p * r + 0x1.046f9ap+1f;
  p = p * r + 0x1.535248p+1f;
  p = p * r + 0x1.26bb1cp+1f;
  float res = fm_ldexp(p * r + 1.0f, (int)k);
  return x != x ? x : res;
}

/* e^x - 1 = 2^k (e^r - 1 + 1 - 2^-k), with e^r - 1 from its own polynomial
 * and the rounding error c of the reduced argument added back: the sum
 * e^r - 1 + (1 - 2^-k) cancels by at most a factor 2 for k = 1. */
CNST float expm1(float x) {
  float xc = fm_max(fm_min(x, 100.0f), -30.0f);
  float kf = __builtin_rintf(xc * 0x1.715476p+0f);
  float r1 = xc - kf * LN2_HI;
  float r = r1 - kf * LN2_LO;
  float c = (r1 - r) - kf * LN2_LO;
  float q = 0x1.a22dc2p-13f;
  q = q * r + 0x1.6d4122p-10f;
  q = q * r + 0x1.11100cp-7f;
  q = q * r + 0x1.5554f2p-5f;
  q = q * r + 0x1.555556p-3f;
  q = q * r + 0.5f;
  float em = r * r * q + (r + c);
  int k = (int)kf;
  /* 2^-k for k up to 40; beyond, 1 - 2^-k rounds to 1 anyway. */
  float u = 1.0f - as_float((127 - (k > 40 ? 40 : k)) << 23);
  float res = k == 0 ? em : fm_ldexp(em + u, k);
  /* expm1(-0) is -0, and tiny x are their own result. */
  res = __builtin_fabsf(x) < 0x1p-25f ? x : res;
  return x != x ? x : res;
}

/* ---- logarithms ---- */

/* x = 2^e * m with m in [sqrt(1/2), sqrt(2)), subnormals included; returns
 * f = m - 1, which is exact. */
FI float fm_log_reduce(float x, int *e) {
  int sub = x < 0x1p-126f;
  float xs = sub ? x * 0x1p23f : x;
  int ix = as_int(xs) - 0x3f3504f3;
  *e = (ix >> 23) - (sub ? 23 : 0);
  return as_float((ix & 0x007fffff) + 0x3f3504f3) - 1.0f;
}

/* log(1 + f) - f for f in [sqrt(1/2) - 1, sqrt(2) - 1], as f^2 times a
 * polynomial. */
FI float fm_log_tail(float f) {
  float q = -0x1.38472ap-4f;
  q = q * f + 0x1.0860cep-3f;
  q = q * f - 0x1.0f3fa6p-3f;
  q = q * f + 0x1.226dfcp-3f;
  q = q * f - 0x1.5425c4p-3f;
  q = q * f + 0x1.99a41ap-3f;
  q = q * f - 0x1.000432p-2f;
  q = q * f + 0x1.55555p-2f;
  q = q * f - 0x1.fffff8p-2f;
  return f * f * q;
}

/* The result for the x where the reduction does not apply: 0, negative,
 * infinite and NaN. */
FI float fm_log_special(float x, float res) {
  float sp = x == 0.0f ? -INFINITY : x < 0.0f ? NAN : x;
  return x > 0.0f && x < INFINITY ? res : sp;
}

/* e ln2 + f + tail: e * LN2_HI is exact, so the result is rounded about
 * twice, and cancellation (e = -1, m near sqrt(2)) halves it at most. */
CNST float log(float x) {
  int e;
  float f = fm_log_reduce(x, &e);
  float t = fm_log_tail(f), ef = (float)e;
  float res = ef * LN2_HI + (f + (t + ef * LN2_LO));
  return fm_log_special(x, res);
}

/* log2(1 + f) = (f + tail) * log2(e), with f * log2(e) carried in two
 * parts, then e added. */
CNST float log2(float x) {
  int e;
  float f = fm_log_reduce(x, &e);
  float t = fm_log_tail(f);
  float l = f * 0x1.715476p+0f + (f * 0x1.4ae0cp-26f + t * 0x1.715476p+0f);
  return fm_log_special(x, (float)e + l);
}

CNST float log10(float x) {
  int e;
  float f = fm_log_reduce(x, &e);
  float t = fm_log_tail(f), ef = (float)e;
  float l = f * 0x1.bcb7b2p-2f + (f * -0x1.5b235ep-27f + t * 0x1.bcb7b2p-2f);
  float res = ef * LG2_HI + (l + ef * LG2_LO);
  return fm_log_special(x, res);
}

/* log(1 + x): where 1 + x lies in [sqrt(1/2), sqrt(2)) the polynomial takes
 * x itself; elsewhere it takes u = 1 + x, and c / u adds back the rounding
 * error c of u (Fast2Sum), which the result, at least ln(sqrt 2) in size
 * there, needs only roughly. */
CNST float log1p(float x) {
  float u = 1.0f + x;
  float c = __builtin_fabsf(x) > 1.0f ? (x - u) + 1.0f : (1.0f - u) + x;
  int e;
  float f = fm_log_reduce(u, &e);
  int near1 = e == 0;
  f = near1 ? x : f;
  float corr = near1 ? 0.0f : c / u;
  float t = fm_log_tail(f), ef = (float)e;
  float res = ef * LN2_HI + (f + (t + (ef * LN2_LO + corr)));
  res = x == 0.0f ? x : res;
  /* u covers the special cases: u = 0 for x = -1, negative below. */
  return x != x ? x : fm_log_special(u, res);
}

/* ---- pow family: log2 in double, exp2 in float ---- */

/* log2(ax) for ax >= 0 in double, relative error about 2^-33: pow's y *
 * log2(x) can reach 150 in size, and each ulp of the result needs 2^-24 of
 * that. -inf for 0, inf for inf, NaN for NaN. */
FI double fm_log2_d(float ax) {
  int e;
  double f = (double)fm_log_reduce(ax, &e);
  double p = -0x1.61ac61dbf147dp-4;
  p = p * f + 0x1.3d25f58f979p-3;
  p = p * f - 0x1.417fe988d5c7cp-3;
  p = p * f + 0x1.45a292dfe3b3p-3;
  p = p * f - 0x1.6eb02b30a52cdp-3;
  p = p * f + 0x1.a615cb536bdd5p-3;
  p = p * f - 0x1.ec8d73d344953p-3;
  p = p * f + 0x1.277732ce685f2p-2;
  p = p * f - 0x1.715435eb9db4fp-2;
  p = p * f + 0x1.ec709c00f041p-2;
  p = p * f - 0x1.7154767baebeap-1;
  p = p * f + 0x1.71547652ef953p+0;
  double l = (double)e + f * p;
  l = ax == 0.0f ? -INFINITY : l;
  l = ax == INFINITY ? INFINITY : l;
  return ax != ax ? (double)NAN : l;
}

/* 2^t rounded to float: t = k + r in double (exact), r rounded to float
 * (an error of 2^-26 at most, 0.2 ulp of the result), then exp2's
 * polynomial. NaN t gives an unspecified value: the callers select. */
FI float fm_exp2_d(double t) {
  double tc = __builtin_fmin(__builtin_fmax(t, -250.0), 250.0);
  double k = __builtin_rint(tc);
  float r = (float)(tc - k);
  float p = 0x1.3fa206p-13f;
  p = p * r + 0x1.5f0b82p-10f;
  p = p * r + 0x1.3b30ap-7f;
  p = p * r + 0x1.c6af76p-5f;
  p = p * r + 0x1.ebfbd8p-3f;
  p = p * r + 0x1.62e43p-1f;
  return fm_ldexp(p * r + 1.0f, (int)k);
}

/* y an integer (infinities count as even ones) and odd. */
FI int fm_is_int(float y) { return __builtin_rintf(y) == y; }
FI int fm_is_odd(float y) {
  float h = y * 0.5f;
  return __builtin_fabsf(y) < 0x1p24f && __builtin_rintf(h) != h && fm_is_int(y);
}

/* |x|^y with the C99 special cases: most fall out of log2 (0 gives -inf,
 * inf gives inf) and exp2 (of +-inf); those that do not are selected. */
CNST float pow(float x, float y) {
  double t = (double)y * fm_log2_d(__builtin_fabsf(x));
  float r = fm_exp2_d(t);
  r = t != t ? NAN : r;
  r = as_int(x) < 0 && fm_is_odd(y) ? -r : r;
  r = x < 0.0f && x > -INFINITY && !fm_is_int(y) ? NAN : r;
  r = y == 0.0f || x == 1.0f ? 1.0f : r;
  return x == -1.0f && __builtin_fabsf(y) == INFINITY ? 1.0f : r;
}

/* powr's special cases (spec 7.5.1) are the NaN ones of t = y log2(x), 0 *
 * inf, plus negative x; -0 is a zero, not a negative number. */
CNST float powr(float x, float y) {
  double t = (double)y * fm_log2_d(__builtin_fabsf(x));
  float r = fm_exp2_d(t);
  return t != t || x < 0.0f ? NAN : r;
}

CNST float pown(float x, int n) {
  double t = (double)n * fm_log2_d(__builtin_fabsf(x));
  float r = fm_exp2_d(t);
  r = t != t ? NAN : r;
  r = as_int(x) < 0 && (n & 1) ? -r : r;
  return n == 0 ? 1.0f : r;
}

CNST float rootn(float x, int n) {
  double t = fm_log2_d(__builtin_fabsf(x)) / (double)n;
  float r = fm_exp2_d(t);
  r = as_int(x) < 0 && (n & 1) ? -r : r;
  return t != t || n == 0 || (x < 0.0f && !(n & 1)) ? NAN : r;
}

/* ---- trigonometric functions ---- */

/* sin(r) and cos(r) for |r| <= pi/4 (a little beyond for the fast
 * reductions). */
FI float fm_sin_poly(float r) {
  float r2 = r * r;
  float p = -0x1.9954e8p-13f;
  p = p * r2 + 0x1.11077ap-7f;
  p = p * r2 - 0x1.555546p-3f;
  return r * r2 * p + r;
}
FI float fm_cos_poly(float r) {
  float r2 = r * r;
  float p = 0x1.99e914p-16f;
  p = p * r2 - 0x1.6c0c2ap-10f;
  p = p * r2 + 0x1.55554ap-5f;
  p = p * r2 - 0.5f;
  return r2 * p + 1.0f;
}

/* Payne-Hanek reduction with one table row per exponent: ax = m 2^s with m
 * an integer of 24 bits and s = e - 23, and ax 2/pi mod 4 = m F(s) mod 4 where
 * F(s) = (2^s 2/pi) mod 4 (for s < 0 no reduction is needed, and F(s) is 2^s
 * 2/pi itself). F(s) is kept as two doubles, 106 bits: m F0 is split exactly
 * by an FMA into p0 + e0, and m F1 is small enough to round. The nearest
 * integer n of p0 (below 2^26) gives the quadrant, and (p0 - n) + e0 + m F1 the
 * remainder f with a relative error near 2^-50 even where it is smallest: no
 * float comes closer than 2^-29.9 to a multiple of pi/2, measured over all
 * floats against a 96-bit integer reduction. Rows for s = -24 (ax >= 1/2) to
 * 104 (the largest floats), from fmath-table.py. */
__constant double fm_2opi_tab[129][2] = {
    {0x1.45f306dc9c883p-25, -0x1.6b01ec5417056p-79}, {0x1.45f306dc9c883p-24, -0x1.6b01ec5417056p-78},
    {0x1.45f306dc9c883p-23, -0x1.6b01ec5417056p-77}, {0x1.45f306dc9c883p-22, -0x1.6b01ec5417056p-76},
    {0x1.45f306dc9c883p-21, -0x1.6b01ec5417056p-75}, {0x1.45f306dc9c883p-20, -0x1.6b01ec5417056p-74},
    {0x1.45f306dc9c883p-19, -0x1.6b01ec5417056p-73}, {0x1.45f306dc9c883p-18, -0x1.6b01ec5417056p-72},
    {0x1.45f306dc9c883p-17, -0x1.6b01ec5417056p-71}, {0x1.45f306dc9c883p-16, -0x1.6b01ec5417056p-70},
    {0x1.45f306dc9c883p-15, -0x1.6b01ec5417056p-69}, {0x1.45f306dc9c883p-14, -0x1.6b01ec5417056p-68},
    {0x1.45f306dc9c883p-13, -0x1.6b01ec5417056p-67}, {0x1.45f306dc9c883p-12, -0x1.6b01ec5417056p-66},
    {0x1.45f306dc9c883p-11, -0x1.6b01ec5417056p-65}, {0x1.45f306dc9c883p-10, -0x1.6b01ec5417056p-64},
    {0x1.45f306dc9c883p-9, -0x1.6b01ec5417056p-63}, {0x1.45f306dc9c883p-8, -0x1.6b01ec5417056p-62},
    {0x1.45f306dc9c883p-7, -0x1.6b01ec5417056p-61}, {0x1.45f306dc9c883p-6, -0x1.6b01ec5417056p-60},
    {0x1.45f306dc9c883p-5, -0x1.6b01ec5417056p-59}, {0x1.45f306dc9c883p-4, -0x1.6b01ec5417056p-58},
    {0x1.45f306dc9c883p-3, -0x1.6b01ec5417056p-57}, {0x1.45f306dc9c883p-2, -0x1.6b01ec5417056p-56},
    {0x1.45f306dc9c883p-1, -0x1.6b01ec5417056p-55}, {0x1.45f306dc9c883p+0, -0x1.6b01ec5417056p-54},
    {0x1.45f306dc9c883p+1, -0x1.6b01ec5417056p-53}, {0x1.17cc1b727220bp+0, -0x1.ac07b1505c159p-54},
    {0x1.17cc1b727220bp+1, -0x1.ac07b1505c159p-53}, {0x1.7cc1b727220a9p-2, 0x1.3f84eafa3ea6ap-56},
    {0x1.7cc1b727220a9p-1, 0x1.3f84eafa3ea6ap-55}, {0x1.7cc1b727220a9p+0, 0x1.3f84eafa3ea6ap-54},
    {0x1.7cc1b727220a9p+1, 0x1.3f84eafa3ea6ap-53}, {0x1.f306dc9c882a5p+0, 0x1.fc2757d1f534ep-55},
    {0x1.f306dc9c882a5p+1, 0x1.fc2757d1f534ep-54}, {0x1.e60db9391054ap+1, 0x1.fc2757d1f534ep-53},
    {0x1.cc1b727220a95p+1, -0x1.ec54170565912p-59}, {0x1.9836e4e44152ap+1, -0x1.ec54170565912p-58},
    {0x1.306dc9c882a54p+1, -0x1.ec54170565912p-57}, {0x1.836e4e44152a0p-1, -0x1.ec54170565912p-56},
    {0x1.836e4e44152a0p+0, -0x1.ec54170565912p-55}, {0x1.836e4e44152a0p+1, -0x1.ec54170565912p-54},
    {0x1.06dc9c882a540p+1, -0x1.ec54170565912p-53}, {0x1.b727220a94fe1p-4, 0x1.d5f47d4d37703p-59},
    {0x1.b727220a94fe1p-3, 0x1.d5f47d4d37703p-58}, {0x1.b727220a94fe1p-2, 0x1.d5f47d4d37703p-57},
    {0x1.b727220a94fe1p-1, 0x1.d5f47d4d37703p-56}, {0x1.b727220a94fe1p+0, 0x1.d5f47d4d37703p-55},
    {0x1.b727220a94fe1p+1, 0x1.d5f47d4d37703p-54}, {0x1.6e4e441529fc2p+1, 0x1.d5f47d4d37703p-53},
    {0x1.b9391054a7f0ap+0, -0x1.505c1596447e5p-55}, {0x1.b9391054a7f0ap+1, -0x1.505c1596447e5p-54},
    {0x1.727220a94fe14p+1, -0x1.505c1596447e5p-53}, {0x1.c9c882a53f84fp+0, -0x1.4170565911f92p-54},
    {0x1.c9c882a53f84fp+1, -0x1.4170565911f92p-53}, {0x1.9391054a7f09dp+1, 0x1.7d1f534ddc0dbp-53},
    {0x1.27220a94fe13bp+1, -0x1.05c1596447e49p-53}, {0x1.391054a7f09d6p-1, -0x1.70565911f924fp-58},
    {0x1.391054a7f09d6p+0, -0x1.70565911f924fp-57}, {0x1.391054a7f09d6p+1, -0x1.70565911f924fp-56},
    {0x1.c882a53f84eb0p-1, -0x1.70565911f924fp-55}, {0x1.c882a53f84eb0p+0, -0x1.70565911f924fp-54},
    {0x1.c882a53f84eb0p+1, -0x1.70565911f924fp-53}, {0x1.91054a7f09d5fp+1, 0x1.1f534ddc0db63p-53},
    {0x1.220a94fe13abfp+1, -0x1.c1596447e493bp-53}, {0x1.1054a7f09d5f4p-1, 0x1.f534ddc0db629p-55},
    {0x1.1054a7f09d5f4p+0, 0x1.f534ddc0db629p-54}, {0x1.1054a7f09d5f4p+1, 0x1.f534ddc0db629p-53},
    {0x1.054a7f09d5f48p-2, -0x1.596447e493ad5p-57}, {0x1.054a7f09d5f48p-1, -0x1.596447e493ad5p-56},
    {0x1.054a7f09d5f48p+0, -0x1.596447e493ad5p-55}, {0x1.054a7f09d5f48p+1, -0x1.596447e493ad5p-54},
    {0x1.529fc2757d1f5p-4, 0x1.a6ee06db14acdp-59}, {0x1.529fc2757d1f5p-3, 0x1.a6ee06db14acdp-58},
    {0x1.529fc2757d1f5p-2, 0x1.a6ee06db14acdp-57}, {0x1.529fc2757d1f5p-1, 0x1.a6ee06db14acdp-56},
    {0x1.529fc2757d1f5p+0, 0x1.a6ee06db14acdp-55}, {0x1.529fc2757d1f5p+1, 0x1.a6ee06db14acdp-54},
    {0x1.4a7f09d5f47d5p+0, -0x1.6447e493ad4cep-55}, {0x1.4a7f09d5f47d5p+1, -0x1.6447e493ad4cep-54},
    {0x1.29fc2757d1f53p+0, 0x1.377036d8a5665p-54}, {0x1.29fc2757d1f53p+1, 0x1.377036d8a5665p-53},
    {0x1.4fe13abe8fa9ap-1, 0x1.bb81b6c52b328p-55}, {0x1.4fe13abe8fa9ap+0, 0x1.bb81b6c52b328p-54},
    {0x1.4fe13abe8fa9ap+1, 0x1.bb81b6c52b328p-53}, {0x1.3f84eafa3ea6ap+0, -0x1.11f924eb53362p-54},
    {0x1.3f84eafa3ea6ap+1, -0x1.11f924eb53362p-53}, {0x1.fc2757d1f534ep-1, -0x1.1f924eb53361ep-56},
    {0x1.fc2757d1f534ep+0, -0x1.1f924eb53361ep-55}, {0x1.fc2757d1f534ep+1, -0x1.1f924eb53361ep-54},
    {0x1.f84eafa3ea69cp+1, -0x1.1f924eb53361ep-53}, {0x1.f09d5f47d4d37p+1, 0x1.c0db6295993c4p-53},
    {0x1.e13abe8fa9a6fp+1, -0x1.f924eb53361dep-55}, {0x1.c2757d1f534dep+1, -0x1.f924eb53361dep-54},
    {0x1.84eafa3ea69bcp+1, -0x1.f924eb53361dep-53}, {0x1.09d5f47d4d377p+1, 0x1.b6c52b3278872p-58},
    {0x1.3abe8fa9a6ee0p-3, 0x1.b6c52b3278872p-57}, {0x1.3abe8fa9a6ee0p-2, 0x1.b6c52b3278872p-56},
    {0x1.3abe8fa9a6ee0p-1, 0x1.b6c52b3278872p-55}, {0x1.3abe8fa9a6ee0p+0, 0x1.b6c52b3278872p-54},
    {0x1.3abe8fa9a6ee0p+1, 0x1.b6c52b3278872p-53}, {0x1.d5f47d4d37703p-1, 0x1.b6295993c4390p-55},
    {0x1.d5f47d4d37703p+0, 0x1.b6295993c4390p-54}, {0x1.d5f47d4d37703p+1, 0x1.b6295993c4390p-53},
    {0x1.abe8fa9a6ee07p+1, -0x1.275a99b0ef1bfp-54}, {0x1.57d1f534ddc0ep+1, -0x1.275a99b0ef1bfp-53},
    {0x1.5f47d4d377037p+0, -0x1.3ad4cd8778df8p-55}, {0x1.5f47d4d377037p+1, -0x1.3ad4cd8778df8p-54},
    {0x1.7d1f534ddc0dbp+0, 0x1.8a5664f10e410p-54}, {0x1.7d1f534ddc0dbp+1, 0x1.8a5664f10e410p-53},
    {0x1.f47d4d377036ep+0, -0x1.d6a66c3bc6fbep-54}, {0x1.f47d4d377036ep+1, -0x1.d6a66c3bc6fbep-53},
    {0x1.e8fa9a6ee06dbp+1, 0x1.4acc9e21c8210p-55}, {0x1.d1f534ddc0db6p+1, 0x1.4acc9e21c8210p-54},
    {0x1.a3ea69bb81b6cp+1, 0x1.4acc9e21c8210p-53}, {0x1.47d4d377036d9p+1, -0x1.6a66c3bc6fbe0p-53},
    {0x1.1f534ddc0db63p+0, -0x1.a99b0ef1bef80p-54}, {0x1.1f534ddc0db63p+1, -0x1.a99b0ef1bef80p-53},
    {0x1.f534ddc0db629p-2, 0x1.664f10e4107f9p-56}, {0x1.f534ddc0db629p-1, 0x1.664f10e4107f9p-55},
    {0x1.f534ddc0db629p+0, 0x1.664f10e4107f9p-54}, {0x1.f534ddc0db629p+1, 0x1.664f10e4107f9p-53},
    {0x1.ea69bb81b6c53p+1, -0x1.3361de37df00dp-53}, {0x1.d4d377036d8a5p+1, 0x1.993c439041fe5p-53},
    {0x1.a9a6ee06db14bp+1, -0x1.9b0ef1bef806cp-54}, {0x1.534ddc0db6296p+1, -0x1.9b0ef1bef806cp-53},
    {0x1.4d377036d8a56p+0, 0x1.93c439041fe51p-54}, {0x1.4d377036d8a56p+1, 0x1.93c439041fe51p-53},
    {0x1.34ddc0db6295ap+0, -0x1.b0ef1bef806bap-54},
};

/* For any finite ax >= 1/2 (others give an unspecified value): ax = n pi/2 +
 * r with |r| at most a hair above pi/4, r in double. */
FI int fm_trig_reduce_large(float ax, double *r) {
  uint ix = as_uint(ax);
  int row = (int)(ix >> 23) - 126;
  row = row < 0 ? 0 : row > 128 ? 128 : row;
  double m = (double)(int)((ix & 0x007fffffu) | 0x00800000u);
  double f0 = fm_2opi_tab[row][0], f1 = fm_2opi_tab[row][1];
  double p0 = m * f0, e0 = __builtin_fma(m, f0, -p0);
  double n = __builtin_rint(p0);
  *r = (((p0 - n) + e0) + m * f1) * 0x1.921fb54442d18p+0;
  return (int)n & 3;
}

/* Cody-Waite with pi/2 in three floats and the products in FMAs (the first
 * step is exact): the remainder is within 2^-23 of itself for |x| below
 * FM_TRIG_FAST_MAX, measured over all floats against a 96-bit reduction,
 * which costs sin and cos about an ulp. Further out, x 2/pi in float rounds
 * to the neighbouring quadrant near the quadrants' edges (still a correct
 * remainder, slightly beyond pi/4) and the remainder's error grows. */
#define FM_TRIG_FAST_MAX 0x1p14f
FI int fm_trig_reduce_fast(float ax, float *r) {
  float k = __builtin_rintf(ax * 0x1.45f306p-1f);
  float t = __builtin_fmaf(-k, 0x1.921fb6p+0f, ax);
  t = __builtin_fmaf(-k, -0x1.777a5cp-25f, t);
  *r = __builtin_fmaf(-k, -0x1.ee59dap-50f, t);
  /* The quadrant in float, where k is exact, so that the conversion never
   * sees a value out of range (the callers select another result there). */
  float q = k - 4.0f * __builtin_floorf(k * 0.25f);
  return (int)(q == q ? q : 0.0f);
}

/* sin, cos or tan (which: 0, 1, 2) of x from its quadrant n and remainder
 * r: the quadrant picks sin or cos of the remainder, bit 1 of it and the
 * sign of x the sign; tan is sin / cos, or -cos / sin in odd quadrants. */
FI float fm_trig_finish(int which, float x, int n, float r) {
  float s = fm_sin_poly(r), c = fm_cos_poly(r);
  int odd = n & 1;
  uint sx = as_uint(x) & 0x80000000u;
  if (which == 0)
    return as_float(as_uint(odd ? c : s) ^ ((uint)(n & 2) << 30) ^ sx);
  if (which == 1)
    return as_float(as_uint(odd ? s : c) ^ ((uint)((n + 1) & 2) << 30));
  return as_float(as_uint((odd ? -c : s) / (odd ? s : c)) ^ sx);
}

/* The whole float range through the Payne-Hanek table, for the rare path
 * below (4 to 17 times the work of the fast path): the remainder and the
 * polynomials stay in double, which leaves only the polynomials' 2^-28 and
 * the final rounding, tan included. */
FI double fm_sin_poly_d(double r) {
  double r2 = r * r;
  double p = (double)-0x1.9954e8p-13f;
  p = p * r2 + (double)0x1.11077ap-7f;
  p = p * r2 + (double)-0x1.555546p-3f;
  return r * r2 * p + r;
}
FI double fm_cos_poly_d(double r) {
  double r2 = r * r;
  double p = (double)0x1.99e914p-16f;
  p = p * r2 + (double)-0x1.6c0c2ap-10f;
  p = p * r2 + (double)0x1.55554ap-5f;
  p = p * r2 - 0.5;
  return r2 * p + 1.0;
}
FI float fm_trig_large(int which, float x) {
  float ax = __builtin_fabsf(x);
  double r;
  int n = fm_trig_reduce_large(ax, &r);
  int small = ax <= 0x1.921fb4p-1f; /* below pi/4: no reduction */
  r = small ? (double)ax : r;
  n = small ? 0 : n;
  double s = fm_sin_poly_d(r), c = fm_cos_poly_d(r), v;
  int odd = n & 1;
  if (which == 0)
    v = (odd ? c : s) * ((n & 2) ? -1.0 : 1.0);
  else if (which == 1)
    v = (odd ? s : c) * (((n + 1) & 2) ? -1.0 : 1.0);
  else
    v = odd ? -c / s : s / c;
  float res = (float)v;
  /* sin and tan are odd */
  res = which != 1 && as_int(x) < 0 ? -res : res;
  return ax < INFINITY ? res : NAN;
}

/* The rare path of sin, cos and tan: arguments of 2^14 and beyond, infinities
 * and NaN. Out of line, and named __aquila_vv_*, for the compiler: it gives
 * such a function masked vector variants (compiler/workgroup/vector_variants.c), which a
 * vectorized work-item loop calls for the lanes that need them; once the
 * variant is inlined after vectorization, its test of whether any lane does
 * is one branch per vector. Usual arguments pay for the fast path alone,
 * where a select would run both paths for every lane. */
#define VV __attribute__((noinline, const))
VV float __aquila_vv_sinf(float x) { return fm_trig_large(0, x); }
VV float __aquila_vv_cosf(float x) { return fm_trig_large(1, x); }
VV float __aquila_vv_tanf(float x) { return fm_trig_large(2, x); }

/* Fast path below 2^14, the rare path's result beyond. */
#define TRIG(NAME, WHICH)                                                      \
  CNST float NAME(float x) {                                                  \
    float ax = __builtin_fabsf(x), r;                                         \
    int n = fm_trig_reduce_fast(ax, &r);                                      \
    float res = fm_trig_finish(WHICH, x, n, r);                               \
    if (!(ax < FM_TRIG_FAST_MAX))                                             \
      res = __aquila_vv_##NAME##f(x);                                         \
    return res;                                                               \
  }
TRIG(sin, 0)
TRIG(cos, 1)
TRIG(tan, 2)

INL float sincos(float x, __private float *cp) {
  float ax = __builtin_fabsf(x), r;
  int n = fm_trig_reduce_fast(ax, &r);
  float s = fm_trig_finish(0, x, n, r), c = fm_trig_finish(1, x, n, r);
  if (!(ax < FM_TRIG_FAST_MAX)) {
    s = __aquila_vv_sinf(x);
    c = __aquila_vv_cosf(x);
  }
  *cp = c;
  return s;
}

/* native_ and half_ sin, cos and tan: the fast path alone, a few ulp for
 * |x| up to 2^16 (half_'s range; from 2^14 on, x 2/pi may round to the
 * neighbouring quadrant near its edges, leaving a remainder a little beyond
 * pi/4, where the polynomials are still close), of no accuracy beyond (sin
 * and cos stay within [-1, 1]), NaN for inf and NaN. The remainder is
 * clamped so that the polynomials stay bounded. */
FI float fm_trig_native(int which, float x) {
  float ax = __builtin_fabsf(x), r;
  int n = fm_trig_reduce_fast(ax, &r);
  r = fm_max(fm_min(r, 0.8f), -0.8f);
  return fm_trig_finish(which, x, n, r);
}
FM_EXPORT float __aquila_sin_fast(float x) { return fm_trig_native(0, x); }
FM_EXPORT float __aquila_cos_fast(float x) { return fm_trig_native(1, x); }
FM_EXPORT float __aquila_tan_fast(float x) { return fm_trig_native(2, x); }

/* powr without the double-precision log2: y log2(x) loses up to 2^-24 of
 * itself, about 100 ulp of the result at its largest, far inside half_'s
 * 8192. */
FM_EXPORT float __aquila_powr_fast(float x, float y) {
  int e;
  float f = fm_log_reduce(x, &e);
  float t = fm_log_tail(f);
  float l = (float)e + (f * 0x1.715476p+0f + t * 0x1.715476p+0f);
  l = x == 0.0f ? -INFINITY : x == INFINITY ? INFINITY : l;
  float yl = fm_max(fm_min(y * l, 250.0f), -250.0f);
  float k = __builtin_rintf(yl);
  float r = yl - k;
  float p = 0x1.3fa206p-13f;
  p = p * r + 0x1.5f0b82p-10f;
  p = p * r + 0x1.3b30ap-7f;
  p = p * r + 0x1.c6af76p-5f;
  p = p * r + 0x1.ebfbd8p-3f;
  p = p * r + 0x1.62e43p-1f;
  float res = fm_ldexp(p * r + 1.0f, (int)(k == k ? k : 0.0f));
  return (y * l) != (y * l) || x < 0.0f || x != x ? NAN : res;
}

/* ---- inverse trigonometric functions ---- */

/* atan(t) for t in [0, 1]. */
FI float fm_atan_poly(float t) {
  float t2 = t * t;
  float p = 0x1.7ec1c4p-9f;
  p = p * t2 - 0x1.0c23fep-6f;
  p = p * t2 + 0x1.61f756p-5f;
  p = p * t2 - 0x1.3553f4p-4f;
  p = p * t2 + 0x1.b4dfdcp-4f;
  p = p * t2 - 0x1.230abp-3f;
  p = p * t2 + 0x1.9978eep-3f;
  p = p * t2 - 0x1.5554dcp-2f;
  return t * t2 * p + t;
}

/* Above 1, atan(x) = pi/2 - atan(1/x). */
CNST float atan(float x) {
  float ax = __builtin_fabsf(x);
  int big = ax > 1.0f;
  float p = fm_atan_poly(big ? 1.0f / ax : ax);
  float res = big ? PIO2_HI - (p - PIO2_LO) : p;
  return __builtin_copysignf(res, x);
}

/* atan(min/max) of the magnitudes, reflected into the octant of (x, y);
 * 0/0 and inf/inf are the special cases that need a value of t. */
CNST float atan2(float y, float x) {
  float ax = __builtin_fabsf(x), ay = __builtin_fabsf(y);
  int ybig = ay > ax;
  float mn = ybig ? ax : ay, mx = ybig ? ay : ax;
  float t = mn / mx;
  t = mx == 0.0f ? 0.0f : t;
  t = ax == INFINITY && ay == INFINITY ? 1.0f : t;
  float p = fm_atan_poly(t);
  float res = ybig ? PIO2_HI - (p - PIO2_LO) : p;
  res = as_int(x) < 0 ? PI_HI - (res - PI_LO) : res;
  res = __builtin_copysignf(res, y);
  return x != x || y != y ? x + y : res;
}

/* asin(s) for s in [0, 1/2], z = s^2. */
FI float fm_asin_poly(float s, float z) {
  float p = 0x1.5959aap-5f;
  p = p * z + 0x1.8c415ap-6f;
  p = p * z + 0x1.747b72p-5f;
  p = p * z + 0x1.330206p-4f;
  p = p * z + 0x1.5555c8p-3f;
  return s * z * p + s;
}

/* Above 1/2, asin(x) = pi/2 - 2 asin(sqrt((1 - x) / 2)); (1 - x) / 2 is exact
 * and beyond 1 it is negative, so sqrt gives the NaN. */
CNST float asin(float x) {
  float ax = __builtin_fabsf(x);
  int big = ax > 0.5f;
  float z = big ? (1.0f - ax) * 0.5f : ax * ax;
  float s = big ? __builtin_sqrtf(z) : ax;
  float p = fm_asin_poly(s, z);
  float res = big ? (PIO2_HI - 2.0f * p) + PIO2_LO : p;
  return __builtin_copysignf(res, x);
}

/* acos(x) = pi/2 - asin(x) in the middle, 2 asin(sqrt((1 - x) / 2)) near 1
 * and pi - that near -1. */
CNST float acos(float x) {
  float ax = __builtin_fabsf(x);
  int big = ax > 0.5f;
  float z = big ? (1.0f - ax) * 0.5f : ax * ax;
  float s = big ? __builtin_sqrtf(z) : ax;
  float p = fm_asin_poly(s, z);
  float mid = PIO2_HI - (__builtin_copysignf(p, x) - PIO2_LO);
  float res = x > 0.0f ? 2.0f * p : (PI_HI - 2.0f * p) + PI_LO;
  return big ? res : mid;
}

/* ---- hyperbolic functions ---- */

/* sinh(x) for |x| <= 1. */
FI float fm_sinh_poly(float x) {
  float x2 = x * x;
  float p = 0x1.76771ep-19f;
  p = p * x2 + 0x1.a01c22p-13f;
  p = p * x2 + 0x1.1110eap-7f;
  p = p * x2 + 0x1.555556p-3f;
  return x * x2 * p + x;
}

/* e^|x| / 2 without overflow before the result's: the scale is taken one
 * less. */
FI float fm_exp_half(float ax) {
  int k;
  float p = fm_exp_parts(fm_min(ax, 100.0f), &k);
  return fm_ldexp(p, k - 1);
}

/* Above 1, sinh = e^x/2 - 1/(2 e^x), a cancellation of 1.37 at most. */
CNST float sinh(float x) {
  float ax = __builtin_fabsf(x);
  float h = fm_exp_half(ax);
  float res = ax < 1.0f ? fm_sinh_poly(ax) : h - 0.25f / h;
  res = __builtin_copysignf(res, x);
  return x != x ? x : res;
}

CNST float cosh(float x) {
  float ax = __builtin_fabsf(x);
  float h = fm_exp_half(ax);
  float res = h + 0.25f / h;
  return x != x ? x : res;
}

/* tanh(x) for |x| <= 0.55. */
FI float fm_tanh_poly(float x) {
  float x2 = x * x;
  float p = -0x1.9a79bap-8f;
  p = p * x2 + 0x1.5918a4p-6f;
  p = p * x2 - 0x1.b92358p-5f;
  p = p * x2 + 0x1.110dp-3f;
  p = p * x2 - 0x1.55554ap-2f;
  return x * x2 * p + x;
}

/* Above 0.55, tanh = 1 - 2 / (e^2x + 1); from 2x = 40 on it rounds to 1. */
CNST float tanh(float x) {
  float ax = __builtin_fabsf(x);
  int k;
  float p = fm_exp_parts(fm_min(2.0f * ax, 40.0f), &k);
  float e = fm_ldexp(p, k);
  float res = ax < 0.55f ? fm_tanh_poly(ax) : 1.0f - 2.0f / (e + 1.0f);
  res = __builtin_copysignf(res, x);
  return x != x ? x : res;
}

/* ---- roots ---- */

/* |x| = 2^(3q + j) m with m in [1, 2): cbrt(m 2^j) from a polynomial for
 * cbrt(m) times cbrt(2^j), good to 2^-13, then one Newton step, then 2^q. */
CNST float cbrt(float x) {
  float ax = __builtin_fabsf(x);
  int sub = ax < 0x1p-126f;
  float as = sub ? ax * 0x1p24f : ax;
  int e = (as_int(as) >> 23) - 127;
  float m = as_float((as_int(as) & 0x007fffff) | 0x3f800000);
  int q = (e + 300) / 3 - 100, j = e - 3 * q;
  float y = 0x1.7a8d5ep-6f;
  y = y * m - 0x1.4dc31ep-3f;
  y = y * m + 0x1.2c9a46p-1f;
  y = y * m + 0x1.1b0ba8p-1f;
  y *= j == 0 ? 1.0f : j == 1 ? 0x1.428a3p+0f : 0x1.965feap+0f;
  float a = m * (float)(1 << j);
  float y2 = y * y;
  y = y - (y2 * y - a) / (3.0f * y2);
  float res = y * as_float((q - (sub ? 8 : 0) + 127) << 23);
  res = ax == 0.0f || ax == INFINITY || x != x ? ax : res;
  return __builtin_copysignf(res, x);
}

/* In double the squares are exact and the sum cannot overflow; an infinite
 * argument wins over a NaN. */
CNST float hypot(float x, float y) {
  double dx = x, dy = y;
  float res = (float)__builtin_sqrt(dx * dx + dy * dy);
  return __builtin_fabsf(x) == INFINITY || __builtin_fabsf(y) == INFINITY ? INFINITY : res;
}

/* ---- inverse hyperbolic functions, through log1p and log ---- */

/* asinh |x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), where the argument of
 * log1p keeps its digits for small x; from 2^28 on, where x^2 may overflow,
 * log 2|x|, taken as log1p(|x|) + ln 2 (1/|x| is below half an ulp), so that
 * one logarithm serves both. Below 2^-12, x itself. */
CNST float asinh(float x) {
  float ax = __builtin_fabsf(x), x2 = ax * ax;
  int big = !(ax < 0x1p28f);
  float u = big ? ax : ax + x2 / (1.0f + __builtin_sqrtf(1.0f + x2));
  float res = log1p(u) + (big ? 0x1.62e43p-1f : 0.0f);
  res = ax < 0x1p-12f ? ax : res;
  return __builtin_copysignf(res, x);
}

/* acosh x = log1p(t + sqrt(t (x + 1))) with t = x - 1, exact near 1; from
 * 2^28 on, log 2x as log1p(x) + ln 2. Below 1 (and NaN), NaN. */
CNST float acosh(float x) {
  float t = x - 1.0f;
  int big = !(x < 0x1p28f);
  float u = big ? x : t + __builtin_sqrtf(t * (x + 1.0f));
  float res = log1p(u) + (big ? 0x1.62e43p-1f : 0.0f);
  return x >= 1.0f ? res : NAN;
}

/* atanh |x| = log1p(2 |x| / (1 - |x|)) / 2: 1 and beyond give inf and NaN
 * through log1p. Below 2^-12, x itself. */
CNST float atanh(float x) {
  float ax = __builtin_fabsf(x);
  float res = 0.5f * log1p(2.0f * ax / (1.0f - ax));
  res = ax < 0x1p-12f ? ax : res;
  return __builtin_copysignf(res, x);
}

/* ---- the *pi functions ---- */

/* sin(pi f) for |f| <= 1/4: pi f is carried as f PI_HI plus f PI_LO, so
 * that the polynomial's leading term is pi itself, not its float. */
FI float fm_sinpi_poly(float f) {
  float f2 = f * f;
  float p = -0x1.2dbd92p-1f;
  p = p * f2 + 0x1.465fc4p+1f;
  p = p * f2 - 0x1.4abbbep+2f;
  float t = p * f2 + PI_LO;
  return f * PI_HI + f * t;
}
FI float fm_cospi_poly(float f) {
  float f2 = f * f;
  float p = 0x1.d684aap-3f;
  p = p * f2 - 0x1.55b7cep+0f;
  p = p * f2 + 0x1.03c1b8p+2f;
  p = p * f2 - 0x1.3bd3ccp+2f;
  return p * f2 + 1.0f;
}

/* |x| = n/2 + f with |f| <= 1/4, both exact: n = rint(2 |x|); from 2^23 on
 * every float is an integer (f = 0), from 2^24 on an even one (n = 0 mod 4),
 * which 2^24 stands for, so that 2 |x| cannot overflow. Returns n mod 4,
 * taken in float where n is exact, so that no conversion sees a value out
 * of range (NaN gives 0; the callers return NaN for it and infinities). */
FI int fm_pi_reduce(float ax, float *f) {
  ax = fm_min(ax, 0x1p24f);
  float n = __builtin_rintf(2.0f * ax);
  *f = ax - 0.5f * n;
  float q = n - 4.0f * __builtin_floorf(n * 0.25f);
  return (int)(q == q ? q : 0.0f);
}

/* Zeros are +0 before the sign of x is applied: sinpi(n) is +0 for n > 0,
 * -0 for n < 0 (the result is odd in x). */
CNST float sinpi(float x) {
  float ax = __builtin_fabsf(x), f;
  int n = fm_pi_reduce(ax, &f);
  float s = fm_sinpi_poly(f), c = fm_cospi_poly(f);
  float v = n & 1 ? c : s;
  v = n & 2 ? -v : v;
  v = v == 0.0f ? 0.0f : v;
  v = as_int(x) < 0 ? -v : v;
  return ax < INFINITY ? v : NAN;
}

/* cospi is even; its zeros (at n + 1/2) are +0. */
CNST float cospi(float x) {
  float ax = __builtin_fabsf(x), f;
  int n = fm_pi_reduce(ax, &f);
  float s = fm_sinpi_poly(f), c = fm_cospi_poly(f);
  float v = n & 1 ? s : c;
  v = (n + 1) & 2 ? -v : v;
  v = v == 0.0f ? 0.0f : v;
  return ax < INFINITY ? v : NAN;
}

/* tanpi = sin / cos of the remainder, or -cos / sin in odd quadrants; at
 * the exact multiples of 1/2 the spec's values: +0 at even integers, -0 at
 * odd ones, +inf at n + 1/2 for even n, -inf for odd n (for x >= 0, and
 * mirrored: tanpi is odd). */
CNST float tanpi(float x) {
  float ax = __builtin_fabsf(x), f;
  int n = fm_pi_reduce(ax, &f);
  float s = fm_sinpi_poly(f), c = fm_cospi_poly(f);
  int odd = n & 1;
  float v = (odd ? -c : s) / (odd ? s : c);
  float exact = as_float((odd ? 0x7f800000u : 0u) | ((uint)(n & 2) << 30));
  v = f == 0.0f ? exact : v;
  v = as_int(x) < 0 ? -v : v;
  return ax < INFINITY ? v : NAN;
}

/* asin, acos, atan in units of pi: 1/pi in two parts, so that the product
 * is rounded once (up to 2 ulp of the function and half an ulp here, 5
 * allowed). */
#define INV_PI_HI 0x1.45f306p-2f
#define INV_PI_LO 0x1.b93910p-27f
FI float fm_div_pi(float a) { return a * INV_PI_HI + a * INV_PI_LO; }
CNST float asinpi(float x) { return fm_div_pi(asin(x)); }
CNST float acospi(float x) { return fm_div_pi(acos(x)); }
CNST float atanpi(float x) { return fm_div_pi(atan(x)); }

/* atan2 in units of pi, the octant offsets (1/2, 1) exact: atan2pi(+-0, -0)
 * is +-1 and atan2pi(+-inf, -inf) +-3/4 on the nose. */
CNST float atan2pi(float y, float x) {
  float ax = __builtin_fabsf(x), ay = __builtin_fabsf(y);
  int ybig = ay > ax;
  float mn = ybig ? ax : ay, mx = ybig ? ay : ax;
  float t = mn / mx;
  t = mx == 0.0f ? 0.0f : t;
  t = ax == INFINITY && ay == INFINITY ? 1.0f : t;
  float p = fm_div_pi(fm_atan_poly(t));
  float res = ybig ? 0.5f - p : p;
  res = as_int(x) < 0 ? 1.0f - res : res;
  res = __builtin_copysignf(res, y);
  return x != x || y != y ? x + y : res;
}

/* ---- vector widths ---- */
VEC_UNARY(float, exp, float) VEC_UNARY(float, exp2, float) VEC_UNARY(float, exp10, float)
VEC_UNARY(float, expm1, float) VEC_UNARY(float, log, float) VEC_UNARY(float, log2, float)
VEC_UNARY(float, log10, float) VEC_UNARY(float, log1p, float) VEC_UNARY(float, sin, float)
VEC_UNARY(float, cos, float) VEC_UNARY(float, tan, float) VEC_UNARY(float, atan, float)
VEC_UNARY(float, asin, float) VEC_UNARY(float, acos, float) VEC_UNARY(float, sinh, float)
VEC_UNARY(float, cosh, float) VEC_UNARY(float, tanh, float) VEC_UNARY(float, cbrt, float)
VEC_BINARY(float, pow, float, float) VEC_BINARY(float, powr, float, float)
VEC_BINARY(float, pown, float, int) VEC_BINARY(float, rootn, float, int)
VEC_BINARY(float, atan2, float, float) VEC_BINARY(float, hypot, float, float)
VEC_UNARY(float, asinh, float) VEC_UNARY(float, acosh, float) VEC_UNARY(float, atanh, float)
VEC_UNARY(float, sinpi, float) VEC_UNARY(float, cospi, float) VEC_UNARY(float, tanpi, float)
VEC_UNARY(float, asinpi, float) VEC_UNARY(float, acospi, float) VEC_UNARY(float, atanpi, float)
VEC_BINARY(float, atan2pi, float, float)
OUTPTR_ALL(float, sincos, float, float)
