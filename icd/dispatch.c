/* The ICD dispatch table (cl_khr_icd): every Aquila object's first field
 * points here, and the loader calls through it. Every slot up to OpenCL 1.2
 * holds a real entry point; sharing extensions get the errors of interop.c.
 * Slots of OpenCL 2.0 and later are filled by opencl2.c. */
#include <CL/cl_ext.h>
#include <string.h>

#include "icd.h"
#include "runtime.h"

/* cl_ext_device_fission is not reported: OpenCL 1.2's clCreateSubDevices
 * does the same. The loader calls this slot without checking it, so it must
 * hold a function. */
static cl_int CL_API_CALL create_sub_devices_ext(cl_device_id in_device,
                                                 const cl_device_partition_property_ext *properties,
                                                 cl_uint num_entries, cl_device_id *out_devices,
                                                 cl_uint *num_devices) {
  if (!device_is_valid(in_device)) return CL_INVALID_DEVICE;
  return CL_INVALID_OPERATION;
}

static cl_icd_dispatch build_table(void) {
  cl_icd_dispatch t;
  memset(&t, 0, sizeof t);
  t.clGetPlatformIDs = clGetPlatformIDs;
  t.clGetPlatformInfo = clGetPlatformInfo;
  t.clGetDeviceIDs = clGetDeviceIDs;
  t.clGetDeviceInfo = clGetDeviceInfo;
  t.clCreateContext = clCreateContext;
  t.clCreateContextFromType = clCreateContextFromType;
  t.clRetainContext = clRetainContext;
  t.clReleaseContext = clReleaseContext;
  t.clGetContextInfo = clGetContextInfo;
  t.clCreateCommandQueue = clCreateCommandQueue;
  t.clRetainCommandQueue = clRetainCommandQueue;
  t.clReleaseCommandQueue = clReleaseCommandQueue;
  t.clGetCommandQueueInfo = clGetCommandQueueInfo;
  t.clSetCommandQueueProperty = clSetCommandQueueProperty;
  t.clCreateBuffer = clCreateBuffer;
  t.clCreateImage2D = clCreateImage2D;
  t.clCreateImage3D = clCreateImage3D;
  t.clRetainMemObject = clRetainMemObject;
  t.clReleaseMemObject = clReleaseMemObject;
  t.clGetSupportedImageFormats = clGetSupportedImageFormats;
  t.clGetMemObjectInfo = clGetMemObjectInfo;
  t.clGetImageInfo = clGetImageInfo;
  t.clCreateSampler = clCreateSampler;
  t.clRetainSampler = clRetainSampler;
  t.clReleaseSampler = clReleaseSampler;
  t.clGetSamplerInfo = clGetSamplerInfo;
  t.clCreateProgramWithSource = clCreateProgramWithSource;
  t.clCreateProgramWithBinary = clCreateProgramWithBinary;
  t.clRetainProgram = clRetainProgram;
  t.clReleaseProgram = clReleaseProgram;
  t.clBuildProgram = clBuildProgram;
  t.clUnloadCompiler = clUnloadCompiler;
  t.clGetProgramInfo = clGetProgramInfo;
  t.clGetProgramBuildInfo = clGetProgramBuildInfo;
  t.clCreateKernel = clCreateKernel;
  t.clCreateKernelsInProgram = clCreateKernelsInProgram;
  t.clRetainKernel = clRetainKernel;
  t.clReleaseKernel = clReleaseKernel;
  t.clSetKernelArg = clSetKernelArg;
  t.clGetKernelInfo = clGetKernelInfo;
  t.clGetKernelWorkGroupInfo = clGetKernelWorkGroupInfo;
  t.clWaitForEvents = clWaitForEvents;
  t.clGetEventInfo = clGetEventInfo;
  t.clRetainEvent = clRetainEvent;
  t.clReleaseEvent = clReleaseEvent;
  t.clGetEventProfilingInfo = clGetEventProfilingInfo;
  t.clFlush = clFlush;
  t.clFinish = clFinish;
  t.clEnqueueReadBuffer = clEnqueueReadBuffer;
  t.clEnqueueWriteBuffer = clEnqueueWriteBuffer;
  t.clEnqueueCopyBuffer = clEnqueueCopyBuffer;
  t.clEnqueueReadImage = clEnqueueReadImage;
  t.clEnqueueWriteImage = clEnqueueWriteImage;
  t.clEnqueueCopyImage = clEnqueueCopyImage;
  t.clEnqueueCopyImageToBuffer = clEnqueueCopyImageToBuffer;
  t.clEnqueueCopyBufferToImage = clEnqueueCopyBufferToImage;
  t.clEnqueueMapBuffer = clEnqueueMapBuffer;
  t.clEnqueueMapImage = clEnqueueMapImage;
  t.clEnqueueUnmapMemObject = clEnqueueUnmapMemObject;
  t.clEnqueueNDRangeKernel = clEnqueueNDRangeKernel;
  t.clEnqueueTask = clEnqueueTask;
  t.clEnqueueNativeKernel = clEnqueueNativeKernel;
  t.clEnqueueMarker = clEnqueueMarker;
  t.clEnqueueWaitForEvents = clEnqueueWaitForEvents;
  t.clEnqueueBarrier = clEnqueueBarrier;
  t.clGetExtensionFunctionAddress = clGetExtensionFunctionAddress;
  t.clSetEventCallback = clSetEventCallback;
  t.clCreateSubBuffer = clCreateSubBuffer;
  t.clSetMemObjectDestructorCallback = clSetMemObjectDestructorCallback;
  t.clCreateUserEvent = clCreateUserEvent;
  t.clSetUserEventStatus = clSetUserEventStatus;
  t.clEnqueueReadBufferRect = clEnqueueReadBufferRect;
  t.clEnqueueWriteBufferRect = clEnqueueWriteBufferRect;
  t.clEnqueueCopyBufferRect = clEnqueueCopyBufferRect;
  t.clCreateSubDevices = clCreateSubDevices;
  t.clRetainDevice = clRetainDevice;
  t.clReleaseDevice = clReleaseDevice;
  t.clCreateImage = clCreateImage;
  t.clCreateProgramWithBuiltInKernels = clCreateProgramWithBuiltInKernels;
  t.clCompileProgram = clCompileProgram;
  t.clLinkProgram = clLinkProgram;
  t.clUnloadPlatformCompiler = clUnloadPlatformCompiler;
  t.clGetKernelArgInfo = clGetKernelArgInfo;
  t.clEnqueueFillBuffer = clEnqueueFillBuffer;
  t.clEnqueueFillImage = clEnqueueFillImage;
  t.clEnqueueMigrateMemObjects = clEnqueueMigrateMemObjects;
  t.clEnqueueMarkerWithWaitList = clEnqueueMarkerWithWaitList;
  t.clEnqueueBarrierWithWaitList = clEnqueueBarrierWithWaitList;
  t.clGetExtensionFunctionAddressForPlatform = clGetExtensionFunctionAddressForPlatform;
  t.clCreateSubDevicesEXT = create_sub_devices_ext;
  t.clRetainDeviceEXT = clRetainDevice;
  t.clReleaseDeviceEXT = clReleaseDevice;
  icd_fill_interop_slots(&t);
  icd_fill_opencl2_slots(&t);
  return t;
}

cl_icd_dispatch aquila_dispatch;

/* Filled once, when the library is loaded, before any object
 * exists, from the first entry the loader calls. */
__attribute__((constructor)) static void dispatch_init(void) {
  cl_icd_dispatch t = build_table();
  aquila_dispatch = t;
}

struct extension_function {
  const char *name;
  void *address;
};

static const struct extension_function extension_functions[] = {
    {"clIcdGetPlatformIDsKHR", (void *)clIcdGetPlatformIDsKHR},
    /* cl_khr_il_program: the same call as the core one. */
    {"clCreateProgramWithILKHR", (void *)clCreateProgramWithIL},
    /* cl_intel_unified_shared_memory (runtime/usm.c). */
    {"clHostMemAllocINTEL", (void *)clHostMemAllocINTEL},
    {"clDeviceMemAllocINTEL", (void *)clDeviceMemAllocINTEL},
    {"clSharedMemAllocINTEL", (void *)clSharedMemAllocINTEL},
    {"clMemFreeINTEL", (void *)clMemFreeINTEL},
    {"clMemBlockingFreeINTEL", (void *)clMemBlockingFreeINTEL},
    {"clGetMemAllocInfoINTEL", (void *)clGetMemAllocInfoINTEL},
    {"clSetKernelArgMemPointerINTEL", (void *)clSetKernelArgMemPointerINTEL},
    {"clEnqueueMemsetINTEL", (void *)clEnqueueMemsetINTEL},
    {"clEnqueueMemFillINTEL", (void *)clEnqueueMemFillINTEL},
    {"clEnqueueMemcpyINTEL", (void *)clEnqueueMemcpyINTEL},
    {"clEnqueueMigrateMemINTEL", (void *)clEnqueueMigrateMemINTEL},
    {"clEnqueueMemAdviseINTEL", (void *)clEnqueueMemAdviseINTEL},
};

AQUILA_API void *clGetExtensionFunctionAddress(const char *func_name) {
  if (!func_name) return NULL;
  for (size_t i = 0; i < sizeof extension_functions / sizeof extension_functions[0]; i++)
    if (!strcmp(func_name, extension_functions[i].name)) return extension_functions[i].address;
  return NULL;
}

AQUILA_API void *clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                          const char *func_name) {
  if (platform != &aquila_platform) return NULL;
  return clGetExtensionFunctionAddress(func_name);
}
