/* Where the CPU agent's units sit, and whom each steals from first
 * (cpu_topology.c). */
#ifndef AQUILA_HSA_CPU_TOPOLOGY_H
#define AQUILA_HSA_CPU_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A CPU's place: the first CPU of its core (SMT siblings), of its L2's
 * and of its L3's CPUs, and its NUMA node; -1 where sysfs does not say. */
struct aq_cpu_place {
  int core, l2, l3, node;
};

/* The places of cpus[0..n), read below root ("" for this machine). */
void aq_cpu_topology_read(const char *root, const int *cpus, int n, struct aq_cpu_place *places);

/* The n - 1 other units in the order unit steals from them: its SMT
 * sibling, then the same L2, L3, node, the rest (each group from unit + 1
 * on, wrapping). */
void aq_cpu_topology_victims(const struct aq_cpu_place *places, int n, int unit, uint32_t *order);

/* The NUMA nodes of places[0..n) as a mask (node k: bit k % 64 of
 * mask[k / 64], for nodes below 64 * words); returns how many there are. */
int aq_cpu_topology_nodes(const struct aq_cpu_place *places, int n, uint64_t *mask, int words);

/* Interleaves the pages of [start, start + length) (start page-aligned)
 * over the nodes in mask[0..words): each page not yet touched lands on
 * the next node in turn, whoever touches it first (mbind's
 * MPOL_INTERLEAVE). False where the kernel refuses (no NUMA support). */
bool aq_cpu_topology_interleave(void *start, size_t length, const uint64_t *mask, int words);

#endif
