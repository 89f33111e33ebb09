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

#define AQUILA_FATBIN_VERSION 1

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
