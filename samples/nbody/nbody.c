/* NBody: all-pairs gravitational simulation, one work-item per body.
 *
 * Usage: nbody [common options] [--local N] [--no-tiling] [--dt X] [--output FILE]
 * --size is the number of bodies and --iterations the number of time steps. The default
 * kernel stages blocks of bodies in local memory, with a barrier on each side of a block;
 * --no-tiling reads every body from global memory and needs no barrier. --output writes
 * the final positions as text, one "x y z" line per body. */
#include "../common/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* pos.w carries the mass, so one float4 load fetches everything an interaction needs. */
static const char *kernel_source =
    "#define SOFTENING 0.01f\n"
    "float3 interact(float4 pi, float4 pj, float3 acc) {\n"
    "  float3 r = pj.xyz - pi.xyz;\n"
    "  float inv = rsqrt(dot(r, r) + SOFTENING);\n"
    "  return acc + r * (pj.w * inv * inv * inv);\n"
    "}\n"
    "__kernel void nbody_tiled(__global const float4 *pos, __global const float4 *vel,\n"
    "                          __global float4 *new_pos, __global float4 *new_vel, uint n,\n"
    "                          float dt, __local float4 *tile) {\n"
    "  size_t i = get_global_id(0), lid = get_local_id(0), tile_size = get_local_size(0);\n"
    "  float4 p = pos[i];\n"
    "  float3 acc = (float3)(0.0f);\n"
    "  for (uint base = 0; base < n; base += tile_size) {\n"
    "    tile[lid] = pos[base + lid];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint j = 0; j < tile_size; j++) acc = interact(p, tile[j], acc);\n"
    "    /* Nobody may overwrite the tile while others still read it. */\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  float3 v = vel[i].xyz + acc * dt;\n"
    "  new_vel[i] = (float4)(v, 0.0f);\n"
    "  new_pos[i] = (float4)(p.xyz + v * dt, p.w);\n"
    "}\n"
    "__kernel void nbody_simple(__global const float4 *pos, __global const float4 *vel,\n"
    "                           __global float4 *new_pos, __global float4 *new_vel, uint n,\n"
    "                           float dt) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float4 p = pos[i];\n"
    "  float3 acc = (float3)(0.0f);\n"
    "  for (uint j = 0; j < n; j++) acc = interact(p, pos[j], acc);\n"
    "  float3 v = vel[i].xyz + acc * dt;\n"
    "  new_vel[i] = (float4)(v, 0.0f);\n"
    "  new_pos[i] = (float4)(p.xyz + v * dt, p.w);\n"
    "}\n";

#define SOFTENING 0.01
/* Counted as in the classic GPU Gems n-body chapter: 3 sub, 6 for the squared distance
 * and softening, 4 for rsqrt and its cube, 1 for the mass, 6 for the accumulation. */
#define FLOPS_PER_INTERACTION 20

/* Host reference: the acceleration of body i, in double. */
static void reference_acceleration(const float *pos, size_t n, size_t i, double acc[3]) {
  acc[0] = acc[1] = acc[2] = 0;
  for (size_t j = 0; j < n; j++) {
    double r[3];
    for (int k = 0; k < 3; k++)
      r[k] = (double)pos[4 * j + k] - pos[4 * i + k];
    double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + SOFTENING;
    double s = pos[4 * j + 3] / (d2 * sqrt(d2));
    for (int k = 0; k < 3; k++)
      acc[k] += r[k] * s;
  }
}

int main(int argc, char **argv) {
  size_t local = 256;
  int no_tiling = 0;
  const char *output = NULL, *dt_text = "0.005";
  const struct sample_extra_option extra[] = {
      {"--local", SAMPLE_SIZE, &local, "work-group size (default 256; must divide --size)"},
      {"--no-tiling", SAMPLE_FLAG, &no_tiling, "use the kernel without local memory or barriers"},
      {"--dt", SAMPLE_STRING, &dt_text, "time step (default 0.005)"},
      {"--output", SAMPLE_STRING, &output, "write the final positions to FILE"},
      {0}};
  struct sample_options opts;
  sample_parse(argc, argv, "[options] [--local N] [--no-tiling] [--dt X] [--output FILE]", extra,
               &opts);
  size_t n = opts.size ? opts.size : 16384;
  float dt = strtof(dt_text, NULL);
  if (local == 0 || n % local) {
    fprintf(stderr, "nbody: --size (%zu) must be a multiple of --local (%zu)\n", n, local);
    return 2;
  }

  struct sample_cl cl;
  sample_init(&opts, &cl);
  struct sample_result result = {.name = no_tiling ? "NBody (no tiling)" : "NBody",
                                 .rate_unit = "GFLOP/s"};
  cl_program program = sample_build(&opts, &cl, kernel_source, "", &result.build_ms);
  cl_kernel kernel = sample_kernel(program, no_tiling ? "nbody_simple" : "nbody_tiled");

  /* Bodies in a unit cube with a little mass each; they start at rest, so after the
   * first step new_vel is exactly acceleration * dt and can be checked directly. */
  float *pos = malloc(n * 4 * sizeof *pos), *vel = calloc(n * 4, sizeof *vel);
  sample_fill_random(pos, n * 4, -1.0f, 1.0f, 1);
  for (size_t i = 0; i < n; i++)
    pos[4 * i + 3] = (pos[4 * i + 3] + 2.0f) / (float)n;

  size_t bytes = n * 4 * sizeof(float);
  /* Two sets of buffers: each step reads one set and writes the other. */
  cl_mem dpos[2] = {sample_buffer(&cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, pos),
                    sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL)};
  cl_mem dvel[2] = {sample_buffer(&cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, vel),
                    sample_buffer(&cl, CL_MEM_READ_WRITE, bytes, NULL)};
  cl_uint n32 = (cl_uint)n;
  CHECK_CL(clSetKernelArg(kernel, 4, sizeof n32, &n32));
  CHECK_CL(clSetKernelArg(kernel, 5, sizeof dt, &dt));
  if (!no_tiling) CHECK_CL(clSetKernelArg(kernel, 6, local * 4 * sizeof(float), NULL));

  int current = 0;
  double *times = malloc(opts.iterations * sizeof *times);
  float *first_vel = malloc(bytes);
  for (int step = 0; step < opts.iterations; step++) {
    CHECK_CL(clSetKernelArg(kernel, 0, sizeof(cl_mem), &dpos[current]));
    CHECK_CL(clSetKernelArg(kernel, 1, sizeof(cl_mem), &dvel[current]));
    CHECK_CL(clSetKernelArg(kernel, 2, sizeof(cl_mem), &dpos[!current]));
    CHECK_CL(clSetKernelArg(kernel, 3, sizeof(cl_mem), &dvel[!current]));
    double t0 = sample_seconds();
    CHECK_CL(clEnqueueNDRangeKernel(cl.queue, kernel, 1, NULL, &n, &local, 0, NULL, NULL));
    CHECK_CL(clFinish(cl.queue));
    times[step] = sample_seconds() - t0;
    current = !current;
    if (step == 0)
      CHECK_CL(clEnqueueReadBuffer(cl.queue, dvel[current], CL_TRUE, 0, bytes, first_vel, 0, NULL,
                                   NULL));
  }
  double t = sample_median(times, opts.iterations);

  result.verified = -1;
  if (opts.verify) {
    /* An O(n^2) check of every body would dominate the run, so check a spread of up to
     * 1024 of them. Accumulation order differs from the host's, hence a tolerance relative
     * to the typical acceleration, not to each component. */
    size_t stride = n > 1024 ? n / 1024 : 1, wrong = 0, checked = 0;
    double scale = 0, err_max = 0;
    double(*ref)[3] = malloc((n / stride + 1) * sizeof *ref);
    for (size_t i = 0; i < n; i += stride, checked++) {
      reference_acceleration(pos, n, i, ref[checked]);
      for (int k = 0; k < 3; k++)
        scale += fabs(ref[checked][k]);
    }
    scale /= 3.0 * checked;
    checked = 0;
    for (size_t i = 0; i < n; i += stride, checked++)
      for (int k = 0; k < 3; k++) {
        double got = first_vel[4 * i + k] / dt, err = fabs(got - ref[checked][k]);
        if (err > err_max) err_max = err;
        if (err > 1e-3 * scale + 1e-4 * fabs(ref[checked][k]) && wrong++ < 5)
          fprintf(stderr, "nbody: body %zu acceleration[%d] = %g, expected %g\n", i, k, got,
                  ref[checked][k]);
      }
    result.verified = wrong == 0;
    free(ref);
  }

  if (output) {
    CHECK_CL(clEnqueueReadBuffer(cl.queue, dpos[current], CL_TRUE, 0, bytes, pos, 0, NULL, NULL));
    FILE *f = fopen(output, "w");
    if (!f) {
      perror(output);
      return 1;
    }
    for (size_t i = 0; i < n; i++)
      fprintf(f, "%.7g %.7g %.7g\n", pos[4 * i], pos[4 * i + 1], pos[4 * i + 2]);
    fclose(f);
  }

  snprintf(result.size, sizeof result.size, "%zu bodies", n);
  result.time_ms = t * 1e3;
  result.rate = (double)n * n * FLOPS_PER_INTERACTION / t / 1e9;
  int status = sample_report(&opts, &cl, &result);

  for (int k = 0; k < 2; k++) {
    clReleaseMemObject(dpos[k]);
    clReleaseMemObject(dvel[k]);
  }
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  sample_release(&cl);
  free(times);
  free(first_vel);
  free(pos);
  free(vel);
  return status;
}
