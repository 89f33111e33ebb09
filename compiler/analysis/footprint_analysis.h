/* The footprint analysis: where a kernel's work-items write global memory,
 * as byte ranges affine in the work-item ids (struct
 * aquila_fatbin_footprint in aquila/fatbin.h). */
#ifndef AQUILA_COMPILER_FOOTPRINT_H
#define AQUILA_COMPILER_FOOTPRINT_H

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "aquila/fatbin.h"
#include "support/strbuf.h"

/* Analyses wi, the kernel's work-item function (its first parameter the
 * kernarg segment, work-item queries still calls of __aquila_*), whose
 * arguments meta describes (their kernarg offsets set), and gives meta its
 * footprint (replacing one it had). Never fails: what it cannot follow is
 * "written anywhere". With report, one line per written argument goes to
 * report. */
void footprint_analyse(LLVMValueRef wi, LLVMTargetDataRef td, struct aquila_fatbin_kernel *meta,
                       struct strbuf *report);

#endif
