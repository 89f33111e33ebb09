/* Single-precision FMA peak on every core: independent FMA chains, enough of them to
 * cover the FMA latency on two pipes. Prints GFLOP/s, counting an FMA as 2 flops. */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
static float first_lane(vec v) {
  return _mm512_cvtss_f32(v);
}
#elif defined(__FMA__)
typedef __m256 vec;
#define LANES 8
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
static float first_lane(vec v) {
  return _mm256_cvtss_f32(v);
}
#else
#error "needs FMA: build with -march=native on an FMA-capable CPU"
#endif

#define CHAINS 12
#define ROUNDS 20000000L

int main(void) {
  double best = 0;
  float sink = 0;
  for (int pass = 0; pass < 3; pass++) {
    double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : sink)
    {
      vec acc[CHAINS];
      for (int k = 0; k < CHAINS; k++)
        acc[k] = SET1(1.0f + k * 1e-3f);
      const vec m = SET1(0.9999999f), add = SET1(1e-7f);
      for (long r = 0; r < ROUNDS; r++)
        for (int k = 0; k < CHAINS; k++)
          acc[k] = FMA(acc[k], m, add);
      vec total = acc[0];
      for (int k = 1; k < CHAINS; k++)
        total = ADD(total, acc[k]);
      sink += first_lane(total);
    }
    double t = omp_get_wtime() - t0;
    double flops = 2.0 * LANES * CHAINS * ROUNDS * omp_get_max_threads();
    if (flops / t / 1e9 > best) best = flops / t / 1e9;
  }
  /* The sum keeps the compiler from removing the loop. */
  printf("%.1f\n", best + (sink == 12345.0f));
  return 0;
}
