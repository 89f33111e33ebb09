/* SGEMM through CLBlast's C API, timed the way CLBlast's own `clblast_client_xgemm`
 * times it, which Debian does not ship (neither clblast-utils nor clblast-tests has the
 * clients): one untimed warm-up call (it compiles the kernels), then --iterations calls
 * each waited for on its event; the time is the fastest call and GFLOPS is 2 n^3 over it.
 * C = A * B, row-major, no transposes, n x n. A sample of C's entries is checked against
 * host dot products, so a wrong result cannot pass as a fast one.
 *
 * Usage: clblast_sgemm [common sample options]   (--size: n, default 1024)
 * Part of `make bench` (bench/apps-bench.sh); links -lclblast (libclblast-dev). */
#include "../samples/common/sample.h"

#include <clblast_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void check_clblast(CLBlastStatusCode status, const char *what) {
  if (status == CLBlastSuccess) return;
  fprintf(stderr, "clblast_sgemm: %s failed: CLBlast status %d\n", what, (int)status);
  exit(1);
}

static double sgemm(cl_command_queue queue, size_t n, cl_mem a, cl_mem b, cl_mem c) {
  cl_event event = NULL;
  double t0 = sample_seconds();
  check_clblast(CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n,
                             1.0f, a, 0, n, b, 0, n, 0.0f, c, 0, n, &queue, &event),
                "CLBlastSgemm");
  CHECK_CL(clWaitForEvents(1, &event));
  double t = sample_seconds() - t0;
  clReleaseEvent(event);
  return t;
}

int main(int argc, char **argv) {
  struct sample_options opts;
  sample_parse(argc, argv, "[options]", NULL, &opts);
  size_t n = opts.size ? opts.size : 1024;

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = "CLBlast SGEMM", .rate_unit = "GFLOP/s"};

  size_t bytes = n * n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  sample_fill_random(a, n * n, -1.0f, 1.0f, 1);
  sample_fill_random(b, n * n, -1.0f, 1.0f, 2);
  cl_mem da = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a);
  cl_mem db = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b);
  cl_mem dc = sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL);

  /* The warm-up builds CLBlast's programs; report that as the build time. */
  result.build_ms = sgemm(cl.queue, n, da, db, dc) * 1e3;
  double best = 0;
  for (int it = 0; it < opts.iterations; it++) {
    double t = sgemm(cl.queue, n, da, db, dc);
    if (it == 0 || t < best) best = t;
  }
  CHECK_CL(clEnqueueReadBuffer(cl.queue, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));

  result.verified = -1;
  if (opts.verify) {
    /* 4096 entries on a fixed stride that visits every row and many columns: a tile or an
     * edge computed wrong shows, at a small fraction of the O(n^3) reference. */
    size_t wrong = 0, count = n * n < 4096 ? n * n : 4096, step = n * n / count;
    for (size_t e = 0; e < count; e++) {
      size_t i = (e * step) / n, j = (e * step + e) % n;
      double sum = 0, magnitude = 0;
      for (size_t k = 0; k < n; k++) {
        double p = (double)a[i * n + k] * b[k * n + j];
        sum += p;
        magnitude += fabs(p);
      }
      if (!(fabs(c[i * n + j] - sum) <= 1e-5 * magnitude + 1e-6) && wrong++ < 5)
        fprintf(stderr, "clblast_sgemm: c[%zu][%zu] = %g, expected %g\n", i, j, c[i * n + j], sum);
    }
    result.verified = wrong == 0;
  }

  snprintf(result.size, sizeof result.size, "%zux%zux%zu", n, n, n);
  result.time_ms = best * 1e3;
  result.rate = 2.0 * n * n * n / best / 1e9;
  int status = sample_report(&opts, &cl, &result);

  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  sample_release(&cl);
  free(a);
  free(b);
  free(c);
  return status;
}
