/* The Aquila fat binary: one OpenCL program's kernel metadata, one code
 * object per target ISA, portable LLVM bitcode, and optionally the source and
 * build options, in one ELF container. docs/FATBIN.md documents the format.
 *
 * This header is the library's API (libaquila_fatbin.a), used by compiler/,
 * runtime/ and the clfatbin tool. Every reader entry point validates its
 * input fully; nothing here crashes or reads out of bounds on hostile data. */
#ifndef AQUILA_FATBIN_H
#define AQUILA_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#define AQUILA_FATBIN_VERSION 2

/* What the binary holds, as CL_PROGRAM_BINARY_TYPE reports it. */
enum aquila_fatbin_kind {
  AQUILA_FATBIN_EXECUTABLE = 1,
  AQUILA_FATBIN_COMPILED_OBJECT = 2,
  AQUILA_FATBIN_LIBRARY = 3,
};

/* How an argument is passed. */
enum aquila_arg_kind {
  AQUILA_ARG_VALUE = 0,        /* by value (scalars, vectors, structs) */
  AQUILA_ARG_GLOBAL_PTR = 1,   /* __global pointer: a cl_mem */
  AQUILA_ARG_CONSTANT_PTR = 2, /* __constant pointer: a cl_mem */
  AQUILA_ARG_LOCAL_PTR = 3,    /* __local pointer: a size, no value */
  AQUILA_ARG_IMAGE = 4,        /* image2d_t, ...: a cl_mem image */
  AQUILA_ARG_SAMPLER = 5,      /* sampler_t */
};

struct aquila_fatbin_arg {
  char *name;                 /* as written in the source */
  char *type_name;            /* e.g. "float*", "uint4", "image2d_t" */
  uint32_t kind;              /* enum aquila_arg_kind */
  uint32_t address_qualifier; /* CL_KERNEL_ARG_ADDRESS_* */
  uint32_t access_qualifier;  /* CL_KERNEL_ARG_ACCESS_* */
  uint64_t type_qualifier;    /* CL_KERNEL_ARG_TYPE_* bit field */
  uint32_t size;              /* bytes in the kernarg segment */
  uint32_t alignment;         /* of the kernarg slot */
  uint32_t offset;            /* byte offset in the kernarg segment */
};

/* What a kernel's work-items write to global memory (version 2; the
 * compiler's footprint analysis, compiler/analysis/footprint_analysis.c): enough for the
 * runtime to know, before a launch, which bytes of each buffer argument a
 * box of work-groups may write (runtime/launch_footprint.c), and which buffer
 * arguments the kernel never writes. docs/FATBIN.md describes the encoding.
 *
 * A write form is a byte range relative to the address its argument holds:
 * [v + lo, v + hi), v = the sum of its terms, each coef * factors * var; the
 * forms of an argument together cover every byte it may be written at. A
 * check form says that the forms hold only when its value, over the whole
 * grid, fits an integer of `width` bits (signed or not): the compiler's
 * arithmetic on narrower integers equals the forms' exact arithmetic only
 * then. */
#define AQUILA_FOOTPRINT_MAX_TERMS 12
/* The variable of a term: 1, or a work-group or local id in dimension d. */
enum aquila_footprint_var {
  AQUILA_FOOTPRINT_ONE = 0,
  AQUILA_FOOTPRINT_GROUP_ID = 1, /* + d: 1..3 */
  AQUILA_FOOTPRINT_LOCAL_ID = 4, /* + d: 4..6 */
  AQUILA_FOOTPRINT_VARS = 7,
};
/* A factor: kind << 8 | index (an argument's index, or a dimension 0..2);
 * 0 means none. Arguments are integers in the kernarg segment of their own
 * size, zero- or sign-extended. */
enum aquila_footprint_factor_kind {
  AQUILA_FOOTPRINT_ARG_ZEXT = 1,
  AQUILA_FOOTPRINT_ARG_SEXT = 2,
  AQUILA_FOOTPRINT_ENQUEUED_LOCAL_SIZE = 3,
  AQUILA_FOOTPRINT_LOCAL_SIZE = 4, /* the group's own: only for uniform ranges */
  AQUILA_FOOTPRINT_GLOBAL_SIZE = 5,
  AQUILA_FOOTPRINT_NUM_GROUPS = 6,
  AQUILA_FOOTPRINT_GLOBAL_OFFSET = 7,
  AQUILA_FOOTPRINT_FACTOR_KINDS = 8,
};
struct aquila_footprint_term {
  int64_t coef;
  uint32_t var;       /* enum aquila_footprint_var */
  uint32_t factor[3]; /* kind << 8 | index, or 0 */
};
enum aquila_footprint_form_kind {
  AQUILA_FOOTPRINT_WRITE = 0,         /* arg: the argument written */
  AQUILA_FOOTPRINT_FITS_UNSIGNED = 1, /* arg: the width, 1..64 */
  AQUILA_FOOTPRINT_FITS_SIGNED = 2,
};
struct aquila_footprint_form {
  uint32_t kind;
  uint32_t arg;       /* the argument (WRITE) or the width (FITS_*) */
  uint32_t work_dims; /* bit d (1..3) set: the form holds when work_dim is d */
  int64_t lo, hi;     /* WRITE: the bytes [v + lo, v + hi), lo < hi; FITS: v + lo (hi = lo + 1) */
  uint32_t num_terms; /* at most AQUILA_FOOTPRINT_MAX_TERMS */
  struct aquila_footprint_term terms[AQUILA_FOOTPRINT_MAX_TERMS];
};
/* What a kernel does with each argument. */
enum aquila_footprint_arg_state {
  AQUILA_FOOTPRINT_NOT_WRITTEN = 0, /* never written through it (every non-global argument) */
  AQUILA_FOOTPRINT_IN_FORMS = 1,    /* written only within its write forms */
  AQUILA_FOOTPRINT_ANYWHERE = 2,    /* written where the compiler cannot say */
  /* As IN_FORMS, and more: never read through, and every work-item writes
   * every byte of its form (one store, on every path; one form per work
   * dimension): where the forms cover a range densely, its old bytes are
   * never needed. */
  AQUILA_FOOTPRINT_OVERWRITTEN = 3,
};
/* Kernel-wide facts: work-groups that may communicate, or output in order. */
#define AQUILA_FOOTPRINT_GLOBAL_ATOMICS 0x1u /* atomics on memory that may be global */
#define AQUILA_FOOTPRINT_PRINTF 0x2u
#define AQUILA_FOOTPRINT_FLAGS 0x3u
#define AQUILA_FOOTPRINT_MAX_FORMS 256u
struct aquila_fatbin_footprint {
  uint32_t flags;
  uint32_t num_args;   /* the kernel's num_args */
  uint32_t *arg_state; /* enum aquila_footprint_arg_state per argument */
  uint32_t num_forms;  /* at most AQUILA_FOOTPRINT_MAX_FORMS */
  struct aquila_footprint_form *forms;
};

struct aquila_fatbin_kernel {
  char *name;
  uint32_t num_args;
  struct aquila_fatbin_arg *args;
  uint32_t reqd_work_group_size[3]; /* 0,0,0 if none */
  uint32_t work_group_size_hint[3]; /* 0,0,0 if none */
  char *vec_type_hint;              /* NULL if none, else e.g. "float4" */
  char *attributes;                 /* CL_KERNEL_ATTRIBUTES string, "" if none */
  uint64_t local_mem_size;          /* static __local bytes */
  uint32_t kernarg_size;            /* explicit + hidden */
  uint32_t kernarg_alignment;
  uint32_t hidden_kernarg_offset;
  /* NULL when not analysed (a version 1 binary, or no code made yet). */
  struct aquila_fatbin_footprint *footprint;
};

/* Target names: "x86_64-native:<cpu>" (built for one host CPU, e.g.
 * "x86_64-native:znver3"), "x86-64-v2", "x86-64-v3", "x86-64-v4",
 * "bitcode" (portable LLVM bitcode, not yet work-group compiled),
 * "amdgcn-amd-amdhsa--<gfx>", "nvptx64-nvidia-cuda". */
struct aquila_fatbin_code {
  char *target;
  void *data;
  size_t size;
};

struct aquila_fatbin {
  uint32_t version; /* AQUILA_FATBIN_VERSION on write; as read on read */
  uint32_t kind;    /* enum aquila_fatbin_kind */
  uint32_t num_kernels;
  struct aquila_fatbin_kernel *kernels;
  uint32_t num_codes;
  struct aquila_fatbin_code *codes;
  char *source;        /* NULL when stripped */
  char *build_options; /* NULL when none */
};

/* Footprints: a deep copy (NULL on no memory or for NULL), freeing, and the
 * rules the reader enforces (against a kernel of num_args arguments):
 * 0, or -1 with the reason in err. */
struct aquila_fatbin_footprint *
aquila_fatbin_footprint_copy(const struct aquila_fatbin_footprint *f);
void aquila_fatbin_footprint_free(struct aquila_fatbin_footprint *f);
int aquila_fatbin_footprint_check(const struct aquila_fatbin_footprint *f, uint32_t num_args,
                                  char *err, size_t errlen);

/* Returns a new, empty fat binary of the given kind, or NULL on no memory. */
struct aquila_fatbin *aquila_fatbin_create(uint32_t kind);
/* Frees everything the fat binary owns. NULL is fine. */
void aquila_fatbin_destroy(struct aquila_fatbin *fb);

/* The adders copy what they are given. They return 0, or -1 on no memory or
 * bad arguments (a duplicate target replaces the old code object). */
int aquila_fatbin_add_code(struct aquila_fatbin *fb, const char *target, const void *data,
                           size_t size);
int aquila_fatbin_remove_code(struct aquila_fatbin *fb, const char *target);
/* Deep-copies kernel (names, args). */
int aquila_fatbin_add_kernel(struct aquila_fatbin *fb, const struct aquila_fatbin_kernel *kernel);
int aquila_fatbin_set_source(struct aquila_fatbin *fb, const char *source, const char *options);

const struct aquila_fatbin_code *aquila_fatbin_find_code(const struct aquila_fatbin *fb,
                                                         const char *target);
const struct aquila_fatbin_kernel *aquila_fatbin_find_kernel(const struct aquila_fatbin *fb,
                                                             const char *name);

/* Checks every rule the writer and reader enforce (kind, target names, unique
 * kernel names, argument kinds and qualifiers, kernarg layout; see
 * docs/FATBIN.md). Returns 0, or -1 with a readable reason in err. */
int aquila_fatbin_validate(const struct aquila_fatbin *fb, char *err, size_t errlen);

/* The code object this machine's CPU runs best: the one for native_target
 * (e.g. "x86_64-native:znver4"), else the highest x86-64 level the CPU
 * supports. NULL when neither is there (the caller may build from bitcode). */
const struct aquila_fatbin_code *aquila_fatbin_select_cpu_code(const struct aquila_fatbin *fb,
                                                               const char *native_target);

/* Serializes to a malloc'd ELF image. Fails (-1) on what
 * aquila_fatbin_validate refuses, so a written image always reads back. Returns 0 or -1. */
int aquila_fatbin_write(const struct aquila_fatbin *fb, void **data, size_t *size);
/* Parses and validates an image; on failure returns -1 and writes a readable
 * reason to err (if errlen > 0) and *out is NULL. Never crashes on bad data. */
int aquila_fatbin_read(const void *data, size_t size, struct aquila_fatbin **out, char *err,
                       size_t errlen);
/* Cheap check of the ELF identification and fat binary marker. */
int aquila_fatbin_is_fatbin(const void *data, size_t size);

#endif
