/* Links over UCX streams, and the loop that owns the UCX worker (link.h).
 *
 * The loop thread receives, connects and closes; it sleeps in epoll on the
 * worker's event descriptor when nothing is in flight. Other threads hand
 * it jobs through a locked list and wake it with ucp_worker_signal, except
 * for sends on an open link with no send queued before them: those go to
 * UCX from the sending thread (the worker is thread-safe), saving the
 * hand-over to the loop thread on the path of every command. Each link receives
 * one message at a time: the header (checked by aq_wire_check), then the
 * payload straight into its final buffer. UCX callbacks only record what
 * completed; handlers run afterwards, outside ucp_worker_progress.
 *
 * The loop's work (jobs, progress, handlers) is done by whichever thread
 * holds its turn: the loop thread, or a thread waiting for a reply
 * (aq_loop_work_while), which then receives the reply itself instead of
 * waiting for the loop thread to be woken and to wake it in turn. */
#include "link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

enum job_kind { JOB_SEND, JOB_CONNECT, JOB_CLOSE };

struct job {
  enum job_kind kind;
  struct aq_link *link;
  struct job *next;
  /* JOB_SEND */
  struct aq_wire_header header;
  ucp_dt_iov_t iov[3];
  size_t iov_count;
  void (*done)(void *arg, bool sent);
  void *done_arg;
  char why[96]; /* JOB_CLOSE */
  unsigned char copy[];
};

enum recv_phase { RECV_IDLE, RECV_HEADER, RECV_PAYLOAD };

struct aq_link {
  struct aq_loop *loop;
  atomic_uint refs;
  const struct aq_link_handler *handler;
  void *owner;
  ucp_ep_h ep;
  bool from_daemon;
  bool authenticated;
  bool closed;          /* on_close has run (loop thread) */
  bool failed;          /* closing: the reason is in failure (loop thread) */
  bool transport_error; /* the transport failed, not this end (loop thread) */
  bool established;     /* a whole header came from the peer (loop thread) */
  /* Sends from other threads: the endpoint while open (NULL once closing)
   * and the send jobs queued and not run yet, which later sends follow. */
  pthread_mutex_t send_lock;
  ucp_ep_h send_ep;
  uint32_t queued_sends;
  atomic_bool send_failed; /* a direct send failed: the loop closes the link */
  char failure[96];
  char peer[96];
  struct sockaddr_storage address; /* to connect to */
  socklen_t address_len;
  ucp_conn_request_h conn_request; /* accepted, not connected yet */
  /* Receiving (loop thread). */
  enum recv_phase phase;
  void *request; /* the receive in flight */
  struct aq_wire_header header;
  void *payload;
  bool payload_owned;
  bool completed; /* the receive in flight finished: in loop->ready */
  ucs_status_t completed_status;
  struct aq_link *next_ready;
  struct aq_link *next_live, *prev_live;
};

struct aq_loop {
  ucp_context_h context;
  ucp_worker_h worker;
  ucp_listener_h listener;
  const struct aq_link_handler *listen_handler;
  void *listen_owner;
  int epoll_fd;
  pthread_t thread;
  atomic_bool stopping;
  /* Held by the thread doing the loop's work; everything below but jobs
   * and idle belongs to it. */
  pthread_mutex_t turn;
  pthread_mutex_t lock; /* jobs */
  struct job *jobs_head, *jobs_tail;
  struct aq_link *ready;        /* links whose receive completed (loop thread) */
  struct aq_link *live;         /* open links (loop thread) */
  ucp_conn_request_h *accepted; /* connection requests not handled yet */
  size_t num_accepted, cap_accepted;
  _Atomic(void (*)(void *)) idle; /* aq_loop_set_idle */
  void *_Atomic idle_arg;
};

static _Thread_local const struct aq_loop *current_loop;

bool aq_loop_is_current(const struct aq_loop *loop) {
  return current_loop == loop;
}

void aq_loop_set_idle(struct aq_loop *loop, void (*fn)(void *arg), void *arg) {
  atomic_store(&loop->idle_arg, arg);
  atomic_store(&loop->idle, fn);
}

void aq_link_retain(struct aq_link *link) {
  atomic_fetch_add(&link->refs, 1);
}

void aq_link_release(struct aq_link *link) {
  if (atomic_fetch_sub(&link->refs, 1) == 1) {
    if (link->payload_owned) free(link->payload);
    pthread_mutex_destroy(&link->send_lock);
    free(link);
  }
}

const char *aq_link_peer(const struct aq_link *link) {
  return link->peer;
}

void aq_link_set_authenticated(struct aq_link *link) {
  link->authenticated = true;
}

/* ---- addresses ---------------------------------------------------------- */

/* "A.B.C.D:PORT", "[V6]:PORT" or "NAME:PORT" into a socket address. */
static bool parse_address(const char *text, struct sockaddr_storage *out, socklen_t *len, char *why,
                          size_t why_size) {
  char host[256];
  const char *colon, *host_start = text, *host_end;
  if (text[0] == '[') {
    host_start = text + 1;
    host_end = strchr(text, ']');
    if (!host_end || host_end[1] != ':') goto bad;
    colon = host_end + 1;
  } else {
    colon = strrchr(text, ':');
    if (!colon) goto bad;
    host_end = colon;
  }
  size_t n = (size_t)(host_end - host_start);
  if (n == 0 || n >= sizeof host) goto bad;
  memcpy(host, host_start, n);
  host[n] = 0;
  char *end;
  long port = strtol(colon + 1, &end, 10);
  if (*end || port < 0 || port > 65535 || end == colon + 1) goto bad;
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
  int rc = getaddrinfo(host, NULL, &hints, &res);
  if (rc != 0 || !res) {
    snprintf(why, why_size, "cannot resolve '%s': %s", host, gai_strerror(rc));
    return false;
  }
  memcpy(out, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  if (out->ss_family == AF_INET)
    ((struct sockaddr_in *)out)->sin_port = htons((uint16_t)port);
  else
    ((struct sockaddr_in6 *)out)->sin6_port = htons((uint16_t)port);
  return true;
bad:
  snprintf(why, why_size, "'%s' is not ADDRESS:PORT", text);
  return false;
}

/* ---- the loop ------------------------------------------------------------ */

static void push_job(struct aq_loop *loop, struct job *job) {
  pthread_mutex_lock(&loop->lock);
  if (loop->jobs_tail)
    loop->jobs_tail->next = job;
  else
    loop->jobs_head = job;
  loop->jobs_tail = job;
  pthread_mutex_unlock(&loop->lock);
  ucp_worker_signal(loop->worker);
}

static void link_fail(struct aq_link *link, const char *why) {
  if (!link->failed) {
    link->failed = true;
    snprintf(link->failure, sizeof link->failure, "%s", why);
  }
}

/* The ready list holds a reference. */
static void mark_ready(struct aq_link *link, ucs_status_t status) {
  aq_link_retain(link);
  link->completed = true;
  link->completed_status = status;
  link->next_ready = link->loop->ready;
  link->loop->ready = link;
}

static void recv_done(void *request, ucs_status_t status, size_t length, void *user_data) {
  struct aq_link *link = user_data;
  ucp_request_free(request);
  link->request = NULL;
  mark_ready(link, status);
  aq_link_release(link); /* the receive's reference */
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void post_receive(struct aq_link *link, void *buffer, size_t size) {
  ucp_request_param_t param = {
      .op_attr_mask =
          UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
      .flags = UCP_STREAM_RECV_FLAG_WAITALL,
      .cb.recv_stream = recv_done,
      .user_data = link,
  };
  size_t length = 0;
  aq_link_retain(link);
  ucs_status_ptr_t r = ucp_stream_recv_nbx(link->ep, buffer, size, &length, &param);
  if (r == NULL) {
    mark_ready(link, UCS_OK);
    aq_link_release(link);
  } else if (UCS_PTR_IS_ERR(r)) {
    mark_ready(link, UCS_PTR_STATUS(r));
    aq_link_release(link);
  } else {
    link->request = r;
  }
}

static void ep_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
  struct aq_link *link = arg;
  link->transport_error = true;
  char why[96];
  snprintf(why, sizeof why, "connection lost (%s)", ucs_status_string(status));
  link_fail(link, why);
}

static void link_shutdown(struct aq_link *link) {
  if (link->closed) return;
  link->closed = true;
  if (link->request) {
    ucp_request_cancel(link->loop->worker, link->request);
    /* its callback still comes, with a cancelled status */
  }
  pthread_mutex_lock(&link->send_lock);
  link->send_ep = NULL;
  pthread_mutex_unlock(&link->send_lock);
  if (link->ep) {
    /* What this end sent on a working link goes out first (bounded: a peer
     * that stopped reading must not hold this thread); then the endpoint
     * is closed by force, which ends whatever is still pending with an
     * error. A close that waits for its sends instead, left unfinished
     * (a daemon that never answered the connection, a silent network),
     * made UCX 1.13 abort the process when the worker went ("pending
     * request should have been flushed"). The peer hears of the close
     * through its own error handling. */
    uint64_t deadline = monotonic_ns() + 1000000000ull;
    if (link->established && !link->transport_error && !atomic_load(&link->loop->stopping)) {
      ucp_request_param_t flush = {.op_attr_mask = 0};
      ucs_status_ptr_t r = ucp_ep_flush_nbx(link->ep, &flush);
      if (r && !UCS_PTR_IS_ERR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS && monotonic_ns() < deadline)
          ucp_worker_progress(link->loop->worker);
        ucp_request_free(r);
      }
    }
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                 .flags = UCP_EP_CLOSE_FLAG_FORCE};
    ucs_status_ptr_t r = ucp_ep_close_nbx(link->ep, &param);
    if (r && !UCS_PTR_IS_ERR(r)) {
      deadline = monotonic_ns() + 1000000000ull;
      while (ucp_request_check_status(r) == UCS_INPROGRESS && monotonic_ns() < deadline)
        ucp_worker_progress(link->loop->worker);
      ucp_request_free(r);
    }
    link->ep = NULL;
  }
  if (link->prev_live)
    link->prev_live->next_live = link->next_live;
  else if (link->loop->live == link)
    link->loop->live = link->next_live;
  if (link->next_live) link->next_live->prev_live = link->prev_live;
  link->next_live = link->prev_live = NULL;
  link->handler->on_close(link->owner, link, link->failed ? link->failure : "closed");
  aq_link_release(link); /* the loop's reference */
}

/* A message this end cannot take: the handler may tell the peer why and
 * close later (on_refuse); the link reads nothing more either way. */
static void link_refuse(struct aq_link *link, const char *why) {
  if (link->handler->on_refuse && link->handler->on_refuse(link->owner, link, why)) return;
  link_fail(link, why);
  link_shutdown(link);
}

static void link_start_receiving(struct aq_link *link) {
  link->phase = RECV_HEADER;
  post_receive(link, &link->header, sizeof link->header);
}

static bool link_open(struct aq_link *link) {
  ucp_ep_params_t params = {
      .field_mask = UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
      /* Peer error handling: a peer that dies or goes silent fails the
       * link. It rules out UCX's shared memory transports (on one machine
       * the link is TCP: 64 MiB reads 3.5-3.9 GB/s, against 10-12 over
       * shared memory without it); but without it UCX 1.13 crashes the
       * process now and then when the peer closes a link whose first
       * sends are still waiting for the connection (a pending request
       * replayed after it completed): a client that drops its connection
       * must not take the daemon down. */
      .err_mode = UCP_ERR_HANDLING_MODE_PEER,
      .err_handler = {.cb = ep_error, .arg = link},
  };
  if (link->conn_request) {
    params.field_mask |= UCP_EP_PARAM_FIELD_CONN_REQUEST;
    params.conn_request = link->conn_request;
  } else {
    params.field_mask |= UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
    params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    params.sockaddr.addr = (const struct sockaddr *)&link->address;
    params.sockaddr.addrlen = link->address_len;
  }
  ucs_status_t st = ucp_ep_create(link->loop->worker, &params, &link->ep);
  link->conn_request = NULL;
  if (st != UCS_OK) {
    link->ep = NULL;
    char why[96];
    snprintf(why, sizeof why, "cannot connect (%s)", ucs_status_string(st));
    link_fail(link, why);
    return false;
  }
  link->next_live = link->loop->live;
  if (link->loop->live) link->loop->live->prev_live = link;
  link->loop->live = link;
  pthread_mutex_lock(&link->send_lock);
  link->send_ep = link->ep;
  pthread_mutex_unlock(&link->send_lock);
  link_start_receiving(link);
  return true;
}

static void send_done(void *request, ucs_status_t status, void *user_data) {
  struct job *job = user_data;
  ucp_request_free(request);
  if (status != UCS_OK) {
    char why[96];
    snprintf(why, sizeof why, "send failed (%s)", ucs_status_string(status));
    job->link->transport_error = true;
    link_fail(job->link, why);
  }
  if (job->done) job->done(job->done_arg, status == UCS_OK);
  aq_link_release(job->link);
  free(job);
}

/* Hands a send job's message to UCX: NULL when sent at once, an error, or
 * a request whose completion (send_done) finishes the job. */
static ucs_status_ptr_t post_send(ucp_ep_h ep, struct job *job) {
  ucp_request_param_t param = {
      .op_attr_mask =
          UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE,
      .cb.send = send_done,
      .user_data = job,
      .datatype = ucp_dt_make_iov(),
  };
  return ucp_stream_send_nbx(ep, job->iov, job->iov_count, &param);
}

static void run_job(struct aq_loop *loop, struct job *job) {
  struct aq_link *link = job->link;
  switch (job->kind) {
  case JOB_CONNECT:
    if (!link->closed && !link_open(link)) link_shutdown(link);
    break;
  case JOB_CLOSE:
    link_fail(link, job->why);
    link_shutdown(link);
    break;
  case JOB_SEND: {
    bool sent = false;
    pthread_mutex_lock(&link->send_lock);
    link->queued_sends--;
    pthread_mutex_unlock(&link->send_lock);
    if (!link->closed && !link->failed && link->ep) {
      ucs_status_ptr_t r = post_send(link->ep, job);
      if (r != NULL && !UCS_PTR_IS_ERR(r)) return; /* send_done finishes it */
      sent = r == NULL;
      if (!sent) {
        char why[96];
        snprintf(why, sizeof why, "send failed (%s)", ucs_status_string(UCS_PTR_STATUS(r)));
        link_fail(link, why);
      }
    }
    if (job->done) job->done(job->done_arg, sent);
    break;
  }
  }
  aq_link_release(link);
  free(job);
}

/* A receive finished: the next step of the link's message. */
static void link_received(struct aq_link *link) {
  link->completed = false;
  if (link->closed) return;
  if (link->completed_status != UCS_OK) {
    if (link->completed_status != UCS_ERR_CANCELED) {
      link->transport_error = true;
      link_fail(link, "connection lost");
    }
    link_shutdown(link);
    return;
  }
  if (link->phase == RECV_HEADER) {
    link->established = true;
    if (!aq_wire_check(&link->header, NULL, link->from_daemon, link->authenticated)) {
      link_refuse(link, "malformed message");
      return;
    }
    if (link->header.length == 0) {
      if (!link->handler->on_message(link->owner, link, &link->header, NULL)) {
        link_refuse(link, "refused message");
        return;
      }
      if (!link->closed) link_start_receiving(link);
      return;
    }
    void *buffer = link->handler->payload_buffer
                       ? link->handler->payload_buffer(link->owner, link, &link->header)
                       : NULL;
    link->payload_owned = buffer == NULL;
    if (!buffer) buffer = malloc(link->header.length);
    if (!buffer) {
      link_fail(link, "out of memory");
      link_shutdown(link);
      return;
    }
    link->payload = buffer;
    link->phase = RECV_PAYLOAD;
    post_receive(link, buffer, link->header.length);
    return;
  }
  /* The payload. */
  void *payload = link->payload;
  bool owned = link->payload_owned;
  link->payload = NULL;
  link->payload_owned = false;
  bool ok = aq_wire_check(&link->header, payload, link->from_daemon, link->authenticated) &&
            link->handler->on_message(link->owner, link, &link->header, payload);
  if (owned) free(payload);
  if (!ok) {
    link_refuse(link, "malformed message");
    return;
  }
  if (!link->closed) link_start_receiving(link);
}

static void conn_request(ucp_conn_request_h request, void *arg) {
  struct aq_loop *loop = arg;
  if (loop->num_accepted == loop->cap_accepted) {
    size_t cap = loop->cap_accepted ? 2 * loop->cap_accepted : 8;
    ucp_conn_request_h *p = realloc(loop->accepted, cap * sizeof *p);
    if (!p) {
      ucp_listener_reject(loop->listener, request);
      return;
    }
    loop->accepted = p;
    loop->cap_accepted = cap;
  }
  loop->accepted[loop->num_accepted++] = request;
}

static struct aq_link *link_new(struct aq_loop *loop, const struct aq_link_handler *handler,
                                void *owner) {
  struct aq_link *link = calloc(1, sizeof *link);
  if (!link) return NULL;
  pthread_mutex_init(&link->send_lock, NULL);
  link->loop = loop;
  atomic_init(&link->refs, 1); /* the loop's */
  link->handler = handler;
  link->owner = owner;
  return link;
}

static void accept_pending(struct aq_loop *loop) {
  for (size_t i = 0; i < loop->num_accepted; i++) {
    ucp_conn_request_h request = loop->accepted[i];
    struct aq_link *link = link_new(loop, loop->listen_handler, NULL);
    if (!link) {
      ucp_listener_reject(loop->listener, request);
      continue;
    }
    ucp_conn_request_attr_t attr = {.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR};
    if (ucp_conn_request_query(request, &attr) == UCS_OK) {
      char host[INET6_ADDRSTRLEN] = "?";
      const struct sockaddr *sa = (const struct sockaddr *)&attr.client_address;
      if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof host);
      else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host, sizeof host);
      snprintf(link->peer, sizeof link->peer, "%s", host);
    }
    link->conn_request = request;
    link->owner = loop->listen_handler->on_accept
                      ? loop->listen_handler->on_accept(loop->listen_owner, link)
                      : loop->listen_owner;
    if (!link->owner) {
      ucp_listener_reject(loop->listener, request);
      aq_link_release(link);
      continue;
    }
    if (!link_open(link)) link_shutdown(link);
  }
  loop->num_accepted = 0;
}

/* A UCX memory size: a number, then k, m or g (either case), then b, or
 * none; 0 when it is not one. */
static uint64_t ucx_memunits(const char *s) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return 0;
  uint64_t scale = 1;
  if (*end == 'k' || *end == 'K')
    scale = 1ull << 10, end++;
  else if (*end == 'm' || *end == 'M')
    scale = 1ull << 20, end++;
  else if (*end == 'g' || *end == 'G')
    scale = 1ull << 30, end++;
  if (*end == 'b' || *end == 'B') end++;
  return *end || v > UINT64_MAX / scale ? 0 : v * scale;
}

/* UCX's TCP segment sizes in Aquila's processes when the environment sets
 * neither: larger than UCX 1.13's own (8 KiB sent, 64 KiB received), which
 * cost a 64 MiB write or read on loopback half its speed (about 2 GB/s
 * against 3.0-3.6 here, bench/remote.sh). */
#define AQ_TCP_TX_SEG_SIZE "64K"
#define AQ_TCP_RX_SEG_SIZE "1M"

static bool tcp_segments_from_environment(void) {
  const char *tx = getenv("UCX_TCP_TX_SEG_SIZE"), *rx = getenv("UCX_TCP_RX_SEG_SIZE");
  return (tx && *tx) || (rx && *rx);
}

uint32_t aq_link_tcp_segments(void) {
  const char *tx = getenv("UCX_TCP_TX_SEG_SIZE"), *rx = getenv("UCX_TCP_RX_SEG_SIZE");
  if (!tcp_segments_from_environment()) tx = AQ_TCP_TX_SEG_SIZE, rx = AQ_TCP_RX_SEG_SIZE;
  uint64_t t = tx && *tx ? ucx_memunits(tx) : 8u << 10,
           r = rx && *rx ? ucx_memunits(rx) : 64u << 10;
  if (!t || !r) return 0;
  /* FNV-1a over both; never 0. */
  uint64_t v[2] = {t, r};
  uint32_t h = 2166136261u;
  const unsigned char *p = (const unsigned char *)v;
  for (size_t i = 0; i < sizeof v; i++)
    h = (h ^ p[i]) * 16777619u;
  return h ? h : 1;
}

bool aq_link_tcp_segments_agree(uint32_t mine, uint32_t theirs) {
  return !mine || !theirs || mine == theirs;
}

/* How long the loop keeps polling after its last activity before it
 * sleeps: a reply that comes within it costs no wake-up
 * (AQUILA_REMOTE_SPIN_US). 0 by default: on a machine with few cores the
 * polling takes the processor from the threads that would answer (two
 * cores, client and daemon on one machine: 54 us round trip without, 66 us
 * with 20 us of polling, 106 us with 50). */
static uint64_t spin_ns(void) {
  const char *e = getenv("AQUILA_REMOTE_SPIN_US");
  if (e && *e) {
    char *end;
    long v = strtol(e, &end, 10);
    if (!*end && v >= 0 && v <= 1000000) return (uint64_t)v * 1000;
  }
  return 0;
}

/* One pass over the loop's work: jobs, UCX's progress, connection
 * requests, finished receives, failed links. Whether it did anything.
 * With the turn held. */
static bool loop_pass(struct aq_loop *loop) {
  pthread_mutex_lock(&loop->lock);
  struct job *jobs = loop->jobs_head;
  loop->jobs_head = loop->jobs_tail = NULL;
  pthread_mutex_unlock(&loop->lock);
  bool active = jobs != NULL;
  while (jobs) {
    struct job *next = jobs->next;
    run_job(loop, jobs);
    jobs = next;
  }
  /* Each receive that finished is handled after the progress call that
   * finished it, before the next: a header's handler posts the receive of
   * its payload before UCX reads more of the stream. Progress drained to
   * the end first left the rest of a 16 MiB payload in UCX's own segments,
   * read into fresh memory and copied out of it cold: 64 MiB reads and
   * writes at about half of ucx_perftest's rate. */
  for (;;) {
    bool progressed = ucp_worker_progress(loop->worker) != 0;
    if (progressed) active = true;
    if (!loop->ready) {
      if (progressed) continue;
      break;
    }
    active = true;
    while (loop->ready) {
      struct aq_link *link = loop->ready;
      loop->ready = link->next_ready;
      link->next_ready = NULL;
      link_received(link);
      aq_link_release(link);
    }
  }
  accept_pending(loop);
  /* Links the transport failed. */
  for (struct aq_link *link = loop->live, *next; link; link = next) {
    next = link->next_live;
    if (atomic_load(&link->send_failed)) {
      link->transport_error = true;
      link_fail(link, "send failed");
    }
    if (link->failed) link_shutdown(link);
  }
  return active;
}

/* Whether a pass has work now; else the idle function runs. With the turn
 * held. */
static bool loop_settle(struct aq_loop *loop) {
  pthread_mutex_lock(&loop->lock);
  bool busy = loop->jobs_head != NULL;
  pthread_mutex_unlock(&loop->lock);
  if (busy || loop->ready || loop->num_accepted) return true;
  void (*idle)(void *) = atomic_load(&loop->idle);
  if (idle) idle(atomic_load(&loop->idle_arg));
  return false;
}

static void *loop_main(void *arg) {
  struct aq_loop *loop = arg;
  current_loop = loop;
  uint64_t spin = spin_ns(), last_activity = 0;
  while (!atomic_load(&loop->stopping)) {
    pthread_mutex_lock(&loop->turn);
    bool active = loop_pass(loop);
    bool busy = loop_settle(loop);
    pthread_mutex_unlock(&loop->turn);
    if (busy) continue;
    if (spin) {
      uint64_t now = monotonic_ns();
      if (active) last_activity = now;
      if (now - last_activity < spin) continue;
    }
    ucs_status_t st = ucp_worker_arm(loop->worker);
    if (st == UCS_ERR_BUSY) continue;
    struct epoll_event event;
    /* Bounded: a failure UCX reports only through progress is seen. */
    epoll_wait(loop->epoll_fd, &event, 1, 200);
  }
  pthread_mutex_lock(&loop->turn);
  while (loop->live)
    link_shutdown(loop->live);
  pthread_mutex_unlock(&loop->turn);
  return NULL;
}

bool aq_loop_work_while(struct aq_loop *loop, bool (*waiting)(void *arg), void *arg,
                        uint64_t max_ns) {
  if (current_loop == loop) return false;
  /* The loop thread holds the turn for a pass at a time; another waiter may
   * hold it longer, and may receive what this one waits for meanwhile. */
  uint64_t last_activity = monotonic_ns();
  while (pthread_mutex_trylock(&loop->turn) != 0) {
    if (!waiting(arg) || monotonic_ns() - last_activity >= max_ns) return false;
    cpu_relax();
  }
  const struct aq_loop *was = current_loop;
  current_loop = loop;
  while (waiting(arg) && !atomic_load(&loop->stopping)) {
    if (loop_pass(loop)) {
      last_activity = monotonic_ns();
    } else {
      if (monotonic_ns() - last_activity >= max_ns) break;
      cpu_relax();
    }
  }
  loop_settle(loop);
  current_loop = was;
  /* What this thread took from the worker's event descriptor may have been
   * the loop thread's reason to wake: it looks again. (Before the unlock:
   * after it, aq_loop_destroy may free the loop.) */
  ucp_worker_signal(loop->worker);
  pthread_mutex_unlock(&loop->turn);
  return true;
}

static bool listen_on(struct aq_loop *loop, const char *address,
                      const struct aq_link_handler *handler, void *owner, char *why,
                      size_t why_size) {
  struct sockaddr_storage sa;
  socklen_t len;
  if (!parse_address(address, &sa, &len, why, why_size)) return false;
  loop->listen_handler = handler;
  loop->listen_owner = owner;
  ucp_listener_params_t params = {
      .field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER,
      .sockaddr = {.addr = (const struct sockaddr *)&sa, .addrlen = len},
      .conn_handler = {.cb = conn_request, .arg = loop},
  };
  ucs_status_t st = ucp_listener_create(loop->worker, &params, &loop->listener);
  if (st != UCS_OK) {
    snprintf(why, why_size, "cannot listen on %s (%s)", address, ucs_status_string(st));
    return false;
  }
  return true;
}

struct aq_loop *aq_loop_create(const char *listen_address, const struct aq_link_handler *handler,
                               void *owner, char *why, size_t why_size) {
  struct aq_loop *loop = calloc(1, sizeof *loop);
  if (!loop) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  pthread_mutex_init(&loop->lock, NULL);
  pthread_mutex_init(&loop->turn, NULL);
  loop->epoll_fd = -1;
  ucp_config_t *config = NULL;
  ucs_status_t st = ucp_config_read(NULL, NULL, &config);
  if (st == UCS_OK && !tcp_segments_from_environment()) {
    st = ucp_config_modify(config, "TX_SEG_SIZE", AQ_TCP_TX_SEG_SIZE);
    if (st == UCS_OK) st = ucp_config_modify(config, "RX_SEG_SIZE", AQ_TCP_RX_SEG_SIZE);
    if (st != UCS_OK) ucp_config_release(config);
  }
  if (st == UCS_OK) {
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                           .features = UCP_FEATURE_STREAM | UCP_FEATURE_WAKEUP};
    st = ucp_init(&params, config, &loop->context);
    ucp_config_release(config);
  }
  if (st == UCS_OK) {
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_MULTI};
    st = ucp_worker_create(loop->context, &wp, &loop->worker);
  }
  int efd = -1;
  if (st == UCS_OK) st = ucp_worker_get_efd(loop->worker, &efd);
  if (st != UCS_OK) {
    snprintf(why, why_size, "UCX: %s", ucs_status_string(st));
    goto fail;
  }
  loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event event = {.events = EPOLLIN};
  if (loop->epoll_fd < 0 || epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, efd, &event) < 0) {
    snprintf(why, why_size, "epoll: %s", strerror(errno));
    goto fail;
  }
  if (listen_address && !listen_on(loop, listen_address, handler, owner, why, why_size)) goto fail;
  if (pthread_create(&loop->thread, NULL, loop_main, loop) != 0) {
    snprintf(why, why_size, "cannot start the UCX thread");
    goto fail;
  }
  return loop;
fail:
  if (loop->listener) ucp_listener_destroy(loop->listener);
  if (loop->epoll_fd >= 0) close(loop->epoll_fd);
  if (loop->worker) ucp_worker_destroy(loop->worker);
  if (loop->context) ucp_cleanup(loop->context);
  free(loop);
  return NULL;
}

void aq_loop_destroy(struct aq_loop *loop) {
  if (!loop) return;
  atomic_store(&loop->stopping, true);
  ucp_worker_signal(loop->worker);
  pthread_join(loop->thread, NULL);
  struct job *jobs = loop->jobs_head;
  while (jobs) {
    struct job *next = jobs->next;
    if (jobs->kind == JOB_SEND && jobs->done) jobs->done(jobs->done_arg, false);
    aq_link_release(jobs->link);
    free(jobs);
    jobs = next;
  }
  if (loop->listener) ucp_listener_destroy(loop->listener);
  ucp_worker_destroy(loop->worker);
  ucp_cleanup(loop->context);
  close(loop->epoll_fd);
  free(loop->accepted);
  free(loop);
}

struct aq_link *aq_link_connect(struct aq_loop *loop, const char *address,
                                const struct aq_link_handler *handler, void *owner, char *why,
                                size_t why_size) {
  struct aq_link *link = link_new(loop, handler, owner);
  if (!link) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  link->from_daemon = true;
  snprintf(link->peer, sizeof link->peer, "%s", address);
  if (!parse_address(address, &link->address, &link->address_len, why, why_size)) {
    free(link);
    return NULL;
  }
  struct job *job = calloc(1, sizeof *job);
  if (!job) {
    free(link);
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  job->kind = JOB_CONNECT;
  job->link = link;
  aq_link_retain(link); /* the job's */
  aq_link_retain(link); /* the caller's */
  push_job(loop, job);
  return link;
}

void aq_link_send(struct aq_link *link, uint16_t type, uint64_t id, const void *part1, size_t size1,
                  const void *part2, size_t size2, void (*done)(void *arg, bool sent), void *arg) {
  aq_link_send_flags(link, type, 0, id, part1, size1, part2, size2, done, arg);
}

void aq_link_send_flags(struct aq_link *link, uint16_t type, uint16_t flags, uint64_t id,
                        const void *part1, size_t size1, const void *part2, size_t size2,
                        void (*done)(void *arg, bool sent), void *arg) {
  size_t copy = done ? 0 : size1 + size2;
  struct job *job = malloc(sizeof *job + copy);
  if (!job) {
    if (done) done(arg, false);
    aq_link_close(link, "out of memory");
    return;
  }
  memset(job, 0, sizeof *job);
  job->kind = JOB_SEND;
  job->link = link;
  job->header = (struct aq_wire_header){AQ_WIRE_MAGIC, type, flags, id, size1 + size2};
  job->iov[0] = (ucp_dt_iov_t){&job->header, sizeof job->header};
  job->iov_count = 1;
  if (done) {
    if (size1) job->iov[job->iov_count++] = (ucp_dt_iov_t){(void *)part1, size1};
    if (size2) job->iov[job->iov_count++] = (ucp_dt_iov_t){(void *)part2, size2};
  } else if (copy) {
    if (size1) memcpy(job->copy, part1, size1);
    if (size2) memcpy(job->copy + size1, part2, size2);
    job->iov[job->iov_count++] = (ucp_dt_iov_t){job->copy, copy};
  }
  job->done = done;
  job->done_arg = arg;
  aq_link_retain(link);
  pthread_mutex_lock(&link->send_lock);
  if (!link->send_ep || link->queued_sends) {
    link->queued_sends++;
    pthread_mutex_unlock(&link->send_lock);
    push_job(link->loop, job);
    return;
  }
  /* Straight to UCX, under send_lock so that sends keep their order. */
  ucs_status_ptr_t r = post_send(link->send_ep, job);
  pthread_mutex_unlock(&link->send_lock);
  if (r != NULL && !UCS_PTR_IS_ERR(r)) {
    ucp_worker_signal(link->loop->worker); /* the loop progresses it */
    return;
  }
  if (r != NULL) {
    atomic_store(&link->send_failed, true);
    ucp_worker_signal(link->loop->worker);
  }
  if (done) done(arg, r == NULL);
  aq_link_release(link);
  free(job);
}

void aq_link_close(struct aq_link *link, const char *why) {
  struct job *job = calloc(1, sizeof *job);
  if (!job) return; /* the link stays open; the caller's next failure closes it */
  job->kind = JOB_CLOSE;
  job->link = link;
  snprintf(job->why, sizeof job->why, "%s", why);
  aq_link_retain(link);
  push_job(link->loop, job);
}
