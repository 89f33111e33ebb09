/* Programs: source or fat binary in, per-device executables out. Building
 * compiles (compiler/) into a fat binary; loading picks, per device, the
 * code object built for exactly that CPU and loads it as an HSA
 * executable. Without one, machine code is made from the binary's portable
 * bitcode on demand: for the kernels an application creates, when it
 * creates them, each batch loaded as an executable of its own
 * (AQUILA_CODEGEN=eager makes all of it at the build instead). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/compiler.h"
#include "aquila/cpu_abi.h"
#include "aquila/hsa_ext_aquila.h"
#include "aquila/trace.h"
#include "runtime.h"

/* ---- AQUILA_TRACE: each step of a build as a span on the "builds" row ---- */

static uint32_t builds_track_id;
static void make_builds_track(void) {
  builds_track_id = aq_trace_track(0, "builds");
}

static uint64_t trace_begin(void) {
  return AQ_TRACE_ON() ? now_ns() : 0;
}

/* A step (compile, link, code generation, load) that began at t0. */
static void trace_build_step(const char *step, uint64_t t0, int ok, const struct aquila_fatbin *fb,
                             const char *detail) {
  if (!AQ_TRACE_ON()) return;
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, make_builds_track);
  /* Room for the other members in the record's 160 bytes of arguments. */
  char escaped[96];
  aq_trace_escape(escaped, sizeof escaped, detail ? detail : "");
  aq_trace_span(builds_track_id, "build", step, t0, now_ns(),
                "\"ok\":%s,\"kernels\":%u,\"detail\":\"%s\"", ok ? "true" : "false",
                fb ? fb->num_kernels : 0, escaped);
}

static struct _cl_program *program_new(cl_context ctx, const cl_device_id *devs, cl_uint n) {
  cl_program p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->devices = calloc(n, sizeof *p->devices);
  p->per_device = calloc(n, sizeof *p->per_device);
  if (!p->devices || !p->per_device) {
    free(p->devices);
    free(p->per_device);
    free(p);
    return NULL;
  }
  object_init(&p->header, OBJECT_PROGRAM);
  p->context = ctx;
  p->num_devices = n;
  memcpy(p->devices, devs, n * sizeof *devs);
  for (cl_uint i = 0; i < n; i++)
    p->per_device[i].status = CL_BUILD_NONE;
  pthread_mutex_init(&p->lock, NULL);
  pthread_mutex_init(&p->codegen_lock, NULL);
  object_retain(&ctx->header);
  return p;
}

static void destroy_code(struct loaded_code *c) {
  hsa_executable_destroy(c->executable);
  hsa_code_object_reader_destroy(c->reader);
  free(c->image);
  c->image = NULL;
}

/* Keeps a copy of code's bytes with c, loaded from it on demand, for
 * CL_PROGRAM_BINARIES (without memory, the binary goes without it). */
static void keep_image(struct loaded_code *c, const struct aquila_fatbin_code *code) {
  c->image = malloc(code->size ? code->size : 1);
  c->image_size = c->image ? code->size : 0;
  if (c->image) memcpy(c->image, code->data, code->size);
}

/* Forgets pd's code without destroying it (its owner is elsewhere now). */
static void forget_code(struct program_device *pd) {
  pd->loaded = 0;
  pd->has_whole = 0;
  pd->on_demand = NULL;
  pd->num_on_demand = 0;
  pd->kernel_code = NULL;
  pd->upgraded = NULL;
  pd->specialized = NULL;
}

static void destroy_executable(struct program_device *pd) {
  if (pd->has_whole) destroy_code(&pd->whole);
  for (uint32_t i = 0; i < pd->num_on_demand; i++)
    destroy_code(&pd->on_demand[i]);
  free(pd->on_demand);
  free(pd->kernel_code);
  free(pd->upgraded);
  free(pd->specialized);
  forget_code(pd);
}

/* Commands enqueued with kernels that the application has released may
 * still run the old code when a rebuild replaces it: that code stays loaded
 * until the program goes (their kernels hold the program). */
static void program_unload(cl_program p) {
  tiers_forget_program(p);
  pthread_mutex_lock(&p->codegen_lock);
  free(p->binary);
  p->binary = NULL;
  p->binary_size = 0;
  pthread_mutex_unlock(&p->codegen_lock);
  int in_use = atomic_load(&p->num_kernels_alive) > 0;
  for (cl_uint i = 0; i < p->num_devices; i++) {
    struct program_device *pd = &p->per_device[i];
    if (!pd->loaded) continue;
    struct program_device *retired =
        in_use ? realloc(p->retired, (p->num_retired + 1) * sizeof *retired) : NULL;
    if (retired) {
      p->retired = retired;
      retired[p->num_retired++] = *pd;
      forget_code(pd);
    } else {
      destroy_executable(pd);
    }
  }
}

/* Whether options hold -cl-kernel-arg-info as an option of its own. */
static int options_request_arg_info(const char *options) {
  static const char flag[] = "-cl-kernel-arg-info";
  for (const char *o = options ? strstr(options, flag) : NULL; o; o = strstr(o + 1, flag)) {
    char after = o[sizeof flag - 1];
    if ((o == options || o[-1] == ' ' || o[-1] == '\t') &&
        (after == 0 || after == ' ' || after == '\t'))
      return 1;
  }
  return 0;
}

/* OpenCL 1.2, 5.7.3: argument names and types are available only for a
 * program created from source and built or compiled with
 * -cl-kernel-arg-info. A new fat binary gets that answer for all its kernels
 * (available), or per kernel from the inputs it was linked from (per_kernel,
 * same order as p->fatbin->kernels). */
static void program_set_arg_info(cl_program p, int available, const unsigned char *per_kernel) {
  free(p->kernel_arg_info);
  p->kernel_arg_info = NULL;
  uint32_t n = p->fatbin ? p->fatbin->num_kernels : 0;
  if (n == 0 || (!available && !per_kernel)) return;
  p->kernel_arg_info = malloc(n);
  if (!p->kernel_arg_info) return; /* the information then is not available */
  for (uint32_t i = 0; i < n; i++)
    p->kernel_arg_info[i] = per_kernel ? per_kernel[i] : 1;
}

/* A linked kernel's arguments are described when the compiled object or
 * library it comes from had them described. */
static void program_link_arg_info(cl_program out, cl_uint num_inputs, const cl_program *inputs) {
  uint32_t n = out->fatbin ? out->fatbin->num_kernels : 0;
  unsigned char *per_kernel = n ? calloc(n, 1) : NULL;
  for (uint32_t k = 0; per_kernel && k < n; k++)
    for (cl_uint i = 0; i < num_inputs; i++) {
      const struct aquila_fatbin *in = inputs[i]->fatbin;
      const struct aquila_fatbin_kernel *m =
          aquila_fatbin_find_kernel(in, out->fatbin->kernels[k].name);
      if (m && inputs[i]->kernel_arg_info && inputs[i]->kernel_arg_info[m - in->kernels])
        per_kernel[k] = 1;
    }
  program_set_arg_info(out, 0, per_kernel);
  free(per_kernel);
}

/* What the compiler builds of p: its source, or its SPIR-V module with the
 * specialization constants set on it applied (*il_copy, for the caller to
 * free; NULL when the module is p's own). CL_OUT_OF_HOST_MEMORY when no
 * copy could be made. */
static cl_int compile_input_of(cl_program p, const char *options, struct aquila_compile_input *in,
                               void **il_copy) {
  *in = (struct aquila_compile_input){
      .source = p->source, .il = p->il, .il_size = p->il_size, .options = options};
  *il_copy = NULL;
  if (!p->il || !p->num_spec_constants) return CL_SUCCESS;
  pthread_mutex_lock(&p->lock);
  *il_copy = spirv_module_specialize(p->il, p->il_size, p->num_spec_constants,
                                     p->spec_constant_ids, p->spec_constant_values);
  pthread_mutex_unlock(&p->lock);
  in->il = *il_copy;
  return *il_copy ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
}

/* A SPIR-V module (OpenCL 2.1, cl_khr_il_program): kept as given; the
 * translator reads it at clBuildProgram or clCompileProgram, whose log says
 * what it could not take. */
AQUILA_API cl_program clCreateProgramWithIL(cl_context context, const void *il, size_t length,
                                            cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  cl_program p = NULL;
  if (!object_is(context, OBJECT_CONTEXT)) {
    err = CL_INVALID_CONTEXT;
  } else if (!il || !length) {
    err = CL_INVALID_VALUE;
  } else if (!spirv_module_check(il, length)) {
    debug_log("clCreateProgramWithIL: the %zu bytes are not a SPIR-V module", length);
    err = CL_INVALID_VALUE;
  } else if (!(p = program_new(context, context->devices, context->num_devices)) ||
             !(p->il = malloc(length))) {
    if (p) clReleaseProgram(p);
    p = NULL;
    err = CL_OUT_OF_HOST_MEMORY;
  } else {
    memcpy(p->il, il, length);
    p->il_size = length;
    p->created_from_source = 1;
  }
  if (errcode_ret) *errcode_ret = err;
  return p;
}

AQUILA_API cl_int clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id,
                                                     size_t spec_size, const void *spec_value) {
  if (!object_is(program, OBJECT_PROGRAM) || !program->il) return CL_INVALID_PROGRAM;
  size_t bytes = 0;
  if (!spirv_module_spec_constant_size(program->il, program->il_size, spec_id, &bytes))
    return CL_INVALID_SPEC_ID;
  if (!spec_value || spec_size != bytes || spec_size > 8) return CL_INVALID_VALUE;
  uint64_t value = 0;
  memcpy(&value, spec_value, spec_size); /* little-endian: zero-extended */
  pthread_mutex_lock(&program->lock);
  size_t i = 0;
  while (i < program->num_spec_constants && program->spec_constant_ids[i] != spec_id)
    i++;
  cl_int err = CL_SUCCESS;
  if (i == program->num_spec_constants) {
    uint32_t *ids = realloc(program->spec_constant_ids, (i + 1) * sizeof *ids);
    if (ids) program->spec_constant_ids = ids;
    uint64_t *values = ids ? realloc(program->spec_constant_values, (i + 1) * sizeof *values)
                           : NULL;
    if (values) program->spec_constant_values = values;
    if (!ids || !values)
      err = CL_OUT_OF_HOST_MEMORY;
    else
      program->num_spec_constants++;
  }
  if (err == CL_SUCCESS) {
    program->spec_constant_ids[i] = spec_id;
    program->spec_constant_values[i] = value;
  }
  pthread_mutex_unlock(&program->lock);
  return err;
}

AQUILA_API cl_program clCreateProgramWithSource(cl_context context, cl_uint count,
                                                const char **strings, const size_t *lengths,
                                                cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  if (!object_is(context, OBJECT_CONTEXT)) {
    err = CL_INVALID_CONTEXT;
    goto fail;
  }
  if (count == 0 || !strings) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  size_t total = 0;
  for (cl_uint i = 0; i < count; i++) {
    if (!strings[i]) {
      err = CL_INVALID_VALUE;
      goto fail;
    }
    total += lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
  }
  cl_program p = program_new(context, context->devices, context->num_devices);
  char *src = malloc(total + 1);
  if (!p || !src) {
    free(src);
    if (p) clReleaseProgram(p);
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  size_t off = 0;
  for (cl_uint i = 0; i < count; i++) {
    size_t len = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
    memcpy(src + off, strings[i], len);
    off += len;
  }
  src[off] = 0;
  p->source = src;
  p->created_from_source = 1;
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return p;
fail:
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

AQUILA_API cl_program clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                const cl_device_id *device_list,
                                                const size_t *lengths,
                                                const unsigned char **binaries,
                                                cl_int *binary_status, cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  if (!object_is(context, OBJECT_CONTEXT)) {
    err = CL_INVALID_CONTEXT;
    goto fail;
  }
  if (num_devices == 0 || !device_list || !lengths || !binaries) {
    err = CL_INVALID_VALUE;
    goto fail;
  }
  for (cl_uint i = 0; i < num_devices; i++) {
    if (!device_is_valid(device_list[i]) || !context_has_device(context, device_list[i])) {
      err = CL_INVALID_DEVICE;
      goto fail;
    }
    if (lengths[i] == 0 || !binaries[i]) {
      err = CL_INVALID_VALUE;
      goto fail;
    }
  }
  cl_program p = program_new(context, device_list, num_devices);
  if (!p) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto fail;
  }
  for (cl_uint i = 0; i < num_devices; i++) {
    char reason[256] = "";
    struct aquila_fatbin *fb = NULL;
    cl_int st = CL_SUCCESS;
    if (aquila_fatbin_read(binaries[i], lengths[i], &fb, reason, sizeof reason) != 0) {
      debug_log("clCreateProgramWithBinary: device %u: %s", i, reason);
      st = CL_INVALID_BINARY;
    } else if (!aquila_fatbin_select_cpu_code(fb, device_code_target(device_list[i])) &&
               !aquila_fatbin_find_code(fb, "bitcode")) {
      debug_log("clCreateProgramWithBinary: device %u: no code object for %s and no bitcode", i,
                device_code_target(device_list[i]));
      st = CL_INVALID_BINARY;
    }
    if (st == CL_SUCCESS && !p->fatbin) {
      p->fatbin = fb;
      fb = NULL;
    }
    aquila_fatbin_destroy(fb);
    if (binary_status) binary_status[i] = st;
    if (st != CL_SUCCESS) err = st;
  }
  if (err != CL_SUCCESS) {
    clReleaseProgram(p);
    goto fail;
  }
  cl_program_binary_type type =
      p->fatbin->kind == AQUILA_FATBIN_COMPILED_OBJECT ? CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
      : p->fatbin->kind == AQUILA_FATBIN_LIBRARY       ? CL_PROGRAM_BINARY_TYPE_LIBRARY
                                                       : CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
  for (cl_uint i = 0; i < num_devices; i++)
    p->per_device[i].binary_type = type;
  if (p->fatbin->source) p->source = strdup(p->fatbin->source);
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return p;
fail:
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

AQUILA_API cl_program clCreateProgramWithBuiltInKernels(cl_context context, cl_uint num_devices,
                                                        const cl_device_id *device_list,
                                                        const char *kernel_names,
                                                        cl_int *errcode_ret) {
  cl_int err = CL_INVALID_VALUE; /* CL_DEVICE_BUILT_IN_KERNELS is empty */
  if (!object_is(context, OBJECT_CONTEXT))
    err = CL_INVALID_CONTEXT;
  else if (!num_devices || !device_list || !kernel_names)
    err = CL_INVALID_VALUE;
  else
    for (cl_uint i = 0; i < num_devices; i++)
      if (!device_is_valid(device_list[i]) || !context_has_device(context, device_list[i]))
        err = CL_INVALID_DEVICE;
  if (errcode_ret) *errcode_ret = err;
  return NULL;
}

AQUILA_API cl_int clRetainProgram(cl_program program) {
  if (!object_is(program, OBJECT_PROGRAM)) return CL_INVALID_PROGRAM;
  object_retain(&program->header);
  return CL_SUCCESS;
}

AQUILA_API cl_int clReleaseProgram(cl_program program) {
  if (!object_is(program, OBJECT_PROGRAM)) return CL_INVALID_PROGRAM;
  if (!object_release(&program->header)) return CL_SUCCESS;
  program_unload(program);
  for (cl_uint i = 0; i < program->num_retired; i++)
    destroy_executable(&program->retired[i]);
  free(program->retired);
  free(program->kernel_arg_info);
  free(program->binary);
  for (cl_uint i = 0; i < program->num_devices; i++)
    free(program->per_device[i].log);
  aquila_fatbin_destroy(program->fatbin);
  free(program->source);
  free(program->il);
  free(program->spec_constant_ids);
  free(program->spec_constant_values);
  free(program->options);
  free(program->devices);
  free(program->per_device);
  pthread_mutex_destroy(&program->lock);
  pthread_mutex_destroy(&program->codegen_lock);
  cl_context ctx = program->context;
  object_free(program);
  clReleaseContext(ctx);
  return CL_SUCCESS;
}

static int program_device_index(cl_program p, cl_device_id d) {
  for (cl_uint i = 0; i < p->num_devices; i++)
    if (p->devices[i] == d) return (int)i;
  return -1;
}

static void append_log(struct program_device *pd, const char *text) {
  size_t old = pd->log ? strlen(pd->log) : 0, add = strlen(text);
  char *log = realloc(pd->log, old + add + 1);
  if (!log) return;
  memcpy(log + old, text, add + 1);
  pd->log = log;
}

uint64_t program_variables_size(cl_program p) {
  const struct aquila_fatbin_code *c =
      p->fatbin ? aquila_fatbin_find_code(p->fatbin, "program-variables") : NULL;
  uint64_t bytes = 0;
  for (size_t i = 0; c && i < 8 && i < c->size; i++)
    bytes |= (uint64_t)((const unsigned char *)c->data)[i] << (8 * i);
  return bytes;
}

int program_compiled_whole(cl_program p) {
  return program_variables_size(p) ||
         (p->fatbin && aquila_fatbin_find_code(p->fatbin, "sub-groups") != NULL);
}

/* AQUILA_CODEGEN=eager: all machine code at the build, as before code on
 * demand (for comparisons, and for an application that wants every
 * kernel's code ready before its first launch). */
static int codegen_on_demand(void) {
  const char *mode = getenv("AQUILA_CODEGEN");
  return !(mode && !strcmp(mode, "eager"));
}

static cl_int load_code(cl_program p, cl_uint i, const struct aquila_fatbin_code *code,
                        struct loaded_code *out) {
  cl_device_id d = p->devices[i];
  struct program_device *pd = &p->per_device[i];
  out->image = NULL;
  out->image_size = 0;
  uint64_t t_load = trace_begin();
  if (hsa_code_object_reader_create_from_memory(code->data, code->size, &out->reader) !=
      HSA_STATUS_SUCCESS) {
    append_log(pd, "error: the device rejected the code object\n");
    return CL_BUILD_PROGRAM_FAILURE;
  }
  hsa_status_t st = hsa_executable_create_alt(
      HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &out->executable);
  if (st == HSA_STATUS_SUCCESS)
    st = hsa_executable_load_agent_code_object(out->executable, d->agent, out->reader, NULL, NULL);
  if (st == HSA_STATUS_SUCCESS) st = hsa_executable_freeze(out->executable, NULL);
  if (st != HSA_STATUS_SUCCESS) {
    const char *msg = NULL;
    hsa_status_string(st, &msg);
    append_log(pd, "error: loading the code object failed: ");
    append_log(pd, msg ? msg : "unknown HSA error");
    append_log(pd, "\n");
    hsa_code_object_reader_destroy(out->reader);
    trace_build_step("load code object", t_load, 0, p->fatbin, d->name);
    return CL_BUILD_PROGRAM_FAILURE;
  }
  trace_build_step("load code object", t_load, 1, p->fatbin, d->name);
  return CL_SUCCESS;
}

static int kernel_symbol(hsa_executable_t e, hsa_agent_t agent, const char *name,
                         uint64_t *object, uint32_t *private_size);

/* Machine code that another process made on demand for some of the
 * kernels, carried in the binary it returned (entries "<target>+<n>",
 * program_binary_image): each object is loaded, and the kernels it
 * defines run it instead of having their code made again. An object that
 * does not load is left, and its kernels get code as usual. */
static void load_carried_code(cl_program p, cl_uint i, const char *target) {
  struct program_device *pd = &p->per_device[i];
  size_t len = strlen(target);
  for (uint32_t c = 0; c < p->fatbin->num_codes; c++) {
    const struct aquila_fatbin_code *code = &p->fatbin->codes[c];
    if (strncmp(code->target, target, len) || code->target[len] != '+') continue;
    struct loaded_code *grown =
        realloc(pd->on_demand, (pd->num_on_demand + 1) * sizeof *pd->on_demand);
    if (!grown) return;
    pd->on_demand = grown;
    struct loaded_code *loaded = &pd->on_demand[pd->num_on_demand];
    memset(loaded, 0, sizeof *loaded);
    if (load_code(p, i, code, loaded) != CL_SUCCESS) continue;
    uint32_t used = 0;
    for (uint32_t k = 0; k < p->fatbin->num_kernels; k++) {
      uint64_t object;
      uint32_t private_size;
      if (pd->kernel_code[k] < 0 &&
          kernel_symbol(loaded->executable, p->devices[i]->agent, p->fatbin->kernels[k].name,
                        &object, &private_size) == 0) {
        pd->kernel_code[k] = (int32_t)pd->num_on_demand;
        used++;
      }
    }
    if (!used) {
      destroy_code(loaded);
      continue;
    }
    keep_image(loaded, code);
    pd->num_on_demand++;
    debug_log("program: machine code for %u kernel%s carried in its binary (%s)", used,
              used == 1 ? "" : "s", code->target);
  }
}

/* Loads the device's code object from the fat binary; without one, readies
 * the device for code on demand, or (eager) compiles the portable bitcode
 * for this CPU first. */
cl_int program_load_for_device(cl_program p, cl_uint i) {
  cl_device_id d = p->devices[i];
  struct program_device *pd = &p->per_device[i];
  const char *target = device_code_target(d);
  const struct aquila_fatbin_code *code = aquila_fatbin_select_cpu_code(p->fatbin, target);
  /* A program with writable program-scope variables runs one code object
   * per device, whose variables every kernel shares, and one with
   * sub-groups its vector versions from the start: never code by kernel. */
  if (!code && codegen_on_demand() && aquila_fatbin_find_code(p->fatbin, "bitcode") &&
      !program_compiled_whole(p)) {
    uint32_t n = p->fatbin->num_kernels;
    pd->kernel_code = malloc((n ? n : 1) * sizeof *pd->kernel_code);
    pd->upgraded = calloc(n ? n : 1, sizeof *pd->upgraded);
    if (!pd->kernel_code || !pd->upgraded) {
      free(pd->kernel_code);
      free(pd->upgraded);
      forget_code(pd);
      return CL_OUT_OF_HOST_MEMORY;
    }
    for (uint32_t k = 0; k < n; k++)
      pd->kernel_code[k] = -1;
    pd->specialized = specialize_table_create(p->fatbin);
    pd->loaded = 1;
    load_carried_code(p, i, target);
    return CL_SUCCESS;
  }
  if (!code) {
    char *log = NULL;
    uint64_t t0 = trace_begin();
    enum aquila_compile_status st = aquila_compile_from_bitcode(p->fatbin, target, &log);
    trace_build_step("code generation from bitcode", t0, st == AQUILA_COMPILE_OK, p->fatbin,
                     target);
    if (log) {
      append_log(pd, log);
      free(log);
    }
    if (st != AQUILA_COMPILE_OK) return CL_BUILD_PROGRAM_FAILURE;
    code = aquila_fatbin_find_code(p->fatbin, target);
    if (!code) return CL_BUILD_PROGRAM_FAILURE;
  }
  cl_int err = load_code(p, i, code, &pd->whole);
  if (err != CL_SUCCESS) return err;
  /* Versions for a work-group size are code objects of their own. */
  if (!program_compiled_whole(p)) pd->specialized = specialize_table_create(p->fatbin);
  pd->has_whole = 1;
  pd->loaded = 1;
  return CL_SUCCESS;
}

/* Caller holds p's codegen lock. */
static hsa_executable_t kernel_executable(cl_program p, cl_uint i, uint32_t k) {
  struct program_device *pd = &p->per_device[i];
  int32_t c = pd->kernel_code ? pd->kernel_code[k] : -1;
  return pd->has_whole ? pd->whole.executable
         : c >= 0      ? pd->on_demand[c].executable
                       : (hsa_executable_t){0};
}

hsa_executable_t program_kernel_executable(cl_program p, cl_uint i, uint32_t k) {
  /* Another thread may be adding code (and moving on_demand) meanwhile. */
  pthread_mutex_lock(&p->codegen_lock);
  hsa_executable_t e = kernel_executable(p, i, k);
  pthread_mutex_unlock(&p->codegen_lock);
  return e;
}

/* Whether a program is small enough that its other kernels' code comes
 * with the first one asked for: each request costs about 40 ms whatever
 * its size (the linker, the code generator's start, the round trip), and
 * a few small kernels add little to it, where the application is likely
 * to create them too (a scan's three passes, a reduction's two stages). */
#define SMALL_PROGRAM_KERNELS 8
#define SMALL_PROGRAM_SOURCE (16 * 1024)

static int program_is_small(const struct aquila_fatbin *fb) {
  return fb->num_kernels <= SMALL_PROGRAM_KERNELS && fb->source &&
         strlen(fb->source) <= SMALL_PROGRAM_SOURCE;
}

/* AQUILA_TIERS=0: every kernel's whole version at once, however long its
 * first launch waits for it (for comparisons). */
static int tiers_enabled(void) {
  const char *mode = getenv("AQUILA_TIERS");
  return !(mode && !strcmp(mode, "0"));
}

/* Code on demand for one device: one request for every kernel asked for
 * that the device lacks (and, in a small program, every other kernel it
 * lacks), loaded as one executable. */
static cl_int make_code_for_device(cl_program p, cl_uint i, const uint32_t *kernels,
                                   uint32_t num_kernels) {
  struct program_device *pd = &p->per_device[i];
  if (!pd->loaded || pd->has_whole) return CL_SUCCESS;
  uint32_t room = num_kernels + p->fatbin->num_kernels;
  const char **names = malloc((room ? room : 1) * sizeof *names);
  uint32_t *which = malloc((room ? room : 1) * sizeof *which);
  struct loaded_code *grown =
      realloc(pd->on_demand, (pd->num_on_demand + 1) * sizeof *pd->on_demand);
  if (grown) pd->on_demand = grown;
  if (!names || !which || !grown) {
    free(names);
    free(which);
    return CL_OUT_OF_HOST_MEMORY;
  }
  uint32_t n = 0;
  for (uint32_t j = 0; j < num_kernels; j++) {
    uint32_t k = kernels[j];
    int seen = 0;
    for (uint32_t m = 0; m < n && !seen; m++)
      seen = which[m] == k;
    if (pd->kernel_code[k] >= 0 || seen) continue;
    which[n] = k;
    names[n++] = p->fatbin->kernels[k].name;
  }
  uint32_t asked = n;
  if (n > 0 && program_is_small(p->fatbin))
    for (uint32_t k = 0; k < p->fatbin->num_kernels; k++) {
      int seen = pd->kernel_code[k] >= 0;
      for (uint32_t m = 0; m < n && !seen; m++)
        seen = which[m] == k;
      if (seen) continue;
      which[n] = k;
      names[n++] = p->fatbin->kernels[k].name;
    }
  cl_int err = CL_SUCCESS;
  while (n > 0) {
    const char *target = device_code_target(p->devices[i]);
    struct aquila_fatbin *built = NULL;
    char *log = NULL;
    uint64_t t0 = now_ns();
    int quick = 0;
    enum aquila_compile_status st = aquila_compile_kernels(
        p->fatbin, target, names, n, tiers_enabled() ? AQUILA_CODEGEN_QUICK_IF_LARGE : 0, &built,
        &quick, &log);
    if (st == AQUILA_COMPILE_FAILED && n > asked) {
      /* A kernel that came along failed: those asked for may still build. */
      free(log);
      aquila_fatbin_destroy(built);
      n = asked;
      continue;
    }
    trace_build_step(quick ? "code generation on demand (quick tier: scalar)"
                           : "code generation on demand",
                     t0, st == AQUILA_COMPILE_OK, built, names[0]);
    debug_log("machine code for %u kernel%s ('%s'%s) for %s: %s in %.1f ms%s", n, n == 1 ? "" : "s",
              names[0], n > 1 ? ", ..." : "", target, st == AQUILA_COMPILE_OK ? "made" : "failed",
              (double)(now_ns() - t0) / 1e6,
              quick ? " (quick tier: scalar code; the vector version follows in the background)"
                    : "");
    if (log && *log) {
      append_log(pd, log);
      debug_log("code generation log:\n%s", log);
    }
    free(log);
    const struct aquila_fatbin_code *code =
        st == AQUILA_COMPILE_OK ? aquila_fatbin_find_code(built, target) : NULL;
    if (!code) {
      err = st == AQUILA_COMPILE_NO_MEMORY ? CL_OUT_OF_HOST_MEMORY : CL_INVALID_PROGRAM_EXECUTABLE;
    } else if ((err = load_code(p, i, code, &pd->on_demand[pd->num_on_demand])) == CL_SUCCESS) {
      keep_image(&pd->on_demand[pd->num_on_demand], code);
      for (uint32_t m = 0; m < n; m++)
        pd->kernel_code[which[m]] = (int32_t)pd->num_on_demand;
      pd->num_on_demand++;
      if (quick) {
        /* 1: quick-tier code, its vector version still to come. */
        for (uint32_t m = 0; m < n; m++)
          atomic_store_explicit(&pd->upgraded[which[m]], 1, memory_order_relaxed);
        tiers_queue_upgrade(p, i, which, n);
      }
    }
    aquila_fatbin_destroy(built);
    break;
  }
  free(names);
  free(which);
  return err;
}

struct upgrade_build {
  cl_device_id device;
  const char *target;
  uint32_t num_kernels;
  uint32_t *kernels;           /* indices into the program's fatbin */
  struct aquila_fatbin *copy;  /* the program's fat binary, to build from */
  const char **names;          /* the kernels' names, in copy */
  struct aquila_fatbin *built; /* the vector version */
  int specialized;             /* a version for launches with facts only */
  struct aquila_launch_facts facts;
  char *log;
  enum aquila_compile_status status;
  uint64_t t0;
};

void upgrade_build_free(struct upgrade_build *b) {
  if (!b) return;
  free(b->log);
  aquila_fatbin_destroy(b->built);
  aquila_fatbin_destroy(b->copy);
  free(b->names);
  free(b->kernels);
  free(b);
}

static struct upgrade_build *build_prepare(cl_program p, cl_uint i, const uint32_t *kernels,
                                          uint32_t num_kernels, int specialized) {
  struct program_device *pd = &p->per_device[i];
  struct upgrade_build *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->device = p->devices[i];
  b->target = device_code_target(b->device);
  b->num_kernels = num_kernels;
  b->kernels = malloc((num_kernels ? num_kernels : 1) * sizeof *b->kernels);
  b->names = calloc(num_kernels ? num_kernels : 1, sizeof *b->names);
  b->t0 = now_ns();
  if (!b->kernels || !b->names) {
    upgrade_build_free(b);
    return NULL;
  }
  memcpy(b->kernels, kernels, num_kernels * sizeof *kernels);
  /* The compiler fills layouts into the fat binary it is given, and the
   * application may create kernels (which does that to p->fatbin) while
   * this builds: it builds from a copy, and needs nothing of p until it
   * is done. Inside a busy section: a fork waits for the lock to be let go
   * (runtime/fork.c). */
  runtime_busy_begin();
  pthread_mutex_lock(&p->codegen_lock);
  if (specialized ? pd->loaded && pd->specialized : pd->loaded && !pd->has_whole && pd->upgraded) {
    void *data = NULL;
    size_t size = 0;
    char err[128];
    if (aquila_fatbin_write(p->fatbin, &data, &size) != 0 ||
        aquila_fatbin_read(data, size, &b->copy, err, sizeof err) != 0)
      b->copy = NULL;
    free(data);
  }
  pthread_mutex_unlock(&p->codegen_lock);
  runtime_busy_end();
  if (!b->copy) {
    upgrade_build_free(b);
    return NULL;
  }
  for (uint32_t m = 0; m < num_kernels; m++)
    b->names[m] = b->copy->kernels[kernels[m]].name;
  b->specialized = specialized;
  return b;
}

struct upgrade_build *program_upgrade_prepare(cl_program p, cl_uint i, const uint32_t *kernels,
                                              uint32_t num_kernels) {
  return build_prepare(p, i, kernels, num_kernels, 0);
}

struct upgrade_build *program_specialize_prepare(cl_program p, cl_uint i, uint32_t k,
                                                 const uint32_t local_size[3]) {
  struct upgrade_build *b = build_prepare(p, i, &k, 1, 1);
  if (b) memcpy(b->facts.local_size, local_size, sizeof b->facts.local_size);
  return b;
}

void upgrade_build_run(struct upgrade_build *b, int urgent) {
  unsigned flags = AQUILA_CODEGEN_UPGRADE | (urgent ? 0 : AQUILA_CODEGEN_BACKGROUND);
  if (b->specialized)
    b->status = aquila_compile_kernels_specialized(b->copy, b->target, b->names, b->num_kernels,
                                                   &b->facts, flags, &b->built, &b->log);
  else
    b->status = aquila_compile_kernels(b->copy, b->target, b->names, b->num_kernels, flags,
                                       &b->built, NULL, &b->log);
  trace_build_step(b->specialized ? "code generation in the background (version for a "
                                    "work-group size)"
                   : urgent       ? "code generation for a running launch of quick code (vector "
                                    "version)"
                                  : "code generation in the background (vector version)",
                   b->t0, b->status == AQUILA_COMPILE_OK, b->built, b->names[0]);
}

/* Whether kernel k's layout (what the runtime and the application's
 * arguments rely on) is the same in both. */
static int same_layout(const struct aquila_fatbin_kernel *a, const struct aquila_fatbin_kernel *b) {
  if (a->num_args != b->num_args || a->kernarg_size != b->kernarg_size ||
      a->local_mem_size != b->local_mem_size ||
      a->hidden_kernarg_offset != b->hidden_kernarg_offset)
    return 0;
  for (uint32_t j = 0; j < a->num_args; j++)
    if (a->args[j].offset != b->args[j].offset || a->args[j].size != b->args[j].size) return 0;
  return 1;
}

/* Loads code as one more executable of device i, at
 * pd->on_demand[pd->num_on_demand] (the caller counts it): NULL, or why
 * not. Caller holds the codegen lock. */
static const char *load_more_code(cl_program p, cl_uint i, const struct aquila_fatbin_code *code) {
  struct program_device *pd = &p->per_device[i];
  struct loaded_code *grown = realloc(pd->on_demand, (pd->num_on_demand + 1) * sizeof *grown);
  if (!grown) return "out of memory";
  pd->on_demand = grown;
  if (load_code(p, i, code, &pd->on_demand[pd->num_on_demand]) != CL_SUCCESS)
    return "its code object did not load";
  keep_image(&pd->on_demand[pd->num_on_demand], code);
  return NULL;
}

/* Kernel name's object and stack bytes in executable e: 0, or -1. */
static int kernel_symbol(hsa_executable_t e, hsa_agent_t agent, const char *name,
                         uint64_t *object, uint32_t *private_size) {
  hsa_executable_symbol_t sym;
  *object = 0;
  *private_size = 0;
  if (hsa_executable_get_symbol_by_name(e, name, &agent, &sym) != HSA_STATUS_SUCCESS ||
      hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, object) !=
          HSA_STATUS_SUCCESS ||
      hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                     private_size) != HSA_STATUS_SUCCESS ||
      !*object)
    return -1;
  return 0;
}

/* Kernel k's kernel object on device i as the program has it now; 0 when
 * none. Caller holds the codegen lock. */
static uint64_t kernel_object_of(cl_program p, cl_uint i, uint32_t k, const char *name) {
  uint64_t object = 0;
  uint32_t private_size = 0;
  if (kernel_symbol(kernel_executable(p, i, k), p->devices[i]->agent, name, &object,
                    &private_size) != 0)
    return 0;
  return object;
}

void program_upgrade_install(cl_program p, cl_uint i, struct upgrade_build *b) {
  struct program_device *pd = &p->per_device[i];
  double made_ms = (double)(now_ns() - b->t0) / 1e6;
  const struct aquila_fatbin_code *code =
      b->status == AQUILA_COMPILE_OK ? aquila_fatbin_find_code(b->built, b->target) : NULL;
  const char *why = code ? NULL : "its build failed";
  runtime_busy_begin();
  pthread_mutex_lock(&p->codegen_lock);
  if (!why && !(pd->loaded && !pd->has_whole && pd->upgraded)) why = "the program changed";
  for (uint32_t m = 0; m < b->num_kernels && !why; m++) {
    const struct aquila_fatbin_kernel *built = aquila_fatbin_find_kernel(b->built, b->names[m]);
    if (!built || !same_layout(&p->fatbin->kernels[b->kernels[m]], built))
      why = "its layout differs";
  }
  if (!why) why = load_more_code(p, i, code);
  if (!why) {
    struct loaded_code *loaded = &pd->on_demand[pd->num_on_demand];
    uint32_t placed = 0;
    for (uint32_t m = 0; m < b->num_kernels; m++) {
      hsa_agent_t agent = b->device->agent;
      uint64_t object = 0;
      uint32_t private_size = 0;
      if (kernel_symbol(loaded->executable, agent, b->names[m], &object, &private_size) != 0 ||
          private_size > AQUILA_PRIVATE_SEGMENT_MAX) {
        /* This one keeps its quick code (a launch would be refused with
         * the whole version's stack). */
        debug_log("kernel '%s': the vector version is not used (no kernel object, or %u bytes of "
                  "stack per work-group)",
                  b->names[m], private_size);
        continue;
      }
      uint64_t quick = kernel_object_of(p, i, b->kernels[m], b->names[m]);
      atomic_store_explicit(&pd->upgraded[b->kernels[m]], object, memory_order_release);
      pd->kernel_code[b->kernels[m]] = (int32_t)pd->num_on_demand;
      placed++;
      /* A launch of the quick code running now (its first launch may be a
       * long one) takes the vector version from its next range of
       * work-groups; the CPU agent can, a remote one keeps its code. */
      hsa_status_t st = quick ? hsa_ven_aquila_kernel_object_supersede(agent, quick, object)
                              : HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
      if (st != HSA_STATUS_SUCCESS && st != HSA_STATUS_ERROR_INVALID_AGENT)
        debug_log("kernel '%s': running launches keep the quick tier's code (HSA status 0x%x)",
                  b->names[m], (unsigned)st);
    }
    /* Kept even if no kernel took it: the loaded code goes with the program. */
    pd->num_on_demand++;
    debug_log("machine code for %u kernel%s ('%s'%s): the vector version, made in the "
              "background in %.1f ms, replaces the quick tier's scalar code from the next "
              "launch, and in running launches from their next work-groups (%u of %u)",
              b->num_kernels, b->num_kernels == 1 ? "" : "s", b->names[0],
              b->num_kernels > 1 ? ", ..." : "", made_ms, placed, b->num_kernels);
  }
  pthread_mutex_unlock(&p->codegen_lock);
  runtime_busy_end();
  if (why)
    debug_log("kernel '%s'%s: the vector version is not used (%s); the quick tier's scalar "
              "code stays%s%s",
              b->names[0], b->num_kernels > 1 ? " and others" : "", why,
              b->log && *b->log ? ":\n" : "", b->log ? b->log : "");
}

/* Loads built (a fat binary with kernel k's version for work-groups of
 * size) on device i and makes it v's object, or marks v failed: the
 * reason, or NULL. Caller holds p's codegen lock. */
static const char *install_specialized(cl_program p, cl_uint i, uint32_t k,
                                       const struct aquila_fatbin *built,
                                       struct specialized_version *v) {
  struct program_device *pd = &p->per_device[i];
  cl_device_id d = p->devices[i];
  const char *name = p->fatbin->kernels[k].name, *why = NULL;
  const struct aquila_fatbin_code *code = aquila_fatbin_find_code(built, device_code_target(d));
  const struct aquila_fatbin_kernel *meta = aquila_fatbin_find_kernel(built, name);
  if (!(pd->loaded && pd->specialized))
    why = "the program changed";
  else if (!code || !meta)
    why = "no code for it";
  else if (!same_layout(&p->fatbin->kernels[k], meta))
    why = "its layout differs";
  if (!why) why = load_more_code(p, i, code);
  if (!why) {
    /* Kept even if unused: the loaded code goes with the program. */
    struct loaded_code *loaded = &pd->on_demand[pd->num_on_demand++];
    uint64_t object = 0;
    uint32_t private_size = 0;
    if (kernel_symbol(loaded->executable, d->agent, name, &object, &private_size) != 0)
      why = "no kernel object";
    else if (private_size > AQUILA_PRIVATE_SEGMENT_MAX)
      why = "its stack is over the limit";
    else {
      atomic_store_explicit(&v->object, object, memory_order_release);
      atomic_store_explicit(&v->state, SPECIALIZED_READY, memory_order_release);
    }
  }
  if (why) atomic_store_explicit(&v->state, SPECIALIZED_FAILED, memory_order_release);
  return why;
}

void program_specialize_install(cl_program p, cl_uint i, struct upgrade_build *b,
                                struct specialized_version *v) {
  double made_ms = (double)(now_ns() - b->t0) / 1e6;
  const uint32_t *size = b->facts.local_size;
  runtime_busy_begin();
  pthread_mutex_lock(&p->codegen_lock);
  const char *why = b->status == AQUILA_COMPILE_OK
                        ? install_specialized(p, i, b->kernels[0], b->built, v)
                        : "its build failed";
  if (b->status != AQUILA_COMPILE_OK)
    atomic_store_explicit(&v->state, SPECIALIZED_FAILED, memory_order_release);
  pthread_mutex_unlock(&p->codegen_lock);
  runtime_busy_end();
  if (why)
    debug_log("kernel '%s': no version for work-groups of %u x %u x %u (%s); launches of that "
              "size keep its usual code%s%s",
              b->names[0], size[0], size[1], size[2], why, b->log && *b->log ? ":\n" : "",
              b->log ? b->log : "");
  else
    debug_log("kernel '%s': its version for work-groups of %u x %u x %u, made in %.1f ms, runs "
              "the launches of that size from the next one",
              b->names[0], size[0], size[1], size[2], made_ms);
}

int program_specialize_from_cache(cl_program p, cl_uint i, uint32_t k,
                                  const uint32_t local_size[3], struct specialized_version *v) {
  struct aquila_launch_facts facts;
  memcpy(facts.local_size, local_size, sizeof facts.local_size);
  const char *name = p->fatbin->kernels[k].name;
  struct aquila_fatbin *built = NULL;
  char *log = NULL;
  int ready = 0;
  runtime_busy_begin();
  pthread_mutex_lock(&p->codegen_lock);
  if (p->per_device[i].loaded && p->per_device[i].specialized &&
      aquila_compile_kernels_specialized(p->fatbin, device_code_target(p->devices[i]), &name, 1,
                                         &facts, AQUILA_CODEGEN_CACHED_ONLY, &built,
                                         &log) == AQUILA_COMPILE_OK) {
    const char *why = install_specialized(p, i, k, built, v);
    ready = !why;
    if (why)
      debug_log("kernel '%s': its cached version for work-groups of %u x %u x %u is not used (%s)",
                name, local_size[0], local_size[1], local_size[2], why);
    else
      debug_log("kernel '%s': its version for work-groups of %u x %u x %u, from the kernel cache, "
                "runs the launches of that size",
                name, local_size[0], local_size[1], local_size[2]);
  }
  pthread_mutex_unlock(&p->codegen_lock);
  runtime_busy_end();
  aquila_fatbin_destroy(built);
  free(log);
  return ready;
}

cl_int program_make_kernel_code(cl_program p, cl_uint i, const uint32_t *kernels,
                                uint32_t num_kernels) {
  pthread_mutex_lock(&p->codegen_lock);
  cl_int err = make_code_for_device(p, i, kernels, num_kernels);
  pthread_mutex_unlock(&p->codegen_lock);
  return err;
}

AQUILA_API cl_int clBuildProgram(cl_program program, cl_uint num_devices,
                                 const cl_device_id *device_list, const char *options,
                                 void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                 void *user_data) {
  if (!object_is(program, OBJECT_PROGRAM)) return CL_INVALID_PROGRAM;
  if ((num_devices == 0) != (device_list == NULL)) return CL_INVALID_VALUE;
  if (!pfn_notify && user_data) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_devices; i++)
    if (!device_is_valid(device_list[i]) || program_device_index(program, device_list[i]) < 0)
      return CL_INVALID_DEVICE;
  if (!program->source && !program->il && !program->fatbin) return CL_INVALID_PROGRAM;
  pthread_mutex_lock(&program->lock);
  if (program->building || atomic_load(&program->num_kernels_attached) > 0) {
    pthread_mutex_unlock(&program->lock);
    return CL_INVALID_OPERATION;
  }
  program->building = 1;
  pthread_mutex_unlock(&program->lock);

  cl_int err = CL_SUCCESS;
  free(program->options);
  program->options = strdup(options ? options : "");
  int from_source = program->created_from_source;
  program_unload(program);
  for (cl_uint i = 0; i < program->num_devices; i++) {
    free(program->per_device[i].log);
    program->per_device[i].log = NULL;
    program->per_device[i].status = CL_BUILD_IN_PROGRESS;
  }
  if (from_source) {
    struct aquila_compile_input in;
    void *il_copy;
    struct aquila_fatbin *fb = NULL;
    char *log = NULL;
    uint64_t t0 = trace_begin();
    enum aquila_compile_status st = AQUILA_COMPILE_NO_MEMORY;
    if (compile_input_of(program, options, &in, &il_copy) == CL_SUCCESS) {
      in.code_on_demand = codegen_on_demand();
      st = aquila_compile(&in, &fb, &log);
    }
    free(il_copy);
    trace_build_step("clBuildProgram: compile", t0, st == AQUILA_COMPILE_OK, fb, options);
    for (cl_uint i = 0; i < program->num_devices; i++)
      append_log(&program->per_device[i], log ? log : "");
    if (log && *log) debug_log("build log:\n%s", log);
    free(log);
    if (st == AQUILA_COMPILE_OK) {
      aquila_fatbin_destroy(program->fatbin);
      program->fatbin = fb;
    } else {
      err = st == AQUILA_COMPILE_INVALID_OPTIONS ? CL_INVALID_BUILD_OPTIONS
            : st == AQUILA_COMPILE_UNAVAILABLE   ? CL_COMPILER_NOT_AVAILABLE
            : st == AQUILA_COMPILE_NO_MEMORY     ? CL_OUT_OF_HOST_MEMORY
                                                 : CL_BUILD_PROGRAM_FAILURE;
    }
  } else if (program->fatbin->kind != AQUILA_FATBIN_EXECUTABLE) {
    /* A compiled object or library from clCreateProgramWithBinary: link it
     * on its own into an executable. */
    const struct aquila_fatbin *inputs[1] = {program->fatbin};
    struct aquila_fatbin *fb = NULL;
    char *log = NULL;
    uint64_t t0 = trace_begin();
    enum aquila_compile_status st = aquila_link(inputs, 1, "", codegen_on_demand(), &fb, &log);
    trace_build_step("clBuildProgram: link", t0, st == AQUILA_COMPILE_OK, fb, "");
    for (cl_uint i = 0; i < program->num_devices; i++)
      append_log(&program->per_device[i], log ? log : "");
    free(log);
    if (st == AQUILA_COMPILE_OK) {
      aquila_fatbin_destroy(program->fatbin);
      program->fatbin = fb;
    } else {
      err = st == AQUILA_COMPILE_NO_MEMORY ? CL_OUT_OF_HOST_MEMORY : CL_BUILD_PROGRAM_FAILURE;
    }
  }
  for (cl_uint i = 0; i < program->num_devices; i++) {
    struct program_device *pd = &program->per_device[i];
    if (err == CL_SUCCESS) {
      cl_int st = program_load_for_device(program, i);
      if (st != CL_SUCCESS) err = st;
    }
    pd->status = err == CL_SUCCESS ? CL_BUILD_SUCCESS : CL_BUILD_ERROR;
    if (err == CL_SUCCESS) pd->binary_type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
    if (!pd->log) pd->log = strdup("");
  }
  program_set_arg_info(program, from_source && options_request_arg_info(options), NULL);
  pthread_mutex_lock(&program->lock);
  program->building = 0;
  pthread_mutex_unlock(&program->lock);
  if (pfn_notify) pfn_notify(program, user_data);
  return err;
}

static cl_int status_to_cl(enum aquila_compile_status st, cl_int invalid_options, cl_int failure) {
  switch (st) {
  case AQUILA_COMPILE_OK:
    return CL_SUCCESS;
  case AQUILA_COMPILE_INVALID_OPTIONS:
    return invalid_options;
  case AQUILA_COMPILE_UNAVAILABLE:
    return CL_COMPILER_NOT_AVAILABLE;
  case AQUILA_COMPILE_NO_MEMORY:
    return CL_OUT_OF_HOST_MEMORY;
  default:
    return failure;
  }
}

static cl_int check_device_list(cl_program p, cl_uint num_devices, const cl_device_id *list) {
  if ((num_devices == 0) != (list == NULL)) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_devices; i++)
    if (!device_is_valid(list[i]) || program_device_index(p, list[i]) < 0) return CL_INVALID_DEVICE;
  return CL_SUCCESS;
}

/* Marks the start of a compile or build; CL_INVALID_OPERATION while another
 * is running or kernels are attached. */
static cl_int begin_build(cl_program p) {
  pthread_mutex_lock(&p->lock);
  cl_int err = CL_SUCCESS;
  if (p->building || atomic_load(&p->num_kernels_attached) > 0)
    err = CL_INVALID_OPERATION;
  else
    p->building = 1;
  pthread_mutex_unlock(&p->lock);
  return err;
}

static void end_build(cl_program p) {
  pthread_mutex_lock(&p->lock);
  p->building = 0;
  pthread_mutex_unlock(&p->lock);
}

AQUILA_API cl_int clCompileProgram(cl_program program, cl_uint num_devices,
                                   const cl_device_id *device_list, const char *options,
                                   cl_uint num_input_headers, const cl_program *input_headers,
                                   const char **header_include_names,
                                   void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                   void *user_data) {
  if (!object_is(program, OBJECT_PROGRAM)) return CL_INVALID_PROGRAM;
  if ((num_devices == 0) != (device_list == NULL)) return CL_INVALID_VALUE;
  if ((num_input_headers == 0) != (input_headers == NULL) ||
      (num_input_headers == 0) != (header_include_names == NULL))
    return CL_INVALID_VALUE;
  if (!pfn_notify && user_data) return CL_INVALID_VALUE;
  cl_int err = check_device_list(program, num_devices, device_list);
  if (err) return err;
  for (cl_uint i = 0; i < num_input_headers; i++) {
    if (!object_is(input_headers[i], OBJECT_PROGRAM) || !input_headers[i]->source)
      return CL_INVALID_PROGRAM;
    if (!header_include_names[i]) return CL_INVALID_VALUE;
  }
  if (!program->created_from_source) return CL_INVALID_OPERATION;
  if ((err = begin_build(program)) != CL_SUCCESS) return err;

  const char **names = calloc(num_input_headers + 1, sizeof *names);
  const char **sources = calloc(num_input_headers + 1, sizeof *sources);
  if (!names || !sources) {
    free(names);
    free(sources);
    end_build(program);
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (cl_uint i = 0; i < num_input_headers; i++) {
    names[i] = header_include_names[i];
    sources[i] = input_headers[i]->source;
  }
  struct aquila_compile_input in;
  void *il_copy;
  struct aquila_fatbin *fb = NULL;
  char *log = NULL;
  uint64_t t0 = trace_begin(), t_compile = now_ns();
  enum aquila_compile_status st = AQUILA_COMPILE_NO_MEMORY;
  if (compile_input_of(program, options, &in, &il_copy) == CL_SUCCESS) {
    in.num_headers = num_input_headers;
    in.header_names = names;
    in.header_sources = sources;
    in.compile_only = 1;
    st = aquila_compile(&in, &fb, &log);
  }
  free(il_copy);
  trace_build_step("clCompileProgram", t0, st == AQUILA_COMPILE_OK, fb, options);
  debug_log("clCompileProgram: %zu bytes of %s, %u headers, options '%s': %.1f ms",
            program->source ? strlen(program->source) : program->il_size,
            program->source ? "source" : "SPIR-V", num_input_headers, options ? options : "",
            (double)(now_ns() - t_compile) / 1e6);
  free(names);
  free(sources);
  err = status_to_cl(st, CL_INVALID_COMPILER_OPTIONS, CL_COMPILE_PROGRAM_FAILURE);
  program_unload(program);
  free(program->options);
  program->options = strdup(options ? options : "");
  if (err == CL_SUCCESS) {
    aquila_fatbin_destroy(program->fatbin);
    program->fatbin = fb;
  }
  for (cl_uint i = 0; i < program->num_devices; i++) {
    struct program_device *pd = &program->per_device[i];
    free(pd->log);
    pd->log = strdup(log ? log : "");
    pd->status = err == CL_SUCCESS ? CL_BUILD_SUCCESS : CL_BUILD_ERROR;
    pd->binary_type =
        err == CL_SUCCESS ? CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT : CL_PROGRAM_BINARY_TYPE_NONE;
  }
  program_set_arg_info(program, err == CL_SUCCESS && options_request_arg_info(options), NULL);
  free(log);
  end_build(program);
  if (pfn_notify) pfn_notify(program, user_data);
  return err;
}

AQUILA_API cl_program clLinkProgram(cl_context context, cl_uint num_devices,
                                    const cl_device_id *device_list, const char *options,
                                    cl_uint num_input_programs, const cl_program *input_programs,
                                    void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                    void *user_data, cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  cl_program out = NULL;
  const struct aquila_fatbin **inputs = NULL;
  if (!object_is(context, OBJECT_CONTEXT)) {
    err = CL_INVALID_CONTEXT;
    goto done;
  }
  if ((num_devices == 0) != (device_list == NULL) || num_input_programs == 0 || !input_programs ||
      (!pfn_notify && user_data)) {
    err = CL_INVALID_VALUE;
    goto done;
  }
  for (cl_uint i = 0; i < num_input_programs; i++)
    if (!object_is(input_programs[i], OBJECT_PROGRAM) || input_programs[i]->context != context) {
      err = CL_INVALID_PROGRAM;
      goto done;
    }
  for (cl_uint i = 0; i < num_devices; i++)
    if (!device_is_valid(device_list[i]) || !context_has_device(context, device_list[i])) {
      err = CL_INVALID_DEVICE;
      goto done;
    }
  inputs = calloc(num_input_programs, sizeof *inputs);
  if (!inputs) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto done;
  }
  for (cl_uint i = 0; i < num_input_programs; i++) {
    struct aquila_fatbin *fb = input_programs[i]->fatbin;
    if (!fb || (fb->kind != AQUILA_FATBIN_COMPILED_OBJECT && fb->kind != AQUILA_FATBIN_LIBRARY)) {
      err = CL_INVALID_OPERATION;
      goto done;
    }
    inputs[i] = fb;
  }
  out = num_devices ? program_new(context, device_list, num_devices)
                    : program_new(context, context->devices, context->num_devices);
  if (!out) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto done;
  }
  struct aquila_fatbin *fb = NULL;
  char *log = NULL;
  uint64_t t0 = trace_begin();
  enum aquila_compile_status st =
      aquila_link(inputs, num_input_programs, options, codegen_on_demand(), &fb, &log);
  trace_build_step("clLinkProgram", t0, st == AQUILA_COMPILE_OK, fb, options);
  err = status_to_cl(st, CL_INVALID_LINKER_OPTIONS, CL_LINK_PROGRAM_FAILURE);
  out->options = strdup(options ? options : "");
  out->fatbin = fb;
  for (cl_uint i = 0; i < out->num_devices; i++) {
    struct program_device *pd = &out->per_device[i];
    pd->log = strdup(log ? log : "");
    if (err == CL_SUCCESS && fb->kind == AQUILA_FATBIN_EXECUTABLE) {
      cl_int lerr = program_load_for_device(out, i);
      if (lerr != CL_SUCCESS) err = CL_LINK_PROGRAM_FAILURE;
    }
    pd->status = err == CL_SUCCESS ? CL_BUILD_SUCCESS : CL_BUILD_ERROR;
    pd->binary_type = err != CL_SUCCESS                   ? CL_PROGRAM_BINARY_TYPE_NONE
                      : fb->kind == AQUILA_FATBIN_LIBRARY ? CL_PROGRAM_BINARY_TYPE_LIBRARY
                                                          : CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
  }
  if (err == CL_SUCCESS) program_link_arg_info(out, num_input_programs, input_programs);
  free(log);
  if (pfn_notify) pfn_notify(out, user_data);
  /* A failed link still returns a program, which carries the log. */
  if (err != CL_SUCCESS && err != CL_LINK_PROGRAM_FAILURE) {
    clReleaseProgram(out);
    out = NULL;
  }
done:
  free(inputs);
  if (errcode_ret) *errcode_ret = err;
  return out;
}

/* An executable binary given to clCreateProgramWithBinary that
 * clBuildProgram has not built (yet). */
static int unbuilt_executable_binary(const struct program_device *pd) {
  return pd->status == CL_BUILD_NONE && pd->binary_type == CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
}

static int program_built(cl_program p) {
  for (cl_uint i = 0; i < p->num_devices; i++)
    if ((p->per_device[i].status == CL_BUILD_SUCCESS &&
         p->per_device[i].binary_type == CL_PROGRAM_BINARY_TYPE_EXECUTABLE) ||
        unbuilt_executable_binary(&p->per_device[i]))
      return 1;
  return 0;
}

/* The specification has kernels made from a program after clBuildProgram,
 * but an executable binary already is an executable: applications (and
 * piglit) create kernels from it directly, and the major implementations
 * allow it. Such a binary is loaded here, on first use, as a build without
 * options would load it. */
int program_has_executable(cl_program p) {
  int found = 0;
  pthread_mutex_lock(&p->lock);
  for (cl_uint i = 0; i < p->num_devices; i++) {
    struct program_device *pd = &p->per_device[i];
    if (!p->building && unbuilt_executable_binary(pd)) {
      cl_int err = program_load_for_device(p, i);
      pd->status = err == CL_SUCCESS ? CL_BUILD_SUCCESS : CL_BUILD_ERROR;
      if (!pd->log) pd->log = strdup("");
    }
    if (pd->status == CL_BUILD_SUCCESS && pd->loaded) found = 1;
  }
  pthread_mutex_unlock(&p->lock);
  return found;
}

/* Whether on-demand code object j of pd is worth carrying in a binary:
 * some kernel runs it as its lasting code (not quick-tier code whose vector
 * version is still to come, which a reload would keep for good). */
static int carried_code_wanted(const struct program_device *pd, uint32_t num_kernels, uint32_t j) {
  if (!pd->on_demand[j].image) return 0;
  for (uint32_t k = 0; k < num_kernels; k++)
    if (pd->kernel_code[k] == (int32_t)j &&
        atomic_load_explicit(&pd->upgraded[k], memory_order_acquire) != 1)
      return 1;
  return 0;
}

/* The image CL_PROGRAM_BINARIES returns: the program's fat binary, with the
 * machine code made on demand so far as entries "<target>+<n>" (for each
 * device target once), which a program made from it loads
 * (load_carried_code) instead of making that code again: darktable keeps
 * its programs' binaries between runs. 0, or -1 on no memory. Caller
 * holds the codegen lock. */
static int program_binary_image(cl_program p, void **image, size_t *size) {
  struct aquila_fatbin *fb = NULL;
  uint32_t n = 0;
  int failed = 0;
  for (cl_uint i = 0; i < p->num_devices && !failed; i++) {
    const struct program_device *pd = &p->per_device[i];
    if (!pd->loaded || pd->has_whole || !pd->kernel_code) continue;
    const char *target = device_code_target(p->devices[i]);
    int seen = 0; /* sub-devices share their parent's target */
    for (cl_uint e = 0; e < i && !seen; e++)
      seen = !strcmp(device_code_target(p->devices[e]), target);
    for (uint32_t j = 0; j < pd->num_on_demand && !seen && !failed; j++) {
      if (!carried_code_wanted(pd, p->fatbin->num_kernels, j)) continue;
      if (!fb) {
        /* A copy of the program's, which stays as it is. */
        void *base = NULL;
        size_t base_size = 0;
        failed = aquila_fatbin_write(p->fatbin, &base, &base_size) ||
                 aquila_fatbin_read(base, base_size, &fb, NULL, 0);
        free(base);
        if (failed) break;
      }
      char name[300];
      snprintf(name, sizeof name, "%s+%u", target, n++);
      failed = aquila_fatbin_add_code(fb, name, pd->on_demand[j].image,
                                      pd->on_demand[j].image_size) != 0;
    }
  }
  if (!failed) failed = aquila_fatbin_write(fb ? fb : p->fatbin, image, size) != 0;
  aquila_fatbin_destroy(fb);
  return failed ? -1 : 0;
}

AQUILA_API cl_int clGetProgramInfo(cl_program program, cl_program_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret) {
  if (!object_is(program, OBJECT_PROGRAM)) return CL_INVALID_PROGRAM;
  cl_program p = program;
  switch (param_name) {
  case CL_PROGRAM_REFERENCE_COUNT:
    INFO_VALUE(cl_uint, atomic_load(&p->header.refcount));
  case CL_PROGRAM_CONTEXT:
    INFO_VALUE(cl_context, p->context);
  case CL_PROGRAM_NUM_DEVICES:
    INFO_VALUE(cl_uint, p->num_devices);
  case CL_PROGRAM_DEVICES:
    return info_copy(p->devices, p->num_devices * sizeof(cl_device_id), param_value_size,
                     param_value, param_value_size_ret);
  case CL_PROGRAM_SOURCE:
    INFO_STRING(p->source ? p->source : "");
  case CL_PROGRAM_BINARY_SIZES:
  case CL_PROGRAM_BINARIES: {
    void *image = NULL;
    size_t image_size = 0;
    pthread_mutex_lock(&p->codegen_lock);
    /* The sizes query measures the image and keeps it for the binaries
     * query that follows; a binaries query without one makes its own. */
    int written = !p->fatbin || (param_name == CL_PROGRAM_BINARIES && p->binary) ||
                  program_binary_image(p, &image, &image_size) == 0;
    if (written && p->fatbin && param_name == CL_PROGRAM_BINARY_SIZES) {
      free(p->binary);
      p->binary = malloc(image_size ? image_size : 1);
      p->binary_size = p->binary ? image_size : 0;
      if (p->binary) memcpy(p->binary, image, image_size);
    } else if (written && p->fatbin && !image) {
      image = malloc(p->binary_size ? p->binary_size : 1);
      image_size = image ? p->binary_size : 0;
      if (image) memcpy(image, p->binary, p->binary_size);
      written = image != NULL;
    }
    pthread_mutex_unlock(&p->codegen_lock);
    if (!written) return CL_OUT_OF_HOST_MEMORY;
    cl_int err;
    if (param_name == CL_PROGRAM_BINARY_SIZES) {
      size_t *sizes = calloc(p->num_devices, sizeof *sizes);
      if (!sizes) {
        free(image);
        return CL_OUT_OF_HOST_MEMORY;
      }
      for (cl_uint i = 0; i < p->num_devices; i++)
        sizes[i] = image_size;
      err = info_copy(sizes, p->num_devices * sizeof *sizes, param_value_size, param_value,
                      param_value_size_ret);
      free(sizes);
    } else {
      err = CL_SUCCESS;
      if (param_value) {
        if (param_value_size < p->num_devices * sizeof(unsigned char *))
          err = CL_INVALID_VALUE;
        else
          for (cl_uint i = 0; i < p->num_devices; i++) {
            unsigned char *dst = ((unsigned char **)param_value)[i];
            if (dst && image) memcpy(dst, image, image_size);
          }
      }
      if (err == CL_SUCCESS && param_value_size_ret)
        *param_value_size_ret = p->num_devices * sizeof(unsigned char *);
    }
    free(image);
    return err;
  }
  case CL_PROGRAM_NUM_KERNELS:
    if (!program_built(p)) return CL_INVALID_PROGRAM_EXECUTABLE;
    INFO_VALUE(size_t, p->fatbin->num_kernels);
  case CL_PROGRAM_KERNEL_NAMES: {
    if (!program_built(p)) return CL_INVALID_PROGRAM_EXECUTABLE;
    size_t len = 1;
    for (uint32_t i = 0; i < p->fatbin->num_kernels; i++)
      len += strlen(p->fatbin->kernels[i].name) + 1;
    char *names = calloc(1, len);
    if (!names) return CL_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; i < p->fatbin->num_kernels; i++) {
      if (i) strcat(names, ";");
      strcat(names, p->fatbin->kernels[i].name);
    }
    cl_int err =
        info_copy(names, strlen(names) + 1, param_value_size, param_value, param_value_size_ret);
    free(names);
    return err;
  }
  case CL_PROGRAM_IL: /* empty for a program not made from IL */
    return info_copy(p->il, p->il ? p->il_size : 0, param_value_size, param_value,
                     param_value_size_ret);
  /* Program-scope variables (and so their constructors and destructors) are
   * an optional feature this device does not have. */
  case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT:
  case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT:
    INFO_VALUE(cl_bool, CL_FALSE);
  default:
    return CL_INVALID_VALUE;
  }
}

AQUILA_API cl_int clGetProgramBuildInfo(cl_program program, cl_device_id device,
                                        cl_program_build_info param_name, size_t param_value_size,
                                        void *param_value, size_t *param_value_size_ret) {
  if (!object_is(program, OBJECT_PROGRAM)) return CL_INVALID_PROGRAM;
  int i = device_is_valid(device) ? program_device_index(program, device) : -1;
  if (i < 0) return CL_INVALID_DEVICE;
  struct program_device *pd = &program->per_device[i];
  switch (param_name) {
  case CL_PROGRAM_BUILD_STATUS:
    INFO_VALUE(cl_build_status, pd->status);
  case CL_PROGRAM_BUILD_OPTIONS:
    INFO_STRING(program->options ? program->options : "");
  case CL_PROGRAM_BUILD_LOG:
    INFO_STRING(pd->log ? pd->log : "");
  case CL_PROGRAM_BINARY_TYPE:
    INFO_VALUE(cl_program_binary_type, pd->binary_type);
  case CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE:
    INFO_VALUE(size_t, pd->status == CL_BUILD_SUCCESS ? (size_t)program_variables_size(program) : 0);
  default:
    return CL_INVALID_VALUE;
  }
}
