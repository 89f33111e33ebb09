/* Sub-groups (OpenCL C 3.0's __opencl_c_subgroups, cl_khr_subgroups, and
 * the cl_khr_subgroup_* and cl_intel_subgroups extensions): every function
 * is built from a few primitives that the compiler lowers itself.
 *
 * A sub-group is the vector the vectorizer makes: W consecutive work-items
 * along x (16 with AVX-512), run as one K.wi.v<W>, where a reduction is
 * one vector reduction, a shuffle one permutation, a ballot a mask
 * (compiler/vectorize/sub_groups.c), over the lanes that are on. The
 * work-items a vector cannot hold (the last Lx % W of a row, or every one
 * of a kernel that was not vectorized) are sub-groups of one, where each
 * primitive is the identity (compiler/workgroup/workitem.c). The ids and
 * sizes are work-item queries bound there too.
 *
 * The primitives, T one of i8, i16, i32, i64, f32, f64 (the bits: signed
 * and unsigned share them, the operation says which):
 *   T __aquila_sg_reduce_T(int op, T x)          over the active lanes
 *   T __aquila_sg_scan_inclusive_T(int op, T x)  in lane order
 *   T __aquila_sg_scan_exclusive_T(int op, T x)
 *   T __aquila_sg_shuffle_T(T x, uint lane)      lane's x (lane < size)
 *   T __aquila_sg_clustered_reduce_T(int op, T x, uint cluster)
 *                                                over the active lanes of each
 *                                                aligned run of cluster lanes
 *   uint __aquila_sg_ballot(int predicate)       bit l: lane l is on and p != 0
 * op is one of sub_group_ops.h. Sub-groups have no independent forward
 * progress: a vector's lanes run in lockstep, so sub_group_barrier orders
 * nothing that program order does not. Compiled as OpenCL C 3.0 with the
 * sub-group extensions on (builtins.mk). */
#include "clc.h"
#include "sub_group_ops.h"

uint __aquila_sg_size(void);
uint __aquila_sg_max_size(void);
uint __aquila_sg_count(void);
uint __aquila_sg_enqueued_count(void);
uint __aquila_sg_id(void);
uint __aquila_sg_local_id(void);
uint __aquila_sg_ballot(int predicate);

#define PRIMITIVES(T, S)                                                                           \
  T __aquila_sg_reduce_##S(int op, T x);                                                           \
  T __aquila_sg_scan_inclusive_##S(int op, T x);                                                   \
  T __aquila_sg_scan_exclusive_##S(int op, T x);                                                   \
  T __aquila_sg_shuffle_##S(T x, uint lane);                                                       \
  T __aquila_sg_clustered_reduce_##S(int op, T x, uint cluster);
PRIMITIVES(char, i8)
PRIMITIVES(short, i16)
PRIMITIVES(int, i32)
PRIMITIVES(long, i64)
PRIMITIVES(float, f32)
PRIMITIVES(double, f64)

/* ---- queries ------------------------------------------------------------------------------ */

INL uint get_sub_group_size(void) { return __aquila_sg_size(); }
INL uint get_max_sub_group_size(void) { return __aquila_sg_max_size(); }
INL uint get_num_sub_groups(void) { return __aquila_sg_count(); }
INL uint get_enqueued_num_sub_groups(void) { return __aquila_sg_enqueued_count(); }
INL uint get_sub_group_id(void) { return __aquila_sg_id(); }
INL uint get_sub_group_local_id(void) { return __aquila_sg_local_id(); }

INL void sub_group_barrier(cl_mem_fence_flags flags) {}
INL void sub_group_barrier(cl_mem_fence_flags flags, memory_scope scope) {}

/* ---- votes and ballots -------------------------------------------------------------------- */

/* The lanes that are on. */
static __attribute__((always_inline)) uint aq_active(void) { return __aquila_sg_ballot(1); }

INL int sub_group_all(int p) { return __aquila_sg_ballot(p) == aq_active(); }
INL int sub_group_any(int p) { return __aquila_sg_ballot(p) != 0; }
INL int sub_group_non_uniform_all(int p) { return __aquila_sg_ballot(p) == aq_active(); }
INL int sub_group_non_uniform_any(int p) { return __aquila_sg_ballot(p) != 0; }
INL int sub_group_elect(void) { return get_sub_group_local_id() == ctz(aq_active()); }

INL uint4 sub_group_ballot(int p) { return (uint4)(__aquila_sg_ballot(p), 0, 0, 0); }
INL int sub_group_inverse_ballot(uint4 v) { return (v.x >> get_sub_group_local_id()) & 1; }
INL int sub_group_ballot_bit_extract(uint4 v, uint i) {
  uint w = i < 32 ? v.x : i < 64 ? v.y : i < 96 ? v.z : v.w;
  return (w >> (i & 31)) & 1;
}
/* The bits of the sub-group's work-items: the CTS takes them up to the
 * largest sub-group's size, in a row's last, smaller one too. */
static __attribute__((always_inline)) uint aq_sub_group_bits(uint4 v) {
  uint n = get_max_sub_group_size();
  return n >= 32 ? v.x : v.x & ((1u << n) - 1);
}
INL uint sub_group_ballot_bit_count(uint4 v) { return popcount(aq_sub_group_bits(v)); }
INL uint sub_group_ballot_inclusive_scan(uint4 v) {
  uint id = get_sub_group_local_id();
  return popcount(v.x & (id >= 31 ? ~0u : (2u << id) - 1));
}
INL uint sub_group_ballot_exclusive_scan(uint4 v) {
  return popcount(v.x & ((1u << get_sub_group_local_id()) - 1));
}
INL uint sub_group_ballot_find_lsb(uint4 v) { return ctz(aq_sub_group_bits(v)); }
INL uint sub_group_ballot_find_msb(uint4 v) { return 31 - clz(aq_sub_group_bits(v)); }
#define MASK(NAME, EXPR)                                                                           \
  INL uint4 get_sub_group_##NAME##_mask(void) {                                                    \
    uint id = get_sub_group_local_id(), n = get_sub_group_size();                                  \
    uint all = n >= 32 ? ~0u : (1u << n) - 1;                                                      \
    return (uint4)((EXPR) & all, 0, 0, 0);                                                         \
  }
MASK(eq, 1u << id)
MASK(ge, ~0u << id)
MASK(gt, id >= 31 ? 0u : ~0u << (id + 1))
MASK(le, id >= 31 ? ~0u : (2u << id) - 1)
MASK(lt, (1u << id) - 1)

/* ---- shuffles and broadcasts -------------------------------------------------------------- */

/* Each scalar type through the primitive of its bits. */
#define SHUFFLE_AS(T, S, B)                                                                        \
  static __attribute__((always_inline, overloadable)) T aq_shuffle(T x, uint lane) {               \
    return as_##T(__aquila_sg_shuffle_##S(as_##B(x), lane));                                       \
  }
SHUFFLE_AS(char, i8, char)
SHUFFLE_AS(uchar, i8, char)
SHUFFLE_AS(short, i16, short)
SHUFFLE_AS(ushort, i16, short)
SHUFFLE_AS(int, i32, int)
SHUFFLE_AS(uint, i32, int)
SHUFFLE_AS(long, i64, long)
SHUFFLE_AS(ulong, i64, long)
SHUFFLE_AS(float, f32, float)
SHUFFLE_AS(double, f64, double)

/* The lowest lane that is on. */
static __attribute__((always_inline)) uint aq_first(void) { return ctz(aq_active()); }

#define SHUFFLES(T)                                                                                \
  INL T sub_group_broadcast(T x, uint id) { return aq_shuffle(x, id); }                            \
  INL T sub_group_non_uniform_broadcast(T x, uint id) { return aq_shuffle(x, id); }                \
  INL T sub_group_broadcast_first(T x) { return aq_shuffle(x, aq_first()); }                       \
  INL T sub_group_shuffle(T x, uint id) { return aq_shuffle(x, id); }                              \
  INL T sub_group_shuffle_xor(T x, uint m) { return aq_shuffle(x, get_sub_group_local_id() ^ m); } \
  INL T sub_group_shuffle_up(T x, uint d) { return aq_shuffle(x, get_sub_group_local_id() - d); }  \
  INL T sub_group_shuffle_down(T x, uint d) {                                                      \
    return aq_shuffle(x, get_sub_group_local_id() + d);                                            \
  }                                                                                                \
  INL T sub_group_rotate(T x, int d) {                                                             \
    uint n = get_sub_group_size();                                                                 \
    return aq_shuffle(x, (get_sub_group_local_id() + (uint)d) % n);                                \
  }                                                                                                \
  INL T sub_group_clustered_rotate(T x, int d, uint c) {                                           \
    uint id = get_sub_group_local_id();                                                            \
    return aq_shuffle(x, id - id % c + (id + (uint)d) % c);                                        \
  }                                                                                                \
  INL int sub_group_non_uniform_all_equal(T x) {                                                   \
    return __aquila_sg_ballot(x == aq_shuffle(x, aq_first())) == aq_active();                      \
  }
SHUFFLES(char)
SHUFFLES(uchar)
SHUFFLES(short)
SHUFFLES(ushort)
SHUFFLES(int)
SHUFFLES(uint)
SHUFFLES(long)
SHUFFLES(ulong)
SHUFFLES(float)
SHUFFLES(double)

/* Broadcasts of OpenCL vectors (cl_khr_subgroup_extended_types and
 * _ballot): element by element. */
#define VECTOR_BROADCAST(T, N)                                                                     \
  INL T##N sub_group_broadcast(T##N x, uint id) {                                                  \
    T##N r;                                                                                        \
    for (int i = 0; i < N; i++)                                                                    \
      ((T *)&r)[i] = aq_shuffle(((T *)&x)[i], id);                                                 \
    return r;                                                                                      \
  }                                                                                                \
  INL T##N sub_group_non_uniform_broadcast(T##N x, uint id) { return sub_group_broadcast(x, id); }
#define VECTOR_BROADCASTS(T)                                                                       \
  VECTOR_BROADCAST(T, 2)                                                                           \
  VECTOR_BROADCAST(T, 3)                                                                           \
  VECTOR_BROADCAST(T, 4)                                                                           \
  VECTOR_BROADCAST(T, 8)                                                                           \
  VECTOR_BROADCAST(T, 16)
VECTOR_BROADCASTS(char)
VECTOR_BROADCASTS(uchar)
VECTOR_BROADCASTS(short)
VECTOR_BROADCASTS(ushort)
VECTOR_BROADCASTS(int)
VECTOR_BROADCASTS(uint)
VECTOR_BROADCASTS(long)
VECTOR_BROADCASTS(ulong)
VECTOR_BROADCASTS(float)
VECTOR_BROADCASTS(double)

/* cl_intel_subgroups: shuffles of scalars and vectors; the relative ones
 * take from two values, the current sub-group's and the next's (or the
 * previous'). */
#define INTEL_SHUFFLE(T)                                                                           \
  INL T intel_sub_group_shuffle(T x, uint id) { return aq_shuffle(x, id); }                        \
  INL T intel_sub_group_shuffle_xor(T x, uint m) {                                                 \
    return aq_shuffle(x, get_sub_group_local_id() ^ m);                                            \
  }                                                                                                \
  INL T intel_sub_group_shuffle_down(T cur, T next, uint d) {                                      \
    uint n = get_sub_group_size(), at = get_sub_group_local_id() + d;                              \
    T a = aq_shuffle(cur, at), b = aq_shuffle(next, at - n);                                       \
    return at < n ? a : b;                                                                         \
  }                                                                                                \
  INL T intel_sub_group_shuffle_up(T prev, T cur, uint d) {                                        \
    uint n = get_sub_group_size(), id = get_sub_group_local_id();                                  \
    T a = aq_shuffle(cur, id - d), b = aq_shuffle(prev, id + n - d);                               \
    return d <= id ? a : b;                                                                        \
  }
#define INTEL_SHUFFLE_VECTOR(T, N)                                                                 \
  INL T##N intel_sub_group_shuffle(T##N x, uint id) {                                              \
    T##N r;                                                                                        \
    for (int i = 0; i < N; i++)                                                                    \
      ((T *)&r)[i] = intel_sub_group_shuffle(((T *)&x)[i], id);                                    \
    return r;                                                                                      \
  }                                                                                                \
  INL T##N intel_sub_group_shuffle_xor(T##N x, uint m) {                                           \
    T##N r;                                                                                        \
    for (int i = 0; i < N; i++)                                                                    \
      ((T *)&r)[i] = intel_sub_group_shuffle_xor(((T *)&x)[i], m);                                 \
    return r;                                                                                      \
  }                                                                                                \
  INL T##N intel_sub_group_shuffle_down(T##N c, T##N n, uint d) {                                  \
    T##N r;                                                                                        \
    for (int i = 0; i < N; i++)                                                                    \
      ((T *)&r)[i] = intel_sub_group_shuffle_down(((T *)&c)[i], ((T *)&n)[i], d);                  \
    return r;                                                                                      \
  }                                                                                                \
  INL T##N intel_sub_group_shuffle_up(T##N p, T##N c, uint d) {                                    \
    T##N r;                                                                                        \
    for (int i = 0; i < N; i++)                                                                    \
      ((T *)&r)[i] = intel_sub_group_shuffle_up(((T *)&p)[i], ((T *)&c)[i], d);                    \
    return r;                                                                                      \
  }
#define INTEL_SHUFFLES(T)                                                                          \
  INTEL_SHUFFLE(T)                                                                                 \
  INTEL_SHUFFLE_VECTOR(T, 2)                                                                       \
  INTEL_SHUFFLE_VECTOR(T, 3)                                                                       \
  INTEL_SHUFFLE_VECTOR(T, 4)                                                                       \
  INTEL_SHUFFLE_VECTOR(T, 8)                                                                       \
  INTEL_SHUFFLE_VECTOR(T, 16)
INTEL_SHUFFLES(char)
INTEL_SHUFFLES(uchar)
INTEL_SHUFFLES(short)
INTEL_SHUFFLES(ushort)
INTEL_SHUFFLES(int)
INTEL_SHUFFLES(uint)
INTEL_SHUFFLES(long)
INTEL_SHUFFLES(ulong)
INTEL_SHUFFLES(float)
INTEL_SHUFFLES(double)

/* Block reads and writes: work-item l of a sub-group of n takes element
 * i * n + l of the sub-group's block. */
#define INTEL_BLOCK(T, S, N)                                                                       \
  INL T##N intel_sub_group_block_read##S##N(const __global T *p) {                                 \
    uint n = get_sub_group_size(), id = get_sub_group_local_id();                                  \
    T##N r;                                                                                        \
    for (int i = 0; i < N; i++)                                                                    \
      ((T *)&r)[i] = p[i * n + id];                                                                \
    return r;                                                                                      \
  }                                                                                                \
  INL void intel_sub_group_block_write##S##N(__global T *p, T##N v) {                              \
    uint n = get_sub_group_size(), id = get_sub_group_local_id();                                  \
    for (int i = 0; i < N; i++)                                                                    \
      p[i * n + id] = ((T *)&v)[i];                                                                \
  }
#define INTEL_BLOCKS(T, S)                                                                         \
  INL T intel_sub_group_block_read##S(const __global T *p) {                                       \
    return p[get_sub_group_local_id()];                                                            \
  }                                                                                                \
  INL void intel_sub_group_block_write##S(__global T *p, T v) { p[get_sub_group_local_id()] = v; } \
  INTEL_BLOCK(T, S, 2)                                                                             \
  INTEL_BLOCK(T, S, 4)                                                                             \
  INTEL_BLOCK(T, S, 8)
INTEL_BLOCKS(uint, )
INTEL_BLOCKS(uint, _ui)
INTEL_BLOCKS(ushort, _us)

/* ---- reductions and scans ----------------------------------------------------------------- */

#define ARITH(T, S, PREFIX, NAME, OP)                                                              \
  INL T PREFIX##reduce_##NAME(T x) { return (T)__aquila_sg_reduce_##S(OP, x); }                    \
  INL T PREFIX##scan_inclusive_##NAME(T x) { return (T)__aquila_sg_scan_inclusive_##S(OP, x); }    \
  INL T PREFIX##scan_exclusive_##NAME(T x) { return (T)__aquila_sg_scan_exclusive_##S(OP, x); }

/* The core three (and their non-uniform forms), then what
 * cl_khr_subgroup_non_uniform_arithmetic adds. */
#define INTEGER_ARITH(T, S, MIN, MAX)                                                              \
  ARITH(T, S, sub_group_, add, AQ_SG_ADD)                                                          \
  ARITH(T, S, sub_group_, min, MIN)                                                                \
  ARITH(T, S, sub_group_, max, MAX)                                                                \
  ARITH(T, S, sub_group_non_uniform_, add, AQ_SG_ADD)                                              \
  ARITH(T, S, sub_group_non_uniform_, min, MIN)                                                    \
  ARITH(T, S, sub_group_non_uniform_, max, MAX)                                                    \
  ARITH(T, S, sub_group_non_uniform_, mul, AQ_SG_MUL)                                              \
  ARITH(T, S, sub_group_non_uniform_, and, AQ_SG_AND)                                              \
  ARITH(T, S, sub_group_non_uniform_, or, AQ_SG_OR)                                                \
  ARITH(T, S, sub_group_non_uniform_, xor, AQ_SG_XOR)
INTEGER_ARITH(char, i8, AQ_SG_SMIN, AQ_SG_SMAX)
INTEGER_ARITH(uchar, i8, AQ_SG_UMIN, AQ_SG_UMAX)
INTEGER_ARITH(short, i16, AQ_SG_SMIN, AQ_SG_SMAX)
INTEGER_ARITH(ushort, i16, AQ_SG_UMIN, AQ_SG_UMAX)
INTEGER_ARITH(int, i32, AQ_SG_SMIN, AQ_SG_SMAX)
INTEGER_ARITH(uint, i32, AQ_SG_UMIN, AQ_SG_UMAX)
INTEGER_ARITH(long, i64, AQ_SG_SMIN, AQ_SG_SMAX)
INTEGER_ARITH(ulong, i64, AQ_SG_UMIN, AQ_SG_UMAX)
#define FLOAT_ARITH(T, S)                                                                          \
  ARITH(T, S, sub_group_, add, AQ_SG_ADD)                                                          \
  ARITH(T, S, sub_group_, min, AQ_SG_FMIN)                                                         \
  ARITH(T, S, sub_group_, max, AQ_SG_FMAX)                                                         \
  ARITH(T, S, sub_group_non_uniform_, add, AQ_SG_ADD)                                              \
  ARITH(T, S, sub_group_non_uniform_, min, AQ_SG_FMIN)                                             \
  ARITH(T, S, sub_group_non_uniform_, max, AQ_SG_FMAX)                                             \
  ARITH(T, S, sub_group_non_uniform_, mul, AQ_SG_MUL)
FLOAT_ARITH(float, f32)
FLOAT_ARITH(double, f64)

/* cl_khr_subgroup_clustered_reduce: the same operations within aligned
 * clusters of a power-of-two size. */
#define CLUSTERED(T, S, NAME, OP)                                                                  \
  INL T sub_group_clustered_reduce_##NAME(T x, uint c) {                                           \
    return (T)__aquila_sg_clustered_reduce_##S(OP, x, c);                                          \
  }
#define INTEGER_CLUSTERED(T, S, MIN, MAX)                                                          \
  CLUSTERED(T, S, add, AQ_SG_ADD)                                                                  \
  CLUSTERED(T, S, mul, AQ_SG_MUL)                                                                  \
  CLUSTERED(T, S, min, MIN)                                                                        \
  CLUSTERED(T, S, max, MAX)                                                                        \
  CLUSTERED(T, S, and, AQ_SG_AND)                                                                  \
  CLUSTERED(T, S, or, AQ_SG_OR)                                                                    \
  CLUSTERED(T, S, xor, AQ_SG_XOR)
INTEGER_CLUSTERED(char, i8, AQ_SG_SMIN, AQ_SG_SMAX)
INTEGER_CLUSTERED(uchar, i8, AQ_SG_UMIN, AQ_SG_UMAX)
INTEGER_CLUSTERED(short, i16, AQ_SG_SMIN, AQ_SG_SMAX)
INTEGER_CLUSTERED(ushort, i16, AQ_SG_UMIN, AQ_SG_UMAX)
INTEGER_CLUSTERED(int, i32, AQ_SG_SMIN, AQ_SG_SMAX)
INTEGER_CLUSTERED(uint, i32, AQ_SG_UMIN, AQ_SG_UMAX)
INTEGER_CLUSTERED(long, i64, AQ_SG_SMIN, AQ_SG_SMAX)
INTEGER_CLUSTERED(ulong, i64, AQ_SG_UMIN, AQ_SG_UMAX)
#define FLOAT_CLUSTERED(T, S)                                                                      \
  CLUSTERED(T, S, add, AQ_SG_ADD)                                                                  \
  CLUSTERED(T, S, mul, AQ_SG_MUL)                                                                  \
  CLUSTERED(T, S, min, AQ_SG_FMIN)                                                                 \
  CLUSTERED(T, S, max, AQ_SG_FMAX)
FLOAT_CLUSTERED(float, f32)
FLOAT_CLUSTERED(double, f64)
#define LOGICAL_CLUSTERED(NAME, OP)                                                                \
  INL int sub_group_clustered_reduce_logical_##NAME(int p, uint c) {                               \
    return __aquila_sg_clustered_reduce_i32(OP, p != 0, c) != 0;                                   \
  }
LOGICAL_CLUSTERED(and, AQ_SG_AND)
LOGICAL_CLUSTERED(or, AQ_SG_OR)
LOGICAL_CLUSTERED(xor, AQ_SG_XOR)

/* Logical operations: on predicates, as 0 or 1. */
#define LOGICAL(NAME, OP)                                                                          \
  INL int sub_group_non_uniform_reduce_logical_##NAME(int p) {                                     \
    return __aquila_sg_reduce_i32(OP, p != 0) != 0;                                                \
  }                                                                                                \
  INL int sub_group_non_uniform_scan_inclusive_logical_##NAME(int p) {                             \
    return __aquila_sg_scan_inclusive_i32(OP, p != 0) != 0;                                        \
  }                                                                                                \
  INL int sub_group_non_uniform_scan_exclusive_logical_##NAME(int p) {                             \
    return __aquila_sg_scan_exclusive_i32(OP, p != 0) != 0;                                        \
  }
LOGICAL(and, AQ_SG_AND)
LOGICAL(or, AQ_SG_OR)
LOGICAL(xor, AQ_SG_XOR)
