/* The dispatch slots of OpenCL 2.0 and later. Aquila's device is OpenCL 1.2,
 * but programs and test suites call some of these entry points on any
 * platform (clCreateCommandQueueWithProperties above all), and the loader
 * jumps through the slot without checking it. Every slot is filled: the
 * 2.0 ways of creating queues, samplers, buffers and images map onto the 1.2
 * calls, the host timer works, and the features a 1.2 device does not have
 * (SVM, pipes, IL programs, sub-groups, ...) return CL_INVALID_OPERATION.
 * CL/cl_icd.h declares these slots as plain pointers for a 1.2 target, so the
 * prototypes are written out here from the OpenCL 3.0 headers' signatures. */
#include <string.h>
#include <time.h>

#include "icd.h"
#include "runtime.h"

typedef cl_bitfield cl_queue_properties_2;
typedef intptr_t cl_sampler_properties_2;
typedef cl_ulong cl_mem_properties_2;

#ifndef CL_QUEUE_SIZE
#define CL_QUEUE_SIZE 0x1094
#endif
#ifndef CL_SAMPLER_NORMALIZED_COORDS
#define CL_SAMPLER_NORMALIZED_COORDS 0x1152
#endif

static cl_command_queue CL_API_CALL create_queue_with_properties(
    cl_context context, cl_device_id device, const cl_queue_properties_2 *properties,
    cl_int *errcode_ret) {
  cl_command_queue_properties flags = 0;
  for (size_t i = 0; properties && properties[i]; i += 2) {
    if (properties[i] == CL_QUEUE_PROPERTIES) {
      flags = properties[i + 1];
    } else {
      /* CL_QUEUE_SIZE and the rest are for device-side queues (2.0). */
      if (errcode_ret) *errcode_ret = CL_INVALID_VALUE;
      return NULL;
    }
  }
  return clCreateCommandQueue(context, device, flags, errcode_ret);
}

static cl_sampler CL_API_CALL create_sampler_with_properties(
    cl_context context, const cl_sampler_properties_2 *properties, cl_int *errcode_ret) {
  cl_bool normalized = CL_TRUE;
  cl_addressing_mode addressing = CL_ADDRESS_CLAMP;
  cl_filter_mode filter = CL_FILTER_NEAREST;
  for (size_t i = 0; properties && properties[i]; i += 2) {
    switch (properties[i]) {
    case CL_SAMPLER_NORMALIZED_COORDS: normalized = (cl_bool)properties[i + 1]; break;
    case CL_SAMPLER_ADDRESSING_MODE: addressing = (cl_addressing_mode)properties[i + 1]; break;
    case CL_SAMPLER_FILTER_MODE: filter = (cl_filter_mode)properties[i + 1]; break;
    default:
      if (errcode_ret) *errcode_ret = CL_INVALID_VALUE;
      return NULL;
    }
  }
  return clCreateSampler(context, normalized, addressing, filter, errcode_ret);
}

/* No memory properties are defined for a 1.2 device: the list must be empty. */
static cl_mem CL_API_CALL create_buffer_with_properties(cl_context context,
                                                        const cl_mem_properties_2 *properties,
                                                        cl_mem_flags flags, size_t size,
                                                        void *host_ptr, cl_int *errcode_ret) {
  if (properties && properties[0]) {
    if (errcode_ret) *errcode_ret = CL_INVALID_PROPERTY;
    return NULL;
  }
  return clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
}

static cl_mem CL_API_CALL create_image_with_properties(cl_context context,
                                                       const cl_mem_properties_2 *properties,
                                                       cl_mem_flags flags,
                                                       const cl_image_format *format,
                                                       const cl_image_desc *desc, void *host_ptr,
                                                       cl_int *errcode_ret) {
  if (properties && properties[0]) {
    if (errcode_ret) *errcode_ret = CL_INVALID_PROPERTY;
    return NULL;
  }
  return clCreateImage(context, flags, format, desc, host_ptr, errcode_ret);
}

/* The host clock the profiling timestamps use (CLOCK_MONOTONIC). */
static cl_int CL_API_CALL get_host_timer(cl_device_id device, cl_ulong *host_timestamp) {
  if (!device_is_valid(device)) return CL_INVALID_DEVICE;
  if (!host_timestamp) return CL_INVALID_VALUE;
  *host_timestamp = now_ns();
  return CL_SUCCESS;
}

static cl_int CL_API_CALL get_device_and_host_timer(cl_device_id device, cl_ulong *device_timestamp,
                                                    cl_ulong *host_timestamp) {
  if (!device_is_valid(device)) return CL_INVALID_DEVICE;
  if (!device_timestamp || !host_timestamp) return CL_INVALID_VALUE;
  *device_timestamp = *host_timestamp = now_ns();
  return CL_SUCCESS;
}

/* Features of OpenCL 2.0 and later that a 1.2 device does not have. Each has
 * the signature of its slot; what matters to a caller is the error. */
static cl_mem CL_API_CALL no_pipe(cl_context c, cl_mem_flags f, cl_uint s, cl_uint m,
                                  const intptr_t *p, cl_int *errcode_ret) {
  if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION;
  return NULL;
}
static cl_int CL_API_CALL no_pipe_info(cl_mem p, cl_uint n, size_t s, void *v, size_t *r) {
  return CL_INVALID_MEM_OBJECT;
}
static void *CL_API_CALL no_svm_alloc(cl_context c, cl_bitfield f, size_t s, cl_uint a) {
  return NULL; /* the specification's answer when SVM is unavailable */
}
static void CL_API_CALL no_svm_free(cl_context c, void *p) {
  /* Nothing was ever allocated by clSVMAlloc. */
}
static cl_int CL_API_CALL no_svm_enqueue_free(cl_command_queue q, cl_uint n, void *p[],
                                              void (*fn)(cl_command_queue, cl_uint, void *[],
                                                         void *),
                                              void *d, cl_uint w, const cl_event *wl,
                                              cl_event *e) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_svm_memcpy(cl_command_queue q, cl_bool b, void *d, const void *s,
                                        size_t n, cl_uint w, const cl_event *wl, cl_event *e) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_svm_memfill(cl_command_queue q, void *p, const void *pat, size_t ps,
                                         size_t n, cl_uint w, const cl_event *wl, cl_event *e) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_svm_map(cl_command_queue q, cl_bool b, cl_map_flags f, void *p,
                                     size_t n, cl_uint w, const cl_event *wl, cl_event *e) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_svm_unmap(cl_command_queue q, void *p, cl_uint w, const cl_event *wl,
                                       cl_event *e) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_svm_migrate(cl_command_queue q, cl_uint n, const void **p,
                                         const size_t *s, cl_bitfield f, cl_uint w,
                                         const cl_event *wl, cl_event *e) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_kernel_arg_svm(cl_kernel k, cl_uint i, const void *v) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_kernel_exec_info(cl_kernel k, cl_uint n, size_t s, const void *v) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_sub_group_info(cl_kernel k, cl_device_id d, cl_uint n, size_t is,
                                            const void *iv, size_t s, void *v, size_t *r) {
  return CL_INVALID_OPERATION;
}
static cl_kernel CL_API_CALL no_clone_kernel(cl_kernel k, cl_int *errcode_ret) {
  if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION;
  return NULL;
}
static cl_program CL_API_CALL no_program_with_il(cl_context c, const void *il, size_t n,
                                                 cl_int *errcode_ret) {
  if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION;
  return NULL;
}
static cl_int CL_API_CALL no_default_device_queue(cl_context c, cl_device_id d,
                                                  cl_command_queue q) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_program_release_callback(cl_program p,
                                                      void (*fn)(cl_program, void *), void *d) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_specialization_constant(cl_program p, cl_uint id, size_t s,
                                                     const void *v) {
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_context_destructor_callback(cl_context c,
                                                         void (*fn)(cl_context, void *),
                                                         void *d) {
  return CL_INVALID_OPERATION;
}

void icd_fill_opencl2_slots(cl_icd_dispatch *t) {
  t->clCreateCommandQueueWithProperties = (void *)create_queue_with_properties;
  t->clCreatePipe = (void *)no_pipe;
  t->clGetPipeInfo = (void *)no_pipe_info;
  t->clSVMAlloc = (void *)no_svm_alloc;
  t->clSVMFree = (void *)no_svm_free;
  t->clEnqueueSVMFree = (void *)no_svm_enqueue_free;
  t->clEnqueueSVMMemcpy = (void *)no_svm_memcpy;
  t->clEnqueueSVMMemFill = (void *)no_svm_memfill;
  t->clEnqueueSVMMap = (void *)no_svm_map;
  t->clEnqueueSVMUnmap = (void *)no_svm_unmap;
  t->clCreateSamplerWithProperties = (void *)create_sampler_with_properties;
  t->clSetKernelArgSVMPointer = (void *)no_kernel_arg_svm;
  t->clSetKernelExecInfo = (void *)no_kernel_exec_info;
  t->clGetKernelSubGroupInfoKHR = (void *)no_sub_group_info;
  t->clCloneKernel = (void *)no_clone_kernel;
  t->clCreateProgramWithIL = (void *)no_program_with_il;
  t->clEnqueueSVMMigrateMem = (void *)no_svm_migrate;
  t->clGetDeviceAndHostTimer = (void *)get_device_and_host_timer;
  t->clGetHostTimer = (void *)get_host_timer;
  t->clGetKernelSubGroupInfo = (void *)no_sub_group_info;
  t->clSetDefaultDeviceCommandQueue = (void *)no_default_device_queue;
  t->clSetProgramReleaseCallback = (void *)no_program_release_callback;
  t->clSetProgramSpecializationConstant = (void *)no_specialization_constant;
  t->clCreateBufferWithProperties = (void *)create_buffer_with_properties;
  t->clCreateImageWithProperties = (void *)create_image_with_properties;
  t->clSetContextDestructorCallback = (void *)no_context_destructor_callback;
}
