/* Command queues: the in-order or out-of-order stream of commands for one
 * device. Each queue owns its own AQL queue on the device's HSA agent, so the
 * packet barrier bit orders exactly this queue's kernels and nothing else. */
#include <stdlib.h>
#include <string.h>

#include <hsa/hsa_ext_amd.h>

#include "aquila/trace.h"
#include "runtime.h"

int queue_takes_times(cl_command_queue q) {
  return (q->properties & CL_QUEUE_PROFILING_ENABLE) || AQ_TRACE_ON();
}

static void queue_error_callback(hsa_status_t status, hsa_queue_t *source, void *data) {
  const char *msg = NULL;
  hsa_status_string(status, &msg);
  debug_log("AQL queue error: %s", msg ? msg : "unknown");
}

cl_int queue_check(cl_command_queue q) {
  return object_is(q, OBJECT_QUEUE) ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE;
}

/* A queue's context and device, the first checks of both ways to make one. */
static cl_int queue_place_check(cl_context context, cl_device_id device) {
  if (!object_is(context, OBJECT_CONTEXT)) return CL_INVALID_CONTEXT;
  if (!device_is_valid(device) || !context_has_device(context, device)) return CL_INVALID_DEVICE;
  return CL_SUCCESS;
}

AQUILA_API cl_command_queue clCreateCommandQueue(cl_context context, cl_device_id device,
                                                 cl_command_queue_properties properties,
                                                 cl_int *errcode_ret) {
  cl_command_queue q = NULL;
  cl_int err = queue_place_check(context, device);
  if (err != CL_SUCCESS) goto fail;
  if (properties & ~(cl_command_queue_properties)(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                                  CL_QUEUE_PROFILING_ENABLE)) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  q = calloc(1, sizeof *q);
  if (!q) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  object_init(&q->header, OBJECT_QUEUE);
  q->context = context;
  q->device = device;
  q->properties = properties;
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->idle_cond, NULL);
  if (hsa_queue_create(device->agent, 4096, HSA_QUEUE_TYPE_MULTI, queue_error_callback, q,
                       UINT32_MAX, UINT32_MAX, &q->hsa_queue) != HSA_STATUS_SUCCESS) {
    free(q);
    q = NULL;
    err = CL_OUT_OF_RESOURCES;
    goto fail;
  }
  /* A sub-device's kernels run only on its compute units. */
  if (device->parent &&
      hsa_amd_queue_cu_set_mask(q->hsa_queue, 32 * 32, device->unit_mask) != HSA_STATUS_SUCCESS) {
    hsa_queue_destroy(q->hsa_queue);
    free(q);
    q = NULL;
    err = CL_OUT_OF_RESOURCES;
    goto fail;
  }
  /* Kernels' profiling times are when their work-groups ran, which the
   * agent records into their completion signals. */
  if (queue_takes_times(q)) hsa_amd_profiling_set_profiler_enabled(q->hsa_queue, 1);
  object_retain(&context->header);
  pthread_mutex_lock(&context->queues_lock);
  q->context_next = context->queues;
  context->queues = q;
  pthread_mutex_unlock(&context->queues_lock);
  if (AQ_TRACE_ON()) {
    static atomic_uint queues_made;
    q->trace_track = aq_trace_track(
        1, "queue %u (%s%s) on %s", atomic_fetch_add(&queues_made, 1) + 1,
        properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE ? "out-of-order" : "in-order",
        properties & CL_QUEUE_PROFILING_ENABLE ? ", profiling" : "", device->name);
  }
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return q;
fail:
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

/* OpenCL 2.0's way to create a queue: a 0-terminated property list. The
 * properties of device-side queues (CL_QUEUE_ON_DEVICE, CL_QUEUE_SIZE) are
 * refused: this device has none (CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES is 0). */
AQUILA_API cl_command_queue clCreateCommandQueueWithProperties(cl_context context,
                                                               cl_device_id device,
                                                               const cl_queue_properties *properties,
                                                               cl_int *errcode_ret) {
  cl_int err = queue_place_check(context, device);
  if (err != CL_SUCCESS) goto fail;
  cl_command_queue_properties flags = 0;
  size_t n = 0;
  int seen_flags = 0, seen_size = 0;
  for (; properties && properties[n]; n += 2) {
    switch (properties[n]) {
    case CL_QUEUE_PROPERTIES:
      if (seen_flags++) {
        err = CL_INVALID_VALUE; /* a property named twice */
        goto fail;
      }
      flags = (cl_command_queue_properties)properties[n + 1];
      break;
    case CL_QUEUE_SIZE:
      if (seen_size++) {
        err = CL_INVALID_VALUE;
        goto fail;
      }
      break;
    default:
      err = CL_INVALID_VALUE;
      goto fail;
    }
  }
  if (flags & (CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT)) {
    err = CL_INVALID_QUEUE_PROPERTIES;
    goto fail;
  }
  if (seen_size) {
    err = CL_INVALID_VALUE; /* CL_QUEUE_SIZE is for device-side queues only */
    goto fail;
  }
  if (flags & ~(cl_command_queue_properties)(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                             CL_QUEUE_PROFILING_ENABLE)) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  void *copy;
  size_t copy_size;
  if (property_list_copy(properties, n, sizeof *properties, &copy, &copy_size)) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  cl_command_queue q = clCreateCommandQueue(context, device, flags, &err);
  if (!q) {
    free(copy);
    goto fail;
  }
  q->properties_array = copy;
  q->properties_array_size = copy_size;
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return q;
fail:
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

AQUILA_API cl_int clRetainCommandQueue(cl_command_queue q) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  object_retain(&q->header);
  return CL_SUCCESS;
}

AQUILA_API cl_int clReleaseCommandQueue(cl_command_queue q) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  /* Commands in flight hold their own references, so the queue lives on
   * until they complete. */
  if (object_release(&q->header)) {
    cl_context c = q->context;
    pthread_mutex_lock(&c->queues_lock);
    cl_command_queue *link = &c->queues;
    while (*link && *link != q)
      link = &(*link)->context_next;
    if (*link) *link = q->context_next;
    pthread_mutex_unlock(&c->queues_lock);
    hsa_queue_destroy(q->hsa_queue);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->idle_cond);
    free(q->properties_array);
    cl_context ctx = q->context;
    object_free(q);
    clReleaseContext(ctx);
  }
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info param_name,
                                        size_t param_value_size, void *param_value,
                                        size_t *param_value_size_ret) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  switch (param_name) {
  case CL_QUEUE_CONTEXT: INFO_VALUE(cl_context, q->context);
  case CL_QUEUE_DEVICE: INFO_VALUE(cl_device_id, q->device);
  case CL_QUEUE_REFERENCE_COUNT: INFO_VALUE(cl_uint, atomic_load(&q->header.refcount));
  case CL_QUEUE_PROPERTIES: INFO_VALUE(cl_command_queue_properties, q->properties);
  case CL_QUEUE_PROPERTIES_ARRAY:
    return info_copy(q->properties_array, q->properties_array_size, param_value_size, param_value,
                     param_value_size_ret);
  /* Device-side queues (2.0) are not supported: a host queue has neither. */
  case CL_QUEUE_SIZE: return CL_INVALID_COMMAND_QUEUE;
  case CL_QUEUE_DEVICE_DEFAULT: INFO_VALUE(cl_command_queue, NULL);
  default: return CL_INVALID_VALUE;
  }
}

/* Deprecated in 1.1; changing properties after creation is not supported. */
AQUILA_API cl_int clSetCommandQueueProperty(cl_command_queue q,
                                            cl_command_queue_properties properties,
                                            cl_bool enable,
                                            cl_command_queue_properties *old_properties) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (old_properties) *old_properties = q->properties;
  return CL_INVALID_OPERATION;
}

/* Commands are handed to the device as soon as they are ready, so there is
 * nothing left to flush. */
AQUILA_API cl_int clFlush(cl_command_queue q) {
  return queue_check(q);
}

AQUILA_API cl_int clFinish(cl_command_queue q) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  /* Every command complete, and their callbacks run; inside a callback,
   * complete only (the callbacks of the commands completed with it run
   * after it: waiting for them would wait for itself). */
  int in_callback = event_in_callback();
  pthread_mutex_lock(&q->lock);
  while (q->outstanding || (!in_callback && q->callbacks_pending)) {
    cl_event last = q->last;
    if (last && atomic_load(&last->status) > CL_COMPLETE) {
      object_retain(&last->header);
      pthread_mutex_unlock(&q->lock);
      event_wait(last);
      event_release_internal(last);
      pthread_mutex_lock(&q->lock);
    } else {
      pthread_cond_wait(&q->idle_cond, &q->lock);
    }
  }
  pthread_mutex_unlock(&q->lock);
  return CL_SUCCESS;
}
