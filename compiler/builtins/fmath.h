/* The float math entry points that fmath.cl defines for the other builtin
 * files: the fast reductions behind native_* and half_* (native.cl). */
#ifndef AQUILA_BUILTINS_FMATH_H
#define AQUILA_BUILTINS_FMATH_H

#define FM_EXPORT __attribute__((always_inline, const))

FM_EXPORT float __aquila_sin_fast(float x);
FM_EXPORT float __aquila_cos_fast(float x);
FM_EXPORT float __aquila_tan_fast(float x);
FM_EXPORT float __aquila_powr_fast(float x, float y);

#endif
