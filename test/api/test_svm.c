/* Shared virtual memory through the loader: clSVMAlloc's checks and the
 * device memory budget, kernels reading and writing coarse-grain,
 * fine-grain and system (malloc) memory through SVM pointer arguments,
 * pointers stored inside SVM followed by a kernel, fine-grain atomics, the
 * clEnqueueSVM* commands (fill, copy, map, unmap, migrate, free with and
 * without a callback) with their errors and command types, buffers over SVM
 * (CL_MEM_USES_SVM_POINTER), and clSetKernelExecInfo; Intel's unified
 * shared memory on top (allocations of each kind, their queries, kernel
 * arguments, fill, memset, copy, migrate, advise, blocking free). On a device without
 * SVM (a remote one: test/remote/run.sh runs this there), every SVM call
 * gives the specified answer instead. */
#define CL_TARGET_OPENCL_VERSION 300
#include "api.h"

#include <CL/cl_ext.h>

static const char *source =
    "kernel void scale(global int *p, int k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  p[i] = p[i] * k + (int)i;\n"
    "}\n"
    "typedef struct node { global struct node *next; int value; } node;\n"
    "kernel void walk(global node *head, global int *out) {\n"
    "  int sum = 0;\n"
    "  for (global node *n = head; n; n = n->next) sum += n->value;\n"
    "  out[get_global_id(0)] = sum;\n"
    "}\n"
    "kernel void count(volatile global int *counter) { atomic_inc(counter); }\n";

static cl_program program;

static cl_kernel kernel(const char *name) {
  cl_int err;
  cl_kernel k = clCreateKernel(program, name, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  return k;
}

static void allocation_checks(void) {
  cl_device_svm_capabilities caps = 0;
  CHECK_EQ_INT(clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL),
               CL_SUCCESS);
  CHECK(caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM);
  const cl_svm_mem_flags good[] = {
      0,
      CL_MEM_READ_ONLY,
      CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER,
      CL_MEM_WRITE_ONLY | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS,
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    int *p = clSVMAlloc(context, good[i], 1000, 0);
    CHECK(p != NULL);
    if (p) {
      CHECK((uintptr_t)p % 128 == 0);
      p[0] = p[249] = 7; /* the host reaches it too */
      clSVMFree(context, p);
    }
  }
  /* Bad flags, sizes and alignments give NULL. */
  CHECK(clSVMAlloc(context, CL_MEM_SVM_ATOMICS, 64, 0) == NULL);
  CHECK(clSVMAlloc(context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, 0) == NULL);
  CHECK(clSVMAlloc(context, CL_MEM_USE_HOST_PTR, 64, 0) == NULL);
  CHECK(clSVMAlloc(context, 0, 0, 0) == NULL);
  CHECK(clSVMAlloc(context, 0, 64, 3) == NULL);
  CHECK(clSVMAlloc(NULL, 0, 64, 0) == NULL);
  cl_ulong max_alloc = 0, global = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
  clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL);
  CHECK(clSVMAlloc(context, 0, (size_t)max_alloc + 1, 0) == NULL);
  /* Larger alignments are kept. */
  void *a = clSVMAlloc(context, 0, 100, 1 << 20);
  CHECK(a && (uintptr_t)a % (1 << 20) == 0);
  clSVMFree(context, a);
  /* SVM counts in the device's memory budget: more than
   * CL_DEVICE_GLOBAL_MEM_SIZE in allocations of the largest size fails
   * (the pages are reserved, never touched), and freeing gives it back. */
  void *held[64];
  size_t n = 0;
  while (n < 64 && (held[n] = clSVMAlloc(context, 0, (size_t)max_alloc, 0)))
    n++;
  CHECK(n > 0 && n < 64 && (cl_ulong)n * max_alloc <= global);
  for (size_t i = 0; i < n; i++)
    clSVMFree(context, held[i]);
  a = clSVMAlloc(context, 0, (size_t)max_alloc, 0);
  CHECK(a != NULL);
  clSVMFree(context, a);
  /* Freeing NULL or a pointer clSVMAlloc did not return does nothing. */
  int x;
  clSVMFree(context, NULL);
  clSVMFree(context, &x);
}

static void kernels_on_every_kind(void) {
  enum { N = 1024 };
  cl_kernel k = kernel("scale");
  int three = 3;
  CHECK_EQ_INT(clSetKernelArg(k, 1, sizeof three, &three), CL_SUCCESS);
  /* Coarse-grain: written and read between map and unmap. */
  int *coarse = clSVMAlloc(context, CL_MEM_READ_WRITE, N * sizeof(int), 0);
  REQUIRE(coarse);
  cl_event map_event, unmap_event;
  CHECK_EQ_INT(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, coarse,
                               N * sizeof(int), 0, NULL, &map_event),
               CL_SUCCESS);
  for (int i = 0; i < N; i++)
    coarse[i] = i;
  CHECK_EQ_INT(clEnqueueSVMUnmap(queue, coarse, 0, NULL, &unmap_event), CL_SUCCESS);
  cl_command_type type = 0;
  clGetEventInfo(map_event, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_SVM_MAP);
  clGetEventInfo(unmap_event, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_SVM_UNMAP);
  clReleaseEvent(map_event);
  clReleaseEvent(unmap_event);
  /* A pointer into the middle of the allocation is an argument too. */
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 0, coarse + N / 2), CL_SUCCESS);
  size_t half = N / 2;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &half, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, coarse, N * sizeof(int), 0, NULL, NULL),
               CL_SUCCESS);
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += coarse[i] != (i < N / 2 ? i : i * 3 + (i - N / 2));
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(clEnqueueSVMUnmap(queue, coarse, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);

  /* Fine-grain: the host reads what the kernel wrote once it completes. */
  int *fine = clSVMAlloc(context, CL_MEM_SVM_FINE_GRAIN_BUFFER, N * sizeof(int), 0);
  REQUIRE(fine);
  for (int i = 0; i < N; i++)
    fine[i] = 1;
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 0, fine), CL_SUCCESS);
  size_t global = N;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  bad = 0;
  for (int i = 0; i < N; i++)
    bad += fine[i] != 3 + i;
  CHECK_EQ_INT(bad, 0);

  /* System SVM: memory from malloc. */
  cl_bool yes = CL_TRUE;
  CHECK_EQ_INT(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof yes, &yes),
               CL_SUCCESS);
  int *system = malloc(N * sizeof(int));
  REQUIRE(system);
  for (int i = 0; i < N; i++)
    system[i] = -i;
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 0, system), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  bad = 0;
  for (int i = 0; i < N; i++)
    bad += system[i] != -2 * i;
  CHECK_EQ_INT(bad, 0);
  free(system);

  /* A buffer set afterwards replaces the SVM pointer. */
  cl_int err;
  cl_mem buffer = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, N * sizeof(int), fine, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArg(k, 0, sizeof buffer, &buffer), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  int back[N];
  CHECK_EQ_INT(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL),
               CL_SUCCESS);
  bad = 0;
  for (int i = 0; i < N; i++)
    bad += back[i] != (3 + i) * 3 + i || fine[i] != 3 + i;
  CHECK_EQ_INT(bad, 0);
  clReleaseMemObject(buffer);

  /* Argument errors. */
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 1, fine), CL_INVALID_ARG_VALUE);
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 2, fine), CL_INVALID_ARG_INDEX);
  CHECK_EQ_INT(clSetKernelArgSVMPointer(NULL, 0, fine), CL_INVALID_KERNEL);
  clReleaseKernel(k);
  clSVMFree(context, coarse);
  clSVMFree(context, fine);
}

/* Nodes that point at each other inside SVM, followed by a kernel. */
static void pointers_inside_svm(void) {
  struct node {
    struct node *next;
    int value;
  };
  enum { NODES = 100 };
  struct node *nodes = clSVMAlloc(context, CL_MEM_SVM_FINE_GRAIN_BUFFER, NODES * sizeof *nodes, 0);
  int *out = clSVMAlloc(context, CL_MEM_SVM_FINE_GRAIN_BUFFER, 4 * sizeof(int), 0);
  REQUIRE(nodes && out);
  /* Linked backwards, so that the walk jumps around. */
  for (int i = 0; i < NODES; i++) {
    nodes[i].value = i + 1;
    nodes[i].next = i > 0 ? &nodes[i - 1] : NULL;
  }
  cl_kernel k = kernel("walk");
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 0, &nodes[NODES - 1]), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 1, out), CL_SUCCESS);
  void *reached[] = {nodes};
  CHECK_EQ_INT(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof reached, reached),
               CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 3, reached), CL_INVALID_VALUE);
  CHECK_EQ_INT(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof reached, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clSetKernelExecInfo(k, 0x12345, sizeof reached, reached), CL_INVALID_VALUE);
  CHECK_EQ_INT(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 0, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof reached, reached),
               CL_SUCCESS);
  size_t global = 4;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  for (int i = 0; i < 4; i++)
    CHECK_EQ_INT(out[i], NODES * (NODES + 1) / 2);
  clReleaseKernel(k);

  /* Fine-grain atomics: every work-item's increment lands. */
  int *counter =
      clSVMAlloc(context, CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS, sizeof(int), 0);
  REQUIRE(counter);
  *counter = 5;
  k = kernel("count");
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 0, counter), CL_SUCCESS);
  global = 4096;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  CHECK_EQ_INT(*counter, 4096 + 5);
  clReleaseKernel(k);
  clSVMFree(context, counter);
  clSVMFree(context, nodes);
  clSVMFree(context, out);
}

static int freed_count;
static void *freed_first;
static void CL_CALLBACK free_callback(cl_command_queue q, cl_uint n, void *pointers[], void *data) {
  freed_count = (int)n;
  freed_first = pointers[0];
  for (cl_uint i = 0; i < n; i++)
    clSVMFree((cl_context)data, pointers[i]);
}

static void commands(void) {
  enum { N = 4096 };
  unsigned char *a = clSVMAlloc(context, 0, N, 0);
  unsigned char *b = clSVMAlloc(context, 0, N, 0);
  REQUIRE(a && b);
  const unsigned pattern = 0xa1b2c3d4;
  cl_event fill_event, copy_event;
  CHECK_EQ_INT(clEnqueueSVMMemFill(queue, a, &pattern, sizeof pattern, N, 0, NULL, &fill_event),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueSVMMemcpy(queue, CL_TRUE, b, a, N, 1, &fill_event, &copy_event),
               CL_SUCCESS);
  int bad = 0;
  for (int i = 0; i < N; i += 4)
    bad += memcmp(b + i, &pattern, 4) != 0;
  CHECK_EQ_INT(bad, 0);
  cl_command_type type = 0;
  clGetEventInfo(fill_event, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_SVM_MEMFILL);
  clGetEventInfo(copy_event, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_SVM_MEMCPY);
  clReleaseEvent(fill_event);
  clReleaseEvent(copy_event);
  /* Copies to and from plain host memory (system SVM). */
  unsigned char host[N];
  CHECK_EQ_INT(clEnqueueSVMMemcpy(queue, CL_TRUE, host, b, N, 0, NULL, NULL), CL_SUCCESS);
  CHECK(!memcmp(host, b, N));

  /* Errors. */
  CHECK_EQ_INT(clEnqueueSVMMemcpy(queue, CL_TRUE, a + 8, a, 16, 0, NULL, NULL),
               CL_MEM_COPY_OVERLAP);
  CHECK_EQ_INT(clEnqueueSVMMemcpy(queue, CL_TRUE, NULL, a, 16, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueSVMMemcpy(NULL, CL_TRUE, b, a, 16, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  CHECK_EQ_INT(clEnqueueSVMMemFill(queue, a + 2, &pattern, 4, 16, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueSVMMemFill(queue, a, &pattern, 3, 15, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueSVMMemFill(queue, a, &pattern, 4, 14, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, a, 0, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, a, 16,
                               0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueSVMUnmap(queue, NULL, 0, NULL, NULL), CL_INVALID_VALUE);
  cl_event none = NULL;
  CHECK_EQ_INT(clEnqueueSVMMemcpy(queue, CL_TRUE, b, a, 16, 1, &none, NULL),
               CL_INVALID_EVENT_WAIT_LIST);

  /* Migration: whole allocations, ranges inside one, none past its end. */
  const void *ptrs[] = {a, b + 16};
  const size_t sizes[] = {0, N - 16};
  cl_event migrate_event;
  CHECK_EQ_INT(clEnqueueSVMMigrateMem(queue, 2, ptrs, sizes, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL,
                                      &migrate_event),
               CL_SUCCESS);
  clGetEventInfo(migrate_event, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_SVM_MIGRATE_MEM);
  clReleaseEvent(migrate_event);
  const size_t too_long[] = {0, N};
  CHECK_EQ_INT(clEnqueueSVMMigrateMem(queue, 2, ptrs, too_long, 0, 0, NULL, NULL),
               CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueSVMMigrateMem(queue, 0, ptrs, sizes, 0, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clEnqueueSVMMigrateMem(queue, 2, ptrs, sizes, 0x100, 0, NULL, NULL),
               CL_INVALID_VALUE);

  /* Freeing as a command: the callback gets the pointers and frees them. */
  void *both[] = {a, b};
  cl_event free_event;
  CHECK_EQ_INT(clEnqueueSVMFree(queue, 2, both, free_callback, context, 0, NULL, &free_event),
               CL_SUCCESS);
  CHECK_EQ_INT(clWaitForEvents(1, &free_event), CL_SUCCESS);
  clGetEventInfo(free_event, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_COMMAND_SVM_FREE);
  clReleaseEvent(free_event);
  CHECK_EQ_INT(freed_count, 2);
  CHECK(freed_first == a);
  /* And without one, the runtime frees them. */
  void *c = clSVMAlloc(context, 0, 64, 0);
  CHECK_EQ_INT(clEnqueueSVMFree(queue, 1, &c, NULL, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueSVMFree(queue, 1, NULL, NULL, NULL, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
}

static void buffers_over_svm(void) {
  cl_int err;
  char *svm = clSVMAlloc(context, 0, 1024, 0);
  REQUIRE(svm);
  cl_mem whole = clCreateBuffer(context, CL_MEM_USE_HOST_PTR, 512, svm + 512, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  cl_bool uses = CL_FALSE;
  CHECK_EQ_INT(clGetMemObjectInfo(whole, CL_MEM_USES_SVM_POINTER, sizeof uses, &uses, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(uses, CL_TRUE);
  cl_buffer_region region = {128, 128};
  cl_mem sub = clCreateSubBuffer(whole, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  uses = CL_FALSE;
  clGetMemObjectInfo(sub, CL_MEM_USES_SVM_POINTER, sizeof uses, &uses, NULL);
  CHECK_EQ_INT(uses, CL_TRUE);
  /* The bytes are the SVM's. */
  int v = 42;
  CHECK_EQ_INT(clEnqueueWriteBuffer(queue, sub, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK(!memcmp(svm + 512 + 128, &v, sizeof v));
  clReleaseMemObject(sub);
  clReleaseMemObject(whole);
  /* Past the allocation's end. */
  CHECK(clCreateBuffer(context, CL_MEM_USE_HOST_PTR, 1024, svm + 1, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_BUFFER_SIZE);
  char plain[64];
  cl_mem other = clCreateBuffer(context, CL_MEM_USE_HOST_PTR, sizeof plain, plain, &err);
  uses = CL_TRUE;
  clGetMemObjectInfo(other, CL_MEM_USES_SVM_POINTER, sizeof uses, &uses, NULL);
  CHECK_EQ_INT(uses, CL_FALSE);
  clReleaseMemObject(other);
  clSVMFree(context, svm);
  /* What the application leaves allocated goes with its context. */
  cl_context c = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK(clSVMAlloc(c, 0, 4096, 0) != NULL);
  CHECK_EQ_INT(clReleaseContext(c), CL_SUCCESS);
}

/* cl_intel_unified_shared_memory, through the extension's addresses. */
#define USM_FN(name)                                                                               \
  name##_fn name##_p = (name##_fn)clGetExtensionFunctionAddressForPlatform(platform, #name)
static void unified_shared_memory(void) {
  char ext[2048];
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
  CHECK(strstr(ext, "cl_intel_unified_shared_memory") != NULL);
  USM_FN(clHostMemAllocINTEL);
  USM_FN(clDeviceMemAllocINTEL);
  USM_FN(clSharedMemAllocINTEL);
  USM_FN(clMemFreeINTEL);
  USM_FN(clMemBlockingFreeINTEL);
  USM_FN(clGetMemAllocInfoINTEL);
  USM_FN(clSetKernelArgMemPointerINTEL);
  USM_FN(clEnqueueMemsetINTEL);
  USM_FN(clEnqueueMemFillINTEL);
  USM_FN(clEnqueueMemcpyINTEL);
  USM_FN(clEnqueueMigrateMemINTEL);
  USM_FN(clEnqueueMemAdviseINTEL);
  REQUIRE(clHostMemAllocINTEL_p && clDeviceMemAllocINTEL_p && clSharedMemAllocINTEL_p &&
          clMemFreeINTEL_p && clMemBlockingFreeINTEL_p && clGetMemAllocInfoINTEL_p &&
          clSetKernelArgMemPointerINTEL_p && clEnqueueMemsetINTEL_p && clEnqueueMemFillINTEL_p &&
          clEnqueueMemcpyINTEL_p && clEnqueueMigrateMemINTEL_p && clEnqueueMemAdviseINTEL_p);
  cl_device_unified_shared_memory_capabilities_intel caps = 0;
  CHECK_EQ_INT(
      clGetDeviceInfo(device, CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL, sizeof caps, &caps, NULL),
      CL_SUCCESS);
  CHECK(caps & CL_UNIFIED_SHARED_MEMORY_ATOMIC_ACCESS_INTEL);

  enum { N = 1000 };
  cl_int err;
  cl_mem_properties_intel props[] = {CL_MEM_ALLOC_FLAGS_INTEL, CL_MEM_ALLOC_WRITE_COMBINED_INTEL,
                                     0};
  int *host = clHostMemAllocINTEL_p(context, props, N * sizeof(int), 0, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  int *dev = clDeviceMemAllocINTEL_p(context, device, NULL, N * sizeof(int), 64, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  int *shared = clSharedMemAllocINTEL_p(context, NULL, NULL, N * sizeof(int), 0, &err);
  CHECK_EQ_INT(err, CL_SUCCESS);
  REQUIRE(host && dev && shared);
  /* The queries, from the start or the middle of an allocation. */
  cl_unified_shared_memory_type_intel type = 0;
  clGetMemAllocInfoINTEL_p(context, dev + 10, CL_MEM_ALLOC_TYPE_INTEL, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_MEM_TYPE_DEVICE_INTEL);
  clGetMemAllocInfoINTEL_p(context, host, CL_MEM_ALLOC_TYPE_INTEL, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_MEM_TYPE_HOST_INTEL);
  clGetMemAllocInfoINTEL_p(context, shared + N - 1, CL_MEM_ALLOC_TYPE_INTEL, sizeof type, &type,
                           NULL);
  CHECK_EQ_INT(type, CL_MEM_TYPE_SHARED_INTEL);
  int outside;
  clGetMemAllocInfoINTEL_p(context, &outside, CL_MEM_ALLOC_TYPE_INTEL, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_MEM_TYPE_UNKNOWN_INTEL);
  void *base = NULL;
  size_t size = 0;
  cl_device_id owner = NULL;
  cl_mem_alloc_flags_intel flags = 0;
  clGetMemAllocInfoINTEL_p(context, dev + 10, CL_MEM_ALLOC_BASE_PTR_INTEL, sizeof base, &base,
                           NULL);
  clGetMemAllocInfoINTEL_p(context, dev + 10, CL_MEM_ALLOC_SIZE_INTEL, sizeof size, &size, NULL);
  clGetMemAllocInfoINTEL_p(context, dev, CL_MEM_ALLOC_DEVICE_INTEL, sizeof owner, &owner, NULL);
  clGetMemAllocInfoINTEL_p(context, host, CL_MEM_ALLOC_FLAGS_INTEL, sizeof flags, &flags, NULL);
  CHECK(base == dev && size == N * sizeof(int) && owner == device && (uintptr_t)dev % 64 == 0);
  CHECK_EQ_INT(flags, CL_MEM_ALLOC_WRITE_COMBINED_INTEL);
  CHECK_EQ_INT(clGetMemAllocInfoINTEL_p(context, dev, 0x1234, sizeof flags, &flags, NULL),
               CL_INVALID_VALUE);

  /* Fill the host allocation, copy it to the device one, run a kernel on
   * it, copy the result to the shared one. */
  const int seven = 7;
  cl_event fill;
  CHECK_EQ_INT(
      clEnqueueMemFillINTEL_p(queue, host, &seven, sizeof seven, N * sizeof(int), 0, NULL, &fill),
      CL_SUCCESS);
  cl_command_type command = 0;
  clGetEventInfo(fill, CL_EVENT_COMMAND_TYPE, sizeof command, &command, NULL);
  CHECK_EQ_INT(command, CL_COMMAND_MEMFILL_INTEL);
  clReleaseEvent(fill);
  CHECK_EQ_INT(clEnqueueMemcpyINTEL_p(queue, CL_FALSE, dev, host, N * sizeof(int), 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueMigrateMemINTEL_p(queue, dev, N * sizeof(int), 0, 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueMemAdviseINTEL_p(queue, dev, N * sizeof(int), 0, 0, NULL, NULL),
               CL_SUCCESS);
  cl_kernel k = kernel("scale");
  int two = 2;
  CHECK_EQ_INT(clSetKernelArgMemPointerINTEL_p(k, 0, dev), CL_SUCCESS);
  CHECK_EQ_INT(clSetKernelArgMemPointerINTEL_p(k, 1, dev), CL_INVALID_ARG_VALUE);
  CHECK_EQ_INT(clSetKernelArg(k, 1, sizeof two, &two), CL_SUCCESS);
  cl_bool yes = CL_TRUE;
  CHECK_EQ_INT(
      clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL, sizeof yes, &yes),
      CL_SUCCESS);
  size_t global = N;
  CHECK_EQ_INT(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  CHECK_EQ_INT(clEnqueueMemcpyINTEL_p(queue, CL_TRUE, shared, dev, N * sizeof(int), 0, NULL, NULL),
               CL_SUCCESS);
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += shared[i] != 14 + i;
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(clEnqueueMemsetINTEL_p(queue, shared, 0x01, N * sizeof(int), 0, NULL, NULL),
               CL_SUCCESS);
  CHECK_EQ_INT(clFinish(queue), CL_SUCCESS);
  CHECK_EQ_INT(shared[N / 2], 0x01010101);
  clReleaseKernel(k);

  /* Errors. */
  CHECK(clDeviceMemAllocINTEL_p(context, NULL, NULL, 64, 0, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_DEVICE);
  CHECK(clHostMemAllocINTEL_p(context, NULL, 0, 0, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_BUFFER_SIZE);
  CHECK(clHostMemAllocINTEL_p(context, NULL, 64, 12, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_VALUE);
  cl_mem_properties_intel bad_props[] = {CL_MEM_ALLOC_FLAGS_INTEL, 0x100, 0};
  CHECK(clSharedMemAllocINTEL_p(context, device, bad_props, 64, 0, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_PROPERTY);
  CHECK(clHostMemAllocINTEL_p(NULL, NULL, 64, 0, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_CONTEXT);
  CHECK_EQ_INT(clEnqueueMemcpyINTEL_p(queue, CL_TRUE, dev, dev + 1, 16, 0, NULL, NULL),
               CL_MEM_COPY_OVERLAP);
  CHECK_EQ_INT(clEnqueueMemFillINTEL_p(queue, dev, &seven, 3, 12, 0, NULL, NULL), CL_INVALID_VALUE);
  CHECK_EQ_INT(clMemFreeINTEL_p(context, dev + 1), CL_INVALID_VALUE);
  CHECK_EQ_INT(clMemFreeINTEL_p(context, NULL), CL_SUCCESS);

  CHECK_EQ_INT(clMemFreeINTEL_p(context, host), CL_SUCCESS);
  CHECK_EQ_INT(clMemBlockingFreeINTEL_p(context, dev), CL_SUCCESS);
  CHECK_EQ_INT(clMemFreeINTEL_p(context, shared), CL_SUCCESS);
  clGetMemAllocInfoINTEL_p(context, dev, CL_MEM_ALLOC_TYPE_INTEL, sizeof type, &type, NULL);
  CHECK_EQ_INT(type, CL_MEM_TYPE_UNKNOWN_INTEL);
}

static void without_svm(void) {
  CHECK(clSVMAlloc(context, 0, 64, 0) == NULL);
  CHECK(clSVMAlloc(context, CL_MEM_SVM_FINE_GRAIN_BUFFER, 64, 0) == NULL);
  int x = 0, y = 0;
  CHECK_EQ_INT(clEnqueueSVMMemcpy(queue, CL_TRUE, &x, &y, sizeof x, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK_EQ_INT(clEnqueueSVMMemFill(queue, &x, &y, sizeof y, sizeof x, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  CHECK_EQ_INT(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, &x, sizeof x, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cl_kernel k = kernel("scale");
  CHECK_EQ_INT(clSetKernelArgSVMPointer(k, 0, &x), CL_INVALID_OPERATION);
  clReleaseKernel(k);
  /* No unified shared memory either. */
  char ext[2048];
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
  CHECK(strstr(ext, "cl_intel_unified_shared_memory") == NULL);
  USM_FN(clHostMemAllocINTEL);
  REQUIRE(clHostMemAllocINTEL_p);
  cl_int err = CL_SUCCESS;
  CHECK(clHostMemAllocINTEL_p(context, NULL, 64, 0, &err) == NULL);
  CHECK_EQ_INT(err, CL_INVALID_OPERATION);
}

int main(void) {
  api_setup();
  cl_int err;
  program = build_program(source, "", &err);
  if (!program) {
    printf("not ok build\n");
    return 1;
  }
  cl_device_svm_capabilities caps = 0;
  clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL);
  if (!caps) {
    RUN(without_svm);
  } else {
    RUN(allocation_checks);
    RUN(kernels_on_every_kind);
    RUN(pointers_inside_svm);
    RUN(commands);
    RUN(buffers_over_svm);
    RUN(unified_shared_memory);
  }
  clReleaseProgram(program);
  api_teardown();
  CHECK_EXIT();
}
