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

static void *worker_main(void *arg) {
  for (;;) {
    pthread_mutex_lock(&ready_lock);
    while (!ready_head) pthread_cond_wait(&ready_cond, &ready_lock);
    struct ready_node *n = ready_head;
    ready_head = n->next;
    if (!ready_head) ready_tail = NULL;
    pthread_mutex_unlock(&ready_lock);
    cl_event ev = n->ev;
    free(n);
    command_execute(ev);
  }
  return NULL;
}

static void start_workers(void) {
  for (int i = 0; i < NUM_WORKERS; i++) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_create(&t, &attr, worker_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_detach(t);
  }
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
