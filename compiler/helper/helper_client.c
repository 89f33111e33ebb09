/* The compiler API (aquila/compiler.h) as libaquila.so implements it: the
 * work runs in aquila-compiler helper processes (helper.c), so that LLVM is
 * never loaded into the application and nothing it does to a program can end
 * the application. Helpers are started on first use, kept for the next
 * build (one per build running at once), and replaced when one dies or
 * overruns AQUILA_COMPILE_TIMEOUT; the build then fails with the reason and
 * what the helper wrote to standard error in its log.
 *
 * Kernel-cache hits are served here, in the application, without a helper;
 * so is the host target name once a helper has told it (kept in the cache
 * directory). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aquila/compiler.h"
#include "helper/cache.h"
#include "support/strbuf.h"
#include "support/util.h"
#include "helper/helper_wire.h"

extern char **environ;

/* A build that runs this long is taken for a hung compiler. */
#define DEFAULT_TIMEOUT_S 600

struct helper {
  pid_t pid;
  int sock;      /* requests and replies */
  int stderr_fd; /* a memfd: the helper's standard error for the current request */
  int background; /* builds nobody waits for, at a lower priority (AQUILA_CODEGEN_BACKGROUND) */
  char *scratch_parent; /* where its scratch directories are (the TMPDIR it started with) */
  struct helper *next;
  /* While a thread's request is under way: the request (complete before it
   * is sent, only read after), and the next busy helper. */
  char *request;
  struct helper *next_busy;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
/* Whether this thread's last request ended with its helper killed by a
 * signal (not stopped for a time-out). */
static _Thread_local int helper_crashed;
/* Idle helpers: [0] for builds an application waits for, [1] background. */
static struct helper *idle_helpers[2];
/* Helpers serving a request, found again in a forked child. */
static struct helper *busy_helpers;

static void helper_busy(struct helper *h, struct wire *req) {
  pthread_mutex_lock(&pool_lock);
  h->request = req->data;
  h->next_busy = busy_helpers;
  busy_helpers = h;
  pthread_mutex_unlock(&pool_lock);
}

static void helper_done(struct helper *h) {
  pthread_mutex_lock(&pool_lock);
  for (struct helper **at = &busy_helpers; *at; at = &(*at)->next_busy)
    if (*at == h) {
      *at = h->next_busy;
      break;
    }
  h->request = NULL;
  pthread_mutex_unlock(&pool_lock);
}

/* A forked child shares the parent's helpers' sockets: it must not talk to
 * them. It starts helpers of its own when it builds. */
static void pool_prepare_fork(void) {
  pthread_mutex_lock(&pool_lock);
}
static void pool_parent_after_fork(void) {
  pthread_mutex_unlock(&pool_lock);
}
static void pool_child_after_fork(void) {
  /* The threads that were waiting for these are the parent's: the
   * helpers, and the requests they served, go with them. */
  for (struct helper *h = busy_helpers, *next; h; h = next) {
    next = h->next_busy;
    close(h->sock);
    close(h->stderr_fd);
    free(h->request);
    free(h->scratch_parent);
    free(h);
  }
  busy_helpers = NULL;
  for (int b = 0; b < 2; b++) {
    for (struct helper *h = idle_helpers[b], *next; h; h = next) {
      next = h->next;
      close(h->sock);
      close(h->stderr_fd);
      free(h->scratch_parent);
      free(h);
    }
    idle_helpers[b] = NULL;
  }
  pthread_mutex_init(&pool_lock, NULL);
}
/* Registered when the library is loaded, before the runtime's handlers
 * (runtime/fork.c): pthread_atfork runs prepare handlers in the reverse
 * order, so the runtime waits for its own threads' busy sections (which may
 * build a program from a callback) before the pool is locked. */
__attribute__((constructor)) static void register_atfork(void) {
  pthread_atfork(pool_prepare_fork, pool_parent_after_fork, pool_child_after_fork);
}

/* $AQUILA_COMPILER, else aquila/aquila-compiler beside this library. */
static char *helper_path(void) {
  const char *env = getenv("AQUILA_COMPILER");
  if (env && *env) return strdup(env);
  Dl_info info;
  if (!dladdr((void *)helper_path, &info) || !info.dli_fname) return NULL;
  char *slash = strrchr(info.dli_fname, '/');
  struct strbuf sb = {0};
  if (slash)
    strbuf_appendn(&sb, info.dli_fname, (size_t)(slash - info.dli_fname));
  else
    strbuf_append(&sb, ".");
  strbuf_append(&sb, "/aquila/aquila-compiler");
  return strbuf_take(&sb);
}

static void helper_destroy(struct helper *h) {
  close(h->sock);
  close(h->stderr_fd);
  free(h->scratch_parent);
  free(h);
}

static struct helper *helper_start(struct strbuf *log, enum aquila_compile_status *status,
                                   int background) {
  char *path = helper_path();
  int sv[2] = {-1, -1};
  int err_fd = memfd_create("aquila-compiler-stderr", MFD_CLOEXEC);
  struct helper *h = calloc(1, sizeof *h);
  if (!path || !h || err_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    strbuf_printf(log, "error: cannot start the compiler process: %s\n", strerror(errno));
    *status = AQUILA_COMPILE_NO_MEMORY;
    goto fail;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 3);
  /* Nothing else of the application's stays open in the helper. */
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  /* Its own process group, so that a time-out ends the tools it runs too;
   * default SIGCHLD, which its waits for the clang driver rely on, whatever
   * the application chose for itself. */
  sigset_t defaults, none;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGCHLD);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  char *argv[] = {path, background ? "--background" : NULL, NULL};
  int rc = posix_spawn(&h->pid, path, &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(sv[1]);
  sv[1] = -1;
  if (rc != 0) {
    strbuf_printf(log, "error: cannot run the compiler %s: %s\n", path, strerror(rc));
    *status = AQUILA_COMPILE_UNAVAILABLE;
    goto fail;
  }
  h->sock = sv[0];
  h->stderr_fd = err_fd;
  h->background = background;
  h->scratch_parent = strdup(scratch_parent_dir());
  if (h->scratch_parent) remove_stale_scratch_dirs(h->scratch_parent);
  free(path);
  return h;
fail:
  if (sv[0] >= 0) close(sv[0]);
  if (err_fd >= 0) close(err_fd);
  free(h);
  free(path);
  return NULL;
}

static struct helper *helper_take(struct strbuf *log, enum aquila_compile_status *status,
                                  int *reused, int background) {
  pthread_mutex_lock(&pool_lock);
  struct helper *h = idle_helpers[background];
  if (h) idle_helpers[background] = h->next;
  pthread_mutex_unlock(&pool_lock);
  *reused = h != NULL;
  return h ? h : helper_start(log, status, background);
}

static void helper_give_back(struct helper *h) {
  pthread_mutex_lock(&pool_lock);
  h->next = idle_helpers[h->background];
  idle_helpers[h->background] = h;
  pthread_mutex_unlock(&pool_lock);
}

/* A helper that died or overran: end it (and what it ran), say why in the
 * log with its last words, and forget it. */
static void helper_fail(struct helper *h, int timed_out, int timeout_s, struct strbuf *log) {
  kill(-h->pid, SIGKILL);
  kill(h->pid, SIGKILL);
  int status = 0;
  pid_t r;
  while ((r = waitpid(h->pid, &status, 0)) < 0 && errno == EINTR) {
  }
  /* Its build never reached its own clean-up. */
  if (r == h->pid && h->scratch_parent) remove_scratch_dirs_of(h->pid, h->scratch_parent);
  if (timed_out)
    strbuf_printf(log,
                  "error: the compiler did not finish within %d s (AQUILA_COMPILE_TIMEOUT) and "
                  "was stopped\n",
                  timeout_s);
  else if (r == h->pid && WIFSIGNALED(status)) {
    helper_crashed = 1;
    strbuf_printf(log, "error: the compiler process crashed (signal %d, %s) on this program\n",
                  WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else if (r == h->pid && WIFEXITED(status))
    strbuf_printf(log, "error: the compiler process exited (status %d) on this program\n",
                  WEXITSTATUS(status));
  else
    strbuf_append(log, "error: the compiler process ended on this program\n");
  char buf[8192];
  ssize_t n = pread(h->stderr_fd, buf, sizeof buf - 1, 0);
  if (n > 0) {
    buf[n] = 0;
    strbuf_append(log, "compiler output:\n");
    strbuf_append(log, buf);
    if (buf[n - 1] != '\n') strbuf_append(log, "\n");
  }
  helper_destroy(h);
}

/* Ends a helper that is well: closing the connection ends it; it is
 * reaped so that no zombie stays. */
static void helper_end(struct helper *h) {
  close(h->sock);
  h->sock = -1;
  while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR) {
  }
  close(h->stderr_fd);
  free(h->scratch_parent);
  free(h);
}

void aquila_compiler_unload(void) {
  for (int b = 0; b < 2; b++) {
    pthread_mutex_lock(&pool_lock);
    struct helper *h = idle_helpers[b];
    idle_helpers[b] = NULL;
    pthread_mutex_unlock(&pool_lock);
    for (struct helper *next; h; h = next) {
      next = h->next;
      helper_end(h);
    }
  }
}

/* What the compiler printed for a build that went well (AQUILA_DEBUG_REGIONS
 * reports, LLVM warnings) goes to the application's standard error, as if
 * the compiler ran in-process. */
static void forward_diagnostics(struct helper *h) {
  char buf[8192];
  ssize_t n;
  for (off_t at = 0; (n = pread(h->stderr_fd, buf, sizeof buf, at)) > 0; at += n)
    if (write(2, buf, (size_t)n) != n) break;
}

static int timeout_seconds(void) {
  const char *e = getenv("AQUILA_COMPILE_TIMEOUT");
  long v = e && *e ? strtol(e, NULL, 10) : DEFAULT_TIMEOUT_S;
  return v > 0 && v < INT_MAX / 1000 ? (int)v : DEFAULT_TIMEOUT_S;
}

/* Sends a request (op and AQUILA_* environment already in req) and reads the
 * reply's status, log and payload into *reply. On any failure of the helper
 * the status is AQUILA_COMPILE_FAILED (or UNAVAILABLE) and log says why. */
static enum aquila_compile_status call_helper(struct wire *req, struct wire *reply,
                                              struct strbuf *log, const void **payload,
                                              size_t *payload_size, int background) {
  enum aquila_compile_status status = AQUILA_COMPILE_FAILED;
  *payload = NULL;
  *payload_size = 0;
  if (req->failed) return AQUILA_COMPILE_NO_MEMORY;
  int timeout_s = timeout_seconds(), reused;
  struct helper *h = helper_take(log, &status, &reused, background);
  if (!h) return status;
  helper_busy(h, req);
  int sent = wire_send(h->sock, req) == 0;
  if (!sent && reused) {
    /* It died while idle (killed from outside): not this program's fault. */
    struct strbuf ignored = {0};
    helper_done(h);
    helper_fail(h, 0, timeout_s, &ignored);
    strbuf_free(&ignored);
    if (!(h = helper_start(log, &status, background))) return status;
    helper_busy(h, req);
    sent = wire_send(h->sock, req) == 0;
  }
  if (!sent || wire_recv(h->sock, reply, timeout_s * 1000) != 0) {
    int timed_out = sent && errno == ETIMEDOUT;
    helper_done(h);
    helper_fail(h, timed_out, timeout_s, log);
    return AQUILA_COMPILE_FAILED;
  }
  helper_done(h);
  forward_diagnostics(h);
  status = (enum aquila_compile_status)wire_get_u64(reply);
  const char *text = wire_get_str(reply);
  *payload = wire_get_bytes(reply, payload_size);
  /* A helper in which clang crashed (libclang recovered) is not reused. */
  int retiring = wire_get_u64(reply) != 0;
  if (retiring || reply->failed)
    helper_end(h);
  else
    helper_give_back(h);
  if (reply->failed) {
    strbuf_append(log, "error: internal: malformed reply from the compiler process\n");
    return AQUILA_COMPILE_FAILED;
  }
  strbuf_append(log, text);
  return status;
}

static void begin_request(struct wire *req, enum wire_op op) {
  wire_put_u64(req, op);
  wire_put_aquila_env(req);
}

/* Sends req and takes the reply's fat binary into *out (NULL on failure)
 * and its log into *log_out, and where extra is given, the number the
 * reply has after the usual fields (0 if none); frees req. */
static enum aquila_compile_status call_for_fatbin(struct wire *req, struct aquila_fatbin **out,
                                                  char **log_out, int background, uint64_t *extra) {
  struct wire reply = {0};
  struct strbuf log = {0};
  const void *data;
  size_t size;
  *out = NULL;
  enum aquila_compile_status st = call_helper(req, &reply, &log, &data, &size, background);
  if (extra) {
    *extra = st == AQUILA_COMPILE_OK ? wire_get_u64(&reply) : 0;
    if (reply.failed) *extra = 0;
  }
  char err[256];
  if (st == AQUILA_COMPILE_OK && aquila_fatbin_read(data, size, out, err, sizeof err) != 0) {
    strbuf_printf(&log, "error: internal: the compiler's result does not read back: %s\n", err);
    *out = NULL;
    st = AQUILA_COMPILE_FAILED;
  }
  wire_free(req);
  wire_free(&reply);
  *log_out = strbuf_take(&log);
  return st;
}

static void put_fatbin(struct wire *req, const struct aquila_fatbin *fb) {
  void *data = NULL;
  size_t size = 0;
  if (aquila_fatbin_write(fb, &data, &size) != 0)
    req->failed = 1;
  else
    wire_put_bytes(req, data, size);
  free(data);
}

static void put_compile_request(struct wire *req, const struct aquila_compile_input *in,
                                int in_sequence) {
  begin_request(req, WIRE_COMPILE);
  wire_put_str(req, in->source);
  if (in->il)
    wire_put_bytes(req, in->il, in->il_size);
  else
    wire_put_str(req, NULL);
  wire_put_str(req, in->options);
  wire_put_u64(req, (uint64_t)in->compile_only);
  wire_put_u64(req, (uint64_t)in->code_on_demand);
  wire_put_u64(req, in->num_targets);
  for (size_t i = 0; i < in->num_targets; i++)
    wire_put_str(req, in->targets[i]);
  wire_put_u64(req, in->num_headers);
  for (size_t i = 0; i < in->num_headers; i++) {
    wire_put_str(req, in->header_names[i]);
    wire_put_str(req, in->header_sources[i]);
  }
  wire_put_u64(req, (uint64_t)in_sequence);
}

enum aquila_compile_status aquila_compile(const struct aquila_compile_input *in,
                                          struct aquila_fatbin **out, char **log_out) {
  *out = NULL;
  struct cache_key key;
  if (cache_make_key(in, &key) == 0 && (*out = cache_load(&key))) {
    *log_out = strdup("");
    return *log_out ? AQUILA_COMPILE_OK : AQUILA_COMPILE_NO_MEMORY;
  }
  struct wire req = {0};
  put_compile_request(&req, in, 0);
  helper_crashed = 0;
  enum aquila_compile_status st = call_for_fatbin(&req, out, log_out, 0, NULL);
  if (!helper_crashed) return st;
  /* The compiler process crashed with clang's parse and code generation
   * side by side (compile.c): once more in sequence, where libclang
   * survives a front-end crash and gives the program's diagnostics. */
  free(*log_out);
  put_compile_request(&req, in, 1);
  return call_for_fatbin(&req, out, log_out, 0, NULL);
}

enum aquila_compile_status aquila_link(const struct aquila_fatbin *const *inputs, size_t num_inputs,
                                       const char *options, int code_on_demand,
                                       struct aquila_fatbin **out, char **log_out) {
  struct wire req = {0};
  begin_request(&req, WIRE_LINK);
  wire_put_str(&req, options);
  wire_put_u64(&req, (uint64_t)code_on_demand);
  wire_put_u64(&req, num_inputs);
  for (size_t i = 0; i < num_inputs; i++)
    put_fatbin(&req, inputs[i]);
  return call_for_fatbin(&req, out, log_out, 0, NULL);
}

/* aquila_compile_kernels, and with facts its specialized version. */
static enum aquila_compile_status compile_kernels(struct aquila_fatbin *fb, const char *target,
                                                  const char *const *names, size_t num_names,
                                                  const struct aquila_launch_facts *facts,
                                                  unsigned flags, struct aquila_fatbin **out,
                                                  int *quick, char **log_out) {
  *out = NULL;
  if (quick) *quick = 0;
  if (facts) flags &= ~(unsigned)AQUILA_CODEGEN_QUICK_IF_LARGE;
  struct cache_key key;
  if ((facts ? cache_make_specialized_kernels_key(fb, target, names, num_names, facts, &key)
             : cache_make_kernels_key(fb, target, names, num_names, &key)) == 0) {
    struct aquila_fatbin *cached = cache_load(&key);
    if (cached && aquila_fatbin_find_code(cached, target) &&
        (facts || fatbin_adopt_layout(fb, cached, 0) == 0)) {
      *out = cached;
      *log_out = strdup("");
      return *log_out ? AQUILA_COMPILE_OK : AQUILA_COMPILE_NO_MEMORY;
    }
    aquila_fatbin_destroy(cached);
  }
  /* No whole version: where quick code will do, the quick tier's from an
   * earlier run (its vector version is then built in the background). */
  if ((flags & AQUILA_CODEGEN_QUICK_IF_LARGE) && quick &&
      cache_make_quick_kernels_key(fb, target, names, num_names, &key) == 0) {
    struct aquila_fatbin *cached = cache_load(&key);
    if (cached && aquila_fatbin_find_code(cached, target) &&
        fatbin_adopt_layout(fb, cached, 0) == 0) {
      *out = cached;
      *quick = 1;
      *log_out = strdup("");
      return *log_out ? AQUILA_COMPILE_OK : AQUILA_COMPILE_NO_MEMORY;
    }
    aquila_fatbin_destroy(cached);
  }
  if (flags & AQUILA_CODEGEN_CACHED_ONLY) {
    *log_out = strdup("the kernel cache does not hold that code\n");
    return *log_out ? AQUILA_COMPILE_UNAVAILABLE : AQUILA_COMPILE_NO_MEMORY;
  }
  struct wire req = {0};
  begin_request(&req, WIRE_KERNELS);
  wire_put_str(&req, target);
  wire_put_u64(&req, num_names);
  for (size_t i = 0; i < num_names; i++)
    wire_put_str(&req, names[i]);
  wire_put_u64(&req, flags & (AQUILA_CODEGEN_QUICK_IF_LARGE | AQUILA_CODEGEN_UPGRADE));
  /* The launch facts: none, or the work-group size. */
  wire_put_u64(&req, facts != NULL);
  for (int d = 0; facts && d < 3; d++)
    wire_put_u64(&req, facts->local_size[d]);
  put_fatbin(&req, fb);
  struct aquila_fatbin *built = NULL;
  uint64_t made_quick = 0;
  enum aquila_compile_status st =
      call_for_fatbin(&req, &built, log_out, (flags & AQUILA_CODEGEN_BACKGROUND) != 0, &made_quick);
  if (st == AQUILA_COMPILE_OK && (!aquila_fatbin_find_code(built, target) ||
                                  (!facts && fatbin_adopt_layout(fb, built, 0) != 0))) {
    st = AQUILA_COMPILE_FAILED;
    struct strbuf log = {0};
    strbuf_append(&log, *log_out);
    strbuf_append(&log, "error: internal: cannot take over the compiler's code object\n");
    free(*log_out);
    *log_out = strbuf_take(&log);
    aquila_fatbin_destroy(built);
    built = NULL;
  }
  if (quick && st == AQUILA_COMPILE_OK) *quick = made_quick != 0;
  *out = built;
  return st;
}

enum aquila_compile_status aquila_compile_kernels(struct aquila_fatbin *fb, const char *target,
                                                  const char *const *names, size_t num_names,
                                                  unsigned flags, struct aquila_fatbin **out,
                                                  int *quick, char **log_out) {
  return compile_kernels(fb, target, names, num_names, NULL, flags, out, quick, log_out);
}

enum aquila_compile_status aquila_compile_kernels_specialized(
    struct aquila_fatbin *fb, const char *target, const char *const *names, size_t num_names,
    const struct aquila_launch_facts *facts, unsigned flags, struct aquila_fatbin **out,
    char **log_out) {
  return compile_kernels(fb, target, names, num_names, facts, flags, out, NULL, log_out);
}

enum aquila_compile_status aquila_compile_from_bitcode(struct aquila_fatbin *fb, const char *target,
                                                       char **log_out) {
  struct wire req = {0};
  begin_request(&req, WIRE_FROM_BITCODE);
  wire_put_str(&req, target);
  put_fatbin(&req, fb);
  struct aquila_fatbin *built = NULL;
  enum aquila_compile_status st = call_for_fatbin(&req, &built, log_out, 0, NULL);
  if (st == AQUILA_COMPILE_OK) {
    const struct aquila_fatbin_code *code = aquila_fatbin_find_code(built, target);
    if (!code || fatbin_adopt_layout(fb, built, 1) != 0 ||
        aquila_fatbin_add_code(fb, target, code->data, code->size) != 0) {
      st = AQUILA_COMPILE_FAILED;
      struct strbuf log = {0};
      strbuf_append(&log, *log_out);
      strbuf_append(&log, "error: internal: cannot take over the compiler's code object\n");
      free(*log_out);
      *log_out = strbuf_take(&log);
    }
  }
  aquila_fatbin_destroy(built);
  return st;
}

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static char host_target[128] = "x86_64-native:unknown";

static void find_host_target(void) {
  const char *level = cpu_target_override();
  if (level) {
    snprintf(host_target, sizeof host_target, "%s", level);
    return;
  }
  if (cache_load_host_target(host_target, sizeof host_target) == 0) return;
  struct wire req = {0}, reply = {0};
  struct strbuf log = {0};
  begin_request(&req, WIRE_HOST_TARGET);
  const void *data;
  size_t size;
  char answer[256];
  if (call_helper(&req, &reply, &log, &data, &size, 0) == AQUILA_COMPILE_OK && size > 0 &&
      size < sizeof answer) {
    memcpy(answer, data, size);
    answer[size] = 0;
    /* The helper's CPU, if it is this process's (the helper is a process
     * of its own: under QEMU's user mode emulating an older CPU, the
     * application runs emulated and the helper natively, and the helper's
     * CPU name would give code with instructions this process lacks). */
    char *newline = strchr(answer, '\n');
    unsigned long long identity = newline ? strtoull(newline + 1, NULL, 16) : 0;
    if (newline) *newline = 0;
    if (newline && identity == cache_host_cpu_identity() && strlen(answer) < sizeof host_target) {
      snprintf(host_target, sizeof host_target, "%s", answer);
    } else {
      snprintf(host_target, sizeof host_target, "%s", host_cpu_level());
      if (getenv("AQUILA_DEBUG"))
        fprintf(stderr,
                "aquila: the compiler helper's CPU (%s) is not this process's: kernels are built "
                "for %s\n",
                answer, host_target);
    }
    cache_store_host_target(host_target);
  }
  wire_free(&req);
  wire_free(&reply);
  strbuf_free(&log);
}

const char *aquila_compiler_host_target(void) {
  pthread_once(&host_once, find_host_target);
  return host_target;
}
