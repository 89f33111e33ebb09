/* Small file helpers for the compiler's scratch directory. */
#include "support/util.h"

#include "support/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = size ? fwrite(data, 1, size, f) : 0;
  int rc = fclose(f);
  return n == size && rc == 0 ? 0 : -1;
}

int read_file(const char *path, void **data, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return -1;
  }
  long len = ftell(f);
  if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return -1;
  }
  void *buf = malloc(len ? (size_t)len : 1);
  if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
    free(buf);
    fclose(f);
    return -1;
  }
  fclose(f);
  *data = buf;
  *size = (size_t)len;
  return 0;
}

void remove_scratch_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      if (unlink(path) != 0) remove_scratch_dir(path); /* a header's folder */
    }
    closedir(d);
  }
  rmdir(dir);
}

static const char *scratch_parent(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

/* A private scratch directory under $TMPDIR (or /tmp). Its name carries
 * this process's pid: a compiler process that dies (clang's front end can
 * end it) leaves it behind, and the application that started the process
 * removes it by that pid (remove_scratch_dirs_of). */
char *make_scratch_dir(void) {
  struct strbuf sb = {0};
  strbuf_printf(&sb, "%s/aquila-build-%ld-XXXXXX", scratch_parent(), (long)getpid());
  char *dir = strbuf_take(&sb);
  if (!mkdtemp(dir)) {
    free(dir);
    return NULL;
  }
  return dir;
}

const char *scratch_parent_dir(void) {
  return scratch_parent();
}

void remove_scratch_dirs_of(pid_t pid, const char *parent) {
  char prefix[64];
  int len = snprintf(prefix, sizeof prefix, "aquila-build-%ld-", (long)pid);
  DIR *d = opendir(parent);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, prefix, (size_t)len) || strlen(e->d_name) != (size_t)len + 6) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
    remove_scratch_dir(path);
  }
  closedir(d);
}

/* A process killed outright (SIGKILL, a time limit, the machine's OOM
 * killer) removes nothing, and its parent may be gone as well: such
 * directories piled up in /tmp, one a killed build. A directory is taken as
 * left behind when no process has its pid and it has not changed for
 * STALE_SCRATCH_S: the age spares a build in another pid namespace sharing
 * this /tmp (a container), whose pid this process cannot see; a scratch
 * directory lives as long as one build step, far less. */
#define STALE_SCRATCH_S 3600

void remove_stale_scratch_dirs(const char *parent) {
  DIR *d = opendir(parent);
  if (!d) return;
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d))) {
    long pid;
    int end = 0;
    if (sscanf(e->d_name, "aquila-build-%ld-%n", &pid, &end) != 1 || !end ||
        strlen(e->d_name) != (size_t)end + 6 || pid <= 0 || pid == (long)getpid())
      continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        now - st.st_mtime < STALE_SCRATCH_S)
      continue;
    remove_scratch_dir(path);
  }
  closedir(d);
}

const char *host_cpu_level(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
  return "x86-64-v2";
}

const char *cpu_target_override(void) {
  static const char *const levels[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  const char *e = getenv("AQUILA_CPU_TARGET");
  for (size_t i = 0; e && i < sizeof levels / sizeof levels[0]; i++)
    if (!strcmp(e, levels[i])) return levels[i];
  return NULL;
}

static int replace_string(char **dst, const char *src) {
  if ((!*dst && !src) || (*dst && src && !strcmp(*dst, src))) return 0;
  char *copy = src ? strdup(src) : NULL;
  if (src && !copy) return -1;
  free(*dst);
  *dst = copy;
  return 0;
}

/* Only what differs is written: code is made at a kernel's first launch,
 * while other threads set the arguments of that kernel's other objects by
 * the layout the build already gave (the same). */
#define ADOPT(field)                                                                               \
  do {                                                                                             \
    if (memcmp(&k->field, &b->field, sizeof k->field))                                             \
      memcpy(&k->field, &b->field, sizeof k->field);                                               \
  } while (0)

int fatbin_adopt_layout(struct aquila_fatbin *fb, const struct aquila_fatbin *built, int all) {
  for (uint32_t i = 0; i < fb->num_kernels; i++) {
    struct aquila_fatbin_kernel *k = &fb->kernels[i];
    const struct aquila_fatbin_kernel *b = aquila_fatbin_find_kernel(built, k->name);
    if (!b && !all) continue;
    if (!b || b->num_args != k->num_args) return -1;
    for (uint32_t a = 0; a < k->num_args; a++) {
      ADOPT(args[a].size);
      ADOPT(args[a].alignment);
      ADOPT(args[a].offset);
    }
    ADOPT(reqd_work_group_size);
    ADOPT(work_group_size_hint);
    ADOPT(local_mem_size);
    ADOPT(kernarg_size);
    ADOPT(kernarg_alignment);
    ADOPT(hidden_kernarg_offset);
#undef ADOPT
    /* The first footprint stays: every build of a kernel finds the same,
     * and the runtime may be reading this one (it is never freed before
     * the fat binary). */
    if (!k->footprint && b->footprint &&
        !(k->footprint = aquila_fatbin_footprint_copy(b->footprint)))
      return -1;
    if (replace_string(&k->vec_type_hint, b->vec_type_hint) ||
        replace_string(&k->attributes, b->attributes))
      return -1;
  }
  return 0;
}

int phases_wanted(void) {
  const char *debug = getenv("AQUILA_DEBUG");
  return debug && strstr(debug, "phases");
}

double phase_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
