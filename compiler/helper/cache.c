/* The on-disk kernel cache. Entries are fat binaries named by a 128-bit hash
 * of everything that changes the generated code. A new entry is written to a
 * temporary file in the cache directory and renamed into place, so several
 * processes may build at once and a reader never sees half a file; an entry
 * that fails the fat binary reader's validation (corrupt, truncated) is
 * ignored and rebuilt.
 *
 * Location: $AQUILA_CACHE_DIR, else $XDG_CACHE_HOME/aquila, else
 * ~/.cache/aquila. AQUILA_CACHE=0 turns the cache off. */
#include "helper/cache.h"

#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "support/util.h"

/* AQUILA_BUILTINS_HASH: the builtin library's SHA-256, computed at build time. */
#include "builtins_hash.h"
/* AQUILA_COMPILER_HASH: the SHA-256 of the compiler's own sources, so that a
 * rebuilt compiler never serves what an older one produced. */
#include "compiler_hash.h"

const char *aquila_compiler_build_id(void) {
  static char id[9];
  if (!id[0]) {
    /* Racing threads write the same digits. */
    const char *c = AQUILA_COMPILER_HASH, *b = AQUILA_BUILTINS_HASH;
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++) {
      int x = (int)(strchr(hex, c[i]) - hex) ^ (int)(strchr(hex, b[i]) - hex);
      id[i] = hex[x & 15];
    }
  }
  return id;
}

/* Two independent 64-bit hashes: FNV-1a and a multiply-xorshift mix. */
struct hasher {
  uint64_t a, b;
};

static void hash_bytes(struct hasher *h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h->a = (h->a ^ p[i]) * 0x100000001b3ull;
    h->b = (h->b + p[i] + 1) * 0x9e3779b97f4a7c15ull;
    h->b ^= h->b >> 29;
  }
}

/* Each field is hashed with its length, so that fields cannot run together. */
static void hash_field(struct hasher *h, const char *s) {
  uint64_t len = s ? strlen(s) + 1 : 0;
  hash_bytes(h, &len, sizeof len);
  if (s) hash_bytes(h, s, len);
}

static pthread_once_t environment_once = PTHREAD_ONCE_INIT;
static struct hasher environment_hash;

/* The host CPU's identity: vendor, family/model/stepping and the feature
 * leaves, straight from cpuid (and which register states the OS saves). The
 * cache lives in the application's process, where LLVM is not loaded, so
 * this stands in for LLVM's host CPU name and features: whatever changes
 * those changes these. */
static void hash_host_cpu(struct hasher *h) {
  unsigned max = __get_cpuid_max(0, NULL), r[4] = {0};
  static const unsigned leaves[][2] = {{0, 0}, {1, 0}, {7, 0}, {7, 1}, {0xd, 1}};
  for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
    if (leaves[i][0] > max) continue;
    __cpuid_count(leaves[i][0], leaves[i][1], r[0], r[1], r[2], r[3]);
    if (leaves[i][0] == 1) r[1] &= 0x00ffffffu; /* leave out the APIC id of this core */
    hash_bytes(h, r, sizeof r);
  }
  if (__get_cpuid_max(0x80000000u, NULL) >= 0x80000001u) {
    __cpuid(0x80000001u, r[0], r[1], r[2], r[3]);
    hash_bytes(h, r, sizeof r);
  }
  unsigned xcr0 = 0;
  __cpuid(1, r[0], r[1], r[2], r[3]);
  if (r[2] & bit_OSXSAVE) __asm__("xgetbv" : "=a"(xcr0) : "c"(0) : "edx");
  hash_bytes(h, &xcr0, sizeof xcr0);
}

uint64_t cache_host_cpu_identity(void) {
  struct hasher h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  hash_host_cpu(&h);
  return h.a ^ (h.b * 0x9E3779B97F4A7C15ull);
}

/* What changes code without changing the program and stays fixed for the
 * process: Aquila's version, the builtin library, the compiler, the host CPU
 * and the target that AQUILA_CPU_TARGET puts in its place. */
static void hash_environment(void) {
  struct hasher h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  hash_field(&h, AQUILA_VERSION);
  hash_field(&h, AQUILA_BUILTINS_HASH);
  hash_field(&h, AQUILA_COMPILER_HASH);
  hash_host_cpu(&h);
  hash_field(&h, cpu_target_override());
  environment_hash = h;
}

static int cache_enabled(void) {
  const char *e = getenv("AQUILA_CACHE");
  return !(e && !strcmp(e, "0"));
}

static char *cache_dir(void) {
  const char *dir = getenv("AQUILA_CACHE_DIR");
  char buf[4096];
  if (dir && *dir) {
    snprintf(buf, sizeof buf, "%s", dir);
  } else if ((dir = getenv("XDG_CACHE_HOME")) && *dir) {
    snprintf(buf, sizeof buf, "%s/aquila", dir);
  } else if ((dir = getenv("HOME")) && *dir) {
    snprintf(buf, sizeof buf, "%s/.cache/aquila", dir);
  } else {
    return NULL;
  }
  return strdup(buf);
}

/* mkdir -p, for the cache directory. */
static int make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    int rc = mkdir(path, 0755);
    *p = '/';
    if (rc && errno != EEXIST) return -1;
  }
  return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* The environment's hash and the variables that change code, read at every
 * build: a program may change them between two builds. The clang driver
 * counts only where it runs (from source; not from bitcode). */
static struct hasher start_key(int from_source) {
  pthread_once(&environment_once, hash_environment);
  struct hasher h = environment_hash;
  if (from_source) hash_field(&h, getenv("AQUILA_CLANG") ? getenv("AQUILA_CLANG") : "clang-19");
  hash_field(&h, getenv("AQUILA_BARRIERS"));
  hash_field(&h, getenv("AQUILA_LOOP_BARRIERS"));
  hash_field(&h, getenv("AQUILA_REGION_JAM"));
  hash_field(&h, getenv("AQUILA_PREFETCH"));
  hash_field(&h, getenv("AQUILA_REASSOCIATE"));
  hash_field(&h, getenv("AQUILA_INTERLEAVE"));
  hash_field(&h, getenv("AQUILA_VECTORIZE"));
  hash_field(&h, getenv("AQUILA_VECTORIZE_CLAMPED"));
  hash_field(&h, getenv("AQUILA_VECTORIZE_ROWS"));
  hash_field(&h, getenv("AQUILA_VECTORIZE_RUNS"));
  hash_field(&h, getenv("AQUILA_VECTORIZE_SKIP"));
  hash_field(&h, getenv("AQUILA_VECTORIZE_MAX_INSTRUCTIONS"));
  hash_field(&h, getenv("AQUILA_VECTORIZE_MAX_VECTOR_INSTRUCTIONS"));
  return h;
}

static void finish_key(const struct hasher *h, struct cache_key *key) {
  snprintf(key->hex, sizeof key->hex, "%016llx%016llx", (unsigned long long)h->a,
           (unsigned long long)h->b);
}

static int make_kernels_key(const char *tier, const struct aquila_fatbin *fb, const char *target,
                            const char *const *names, size_t num_names, struct cache_key *key) {
  if (!cache_enabled()) return -1;
  const struct aquila_fatbin_code *bc = aquila_fatbin_find_code(fb, "bitcode");
  if (!bc) return -1;
  struct hasher h = start_key(0);
  hash_field(&h, tier);
  uint64_t n = bc->size;
  hash_bytes(&h, &n, sizeof n);
  hash_bytes(&h, bc->data, bc->size);
  hash_field(&h, fb->build_options ? fb->build_options : "");
  hash_field(&h, target);
  n = num_names;
  hash_bytes(&h, &n, sizeof n);
  for (size_t i = 0; i < num_names; i++)
    hash_field(&h, names[i]);
  finish_key(&h, key);
  return 0;
}

int cache_make_kernels_key(const struct aquila_fatbin *fb, const char *target,
                           const char *const *names, size_t num_names, struct cache_key *key) {
  return make_kernels_key("kernels", fb, target, names, num_names, key);
}

int cache_make_quick_kernels_key(const struct aquila_fatbin *fb, const char *target,
                                 const char *const *names, size_t num_names,
                                 struct cache_key *key) {
  return make_kernels_key("quick kernels", fb, target, names, num_names, key);
}

int cache_make_specialized_kernels_key(const struct aquila_fatbin *fb, const char *target,
                                       const char *const *names, size_t num_names,
                                       const struct aquila_launch_facts *facts,
                                       struct cache_key *key) {
  char tier[80];
  snprintf(tier, sizeof tier, "kernels for work-groups of %u x %u x %u", facts->local_size[0],
           facts->local_size[1], facts->local_size[2]);
  return make_kernels_key(tier, fb, target, names, num_names, key);
}

int cache_make_key(const struct aquila_compile_input *in, struct cache_key *key) {
  if (!cache_enabled()) return -1;
  struct hasher h = start_key(1);
  hash_field(&h, in->source);
  if (in->il) {
    /* A SPIR-V module (its constants applied): its bytes, and the
     * translator that reads it. */
    const char *translator = getenv("AQUILA_LLVM_SPIRV");
    hash_field(&h, translator ? translator : "llvm-spirv-15");
    uint64_t n = in->il_size;
    hash_bytes(&h, &n, sizeof n);
    hash_bytes(&h, in->il, in->il_size);
  }
  hash_field(&h, in->options ? in->options : "");
  hash_field(&h, in->compile_only     ? "object"
                 : in->code_on_demand ? "bitcode executable"
                                      : "executable");
  uint64_t n = in->num_targets;
  hash_bytes(&h, &n, sizeof n);
  for (size_t i = 0; i < in->num_targets; i++) {
    hash_field(&h, in->targets[i]);
    /* A GPU target's code also depends on the libclc library it links:
     * its identity (size and modification time) is part of the key, so
     * installing another libclc-19 rebuilds. */
    char *libclc = gpu_libclc_path(in->targets[i]);
    struct stat sb;
    if (libclc && stat(libclc, &sb) == 0) {
      int64_t id[3] = {(int64_t)sb.st_size, (int64_t)sb.st_mtim.tv_sec,
                       (int64_t)sb.st_mtim.tv_nsec};
      hash_bytes(&h, id, sizeof id);
    }
    free(libclc);
  }
  n = in->num_headers;
  hash_bytes(&h, &n, sizeof n);
  for (size_t i = 0; i < in->num_headers; i++) {
    hash_field(&h, in->header_names[i]);
    hash_field(&h, in->header_sources[i]);
  }
  finish_key(&h, key);
  return 0;
}

struct aquila_fatbin *cache_load(const struct cache_key *key) {
  char *dir = cache_dir();
  if (!dir) return NULL;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s.fatbin", dir, key->hex);
  free(dir);
  void *data = NULL;
  size_t size = 0;
  if (read_file(path, &data, &size)) return NULL;
  struct aquila_fatbin *fb = NULL;
  char err[256];
  if (aquila_fatbin_read(data, size, &fb, err, sizeof err) != 0) fb = NULL;
  free(data);
  return fb;
}

static _Atomic int store_only_in_existing_dir;

void cache_store_only_in_existing_dir(void) {
  store_only_in_existing_dir = 1;
}

void cache_store(const struct cache_key *key, const struct aquila_fatbin *fb) {
  char *dir = cache_dir();
  if (!dir) return;
  void *data = NULL;
  size_t size = 0;
  struct stat st;
  int dir_ready =
      store_only_in_existing_dir ? stat(dir, &st) == 0 && S_ISDIR(st.st_mode) : make_dirs(dir) == 0;
  if (!dir_ready || aquila_fatbin_write(fb, &data, &size)) {
    free(dir);
    return;
  }
  char tmp[4200], path[4200];
  /* Per process and thread: two builds of one program may store at once. */
  snprintf(tmp, sizeof tmp, "%s/.%s.%ld.%ld.tmp", dir, key->hex, (long)getpid(), (long)gettid());
  snprintf(path, sizeof path, "%s/%s.fatbin", dir, key->hex);
  if (write_file(tmp, data, size) == 0) {
    if (rename(tmp, path) != 0) unlink(tmp);
  } else {
    unlink(tmp);
  }
  free(data);
  free(dir);
}

/* The host target's name, as the compiler process reported it, kept beside
 * the cache entries under the host's identity: a later process learns it
 * without starting a compiler. */
static char *host_target_path(void) {
  char *dir = cache_enabled() ? cache_dir() : NULL;
  if (!dir) return NULL;
  pthread_once(&environment_once, hash_environment);
  char path[4200];
  snprintf(path, sizeof path, "%s/host-%016llx%016llx.target", dir,
           (unsigned long long)environment_hash.a, (unsigned long long)environment_hash.b);
  free(dir);
  return strdup(path);
}

int cache_load_host_target(char *target, size_t size) {
  char *path = host_target_path();
  void *data = NULL;
  size_t n = 0;
  int rc = -1;
  if (path && read_file(path, &data, &n) == 0 && n > 0 && n < size && !memchr(data, 0, n)) {
    memcpy(target, data, n);
    target[n] = 0;
    rc = 0;
  }
  free(data);
  free(path);
  return rc;
}

void cache_store_host_target(const char *target) {
  char *path = host_target_path();
  if (!path) return;
  char *dir = cache_dir();
  char tmp[4300];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  if (dir && make_dirs(dir) == 0 && write_file(tmp, target, strlen(target)) == 0) {
    if (rename(tmp, path) != 0) unlink(tmp);
  } else {
    unlink(tmp);
  }
  free(dir);
  free(path);
}
