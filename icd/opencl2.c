/* The dispatch slots of OpenCL 2.0 and later. Aquila's devices are OpenCL
 * 3.0 devices, for which most of 2.x is optional (runtime/features.c says
 * what each device has). The 2.x calls that a 3.0 device has are the
 * runtime's own (queues, samplers, buffers and images with properties,
 * clCloneKernel, context destructor callbacks, SPIR-V programs, sub-group
 * queries) and the host timer here, SVM (runtime/svm.c); the entry points of
 * optional features the devices lack (pipes, device-side queues) check their arguments
 * in the specification's order and return its error for an absent feature,
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
static int context_ok(cl_context c) { return object_is(c, OBJECT_CONTEXT); }
static int program_ok(cl_program p) { return object_is(p, OBJECT_PROGRAM); }

static cl_mem CL_API_CALL no_pipe(cl_context c, cl_mem_flags f, cl_uint s, cl_uint m,
                                  const cl_pipe_properties *p, cl_int *errcode_ret) {
  if (errcode_ret) *errcode_ret = context_ok(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT;
  return NULL;
}
static cl_int CL_API_CALL no_pipe_info(cl_mem p, cl_pipe_info n, size_t s, void *v, size_t *r) {
  return CL_INVALID_MEM_OBJECT; /* no cl_mem is a pipe */
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
  t->clSVMAlloc = clSVMAlloc;
  t->clSVMFree = clSVMFree;
  t->clEnqueueSVMFree = clEnqueueSVMFree;
  t->clEnqueueSVMMemcpy = clEnqueueSVMMemcpy;
  t->clEnqueueSVMMemFill = clEnqueueSVMMemFill;
  t->clEnqueueSVMMap = clEnqueueSVMMap;
  t->clEnqueueSVMUnmap = clEnqueueSVMUnmap;
  t->clCreateSamplerWithProperties = clCreateSamplerWithProperties;
  t->clSetKernelArgSVMPointer = clSetKernelArgSVMPointer;
  t->clSetKernelExecInfo = clSetKernelExecInfo;
  t->clGetKernelSubGroupInfoKHR = (void *)clGetKernelSubGroupInfo;
  t->clCloneKernel = clCloneKernel;
  t->clCreateProgramWithIL = clCreateProgramWithIL;
  t->clEnqueueSVMMigrateMem = clEnqueueSVMMigrateMem;
  t->clGetDeviceAndHostTimer = get_device_and_host_timer;
  t->clGetHostTimer = get_host_timer;
  t->clGetKernelSubGroupInfo = clGetKernelSubGroupInfo;
  t->clSetDefaultDeviceCommandQueue = no_default_device_queue;
  t->clSetProgramReleaseCallback = no_program_release_callback;
  t->clSetProgramSpecializationConstant = clSetProgramSpecializationConstant;
  t->clCreateBufferWithProperties = clCreateBufferWithProperties;
  t->clCreateImageWithProperties = clCreateImageWithProperties;
  t->clSetContextDestructorCallback = clSetContextDestructorCallback;
}
