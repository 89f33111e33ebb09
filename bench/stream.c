/* STREAM-like "add" (c = a + b) on every core: the memory bandwidth the samples can
 * hope for. Prints the best of several passes in GB/s, counting 12 bytes per element
 * (two loads, one store) as STREAM does. Arrays are 8x the L3 cache or more. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)1 << 26;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  /* First touch from the threads that will use the pages. */
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++)
    a[i] = 1.0f, b[i] = 2.0f, c[i] = 0.0f;
  double best = 0;
  for (int pass = 0; pass < 10; pass++) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
      c[i] = a[i] + b[i];
    double t = omp_get_wtime() - t0, rate = 12.0 * n / t / 1e9;
    if (rate > best) best = rate;
  }
  if (c[n / 2] != 3.0f) return 1;
  printf("%.2f\n", best);
  return 0;
}
