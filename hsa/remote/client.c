/* libaquila-remote.so: the client side of remote agents (plugin.h). One
 * connection per daemon named in AQUILA_REMOTE, proven with the key in
 * AQUILA_REMOTE_KEY_FILE. Requests that need an answer (allocations, reads,
 * code objects) wait for their reply; everything else is sent without
 * waiting, in order, so that commands pipeline: the daemon keeps the
 * stream's order. A lost connection fails every request and dispatch in
 * flight on it, and the agent reports itself unavailable. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucs/debug/debug.h>

#include "auth.h"
#include "link.h"
#include "plugin.h"

#define DEFAULT_TIMEOUT_MS 3000

static const struct aq_remote_services *services;

enum conn_state { CONN_CONNECTING, CONN_CHALLENGED, CONN_ADMITTED, CONN_LOST };

/* A request waiting for its reply. */
struct call {
  uint64_t id;
  /* Set under the connection's lock; atomic because a waiting thread polls
   * it without the lock (wait_receiving). */
  atomic_bool done;
  bool failed;
  void *dst; /* a READ's: the bytes land here */
  uint64_t dst_size;
  struct aq_wire_reply reply;
  void *payload; /* after the reply struct (malloc'ed), or NULL */
  uint64_t payload_size;
  struct call *next;
};

struct flight {
  uint64_t id;
  hsa_signal_t signal;
  struct flight *next;
};

struct conn {
  char address[96];
  struct aq_link *link; /* NULL once closed */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  enum conn_state state;
  char why[384]; /* why it was lost */
  uint8_t client_nonce[AQ_WIRE_NONCE_BYTES];
  uint64_t hello_ns;
  int64_t clock_offset; /* daemon clock - this process's clock */
  struct aq_remote_description description;
  uint64_t next_id;
  struct call *calls;
  /* Dispatches in flight, oldest first: their DONEs come mostly in that
   * order, so the search ends at once. */
  struct flight *flights, *flights_tail;
  uint32_t index; /* its agent's */
  /* After a loss, a thread tries to connect again (reconnect_main). */
  uint32_t epoch;
  bool admitted_once, reconnecting;
  pthread_t reconnector;
};

static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond = PTHREAD_COND_INITIALIZER;
static bool stopping;
static uint64_t timeout_ms(void);

static uint8_t key[AQ_KEY_BYTES];
static struct aq_loop *loop;
static struct conn *conns[AQ_REMOTE_MAX_AGENTS]; /* admitted ones, by agent index */
static uint32_t num_conns;

/* ---- the link's handler (loop thread) ---------------------------------------- */

static struct call *take_call(struct conn *c, uint64_t id) {
  for (struct call **p = &c->calls; *p; p = &(*p)->next)
    if ((*p)->id == id) {
      struct call *call = *p;
      *p = call->next;
      return call;
    }
  return NULL;
}

/* A READ's bytes go straight to where the caller wants them. */
static void *payload_buffer(void *owner, struct aq_link *link, const struct aq_wire_header *h) {
  struct conn *c = owner;
  void *dst = NULL;
  if (h->type != AQ_MSG_REPLY || !(h->flags & AQ_WIRE_FLAG_RAW)) return NULL;
  pthread_mutex_lock(&c->lock);
  for (struct call *call = c->calls; call; call = call->next)
    if (call->id == h->id) {
      if (call->dst && call->dst_size == h->length) dst = call->dst;
      break;
    }
  pthread_mutex_unlock(&c->lock);
  return dst;
}

static bool on_message(void *owner, struct aq_link *link, const struct aq_wire_header *h,
                       void *payload) {
  struct conn *c = owner;
  bool ok = true;
  pthread_mutex_lock(&c->lock);
  switch (h->type) {
  case AQ_MSG_CHALLENGE: {
    if (c->state != CONN_CONNECTING) {
      ok = false;
      break;
    }
    struct aq_wire_challenge ch;
    memcpy(&ch, payload, sizeof ch);
    if (!aq_proof_check(key, 'd', c->client_nonce, ch.nonce, ch.proof)) {
      snprintf(c->why, sizeof c->why, "the daemon does not hold the key");
      ok = false;
      break;
    }
    uint64_t now = services->now_ns();
    c->clock_offset = (int64_t)(ch.daemon_time_ns - (c->hello_ns + (now - c->hello_ns) / 2));
    uint8_t proof[AQ_WIRE_PROOF_BYTES];
    aq_proof_make(key, 'c', c->client_nonce, ch.nonce, proof);
    c->state = CONN_CHALLENGED;
    aq_link_send(link, AQ_MSG_AUTH, 0, proof, sizeof proof, NULL, 0, NULL, NULL);
    break;
  }
  case AQ_MSG_REFUSED:
    /* The daemon's reason (checked NUL-terminated); it reads nothing more
     * from this link, whose close is this end's. */
    snprintf(c->why, sizeof c->why, "the daemon refused this client: %s", (const char *)payload);
    ok = false;
    break;
  case AQ_MSG_WELCOME: {
    if (c->state != CONN_CHALLENGED) {
      ok = false;
      break;
    }
    struct aq_wire_welcome w;
    memcpy(&w, payload, sizeof w);
    if (!aq_link_tcp_segments_agree(aq_link_tcp_segments(), w.tcp_segments)) {
      snprintf(c->why, sizeof c->why,
               "its UCX TCP segment sizes (UCX_TCP_TX_SEG_SIZE, UCX_TCP_RX_SEG_SIZE) differ from "
               "this process's: UCX would abort one of the two on a large message");
      ok = false;
      break;
    }
    struct aq_remote_description *d = &c->description;
    if (c->admitted_once) {
      /* Back: the same device, if it still runs the same code. */
      if (strncmp(d->target, w.target, sizeof d->target)) {
        snprintf(c->why, sizeof c->why, "it came back with another code target (%.60s)", w.target);
        ok = false;
        break;
      }
      c->epoch++;
      c->state = CONN_ADMITTED;
      aq_link_set_authenticated(link);
      services->agent_reconnected(c->index);
      pthread_cond_broadcast(&c->cond);
      break;
    }
    snprintf(d->name, sizeof d->name, "%.63s", w.name);
    snprintf(d->host, sizeof d->host, "%.63s", w.host);
    snprintf(d->address, sizeof d->address, "%s", c->address);
    snprintf(d->target, sizeof d->target, "%s", w.target);
    d->compute_units = w.compute_units;
    d->max_workgroup_size = w.max_workgroup_size;
    d->memory_size = w.memory_size;
    c->admitted_once = true;
    c->state = CONN_ADMITTED;
    aq_link_set_authenticated(link);
    pthread_cond_broadcast(&c->cond);
    break;
  }
  case AQ_MSG_REPLY: {
    struct call *call = take_call(c, h->id);
    if (!call) {
      ok = false; /* a reply nobody asked for */
      break;
    }
    if (h->flags & AQ_WIRE_FLAG_RAW) {
      /* payload_buffer put the bytes in place, or this is not a READ's. */
      call->failed = !call->dst || payload != call->dst;
      call->reply.status = 0;
      call->done = true;
      pthread_cond_broadcast(&c->cond);
      ok = !call->failed;
      break;
    }
    memcpy(&call->reply, payload, sizeof call->reply);
    call->payload_size = h->length - sizeof call->reply;
    if (call->payload_size) {
      call->payload = malloc(call->payload_size);
      if (call->payload)
        memcpy(call->payload, (unsigned char *)payload + sizeof call->reply, call->payload_size);
      else
        call->failed = true;
    }
    call->done = true;
    pthread_cond_broadcast(&c->cond);
    break;
  }
  case AQ_MSG_DONE: {
    /* Each dispatch it reports, taken off the list in flight under the
     * lock; their signals completed after it, in order. */
    uint32_t n = (uint32_t)(h->length / sizeof(struct aq_wire_done));
    struct flight *ended[AQ_WIRE_MAX_DONES];
    struct aq_wire_done done[AQ_WIRE_MAX_DONES];
    memcpy(done, payload, n * sizeof done[0]);
    for (uint32_t k = 0; k < n && ok; k++) {
      struct flight *f = NULL, *before = NULL;
      for (struct flight *p = c->flights; p; before = p, p = p->next)
        if (p->id == done[k].id) {
          f = p;
          if (before)
            before->next = f->next;
          else
            c->flights = f->next;
          if (c->flights_tail == f) c->flights_tail = before;
          break;
        }
      ended[k] = f;
      if (!f) ok = false; /* a dispatch it never sent: the link closes */
    }
    pthread_mutex_unlock(&c->lock);
    for (uint32_t k = 0; k < n; k++) {
      if (!ended[k]) break;
      const struct aq_wire_done *d = &done[k];
      uint64_t start = d->start_ns ? d->start_ns - (uint64_t)c->clock_offset : 0;
      uint64_t end = d->end_ns ? d->end_ns - (uint64_t)c->clock_offset : 0;
      services->dispatch_done(ended[k]->signal, d->fault_signal, d->fault_address, d->fault_group,
                              start, end);
      free(ended[k]);
    }
    return ok;
  }
  default:
    ok = false;
  }
  pthread_mutex_unlock(&c->lock);
  return ok;
}

static void *reconnect_main(void *arg);

static void on_close(void *owner, struct aq_link *link, const char *why) {
  struct conn *c = owner;
  pthread_mutex_lock(&c->lock);
  if (c->link != link) {
    /* An attempt the reconnecting thread gave up on (it dropped the link). */
    pthread_mutex_unlock(&c->lock);
    return;
  }
  if (!c->why[0]) snprintf(c->why, sizeof c->why, "%s", why);
  bool was_admitted = c->state == CONN_ADMITTED;
  c->state = CONN_LOST;
  struct aq_link *l = c->link;
  c->link = NULL;
  for (struct call *call = c->calls; call; call = call->next) {
    call->done = true;
    call->failed = true;
  }
  c->calls = NULL;
  struct flight *flights = c->flights;
  c->flights = c->flights_tail = NULL;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
  pthread_mutex_lock(&stop_lock);
  bool reconnect = was_admitted && !stopping && !c->reconnecting;
  pthread_mutex_unlock(&stop_lock);
  if (reconnect) {
    pthread_mutex_lock(&c->lock);
    c->reconnecting = pthread_create(&c->reconnector, NULL, reconnect_main, c) == 0;
    pthread_mutex_unlock(&c->lock);
  }
  if (was_admitted)
    services->debug("remote agent %s lost: %s; its commands in flight fail%s", c->address, c->why,
                    reconnect ? "; connecting again in the background" : "");
  uint32_t none[3] = {0, 0, 0};
  while (flights) {
    struct flight *f = flights;
    flights = f->next;
    services->dispatch_done(f->signal, SIGPIPE, 0, none, 0, 0);
    free(f);
  }
  if (l) aq_link_release(l);
}

static const struct aq_link_handler handler = {
    .payload_buffer = payload_buffer,
    .on_message = on_message,
    .on_close = on_close,
};

/* A new link to the daemon, HELLO sent; the handler does the rest. Caller
 * holds c->lock. */
static bool conn_open(struct conn *c, char *why, size_t why_size) {
  aq_nonce_make(c->client_nonce);
  c->why[0] = 0;
  c->state = CONN_CONNECTING;
  c->link = aq_link_connect(loop, c->address, &handler, c, why, why_size);
  if (!c->link) {
    c->state = CONN_LOST;
    snprintf(c->why, sizeof c->why, "%s", why);
    return false;
  }
  struct aq_wire_hello hello = {.version = AQ_WIRE_VERSION, .tcp_segments = aq_link_tcp_segments()};
  c->hello_ns = hello.client_time_ns = services->now_ns();
  memcpy(hello.nonce, c->client_nonce, sizeof hello.nonce);
  aq_link_send(c->link, AQ_MSG_HELLO, 0, &hello, sizeof hello, NULL, 0, NULL, NULL);
  return true;
}

static struct timespec deadline_in(uint64_t ms) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += (time_t)(ms / 1000);
  t.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

/* Waits for the handshake's end (caller holds c->lock); true when admitted.
 * A daemon that has not answered by the deadline is dropped. */
static bool conn_wait_admitted(struct conn *c, const struct timespec *deadline) {
  while (c->state != CONN_ADMITTED && c->state != CONN_LOST)
    if (pthread_cond_timedwait(&c->cond, &c->lock, deadline) != 0) break;
  if (c->state == CONN_ADMITTED) return true;
  if (c->state != CONN_LOST) {
    snprintf(c->why, sizeof c->why, "no answer within %llu ms", (unsigned long long)timeout_ms());
    c->state = CONN_LOST;
  }
  if (c->link) {
    aq_link_close(c->link, "not admitted");
    aq_link_release(c->link);
    c->link = NULL;
  }
  return false;
}

/* After a loss: tries again, 0.5 s after, then less and less often (up to
 * every 5 s), until the daemon admits this process or the plugin stops. */
static void *reconnect_main(void *arg) {
  struct conn *c = arg;
  uint64_t delay = 500;
  for (;;) {
    struct timespec wake = deadline_in(delay);
    pthread_mutex_lock(&stop_lock);
    while (!stopping && pthread_cond_timedwait(&stop_cond, &stop_lock, &wake) == 0) {
    }
    bool stop = stopping;
    pthread_mutex_unlock(&stop_lock);
    if (stop) break;
    char why[160];
    pthread_mutex_lock(&c->lock);
    bool back = conn_open(c, why, sizeof why);
    if (back) {
      struct timespec deadline = deadline_in(timeout_ms());
      back = conn_wait_admitted(c, &deadline);
    }
    pthread_mutex_unlock(&c->lock);
    if (back) {
      services->debug("remote agent %s is back", c->address);
      break;
    }
    delay = delay * 2 > 5000 ? 5000 : delay * 2;
  }
  pthread_mutex_lock(&c->lock);
  c->reconnecting = false;
  pthread_mutex_unlock(&c->lock);
  return NULL;
}

/* ---- requests ------------------------------------------------------------------- */

static struct conn *conn_of(uint32_t agent) {
  return agent < num_conns ? conns[agent] : NULL;
}

/* How long a waiting thread receives its connections' messages itself
 * while none comes, before it sleeps and leaves them to the loop thread. */
#define RECEIVE_IDLE_NS 50000u

static struct timespec deadline_in(uint64_t ms);

/* Waits until waiting(arg) is false, with lock held (it guards what
 * waiting reads, and cond is broadcast under it when that changes): the
 * thread receives the replies itself (aq_loop_work_while) while they keep
 * coming. When none came for a while it sleeps, and takes the work back
 * after 1, 2, 4 ... 64 ms: a transfer whose socket was full a moment
 * must not be left to the loop thread, which sleeps each time the socket
 * is full (64 MiB writes at 1.7-1.9 GB/s that way, 3-4.5 driven here). */
static void wait_receiving(pthread_mutex_t *lock, pthread_cond_t *cond, bool (*waiting)(void *),
                           void *arg) {
  uint64_t sleep_ms = 1;
  while (waiting(arg)) {
    pthread_mutex_unlock(lock);
    if (loop) aq_loop_work_while(loop, waiting, arg, RECEIVE_IDLE_NS);
    pthread_mutex_lock(lock);
    if (!waiting(arg)) break;
    struct timespec wake = deadline_in(sleep_ms);
    pthread_cond_timedwait(cond, lock, &wake);
    if (sleep_ms < 64) sleep_ms *= 2;
  }
}

static bool call_waiting(void *arg) {
  return !atomic_load(&((struct call *)arg)->done);
}

/* Sends a request and waits for its reply; the reply's payload (malloc'ed)
 * goes to *payload when asked for. HSA_STATUS_ERROR when the daemon is
 * lost. */
static hsa_status_t call(struct conn *c, uint16_t type, const void *p1, size_t n1, const void *p2,
                         size_t n2, struct aq_wire_reply *reply, void **payload,
                         uint64_t *payload_size) {
  struct call call = {0};
  pthread_mutex_lock(&c->lock);
  if (c->state != CONN_ADMITTED || !c->link) {
    pthread_mutex_unlock(&c->lock);
    return HSA_STATUS_ERROR;
  }
  call.id = ++c->next_id;
  call.next = c->calls;
  c->calls = &call;
  aq_link_send(c->link, type, call.id, p1, n1, p2, n2, NULL, NULL);
  wait_receiving(&c->lock, &c->cond, call_waiting, &call);
  pthread_mutex_unlock(&c->lock);
  if (call.failed) {
    free(call.payload);
    return HSA_STATUS_ERROR;
  }
  if (reply) *reply = call.reply;
  if (payload) {
    *payload = call.payload;
    *payload_size = call.payload_size;
  } else {
    free(call.payload);
  }
  return HSA_STATUS_SUCCESS;
}

/* Sends without waiting for an answer; false when the daemon is lost. */
static bool post(struct conn *c, uint16_t type, uint64_t id, const void *p1, size_t n1,
                 const void *p2, size_t n2, void (*done)(void *, bool), void *arg) {
  pthread_mutex_lock(&c->lock);
  bool ok = c->state == CONN_ADMITTED && c->link;
  if (ok) aq_link_send(c->link, type, id, p1, n1, p2, n2, done, arg);
  pthread_mutex_unlock(&c->lock);
  return ok;
}

static const struct aq_remote_description *describe(uint32_t agent) {
  struct conn *c = conn_of(agent);
  return c ? &c->description : NULL;
}

static bool available(uint32_t agent) {
  struct conn *c = conn_of(agent);
  if (!c) return false;
  pthread_mutex_lock(&c->lock);
  bool ok = c->state == CONN_ADMITTED;
  pthread_mutex_unlock(&c->lock);
  return ok;
}

static hsa_status_t allocate(uint32_t agent, uint64_t size, uint64_t *address) {
  struct conn *c = conn_of(agent);
  if (!c) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_wire_reply reply;
  hsa_status_t st = call(c, AQ_MSG_ALLOC, &size, sizeof size, NULL, 0, &reply, NULL, NULL);
  if (st != HSA_STATUS_SUCCESS) return st;
  if (reply.status != HSA_STATUS_SUCCESS) return (hsa_status_t)reply.status;
  *address = reply.value;
  return HSA_STATUS_SUCCESS;
}

static void release(uint32_t agent, uint64_t address) {
  struct conn *c = conn_of(agent);
  if (c) post(c, AQ_MSG_FREE, 0, &address, sizeof address, NULL, 0, NULL, NULL);
}

struct sent_count {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  _Atomic uint32_t left; /* polled without the lock, as a call's done */
  bool failed;
};

static void chunk_sent(void *arg, bool sent) {
  struct sent_count *s = arg;
  pthread_mutex_lock(&s->lock);
  if (!sent) s->failed = true;
  if (--s->left == 0) pthread_cond_signal(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

static bool sends_waiting(void *arg) {
  return atomic_load(&((struct sent_count *)arg)->left) != 0;
}

static hsa_status_t write_bytes(uint32_t agent, uint64_t address, const void *src, uint64_t size) {
  struct conn *c = conn_of(agent);
  if (!c) return HSA_STATUS_ERROR_INVALID_AGENT;
  /* Small writes are copied into the message: nothing to wait for. */
  if (size <= 65536)
    return post(c, AQ_MSG_WRITE, address, src, size, NULL, 0, NULL, NULL) ? HSA_STATUS_SUCCESS
                                                                          : HSA_STATUS_ERROR;
  struct sent_count s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};
  uint64_t chunks = (size + AQ_WIRE_CHUNK - 1) / AQ_WIRE_CHUNK;
  uint64_t *addresses = malloc(chunks * sizeof *addresses);
  if (!addresses) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  s.left = (uint32_t)chunks;
  bool ok = true;
  for (uint64_t i = 0; i < chunks; i++) {
    uint64_t off = i * AQ_WIRE_CHUNK;
    uint64_t n = size - off < AQ_WIRE_CHUNK ? size - off : AQ_WIRE_CHUNK;
    addresses[i] = address + off;
    if (!ok ||
        !post(c, AQ_MSG_WRITE, addresses[i], (const char *)src + off, n, NULL, 0, chunk_sent, &s)) {
      ok = false;
      chunk_sent(&s, false);
    }
  }
  pthread_mutex_lock(&s.lock);
  wait_receiving(&s.lock, &s.cond, sends_waiting, &s);
  pthread_mutex_unlock(&s.lock);
  free(addresses);
  return ok && !s.failed ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR;
}

static hsa_status_t fill(uint32_t agent, uint64_t address, uint64_t size, const void *pattern,
                         uint32_t pattern_size) {
  struct conn *c = conn_of(agent);
  if (!c) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (pattern_size == 0 || pattern_size > 128 || size % pattern_size)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct aq_wire_fill f = {address, size, pattern_size};
  return post(c, AQ_MSG_FILL, 0, &f, sizeof f, pattern, pattern_size, NULL, NULL)
             ? HSA_STATUS_SUCCESS
             : HSA_STATUS_ERROR;
}

/* Every chunk is asked for at once; each lands in place. */
static hsa_status_t move_bytes(uint32_t agent, uint64_t dst, uint64_t src, uint64_t size) {
  struct conn *c = conn_of(agent);
  if (!c) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_wire_copy m = {dst, src, size};
  return post(c, AQ_MSG_COPY, 0, &m, sizeof m, NULL, 0, NULL, NULL) ? HSA_STATUS_SUCCESS
                                                                    : HSA_STATUS_ERROR;
}

static hsa_status_t read_bytes(uint32_t agent, void *dst, uint64_t address, uint64_t size) {
  struct conn *c = conn_of(agent);
  if (!c) return HSA_STATUS_ERROR_INVALID_AGENT;
  uint64_t n = (size + AQ_WIRE_CHUNK - 1) / AQ_WIRE_CHUNK;
  struct call *calls = calloc(n, sizeof *calls);
  if (!calls) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  pthread_mutex_lock(&c->lock);
  bool up = c->state == CONN_ADMITTED && c->link;
  for (uint64_t i = 0; up && i < n; i++) {
    uint64_t off = i * AQ_WIRE_CHUNK;
    struct aq_wire_range r = {address + off,
                              size - off < AQ_WIRE_CHUNK ? size - off : AQ_WIRE_CHUNK};
    calls[i].id = ++c->next_id;
    calls[i].dst = (char *)dst + off;
    calls[i].dst_size = r.size;
    calls[i].next = c->calls;
    c->calls = &calls[i];
    aq_link_send(c->link, AQ_MSG_READ, calls[i].id, &r, sizeof r, NULL, 0, NULL, NULL);
  }
  hsa_status_t st = up ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR;
  for (uint64_t i = 0; up && i < n; i++) {
    wait_receiving(&c->lock, &c->cond, call_waiting, &calls[i]);
    if (calls[i].failed)
      st = HSA_STATUS_ERROR;
    else if (calls[i].reply.status != HSA_STATUS_SUCCESS)
      st = (hsa_status_t)calls[i].reply.status;
    free(calls[i].payload);
  }
  pthread_mutex_unlock(&c->lock);
  free(calls);
  return st;
}

static hsa_status_t copy_between(uint32_t dst_agent, uint64_t dst, uint32_t src_agent, uint64_t src,
                                 uint64_t size) {
  struct conn *cs = conn_of(src_agent), *cd = conn_of(dst_agent);
  if (!cs || !cd || cs == cd) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_wire_range r = {src, size};
  struct aq_wire_reply reply;
  void *token = NULL;
  uint64_t token_size = 0;
  hsa_status_t st = call(cs, AQ_MSG_GRANT, &r, sizeof r, NULL, 0, &reply, &token, &token_size);
  if (st != HSA_STATUS_SUCCESS) return st;
  if (reply.status != HSA_STATUS_SUCCESS || token_size != AQ_WIRE_TOKEN_BYTES) {
    free(token);
    return reply.status != HSA_STATUS_SUCCESS ? (hsa_status_t)reply.status : HSA_STATUS_ERROR;
  }
  struct aq_wire_pull pull = {.address = dst, .size = size, .source_address = src};
  memcpy(pull.token, token, sizeof pull.token);
  free(token);
  snprintf(pull.source, sizeof pull.source, "%s", cs->address);
  st = call(cd, AQ_MSG_PULL, &pull, sizeof pull, NULL, 0, &reply, NULL, NULL);
  if (st != HSA_STATUS_SUCCESS) return st;
  return (hsa_status_t)reply.status;
}

static void free_kernels(struct aq_remote_kernel *kernels, uint32_t n) {
  for (uint32_t i = 0; kernels && i < n; i++)
    free(kernels[i].name);
  free(kernels);
}

static hsa_status_t load(uint32_t agent, const void *code, uint64_t size, uint64_t *executable,
                         struct aq_remote_kernel **kernels_out, uint32_t *num_out) {
  struct conn *c = conn_of(agent);
  if (!c) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (size == 0 || size > AQ_WIRE_MAX_PAYLOAD) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  struct aq_wire_reply reply;
  void *list = NULL;
  uint64_t list_size = 0;
  hsa_status_t st = call(c, AQ_MSG_LOAD, code, size, NULL, 0, &reply, &list, &list_size);
  if (st != HSA_STATUS_SUCCESS) return st;
  if (reply.status != HSA_STATUS_SUCCESS) {
    free(list);
    return (hsa_status_t)reply.status;
  }
  /* Checked as a whole (reply and list) before anything is read. */
  unsigned char *whole = malloc(sizeof reply + list_size);
  if (!whole) {
    free(list);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  memcpy(whole, &reply, sizeof reply);
  if (list_size) memcpy(whole + sizeof reply, list, list_size);
  free(list);
  if (!aq_wire_check_loaded(whole, sizeof reply + list_size)) {
    free(whole);
    services->debug("remote agent %s: malformed list of kernels", c->address);
    return HSA_STATUS_ERROR;
  }
  uint32_t n = reply.reserved;
  struct aq_remote_kernel *kernels = calloc(n ? n : 1, sizeof *kernels);
  uint64_t at = sizeof reply;
  for (uint32_t i = 0; kernels && i < n; i++) {
    struct aq_wire_kernel k;
    memcpy(&k, whole + at, sizeof k);
    at += sizeof k;
    kernels[i].kernel_object = k.kernel_object;
    kernels[i].kernarg_size = k.kernarg_size;
    kernels[i].kernarg_alignment = k.kernarg_alignment;
    kernels[i].group_segment_size = k.group_segment_size;
    kernels[i].private_segment_size = k.private_segment_size;
    kernels[i].name = strndup((const char *)whole + at, k.name_length);
    at += k.name_length;
    if (!kernels[i].name) {
      free_kernels(kernels, i);
      kernels = NULL;
    }
  }
  free(whole);
  if (!kernels) {
    post(c, AQ_MSG_UNLOAD, 0, &reply.value, sizeof reply.value, NULL, 0, NULL, NULL);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  *executable = reply.value;
  *kernels_out = kernels;
  *num_out = n;
  return HSA_STATUS_SUCCESS;
}

static void unload(uint32_t agent, uint64_t executable) {
  struct conn *c = conn_of(agent);
  if (c) post(c, AQ_MSG_UNLOAD, 0, &executable, sizeof executable, NULL, 0, NULL, NULL);
}

static hsa_status_t image_create(uint32_t agent, const struct aq_wire_image *image,
                                 uint64_t *handle) {
  struct conn *c = conn_of(agent);
  if (!c) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_wire_reply reply;
  hsa_status_t st = call(c, AQ_MSG_IMAGE_CREATE, image, sizeof *image, NULL, 0, &reply, NULL, NULL);
  if (st != HSA_STATUS_SUCCESS) return st;
  if (reply.status != HSA_STATUS_SUCCESS) return (hsa_status_t)reply.status;
  *handle = reply.value;
  return HSA_STATUS_SUCCESS;
}

static void image_destroy(uint32_t agent, uint64_t handle) {
  struct conn *c = conn_of(agent);
  if (c) post(c, AQ_MSG_IMAGE_DESTROY, 0, &handle, sizeof handle, NULL, 0, NULL, NULL);
}

static hsa_status_t dispatch(uint32_t agent, uint32_t queue,
                             const hsa_kernel_dispatch_packet_t *packet, uint16_t header,
                             const void *kernarg, uint32_t kernarg_size, bool profiling) {
  struct conn *c = conn_of(agent);
  if (!c) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (kernarg_size > AQ_WIRE_MAX_KERNARG) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct flight *f = malloc(sizeof *f);
  if (!f) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  struct aq_wire_dispatch d = {
      .header = header,
      .setup = packet->setup,
      .workgroup_size = {packet->workgroup_size_x, packet->workgroup_size_y,
                         packet->workgroup_size_z},
      .profiling = profiling,
      .grid_size = {packet->grid_size_x, packet->grid_size_y, packet->grid_size_z},
      .group_segment_size = packet->group_segment_size,
      .kernel_object = packet->kernel_object,
      .kernarg_size = kernarg_size,
      .reserved = queue,
      .group_range = packet->reserved2,
  };
  f->signal = packet->completion_signal;
  pthread_mutex_lock(&c->lock);
  if (c->state != CONN_ADMITTED || !c->link) {
    pthread_mutex_unlock(&c->lock);
    free(f);
    return HSA_STATUS_ERROR;
  }
  f->id = ++c->next_id;
  f->next = NULL;
  if (c->flights_tail)
    c->flights_tail->next = f;
  else
    c->flights = f;
  c->flights_tail = f;
  aq_link_send(c->link, AQ_MSG_DISPATCH, f->id, &d, sizeof d, kernarg, kernarg_size, NULL, NULL);
  pthread_mutex_unlock(&c->lock);
  return HSA_STATUS_SUCCESS;
}

static uint32_t epoch(uint32_t agent) {
  struct conn *c = conn_of(agent);
  if (!c) return 0;
  pthread_mutex_lock(&c->lock);
  uint32_t e = c->epoch;
  pthread_mutex_unlock(&c->lock);
  return e;
}

static void stop(void) {
  pthread_mutex_lock(&stop_lock);
  stopping = true;
  pthread_cond_broadcast(&stop_cond);
  pthread_mutex_unlock(&stop_lock);
  for (uint32_t i = 0; i < num_conns; i++) {
    pthread_mutex_lock(&conns[i]->lock);
    bool joining = conns[i]->reconnecting;
    pthread_mutex_unlock(&conns[i]->lock);
    if (joining) pthread_join(conns[i]->reconnector, NULL);
  }
  aq_loop_destroy(loop); /* closes the links: on_close fails what is in flight */
  loop = NULL;
}

static bool work_while(bool (*waiting)(void *arg), void *arg, uint64_t max_ns) {
  return loop && aq_loop_work_while(loop, waiting, arg, max_ns);
}

static const struct aq_remote_plugin plugin_template = {
    .version = AQ_REMOTE_PLUGIN_VERSION,
    .describe = describe,
    .available = available,
    .epoch = epoch,
    .allocate = allocate,
    .release = release,
    .write = write_bytes,
    .fill = fill,
    .read = read_bytes,
    .move = move_bytes,
    .copy = copy_between,
    .load = load,
    .free_kernels = free_kernels,
    .unload = unload,
    .dispatch = dispatch,
    .image_create = image_create,
    .image_destroy = image_destroy,
    .work_while = work_while,
    .stop = stop,
};
static struct aq_remote_plugin plugin;

/* ---- start-up: connect to every daemon at once, wait a bounded time ---- */

static uint64_t timeout_ms(void) {
  const char *e = services->setting("AQUILA_REMOTE_TIMEOUT_MS");
  if (e && *e) {
    char *end;
    long v = strtol(e, &end, 10);
    if (!*end && v > 0 && v <= 600000) return (uint64_t)v;
  }
  return DEFAULT_TIMEOUT_MS;
}

__attribute__((visibility("default"))) const struct aq_remote_plugin *
aquila_remote_plugin_start(uint32_t version, const struct aq_remote_services *s) {
  if (version != AQ_REMOTE_PLUGIN_VERSION) return NULL;
  services = s;
  /* UCX installed fault handlers as it loaded; faults in kernels are the
   * HSA runtime's (its handler, installed before, comes back). */
  int ucx_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
  for (size_t i = 0; i < sizeof ucx_signals / sizeof ucx_signals[0]; i++)
    ucs_debug_disable_signal(ucx_signals[i]);
  const char *list = services->setting("AQUILA_REMOTE");
  const char *key_file = services->setting("AQUILA_REMOTE_KEY_FILE");
  char why[256];
  if (!list || !*list) return NULL;
  if (!key_file || !*key_file) {
    services->debug("AQUILA_REMOTE is set but AQUILA_REMOTE_KEY_FILE is not: no remote agents");
    return NULL;
  }
  if (!aq_key_load(key_file, key, why, sizeof why)) {
    services->debug("no remote agents: %s", why);
    return NULL;
  }
  loop = aq_loop_create(NULL, NULL, NULL, why, sizeof why);
  if (!loop) {
    services->debug("no remote agents: %s", why);
    return NULL;
  }
  struct conn *all[AQ_REMOTE_MAX_AGENTS];
  uint32_t n = 0;
  char *copy = strdup(list), *save = NULL;
  for (char *item = copy ? strtok_r(copy, ",", &save) : NULL; item && n < AQ_REMOTE_MAX_AGENTS;
       item = strtok_r(NULL, ",", &save)) {
    struct conn *c = calloc(1, sizeof *c);
    if (!c) break;
    snprintf(c->address, sizeof c->address, "%s", item);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    aq_nonce_make(c->client_nonce);
    pthread_mutex_lock(&c->lock);
    if (!conn_open(c, why, sizeof why)) {
      services->debug("remote agent %s left out: %s", item, why);
      pthread_mutex_unlock(&c->lock);
      free(c);
      continue;
    }
    pthread_mutex_unlock(&c->lock);
    all[n++] = c;
  }
  free(copy);
  struct timespec deadline = deadline_in(timeout_ms());
  for (uint32_t i = 0; i < n; i++) {
    struct conn *c = all[i];
    pthread_mutex_lock(&c->lock);
    bool admitted = conn_wait_admitted(c, &deadline);
    if (admitted) c->index = num_conns;
    pthread_mutex_unlock(&c->lock);
    if (admitted) {
      services->debug("remote agent %u: %s, %u compute units, target %s", num_conns,
                      c->description.name, c->description.compute_units, c->description.target);
      conns[num_conns++] = c;
    } else {
      /* Left in the loop until its on_close; then only this memory stays. */
      services->debug("remote agent %s left out: %s", c->address, c->why);
    }
  }
  if (num_conns == 0) {
    aq_loop_destroy(loop);
    loop = NULL;
    return NULL;
  }
  plugin = plugin_template;
  plugin.num_agents = num_conns;
  return &plugin;
}
