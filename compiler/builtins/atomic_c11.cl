/* OpenCL C 3.0's C11-style atomic functions (section 6.15.12): atomic_init,
 * load, store, exchange, compare_exchange, fetch_<op> and the atomic_flag
 * functions on __global and __local objects, each with its default,
 * order-only and order-and-scope forms, and atomic_work_item_fence. Compiled
 * as OpenCL C 3.0 with the feature macros user programs get
 * (compiler/frontend/options.c, runtime/features.c): every order and every
 * scope, and the generic address space, whose forms are the same code. On a CPU every scope is the processor's
 * own coherence, so the scope argument only has to be accepted; clang's
 * __opencl_atomic_* builtins turn the order into the instruction's. */
#include "clc.h"

#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#define SEQ memory_order_seq_cst
#define DEV memory_scope_device

/* init, load, store and exchange: every atomic type. */
#define BASIC(A, C, AS)                                                                            \
  INL void atomic_init(volatile AS A *p, C v) { __opencl_atomic_init(p, v); }                      \
  INL void atomic_store_explicit(volatile AS A *p, C v, memory_order o, memory_scope s) {          \
    __opencl_atomic_store(p, v, o, s);                                                             \
  }                                                                                                \
  INL void atomic_store_explicit(volatile AS A *p, C v, memory_order o) {                          \
    __opencl_atomic_store(p, v, o, DEV);                                                           \
  }                                                                                                \
  INL void atomic_store(volatile AS A *p, C v) { __opencl_atomic_store(p, v, SEQ, DEV); }          \
  INL C atomic_load_explicit(volatile AS A *p, memory_order o, memory_scope s) {                   \
    return __opencl_atomic_load(p, o, s);                                                          \
  }                                                                                                \
  INL C atomic_load_explicit(volatile AS A *p, memory_order o) {                                   \
    return __opencl_atomic_load(p, o, DEV);                                                        \
  }                                                                                                \
  INL C atomic_load(volatile AS A *p) { return __opencl_atomic_load(p, SEQ, DEV); }                \
  INL C atomic_exchange_explicit(volatile AS A *p, C v, memory_order o, memory_scope s) {          \
    return __opencl_atomic_exchange(p, v, o, s);                                                   \
  }                                                                                                \
  INL C atomic_exchange_explicit(volatile AS A *p, C v, memory_order o) {                          \
    return __opencl_atomic_exchange(p, v, o, DEV);                                                 \
  }                                                                                                \
  INL C atomic_exchange(volatile AS A *p, C v) { return __opencl_atomic_exchange(p, v, SEQ, DEV); }

/* compare_exchange with `expected` in any address space: the builtin takes
 * a private copy, written back whatever the outcome (on failure it holds the
 * value found, on success the value expected already was). */
#define CAS_ONE(A, C, AS, EAS, KIND)                                                               \
  INL bool atomic_compare_exchange_##KIND##_explicit(volatile AS A *p, EAS C *expected, C desired, \
                                                      memory_order success, memory_order failure,  \
                                                      memory_scope s) {                            \
    C e = *expected;                                                                               \
    bool done =                                                                                    \
        __opencl_atomic_compare_exchange_##KIND(p, &e, desired, success, failure, s);              \
    *expected = e;                                                                                 \
    return done;                                                                                   \
  }                                                                                                \
  INL bool atomic_compare_exchange_##KIND##_explicit(volatile AS A *p, EAS C *expected, C desired, \
                                                      memory_order success,                        \
                                                      memory_order failure) {                      \
    return atomic_compare_exchange_##KIND##_explicit(p, expected, desired, success, failure, DEV); \
  }                                                                                                \
  INL bool atomic_compare_exchange_##KIND(volatile AS A *p, EAS C *expected, C desired) {          \
    return atomic_compare_exchange_##KIND##_explicit(p, expected, desired, SEQ, SEQ, DEV);         \
  }
#define CAS(A, C, AS)                                                                              \
  CAS_ONE(A, C, AS, __global, strong)                                                              \
  CAS_ONE(A, C, AS, __local, strong)                                                               \
  CAS_ONE(A, C, AS, __private, strong)                                                             \
  CAS_ONE(A, C, AS, __global, weak) CAS_ONE(A, C, AS, __local, weak)                               \
      CAS_ONE(A, C, AS, __private, weak)

/* fetch_<op>: the integer types, and the operand types the header pairs
 * with atomic_[u]intptr_t. */
#define FETCH(OP, A, C, M, AS)                                                                     \
  INL C atomic_fetch_##OP##_explicit(volatile AS A *p, M v, memory_order o, memory_scope s) {      \
    return __opencl_atomic_fetch_##OP(p, (C)v, o, s);                                              \
  }                                                                                                \
  INL C atomic_fetch_##OP##_explicit(volatile AS A *p, M v, memory_order o) {                      \
    return __opencl_atomic_fetch_##OP(p, (C)v, o, DEV);                                            \
  }                                                                                                \
  INL C atomic_fetch_##OP(volatile AS A *p, M v) {                                                 \
    return __opencl_atomic_fetch_##OP(p, (C)v, SEQ, DEV);                                          \
  }
#define FETCH_INTEGERS(OP, AS)                                                                     \
  FETCH(OP, atomic_int, int, int, AS)                                                              \
  FETCH(OP, atomic_uint, uint, uint, AS)                                                           \
  FETCH(OP, atomic_long, long, long, AS) FETCH(OP, atomic_ulong, ulong, ulong, AS)

#define FOR_SPACES(M, ...) M(__VA_ARGS__, __global) M(__VA_ARGS__, __local)

#define ALL_TYPES(AS)                                                                              \
  BASIC(atomic_int, int, AS)                                                                       \
  BASIC(atomic_uint, uint, AS)                                                                     \
  BASIC(atomic_long, long, AS)                                                                     \
  BASIC(atomic_ulong, ulong, AS)                                                                   \
  BASIC(atomic_float, float, AS)                                                                   \
  BASIC(atomic_double, double, AS)                                                                 \
  CAS(atomic_int, int, AS)                                                                         \
  CAS(atomic_uint, uint, AS)                                                                       \
  CAS(atomic_long, long, AS)                                                                       \
  CAS(atomic_ulong, ulong, AS) CAS(atomic_float, float, AS) CAS(atomic_double, double, AS)

ALL_TYPES(__global)
ALL_TYPES(__local)

#define FETCH_ALL(AS)                                                                              \
  FETCH_INTEGERS(add, AS)                                                                          \
  FETCH_INTEGERS(sub, AS)                                                                          \
  FETCH_INTEGERS(or, AS)                                                                           \
  FETCH_INTEGERS(xor, AS)                                                                          \
  FETCH_INTEGERS(and, AS)                                                                          \
  FETCH_INTEGERS(min, AS)                                                                          \
  FETCH_INTEGERS(max, AS)                                                                          \
  FETCH(add, atomic_uintptr_t, uintptr_t, ptrdiff_t, AS)                                           \
  FETCH(sub, atomic_uintptr_t, uintptr_t, ptrdiff_t, AS)                                           \
  FETCH(or, atomic_uintptr_t, uintptr_t, intptr_t, AS)                                             \
  FETCH(or, atomic_intptr_t, intptr_t, uintptr_t, AS)                                              \
  FETCH(xor, atomic_uintptr_t, uintptr_t, intptr_t, AS)                                            \
  FETCH(xor, atomic_intptr_t, intptr_t, uintptr_t, AS)                                             \
  FETCH(and, atomic_uintptr_t, uintptr_t, intptr_t, AS)                                            \
  FETCH(and, atomic_intptr_t, intptr_t, uintptr_t, AS)                                             \
  FETCH(min, atomic_uintptr_t, uintptr_t, intptr_t, AS)                                            \
  FETCH(min, atomic_intptr_t, intptr_t, uintptr_t, AS)

FETCH_ALL(__global)
FETCH_ALL(__local)

/* atomic_flag is an atomic_int: set is 1, clear is 0. */
#define FLAG(AS)                                                                                   \
  INL bool atomic_flag_test_and_set_explicit(volatile AS atomic_flag *p, memory_order o,           \
                                             memory_scope s) {                                     \
    return __opencl_atomic_exchange(p, 1, o, s) != 0;                                              \
  }                                                                                                \
  INL bool atomic_flag_test_and_set_explicit(volatile AS atomic_flag *p, memory_order o) {         \
    return __opencl_atomic_exchange(p, 1, o, DEV) != 0;                                            \
  }                                                                                                \
  INL bool atomic_flag_test_and_set(volatile AS atomic_flag *p) {                                  \
    return __opencl_atomic_exchange(p, 1, SEQ, DEV) != 0;                                          \
  }                                                                                                \
  INL void atomic_flag_clear_explicit(volatile AS atomic_flag *p, memory_order o,                  \
                                      memory_scope s) {                                            \
    __opencl_atomic_store(p, 0, o, s);                                                             \
  }                                                                                                \
  INL void atomic_flag_clear_explicit(volatile AS atomic_flag *p, memory_order o) {                \
    __opencl_atomic_store(p, 0, o, DEV);                                                           \
  }                                                                                                \
  INL void atomic_flag_clear(volatile AS atomic_flag *p) { __opencl_atomic_store(p, 0, SEQ, DEV); }

FLAG(__global)
FLAG(__local)

/* The generic forms, the only ones clang's header declares once the generic
 * address space is on: objects and `expected` anywhere. */
#define CAS_GENERIC(A, C)                                                                          \
  CAS_ONE(A, C, __generic, __generic, strong) CAS_ONE(A, C, __generic, __generic, weak)
BASIC(atomic_int, int, __generic)
BASIC(atomic_uint, uint, __generic)
BASIC(atomic_long, long, __generic)
BASIC(atomic_ulong, ulong, __generic)
BASIC(atomic_float, float, __generic)
BASIC(atomic_double, double, __generic)
CAS_GENERIC(atomic_int, int)
CAS_GENERIC(atomic_uint, uint)
CAS_GENERIC(atomic_long, long)
CAS_GENERIC(atomic_ulong, ulong)
CAS_GENERIC(atomic_float, float)
CAS_GENERIC(atomic_double, double)
FETCH_ALL(__generic)
FLAG(__generic)

/* A fence of the given order over the given memories: on a CPU one fence
 * orders them all; relaxed orders nothing. */
INL void atomic_work_item_fence(cl_mem_fence_flags flags, memory_order order, memory_scope scope) {
  switch (order) {
  case memory_order_relaxed: break;
  case memory_order_acquire: __c11_atomic_thread_fence(__ATOMIC_ACQUIRE); break;
  case memory_order_release: __c11_atomic_thread_fence(__ATOMIC_RELEASE); break;
  case memory_order_acq_rel: __c11_atomic_thread_fence(__ATOMIC_ACQ_REL); break;
  default: __c11_atomic_thread_fence(__ATOMIC_SEQ_CST); break;
  }
}
