/* aquila-compiler: the helper process in which libaquila.so runs the
 * compiler (libclang, LLVM, the clang driver), so that nothing LLVM does to
 * a program (a fatal error, an assertion, a crash, an endless loop) can end
 * the application. It serves one request at a time on file descriptor 3
 * (helper_wire.h) until the application closes the connection; its standard error
 * is a file that the application reads when the helper dies, for the build
 * log. See helper_client.c for the other end. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "aquila/compiler.h"
#include "helper/cache.h"
#include "frontend/frontend.h"
#include "codegen/codegen.h"
#include "helper/helper_wire.h"
#include "support/util.h"

#define REQUEST_FD 3

/* A request is being served: from its arrival to its reply's sending (the
 * kernel cache has its result by then); whether it is an upgrade's
 * (AQUILA_CODEGEN_UPGRADE), and the serving thread. */
static _Atomic int request_running, request_is_upgrade;
static _Atomic pid_t serving_thread;

static void reply(struct wire *out, enum aquila_compile_status status, const char *log,
                  const void *payload, size_t payload_size) {
  wire_put_u64(out, status);
  wire_put_str(out, log ? log : "");
  wire_put_bytes(out, payload, payload_size);
  /* Whether this helper ends after the reply (see serve). */
  wire_put_u64(out, (uint64_t)frontend_recovered_from_crash());
}

/* Serializes fb as the reply's payload (fb may be NULL on failure). */
static void reply_fatbin(struct wire *out, enum aquila_compile_status status, char *log,
                         struct aquila_fatbin *fb) {
  void *data = NULL;
  size_t size = 0;
  if (status == AQUILA_COMPILE_OK && aquila_fatbin_write(fb, &data, &size) != 0)
    status = AQUILA_COMPILE_NO_MEMORY;
  reply(out, status, log, data, size);
  free(data);
  free(log);
  aquila_fatbin_destroy(fb);
}

static void serve_compile(struct wire *in, struct wire *out) {
  struct aquila_compile_input ci = {0};
  ci.source = wire_get_str(in);
  ci.il = wire_get_bytes_or_null(in, &ci.il_size); /* NULL for source */
  ci.options = wire_get_str(in);
  ci.compile_only = (int)wire_get_u64(in);
  ci.code_on_demand = (int)wire_get_u64(in);
  ci.num_targets = wire_get_u64(in);
  const char **targets = calloc(ci.num_targets + 1, sizeof *targets);
  for (size_t i = 0; targets && i < ci.num_targets; i++)
    targets[i] = wire_get_str(in);
  ci.targets = targets;
  ci.num_headers = wire_get_u64(in);
  const char **names = calloc(ci.num_headers + 1, sizeof *names);
  const char **sources = calloc(ci.num_headers + 1, sizeof *sources);
  for (size_t i = 0; names && sources && i < ci.num_headers; i++) {
    names[i] = wire_get_str(in);
    sources[i] = wire_get_str(in);
  }
  ci.header_names = names;
  ci.header_sources = sources;
  compile_frontend_in_sequence = (int)wire_get_u64(in);
  if (in->failed || (!ci.source && !ci.il) || !targets || !names || !sources) {
    reply(out, AQUILA_COMPILE_FAILED, "error: internal: malformed compile request\n", NULL, 0);
  } else {
    struct aquila_fatbin *fb = NULL;
    char *log = NULL;
    enum aquila_compile_status st = aquila_compile(&ci, &fb, &log);
    reply_fatbin(out, st, log, fb);
  }
  free(targets);
  free(names);
  free(sources);
}

static struct aquila_fatbin *get_fatbin(struct wire *in) {
  size_t size;
  const void *data = wire_get_bytes(in, &size);
  struct aquila_fatbin *fb = NULL;
  char err[256];
  if (!data || aquila_fatbin_read(data, size, &fb, err, sizeof err) != 0) return NULL;
  return fb;
}

static void serve_link(struct wire *in, struct wire *out) {
  const char *options = wire_get_str(in);
  int code_on_demand = (int)wire_get_u64(in);
  size_t n = wire_get_u64(in);
  struct aquila_fatbin **inputs = in->failed ? NULL : calloc(n + 1, sizeof *inputs);
  int ok = inputs != NULL;
  for (size_t i = 0; ok && i < n; i++)
    ok = (inputs[i] = get_fatbin(in)) != NULL;
  if (!ok) {
    reply(out, AQUILA_COMPILE_FAILED, "error: internal: malformed link request\n", NULL, 0);
  } else {
    struct aquila_fatbin *fb = NULL;
    char *log = NULL;
    enum aquila_compile_status st = aquila_link((const struct aquila_fatbin *const *)inputs, n,
                                                options, code_on_demand, &fb, &log);
    reply_fatbin(out, st, log, fb);
  }
  for (size_t i = 0; inputs && i < n; i++)
    aquila_fatbin_destroy(inputs[i]);
  free(inputs);
}

static void serve_from_bitcode(struct wire *in, struct wire *out) {
  const char *target = wire_get_str(in);
  struct aquila_fatbin *fb = get_fatbin(in);
  if (!target || !fb) {
    reply(out, AQUILA_COMPILE_FAILED, "error: internal: malformed bitcode request\n", NULL, 0);
    aquila_fatbin_destroy(fb);
    return;
  }
  char *log = NULL;
  enum aquila_compile_status st = aquila_compile_from_bitcode(fb, target, &log);
  /* The whole binary: code generation also fills the kernels' layout. */
  reply_fatbin(out, st, log, fb);
}

static void serve_kernels(struct wire *in, struct wire *out) {
  const char *target = wire_get_str(in);
  size_t n = wire_get_u64(in);
  const char **names = in->failed ? NULL : calloc(n + 1, sizeof *names);
  for (size_t i = 0; names && i < n; i++)
    names[i] = wire_get_str(in);
  unsigned flags = names ? (unsigned)wire_get_u64(in) : 0;
  request_is_upgrade = (flags & AQUILA_CODEGEN_UPGRADE) != 0;
  /* Seen from outside (ps -L, /proc/PID/task/TID/comm): an upgrade's build
   * under way, which outlives the application (watch_application). */
  if (request_is_upgrade) pthread_setname_np(pthread_self(), "aquila-upgrade");
  struct aquila_launch_facts facts = {{0, 0, 0}};
  int has_facts = names && wire_get_u64(in) != 0;
  for (int d = 0; has_facts && d < 3; d++) {
    uint64_t size = wire_get_u64(in);
    facts.local_size[d] = size >= 1 && size <= UINT16_MAX ? (uint32_t)size : 0;
    if (!facts.local_size[d]) in->failed = 1;
  }
  struct aquila_fatbin *fb = names ? get_fatbin(in) : NULL;
  if (!target || !names || !fb || in->failed) {
    reply(out, AQUILA_COMPILE_FAILED, "error: internal: malformed kernels request\n", NULL, 0);
  } else {
    struct aquila_fatbin *built = NULL;
    char *log = NULL;
    int quick = 0;
    enum aquila_compile_status st =
        has_facts ? aquila_compile_kernels_specialized(fb, target, names, n, &facts, flags, &built,
                                                       &log)
                  : aquila_compile_kernels(fb, target, names, n, flags, &built, &quick, &log);
    reply_fatbin(out, st, log, built);
    /* After the usual fields: whether this is the quick tier's code. */
    wire_put_u64(out, (uint64_t)quick);
  }
  free(names);
  aquila_fatbin_destroy(fb);
}

/* Clang recurses once per nesting level of a program: a sum of 100,000
 * terms (a generated kernel, a macro that doubles itself) overruns an 8 MiB
 * stack, in libclang here and in the clang driver the helper starts. So
 * requests are served on a thread with a large stack (only touched pages
 * cost memory), libclang parses on the calling thread instead of an 8 MiB
 * thread of its own, and the driver inherits a raised stack limit. */
#define COMPILE_STACK_SIZE ((size_t)1 << 30)

static void *serve(void *arg) {
  (void)arg;
  serving_thread = gettid();
  for (;;) {
    struct wire in = {0}, out = {0};
    if (wire_recv(REQUEST_FD, &in, -1) != 0) break; /* the application is gone */
    request_running = 1;
    /* Standard error holds only what this request prints. */
    if (ftruncate(2, 0) == 0) lseek(2, 0, SEEK_SET);
    uint64_t op = wire_get_u64(&in);
    size_t env_len;
    const char *env = wire_get_bytes(&in, &env_len);
    if (env) wire_apply_aquila_env(env, env_len);
    switch (op) {
    case WIRE_COMPILE:
      serve_compile(&in, &out);
      break;
    case WIRE_LINK:
      serve_link(&in, &out);
      break;
    case WIRE_FROM_BITCODE:
      serve_from_bitcode(&in, &out);
      break;
    case WIRE_KERNELS:
      serve_kernels(&in, &out);
      break;
    case WIRE_HOST_TARGET: {
      /* The target and, after a newline, this process's CPU identity: the
       * application uses the target only where its own CPU is the same. */
      char t[256];
      int n = snprintf(t, sizeof t, "%s\n%016llx", aquila_compiler_host_target(),
                       (unsigned long long)cache_host_cpu_identity());
      reply(&out, AQUILA_COMPILE_OK, "", t, n > 0 && (size_t)n < sizeof t ? (size_t)n : 0);
      break;
    }
    default:
      reply(&out, AQUILA_COMPILE_FAILED, "error: internal: unknown request\n", NULL, 0);
    }
    int sent = wire_send(REQUEST_FD, &out);
    request_running = 0;
    if (request_is_upgrade) pthread_setname_np(pthread_self(), "aquila-compiler");
    request_is_upgrade = 0;
    wire_free(&in);
    wire_free(&out);
    /* After a crash libclang recovered from, the application takes the
     * next request to a fresh helper (the reply said so). */
    if (sent != 0 || frontend_recovered_from_crash()) break;
  }
  return NULL;
}

/* A helper for builds nobody waits for (AQUILA_CODEGEN_BACKGROUND) yields
 * the cores to the application: a nice value of 10 leaves it about a tenth
 * of a core that the application keeps busy (SCHED_IDLE would leave it
 * nothing, and an application that never idles would never get the code). */
#define BACKGROUND_NICE 10

/* How long a helper may go on with its build after its
 * application ended: AQUILA_BUILD_AFTER_EXIT seconds (0: it ends with the
 * application). */
#define DEFAULT_BUILD_AFTER_EXIT_S 60

static long build_after_exit_seconds(void) {
  const char *e = getenv("AQUILA_BUILD_AFTER_EXIT");
  if (!e || !*e) return DEFAULT_BUILD_AFTER_EXIT_S;
  char *end;
  long v = strtol(e, &end, 10);
  return *end || v < 0 ? DEFAULT_BUILD_AFTER_EXIT_S : v > 3600 ? 3600 : v;
}

/* The application's end of the connection closes when the application
 * ends, however it ends (killed by a time limit, a crash): the helper then
 * ends at once, with the clang driver or linker it may be waiting for (its
 * process group, which it leads), instead of finishing a build nobody will
 * read. A watch of its own, because a long build does not read the
 * connection; not PR_SET_PDEATHSIG, which fires when the thread that
 * started the helper ends, not the application.
 *
 * An upgrade's build is read: by the next run of the program, from the
 * kernel cache. A short program (John the Ripper's benchmark of one
 * format, 3 s; a command-line tool) ended before the vector version of its
 * large kernels was made, ran the quick tier's code on every run and
 * started that build again each time. So the helper finishes the upgrade
 * it has under way, at the background's low priority, for at most
 * AQUILA_BUILD_AFTER_EXIT seconds, and stores the result only where the
 * cache directory still is; queued builds are the application's and end
 * with it. */
static void *watch_application(void *arg) {
  (void)arg;
  struct pollfd p = {.fd = REQUEST_FD, .events = POLLRDHUP};
  for (;;) {
    int n = poll(&p, 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return NULL; /* cannot watch: the request loop still ends at EOF */
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) break;
  }
  if (request_running && request_is_upgrade && build_after_exit_seconds() > 0) {
    cache_store_only_in_existing_dir();
    if (serving_thread) setpriority(PRIO_PROCESS, (id_t)serving_thread, BACKGROUND_NICE);
    long ticks = build_after_exit_seconds() * 20;
    struct timespec tick = {0, 50 * 1000 * 1000};
    for (long i = 0; i < ticks && request_running; i++)
      nanosleep(&tick, NULL);
    if (!request_running) _exit(0);
  }
  /* Nobody else will: the application that would remove them has ended. */
  remove_scratch_dirs_of(getpid(), scratch_parent_dir());
  if (getpgrp() == getpid()) kill(0, SIGKILL);
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--background")) {
    errno = 0;
    int now = getpriority(PRIO_PROCESS, 0);
    if (!(now == -1 && errno) && now < BACKGROUND_NICE)
      setpriority(PRIO_PROCESS, 0, BACKGROUND_NICE);
    codegen_set_threads(1); /* the cores are the application's */
  }
  /* The application may ignore SIGPIPE or not; the helper never wants it. */
  signal(SIGPIPE, SIG_IGN);
  struct rlimit stack;
  if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY &&
      stack.rlim_cur < COMPILE_STACK_SIZE) {
    stack.rlim_cur = stack.rlim_max == RLIM_INFINITY || stack.rlim_max > COMPILE_STACK_SIZE
                         ? COMPILE_STACK_SIZE
                         : stack.rlim_max;
    setrlimit(RLIMIT_STACK, &stack);
  }
  setenv("LIBCLANG_NOTHREADS", "1", 1);
  pthread_attr_t attr;
  pthread_t thread, watch;
  if (pthread_create(&watch, NULL, watch_application, NULL) == 0) pthread_detach(watch);
  if (pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, COMPILE_STACK_SIZE) == 0 &&
      pthread_create(&thread, &attr, serve, NULL) == 0) {
    pthread_join(thread, NULL);
  } else {
    serve(NULL); /* no big stack to be had: the usual one */
  }
  return 0;
}
