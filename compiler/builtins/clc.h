/* Shared by every builtin source file: attribute shorthands, the vector-width
 * generators that build the 2/3/4/8/16-wide overloads out of narrower ones,
 * and the private names under which glibc's libm functions are reached. */
#ifndef AQUILA_BUILTINS_CLC_H
#define AQUILA_BUILTINS_CLC_H

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* Every definition must carry overloadable to get the same mangled name as
 * the declaration user code sees; always_inline so that after linking the
 * body sits inside the kernel loop where the vectorizer can reach it. */
#define OVL __attribute__((overloadable))
#define INL __attribute__((overloadable, always_inline))
#define CNST __attribute__((overloadable, always_inline, const))

/* Vector overloads are split in halves down to scalars; once inlined, the
 * SLP and loop vectorizers recombine them into wide operations. */
#define VEC_UNARY(RT, F, AT)                                                   \
  CNST RT##2 F(AT##2 x) { return (RT##2)(F(x.lo), F(x.hi)); }                 \
  CNST RT##3 F(AT##3 x) { return (RT##3)(F(x.s0), F(x.s1), F(x.s2)); }        \
  CNST RT##4 F(AT##4 x) { return (RT##4)(F(x.lo), F(x.hi)); }                 \
  CNST RT##8 F(AT##8 x) { return (RT##8)(F(x.lo), F(x.hi)); }                 \
  CNST RT##16 F(AT##16 x) { return (RT##16)(F(x.lo), F(x.hi)); }

#define VEC_BINARY(RT, F, AT, BT)                                              \
  CNST RT##2 F(AT##2 x, BT##2 y) { return (RT##2)(F(x.lo, y.lo), F(x.hi, y.hi)); } \
  CNST RT##3 F(AT##3 x, BT##3 y) {                                            \
    return (RT##3)(F(x.s0, y.s0), F(x.s1, y.s1), F(x.s2, y.s2));              \
  }                                                                           \
  CNST RT##4 F(AT##4 x, BT##4 y) { return (RT##4)(F(x.lo, y.lo), F(x.hi, y.hi)); } \
  CNST RT##8 F(AT##8 x, BT##8 y) { return (RT##8)(F(x.lo, y.lo), F(x.hi, y.hi)); } \
  CNST RT##16 F(AT##16 x, BT##16 y) { return (RT##16)(F(x.lo, y.lo), F(x.hi, y.hi)); }

/* Vector first argument, scalar second (ldexp(floatn, int) and friends). */
#define VEC_BINARY_S(RT, F, AT, BT)                                            \
  CNST RT##2 F(AT##2 x, BT y) { return (RT##2)(F(x.lo, y), F(x.hi, y)); }     \
  CNST RT##3 F(AT##3 x, BT y) { return (RT##3)(F(x.s0, y), F(x.s1, y), F(x.s2, y)); } \
  CNST RT##4 F(AT##4 x, BT y) { return (RT##4)(F(x.lo, y), F(x.hi, y)); }     \
  CNST RT##8 F(AT##8 x, BT y) { return (RT##8)(F(x.lo, y), F(x.hi, y)); }     \
  CNST RT##16 F(AT##16 x, BT y) { return (RT##16)(F(x.lo, y), F(x.hi, y)); }

#define VEC_TERNARY(RT, F, AT, BT, CT)                                         \
  CNST RT##2 F(AT##2 x, BT##2 y, CT##2 z) {                                   \
    return (RT##2)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi));                 \
  }                                                                           \
  CNST RT##3 F(AT##3 x, BT##3 y, CT##3 z) {                                   \
    return (RT##3)(F(x.s0, y.s0, z.s0), F(x.s1, y.s1, z.s1), F(x.s2, y.s2, z.s2)); \
  }                                                                           \
  CNST RT##4 F(AT##4 x, BT##4 y, CT##4 z) {                                   \
    return (RT##4)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi));                 \
  }                                                                           \
  CNST RT##8 F(AT##8 x, BT##8 y, CT##8 z) {                                   \
    return (RT##8)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi));                 \
  }                                                                           \
  CNST RT##16 F(AT##16 x, BT##16 y, CT##16 z) {                               \
    return (RT##16)(F(x.lo, y.lo, z.lo), F(x.hi, y.hi, z.hi));                \
  }

/* Functions with an out-pointer: the private-pointer overloads are split by
 * halves; the global and local ones go through a private temporary. */
#define VEC_OUTPTR_PRIV(RT, F, AT, PT)                                         \
  INL RT##2 F(AT##2 x, __private PT##2 *p) {                                  \
    PT a, b;                                                                  \
    RT##2 r = (RT##2)(F(x.lo, &a), F(x.hi, &b));                              \
    *p = (PT##2)(a, b);                                                       \
    return r;                                                                 \
  }                                                                           \
  INL RT##3 F(AT##3 x, __private PT##3 *p) {                                  \
    PT a, b, c;                                                               \
    RT##3 r = (RT##3)(F(x.s0, &a), F(x.s1, &b), F(x.s2, &c));                 \
    *p = (PT##3)(a, b, c);                                                    \
    return r;                                                                 \
  }                                                                           \
  INL RT##4 F(AT##4 x, __private PT##4 *p) {                                  \
    PT##2 a, b;                                                               \
    RT##4 r = (RT##4)(F(x.lo, &a), F(x.hi, &b));                              \
    *p = (PT##4)(a, b);                                                       \
    return r;                                                                 \
  }                                                                           \
  INL RT##8 F(AT##8 x, __private PT##8 *p) {                                  \
    PT##4 a, b;                                                               \
    RT##8 r = (RT##8)(F(x.lo, &a), F(x.hi, &b));                              \
    *p = (PT##8)(a, b);                                                       \
    return r;                                                                 \
  }                                                                           \
  INL RT##16 F(AT##16 x, __private PT##16 *p) {                               \
    PT##8 a, b;                                                               \
    RT##16 r = (RT##16)(F(x.lo, &a), F(x.hi, &b));                            \
    *p = (PT##16)(a, b);                                                      \
    return r;                                                                 \
  }

#define OUTPTR_AS_ONE(RT, F, AT, PT, AS)                                       \
  INL RT F(AT x, AS PT *p) {                                                  \
    PT t;                                                                     \
    RT r = F(x, &t);                                                          \
    *p = t;                                                                   \
    return r;                                                                 \
  }
#define OUTPTR_AS(RT, F, AT, PT, AS)                                           \
  OUTPTR_AS_ONE(RT, F, AT, PT, AS)                                            \
  OUTPTR_AS_ONE(RT##2, F, AT##2, PT##2, AS)                                   \
  OUTPTR_AS_ONE(RT##3, F, AT##3, PT##3, AS)                                   \
  OUTPTR_AS_ONE(RT##4, F, AT##4, PT##4, AS)                                   \
  OUTPTR_AS_ONE(RT##8, F, AT##8, PT##8, AS)                                   \
  OUTPTR_AS_ONE(RT##16, F, AT##16, PT##16, AS)
/* All widths and the two non-private address spaces, given the scalar
 * private-pointer overload. */
#define OUTPTR_ALL(RT, F, AT, PT)                                              \
  VEC_OUTPTR_PRIV(RT, F, AT, PT)                                              \
  OUTPTR_AS(RT, F, AT, PT, __global)                                          \
  OUTPTR_AS(RT, F, AT, PT, __local)

/* Apply a macro to each vector width suffix, or to every width including
 * the scalar one (empty suffix). */
#define FOR_VEC_WIDTHS(M, ...) M(2, __VA_ARGS__) M(3, __VA_ARGS__) M(4, __VA_ARGS__) \
  M(8, __VA_ARGS__) M(16, __VA_ARGS__)
#define FOR_ALL_WIDTHS(M, ...) M(, __VA_ARGS__) FOR_VEC_WIDTHS(M, __VA_ARGS__)

#define AS_TYPE(x, T) __builtin_astype((x), T)

#endif
