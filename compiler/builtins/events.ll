; wait_group_events as user programs call it. clang's table-generated
; declaration takes a generic event pointer even in OpenCL C 1.2, which
; OpenCL C 1.2 source cannot spell, so this one overload is written in IR
; (names mangled with address-space numbers, as SPIR's: builtins.mk).
; Every work-item of the group calls it: the copies done by
; async_work_group_copy (each item its share) are complete after a barrier.

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

declare void @__aquila_barrier(i32) #0

define void @_Z17wait_group_eventsiPU3AS49ocl_event(i32 %n, ptr addrspace(4) %events) #1 {
  call void @__aquila_barrier(i32 3) #0
  ret void
}

attributes #0 = { convergent nounwind }
attributes #1 = { alwaysinline convergent nounwind }
