/* Context switch for work-item fibers (hsa/fiber.c) on x86-64 System V.
 *
 * aq_fiber_switch(void **save_sp, void *new_sp) saves the callee-saved
 * registers, MXCSR and the x87 control word on the current stack, stores the
 * stack pointer in *save_sp, and resumes the context saved at new_sp.
 * Caller-saved state needs no saving: the switch is an ordinary call.
 *
 * aq_fiber_start is where a fresh fiber's first switch returns to: it calls
 * the entry function in r13 with the argument in r12 (placed there by
 * fiber.c when it builds the initial frame); the entry never returns. */
        .text
        .globl  aq_fiber_switch
        .hidden aq_fiber_switch
        .type   aq_fiber_switch, @function
aq_fiber_switch:
        .cfi_startproc
        pushq   %rbp
        pushq   %rbx
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        subq    $8, %rsp
        stmxcsr (%rsp)
        fnstcw  4(%rsp)
        movq    %rsp, (%rdi)
        movq    %rsi, %rsp
        ldmxcsr (%rsp)
        fldcw   4(%rsp)
        addq    $8, %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbx
        popq    %rbp
        ret
        .cfi_endproc
        .size   aq_fiber_switch, .-aq_fiber_switch

        .globl  aq_fiber_start
        .hidden aq_fiber_start
        .type   aq_fiber_start, @function
aq_fiber_start:
        .cfi_startproc
        .cfi_undefined rip
        movq    %r12, %rdi
        callq   *%r13
        ud2
        .cfi_endproc
        .size   aq_fiber_start, .-aq_fiber_start

        .section .note.GNU-stack,"",@progbits
