/* Runtime microbenchmark: what the platform costs around the kernels.
 *   launch:   enqueue + clFinish of an empty kernel, median (and 90th, 99th percentile)
 *             in microseconds
 *   poll:     the same launch awaited by polling clGetEventInfo's execution status until
 *             CL_COMPLETE (as older programs and SDK samples do), median and 99th percentile
 *   stream:   back-to-back small kernels with one clFinish at the end, kernels/s
 *   saxpy:    enqueue + clFinish of a small real kernel (y = a*x + y on 64 Ki floats,
 *             work-groups for every compute unit), median in microseconds
 *   write, read, copy, map: 256 MiB buffer transfers, median GB/s (only with --busy 0)
 * --busy N runs N child processes that spin in a tight loop while the above is measured
 * (N = online CPUs: a machine shared with CPU-bound work). Prints one JSON object. Uses
 * the samples' common options (--platform, --device). */
#include "../samples/common/sample.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *kernel_source = "__kernel void empty(void) {}\n"
                                   "__kernel void small(__global float *x) {\n"
                                   "  x[get_global_id(0)] += 1.0f;\n"
                                   "}\n"
                                   "__kernel void saxpy(float a, __global const float *x,\n"
                                   "                    __global float *y) {\n"
                                   "  size_t i = get_global_id(0);\n"
                                   "  y[i] = a * x[i] + y[i];\n"
                                   "}\n";

/* ---- busy processes ---- */

static pid_t busy_pids[1024];
static int busy_count;
static int busy_go[2] = {-1, -1};

/* Forked before the platform starts any thread; each child blocks until the write end
 * of the pipe closes, then spins until it is killed (or its parent dies). */
static void busy_fork(int n) {
  if (n > (int)(sizeof busy_pids / sizeof *busy_pids)) n = sizeof busy_pids / sizeof *busy_pids;
  /* Close-on-exec: a helper process the platform starts must not keep the pipe open. */
  if (n <= 0 || pipe2(busy_go, O_CLOEXEC)) return;
  pid_t parent = getpid();
  for (int i = 0; i < n; i++) {
    pid_t pid = fork();
    if (pid < 0) break;
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(0);
      close(busy_go[1]);
      char c;
      while (read(busy_go[0], &c, 1) < 0) {
      }
      volatile unsigned long spin = 0;
      for (;;) spin++;
    }
    busy_pids[busy_count++] = pid;
  }
  close(busy_go[0]);
}

static void busy_start(void) {
  if (busy_go[1] < 0) return;
  close(busy_go[1]);
  busy_go[1] = -1;
  /* Let the scheduler see them as the CPU-bound processes they are. */
  struct timespec ts = {0, 200 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

static void busy_stop(void) {
  for (int i = 0; i < busy_count; i++) kill(busy_pids[i], SIGKILL);
  for (int i = 0; i < busy_count; i++) waitpid(busy_pids[i], NULL, 0);
  busy_count = 0;
}

/* The p-th fraction of n values already sorted (sample_median sorts them). */
static double percentile(const double *sorted, int n, double p) {
  int k = (int)(p * n + 0.999999) - 1;
  return sorted[k < 0 ? 0 : k >= n ? n - 1 : k];
}

#define REPS 5
#define STREAMS 21 /* of 1000 kernels each: short, and noisy on a shared machine */
#define LAUNCHES 300
#define SAXPY_N (64 * 1024)
#define SAXPYS 100

int main(int argc, char **argv) {
  struct sample_options opts;
  int busy = 0;
  const struct sample_extra_option extra[] = {
      {"--busy", SAMPLE_INT, &busy, "N processes spin beside the measurements (default 0)"},
      {0}};
  sample_parse(argc, argv, "[--busy N] [options]", extra, &opts);
  atexit(busy_stop);
  busy_fork(busy);
  size_t bytes = opts.size ? opts.size : (size_t)256 << 20;
  struct sample_cl cl;
  sample_init(&opts, &cl);
  cl_program program = sample_build(&opts, &cl, kernel_source, "", NULL);
  cl_kernel empty = sample_kernel(program, "empty"), small = sample_kernel(program, "small");
  cl_kernel saxpy = sample_kernel(program, "saxpy");

  size_t one = 1, small_size = 1024, saxpy_size = SAXPY_N;
  float zeros[1024] = {0}, x0 = 0;
  cl_mem x = sample_buffer(&cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                           small_size * sizeof(float), zeros);
  CHECK_CL(clSetKernelArg(small, 0, sizeof x, &x));
  float *host_x = malloc(SAXPY_N * sizeof(float)), *host_y = malloc(SAXPY_N * sizeof(float));
  for (int i = 0; i < SAXPY_N; i++) {
    host_x[i] = (float)(i % 7);
    host_y[i] = 0;
  }
  cl_mem sx = sample_buffer(&cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            SAXPY_N * sizeof(float), host_x);
  cl_mem sy = sample_buffer(&cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            SAXPY_N * sizeof(float), host_y);
  float a = 1.0f;
  CHECK_CL(clSetKernelArg(saxpy, 0, sizeof a, &a));
  CHECK_CL(clSetKernelArg(saxpy, 1, sizeof sx, &sx));
  CHECK_CL(clSetKernelArg(saxpy, 2, sizeof sy, &sy));

  busy_start();
  double launch[LAUNCHES];
  /* The first launches pay for lazy set-up on some platforms; they are not the steady state. */
  for (int i = 0; i < 10; i++) {
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, empty, 1, NULL, &one, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
  }
  for (int i = 0; i < LAUNCHES; i++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, empty, 1, NULL, &one, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    launch[i] = sample_seconds() - t0;
  }

  double poll[LAUNCHES];
  for (int i = 0; i < LAUNCHES; i++) {
    double t0 = sample_seconds();
    cl_event e;
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, empty, 1, NULL, &one, NULL, 0, NULL, &e));
    CHECK_CL(clFlush(cl.queue));
    cl_int status = CL_QUEUED;
    while (status > CL_COMPLETE) {
      CHECK_CL(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
      if (sample_seconds() - t0 > 10) {
        fprintf(stderr, "micro: a polled empty kernel not complete after 10 s\n");
        return 1;
      }
    }
    CHECK_CL(clReleaseEvent(e));
    poll[i] = sample_seconds() - t0;
  }

  double stream[STREAMS];
  for (int r = 0; r < STREAMS; r++) {
    double t0 = sample_seconds();
    for (int i = 0; i < 1000; i++)
      CHECK_CL(clEnqueueNDRangeKernel(cl.queue, small, 1, NULL, &small_size, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    stream[r] = 1000 / (sample_seconds() - t0);
  }

  double saxpy_time[SAXPYS];
  for (int i = 0; i < 2; i++) {
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, saxpy, 1, NULL, &saxpy_size, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
  }
  for (int i = 0; i < SAXPYS; i++) {
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, saxpy, 1, NULL, &saxpy_size, NULL, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    saxpy_time[i] = sample_seconds() - t0;
  }
  busy_stop();

  /* Every small kernel and every saxpy must really have run. */
  CHECK_CL(clEnqueueReadBuffer(cl.queue, x, CL_TRUE, 0, sizeof x0, &x0, 0, NULL, NULL));
  if (x0 != 1000 * STREAMS) {
    fprintf(stderr, "micro: x[0] = %g after %d kernels\n", x0, 1000 * STREAMS);
    return 1;
  }
  CHECK_CL(clEnqueueReadBuffer(cl.queue, sy, CL_TRUE, 0, SAXPY_N * sizeof(float), host_y, 0, NULL,
                               NULL));
  for (int i = 0; i < SAXPY_N; i++)
    if (host_y[i] != (float)(i % 7) * (SAXPYS + 2)) {
      fprintf(stderr, "micro: y[%d] = %g after %d saxpy kernels\n", i, host_y[i], SAXPYS + 2);
      return 1;
    }

  double launch_median = sample_median(launch, LAUNCHES);
  double poll_median = sample_median(poll, LAUNCHES);
  printf("{\"device\": \"%s\", \"busy\": %d, \"launch_us\": %.2f, \"launch_p90_us\": %.2f, "
         "\"launch_p99_us\": %.2f, \"poll_us\": %.2f, \"poll_p99_us\": %.2f, "
         "\"kernels_per_s\": %.0f, \"saxpy_us\": %.2f",
         cl.device_name, busy, launch_median * 1e6, percentile(launch, LAUNCHES, 0.90) * 1e6,
         percentile(launch, LAUNCHES, 0.99) * 1e6, poll_median * 1e6,
         percentile(poll, LAUNCHES, 0.99) * 1e6, sample_median(stream, STREAMS),
         sample_median(saxpy_time, SAXPYS) * 1e6);

  /* Transfers measure memory bandwidth, not the platform's scheduling: idle only. */
  if (busy == 0) {
    char *host = malloc(bytes);
    memset(host, 1, bytes);
    cl_mem a = sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL);
    cl_mem b = sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL);
    /* Touch both buffers once so that page faults of first use are not timed. */
    CHECK_CL(clEnqueueWriteBuffer(cl.queue, a, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    CHECK_CL(clEnqueueWriteBuffer(cl.queue, b, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    double rate[4][REPS];
    for (int r = 0; r < REPS; r++) {
      double t0 = sample_seconds();
      CHECK_CL(clEnqueueWriteBuffer(cl.queue, a, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
      double t1 = sample_seconds();
      CHECK_CL(clEnqueueReadBuffer(cl.queue, a, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
      double t2 = sample_seconds();
      CHECK_CL(clEnqueueCopyBuffer(cl.queue, a, b, 0, 0, bytes, 0, NULL, NULL));
      CHECK_CL(clFinish(cl.queue));
      double t3 = sample_seconds();
      /* A map for reading and writing must show the current contents and publish the
       * changes at unmap: the cost a zero-copy platform can avoid. */
      cl_int err;
      char *p = clEnqueueMapBuffer(cl.queue, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                   NULL, NULL, &err);
      CHECK_CL(err);
      p[r] ^= 1;
      CHECK_CL(clEnqueueUnmapMemObject(cl.queue, b, p, 0, NULL, NULL));
      CHECK_CL(clFinish(cl.queue));
      double t4 = sample_seconds();
      rate[0][r] = bytes / (t1 - t0) / 1e9;
      rate[1][r] = bytes / (t2 - t1) / 1e9;
      rate[2][r] = bytes / (t3 - t2) / 1e9;
      rate[3][r] = bytes / (t4 - t3) / 1e9;
    }
    printf(", \"write_GBs\": %.2f, \"read_GBs\": %.2f, \"copy_GBs\": %.2f, \"map_GBs\": %.2f",
           sample_median(rate[0], REPS), sample_median(rate[1], REPS), sample_median(rate[2], REPS),
           sample_median(rate[3], REPS));
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    free(host);
  }
  printf("}\n");
  clReleaseMemObject(x);
  clReleaseMemObject(sx);
  clReleaseMemObject(sy);
  clReleaseKernel(empty);
  clReleaseKernel(small);
  clReleaseKernel(saxpy);
  clReleaseProgram(program);
  sample_release(&cl);
  free(host_x);
  free(host_y);
  return 0;
}
