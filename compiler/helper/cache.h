/* The on-disk kernel cache: fat binaries keyed by everything that changes the
 * code (source, headers, options, targets, host CPU, compiler and builtin
 * library versions). */
#ifndef AQUILA_COMPILER_CACHE_H
#define AQUILA_COMPILER_CACHE_H

#include "aquila/compiler.h"

struct cache_key {
  char hex[33];
};

/* Returns 0 and fills key, or -1 when caching is off (AQUILA_CACHE=0). */
int cache_make_key(const struct aquila_compile_input *in, struct cache_key *key);
/* The key of the code object for some kernels of an executable fat binary
 * (aquila_compile_kernels): its bitcode, build options, target and the
 * kernels' names. */
int cache_make_kernels_key(const struct aquila_fatbin *fb, const char *target,
                           const char *const *names, size_t num_names, struct cache_key *key);
/* The same kernels' quick-tier code (scalar, made first for a large
 * kernel): kept apart, so that a run that ended before the vector version
 * was built still spares the next run its build, which finds the quick code
 * here and has the vector version built in the background again. */
int cache_make_quick_kernels_key(const struct aquila_fatbin *fb, const char *target,
                                 const char *const *names, size_t num_names,
                                 struct cache_key *key);
/* The same kernels' version specialized to launches with facts
 * (aquila_compile_kernels_specialized). */
int cache_make_specialized_kernels_key(const struct aquila_fatbin *fb, const char *target,
                                       const char *const *names, size_t num_names,
                                       const struct aquila_launch_facts *facts,
                                       struct cache_key *key);
/* A valid cached fat binary, or NULL (missing, corrupt or truncated). */
struct aquila_fatbin *cache_load(const struct cache_key *key);
/* Stores fb; failures are silent (the cache is an optimization). */
void cache_store(const struct cache_key *key, const struct aquila_fatbin *fb);
/* From now on, cache_store writes only into a cache directory that exists
 * (a helper finishing a build after its application ended: a test's cache
 * directory, removed meanwhile, is not made again). */
void cache_store_only_in_existing_dir(void);

/* The host target name that the compiler process reported for this CPU:
 * 0 and the name, or -1 when none is kept (or caching is off). */
int cache_load_host_target(char *target, size_t size);
/* This process's CPU as cpuid tells it (vendor, model, feature leaves, the
 * registers the OS saves), as one number: two processes with the same
 * number can run the same code. */
uint64_t cache_host_cpu_identity(void);
void cache_store_host_target(const char *target);

#endif
