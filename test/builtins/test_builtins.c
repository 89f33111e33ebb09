/* Tests of the OpenCL C builtin library (compiler/builtins/). cltests.cl is
 * compiled like user code, linked with the library, and built into
 * cltests.so next to this program; this program dlopens it, supplies the
 * __aquila_* work-item intrinsics (exported with -rdynamic), calls the test
 * functions and checks the results against host references: long double
 * libm within the OpenCL 1.2 ULP limits for math, exact 128-bit arithmetic
 * for integers, the host FPU's rounding modes for conversions, and a table
 * of all half values for vload_half/vstore_half. */
#include <dlfcn.h>
#include <fenv.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "funcs.h"
#include "testlib.h"

#define PI_L 3.141592653589793238462643383279502884L

/* ---- work-item intrinsics, as the work-group pass would provide them ---- */
static unsigned wi_dim;
static size_t wi_global[3], wi_local[3], wi_enq[3], wi_groups[3], wi_group[3], wi_lid[3],
    wi_offset[3];
static int wi_bad_dim;
static unsigned barrier_flags[8];
static int barrier_count;

#define INTRINSIC(name, arr)                                                   \
  size_t __aquila_##name(unsigned d) {                                        \
    if (d >= wi_dim)                                                          \
      wi_bad_dim = 1;                                                         \
    return arr[d < 3 ? d : 0];                                                \
  }
unsigned __aquila_work_dim(void) { return wi_dim; }
INTRINSIC(global_size, wi_global)
INTRINSIC(local_size, wi_local)
INTRINSIC(enqueued_local_size, wi_enq)
INTRINSIC(num_groups, wi_groups)
INTRINSIC(group_id, wi_group)
INTRINSIC(local_id, wi_lid)
INTRINSIC(global_offset, wi_offset)
void __aquila_barrier(unsigned flags) {
  if (barrier_count < 8)
    barrier_flags[barrier_count] = flags;
  barrier_count++;
}


/* ---- deterministic random numbers ---- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd64(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static double rnd_unit(void) { return (rnd64() >> 11) * 0x1p-53; }
static double rnd_range(double lo, double hi) { return lo + (hi - lo) * rnd_unit(); }

/* ---- ULP measure ---- */
/* Error of got against the exact ref, in units of the last place of the
 * format (mant bits, smallest exponent emin). A result of infinity is
 * accepted where the exact value lies beyond the largest finite number. */
static double ulp_err(long double got, long double ref, int mant, int emin, long double maxv) {
  if (isnan(ref))
    return isnan(got) ? 0 : INFINITY;
  if (isnan(got))
    return INFINITY;
  if (got == ref)
    return 0;
  if (isinf(ref))
    return INFINITY;
  if (isinf(got))
    return fabsl(ref) > maxv && signbit(got) == signbit(ref) ? 0 : INFINITY;
  int e;
  frexpl(ref, &e);
  int ue = e - mant;
  if (ue < emin)
    ue = emin;
  return (double)(fabsl(got - ref) / ldexpl(1, ue));
}
static double ulp_f(float got, long double ref) { return ulp_err(got, ref, 24, -149, FLT_MAX); }
static double ulp_d(double got, long double ref) { return ulp_err(got, ref, 53, -1074, DBL_MAX); }
static int same_f(float a, float b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, 4) == 0; }
static int same_d(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, 8) == 0; }

/* ---- references for functions libm lacks ---- */
static long double ref_sinpi(long double x) {
  if (!isfinite(x))
    return NAN;
  long double r = fmodl(fabsl(x), 2), s = signbit(x) ? -1 : 1; /* sinpi(-0) is -0 */
  if (r > 1) {
    r -= 1;
    s = -s;
  }
  if (r > 0.5L)
    r = 1 - r;
  return s * sinl(PI_L * r);
}
static long double ref_cospi(long double x) {
  if (!isfinite(x))
    return NAN;
  long double r = fmodl(fabsl(x), 2);
  if (r > 1)
    r = 2 - r;
  return r > 0.5L ? -sinl(PI_L * (r - 0.5L)) : sinl(PI_L * (0.5L - r));
}
static long double ref_tanpi(long double x) { return ref_sinpi(x) / ref_cospi(x); }
static long double ref_powr(long double x, long double y) {
  if (x < 0 || isnan(x) || isnan(y) || (x == 0 && y == 0) || (isinf(x) && y == 0) ||
      (x == 1 && isinf(y)))
    return NAN;
  return powl(fabsl(x), y); /* -0 is a zero: powr(-0, -1) is +inf (spec 7.5.1) */
}
static long double ref_maxmag(long double x, long double y) {
  return fabsl(x) > fabsl(y) ? x : fabsl(y) > fabsl(x) ? y : fmaxl(x, y);
}
static long double ref_minmag(long double x, long double y) {
  return fabsl(x) < fabsl(y) ? x : fabsl(y) < fabsl(x) ? y : fminl(x, y);
}

/* ---- work-items, barrier ---- */
static void test_workitem(void) {
  void (*f)(uint64_t *) = FN(void (*)(uint64_t *), "t_workitem");
  uint64_t out[64];
  wi_dim = 2;
  size_t g[] = {100, 50, 1}, l[] = {4, 6, 1}, e[] = {4, 8, 1}, n[] = {25, 7, 1}, grp[] = {3, 5, 0},
         lid[] = {1, 2, 0}, off[] = {10, 20, 0};
  memcpy(wi_global, g, sizeof g);
  memcpy(wi_local, l, sizeof l);
  memcpy(wi_enq, e, sizeof e);
  memcpy(wi_groups, n, sizeof n);
  memcpy(wi_group, grp, sizeof grp);
  memcpy(wi_lid, lid, sizeof lid);
  memcpy(wi_offset, off, sizeof off);
  wi_bad_dim = 0;
  f(out);
  CHECK_EQ_INT(out[0], 2);
  /* per dimension: global id, local id, group id, global size, local size,
   * groups, offset */
  uint64_t want[4][7] = {{3 * 4 + 1 + 10, 1, 3, 100, 4, 25, 10},
                         {5 * 8 + 2 + 20, 2, 5, 50, 6, 7, 20},
                         {0, 0, 0, 1, 1, 1, 0},
                         {0, 0, 0, 1, 1, 1, 0}};
  for (int d = 0; d < 4; d++)
    for (int k = 0; k < 7; k++)
      CHECK_EQ_INT(out[1 + 7 * d + k], want[d][k]);
  CHECK(!wi_bad_dim);
}

static void test_barrier(void) {
  void (*f)(int *) = FN(void (*)(int *), "t_barrier");
  int p[2] = {0, 0};
  barrier_count = 0;
  f(p);
  CHECK_EQ_INT(barrier_count, 2);
  CHECK_EQ_INT(barrier_flags[0], 1);
  CHECK_EQ_INT(barrier_flags[1], 3);
  CHECK(p[0] == 1 && p[1] == 2);
}

/* ---- math ---- */
#define NM 2064 /* a multiple of 16 and of 3 */
static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5,
                                  -0.5, 2.0, 1e-30, -1e30, 3.0, -2.5};
#define NSPEC (int)(sizeof specials / sizeof specials[0])

struct ufunc {
  const char *name;
  double ulp_f, ulp_d, lo, hi;
  long double (*ref)(long double);
};
#define REF_U(N, UF, UD, LO, HI, EXPR) static long double refu_##N(long double x) { return EXPR; }
UNARY_FUNCS(REF_U)
#define ENTRY_U(N, UF, UD, LO, HI, EXPR) {#N, UF, UD, LO, HI, refu_##N},
static const struct ufunc ufuncs[] = {UNARY_FUNCS(ENTRY_U)};

struct bfunc {
  const char *name;
  double ulp_f, ulp_d, xlo, xhi, ylo, yhi;
  long double (*ref)(long double, long double);
};
#define REF_B(N, UF, UD, XL, XH, YL, YH, EXPR)                                 \
  static long double refb_##N(long double x, long double y) { return EXPR; }
BINARY_FUNCS(REF_B)
#define ENTRY_B(N, UF, UD, XL, XH, YL, YH, EXPR) {#N, UF, UD, XL, XH, YL, YH, refb_##N},
static const struct bfunc bfuncs[] = {BINARY_FUNCS(ENTRY_B)};

/* The worst error per function is reported; a case fails if any function
 * exceeds its limit or a vector overload disagrees with the scalar one. */
#define MATH_TEST(T, S, ULP, SAME)                                             \
  static void test_math_##S(void) {                                           \
    void (*u)(int, T *, const T *, int) = FN(void (*)(int, T *, const T *, int), "t_unary_" #S); \
    void (*uv)(int, T *, const T *, int) =                                    \
        FN(void (*)(int, T *, const T *, int), "t_unary_v_" #S);              \
    void (*b)(int, T *, const T *, const T *, int) =                          \
        FN(void (*)(int, T *, const T *, const T *, int), "t_binary_" #S);    \
    void (*bv)(int, T *, const T *, const T *, int) =                         \
        FN(void (*)(int, T *, const T *, const T *, int), "t_binary_v_" #S);  \
    static T x[NM], y[NM], out[NM], vout[2 * NM];                             \
    for (int f = 0; f < U_COUNT; f++) {                                       \
      const struct ufunc *uf = &ufuncs[f];                                    \
      double lim = sizeof(T) == 4 ? uf->ulp_f : uf->ulp_d;                    \
      for (int i = 0; i < NM; i++)                                            \
        x[i] = i < NSPEC ? (T)specials[i] : (T)rnd_range(uf->lo, uf->hi);     \
      u(f, out, x, NM);                                                       \
      uv(f, vout, x, NM);                                                     \
      double worst = 0;                                                       \
      int wi = 0, vbad = -1;                                                  \
      for (int i = 0; i < NM; i++) {                                          \
        double e = ULP(out[i], uf->ref(x[i]));                                \
        if (!(e <= worst)) {                                                  \
          worst = e;                                                          \
          wi = i;                                                             \
        }                                                                     \
        if (!SAME(vout[i], out[i]) || !SAME(vout[NM + i], out[i]))            \
          vbad = i;                                                           \
      }                                                                       \
      if (!(worst <= lim)) {                                                  \
        printf("  %s(%s %.17g) = %.17g, want %.17Lg: %g ulp > %g\n", uf->name, #T, \
               (double)x[wi], (double)out[wi], uf->ref(x[wi]), worst, lim);   \
        check_case_failed = 1;                                                \
      }                                                                       \
      if (vbad >= 0) {                                                        \
        printf("  %s(%s vector) differs from scalar at %.17g\n", uf->name, #T, (double)x[vbad]); \
        check_case_failed = 1;                                                \
      }                                                                       \
    }                                                                         \
    for (int f = 0; f < B_COUNT; f++) {                                       \
      const struct bfunc *bf = &bfuncs[f];                                    \
      double lim = sizeof(T) == 4 ? bf->ulp_f : bf->ulp_d;                    \
      for (int i = 0; i < NM; i++) {                                          \
        if (i < NSPEC * NSPEC) {                                              \
          x[i] = (T)specials[i / NSPEC];                                      \
          y[i] = (T)specials[i % NSPEC];                                      \
        } else {                                                              \
          x[i] = (T)rnd_range(bf->xlo, bf->xhi);                              \
          y[i] = (T)rnd_range(bf->ylo, bf->yhi);                              \
        }                                                                     \
      }                                                                       \
      b(f, out, x, y, NM);                                                    \
      bv(f, vout, x, y, NM);                                                  \
      double worst = 0;                                                       \
      int wi = 0, vbad = -1;                                                  \
      for (int i = 0; i < NM; i++) {                                          \
        double e = ULP(out[i], bf->ref(x[i], y[i]));                          \
        if (!(e <= worst)) {                                                  \
          worst = e;                                                          \
          wi = i;                                                             \
        }                                                                     \
        if (!SAME(vout[i], out[i]) || !SAME(vout[NM + i], out[i]))            \
          vbad = i;                                                           \
      }                                                                       \
      if (!(worst <= lim)) {                                                  \
        printf("  %s(%s %.17g, %.17g) = %.17g, want %.17Lg: %g ulp > %g\n", bf->name, #T, \
               (double)x[wi], (double)y[wi], (double)out[wi], bf->ref(x[wi], y[wi]), worst, lim); \
        check_case_failed = 1;                                                \
      }                                                                       \
      if (vbad >= 0) {                                                        \
        printf("  %s(%s vector) differs from scalar\n", bf->name, #T);        \
        check_case_failed = 1;                                                \
      }                                                                       \
    }                                                                         \
  }
MATH_TEST(float, f, ulp_f, same_f)
MATH_TEST(double, d, ulp_d, same_d)

/* The float functions of compiler/builtins/fmath.cl over the whole float
 * range: every bit pattern with a step of 32771 (about 2^17 arguments of
 * every size and sign) and the special values, against the long double
 * reference, within the ULP limit, and with zeros of the reference's sign.
 * Two-argument functions take random bit patterns, half of them with
 * moderate exponents. This is the library as built for baseline x86-64
 * (multiply-adds not fused); test-math-device checks the code kernels run. */
static const char *const sweep_names[] = {
    "sin",   "cos",   "tan",   "asin",   "acos",   "atan",    "sinh",  "cosh",  "tanh",
    "exp",   "exp2",  "exp10", "expm1",  "log",    "log2",    "log10", "log1p", "cbrt",
    "sqrt",  "rsqrt", "asinh", "acosh",  "atanh",  "sinpi",   "cospi", "tanpi", "asinpi",
    "acospi", "atanpi", "pow", "powr",   "atan2",  "atan2pi", "hypot"};
static int sweep_wants(const char *name) {
  for (size_t i = 0; i < sizeof sweep_names / sizeof sweep_names[0]; i++)
    if (!strcmp(name, sweep_names[i])) return 1;
  return 0;
}
static int zero_sign_differs(float got, long double ref) {
  return got == 0 && ref == 0 && !signbit(got) != !signbit(ref);
}
static void test_math_sweep_f(void) {
  void (*u)(int, float *, const float *, int) =
      FN(void (*)(int, float *, const float *, int), "t_unary_f");
  void (*b)(int, float *, const float *, const float *, int) =
      FN(void (*)(int, float *, const float *, const float *, int), "t_binary_f");
  enum { N = 131072 + 2064 };
  static float x[N], y[N], out[N];
  int n = 0;
  for (int i = 0; i < NSPEC; i++)
    x[n++] = (float)specials[i];
  for (uint64_t bits = 0; bits < (1ull << 32) && n < N; bits += 32771) {
    uint32_t b32 = (uint32_t)bits;
    memcpy(&x[n++], &b32, 4);
  }
  for (int f = 0; f < U_COUNT; f++) {
    const struct ufunc *uf = &ufuncs[f];
    if (!sweep_wants(uf->name)) continue;
    u(f, out, x, n);
    double worst = 0;
    int wi = 0, zs = -1;
    for (int i = 0; i < n; i++) {
      long double ref = uf->ref(x[i]);
      double e = ulp_f(out[i], ref);
      if (!(e <= worst)) {
        worst = e;
        wi = i;
      }
      if (zero_sign_differs(out[i], ref)) zs = i;
    }
    if (!(worst <= uf->ulp_f)) {
      printf("  %s(%a) = %a, want %.17Lg: %g ulp > %g\n", uf->name, x[wi], out[wi],
             uf->ref(x[wi]), worst, uf->ulp_f);
      check_case_failed = 1;
    }
    if (zs >= 0) {
      printf("  %s(%a) = %a: the zero's sign is wrong\n", uf->name, x[zs], out[zs]);
      check_case_failed = 1;
    }
  }
  for (int i = 0; i < n; i++) {
    uint32_t bx = (uint32_t)rnd64(), by = (uint32_t)rnd64();
    if (i & 1) bx = (bx & 0x807fffffu) | ((uint32_t)(127 - 20 + rnd64() % 40) << 23);
    if (i & 2) by = (by & 0x807fffffu) | ((uint32_t)(127 - 8 + rnd64() % 14) << 23);
    if (i < NSPEC * NSPEC) {
      x[i] = (float)specials[i / NSPEC];
      y[i] = (float)specials[i % NSPEC];
    } else {
      memcpy(&x[i], &bx, 4);
      memcpy(&y[i], &by, 4);
    }
  }
  for (int f = 0; f < B_COUNT; f++) {
    const struct bfunc *bf = &bfuncs[f];
    if (!sweep_wants(bf->name)) continue;
    b(f, out, x, y, n);
    double worst = 0;
    int wi = 0, zs = -1;
    for (int i = 0; i < n; i++) {
      long double ref = bf->ref(x[i], y[i]);
      double e = ulp_f(out[i], ref);
      if (!(e <= worst)) {
        worst = e;
        wi = i;
      }
      if (zero_sign_differs(out[i], ref)) zs = i;
    }
    if (!(worst <= bf->ulp_f)) {
      printf("  %s(%a, %a) = %a, want %.17Lg: %g ulp > %g\n", bf->name, x[wi], y[wi], out[wi],
             bf->ref(x[wi], y[wi]), worst, bf->ulp_f);
      check_case_failed = 1;
    }
    if (zs >= 0) {
      printf("  %s(%a, %a) = %a: the zero's sign is wrong\n", bf->name, x[zs], y[zs], out[zs]);
      check_case_failed = 1;
    }
  }
}

/* frexp, ldexp, modf, fract, sincos, ilogb, pown, rootn, remquo */
#define MISC_TEST(T, S, ULP, SAME, BELOW1)                                     \
  static void test_math_misc_##S(void) {                                      \
    void (*f)(T *, int *, const T *, int) = FN(void (*)(T *, int *, const T *, int), "t_misc_" #S); \
    enum { N = 512 };                                                         \
    static T in[N], out[10 * N];                                              \
    static int iout[4 * N];                                                   \
    for (int i = 0; i < N; i++)                                               \
      in[i] = i < NSPEC ? (T)specials[i] : (T)rnd_range(-1000, 1000);         \
    in[NSPEC] = (T)-1e-7;                                                     \
    in[NSPEC + 1] = (T)-0x1.ffep-1063; /* a subnormal double (rootn) */    \
    f(out, iout, in, N);                                                      \
    for (int i = 0; i < N; i++) {                                             \
      T x = in[i], *o = out + 10 * i;                                         \
      int *io = iout + 4 * i, e;                                              \
      T m = (T)frexpl(x, &e);                                                 \
      CHECK(SAME(o[0], m) && (!isfinite(x) || x == 0 || io[0] == e));         \
      CHECK(SAME(o[1], (T)ldexpl(x, 7)));                                     \
      long double ip = truncl(x);                                             \
      CHECK(SAME(o[2], (T)copysignl(isinf(x) ? 0 : x - ip, x)) && SAME(o[3], (T)ip)); \
      long double fl = floorl(x);                                             \
      T fr = isnan(x) ? x : isinf(x) ? (T)copysignl(0, x) : (T)fminl(x - fl, BELOW1); \
      CHECK(SAME(o[4], fr) && SAME(o[5], (T)fl));                             \
      CHECK(ULP(o[6], sinl(x)) <= 4 && ULP(o[7], cosl(x)) <= 4);              \
      int lg = isnan(x) ? INT_MAX : x == 0 ? INT_MIN : isinf(x) ? INT_MAX : ilogbl(x); \
      CHECK_EQ_INT(io[1], lg);                                                \
      CHECK(ULP(o[8], powl(x, 3)) <= 16);                                     \
      CHECK(ULP(o[9], cbrtl(x)) <= 16);                                       \
      if (isfinite(x)) {                                                      \
        CHECK_EQ_INT(io[2], 1); /* remquo's remainder is remainder() */       \
        /* 7 low bits of the quotient, as OpenCL asks (glibc keeps 3) */     \
        long double qq = fabsl(((long double)x - remainderl(x, 3)) / 3);      \
        CHECK(qq > 0x1p60 || (abs(io[3]) & 127) == ((long long)qq & 127));    \
        CHECK(io[3] == 0 || (io[3] < 0) == (x < 0));                          \
      }                                                                       \
    }                                                                         \
    void (*op)(T *, int *, T *, int *, const T *) =                           \
        FN(void (*)(T *, int *, T *, int *, const T *), "t_outptr_" #S);      \
    T v[4] = {(T)1.5, (T)-3.25, (T)1000, (T)0.1}, lo[4], pout[20];            \
    int ie[4], li[4];                                                         \
    op(pout, ie, lo, li, v);                                                  \
    for (int i = 0; i < 4; i++) {                                             \
      int e2;                                                                 \
      CHECK(SAME(pout[i], (T)frexpl(v[i], &e2)) && ie[i] == e2);              \
      CHECK(SAME(pout[4 + i], (T)truncl(v[i])) && SAME(pout[8 + i], (T)(v[i] - truncl(v[i])))); \
    }                                                                         \
    for (int i = 0; i < 3; i++) {                                             \
      int e2;                                                                 \
      CHECK(ULP(pout[12 + i], sinl(v[i])) <= 4 && ULP(lo[i], cosl(v[i])) <= 4); \
      CHECK(SAME(pout[16 + i], (T)frexpl(v[i], &e2)) && li[i] == e2);         \
    }                                                                         \
    /* fma: correctly rounded, checked where double rounding cannot hide it */ \
    void (*fm)(T *, const T *, const T *, const T *, int) =                   \
        FN(void (*)(T *, const T *, const T *, const T *, int), "t_fma_" #S); \
    T a[3] = {(T)1 + (T)ldexp(1, -20), (T)0.1, (T)3}, bb[3] = {(T)1 - (T)ldexp(1, -20), (T)10, (T)INFINITY}, \
      c[3] = {(T)-1, (T)-1, (T)1}, r[3];                                      \
    fm(r, a, bb, c, 3);                                                       \
    CHECK(SAME(r[0], (T)-ldexp(1, -40)));                                     \
    CHECK(SAME(r[1], (T)fmal(a[1], bb[1], c[1])));                            \
    CHECK(isinf(r[2]));                                                       \
  }
MISC_TEST(float, f, ulp_f, same_f, 0x1.fffffep-1L)
MISC_TEST(double, d, ulp_d, same_d, 0x1.fffffffffffffp-1L)

static void test_native(void) {
  void (*f)(float *, const float *, int) = FN(void (*)(float *, const float *, int), "t_native");
  float in[64], out[256];
  for (int i = 0; i < 64; i++)
    in[i] = (float)rnd_range(0.01, 10);
  f(out, in, 64);
  for (int i = 0; i < 64; i++) {
    CHECK(ulp_f(out[4 * i], sinl(in[i])) <= 8192);
    CHECK(ulp_f(out[4 * i + 1], expl(in[i])) <= 8192);
    CHECK(ulp_f(out[4 * i + 2], in[i] / 3.0L) <= 8192);
    CHECK(ulp_f(out[4 * i + 3], 1 / sqrtl(in[i])) <= 8192);
  }
  void (*n)(uint32_t *) = FN(void (*)(uint32_t *), "t_nan");
  uint32_t b[3];
  n(b);
  for (int i = 0; i < 3; i++)
    CHECK((b[i] & 0x7f800000u) == 0x7f800000u && (b[i] & 0x7fffffu) != 0);
  CHECK((b[0] & 0x3fffff) == 5 && (b[2] & 0x3fffff) == 4);
}

/* ---- integer ---- */
typedef __int128 i128;
typedef unsigned __int128 u128;
struct itype {
  const char *name;
  int bits, sgn;
};
static const struct itype itypes[] = {{"char", 8, 1},  {"uchar", 8, 0},  {"short", 16, 1},
                                      {"ushort", 16, 0}, {"int", 32, 1}, {"uint", 32, 0},
                                      {"long", 64, 1},  {"ulong", 64, 0}};
static i128 t_min(const struct itype *t) { return t->sgn ? -((i128)1 << (t->bits - 1)) : 0; }
static i128 t_max(const struct itype *t) {
  return t->sgn ? ((i128)1 << (t->bits - 1)) - 1 : ((i128)1 << t->bits) - 1;
}
static i128 clampi(i128 v, const struct itype *t) {
  return v < t_min(t) ? t_min(t) : v > t_max(t) ? t_max(t) : v;
}
static u128 bits_of(i128 v, int bits) { return (u128)v & (((u128)1 << bits) - 1); }
static i128 load_i(const void *p, int i, const struct itype *t) {
  switch (t->bits) {
  case 8: return t->sgn ? (i128)((const int8_t *)p)[i] : (i128)((const uint8_t *)p)[i];
  case 16: return t->sgn ? (i128)((const int16_t *)p)[i] : (i128)((const uint16_t *)p)[i];
  case 32: return t->sgn ? (i128)((const int32_t *)p)[i] : (i128)((const uint32_t *)p)[i];
  default: return t->sgn ? (i128)((const int64_t *)p)[i] : (i128)((const uint64_t *)p)[i];
  }
}
static void store_i(void *p, int i, const struct itype *t, u128 v) {
  switch (t->bits) {
  case 8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case 16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case 32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  default: ((uint64_t *)p)[i] = (uint64_t)v; break;
  }
}
/* high half of x*y: exact in 128 bits except the unsigned 64-bit product,
 * which takes the unsigned type. */
static i128 mulhi_ref(i128 x, i128 y, const struct itype *t) {
  if (t->bits == 64 && !t->sgn)
    return (i128)(((u128)x * (u128)y) >> 64);
  return (x * y) >> t->bits;
}
static u128 int_ref(int op, i128 x, i128 y, i128 z, const struct itype *t) {
  int B = t->bits;
  switch (op) {
  case I_add_sat: return bits_of(clampi(x + y, t), B);
  case I_sub_sat: return bits_of(clampi(x - y, t), B);
  case I_hadd: return bits_of((x + y) >> 1, B);
  case I_rhadd: return bits_of((x + y + 1) >> 1, B);
  case I_abs_diff: return bits_of(x > y ? x - y : y - x, B);
  case I_mul_hi: return bits_of(mulhi_ref(x, y, t), B);
  case I_rotate: {
    u128 u = bits_of(x, B);
    int s = (int)(bits_of(y, B) % B);
    return bits_of((i128)((u << s) | (u >> (B - s))), B);
  }
  case I_max: return bits_of(x > y ? x : y, B);
  case I_min: return bits_of(x < y ? x : y, B);
  case I_mad_hi: return bits_of(mulhi_ref(x, y, t) + z, B);
  case I_mad_sat:
    if (B == 64 && !t->sgn) {
      u128 r = (u128)x * (u128)y + (u128)z;
      return r > (u128)t_max(t) ? bits_of(t_max(t), B) : bits_of((i128)r, B);
    }
    return bits_of(clampi(x * y + z, t), B);
  case I_clamp: {
    i128 lo = y < z ? y : z, hi = y < z ? z : y;
    return bits_of(x < lo ? lo : x > hi ? hi : x, B);
  }
  case I_clz: {
    u128 u = bits_of(x, B);
    int n = 0;
    for (int k = B - 1; k >= 0 && !((u >> k) & 1); k--)
      n++;
    return (u128)n;
  }
  case I_popcount: {
    u128 u = bits_of(x, B);
    int n = 0;
    for (int k = 0; k < B; k++)
      n += (int)((u >> k) & 1);
    return (u128)n;
  }
  case I_abs: return bits_of(x < 0 ? -x : x, B);
  }
  return 0;
}
static const char *int_op_names[] = {
#define NAME_I(N) #N,
    INT_OPS(NAME_I)};

static void test_integer(void) {
  enum { N = 768 }; /* a multiple of 16 and of 3 */
  static uint64_t a[N], b[N], c[N], out[2 * N], vout[2 * N];
  for (int ti = 0; ti < 8; ti++) {
    const struct itype *t = &itypes[ti];
    char name[32];
    snprintf(name, sizeof name, "t_int_%s", t->name);
    void (*f)(int, void *, const void *, const void *, const void *, int) =
        FN(void (*)(int, void *, const void *, const void *, const void *, int), name);
    snprintf(name, sizeof name, "t_int_v_%s", t->name);
    void (*fv)(int, void *, const void *, const void *, const void *, int) =
        FN(void (*)(int, void *, const void *, const void *, const void *, int), name);
    i128 edges[] = {0, 1, -1, t_min(t), t_max(t), t_min(t) + 1, t_max(t) - 1, 2, 3};
    for (int i = 0; i < N; i++) {
      u128 va = i < 81 ? (u128)edges[i / 9] : (u128)rnd64();
      u128 vb = i < 81 ? (u128)edges[i % 9] : (u128)rnd64();
      u128 vc = i < 81 ? (u128)edges[(i * 7) % 9] : (u128)rnd64();
      /* small values now and then, where hadd/mul_hi/clz differ most */
      if (i >= 81 && i % 4 == 0)
        va >>= (rnd64() % t->bits);
      store_i(a, i, t, va);
      store_i(b, i, t, vb);
      store_i(c, i, t, vc);
    }
    for (int op = 0; op < I_COUNT; op++) {
      f(op, out, a, b, c, N);
      fv(op, vout, a, b, c, N);
      int bad = 0;
      for (int i = 0; i < N && bad < 3; i++) {
        i128 x = load_i(a, i, t), y = load_i(b, i, t), z = load_i(c, i, t);
        u128 want = int_ref(op, x, y, z, t);
        u128 got = bits_of(load_i(out, i, t), t->bits);
        u128 gv = bits_of(load_i(vout, i, t), t->bits), g3 = bits_of(load_i(vout, N + i, t), t->bits);
        if (got != want || gv != got || g3 != got) {
          printf("  %s(%s %lld, %lld, %lld): got %llx (vectors %llx %llx), want %llx\n",
                 int_op_names[op], t->name, (long long)x, (long long)y, (long long)z,
                 (unsigned long long)got, (unsigned long long)gv, (unsigned long long)g3,
                 (unsigned long long)want);
          check_case_failed = 1;
          bad++;
        }
      }
    }
  }
  void (*u)(int64_t *) = FN(void (*)(int64_t *), "t_upsample");
  int64_t r[6];
  u(r);
  CHECK_EQ_INT(r[0], (int16_t)0xfe34);
  CHECK_EQ_INT(r[1], 0xfedcba98u);
  CHECK_EQ_INT(r[2], (int64_t)(((uint64_t)-5 << 32) | 7));
  CHECK_EQ_INT(r[3], (int32_t)0xffff0004);
  CHECK_EQ_INT(r[4], -3000000);
  CHECK_EQ_INT(r[5], 3000005);
}

/* ---- common, geometric, relational ---- */
static void test_common(void) {
  void (*f)(float *) = FN(void (*)(float *), "t_common");
  float o[24];
  f(o);
  float want[20] = {-1, 0.25f, 1, -0.0f, -0.5f, 0.625f, 2, 0.5f, 0, 0, 1, 0,
                    0, 0.25f * 0.25f * (3 - 2 * 0.25f), 1, 0, -1, 1, 1, -0.0f};
  for (int i = 0; i < 20; i++)
    CHECK(fabsf(o[i] - want[i]) <= 1e-6f && signbit(o[i]) == signbit(want[i]));
  CHECK(fabsf(o[20] - 180) < 1e-4f);
  CHECK(fabsf(o[21] - (float)M_PI) < 1e-6f);
  CHECK(o[22] == 0);
  CHECK(o[23] == 2);
}

static void test_geometric(void) {
  void (*f)(float *, double *) = FN(void (*)(float *, double *), "t_geometric");
  float o[14];
  double d[4];
  f(o, d);
  CHECK(o[0] == -1 + 1 + 6 + 4);
  /* (1,2,3) x (-1,0.5,2) */
  CHECK(o[1] == 2 * 2 - 3 * 0.5f && o[2] == 3 * -1 - 1 * 2 && o[3] == 1 * 0.5f - 2 * -1 && o[4] == 0);
  CHECK(ulp_f(o[5], sqrtl(30)) <= 3);
  CHECK(ulp_f(o[6], sqrtl(4 + 2.25L + 1 + 9)) <= 3);
  CHECK(fabsf(o[7] - 0.6f) <= 1e-7f && fabsf(o[8] - 0.8f) <= 1e-7f);
  CHECK(ulp_f(o[9], 5e30L) <= 3);
  CHECK(ulp_f(o[10], 5e-30L) <= 3);
  CHECK(fabsf(o[11] - 7) < 0.01f);
  CHECK(o[12] == 0);
  CHECK(fabsf(o[13] - o[6]) < 0.01f);
  CHECK(ulp_d(d[0], 5e300L) <= 3);
  CHECK(ulp_d(d[1], 5e-310L) <= 3);
  CHECK(ulp_d(d[2], 0.5L) <= 3);
  CHECK(d[3] == 11);
}

static void test_relational(void) {
  void (*f)(int *, int64_t *) = FN(void (*)(int *, int64_t *), "t_relational");
  int o[64];
  int64_t l[4];
  memset(o, 0x55, sizeof o);
  f(o, l);
  int want[40] = {-1, 0, -1, 0,  /* isequal: -0 == 0 */
                  0, -1, 0, -1,  /* isnotequal */
                  0, 0, 0, -1,   /* isgreater */
                  0, -1, 0, 0,   /* isnan */
                  0, 0, 0, -1,   /* isinf */
                  -1, 0, -1, 0,  /* isfinite */
                  0, 0, -1, 0,   /* signbit */
                  -1, 0, 0, -1,  /* isnormal */
                  0, -1, 0, 0,   /* isunordered */
                  0, 0, 0, -1};  /* islessgreater */
  for (int i = 0; i < 40; i++)
    if (o[i] != want[i]) {
      printf("  relational[%d] = %d, want %d\n", i, o[i], want[i]);
      check_case_failed = 1;
    }
  CHECK_EQ_INT(o[40], 1);
  CHECK_EQ_INT(o[41], 1);
  CHECK_EQ_INT(o[42], 1);
  CHECK_EQ_INT(o[43], 1);
  CHECK_EQ_INT(o[44], 0);
  CHECK_EQ_INT(o[45], 1);
  CHECK_EQ_INT(o[46], 1);
  CHECK_EQ_INT(o[47], 1);
  CHECK(l[0] == -1 && l[1] == 0 && l[2] == -1 && l[3] == 0);
  CHECK(o[48] == 5 && o[49] == 2 && o[50] == 7 && o[51] == 4);
  CHECK_EQ_INT(o[52], 2);
  CHECK_EQ_INT((unsigned)o[53], 0x0f0fff00u);
  CHECK_EQ_INT(o[54], -1);
  CHECK(o[55] == 2 && o[56] == 1 && o[57] == 2 && o[58] == 1);
}

/* ---- conversions ---- */
enum { RM_DEF, RM_RTE, RM_RTZ, RM_RTP, RM_RTN };
static const char *rm_suffix[] = {"", "_rte", "_rtz", "_rtp", "_rtn"};
static const int rm_fenv[] = {-1, FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};

static long double round_mode(long double x, int m, int def_rtz) {
  switch (m) {
  case RM_DEF: return def_rtz ? truncl(x) : nearbyintl(x);
  case RM_RTE: return nearbyintl(x);
  case RM_RTZ: return truncl(x);
  case RM_RTP: return ceill(x);
  default: return floorl(x);
  }
}

/* floating point to integer, saturated */
static void check_f2i(const char *src, int src_size, const struct itype *t) {
  enum { N = 480 };
  static double dx[N];
  static float fx[N];
  static uint64_t out[3 * N];
  long double lim = (long double)t_max(t);
  const double sp[] = {0.5, -0.5, 1.5, 2.5, -2.5, 127.5, 128, -128.5, 255.5, 256, 32767.5,
                       -32768.5, 65535.5, 2147483647.5, -2147483648.5, 4294967295.5,
                       4294967296.0, 9.3e18, -9.3e18, 1.9e19, NAN, INFINITY, -INFINITY, -0.0};
  for (int i = 0; i < N; i++) {
    double v = i < (int)(sizeof sp / sizeof sp[0]) ? sp[i]
                                                   : rnd_range(-1.2, 1.2) * (double)lim * (i % 2 ? 1 : 1e-6);
    if (src_size == 4)
      fx[i] = (float)v, dx[i] = fx[i];
    else
      dx[i] = v;
  }
  for (int m = 0; m < 5; m++) {
    char name[64];
    snprintf(name, sizeof name, "t_cvt_%s_%s_sat%s", src, t->name, rm_suffix[m]);
    void (*f)(void *, const void *, int) = FN(void (*)(void *, const void *, int), name);
    f(out, src_size == 4 ? (void *)fx : (void *)dx, N);
    int bad = 0;
    for (int i = 0; i < N && bad < 3; i++) {
      long double r = round_mode(dx[i], m, 1);
      i128 want = isnan(dx[i]) ? 0 : r >= lim ? t_max(t) : r <= (long double)t_min(t) ? t_min(t) : (i128)r;
      for (int k = 0; k < 3; k++) {
        if (k == 1 && i >= N / 16 * 16)
          continue;
        if (k == 2 && i >= N / 3 * 3)
          continue;
        u128 got = bits_of(load_i(out, k * N + i, t), t->bits);
        if (got != bits_of(want, t->bits)) {
          printf("  convert_%s_sat%s(%s %.17g) [form %d] = %llx, want %llx\n", t->name, rm_suffix[m],
                 src, dx[i], k, (unsigned long long)got, (unsigned long long)bits_of(want, t->bits));
          check_case_failed = 1;
          bad++;
        }
      }
    }
  }
}

/* integer to integer, saturated */
static void check_i2i(const struct itype *s, const struct itype *t) {
  enum { N = 96 };
  static uint64_t in[N], out[3 * N];
  i128 edges[] = {0, 1, -1, t_min(s), t_max(s), t_min(t), t_max(t), t_max(t) + 1, t_min(t) - 1};
  for (int i = 0; i < N; i++) {
    i128 v = i < 9 ? clampi(edges[i], s) : (i128)rnd64();
    store_i(in, i, s, (u128)v);
  }
  for (int m = 0; m < 5; m++) {
    char name[64];
    snprintf(name, sizeof name, "t_cvt_%s_%s_sat%s", s->name, t->name, rm_suffix[m]);
    void (*f)(void *, const void *, int) = FN(void (*)(void *, const void *, int), name);
    f(out, in, N);
    for (int i = 0; i < N; i++) {
      i128 x = load_i(in, i, s);
      u128 want = bits_of(clampi(x, t), t->bits);
      for (int k = 0; k < 3; k++)
        if (bits_of(load_i(out, k * N + i, t), t->bits) != want) {
          printf("  convert_%s_sat%s(%s %lld) [form %d] wrong\n", t->name, rm_suffix[m], s->name,
                 (long long)x, k);
          check_case_failed = 1;
        }
    }
  }
}

/* integer or double to float/double in every rounding mode, against the
 * host FPU set to that mode */
#define CHECK_TOF(SRC, SNAME, DST, DNAME, GEN)                                 \
  do {                                                                        \
    enum { N = 480 };                                                         \
    static SRC in[N];                                                         \
    static DST out[3 * N];                                                    \
    for (int i = 0; i < N; i++)                                               \
      in[i] = GEN;                                                            \
    for (int m = 0; m < 5; m++) {                                             \
      char name[64];                                                          \
      snprintf(name, sizeof name, "t_cvt_%s_%s%s", SNAME, DNAME, rm_suffix[m]); \
      void (*f)(DST *, const SRC *, int) = FN(void (*)(DST *, const SRC *, int), name); \
      f(out, in, N);                                                          \
      int bad = 0;                                                            \
      for (int i = 0; i < N && bad < 3; i++) {                                \
        if (m != RM_DEF)                                                      \
          fesetround(rm_fenv[m]);                                             \
        volatile SRC vs = in[i];                                              \
        volatile DST want = (DST)vs;                                          \
        fesetround(FE_TONEAREST);                                             \
        for (int k = 0; k < 3; k++) {                                         \
          if ((k == 1 && i >= N / 16 * 16) || (k == 2 && i >= N / 3 * 3))    \
            continue;                                                         \
          DST got = out[k * N + i];                                           \
          if (memcmp(&got, (const void *)&want, sizeof got) != 0 && !(isnan(got) && isnan(want))) { \
            printf("  convert_%s%s(%s %.17g) [form %d] = %.17g, want %.17g\n", DNAME, rm_suffix[m], \
                   SNAME, (double)in[i], k, (double)got, (double)want);       \
            check_case_failed = 1;                                            \
            bad++;                                                            \
          }                                                                   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  } while (0)

static void test_convert(void) {
  for (int ti = 0; ti < 8; ti++)
    if (ti != 2 && ti != 3) /* short/ushort are covered from double */
      check_f2i("float", 4, &itypes[ti]);
  check_f2i("double", 8, &itypes[2]);
  check_f2i("double", 8, &itypes[4]);
  check_f2i("double", 8, &itypes[7]);
  const struct itype *T = itypes;
  check_i2i(&T[4], &T[1]); /* int -> uchar */
  check_i2i(&T[5], &T[0]); /* uint -> char */
  check_i2i(&T[6], &T[4]); /* long -> int */
  check_i2i(&T[6], &T[7]); /* long -> ulong */
  check_i2i(&T[7], &T[6]); /* ulong -> long */
  check_i2i(&T[0], &T[2]); /* char -> short */
  CHECK_TOF(int32_t, "int", float, "float", (int32_t)rnd64() >> (rnd64() % 32));
  CHECK_TOF(uint32_t, "uint", float, "float", (uint32_t)rnd64() >> (rnd64() % 32));
  CHECK_TOF(int64_t, "long", float, "float", (int64_t)rnd64() >> (rnd64() % 64));
  CHECK_TOF(uint64_t, "ulong", float, "float", i == 0 ? UINT64_MAX : rnd64() >> (rnd64() % 64));
  CHECK_TOF(double, "double", float, "float",
            i == 0 ? 1e300 : i == 1 ? -1e300 : i == 2 ? 1e-300 : i == 3 ? NAN
                                                                       : rnd_range(-1, 1) * ldexp(1, (int)(rnd64() % 300) - 150));
  CHECK_TOF(int64_t, "long", double, "double", (int64_t)rnd64() >> (rnd64() % 64));
  CHECK_TOF(uint64_t, "ulong", double, "double", i == 0 ? UINT64_MAX : rnd64() >> (rnd64() % 64));

  /* non-saturating, in range */
  float fin[48];
  int32_t iout[144];
  for (int i = 0; i < 48; i++)
    fin[i] = (float)rnd_range(-1e6, 1e6);
  fin[0] = -2.75f;
  FN(void (*)(int32_t *, const float *, int), "t_cvt_float_int")(iout, fin, 48);
  for (int i = 0; i < 48; i++)
    CHECK_EQ_INT(iout[i], (int32_t)fin[i]);
  int16_t sin_[48];
  uint8_t uout[144];
  for (int i = 0; i < 48; i++)
    sin_[i] = (int16_t)rnd64();
  FN(void (*)(uint8_t *, const int16_t *, int), "t_cvt_short_uchar")(uout, sin_, 48);
  for (int i = 0; i < 48; i++)
    CHECK_EQ_INT(uout[i], (uint8_t)sin_[i]);
}

/* ---- vload/vstore ---- */
static void test_vload(void) {
  void (*f)(float *, const float *, float *, int) =
      FN(void (*)(float *, const float *, float *, int), "t_vload");
  float in[64], out[32], loc[8];
  for (int i = 0; i < 64; i++)
    in[i] = (float)i;
  f(out, in, loc, 0);
  for (int i = 0; i < 16; i++)
    CHECK(out[i] == 17 + i);
  for (int i = 0; i < 3; i++)
    CHECK(out[16 + i] == 7 + i);
  for (int i = 0; i < 8; i++)
    CHECK(out[19 + i] == 3 + i || i >= 7); /* out[26] is overwritten below */
  CHECK(out[27] == 5 && out[28] == 6);
  CHECK(loc[1] == 5 && loc[4] == 8);
}

/* ---- half ---- */
static float half_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m + 1024), e - 25);
  return h & 0x8000 ? -v : v;
}
/* By search over the ordered positive halves, not by bit manipulation. */
static uint16_t half_ref(double x, int m) {
  if (isnan(x))
    return 0x7e00;
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (isinf(a))
    return sign | 0x7c00;
  int lo = 0, hi = 0x7bff;
  while (lo < hi) { /* largest h with value <= a */
    int mid = (lo + hi + 1) / 2;
    if (half_value((uint16_t)mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  long double vl = half_value((uint16_t)lo);
  if (vl == a)
    return sign | (uint16_t)lo;
  int up = lo + 1; /* 0x7c00 (inf) sits at 65536 for rounding purposes */
  long double vu = up == 0x7c00 ? 65536.0L : half_value((uint16_t)up);
  int pick_up;
  switch (m) {
  case RM_DEF:
  case RM_RTE: pick_up = (a - vl > vu - a) || (a - vl == vu - a && (lo & 1)); break;
  case RM_RTZ: pick_up = 0; break;
  case RM_RTP: pick_up = !sign; break;
  default: pick_up = sign != 0; break;
  }
  return sign | (uint16_t)(pick_up ? up : lo);
}

static void test_half(void) {
  enum { N = 1 << 16 };
  static uint16_t hin[N];
  static float fout[3 * N];
  for (int i = 0; i < N; i++)
    hin[i] = (uint16_t)i;
  FN(void (*)(float *, const uint16_t *, int), "t_half_load")(fout, hin, N);
  for (int i = 0; i < N; i++) {
    float w = half_value((uint16_t)i);
    if (!same_f(fout[i], w) || !same_f(fout[N + i], w) || ((i & 3) != 3 && !same_f(fout[2 * N + i], w))) {
      printf("  vload_half(0x%04x) = %g, want %g\n", i, fout[i], w);
      check_case_failed = 1;
      break;
    }
  }
  enum { M = 4096 };
  static float fin[M];
  static double din[M];
  static uint16_t hout[3 * M];
  for (int i = 0; i < M; i++) {
    double v;
    if (i < NSPEC)
      v = specials[i];
    else if (i % 3 == 0) { /* exact midpoints between neighbouring halves */
      uint16_t h = (uint16_t)(rnd64() % 0x7bff);
      v = ((double)half_value(h) + (h == 0x7bfe ? 65504.0 : half_value(h + 1))) / 2;
    } else
      v = rnd_range(1, 2) * ldexp(1, (int)(rnd64() % 48) - 30);
    if (rnd64() & 1)
      v = -v;
    din[i] = v;
    fin[i] = (float)v;
  }
  din[NSPEC] = 65519.999; /* just below the overflow threshold */
  din[NSPEC + 1] = 1 + ldexp(1, -11) + ldexp(1, -40); /* above a tie only in double */
  for (int m = 0; m < 5; m++) {
    char name[64];
    for (int src = 0; src < 2; src++) {
      snprintf(name, sizeof name, "t_half_store_%s%s", src ? "d" : "f", rm_suffix[m]);
      FN(void (*)(uint16_t *, const void *, int), name)(hout, src ? (void *)din : (void *)fin, M);
      int bad = 0;
      for (int i = 0; i < M && bad < 3; i++) {
        double x = src ? din[i] : fin[i];
        uint16_t w = half_ref(x, m);
        for (int k = 0; k < 3; k++) {
          if (k == 2 && (i & 3) == 3)
            continue;
          uint16_t g = hout[k * M + i];
          int ok = isnan(x) ? (g & 0x7c00) == 0x7c00 && (g & 0x3ff) : g == w;
          if (!ok) {
            printf("  vstore_half%s(%s %.17g) [form %d] = 0x%04x, want 0x%04x\n", rm_suffix[m],
                   src ? "double" : "float", x, k, g, w);
            check_case_failed = 1;
            bad++;
          }
        }
      }
    }
  }
}

/* ---- shuffle ---- */
static void test_shuffle(void) {
  int o[11];
  FN(void (*)(int *), "t_shuffle")(o);
  int want[10] = {13, 12, 11, 10, 13, 10, 11, 12, 21, 12};
  for (int i = 0; i < 10; i++)
    CHECK_EQ_INT(o[i], want[i]);
  CHECK_EQ_INT(o[10], 2);
}

/* ---- atomics ---- */
static void test_atomics(void) {
  int g;
  unsigned l;
  int64_t g64, out[32];
  float gf;
  FN(void (*)(int *, unsigned *, int64_t *, float *, int64_t *), "t_atomics")(&g, &l, &g64, &gf, out);
  int64_t want[] = {5, 8, 7, 42, 43, 42, 42, -7, -9, 3, 2, 11, 10, 0xfffffff0, 0xfffffff0, 7,
                    0x100000000, 0x200000000, -1, -5, 3, 5};
  for (int i = 0; i < (int)(sizeof want / sizeof want[0]); i++)
    if (out[i] != want[i]) {
      printf("  atomics step %d: %lld, want %lld\n", i, (long long)out[i], (long long)want[i]);
      check_case_failed = 1;
    }
}

static int shared_counter;
static int64_t shared_counter64;
static void *adder(void *arg) {
  int (*add)(int *, int) = arg;
  int64_t (*add64)(int64_t *, int64_t) = FN(int64_t(*)(int64_t *, int64_t), "t_atom_add64");
  for (int i = 0; i < 100000; i++) {
    add(&shared_counter, 1);
    add64(&shared_counter64, 3);
  }
  return NULL;
}
static void test_atomic_threads(void) {
  void *add = sym("t_atomic_add");
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, adder, add);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  CHECK_EQ_INT(shared_counter, 200000);
  CHECK_EQ_INT(shared_counter64, 600000);
}

/* ---- async copies: a group of 2x2 work-items run one after another ---- */
static void test_async(void) {
  void (*in)(int *, const int *) = FN(void (*)(int *, const int *), "t_async_in");
  void (*outf)(int *, const int *, int *, const int *) =
      FN(void (*)(int *, const int *, int *, const int *), "t_async_out");
  int g[40], l[40], l2[8], back[40];
  for (int i = 0; i < 40; i++)
    g[i] = 100 + i, l[i] = -1, back[i] = -1;
  wi_dim = 2;
  size_t ls[3] = {2, 2, 1};
  memcpy(wi_local, ls, sizeof ls);
  memcpy(wi_enq, ls, sizeof ls);
  barrier_count = 0;
  for (int w = 0; w < 4; w++) {
    wi_lid[0] = (size_t)(w % 2);
    wi_lid[1] = (size_t)(w / 2);
    wi_lid[2] = 0;
    in(l, g);
  }
  CHECK_EQ_INT(barrier_count, 4);
  for (int i = 0; i < 37; i++)
    CHECK_EQ_INT(l[i], 100 + i);
  CHECK_EQ_INT(l[37], -1);
  for (int w = 0; w < 4; w++) {
    wi_lid[0] = (size_t)(w % 2);
    wi_lid[1] = (size_t)(w / 2);
    outf(back, l, l2, g);
  }
  for (int i = 0; i < 30; i++)
    CHECK_EQ_INT(back[i], i % 3 ? -1 : 100 + i / 3);
  for (int i = 0; i < 5; i++)
    CHECK_EQ_INT(l2[i], 100 + 2 * i);
}

int main(int argc, char **argv) {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n <= 0) {
    printf("not ok load: cannot find own path\n");
    return 1;
  }
  path[n] = 0;
  strcpy(strrchr(path, '/') + 1, "cltests.so");
  lib = dlopen(path, RTLD_NOW);
  if (!lib) {
    printf("not ok load: %s\n", dlerror());
    return 1;
  }
  RUN(test_workitem);
  RUN(test_barrier);
  RUN(test_math_f);
  RUN(test_math_d);
  RUN(test_math_sweep_f);
  RUN(test_math_misc_f);
  RUN(test_math_misc_d);
  RUN(test_native);
  RUN(test_integer);
  RUN(test_common);
  RUN(test_geometric);
  RUN(test_relational);
  RUN(test_convert);
  RUN(test_vload);
  RUN(test_half);
  RUN(test_shuffle);
  RUN(test_atomics);
  RUN(test_atomic_threads);
  RUN(test_async);
  CHECK_EXIT();
}
