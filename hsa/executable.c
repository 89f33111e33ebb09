/* Executables: loading CPU code objects into the process (memfd + dlopen),
 * their kernel symbols (one per descriptor in __aquila_kernel_table), the
 * variables an application defines, and every symbol query. */
#include "code_object.h"
#include "remote/plugin.h"
#include <aquila/hsa_ext_aquila.h>

#include <aquila/cpu_abi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define AQ_EXECUTABLE_MAGIC 0xe8ec0bu
#define AQ_SYMBOL_MAGIC 0x5b01u
#define AQ_KERNEL_COUNT_MAX 65536u
#define AQ_NAME_MAX 4096u

struct aq_symbol {
  uint32_t magic;
  hsa_symbol_kind_t kind;
  hsa_symbol_linkage_t linkage;
  bool has_agent;
  hsa_agent_t agent;
  char *name;
  const struct aquila_kernel_descriptor *kernel; /* kernels */
  /* A kernel loaded on a remote agent: its descriptor is the daemon's. */
  bool is_remote;
  struct aq_remote_kernel remote;
  void *address; /* variables */
  bool is_const;
};

struct aq_executable {
  uint32_t magic;
  hsa_profile_t profile;
  hsa_default_float_rounding_mode_t rounding;
  hsa_executable_state_t state;
  pthread_mutex_t lock;
  void **libraries; /* dlopen handles of loaded code objects */
  int *library_fds; /* their memfds, open while loaded (see open_code_object) */
  size_t library_count;
  struct aq_symbol **symbols;
  size_t symbol_count;
  /* Code objects loaded on remote agents: (agent index, the daemon's executable). */
  struct remote_load {
    uint32_t agent;
    uint64_t executable;
  } * remote_loads;
  size_t remote_load_count;
};

static struct aq_executable *executable_from_handle(hsa_executable_t executable) {
  struct aq_executable *e = (struct aq_executable *)(uintptr_t)executable.handle;
  /* The registry, not the magic: a destroyed executable's memory is freed. */
  if (!aq_handle_is_live(executable.handle, AQ_HANDLE_EXECUTABLE)) return NULL;
  return e;
}

static struct aq_symbol *symbol_from_handle(hsa_executable_symbol_t symbol) {
  struct aq_symbol *s = (struct aq_symbol *)(uintptr_t)symbol.handle;
  if (!aq_handle_is_live(symbol.handle, AQ_HANDLE_EXECUTABLE_SYMBOL)) return NULL;
  return s;
}

static hsa_executable_symbol_t symbol_handle(struct aq_symbol *s) {
  hsa_executable_symbol_t handle = {(uint64_t)(uintptr_t)s};
  return handle;
}

static hsa_status_t executable_new(hsa_profile_t profile,
                                   hsa_default_float_rounding_mode_t rounding,
                                   hsa_executable_state_t state, hsa_executable_t *out) {
  struct aq_executable *e = calloc(1, sizeof(*e));
  if (!e) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  e->magic = AQ_EXECUTABLE_MAGIC;
  e->profile = profile;
  e->rounding = rounding;
  e->state = state;
  pthread_mutex_init(&e->lock, NULL);
  if (!aq_handle_add(e, AQ_HANDLE_EXECUTABLE)) {
    pthread_mutex_destroy(&e->lock);
    free(e);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  out->handle = (uint64_t)(uintptr_t)e;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_create(hsa_profile_t profile, hsa_executable_state_t executable_state,
                                   const char *options, hsa_executable_t *executable) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!executable || (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL) ||
      (executable_state != HSA_EXECUTABLE_STATE_UNFROZEN &&
       executable_state != HSA_EXECUTABLE_STATE_FROZEN))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return executable_new(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, executable_state,
                        executable);
}

hsa_status_t
hsa_executable_create_alt(hsa_profile_t profile,
                          hsa_default_float_rounding_mode_t default_float_rounding_mode,
                          const char *options, hsa_executable_t *executable) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!executable || (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL) ||
      (unsigned)default_float_rounding_mode > HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return executable_new(profile, default_float_rounding_mode, HSA_EXECUTABLE_STATE_UNFROZEN,
                        executable);
}

static void symbol_free(struct aq_symbol *s) {
  aq_handle_remove(s, AQ_HANDLE_EXECUTABLE_SYMBOL);
  if (s->kind == HSA_SYMBOL_KIND_KERNEL && !s->is_remote && s->kernel &&
      aq_handle_remove(s->kernel, AQ_HANDLE_KERNEL_OBJECT))
    aq_cpu_agent_forget_kernel(s->kernel);
  s->magic = 0;
  free(s->name);
  free(s);
}

hsa_status_t hsa_executable_destroy(hsa_executable_t executable) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  /* Of two racing destroys, only the one that takes it out of the registry frees it. */
  if (!e || !aq_handle_remove(e, AQ_HANDLE_EXECUTABLE)) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  e->magic = 0;
  for (size_t i = 0; i < e->symbol_count; i++)
    symbol_free(e->symbols[i]);
  for (size_t i = 0; i < e->library_count; i++) {
    dlclose(e->libraries[i]);
    if (e->library_fds[i] >= 0) close(e->library_fds[i]);
  }
  for (size_t i = 0; i < e->remote_load_count; i++)
    aq_remote_unload(e->remote_loads[i].agent, e->remote_loads[i].executable);
  free(e->remote_loads);
  free(e->symbols);
  free(e->libraries);
  free(e->library_fds);
  pthread_mutex_destroy(&e->lock);
  free(e);
  return HSA_STATUS_SUCCESS;
}

/* ---- loading ---- */

/* Checks what dlopen would otherwise trust: an x86-64 ELF shared object
 * whose program headers lie inside the bytes. */
static bool is_cpu_shared_object(const unsigned char *bytes, size_t size) {
  if (size < sizeof(Elf64_Ehdr)) return false;
  Elf64_Ehdr header;
  memcpy(&header, bytes, sizeof(header));
  if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_ident[EI_VERSION] != EV_CURRENT ||
      header.e_type != ET_DYN || header.e_machine != EM_X86_64 ||
      header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0)
    return false;
  if (header.e_phoff > size || (size - header.e_phoff) / sizeof(Elf64_Phdr) < header.e_phnum)
    return false;
  bool has_load = false, has_dynamic = false;
  for (uint16_t i = 0; i < header.e_phnum; i++) {
    Elf64_Phdr ph;
    memcpy(&ph, bytes + header.e_phoff + (size_t)i * sizeof(Elf64_Phdr), sizeof(ph));
    if (ph.p_type == PT_LOAD || ph.p_type == PT_DYNAMIC) {
      if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) return false;
      has_load |= ph.p_type == PT_LOAD;
      has_dynamic |= ph.p_type == PT_DYNAMIC;
    }
  }
  return has_load && has_dynamic;
}

/* Loads bytes as a shared object through a memfd. The memfd stays open
 * (*fd_out) for as long as the library is loaded: dlopen recognizes an
 * already loaded library by its path, and a closed descriptor's number, hence
 * "/proc/self/fd/N", would come back for the next code object, which would
 * then silently get the previous one's library. */
static void *open_code_object(const void *bytes, size_t size, int *fd_out) {
  /* AQUILA_PERF=1: the code object goes to a file that stays, so that a
   * profiler (perf report) can read its symbols after the run. */
  const char *perf = getenv("AQUILA_PERF");
  if (perf && *perf && strcmp(perf, "0")) {
    static atomic_uint serial;
    char file[128];
    snprintf(file, sizeof file, "/tmp/aquila-perf-%d-%u.so", (int)getpid(),
             atomic_fetch_add(&serial, 1));
    int out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out >= 0) {
      int ok = write(out, bytes, size) == (ssize_t)size;
      close(out);
      void *library = ok ? dlopen(file, RTLD_NOW | RTLD_LOCAL) : NULL;
      if (library) {
        *fd_out = -1;
        return library;
      }
    }
  }
  int fd = memfd_create("aquila-code-object", MFD_CLOEXEC);
  if (fd < 0) return NULL;
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, (const char *)bytes + done, size - done);
    if (n <= 0) {
      close(fd);
      return NULL;
    }
    done += (size_t)n;
  }
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    close(fd);
    return NULL;
  }
  *fd_out = fd;
  return library;
}

static bool kernel_table_is_valid(const struct aquila_kernel_table *table) {
  if (!table || table->abi_version != AQUILA_CPU_ABI_VERSION ||
      table->kernel_count > AQ_KERNEL_COUNT_MAX || (table->kernel_count && !table->kernels))
    return false;
  for (uint32_t i = 0; i < table->kernel_count; i++) {
    const struct aquila_kernel_descriptor *k = table->kernels[i];
    if (!k || k->abi_version != AQUILA_CPU_ABI_VERSION || !k->run_workgroup || !k->name ||
        strnlen(k->name, AQ_NAME_MAX) == AQ_NAME_MAX || !k->name[0])
      return false;
    if (k->kernarg_alignment & (k->kernarg_alignment - 1)) return false;
  }
  return true;
}

static struct aq_symbol *find_symbol(struct aq_executable *e, const char *name, size_t name_len,
                                     const hsa_agent_t *agent) {
  for (size_t i = 0; i < e->symbol_count; i++) {
    struct aq_symbol *s = e->symbols[i];
    if (strlen(s->name) != name_len || memcmp(s->name, name, name_len) != 0) continue;
    if (agent ? (s->has_agent && s->agent.handle == agent->handle) : !s->has_agent) return s;
  }
  return NULL;
}

static bool add_symbol(struct aq_executable *e, struct aq_symbol *s) {
  struct aq_symbol **symbols = realloc(e->symbols, (e->symbol_count + 1) * sizeof(*symbols));
  if (!symbols) return false;
  e->symbols = symbols;
  e->symbols[e->symbol_count++] = s;
  return true;
}

static struct aq_symbol *symbol_new(const char *name, hsa_symbol_kind_t kind,
                                    hsa_symbol_linkage_t linkage, const hsa_agent_t *agent) {
  struct aq_symbol *s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->name = strdup(name);
  if (!s->name) {
    free(s);
    return NULL;
  }
  if (!aq_handle_add(s, AQ_HANDLE_EXECUTABLE_SYMBOL)) {
    free(s->name);
    free(s);
    return NULL;
  }
  s->magic = AQ_SYMBOL_MAGIC;
  s->kind = kind;
  s->linkage = linkage;
  if (agent) {
    s->has_agent = true;
    s->agent = *agent;
  }
  return s;
}

/* A code object for a remote agent is loaded by its daemon; the symbols
 * here describe the daemon's kernels. */
static hsa_status_t load_remote(struct aq_executable *e, uint32_t remote, hsa_agent_t agent,
                                const void *bytes, size_t size,
                                hsa_loaded_code_object_t *loaded_code_object) {
  pthread_mutex_lock(&e->lock);
  hsa_status_t status = HSA_STATUS_SUCCESS;
  size_t first_new_symbol = e->symbol_count;
  struct aq_remote_kernel *kernels = NULL;
  uint32_t count = 0;
  uint64_t executable = 0;
  bool loaded = false;
  if (e->state == HSA_EXECUTABLE_STATE_FROZEN) {
    status = HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
    goto done;
  }
  struct remote_load *loads = realloc(e->remote_loads, (e->remote_load_count + 1) * sizeof(*loads));
  if (!loads) {
    status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    goto done;
  }
  e->remote_loads = loads;
  status = aq_remote_load(remote, bytes, size, &executable, &kernels, &count);
  if (status != HSA_STATUS_SUCCESS) goto done;
  loaded = true;
  for (uint32_t i = 0; i < count; i++) {
    const char *name = kernels[i].name;
    if (find_symbol(e, name, strlen(name), &agent)) {
      status = HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED;
      goto done;
    }
    struct aq_symbol *s =
        symbol_new(name, HSA_SYMBOL_KIND_KERNEL, HSA_SYMBOL_LINKAGE_MODULE, &agent);
    if (!s || !add_symbol(e, s)) {
      if (s) symbol_free(s);
      status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
      goto done;
    }
    s->is_remote = true;
    s->remote = kernels[i];
    s->remote.name = NULL; /* the symbol's own name is kept */
  }
  e->remote_loads[e->remote_load_count++] = (struct remote_load){remote, executable};
  if (loaded_code_object) loaded_code_object->handle = executable;
done:
  if (kernels) aq_remote_free_kernels(kernels, count);
  if (status != HSA_STATUS_SUCCESS) {
    while (e->symbol_count > first_new_symbol)
      symbol_free(e->symbols[--e->symbol_count]);
    if (loaded) aq_remote_unload(remote, executable);
  }
  pthread_mutex_unlock(&e->lock);
  return status;
}

hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                                   hsa_code_object_reader_t code_object_reader,
                                                   const char *options,
                                                   hsa_loaded_code_object_t *loaded_code_object) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  int remote = aq_remote_agent_index(agent);
  if (remote < 0 && !aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  struct aq_code_object_reader *reader = aq_reader_from_handle(code_object_reader);
  if (!reader) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  /* Round-toward-zero as the default mode is not what x86 code assumes. */
  if (e->rounding == HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO)
    return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
  if (!is_cpu_shared_object(reader->bytes, reader->size))
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  if (remote >= 0)
    return load_remote(e, (uint32_t)remote, agent, reader->bytes, reader->size, loaded_code_object);

  pthread_mutex_lock(&e->lock);
  hsa_status_t status = HSA_STATUS_SUCCESS;
  void *library = NULL;
  int library_fd = -1;
  size_t first_new_symbol = e->symbol_count;
  if (e->state == HSA_EXECUTABLE_STATE_FROZEN) {
    status = HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
    goto done;
  }
  void **libraries = realloc(e->libraries, (e->library_count + 1) * sizeof(*libraries));
  if (!libraries) {
    status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    goto done;
  }
  e->libraries = libraries;
  int *fds = realloc(e->library_fds, (e->library_count + 1) * sizeof(*fds));
  if (!fds) {
    status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    goto done;
  }
  e->library_fds = fds;
  library = open_code_object(reader->bytes, reader->size, &library_fd);
  if (!library) {
    status = HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    goto done;
  }
  const struct aquila_kernel_table *table = dlsym(library, AQUILA_KERNEL_TABLE_SYMBOL);
  if (!kernel_table_is_valid(table)) {
    status = HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    goto done;
  }
  for (uint32_t i = 0; i < table->kernel_count; i++) {
    const struct aquila_kernel_descriptor *k = table->kernels[i];
    if (find_symbol(e, k->name, strlen(k->name), &agent)) {
      status = HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED;
      goto done;
    }
    struct aq_symbol *s =
        symbol_new(k->name, HSA_SYMBOL_KIND_KERNEL, HSA_SYMBOL_LINKAGE_MODULE, &agent);
    if (!s || !add_symbol(e, s)) {
      if (s) symbol_free(s);
      status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
      goto done;
    }
    if (!aq_handle_add(k, AQ_HANDLE_KERNEL_OBJECT)) {
      status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
      goto done;
    }
    s->kernel = k;
  }
  e->library_fds[e->library_count] = library_fd;
  e->libraries[e->library_count++] = library;
  if (loaded_code_object) loaded_code_object->handle = (uint64_t)(uintptr_t)library;

done:
  if (status != HSA_STATUS_SUCCESS) {
    while (e->symbol_count > first_new_symbol)
      symbol_free(e->symbols[--e->symbol_count]);
    if (library) {
      dlclose(library);
      close(library_fd);
    }
  }
  pthread_mutex_unlock(&e->lock);
  return status;
}

/* CPU code objects always hold agent code (kernels for the CPU agent); a
 * program code object holds only program-allocation variables, which no
 * Aquila tool produces. */
hsa_status_t hsa_executable_load_program_code_object(hsa_executable_t executable,
                                                     hsa_code_object_reader_t code_object_reader,
                                                     const char *options,
                                                     hsa_loaded_code_object_t *loaded_code_object) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!executable_from_handle(executable)) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!aq_reader_from_handle(code_object_reader))
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
}

hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char *options) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  pthread_mutex_lock(&e->lock);
  hsa_status_t status = HSA_STATUS_SUCCESS;
  if (e->state == HSA_EXECUTABLE_STATE_FROZEN)
    status = HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  else
    e->state = HSA_EXECUTABLE_STATE_FROZEN;
  pthread_mutex_unlock(&e->lock);
  return status;
}

hsa_status_t hsa_executable_get_info(hsa_executable_t executable, hsa_executable_info_t attribute,
                                     void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (attribute) {
  case HSA_EXECUTABLE_INFO_PROFILE:
    *(hsa_profile_t *)value = e->profile;
    break;
  case HSA_EXECUTABLE_INFO_STATE:
    *(hsa_executable_state_t *)value = e->state;
    break;
  case HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
    *(hsa_default_float_rounding_mode_t *)value = e->rounding;
    break;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t define_variable(hsa_executable_t executable, const hsa_agent_t *agent,
                                    const char *name, void *address, bool is_const) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (agent && !aq_agent_exists(*agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!name || !address || !name[0]) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&e->lock);
  hsa_status_t status = HSA_STATUS_SUCCESS;
  if (e->state == HSA_EXECUTABLE_STATE_FROZEN) {
    status = HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  } else if (find_symbol(e, name, strlen(name), agent)) {
    status = HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED;
  } else {
    struct aq_symbol *s =
        symbol_new(name, HSA_SYMBOL_KIND_VARIABLE,
                   agent ? HSA_SYMBOL_LINKAGE_MODULE : HSA_SYMBOL_LINKAGE_PROGRAM, agent);
    if (!s || !add_symbol(e, s)) {
      if (s) symbol_free(s);
      status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    } else {
      s->address = address;
      s->is_const = is_const;
    }
  }
  pthread_mutex_unlock(&e->lock);
  return status;
}

hsa_status_t hsa_executable_global_variable_define(hsa_executable_t executable,
                                                   const char *variable_name, void *address) {
  return define_variable(executable, NULL, variable_name, address, false);
}

hsa_status_t hsa_executable_agent_global_variable_define(hsa_executable_t executable,
                                                         hsa_agent_t agent,
                                                         const char *variable_name, void *address) {
  return define_variable(executable, &agent, variable_name, address, false);
}

hsa_status_t hsa_executable_readonly_variable_define(hsa_executable_t executable, hsa_agent_t agent,
                                                     const char *variable_name, void *address) {
  return define_variable(executable, &agent, variable_name, address, true);
}

/* CPU code objects reference no external variables, and every kernel
 * descriptor was checked at load time, so a live executable is valid. */
hsa_status_t hsa_executable_validate(hsa_executable_t executable, uint32_t *result) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!result) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&e->lock);
  uint32_t invalid = 0;
  for (size_t i = 0; i < e->symbol_count; i++) {
    const struct aq_symbol *s = e->symbols[i];
    if (s->kind == HSA_SYMBOL_KIND_KERNEL && !s->is_remote &&
        (s->kernel->abi_version != AQUILA_CPU_ABI_VERSION || !s->kernel->run_workgroup))
      invalid = 1;
  }
  pthread_mutex_unlock(&e->lock);
  *result = invalid;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_validate_alt(hsa_executable_t executable, const char *options,
                                         uint32_t *result) {
  return hsa_executable_validate(executable, result);
}

/* ---- symbols ---- */

static hsa_status_t lookup_symbol(struct aq_executable *e, const char *name,
                                  const hsa_agent_t *agent, hsa_executable_symbol_t *symbol) {
  size_t length = strlen(name);
  pthread_mutex_lock(&e->lock);
  struct aq_symbol *s = find_symbol(e, name, length, agent);
  /* Kernel descriptors are also known by their ".kd" symbol name. */
  if (!s && length > 3 && strcmp(name + length - 3, ".kd") == 0) {
    s = find_symbol(e, name, length - 3, agent);
    if (s && s->kind != HSA_SYMBOL_KIND_KERNEL) s = NULL;
  }
  pthread_mutex_unlock(&e->lock);
  if (!s) return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
  *symbol = symbol_handle(s);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable, const char *symbol_name,
                                               const hsa_agent_t *agent,
                                               hsa_executable_symbol_t *symbol) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!symbol_name || !symbol) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (agent && !aq_agent_exists(*agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  return lookup_symbol(e, symbol_name, agent, symbol);
}

hsa_status_t hsa_executable_get_symbol(hsa_executable_t executable, const char *module_name,
                                       const char *symbol_name, hsa_agent_t agent,
                                       int32_t call_convention, hsa_executable_symbol_t *symbol) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!symbol_name || !symbol) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  /* Symbols of CPU code objects have no module name; program symbols are
   * found when the agent does not match. */
  if (lookup_symbol(e, symbol_name, &agent, symbol) == HSA_STATUS_SUCCESS)
    return HSA_STATUS_SUCCESS;
  return lookup_symbol(e, symbol_name, NULL, symbol);
}

hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t executable_symbol,
                                            hsa_executable_symbol_info_t attribute, void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_symbol *s = symbol_from_handle(executable_symbol);
  if (!s) return HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  bool kernel = s->kind == HSA_SYMBOL_KIND_KERNEL;
  switch (attribute) {
  case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
    *(hsa_symbol_kind_t *)value = s->kind;
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH:
    *(uint32_t *)value = (uint32_t)strlen(s->name);
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_NAME:
    memcpy(value, s->name, strlen(s->name));
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH:
    *(uint32_t *)value = 0;
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME:
    return HSA_STATUS_SUCCESS; /* empty, no bytes */
  case HSA_EXECUTABLE_SYMBOL_INFO_AGENT:
    if (!s->has_agent) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *(hsa_agent_t *)value = s->agent;
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE:
    *(hsa_symbol_linkage_t *)value = s->linkage;
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION:
    *(bool *)value = true;
    return HSA_STATUS_SUCCESS;
  default:
    break;
  }
  if (!kernel) {
    switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS:
      *(uint64_t *)value = (uint64_t)(uintptr_t)s->address;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION:
      *(hsa_variable_allocation_t *)value =
          s->has_agent ? HSA_VARIABLE_ALLOCATION_AGENT : HSA_VARIABLE_ALLOCATION_PROGRAM;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT:
      *(hsa_variable_segment_t *)value =
          s->is_const ? HSA_VARIABLE_SEGMENT_READONLY : HSA_VARIABLE_SEGMENT_GLOBAL;
      break;
    /* The application defined the variable by address only. */
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT:
      *(uint32_t *)value = 0;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE:
      *(uint32_t *)value = 0;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST:
      *(bool *)value = s->is_const;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
  }
  if (s->is_remote) {
    const struct aq_remote_kernel *r = &s->remote;
    switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
      *(uint64_t *)value = r->kernel_object;
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
      *(uint32_t *)value = r->kernarg_size;
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
      *(uint32_t *)value = r->kernarg_alignment;
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
      *(uint32_t *)value = r->group_segment_size;
      return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
      *(uint32_t *)value = r->private_segment_size;
      return HSA_STATUS_SUCCESS;
    default:
      break;
    }
  }
  const struct aquila_kernel_descriptor *k = s->kernel;
  switch ((int)attribute) { /* and HSA_VEN_AQUILA_EXECUTABLE_SYMBOL_INFO_* */
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
    *(uint64_t *)value = (uint64_t)(uintptr_t)k;
    break;
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
    *(uint32_t *)value = k->kernarg_size;
    break;
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
    *(uint32_t *)value = k->kernarg_alignment < 16 ? 16 : k->kernarg_alignment;
    break;
  /* Reported for information: the code keeps its static __local memory in
   * its own per-unit arena, so a dispatch need not include it. */
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
    *(uint32_t *)value = k->group_segment_size;
    break;
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
    *(uint32_t *)value = k->private_segment_size;
    break;
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK:
    *(bool *)value = false;
    break;
  case HSA_VEN_AQUILA_EXECUTABLE_SYMBOL_INFO_KERNEL_FLAGS:
    if (s->is_remote) return HSA_STATUS_ERROR_INVALID_ARGUMENT; /* the daemon's descriptor */
    *(uint32_t *)value = k->flags;
    break;
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION:
    *(uint32_t *)value = 0;
    break;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

/* Iterates over a snapshot so that callbacks may call back into the API. */
static hsa_status_t iterate(struct aq_executable *e, int filter, hsa_agent_t agent,
                            hsa_status_t (*visit)(struct aq_symbol *, void *), void *data) {
  pthread_mutex_lock(&e->lock);
  size_t count = e->symbol_count;
  struct aq_symbol **copy = malloc((count ? count : 1) * sizeof(*copy));
  if (copy) memcpy(copy, e->symbols, count * sizeof(*copy));
  pthread_mutex_unlock(&e->lock);
  if (!copy) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  hsa_status_t status = HSA_STATUS_SUCCESS;
  for (size_t i = 0; i < count && status == HSA_STATUS_SUCCESS; i++) {
    struct aq_symbol *s = copy[i];
    if (filter == 1 && !(s->has_agent && s->agent.handle == agent.handle)) continue;
    if (filter == 2 && s->linkage != HSA_SYMBOL_LINKAGE_PROGRAM) continue;
    status = visit(s, data);
  }
  free(copy);
  return status;
}

struct iterate_plain {
  hsa_executable_t exec;
  hsa_status_t (*callback)(hsa_executable_t, hsa_executable_symbol_t, void *);
  void *data;
};
static hsa_status_t visit_plain(struct aq_symbol *s, void *data) {
  struct iterate_plain *it = data;
  return it->callback(it->exec, symbol_handle(s), it->data);
}

struct iterate_agent {
  hsa_executable_t exec;
  hsa_agent_t agent;
  hsa_status_t (*callback)(hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t, void *);
  void *data;
};
static hsa_status_t visit_agent(struct aq_symbol *s, void *data) {
  struct iterate_agent *it = data;
  return it->callback(it->exec, it->agent, symbol_handle(s), it->data);
}

hsa_status_t hsa_executable_iterate_symbols(hsa_executable_t executable,
                                            hsa_status_t (*callback)(hsa_executable_t exec,
                                                                     hsa_executable_symbol_t symbol,
                                                                     void *data),
                                            void *data) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct iterate_plain it = {executable, callback, data};
  hsa_agent_t none = {0};
  return iterate(e, 0, none, visit_plain, &it);
}

hsa_status_t hsa_executable_iterate_agent_symbols(
    hsa_executable_t executable, hsa_agent_t agent,
    hsa_status_t (*callback)(hsa_executable_t exec, hsa_agent_t agent,
                             hsa_executable_symbol_t symbol, void *data),
    void *data) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!aq_agent_exists(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct iterate_agent it = {executable, agent, callback, data};
  return iterate(e, 1, agent, visit_agent, &it);
}

hsa_status_t hsa_executable_iterate_program_symbols(
    hsa_executable_t executable,
    hsa_status_t (*callback)(hsa_executable_t exec, hsa_executable_symbol_t symbol, void *data),
    void *data) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_executable *e = executable_from_handle(executable);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct iterate_plain it = {executable, callback, data};
  hsa_agent_t none = {0};
  return iterate(e, 2, none, visit_plain, &it);
}
