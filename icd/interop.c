/* Entry points of sharing and fission extensions that Aquila does not
 * support (OpenGL, Direct3D, DX9 media, EGL, cl_ext_device_fission). The ICD
 * dispatch table has a slot for each; every slot is filled, so that a call
 * gets the error that the extension's specification gives for a context,
 * queue or object it cannot belong to, never a jump through NULL.
 * The prototypes follow CL/cl_icd.h. */
#include <CL/cl.h>
#include <CL/cl_icd.h>

#include "icd.h"

#ifndef CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR
#define CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR -1000
#endif

static cl_mem CL_API_CALL unsupported_clCreateFromGLBuffer(cl_context context, cl_mem_flags flags, cl_GLuint bufobj, int *errcode_ret) {
  (void)context;
  (void)flags;
  (void)bufobj;
  if (errcode_ret) *errcode_ret = CL_INVALID_CONTEXT;
  return NULL;
}

static cl_mem CL_API_CALL unsupported_clCreateFromGLTexture2D(cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret) {
  (void)context;
  (void)flags;
  (void)target;
  (void)miplevel;
  (void)texture;
  if (errcode_ret) *errcode_ret = CL_INVALID_CONTEXT;
  return NULL;
}

static cl_mem CL_API_CALL unsupported_clCreateFromGLTexture3D(cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret) {
  (void)context;
  (void)flags;
  (void)target;
  (void)miplevel;
  (void)texture;
  if (errcode_ret) *errcode_ret = CL_INVALID_CONTEXT;
  return NULL;
}

static cl_mem CL_API_CALL unsupported_clCreateFromGLRenderbuffer(cl_context context, cl_mem_flags flags, cl_GLuint renderbuffer, cl_int *errcode_ret) {
  (void)context;
  (void)flags;
  (void)renderbuffer;
  if (errcode_ret) *errcode_ret = CL_INVALID_CONTEXT;
  return NULL;
}

static cl_int CL_API_CALL unsupported_clGetGLObjectInfo(cl_mem memobj, cl_gl_object_type *gl_object_type, cl_GLuint *gl_object_name) {
  (void)memobj;
  (void)gl_object_type;
  (void)gl_object_name;
  return CL_INVALID_MEM_OBJECT;
}

static cl_int CL_API_CALL unsupported_clGetGLTextureInfo(cl_mem memobj, cl_gl_texture_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret) {
  (void)memobj;
  (void)param_name;
  (void)param_value_size;
  (void)param_value;
  (void)param_value_size_ret;
  return CL_INVALID_MEM_OBJECT;
}

static cl_int CL_API_CALL unsupported_clEnqueueAcquireGLObjects(cl_command_queue command_queue, cl_uint num_objects, const cl_mem *mem_objects, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event) {
  (void)command_queue;
  (void)num_objects;
  (void)mem_objects;
  (void)num_events_in_wait_list;
  (void)event_wait_list;
  (void)event;
  return CL_INVALID_CONTEXT;
}

static cl_int CL_API_CALL unsupported_clEnqueueReleaseGLObjects(cl_command_queue command_queue, cl_uint num_objects, const cl_mem *mem_objects, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event) {
  (void)command_queue;
  (void)num_objects;
  (void)mem_objects;
  (void)num_events_in_wait_list;
  (void)event_wait_list;
  (void)event;
  return CL_INVALID_CONTEXT;
}

static cl_mem CL_API_CALL unsupported_clCreateFromGLTexture(cl_context context, cl_mem_flags flags, cl_GLenum target, cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret) {
  (void)context;
  (void)flags;
  (void)target;
  (void)miplevel;
  (void)texture;
  if (errcode_ret) *errcode_ret = CL_INVALID_CONTEXT;
  return NULL;
}

void icd_fill_interop_slots(cl_icd_dispatch *t) {
  t->clCreateFromGLBuffer = unsupported_clCreateFromGLBuffer;
  t->clCreateFromGLTexture2D = unsupported_clCreateFromGLTexture2D;
  t->clCreateFromGLTexture3D = unsupported_clCreateFromGLTexture3D;
  t->clCreateFromGLRenderbuffer = unsupported_clCreateFromGLRenderbuffer;
  t->clGetGLObjectInfo = unsupported_clGetGLObjectInfo;
  t->clGetGLTextureInfo = unsupported_clGetGLTextureInfo;
  t->clEnqueueAcquireGLObjects = unsupported_clEnqueueAcquireGLObjects;
  t->clEnqueueReleaseGLObjects = unsupported_clEnqueueReleaseGLObjects;
  t->clCreateFromGLTexture = unsupported_clCreateFromGLTexture;
}
