/* Events: the status of a command or a user event, its callbacks, its
 * profiling times, and the dependency edges the scheduler follows. A command
 * becomes ready when its count of unfinished dependencies drops to zero;
 * completing an event walks its dependents (iteratively, so a long chain of
 * markers never deepens the stack). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <hsa/hsa_ext_amd.h>

#include "aquila/hsa_ext_aquila.h"
#include "aquila/trace.h"
#include "runtime.h"

void command_execute(cl_event ev);
int command_run_in_place(cl_event ev);

cl_event event_create_command(cl_command_queue q, cl_command_type type, enum command_kind kind) {
  cl_event ev = calloc(1, sizeof *ev);
  if (!ev) return NULL;
  object_init(&ev->header, OBJECT_EVENT);
  ev->context = q ? q->context : NULL;
  ev->queue = q;
  ev->type = type;
  ev->kind = kind;
  atomic_init(&ev->status, CL_QUEUED);
  atomic_init(&ev->pending, 1); /* held until command_submit has added every dependency */
  pthread_mutex_init(&ev->lock, NULL);
  pthread_cond_init(&ev->cond, NULL);
  if (q) {
    object_retain(&q->header);
    if (queue_takes_times(q)) ev->t_queued = now_ns();
  }
  return ev;
}

static void release_command_resources(cl_event ev);

static void event_free(cl_event ev) {
  /* A command dropped before it ran (an enqueue that failed half-way)
   * still holds its buffers and kernel. */
  release_command_resources(ev);
  struct event_callback *cb = ev->callbacks;
  while (cb) {
    struct event_callback *next = cb->next;
    free(cb);
    cb = next;
  }
  cl_command_queue q = ev->queue;
  cl_context ctx = ev->context;
  pthread_mutex_destroy(&ev->lock);
  pthread_cond_destroy(&ev->cond);
  object_free(ev);
  if (q)
    clReleaseCommandQueue(q);
  else if (ctx)
    clReleaseContext(ctx);
}

void event_release_internal(cl_event ev) {
  if (object_release(&ev->header)) event_free(ev);
}

void event_hand_out(cl_event ev, cl_event *out) {
  if (out) {
    object_retain(&ev->header);
    *out = ev;
  }
}

cl_int event_check_wait_list(cl_context ctx, cl_uint num, const cl_event *list) {
  if ((num == 0) != (list == NULL)) return CL_INVALID_EVENT_WAIT_LIST;
  for (cl_uint i = 0; i < num; i++) {
    if (!object_is(list[i], OBJECT_EVENT)) return CL_INVALID_EVENT_WAIT_LIST;
    if (ctx && list[i]->context != ctx) return CL_INVALID_CONTEXT;
  }
  return CL_SUCCESS;
}

/* Runs the callbacks whose threshold the new status has reached, in the
 * order SUBMITTED, RUNNING, COMPLETE; each exactly once. */
static void run_callbacks(cl_event ev, cl_int status) {
  static const cl_int thresholds[] = {CL_SUBMITTED, CL_RUNNING, CL_COMPLETE};
  for (int t = 0; t < 3; t++) {
    if (status > thresholds[t]) break;
    for (;;) {
      pthread_mutex_lock(&ev->lock);
      struct event_callback **pp = &ev->callbacks, *cb = NULL;
      while (*pp) {
        if ((*pp)->status == thresholds[t]) {
          cb = *pp;
          *pp = cb->next;
          break;
        }
        pp = &(*pp)->next;
      }
      pthread_mutex_unlock(&ev->lock);
      if (!cb) break;
      cb->fn(ev, thresholds[t] == CL_COMPLETE ? status : thresholds[t], cb->data);
      free(cb);
    }
  }
}

void event_set_status(cl_event ev, cl_int status) {
  if (ev->queue && queue_takes_times(ev->queue)) {
    uint64_t t = now_ns();
    if (status == CL_SUBMITTED) ev->t_submit = t;
    if (status == CL_RUNNING) ev->t_start = t;
  }
  /* The callback list is read under the lock that clSetEventCallback
   * appends under (TSan saw the unlocked read race with an append). */
  pthread_mutex_lock(&ev->lock);
  if (atomic_load(&ev->status) > status) atomic_store(&ev->status, status);
  int has_callbacks = ev->callbacks != NULL;
  pthread_mutex_unlock(&ev->lock);
  if (has_callbacks) run_callbacks(ev, status);
}

/* Called when pending reached zero: start the command. Returns 1 when the
 * command finished on the spot (a marker), so that the caller completes it. */
static int event_start(cl_event ev) {
  if (AQ_TRACE_ON() && ev->queue) ev->t_ready = now_ns();
  if (ev->failed_dependency) return 1;
  switch (ev->kind) {
  case COMMAND_NONE:
    event_set_status(ev, CL_SUBMITTED);
    event_set_status(ev, CL_RUNNING);
    return 1;
  case COMMAND_NDRANGE:
    ndrange_submit(ev);
    return 0;
  default:
    event_set_status(ev, CL_SUBMITTED);
    if (command_run_in_place(ev)) return 1;
    scheduler_push_ready(ev);
    return 0;
  }
}

struct completion_item {
  cl_event ev;
  cl_int status;
};

struct completion_list {
  struct completion_item *items;
  size_t len, cap;
};

static void completion_push(struct completion_list *l, cl_event ev, cl_int status) {
  if (l->len == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 16;
    l->items = realloc(l->items, l->cap * sizeof *l->items);
    if (!l->items) abort();
  }
  l->items[l->len++] = (struct completion_item){ev, status};
}

static void release_command_resources(cl_event ev) {
  for (size_t i = 0; i < ev->num_retained_mems; i++)
    clReleaseMemObject(ev->retained_mems[i]);
  free(ev->retained_mems);
  free(ev->mem_writes);
  ev->retained_mems = NULL;
  ev->mem_writes = NULL;
  ev->num_retained_mems = 0;
  if (ev->kind == COMMAND_NDRANGE) {
    /* The check first: its registration is keyed by the kernarg's address. */
    vector_check_free(ev->u.ndrange.check);
    ev->u.ndrange.check = NULL;
    free(ev->u.ndrange.kernarg);
    ev->u.ndrange.kernarg = NULL;
    free(ev->u.ndrange.mem_arg_offset);
    ev->u.ndrange.mem_arg_offset = NULL;
  }
  if (ev->kind == COMMAND_NATIVE) {
    free(ev->u.native.args);
    ev->u.native.args = NULL;
  }
  if (ev->kernel) {
    kernel_release_internal(ev->kernel);
    ev->kernel = NULL;
  }
}

/* How a kernel's command that has finished on the device ends: CL_COMPLETE,
 * or CL_OUT_OF_RESOURCES when its code faulted (a wild pointer: the HSA
 * layer stopped the dispatch instead of letting the process die;
 * hsa_ext_aquila.h), which is what OpenCL implementations report for a
 * kernel's memory fault on a GPU. */
static cl_int kernel_outcome(cl_event ev) {
  if (ev->u.ndrange.check) vector_check_report(ev, ev->u.ndrange.check);
  hsa_ven_aquila_dispatch_fault_t fault;
  if (hsa_ven_aquila_signal_dispatch_status(ev->u.ndrange.signal, &fault) == HSA_STATUS_SUCCESS)
    return CL_COMPLETE;
  debug_log("kernel '%s' faulted (%s at address %#llx) in work-group (%u, %u, %u): its "
            "command ends with CL_OUT_OF_RESOURCES",
            ev->kernel && ev->kernel->meta ? ev->kernel->meta->name : "?", strsignal(fault.signal),
            (unsigned long long)fault.address, fault.group_id[0], fault.group_id[1],
            fault.group_id[2]);
  return CL_OUT_OF_RESOURCES;
}

static const char *command_type_name(cl_command_type type) {
  switch (type) {
  case CL_COMMAND_NDRANGE_KERNEL:
    return "NDRange kernel";
  case CL_COMMAND_TASK:
    return "task";
  case CL_COMMAND_NATIVE_KERNEL:
    return "native kernel";
  case CL_COMMAND_READ_BUFFER:
    return "read buffer";
  case CL_COMMAND_WRITE_BUFFER:
    return "write buffer";
  case CL_COMMAND_COPY_BUFFER:
    return "copy buffer";
  case CL_COMMAND_READ_IMAGE:
    return "read image";
  case CL_COMMAND_WRITE_IMAGE:
    return "write image";
  case CL_COMMAND_COPY_IMAGE:
    return "copy image";
  case CL_COMMAND_COPY_IMAGE_TO_BUFFER:
    return "copy image to buffer";
  case CL_COMMAND_COPY_BUFFER_TO_IMAGE:
    return "copy buffer to image";
  case CL_COMMAND_MAP_BUFFER:
    return "map buffer";
  case CL_COMMAND_MAP_IMAGE:
    return "map image";
  case CL_COMMAND_UNMAP_MEM_OBJECT:
    return "unmap";
  case CL_COMMAND_MARKER:
    return "marker";
  case CL_COMMAND_READ_BUFFER_RECT:
    return "read buffer rect";
  case CL_COMMAND_WRITE_BUFFER_RECT:
    return "write buffer rect";
  case CL_COMMAND_COPY_BUFFER_RECT:
    return "copy buffer rect";
  case CL_COMMAND_BARRIER:
    return "barrier";
  case CL_COMMAND_MIGRATE_MEM_OBJECTS:
    return "migrate";
  case CL_COMMAND_FILL_BUFFER:
    return "fill buffer";
  case CL_COMMAND_FILL_IMAGE:
    return "fill image";
  case CL_COMMAND_SVM_FREE:
    return "SVM free";
  case CL_COMMAND_SVM_MEMCPY:
    return "SVM copy";
  case CL_COMMAND_SVM_MEMFILL:
    return "SVM fill";
  case CL_COMMAND_SVM_MAP:
    return "SVM map";
  case CL_COMMAND_SVM_UNMAP:
    return "SVM unmap";
  case CL_COMMAND_SVM_MIGRATE_MEM:
    return "SVM migrate";
  default:
    return "command";
  }
}

/* AQUILA_TRACE: the command's span on its queue's row, named by its
 * kernel or its kind, with its sizes. */
static void trace_command(cl_event ev, cl_int status) {
  struct aq_trace_command t = {.queued = ev->t_queued,
                               .ready = ev->t_ready,
                               .submit = ev->t_submit,
                               .start = ev->t_start,
                               .end = ev->t_end,
                               .type = command_type_name(ev->type),
                               .status = status < 0 ? status : 0};
  const char *name = t.type;
  switch (ev->kind) {
  case COMMAND_NDRANGE: {
    __typeof__(ev->u.ndrange) *n = &ev->u.ndrange;
    t.dims = n->dims;
    t.groups = 1;
    for (uint32_t i = 0; i < 3; i++) {
      t.global[i] = i < n->dims ? n->grid[i] : 1;
      t.local[i] = i < n->dims ? n->workgroup[i] : 1;
      t.groups *= (t.global[i] + t.local[i] - 1) / t.local[i];
    }
    t.packet = n->packet_index;
    if (ev->kernel && ev->kernel->meta) name = ev->kernel->meta->name;
    break;
  }
  case COMMAND_READ:
  case COMMAND_COPY_RECT:
    t.bytes = ev->u.copy.region[0] * ev->u.copy.region[1] * ev->u.copy.region[2];
    break;
  case COMMAND_FILL:
    t.bytes = ev->u.fill.size;
    break;
  default:
    break;
  }
  aq_trace_command(ev->queue->trace_track, name, &t);
}

/* A kernel's start and end: when the agent ran its first work-group and
 * finished its last (its queue profiles: queue.c), rather than when the
 * runtime published the packet and noticed its completion. */
static void kernel_times(cl_event ev) {
  hsa_amd_profiling_dispatch_time_t t;
  if (hsa_amd_profiling_get_dispatch_time(device_root(ev->queue->device)->agent,
                                          ev->u.ndrange.signal, &t) != HSA_STATUS_SUCCESS)
    return;
  /* A time outside the command's (a pooled signal's from an earlier
   * dispatch) is not this kernel's. */
  if (t.start < ev->t_submit || t.end < t.start || t.end > ev->t_end) return;
  ev->t_start = t.start;
  ev->t_end = t.end;
}

/* Completing an event has two phases. The first (complete_one) settles
 * it: its status, its dependents started, its queue's count; events it
 * makes complete at once (markers) follow, iteratively. The second runs,
 * for each event the first settled, what may call back into the
 * application: releasing the command's buffers and kernel (a memory
 * object's destructor callback) and the event's callbacks. An application
 * callback may so enqueue, wait or call clFinish (the specification leaves
 * blocking calls there undefined; they must still not hang): everything it
 * could wait for is settled or in other threads' hands by then. A queue
 * counts its settled events whose second phase has not run; clFinish waits
 * for those too, except inside a callback (completion_depth), where it
 * would wait for itself. */
static _Thread_local int completion_depth;

static void complete_one(cl_event ev, cl_int status, struct completion_list *more,
                         struct completion_list *settled) {
  /* A kernel's outcome is read here, once, by whoever completes it. */
  if (status == CL_COMPLETE && ev->kind == COMMAND_NDRANGE && ev->u.ndrange.submitted)
    status = kernel_outcome(ev);
  if (status == CL_COMPLETE && ev->failed_dependency)
    status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  if (ev->queue && queue_takes_times(ev->queue)) {
    uint64_t t = now_ns();
    if (!ev->t_submit) ev->t_submit = t;
    if (!ev->t_start) ev->t_start = t;
    ev->t_end = t;
    if (ev->kind == COMMAND_NDRANGE && ev->u.ndrange.submitted) kernel_times(ev);
  }
  if (AQ_TRACE_ON() && ev->queue) trace_command(ev, status);
  /* The event lives until its second phase is done (a callback may release
   * the application's last reference; a user event has no other). */
  object_retain(&ev->header);
  pthread_mutex_lock(&ev->lock);
  atomic_store(&ev->status, status);
  struct dependent *deps = ev->dependents;
  ev->dependents = NULL;
  pthread_cond_broadcast(&ev->cond);
  pthread_mutex_unlock(&ev->lock);

  while (deps) {
    struct dependent *next = deps->next;
    cl_event d = deps->event;
    if (status < 0) d->failed_dependency = 1;
    if (atomic_fetch_sub(&d->pending, 1) == 1 && event_start(d))
      completion_push(more, d, CL_COMPLETE);
    free(deps);
    deps = next;
  }

  cl_command_queue q = ev->queue;
  if (q) {
    pthread_mutex_lock(&q->lock);
    q->outstanding--;
    q->callbacks_pending++;
    if (ev->queue_prev)
      ev->queue_prev->queue_next = ev->queue_next;
    else
      q->outstanding_head = ev->queue_next;
    if (ev->queue_next) ev->queue_next->queue_prev = ev->queue_prev;
    ev->unreleased_prev = NULL;
    ev->unreleased_next = q->unreleased_head;
    if (q->unreleased_head) q->unreleased_head->unreleased_prev = ev;
    q->unreleased_head = ev;
    int was_last = q->last == ev;
    if (was_last) q->last = NULL;
    int was_barrier = q->barrier == ev;
    if (was_barrier) q->barrier = NULL;
    /* Waiters inside callbacks wait for this count only. */
    if (q->outstanding == 0 || q->release_waiters) pthread_cond_broadcast(&q->idle_cond);
    pthread_mutex_unlock(&q->lock);
    if (was_last) event_release_internal(ev);
    if (was_barrier) event_release_internal(ev);
  }
  completion_push(settled, ev, status);
}

/* The second phase for one settled event (see complete_one). */
static void finish_completion(cl_event ev, cl_int status) {
  completion_depth++;
  release_command_resources(ev);
  cl_command_queue rq = ev->queue;
  if (rq) {
    pthread_mutex_lock(&rq->lock);
    if (ev->unreleased_prev)
      ev->unreleased_prev->unreleased_next = ev->unreleased_next;
    else
      rq->unreleased_head = ev->unreleased_next;
    if (ev->unreleased_next) ev->unreleased_next->unreleased_prev = ev->unreleased_prev;
    if (rq->release_waiters) pthread_cond_broadcast(&rq->idle_cond);
    pthread_mutex_unlock(&rq->lock);
  }
  pthread_mutex_lock(&ev->lock);
  int has_callbacks = ev->callbacks != NULL; /* read under the lock, as in event_set_status */
  pthread_mutex_unlock(&ev->lock);
  if (has_callbacks) run_callbacks(ev, status);
  completion_depth--;
  pthread_mutex_lock(&ev->lock);
  ev->finished = 1;
  pthread_cond_broadcast(&ev->cond);
  pthread_mutex_unlock(&ev->lock);
  cl_command_queue q = ev->queue;
  if (q) {
    pthread_mutex_lock(&q->lock);
    q->callbacks_pending--;
    if (q->outstanding == 0 && q->callbacks_pending == 0) pthread_cond_broadcast(&q->idle_cond);
    pthread_mutex_unlock(&q->lock);
    event_release_internal(ev); /* the scheduler's reference */
  }
  event_release_internal(ev);
}

int event_in_callback(void) {
  return completion_depth > 0;
}

void event_complete(cl_event ev, cl_int status) {
  if (atomic_exchange(&ev->completion_claimed, 1)) return;
  struct completion_list list = {0}, settled = {0};
  complete_one(ev, status, &list, &settled);
  for (size_t i = 0; i < list.len; i++) {
    cl_event d = list.items[i].ev;
    if (!atomic_exchange(&d->completion_claimed, 1))
      complete_one(d, list.items[i].status, &list, &settled);
  }
  free(list.items);
  for (size_t i = 0; i < settled.len; i++)
    finish_completion(settled.items[i].ev, settled.items[i].status);
  free(settled.items);
}

/* Adds dep as a dependency of ev. An NDRange whose dependency is an NDRange
 * already written to the same AQL queue needs no runtime edge: the packet's
 * barrier bit orders it behind every earlier packet of that queue. */
static void add_dependency(cl_event ev, cl_event dep, int *use_barrier_bit) {
  pthread_mutex_lock(&dep->lock);
  cl_int st = atomic_load(&dep->status);
  if (st <= CL_COMPLETE) {
    pthread_mutex_unlock(&dep->lock);
    if (st < 0) ev->failed_dependency = 1;
    return;
  }
  if (ev->kind == COMMAND_NDRANGE && !ev->u.ndrange.spread && dep->kind == COMMAND_NDRANGE &&
      dep->queue &&
      dep->queue->hsa_queue == ev->queue->hsa_queue && dep->u.ndrange.submitted) {
    pthread_mutex_unlock(&dep->lock);
    *use_barrier_bit = 1;
    return;
  }
  struct dependent *node = malloc(sizeof *node);
  if (!node) abort();
  node->event = ev;
  node->next = dep->dependents;
  dep->dependents = node;
  atomic_fetch_add(&ev->pending, 1);
  pthread_mutex_unlock(&dep->lock);
  /* Its end may have waited for the next kernel's (device.c). */
  device_kernel_wanted(dep);
}

/* Links ev into its queue: as the latest command, as the queue's barrier if
 * it is one, and into the list of outstanding commands. Returns, with a
 * reference, the command that an in-order queue makes ev wait for. */
static cl_event queue_link(cl_event ev, cl_event *barrier_dep) {
  cl_command_queue q = ev->queue;
  int in_order = !(q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  object_retain(&ev->header); /* held by q->last */
  pthread_mutex_lock(&q->lock);
  cl_event prev = q->last, old_barrier = NULL;
  if (prev && in_order) object_retain(&prev->header);
  *barrier_dep = NULL;
  if (!in_order && q->barrier) {
    *barrier_dep = q->barrier;
    object_retain(&q->barrier->header);
  }
  if (!in_order && ev->type == CL_COMMAND_BARRIER) {
    old_barrier = q->barrier;
    object_retain(&ev->header); /* held by q->barrier */
    q->barrier = ev;
  }
  q->last = ev;
  q->outstanding++;
  ev->seq = ++q->next_seq;
  ev->queue_prev = NULL;
  ev->queue_next = q->outstanding_head;
  if (q->outstanding_head) q->outstanding_head->queue_prev = ev;
  q->outstanding_head = ev;
  pthread_mutex_unlock(&q->lock);
  if (prev) event_release_internal(prev); /* q->last's reference moved to ev */
  if (old_barrier) event_release_internal(old_barrier);
  return in_order ? prev : NULL;
}

static void submission_done(cl_event ev, int barrier_bit) {
  if (ev->kind == COMMAND_NDRANGE) ev->u.ndrange.barrier_bit = barrier_bit;
  if (atomic_fetch_sub(&ev->pending, 1) == 1 && event_start(ev)) event_complete(ev, CL_COMPLETE);
}

void command_submit(cl_event ev, cl_uint num_wait, const cl_event *wait_list) {
  cl_event barrier_dep;
  cl_event prev = queue_link(ev, &barrier_dep);
  int barrier_bit = 0;
  for (cl_uint i = 0; i < num_wait; i++)
    add_dependency(ev, wait_list[i], &barrier_bit);
  if (prev) {
    add_dependency(ev, prev, &barrier_bit);
    event_release_internal(prev);
  }
  if (barrier_dep) {
    add_dependency(ev, barrier_dep, &barrier_bit);
    event_release_internal(barrier_dep);
  }
  submission_done(ev, barrier_bit);
}

void command_submit_after_all(cl_event ev) {
  cl_command_queue q = ev->queue;
  pthread_mutex_lock(&q->lock);
  size_t n = 0;
  for (cl_event e = q->outstanding_head; e; e = e->queue_next)
    n++;
  cl_event *all = calloc(n ? n : 1, sizeof *all);
  if (!all) abort();
  n = 0;
  for (cl_event e = q->outstanding_head; e; e = e->queue_next) {
    object_retain(&e->header);
    all[n++] = e;
  }
  pthread_mutex_unlock(&q->lock);
  command_submit(ev, (cl_uint)n, all);
  for (size_t i = 0; i < n; i++)
    event_release_internal(all[i]);
  free(all);
}

/* Completes, oldest first, the kernels of queue q that have finished but
 * whose events are not complete yet. The watcher completes a device's
 * kernels in the order they were submitted, so a long kernel of another
 * queue would hold this queue's events up, and on a machine whose
 * processors are all busy the watcher itself first waits for a time slice;
 * a thread waiting for one of them does it rather than wait for that. */
static void queue_complete_finished(cl_command_queue q) {
  cl_event few[16], *finished = few;
  size_t n = 0, cap = 16;
  pthread_mutex_lock(&q->lock);
  /* Newest first. */
  for (cl_event e = q->outstanding_head; e; e = e->queue_next) {
    if (e->kind != COMMAND_NDRANGE || atomic_load(&e->completion_claimed)) continue;
    pthread_mutex_lock(&e->lock);
    int submitted = e->u.ndrange.submitted;
    hsa_signal_t s = e->u.ndrange.signal;
    pthread_mutex_unlock(&e->lock);
    if (!submitted || hsa_signal_load_scacquire(s) != 0) continue;
    if (n == cap) {
      cl_event *more = malloc(2 * cap * sizeof *more);
      if (!more) break;
      memcpy(more, finished, n * sizeof *more);
      if (finished != few) free(finished);
      finished = more;
      cap *= 2;
    }
    object_retain(&e->header);
    finished[n++] = e;
  }
  pthread_mutex_unlock(&q->lock);
  while (n > 0) {
    cl_event e = finished[--n];
    event_complete(e, CL_COMPLETE);
    event_release_internal(e);
  }
  if (finished != few) free(finished);
}

/* On an in-order queue, the commands before ev have completed; waits until
 * they have also released their buffers and kernel (a kernel's release may
 * still be on its way in the thread that completed it when the read after
 * it has ended): an application may count references right after a
 * blocking call. */
static void wait_earlier_released(cl_event ev) {
  cl_command_queue q = ev->queue;
  if (!q || (q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) return;
  pthread_mutex_lock(&q->lock);
  for (int tries = 0;; tries++) {
    /* Earlier ones may still be settling: a kernel's completion readies
     * the read after it before it leaves the outstanding list. */
    bool earlier = false;
    for (cl_event e = q->outstanding_head; e && !earlier; e = e->queue_next)
      earlier = e->seq < ev->seq;
    for (cl_event e = q->unreleased_head; e && !earlier; e = e->unreleased_next)
      earlier = e->seq < ev->seq;
    if (!earlier) break;
    /* The release is usually a few microseconds from done, in the thread
     * that completed the kernel: a sleep and a wake-up would cost more. */
    if (tries < 32) {
      pthread_mutex_unlock(&q->lock);
      sched_yield();
      pthread_mutex_lock(&q->lock);
      continue;
    }
    q->release_waiters++;
    pthread_cond_wait(&q->idle_cond, &q->lock);
    q->release_waiters--;
  }
  pthread_mutex_unlock(&q->lock);
}

cl_int event_wait(cl_event ev) {
  for (;;) {
    pthread_mutex_lock(&ev->lock);
    cl_int st = atomic_load(&ev->status);
    if (st <= CL_COMPLETE) {
      /* A blocking call returns once the command has let go of its buffers
       * (an application may release and count them right after), except
       * in a callback: that may be the second phase it would wait for. */
      while (!ev->finished && !event_in_callback())
        pthread_cond_wait(&ev->cond, &ev->lock);
      pthread_mutex_unlock(&ev->lock);
      if (!event_in_callback()) wait_earlier_released(ev);
      return st;
    }
    if (ev->kind == COMMAND_NDRANGE && ev->u.ndrange.submitted &&
        !atomic_load(&ev->completion_claimed)) {
      /* Wait on the dispatch's signal directly rather than for the watcher
       * thread's wake-up, and run the dispatch meanwhile if no compute unit
       * has taken it yet (its work-groups, or the kernels it waits for on
       * its in-order queue): on a machine whose processors are all busy,
       * each thread that has to wake up first waits for a time slice. A
       * bounded wait, then look again. */
      hsa_signal_t s = ev->u.ndrange.signal;
      uint64_t packet = ev->u.ndrange.packet_index;
      hsa_queue_t *hq = ev->queue->hsa_queue;
      pthread_mutex_unlock(&ev->lock);
      /* Counted, the kernel's end does not wake the watcher: this thread
       * completes it, then takes it off the watcher's list. */
      atomic_fetch_add(&ev->waiters, 1);
      /* A remote device's kernel ends with a message that the network
       * thread turns into the signal's change: a waiter that polls a while
       * (50 us) sees it without a wake-up of its own (an empty kernel's
       * round trip: 61-77 us sleeping at once, 50-52 polling, alternating).
       * A local kernel is run by the units or by this thread meanwhile. */
      hsa_wait_state_t wait_state =
          device_root(ev->queue->device)->remote ? HSA_WAIT_STATE_ACTIVE : HSA_WAIT_STATE_BLOCKED;
      if (hsa_ven_aquila_signal_wait_helping(s, HSA_SIGNAL_CONDITION_EQ, 0, 1000000, wait_state, hq,
                                             packet) == 0 &&
          atomic_load(&ev->status) > CL_COMPLETE) {
        /* Finished: whoever comes first (this thread, another waiter, the
         * watcher) completes it, and the queue's kernels before it first. */
        queue_complete_finished(ev->queue);
        event_complete(ev, CL_COMPLETE);
      }
      if (atomic_load(&ev->status) <= CL_COMPLETE) device_collect_ended(ev->watch_device);
      atomic_fetch_sub(&ev->waiters, 1);
      continue;
    }
    /* Not on the device yet, or another thread is completing it: both end
     * with a broadcast of cond under lock (complete_one). */
    pthread_cond_wait(&ev->cond, &ev->lock);
    pthread_mutex_unlock(&ev->lock);
  }
}

/* How long a status query waits for a running kernel's end (ns). */
#define POLL_WAIT_NS 50000u

/* For clGetEventInfo's status: a kernel whose dispatch has finished is
 * completed by the asking thread, as by a waiter (event_wait), instead of
 * being left to the device's watcher thread, which on a loaded machine
 * first waits for a time slice: a program that polls the status until it
 * reads CL_COMPLETE sees the completion as soon as the last work-group
 * ends. */
static void event_poll(cl_event ev) {
  if (atomic_load(&ev->status) <= CL_COMPLETE || ev->kind != COMMAND_NDRANGE ||
      atomic_load(&ev->completion_claimed))
    return;
  pthread_mutex_lock(&ev->lock);
  int submitted = ev->u.ndrange.submitted;
  hsa_signal_t s = ev->u.ndrange.signal;
  pthread_mutex_unlock(&ev->lock);
  if (!submitted) return;
  /* The signal may be another dispatch's by now if the watcher completed
   * ev meanwhile: event_complete then does nothing (completion_claimed).
   * Unlike a wait, a query runs a kernel's work-groups only when no unit
   * has taken them and the kernel ran briefly last time
   * (hsa_ven_aquila_signal_help_short): a query must not be held by a long
   * kernel. A short one then completes at the first query, without a
   * unit's wake-up. Otherwise a thread that polls in a loop would hold a
   * processor the compute units need (they are as many as the processors):
   * while the kernel runs, the query waits for its end, but at most
   * POLL_WAIT_NS, asleep, and returns at once when it ends (BitonicSort
   * --poll on two cores: 10-33 ms from run to run with a yield, 12-13 with
   * the wait; without polling 10-13). A kernel not yet started (queued
   * behind others) is not waited for: a program may poll many events. */
  pthread_mutex_lock(&ev->lock);
  uint64_t packet = ev->u.ndrange.packet_index;
  hsa_queue_t *hq = ev->queue->hsa_queue;
  pthread_mutex_unlock(&ev->lock);
  if (hsa_ven_aquila_signal_help_short(s, hq, packet) != 0) {
    if (hsa_queue_load_read_index_scacquire(hq) <= packet) {
      sched_yield();
      return;
    }
    if (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, POLL_WAIT_NS,
                                  HSA_WAIT_STATE_BLOCKED) != 0)
      return;
  }
  queue_complete_finished(ev->queue);
  event_complete(ev, CL_COMPLETE);
}

/* ---- API ------------------------------------------------------------------ */

AQUILA_API cl_int clWaitForEvents(cl_uint num_events, const cl_event *event_list) {
  if (num_events == 0 || !event_list) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_events; i++)
    if (!object_is(event_list[i], OBJECT_EVENT)) return CL_INVALID_EVENT;
  for (cl_uint i = 1; i < num_events; i++)
    if (event_list[i]->context != event_list[0]->context) return CL_INVALID_CONTEXT;
  cl_int result = CL_SUCCESS;
  for (cl_uint i = 0; i < num_events; i++) {
    if (event_list[i]->queue) clFlush(event_list[i]->queue);
    if (event_wait(event_list[i]) < 0) result = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  }
  return result;
}

AQUILA_API cl_int clGetEventInfo(cl_event event, cl_event_info param_name, size_t param_value_size,
                                 void *param_value, size_t *param_value_size_ret) {
  if (!object_is(event, OBJECT_EVENT)) return CL_INVALID_EVENT;
  switch (param_name) {
  case CL_EVENT_COMMAND_QUEUE:
    INFO_VALUE(cl_command_queue, event->queue);
  case CL_EVENT_CONTEXT:
    INFO_VALUE(cl_context, event->context);
  case CL_EVENT_COMMAND_TYPE:
    INFO_VALUE(cl_command_type, event->type);
  case CL_EVENT_COMMAND_EXECUTION_STATUS:
    event_poll(event);
    INFO_VALUE(cl_int, atomic_load(&event->status));
  case CL_EVENT_REFERENCE_COUNT:
    INFO_VALUE(cl_uint, atomic_load(&event->header.refcount));
  default:
    return CL_INVALID_VALUE;
  }
}

AQUILA_API cl_int clRetainEvent(cl_event event) {
  if (!object_is(event, OBJECT_EVENT)) return CL_INVALID_EVENT;
  object_retain(&event->header);
  return CL_SUCCESS;
}

AQUILA_API cl_int clReleaseEvent(cl_event event) {
  if (!object_is(event, OBJECT_EVENT)) return CL_INVALID_EVENT;
  event_release_internal(event);
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name,
                                          size_t param_value_size, void *param_value,
                                          size_t *param_value_size_ret) {
  if (!object_is(event, OBJECT_EVENT)) return CL_INVALID_EVENT;
  if (!event->queue || !(event->queue->properties & CL_QUEUE_PROFILING_ENABLE) ||
      atomic_load(&event->status) != CL_COMPLETE)
    return CL_PROFILING_INFO_NOT_AVAILABLE;
  switch (param_name) {
  case CL_PROFILING_COMMAND_QUEUED:
    INFO_VALUE(cl_ulong, event->t_queued);
  case CL_PROFILING_COMMAND_SUBMIT:
    INFO_VALUE(cl_ulong, event->t_submit);
  case CL_PROFILING_COMMAND_START:
    INFO_VALUE(cl_ulong, event->t_start);
  case CL_PROFILING_COMMAND_END:
    INFO_VALUE(cl_ulong, event->t_end);
  default:
    return CL_INVALID_VALUE;
  }
}

AQUILA_API cl_event clCreateUserEvent(cl_context context, cl_int *errcode_ret) {
  if (!object_is(context, OBJECT_CONTEXT)) {
    if (errcode_ret) *errcode_ret = CL_INVALID_CONTEXT;
    return NULL;
  }
  cl_event ev = event_create_command(NULL, CL_COMMAND_USER, COMMAND_NONE);
  if (!ev) {
    if (errcode_ret) *errcode_ret = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  ev->context = context;
  object_retain(&context->header);
  atomic_store(&ev->status, CL_SUBMITTED);
  atomic_store(&ev->pending, 0);
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return ev;
}

AQUILA_API cl_int clSetUserEventStatus(cl_event event, cl_int execution_status) {
  if (!object_is(event, OBJECT_EVENT) || event->type != CL_COMMAND_USER) return CL_INVALID_EVENT;
  if (execution_status > CL_COMPLETE) return CL_INVALID_VALUE;
  if (atomic_load(&event->status) <= CL_COMPLETE) return CL_INVALID_OPERATION;
  event_complete(event, execution_status);
  return CL_SUCCESS;
}

AQUILA_API cl_int clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
                                     void(CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *),
                                     void *user_data) {
  if (!object_is(event, OBJECT_EVENT)) return CL_INVALID_EVENT;
  if (!pfn_notify ||
      (command_exec_callback_type != CL_SUBMITTED && command_exec_callback_type != CL_RUNNING &&
       command_exec_callback_type != CL_COMPLETE))
    return CL_INVALID_VALUE;
  struct event_callback *cb = malloc(sizeof *cb);
  if (!cb) return CL_OUT_OF_HOST_MEMORY;
  cb->status = command_exec_callback_type;
  cb->fn = pfn_notify;
  cb->data = user_data;
  cb->next = NULL;
  pthread_mutex_lock(&event->lock);
  cl_int st = atomic_load(&event->status);
  if (st > command_exec_callback_type) {
    struct event_callback **pp = &event->callbacks;
    while (*pp)
      pp = &(*pp)->next;
    *pp = cb;
    pthread_mutex_unlock(&event->lock);
    device_kernel_wanted(event);
    return CL_SUCCESS;
  }
  pthread_mutex_unlock(&event->lock);
  /* Already there: call now. */
  pfn_notify(event,
             command_exec_callback_type == CL_COMPLETE || st < 0 ? st : command_exec_callback_type,
             user_data);
  free(cb);
  return CL_SUCCESS;
}
