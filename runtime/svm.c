/* Shared virtual memory: allocations that the host and the kernels address
 * with the same pointer (OpenCL 2.0's SVM; usm.c builds Intel's unified
 * shared memory on the same blocks). This file owns a context's table of
 * SVM blocks, the clSVM* and clEnqueueSVM* calls, SVM kernel arguments and
 * clSetKernelExecInfo.
 *
 * The CPU agent executes in the host's address space, so every form of SVM
 * that OpenCL defines is what it has anyway: a coarse- or fine-grain block
 * is host memory that kernels read and write in place, any host pointer
 * (fine-grain system SVM) is valid in a kernel, and SVM atomics are the
 * processor's. Nothing moves, so map, unmap and migrate order commands and
 * copy nothing. A remote agent's memory is another machine's: it reports
 * no SVM (CL_DEVICE_SVM_CAPABILITIES 0), and an SVM pointer reaching it is
 * refused rather than sent as an address that means nothing there. */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

cl_device_svm_capabilities device_svm_capabilities(cl_device_id d) {
  if (device_root(d)->remote) return 0;
  return CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER |
         CL_DEVICE_SVM_FINE_GRAIN_SYSTEM | CL_DEVICE_SVM_ATOMICS;
}

/* The SVM capabilities some device of c has. */
static cl_device_svm_capabilities context_svm_capabilities(cl_context c) {
  cl_device_svm_capabilities caps = 0;
  for (cl_uint i = 0; i < c->num_devices; i++)
    caps |= device_svm_capabilities(c->devices[i]);
  return caps;
}

/* ---- the context's blocks ----------------------------------------------------
 * Sorted by address, so that a pointer anywhere inside a block finds it by
 * binary search (clCreateBuffer over SVM, migrate ranges, USM queries). */

static size_t block_index_locked(cl_context c, const void *p) {
  size_t lo = 0, hi = c->svm_count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if ((uintptr_t)c->svm_blocks[mid].ptr <= (uintptr_t)p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo; /* the first block after p; lo - 1 may hold p */
}

static struct svm_block *block_holding_locked(cl_context c, const void *p) {
  size_t i = block_index_locked(c, p);
  if (i == 0) return NULL;
  struct svm_block *b = &c->svm_blocks[i - 1];
  return (uintptr_t)p - (uintptr_t)b->ptr < b->size ? b : NULL;
}

int svm_block_find(cl_context c, const void *p, struct svm_block *out) {
  pthread_mutex_lock(&c->svm_lock);
  struct svm_block *b = block_holding_locked(c, p);
  if (b && out) *out = *b;
  pthread_mutex_unlock(&c->svm_lock);
  return b != NULL;
}

void *svm_block_allocate(cl_context c, size_t size, size_t alignment,
                         const struct svm_block *kind) {
  /* Storage is page-aligned (2 MiB-aligned from 2 MiB); a larger alignment
   * takes that much more and starts inside it. */
  size_t page = 4096;
  size_t extra = alignment > page ? alignment : 0;
  if (size > SIZE_MAX - extra) return NULL;
  size_t storage_size;
  char *storage = mem_storage_alloc(size + extra, &storage_size, NULL);
  if (!storage) return NULL;
  char *ptr = extra ? (char *)(((uintptr_t)storage + alignment - 1) & ~(uintptr_t)(alignment - 1))
                    : storage;
  pthread_mutex_lock(&c->svm_lock);
  if (c->svm_count == c->svm_capacity) {
    size_t capacity = c->svm_capacity ? 2 * c->svm_capacity : 16;
    struct svm_block *grown = realloc(c->svm_blocks, capacity * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&c->svm_lock);
      mem_storage_free(storage, storage_size);
      return NULL;
    }
    c->svm_blocks = grown;
    c->svm_capacity = capacity;
  }
  size_t i = block_index_locked(c, ptr);
  memmove(&c->svm_blocks[i + 1], &c->svm_blocks[i], (c->svm_count - i) * sizeof c->svm_blocks[0]);
  struct svm_block *b = &c->svm_blocks[i];
  *b = *kind;
  b->ptr = ptr;
  b->size = size;
  b->storage = storage;
  b->storage_size = storage_size;
  c->svm_count++;
  pthread_mutex_unlock(&c->svm_lock);
  return ptr;
}

int svm_block_free(cl_context c, void *p) {
  pthread_mutex_lock(&c->svm_lock);
  size_t i = block_index_locked(c, p);
  struct svm_block b = {0};
  int found = i > 0 && c->svm_blocks[i - 1].ptr == p;
  if (found) {
    b = c->svm_blocks[i - 1];
    memmove(&c->svm_blocks[i - 1], &c->svm_blocks[i], (c->svm_count - i) * sizeof b);
    c->svm_count--;
  }
  pthread_mutex_unlock(&c->svm_lock);
  if (found) mem_storage_free(b.storage, b.storage_size);
  return found;
}

/* What the application did not free goes with its context. */
void svm_context_release(cl_context c) {
  if (c->svm_count)
    debug_log("context released with %zu SVM or USM allocations not freed: freed now",
              c->svm_count);
  for (size_t i = 0; i < c->svm_count; i++)
    mem_storage_free(c->svm_blocks[i].storage, c->svm_blocks[i].storage_size);
  free(c->svm_blocks);
  c->svm_blocks = NULL;
  c->svm_count = c->svm_capacity = 0;
}

/* ---- allocation ----------------------------------------------------------- */

/* The largest alignment clSVMAlloc takes: a huge page. */
#define SVM_MAX_ALIGNMENT ((size_t)2 << 20)
/* What alignment 0 means: the largest OpenCL C type, long16. */
#define SVM_DEFAULT_ALIGNMENT 128

AQUILA_API void *clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size,
                            cl_uint alignment) {
  if (!object_is(context, OBJECT_CONTEXT)) return NULL;
  const cl_svm_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
  if (flags & ~(access | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS)) {
    debug_log("clSVMAlloc: unknown flags %#llx", (unsigned long long)flags);
    return NULL;
  }
  if (__builtin_popcountll(flags & access) > 1) {
    debug_log("clSVMAlloc: more than one access flag");
    return NULL;
  }
  if ((flags & CL_MEM_SVM_ATOMICS) && !(flags & CL_MEM_SVM_FINE_GRAIN_BUFFER)) {
    debug_log("clSVMAlloc: CL_MEM_SVM_ATOMICS without CL_MEM_SVM_FINE_GRAIN_BUFFER");
    return NULL;
  }
  cl_device_svm_capabilities caps = context_svm_capabilities(context);
  cl_device_svm_capabilities needed = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER;
  if (flags & CL_MEM_SVM_FINE_GRAIN_BUFFER) needed |= CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
  if (flags & CL_MEM_SVM_ATOMICS) needed |= CL_DEVICE_SVM_ATOMICS;
  if ((caps & needed) != needed) {
    debug_log("clSVMAlloc: no device of the context has this kind of SVM (remote devices have "
              "none)");
    return NULL;
  }
  cl_ulong max_alloc = 0;
  for (cl_uint i = 0; i < context->num_devices; i++) {
    cl_ulong m = 0;
    if (!device_svm_capabilities(context->devices[i])) continue;
    clGetDeviceInfo(context->devices[i], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof m, &m, NULL);
    if (m > max_alloc) max_alloc = m;
  }
  if (size == 0 || size > max_alloc) {
    debug_log("clSVMAlloc: size %zu is 0 or over CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu)", size,
              (unsigned long long)max_alloc);
    return NULL;
  }
  if (alignment & (alignment - 1) || alignment > SVM_MAX_ALIGNMENT) {
    debug_log("clSVMAlloc: alignment %u is not a power of two up to %zu", alignment,
              SVM_MAX_ALIGNMENT);
    return NULL;
  }
  struct svm_block kind = {.svm_flags = flags};
  void *p = svm_block_allocate(context, size, alignment ? alignment : SVM_DEFAULT_ALIGNMENT, &kind);
  if (!p) debug_log("clSVMAlloc: %zu bytes refused (device memory budget or host memory)", size);
  return p;
}

AQUILA_API void clSVMFree(cl_context context, void *svm_pointer) {
  if (!object_is(context, OBJECT_CONTEXT) || !svm_pointer) return;
  /* The specification leaves freeing while kernels still use the block
   * to the application; a pointer clSVMAlloc did not return is ignored. */
  if (!svm_block_free(context, svm_pointer))
    debug_log("clSVMFree: %p is not an SVM allocation of this context", svm_pointer);
}

/* ---- commands ------------------------------------------------------------- */

/* The queue's device must have SVM: the error of every clEnqueueSVM* call
 * on a device without it. */
static cl_int svm_queue_check(cl_command_queue q) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!device_svm_capabilities(q->device)) {
    debug_log("SVM command on '%s', a device without SVM", q->device->name);
    return CL_INVALID_OPERATION;
  }
  return CL_SUCCESS;
}

/* A command that moves nothing (the CPU agent's SVM is where kernels
 * read it): ordered like any other and, if blocking, waited for. */
cl_int svm_enqueue_ordering(cl_command_queue q, cl_command_type type, cl_bool blocking,
                            cl_uint num_wait, const cl_event *wait_list, cl_event *event) {
  cl_int err = event_check_wait_list(q->context, num_wait, wait_list);
  if (err) return err;
  cl_event ev = event_create_command(q, type, COMMAND_NONE);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  return finish_enqueue(ev, num_wait, wait_list, blocking, event);
}

cl_int svm_enqueue_copy(cl_command_queue q, cl_command_type type, cl_bool blocking, void *dst,
                        const void *src, size_t size, cl_uint num_wait, const cl_event *wait_list,
                        cl_event *event) {
  cl_int err = event_check_wait_list(q->context, num_wait, wait_list);
  if (err) return err;
  const char *d = dst, *s = src;
  if (s < d + size && d < s + size) return CL_MEM_COPY_OVERLAP;
  cl_event ev = event_create_command(q, type, COMMAND_COPY_RECT);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  ev->u.copy.dst = dst;
  ev->u.copy.src = src;
  ev->u.copy.region[0] = size;
  ev->u.copy.region[1] = ev->u.copy.region[2] = 1;
  return finish_enqueue(ev, num_wait, wait_list, blocking, event);
}

cl_int svm_enqueue_fill(cl_command_queue q, cl_command_type type, void *dst, const void *pattern,
                        size_t pattern_size, size_t size, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event) {
  cl_int err = event_check_wait_list(q->context, num_wait, wait_list);
  if (err) return err;
  cl_event ev = event_create_command(q, type, COMMAND_FILL);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  ev->u.fill.dst = dst;
  ev->u.fill.size = size;
  memcpy(ev->u.fill.pattern, pattern, pattern_size);
  ev->u.fill.pattern_size = pattern_size;
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

/* clEnqueueSVMFree's command: the application's function, or clSVMFree of
 * each pointer. */
struct svm_free_command {
  cl_command_queue queue;
  void(CL_CALLBACK *fn)(cl_command_queue, cl_uint, void *[], void *);
  void *user_data;
  cl_uint count;
  void *pointers[];
};

static void svm_free_run(void *args) {
  struct svm_free_command *f = args;
  if (f->fn) {
    f->fn(f->queue, f->count, f->pointers, f->user_data);
    return;
  }
  for (cl_uint i = 0; i < f->count; i++)
    clSVMFree(f->queue->context, f->pointers[i]);
}

AQUILA_API cl_int
clEnqueueSVMFree(cl_command_queue q, cl_uint num_svm_pointers, void *svm_pointers[],
                 void(CL_CALLBACK *pfn_free_func)(cl_command_queue, cl_uint, void *[], void *),
                 void *user_data, cl_uint num_wait, const cl_event *wait_list, cl_event *event) {
  cl_int err = svm_queue_check(q);
  if (err) return err;
  if ((num_svm_pointers == 0) != (svm_pointers == NULL)) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_svm_pointers; i++)
    if (!svm_pointers[i]) return CL_INVALID_VALUE;
  if ((err = event_check_wait_list(q->context, num_wait, wait_list))) return err;
  struct svm_free_command *f = malloc(sizeof *f + (size_t)num_svm_pointers * sizeof f->pointers[0]);
  if (!f) return CL_OUT_OF_HOST_MEMORY;
  f->queue = q;
  f->fn = pfn_free_func;
  f->user_data = user_data;
  f->count = num_svm_pointers;
  if (num_svm_pointers) memcpy(f->pointers, svm_pointers, num_svm_pointers * sizeof(void *));
  cl_event ev = event_create_command(q, CL_COMMAND_SVM_FREE, COMMAND_NATIVE);
  if (!ev) {
    free(f);
    return CL_OUT_OF_HOST_MEMORY;
  }
  ev->u.native.fn = svm_free_run;
  ev->u.native.args = f; /* freed with the command (event.c) */
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

AQUILA_API cl_int clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking_copy, void *dst_ptr,
                                     const void *src_ptr, size_t size, cl_uint num_wait,
                                     const cl_event *wait_list, cl_event *event) {
  cl_int err = svm_queue_check(q);
  if (err) return err;
  if (!dst_ptr || !src_ptr) return CL_INVALID_VALUE;
  return svm_enqueue_copy(q, CL_COMMAND_SVM_MEMCPY, blocking_copy, dst_ptr, src_ptr, size, num_wait,
                          wait_list, event);
}

/* The pattern rules of clEnqueueSVMMemFill and clEnqueueMemFillINTEL. */
int svm_fill_arguments_valid(const void *ptr, const void *pattern, size_t pattern_size,
                             size_t size) {
  return ptr && pattern && pattern_size && pattern_size <= 128 &&
         !(pattern_size & (pattern_size - 1)) && (uintptr_t)ptr % pattern_size == 0 &&
         size % pattern_size == 0;
}

AQUILA_API cl_int clEnqueueSVMMemFill(cl_command_queue q, void *svm_ptr, const void *pattern,
                                      size_t pattern_size, size_t size, cl_uint num_wait,
                                      const cl_event *wait_list, cl_event *event) {
  cl_int err = svm_queue_check(q);
  if (err) return err;
  if (!svm_fill_arguments_valid(svm_ptr, pattern, pattern_size, size)) return CL_INVALID_VALUE;
  return svm_enqueue_fill(q, CL_COMMAND_SVM_MEMFILL, svm_ptr, pattern, pattern_size, size, num_wait,
                          wait_list, event);
}

AQUILA_API cl_int clEnqueueSVMMap(cl_command_queue q, cl_bool blocking_map, cl_map_flags flags,
                                  void *svm_ptr, size_t size, cl_uint num_wait,
                                  const cl_event *wait_list, cl_event *event) {
  cl_int err = svm_queue_check(q);
  if (err) return err;
  if (!svm_ptr || size == 0 ||
      (flags & ~(cl_map_flags)(CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) ||
      ((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE))))
    return CL_INVALID_VALUE;
  return svm_enqueue_ordering(q, CL_COMMAND_SVM_MAP, blocking_map, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueSVMUnmap(cl_command_queue q, void *svm_ptr, cl_uint num_wait,
                                    const cl_event *wait_list, cl_event *event) {
  cl_int err = svm_queue_check(q);
  if (err) return err;
  if (!svm_ptr) return CL_INVALID_VALUE;
  return svm_enqueue_ordering(q, CL_COMMAND_SVM_UNMAP, CL_FALSE, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueSVMMigrateMem(cl_command_queue q, cl_uint num_svm_pointers,
                                         const void **svm_pointers, const size_t *sizes,
                                         cl_mem_migration_flags flags, cl_uint num_wait,
                                         const cl_event *wait_list, cl_event *event) {
  cl_int err = svm_queue_check(q);
  if (err) return err;
  if (num_svm_pointers == 0 || !svm_pointers) return CL_INVALID_VALUE;
  if (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST |
                                        CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
    return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_svm_pointers; i++) {
    struct svm_block b;
    if (!svm_pointers[i]) return CL_INVALID_VALUE;
    /* A size names a range that one allocation must hold whole; 0, the
     * whole allocation (of SVM or any host memory: fine-grain system). */
    if (sizes && sizes[i] && svm_block_find(q->context, svm_pointers[i], &b) &&
        sizes[i] > b.size - (size_t)((const char *)svm_pointers[i] - b.ptr))
      return CL_INVALID_VALUE;
  }
  return svm_enqueue_ordering(q, CL_COMMAND_SVM_MIGRATE_MEM, CL_FALSE, num_wait, wait_list, event);
}

/* ---- kernels -------------------------------------------------------------- */

AQUILA_API cl_int clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint arg_index,
                                           const void *arg_value) {
  if (!object_is(kernel, OBJECT_KERNEL)) return CL_INVALID_KERNEL;
  if (!context_svm_capabilities(kernel->program->context)) return CL_INVALID_OPERATION;
  return kernel_set_arg_pointer(kernel, arg_index, arg_value);
}

/* The names of clSetKernelExecInfo: SVM's, and unified shared memory's
 * (usm.c). The pointers a kernel reaches through other memory need no
 * telling on the CPU agent, which reaches all host memory; the values are
 * checked all the same, so that what runs here runs on a device that needs
 * them. */
AQUILA_API cl_int clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param_name,
                                      size_t param_value_size, const void *param_value) {
  if (!object_is(kernel, OBJECT_KERNEL)) return CL_INVALID_KERNEL;
  cl_device_svm_capabilities caps = context_svm_capabilities(kernel->program->context);
  switch (param_name) {
  case CL_KERNEL_EXEC_INFO_SVM_PTRS:
  case CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL:
    /* An empty list (0 and NULL) unsets the pointers given before. */
    if (!param_value != !param_value_size || param_value_size % sizeof(void *))
      return CL_INVALID_VALUE;
    return caps ? CL_SUCCESS : CL_INVALID_OPERATION;
  case CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM:
  case CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL:
  case CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL:
  case CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL: {
    if (!param_value || param_value_size != sizeof(cl_bool)) return CL_INVALID_VALUE;
    cl_bool on = *(const cl_bool *)param_value;
    if (on != CL_TRUE && on != CL_FALSE) return CL_INVALID_VALUE;
    if (param_name == CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM && on &&
        !(caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM))
      return CL_INVALID_OPERATION;
    return caps ? CL_SUCCESS : CL_INVALID_OPERATION;
  }
  default:
    return CL_INVALID_VALUE;
  }
}
