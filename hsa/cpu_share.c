/* The CPU agent's share of the machine: the CPUs this process may run on
 * (its affinity mask: taskset, a Slurm or Docker cpuset) and the CPU time
 * its cgroup grants (cgroup v2 cpu.max, v1 CFS quota: docker --cpus, a
 * Kubernetes limit), not the CPUs the machine has. A container given 2 of
 * a host's 64 CPUs that ran 64 worker threads would spend its quota on
 * switching between them (BitonicSort 3.3x slower, back-to-back kernels at
 * half the rate, measured with 32 units on 2 CPUs).
 *
 * Every path is read below a root ("" for the machine itself), so that the
 * unit test can describe another machine with a tree of files. */
#include "cpu_share.h"

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of root/path, without its newline; false when absent. */
static bool read_line(const char *root, const char *path, char *buf, size_t size) {
  char full[PATH_MAX];
  if ((size_t)snprintf(full, sizeof full, "%s%s", root, path) >= sizeof full) return false;
  FILE *f = fopen(full, "r");
  if (!f) return false;
  bool ok = fgets(buf, (int)size, f) != NULL;
  fclose(f);
  if (ok) buf[strcspn(buf, "\n")] = 0;
  return ok;
}

/* The CPUs a cgroup level grants (quota over period), or 0 for no limit. */
static double v2_limit(const char *root, const char *dir) {
  char path[PATH_MAX], line[128];
  if ((size_t)snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", dir) >= sizeof path ||
      !read_line(root, path, line, sizeof line))
    return 0;
  char quota[32];
  long long period = 100000;
  if (sscanf(line, "%31s %lld", quota, &period) < 1 || !strcmp(quota, "max") || period <= 0)
    return 0;
  long long q = atoll(quota);
  return q > 0 ? (double)q / (double)period : 0;
}

static double v1_limit(const char *root, const char *mount, const char *dir) {
  char path[PATH_MAX], line[64];
  long long quota, period;
  if ((size_t)snprintf(path, sizeof path, "%s%s/cpu.cfs_quota_us", mount, dir) >= sizeof path ||
      !read_line(root, path, line, sizeof line) || (quota = atoll(line)) <= 0)
    return 0;
  if ((size_t)snprintf(path, sizeof path, "%s%s/cpu.cfs_period_us", mount, dir) >= sizeof path ||
      !read_line(root, path, line, sizeof line) || (period = atoll(line)) <= 0)
    return 0;
  return (double)quota / (double)period;
}

/* The smallest limit from dir up to the hierarchy's root: a parent's quota
 * binds its children too. In a container with its own cgroup namespace the
 * path is "/" and the container's own limit is at the mount's top. */
static double walk_up(const char *root, const char *mount, const char *cgroup_path, bool v2) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", cgroup_path);
  double least = 0;
  for (int depth = 0; depth < 64; depth++) {
    size_t len = strlen(dir);
    while (len > 0 && dir[len - 1] == '/')
      dir[--len] = 0;
    double limit = v2 ? v2_limit(root, dir) : v1_limit(root, mount, dir);
    if (limit > 0 && (least == 0 || limit < least)) least = limit;
    if (len == 0) break;
    char *slash = strrchr(dir, '/');
    if (!slash) break;
    *slash = 0;
  }
  return least;
}

uint32_t aq_cpu_share_quota_cpus(const char *root) {
  char line[PATH_MAX + 64];
  char full[PATH_MAX];
  snprintf(full, sizeof full, "%s/proc/self/cgroup", root);
  FILE *f = fopen(full, "r");
  if (!f) return 0;
  double least = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    /* hierarchy-ID:controllers:path */
    char *first = strchr(line, ':');
    char *second = first ? strchr(first + 1, ':') : NULL;
    if (!second) continue;
    *first = *second = 0;
    const char *controllers = first + 1, *path = second + 1;
    double limit = 0;
    if (!strcmp(line, "0") && !*controllers) {
      limit = walk_up(root, NULL, path, true);
    } else {
      /* v1: the hierarchy that has the cpu controller. */
      bool has_cpu = false;
      char list[256];
      snprintf(list, sizeof list, "%s", controllers);
      for (char *save = NULL, *c = strtok_r(list, ",", &save); c; c = strtok_r(NULL, ",", &save))
        has_cpu |= !strcmp(c, "cpu");
      if (!has_cpu) continue;
      static const char *const mounts[] = {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu",
                                           "/sys/fs/cgroup/cpuacct,cpu"};
      for (size_t m = 0; m < sizeof mounts / sizeof mounts[0] && limit == 0; m++)
        limit = walk_up(root, mounts[m], path, false);
    }
    if (limit > 0 && (least == 0 || limit < least)) least = limit;
  }
  fclose(f);
  if (least <= 0) return 0;
  double cpus = ceil(least - 1e-9);
  return cpus < 1 ? 1 : cpus > 65536 ? 65536 : (uint32_t)cpus;
}

int aq_cpu_share_cpus(int *cpus, int max) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE && n < max; c++)
    if (CPU_ISSET(c, &set)) cpus[n++] = c;
  return n;
}

uint32_t aq_cpu_share_units(const char *root, int allowed_cpus) {
  uint32_t units = allowed_cpus > 0 ? (uint32_t)allowed_cpus : 1;
  uint32_t quota = aq_cpu_share_quota_cpus(root);
  if (quota && quota < units) units = quota;
  return units;
}
