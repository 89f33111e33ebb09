/* Build options: parses the option string of clBuildProgram/clCompileProgram
 * into the clang arguments that implement it. Unknown options are an error
 * (CL_INVALID_BUILD_OPTIONS), not silently ignored. */
#include "frontend/options.h"

#include <stdlib.h>
#include <string.h>

static void add_arg(struct build_options *o, const char *arg) {
  char **args = realloc(o->clang_args, (o->num_clang_args + 1) * sizeof *args);
  if (!args) abort();
  o->clang_args = args;
  o->clang_args[o->num_clang_args] = strdup(arg);
  if (!o->clang_args[o->num_clang_args]) abort();
  o->num_clang_args++;
}

/* Splits at white space; double and single quotes group, backslash escapes. */
static char **split_words(const char *s, size_t *count) {
  char **words = NULL;
  size_t n = 0;
  while (*s) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    if (!*s) break;
    char *w = malloc(strlen(s) + 1), *p = w;
    if (!w) abort();
    char quote = 0;
    while (*s && (quote || (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r'))) {
      if (quote && *s == quote) {
        quote = 0;
      } else if (!quote && (*s == '"' || *s == '\'')) {
        quote = *s;
      } else if (*s == '\\' && s[1]) {
        *p++ = *++s;
      } else {
        *p++ = *s;
      }
      s++;
    }
    *p = 0;
    words = realloc(words, (n + 1) * sizeof *words);
    if (!words) abort();
    words[n++] = w;
  }
  *count = n;
  return words;
}

int build_options_parse(const char *options, struct build_options *o, struct strbuf *log) {
  memset(o, 0, sizeof *o);
  strcpy(o->cl_std, "CL1.2");
  size_t n = 0;
  char **w = split_words(options ? options : "", &n);
  int status = 0;
  for (size_t i = 0; i < n && status == 0; i++) {
    const char *a = w[i];
    if (!strcmp(a, "-D") || !strcmp(a, "-I")) {
      if (i + 1 >= n) {
        strbuf_printf(log, "error: option '%s' needs an argument\n", a);
        status = -1;
        break;
      }
      add_arg(o, a);
      add_arg(o, w[++i]);
    } else if (!strncmp(a, "-D", 2) || !strncmp(a, "-I", 2)) {
      add_arg(o, a);
    } else if (!strncmp(a, "-cl-std=", 8)) {
      const char *v = a + 8;
      if (strcmp(v, "CL1.0") && strcmp(v, "CL1.1") && strcmp(v, "CL1.2") && strcmp(v, "CL3.0")) {
        strbuf_printf(log,
                      "error: unsupported OpenCL C version '%s' (this device supports CL1.0, "
                      "CL1.1, CL1.2 and CL3.0; OpenCL C 2.0's generic address space, pipes "
                      "and device-side enqueue are not supported)\n",
                      v);
        status = -1;
        break;
      }
      strcpy(o->cl_std, v);
    } else if (!strcmp(a, "-cl-opt-disable")) {
      o->opt_disable = 1;
    } else if (!strcmp(a, "-cl-mad-enable")) {
      /* a * b + c may become an FMA even across statements: clang's own
       * -cl-mad-enable only sets an attribute the x86 back end ignores, and
       * OpenCL's default contraction (-ffp-contract=on) stays within one
       * expression; "fast" puts the contract flag on the multiplies and adds. */
      if (!o->mad_enable) add_arg(o, "-ffp-contract=fast");
      o->mad_enable = 1;
      add_arg(o, a);
    } else if (!strcmp(a, "-cl-fast-relaxed-math") || !strcmp(a, "-cl-unsafe-math-optimizations")) {
      o->fast_math = 1;
      /* Both imply -cl-mad-enable (OpenCL 1.2 section 5.6.4.2). */
      if (!o->mad_enable) add_arg(o, "-ffp-contract=fast");
      o->mad_enable = 1;
      o->no_signed_zeros = 1;
      if (a[4] == 'f') o->finite_math = 1;
      add_arg(o, a);
    } else if (!strcmp(a, "-cl-finite-math-only")) {
      o->finite_math = 1;
      add_arg(o, a);
    } else if (!strcmp(a, "-cl-no-signed-zeros")) {
      o->no_signed_zeros = 1;
      add_arg(o, a);
    } else if (!strcmp(a, "-cl-denorms-are-zero")) {
      o->denorms_are_zero = 1;
      add_arg(o, a);
    } else if (!strcmp(a, "-cl-strict-aliasing")) {
      o->strict_aliasing = 1;
    } else if (!strcmp(a, "-cl-single-precision-constant") ||
               !strcmp(a, "-cl-fp32-correctly-rounded-divide-sqrt")) {
      add_arg(o, a);
    } else if (!strcmp(a, "-cl-kernel-arg-info")) {
      o->kernel_arg_info = 1;
    } else if (!strcmp(a, "-cl-aquila-no-images")) {
      /* The runtime's, for a program whose devices have no images (remote
       * ones): __IMAGE_SUPPORT__ is not defined for them. */
      add_arg(o, "-U__IMAGE_SUPPORT__");
    } else if (!strcmp(a, "-w") || !strcmp(a, "-Werror")) {
      add_arg(o, a);
    } else if (!strcmp(a, "-cl-uniform-work-group-size") || !strcmp(a, "-cl-no-subgroup-ifp")) {
      /* 2.0's promise that every work-group is whole (enqueue.c reads it
       * from the options for partial work-groups), and 2.1's that
       * sub-groups need no independent forward progress, which they never
       * have here: the code is the same. */
    } else if (!strcmp(a, "-create-library")) {
      o->create_library = 1;
    } else if (!strcmp(a, "-enable-link-options")) {
      o->enable_link_options = 1;
    } else if (!strcmp(a, "-g")) {
      /* Debug information is accepted and ignored: code is still correct. */
    } else {
      strbuf_printf(log, "error: unknown build option '%s'\n", a);
      status = -1;
    }
  }
  /* OpenCL C lets the compiler assume that objects of different types do
   * not alias only under -cl-strict-aliasing (OpenCL 1.2 5.6.4.3); clang
   * assumes it by default (its type-based alias analysis), and then
   * forwards stale values through a store of another type (a byte buffer
   * filled through ulong * and read as uint words). */
  if (status == 0 && !o->strict_aliasing) add_arg(o, "-fno-strict-aliasing");
  /* OpenCL C 3.0: clang defines every optional feature for this target;
   * the ones the device lacks are taken back and the atomic scopes it has
   * added, so that the __opencl_c_* macros are runtime/features.c's list
   * (compiler/builtins/builtins.mk compiles the C11 atomics the same way). */
  if (status == 0 && !strcmp(o->cl_std, "CL3.0")) {
    add_arg(o, "-Xclang");
    add_arg(o, "-cl-ext=-__opencl_c_pipes,"
               "-__opencl_c_device_enqueue,"
               "-__opencl_c_read_write_images,-cl_khr_subgroups");
    add_arg(o, "-D__opencl_c_atomic_scope_device=1");
    /* Not one of clang's -cl-ext features: the header asks for the macro. */
    add_arg(o, "-D__opencl_c_work_group_collective_functions=1");
    add_arg(o, "-D__opencl_c_atomic_scope_all_devices=1");
  }
  /* Sub-groups, in every version (compiler/builtins/subgroups.cl): clang
   * declares the core functions from cl_intel_subgroups on (which it
   * defines for this target) and the cl_khr_subgroup_* ones when their
   * macros are defined, which its -cl-ext does not do. Not
   * cl_khr_subgroups, which requires independent forward progress
   * (runtime/features.c). */
  static const char *const sub_group_macros[] = {
      "-Dcl_khr_subgroup_extended_types=1",
      "-Dcl_khr_subgroup_non_uniform_vote=1",
      "-Dcl_khr_subgroup_ballot=1",
      "-Dcl_khr_subgroup_non_uniform_arithmetic=1",
      "-Dcl_khr_subgroup_shuffle=1",
      "-Dcl_khr_subgroup_shuffle_relative=1",
      "-Dcl_khr_subgroup_rotate=1",
      "-Dcl_khr_subgroup_clustered_reduce=1",
  };
  for (size_t i = 0; status == 0 && i < sizeof sub_group_macros / sizeof *sub_group_macros; i++)
    add_arg(o, sub_group_macros[i]);
  for (size_t i = 0; i < n; i++) free(w[i]);
  free(w);
  if (status) build_options_free(o);
  return status;
}

void build_options_free(struct build_options *o) {
  for (size_t i = 0; i < o->num_clang_args; i++) free(o->clang_args[i]);
  free(o->clang_args);
  o->clang_args = NULL;
  o->num_clang_args = 0;
}
