/* NDRange execution: every work-item function checked per work-item over
 * 1/2/3-D ranges, offsets and odd sizes; large work-groups, barriers,
 * __local memory, private arrays, vector and struct arguments, and the
 * enqueue errors. */
#include "api.h"

#define FIELDS 19
static const char *ids_src =
    "__kernel void ids(__global int *o) {\n"
    "  size_t lin = (get_global_id(0) - get_global_offset(0)) + get_global_size(0) *\n"
    "      ((get_global_id(1) - get_global_offset(1)) + get_global_size(1) *\n"
    "       (get_global_id(2) - get_global_offset(2)));\n"
    "  __global int *p = o + lin * 19;\n"
    "  for (uint d = 0; d < 3; d++) {\n"
    "    p[d] = (int)get_global_id(d); p[3 + d] = (int)get_local_id(d);\n"
    "    p[6 + d] = (int)get_group_id(d); p[9 + d] = (int)get_local_size(d);\n"
    "    p[12 + d] = (int)get_num_groups(d); p[15 + d] = (int)get_global_size(d);\n"
    "  }\n"
    "  p[18] = (int)get_work_dim();\n"
    "}\n";

static cl_kernel ids;

static int check_ids(cl_uint dim, const size_t *gsz, const size_t *off, const size_t *lsz) {
  size_t g[3] = {1, 1, 1}, o[3] = {0, 0, 0};
  for (cl_uint d = 0; d < dim; d++) {
    g[d] = gsz[d];
    if (off) o[d] = off[d];
  }
  size_t n = g[0] * g[1] * g[2];
  cl_int err;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, n * FIELDS * sizeof(int), NULL, &err);
  int minus = -1;
  clEnqueueFillBuffer(queue, m, &minus, sizeof minus, 0, n * FIELDS * sizeof(int), 0, NULL, NULL);
  clSetKernelArg(ids, 0, sizeof m, &m);
  err = clEnqueueNDRangeKernel(queue, ids, dim, off, gsz, lsz, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    printf("  enqueue: %d\n", err);
    clReleaseMemObject(m);
    return 0;
  }
  int *r = malloc(n * FIELDS * sizeof(int));
  clEnqueueReadBuffer(queue, m, CL_TRUE, 0, n * FIELDS * sizeof(int), r, 0, NULL, NULL);
  /* With no local size the runtime chooses one: take it from item 0. */
  size_t l[3] = {1, 1, 1};
  for (int d = 0; d < 3; d++)
    l[d] = lsz && (cl_uint)d < dim ? lsz[d] : (size_t)r[9 + d];
  int bad = 0;
  for (size_t z = 0; z < g[2]; z++)
    for (size_t y = 0; y < g[1]; y++)
      for (size_t x = 0; x < g[0]; x++) {
        size_t lin = x + g[0] * (y + g[1] * z);
        int *p = r + lin * FIELDS;
        size_t c[3] = {x, y, z};
        for (int d = 0; d < 3; d++) {
          int ok = l[d] >= 1 && g[d] % l[d] == 0 && p[d] == (int)(c[d] + o[d]) &&
                   p[3 + d] == (int)(c[d] % l[d]) && p[6 + d] == (int)(c[d] / l[d]) &&
                   p[9 + d] == (int)l[d] && p[12 + d] == (int)(g[d] / l[d]) &&
                   p[15 + d] == (int)g[d];
          if (!ok && bad++ < 3)
            printf("  dim %u item (%zu,%zu,%zu) d%d: gid %d lid %d grp %d lsz %d ng %d gsz %d\n",
                   dim, x, y, z, d, p[d], p[3 + d], p[6 + d], p[9 + d], p[12 + d], p[15 + d]);
        }
        if (p[18] != (int)dim && bad++ < 3) printf("  work_dim %d\n", p[18]);
      }
  free(r);
  clReleaseMemObject(m);
  return bad == 0;
}

static void work_item_functions(void) {
  size_t g1[] = {1000}, l1[] = {50}, g1p[] = {1009}, g1s[] = {1};
  size_t g2[] = {37, 13}, g2b[] = {32, 16}, l2[] = {8, 4};
  size_t g3[] = {10, 6, 4}, l3[] = {5, 3, 2}, g3b[] = {7, 5, 3};
  size_t off1[] = {17}, off2[] = {3, 5}, off3[] = {3, 5, 7};
  CHECK(check_ids(1, g1, NULL, NULL));
  CHECK(check_ids(1, g1, NULL, l1));
  CHECK(check_ids(1, g1p, NULL, NULL));
  CHECK(check_ids(1, g1s, NULL, NULL));
  CHECK(check_ids(1, g1, off1, l1));
  CHECK(check_ids(1, g1p, off1, NULL));
  CHECK(check_ids(2, g2, NULL, NULL));
  CHECK(check_ids(2, g2b, NULL, l2));
  CHECK(check_ids(2, g2, off2, NULL));
  CHECK(check_ids(2, g2b, off2, l2));
  CHECK(check_ids(3, g3, NULL, l3));
  CHECK(check_ids(3, g3b, NULL, NULL));
  CHECK(check_ids(3, g3, off3, l3));
  CHECK(check_ids(3, g3b, off3, NULL));
}

static const char *reduce_src =
    "int twice(int v) { return 2 * v; }\n"
    "void sync_in_function(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "__kernel void reduce(__global const int *in, __global int *out, __local int *tmp) {\n"
    "  size_t lid = get_local_id(0), n = get_local_size(0);\n"
    "  tmp[lid] = in[get_global_id(0)];\n"
    "  sync_in_function();\n"
    "  for (size_t s = n / 2; s > 0; s >>= 1) {\n"
    "    if (lid < s) tmp[lid] += tmp[lid + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (lid == 0) out[get_group_id(0)] = twice(tmp[0]);\n"
    "}\n"
    "__kernel void no_barrier(__global int *o) { o[get_global_id(0)] = (int)get_local_id(0); }\n"
    "__kernel void reverse_static(__global int *o) {\n"
    "  __local int buf[256];\n"
    "  size_t l = get_local_id(0), n = get_local_size(0);\n"
    "  buf[l] = o[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  o[get_global_id(0)] = buf[n - 1 - l];\n"
    "}\n";

static void large_groups_and_barriers(void) {
  cl_int err;
  cl_program p = build_program(reduce_src, NULL, &err);
  REQUIRE(p);
  cl_kernel red = clCreateKernel(p, "reduce", &err);
  cl_kernel nob = clCreateKernel(p, "no_barrier", &err);
  cl_kernel rev = clCreateKernel(p, "reverse_static", &err);
  REQUIRE(red && nob && rev);
  size_t maxwg = 0, kwg = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL);
  clGetKernelWorkGroupInfo(red, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL);
  size_t wg = kwg < maxwg ? kwg : maxwg;
  while (wg & (wg - 1))
    wg &= wg - 1; /* a power of two for the tree */
  size_t groups = 4, n = wg * groups;
  int *in = malloc(n * sizeof(int));
  for (size_t i = 0; i < n; i++)
    in[i] = (int)(i % 97) - 40;
  cl_mem a = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * sizeof(int), in, &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), NULL, &err);
  clSetKernelArg(red, 0, sizeof a, &a);
  clSetKernelArg(red, 1, sizeof b, &b);
  clSetKernelArg(red, 2, wg * sizeof(int), NULL);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, red, 1, NULL, &n, &wg, 0, NULL, NULL), CL_SUCCESS);
  int out[4];
  clEnqueueReadBuffer(queue, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
  for (size_t gi = 0; gi < groups; gi++) {
    int s = 0;
    for (size_t i = 0; i < wg; i++)
      s += in[gi * wg + i];
    CHECK_EQ_INT(out[gi], 2 * s);
  }
  /* Without barriers, at the device's largest work-group size. */
  size_t big = maxwg * 3;
  cl_mem c = clCreateBuffer(context, CL_MEM_READ_WRITE, big * sizeof(int), NULL, &err);
  clSetKernelArg(nob, 0, sizeof c, &c);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, nob, 1, NULL, &big, &maxwg, 0, NULL, NULL),
               CL_SUCCESS);
  int *r = malloc(big * sizeof(int));
  clEnqueueReadBuffer(queue, c, CL_TRUE, 0, big * sizeof(int), r, 0, NULL, NULL);
  int good = 1;
  for (size_t i = 0; i < big; i++)
    good &= r[i] == (int)(i % maxwg);
  CHECK(good);
  /* A static __local array. */
  size_t rn = 1024, rl = 256;
  for (size_t i = 0; i < rn; i++)
    in[i] = (int)i;
  clEnqueueWriteBuffer(queue, c, CL_TRUE, 0, rn * sizeof(int), in, 0, NULL, NULL);
  clSetKernelArg(rev, 0, sizeof c, &c);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, rev, 1, NULL, &rn, &rl, 0, NULL, NULL), CL_SUCCESS);
  clEnqueueReadBuffer(queue, c, CL_TRUE, 0, rn * sizeof(int), r, 0, NULL, NULL);
  good = 1;
  for (size_t i = 0; i < rn; i++)
    good &= r[i] == (int)((i / rl) * rl + rl - 1 - i % rl);
  CHECK(good);
  /* Too much __local memory. */
  cl_ulong lmem = 0;
  clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
  clSetKernelArg(red, 2, (size_t)lmem + 4096, NULL);
  err = clEnqueueNDRangeKernel(queue, red, 1, NULL, &n, &wg, 0, NULL, NULL);
  CHECK(err == CL_OUT_OF_RESOURCES || err == CL_INVALID_ARG_SIZE);
  clFinish(queue);
  free(in);
  free(r);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseMemObject(c);
  clReleaseKernel(red);
  clReleaseKernel(nob);
  clReleaseKernel(rev);
  clReleaseProgram(p);
}

static const char *matmul_src =
    "#define T 16\n"
    "__kernel void matmul(__global const float *A, __global const float *B, __global float *C,\n"
    "                     int N) {\n"
    "  __local float As[T][T], Bs[T][T];\n"
    "  int r = get_global_id(1), c = get_global_id(0);\n"
    "  int lr = get_local_id(1), lc = get_local_id(0);\n"
    "  float acc = 0;\n"
    "  for (int t = 0; t < N / T; t++) {\n"
    "    As[lr][lc] = A[r * N + t * T + lc];\n"
    "    Bs[lr][lc] = B[(t * T + lr) * N + c];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int k = 0; k < T; k++) acc += As[lr][k] * Bs[k][lc];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  C[r * N + c] = acc;\n"
    "}\n"
    "__kernel void priv(__global int *o) {\n"
    "  int a[32];\n"
    "  int g = (int)get_global_id(0);\n"
    "  for (int i = 0; i < 32; i++) a[i] = g * i;\n"
    "  int s = 0;\n"
    "  for (int i = 31; i >= 0; i -= 3) s += a[i] - a[(i * 7) % 32];\n"
    "  o[g] = s;\n"
    "}\n";

static void tiled_matmul_and_private(void) {
  cl_int err;
  cl_program p = build_program(matmul_src, NULL, &err);
  REQUIRE(p);
  cl_kernel k = clCreateKernel(p, "matmul", &err);
  REQUIRE(k);
  int N = 64;
  size_t bytes = N * N * sizeof(float);
  float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
  for (int i = 0; i < N * N; i++) {
    A[i] = (float)((i * 7) % 13) - 6;
    B[i] = (float)((i * 5) % 11) - 5;
  }
  cl_mem a = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR | CL_MEM_READ_ONLY, bytes, A, &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR | CL_MEM_READ_ONLY, bytes, B, &err);
  cl_mem c = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
  clSetKernelArg(k, 0, sizeof a, &a);
  clSetKernelArg(k, 1, sizeof b, &b);
  clSetKernelArg(k, 2, sizeof c, &c);
  clSetKernelArg(k, 3, sizeof N, &N);
  size_t g[2] = {N, N}, l[2] = {16, 16};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 2, NULL, g, l, 0, NULL, NULL), CL_SUCCESS);
  clEnqueueReadBuffer(queue, c, CL_TRUE, 0, bytes, C, 0, NULL, NULL);
  int bad = 0;
  for (int r = 0; r < N; r++)
    for (int col = 0; col < N; col++) {
      float s = 0;
      for (int i = 0; i < N; i++)
        s += A[r * N + i] * B[i * N + col];
      if (C[r * N + col] != s && bad++ < 3)
        printf("  C[%d][%d] = %g, expected %g\n", r, col, C[r * N + col], s);
    }
  CHECK_EQ_INT(bad, 0);
  cl_kernel pk = clCreateKernel(p, "priv", &err);
  REQUIRE(pk);
  clSetKernelArg(pk, 0, sizeof c, &c);
  size_t pn = 1000;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, pk, 1, NULL, &pn, NULL, 0, NULL, NULL), CL_SUCCESS);
  int *o = malloc(pn * sizeof(int));
  clEnqueueReadBuffer(queue, c, CL_TRUE, 0, pn * sizeof(int), o, 0, NULL, NULL);
  bad = 0;
  for (int gi = 0; gi < (int)pn; gi++) {
    int s = 0;
    for (int i = 31; i >= 0; i -= 3)
      s += gi * i - gi * ((i * 7) % 32);
    bad += o[gi] != s;
  }
  CHECK_EQ_INT(bad, 0);
  free(o);
  free(A);
  free(B);
  free(C);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseMemObject(c);
  clReleaseKernel(k);
  clReleaseKernel(pk);
  clReleaseProgram(p);
}

static const char *vec_src =
    "typedef struct { int a; float b; long c; char d; } S;\n"
    "__kernel void vecs(__global double *o, float3 f3, float4 f4, double2 d2, long16 l16, S s,\n"
    "                   char c, short sh, uchar2 u2) {\n"
    "  o[0] = f3.x; o[1] = f3.y; o[2] = f3.z;\n"
    "  o[3] = f4.x + f4.y * 10 + f4.z * 100 + f4.w * 1000;\n"
    "  o[4] = d2.x; o[5] = d2.y;\n"
    "  long t = 0; for (int i = 0; i < 16; i++) t += l16[i] * (i + 1);\n"
    "  o[6] = (double)t;\n"
    "  o[7] = s.a; o[8] = s.b; o[9] = (double)s.c; o[10] = s.d;\n"
    "  o[11] = c; o[12] = sh; o[13] = u2.x + 256 * u2.y;\n"
    "}\n";

typedef struct {
  cl_int a;
  cl_float b;
  cl_long c;
  cl_char d;
} S;

static void vector_and_struct_args(void) {
  cl_int err;
  cl_kernel k = build_kernel(vec_src, "vecs");
  REQUIRE(k);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 14 * sizeof(double), NULL, &err);
  cl_float3 f3 = {{1.5f, -2.5f, 3.25f}};
  cl_float4 f4 = {{1, 2, 3, 4}};
  cl_double2 d2 = {{1e300, -0.125}};
  cl_long16 l16;
  long expect = 0;
  for (int i = 0; i < 16; i++) {
    l16.s[i] = (cl_long)1 << (i * 2 + 20);
    expect += l16.s[i] * (i + 1);
  }
  S s = {-7, 0.5f, (cl_long)1 << 40, 'x'};
  cl_char c = -3;
  cl_short sh = -30000;
  cl_uchar2 u2 = {{7, 9}};
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 1, sizeof f3, &f3), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 2, sizeof f4, &f4), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 3, sizeof d2, &d2), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 4, sizeof l16, &l16), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 5, sizeof s, &s), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 6, sizeof c, &c), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 7, sizeof sh, &sh), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 8, sizeof u2, &u2), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 2, sizeof f3 - 4, &f4), CL_INVALID_ARG_SIZE);
  CHECK_EQ_INT(clEnqueueTask(queue, k, 0, NULL, NULL), CL_SUCCESS);
  double o[14];
  clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof o, o, 0, NULL, NULL);
  CHECK(o[0] == 1.5 && o[1] == -2.5 && o[2] == 3.25);
  CHECK(o[3] == 4321);
  CHECK(o[4] == 1e300 && o[5] == -0.125);
  CHECK(o[6] == (double)expect);
  CHECK(o[7] == -7 && o[8] == 0.5 && o[9] == (double)((cl_long)1 << 40) && o[10] == 'x');
  CHECK(o[11] == -3 && o[12] == -30000 && o[13] == 7 + 256 * 9);
  clReleaseMemObject(m);
  clReleaseKernel(k);
}

static void enqueue_errors(void) {
  cl_int err;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err);
  clSetKernelArg(ids, 0, sizeof m, &m);
  size_t g[3] = {16, 1, 1}, l[3] = {16, 1, 1}, zero[3] = {0, 1, 1};
  size_t maxwg = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, ids, 0, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_WORK_DIMENSION);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, ids, 4, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_WORK_DIMENSION);
  /* OpenCL 2.1 and later: a range without work-items is a kernel command
   * that runs nothing and completes. */
  cl_event empty[2] = {NULL, NULL};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, ids, 1, NULL, NULL, NULL, 0, NULL, &empty[0]),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, ids, 1, NULL, zero, NULL, 0, NULL, &empty[1]),
               CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(2, empty), CL_SUCCESS);
  for (int i = 0; i < 2; i++) {
    cl_command_type type = 0;
    clGetEventInfo(empty[i], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
    CHECK_EQ_INT(type, CL_COMMAND_NDRANGE_KERNEL);
    if (empty[i]) clReleaseEvent(empty[i]);
  }
  size_t off[1] = {SIZE_MAX - 4};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, ids, 1, off, g, NULL, 0, NULL, NULL),
               CL_INVALID_GLOBAL_OFFSET);
  size_t l5[1] = {5};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, ids, 1, NULL, g, l5, 0, NULL, NULL),
               CL_INVALID_WORK_GROUP_SIZE);
  size_t lz[1] = {0};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, ids, 1, NULL, g, lz, 0, NULL, NULL),
               CL_INVALID_WORK_GROUP_SIZE);
  size_t gbig[2] = {maxwg * 2, 4}, lbig[2] = {maxwg, 2};
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, ids, 2, NULL, gbig, lbig, 0, NULL, NULL),
               CL_INVALID_WORK_GROUP_SIZE);
  CHECK_EQ_INT(clEnqueueNDRangeKernel((cl_command_queue)m, ids, 1, NULL, g, l, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, (cl_kernel)m, 1, NULL, g, l, 0, NULL, NULL),
               CL_INVALID_KERNEL);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, ids, 1, NULL, g, l, 1, NULL, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
  CHECK_EQ_INT(clEnqueueTask((cl_command_queue)m, ids, 0, NULL, NULL), CL_INVALID_COMMAND_QUEUE);
  /* A queue of another context. */
  cl_context other = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  cl_command_queue oq = clCreateCommandQueue(other, device, 0, &err);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(oq, ids, 1, NULL, g, l, 0, NULL, NULL), CL_INVALID_CONTEXT);
  clReleaseCommandQueue(oq);
  clReleaseContext(other);
  /* A kernel whose arguments are not all set. */
  clReleaseKernel(ids);
  ids = NULL;
  cl_kernel fresh = build_kernel(ids_src, "ids");
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, fresh, 1, NULL, g, l, 0, NULL, NULL),
               CL_INVALID_KERNEL_ARGS);
  CHECK_EQ_INT(clEnqueueTask(queue, fresh, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
  clReleaseKernel(fresh);
  /* Native kernels are not supported. */
  CHECK_EQ_INT(
      clEnqueueNativeKernel(queue, NULL, NULL, 0, 0, NULL, NULL, 0, NULL, NULL) != CL_SUCCESS, 1);
  clFinish(queue);
  clReleaseMemObject(m);
}

/* clEnqueueNativeKernel: a host function over a buffer whose address is put
 * into the copied argument block, ordered after a write by its wait list. */
struct native_args {
  int scale;
  int *data; /* replaced by the buffer's address */
  int count;
};

static void CL_CALLBACK native_scale(void *p) {
  struct native_args *a = p;
  for (int i = 0; i < a->count; i++)
    a->data[i] *= a->scale;
}

static void native_kernels(void) {
  cl_device_exec_capabilities caps = 0;
  clGetDeviceInfo(device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
  if (!(caps & CL_EXEC_NATIVE_KERNEL)) {
    /* A remote device: a host function cannot run there. */
    int arg = 0;
    CHECK_EQ_INT(
        clEnqueueNativeKernel(queue, native_scale, &arg, sizeof arg, 0, NULL, NULL, 0, NULL, NULL),
        CL_INVALID_OPERATION);
    return;
  }
  int host[64];
  for (int i = 0; i < 64; i++)
    host[i] = i;
  cl_int err;
  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  cl_event wrote, ran;
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &wrote),
               CL_SUCCESS);
  struct native_args args = {3, NULL, 64};
  const void *loc[1] = {&args.data};
  CHECK_EQ_INT(
      clEnqueueNativeKernel(queue, native_scale, &args, sizeof args, 1, &buf, loc, 1, &wrote, &ran),
      CL_SUCCESS);
  args.scale = 100; /* the block was copied at enqueue */
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof host, host, 1, &ran, NULL),
               CL_SUCCESS);
  for (int i = 0; i < 64; i++)
    CHECK_EQ_INT(host[i], 3 * i);
  cl_command_type type = 0;
  clGetEventInfo(ran, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_NATIVE_KERNEL);
  /* Errors. */
  CHECK_EQ_INT(clEnqueueNativeKernel(queue, NULL, &args, sizeof args, 0, NULL, NULL, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueNativeKernel(queue, native_scale, NULL, 8, 0, NULL, NULL, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueNativeKernel(queue, native_scale, &args, 0, 0, NULL, NULL, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(
      clEnqueueNativeKernel(queue, native_scale, &args, sizeof args, 1, NULL, loc, 0, NULL, NULL),
      CL_INVALID_VALUE);
  cl_mem not_buffer = (cl_mem)queue;
  CHECK_EQ_INT(clEnqueueNativeKernel(queue, native_scale, &args, sizeof args, 1, &not_buffer, loc,
                                     0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  clReleaseEvent(wrote);
  clReleaseEvent(ran);
  clReleaseMemObject(buf);
}

/* A private array larger than a compute unit's stack: the launch is refused
 * with CL_OUT_OF_RESOURCES (it used to overrun the stack and kill the
 * process with SIGSEGV), CL_KERNEL_PRIVATE_MEM_SIZE says why, and a kernel
 * with a modest private array still runs. */
static const char *private_src =
    "__kernel void huge(__global int *a) {\n"
    "  int b[1 << 26];\n" /* 256 MiB per work-item */
    "  b[a[1]] = 1;\n"
    "  a[0] = b[a[2]];\n"
    "}\n"
    "__kernel void modest(__global const int *a, __global int *out) {\n"
    "  int b[256];\n"
    "  for (int i = 0; i < 256; i++) b[i] = a[i % 64] + i;\n"
    "  out[get_global_id(0)] = b[a[1] & 255] + b[get_global_id(0) & 255];\n"
    "}\n";

static void private_memory_limit(void) {
  cl_program p = build_program(private_src, NULL, NULL);
  CHECK(p != NULL);
  if (!p) return;
  cl_int err;
  cl_kernel huge = clCreateKernel(p, "huge", &err), modest = clCreateKernel(p, "modest", &err);
  int host[64];
  for (int i = 0; i < 64; i++)
    host[i] = i;
  cl_mem a =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  cl_mem o = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  cl_ulong huge_size = 0, modest_size = 0;
  CHECK_EQ_INT(clGetKernelWorkGroupInfo(huge, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof huge_size,
                                        &huge_size, NULL),
               CL_SUCCESS);
  clGetKernelWorkGroupInfo(modest, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof modest_size,
                           &modest_size, NULL);
  CHECK(huge_size >= (cl_ulong)4 << 26);
  CHECK(modest_size >= 1024 && modest_size < ((cl_ulong)1 << 20));
  size_t n = 16;
  clSetKernelArg(huge, 0, sizeof a, &a);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, huge, 1, NULL, &n, NULL, 0, NULL, NULL),
               CL_OUT_OF_RESOURCES);
  clSetKernelArg(modest, 0, sizeof a, &a);
  clSetKernelArg(modest, 1, sizeof o, &o);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, modest, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS);
  int out[64];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, o, CL_TRUE, 0, 16 * sizeof(int), out, 0, NULL, NULL),
               CL_SUCCESS);
  int good = 1;
  for (int i = 0; i < 16; i++)
    good &= out[i] == (1 + 1) + (i + i); /* b[1] = a[1] + 1 = 2, b[i] = a[i] + i */
  CHECK(good);
  clReleaseMemObject(a);
  clReleaseMemObject(o);
  clReleaseKernel(huge);
  clReleaseKernel(modest);
  clReleaseProgram(p);
}

/* No work-group begins before the first one has begun. OpenCL promises no
 * order, but kernels written for GPUs depend on it: John the Ripper's
 * kernel_cmp clears its result in work-item 0, then every match sets it;
 * a work-group stolen from the end and run first had its match cleared.
 * Each of 400 launches of 7 groups of 7 counts the groups that began and
 * found the first group's mark not yet written. Before the order, about
 * half the launches had such groups on an idle machine; now a launch has
 * one only where the first group's unit was descheduled between beginning
 * it and its first store (a few in 2,000 with a spinning process per CPU),
 * so the bound leaves a loaded machine room. */
static void first_work_group_begins_first(void) {
  const char *src = "__kernel void k(__global volatile int *mark, __global int *early) {\n"
                    "  if (get_global_id(0) == 0) *mark = 1;\n"
                    "  barrier(CLK_GLOBAL_MEM_FENCE);\n"
                    "  if (get_local_id(0) == 0 && *mark == 0) atomic_inc(early);\n"
                    "}\n";
  cl_kernel k = build_kernel(src, "k");
  REQUIRE(k);
  cl_int err;
  cl_mem mark = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
  cl_mem early = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
  clSetKernelArg(k, 0, sizeof mark, &mark);
  clSetKernelArg(k, 1, sizeof early, &early);
  enum { ROUNDS = 400 };
  int zero = 0, launches_early = 0;
  size_t global = 49, local = 7;
  for (int r = 0; r < ROUNDS; r++) {
    clEnqueueWriteBuffer(queue, mark, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL);
    clEnqueueWriteBuffer(queue, early, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL);
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
                 CL_SUCCESS);
    int groups = 0;
    CHECK_EQ_INT(
        clEnqueueReadBuffer(queue, early, CL_TRUE, 0, sizeof groups, &groups, 0, NULL, NULL),
        CL_SUCCESS);
    launches_early += groups > 0;
  }
  if (launches_early > ROUNDS / 20)
    printf("  %d of %d launches had work-groups begin before the first\n", launches_early,
           ROUNDS);
  CHECK(launches_early <= ROUNDS / 20);
  clReleaseMemObject(mark);
  clReleaseMemObject(early);
  clReleaseKernel(k);
}

int main(void) {
  api_setup();
  ids = build_kernel(ids_src, "ids");
  if (!ids) {
    printf("not ok build_ids\n");
    return 1;
  }
  RUN(work_item_functions);
  RUN(native_kernels);
  clReleaseKernel(ids);
  RUN(large_groups_and_barriers);
  RUN(tiled_matmul_and_private);
  RUN(vector_and_struct_args);
  RUN(private_memory_limit);
  RUN(first_work_group_begins_first);
  ids = build_kernel(ids_src, "ids");
  RUN(enqueue_errors);
  api_teardown();
  CHECK_EXIT();
}
