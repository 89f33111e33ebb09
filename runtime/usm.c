/* cl_intel_unified_shared_memory: host, device and shared allocations
 * addressed by pointer, as SYCL implementations and chipStar use them. They
 * are blocks of the context's SVM table (svm.c), so that one lookup answers
 * clGetMemAllocInfoINTEL and buffers over them. On the CPU agent the three
 * kinds are one: host memory the kernels reach in place, concurrently and
 * atomically; the kind is kept for the queries. A remote device has none
 * (its capabilities are 0, and the extension is not in its list). */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static cl_device_unified_shared_memory_capabilities_intel usm_capabilities(cl_device_id d) {
  if (!device_svm_capabilities(d)) return 0;
  return CL_UNIFIED_SHARED_MEMORY_ACCESS_INTEL | CL_UNIFIED_SHARED_MEMORY_ATOMIC_ACCESS_INTEL |
         CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ACCESS_INTEL |
         CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ATOMIC_ACCESS_INTEL;
}

int usm_device_info(cl_device_id d, cl_device_info param_name, size_t param_value_size,
                    void *param_value, size_t *param_value_size_ret, cl_int *err) {
  switch (param_name) {
  case CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL:
  case CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL:
  case CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL:
  case CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL:
  case CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL: {
    cl_device_unified_shared_memory_capabilities_intel caps = usm_capabilities(d);
    *err = info_copy(&caps, sizeof caps, param_value_size, param_value, param_value_size_ret);
    return 1;
  }
  default:
    return 0;
  }
}

/* The largest alignment an allocation takes: a huge page, as clSVMAlloc. */
#define USM_MAX_ALIGNMENT ((cl_uint)2 << 20)

static void *usm_allocate(cl_context context, cl_device_id device, cl_uint type,
                          const cl_mem_properties_intel *properties, size_t size, cl_uint alignment,
                          cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  void *p = NULL;
  struct svm_block kind = {.usm_type = type, .usm_device = device};
  if (!object_is(context, OBJECT_CONTEXT)) {
    err = CL_INVALID_CONTEXT;
    goto out;
  }
  if (device && (!device_is_valid(device) || !context_has_device(context, device))) {
    err = CL_INVALID_DEVICE;
    goto out;
  }
  /* The devices the allocation is for: the one named, or all of them. */
  cl_ulong max_alloc = 0;
  int capable = 0;
  for (cl_uint i = 0; i < context->num_devices; i++) {
    cl_device_id d = context->devices[i];
    if ((device && d != device) || !usm_capabilities(d)) continue;
    cl_ulong m = 0;
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof m, &m, NULL);
    if (m > max_alloc) max_alloc = m;
    capable = 1;
  }
  if (!capable) {
    debug_log("unified shared memory: no device for this allocation has it (remote devices "
              "have none)");
    err = CL_INVALID_OPERATION;
    goto out;
  }
  int seen_flags = 0;
  for (size_t i = 0; properties && properties[i]; i += 2) {
    if (properties[i] != CL_MEM_ALLOC_FLAGS_INTEL || seen_flags++) {
      debug_log("unified shared memory: property %#llx unknown or given twice",
                (unsigned long long)properties[i]);
      err = CL_INVALID_PROPERTY;
      goto out;
    }
    cl_mem_alloc_flags_intel f = properties[i + 1];
    const cl_mem_alloc_flags_intel placement =
        CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL | CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL;
    if ((f & ~(placement | CL_MEM_ALLOC_WRITE_COMBINED_INTEL)) || (f & placement) == placement) {
      debug_log("unified shared memory: allocation flags %#llx are not valid",
                (unsigned long long)f);
      err = CL_INVALID_PROPERTY;
      goto out;
    }
    kind.usm_flags = f;
  }
  if (alignment & (alignment - 1) || alignment > USM_MAX_ALIGNMENT) {
    debug_log("unified shared memory: alignment %u is not a power of two up to %u", alignment,
              USM_MAX_ALIGNMENT);
    err = CL_INVALID_VALUE;
    goto out;
  }
  if (size == 0 || size > max_alloc) {
    debug_log("unified shared memory: size %zu is 0 or over CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu)",
              size, (unsigned long long)max_alloc);
    err = CL_INVALID_BUFFER_SIZE;
    goto out;
  }
  /* Alignment 0: the largest OpenCL C type's, long16. */
  p = svm_block_allocate(context, size, alignment ? alignment : 128, &kind);
  if (!p) {
    debug_log("unified shared memory: %zu bytes refused (device memory budget or host memory)",
              size);
    err = CL_OUT_OF_RESOURCES;
  }
out:
  if (errcode_ret) *errcode_ret = err;
  return p;
}

AQUILA_API void *clHostMemAllocINTEL(cl_context context, const cl_mem_properties_intel *properties,
                                     size_t size, cl_uint alignment, cl_int *errcode_ret) {
  return usm_allocate(context, NULL, CL_MEM_TYPE_HOST_INTEL, properties, size, alignment,
                      errcode_ret);
}

AQUILA_API void *clDeviceMemAllocINTEL(cl_context context, cl_device_id device,
                                       const cl_mem_properties_intel *properties, size_t size,
                                       cl_uint alignment, cl_int *errcode_ret) {
  if (!device && object_is(context, OBJECT_CONTEXT)) {
    if (errcode_ret) *errcode_ret = CL_INVALID_DEVICE; /* a device allocation names its device */
    return NULL;
  }
  return usm_allocate(context, device, CL_MEM_TYPE_DEVICE_INTEL, properties, size, alignment,
                      errcode_ret);
}

AQUILA_API void *clSharedMemAllocINTEL(cl_context context, cl_device_id device,
                                       const cl_mem_properties_intel *properties, size_t size,
                                       cl_uint alignment, cl_int *errcode_ret) {
  return usm_allocate(context, device, CL_MEM_TYPE_SHARED_INTEL, properties, size, alignment,
                      errcode_ret);
}

static cl_int usm_free(cl_context context, void *ptr, int blocking) {
  if (!object_is(context, OBJECT_CONTEXT)) return CL_INVALID_CONTEXT;
  if (!ptr) return CL_SUCCESS;
  struct svm_block b;
  if (!svm_block_find(context, ptr, &b) || b.ptr != ptr || !b.usm_type) {
    debug_log("clMemFreeINTEL: %p is not the start of a USM allocation of this context", ptr);
    return CL_INVALID_VALUE;
  }
  /* Blocking: once the commands enqueued before, which may use it, end. */
  if (blocking) context_finish_queues(context);
  svm_block_free(context, ptr);
  return CL_SUCCESS;
}

AQUILA_API cl_int clMemFreeINTEL(cl_context context, void *ptr) {
  return usm_free(context, ptr, 0);
}

AQUILA_API cl_int clMemBlockingFreeINTEL(cl_context context, void *ptr) {
  return usm_free(context, ptr, 1);
}

AQUILA_API cl_int clGetMemAllocInfoINTEL(cl_context context, const void *ptr,
                                         cl_mem_info_intel param_name, size_t param_value_size,
                                         void *param_value, size_t *param_value_size_ret) {
  if (!object_is(context, OBJECT_CONTEXT)) return CL_INVALID_CONTEXT;
  struct svm_block b = {0};
  int found = ptr && svm_block_find(context, ptr, &b);
  switch (param_name) {
  case CL_MEM_ALLOC_TYPE_INTEL:
    /* clSVMAlloc's blocks are what shared allocations are here. */
    INFO_VALUE(cl_unified_shared_memory_type_intel, !found       ? CL_MEM_TYPE_UNKNOWN_INTEL
                                                    : b.usm_type ? b.usm_type
                                                                 : CL_MEM_TYPE_SHARED_INTEL);
  case CL_MEM_ALLOC_BASE_PTR_INTEL:
    INFO_VALUE(void *, found ? b.ptr : NULL);
  case CL_MEM_ALLOC_SIZE_INTEL:
    INFO_VALUE(size_t, found ? b.size : 0);
  case CL_MEM_ALLOC_DEVICE_INTEL:
    INFO_VALUE(cl_device_id, found ? b.usm_device : NULL);
  case CL_MEM_ALLOC_FLAGS_INTEL:
    INFO_VALUE(cl_mem_alloc_flags_intel, found ? b.usm_flags : 0);
  default:
    return CL_INVALID_VALUE;
  }
}

AQUILA_API cl_int clSetKernelArgMemPointerINTEL(cl_kernel kernel, cl_uint arg_index,
                                                const void *arg_value) {
  if (!object_is(kernel, OBJECT_KERNEL)) return CL_INVALID_KERNEL;
  cl_context c = kernel->program->context;
  int capable = 0;
  for (cl_uint i = 0; i < c->num_devices; i++)
    capable |= usm_capabilities(c->devices[i]) != 0;
  if (!capable) return CL_INVALID_OPERATION;
  return kernel_set_arg_pointer(kernel, arg_index, arg_value);
}

/* The queue's device must have USM. */
static cl_int usm_queue_check(cl_command_queue q) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!usm_capabilities(q->device)) {
    debug_log("USM command on '%s', a device without unified shared memory", q->device->name);
    return CL_INVALID_OPERATION;
  }
  return CL_SUCCESS;
}

AQUILA_API cl_int clEnqueueMemFillINTEL(cl_command_queue q, void *dst_ptr, const void *pattern,
                                        size_t pattern_size, size_t size, cl_uint num_wait,
                                        const cl_event *wait_list, cl_event *event) {
  cl_int err = usm_queue_check(q);
  if (err) return err;
  if (!svm_fill_arguments_valid(dst_ptr, pattern, pattern_size, size)) return CL_INVALID_VALUE;
  return svm_enqueue_fill(q, CL_COMMAND_MEMFILL_INTEL, dst_ptr, pattern, pattern_size, size,
                          num_wait, wait_list, event);
}

/* The extension's first fill, kept for the programs that use it. */
AQUILA_API cl_int clEnqueueMemsetINTEL(cl_command_queue q, void *dst_ptr, cl_int value, size_t size,
                                       cl_uint num_wait, const cl_event *wait_list,
                                       cl_event *event) {
  cl_uchar byte = (cl_uchar)value;
  return clEnqueueMemFillINTEL(q, dst_ptr, &byte, 1, size, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueMemcpyINTEL(cl_command_queue q, cl_bool blocking, void *dst_ptr,
                                       const void *src_ptr, size_t size, cl_uint num_wait,
                                       const cl_event *wait_list, cl_event *event) {
  cl_int err = usm_queue_check(q);
  if (err) return err;
  if (!dst_ptr || !src_ptr) return CL_INVALID_VALUE;
  return svm_enqueue_copy(q, CL_COMMAND_MEMCPY_INTEL, blocking, dst_ptr, src_ptr, size, num_wait,
                          wait_list, event);
}

AQUILA_API cl_int clEnqueueMigrateMemINTEL(cl_command_queue q, const void *ptr, size_t size,
                                           cl_mem_migration_flags flags, cl_uint num_wait,
                                           const cl_event *wait_list, cl_event *event) {
  cl_int err = usm_queue_check(q);
  if (err) return err;
  if (!ptr || (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST |
                                                 CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)))
    return CL_INVALID_VALUE;
  return svm_enqueue_ordering(q, CL_COMMAND_MIGRATEMEM_INTEL, CL_FALSE, num_wait, wait_list,
                              event);
}

/* The extension defines no advice value: any is a hint this device has no
 * use for. */
AQUILA_API cl_int clEnqueueMemAdviseINTEL(cl_command_queue q, const void *ptr, size_t size,
                                          cl_mem_advice_intel advice, cl_uint num_wait,
                                          const cl_event *wait_list, cl_event *event) {
  cl_int err = usm_queue_check(q);
  if (err) return err;
  if (!ptr) return CL_INVALID_VALUE;
  return svm_enqueue_ordering(q, CL_COMMAND_MEMADVISE_INTEL, CL_FALSE, num_wait, wait_list,
                              event);
}
