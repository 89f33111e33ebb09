/* Geometric functions (OpenCL 1.2 section 6.12.5) on float and double of
 * 1 to 4 components. Float lengths are computed in double, which can
 * neither overflow nor underflow on float input; double lengths are
 * rescaled by a power of two first. */
#include "clc.h"

CNST float dot(float x, float y) { return x * y; }
CNST float dot(float2 x, float2 y) { return x.x * y.x + x.y * y.y; }
CNST float dot(float3 x, float3 y) { return x.x * y.x + x.y * y.y + x.z * y.z; }
CNST float dot(float4 x, float4 y) { return x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w; }
CNST double dot(double x, double y) { return x * y; }
CNST double dot(double2 x, double2 y) { return x.x * y.x + x.y * y.y; }
CNST double dot(double3 x, double3 y) { return x.x * y.x + x.y * y.y + x.z * y.z; }
CNST double dot(double4 x, double4 y) { return x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w; }

#define CROSS(T)                                                               \
  CNST T##3 cross(T##3 a, T##3 b) {                                           \
    return (T##3)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); \
  }                                                                           \
  CNST T##4 cross(T##4 a, T##4 b) {                                           \
    return (T##4)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x, 0); \
  }
CROSS(float) CROSS(double)

#define TO_D(N, x) __builtin_convertvector(x, double##N)
#define FLOAT_GEO(N)                                                           \
  CNST float length(float##N p) {                                             \
    double##N d = TO_D(N, p);                                                 \
    return (float)__builtin_sqrt(dot(d, d));                                  \
  }                                                                           \
  CNST float distance(float##N a, float##N b) {                               \
    double##N d = TO_D(N, a) - TO_D(N, b);                                    \
    return (float)__builtin_sqrt(dot(d, d));                                  \
  }                                                                           \
  CNST float##N normalize(float##N p) {                                       \
    float##N inf = __builtin_elementwise_abs(p) == INFINITY                  \
                       ? __builtin_elementwise_copysign((float##N)(1), p)     \
                       : (float##N)(0);                                       \
    if (any(isinf(p)))                                                        \
      p = inf;                                                                \
    double##N d = TO_D(N, p);                                                 \
    double l2 = dot(d, d);                                                    \
    if (l2 == 0)                                                              \
      return p;                                                               \
    return __builtin_convertvector(d * (1.0 / __builtin_sqrt(l2)), float##N); \
  }                                                                           \
  CNST float fast_length(float##N p) { return half_sqrt(dot(p, p)); }         \
  CNST float fast_distance(float##N a, float##N b) { return fast_length(a - b); } \
  CNST float##N fast_normalize(float##N p) {                                  \
    float l2 = dot(p, p);                                                     \
    return l2 == 0 ? p : p * half_rsqrt(l2);                                  \
  }
FLOAT_GEO(2) FLOAT_GEO(3) FLOAT_GEO(4)
CNST float length(float p) { return __builtin_fabsf(p); }
CNST float distance(float a, float b) { return __builtin_fabsf(a - b); }
CNST float normalize(float p) { return p == 0 || p != p ? p : __builtin_copysignf(1.0f, p); }
CNST float fast_length(float p) { return __builtin_fabsf(p); }
CNST float fast_distance(float a, float b) { return __builtin_fabsf(a - b); }
CNST float fast_normalize(float p) { return normalize(p); }

/* Scale by 2^-ilogb(max |component|) so the sum of squares stays in range;
 * scaling by a power of two is exact. */
#define DOUBLE_GEO(N)                                                          \
  CNST double length(double##N p) {                                           \
    double##N a = __builtin_elementwise_abs(p);                               \
    double m = __builtin_reduce_max(a);                                       \
    if (any(isinf(p)))                                                        \
      return INFINITY;                                                        \
    if (m == 0 || m != m || any(isnan(p)))                                    \
      return m == 0 ? 0.0 : NAN;                                              \
    int e = ilogb(m);                                                         \
    double##N q = ldexp(p, -e);                                               \
    return ldexp(__builtin_sqrt(dot(q, q)), e);                               \
  }                                                                           \
  CNST double distance(double##N a, double##N b) { return length(a - b); }    \
  CNST double##N normalize(double##N p) {                                     \
    if (any(isinf(p)))                                                        \
      p = __builtin_elementwise_abs(p) == INFINITY                            \
              ? __builtin_elementwise_copysign((double##N)(1), p)             \
              : (double##N)(0);                                               \
    double l = length(p);                                                     \
    /* A length past DBL_MAX: scale by a power of two (exact) first. */      \
    if (l == INFINITY) {                                                      \
      p *= 0x1p-600;                                                          \
      l = length(p);                                                          \
    }                                                                         \
    return l == 0 ? p : p / l;                                                \
  }
DOUBLE_GEO(2) DOUBLE_GEO(3) DOUBLE_GEO(4)
CNST double length(double p) { return __builtin_fabs(p); }
CNST double distance(double a, double b) { return __builtin_fabs(a - b); }
CNST double normalize(double p) { return p == 0 || p != p ? p : __builtin_copysign(1.0, p); }
