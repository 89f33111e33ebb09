/* The contract between CPU code objects and the HSA CPU agent.
 *
 * A CPU code object is an x86-64 ELF shared object, built by compiler/ (or by
 * hand for tests), that the CPU agent loads in-process. It exports:
 *
 *   const struct aquila_kernel_table __aquila_kernel_table;
 *
 * listing one descriptor per kernel. A kernel's HSA kernel object (the 64-bit
 * value in a kernel dispatch packet) is the address of its descriptor.
 *
 * Kernarg layout: the explicit arguments as the compiler lays them out
 * (natural alignment, pointers 8 bytes; a __local pointer argument is a
 * 64-bit byte offset into the dispatch's dynamic group segment), then, at
 * hidden_kernarg_offset (a multiple of 8), the hidden arguments of
 * struct aquila_hidden_kernargs. kernarg_size covers both.
 *
 * Version history: 1 = first version. */
#ifndef AQUILA_CPU_ABI_H
#define AQUILA_CPU_ABI_H

#include <stdint.h>

#define AQUILA_CPU_ABI_VERSION 1
#define AQUILA_KERNEL_TABLE_SYMBOL "__aquila_kernel_table"

/* Written by whoever builds the kernarg segment (runtime/ for OpenCL). */
struct aquila_hidden_kernargs {
  uint64_t global_offset[3];
  uint64_t printf_buffer; /* address of a printf buffer, 0 when none */
};

/* The alignment of a work-group's group segment: that of the widest OpenCL
 * type (long16, double16). */
#define AQUILA_GROUP_SEGMENT_ALIGNMENT 128u

/* Filled by the CPU agent for each work-group it runs. Read-only to code. */
struct aquila_workgroup {
  uint64_t global_size[3];         /* grid size in work-items, 1 in unused dims */
  uint32_t local_size[3];          /* size of this work-group (partial at the edge) */
  uint32_t enqueued_local_size[3]; /* workgroup_size_* of the packet */
  uint32_t group_id[3];
  uint32_t num_groups[3];
  uint32_t work_dim;
  /* The bytes of group_segment this dispatch uses (to_local and get_fence
   * of a generic pointer ask whether it points there); 0 in agents before
   * it was filled, which only such code reads. */
  uint32_t group_segment_size;
  /* This work-group's group (__local) memory, aligned to
   * AQUILA_GROUP_SEGMENT_ALIGNMENT: the kernel's static __local variables
   * (group_segment_size of its descriptor) from offset 0, then the dynamic
   * __local arguments at the offsets the kernel arguments hold. */
  void *group_segment;
  const struct aquila_cpu_services *services;
};

/* Runs every work-item of one work-group. */
typedef void (*aquila_workgroup_fn)(const void *kernarg, const struct aquila_workgroup *wg);

/* Runs one work-item; used by kernels that need the agent's barrier service. */
typedef void (*aquila_workitem_fn)(const void *kernarg, const struct aquila_workgroup *wg,
                                   uint32_t local_x, uint32_t local_y, uint32_t local_z);

/* Services the agent offers to code. */
struct aquila_cpu_services {
  uint32_t version;
  /* Runs fn once per work-item of wg as cooperative fibers on the calling
   * thread; returns when every work-item has returned. */
  void (*run_workitems)(aquila_workitem_fn fn, const void *kernarg,
                        const struct aquila_workgroup *wg);
  /* Called by a work-item running under run_workitems: returns once every
   * work-item of the work-group has called it. */
  void (*barrier)(void);
  /* OpenCL C printf, vector conversions included; the output is flushed
   * before the dispatch's completion signal changes. */
  int (*printf)(const char *format, ...);
  /* Version 2: which memory address is in: any work-item's private memory
   * (a stack work-items run on), any work-group's local memory, or neither
   * (AQUILA_ADDRESS_*), for to_private, to_local and get_fence of a generic
   * pointer that is another work-item's. */
  int (*address_space_of)(const void *address);
};
#define AQUILA_ADDRESS_GLOBAL 1
#define AQUILA_ADDRESS_LOCAL 3
#define AQUILA_ADDRESS_PRIVATE 0

/* An image as code sees it: an image kernel argument (and the handle of an
 * HSA image, hsa_ext_image_t) is the address of one of these. Pixels are
 * packed, row after row, slice after slice (array layers count as slices
 * for 2D arrays and as rows for 1D arrays). Channel order and data type use
 * OpenCL's values (CL_RGBA, CL_UNORM_INT8, ...). */
struct aquila_image {
  void *data;
  uint64_t row_pitch;   /* bytes */
  uint64_t slice_pitch; /* bytes; for 1D arrays the pitch between layers */
  uint32_t width, height, depth; /* 1 in unused dimensions */
  uint32_t array_size;           /* layers of an array image, else 0 */
  uint32_t image_type;           /* CL_MEM_OBJECT_IMAGE2D, ... */
  uint32_t channel_order;
  uint32_t channel_data_type;
  uint32_t num_channels;
  uint32_t element_size; /* bytes per pixel */
  uint32_t reserved;
};

/* A sampler as code sees it (a sampler_t argument, hsa_ext_sampler_t's
 * handle): OpenCL C's sampler bits, CLK_NORMALIZED_COORDS_TRUE (0x1) |
 * CLK_ADDRESS_* (0x0 none, 0x2 clamp to edge, 0x4 clamp, 0x6 repeat,
 * 0x8 mirrored repeat) | CLK_FILTER_* (0x10 nearest, 0x20 linear). */

#define AQUILA_KERNEL_USES_BARRIER 0x1u
/* The descriptor ends with run_workgroup_scalar (a code object built with
 * AQUILA_VECTORIZE=check): descriptors without the flag stop at name. */
#define AQUILA_KERNEL_HAS_SCALAR_TWIN 0x2u
/* A version compiled for a launch's work-group size would run no faster:
 * the kernel has no barriers and no vector version (nor, in a quick-tier
 * build, the prospect of one), or it is too large for either to pay for
 * its build (runtime/specialize.c builds none). Absent, as in code from
 * elsewhere (a remote daemon's), versions are built. */
#define AQUILA_KERNEL_SIZE_INDIFFERENT 0x4u
/* Bits 8-15: the kernel's sub-group size where its vector version runs
 * (the vector's width; 1 for a kernel that was not vectorized, 0 in code
 * objects from before sub-groups). Elsewhere a sub-group is one work-item
 * (compiler/workgroup/sub_groups.c). */
#define AQUILA_KERNEL_SUB_GROUP_WIDTH(w) (((uint32_t)(w) & 0xffu) << 8)
#define AQUILA_KERNEL_SUB_GROUP_WIDTH_OF(flags) (((flags) >> 8) & 0xffu)

/* The most stack a work-group function may take for its allocas
 * (private_segment_size): a compute unit's stack is 64 MiB; the rest is
 * for the calls a kernel makes and the unit's own frames. A dispatch of a
 * kernel that needs more is refused instead of overrunning the stack. */
#define AQUILA_PRIVATE_SEGMENT_MAX (48u << 20)

struct aquila_kernel_descriptor {
  uint32_t abi_version; /* AQUILA_CPU_ABI_VERSION */
  uint32_t flags;
  uint32_t kernarg_size; /* explicit + hidden */
  uint32_t kernarg_alignment;
  uint32_t hidden_kernarg_offset;
  uint32_t group_segment_size;   /* static __local bytes, at the group segment's start */
  uint32_t private_segment_size; /* stack bytes of run_workgroup's allocas */
  uint32_t reqd_workgroup_size[3]; /* 0,0,0 when not required */
  aquila_workgroup_fn run_workgroup;
  const char *name;
  /* With AQUILA_KERNEL_HAS_SCALAR_TWIN only: the same work-groups run
   * without the vectorizer's work (one work-item after another), for the
   * agent to compare with run_workgroup's results. */
  aquila_workgroup_fn run_workgroup_scalar;
};

struct aquila_kernel_table {
  uint32_t abi_version;
  uint32_t kernel_count;
  const struct aquila_kernel_descriptor *const *kernels;
};

#endif
