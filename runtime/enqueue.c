/* The clEnqueue* entry points: each validates its arguments in the order the
 * specification lists the errors, captures what the command needs (addresses,
 * a kernarg snapshot, references on the memory objects it touches) in an
 * event, and hands it to the scheduler. Host-side commands (copies, fills,
 * maps) run in command_execute on a scheduler worker; kernels become HSA
 * kernel dispatch packets in ndrange_submit. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/cpu_abi.h"
#include "runtime.h"

/* Checks shared by every enqueue: the queue, then (later) the wait list. */
static cl_int check_wait_list(cl_command_queue q, cl_uint n, const cl_event *list) {
  return event_check_wait_list(q->context, n, list);
}

cl_int retain_mem_access(cl_event ev, cl_mem m, int writes) {
  size_t n = ev->num_retained_mems;
  cl_mem *mems = realloc(ev->retained_mems, (n + 1) * sizeof *mems);
  if (!mems) return CL_OUT_OF_HOST_MEMORY;
  ev->retained_mems = mems;
  unsigned char *w = realloc(ev->mem_writes, n + 1);
  if (!w) return CL_OUT_OF_HOST_MEMORY;
  ev->mem_writes = w;
  w[n] = writes ? 1 : 0;
  mems[ev->num_retained_mems++] = m;
  object_retain(&m->header);
  return CL_SUCCESS;
}

cl_int retain_mem(cl_event ev, cl_mem m) {
  return retain_mem_access(ev, m, 1);
}

/* Root buffers that the kernel's footprint says it overwrites whole
 * without reading them (launch_footprint.c), passed once: their old bytes need
 * not reach the device (mem_writes 2, residency.c). */
static void mark_overwritten(cl_event ev, const struct aquila_fatbin_kernel *meta) {
  struct footprint_launch fl;
  if (!ev->u.ndrange.mem_arg_offset ||
      !footprint_launch_init(&fl, meta, ev->u.ndrange.kernarg, ev->u.ndrange.dims,
                             ev->u.ndrange.grid, ev->u.ndrange.workgroup))
    return;
  const uint64_t first[3] = {0, 0, 0};
  const uint64_t last[3] = {fl.groups[0] - 1, fl.groups[1] - 1, fl.groups[2] - 1};
  for (size_t j = 0; j < ev->num_retained_mems; j++) {
    cl_mem m = ev->retained_mems[j];
    if (ev->mem_writes[j] != 1 || m->parent || m->image_handle) continue;
    int shared = 0;
    for (size_t k = 0; k < ev->num_retained_mems && !shared; k++) {
      cl_mem r = ev->retained_mems[k];
      while (r->parent)
        r = r->parent;
      shared = k != j && r == m;
    }
    uint32_t arg = 0;
    while (arg < meta->num_args && !(meta->args[arg].kind == AQUILA_ARG_GLOBAL_PTR &&
                                     meta->args[arg].offset == ev->u.ndrange.mem_arg_offset[j]))
      arg++;
    int64_t lo, hi;
    if (!shared && arg < meta->num_args && footprint_dense(&fl, arg, first, last, &lo, &hi) &&
        lo == 0 && hi == (int64_t)m->size)
      ev->mem_writes[j] = 2;
  }
}

/* Submits ev and, for blocking calls, waits for it. */
cl_int finish_enqueue(cl_event ev, cl_uint num_wait, const cl_event *wait_list, cl_bool blocking,
                      cl_event *event) {
  event_hand_out(ev, event);
  if (blocking) object_retain(&ev->header);
  command_submit(ev, num_wait, wait_list);
  if (!blocking) return CL_SUCCESS;
  cl_int st = event_wait(ev);
  event_release_internal(ev);
  return st < 0 ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
}

static cl_int command_run(cl_event ev) {
  cl_int status = CL_COMPLETE;
  event_set_status(ev, CL_RUNNING);
  int tracked = ev->context->has_remote;
  /* A buffer's bytes read from, or written to, a remote copy directly,
   * without a stop in the host storage. */
  if (tracked && ev->kind == COMMAND_COPY_RECT && ev->num_retained_mems == 1 &&
      ev->u.copy.region[1] == 1 && ev->u.copy.region[2] == 1 &&
      (ev->type == CL_COMMAND_READ_BUFFER || ev->type == CL_COMMAND_WRITE_BUFFER)) {
    __typeof__(ev->u.copy) *c = &ev->u.copy;
    cl_mem m = ev->retained_mems[0];
    cl_int done = ev->type == CL_COMMAND_READ_BUFFER
                      ? mem_read_direct(m, (size_t)(c->src - m->data), c->region[0], c->dst)
                      : mem_write_direct(m, ev->queue->device, (size_t)(c->dst - m->data),
                                         c->region[0], c->src);
    if (done) return done < 0 ? done : CL_COMPLETE;
  }
  /* Fills and buffer copies through a remote device's queue run there. */
  if (tracked && device_root(ev->queue->device)->remote) {
    cl_int done = 0;
    if (ev->kind == COMMAND_FILL && ev->num_retained_mems == 1) {
      cl_mem m = ev->retained_mems[0];
      done = mem_fill_direct(m, ev->queue->device, (size_t)(ev->u.fill.dst - m->data),
                             ev->u.fill.size, ev->u.fill.pattern, ev->u.fill.pattern_size);
    } else if (ev->kind == COMMAND_COPY_RECT && ev->type == CL_COMMAND_COPY_BUFFER &&
               ev->num_retained_mems == 2) {
      __typeof__(ev->u.copy) *c = &ev->u.copy;
      cl_mem src = ev->retained_mems[0], dst = ev->retained_mems[1];
      done = mem_copy_direct(dst, (size_t)(c->dst - dst->data), src,
                             (size_t)(c->src - src->data), c->region[0], ev->queue->device);
    }
    if (done) return done < 0 ? done : CL_COMPLETE;
  }
  /* The command runs on the host: its buffers' bytes must be here. */
  for (size_t i = 0; tracked && i < ev->num_retained_mems; i++) {
    cl_int err = mem_make_host_valid(ev->retained_mems[i]);
    if (err) return err;
  }
  for (size_t i = 0; i < ev->num_retained_mems; i++)
    if (ev->mem_writes[i]) mem_place_for_host(ev->retained_mems[i]);
  switch (ev->kind) {
  case COMMAND_IMAGE:
    status = image_command_execute(ev);
    break;
  case COMMAND_COPY_RECT: {
    __typeof__(ev->u.copy) *c = &ev->u.copy;
    for (size_t z = 0; z < c->region[2]; z++)
      for (size_t y = 0; y < c->region[1]; y++)
        memmove(c->dst + z * c->dst_slice + y * c->dst_row,
                c->src + z * c->src_slice + y * c->src_row, c->region[0]);
    break;
  }
  case COMMAND_FILL: {
    __typeof__(ev->u.fill) *f = &ev->u.fill;
    if (f->pattern_size == 1) {
      memset(f->dst, f->pattern[0], f->size);
    } else {
      for (size_t off = 0; off < f->size; off += f->pattern_size)
        memcpy(f->dst + off, f->pattern, f->pattern_size);
    }
    break;
  }
  case COMMAND_NATIVE:
    /* The application's function may run long: a fork meanwhile need not
     * wait for it (fork.c). */
    runtime_busy_end();
    ev->u.native.fn(ev->u.native.args);
    runtime_busy_begin();
    break;
  default:
    break;
  }
  for (size_t i = 0; tracked && status == CL_COMPLETE && i < ev->num_retained_mems; i++) {
    if (!ev->mem_writes[i]) continue;
    cl_mem m = ev->retained_mems[i];
    mem_host_wrote(m);
    /* Written through a remote device's queue: the bytes go there now,
     * where the next kernel most likely wants them (and where a user
     * timing the write expects them). Not for a map: its writes come at
     * the unmap. */
    if (device_root(ev->queue->device)->remote && ev->kind != COMMAND_MAP) {
      cl_int err = mem_prepare_for_device(m, ev->queue->device, 0);
      if (err) status = err;
    }
  }
  return status;
}

void command_execute(cl_event ev) {
  event_complete(ev, command_run(ev));
}

/* A host command this small runs right where it becomes ready (the thread
 * that completed what it waited for: the device's watcher after a kernel,
 * or the application's in its enqueue) instead of on a worker thread: the
 * worker's wake-up cost more than the copy. hashcat's loop (a kernel, a
 * 4 KB copy, a 64-byte write, its search kernel) spent 7 us waking a
 * worker for the copy and 24 between the write and the search kernel's
 * start. Only where nothing can fail or wait: no remote device in the
 * context (whose copies go over the network), copies and fills of at most
 * IN_PLACE_MAX_BYTES, maps and unmaps (nothing to move here then). */
#define IN_PLACE_MAX_BYTES ((size_t)64 * 1024)

int command_run_in_place(cl_event ev) {
  if (ev->context->has_remote) return 0;
  switch (ev->kind) {
  case COMMAND_COPY_RECT: {
    const size_t *r = ev->u.copy.region;
    if (r[1] > IN_PLACE_MAX_BYTES || r[2] > IN_PLACE_MAX_BYTES ||
        r[0] > IN_PLACE_MAX_BYTES / (r[1] ? r[1] : 1) / (r[2] ? r[2] : 1))
      return 0;
    break;
  }
  case COMMAND_FILL:
    if (ev->u.fill.size > IN_PLACE_MAX_BYTES) return 0;
    break;
  case COMMAND_MAP:
  case COMMAND_UNMAP:
    break;
  default:
    return 0;
  }
  /* Without a remote device these end CL_COMPLETE: the caller completes
   * them (iteratively, where one makes the next ready). */
  command_run(ev);
  return 1;
}

/* ---- buffers ---------------------------------------------------------------- */

static int region_in_bounds(size_t size, size_t offset, size_t len) {
  return offset <= size && len <= size - offset;
}

static cl_int host_access_check(cl_mem m, int reading) {
  if (m->flags & CL_MEM_HOST_NO_ACCESS) return CL_INVALID_OPERATION;
  if (reading && (m->flags & CL_MEM_HOST_WRITE_ONLY)) return CL_INVALID_OPERATION;
  if (!reading && (m->flags & CL_MEM_HOST_READ_ONLY)) return CL_INVALID_OPERATION;
  return CL_SUCCESS;
}

static cl_int enqueue_copy(cl_command_queue q, cl_command_type type, cl_mem m1, cl_mem m2,
                           char *dst, const char *src, const size_t region[3], size_t dst_row,
                           size_t dst_slice, size_t src_row, size_t src_slice, cl_bool blocking,
                           cl_uint num_wait, const cl_event *wait_list, cl_event *event) {
  cl_event ev = event_create_command(q, type, COMMAND_COPY_RECT);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  ev->u.copy.dst = dst;
  ev->u.copy.src = src;
  memcpy(ev->u.copy.region, region, sizeof ev->u.copy.region);
  ev->u.copy.dst_row = dst_row;
  ev->u.copy.dst_slice = dst_slice;
  ev->u.copy.src_row = src_row;
  ev->u.copy.src_slice = src_slice;
  /* m1 is written by writes from the host; m2, a copy's destination, always. */
  int m1_writes = type == CL_COMMAND_WRITE_BUFFER || type == CL_COMMAND_WRITE_BUFFER_RECT;
  if ((m1 && retain_mem_access(ev, m1, m1_writes)) || (m2 && retain_mem(ev, m2))) {
    event_release_internal(ev);
    return CL_OUT_OF_HOST_MEMORY;
  }
  return finish_enqueue(ev, num_wait, wait_list, blocking, event);
}

AQUILA_API cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                      size_t offset, size_t size, void *ptr, cl_uint num_wait,
                                      const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_buffer(buffer)) return CL_INVALID_MEM_OBJECT;
  if (buffer->context != q->context) return CL_INVALID_CONTEXT;
  if (!ptr || size == 0 || !region_in_bounds(buffer->size, offset, size)) return CL_INVALID_VALUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  if ((err = host_access_check(buffer, 1))) return err;
  size_t region[3] = {size, 1, 1};
  return enqueue_copy(q, CL_COMMAND_READ_BUFFER, buffer, NULL, ptr, buffer->data + offset, region,
                      0, 0, 0, 0, blocking, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                       size_t offset, size_t size, const void *ptr,
                                       cl_uint num_wait, const cl_event *wait_list,
                                       cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_buffer(buffer)) return CL_INVALID_MEM_OBJECT;
  if (buffer->context != q->context) return CL_INVALID_CONTEXT;
  if (!ptr || size == 0 || !region_in_bounds(buffer->size, offset, size)) return CL_INVALID_VALUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  if ((err = host_access_check(buffer, 0))) return err;
  size_t region[3] = {size, 1, 1};
  return enqueue_copy(q, CL_COMMAND_WRITE_BUFFER, buffer, NULL, buffer->data + offset, ptr, region,
                      0, 0, 0, 0, blocking, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                      size_t dst_offset, size_t size, cl_uint num_wait,
                                      const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_buffer(src) || !mem_is_buffer(dst)) return CL_INVALID_MEM_OBJECT;
  if (src->context != q->context || dst->context != q->context) return CL_INVALID_CONTEXT;
  if (size == 0 || !region_in_bounds(src->size, src_offset, size) ||
      !region_in_bounds(dst->size, dst_offset, size))
    return CL_INVALID_VALUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  const char *s = src->data + src_offset;
  const char *d = dst->data + dst_offset;
  if (s < d + size && d < s + size) return CL_MEM_COPY_OVERLAP;
  size_t region[3] = {size, 1, 1};
  return enqueue_copy(q, CL_COMMAND_COPY_BUFFER, src, dst, dst->data + dst_offset, s, region, 0, 0,
                      0, 0, CL_FALSE, num_wait, wait_list, event);
}

/* Resolves a rectangle's pitches (0 means tightly packed) and checks it fits
 * in a buffer of the given size. */
static int rect_setup(const size_t origin[3], const size_t region[3], size_t *row, size_t *slice,
                      size_t limit, size_t *offset) {
  if (!origin || !region || region[0] == 0 || region[1] == 0 || region[2] == 0) return 0;
  if (*row == 0)
    *row = region[0];
  else if (*row < region[0])
    return 0;
  if (*slice == 0)
    *slice = region[1] * *row;
  else if (*slice < region[1] * *row || *slice % *row)
    return 0;
  *offset = origin[2] * *slice + origin[1] * *row + origin[0];
  size_t end = *offset + (region[2] - 1) * *slice + (region[1] - 1) * *row + region[0];
  return end <= limit;
}

AQUILA_API cl_int clEnqueueReadBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                          const size_t *buffer_origin, const size_t *host_origin,
                                          const size_t *region, size_t buffer_row_pitch,
                                          size_t buffer_slice_pitch, size_t host_row_pitch,
                                          size_t host_slice_pitch, void *ptr, cl_uint num_wait,
                                          const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_buffer(buffer)) return CL_INVALID_MEM_OBJECT;
  if (buffer->context != q->context) return CL_INVALID_CONTEXT;
  size_t boff, hoff;
  if (!ptr ||
      !rect_setup(buffer_origin, region, &buffer_row_pitch, &buffer_slice_pitch, buffer->size,
                  &boff) ||
      !rect_setup(host_origin, region, &host_row_pitch, &host_slice_pitch, SIZE_MAX, &hoff))
    return CL_INVALID_VALUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  if ((err = host_access_check(buffer, 1))) return err;
  return enqueue_copy(q, CL_COMMAND_READ_BUFFER_RECT, buffer, NULL, (char *)ptr + hoff,
                      buffer->data + boff, region, host_row_pitch, host_slice_pitch,
                      buffer_row_pitch, buffer_slice_pitch, blocking, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                           const size_t *buffer_origin, const size_t *host_origin,
                                           const size_t *region, size_t buffer_row_pitch,
                                           size_t buffer_slice_pitch, size_t host_row_pitch,
                                           size_t host_slice_pitch, const void *ptr,
                                           cl_uint num_wait, const cl_event *wait_list,
                                           cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_buffer(buffer)) return CL_INVALID_MEM_OBJECT;
  if (buffer->context != q->context) return CL_INVALID_CONTEXT;
  size_t boff, hoff;
  if (!ptr ||
      !rect_setup(buffer_origin, region, &buffer_row_pitch, &buffer_slice_pitch, buffer->size,
                  &boff) ||
      !rect_setup(host_origin, region, &host_row_pitch, &host_slice_pitch, SIZE_MAX, &hoff))
    return CL_INVALID_VALUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  if ((err = host_access_check(buffer, 0))) return err;
  return enqueue_copy(q, CL_COMMAND_WRITE_BUFFER_RECT, buffer, NULL, buffer->data + boff,
                      (const char *)ptr + hoff, region, buffer_row_pitch, buffer_slice_pitch,
                      host_row_pitch, host_slice_pitch, blocking, num_wait, wait_list, event);
}

/* Whether two rectangles of the same pitches share a byte. Bounding ranges
 * are not enough: side-by-side rectangles interleave their rows without
 * touching. With d the distance between the starts, the rectangles meet
 * when d = dx + dy * row + dz * slice for some |dx| < region[0],
 * |dy| < region[1], |dz| < region[2]; because row >= region[0] and
 * slice >= region[1] * row, only two values of dz, and then of dy, can
 * work. */
static int rect_same_pitch_overlap(size_t d, const size_t region[3], size_t row, size_t slice) {
  for (size_t dz = d / slice; dz <= d / slice + 1; dz++) {
    if (dz >= region[2]) continue;
    long long e = (long long)(d - dz * slice); /* in (-slice, slice) */
    long long dy0 = e >= 0 ? e / (long long)row : -((-e + (long long)row - 1) / (long long)row);
    for (long long dy = dy0; dy <= dy0 + 1; dy++) {
      if (dy >= (long long)region[1] || -dy >= (long long)region[1]) continue;
      long long dx = e - dy * (long long)row;
      if (dx < (long long)region[0] && -dx < (long long)region[0]) return 1;
    }
  }
  return 0;
}

static int rect_copy_overlaps(const char *src, size_t src_row, size_t src_slice, const char *dst,
                              size_t dst_row, size_t dst_slice, const size_t region[3]) {
  const char *src_end = src + (region[2] - 1) * src_slice + (region[1] - 1) * src_row + region[0];
  const char *dst_end = dst + (region[2] - 1) * dst_slice + (region[1] - 1) * dst_row + region[0];
  if (src >= dst_end || dst >= src_end) return 0;
  /* Different pitches only happen for different (sub-)buffers: the
   * bounding ranges are the conservative answer there. */
  if (src_row != dst_row || src_slice != dst_slice) return 1;
  size_t d = src > dst ? (size_t)(src - dst) : (size_t)(dst - src);
  return rect_same_pitch_overlap(d, region, src_row, src_slice);
}

AQUILA_API cl_int clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst,
                                          const size_t *src_origin, const size_t *dst_origin,
                                          const size_t *region, size_t src_row_pitch,
                                          size_t src_slice_pitch, size_t dst_row_pitch,
                                          size_t dst_slice_pitch, cl_uint num_wait,
                                          const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_buffer(src) || !mem_is_buffer(dst)) return CL_INVALID_MEM_OBJECT;
  if (src->context != q->context || dst->context != q->context) return CL_INVALID_CONTEXT;
  size_t soff, doff;
  if (!rect_setup(src_origin, region, &src_row_pitch, &src_slice_pitch, src->size, &soff) ||
      !rect_setup(dst_origin, region, &dst_row_pitch, &dst_slice_pitch, dst->size, &doff))
    return CL_INVALID_VALUE;
  if (src == dst && (src_row_pitch != dst_row_pitch || src_slice_pitch != dst_slice_pitch))
    return CL_INVALID_VALUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  if (rect_copy_overlaps(src->data + soff, src_row_pitch, src_slice_pitch, dst->data + doff,
                         dst_row_pitch, dst_slice_pitch, region))
    return CL_MEM_COPY_OVERLAP;
  return enqueue_copy(q, CL_COMMAND_COPY_BUFFER_RECT, src, dst, dst->data + doff, src->data + soff,
                      region, dst_row_pitch, dst_slice_pitch, src_row_pitch, src_slice_pitch,
                      CL_FALSE, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueFillBuffer(cl_command_queue q, cl_mem buffer, const void *pattern,
                                      size_t pattern_size, size_t offset, size_t size,
                                      cl_uint num_wait, const cl_event *wait_list,
                                      cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!mem_is_buffer(buffer)) return CL_INVALID_MEM_OBJECT;
  if (buffer->context != q->context) return CL_INVALID_CONTEXT;
  if (!pattern || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) ||
      offset % pattern_size || size % pattern_size || !region_in_bounds(buffer->size, offset, size))
    return CL_INVALID_VALUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  cl_event ev = event_create_command(q, CL_COMMAND_FILL_BUFFER, COMMAND_FILL);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  ev->u.fill.dst = buffer->data + offset;
  ev->u.fill.size = size;
  memcpy(ev->u.fill.pattern, pattern, pattern_size);
  ev->u.fill.pattern_size = pattern_size;
  if (retain_mem(ev, buffer)) {
    event_release_internal(ev);
    return CL_OUT_OF_HOST_MEMORY;
  }
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

AQUILA_API void *clEnqueueMapBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                    cl_map_flags map_flags, size_t offset, size_t size,
                                    cl_uint num_wait, const cl_event *wait_list, cl_event *event,
                                    cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  void *result = NULL;
  if (queue_check(q))
    err = CL_INVALID_COMMAND_QUEUE;
  else if (!mem_is_buffer(buffer))
    err = CL_INVALID_MEM_OBJECT;
  else if (buffer->context != q->context)
    err = CL_INVALID_CONTEXT;
  else if (size == 0 || !region_in_bounds(buffer->size, offset, size) ||
           (map_flags &
            ~(cl_map_flags)(CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) ||
           ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) &&
            (map_flags & (CL_MAP_READ | CL_MAP_WRITE))))
    err = CL_INVALID_VALUE;
  else if ((err = check_wait_list(q, num_wait, wait_list)) != CL_SUCCESS) {
  } else if ((map_flags & CL_MAP_READ) &&
             (buffer->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)))
    err = CL_INVALID_OPERATION;
  else if ((map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) &&
           (buffer->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)))
    err = CL_INVALID_OPERATION;
  else {
    cl_event ev = event_create_command(q, CL_COMMAND_MAP_BUFFER, COMMAND_MAP);
    int writes = (map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0;
    if (!ev || retain_mem_access(ev, buffer, writes)) {
      if (ev) event_release_internal(ev);
      err = CL_OUT_OF_HOST_MEMORY;
    } else {
      /* The buffer's own storage is the mapping: no copy either way. */
      atomic_fetch_add(&buffer->map_count, 1);
      result = buffer->data + offset;
      err = finish_enqueue(ev, num_wait, wait_list, blocking, event);
      if (err) result = NULL;
    }
  }
  if (errcode_ret) *errcode_ret = err;
  return result;
}

AQUILA_API cl_int clEnqueueUnmapMemObject(cl_command_queue q, cl_mem memobj, void *mapped_ptr,
                                          cl_uint num_wait, const cl_event *wait_list,
                                          cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!object_is(memobj, OBJECT_MEM)) return CL_INVALID_MEM_OBJECT;
  if (memobj->context != q->context) return CL_INVALID_CONTEXT;
  if (!mapped_ptr || (char *)mapped_ptr < memobj->data ||
      (char *)mapped_ptr > memobj->data + memobj->size || atomic_load(&memobj->map_count) == 0)
    return CL_INVALID_VALUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  cl_event ev = event_create_command(q, CL_COMMAND_UNMAP_MEM_OBJECT, COMMAND_UNMAP);
  if (!ev || retain_mem(ev, memobj)) {
    if (ev) event_release_internal(ev);
    return CL_OUT_OF_HOST_MEMORY;
  }
  atomic_fetch_sub(&memobj->map_count, 1);
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

AQUILA_API cl_int clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint num_mem_objects,
                                             const cl_mem *mem_objects,
                                             cl_mem_migration_flags flags, cl_uint num_wait,
                                             const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (num_mem_objects == 0 || !mem_objects) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_mem_objects; i++) {
    if (!object_is(mem_objects[i], OBJECT_MEM)) return CL_INVALID_MEM_OBJECT;
    if (mem_objects[i]->context != q->context) return CL_INVALID_CONTEXT;
  }
  if (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST |
                                        CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
    return CL_INVALID_VALUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  /* Host and device share memory: migration is an ordering point only. */
  cl_event ev = event_create_command(q, CL_COMMAND_MIGRATE_MEM_OBJECTS, COMMAND_NONE);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

/* ---- markers and barriers --------------------------------------------------- */

static cl_int enqueue_sync(cl_command_queue q, cl_command_type type, cl_uint num_wait,
                           const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  cl_event ev = event_create_command(q, type, COMMAND_NONE);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  /* Without a wait list a marker or barrier waits for every earlier command,
   * which in an out-of-order queue means all of those still outstanding. */
  if (num_wait == 0 && (q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {
    event_hand_out(ev, event);
    command_submit_after_all(ev);
    return CL_SUCCESS;
  }
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

static cl_int enqueue_empty_range(cl_command_queue q, cl_uint num_wait, const cl_event *wait_list,
                                  cl_event *event) {
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  cl_event ev = event_create_command(q, CL_COMMAND_NDRANGE_KERNEL, COMMAND_NONE);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

AQUILA_API cl_int clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint num_wait,
                                              const cl_event *wait_list, cl_event *event) {
  return enqueue_sync(q, CL_COMMAND_MARKER, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint num_wait,
                                               const cl_event *wait_list, cl_event *event) {
  return enqueue_sync(q, CL_COMMAND_BARRIER, num_wait, wait_list, event);
}

AQUILA_API cl_int clEnqueueMarker(cl_command_queue q, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!event) return CL_INVALID_VALUE;
  return enqueue_sync(q, CL_COMMAND_MARKER, 0, NULL, event);
}

AQUILA_API cl_int clEnqueueBarrier(cl_command_queue q) {
  return enqueue_sync(q, CL_COMMAND_BARRIER, 0, NULL, NULL);
}

AQUILA_API cl_int clEnqueueWaitForEvents(cl_command_queue q, cl_uint num_events,
                                         const cl_event *event_list) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (num_events == 0 || !event_list) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_events; i++)
    if (!object_is(event_list[i], OBJECT_EVENT))
      return CL_INVALID_EVENT;
    else if (event_list[i]->context != q->context)
      return CL_INVALID_CONTEXT;
  return enqueue_sync(q, CL_COMMAND_BARRIER, num_events, event_list, NULL);
}

/* ---- kernels ------------------------------------------------------------------ */

static int program_device_slot(cl_program p, cl_device_id d) {
  for (cl_uint i = 0; i < p->num_devices; i++)
    if (p->devices[i] == d && p->per_device[i].loaded) return (int)i;
  return -1;
}

/* A local size for a dimension when the application gave none: the largest
 * divisor of the global size that still leaves every compute unit several
 * work-groups, so that stealing can balance them. */
static size_t pick_local_size(size_t global, size_t limit, uint32_t units) {
  size_t target = global / (8 * (size_t)units);
  if (target < 64) target = 64;
  if (target > limit) target = limit;
  for (size_t d = target; d > 1; d--)
    if (global % d == 0) return d;
  return 1;
}

/* Whether the kernel's last work-groups may be partial (OpenCL 2.0's
 * non-uniform work-groups): its program is OpenCL C 2.0 or later, or
 * SPIR-V (but for a SPIR-V kernel that requires a work-group size:
 * compiler/frontend/spirv.c), without -cl-uniform-work-group-size. The
 * compiler decides the same from the kernel (compiler/workgroup/workgroup.c):
 * such code takes no work-group size as every group's. Asked only of a
 * launch whose sizes do not divide. */
static int kernel_allows_partial_groups(cl_kernel k) {
  cl_program p = k->program;
  const uint32_t *reqd = k->meta->reqd_work_group_size;
  if (p->il && (reqd[0] || reqd[1] || reqd[2])) return 0;
  const char *options = p->fatbin && p->fatbin->build_options ? p->fatbin->build_options
                        : p->options                          ? p->options
                                                              : "";
  if (strstr(options, "-cl-uniform-work-group-size")) return 0;
  if (p->il) return 1;
  const char *std = NULL;
  for (const char *s = strstr(options, "-cl-std="); s; s = strstr(s + 1, "-cl-std="))
    std = s + 8;
  return std && (!strncmp(std, "CL2.", 4) || !strncmp(std, "CL3.", 4));
}

/* CL_INVALID_KERNEL_ARGS unless every argument is set and names a live
 * memory object where it names one; under the kernel's args_lock. */
static cl_int kernel_args_ready(cl_kernel kernel) {
  const struct aquila_fatbin_kernel *meta = kernel->meta;
  for (uint32_t i = 0; i < meta->num_args; i++)
    if (!kernel->args[i].set) {
      debug_log("clEnqueueNDRangeKernel: argument %u of '%s' is not set", i, meta->name);
      return CL_INVALID_KERNEL_ARGS;
    } else if (kernel->args[i].mem && !object_is(kernel->args[i].mem, OBJECT_MEM)) {
      /* Arguments are not retained: the application released this memory
       * object after clSetKernelArg (its header is in object.c's
       * quarantine), and the kernel would write to freed storage. */
      debug_log("clEnqueueNDRangeKernel: argument %u of '%s' is a memory object released since "
                "clSetKernelArg",
                i, meta->name);
      return CL_INVALID_KERNEL_ARGS;
    }
  return CL_SUCCESS;
}

AQUILA_API cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                                         const size_t *global_work_offset,
                                         const size_t *global_work_size,
                                         const size_t *local_work_size, cl_uint num_wait,
                                         const cl_event *wait_list, cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!object_is(kernel, OBJECT_KERNEL)) return CL_INVALID_KERNEL;
  int slot = program_device_slot(kernel->program, q->device);
  if (slot < 0) return CL_INVALID_PROGRAM_EXECUTABLE;
  if (kernel->program->context != q->context) return CL_INVALID_CONTEXT;
  /* The kernel's first launch on this device makes its code. */
  cl_int code_err = kernel_code_ready(kernel, (cl_uint)slot);
  if (code_err) return code_err;
  const struct aquila_fatbin_kernel *meta = kernel->meta;
  pthread_mutex_lock(&kernel->args_lock);
  cl_int args_err = kernel_args_ready(kernel);
  pthread_mutex_unlock(&kernel->args_lock);
  if (args_err) return args_err;
  if (work_dim < 1 || work_dim > 3) return CL_INVALID_WORK_DIMENSION;
  /* OpenCL 2.1 and later: a range without work-items (no global size, or a
   * 0 in it) is a kernel command that completes once its wait list has. */
  int empty = !global_work_size;
  for (cl_uint d = 0; !empty && d < work_dim; d++)
    empty = global_work_size[d] == 0;
  if (empty) return enqueue_empty_range(q, num_wait, wait_list, event);
  for (cl_uint d = 0; d < work_dim; d++)
    if (global_work_size[d] > UINT32_MAX) return CL_INVALID_GLOBAL_WORK_SIZE;
  if (global_work_offset)
    for (cl_uint d = 0; d < work_dim; d++)
      if (global_work_size[d] + global_work_offset[d] < global_work_size[d])
        return CL_INVALID_GLOBAL_OFFSET;
  cl_device_id dev = q->device;
  size_t local[3] = {1, 1, 1}, global[3] = {1, 1, 1}, offset[3] = {0, 0, 0};
  const uint32_t *reqd = meta->reqd_work_group_size;
  int has_reqd = reqd[0] || reqd[1] || reqd[2];
  for (cl_uint d = 0; d < work_dim; d++) {
    global[d] = global_work_size[d];
    if (global_work_offset) offset[d] = global_work_offset[d];
  }
  /* A dimension past work_dim has a work-group size of 1, which must be
   * the required one too: a kernel built for 8 x 8 groups cannot run in
   * rows of 8 (its code takes the required size as the size). */
  if (has_reqd)
    for (cl_uint d = work_dim; d < 3; d++)
      if (reqd[d] > 1) {
        debug_log("clEnqueueNDRangeKernel: the kernel requires %u work-items along dimension %u, "
                  "which a %u-dimensional range does not have",
                  reqd[d], d, work_dim);
        return CL_INVALID_WORK_GROUP_SIZE;
      }
  int partial = 0; /* a last work-group is partial */
  if (local_work_size) {
    size_t total = 1;
    for (cl_uint d = 0; d < work_dim; d++) {
      if (local_work_size[d] == 0) return CL_INVALID_WORK_GROUP_SIZE;
      partial |= global[d] % local_work_size[d] != 0;
      if (has_reqd && local_work_size[d] != reqd[d]) return CL_INVALID_WORK_GROUP_SIZE;
      local[d] = local_work_size[d];
      total *= local[d];
    }
    if (total > dev->max_work_group_size) return CL_INVALID_WORK_GROUP_SIZE;
    for (cl_uint d = 0; d < work_dim; d++)
      if (local[d] > dev->max_work_group_size) return CL_INVALID_WORK_ITEM_SIZE;
  } else if (has_reqd) {
    for (cl_uint d = 0; d < work_dim; d++) {
      partial |= global[d] % reqd[d] != 0;
      local[d] = reqd[d];
    }
  } else {
    size_t budget = dev->max_work_group_size;
    for (cl_uint d = 0; d < work_dim; d++) {
      local[d] = d == 0 ? pick_local_size(global[d], budget, dev->compute_units) : 1;
      budget /= local[d];
    }
    /* A size without a good divisor (a prime: groups of 1 work-item, each
     * a call) gets whole groups of 64 and a partial last one, where the
     * program allows partial groups. */
    if (global[0] >= 128 && local[0] < 16 && kernel_allows_partial_groups(kernel)) {
      local[0] = 64;
      partial = global[0] % 64 != 0;
    }
  }
  if (partial && !kernel_allows_partial_groups(kernel)) {
    debug_log("clEnqueueNDRangeKernel: the global size is not a multiple of the work-group size, "
              "which needs a program of OpenCL C 2.0 or later built without "
              "-cl-uniform-work-group-size");
    return CL_INVALID_WORK_GROUP_SIZE;
  }
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;

  cl_event ev = event_create_command(q, CL_COMMAND_NDRANGE_KERNEL, COMMAND_NDRANGE);
  if (!ev) return CL_OUT_OF_HOST_MEMORY;
  size_t align = meta->kernarg_alignment < 16 ? 16 : meta->kernarg_alignment;
  size_t size = (meta->kernarg_size + align - 1) / align * align;
  unsigned char *kernarg = aligned_alloc(align, size);
  if (!kernarg) {
    event_release_internal(ev);
    return CL_OUT_OF_HOST_MEMORY;
  }
  /* The snapshot of the arguments, checked again under the lock: another
   * thread may have set them since (the application's race, which may
   * give either value but never half of one). */
  pthread_mutex_lock(&kernel->args_lock);
  err = kernel_args_ready(kernel);
  memcpy(kernarg, kernel->arg_values, meta->kernarg_size);
  /* Static __local variables come first in the group segment (cpu_abi.h). */
  uint64_t group_segment = meta->local_mem_size;
  int svm_args = 0; /* SVM pointers: memory only the host's agents reach */
  for (uint32_t i = 0; !err && i < meta->num_args; i++) {
    const struct aquila_fatbin_arg *a = &meta->args[i];
    if (a->kind == AQUILA_ARG_GLOBAL_PTR || a->kind == AQUILA_ARG_CONSTANT_PTR) {
      cl_mem m = kernel->args[i].mem;
      uint64_t addr = m ? (uint64_t)(uintptr_t)m->data : 0;
      /* On a remote device, the address of the buffer's copy there. */
      if (m && device_root(dev)->remote && !err) err = mem_device_address(m, dev, &addr);
      /* An SVM pointer is in the kernarg image already; a host address
       * means nothing on a device without SVM (svm.c). */
      if (kernel->args[i].pointer && !device_svm_capabilities(dev) && !err) {
        debug_log("clEnqueueNDRangeKernel: argument %u of '%s' is an SVM pointer, and '%s' has "
                  "no SVM",
                  i, meta->name, dev->name);
        err = CL_INVALID_OPERATION;
      }
      if (!kernel->args[i].pointer) memcpy(kernarg + a->offset, &addr, sizeof addr);
      svm_args |= kernel->args[i].pointer;
      /* A read-only buffer or a __constant one is not written by a correct
       * kernel, nor one the compiler saw no write through (launch_footprint.c). */
      int writes = a->kind == AQUILA_ARG_GLOBAL_PTR && m && !(m->flags & CL_MEM_READ_ONLY) &&
                   footprint_arg_written(meta, i);
      if (m && retain_mem_access(ev, m, writes)) err = CL_OUT_OF_HOST_MEMORY;
      if (m) mem_pages_touched(m);
      /* Where each buffer's address is, for a spread NDRange (spread.c):
       * only in contexts with a remote device, the only ones spread. */
      if (m && !err && q->context->has_remote) {
        uint32_t *o = realloc(ev->u.ndrange.mem_arg_offset, ev->num_retained_mems * sizeof *o);
        if (!o) err = CL_OUT_OF_HOST_MEMORY;
        if (o) {
          ev->u.ndrange.mem_arg_offset = o;
          o[ev->num_retained_mems - 1] = a->offset;
        }
      }
    } else if (a->kind == AQUILA_ARG_IMAGE) {
      /* The HSA image handle is what code sees (the address of its
       * struct aquila_image); on a remote device, the daemon's image over
       * the copy there. The command keeps the image alive; a read_only
       * argument is not written. */
      cl_mem m = kernel->args[i].mem;
      uint64_t handle = m->image_handle;
      if (device_root(dev)->remote) err = image_device_handle(m, dev, &handle);
      memcpy(kernarg + a->offset, &handle, sizeof handle);
      int writes = a->access_qualifier != CL_KERNEL_ARG_ACCESS_READ_ONLY;
      if (!err && retain_mem_access(ev, m, writes)) err = CL_OUT_OF_HOST_MEMORY;
      mem_pages_touched(m);
      if (!err && q->context->has_remote) {
        /* Not a buffer address: nothing for a spread NDRange to move. */
        uint32_t *o = realloc(ev->u.ndrange.mem_arg_offset, ev->num_retained_mems * sizeof *o);
        if (!o) err = CL_OUT_OF_HOST_MEMORY;
        if (o) {
          ev->u.ndrange.mem_arg_offset = o;
          o[ev->num_retained_mems - 1] = UINT32_MAX;
        }
      }
    } else if (a->kind == AQUILA_ARG_LOCAL_PTR) {
      group_segment = (group_segment + AQUILA_GROUP_SEGMENT_ALIGNMENT - 1) &
                      ~(uint64_t)(AQUILA_GROUP_SEGMENT_ALIGNMENT - 1);
      memcpy(kernarg + a->offset, &group_segment, sizeof group_segment);
      group_segment += kernel->args[i].local_size;
    }
  }
  struct ndrange_check *check = NULL;
  /* The scalar twin of the check would update program-scope variables a
   * second time, and has sub-groups of one work-item. */
  if (!err && vector_check_enabled() && !program_compiled_whole(kernel->program))
    check = vector_check_create(kernel);
  pthread_mutex_unlock(&kernel->args_lock);
  if (group_segment > dev->local_mem_size) err = CL_OUT_OF_RESOURCES;
  if (kernel->private_size > AQUILA_PRIVATE_SEGMENT_MAX) {
    debug_log("clEnqueueNDRangeKernel: '%s' needs %u bytes of private memory per work-group, "
              "over the limit of %u",
              meta->name, kernel->private_size, AQUILA_PRIVATE_SEGMENT_MAX);
    err = CL_OUT_OF_RESOURCES;
  }
  struct aquila_hidden_kernargs hidden = {{offset[0], offset[1], offset[2]}, 0};
  memcpy(kernarg + meta->hidden_kernarg_offset, &hidden, sizeof hidden);
  ev->u.ndrange.kernarg = kernarg;
  ev->u.ndrange.check = check;
  if (err) {
    event_release_internal(ev); /* frees the kernarg and check, releases the buffers */
    return err;
  }
  ev->u.ndrange.dims = work_dim;
  ev->u.ndrange.group_segment_size = (uint32_t)group_segment;
  for (int d = 0; d < 3; d++) {
    ev->u.ndrange.workgroup[d] = (uint32_t)local[d];
    ev->u.ndrange.grid[d] = global[d];
  }
  ev->kernel = kernel;
  object_retain(&kernel->header);
  ev->u.ndrange.kernel_object = kernel_object_now(kernel, (cl_uint)slot);
  /* Partial work-groups: no footprint over whole groups, no spreading in
   * chunks of whole groups, no version specialized for one size. */
  if (q->context->has_remote && !partial) mark_overwritten(ev, meta);
  uint64_t groups = 1;
  for (int d = 0; d < 3; d++) groups *= (global[d] + local[d] - 1) / local[d];
  /* Program-scope variables are each device's own, and sub-groups one
   * code object's: one NDRange stays on one device. */
  ev->u.ndrange.spread = !svm_args && !partial && spread_eligible(q, kernel, groups) &&
                         ev->u.ndrange.mem_arg_offset != NULL &&
                         !program_compiled_whole(kernel->program);
  /* A spread launch runs each device's usual code (spread.c). */
  if (!ev->u.ndrange.spread && !partial)
    ev->u.ndrange.kernel_object =
        specialize_kernel_object(kernel, (cl_uint)slot, local, ev->u.ndrange.kernel_object);
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

AQUILA_API cl_int clEnqueueTask(cl_command_queue q, cl_kernel kernel, cl_uint num_wait,
                                const cl_event *wait_list, cl_event *event) {
  size_t one = 1;
  return clEnqueueNDRangeKernel(q, kernel, 1, NULL, &one, &one, num_wait, wait_list, event);
}

/* A native kernel is a host function run on a scheduler worker. Its
 * argument block is copied at enqueue; the copy's slots named by
 * args_mem_loc get the addresses of the buffers in mem_list, which the
 * command keeps alive until it has run. */
AQUILA_API cl_int clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK *user_func)(void *),
                                        void *args, size_t cb_args, cl_uint num_mem_objects,
                                        const cl_mem *mem_list, const void **args_mem_loc,
                                        cl_uint num_wait, const cl_event *wait_list,
                                        cl_event *event) {
  if (queue_check(q)) return CL_INVALID_COMMAND_QUEUE;
  /* A remote device has no CL_EXEC_NATIVE_KERNEL: a host function cannot run there. */
  if (device_root(q->device)->remote) return CL_INVALID_OPERATION;
  if (!user_func) return CL_INVALID_VALUE;
  if (!args && (cb_args > 0 || num_mem_objects > 0)) return CL_INVALID_VALUE;
  if (args && cb_args == 0) return CL_INVALID_VALUE;
  if (num_mem_objects > 0 && (!mem_list || !args_mem_loc)) return CL_INVALID_VALUE;
  if (num_mem_objects == 0 && (mem_list || args_mem_loc)) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_mem_objects; i++) {
    if (!mem_is_buffer(mem_list[i]) || mem_list[i]->context != q->context)
      return CL_INVALID_MEM_OBJECT;
    const char *loc = args_mem_loc[i];
    if (!loc || loc < (const char *)args || loc + sizeof(void *) > (const char *)args + cb_args)
      return CL_INVALID_VALUE;
  }
  cl_int err = check_wait_list(q, num_wait, wait_list);
  if (err) return err;
  cl_event ev = event_create_command(q, CL_COMMAND_NATIVE_KERNEL, COMMAND_NATIVE);
  char *copy = cb_args ? malloc(cb_args) : NULL;
  if (!ev || (cb_args && !copy)) {
    free(copy);
    if (ev) event_release_internal(ev);
    return CL_OUT_OF_HOST_MEMORY;
  }
  if (cb_args) memcpy(copy, args, cb_args);
  ev->u.native.fn = user_func;
  ev->u.native.args = copy;
  for (cl_uint i = 0; i < num_mem_objects; i++) {
    size_t offset = (size_t)((const char *)args_mem_loc[i] - (const char *)args);
    void *addr = mem_list[i]->data;
    memcpy(copy + offset, &addr, sizeof addr);
    if (retain_mem(ev, mem_list[i])) {
      event_release_internal(ev);
      return CL_OUT_OF_HOST_MEMORY;
    }
  }
  return finish_enqueue(ev, num_wait, wait_list, CL_FALSE, event);
}

hsa_kernel_dispatch_packet_t *ndrange_packet(hsa_queue_t *hq, cl_event ev, uint64_t kernel_object,
                                             void *kernarg, hsa_signal_t signal,
                                             uint64_t group_range, uint64_t *index_out) {
  uint64_t index = hsa_queue_add_write_index_scacq_screl(hq, 1);
  while (index - hsa_queue_load_read_index_scacquire(hq) >= hq->size)
    sched_yield();
  hsa_kernel_dispatch_packet_t *pkt =
      (hsa_kernel_dispatch_packet_t *)hq->base_address + (index & (hq->size - 1));
  pkt->workgroup_size_x = (uint16_t)ev->u.ndrange.workgroup[0];
  pkt->workgroup_size_y = (uint16_t)ev->u.ndrange.workgroup[1];
  pkt->workgroup_size_z = (uint16_t)ev->u.ndrange.workgroup[2];
  pkt->reserved0 = 0;
  pkt->grid_size_x = (uint32_t)ev->u.ndrange.grid[0];
  pkt->grid_size_y = (uint32_t)ev->u.ndrange.grid[1];
  pkt->grid_size_z = (uint32_t)ev->u.ndrange.grid[2];
  pkt->private_segment_size = 0;
  pkt->group_segment_size = ev->u.ndrange.group_segment_size;
  pkt->kernel_object = kernel_object;
  pkt->kernarg_address = kernarg;
  pkt->reserved2 = group_range;
  pkt->completion_signal = signal;
  *index_out = index;
  return pkt;
}

void ndrange_publish(hsa_queue_t *hq, hsa_kernel_dispatch_packet_t *pkt, uint64_t index,
                     int barrier, uint32_t dims) {
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    ((barrier ? 1 : 0) << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  __atomic_store_n((uint32_t *)pkt, (uint32_t)header | (dims << 16), __ATOMIC_RELEASE);
  hsa_signal_store_screlease(hq->doorbell_signal, (hsa_signal_value_t)index);
}

void ndrange_submit(cl_event ev) {
  cl_command_queue q = ev->queue;
  cl_device_id dev = q->device;
  if (ev->u.ndrange.spread) {
    spread_start(ev);
    return;
  }
  /* The buffers' bytes where the kernel runs (residency.c). */
  for (size_t i = 0; q->context->has_remote && i < ev->num_retained_mems; i++) {
    cl_int err = mem_prepare_for_device(ev->retained_mems[i], dev, ev->mem_writes[i]);
    if (err) {
      event_complete(ev, err);
      return;
    }
  }
  hsa_queue_t *hq = q->hsa_queue;
  uint64_t kernel_object = ev->u.ndrange.kernel_object;
  int barrier = ev->u.ndrange.barrier_bit;
  uint16_t dims = (uint16_t)ev->u.ndrange.dims;
  hsa_signal_t signal = device_acquire_signal(dev);
  event_set_status(ev, CL_SUBMITTED);

  uint64_t index;
  hsa_kernel_dispatch_packet_t *pkt =
      ndrange_packet(hq, ev, kernel_object, ev->u.ndrange.kernarg, signal, 0, &index);

  if (ev->u.ndrange.check) vector_check_register(ev->u.ndrange.check, ev->u.ndrange.kernarg);
  pthread_mutex_lock(&ev->lock);
  ev->u.ndrange.signal = signal;
  ev->u.ndrange.packet_index = index;
  ev->u.ndrange.submitted = 1;
  ev->u.ndrange.published_ns = now_ns();
  pthread_mutex_unlock(&ev->lock);
  device_watch(dev, ev);

  /* RUNNING before the header is published, and a reference until the
   * doorbell rang: once the packet can run, the watcher may complete ev and
   * drop the last references to it and to its queue. A packet behind the
   * barrier bit still waits for the kernels before it: it stays SUBMITTED
   * and goes straight to COMPLETE (RUNNING callbacks run then, in order). */
  if (!barrier) event_set_status(ev, CL_RUNNING);
  object_retain(&ev->header);
  ndrange_publish(hq, pkt, index, barrier, dims);
  event_release_internal(ev);
}
