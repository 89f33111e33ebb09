/* Contexts: a set of devices that share memory objects, programs and
 * events. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

int context_has_device(cl_context c, cl_device_id d) {
  for (cl_uint i = 0; i < c->num_devices; i++)
    if (c->devices[i] == d) return 1;
  return 0;
}

/* Validates the properties list (CL_CONTEXT_PLATFORM,
 * CL_CONTEXT_INTEROP_USER_SYNC); *count gets its length without the 0. */
static cl_int check_properties(const cl_context_properties *props, size_t *count) {
  size_t n = 0;
  int seen_platform = 0, seen_sync = 0;
  if (props) {
    while (props[n]) {
      switch (props[n]) {
      case CL_CONTEXT_PLATFORM:
        if (seen_platform++) return CL_INVALID_PROPERTY;
        if ((cl_platform_id)props[n + 1] != &aquila_platform) return CL_INVALID_PLATFORM;
        break;
      case CL_CONTEXT_INTEROP_USER_SYNC:
        if (seen_sync++) return CL_INVALID_PROPERTY;
        if (props[n + 1] != CL_TRUE && props[n + 1] != CL_FALSE) return CL_INVALID_PROPERTY;
        break;
      default:
        return CL_INVALID_PROPERTY;
      }
      n += 2;
    }
  }
  *count = n;
  return CL_SUCCESS;
}

static cl_int copy_properties(const cl_context_properties *props, cl_context c) {
  size_t n;
  cl_int err = check_properties(props, &n);
  if (err != CL_SUCCESS || !props) return err;
  c->properties = malloc((n + 1) * sizeof *props);
  if (!c->properties) return CL_OUT_OF_HOST_MEMORY;
  memcpy(c->properties, props, (n + 1) * sizeof *props);
  c->num_properties = n + 1;
  return CL_SUCCESS;
}

void context_finish_queues(cl_context c) {
  /* Each queue retained while it is finished: another thread may release it. */
  pthread_mutex_lock(&c->queues_lock);
  size_t n = 0;
  for (cl_command_queue q = c->queues; q; q = q->context_next)
    n++;
  cl_command_queue *queues = malloc((n ? n : 1) * sizeof *queues);
  n = 0;
  for (cl_command_queue q = c->queues; queues && q; q = q->context_next) {
    object_retain(&q->header);
    queues[n++] = q;
  }
  pthread_mutex_unlock(&c->queues_lock);
  for (size_t i = 0; i < n; i++) {
    clFinish(queues[i]);
    clReleaseCommandQueue(queues[i]);
  }
  free(queues);
}

struct context_destructor {
  void(CL_CALLBACK *fn)(cl_context, void *);
  void *user_data;
  struct context_destructor *next;
};

/* Registrations are rare; one lock for every context's list. */
static pthread_mutex_t destructors_lock = PTHREAD_MUTEX_INITIALIZER;

static void context_free(cl_context c) {
  /* Newest first, as the specification orders them, while the context's
   * handle is still what the application registered them with. */
  pthread_mutex_lock(&destructors_lock);
  struct context_destructor *list = c->destructors;
  c->destructors = NULL;
  pthread_mutex_unlock(&destructors_lock);
  while (list) {
    struct context_destructor *next = list->next;
    list->fn(c, list->user_data);
    free(list);
    list = next;
  }
  svm_context_release(c);
  pthread_mutex_destroy(&c->svm_lock);
  pthread_mutex_destroy(&c->queues_lock);
  for (cl_uint i = 0; i < c->num_devices; i++)
    device_release_internal(c->devices[i]);
  free(c->devices);
  free(c->properties);
  object_free(c);
}

AQUILA_API cl_context clCreateContext(const cl_context_properties *properties, cl_uint num_devices,
                                      const cl_device_id *devices,
                                      void(CL_CALLBACK *pfn_notify)(const char *, const void *,
                                                                    size_t, void *),
                                      void *user_data, cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  cl_context c = NULL;
  if (platform_init() != CL_SUCCESS) {
    err = CL_INVALID_PLATFORM;
    goto fail;
  }
  size_t num_props;
  if ((err = check_properties(properties, &num_props)) != CL_SUCCESS) goto fail;
  if (!devices || num_devices == 0 || (!pfn_notify && user_data)) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  for (cl_uint i = 0; i < num_devices; i++)
    if (!device_is_valid(devices[i])) {
      err = CL_INVALID_DEVICE;
      goto fail;
    }
  c = calloc(1, sizeof *c);
  if (!c) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  object_init(&c->header, OBJECT_CONTEXT);
  pthread_mutex_init(&c->svm_lock, NULL);
  pthread_mutex_init(&c->queues_lock, NULL);
  if ((err = copy_properties(properties, c)) != CL_SUCCESS) goto fail;
  c->devices = malloc(num_devices * sizeof *c->devices);
  if (!c->devices) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  /* A device listed twice counts once. The context keeps its sub-devices
   * alive: its queues, programs and kernels use them. */
  for (cl_uint i = 0; i < num_devices; i++)
    if (!context_has_device(c, devices[i])) {
      device_retain_internal(devices[i]);
      c->devices[c->num_devices++] = devices[i];
      if (device_root(devices[i])->remote) c->has_remote = 1;
    }
  c->notify = pfn_notify;
  c->notify_data = user_data;
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return c;
fail:
  if (c) context_free(c);
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

AQUILA_API cl_context
clCreateContextFromType(const cl_context_properties *properties, cl_device_type device_type,
                        void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
                        void *user_data, cl_int *errcode_ret) {
  cl_device_id devs[16];
  cl_uint n = 0;
  size_t num_props;
  cl_int perr = platform_init() != CL_SUCCESS ? CL_INVALID_PLATFORM
                                              : check_properties(properties, &num_props);
  if (perr != CL_SUCCESS) {
    if (errcode_ret) *errcode_ret = perr;
    return NULL;
  }
  if (!pfn_notify && user_data) {
    if (errcode_ret) *errcode_ret = CL_INVALID_VALUE;
    return NULL;
  }
  cl_int err = clGetDeviceIDs(NULL, device_type, 16, devs, &n);
  if (err != CL_SUCCESS) {
    if (errcode_ret) *errcode_ret = err == CL_INVALID_VALUE ? CL_INVALID_DEVICE_TYPE : err;
    return NULL;
  }
  return clCreateContext(properties, n < 16 ? n : 16, devs, pfn_notify, user_data, errcode_ret);
}

AQUILA_API cl_int clRetainContext(cl_context context) {
  if (!object_is(context, OBJECT_CONTEXT)) return CL_INVALID_CONTEXT;
  object_retain(&context->header);
  return CL_SUCCESS;
}

AQUILA_API cl_int clReleaseContext(cl_context context) {
  if (!object_is(context, OBJECT_CONTEXT)) return CL_INVALID_CONTEXT;
  if (object_release(&context->header)) context_free(context);
  return CL_SUCCESS;
}

AQUILA_API cl_int clSetContextDestructorCallback(cl_context context,
                                                 void(CL_CALLBACK *pfn_notify)(cl_context, void *),
                                                 void *user_data) {
  if (!object_is(context, OBJECT_CONTEXT)) return CL_INVALID_CONTEXT;
  if (!pfn_notify) return CL_INVALID_VALUE;
  struct context_destructor *d = malloc(sizeof *d);
  if (!d) return CL_OUT_OF_HOST_MEMORY;
  d->fn = pfn_notify;
  d->user_data = user_data;
  pthread_mutex_lock(&destructors_lock);
  d->next = context->destructors;
  context->destructors = d;
  pthread_mutex_unlock(&destructors_lock);
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetContextInfo(cl_context context, cl_context_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret) {
  if (!object_is(context, OBJECT_CONTEXT)) return CL_INVALID_CONTEXT;
  switch (param_name) {
  case CL_CONTEXT_REFERENCE_COUNT:
    INFO_VALUE(cl_uint, atomic_load(&context->header.refcount));
  case CL_CONTEXT_NUM_DEVICES:
    INFO_VALUE(cl_uint, context->num_devices);
  case CL_CONTEXT_DEVICES:
    return info_copy(context->devices, context->num_devices * sizeof(cl_device_id),
                     param_value_size, param_value, param_value_size_ret);
  case CL_CONTEXT_PROPERTIES:
    return info_copy(context->properties,
                     context->properties ? context->num_properties * sizeof(cl_context_properties)
                                         : 0,
                     param_value_size, param_value, param_value_size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}
