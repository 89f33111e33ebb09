/* Test functions in OpenCL C, compiled like user code and linked with the
 * builtin library; test_builtins.c calls them through dlopen. Plain
 * functions with C names, each running one builtin family over arrays. */
#include "funcs.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* ---- work-item functions, barrier, fences ---- */
void t_workitem(__global ulong *out) {
  int k = 0;
  out[k++] = get_work_dim();
  for (uint d = 0; d < 4; d++) {
    out[k++] = get_global_id(d);
    out[k++] = get_local_id(d);
    out[k++] = get_group_id(d);
    out[k++] = get_global_size(d);
    out[k++] = get_local_size(d);
    out[k++] = get_num_groups(d);
    out[k++] = get_global_offset(d);
  }
}

void t_barrier(__global int *p) {
  p[0] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  read_mem_fence(CLK_LOCAL_MEM_FENCE);
  write_mem_fence(CLK_GLOBAL_MEM_FENCE);
  p[1] = 2;
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
}

/* ---- math, bulk ---- */
#define U_CASE(N, ...)                                                         \
  case U_##N:                                                                 \
    for (int i = 0; i < n; i++)                                               \
      out[i] = N(in[i]);                                                      \
    break;
#define U_CASE_V(N, ...)                                                       \
  case U_##N:                                                                 \
    for (int i = 0; i + 16 <= n; i += 16)                                     \
      vstore16(N(vload16(0, in + i)), 0, out + i);                            \
    for (int i = 0; i + 3 <= n; i += 3)                                       \
      vstore3(N(vload3(0, in + i)), 0, out + n + i);                          \
    break;
#define B_CASE(N, ...)                                                         \
  case B_##N:                                                                 \
    for (int i = 0; i < n; i++)                                               \
      out[i] = N(x[i], y[i]);                                                 \
    break;
#define B_CASE_V(N, ...)                                                       \
  case B_##N:                                                                 \
    for (int i = 0; i + 16 <= n; i += 16)                                     \
      vstore16(N(vload16(0, x + i), vload16(0, y + i)), 0, out + i);          \
    for (int i = 0; i + 3 <= n; i += 3)                                       \
      vstore3(N(vload3(0, x + i), vload3(0, y + i)), 0, out + n + i);         \
    break;
#define MATH_DRIVERS(T, S)                                                     \
  void t_unary_##S(int f, __global T *out, __global const T *in, int n) {     \
    switch (f) { UNARY_FUNCS(U_CASE) }                                        \
  }                                                                           \
  void t_unary_v_##S(int f, __global T *out, __global const T *in, int n) {   \
    switch (f) { UNARY_FUNCS(U_CASE_V) }                                      \
  }                                                                           \
  void t_binary_##S(int f, __global T *out, __global const T *x, __global const T *y, int n) { \
    switch (f) { BINARY_FUNCS(B_CASE) }                                       \
  }                                                                           \
  void t_binary_v_##S(int f, __global T *out, __global const T *x, __global const T *y, int n) { \
    switch (f) { BINARY_FUNCS(B_CASE_V) }                                     \
  }
MATH_DRIVERS(float, f)
MATH_DRIVERS(double, d)

/* ---- math, individual ---- */
#define MATH_MISC(T, S)                                                        \
  void t_misc_##S(__global T *out, __global int *iout, __global const T *in, int n) { \
    for (int i = 0; i < n; i++) {                                             \
      T x = in[i];                                                            \
      int e;                                                                  \
      T ip, c;                                                                \
      out[10 * i + 0] = frexp(x, &e);                                         \
      iout[4 * i + 0] = e;                                                    \
      out[10 * i + 1] = ldexp(x, 7);                                          \
      out[10 * i + 2] = modf(x, &ip);                                         \
      out[10 * i + 3] = ip;                                                   \
      out[10 * i + 4] = fract(x, &ip);                                        \
      out[10 * i + 5] = ip;                                                   \
      out[10 * i + 6] = sincos(x, &c);                                        \
      out[10 * i + 7] = c;                                                    \
      iout[4 * i + 1] = ilogb(x);                                             \
      out[10 * i + 8] = pown(x, 3);                                           \
      out[10 * i + 9] = rootn(x, 3);                                          \
      int q;                                                                  \
      T r = remquo(x, (T)3, &q);                                              \
      iout[4 * i + 3] = q;                                                    \
      iout[4 * i + 2] = isequal(r, remainder(x, (T)3));                       \
    }                                                                         \
  }                                                                           \
  /* out-pointer overloads in other address spaces and widths */             \
  void t_outptr_##S(__global T *out, __global int *iout, __local T *lp, __local int *li, \
                    __global const T *in) {                                   \
    T##4 v = vload4(0, in);                                                   \
    int##4 e;                                                                 \
    vstore4(frexp(v, &e), 0, out);                                            \
    vstore4(e, 0, iout);                                                      \
    vstore4(modf(v, (__global T##4 *)(out + 4)), 0, out + 8);                 \
    T##3 w = vload3(0, in);                                                   \
    vstore3(sincos(w, (__local T##3 *)lp), 0, out + 12);                      \
    vstore3(frexp(w, (__local int##3 *)li), 0, out + 16);                     \
  }                                                                           \
  void t_fma_##S(__global T *out, __global const T *a, __global const T *b, __global const T *c, int n) { \
    for (int i = 0; i < n; i++)                                               \
      out[i] = fma(a[i], b[i], c[i]);                                         \
  }
MATH_MISC(float, f)
MATH_MISC(double, d)

void t_native(__global float *out, __global const float *in, int n) {
  for (int i = 0; i < n; i++) {
    float x = in[i];
    out[4 * i + 0] = native_sin(x);
    out[4 * i + 1] = half_exp(x);
    out[4 * i + 2] = native_divide(x, 3.0f);
    out[4 * i + 3] = half_rsqrt(x);
  }
}

void t_nan(__global uint *out) {
  out[0] = as_uint(nan(5u));
  uint4 v = as_uint4(nan((uint4)(1, 2, 3, 4)));
  out[1] = v.x;
  out[2] = v.w;
}

/* ---- integer ---- */
#define I_CASE(OP, EXPR)                                                       \
  case I_##OP:                                                                \
    r = EXPR;                                                                 \
    break;
#define INT_EXPRS(CASE)                                                        \
  CASE(add_sat, add_sat(x, y))                                                \
  CASE(sub_sat, sub_sat(x, y))                                                \
  CASE(hadd, hadd(x, y))                                                      \
  CASE(rhadd, rhadd(x, y))                                                    \
  CASE(abs_diff, AS(abs_diff(x, y)))                                          \
  CASE(mul_hi, mul_hi(x, y))                                                  \
  CASE(rotate, rotate(x, y))                                                  \
  CASE(max, max(x, y))                                                        \
  CASE(min, min(x, y))                                                        \
  CASE(mad_hi, mad_hi(x, y, z))                                               \
  CASE(mad_sat, mad_sat(x, y, z))                                             \
  CASE(clamp, clamp(x, min(y, z), max(y, z)))                                 \
  CASE(clz, clz(x))                                                           \
  CASE(popcount, popcount(x))                                                 \
  CASE(abs, AS(abs(x)))
#define INT_DRIVER(T)                                                          \
  void t_int_##T(int op, __global T *out, __global const T *a, __global const T *b, \
                 __global const T *c, int n) {                                \
    for (int i = 0; i < n; i++) {                                             \
      T x = a[i], y = b[i], z = c[i], r = 0;                                  \
      switch (op) { INT_EXPRS(I_CASE) }                                       \
      out[i] = r;                                                             \
    }                                                                         \
  }                                                                           \
  void t_int_v_##T(int op, __global T *out, __global const T *a, __global const T *b, \
                   __global const T *c, int n) {                              \
    for (int i = 0; i + 16 <= n; i += 16) {                                   \
      T##16 x = vload16(0, a + i), y = vload16(0, b + i), z = vload16(0, c + i), r = 0; \
      switch (op) { INT_EXPRS(I_CASE) }                                       \
      vstore16(r, 0, out + i);                                                \
    }                                                                         \
    for (int i = 0; i + 3 <= n; i += 3) {                                     \
      T##3 x = vload3(0, a + i), y = vload3(0, b + i), z = vload3(0, c + i), r = 0; \
      switch (op) { INT_EXPRS(I_CASE) }                                       \
      vstore3(r, 0, out + n + i);                                             \
    }                                                                         \
  }
#define AS(v) __builtin_astype(v, __typeof__(x))
INT_DRIVER(char) INT_DRIVER(uchar) INT_DRIVER(short) INT_DRIVER(ushort)
INT_DRIVER(int) INT_DRIVER(uint) INT_DRIVER(long) INT_DRIVER(ulong)

void t_upsample(__global long *out) {
  out[0] = upsample((char)-2, (uchar)0x34);
  out[1] = upsample((ushort)0xfedc, (ushort)0xba98);
  out[2] = upsample(-5, 7u);
  int4 v = upsample((short4)(1, -1, 2, -2), (ushort4)(3, 4, 5, 6));
  out[3] = v.y;
  out[4] = mul24(1000, -3000);
  out[5] = mad24(1000u, 3000u, 5u);
}

/* ---- common, geometric ---- */
void t_common(__global float *out) {
  float4 x = (float4)(-2.0f, 0.25f, 3.0f, -0.0f);
  vstore4(clamp(x, -1.0f, 1.0f), 0, out);
  vstore4(mix(x, (float4)(1.0f), 0.5f), 1, out);
  vstore4(step(0.5f, x), 2, out);
  vstore4(smoothstep(0.0f, 1.0f, x), 3, out);
  vstore4(sign(x), 4, out);
  out[20] = degrees(M_PI_F);
  out[21] = radians(180.0f);
  out[22] = sign(NAN);
  out[23] = max(1.0f, 2.0f);
}

void t_geometric(__global float *out, __global double *dout) {
  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f), b = (float4)(-1.0f, 0.5f, 2.0f, 1.0f);
  out[0] = dot(a, b);
  float4 c = cross(a, b);
  out[1] = c.x;
  out[2] = c.y;
  out[3] = c.z;
  out[4] = c.w;
  out[5] = length(a);
  out[6] = distance(a, b);
  float3 n = normalize((float3)(3.0f, 0.0f, 4.0f));
  out[7] = n.x;
  out[8] = n.z;
  out[9] = length((float2)(3e30f, 4e30f)); /* would overflow in float */
  out[10] = length((float2)(3e-30f, 4e-30f));
  out[11] = fast_length((float3)(2.0f, 3.0f, 6.0f));
  float2 z = normalize((float2)(0.0f, 0.0f));
  out[12] = z.x;
  out[13] = fast_distance(a, b);
  dout[0] = length((double3)(3e300, 4e300, 0.0));
  dout[1] = length((double2)(3e-310, 4e-310));
  double4 dn = normalize((double4)(1.0, 1.0, 1.0, 1.0));
  dout[2] = dn.w;
  dout[3] = dot((double2)(1.5, 2.0), (double2)(2.0, 4.0));
}

/* ---- relational ---- */
void t_relational(__global int *out, __global long *lout) {
  float4 x = (float4)(1.0f, NAN, -0.0f, INFINITY);
  float4 y = (float4)(1.0f, 1.0f, 0.0f, 2.0f);
  vstore4(isequal(x, y), 0, out);
  vstore4(isnotequal(x, y), 1, out);
  vstore4(isgreater(x, y), 2, out);
  vstore4(isnan(x), 3, out);
  vstore4(isinf(x), 4, out);
  vstore4(isfinite(x), 5, out);
  vstore4(signbit(x), 6, out);
  vstore4(isnormal((float4)(1.0f, 1e-40f, 0.0f, FLT_MIN)), 7, out);
  vstore4(isunordered(x, y), 8, out);
  vstore4(islessgreater(x, y), 9, out);
  out[40] = isnan(NAN);
  out[41] = isequal(1.0, 1.0);
  out[42] = signbit(-1.0f);
  out[43] = any((int4)(0, 0, -1, 0));
  out[44] = all((int4)(-1, -1, 5, -1));
  out[45] = all((char16)(-1));
  out[46] = any(-3);
  out[47] = isless(1.0, 2.0);
  vstore2(isequal((double2)(1.0, NAN), (double2)(1.0, NAN)), 0, lout);
  vstore2(isordered((double2)(1.0, NAN), (double2)(3.0, 1.0)), 1, lout);
  int4 s = select((int4)(1, 2, 3, 4), (int4)(5, 6, 7, 8), (int4)(-1, 0, 0x80000000, 1));
  vstore4(s, 12, out);
  out[52] = select(1, 2, 3);
  uint4 bs = bitselect((uint4)(0xff00ff00u), (uint4)(0x0f0f0f0fu), (uint4)(0xffff0000u));
  out[53] = (int)bs.x;
  float fb = bitselect(1.0f, -1.0f, as_float(0x80000000u));
  out[54] = (int)fb;
  float4 fs = select((float4)(1.0f), (float4)(2.0f), (uint4)(0x80000000u, 0, 0xffffffffu, 1));
  out[55] = (int)fs.x;
  out[56] = (int)fs.y;
  out[57] = (int)fs.z;
  out[58] = (int)fs.w;
}

/* ---- conversions ---- */
#define CVT(D, S, SUF)                                                         \
  void t_cvt_##S##_##D##SUF(__global D *out, __global const S *in, int n) {    \
    for (int i = 0; i < n; i++)                                               \
      out[i] = convert_##D##SUF(in[i]);                                       \
    for (int i = 0; i + 16 <= n; i += 16)                                     \
      vstore16(convert_##D##16##SUF(vload16(0, in + i)), 0, out + n + i);     \
    for (int i = 0; i + 3 <= n; i += 3)                                       \
      vstore3(convert_##D##3##SUF(vload3(0, in + i)), 0, out + 2 * n + i);    \
  }
#define CVT_MODES(D, S, SAT)                                                   \
  CVT(D, S, SAT) CVT(D, S, SAT##_rte) CVT(D, S, SAT##_rtz) CVT(D, S, SAT##_rtp) CVT(D, S, SAT##_rtn)
CVT_MODES(char, float, _sat) CVT_MODES(uchar, float, _sat) CVT_MODES(int, float, _sat)
CVT_MODES(uint, float, _sat) CVT_MODES(long, float, _sat) CVT_MODES(ulong, float, _sat)
CVT_MODES(short, double, _sat) CVT_MODES(int, double, _sat) CVT_MODES(ulong, double, _sat)
CVT_MODES(float, int, ) CVT_MODES(float, uint, ) CVT_MODES(float, long, )
CVT_MODES(float, ulong, ) CVT_MODES(float, double, ) CVT_MODES(double, long, )
CVT_MODES(double, ulong, )
CVT_MODES(uchar, int, _sat) CVT_MODES(char, uint, _sat) CVT_MODES(int, long, _sat)
CVT_MODES(ulong, long, _sat) CVT_MODES(long, ulong, _sat) CVT_MODES(short, char, _sat)
CVT(int, float, ) CVT(uchar, short, )

/* ---- vload/vstore, half ---- */
void t_vload(__global float *out, __global const float *in, __local float *l, __private int dummy) {
  /* unaligned, with offsets */
  vstore16(vload16(1, in + 1), 0, out);
  vstore3(vload3(2, in + 1), 0, out + 16);
  vstore8(vload8(0, in + 3), 1, out + 11); /* out[19..26] */
  vstore4(vload4(0, in + 5), 0, l + 1);
  float p[6];
  vstore2(vload2(0, l + 1), 0, p + 1);
  out[27] = p[1];
  out[28] = p[2];
  vstore3(vload3(0, p), 1, out + 26); /* out[29..31] = p[3..5] */
}

void t_half_load(__global float *out, __global const half *in, int n) {
  for (int i = 0; i < n; i++)
    out[i] = vload_half(i, in);
  for (int i = 0; i + 8 <= n; i += 8)
    vstore8(vload_half8(i / 8, in), 0, out + n + i);
  for (int i = 0; i + 4 <= n; i += 4)
    vstore3(vloada_half3(i / 4, in), 0, out + 2 * n + i);
}

#define HSTORE(S, T, M)                                                        \
  void t_half_store_##S##M(__global half *out, __global const T *in, int n) {  \
    for (int i = 0; i < n; i++)                                               \
      vstore_half##M(in[i], i, out);                                          \
    for (int i = 0; i + 16 <= n; i += 16)                                     \
      vstore_half16##M(vload16(0, in + i), i / 16, out + n);                  \
    for (int i = 0; i + 4 <= n; i += 4)                                       \
      vstorea_half3##M(vload3(0, in + i), i / 4, out + 2 * n);                \
  }
#define HSTORES(S, T) HSTORE(S, T, ) HSTORE(S, T, _rte) HSTORE(S, T, _rtz) HSTORE(S, T, _rtp) HSTORE(S, T, _rtn)
HSTORES(f, float) HSTORES(d, double)

/* ---- shuffle ---- */
void t_shuffle(__global int *out) {
  int4 a = (int4)(10, 11, 12, 13), b = (int4)(20, 21, 22, 23);
  int8 r = shuffle(a, (uint8)(3, 2, 1, 0, 7, 4, 5, 6)); /* masks wrap mod 4 */
  vstore8(r, 0, out);
  int2 s = shuffle2(a, b, (uint2)(5, 2));
  vstore2(s, 0, out + 8);
  float16 f = shuffle((float2)(1.0f, 2.0f), (uint16)(1));
  out[10] = (int)f.sf;
}

/* ---- atomics, async copy ---- */
int t_atomic_add(volatile __global int *p, int v) { return atomic_add(p, v); }
long t_atom_add64(volatile __global long *p, long v) { return atom_add(p, v); }

void t_atomics(volatile __global int *g, volatile __local uint *l, volatile __global long *g64,
               volatile __global float *gf, __global long *out) {
  int k = 0;
  *g = 5;
  out[k++] = atomic_add(g, 3);   /* 5 -> 8 */
  out[k++] = atomic_sub(g, 1);   /* 8 -> 7 */
  out[k++] = atomic_xchg(g, 42); /* 7 -> 42 */
  out[k++] = atomic_inc(g);      /* 42 -> 43 */
  out[k++] = atomic_dec(g);      /* 43 -> 42 */
  out[k++] = atomic_cmpxchg(g, 41, 0); /* no swap */
  out[k++] = atomic_cmpxchg(g, 42, -7); /* swap */
  out[k++] = atomic_min(g, -9);  /* -7 -> -9 */
  out[k++] = atomic_max(g, 3);   /* -9 -> 3 */
  out[k++] = atomic_and(g, 6);   /* 3 -> 2 */
  out[k++] = atomic_or(g, 9);    /* 2 -> 11 */
  out[k++] = atomic_xor(g, 1);   /* 11 -> 10 */
  out[k++] = *g;
  *l = 0xfffffff0u;
  out[k++] = atom_max(l, 7u);    /* unsigned: stays */
  out[k++] = atom_min(l, 7u);    /* -> 7 */
  out[k++] = *l;
  *g64 = 0x100000000L;
  out[k++] = atom_add(g64, 0x100000000L);
  out[k++] = atom_cmpxchg(g64, 0x200000000L, -1L);
  out[k++] = atom_min(g64, -5L);
  out[k++] = *g64;
  *gf = 1.5f;
  out[k++] = (long)(atomic_xchg(gf, 2.5f) * 2);
  out[k++] = (long)(*gf * 2);
}

/* The host runs these once per work-item of a simulated group. */
void t_async_in(__local int *l, __global const int *g) {
  event_t e = async_work_group_copy(l, g, 37, 0);
  wait_group_events(1, &e);
  prefetch(g, 37);
}
void t_async_out(__global int *back, __local const int *l, __local int *l2, __global const int *g) {
  event_t e = async_work_group_strided_copy(back, l, 10, 3, 0);
  e = async_work_group_strided_copy(l2, g, 5, 2, e);
  wait_group_events(1, &e);
}
