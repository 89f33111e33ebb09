/* The ready queue: commands whose dependencies are complete and that run on
 * the host (copies, fills, native kernels) wait here for a worker thread.
 * Kernel dispatches never pass through it: they go straight to the device's
 * AQL queue from whichever thread made them ready. Workers sleep on a
 * condition variable while nothing is ready. */
#include <stdlib.h>

#include "runtime.h"

void command_execute(cl_event ev);

#define NUM_WORKERS 2

static pthread_once_t workers_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static struct ready_node {
  cl_event ev;
  struct ready_node *next;
} *ready_head, *ready_tail;
/* The command each worker has taken and not finished (under ready_lock):
 * a forked child completes it, as the worker that had it is not there. */
static cl_event running[NUM_WORKERS];
/* A worker's own slot: a worker whose callback forks goes on in the child
 * with the command it has. */
static _Thread_local cl_event *own_slot;

static void *worker_main(void *arg) {
  cl_event *current = arg;
  own_slot = current;
  for (;;) {
    pthread_mutex_lock(&ready_lock);
    while (!ready_head) pthread_cond_wait(&ready_cond, &ready_lock);
    struct ready_node *n = ready_head;
    ready_head = n->next;
    if (!ready_head) ready_tail = NULL;
    cl_event ev = n->ev;
    *current = ev;
    pthread_mutex_unlock(&ready_lock);
    free(n);
    runtime_busy_begin();
    command_execute(ev);
    pthread_mutex_lock(&ready_lock);
    *current = NULL;
    pthread_mutex_unlock(&ready_lock);
    runtime_busy_end();
  }
  return NULL;
}

static void start_workers(void) {
  for (int i = 0; i < NUM_WORKERS; i++) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_create(&t, &attr, worker_main, &running[i]);
    pthread_attr_destroy(&attr);
    pthread_detach(t);
  }
}

/* In a forked child the commands that were ready or running belong to the
 * parent (fork.c), and the workers start again with the next command. */
void scheduler_fork(enum runtime_fork_phase phase) {
  if (phase == RUNTIME_FORK_PREPARE) {
    pthread_mutex_lock(&ready_lock);
    return;
  }
  if (phase == RUNTIME_FORK_PARENT) {
    pthread_mutex_unlock(&ready_lock);
    return;
  }
  static const pthread_once_t once_init = PTHREAD_ONCE_INIT;
  workers_once = once_init;
  pthread_mutex_init(&ready_lock, NULL);
  pthread_cond_init(&ready_cond, NULL);
  for (int i = 0; i < NUM_WORKERS; i++) {
    if (running[i] && &running[i] != own_slot) fork_abandon(running[i], NULL);
    if (&running[i] != own_slot) running[i] = NULL;
  }
  for (struct ready_node *n = ready_head, *next; n; n = next) {
    next = n->next;
    fork_abandon(n->ev, NULL);
    free(n);
  }
  ready_head = ready_tail = NULL;
}

void scheduler_push_ready(cl_event ev) {
  pthread_once(&workers_once, start_workers);
  struct ready_node *n = malloc(sizeof *n);
  if (!n) abort();
  n->ev = ev;
  n->next = NULL;
  pthread_mutex_lock(&ready_lock);
  if (ready_tail) ready_tail->next = n;
  else ready_head = n;
  ready_tail = n;
  pthread_cond_signal(&ready_cond);
  pthread_mutex_unlock(&ready_lock);
}
