/* The timeline that AQUILA_TRACE asks for (aquila/trace.h): named tracks,
 * the records every thread appends to its own buffer, and the Trace Event
 * JSON written from them at exit.
 *
 * Appending takes no lock: a thread's buffer is a list of chunks that only
 * it fills, and a record counts once its chunk's count is released, so the
 * writer may read while units still run. Records stop (and are counted as
 * dropped) past AQ_TRACE_MAX_RECORDS, which bounds the trace's memory. */
#include "aquila/trace.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hsa_internal.h"

#define AQ_TRACE_MAX_RECORDS (1u << 18)
#define AQ_TRACE_CHUNK 512
#define AQ_TRACE_MAX_TRACKS 512
#define AQ_TRACE_LANES 32
/* Ranges of one dispatch that a unit runs this close together are one span. */
#define AQ_TRACE_JOIN_NS 20000

int aq_trace_on;

enum record_kind { RECORD_SPAN, RECORD_COMMAND, RECORD_GROUPS };

struct record {
  uint8_t kind;
  int32_t stolen_from;
  uint32_t track;
  /* Spans and work-groups: t0, t1. Groups joined later move end and t1
   * (atomically: the writer may read them meanwhile). */
  uint64_t t0, t1;
  const void *dispatch_key;
  uint64_t packet, begin, end;
  const char *category;
  char name[64];
  union {
    struct aq_trace_command command; /* RECORD_COMMAND */
    char args[160];                  /* RECORD_SPAN: members of a JSON object */
  } u;
};

struct chunk {
  _Atomic(struct chunk *) next;
  _Atomic uint32_t count;
  struct record records[AQ_TRACE_CHUNK];
};

struct thread_buffer {
  struct thread_buffer *next;
  struct chunk *first, *last;
};

static struct {
  char *path;
  pid_t pid;
  _Atomic(struct thread_buffer *) buffers;
  _Atomic uint64_t records, dropped;
  _Atomic uint32_t track_count;
  struct {
    uint32_t sort;
    char name[96];
  } tracks[AQ_TRACE_MAX_TRACKS];
  pthread_mutex_t write_lock;
} trace = {.write_lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local struct thread_buffer *own_buffer;

__attribute__((constructor)) static void trace_init(void) {
  const char *path = getenv("AQUILA_TRACE");
  if (!path || !*path) return;
  trace.path = strdup(path);
  trace.pid = getpid();
  if (trace.path) aq_trace_on = 1;
}

__attribute__((destructor)) static void trace_fini(void) {
  if (aq_trace_on) aq_trace_write();
}

uint32_t aq_trace_track(uint32_t sort, const char *fmt, ...) {
  if (!aq_trace_on) return 0;
  uint32_t index = atomic_fetch_add(&trace.track_count, 1);
  if (index >= AQ_TRACE_MAX_TRACKS) return 0;
  trace.tracks[index].sort = sort;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(trace.tracks[index].name, sizeof trace.tracks[index].name, fmt, ap);
  va_end(ap);
  return index + 1;
}

/* The calling thread's next free record, or NULL when the trace is full;
 * record_commit makes it visible. */
static struct record *record_begin(void) {
  struct thread_buffer *b = own_buffer;
  if (!b) {
    b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->next = atomic_load(&trace.buffers);
    while (!atomic_compare_exchange_weak(&trace.buffers, &b->next, b)) {
    }
    own_buffer = b;
  }
  if (!b->last || atomic_load_explicit(&b->last->count, memory_order_relaxed) == AQ_TRACE_CHUNK) {
    struct chunk *c = NULL;
    if (atomic_load_explicit(&trace.records, memory_order_relaxed) < AQ_TRACE_MAX_RECORDS)
      c = malloc(sizeof *c);
    if (c) {
      atomic_init(&c->next, NULL);
      atomic_init(&c->count, 0);
    }
    if (!c) {
      atomic_fetch_add_explicit(&trace.dropped, 1, memory_order_relaxed);
      return NULL;
    }
    if (b->last)
      atomic_store_explicit(&b->last->next, c, memory_order_release);
    else
      b->first = c;
    b->last = c;
  }
  atomic_fetch_add_explicit(&trace.records, 1, memory_order_relaxed);
  struct record *r = &b->last->records[atomic_load_explicit(&b->last->count, memory_order_relaxed)];
  memset(r, 0, offsetof(struct record, name));
  r->name[0] = '\0';
  return r;
}

static void record_commit(void) {
  atomic_fetch_add_explicit(&own_buffer->last->count, 1, memory_order_release);
}

static void set_name(struct record *r, const char *name) {
  snprintf(r->name, sizeof r->name, "%s", name ? name : "?");
}

void aq_trace_span(uint32_t track, const char *category, const char *name, uint64_t t0, uint64_t t1,
                   const char *args_fmt, ...) {
  if (!aq_trace_on || !track) return;
  struct record *r = record_begin();
  if (!r) return;
  r->kind = RECORD_SPAN;
  r->track = track;
  r->t0 = t0;
  r->t1 = t1 < t0 ? t0 : t1;
  r->category = category;
  set_name(r, name);
  r->u.args[0] = '\0';
  if (args_fmt) {
    va_list ap;
    va_start(ap, args_fmt);
    int n = vsnprintf(r->u.args, sizeof r->u.args, args_fmt, ap);
    va_end(ap);
    /* Cut short, the members would not be valid JSON any more. */
    if (n < 0 || (size_t)n >= sizeof r->u.args)
      snprintf(r->u.args, sizeof r->u.args, "\"args_cut\":true");
  }
  record_commit();
}

void aq_trace_command(uint32_t track, const char *name, const struct aq_trace_command *command) {
  if (!aq_trace_on || !track) return;
  struct record *r = record_begin();
  if (!r) return;
  r->kind = RECORD_COMMAND;
  r->track = track;
  struct aq_trace_command *t = &r->u.command;
  *t = *command;
  /* Times a command never set (a marker is never submitted) take the next
   * one's, so that the spans stay in order. */
  if (!t->end) t->end = t->start;
  if (!t->start) t->start = t->end;
  if (!t->submit || t->submit > t->start) t->submit = t->start;
  if (!t->ready || t->ready > t->submit) t->ready = t->submit;
  if (!t->queued || t->queued > t->ready) t->queued = t->ready;
  r->t0 = t->queued;
  r->t1 = t->end;
  r->category = "command";
  set_name(r, name);
  record_commit();
}

void aq_trace_groups(uint32_t track, const char *kernel, const void *dispatch_key, uint64_t packet,
                     uint64_t begin, uint64_t end, int32_t stolen_from, uint64_t t0, uint64_t t1) {
  if (!aq_trace_on || !track) return;
  struct thread_buffer *b = own_buffer;
  if (b && b->last) {
    uint32_t count = atomic_load_explicit(&b->last->count, memory_order_relaxed);
    struct record *last = count ? &b->last->records[count - 1] : NULL;
    if (last && last->kind == RECORD_GROUPS && last->track == track &&
        last->dispatch_key == dispatch_key && last->stolen_from == stolen_from &&
        __atomic_load_n(&last->end, __ATOMIC_RELAXED) == begin &&
        t0 - __atomic_load_n(&last->t1, __ATOMIC_RELAXED) < AQ_TRACE_JOIN_NS) {
      __atomic_store_n(&last->end, end, __ATOMIC_RELAXED);
      __atomic_store_n(&last->t1, t1, __ATOMIC_RELAXED);
      return;
    }
  }
  struct record *r = record_begin();
  if (!r) return;
  r->kind = RECORD_GROUPS;
  r->track = track;
  r->t0 = t0;
  r->t1 = t1;
  r->dispatch_key = dispatch_key;
  r->packet = packet;
  r->begin = begin;
  r->end = end;
  r->stolen_from = stolen_from;
  r->category = "work-groups";
  set_name(r, kernel);
  record_commit();
}

void aq_trace_escape(char *dst, size_t n, const char *src) {
  size_t k = 0;
  for (; src && *src && k + 7 < n; src++) {
    unsigned char c = (unsigned char)*src;
    if (c == '"' || c == '\\') {
      dst[k++] = '\\';
      dst[k++] = (char)c;
    } else if (c < 0x20) {
      k += (size_t)snprintf(dst + k, n - k, "\\u%04x", c);
    } else {
      dst[k++] = (char)c;
    }
  }
  if (n) dst[k < n ? k : n - 1] = '\0';
}

/* ---- writing ---- */

/* One span of the output: a record, or one of the two halves of a command. */
struct item {
  const struct record *record;
  uint32_t row; /* track * 2, + 1 for a command's waiting half */
  uint32_t lane;
  uint64_t t0, t1;
};

static int item_order(const void *a, const void *b) {
  const struct item *x = a, *y = b;
  if (x->row != y->row) return x->row < y->row ? -1 : 1;
  if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
  if (x->t1 != y->t1) return x->t1 > y->t1 ? -1 : 1; /* longer first */
  return 0;
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static double us(uint64_t ns) {
  return (double)ns / 1000.0;
}

static void write_item(FILE *f, const struct item *it, bool *first) {
  const struct record *r = it->record;
  uint32_t tid = it->row * AQ_TRACE_LANES + it->lane + 1;
  fprintf(f, "%s\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":",
          *first ? "" : ",", (int)trace.pid, tid, us(it->t0), us(it->t1 - it->t0));
  *first = false;
  json_string(f, r->kind == RECORD_COMMAND && (it->row & 1) ? "command waiting" : r->category);
  fputs(",\"name\":", f);
  json_string(f, r->name);
  fputs(",\"args\":{", f);
  bool more = false;
  if (r->kind == RECORD_COMMAND) {
    const struct aq_trace_command *t = &r->u.command;
    fprintf(f,
            "\"queued_to_ready_us\":%.3f,\"ready_to_submit_us\":%.3f,"
            "\"submit_to_start_us\":%.3f,\"run_us\":%.3f,\"command\":",
            us(t->ready - t->queued), us(t->submit - t->ready), us(t->start - t->submit),
            us(t->end - t->start));
    json_string(f, t->type ? t->type : "command");
    if (t->dims)
      fprintf(f,
              ",\"global\":[%llu,%llu,%llu],\"local\":[%u,%u,%u],\"work_groups\":%llu,"
              "\"packet\":%llu",
              (unsigned long long)t->global[0], (unsigned long long)t->global[1],
              (unsigned long long)t->global[2], t->local[0], t->local[1], t->local[2],
              (unsigned long long)t->groups, (unsigned long long)t->packet);
    if (t->bytes) fprintf(f, ",\"bytes\":%llu", (unsigned long long)t->bytes);
    if (t->status) fprintf(f, ",\"status\":%d", t->status);
    more = true;
  } else if (r->kind == RECORD_GROUPS) {
    uint64_t begin = r->begin, end = __atomic_load_n(&r->end, __ATOMIC_RELAXED);
    fprintf(f, "\"packet\":%llu,\"first_group\":%llu,\"groups\":%llu",
            (unsigned long long)r->packet, (unsigned long long)begin,
            (unsigned long long)(end - begin));
    if (r->stolen_from >= 0) fprintf(f, ",\"stolen_from_unit\":%d", r->stolen_from);
    more = true;
  }
  if (r->kind == RECORD_SPAN && r->u.args[0]) fprintf(f, "%s%s", more ? "," : "", r->u.args);
  fputs("}}", f);
}

static void write_row_names(FILE *f, uint32_t row, uint32_t lanes_used, bool *first) {
  uint32_t track = row / 2;
  if (track == 0 || track > AQ_TRACE_MAX_TRACKS) return;
  for (uint32_t lane = 0; lane < lanes_used; lane++) {
    char name[160];
    snprintf(name, sizeof name, "%s%s", trace.tracks[track - 1].name, row & 1 ? " waiting" : "");
    if (lane) snprintf(name + strlen(name), sizeof name - strlen(name), " (%u)", lane + 1);
    uint32_t tid = row * AQ_TRACE_LANES + lane + 1;
    fprintf(f,
            "%s\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":",
            *first ? "" : ",", (int)trace.pid, tid);
    *first = false;
    json_string(f, name);
    fprintf(f,
            "}},\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_sort_index\","
            "\"args\":{\"sort_index\":%llu}}",
            (int)trace.pid, tid,
            (unsigned long long)trace.tracks[track - 1].sort * 100000ull + tid);
  }
}

/* The output file: AQUILA_TRACE with "%p" replaced by the process id. */
static char *output_path(void) {
  const char *at = strstr(trace.path, "%p");
  char *path = NULL;
  if (!at) return strdup(trace.path);
  if (asprintf(&path, "%.*s%d%s", (int)(at - trace.path), trace.path, (int)getpid(), at + 2) < 0)
    return NULL;
  return path;
}

void aq_trace_write(void) {
  if (!aq_trace_on) return;
  /* A forked child has the parent's records: it writes only where the
   * name tells processes apart. */
  if (getpid() != trace.pid) {
    if (!strstr(trace.path, "%p")) return;
    trace.pid = getpid();
  }
  pthread_mutex_lock(&trace.write_lock);
  size_t count = 0, cap = 1024;
  struct item *items = malloc(cap * sizeof *items);
  for (struct thread_buffer *b = atomic_load(&trace.buffers); b && items; b = b->next) {
    for (struct chunk *c = b->first; c; c = atomic_load_explicit(&c->next, memory_order_acquire)) {
      uint32_t n = atomic_load_explicit(&c->count, memory_order_acquire);
      for (uint32_t i = 0; i < n && items; i++) {
        const struct record *r = &c->records[i];
        if (count + 2 > cap) {
          struct item *more = realloc(items, 2 * cap * sizeof *items);
          if (!more) {
            free(items);
            items = NULL;
            break;
          }
          items = more;
          cap *= 2;
        }
        uint64_t t1 = __atomic_load_n(&r->t1, __ATOMIC_RELAXED);
        if (r->kind == RECORD_COMMAND) {
          const struct aq_trace_command *t = &r->u.command;
          items[count++] = (struct item){r, r->track * 2 + 1, 0, t->queued, t->start};
          items[count++] = (struct item){r, r->track * 2, 0, t->start, t->end};
        } else {
          items[count++] = (struct item){r, r->track * 2, 0, r->t0, t1};
        }
      }
    }
  }
  char *path = output_path();
  FILE *f = path ? fopen(path, "w") : NULL;
  if (!items || !f) {
    fprintf(stderr, "aquila: AQUILA_TRACE: cannot write %s\n", path ? path : trace.path);
    if (f) fclose(f);
    free(items);
    free(path);
    pthread_mutex_unlock(&trace.write_lock);
    return;
  }
  qsort(items, count, sizeof *items, item_order);
  /* Overlapping spans of a row (an out-of-order queue's commands, the
   * waiting halves of queued commands) go to the first lane free at their
   * start; past the last lane they overlap there. */
  uint64_t lane_end[AQ_TRACE_LANES];
  uint32_t lanes_used = 0;
  bool first = true;
  fputs("{\"traceEvents\":[", f);
  for (size_t i = 0; i < count; i++) {
    if (i == 0 || items[i].row != items[i - 1].row) {
      if (i) write_row_names(f, items[i - 1].row, lanes_used, &first);
      lanes_used = 0;
    }
    uint32_t lane = 0;
    while (lane < lanes_used && lane_end[lane] > items[i].t0 && lane < AQ_TRACE_LANES - 1)
      lane++;
    if (lane == lanes_used) {
      lanes_used++;
      lane_end[lane] = 0;
    }
    if (items[i].t1 > lane_end[lane]) lane_end[lane] = items[i].t1;
    items[i].lane = lane;
    write_item(f, &items[i], &first);
  }
  if (count) write_row_names(f, items[count - 1].row, lanes_used, &first);
  fprintf(f,
          "%s\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"Aquila "
          "(pid %d)\"}}",
          first ? "" : ",", (int)trace.pid, (int)trace.pid);
  fprintf(f,
          "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"Aquila " AQUILA_VERSION
          "\",\"records\":%llu,\"dropped_records\":%llu}}\n",
          (unsigned long long)atomic_load(&trace.records),
          (unsigned long long)atomic_load(&trace.dropped));
  if (fclose(f) != 0) fprintf(stderr, "aquila: AQUILA_TRACE: cannot write %s\n", path);
  free(items);
  free(path);
  pthread_mutex_unlock(&trace.write_lock);
}
