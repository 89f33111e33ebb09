/* Small file helpers for the compiler's scratch directory. */
#ifndef AQUILA_COMPILER_UTIL_H
#define AQUILA_COMPILER_UTIL_H

#include <stddef.h>

#include "aquila/fatbin.h"
#include <unistd.h>

int write_file(const char *path, const void *data, size_t size);
/* Reads a whole file into a malloc'd buffer. */
int read_file(const char *path, void **data, size_t *size);
/* A new private directory for a build's scratch files (malloc'd path), or NULL. */
char *make_scratch_dir(void);
/* Removes a scratch directory and everything in it. */
void remove_scratch_dir(const char *dir);
/* Where scratch directories are made: $TMPDIR, or /tmp. */
const char *scratch_parent_dir(void);
/* Removes the scratch directories a process that has ended left in parent
 * (its scratch_parent_dir, which the process that started it keeps: the
 * application may change its own TMPDIR later). */
void remove_scratch_dirs_of(pid_t pid, const char *parent);
/* Removes, from parent, the scratch directories of processes that no longer
 * exist and that have not changed for an hour: those of processes killed
 * outright, with nobody left to remove them. */
void remove_stale_scratch_dirs(const char *parent);

/* $AQUILA_CPU_TARGET when it names an x86-64 level (x86-64-v2, -v3, -v4):
 * the target that replaces this CPU's own for the CPU device (make
 * check-valgrind sets x86-64-v3, as Valgrind runs no AVX-512); else NULL. */
const char *cpu_target_override(void);

/* The x86-64 level this process's CPU runs (x86-64-v4, -v3 or -v2, the
 * lowest Aquila builds for), as cpuid tells this process and its operating
 * system saves the registers: the target for a CPU that the compiler
 * helper does not share (QEMU's user mode emulating another CPU runs the
 * application, not the helper it starts). */
const char *host_cpu_level(void);

/* Code generation fills the kernels' layout (kernarg offsets, local memory,
 * attributes): fb takes it over from built, the binary code was generated
 * for, for every kernel (all) or for those built holds. 0, or -1 when a
 * kernel is missing or differs (or on no memory). */
/* AQUILA_DEBUG=phases: how long each step of a build took goes to its log
 * (phase_ms is a monotonic clock in milliseconds). */
int phases_wanted(void);
double phase_ms(void);

int fatbin_adopt_layout(struct aquila_fatbin *fb, const struct aquila_fatbin *built, int all);

#endif
