/* The CPUs and CPU time the process may use (cpu_share.c). */
#ifndef AQUILA_HSA_CPU_SHARE_H
#define AQUILA_HSA_CPU_SHARE_H

#include <stdbool.h>
#include <stdint.h>

/* The most CPUs of a mask that are used (CPU_SETSIZE). */
#define AQ_CPU_SHARE_MAX 1024

/* The CPUs of the process's affinity mask, in increasing order (at most
 * max); 0 when the mask cannot be read. */
int aq_cpu_share_cpus(int *cpus, int max);

/* The CPU time the process's cgroups grant, as CPUs rounded up (cgroup v2
 * cpu.max or v1 cpu.cfs_quota_us over cpu.cfs_period_us, the smallest
 * along the path to the hierarchy's root), read below root ("" for this
 * machine); 0 when there is no limit. */
uint32_t aq_cpu_share_quota_cpus(const char *root);

/* Compute units for allowed_cpus CPUs of the affinity mask, capped by the
 * cgroup quota read below root; at least 1. */
uint32_t aq_cpu_share_units(const char *root, int allowed_cpus);

#endif
