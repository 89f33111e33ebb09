/* Embeds the builtin library's bitcode in the compiler library, so that a
 * build never depends on where Aquila was installed. */
        .section .rodata
        .globl aquila_builtins_bc_start
        .hidden aquila_builtins_bc_start
        .globl aquila_builtins_bc_end
        .hidden aquila_builtins_bc_end
        .balign 16
aquila_builtins_bc_start:
        .incbin AQUILA_BUILTINS_BC
aquila_builtins_bc_end:
        .section .note.GNU-stack,"",@progbits
