/* Common functions (OpenCL 1.2 section 6.12.4) for float and double, scalar
 * and every vector width, including the overloads that take a scalar edge,
 * bound or weight alongside vector arguments. */
#include "clc.h"

#define COMMON(N, T)                                                           \
  CNST T##N clamp(T##N x, T##N lo, T##N hi) {                                 \
    return __builtin_elementwise_min(__builtin_elementwise_max(x, lo), hi);   \
  }                                                                           \
  CNST T##N degrees(T##N r) { return r * (T)(180.0 / M_PI); }                 \
  CNST T##N radians(T##N d) { return d * (T)(M_PI / 180.0); }                 \
  CNST T##N max(T##N x, T##N y) { return __builtin_elementwise_max(x, y); }   \
  CNST T##N min(T##N x, T##N y) { return __builtin_elementwise_min(x, y); }   \
  CNST T##N mix(T##N x, T##N y, T##N a) { return x + (y - x) * a; }           \
  CNST T##N step(T##N edge, T##N x) { return x < edge ? (T##N)(0) : (T##N)(1); } \
  CNST T##N smoothstep(T##N e0, T##N e1, T##N x) {                            \
    T##N t = clamp((x - e0) / (e1 - e0), (T##N)(0), (T##N)(1));               \
    return t * t * ((T)3 - (T)2 * t);                                         \
  }                                                                           \
  /* NaN gives 0 and zeros keep their sign, as the spec asks. */              \
  CNST T##N sign(T##N x) {                                                    \
    return x > (T)0 ? (T##N)(1) : x < (T)0 ? (T##N)(-1) : x == x ? x : (T##N)(0); \
  }
FOR_ALL_WIDTHS(COMMON, float) FOR_ALL_WIDTHS(COMMON, double)

#define COMMON_S(N, T)                                                         \
  CNST T##N clamp(T##N x, T lo, T hi) { return clamp(x, (T##N)(lo), (T##N)(hi)); } \
  CNST T##N max(T##N x, T y) { return __builtin_elementwise_max(x, (T##N)(y)); } \
  CNST T##N min(T##N x, T y) { return __builtin_elementwise_min(x, (T##N)(y)); } \
  CNST T##N mix(T##N x, T##N y, T a) { return x + (y - x) * a; }              \
  CNST T##N step(T edge, T##N x) { return step((T##N)(edge), x); }            \
  CNST T##N smoothstep(T e0, T e1, T##N x) {                                  \
    return smoothstep((T##N)(e0), (T##N)(e1), x);                             \
  }
FOR_VEC_WIDTHS(COMMON_S, float) FOR_VEC_WIDTHS(COMMON_S, double)
