; The work-group collective functions' scratch (collectives.cl): eight bytes
; of __local memory that every work-item of a group reaches. OpenCL C has
; no program-scope __local variable, so the variable and its accessor are
; written in IR. The work-group compiler places it in the group segment of
; the kernel that uses it (workgroup/group_memory.c).

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@__aq_collective_scratch_variable = linkonce_odr addrspace(3) global i64 undef, align 8

define linkonce_odr ptr addrspace(3) @__aq_collective_scratch() #0 {
  ret ptr addrspace(3) @__aq_collective_scratch_variable
}

attributes #0 = { alwaysinline nounwind }
