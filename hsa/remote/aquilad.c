/* aquilad: serves this machine's CPU agent to Aquila clients elsewhere
 * (their remote agents, hsa/remote/client.c) over UCX.
 *
 *   aquilad --listen ADDR:PORT --key-file FILE [--units N] [--max-memory MIB] [--poll-us N]
 *
 * Runs in the foreground until SIGTERM or SIGINT. A client must prove it
 * holds the key (auth.h) before anything else it sends is read; then it
 * allocates memory (bounded per client), writes, reads and fills it, loads
 * code objects and dispatches kernels. Messages run on the loop thread as
 * they arrive: the client sends a transfer only when the kernels it depends
 * on have completed (it has their DONE), so the daemon need not order them
 * itself. Each of the client's queues has an AQL queue here (its barrier
 * bits order its kernels); a dispatch's end is reported by the compute unit
 * that ends it, or by the queue's completer thread when more of the queue
 * is in flight (dispatch_ended). Memory a read is still sending from is unmapped only
 * when the send is over, whatever the client asks. */
#include <errno.h>
#include <stdarg.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ext_image.h>
#include <limits.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>
#include <ucs/debug/debug.h>

#include "aquila/hsa_ext_aquila.h"
#include "auth.h"
#include "link.h"

#define HANDSHAKE_SECONDS 5
#define QUEUE_SIZE 16384

static uint8_t key[AQ_KEY_BYTES];
static hsa_agent_t cpu_agent;
static struct aq_wire_welcome description;
static uint64_t memory_limit; /* per client */
static int verbose;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "aquilad: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct allocation {
  uint64_t address, size;
};

struct daemon_queue;

struct pending_dispatch {
  uint64_t id;
  hsa_signal_t signal;
  void *kernarg;
  bool profiling;
  bool ended; /* under client->lock */
  struct daemon_queue *queue;
  struct pending_dispatch *next;
};

#define QUEUES_PER_CLIENT 16

struct client;

/* One of the client's queues: an AQL queue and its completer. */
struct daemon_queue {
  struct client *client;
  uint32_t client_queue; /* the client's queue id */
  hsa_queue_t *queue;
  /* Under client->lock: the dispatches not reported yet, in order; how
   * many of them have ended; threads sending a DONE of this queue. */
  struct pending_dispatch *pending_head, *pending_tail;
  uint32_t num_pending, num_ended, num_reporting;
  pthread_t completer;
};

struct client {
  struct aq_link *link;
  uint64_t connected_ns;
  atomic_uint refs; /* the link's, and one per completer thread */
  /* Handshake (loop thread). */
  bool hello_seen;
  uint32_t tcp_segments; /* its hello's */
  atomic_bool admitted; /* read by the main thread's handshake timeout */
  /* Refused (REFUSED sent): nothing it sends is read; the main thread
   * closes the link AQ_WIRE_REFUSAL_LINGER_SECONDS after refused_ns unless
   * the client has closed it first. */
  atomic_bool refused;
  _Atomic uint64_t refused_ns;
  uint8_t client_nonce[AQ_WIRE_NONCE_BYTES], daemon_nonce[AQ_WIRE_NONCE_BYTES];
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool closing; /* under lock */
  struct daemon_queue queues[QUEUES_PER_CLIENT];
  uint32_t num_queues;
  /* Loop thread's own. */
  struct allocation *allocations; /* sorted by address */
  size_t num_allocations, cap_allocations;
  uint64_t memory_used;
  /* Reads whose bytes are being sent, and frees that wait for them (under lock). */
  uint32_t reads_in_flight;
  struct allocation *deferred_frees;
  size_t num_deferred, cap_deferred;
  hsa_executable_t *executables;
  hsa_code_object_reader_t *readers;
  void **code;
  size_t num_executables;
  /* The kernels of those executables: a dispatch may name only these. */
  struct known_kernel {
    uint64_t object, executable;
    uint32_t kernarg_size;
  } * kernels;
  size_t num_kernels, cap_kernels;
  /* Its images (HSA handles of the CPU agent), over its memory (loop thread). */
  uint64_t *images;
  size_t num_images, cap_images;
  struct client *next;
};

static pthread_mutex_t clients_lock = PTHREAD_MUTEX_INITIALIZER;
static struct client *clients;
/* Clients not freed yet (a completer thread may still be freeing one that
 * left the list): the HSA runtime shuts down only after them. */
static uint32_t clients_alive;
static pthread_cond_t clients_gone = PTHREAD_COND_INITIALIZER;
static struct aq_loop *loop;

/* ---- daemon to daemon: grants and pulls -------------------------------------
 * A grant lets whoever presents its token read one range of its owner's
 * memory, once, within GRANT_SECONDS. A pull is this daemon reading a
 * range from another daemon (a peer, reached as its client, proving the
 * same key) into a client's memory. All of it runs on the loop thread. */
#define GRANT_SECONDS 60
#define GRANTS_MAX 4096

struct grant {
  uint8_t token[AQ_WIRE_TOKEN_BYTES];
  struct client *owner; /* a reference */
  uint64_t address, size, expires_ns;
};
static struct grant *grants;
static size_t num_grants, cap_grants;

struct pull {
  uint64_t id;           /* the GRANT_READ's, on the peer link */
  struct client *client; /* a reference, and one of its reads in flight */
  uint64_t client_request;
  uint64_t address, size;
  struct aq_wire_grant_read message;
  bool sent;
  struct pull *next;
};

enum peer_state { PEER_CONNECTING, PEER_CHALLENGED, PEER_ADMITTED };

struct peer {
  char address[96];
  struct aq_link *link;
  enum peer_state state;
  uint8_t nonce[AQ_WIRE_NONCE_BYTES];
  struct pull *pulls;
  uint64_t next_id;
  struct peer *next;
};
static struct peer *peers;

/* ---- memory ------------------------------------------------------------- */

static size_t find_allocation(struct client *c, uint64_t address) {
  size_t lo = 0, hi = c->num_allocations;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (c->allocations[mid].address <= address)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo; /* the first allocation above address */
}

/* Whether [address, address + size) lies inside one of the client's
 * allocations: the only memory its messages may touch. */
static bool range_is_owned(struct client *c, uint64_t address, uint64_t size) {
  size_t i = find_allocation(c, address);
  if (i == 0) return false;
  const struct allocation *a = &c->allocations[i - 1];
  return address >= a->address && size <= a->size && address - a->address <= a->size - size;
}

static int allocate(struct client *c, uint64_t size, uint64_t *address) {
  if (size == 0 || size > memory_limit || c->memory_used > memory_limit - size)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  if (c->num_allocations == c->cap_allocations) {
    size_t cap = c->cap_allocations ? 2 * c->cap_allocations : 64;
    struct allocation *p = realloc(c->allocations, cap * sizeof *p);
    if (!p) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    c->allocations = p;
    c->cap_allocations = cap;
  }
  void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  uint64_t a = (uint64_t)(uintptr_t)m;
  size_t i = find_allocation(c, a);
  memmove(&c->allocations[i + 1], &c->allocations[i],
          (c->num_allocations - i) * sizeof *c->allocations);
  c->allocations[i] = (struct allocation){a, size};
  c->num_allocations++;
  c->memory_used += size;
  *address = a;
  return HSA_STATUS_SUCCESS;
}

static void release(struct client *c, uint64_t address) {
  size_t i = find_allocation(c, address);
  if (i == 0 || c->allocations[i - 1].address != address) return; /* not its own: ignored */
  i--;
  /* A read may still be sending from it: then it goes when the reads end. */
  pthread_mutex_lock(&c->lock);
  bool later = c->reads_in_flight > 0;
  if (later && c->num_deferred == c->cap_deferred) {
    size_t cap = c->cap_deferred ? 2 * c->cap_deferred : 16;
    struct allocation *p = realloc(c->deferred_frees, cap * sizeof *p);
    if (p) {
      c->deferred_frees = p;
      c->cap_deferred = cap;
    }
  }
  if (later && c->num_deferred < c->cap_deferred) {
    c->deferred_frees[c->num_deferred++] = c->allocations[i];
  } else {
    /* No room to wait (out of memory): leaked, not unmapped under a send. */
    if (!later) munmap((void *)(uintptr_t)address, c->allocations[i].size);
  }
  pthread_mutex_unlock(&c->lock);
  c->memory_used -= c->allocations[i].size;
  memmove(&c->allocations[i], &c->allocations[i + 1],
          (c->num_allocations - i - 1) * sizeof *c->allocations);
  c->num_allocations--;
}

/* ---- code objects -------------------------------------------------------- */

struct symbol_list {
  struct client *client;
  uint64_t executable;
  unsigned char *bytes;
  size_t size, cap;
  uint32_t count;
  bool failed;
};

static void list_append(struct symbol_list *l, const void *p, size_t n) {
  if (l->failed) return;
  if (l->size + n > l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 1024;
    while (cap < l->size + n)
      cap *= 2;
    unsigned char *b = realloc(l->bytes, cap);
    if (!b) {
      l->failed = true;
      return;
    }
    l->bytes = b;
    l->cap = cap;
  }
  memcpy(l->bytes + l->size, p, n);
  l->size += n;
}

static hsa_status_t add_kernel(hsa_executable_t e, hsa_agent_t agent, hsa_executable_symbol_t s,
                               void *data) {
  struct symbol_list *l = data;
  hsa_symbol_kind_t kind;
  if (hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind) !=
          HSA_STATUS_SUCCESS ||
      kind != HSA_SYMBOL_KIND_KERNEL)
    return HSA_STATUS_SUCCESS;
  struct aq_wire_kernel k = {0};
  hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k.kernel_object);
  hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                 &k.kernarg_size);
  hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT,
                                 &k.kernarg_alignment);
  hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                 &k.group_segment_size);
  hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                 &k.private_segment_size);
  hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &k.name_length);
  char *name = calloc(1, (size_t)k.name_length + 1);
  if (!name || k.name_length == 0 || k.name_length > AQ_WIRE_MAX_NAME) {
    free(name);
    l->failed = true;
    return HSA_STATUS_ERROR;
  }
  hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name);
  struct client *c = l->client;
  if (c->num_kernels == c->cap_kernels) {
    size_t cap = c->cap_kernels ? 2 * c->cap_kernels : 64;
    struct known_kernel *p = realloc(c->kernels, cap * sizeof *p);
    if (!p) {
      free(name);
      l->failed = true;
      return HSA_STATUS_ERROR;
    }
    c->kernels = p;
    c->cap_kernels = cap;
  }
  c->kernels[c->num_kernels++] =
      (struct known_kernel){k.kernel_object, l->executable, k.kernarg_size};
  list_append(l, &k, sizeof k);
  list_append(l, name, k.name_length);
  free(name);
  l->count++;
  return HSA_STATUS_SUCCESS;
}

static void forget_kernels(struct client *c, uint64_t executable) {
  for (size_t i = 0; i < c->num_kernels;)
    if (c->kernels[i].executable == executable)
      c->kernels[i] = c->kernels[--c->num_kernels];
    else
      i++;
}

static void load_code(struct client *c, uint64_t id, void *code, uint64_t size) {
  struct aq_wire_reply reply = {HSA_STATUS_ERROR_OUT_OF_RESOURCES, 0, 0};
  struct symbol_list list = {.client = c};
  hsa_code_object_reader_t reader = {0};
  hsa_executable_t exec = {0};
  size_t n = c->num_executables;
  hsa_executable_t *es = realloc(c->executables, (n + 1) * sizeof *es);
  if (es) c->executables = es;
  hsa_code_object_reader_t *rs = realloc(c->readers, (n + 1) * sizeof *rs);
  if (rs) c->readers = rs;
  void **cs = realloc(c->code, (n + 1) * sizeof *cs);
  if (cs) c->code = cs;
  if (!es || !rs || !cs) goto reply;
  hsa_status_t st = hsa_code_object_reader_create_from_memory(code, size, &reader);
  if (st == HSA_STATUS_SUCCESS)
    st = hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL,
                                   &exec);
  if (st == HSA_STATUS_SUCCESS)
    st = hsa_executable_load_agent_code_object(exec, cpu_agent, reader, NULL, NULL);
  if (st == HSA_STATUS_SUCCESS) st = hsa_executable_freeze(exec, NULL);
  list.executable = exec.handle;
  if (st == HSA_STATUS_SUCCESS)
    st = hsa_executable_iterate_agent_symbols(exec, cpu_agent, add_kernel, &list);
  if (st == HSA_STATUS_SUCCESS && list.failed) st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  reply.status = st;
  if (st != HSA_STATUS_SUCCESS) {
    forget_kernels(c, exec.handle);
    if (exec.handle) hsa_executable_destroy(exec);
    if (reader.handle) hsa_code_object_reader_destroy(reader);
    goto reply;
  }
  c->executables[n] = exec;
  c->readers[n] = reader;
  c->code[n] = code; /* the reader reads from it */
  c->num_executables++;
  code = NULL;
  reply.reserved = list.count;
  reply.value = exec.handle;
reply:
  free(code);
  aq_link_send(c->link, AQ_MSG_REPLY, id, &reply, sizeof reply,
               reply.status == HSA_STATUS_SUCCESS ? list.bytes : NULL,
               reply.status == HSA_STATUS_SUCCESS ? list.size : 0, NULL, NULL);
  free(list.bytes);
}

static void unload_code(struct client *c, uint64_t handle) {
  for (size_t i = 0; i < c->num_executables; i++) {
    if (c->executables[i].handle != handle) continue;
    forget_kernels(c, handle);
    hsa_executable_destroy(c->executables[i]);
    hsa_code_object_reader_destroy(c->readers[i]);
    free(c->code[i]);
    c->num_executables--;
    c->executables[i] = c->executables[c->num_executables];
    c->readers[i] = c->readers[c->num_executables];
    c->code[i] = c->code[c->num_executables];
    return;
  }
}

/* ---- dispatches ----------------------------------------------------------- */

static void *completer_main(void *arg);
static void client_release(struct client *c);
static void dispatch_ended(hsa_signal_t signal, void *arg);

/* The daemon queue for the client's queue id (made on first use). */
static struct daemon_queue *queue_for(struct client *c, uint32_t client_queue) {
  for (uint32_t i = 0; i < c->num_queues; i++)
    if (c->queues[i].client_queue == client_queue) return &c->queues[i];
  if (c->num_queues == QUEUES_PER_CLIENT) /* more queues share the last ones */
    return &c->queues[client_queue % QUEUES_PER_CLIENT];
  struct daemon_queue *q = &c->queues[c->num_queues];
  memset(q, 0, sizeof *q);
  q->client = c;
  q->client_queue = client_queue;
  if (hsa_queue_create(cpu_agent, QUEUE_SIZE, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX,
                       UINT32_MAX, &q->queue) != HSA_STATUS_SUCCESS)
    return NULL;
  hsa_amd_profiling_set_profiler_enabled(q->queue, 1);
  atomic_fetch_add(&c->refs, 1);
  if (pthread_create(&q->completer, NULL, completer_main, q) != 0) {
    hsa_queue_destroy(q->queue);
    atomic_fetch_sub(&c->refs, 1);
    return NULL;
  }
  pthread_detach(q->completer);
  c->num_queues++;
  return q;
}

static bool dispatch(struct client *c, uint64_t id, const unsigned char *payload) {
  struct aq_wire_dispatch d;
  memcpy(&d, payload, sizeof d);
  struct daemon_queue *dq = queue_for(c, d.reserved);
  if (!dq) return false;
  /* What the CPU agent would trust: a kernel this client loaded, its whole
   * kernarg segment, a work-group and group segment within the limits. */
  const struct known_kernel *k = NULL;
  for (size_t i = 0; i < c->num_kernels && !k; i++)
    if (c->kernels[i].object == d.kernel_object) k = &c->kernels[i];
  uint64_t wg_items = (uint64_t)d.workgroup_size[0] * d.workgroup_size[1] * d.workgroup_size[2];
  if (!k || d.kernarg_size < k->kernarg_size || wg_items > description.max_workgroup_size ||
      d.group_segment_size > 64 * 1024)
    return false;
  struct pending_dispatch *p = calloc(1, sizeof *p);
  size_t align = 64, ksize = (d.kernarg_size + align - 1) / align * align;
  void *kernarg = aligned_alloc(align, ksize ? ksize : align);
  hsa_signal_t signal = {0};
  if (!p || !kernarg || hsa_signal_create(1, 0, NULL, &signal) != HSA_STATUS_SUCCESS) {
    free(p);
    free(kernarg);
    return false;
  }
  memcpy(kernarg, payload + sizeof d, d.kernarg_size);
  p->id = id;
  p->signal = signal;
  p->kernarg = kernarg;
  p->profiling = d.profiling != 0;
  p->queue = dq;
  /* In the list before the packet can run: its end finds it there. */
  pthread_mutex_lock(&c->lock);
  bool run_here = dq->num_ended == dq->num_pending;
  if (dq->pending_tail)
    dq->pending_tail->next = p;
  else
    dq->pending_head = p;
  dq->pending_tail = p;
  dq->num_pending++;
  pthread_mutex_unlock(&c->lock);
  hsa_ven_aquila_signal_on_zero(signal, dispatch_ended, p);
  hsa_queue_t *q = dq->queue;
  uint64_t index = hsa_queue_add_write_index_scacq_screl(q, 1);
  while (index - hsa_queue_load_read_index_scacquire(q) >= q->size)
    sched_yield();
  hsa_kernel_dispatch_packet_t *pkt =
      (hsa_kernel_dispatch_packet_t *)q->base_address + (index & (q->size - 1));
  pkt->workgroup_size_x = d.workgroup_size[0];
  pkt->workgroup_size_y = d.workgroup_size[1];
  pkt->workgroup_size_z = d.workgroup_size[2];
  pkt->reserved0 = 0;
  pkt->grid_size_x = d.grid_size[0];
  pkt->grid_size_y = d.grid_size[1];
  pkt->grid_size_z = d.grid_size[2];
  pkt->private_segment_size = 0;
  pkt->group_segment_size = d.group_segment_size;
  pkt->kernel_object = d.kernel_object;
  pkt->kernarg_address = kernarg;
  pkt->reserved2 = d.group_range; /* checked by the CPU agent */
  pkt->completion_signal = signal;
  /* Only the barrier bit is the client's: the type and fences are fixed. */
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (d.header & (1u << HSA_PACKET_HEADER_BARRIER)) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  __atomic_store_n((uint32_t *)pkt, (uint32_t)header | ((uint32_t)d.setup << 16), __ATOMIC_RELEASE);
  /* A kernel that ran briefly last time, with nothing of its queue before
   * it, runs here, before any compute unit is woken: the DONE leaves from
   * this thread too (hsa_ven_aquila_signal_help_short: a long kernel is
   * left to the units, and the messages waiting are not held up). */
  if (run_here) {
    hsa_ven_aquila_signal_help_short(signal, q, index);
    if (hsa_queue_load_read_index_scacquire(q) > index) return true; /* taken */
  }
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
  return true;
}

/* Sends one DONE for the queue's dispatches that have ended (up to
 * AQ_WIRE_MAX_DONES), oldest first, and frees them. Called with the
 * client's lock held; returns with it held. */
static void report_ended(struct daemon_queue *dq) {
  struct client *c = dq->client;
  struct pending_dispatch *taken[AQ_WIRE_MAX_DONES];
  uint32_t n = 0, want = dq->num_ended < AQ_WIRE_MAX_DONES ? dq->num_ended : AQ_WIRE_MAX_DONES;
  struct pending_dispatch **link = &dq->pending_head, *kept = NULL;
  while (*link && n < want) {
    struct pending_dispatch *p = *link;
    if (p->ended) {
      *link = p->next;
      taken[n++] = p;
    } else {
      kept = p;
      link = &p->next;
    }
  }
  if (!*link) dq->pending_tail = kept; /* the scan reached the end */
  dq->num_ended -= n;
  dq->num_pending -= n;
  dq->num_reporting++;
  pthread_mutex_unlock(&c->lock);
  struct aq_wire_done done[AQ_WIRE_MAX_DONES];
  for (uint32_t k = 0; k < n; k++) {
    struct pending_dispatch *p = taken[k];
    struct aq_wire_done *d = &done[k];
    memset(d, 0, sizeof *d);
    d->id = p->id;
    hsa_ven_aquila_dispatch_fault_t fault;
    if (hsa_ven_aquila_signal_dispatch_status(p->signal, &fault) != HSA_STATUS_SUCCESS) {
      d->fault_signal = fault.signal;
      d->fault_address = fault.address;
      memcpy(d->fault_group, fault.group_id, sizeof d->fault_group);
    }
    if (p->profiling) {
      hsa_amd_profiling_dispatch_time_t t;
      if (hsa_amd_profiling_get_dispatch_time(cpu_agent, p->signal, &t) == HSA_STATUS_SUCCESS) {
        d->start_ns = t.start;
        d->end_ns = t.end;
      }
    }
    hsa_signal_destroy(p->signal);
    free(p->kernarg);
    free(p);
  }
  if (n) aq_link_send(c->link, AQ_MSG_DONE, 0, done, n * sizeof done[0], NULL, 0, NULL, NULL);
  pthread_mutex_lock(&c->lock);
  dq->num_reporting--;
  if (!dq->num_reporting && c->closing) pthread_cond_broadcast(&c->cond);
}

/* Whether the loop thread holds back ends of kernels it ran itself. */
static bool ends_held;

/* A dispatch's completion signal reached 0: on the compute unit that ran
 * its last work-group, or on the loop thread (dispatch). When every
 * dispatch of its queue in flight has ended, the client is likely waiting:
 * the DONE goes from here, without waking another thread; the loop thread
 * holds it until it has handled what has come meanwhile (send_held_ends),
 * so that a run of short kernels it ran is one message. Otherwise the
 * completer gathers the ends while the units go on with the queue's next
 * kernels. */
static void dispatch_ended(hsa_signal_t signal, void *arg) {
  (void)signal;
  struct pending_dispatch *p = arg;
  struct daemon_queue *dq = p->queue;
  struct client *c = dq->client;
  pthread_mutex_lock(&c->lock);
  p->ended = true;
  dq->num_ended++;
  if (dq->num_ended != dq->num_pending)
    pthread_cond_broadcast(&c->cond);
  else if (aq_loop_is_current(loop) && dq->num_ended < AQ_WIRE_MAX_DONES)
    ends_held = true;
  else
    report_ended(dq);
  pthread_mutex_unlock(&c->lock);
}

/* The loop thread's idle moment: the ends it held back go out. */
static void send_held_ends(void *arg) {
  (void)arg;
  if (!ends_held) return;
  ends_held = false;
  pthread_mutex_lock(&clients_lock);
  for (struct client *c = clients; c; c = c->next) {
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = 0; i < c->num_queues; i++)
      while (c->queues[i].num_ended)
        report_ended(&c->queues[i]);
    pthread_mutex_unlock(&c->lock);
  }
  pthread_mutex_unlock(&clients_lock);
}

/* Reports the ends the compute units left to it; once the client has gone,
 * waits for its kernels still running (their DONEs go nowhere) before it
 * lets go of the client. */
static void *completer_main(void *arg) {
  struct daemon_queue *dq = arg;
  struct client *c = dq->client;
  pthread_mutex_lock(&c->lock);
  for (;;) {
    if (dq->num_ended) {
      report_ended(dq);
      continue;
    }
    if (c->closing && !dq->pending_head && !dq->num_reporting) break;
    pthread_cond_wait(&c->cond, &c->lock);
  }
  pthread_mutex_unlock(&c->lock);
  client_release(c);
  return NULL;
}

/* ---- messages (loop thread) ------------------------------------------------- */

static void read_sent(void *arg, bool sent);

static void reply_status(struct client *c, uint64_t id, int32_t status) {
  struct aq_wire_reply reply = {status, 0, 0};
  aq_link_send(c->link, AQ_MSG_REPLY, id, &reply, sizeof reply, NULL, 0, NULL, NULL);
}

static void grants_expire(uint64_t now) {
  for (size_t i = 0; i < num_grants;)
    if (grants[i].expires_ns < now) {
      client_release(grants[i].owner);
      grants[i] = grants[--num_grants];
    } else {
      i++;
    }
}

static void grant(struct client *c, uint64_t id, const struct aq_wire_range *r) {
  uint64_t now = now_ns();
  grants_expire(now);
  if (!range_is_owned(c, r->address, r->size) || num_grants == GRANTS_MAX) {
    reply_status(c, id, HSA_STATUS_ERROR_INVALID_ARGUMENT);
    return;
  }
  if (num_grants == cap_grants) {
    size_t cap = cap_grants ? 2 * cap_grants : 16;
    struct grant *g = realloc(grants, cap * sizeof *g);
    if (!g) {
      reply_status(c, id, HSA_STATUS_ERROR_OUT_OF_RESOURCES);
      return;
    }
    grants = g;
    cap_grants = cap;
  }
  struct grant *g = &grants[num_grants++];
  aq_nonce_make(g->token);
  g->owner = c;
  atomic_fetch_add(&c->refs, 1);
  g->address = r->address;
  g->size = r->size;
  g->expires_ns = now + GRANT_SECONDS * 1000000000ull;
  struct aq_wire_reply reply = {HSA_STATUS_SUCCESS, 0, 0};
  aq_link_send(c->link, AQ_MSG_REPLY, id, &reply, sizeof reply, g->token, sizeof g->token, NULL,
               NULL);
}

/* A peer presents a token: the bytes go out from the owner's memory. */
static void grant_read(struct client *c, uint64_t id, const struct aq_wire_grant_read *m) {
  grants_expire(now_ns());
  for (size_t i = 0; i < num_grants; i++) {
    struct grant *g = &grants[i];
    if (sodium_memcmp(g->token, m->token, sizeof g->token)) continue;
    struct client *owner = g->owner;
    bool inside = m->address >= g->address && m->size <= g->size &&
                  m->address - g->address <= g->size - m->size &&
                  range_is_owned(owner, m->address, m->size);
    grants[i] = grants[--num_grants]; /* one use */
    if (!inside) {
      client_release(owner);
      break;
    }
    pthread_mutex_lock(&owner->lock);
    owner->reads_in_flight++;
    pthread_mutex_unlock(&owner->lock);
    /* The grant's reference on owner passes to the send (read_sent). */
    aq_link_send_flags(c->link, AQ_MSG_REPLY, AQ_WIRE_FLAG_RAW, id, (void *)(uintptr_t)m->address,
                       m->size, NULL, 0, read_sent, owner);
    return;
  }
  reply_status(c, id, HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

static void pull_finish(struct pull *p, int32_t status) {
  reply_status(p->client, p->client_request, status);
  read_sent(p->client, true); /* its read in flight, its reference */
  free(p);
}

static void peer_send_pulls(struct peer *peer) {
  for (struct pull *p = peer->pulls; p; p = p->next)
    if (!p->sent) {
      p->sent = true;
      aq_link_send(peer->link, AQ_MSG_GRANT_READ, p->id, &p->message, sizeof p->message, NULL, 0,
                   NULL, NULL);
    }
}

static void *peer_payload_buffer(void *owner, struct aq_link *link,
                                 const struct aq_wire_header *h) {
  struct peer *peer = owner;
  if (h->type != AQ_MSG_REPLY || !(h->flags & AQ_WIRE_FLAG_RAW)) return NULL;
  for (struct pull *p = peer->pulls; p; p = p->next)
    if (p->id == h->id) return p->size == h->length ? (void *)(uintptr_t)p->address : NULL;
  return NULL;
}

static bool peer_message(void *owner, struct aq_link *link, const struct aq_wire_header *h,
                         void *payload) {
  struct peer *peer = owner;
  switch (h->type) {
  case AQ_MSG_CHALLENGE: {
    if (peer->state != PEER_CONNECTING) return false;
    struct aq_wire_challenge ch;
    memcpy(&ch, payload, sizeof ch);
    if (!aq_proof_check(key, 'd', peer->nonce, ch.nonce, ch.proof)) {
      say("peer %s does not hold the key", peer->address);
      return false;
    }
    uint8_t proof[AQ_WIRE_PROOF_BYTES];
    aq_proof_make(key, 'c', peer->nonce, ch.nonce, proof);
    peer->state = PEER_CHALLENGED;
    aq_link_send(link, AQ_MSG_AUTH, 0, proof, sizeof proof, NULL, 0, NULL, NULL);
    return true;
  }
  case AQ_MSG_WELCOME: {
    if (peer->state != PEER_CHALLENGED) return false;
    struct aq_wire_welcome w;
    memcpy(&w, payload, sizeof w);
    if (!aq_link_tcp_segments_agree(description.tcp_segments, w.tcp_segments)) {
      say("peer %s: its UCX TCP segment sizes differ from this daemon's", peer->address);
      return false;
    }
    peer->state = PEER_ADMITTED;
    aq_link_set_authenticated(link);
    peer_send_pulls(peer);
    return true;
  }
  case AQ_MSG_REPLY:
    for (struct pull **pp = &peer->pulls; *pp; pp = &(*pp)->next) {
      struct pull *p = *pp;
      if (p->id != h->id) continue;
      *pp = p->next;
      bool ok = (h->flags & AQ_WIRE_FLAG_RAW) && payload == (void *)(uintptr_t)p->address;
      pull_finish(p, ok ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR);
      return true;
    }
    return false;
  default:
    return false;
  }
}

static void peer_close(void *owner, struct aq_link *link, const char *why) {
  struct peer *peer = owner;
  say("peer %s: %s", peer->address, why);
  for (struct peer **pp = &peers; *pp; pp = &(*pp)->next)
    if (*pp == peer) {
      *pp = peer->next;
      break;
    }
  while (peer->pulls) {
    struct pull *p = peer->pulls;
    peer->pulls = p->next;
    pull_finish(p, HSA_STATUS_ERROR);
  }
  aq_link_release(peer->link);
  free(peer);
}

static const struct aq_link_handler peer_handler = {
    .payload_buffer = peer_payload_buffer,
    .on_message = peer_message,
    .on_close = peer_close,
};

static struct peer *peer_for(const char *address) {
  for (struct peer *p = peers; p; p = p->next)
    if (!strcmp(p->address, address)) return p;
  struct peer *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  snprintf(p->address, sizeof p->address, "%s", address);
  aq_nonce_make(p->nonce);
  char why[128];
  p->link = aq_link_connect(loop, address, &peer_handler, p, why, sizeof why);
  if (!p->link) {
    say("cannot reach peer %s: %s", address, why);
    free(p);
    return NULL;
  }
  struct aq_wire_hello hello = {.version = AQ_WIRE_VERSION,
                                .tcp_segments = aq_link_tcp_segments(),
                                .client_time_ns = now_ns()};
  memcpy(hello.nonce, p->nonce, sizeof hello.nonce);
  aq_link_send(p->link, AQ_MSG_HELLO, 0, &hello, sizeof hello, NULL, 0, NULL, NULL);
  p->next = peers;
  peers = p;
  return p;
}

static void pull(struct client *c, uint64_t id, const struct aq_wire_pull *m) {
  if (!range_is_owned(c, m->address, m->size)) {
    reply_status(c, id, HSA_STATUS_ERROR_INVALID_ARGUMENT);
    return;
  }
  struct peer *peer = peer_for(m->source);
  struct pull *p = peer ? calloc(1, sizeof *p) : NULL;
  if (!p) {
    reply_status(c, id, HSA_STATUS_ERROR);
    return;
  }
  /* The destination stays mapped until the bytes are in (as for a read). */
  pthread_mutex_lock(&c->lock);
  c->reads_in_flight++;
  pthread_mutex_unlock(&c->lock);
  atomic_fetch_add(&c->refs, 1);
  p->id = ++peer->next_id;
  p->client = c;
  p->client_request = id;
  p->address = m->address;
  p->size = m->size;
  p->message.address = m->source_address;
  p->message.size = m->size;
  memcpy(p->message.token, m->token, sizeof p->message.token);
  p->next = peer->pulls;
  peer->pulls = p;
  if (peer->state == PEER_ADMITTED) peer_send_pulls(peer);
}

static void read_sent(void *arg, bool sent) {
  struct client *c = arg;
  (void)sent;
  struct allocation *frees = NULL;
  size_t n = 0;
  pthread_mutex_lock(&c->lock);
  if (--c->reads_in_flight == 0 && c->num_deferred) {
    frees = c->deferred_frees;
    n = c->num_deferred;
    c->deferred_frees = NULL;
    c->num_deferred = c->cap_deferred = 0;
  }
  pthread_mutex_unlock(&c->lock);
  for (size_t i = 0; i < n; i++)
    munmap((void *)(uintptr_t)frees[i].address, frees[i].size);
  free(frees);
  client_release(c);
}

/* Runs one message; false refuses it (the link closes). payload is the
 * loop's unless it is a WRITE's bytes, already in place. */
/* ---- images (loop thread) ------------------------------------------------- */

/* An image over the client's own memory: the HSA runtime checks the
 * descriptor; the bytes it spans must be the client's. */
static int32_t image_create(struct client *c, const struct aq_wire_image *m, uint64_t *handle) {
  hsa_ext_image_descriptor_t d = {
      .geometry = (hsa_ext_image_geometry_t)m->geometry,
      .width = m->width,
      .height = m->height,
      .depth = m->depth,
      .array_size = m->array_size,
      .format = {.channel_type = m->channel_type, .channel_order = m->channel_order},
  };
  hsa_ext_image_data_info_t info;
  hsa_status_t st = hsa_ext_image_data_get_info_with_layout(
      cpu_agent, &d, (hsa_access_permission_t)m->access, HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR,
      m->row_pitch, m->slice_pitch, &info);
  if (st != HSA_STATUS_SUCCESS) return st;
  if (!range_is_owned(c, m->address, info.size)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (c->num_images == c->cap_images) {
    size_t cap = c->cap_images ? 2 * c->cap_images : 16;
    uint64_t *p = realloc(c->images, cap * sizeof *p);
    if (!p) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    c->images = p;
    c->cap_images = cap;
  }
  hsa_ext_image_t image;
  st = hsa_ext_image_create_with_layout(
      cpu_agent, &d, (void *)(uintptr_t)m->address, (hsa_access_permission_t)m->access,
      HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, m->row_pitch, m->slice_pitch, &image);
  if (st != HSA_STATUS_SUCCESS) return st;
  c->images[c->num_images++] = image.handle;
  *handle = image.handle;
  return HSA_STATUS_SUCCESS;
}

/* false when handle is not one of the client's images. The client destroys
 * an image only once its kernels that use it have ended. */
static bool image_destroy(struct client *c, uint64_t handle) {
  for (size_t i = 0; i < c->num_images; i++)
    if (c->images[i] == handle) {
      hsa_ext_image_destroy(cpu_agent, (hsa_ext_image_t){handle});
      c->images[i] = c->images[--c->num_images];
      return true;
    }
  return false;
}

static bool execute(struct client *c, const struct aq_wire_header *h, void *payload) {
  const unsigned char *p = payload;
  uint64_t id = h->id;
  switch (h->type) {
  case AQ_MSG_ALLOC: {
    uint64_t size;
    memcpy(&size, p, sizeof size);
    struct aq_wire_reply reply = {HSA_STATUS_SUCCESS, 0, 0};
    reply.status = allocate(c, size, &reply.value);
    aq_link_send(c->link, AQ_MSG_REPLY, id, &reply, sizeof reply, NULL, 0, NULL, NULL);
    return true;
  }
  case AQ_MSG_FREE: {
    uint64_t address;
    memcpy(&address, p, sizeof address);
    release(c, address);
    return true;
  }
  case AQ_MSG_WRITE:
    /* payload_buffer received it in place, or refused its range. */
    return h->length == 0 || payload == (void *)(uintptr_t)id;
  case AQ_MSG_FILL: {
    struct aq_wire_fill f;
    memcpy(&f, p, sizeof f);
    if (!range_is_owned(c, f.address, f.size)) return false;
    unsigned char *dst = (unsigned char *)(uintptr_t)f.address;
    if (f.pattern_size == 1) {
      memset(dst, p[sizeof f], f.size);
    } else {
      for (uint64_t off = 0; off < f.size; off += f.pattern_size)
        memcpy(dst + off, p + sizeof f, f.pattern_size);
    }
    return true;
  }
  case AQ_MSG_READ: {
    struct aq_wire_range r;
    memcpy(&r, p, sizeof r);
    if (!range_is_owned(c, r.address, r.size)) {
      struct aq_wire_reply reply = {HSA_STATUS_ERROR_INVALID_ARGUMENT, 0, 0};
      aq_link_send(c->link, AQ_MSG_REPLY, id, &reply, sizeof reply, NULL, 0, NULL, NULL);
      return true;
    }
    /* Sent from the memory itself; a FREE meanwhile waits (release). */
    pthread_mutex_lock(&c->lock);
    c->reads_in_flight++;
    pthread_mutex_unlock(&c->lock);
    atomic_fetch_add(&c->refs, 1);
    aq_link_send_flags(c->link, AQ_MSG_REPLY, AQ_WIRE_FLAG_RAW, id, (void *)(uintptr_t)r.address,
                       r.size, NULL, 0, read_sent, c);
    return true;
  }
  case AQ_MSG_LOAD: {
    void *code = malloc(h->length);
    if (!code) return false;
    memcpy(code, payload, h->length);
    load_code(c, id, code, h->length); /* owns code */
    return true;
  }
  case AQ_MSG_UNLOAD: {
    uint64_t handle;
    memcpy(&handle, p, sizeof handle);
    unload_code(c, handle);
    return true;
  }
  case AQ_MSG_IMAGE_CREATE: {
    struct aq_wire_image m;
    memcpy(&m, p, sizeof m);
    uint64_t handle = 0;
    struct aq_wire_reply reply = {image_create(c, &m, &handle), 0, handle};
    aq_link_send(c->link, AQ_MSG_REPLY, id, &reply, sizeof reply, NULL, 0, NULL, NULL);
    return true;
  }
  case AQ_MSG_IMAGE_DESTROY: {
    uint64_t handle;
    memcpy(&handle, p, sizeof handle);
    return image_destroy(c, handle); /* not one of its images: the link closes */
  }
  case AQ_MSG_PING: {
    struct aq_wire_reply reply = {HSA_STATUS_SUCCESS, 0, 0};
    aq_link_send(c->link, AQ_MSG_REPLY, id, &reply, sizeof reply, NULL, 0, NULL, NULL);
    return true;
  }
  case AQ_MSG_DISPATCH:
    return dispatch(c, id, payload);
  case AQ_MSG_COPY: {
    struct aq_wire_copy m;
    memcpy(&m, p, sizeof m);
    if (!range_is_owned(c, m.dst, m.size) || !range_is_owned(c, m.src, m.size)) return false;
    memmove((void *)(uintptr_t)m.dst, (const void *)(uintptr_t)m.src, m.size);
    return true;
  }
  case AQ_MSG_GRANT: {
    struct aq_wire_range r;
    memcpy(&r, p, sizeof r);
    grant(c, id, &r);
    return true;
  }
  case AQ_MSG_GRANT_READ: {
    struct aq_wire_grant_read m;
    memcpy(&m, p, sizeof m);
    grant_read(c, id, &m);
    return true;
  }
  case AQ_MSG_PULL: {
    struct aq_wire_pull m;
    memcpy(&m, p, sizeof m);
    pull(c, id, &m);
    return true;
  }
  default:
    return false;
  }
}

static void client_free(struct client *c) {
  pthread_mutex_lock(&clients_lock);
  for (struct client **p = &clients; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  pthread_mutex_unlock(&clients_lock);
  for (uint32_t i = 0; i < c->num_queues; i++)
    hsa_queue_destroy(c->queues[i].queue);
  while (c->num_images)
    image_destroy(c, c->images[c->num_images - 1]);
  free(c->images);
  while (c->num_executables)
    unload_code(c, c->executables[c->num_executables - 1].handle);
  while (c->num_allocations)
    release(c, c->allocations[c->num_allocations - 1].address);
  for (size_t i = 0; i < c->num_deferred; i++)
    munmap((void *)(uintptr_t)c->deferred_frees[i].address, c->deferred_frees[i].size);
  free(c->deferred_frees);
  free(c->allocations);
  free(c->executables);
  free(c->readers);
  free(c->code);
  free(c->kernels);
  aq_link_release(c->link);
  pthread_mutex_destroy(&c->lock);
  pthread_cond_destroy(&c->cond);
  free(c);
  pthread_mutex_lock(&clients_lock);
  clients_alive--;
  pthread_cond_broadcast(&clients_gone);
  pthread_mutex_unlock(&clients_lock);
}

/* The last reference (the link's, the completers', the reads') frees it:
 * after the link closed, the kernels still running finish first. */
static void client_release(struct client *c) {
  if (atomic_fetch_sub(&c->refs, 1) == 1) client_free(c);
}

/* ---- the link's handler (loop thread) -------------------------------------- */

static void *on_accept(void *listener_owner, struct aq_link *link) {
  struct client *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->link = link;
  aq_link_retain(link);
  atomic_init(&c->refs, 1);
  c->connected_ns = now_ns();
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->cond, NULL);
  pthread_mutex_lock(&clients_lock);
  c->next = clients;
  clients = c;
  clients_alive++;
  pthread_mutex_unlock(&clients_lock);
  if (verbose) say("connection from %s", aq_link_peer(link));
  return c;
}

/* Tells the client why it is refused (AQ_MSG_REFUSED) and stops serving
 * it; the client closes the link on reading the reason, or the main
 * thread does a little later. Every refusal goes this way, so that the
 * client can say why, on a fast peer as on a slow one: a link closed at
 * once can end before its last message is delivered. */
static void refuse(struct client *c, struct aq_link *link, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void refuse(struct client *c, struct aq_link *link, const char *fmt, ...) {
  if (atomic_load(&c->refused)) return;
  char reason[AQ_WIRE_MAX_REASON];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  say("refused %s: %s", aq_link_peer(link), reason);
  atomic_store(&c->refused_ns, now_ns());
  atomic_store(&c->refused, true);
  aq_link_send(link, AQ_MSG_REFUSED, 0, reason, strlen(reason) + 1, NULL, 0, NULL, NULL);
}

static bool on_refuse(void *owner, struct aq_link *link, const char *why) {
  struct client *c = owner;
  /* The wire's checks take nothing but the handshake before the key. */
  refuse(c, link, c->admitted ? "a %s" : "a %s, or one sent before it proved the key", why);
  return true;
}

static bool on_message(void *owner, struct aq_link *link, const struct aq_wire_header *h,
                       void *payload) {
  struct client *c = owner;
  if (atomic_load(&c->refused)) return true; /* read and dropped until the link closes */
  if (!c->admitted) {
    if (h->type == AQ_MSG_HELLO && !c->hello_seen) {
      struct aq_wire_hello hello;
      uint32_t version;
      memcpy(&version, payload, sizeof version);
      if (version != AQ_WIRE_VERSION || h->length != sizeof hello) {
        refuse(c, link, "it speaks wire version %u, this daemon version %u (Aquila releases "
                        "of another protocol)", version, AQ_WIRE_VERSION);
        return true;
      }
      memcpy(&hello, payload, sizeof hello);
      memcpy(c->client_nonce, hello.nonce, sizeof c->client_nonce);
      c->tcp_segments = hello.tcp_segments;
      aq_nonce_make(c->daemon_nonce);
      struct aq_wire_challenge ch = {.daemon_time_ns = now_ns()};
      memcpy(ch.nonce, c->daemon_nonce, sizeof ch.nonce);
      aq_proof_make(key, 'd', c->client_nonce, c->daemon_nonce, ch.proof);
      c->hello_seen = true;
      aq_link_send(link, AQ_MSG_CHALLENGE, h->id, &ch, sizeof ch, NULL, 0, NULL, NULL);
      return true;
    }
    if (h->type == AQ_MSG_AUTH && c->hello_seen) {
      if (!aq_proof_check(key, 'c', c->client_nonce, c->daemon_nonce, payload)) {
        refuse(c, link, "it does not hold the key");
        return true;
      }
      /* Before anything large goes either way (the welcome is small). */
      if (!aq_link_tcp_segments_agree(description.tcp_segments, c->tcp_segments)) {
        refuse(c, link,
               "its UCX TCP segment sizes (UCX_TCP_TX_SEG_SIZE, UCX_TCP_RX_SEG_SIZE) differ from "
               "this daemon's: UCX would abort one of the two on a large message");
        return true;
      }
      c->admitted = true;
      aq_link_set_authenticated(link);
      aq_link_send(link, AQ_MSG_WELCOME, h->id, &description, sizeof description, NULL, 0, NULL,
                   NULL);
      if (verbose) say("admitted %s", aq_link_peer(link));
      return true;
    }
    refuse(c, link, "a message (%s) out of the handshake's order, before it proved the key",
           aq_wire_type_name(h->type));
    return true;
  }
  if (!execute(c, h, payload))
    refuse(c, link,
           "a request (%s) it may not make (memory, a kernel or an image not its own) or this "
           "daemon could not take",
           aq_wire_type_name(h->type));
  return true;
}

/* A WRITE's bytes land where they go, when that memory is the client's. */
static void *payload_buffer(void *owner, struct aq_link *link, const struct aq_wire_header *h) {
  struct client *c = owner;
  if (!c->admitted || h->type != AQ_MSG_WRITE || !range_is_owned(c, h->id, h->length)) return NULL;
  return (void *)(uintptr_t)h->id;
}

static void on_close(void *owner, struct aq_link *link, const char *why) {
  struct client *c = owner;
  if (verbose || !c->admitted) say("%s left: %s", aq_link_peer(link), why);
  pthread_mutex_lock(&c->lock);
  c->closing = true;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
  client_release(c);
}

static const struct aq_link_handler handler = {
    .payload_buffer = payload_buffer,
    .on_message = on_message,
    .on_close = on_close,
    .on_accept = on_accept,
    .on_refuse = on_refuse,
};

/* ---- start-up ---------------------------------------------------------------- */

static hsa_status_t find_cpu(hsa_agent_t agent, void *data) {
  hsa_device_type_t type;
  if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS &&
      type == HSA_DEVICE_TYPE_CPU) {
    *(hsa_agent_t *)data = agent;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

/* The fat binary target this machine's code is built for: as the compiler
 * names the host's (compiler/compile.c). */
static void host_target(char *out, size_t size) {
  static const char *const levels[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  const char *e = getenv("AQUILA_CPU_TARGET");
  for (size_t i = 0; e && i < sizeof levels / sizeof levels[0]; i++)
    if (!strcmp(e, levels[i])) {
      snprintf(out, size, "%s", levels[i]);
      return;
    }
  char *cpu = LLVMGetHostCPUName();
  snprintf(out, size, "x86_64-native:%s", cpu);
  LLVMDisposeMessage(cpu);
}

/* The CPU's model as /proc/cpuinfo names it, or "". */
static void cpu_model(char *out, size_t size) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  out[0] = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10)) continue;
    const char *colon = strchr(line, ':');
    if (!colon) break;
    colon++;
    while (*colon == ' ' || *colon == '\t')
      colon++;
    snprintf(out, size, "%s", colon);
    out[strcspn(out, "\n")] = 0;
    break;
  }
  if (f) fclose(f);
}

static void usage(void) {
  fprintf(stderr, "usage: aquilad --listen ADDR:PORT --key-file FILE [--units N] "
                  "[--max-memory MIB] [--poll-us N] [--verbose]\n");
}

int main(int argc, char **argv) {
  /* Faults in kernels are the HSA runtime's to handle (a faulting kernel
   * ends its dispatch), not UCX's, which installed handlers as it loaded. */
  int ucx_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
  for (size_t i = 0; i < sizeof ucx_signals / sizeof ucx_signals[0]; i++)
    ucs_debug_disable_signal(ucx_signals[i]);
  const char *listen = NULL, *key_file = NULL;
  long units = 0, max_mib = 0, poll_us = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end;
    if (!strcmp(a, "--listen") && v) {
      listen = v;
      i++;
    } else if (!strcmp(a, "--key-file") && v) {
      key_file = v;
      i++;
    } else if (!strcmp(a, "--units") && v) {
      units = strtol(v, &end, 10);
      if (*end || units < 1 || units > 1024) {
        say("--units takes 1 to 1024");
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--max-memory") && v) {
      max_mib = strtol(v, &end, 10);
      if (*end || max_mib < 1) {
        say("--max-memory takes a number of MiB");
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--poll-us") && v) {
      poll_us = strtol(v, &end, 10);
      if (*end || poll_us < 0 || poll_us > 1000000) {
        say("--poll-us takes 0 to 1000000");
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--verbose")) {
      verbose = 1;
    } else {
      usage();
      return 2;
    }
  }
  if (!listen || !key_file) {
    usage();
    return 2;
  }
  char why[256];
  if (!aq_key_load(key_file, key, why, sizeof why)) {
    say("%s", why);
    return 1;
  }
  /* This process serves agents; it does not use remote ones itself. */
  unsetenv("AQUILA_REMOTE");
  /* A daemon restarted on its port must not wait for the old connections'
   * TIME_WAIT to end (unless the user said otherwise): UCX's TCP connection
   * manager reads this from the environment when it opens. */
  setenv("UCX_TCP_CM_REUSEADDR", "y", 0);
  /* The network thread polls this long after each message before it
   * sleeps (link.c): a client's next command within it costs no wake-up.
   * 50 us by default, which took an empty kernel's round trip on loopback
   * from 36-51 us to 12 us (ucx_perftest's, which polls both ends: 7-15);
   * AQUILA_REMOTE_SPIN_US, if set, is kept. */
  char poll[16];
  snprintf(poll, sizeof poll, "%ld", poll_us >= 0 ? poll_us : 50);
  setenv("AQUILA_REMOTE_SPIN_US", poll, poll_us >= 0);
  if (units) {
    char n[16];
    snprintf(n, sizeof n, "%ld", units);
    setenv("AQUILA_CPU_UNITS", n, 1);
  }
  /* Signals are taken by sigwait below, not by whichever thread runs. */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  signal(SIGPIPE, SIG_IGN);
  if (hsa_init() != HSA_STATUS_SUCCESS) {
    say("the HSA runtime did not start");
    return 1;
  }
  hsa_iterate_agents(find_cpu, &cpu_agent);
  if (!cpu_agent.handle) {
    say("no CPU agent");
    return 1;
  }
  uint32_t cus = 1, wg = 1024;
  hsa_agent_get_info(cpu_agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus);
  hsa_agent_get_info(cpu_agent, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, &wg);
  char name[64] = {0};
  cpu_model(name, sizeof name);
  if (!name[0]) hsa_agent_get_info(cpu_agent, HSA_AGENT_INFO_NAME, name);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t physical = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 1ull << 32;
  memory_limit = max_mib ? (uint64_t)max_mib << 20 : physical / 4 * 3;
  description.compute_units = cus;
  description.tcp_segments = aq_link_tcp_segments();
  description.max_workgroup_size = wg;
  description.memory_size = memory_limit;
  snprintf(description.name, sizeof description.name, "%s", name);
  host_target(description.target, sizeof description.target);
  gethostname(description.host, sizeof description.host - 1);

  loop = aq_loop_create(listen, &handler, NULL, why, sizeof why);
  if (!loop) {
    say("%s", why);
    return 1;
  }
  aq_loop_set_idle(loop, send_held_ends, NULL);
  say("serving %u compute units (%s, %s) on %s", cus, description.name, description.target, listen);
  /* Waits for a stop signal; meanwhile, each second, drops connections
   * that have not proven the key within HANDSHAKE_SECONDS. */
  for (;;) {
    struct timespec second = {1, 0};
    int sig = sigtimedwait(&stop, NULL, &second);
    if (sig == SIGTERM || sig == SIGINT) break;
    uint64_t now = now_ns();
    pthread_mutex_lock(&clients_lock);
    for (struct client *c = clients; c; c = c->next) {
      if (atomic_load(&c->refused)) {
        if (now - atomic_load(&c->refused_ns) > AQ_WIRE_REFUSAL_LINGER_SECONDS * 1000000000ull)
          aq_link_close(c->link, "refused");
      } else if (!c->admitted && now - c->connected_ns > HANDSHAKE_SECONDS * 1000000000ull) {
        aq_link_close(c->link, "no proof of the key in time");
      }
    }
    pthread_mutex_unlock(&clients_lock);
  }
  say("stopping");
  aq_loop_destroy(loop);
  /* Their kernels still running end first (bounded: a kernel that does
   * not end is left to the process's exit). */
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&clients_lock);
  int waited = 0;
  while (clients_alive && waited == 0)
    waited = pthread_cond_timedwait(&clients_gone, &clients_lock, &until);
  bool all_gone = clients_alive == 0;
  pthread_mutex_unlock(&clients_lock);
  if (!all_gone) {
    say("stopping with kernels still running");
    return 0;
  }
  hsa_shut_down();
  return 0;
}
