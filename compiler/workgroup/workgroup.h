/* The work-group compiler: turns OpenCL kernels in an LLVM module into CPU
 * work-group functions and the kernel table of aquila/cpu_abi.h. */
#ifndef AQUILA_COMPILER_WORKGROUP_H
#define AQUILA_COMPILER_WORKGROUP_H

#include <llvm-c/Core.h>
#include "aquila/fatbin.h"
#include "support/strbuf.h"
#include "vectorize/vectorize.h"

/* Rewrites m in place. kernels[i] (from the front end, matched by name) get
 * their kernarg layout, attributes and local memory size filled in. With vt,
 * work-item functions are vectorized across work-items for that target
 * where they can be (vectorize/). With local_size, a kernel that declares
 * no required work-group size is compiled as if it declared that one (a
 * version for launches with that size only); its metadata (kernels[i])
 * still says it requires none. Returns 0, or -1 with the reason in log. */
int workgroup_compile(LLVMModuleRef m, struct aquila_fatbin_kernel *kernels, unsigned num_kernels,
                      const struct vectorize_target *vt, const uint32_t *local_size,
                      struct strbuf *log);

/* The kernels' argument layout in the kernarg segment and their attributes,
 * as workgroup_compile fills them, without changing m: for a build whose
 * code comes later. The static __local bytes (local_mem_size) are known
 * only once each kernel's code is made, and stay as they are. */
int workgroup_kernel_layout(LLVMModuleRef m, struct aquila_fatbin_kernel *kernels,
                            unsigned num_kernels, struct strbuf *log);

/* After the optimizer: inlines the builtins' out-of-line slow paths
 * (__aquila_vv_*, kept as calls for the loop vectorizer). Returns 0, or -1
 * with the reason in log. */
int workgroup_inline_vector_variants(LLVMModuleRef m, struct strbuf *log);

/* After the optimizer: each kernel descriptor's private_segment_size gets
 * the stack bytes its work-group function's allocas take (private arrays of
 * all its work-items, context arrays of a fixed size), so that the runtime
 * can refuse a launch that would overrun a compute unit's stack. Returns
 * 0, or -1 with the reason in log (a kernel over AQUILA_PRIVATE_SEGMENT_MAX
 * is not an error here: the launch is refused). */
int workgroup_record_private_sizes(LLVMModuleRef m, struct strbuf *log);

#endif
