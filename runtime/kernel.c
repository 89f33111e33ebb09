/* Kernels: a program's kernel with its argument values. Argument values are
 * kept as a copy of the explicit kernarg segment; buffer and image arguments are
 * resolved to addresses when a command is enqueued, so the command keeps its
 * own snapshot and clSetKernelArg may change the kernel right after (the
 * two take the kernel's args_lock). */
#include <stdlib.h>
#include <string.h>

#include "aquila/cpu_abi.h"
#include "aquila/hsa_ext_aquila.h"
#include "runtime.h"

static cl_kernel kernel_create(cl_program p, const struct aquila_fatbin_kernel *meta, cl_int *err) {
  /* The layout (kernarg size, argument offsets) came with the build; the
   * machine code comes at the kernel's first launch (kernel_code_ready). */
  cl_kernel k = calloc(1, sizeof *k);
  if (!k) {
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  k->kernel_objects = calloc(p->num_devices, sizeof *k->kernel_objects);
  k->code_flags = calloc(p->num_devices, sizeof *k->code_flags);
  k->upgrades = calloc(p->num_devices, sizeof *k->upgrades);
  k->code_ready = calloc(p->num_devices, sizeof *k->code_ready);
  k->arg_values = calloc(1, meta->kernarg_size ? meta->kernarg_size : 1);
  k->args = calloc(meta->num_args ? meta->num_args : 1, sizeof *k->args);
  if (!k->kernel_objects || !k->code_flags || !k->upgrades || !k->code_ready || !k->arg_values ||
      !k->args) {
    free(k->kernel_objects);
    free(k->code_flags);
    free(k->upgrades);
    free(k->code_ready);
    free(k->arg_values);
    free(k->args);
    free(k);
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  object_init(&k->header, OBJECT_KERNEL);
  pthread_mutex_init(&k->args_lock, NULL);
  pthread_mutex_init(&k->code_lock, NULL);
  k->program = p;
  k->meta = meta;
  atomic_init(&k->app_refs, 1);
  k->arg_info = p->kernel_arg_info && p->kernel_arg_info[meta - p->fatbin->kernels];
  object_retain(&p->header);
  atomic_fetch_add(&p->num_kernels_attached, 1);
  atomic_fetch_add(&p->num_kernels_alive, 1);
  *err = CL_SUCCESS;
  return k;
}

/* Under k->code_lock: finds kernel k's object on program device i in the
 * code its program has for it. */
static cl_int find_kernel_object(cl_kernel k, cl_uint i) {
  cl_program p = k->program;
  uint32_t index = (uint32_t)(k->meta - p->fatbin->kernels);
  struct program_device *pd = &p->per_device[i];
  if (!pd->loaded) return CL_INVALID_PROGRAM_EXECUTABLE;
  /* Read with the executable below: the background build may place the
   * whole version meanwhile. */
  if (pd->upgraded && atomic_load_explicit(&pd->upgraded[index], memory_order_acquire) != 0)
    k->upgrades[i] = &pd->upgraded[index];
  hsa_executable_symbol_t sym;
  hsa_agent_t agent = p->devices[i]->agent;
  hsa_status_t st = hsa_executable_get_symbol_by_name(program_kernel_executable(p, i, index),
                                                      k->meta->name, &agent, &sym);
  if (st == HSA_STATUS_SUCCESS)
    st = hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                        &k->kernel_objects[i]);
  /* Not for a remote device's kernels (0: no sub-groups there). */
  if (st == HSA_STATUS_SUCCESS)
    hsa_executable_symbol_get_info(sym, HSA_VEN_AQUILA_EXECUTABLE_SYMBOL_INFO_KERNEL_FLAGS,
                                   &k->code_flags[i]);
  uint32_t private_size = 0;
  if (st == HSA_STATUS_SUCCESS &&
      hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                     &private_size) == HSA_STATUS_SUCCESS &&
      private_size > k->private_size)
    k->private_size = private_size;
  if (st != HSA_STATUS_SUCCESS || !k->kernel_objects[i]) {
    debug_log("kernel '%s': no kernel object on device %u (HSA status 0x%x)", k->meta->name, i,
              (unsigned)st);
    return CL_INVALID_PROGRAM_EXECUTABLE;
  }
  return CL_SUCCESS;
}

cl_int kernel_code_ready(cl_kernel k, cl_uint i) {
  if (atomic_load_explicit(&k->code_ready[i], memory_order_acquire)) return CL_SUCCESS;
  pthread_mutex_lock(&k->code_lock);
  cl_int err = CL_SUCCESS;
  if (!atomic_load_explicit(&k->code_ready[i], memory_order_relaxed)) {
    /* A failure is not kept: the next launch tries again (the linker or
     * the memory may be back by then). */
    uint32_t index = (uint32_t)(k->meta - k->program->fatbin->kernels);
    err = program_make_kernel_code(k->program, i, &index, 1);
    if (err == CL_SUCCESS) err = find_kernel_object(k, i);
    if (err == CL_SUCCESS) atomic_store_explicit(&k->code_ready[i], 1, memory_order_release);
  }
  pthread_mutex_unlock(&k->code_lock);
  return err;
}

uint64_t kernel_object_now(cl_kernel k, cl_uint slot) {
  _Atomic uint64_t *upgrade = k->upgrades[slot];
  if (!upgrade) return k->kernel_objects[slot];
  /* 1 while the vector version is to come (program.c), then its object. */
  uint64_t whole = atomic_load_explicit(upgrade, memory_order_acquire);
  if (whole <= 1) {
    whole = 0;
    tiers_quick_code_launched(upgrade);
  }
  if (debug_enabled()) {
    /* Which code ran, once each. */
    unsigned bit = whole ? 2 : 1;
    if (!(atomic_fetch_or(&k->tier_reported, bit) & bit))
      debug_log("kernel '%s': launched with %s", k->meta->name,
                whole ? "its vector version (built in the background)"
                      : "its quick tier's scalar code");
  }
  return whole ? whole : k->kernel_objects[slot];
}

AQUILA_API cl_kernel clCreateKernel(cl_program program, const char *kernel_name,
                                    cl_int *errcode_ret) {
  cl_int err;
  cl_kernel k = NULL;
  if (!object_is(program, OBJECT_PROGRAM))
    err = CL_INVALID_PROGRAM;
  else if (!program_has_executable(program))
    err = CL_INVALID_PROGRAM_EXECUTABLE;
  else if (!kernel_name)
    err = CL_INVALID_VALUE;
  else {
    const struct aquila_fatbin_kernel *meta =
        aquila_fatbin_find_kernel(program->fatbin, kernel_name);
    if (!meta) {
      debug_log("clCreateKernel: no kernel '%s' in the program", kernel_name);
      err = CL_INVALID_KERNEL_NAME;
    } else {
      k = kernel_create(program, meta, &err);
    }
  }
  if (errcode_ret) *errcode_ret = err;
  return k;
}

AQUILA_API cl_int clCreateKernelsInProgram(cl_program program, cl_uint num_kernels,
                                           cl_kernel *kernels, cl_uint *num_kernels_ret) {
  if (!object_is(program, OBJECT_PROGRAM)) return CL_INVALID_PROGRAM;
  if (!program_has_executable(program)) return CL_INVALID_PROGRAM_EXECUTABLE;
  cl_uint n = program->fatbin->num_kernels;
  if (kernels && num_kernels < n) return CL_INVALID_VALUE;
  if (kernels) {
    /* Each kernel's code comes at its first launch, as for clCreateKernel
     * (a small program's other kernels come with the first). */
    for (cl_uint i = 0; i < n; i++) {
      cl_int err;
      kernels[i] = kernel_create(program, &program->fatbin->kernels[i], &err);
      if (!kernels[i]) {
        for (cl_uint j = 0; j < i; j++)
          clReleaseKernel(kernels[j]);
        return err;
      }
    }
  }
  if (num_kernels_ret) *num_kernels_ret = n;
  return CL_SUCCESS;
}

/* A new kernel of the same program with the source kernel's argument values
 * as they are now (OpenCL 2.1); later clSetKernelArg calls on either leave
 * the other alone. */
AQUILA_API cl_kernel clCloneKernel(cl_kernel source_kernel, cl_int *errcode_ret) {
  cl_int err;
  cl_kernel k = NULL;
  if (!object_is(source_kernel, OBJECT_KERNEL) || atomic_load(&source_kernel->app_refs) == 0) {
    err = CL_INVALID_KERNEL;
  } else if ((k = kernel_create(source_kernel->program, source_kernel->meta, &err))) {
    const struct aquila_fatbin_kernel *meta = source_kernel->meta;
    pthread_mutex_lock(&source_kernel->args_lock);
    memcpy(k->arg_values, source_kernel->arg_values, meta->kernarg_size);
    memcpy(k->args, source_kernel->args, meta->num_args * sizeof *k->args);
    pthread_mutex_unlock(&source_kernel->args_lock);
  }
  if (errcode_ret) *errcode_ret = err;
  return k;
}

/* Takes one of the application's references, failing once it holds none
 * (only enqueued commands keep such a kernel alive). */
static int take_app_ref(cl_kernel kernel) {
  unsigned refs = atomic_load(&kernel->app_refs);
  do {
    if (refs == 0) return 0;
  } while (!atomic_compare_exchange_weak(&kernel->app_refs, &refs, refs - 1));
  return 1;
}

AQUILA_API cl_int clRetainKernel(cl_kernel kernel) {
  if (!object_is(kernel, OBJECT_KERNEL) || atomic_load(&kernel->app_refs) == 0)
    return CL_INVALID_KERNEL;
  atomic_fetch_add(&kernel->app_refs, 1);
  object_retain(&kernel->header);
  return CL_SUCCESS;
}

void kernel_release_internal(cl_kernel kernel) {
  if (!object_release(&kernel->header)) return;
  cl_program p = kernel->program;
  free(kernel->kernel_objects);
  free(kernel->code_flags);
  free(kernel->upgrades);
  free(kernel->code_ready);
  free(kernel->arg_values);
  free(kernel->args);
  pthread_mutex_destroy(&kernel->args_lock);
  pthread_mutex_destroy(&kernel->code_lock);
  object_free(kernel);
  atomic_fetch_sub(&p->num_kernels_alive, 1);
  clReleaseProgram(p);
}

/* A kernel the application no longer holds is no longer attached to its
 * program (clBuildProgram may rebuild it, as piglit's
 * clCreateProgramWithBinary test does), even while enqueued commands still
 * run it: program.c keeps their code loaded. */
AQUILA_API cl_int clReleaseKernel(cl_kernel kernel) {
  if (!object_is(kernel, OBJECT_KERNEL) || !take_app_ref(kernel)) return CL_INVALID_KERNEL;
  if (atomic_load(&kernel->app_refs) == 0)
    atomic_fetch_sub(&kernel->program->num_kernels_attached, 1);
  kernel_release_internal(kernel);
  return CL_SUCCESS;
}

/* Whether image m suits an image argument: the declared image type must be
 * m's geometry, and a read_only (write_only) argument takes no image that
 * kernels may only write (read). */
static int image_arg_matches(const struct aquila_fatbin_arg *a, cl_mem m) {
  static const struct {
    const char *name;
    cl_mem_object_type type;
  } types[] = {
      {"image1d_t", CL_MEM_OBJECT_IMAGE1D},
      {"image1d_buffer_t", CL_MEM_OBJECT_IMAGE1D_BUFFER},
      {"image1d_array_t", CL_MEM_OBJECT_IMAGE1D_ARRAY},
      {"image2d_t", CL_MEM_OBJECT_IMAGE2D},
      {"image2d_array_t", CL_MEM_OBJECT_IMAGE2D_ARRAY},
      {"image3d_t", CL_MEM_OBJECT_IMAGE3D},
  };
  if (a->type_name)
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
      if (!strcmp(a->type_name, types[i].name) && m->type != types[i].type) return 0;
  if (a->access_qualifier == CL_KERNEL_ARG_ACCESS_READ_ONLY && (m->flags & CL_MEM_WRITE_ONLY))
    return 0;
  if (a->access_qualifier == CL_KERNEL_ARG_ACCESS_WRITE_ONLY && (m->flags & CL_MEM_READ_ONLY))
    return 0;
  return 1;
}

static cl_int set_arg_locked(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                             const void *arg_value);

AQUILA_API cl_int clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                 const void *arg_value) {
  if (!object_is(kernel, OBJECT_KERNEL)) return CL_INVALID_KERNEL;
  if (arg_index >= kernel->meta->num_args) return CL_INVALID_ARG_INDEX;
  pthread_mutex_lock(&kernel->args_lock);
  cl_int err = set_arg_locked(kernel, arg_index, arg_size, arg_value);
  pthread_mutex_unlock(&kernel->args_lock);
  return err;
}

static cl_int set_arg_locked(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                             const void *arg_value) {
  const struct aquila_fatbin_arg *a = &kernel->meta->args[arg_index];
  struct kernel_arg *ka = &kernel->args[arg_index];
  switch (a->kind) {
  case AQUILA_ARG_GLOBAL_PTR:
  case AQUILA_ARG_CONSTANT_PTR: {
    if (arg_size != sizeof(cl_mem)) return CL_INVALID_ARG_SIZE;
    cl_mem m = arg_value ? *(const cl_mem *)arg_value : NULL;
    if (m && !mem_is_buffer(m)) return CL_INVALID_MEM_OBJECT;
    if (m && m->context != kernel->program->context) return CL_INVALID_MEM_OBJECT;
    ka->mem = m;
    ka->pointer = 0;
    break;
  }
  case AQUILA_ARG_LOCAL_PTR:
    if (arg_value) return CL_INVALID_ARG_VALUE;
    if (arg_size == 0) return CL_INVALID_ARG_SIZE;
    ka->local_size = arg_size;
    break;
  case AQUILA_ARG_IMAGE: {
    /* The image's HSA handle goes into the kernarg at enqueue (enqueue.c),
     * as buffers' addresses do. */
    /* The size first: arg_value is read only when it holds a handle. */
    if (arg_size != sizeof(cl_mem)) return CL_INVALID_ARG_SIZE;
    if (!arg_value) return CL_INVALID_ARG_VALUE; /* an image argument has no NULL value */
    cl_mem m = *(const cl_mem *)arg_value;
    if (!mem_is_image(m) || m->context != kernel->program->context) return CL_INVALID_MEM_OBJECT;
    if (!image_arg_matches(a, m)) return CL_INVALID_ARG_VALUE;
    ka->mem = m;
    break;
  }
  case AQUILA_ARG_SAMPLER: {
    if (arg_size != sizeof(cl_sampler)) return CL_INVALID_ARG_SIZE;
    /* No value names no sampler object: the specification's error for an
     * invalid sampler (the CTS checks this). */
    if (!arg_value) return CL_INVALID_SAMPLER;
    cl_sampler s = *(const cl_sampler *)arg_value;
    if (!object_is(s, OBJECT_SAMPLER) || s->context != kernel->program->context)
      return CL_INVALID_SAMPLER;
    /* Code sees the sampler bits themselves (little-endian, so a narrower
     * slot gets the low bytes). */
    memcpy(kernel->arg_values + a->offset, &s->bits, a->size < 8 ? a->size : 8);
    break;
  }
  default:
    if (!arg_value) return CL_INVALID_ARG_VALUE;
    if (arg_size != a->size) return CL_INVALID_ARG_SIZE;
    memcpy(kernel->arg_values + a->offset, arg_value, arg_size);
    break;
  }
  ka->set = 1;
  return CL_SUCCESS;
}

cl_int kernel_set_arg_pointer(cl_kernel kernel, cl_uint arg_index, const void *pointer) {
  if (arg_index >= kernel->meta->num_args) return CL_INVALID_ARG_INDEX;
  const struct aquila_fatbin_arg *a = &kernel->meta->args[arg_index];
  if (a->kind != AQUILA_ARG_GLOBAL_PTR && a->kind != AQUILA_ARG_CONSTANT_PTR)
    return CL_INVALID_ARG_VALUE;
  uint64_t address = (uint64_t)(uintptr_t)pointer;
  pthread_mutex_lock(&kernel->args_lock);
  memcpy(kernel->arg_values + a->offset, &address, sizeof address);
  kernel->args[arg_index].mem = NULL;
  kernel->args[arg_index].pointer = 1;
  kernel->args[arg_index].set = 1;
  pthread_mutex_unlock(&kernel->args_lock);
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name,
                                  size_t param_value_size, void *param_value,
                                  size_t *param_value_size_ret) {
  if (!object_is(kernel, OBJECT_KERNEL)) return CL_INVALID_KERNEL;
  switch (param_name) {
  case CL_KERNEL_FUNCTION_NAME:
    INFO_STRING(kernel->meta->name);
  case CL_KERNEL_NUM_ARGS:
    INFO_VALUE(cl_uint, kernel->meta->num_args);
  case CL_KERNEL_REFERENCE_COUNT:
    INFO_VALUE(cl_uint, atomic_load(&kernel->header.refcount));
  case CL_KERNEL_CONTEXT:
    INFO_VALUE(cl_context, kernel->program->context);
  case CL_KERNEL_PROGRAM:
    INFO_VALUE(cl_program, kernel->program);
  case CL_KERNEL_ATTRIBUTES:
    INFO_STRING(kernel->meta->attributes ? kernel->meta->attributes : "");
  default:
    return CL_INVALID_VALUE;
  }
}

/* The device a kernel query names: NULL for the program's only one.
 * CL_INVALID_DEVICE unless it is in the program's context; *slot: its
 * index among the program's devices, or -1. */
static cl_int query_device(cl_kernel kernel, cl_device_id *device, int *slot) {
  cl_program p = kernel->program;
  if (*device == NULL) {
    if (p->num_devices != 1) return CL_INVALID_DEVICE;
    *device = p->devices[0];
  }
  if (!device_is_valid(*device) || !context_has_device(p->context, *device))
    return CL_INVALID_DEVICE;
  *slot = -1;
  for (cl_uint i = 0; i < p->num_devices; i++)
    if (p->devices[i] == *device) *slot = (int)i;
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                           cl_kernel_work_group_info param_name,
                                           size_t param_value_size, void *param_value,
                                           size_t *param_value_size_ret) {
  if (!object_is(kernel, OBJECT_KERNEL)) return CL_INVALID_KERNEL;
  int slot;
  if (query_device(kernel, &device, &slot)) return CL_INVALID_DEVICE;
  switch (param_name) {
  case CL_KERNEL_WORK_GROUP_SIZE:
    INFO_VALUE(size_t, device->max_work_group_size);
  case CL_KERNEL_COMPILE_WORK_GROUP_SIZE: {
    size_t s[3] = {kernel->meta->reqd_work_group_size[0], kernel->meta->reqd_work_group_size[1],
                   kernel->meta->reqd_work_group_size[2]};
    return info_copy(s, sizeof s, param_value_size, param_value, param_value_size_ret);
  }
  case CL_KERNEL_LOCAL_MEM_SIZE: {
    /* The static __local bytes are the code's (made now if no launch made
     * it): code generation places the variables the kernel still uses. */
    if (slot >= 0) {
      cl_int err = kernel_code_ready(kernel, (cl_uint)slot);
      if (err == CL_OUT_OF_HOST_MEMORY) return err;
    }
    cl_ulong total = kernel->meta->local_mem_size;
    pthread_mutex_lock(&kernel->args_lock);
    for (uint32_t i = 0; i < kernel->meta->num_args; i++)
      if (kernel->meta->args[i].kind == AQUILA_ARG_LOCAL_PTR) total += kernel->args[i].local_size;
    pthread_mutex_unlock(&kernel->args_lock);
    INFO_VALUE(cl_ulong, total);
  }
  case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
    INFO_VALUE(size_t, 16);
  case CL_KERNEL_PRIVATE_MEM_SIZE: {
    /* Known from the code: the device's is made now if no launch made it. */
    if (slot >= 0) {
      cl_int err = kernel_code_ready(kernel, (cl_uint)slot);
      if (err == CL_OUT_OF_HOST_MEMORY) return err;
    }
    INFO_VALUE(cl_ulong, kernel->private_size);
  }
  case CL_KERNEL_GLOBAL_WORK_SIZE:
    return CL_INVALID_VALUE; /* only for custom devices */
  default:
    return CL_INVALID_VALUE;
  }
}

/* ---- sub-groups ---------------------------------------------------------------------------
 * A sub-group is a vector of the kernel's vectorized version, W work-items
 * along x (a row's last holding its tail; with barriers, in groups whose x
 * size W divides); the work-items of other groups are sub-groups of one
 * (compiler/workgroup/sub_groups.c). The code's descriptor says
 * W (1 when the kernel was not vectorized); programs with sub-groups are
 * built whole, so the code a launch runs is the code asked here. */

/* W on program device i, 0 where the device has no sub-groups (remote
 * devices: their code's descriptor is the daemon's). */
static unsigned sub_group_width(cl_kernel k, cl_uint i) {
  return AQUILA_KERNEL_SUB_GROUP_WIDTH_OF(k->code_flags[i]);
}

/* Sub-groups in a work-group of local size l, and the largest: vectors,
 * a row's last one holding its tail (with barriers: when W divides l[0]),
 * else one per work-item. */
static size_t sub_groups_for(cl_kernel k, cl_uint i, const size_t l[3], size_t *max_size) {
  unsigned w = sub_group_width(k, i);
  int barrier = (k->code_flags[i] & AQUILA_KERNEL_USES_BARRIER) != 0;
  size_t f = w <= 1 ? 0 : !barrier ? (l[0] + w - 1) / w : l[0] % w == 0 ? l[0] / w : 0;
  *max_size = f ? (l[0] < w ? l[0] : w) : 1;
  return (f ? f : l[0]) * l[1] * l[2];
}

AQUILA_API cl_int clGetKernelSubGroupInfo(cl_kernel kernel, cl_device_id device,
                                          cl_kernel_sub_group_info param_name,
                                          size_t input_value_size, const void *input_value,
                                          size_t param_value_size, void *param_value,
                                          size_t *param_value_size_ret) {
  if (!object_is(kernel, OBJECT_KERNEL)) return CL_INVALID_KERNEL;
  int slot;
  /* A device of the context that the program was not built for. */
  if (query_device(kernel, &device, &slot) || slot < 0) return CL_INVALID_DEVICE;
  /* The sub-group width is the code's (made now if no launch made it). */
  cl_int code_err = kernel_code_ready(kernel, (cl_uint)slot);
  if (code_err == CL_OUT_OF_HOST_MEMORY) return code_err;
  const uint32_t *reqd = kernel->meta->reqd_work_group_size;
  size_t max_group = device->max_work_group_size;
  switch (param_name) {
  case CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE:
  case CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE: {
    if (!input_value || input_value_size == 0 || input_value_size % sizeof(size_t) ||
        input_value_size > 3 * sizeof(size_t))
      return CL_INVALID_VALUE;
    if (!sub_group_width(kernel, (cl_uint)slot)) return CL_INVALID_OPERATION;
    size_t l[3] = {1, 1, 1};
    memcpy(l, input_value, input_value_size);
    size_t max_size, count = sub_groups_for(kernel, (cl_uint)slot, l, &max_size);
    INFO_VALUE(size_t, param_name == CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE ? count : max_size);
  }
  case CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT: {
    if (!input_value || input_value_size != sizeof(size_t)) return CL_INVALID_VALUE;
    size_t dims = param_value_size / sizeof(size_t);
    if (param_value && (dims == 0 || dims > 3 || param_value_size % sizeof(size_t)))
      return CL_INVALID_VALUE;
    if (!param_value) dims = 3;
    if (!sub_group_width(kernel, (cl_uint)slot)) return CL_INVALID_OPERATION;
    size_t want, l[3] = {0, 0, 0};
    memcpy(&want, input_value, sizeof want);
    unsigned w = sub_group_width(kernel, (cl_uint)slot);
    /* Rows of whole vectors, or of sub-groups of one, ly of them. */
    for (size_t ly = 1; want && ly <= want && !l[0] && (dims > 1 || ly == 1); ly++) {
      if (want % ly) continue;
      size_t row = want / ly, tries[2] = {row * w, row < w ? row : 0};
      for (int t = 0; t < 2 && !l[0]; t++) {
        size_t cand[3] = {tries[t], ly, 1}, max_size;
        if (cand[0] && cand[0] * ly <= max_group &&
            sub_groups_for(kernel, (cl_uint)slot, cand, &max_size) == want)
          memcpy(l, cand, sizeof l);
      }
    }
    if (reqd[0] && (l[0] != reqd[0] || l[1] != (reqd[1] ? reqd[1] : 1))) memset(l, 0, sizeof l);
    return info_copy(l, dims * sizeof(size_t), param_value_size, param_value,
                     param_value_size_ret);
  }
  case CL_KERNEL_MAX_NUM_SUB_GROUPS: {
    if (!sub_group_width(kernel, (cl_uint)slot)) return CL_INVALID_OPERATION;
    size_t max_size, n = max_group; /* groups of rows of one work-item */
    if (reqd[0]) {
      size_t l[3] = {reqd[0], reqd[1] ? reqd[1] : 1, reqd[2] ? reqd[2] : 1};
      n = sub_groups_for(kernel, (cl_uint)slot, l, &max_size);
    }
    INFO_VALUE(size_t, n);
  }
  case CL_KERNEL_COMPILE_NUM_SUB_GROUPS:
    if (!sub_group_width(kernel, (cl_uint)slot)) return CL_INVALID_OPERATION;
    INFO_VALUE(size_t, 0); /* no attribute asks for a number */
  default:
    return CL_INVALID_VALUE;
  }
}

AQUILA_API cl_int clGetKernelArgInfo(cl_kernel kernel, cl_uint arg_index,
                                     cl_kernel_arg_info param_name, size_t param_value_size,
                                     void *param_value, size_t *param_value_size_ret) {
  if (!object_is(kernel, OBJECT_KERNEL)) return CL_INVALID_KERNEL;
  if (arg_index >= kernel->meta->num_args) return CL_INVALID_ARG_INDEX;
  const struct aquila_fatbin_arg *a = &kernel->meta->args[arg_index];
  /* Names and types come from the source and need -cl-kernel-arg-info
   * (program.c); address and access qualifiers are what setting arguments
   * needs, so every program has them, as in other implementations (piglit
   * and the CTS ask for them only with the option). */
  switch (param_name) {
  case CL_KERNEL_ARG_TYPE_NAME:
  case CL_KERNEL_ARG_TYPE_QUALIFIER:
  case CL_KERNEL_ARG_NAME:
    if (!kernel->arg_info) return CL_KERNEL_ARG_INFO_NOT_AVAILABLE;
    break;
  case CL_KERNEL_ARG_ADDRESS_QUALIFIER:
  case CL_KERNEL_ARG_ACCESS_QUALIFIER:
    break;
  default:
    return CL_INVALID_VALUE;
  }
  switch (param_name) {
  case CL_KERNEL_ARG_ADDRESS_QUALIFIER:
    INFO_VALUE(cl_kernel_arg_address_qualifier, a->address_qualifier);
  case CL_KERNEL_ARG_ACCESS_QUALIFIER:
    INFO_VALUE(cl_kernel_arg_access_qualifier, a->access_qualifier);
  case CL_KERNEL_ARG_TYPE_NAME:
    INFO_STRING(a->type_name ? a->type_name : "");
  case CL_KERNEL_ARG_TYPE_QUALIFIER:
    INFO_VALUE(cl_kernel_arg_type_qualifier, a->type_qualifier);
  case CL_KERNEL_ARG_NAME:
    INFO_STRING(a->name ? a->name : "");
  default:
    return CL_INVALID_VALUE;
  }
}
