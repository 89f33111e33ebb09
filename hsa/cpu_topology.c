/* Where the CPU agent's compute units sit on the machine: for each CPU a
 * unit is pinned to, the core it belongs to (SMT siblings share one), the
 * CPUs its L2 and L3 caches serve and its NUMA node, read from sysfs below
 * a root ("" for this machine: a test describes another with a tree of
 * files); and from that, the order in which an idle unit looks for work to
 * steal: its SMT sibling first (the same L1 and L2), then units under the
 * same L2, the same L3, the same node, and the others last. A range stolen
 * near its owner finds its buffers in a cache they share; one stolen from
 * another socket moves them across the interconnect. And the nodes the
 * units span, over which memory the host fills for them is interleaved
 * (hsa_ven_aquila_memory_place). */
#include "cpu_topology.h"

#include <linux/mempolicy.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_NODES 256

/* The first CPU of a sysfs CPU list ("0-3,8"), or -1. */
static int first_of_list(const char *root, const char *path) {
  char full[PATH_MAX], line[4096];
  if ((size_t)snprintf(full, sizeof full, "%s%s", root, path) >= sizeof full) return -1;
  FILE *f = fopen(full, "r");
  if (!f) return -1;
  bool ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  char *end;
  long cpu = ok ? strtol(line, &end, 10) : -1;
  return ok && end != line && cpu >= 0 && cpu < INT_MAX ? (int)cpu : -1;
}

/* Whether cpu is in the sysfs CPU list at root/path. */
static bool in_list(const char *root, const char *path, int cpu) {
  char full[PATH_MAX], line[4096];
  if ((size_t)snprintf(full, sizeof full, "%s%s", root, path) >= sizeof full) return false;
  FILE *f = fopen(full, "r");
  if (!f) return false;
  bool ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  for (char *p = line; ok && *p && *p != '\n';) {
    char *end;
    long lo = strtol(p, &end, 10), hi = lo;
    if (end == p) return false;
    p = end;
    if (*p == '-') {
      hi = strtol(p + 1, &end, 10);
      if (end == p + 1) return false;
      p = end;
    }
    if (cpu >= lo && cpu <= hi) return true;
    if (*p == ',') p++;
  }
  return false;
}

/* The first CPU sharing cpu's data or unified cache of level, or -1. */
static int cache_first(const char *root, int cpu, int level) {
  char path[256], text[64];
  for (int index = 0; index < 16; index++) {
    snprintf(path, sizeof path, "%s/sys/devices/system/cpu/cpu%d/cache/index%d/level", root, cpu,
             index);
    FILE *f = fopen(path, "r");
    if (!f) break;
    bool ok = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    if (!ok || atoi(text) != level) continue;
    snprintf(path, sizeof path, "%s/sys/devices/system/cpu/cpu%d/cache/index%d/type", root, cpu,
             index);
    if ((f = fopen(path, "r"))) {
      ok = fgets(text, sizeof text, f) != NULL;
      fclose(f);
      if (ok && !strncmp(text, "Instruction", 11)) continue;
    }
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu,
             index);
    return first_of_list(root, path);
  }
  return -1;
}

void aq_cpu_topology_read(const char *root, const int *cpus, int n, struct aq_cpu_place *places) {
  for (int i = 0; i < n; i++) {
    char path[128];
    int cpu = cpus[i];
    struct aq_cpu_place *p = &places[i];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", cpu);
    p->core = first_of_list(root, path);
    if (p->core < 0) {
      snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
               cpu);
      p->core = first_of_list(root, path);
    }
    p->l2 = cache_first(root, cpu, 2);
    p->l3 = cache_first(root, cpu, 3);
    p->node = -1;
    for (int node = 0; node < MAX_NODES && p->node < 0; node++) {
      snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
      if (in_list(root, path, cpu)) p->node = node;
    }
  }
}

/* How far two places are: 0 the same core, then the same L2, L3, node;
 * 4 for anything else, or where sysfs did not say. */
static int distance(const struct aq_cpu_place *a, const struct aq_cpu_place *b) {
  if (a->core >= 0 && a->core == b->core) return 0;
  if (a->l2 >= 0 && a->l2 == b->l2) return 1;
  if (a->l3 >= 0 && a->l3 == b->l3) return 2;
  if (a->node >= 0 && a->node == b->node) return 3;
  return 4;
}

void aq_cpu_topology_victims(const struct aq_cpu_place *places, int n, int unit, uint32_t *order) {
  /* By distance, and among equals from unit + 1 on, wrapping: the thieves
   * of one victim start their rounds at different places. */
  int count = 0;
  for (int d = 0; d <= 4; d++)
    for (int k = 1; k < n; k++) {
      int j = (unit + k) % n;
      if (distance(&places[unit], &places[j]) == d) order[count++] = (uint32_t)j;
    }
}

int aq_cpu_topology_nodes(const struct aq_cpu_place *places, int n, uint64_t *mask, int words) {
  memset(mask, 0, sizeof *mask * (size_t)words);
  int count = 0;
  for (int i = 0; i < n; i++) {
    int node = places[i].node;
    if (node < 0 || node >= 64 * words || (mask[node / 64] >> (node % 64) & 1)) continue;
    mask[node / 64] |= 1ull << (node % 64);
    count++;
  }
  return count;
}

bool aq_cpu_topology_interleave(void *start, size_t length, const uint64_t *mask, int words) {
  /* The kernel reads maxnode - 1 bits of the mask. glibc has no wrapper,
   * and libnuma would be a dependency for this one call. */
  return syscall(SYS_mbind, start, length, MPOL_INTERLEAVE, mask, (unsigned long)(64 * words + 1),
                 0) == 0;
}
