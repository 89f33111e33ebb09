/* fork: a process that used Aquila and then forks (Python's multiprocessing
 * does) goes on using it in the child.
 *
 * The child has only the thread that called fork. Aquila's own threads (the
 * CPU agent's compute units, the scheduler's workers, each device's
 * watcher) are not there, and neither is whatever they were doing:
 *
 * - Locks. Before the fork, the handlers take every global lock of the
 *   runtime (the ready queue, each device's in-flight list and signal pool)
 *   and of the HSA layer (hsa/runtime.c), so that no other thread holds one
 *   at the moment of the fork; the child makes them anew. The workers and
 *   watchers also take per-object locks (events, queues, buffers) while they
 *   complete commands: they do that inside a "busy" section, and the fork
 *   waits until no such thread is inside one (a callback that forks does
 *   not wait for itself; one that blocks is waited for BUSY_WAIT_S).
 *   Application threads other than the forking one are the application's
 *   business, as POSIX says for any fork of a threaded process.
 * - Threads. The compute units start again at the first packet the child
 *   dispatches (hsa/cpu_agent.c), the workers at the first host command
 *   (scheduler.c), a device's watcher at its first kernel (device.c): a
 *   child that execs, or never uses OpenCL, pays for no thread.
 * - Work in flight. What the parent had handed over (kernels written to an
 *   AQL queue, host commands in the ready queue or on a worker) belongs to
 *   the parent, which goes on running it. In the child the HSA layer drops
 *   those packets and dispatches, and the events of those commands complete
 *   with CL_OUT_OF_RESOURCES (CL_COMPLETE for a kernel whose dispatch had
 *   finished before the fork), so a child that waits for one gets an error
 *   and never hangs; commands waiting for them then fail as for any failed
 *   dependency (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), while
 *   commands enqueued after those complete run normally, on new queues and
 *   on queues made before the fork. The completions, which run the
 *   application's callbacks, happen on a thread started for them in the
 *   child, not inside fork. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "runtime.h"

/* How long a fork waits for the workers and watchers to leave their busy
 * sections. */
#define BUSY_WAIT_S 2

/* ---- the busy gate ---- */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_closed;                   /* a fork is being prepared */
static unsigned gate_busy;                /* threads inside a busy section */
static _Thread_local unsigned gate_depth; /* this thread's nesting */

void runtime_busy_begin(void) {
  if (gate_depth++) return;
  pthread_mutex_lock(&gate_lock);
  while (gate_closed)
    pthread_cond_wait(&gate_cond, &gate_lock);
  gate_busy++;
  pthread_mutex_unlock(&gate_lock);
}

void runtime_busy_end(void) {
  if (--gate_depth) return;
  pthread_mutex_lock(&gate_lock);
  gate_busy--;
  if (gate_closed) pthread_cond_broadcast(&gate_cond);
  pthread_mutex_unlock(&gate_lock);
}

/* ---- commands the child takes over from the parent's threads ---- */

struct abandoned {
  cl_event ev;
  cl_device_id watcher; /* the device whose watcher held it, or NULL */
  struct abandoned *next;
};
static struct abandoned *abandoned_head, **abandoned_tail = &abandoned_head;

void fork_abandon(cl_event ev, cl_device_id watcher) {
  struct abandoned *a = malloc(sizeof *a);
  if (!a) return; /* its waiters would wait: out of memory in a fork handler */
  a->ev = ev;
  a->watcher = watcher;
  a->next = NULL;
  *abandoned_tail = a;
  abandoned_tail = &a->next;
}

/* Completes the commands the parent's threads had, in the order they were
 * found (each device's kernels in submission order). */
static void *complete_abandoned(void *list) {
  size_t failed = 0, finished = 0;
  for (struct abandoned *a = list, *next; a; a = next) {
    next = a->next;
    cl_event ev = a->ev;
    runtime_busy_begin();
    if (a->watcher) {
      /* A kernel: its dispatch either finished before the fork (its
       * results are in the child's memory too) or is the parent's alone. */
      hsa_signal_t s = ev->u.ndrange.signal;
      int done = hsa_signal_load_scacquire(s) == 0;
      if (!atomic_load(&ev->completion_claimed)) done ? finished++ : failed++;
      event_complete(ev, done ? CL_COMPLETE : CL_OUT_OF_RESOURCES);
      device_release_signal(a->watcher, s);
      event_release_internal(ev);
    } else {
      if (!atomic_load(&ev->completion_claimed)) failed++;
      event_complete(ev, CL_OUT_OF_RESOURCES);
    }
    runtime_busy_end();
    free(a);
  }
  debug_log("fork: in the child, %zu command(s) of the parent failed, %zu finished", failed,
            finished);
  return NULL;
}

/* ---- the handlers ---- */

static void fork_prepare(void) {
  pthread_mutex_lock(&gate_lock);
  while (gate_closed) /* another thread's fork */
    pthread_cond_wait(&gate_cond, &gate_lock);
  gate_closed = 1;
  /* A thread inside is running the application's callback at worst, which
   * might wait for something the forking thread holds: after a while the
   * fork goes ahead rather than wait for ever (that command's dependents
   * then never start in the child). */
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += BUSY_WAIT_S;
  while (gate_busy != gate_depth)
    if (pthread_cond_timedwait(&gate_cond, &gate_lock, &deadline) == ETIMEDOUT) {
      debug_log("fork: a callback did not return within %d s; forking anyway", BUSY_WAIT_S);
      break;
    }
  pthread_mutex_unlock(&gate_lock);
  tiers_fork(RUNTIME_FORK_PREPARE);
  scheduler_fork(RUNTIME_FORK_PREPARE);
  for (cl_uint i = 0; i < aquila_num_devices; i++)
    device_fork(&aquila_devices[i], RUNTIME_FORK_PREPARE);
}

static void fork_parent(void) {
  for (cl_uint i = aquila_num_devices; i-- > 0;)
    device_fork(&aquila_devices[i], RUNTIME_FORK_PARENT);
  scheduler_fork(RUNTIME_FORK_PARENT);
  tiers_fork(RUNTIME_FORK_PARENT);
  pthread_mutex_lock(&gate_lock);
  gate_closed = 0;
  pthread_cond_broadcast(&gate_cond);
  pthread_mutex_unlock(&gate_lock);
}

static void fork_child(void) {
  pthread_mutex_init(&gate_lock, NULL);
  pthread_cond_init(&gate_cond, NULL);
  gate_closed = 0;
  gate_busy = gate_depth;
  abandoned_head = NULL;
  abandoned_tail = &abandoned_head;
  for (cl_uint i = 0; i < aquila_num_devices; i++)
    device_fork(&aquila_devices[i], RUNTIME_FORK_CHILD);
  scheduler_fork(RUNTIME_FORK_CHILD);
  tiers_fork(RUNTIME_FORK_CHILD);
  struct abandoned *list = abandoned_head;
  abandoned_head = NULL;
  abandoned_tail = &abandoned_head;
  if (!list) return;
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int started = pthread_create(&t, &attr, complete_abandoned, list) == 0;
  pthread_attr_destroy(&attr);
  /* No thread to be had: complete them here rather than leave them. */
  if (!started) complete_abandoned(list);
}

/* Registered after hsa_init registered the HSA layer's handlers: the
 * runtime's prepare handler then runs first (pthread_atfork runs them in
 * reverse order), while the compute units still run, and its child handler
 * after the HSA layer's. */
void runtime_register_atfork(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}
