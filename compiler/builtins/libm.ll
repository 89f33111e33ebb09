; libm entry points for the builtin library (math.cl calls them as
; __aquila_libm_<name>). OpenCL C marks every call it emits convergent, and
; a convergent call stops the loop vectorizer; these wrappers, written in IR,
; call glibc without that mark, and vanish when inlined. Keep the list in
; step with math.cl's LIBM1/LIBM2 lines.

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

declare float @acosf(float) #0
define float @__aquila_libm_acosf(float %x) #1 {
  %r = tail call float @acosf(float %x) #0
  ret float %r
}
declare double @acos(double) #0
define double @__aquila_libm_acos(double %x) #1 {
  %r = tail call double @acos(double %x) #0
  ret double %r
}
declare float @acoshf(float) #0
define float @__aquila_libm_acoshf(float %x) #1 {
  %r = tail call float @acoshf(float %x) #0
  ret float %r
}
declare double @acosh(double) #0
define double @__aquila_libm_acosh(double %x) #1 {
  %r = tail call double @acosh(double %x) #0
  ret double %r
}
declare float @asinf(float) #0
define float @__aquila_libm_asinf(float %x) #1 {
  %r = tail call float @asinf(float %x) #0
  ret float %r
}
declare double @asin(double) #0
define double @__aquila_libm_asin(double %x) #1 {
  %r = tail call double @asin(double %x) #0
  ret double %r
}
declare float @asinhf(float) #0
define float @__aquila_libm_asinhf(float %x) #1 {
  %r = tail call float @asinhf(float %x) #0
  ret float %r
}
declare double @asinh(double) #0
define double @__aquila_libm_asinh(double %x) #1 {
  %r = tail call double @asinh(double %x) #0
  ret double %r
}
declare float @atanf(float) #0
define float @__aquila_libm_atanf(float %x) #1 {
  %r = tail call float @atanf(float %x) #0
  ret float %r
}
declare double @atan(double) #0
define double @__aquila_libm_atan(double %x) #1 {
  %r = tail call double @atan(double %x) #0
  ret double %r
}
declare float @atanhf(float) #0
define float @__aquila_libm_atanhf(float %x) #1 {
  %r = tail call float @atanhf(float %x) #0
  ret float %r
}
declare double @atanh(double) #0
define double @__aquila_libm_atanh(double %x) #1 {
  %r = tail call double @atanh(double %x) #0
  ret double %r
}
declare float @cbrtf(float) #0
define float @__aquila_libm_cbrtf(float %x) #1 {
  %r = tail call float @cbrtf(float %x) #2
  ret float %r
}
declare double @cbrt(double) #0
define double @__aquila_libm_cbrt(double %x) #1 {
  %r = tail call double @cbrt(double %x) #2
  ret double %r
}
declare float @cosf(float) #0
define float @__aquila_libm_cosf(float %x) #1 {
  %r = tail call float @cosf(float %x) #0
  ret float %r
}
declare double @cos(double) #0
define double @__aquila_libm_cos(double %x) #1 {
  %r = tail call double @cos(double %x) #0
  ret double %r
}
declare float @coshf(float) #0
define float @__aquila_libm_coshf(float %x) #1 {
  %r = tail call float @coshf(float %x) #0
  ret float %r
}
declare double @cosh(double) #0
define double @__aquila_libm_cosh(double %x) #1 {
  %r = tail call double @cosh(double %x) #0
  ret double %r
}
declare float @erff(float) #0
define float @__aquila_libm_erff(float %x) #1 {
  %r = tail call float @erff(float %x) #0
  ret float %r
}
declare double @erf(double) #0
define double @__aquila_libm_erf(double %x) #1 {
  %r = tail call double @erf(double %x) #0
  ret double %r
}
declare float @erfcf(float) #0
define float @__aquila_libm_erfcf(float %x) #1 {
  %r = tail call float @erfcf(float %x) #0
  ret float %r
}
declare double @erfc(double) #0
define double @__aquila_libm_erfc(double %x) #1 {
  %r = tail call double @erfc(double %x) #0
  ret double %r
}
declare float @expf(float) #0
define float @__aquila_libm_expf(float %x) #1 {
  %r = tail call float @expf(float %x) #2
  ret float %r
}
declare double @exp(double) #0
define double @__aquila_libm_exp(double %x) #1 {
  %r = tail call double @exp(double %x) #2
  ret double %r
}
declare float @exp2f(float) #0
define float @__aquila_libm_exp2f(float %x) #1 {
  %r = tail call float @exp2f(float %x) #2
  ret float %r
}
declare double @exp2(double) #0
define double @__aquila_libm_exp2(double %x) #1 {
  %r = tail call double @exp2(double %x) #2
  ret double %r
}
declare float @exp10f(float) #0
define float @__aquila_libm_exp10f(float %x) #1 {
  %r = tail call float @exp10f(float %x) #2
  ret float %r
}
declare double @exp10(double) #0
define double @__aquila_libm_exp10(double %x) #1 {
  %r = tail call double @exp10(double %x) #2
  ret double %r
}
declare float @expm1f(float) #0
define float @__aquila_libm_expm1f(float %x) #1 {
  %r = tail call float @expm1f(float %x) #2
  ret float %r
}
declare double @expm1(double) #0
define double @__aquila_libm_expm1(double %x) #1 {
  %r = tail call double @expm1(double %x) #2
  ret double %r
}
declare float @logf(float) #0
define float @__aquila_libm_logf(float %x) #1 {
  %r = tail call float @logf(float %x) #2
  ret float %r
}
declare double @log(double) #0
define double @__aquila_libm_log(double %x) #1 {
  %r = tail call double @log(double %x) #2
  ret double %r
}
declare float @log2f(float) #0
define float @__aquila_libm_log2f(float %x) #1 {
  %r = tail call float @log2f(float %x) #2
  ret float %r
}
declare double @log2(double) #0
define double @__aquila_libm_log2(double %x) #1 {
  %r = tail call double @log2(double %x) #2
  ret double %r
}
declare float @log10f(float) #0
define float @__aquila_libm_log10f(float %x) #1 {
  %r = tail call float @log10f(float %x) #2
  ret float %r
}
declare double @log10(double) #0
define double @__aquila_libm_log10(double %x) #1 {
  %r = tail call double @log10(double %x) #2
  ret double %r
}
declare float @log1pf(float) #0
define float @__aquila_libm_log1pf(float %x) #1 {
  %r = tail call float @log1pf(float %x) #2
  ret float %r
}
declare double @log1p(double) #0
define double @__aquila_libm_log1p(double %x) #1 {
  %r = tail call double @log1p(double %x) #2
  ret double %r
}
declare float @logbf(float) #0
define float @__aquila_libm_logbf(float %x) #1 {
  %r = tail call float @logbf(float %x) #0
  ret float %r
}
declare double @logb(double) #0
define double @__aquila_libm_logb(double %x) #1 {
  %r = tail call double @logb(double %x) #0
  ret double %r
}
declare float @sinf(float) #0
define float @__aquila_libm_sinf(float %x) #1 {
  %r = tail call float @sinf(float %x) #0
  ret float %r
}
declare double @sin(double) #0
define double @__aquila_libm_sin(double %x) #1 {
  %r = tail call double @sin(double %x) #0
  ret double %r
}
declare float @sinhf(float) #0
define float @__aquila_libm_sinhf(float %x) #1 {
  %r = tail call float @sinhf(float %x) #0
  ret float %r
}
declare double @sinh(double) #0
define double @__aquila_libm_sinh(double %x) #1 {
  %r = tail call double @sinh(double %x) #0
  ret double %r
}
declare float @tanf(float) #0
define float @__aquila_libm_tanf(float %x) #1 {
  %r = tail call float @tanf(float %x) #0
  ret float %r
}
declare double @tan(double) #0
define double @__aquila_libm_tan(double %x) #1 {
  %r = tail call double @tan(double %x) #0
  ret double %r
}
declare float @tanhf(float) #0
define float @__aquila_libm_tanhf(float %x) #1 {
  %r = tail call float @tanhf(float %x) #0
  ret float %r
}
declare double @tanh(double) #0
define double @__aquila_libm_tanh(double %x) #1 {
  %r = tail call double @tanh(double %x) #0
  ret double %r
}
declare float @tgammaf(float) #0
define float @__aquila_libm_tgammaf(float %x) #1 {
  %r = tail call float @tgammaf(float %x) #0
  ret float %r
}
declare double @tgamma(double) #0
define double @__aquila_libm_tgamma(double %x) #1 {
  %r = tail call double @tgamma(double %x) #0
  ret double %r
}
declare float @atan2f(float, float) #0
define float @__aquila_libm_atan2f(float %x, float %y) #1 {
  %r = tail call float @atan2f(float %x, float %y) #0
  ret float %r
}
declare double @atan2(double, double) #0
define double @__aquila_libm_atan2(double %x, double %y) #1 {
  %r = tail call double @atan2(double %x, double %y) #0
  ret double %r
}
declare float @powf(float, float) #0
define float @__aquila_libm_powf(float %x, float %y) #1 {
  %r = tail call float @powf(float %x, float %y) #0
  ret float %r
}
declare double @pow(double, double) #0
define double @__aquila_libm_pow(double %x, double %y) #1 {
  %r = tail call double @pow(double %x, double %y) #0
  ret double %r
}
declare float @hypotf(float, float) #0
define float @__aquila_libm_hypotf(float %x, float %y) #1 {
  %r = tail call float @hypotf(float %x, float %y) #0
  ret float %r
}
declare double @hypot(double, double) #0
define double @__aquila_libm_hypot(double %x, double %y) #1 {
  %r = tail call double @hypot(double %x, double %y) #0
  ret double %r
}
declare float @fdimf(float, float) #0
define float @__aquila_libm_fdimf(float %x, float %y) #1 {
  %r = tail call float @fdimf(float %x, float %y) #0
  ret float %r
}
declare double @fdim(double, double) #0
define double @__aquila_libm_fdim(double %x, double %y) #1 {
  %r = tail call double @fdim(double %x, double %y) #0
  ret double %r
}
declare float @nextafterf(float, float) #0
define float @__aquila_libm_nextafterf(float %x, float %y) #1 {
  %r = tail call float @nextafterf(float %x, float %y) #0
  ret float %r
}
declare double @nextafter(double, double) #0
define double @__aquila_libm_nextafter(double %x, double %y) #1 {
  %r = tail call double @nextafter(double %x, double %y) #0
  ret double %r
}
declare float @remainderf(float, float) #0
define float @__aquila_libm_remainderf(float %x, float %y) #1 {
  %r = tail call float @remainderf(float %x, float %y) #0
  ret float %r
}
declare double @remainder(double, double) #0
define double @__aquila_libm_remainder(double %x, double %y) #1 {
  %r = tail call double @remainder(double %x, double %y) #0
  ret double %r
}
declare i32 @ilogbf(float) #0
define i32 @__aquila_libm_ilogbf(float %x) #1 {
  %r = tail call i32 @ilogbf(float %x) #0
  ret i32 %r
}
declare i32 @ilogb(double) #0
define i32 @__aquila_libm_ilogb(double %x) #1 {
  %r = tail call i32 @ilogb(double %x) #0
  ret i32 %r
}

; #2: calls that LLVM must not replace by a vector variant from glibc's
; libmvec, whose errors (up to 4 ulp) exceed OpenCL's limits for these
; functions (3 ulp; 2 for log1p and cbrt): measured, double exp at 3.008
; ulp in test_bruteforce. nobuiltin hides them from the loop vectorizer's
; vector-library mapping and from the conversion to LLVM intrinsics.
attributes #0 = { nounwind willreturn memory(none) }
attributes #1 = { alwaysinline nounwind willreturn memory(none) }
attributes #2 = { nobuiltin nounwind willreturn memory(none) }
