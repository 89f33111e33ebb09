/* The NBody sample's computation as hand-written C, the yardstick for
 * Aquila's NBody: gcc -O3 -march=native -fopenmp, one thread per CPU, bodies
 * split among threads and the inner loop vectorized by gcc over j (1/sqrt in
 * float, which gcc turns into a vector square root and divide, as the OpenCL
 * rsqrt's accuracy requires). Same data layout (x, y, z, mass), same
 * softening, same 20 flops per interaction. Prints one JSON line:
 * {"bodies": N, "time_ms": median step, "gflops": ...}.
 * Usage: nbody_c [N] [steps] */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SOFTENING 0.01f

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 16384, steps = argc > 2 ? atoi(argv[2]) : 3;
  if (n <= 0 || steps <= 0) return 2;
  /* Structure of arrays: what lets gcc vectorize the j loop. */
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
  float *m = malloc(n * sizeof *m), *vx = calloc(n, sizeof *vx), *vy = calloc(n, sizeof *vy);
  float *vz = calloc(n, sizeof *vz), *nx = malloc(n * sizeof *nx), *ny = malloc(n * sizeof *ny);
  float *nz = malloc(n * sizeof *nz);
  double *times = malloc(steps * sizeof *times);
  unsigned seed = 1;
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)(seed >> 8) / (1u << 24) * 2 - 1;
    seed = seed * 1103515245u + 12345u;
    y[i] = (float)(seed >> 8) / (1u << 24) * 2 - 1;
    seed = seed * 1103515245u + 12345u;
    z[i] = (float)(seed >> 8) / (1u << 24) * 2 - 1;
    m[i] = 1.0f / n;
  }
  const float dt = 0.005f;
  for (int s = 0; s < steps; s++) {
    double t0 = seconds();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
      float ax = 0, ay = 0, az = 0, xi = x[i], yi = y[i], zi = z[i];
#pragma omp simd reduction(+ : ax, ay, az)
      for (int j = 0; j < n; j++) {
        float rx = x[j] - xi, ry = y[j] - yi, rz = z[j] - zi;
        float inv = 1.0f / sqrtf(rx * rx + ry * ry + rz * rz + SOFTENING);
        float f = m[j] * inv * inv * inv;
        ax += rx * f;
        ay += ry * f;
        az += rz * f;
      }
      vx[i] += ax * dt;
      vy[i] += ay * dt;
      vz[i] += az * dt;
      nx[i] = xi + vx[i] * dt;
      ny[i] = yi + vy[i] * dt;
      nz[i] = zi + vz[i] * dt;
    }
    times[s] = seconds() - t0;
    float *t;
    t = x, x = nx, nx = t;
    t = y, y = ny, ny = t;
    t = z, z = nz, nz = t;
  }
  qsort(times, steps, sizeof *times, compare);
  double t = times[steps / 2];
  printf("{\"bodies\": %d, \"threads\": %d, \"time_ms\": %.3f, \"gflops\": %.1f, \"check\": %g}\n", n,
         omp_get_max_threads(), t * 1e3, 20.0 * n * (double)n / t / 1e9, (double)x[0] + y[n - 1]);
  return 0;
}
