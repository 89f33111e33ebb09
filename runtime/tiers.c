/* Tiers: the background builds that replace quick-tier code, and those of
 * kernels' versions for one work-group size (specialize.c). A kernel large
 * enough that its vector build is costly first gets scalar code only
 * (compiler/codegen/codegen.c decides by its size), so that its first launch does
 * not wait for the vectorizer; its whole version is then made here, on one
 * worker thread, in compiler processes of low priority, and put in place
 * between two launches (program.c's upgrade steps). This module owns the
 * queue of those builds and the worker.
 *
 * A queued build holds no reference to its program: what the application
 * sees of the program (its reference count, a released handle refused, the
 * context's count) stays as without tiers. Instead the program's unload
 * (a rebuild, or its last release) drops its builds here: queued ones at
 * once, the one under way at once while it compiles (from its own copy of
 * what it needs), or after its short steps that read or write the program
 * (copying the fat binary, loading the result). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime.h"

struct upgrade_job {
  cl_program program;
  cl_uint slot;
  uint32_t num_kernels;
  uint32_t *kernels;
  /* The kernels' entries in the program's upgraded array: compared with
   * what a launch names (tiers_quick_code_launched), never read here. */
  const _Atomic uint64_t **entries;
  /* When one of its kernels first and last launched its quick code; 0
   * before (under jobs_lock). */
  uint64_t first_launch_ns, last_launch_ns;
  /* A version of kernels[0] for one work-group size, instead of the
   * whole version of quick-tier kernels. */
  struct specialized_version *specialized;
  struct upgrade_job *next;
};

static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t jobs_cond = PTHREAD_COND_INITIALIZER;
static struct upgrade_job *jobs_head, **jobs_tail = &jobs_head;
/* The build under way: its program, whether it touches the program now
 * (the unload waits for that to end), and whether the unload dropped it. */
static cl_program running_program;
static struct upgrade_job *running_job;
static int running_installed;
static int running_touches_program;
static int running_dropped;
static int worker_started;
/* The build the worker has under way (its request and the fat binary it
 * builds from), and in a child the builds the parent's worker had under
 * way at each fork: the child keeps them, unfreed, as it cannot know how
 * far the parent's thread had got with them, and reachable, so that they
 * are not lost memory. */
static struct upgrade_build *running_build;
struct inherited_build {
  struct upgrade_build *build;
  struct inherited_build *next;
};
static struct inherited_build *inherited_builds;

static void job_free(struct upgrade_job *job) {
  free(job->kernels);
  free(job->entries);
  free(job);
}

/* "On idle cores where there are any": a background build waits until no
 * device has run kernels for IDLE_MS (the application creates a kernel and
 * launches it a moment later: the build is not to start in between),
 * polling every 5 ms. Measured on the 2-core machine: a 100 KB kernel's
 * first launch (scalar) took 58 ms alone and 78 with the vector build
 * beside it.
 *
 * A build none of whose kernels has launched waits for that only: while
 * the application keeps the cores busy with other kernels, building code
 * it has not used (and may never use) takes their time for nothing
 * (hashcat creates three MD5 kernels and runs one: building the other two
 * beside its benchmark cost it about a tenth of its speed). Its first
 * launch makes it one of the next two kinds.
 *
 * A build whose quick code has launched goes ahead IDLE_WAIT_MS after its
 * first launch even if the devices never idle, at its lower priority, or
 * an application that never idles would never get its vector code; these
 * builds go before those not launched, the latest launched first.
 *
 * And when quick code itself keeps the devices busy: its launches run 10
 * to 25 times slower than the vector version would, and a running launch
 * takes the vector version from its next range of work-groups
 * (program_upgrade_install). When the devices have been busy for URGENT_MS
 * without a pause since a launch of a build's quick code, it starts at
 * once, at normal priority. Shorter launches (a 100 KB kernel's first, 58
 * ms) do not share their cores with it. */
#define IDLE_MS 50
#define IDLE_WAIT_MS 2000
#define URGENT_MS 100

static int start_worker(void);

void tiers_quick_code_launched(const _Atomic uint64_t *entry) {
  uint64_t now = now_ns();
  pthread_mutex_lock(&jobs_lock);
  /* In a forked child, the first launch starts the worker for the builds
   * it inherited (tiers_fork). */
  if (jobs_head && !worker_started) start_worker();
  for (struct upgrade_job *job = jobs_head; job; job = job->next)
    for (uint32_t m = 0; m < job->num_kernels; m++)
      if (job->entries[m] == entry) {
        if (!job->first_launch_ns) job->first_launch_ns = now;
        job->last_launch_ns = now;
        break;
      }
  pthread_mutex_unlock(&jobs_lock);
}

static int any_device_busy(void) {
  for (cl_uint i = 0; i < aquila_num_devices; i++)
    if (device_runs_kernels(&aquila_devices[i])) return 1;
  return 0;
}

/* Under jobs_lock: the queued build to make next: the latest launched,
 * else the first queued. */
static struct upgrade_job *next_job(void) {
  struct upgrade_job *best = jobs_head;
  for (struct upgrade_job *job = jobs_head; job; job = job->next)
    if (job->last_launch_ns > best->last_launch_ns) best = job;
  return best;
}

/* Waits until a queued build may start (see above), takes it off the queue
 * and returns it, with *urgent set when it is to be built at normal
 * priority. Under jobs_lock, which it lets go while it sleeps. */
static struct upgrade_job *wait_for_next_job(int *urgent) {
  struct timespec pause = {0, 5 * 1000 * 1000};
  int idle_for = 0;
  /* When the devices' current busy spell began (at the latest). */
  uint64_t busy_since = now_ns();
  struct upgrade_job *job = NULL;
  *urgent = 0;
  for (;;) {
    if (!jobs_head) {
      while (!jobs_head)
        pthread_cond_wait(&jobs_cond, &jobs_lock);
      idle_for = 0;
      busy_since = now_ns();
    }
    job = next_job();
    if (idle_for >= IDLE_MS) break;
    uint64_t now = now_ns();
    if (job->first_launch_ns && now - job->first_launch_ns >= IDLE_WAIT_MS * 1000000ull) break;
    pthread_mutex_unlock(&jobs_lock);
    nanosleep(&pause, NULL);
    int busy = any_device_busy();
    now = now_ns();
    pthread_mutex_lock(&jobs_lock);
    if (!busy) {
      idle_for += 5;
      busy_since = now;
      continue;
    }
    idle_for = 0;
    if (!jobs_head) continue;
    job = next_job();
    /* A version for a work-group size counts from when it was asked for:
     * launches of that size come one after another, each short (a tiled
     * SGEMM's, 25 ms), and would otherwise hold it back until they end. */
    uint64_t quick = job->specialized ? job->first_launch_ns : job->last_launch_ns;
    /* Launched in this busy spell (or up to a poll before it began). */
    if (quick && (job->specialized || quick + 10 * 1000000ull >= busy_since) &&
        now - (quick > busy_since ? quick : busy_since) >= URGENT_MS * 1000000ull) {
      *urgent = 1;
      break;
    }
  }
  for (struct upgrade_job **at = &jobs_head;; at = &(*at)->next)
    if (*at == job) {
      *at = job->next;
      break;
    }
  jobs_tail = &jobs_head;
  while (*jobs_tail)
    jobs_tail = &(*jobs_tail)->next;
  job->next = NULL;
  return job;
}

/* Under jobs_lock: whether the build under way may go on to a step that
 * touches its program (and then marks it as doing so). */
static int may_touch_program(void) {
  if (running_dropped) return 0;
  running_touches_program = 1;
  return 1;
}

static void done_touching_program(void) {
  pthread_mutex_lock(&jobs_lock);
  running_touches_program = 0;
  pthread_cond_broadcast(&jobs_cond);
  pthread_mutex_unlock(&jobs_lock);
}

static void run_job(struct upgrade_job *job, int urgent) {
  if (urgent)
    debug_log(job->specialized
                  ? "tiers: launches keep the devices busy: the version for their work-group size "
                    "is built now, at normal priority"
                  : "tiers: quick code keeps the devices busy: its vector version is built now, at "
                    "normal priority");
  pthread_mutex_lock(&jobs_lock);
  int go = may_touch_program();
  pthread_mutex_unlock(&jobs_lock);
  if (!go) return;
  struct specialized_version *v = job->specialized;
  struct upgrade_build *b =
      v ? program_specialize_prepare(job->program, job->slot, job->kernels[0], v->local_size)
        : program_upgrade_prepare(job->program, job->slot, job->kernels, job->num_kernels);
  /* The program is still there (its unload waits for this step). */
  if (!b && v) atomic_store(&v->state, SPECIALIZED_FAILED);
  pthread_mutex_lock(&jobs_lock);
  running_build = b;
  pthread_mutex_unlock(&jobs_lock);
  done_touching_program();
  if (!b) return;
  upgrade_build_run(b, urgent);
  pthread_mutex_lock(&jobs_lock);
  go = may_touch_program();
  pthread_mutex_unlock(&jobs_lock);
  if (go) {
    if (v)
      program_specialize_install(job->program, job->slot, b, v);
    else
      program_upgrade_install(job->program, job->slot, b);
    running_installed = 1;
    done_touching_program();
  } else {
    debug_log("tiers: a vector version built for a program since rebuilt or released is dropped");
  }
  pthread_mutex_lock(&jobs_lock);
  running_build = NULL;
  pthread_mutex_unlock(&jobs_lock);
  upgrade_build_free(b);
}

static void *upgrade_worker(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&jobs_lock);
    int urgent;
    struct upgrade_job *job = wait_for_next_job(&urgent);
    running_program = job->program;
    running_job = job;
    running_installed = 0;
    running_touches_program = 0;
    running_dropped = 0;
    pthread_mutex_unlock(&jobs_lock);

    run_job(job, urgent);

    pthread_mutex_lock(&jobs_lock);
    running_program = NULL;
    running_job = NULL;
    pthread_cond_broadcast(&jobs_cond);
    pthread_mutex_unlock(&jobs_lock);
    job_free(job);
  }
  return NULL;
}

/* Under jobs_lock. */
static int start_worker(void) {
  pthread_t t;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return 0;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  worker_started = pthread_create(&t, &attr, upgrade_worker, NULL) == 0;
  pthread_attr_destroy(&attr);
  return worker_started;
}

static int queue_job(cl_program p, cl_uint slot, const uint32_t *kernels, uint32_t num_kernels,
                     struct specialized_version *specialized) {
  struct upgrade_job *job = calloc(1, sizeof *job);
  uint32_t *copy = malloc((num_kernels ? num_kernels : 1) * sizeof *copy);
  const _Atomic uint64_t **entries = malloc((num_kernels ? num_kernels : 1) * sizeof *entries);
  if (!job || !copy || !entries) {
    /* The quick code stays: slower, still correct. */
    free(job);
    free(copy);
    free(entries);
    return -1;
  }
  memcpy(copy, kernels, num_kernels * sizeof *copy);
  for (uint32_t m = 0; m < num_kernels; m++)
    entries[m] = specialized ? &specialized->object : &p->per_device[slot].upgraded[kernels[m]];
  job->entries = entries;
  job->specialized = specialized;
  /* A version for a size is asked for by a launch of that size. */
  if (specialized) job->first_launch_ns = job->last_launch_ns = now_ns();
  job->program = p;
  job->slot = slot;
  job->kernels = copy;
  job->num_kernels = num_kernels;
  pthread_mutex_lock(&jobs_lock);
  if (!worker_started && !start_worker()) {
    pthread_mutex_unlock(&jobs_lock);
    debug_log("tiers: no thread for background builds; quick-tier code stays");
    job_free(job);
    return -1;
  }
  *jobs_tail = job;
  jobs_tail = &job->next;
  pthread_cond_broadcast(&jobs_cond);
  pthread_mutex_unlock(&jobs_lock);
  return 0;
}

void tiers_queue_upgrade(cl_program p, cl_uint slot, const uint32_t *kernels,
                         uint32_t num_kernels) {
  /* On failure the quick code stays: slower, still correct. */
  queue_job(p, slot, kernels, num_kernels, NULL);
}

void tiers_queue_specialization(cl_program p, cl_uint slot, uint32_t k,
                                struct specialized_version *v) {
  if (queue_job(p, slot, &k, 1, v) != 0) atomic_store(&v->state, SPECIALIZED_FAILED);
}

void tiers_forget_program(cl_program p) {
  struct upgrade_job *dropped = NULL;
  pthread_mutex_lock(&jobs_lock);
  for (struct upgrade_job **at = &jobs_head; *at;) {
    struct upgrade_job *job = *at;
    if (job->program != p) {
      at = &job->next;
      continue;
    }
    *at = job->next;
    job->next = dropped;
    dropped = job;
  }
  jobs_tail = &jobs_head;
  while (*jobs_tail)
    jobs_tail = &(*jobs_tail)->next;
  if (running_program == p) {
    running_dropped = 1;
    while (running_program == p && running_touches_program)
      pthread_cond_wait(&jobs_cond, &jobs_lock);
  }
  pthread_mutex_unlock(&jobs_lock);
  for (struct upgrade_job *next; dropped; dropped = next) {
    next = dropped->next;
    job_free(dropped);
  }
}

/* The worker is not in a child: builds still queued stay queued, and the
 * one under way is queued again at their head (the fork waited for its
 * steps that touch the program: busy sections), for a worker the child's
 * next launch or build starts: not here, as a child that only calls exec
 * (or a sanitizer) has no use for a thread started between fork and exec.
 * What that build had allocated (its request to the compiler, the copy it
 * built from, about 12 KB) stays in the child, on inherited_builds. */
void tiers_fork(enum runtime_fork_phase phase) {
  if (phase == RUNTIME_FORK_PREPARE) {
    pthread_mutex_lock(&jobs_lock);
    return;
  }
  if (phase == RUNTIME_FORK_PARENT) {
    pthread_mutex_unlock(&jobs_lock);
    return;
  }
  pthread_mutex_init(&jobs_lock, NULL);
  pthread_cond_init(&jobs_cond, NULL);
  if (running_build) {
    struct inherited_build *kept = malloc(sizeof *kept);
    if (kept) {
      kept->build = running_build;
      kept->next = inherited_builds;
      inherited_builds = kept;
    }
    running_build = NULL;
  }
  if (running_job && !running_dropped && !running_installed) {
    running_job->next = jobs_head;
    jobs_head = running_job;
    if (jobs_tail == &jobs_head) jobs_tail = &running_job->next;
  }
  running_program = NULL;
  running_job = NULL;
  running_touches_program = 0;
  running_dropped = 0;
  worker_started = 0;
}
