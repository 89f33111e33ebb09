/* The dispatch slots of OpenCL 2.0 and later. Aquila's devices are OpenCL
 * 3.0 devices, for which most of 2.x is optional (runtime/features.c says
 * what each device has). The 2.x calls that a 3.0 device has are the
 * runtime's own (queues, samplers, buffers and images with properties,
 * clCloneKernel, context destructor callbacks, SPIR-V programs) and the host
 * timer here; the entry points of optional features the devices lack (SVM,
 * pipes, sub-groups, device-side queues) check their arguments in the
 * specification's order and return its error for an absent feature,
 * CL_INVALID_OPERATION. */
#include <string.h>
#include <time.h>

#include "icd.h"
#include "runtime.h"

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

/* Optional features that no Aquila device has (runtime/features.c). Each has
 * the signature of its slot and checks the arguments the specification
 * checks before the feature: an invalid object is reported as such. */
static int queue_ok(cl_command_queue q) { return queue_check(q) == CL_SUCCESS; }
static int context_ok(cl_context c) { return object_is(c, OBJECT_CONTEXT); }
static int kernel_ok(cl_kernel k) { return object_is(k, OBJECT_KERNEL); }
static int program_ok(cl_program p) { return object_is(p, OBJECT_PROGRAM); }

static cl_mem CL_API_CALL no_pipe(cl_context c, cl_mem_flags f, cl_uint s, cl_uint m,
                                  const cl_pipe_properties *p, cl_int *errcode_ret) {
  if (errcode_ret) *errcode_ret = context_ok(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT;
  return NULL;
}
static cl_int CL_API_CALL no_pipe_info(cl_mem p, cl_pipe_info n, size_t s, void *v, size_t *r) {
  return CL_INVALID_MEM_OBJECT; /* no cl_mem is a pipe */
}
static void *CL_API_CALL no_svm_alloc(cl_context c, cl_svm_mem_flags f, size_t s, cl_uint a) {
  return NULL; /* the specification's answer when no device supports SVM */
}
static void CL_API_CALL no_svm_free(cl_context c, void *p) {
  /* Nothing was ever allocated by clSVMAlloc. */
}
static cl_int CL_API_CALL no_svm_enqueue_free(cl_command_queue q, cl_uint n, void *p[],
                                              void(CL_CALLBACK *fn)(cl_command_queue, cl_uint,
                                                                    void *[], void *),
                                              void *d, cl_uint w, const cl_event *wl,
                                              cl_event *e) {
  return queue_ok(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
static cl_int CL_API_CALL no_svm_memcpy(cl_command_queue q, cl_bool b, void *d, const void *s,
                                        size_t n, cl_uint w, const cl_event *wl, cl_event *e) {
  return queue_ok(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
static cl_int CL_API_CALL no_svm_memfill(cl_command_queue q, void *p, const void *pat, size_t ps,
                                         size_t n, cl_uint w, const cl_event *wl, cl_event *e) {
  return queue_ok(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
static cl_int CL_API_CALL no_svm_map(cl_command_queue q, cl_bool b, cl_map_flags f, void *p,
                                     size_t n, cl_uint w, const cl_event *wl, cl_event *e) {
  return queue_ok(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
static cl_int CL_API_CALL no_svm_unmap(cl_command_queue q, void *p, cl_uint w, const cl_event *wl,
                                       cl_event *e) {
  return queue_ok(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
static cl_int CL_API_CALL no_svm_migrate(cl_command_queue q, cl_uint n, const void **p,
                                         const size_t *s, cl_mem_migration_flags f, cl_uint w,
                                         const cl_event *wl, cl_event *e) {
  return queue_ok(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
static cl_int CL_API_CALL no_kernel_arg_svm(cl_kernel k, cl_uint i, const void *v) {
  return kernel_ok(k) ? CL_INVALID_OPERATION : CL_INVALID_KERNEL;
}
/* The exec-info names are all SVM's (and USM's, an extension Aquila does not
 * list): a name outside them is CL_INVALID_VALUE, theirs CL_INVALID_OPERATION. */
static cl_int CL_API_CALL no_kernel_exec_info(cl_kernel k, cl_kernel_exec_info n, size_t s,
                                              const void *v) {
  if (!kernel_ok(k)) return CL_INVALID_KERNEL;
  if (n != CL_KERNEL_EXEC_INFO_SVM_PTRS && n != CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM)
    return CL_INVALID_VALUE;
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_sub_group_info(cl_kernel k, cl_device_id d, cl_kernel_sub_group_info n,
                                            size_t is, const void *iv, size_t s, void *v,
                                            size_t *r) {
  if (!kernel_ok(k)) return CL_INVALID_KERNEL;
  if (d && !device_is_valid(d)) return CL_INVALID_DEVICE;
  return CL_INVALID_OPERATION;
}
static cl_int CL_API_CALL no_default_device_queue(cl_context c, cl_device_id d,
                                                  cl_command_queue q) {
  if (!context_ok(c)) return CL_INVALID_CONTEXT;
  if (!device_is_valid(d) || !context_has_device(c, d)) return CL_INVALID_DEVICE;
  return CL_INVALID_OPERATION; /* no device-side queues */
}
/* Deprecated in 3.0: only for destructors of program-scope variables. */
static cl_int CL_API_CALL no_program_release_callback(cl_program p,
                                                      void(CL_CALLBACK *fn)(cl_program, void *),
                                                      void *d) {
  if (!program_ok(p)) return CL_INVALID_PROGRAM;
  if (!fn) return CL_INVALID_VALUE;
  return CL_INVALID_OPERATION;
}
void icd_fill_opencl2_slots(cl_icd_dispatch *t) {
  t->clCreateCommandQueueWithProperties = clCreateCommandQueueWithProperties;
  t->clCreatePipe = no_pipe;
  t->clGetPipeInfo = no_pipe_info;
  t->clSVMAlloc = no_svm_alloc;
  t->clSVMFree = no_svm_free;
  t->clEnqueueSVMFree = no_svm_enqueue_free;
  t->clEnqueueSVMMemcpy = no_svm_memcpy;
  t->clEnqueueSVMMemFill = no_svm_memfill;
  t->clEnqueueSVMMap = no_svm_map;
  t->clEnqueueSVMUnmap = no_svm_unmap;
  t->clCreateSamplerWithProperties = clCreateSamplerWithProperties;
  t->clSetKernelArgSVMPointer = no_kernel_arg_svm;
  t->clSetKernelExecInfo = no_kernel_exec_info;
  t->clGetKernelSubGroupInfoKHR = (void *)no_sub_group_info;
  t->clCloneKernel = clCloneKernel;
  t->clCreateProgramWithIL = clCreateProgramWithIL;
  t->clEnqueueSVMMigrateMem = no_svm_migrate;
  t->clGetDeviceAndHostTimer = get_device_and_host_timer;
  t->clGetHostTimer = get_host_timer;
  t->clGetKernelSubGroupInfo = no_sub_group_info;
  t->clSetDefaultDeviceCommandQueue = no_default_device_queue;
  t->clSetProgramReleaseCallback = no_program_release_callback;
  t->clSetProgramSpecializationConstant = clSetProgramSpecializationConstant;
  t->clCreateBufferWithProperties = clCreateBufferWithProperties;
  t->clCreateImageWithProperties = clCreateImageWithProperties;
  t->clSetContextDestructorCallback = clSetContextDestructorCallback;
}
