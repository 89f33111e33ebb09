/* Buffers and sub-buffers: creation flags and their errors, host pointers,
 * host access flags, read/write/copy (plain and rectangular), fill, map,
 * migrate and destructor callbacks; released storage reused. */
#include "api.h"

#include <sys/mman.h>

static const cl_mem_flags flag_bits[] = {
    CL_MEM_READ_WRITE,      CL_MEM_WRITE_ONLY,     CL_MEM_READ_ONLY,
    CL_MEM_USE_HOST_PTR,    CL_MEM_ALLOC_HOST_PTR, CL_MEM_COPY_HOST_PTR,
    CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_NO_ACCESS,
};

static int flags_valid(cl_mem_flags f) {
  int access = !!(f & CL_MEM_READ_WRITE) + !!(f & CL_MEM_WRITE_ONLY) + !!(f & CL_MEM_READ_ONLY);
  int host = !!(f & CL_MEM_HOST_WRITE_ONLY) + !!(f & CL_MEM_HOST_READ_ONLY) +
             !!(f & CL_MEM_HOST_NO_ACCESS);
  if (access > 1 || host > 1) return 0;
  if ((f & CL_MEM_USE_HOST_PTR) && (f & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))) return 0;
  return 1;
}

static void create_every_flag_combination(void) {
  char host[256];
  for (int i = 0; i < 256; i++)
    host[i] = (char)i;
  int bad = 0;
  for (unsigned combo = 0; combo < (1u << 9); combo++) {
    cl_mem_flags f = 0;
    for (int b = 0; b < 9; b++)
      if (combo & (1u << b)) f |= flag_bits[b];
    int needs_ptr = !!(f & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR));
    for (int with_ptr = 0; with_ptr < 2; with_ptr++) {
      cl_int err = 1;
      cl_mem m = clCreateBuffer(context, f, sizeof host, with_ptr ? host : NULL, &err);
      cl_int expect = !flags_valid(f)         ? CL_INVALID_VALUE
                      : with_ptr != needs_ptr ? CL_INVALID_HOST_PTR
                                              : CL_SUCCESS;
      if (err != expect || (m != NULL) != (expect == CL_SUCCESS)) {
        if (bad++ < 5)
          printf("  flags 0x%llx ptr %d: err %d, expected %d\n", (unsigned long long)f, with_ptr,
                 err, expect);
        check_case_failed = 1;
      }
      if (!m) continue;
      cl_mem_flags got = 0;
      clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof got, &got, NULL);
      if (got != f && !(f == 0 && got == CL_MEM_READ_WRITE)) {
        if (bad++ < 5)
          printf("  flags 0x%llx reported as 0x%llx\n", (unsigned long long)f,
                 (unsigned long long)got);
        check_case_failed = 1;
      }
      if ((f & CL_MEM_COPY_HOST_PTR) && !(f & CL_MEM_HOST_WRITE_ONLY) &&
          !(f & CL_MEM_HOST_NO_ACCESS)) {
        char back[256] = {0};
        CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL),
                     CL_SUCCESS);
        CHECK(!memcmp(back, host, sizeof host));
      }
      clReleaseMemObject(m);
    }
  }
}

static void create_errors(void) {
  cl_int err;
  int x[4];
  CHECK(clCreateBuffer(context, (cl_mem_flags)1 << 40, 16, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateBuffer(context, CL_MEM_READ_WRITE, 0, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_BUFFER_SIZE);
  cl_ulong max_alloc = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
  CHECK(clCreateBuffer(context, CL_MEM_READ_WRITE, (size_t)max_alloc + 1, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_BUFFER_SIZE);
  CHECK(clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof x, x, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_HOST_PTR);
  CHECK(clCreateBuffer(context, CL_MEM_USE_HOST_PTR, sizeof x, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_HOST_PTR);
  CHECK(clCreateBuffer((cl_context)device, CL_MEM_READ_WRITE, 16, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_CONTEXT);
  /* Order: flags before size before host pointer. */
  CHECK(clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 0, x, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateBuffer(context, CL_MEM_READ_ONLY, 0, x, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_BUFFER_SIZE);
}

static void mem_info(void) {
  cl_int err;
  static int host[64];
  cl_mem m =
      clCreateBuffer(context, CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY, sizeof host, host, &err);
  REQUIRE(m);
  cl_mem_object_type type = 0;
  size_t size = 0, off = 99;
  void *ptr = NULL;
  cl_uint maps = 99;
  cl_mem assoc = m;
  CHECK_EQ_INT(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, NULL), CL_SUCCESS);
  CHECK_EQ_INT(type, CL_MEM_OBJECT_BUFFER);
  CHECK_EQ_INT(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
  CHECK_EQ_INT(size, sizeof host);
  CHECK_EQ_INT(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof ptr, &ptr, NULL), CL_SUCCESS);
  CHECK(ptr == host);
  CHECK_EQ_INT(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL), CL_SUCCESS);
  CHECK_EQ_INT(maps, 0);
  CHECK_EQ_INT(clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, NULL),
               CL_SUCCESS);
  CHECK(assoc == NULL);
  CHECK_EQ_INT(clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof off, &off, NULL), CL_SUCCESS);
  CHECK_EQ_INT(off, 0);
  CHECK_EQ_INT(clGetMemObjectInfo(m, CL_MEM_SIZE, 1, &size, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetMemObjectInfo(m, 0x7777, sizeof size, &size, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clGetMemObjectInfo((cl_mem)queue, CL_MEM_SIZE, sizeof size, &size, NULL),
               CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(ref_count_of_mem(m), 1);
  clRetainMemObject(m);
  CHECK_EQ_INT(ref_count_of_mem(m), 2);
  clReleaseMemObject(m);
  CHECK_EQ_INT(ref_count_of_mem(m), 1);
  clReleaseMemObject(m);
  CHECK_EQ_INT(clReleaseMemObject(NULL), CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clRetainMemObject((cl_mem)context), CL_INVALID_MEM_OBJECT);
}

static const char *fill_src = "__kernel void iota2(__global int *a) { size_t i = get_global_id(0); "
                              "a[i] = (int)i * 2 + 1; }\n";

static void use_host_ptr_no_copy(void) {
  cl_int err;
  enum { N = 1000 };
  int *host = calloc(N, sizeof *host);
  cl_mem m = clCreateBuffer(context, CL_MEM_USE_HOST_PTR, N * sizeof *host, host, &err);
  REQUIRE(m);
  cl_kernel k = build_kernel(fill_src, "iota2");
  REQUIRE(k);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  size_t global = N;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  /* A device without host-unified memory (a remote one) may cache the
   * array: its bytes are the buffer's after a map, as the specification
   * says; the map still returns the application's own array. */
  cl_bool unified = CL_TRUE;
  clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
  if (!unified) {
    int *all = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ, 0, N * sizeof *host, 0, NULL,
                                  NULL, &err);
    CHECK(all == host);
    int same = 1;
    for (int i = 0; all && i < N; i++)
      same &= host[i] == i * 2 + 1;
    CHECK(same);
    if (all) clEnqueueUnmapMemObject(queue, m, all, 0, NULL, NULL);
    clFinish(queue);
    clReleaseKernel(k);
    clReleaseMemObject(m);
    free(host);
    return;
  }
  /* No read: the kernel wrote the application's own array. */
  int good = 1;
  for (int i = 0; i < N; i++)
    good &= host[i] == i * 2 + 1;
  CHECK(good);
  /* The host writes directly; the kernel-visible data is the same array. */
  host[5] = -7;
  int r = 0;
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 5 * sizeof(int), sizeof r, &r, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(r, -7);
  int *p = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ, 8 * sizeof(int), 4 * sizeof(int), 0,
                              NULL, NULL, &err);
  CHECK(p == host + 8);
  if (p) clEnqueueUnmapMemObject(queue, m, p, 0, NULL, NULL);
  clFinish(queue);
  clReleaseKernel(k);
  clReleaseMemObject(m);
  free(host);
}

static void copy_and_alloc_host_ptr(void) {
  cl_int err;
  int host[16];
  for (int i = 0; i < 16; i++)
    host[i] = i;
  cl_mem m = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  REQUIRE(m);
  void *hp = (void *)1;
  clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL);
  CHECK(hp == NULL);
  for (int i = 0; i < 16; i++)
    host[i] = -1;
  int back[16];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < 16; i++)
    CHECK_EQ_INT(back[i], i);
  clReleaseMemObject(m);

  m = clCreateBuffer(context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR, sizeof back, back,
                     &err);
  REQUIRE(m);
  int *p = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, sizeof back, 0,
                              NULL, NULL, &err);
  REQUIRE(p);
  CHECK_EQ_INT(p[15], 15);
  p[3] = 333;
  clEnqueueUnmapMemObject(queue, m, p, 0, NULL, NULL);
  int v = 0;
  clEnqueueReadBuffer(queue, m, CL_TRUE, 3 * sizeof(int), sizeof v, &v, 0, NULL, NULL);
  CHECK_EQ_INT(v, 333);
  clReleaseMemObject(m);
}

static void host_access_flags(void) {
  cl_int err;
  int v = 1;
  size_t origin[3] = {0, 0, 0}, region[3] = {4, 1, 1};
  cl_mem wo = clCreateBuffer(context, CL_MEM_HOST_WRITE_ONLY, 64, NULL, &err);
  cl_mem ro = clCreateBuffer(context, CL_MEM_HOST_READ_ONLY, 64, NULL, &err);
  cl_mem na = clCreateBuffer(context, CL_MEM_HOST_NO_ACCESS, 64, NULL, &err);
  REQUIRE(wo && ro && na);
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, wo, CL_TRUE, 0, 4, &v, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, wo, CL_TRUE, 0, 4, &v, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK_EQ_INT(clEnqueueReadBufferRect(queue, wo, CL_TRUE, origin, origin, region, 0, 0, 0, 0, &v,
                                       0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, ro, CL_TRUE, 0, 4, &v, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, ro, CL_TRUE, 0, 4, &v, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK_EQ_INT(clEnqueueWriteBufferRect(queue, ro, CL_TRUE, origin, origin, region, 0, 0, 0, 0, &v,
                                        0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, na, CL_TRUE, 0, 4, &v, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, na, CL_TRUE, 0, 4, &v, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK(clEnqueueMapBuffer(queue, wo, CL_TRUE, CL_MAP_READ, 0, 4, 0, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
  CHECK(clEnqueueMapBuffer(queue, ro, CL_TRUE, CL_MAP_WRITE, 0, 4, 0, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
  CHECK(clEnqueueMapBuffer(queue, ro, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, 4, 0, NULL, NULL,
                           &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
  CHECK(clEnqueueMapBuffer(queue, na, CL_TRUE, CL_MAP_READ, 0, 4, 0, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
  /* Device-side commands are not host accesses. */
  v = 1;
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, na, &v, sizeof v, 0, 64, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, na, ro, 0, 0, 64, 0, NULL, NULL), CL_SUCCESS);
  int back[16] = {0};
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, ro, CL_TRUE, 0, 64, back, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(back[15], 1);
  clReleaseMemObject(wo);
  clReleaseMemObject(ro);
  clReleaseMemObject(na);
}

static void sub_buffers(void) {
  cl_int err;
  cl_uint align_bits = 0;
  clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
  size_t align = align_bits / 8;
  REQUIRE(align > 1);
  size_t size = align * 8;
  unsigned char *host = malloc(size);
  for (size_t i = 0; i < size; i++)
    host[i] = (unsigned char)i;
  cl_mem parent = clCreateBuffer(
      context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR | CL_MEM_HOST_READ_ONLY, size, host, &err);
  REQUIRE(parent);
  cl_buffer_region r = {align * 2, align * 3};
  cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  REQUIRE(sub && err == CL_SUCCESS);
  CHECK_EQ_INT(ref_count_of_mem(parent), 2);
  cl_mem_flags f = 0;
  clGetMemObjectInfo(sub, CL_MEM_FLAGS, sizeof f, &f, NULL);
  CHECK(f & CL_MEM_READ_ONLY);
  CHECK(f & CL_MEM_HOST_READ_ONLY);
  CHECK(f & CL_MEM_USE_HOST_PTR);
  void *hp = NULL;
  cl_mem assoc = NULL;
  size_t off = 0, sz = 0;
  clGetMemObjectInfo(sub, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL);
  clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, NULL);
  clGetMemObjectInfo(sub, CL_MEM_OFFSET, sizeof off, &off, NULL);
  clGetMemObjectInfo(sub, CL_MEM_SIZE, sizeof sz, &sz, NULL);
  CHECK(hp == host + align * 2);
  CHECK(assoc == parent);
  CHECK_EQ_INT(off, align * 2);
  CHECK_EQ_INT(sz, align * 3);
  unsigned char b = 0;
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, sub, CL_TRUE, 1, 1, &b, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(b, (unsigned char)(align * 2 + 1));
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, sub, CL_TRUE, 0, 1, &b, 0, NULL, NULL),
               CL_INVALID_OPERATION);

  /* Errors, in the order the specification lists them. */
  CHECK(clCreateSubBuffer(sub, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_MEM_OBJECT);
  CHECK(clCreateSubBuffer((cl_mem)context, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_MEM_OBJECT);
  CHECK(clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err) ==
        NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateSubBuffer(parent, CL_MEM_WRITE_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &r, &err) ==
        NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateSubBuffer(parent, CL_MEM_HOST_WRITE_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &r, &err) ==
        NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateSubBuffer(parent, CL_MEM_USE_HOST_PTR, CL_BUFFER_CREATE_TYPE_REGION, &r, &err) ==
        NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateSubBuffer(parent, 0, 0x7777, &r, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  cl_buffer_region out = {align * 6, align * 3};
  CHECK(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &out, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  cl_buffer_region huge = {align, SIZE_MAX - 4};
  CHECK(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &huge, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  cl_buffer_region empty = {align, 0};
  CHECK(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &empty, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_BUFFER_SIZE);
  cl_buffer_region mis = {align + 4, 16};
  CHECK(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &mis, &err) == NULL);
  CHECK_EQ_INT(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
  /* A narrower access is allowed. */
  cl_mem rw = clCreateBuffer(context, CL_MEM_READ_WRITE, size, NULL, &err);
  REQUIRE(rw);
  cl_mem sub_ro = clCreateSubBuffer(rw, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS,
                                    CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  CHECK(sub_ro && err == CL_SUCCESS);
  cl_mem sub_a = clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  cl_buffer_region r2 = {align * 3, align * 2};
  cl_mem sub_b = clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &r2, &err);
  REQUIRE(sub_a && sub_b);
  /* Two sub-buffers of one buffer whose regions overlap. */
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, sub_a, sub_b, align, 0, align, 0, NULL, NULL),
               CL_MEM_COPY_OVERLAP);
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, sub_a, sub_b, 0, align, align, 0, NULL, NULL),
               CL_SUCCESS);
  /* A write through a sub-buffer shows in the parent. */
  int v = 0x1234567;
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, sub_b, CL_TRUE, 8, sizeof v, &v, 0, NULL, NULL),
               CL_SUCCESS);
  int got = 0;
  CHECK_EQ_INT(
      clEnqueueReadBuffer(queue, rw, CL_TRUE, align * 3 + 8, sizeof got, &got, 0, NULL, NULL),
      CL_SUCCESS);
  CHECK_EQ_INT(got, v);
  if (sub_ro) clReleaseMemObject(sub_ro);
  clReleaseMemObject(sub_a);
  clReleaseMemObject(sub_b);
  clReleaseMemObject(rw);
  clReleaseMemObject(sub);
  CHECK_EQ_INT(ref_count_of_mem(parent), 1);
  clReleaseMemObject(parent);
  free(host);
}

static void read_write_copy(void) {
  cl_int err;
  enum { N = 4096 };
  unsigned char *a = malloc(N), *b = malloc(N);
  for (int i = 0; i < N; i++)
    a[i] = (unsigned char)(i * 7 + 3);
  cl_mem m1 = clCreateBuffer(context, CL_MEM_READ_WRITE, N, NULL, &err);
  cl_mem m2 = clCreateBuffer(context, CL_MEM_READ_WRITE, N, NULL, &err);
  REQUIRE(m1 && m2);
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, m1, CL_TRUE, 0, N, a, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, m1, m2, 100, 1000, 2000, 0, NULL, NULL), CL_SUCCESS);
  memset(b, 0, N);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m2, CL_TRUE, 1000, 2000, b, 0, NULL, NULL), CL_SUCCESS);
  CHECK(!memcmp(b, a + 100, 2000));
  /* Same buffer, disjoint regions: allowed; overlapping: an error. */
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, m1, m1, 0, 2048, 2048, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m1, CL_TRUE, 2048, 2048, b, 0, NULL, NULL), CL_SUCCESS);
  CHECK(!memcmp(b, a, 2048));
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, m1, m1, 0, 100, 200, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, m1, m1, 100, 0, 101, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
  /* Bounds and arguments. */
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m1, CL_TRUE, N - 10, 11, b, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m1, CL_TRUE, SIZE_MAX, 2, b, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m1, CL_TRUE, 0, 0, b, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m1, CL_TRUE, 0, 4, NULL, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, m1, CL_TRUE, N, 1, a, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, m1, m2, N - 1, 0, 2, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, m1, m2, 0, N - 1, 2, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, m1, m2, 0, 0, 0, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueReadBuffer((cl_command_queue)context, m1, CL_TRUE, 0, 4, b, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, (cl_mem)queue, CL_TRUE, 0, 4, b, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, m1, (cl_mem)context, 0, 0, 4, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cl_event ev = NULL;
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m1, CL_TRUE, 0, 4, b, 1, NULL, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m1, CL_TRUE, 0, 4, b, 0, &ev, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
  /* A buffer of another context. */
  cl_context other = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  REQUIRE(other);
  cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 64, NULL, &err);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, foreign, CL_TRUE, 0, 4, b, 0, NULL, NULL),
               CL_INVALID_CONTEXT);
  CHECK_EQ_INT(clEnqueueCopyBuffer(queue, m1, foreign, 0, 0, 4, 0, NULL, NULL), CL_INVALID_CONTEXT);
  cl_event uev = clCreateUserEvent(other, &err);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m1, CL_TRUE, 0, 4, b, 1, &uev, NULL), CL_INVALID_CONTEXT);
  clSetUserEventStatus(uev, CL_COMPLETE);
  clReleaseEvent(uev);
  clReleaseMemObject(foreign);
  clReleaseContext(other);
  /* Non-blocking read with an event: the data is there once it completes. */
  memset(b, 0, N);
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, m1, CL_FALSE, 0, N, b, 0, NULL, &ev), CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &ev), CL_SUCCESS);
  CHECK(!memcmp(b, a, 2048));
  cl_command_type t = 0;
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL);
  CHECK_EQ_INT(t, CL_COMMAND_READ_BUFFER);
  clReleaseEvent(ev);
  clReleaseMemObject(m1);
  clReleaseMemObject(m2);
  free(a);
  free(b);
}

/* The host reference for rectangular copies. */
static void rect_ref(unsigned char *dst, const size_t dorg[3], size_t drow, size_t dslice,
                     const unsigned char *src, const size_t sorg[3], size_t srow, size_t sslice,
                     const size_t region[3]) {
  for (size_t z = 0; z < region[2]; z++)
    for (size_t y = 0; y < region[1]; y++)
      for (size_t x = 0; x < region[0]; x++)
        dst[(dorg[2] + z) * dslice + (dorg[1] + y) * drow + dorg[0] + x] =
            src[(sorg[2] + z) * sslice + (sorg[1] + y) * srow + sorg[0] + x];
}

static unsigned rng_state = 12345;
static size_t rnd(size_t n) {
  rng_state = rng_state * 1103515245u + 12345u;
  return (rng_state >> 8) % n;
}

static void rect_variants(void) {
  cl_int err;
  enum { BUF = 16 * 1024 };
  unsigned char *init = malloc(BUF), *host = malloc(BUF), *ref = malloc(BUF), *got = malloc(BUF);
  for (int i = 0; i < BUF; i++)
    init[i] = (unsigned char)(i * 13 + 1);
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, BUF, NULL, &err);
  cl_mem m2 = clCreateBuffer(context, CL_MEM_READ_WRITE, BUF, NULL, &err);
  REQUIRE(m && m2);
  for (int iter = 0; iter < 60; iter++) {
    size_t region[3] = {1 + rnd(20), 1 + rnd(8), 1 + rnd(4)};
    size_t brow = region[0] + rnd(5), bslice = brow * (region[1] + rnd(3));
    size_t hrow = region[0] + rnd(5), hslice = hrow * (region[1] + rnd(3));
    size_t borg[3] = {rnd(4), rnd(4), rnd(3)}, horg[3] = {rnd(4), rnd(4), rnd(3)};
    /* Zero pitches mean tightly packed. */
    size_t brow_arg = brow, bslice_arg = bslice, hrow_arg = hrow, hslice_arg = hslice;
    if (iter % 5 == 0) {
      brow = brow_arg = 0;
      bslice = bslice_arg = 0;
      brow = region[0];
      bslice = brow * region[1];
    }
    int kind = iter % 3;
    clEnqueueWriteBuffer(queue, m, CL_TRUE, 0, BUF, init, 0, NULL, NULL);
    clEnqueueWriteBuffer(queue, m2, CL_TRUE, 0, BUF, init, 0, NULL, NULL);
    memcpy(ref, init, BUF);
    if (kind == 0) { /* read */
      memset(host, 0, BUF);
      memset(ref, 0, BUF);
      CHECK_EQ_INT(clEnqueueReadBufferRect(queue, m, CL_TRUE, borg, horg, region, brow_arg,
                                           bslice_arg, hrow_arg, hslice_arg, host, 0, NULL, NULL),
                   CL_SUCCESS);
      rect_ref(ref, horg, hrow, hslice, init, borg, brow, bslice, region);
      CHECK(!memcmp(host, ref, BUF));
    } else if (kind == 1) { /* write */
      for (int i = 0; i < BUF; i++)
        host[i] = (unsigned char)(i * 31 + 7);
      CHECK_EQ_INT(clEnqueueWriteBufferRect(queue, m, CL_TRUE, borg, horg, region, brow_arg,
                                            bslice_arg, hrow_arg, hslice_arg, host, 0, NULL, NULL),
                   CL_SUCCESS);
      rect_ref(ref, borg, brow, bslice, host, horg, hrow, hslice, region);
      clEnqueueReadBuffer(queue, m, CL_TRUE, 0, BUF, got, 0, NULL, NULL);
      CHECK(!memcmp(got, ref, BUF));
    } else { /* copy m -> m2 */
      CHECK_EQ_INT(clEnqueueCopyBufferRect(queue, m, m2, borg, horg, region, brow_arg, bslice_arg,
                                           hrow_arg, hslice_arg, 0, NULL, NULL),
                   CL_SUCCESS);
      rect_ref(ref, horg, hrow, hslice, init, borg, brow, bslice, region);
      clEnqueueReadBuffer(queue, m2, CL_TRUE, 0, BUF, got, 0, NULL, NULL);
      CHECK(!memcmp(got, ref, BUF));
    }
  }
  size_t o[3] = {0, 0, 0}, reg[3] = {8, 4, 1};
  /* Interleaved but disjoint rectangles of one buffer: no overlap. */
  size_t left[3] = {0, 0, 0}, right[3] = {8, 0, 0};
  CHECK_EQ_INT(
      clEnqueueCopyBufferRect(queue, m, m, left, right, reg, 16, 64, 16, 64, 0, NULL, NULL),
      CL_SUCCESS);
  clFinish(queue);
  size_t down[3] = {0, 2, 0};
  CHECK_EQ_INT(clEnqueueCopyBufferRect(queue, m, m, left, down, reg, 16, 64, 16, 64, 0, NULL, NULL),
               CL_MEM_COPY_OVERLAP);
  /* Errors. */
  size_t zero[3] = {0, 4, 1};
  CHECK_EQ_INT(
      clEnqueueReadBufferRect(queue, m, CL_TRUE, o, o, zero, 0, 0, 0, 0, host, 0, NULL, NULL),
      CL_INVALID_VALUE);
  CHECK_EQ_INT(
      clEnqueueReadBufferRect(queue, m, CL_TRUE, o, o, reg, 4, 0, 0, 0, host, 0, NULL, NULL),
      CL_INVALID_VALUE);
  CHECK_EQ_INT(
      clEnqueueReadBufferRect(queue, m, CL_TRUE, o, o, reg, 0, 0, 4, 0, host, 0, NULL, NULL),
      CL_INVALID_VALUE);
  CHECK_EQ_INT(
      clEnqueueReadBufferRect(queue, m, CL_TRUE, o, o, reg, 16, 20, 0, 0, host, 0, NULL, NULL),
      CL_INVALID_VALUE);
  CHECK_EQ_INT(
      clEnqueueReadBufferRect(queue, m, CL_TRUE, o, o, reg, 0, 0, 0, 0, NULL, 0, NULL, NULL),
      CL_INVALID_VALUE);
  CHECK_EQ_INT(
      clEnqueueReadBufferRect(queue, m, CL_TRUE, NULL, o, reg, 0, 0, 0, 0, host, 0, NULL, NULL),
      CL_INVALID_VALUE);
  size_t far[3] = {0, 0, BUF};
  CHECK_EQ_INT(
      clEnqueueReadBufferRect(queue, m, CL_TRUE, far, o, reg, 0, 0, 0, 0, host, 0, NULL, NULL),
      CL_INVALID_VALUE);
  size_t big[3] = {BUF, 2, 1};
  CHECK_EQ_INT(
      clEnqueueWriteBufferRect(queue, m, CL_TRUE, o, o, big, 0, 0, 0, 0, host, 0, NULL, NULL),
      CL_INVALID_VALUE);
  /* Same buffer with different pitches is an error by itself. */
  CHECK_EQ_INT(clEnqueueCopyBufferRect(queue, m, m, left, far, reg, 16, 64, 32, 128, 0, NULL, NULL),
               CL_INVALID_VALUE);
  clReleaseMemObject(m);
  clReleaseMemObject(m2);
  free(init);
  free(host);
  free(ref);
  free(got);
}

static void fill_every_pattern_size(void) {
  cl_int err;
  enum { N = 1024 };
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N, NULL, &err);
  REQUIRE(m);
  unsigned char pattern[128], got[N], zero[N];
  for (int i = 0; i < 128; i++)
    pattern[i] = (unsigned char)(0xA0 + i);
  memset(zero, 0, N);
  for (size_t ps = 1; ps <= 128; ps *= 2) {
    clEnqueueWriteBuffer(queue, m, CL_TRUE, 0, N, zero, 0, NULL, NULL);
    size_t off = ps * 2, size = ps * 3;
    cl_event ev;
    CHECK_EQ_INT(clEnqueueFillBuffer(queue, m, pattern, ps, off, size, 0, NULL, &ev), CL_SUCCESS);
    CHECK_EQ_INT(clWaitForEvents(1, &ev), CL_SUCCESS);
    cl_command_type t = 0;
    clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL);
    CHECK_EQ_INT(t, CL_COMMAND_FILL_BUFFER);
    clReleaseEvent(ev);
    clEnqueueReadBuffer(queue, m, CL_TRUE, 0, N, got, 0, NULL, NULL);
    int good = 1;
    for (size_t i = 0; i < N; i++) {
      unsigned char want = i >= off && i < off + size ? pattern[(i - off) % ps] : 0;
      good &= got[i] == want;
    }
    if (!good) printf("  pattern size %zu wrong\n", ps);
    CHECK(good);
  }
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, m, pattern, 3, 0, 6, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, m, pattern, 256, 0, 256, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, m, pattern, 0, 0, 4, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, m, NULL, 4, 0, 4, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, m, pattern, 4, 2, 4, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, m, pattern, 4, 0, 6, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, m, pattern, 4, N - 4, 8, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, (cl_mem)context, pattern, 4, 0, 4, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  clReleaseMemObject(m);
}

static void map_unmap(void) {
  cl_int err;
  enum { N = 256 };
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
  REQUIRE(m);
  int *whole = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0,
                                  N * sizeof(int), 0, NULL, NULL, &err);
  REQUIRE(whole && err == CL_SUCCESS);
  for (int i = 0; i < N; i++)
    whole[i] = i;
  cl_uint count = 0;
  clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
  CHECK_EQ_INT(count, 1);
  cl_event ev;
  int *part = clEnqueueMapBuffer(queue, m, CL_FALSE, CL_MAP_READ, 16 * sizeof(int), 8 * sizeof(int),
                                 0, NULL, &ev, &err);
  REQUIRE(part && err == CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &ev), CL_SUCCESS);
  cl_command_type t = 0;
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL);
  CHECK_EQ_INT(t, CL_COMMAND_MAP_BUFFER);
  clReleaseEvent(ev);
  /* The mapping is a pointer into the buffer's storage. */
  CHECK(part == whole + 16);
  CHECK_EQ_INT(part[0], 16);
  clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
  CHECK_EQ_INT(count, 2);
  int dummy;
  CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, m, &dummy, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, m, NULL, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, m, part, 0, NULL, &ev), CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &ev), CL_SUCCESS);
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL);
  CHECK_EQ_INT(t, CL_COMMAND_UNMAP_MEM_OBJECT);
  clReleaseEvent(ev);
  CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, m, whole, 0, NULL, NULL), CL_SUCCESS);
  clFinish(queue);
  clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
  CHECK_EQ_INT(count, 0);
  /* Nothing is mapped any more. */
  CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, m, whole, 0, NULL, NULL), CL_INVALID_VALUE);
  int back[N];
  clEnqueueReadBuffer(queue, m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
  CHECK_EQ_INT(back[N - 1], N - 1);
  /* Errors. */
  CHECK(clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ, 0, 0, 0, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ, 1, N * sizeof(int), 0, NULL, NULL,
                           &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clEnqueueMapBuffer(queue, m, CL_TRUE, 0x100, 0, 4, 0, NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, 0, 4, 0,
                           NULL, NULL, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  CHECK(clEnqueueMapBuffer(queue, (cl_mem)context, CL_TRUE, CL_MAP_READ, 0, 4, 0, NULL, NULL,
                           &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_MEM_OBJECT);
  clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
  CHECK_EQ_INT(count, 0);
  clReleaseMemObject(m);
}

static void migrate(void) {
  cl_int err;
  cl_mem m[2];
  m[0] = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  m[1] = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
  REQUIRE(m[0] && m[1]);
  cl_event ev;
  CHECK_EQ_INT(clEnqueueMigrateMemObjects(queue, 2, m, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, &ev),
               CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &ev), CL_SUCCESS);
  cl_command_type t = 0;
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL);
  CHECK_EQ_INT(t, CL_COMMAND_MIGRATE_MEM_OBJECTS);
  clReleaseEvent(ev);
  CHECK_EQ_INT(clEnqueueMigrateMemObjects(queue, 2, m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0,
                                          NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueMigrateMemObjects(queue, 0, m, 0, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueMigrateMemObjects(queue, 1, NULL, 0, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueMigrateMemObjects(queue, 2, m, 0x100, 0, NULL, NULL), CL_INVALID_VALUE);
  cl_mem bad[2] = {m[0], (cl_mem)context};
  CHECK_EQ_INT(clEnqueueMigrateMemObjects(queue, 2, bad, 0, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);
  clFinish(queue);
  clReleaseMemObject(m[0]);
  clReleaseMemObject(m[1]);
}

static int destructor_log[8], destructor_n;
static void CL_CALLBACK destructor(cl_mem m, void *data) {
  destructor_log[destructor_n++ % 8] = (int)(intptr_t)data;
}

static void destructor_callbacks(void) {
  cl_int err;
  destructor_n = 0;
  cl_mem parent = clCreateBuffer(context, CL_MEM_READ_WRITE, 1024, NULL, &err);
  REQUIRE(parent);
  cl_buffer_region r = {0, 256};
  cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  REQUIRE(sub);
  CHECK_EQ_INT(clSetMemObjectDestructorCallback(parent, destructor, (void *)1), CL_SUCCESS);
  CHECK_EQ_INT(clSetMemObjectDestructorCallback(parent, destructor, (void *)2), CL_SUCCESS);
  CHECK_EQ_INT(clSetMemObjectDestructorCallback(parent, destructor, (void *)3), CL_SUCCESS);
  CHECK_EQ_INT(clSetMemObjectDestructorCallback(sub, destructor, (void *)10), CL_SUCCESS);
  CHECK_EQ_INT(clSetMemObjectDestructorCallback(sub, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clSetMemObjectDestructorCallback((cl_mem)context, destructor, NULL),
               CL_INVALID_MEM_OBJECT);
  clReleaseMemObject(parent);
  CHECK_EQ_INT(destructor_n, 0); /* the sub-buffer still holds it */
  /* A command in flight holds the buffer too. */
  cl_event gate = clCreateUserEvent(context, &err);
  int v = 5;
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, sub, CL_FALSE, 0, sizeof v, &v, 1, &gate, NULL),
               CL_SUCCESS);
  clReleaseMemObject(sub);
  CHECK_EQ_INT(destructor_n, 0);
  clSetUserEventStatus(gate, CL_COMPLETE);
  clReleaseEvent(gate);
  clFinish(queue);
  CHECK_EQ_INT(destructor_n, 4);
  CHECK_EQ_INT(destructor_log[0], 10);
  CHECK_EQ_INT(destructor_log[1], 3);
  CHECK_EQ_INT(destructor_log[2], 2);
  CHECK_EQ_INT(destructor_log[3], 1);
}

/* A kernel writing a little past its buffer's end (piglit's
 * clz-optimizations runs 34 work-items over 18-element buffers) must not
 * corrupt the process's heap: buffer storage is not malloc memory. Before,
 * glibc aborted at a later free ("free(): invalid next size"). */
static void overrun_spares_the_heap(void) {
  static const char *src =
      "__kernel void spill(__global int *out, __global const ushort *in) {\n"
      "  int id = get_global_id(0);\n"
      "  out[id] = in[id] + 1;\n"
      "}\n";
  cl_kernel k = build_kernel(src, "spill");
  REQUIRE(k);
  for (int round = 0; round < 8; round++) {
    cl_int err;
    void *before = malloc(40);
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 18 * sizeof(cl_int), NULL, &err);
    void *between = malloc(40);
    cl_mem in = clCreateBuffer(context, CL_MEM_READ_WRITE, 18 * sizeof(cl_ushort), NULL, &err);
    void *after = malloc(40);
    REQUIRE(out && in && before && between && after);
    memset(before, 1, 40);
    memset(between, 2, 40);
    memset(after, 3, 40);
    clSetKernelArg(k, 0, sizeof out, &out);
    clSetKernelArg(k, 1, sizeof in, &in);
    size_t global = 34;
    CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
    cl_int first[18];
    CHECK_EQ_INT(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof first, first, 0, NULL, NULL),
                 CL_SUCCESS);
    CHECK_EQ_INT(first[17], 1);
    CHECK(((unsigned char *)before)[39] == 1 && ((unsigned char *)between)[0] == 2 &&
          ((unsigned char *)after)[0] == 3);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    free(after);
    free(between);
    free(before);
  }
  clReleaseKernel(k);
}

/* Storage of 2 MiB or more that a released buffer held is taken again by
 * the next buffer of the same length (its pages are resident already);
 * a buffer of another length gets storage of its own, and reused storage
 * works like fresh. Mapping returns a pointer into the storage, which
 * shows where it is. */
static void released_storage_is_reused(void) {
  enum { SIZE = 4 << 20 };
  cl_int err;
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, SIZE, NULL, &err);
  REQUIRE(a);
  unsigned char *pa = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, SIZE,
                                         0, NULL, NULL, &err);
  REQUIRE(pa && err == CL_SUCCESS);
  memset(pa, 0x5a, SIZE);
  CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, a, pa, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  CHECK_EQ_INT(clReleaseMemObject(a), CL_SUCCESS);

  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, SIZE, NULL, &err);
  REQUIRE(b);
  unsigned char *pb =
      clEnqueueMapBuffer(queue, b, CL_TRUE, CL_MAP_READ, 0, SIZE, 0, NULL, NULL, &err);
  REQUIRE(pb && err == CL_SUCCESS);
  CHECK(pb == pa);
  /* Resident before anything touched this buffer: A's pages, not fresh
   * ones (a fresh mapping at the same address would have none). */
  static unsigned char resident[SIZE / 4096];
  CHECK_EQ_INT(mincore(pb, SIZE, resident), 0);
  int missing = 0;
  for (size_t i = 0; i < sizeof resident; i++)
    missing += !(resident[i] & 1);
  CHECK_EQ_INT(missing, 0);
  CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, b, pb, 0, NULL, NULL), CL_SUCCESS);
  cl_int pattern = 0x01020304;
  CHECK_EQ_INT(clEnqueueFillBuffer(queue, b, &pattern, sizeof pattern, 0, SIZE, 0, NULL, NULL),
               CL_SUCCESS);
  cl_int back[4] = {0};
  CHECK_EQ_INT(
      clEnqueueReadBuffer(queue, b, CL_TRUE, SIZE - sizeof back, sizeof back, back, 0, NULL, NULL),
      CL_SUCCESS);
  CHECK_EQ_INT(back[0], pattern);
  CHECK_EQ_INT(back[3], pattern);

  cl_mem c = clCreateBuffer(context, CL_MEM_READ_WRITE, SIZE + 4096, NULL, &err);
  REQUIRE(c);
  unsigned char *pc =
      clEnqueueMapBuffer(queue, c, CL_TRUE, CL_MAP_READ, 0, SIZE, 0, NULL, NULL, &err);
  REQUIRE(pc && err == CL_SUCCESS);
  CHECK(pc != pb);
  CHECK_EQ_INT(clEnqueueUnmapMemObject(queue, c, pc, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  clReleaseMemObject(c);
  clReleaseMemObject(b);
}

int main(void) {
  api_setup();
  RUN(create_every_flag_combination);
  RUN(create_errors);
  RUN(mem_info);
  RUN(use_host_ptr_no_copy);
  RUN(copy_and_alloc_host_ptr);
  RUN(host_access_flags);
  RUN(sub_buffers);
  RUN(read_write_copy);
  RUN(rect_variants);
  RUN(fill_every_pattern_size);
  RUN(map_unmap);
  RUN(migrate);
  RUN(destructor_callbacks);
  RUN(overrun_spares_the_heap);
  RUN(released_storage_is_reused);
  api_teardown();
  CHECK_EXIT();
}
