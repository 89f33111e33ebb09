/* Memory objects: buffers and sub-buffers. On the CPU agent a buffer is host
 * memory that kernels address directly: CL_MEM_USE_HOST_PTR uses the
 * caller's memory without a copy, and mapping returns a pointer into the
 * buffer itself. Images are memory objects too (image.c); this file's
 * release frees them, and clGetMemObjectInfo answers for them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aquila/hsa_ext_aquila.h"
#include "runtime.h"

#define BUFFER_ALIGNMENT 128 /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes */

int mem_is_buffer(cl_mem m) {
  return object_is(m, OBJECT_MEM) && m->type == CL_MEM_OBJECT_BUFFER;
}

cl_int mem_check_flags(cl_mem_flags flags) {
  const cl_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
  const cl_mem_flags host_access =
      CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
  const cl_mem_flags all = access | host_access | CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR |
                           CL_MEM_COPY_HOST_PTR;
  if (flags & ~all) return CL_INVALID_VALUE;
  if (__builtin_popcountll(flags & access) > 1) return CL_INVALID_VALUE;
  if (__builtin_popcountll(flags & host_access) > 1) return CL_INVALID_VALUE;
  if ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)))
    return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

/* Buffers and images get pages of their own, outside the malloc heap. A
 * kernel that writes past the end of its buffer has a bug that GPUs survive:
 * there the write lands in device memory. Here it landed in the process's
 * heap, so glibc aborted later, far from the cause ("free(): invalid next
 * size": piglit's clz-optimizations runs 34 work-items over 18-element
 * buffers). Now a short overrun stays in the padding up to the page end,
 * and no overrun reaches the allocator's own data. */
/*
 * Storage of 2 MiB or more starts at a 2 MiB boundary and asks for
 * transparent huge pages (Debian's default THP mode is "madvise"): a kernel
 * streaming through a 64 MiB buffer then walks 32 TLB entries instead of
 * 16384, and its first touch clears 2 MiB pages rather than faulting on
 * each 4 KiB one. */
#define HUGE_PAGE_SIZE ((size_t)2 << 20)

/* The bytes of storage all buffers and images hold, and their limit
 * (CL_DEVICE_GLOBAL_MEM_SIZE: platform.c says why). */
static _Atomic uint64_t storage_committed;
static uint64_t storage_limit = UINT64_MAX;

void mem_storage_set_limit(uint64_t bytes) {
  storage_limit = bytes;
}

static int storage_reserve(size_t length) {
  uint64_t before = atomic_fetch_add(&storage_committed, length);
  if (before + length <= storage_limit && before + length >= before) return 0;
  atomic_fetch_sub(&storage_committed, length);
  debug_log("allocation of %zu bytes refused: buffers and images hold %llu of the device's %llu "
            "bytes (CL_DEVICE_GLOBAL_MEM_SIZE)",
            length, (unsigned long long)before, (unsigned long long)storage_limit);
  return -1;
}

/* Released storage of 2 MiB or more is kept, a few mappings and at most
 * an eighth of the device's memory, for the next allocation of the same
 * length. Applications that create and release buffers of one size per
 * call (CLBlast's temporaries, pyopencl's results: every array operation
 * makes a new one) then write to pages already faulted in, instead of the
 * first touch inside their next kernel waiting for the kernel to clear
 * fresh ones (a 16 MiB result: 1.5-4.5 ms on top of a 1 ms kernel). What a
 * buffer held is not cleared: OpenCL leaves a new buffer's contents
 * undefined, and the storage never leaves the process. The oldest mapping
 * goes first; all go when a mapping cannot be made. */
#define RECYCLED_SLOTS 8
static struct {
  void *data;
  size_t length;
} recycled[RECYCLED_SLOTS];
static unsigned recycled_count; /* recycled[0] is the oldest */
static size_t recycled_bytes;
static pthread_mutex_t recycled_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t recycled_limit(void) {
  uint64_t eighth = storage_limit / 8;
  return eighth < ((uint64_t)512 << 20) ? (size_t)eighth : (size_t)512 << 20;
}

static void recycled_remove(unsigned i) {
  recycled_bytes -= recycled[i].length;
  memmove(&recycled[i], &recycled[i + 1], (recycled_count - i - 1) * sizeof recycled[0]);
  recycled_count--;
}

static void *recycled_take(size_t length) {
  void *data = NULL;
  pthread_mutex_lock(&recycled_lock);
  for (unsigned i = recycled_count; i-- > 0;)
    if (recycled[i].length == length) {
      data = recycled[i].data;
      recycled_remove(i);
      break;
    }
  pthread_mutex_unlock(&recycled_lock);
  return data;
}

/* Whether data (length bytes) is now kept for reuse. */
static int recycled_keep(void *data, size_t length) {
  void *evicted[RECYCLED_SLOTS];
  size_t evicted_length[RECYCLED_SLOTS];
  unsigned n = 0;
  int kept = 0;
  pthread_mutex_lock(&recycled_lock);
  if (length <= recycled_limit()) {
    while (recycled_count &&
           (recycled_count == RECYCLED_SLOTS || recycled_bytes + length > recycled_limit())) {
      evicted[n] = recycled[0].data;
      evicted_length[n++] = recycled[0].length;
      recycled_remove(0);
    }
    recycled[recycled_count].data = data;
    recycled[recycled_count++].length = length;
    recycled_bytes += length;
    kept = 1;
  }
  pthread_mutex_unlock(&recycled_lock);
  for (unsigned i = 0; i < n; i++)
    munmap(evicted[i], evicted_length[i]);
  return kept;
}

static void recycled_release_all(void) {
  pthread_mutex_lock(&recycled_lock);
  while (recycled_count) {
    munmap(recycled[0].data, recycled[0].length);
    recycled_remove(0);
  }
  pthread_mutex_unlock(&recycled_lock);
}

void *mem_storage_alloc(size_t size, size_t *storage_size, int *fresh) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (fresh) *fresh = 0;
  if (size > SIZE_MAX - page - HUGE_PAGE_SIZE) return NULL;
  size_t length = (size + page - 1) / page * page;
  if (storage_reserve(length)) return NULL;
  if (length >= HUGE_PAGE_SIZE) {
    void *kept = recycled_take(length);
    if (kept) {
      *storage_size = length;
      return kept;
    }
  }
  if (length < HUGE_PAGE_SIZE) {
    void *p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      atomic_fetch_sub(&storage_committed, length);
      return NULL;
    }
    *storage_size = length;
    return p;
  }
  size_t span = length + HUGE_PAGE_SIZE;
  char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    recycled_release_all();
    raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (raw == MAP_FAILED) {
    atomic_fetch_sub(&storage_committed, length);
    return NULL;
  }
  char *start = (char *)(((uintptr_t)raw + HUGE_PAGE_SIZE - 1) & ~(uintptr_t)(HUGE_PAGE_SIZE - 1));
  size_t head = (size_t)(start - raw), tail = span - head - length;
  if (head) munmap(raw, head);
  if (tail) munmap(start + length, tail);
  madvise(start, length, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
  *storage_size = length;
  if (fresh) *fresh = 1;
  return start;
}

static cl_mem root_mem(cl_mem m) {
  while (m->parent)
    m = m->parent;
  return m;
}

/* On a machine of several NUMA nodes, a buffer the host fills lands on
 * the host thread's node when the host touches it first (Linux's default
 * policy), and every unit on the other nodes then reads it across the
 * interconnect. */
void mem_place_for_host(cl_mem m) {
  m = root_mem(m);
  if (!atomic_load_explicit(&m->pages_untouched, memory_order_relaxed) ||
      !atomic_exchange(&m->pages_untouched, 0))
    return;
  for (cl_uint i = 0; i < m->context->num_devices; i++) {
    cl_device_id d = device_root(m->context->devices[i]);
    if (d->remote) continue;
    hsa_status_t st = hsa_ven_aquila_memory_place(d->agent, m->data, m->storage_size);
    if (st == HSA_STATUS_SUCCESS)
      debug_log("memory: %zu bytes the host writes first, interleaved over the CPU agent's "
                "NUMA nodes",
                m->storage_size);
    return;
  }
}

void mem_pages_touched(cl_mem m) {
  m = root_mem(m);
  if (atomic_load_explicit(&m->pages_untouched, memory_order_relaxed))
    atomic_store(&m->pages_untouched, 0);
}

void mem_storage_free(void *data, size_t storage_size) {
  if (!data) return;
  if (storage_size < HUGE_PAGE_SIZE || !recycled_keep(data, storage_size))
    munmap(data, storage_size);
  atomic_fetch_sub(&storage_committed, storage_size);
}

static cl_device_id largest_alloc_device(cl_context c, cl_ulong *max_alloc) {
  clGetDeviceInfo(c->devices[0], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof *max_alloc, max_alloc, NULL);
  return c->devices[0];
}

AQUILA_API cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
                                 void *host_ptr, cl_int *errcode_ret) {
  cl_int err;
  cl_mem m = NULL;
  if (!object_is(context, OBJECT_CONTEXT)) {
    err = CL_INVALID_CONTEXT;
    goto fail;
  }
  if (flags == 0) flags = CL_MEM_READ_WRITE;
  if ((err = mem_check_flags(flags)) != CL_SUCCESS) goto fail;
  cl_ulong max_alloc = 0;
  largest_alloc_device(context, &max_alloc);
  if (size == 0 || size > max_alloc) {
    err = CL_INVALID_BUFFER_SIZE;
    goto fail;
  }
  if ((host_ptr == NULL) == !!(flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR))) {
    err = CL_INVALID_HOST_PTR;
    goto fail;
  }
  /* A buffer over SVM (OpenCL 2.0) uses that memory, and must lie in its
   * allocation. */
  struct svm_block svm;
  int uses_svm = (flags & CL_MEM_USE_HOST_PTR) && svm_block_find(context, host_ptr, &svm);
  if (uses_svm && size > svm.size - (size_t)((char *)host_ptr - svm.ptr)) {
    debug_log("clCreateBuffer: %zu bytes from %p run past the end of its SVM allocation", size,
              host_ptr);
    err = CL_INVALID_BUFFER_SIZE;
    goto fail;
  }
  m = calloc(1, sizeof *m);
  if (!m) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  object_init(&m->header, OBJECT_MEM);
  m->context = context;
  m->type = CL_MEM_OBJECT_BUFFER;
  m->flags = flags;
  m->size = size;
  pthread_mutex_init(&m->lock, NULL);
  if (flags & CL_MEM_USE_HOST_PTR) {
    m->host_ptr = host_ptr;
    m->data = host_ptr;
    m->uses_svm = uses_svm;
  } else {
    int fresh;
    if (!(m->data = mem_storage_alloc(size, &m->storage_size, &fresh))) {
      free(m);
      m = NULL;
      err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
      goto fail;
    }
    m->owns_data = 1;
    m->pages_untouched = fresh;
    if (flags & CL_MEM_COPY_HOST_PTR) {
      mem_place_for_host(m);
      memcpy(m->data, host_ptr, size);
    }
  }
  if ((err = mem_residency_init(m)) != CL_SUCCESS) {
    if (m->owns_data) mem_storage_free(m->data, m->storage_size);
    pthread_mutex_destroy(&m->lock);
    free(m);
    m = NULL;
    goto fail;
  }
  object_retain(&context->header);
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return m;
fail:
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

/* Core OpenCL defines no memory property (extensions do), so the list, if
 * given, must be empty; CL_MEM_PROPERTIES then returns it. */
int memory_properties_check(cl_context context, const cl_mem_properties *properties,
                            cl_int *errcode_ret) {
  cl_int err = !object_is(context, OBJECT_CONTEXT)  ? CL_INVALID_CONTEXT
               : properties && properties[0] ? CL_INVALID_PROPERTY
                                             : CL_SUCCESS;
  if (err != CL_SUCCESS && errcode_ret) *errcode_ret = err;
  return err == CL_SUCCESS;
}

AQUILA_API cl_mem clCreateBufferWithProperties(cl_context context,
                                               const cl_mem_properties *properties,
                                               cl_mem_flags flags, size_t size, void *host_ptr,
                                               cl_int *errcode_ret) {
  if (!memory_properties_check(context, properties, errcode_ret)) return NULL;
  cl_mem m = clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
  if (m) m->has_properties = properties != NULL;
  return m;
}

AQUILA_API cl_mem clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                                    cl_buffer_create_type buffer_create_type,
                                    const void *buffer_create_info, cl_int *errcode_ret) {
  cl_int err;
  if (!mem_is_buffer(buffer) || buffer->parent) {
    err = CL_INVALID_MEM_OBJECT;
    goto fail;
  }
  const cl_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
  const cl_mem_flags host_access =
      CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
  if (mem_check_flags(flags) != CL_SUCCESS ||
      (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  /* The sub-buffer may not widen its parent's access. */
  if (((buffer->flags & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) ||
      ((buffer->flags & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))) ||
      ((buffer->flags & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY)) ||
      ((buffer->flags & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY)) ||
      ((buffer->flags & CL_MEM_HOST_NO_ACCESS) &&
       (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)))) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  if (buffer_create_type != CL_BUFFER_CREATE_TYPE_REGION || !buffer_create_info) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  const cl_buffer_region *r = buffer_create_info;
  if (r->origin > buffer->size || r->size > buffer->size - r->origin) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  if (r->size == 0) {
    err = CL_INVALID_BUFFER_SIZE;
    goto fail;
  }
  if (r->origin % BUFFER_ALIGNMENT) {
    err = CL_MISALIGNED_SUB_BUFFER_OFFSET;
    goto fail;
  }
  cl_mem m = calloc(1, sizeof *m);
  if (!m) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  object_init(&m->header, OBJECT_MEM);
  m->context = buffer->context;
  m->type = CL_MEM_OBJECT_BUFFER;
  if (!(flags & access)) flags |= buffer->flags & access;
  if (!(flags & host_access)) flags |= buffer->flags & host_access;
  flags |= buffer->flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  m->flags = flags;
  m->size = r->size;
  m->parent = buffer;
  m->offset = r->origin;
  m->data = buffer->data + r->origin;
  if (buffer->host_ptr) m->host_ptr = (char *)buffer->host_ptr + r->origin;
  pthread_mutex_init(&m->lock, NULL);
  object_retain(&buffer->header);
  object_retain(&m->context->header);
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return m;
fail:
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

AQUILA_API cl_int clRetainMemObject(cl_mem memobj) {
  if (!object_is(memobj, OBJECT_MEM)) return CL_INVALID_MEM_OBJECT;
  object_retain(&memobj->header);
  return CL_SUCCESS;
}

AQUILA_API cl_int clReleaseMemObject(cl_mem memobj) {
  if (!object_is(memobj, OBJECT_MEM)) return CL_INVALID_MEM_OBJECT;
  if (!object_release(&memobj->header)) return CL_SUCCESS;
  /* Destructor callbacks run in the reverse order of registration, before
   * the storage goes away. */
  struct mem_destructor *d = memobj->destructors;
  while (d) {
    struct mem_destructor *next = d->next;
    d->fn(memobj, d->data);
    free(d);
    d = next;
  }
  if (memobj->image_handle) image_destroy(memobj); /* the descriptor; storage is ours */
  mem_residency_free(memobj);
  if (memobj->owns_data) mem_storage_free(memobj->data, memobj->storage_size);
  cl_mem parent = memobj->parent;
  cl_context ctx = memobj->context;
  pthread_mutex_destroy(&memobj->lock);
  object_free(memobj);
  if (parent) clReleaseMemObject(parent);
  clReleaseContext(ctx);
  return CL_SUCCESS;
}

AQUILA_API cl_int clSetMemObjectDestructorCallback(cl_mem memobj,
                                                   void(CL_CALLBACK *pfn_notify)(cl_mem, void *),
                                                   void *user_data) {
  if (!object_is(memobj, OBJECT_MEM)) return CL_INVALID_MEM_OBJECT;
  if (!pfn_notify) return CL_INVALID_VALUE;
  struct mem_destructor *d = malloc(sizeof *d);
  if (!d) return CL_OUT_OF_HOST_MEMORY;
  d->fn = pfn_notify;
  d->data = user_data;
  pthread_mutex_lock(&memobj->lock);
  d->next = memobj->destructors;
  memobj->destructors = d;
  pthread_mutex_unlock(&memobj->lock);
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret) {
  if (!object_is(memobj, OBJECT_MEM)) return CL_INVALID_MEM_OBJECT;
  switch (param_name) {
  case CL_MEM_TYPE: INFO_VALUE(cl_mem_object_type, memobj->type);
  case CL_MEM_FLAGS: INFO_VALUE(cl_mem_flags, memobj->flags);
  case CL_MEM_SIZE: INFO_VALUE(size_t, memobj->size);
  case CL_MEM_HOST_PTR: INFO_VALUE(void *, memobj->host_ptr);
  case CL_MEM_MAP_COUNT: INFO_VALUE(cl_uint, atomic_load(&memobj->map_count));
  case CL_MEM_REFERENCE_COUNT: INFO_VALUE(cl_uint, atomic_load(&memobj->header.refcount));
  case CL_MEM_CONTEXT: INFO_VALUE(cl_context, memobj->context);
  case CL_MEM_ASSOCIATED_MEMOBJECT: INFO_VALUE(cl_mem, memobj->parent);
  case CL_MEM_OFFSET: INFO_VALUE(size_t, memobj->offset);
  case CL_MEM_USES_SVM_POINTER:
    INFO_VALUE(cl_bool, (memobj->parent ? memobj->parent : memobj)->uses_svm ? CL_TRUE : CL_FALSE);
  case CL_MEM_PROPERTIES: {
    static const cl_mem_properties empty_list[1] = {0};
    return info_copy(empty_list, memobj->has_properties ? sizeof empty_list : 0, param_value_size,
                     param_value, param_value_size_ret);
  }
  default: return CL_INVALID_VALUE;
  }
}
