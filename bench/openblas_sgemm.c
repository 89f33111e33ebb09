/* The tuned-BLAS limit for SGEMM on this machine: OpenBLAS's cblas_sgemm (Debian's
 * libopenblas, its pthread build, on every core) timed as bench/clblast_sgemm times
 * CLBlast: one untimed warm-up call, then the fastest of --iterations calls; GFLOPS is
 * 2 n^3 over it. C = A * B, row-major, no transposes, n x n, the same inputs as
 * clblast_sgemm, and a sample of C's entries checked against host dot products.
 *
 * Usage: openblas_sgemm N [ITERATIONS]   Prints {"n": N, "rate": GFLOPS, "status": ...}.
 * Part of `make bench` (bench/apps-bench.sh); links OpenBLAS (libopenblas-dev). */
#define _GNU_SOURCE
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 1024;
  int iterations = argc > 2 ? atoi(argv[2]) : 3;
  if (n < 1 || n > 16384 || iterations < 1) {
    fprintf(stderr, "usage: openblas_sgemm N [ITERATIONS]\n");
    return 2;
  }
  float *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b),
        *c = malloc(n * n * sizeof *c);
  if (!a || !b || !c) {
    fprintf(stderr, "openblas_sgemm: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < n * n; i++) {
    a[i] = (float)((i * 7) % 13) * 0.25f - 1.5f;
    b[i] = (float)((i * 5) % 11) * 0.125f - 0.5f;
  }
  double best = INFINITY;
  for (int k = 0; k <= iterations; k++) {
    double t0 = seconds();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, a, (int)n,
                b, (int)n, 0.0f, c, (int)n);
    double t = seconds() - t0;
    if (k > 0 && t < best) best = t;
  }
  int wrong = 0;
  for (size_t s = 0; s < 64; s++) {
    size_t i = (s * 977) % n, j = (s * 131) % n;
    double want = 0;
    for (size_t k = 0; k < n; k++)
      want += (double)a[i * n + k] * b[k * n + j];
    if (fabs(c[i * n + j] - want) > 1e-3 * (1 + fabs(want))) wrong++;
  }
  printf("{\"n\": %zu, \"rate\": %.2f, \"status\": \"%s\"}\n", n, 2.0 * n * n * n / best / 1e9,
         wrong ? "wrong" : "verified");
  free(a);
  free(b);
  free(c);
  return wrong ? 1 : 0;
}
