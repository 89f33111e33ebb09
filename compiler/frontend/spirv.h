/* SPIR-V programs: the translator's bitcode, made ready for the pipeline,
 * and the kernels' descriptions (spirv.c). */
#ifndef AQUILA_COMPILER_SPIRV_H
#define AQUILA_COMPILER_SPIRV_H

#include <stddef.h>

#include "aquila/compiler.h"
#include "frontend/frontend.h"
#include "support/strbuf.h"

/* Whether il begins as a SPIR-V module does (its magic number, either byte
 * order), with room for the header. */
int spirv_is_module(const void *il, size_t size);

/* in->il translated into bitcode for
 * this target with the builtin library linked (malloc'd into *bitcode), and
 * the kernels' names and argument descriptions into fr. Scratch files go in
 * dir. 0, or -1 with the reason in log. */
int spirv_to_bitcode(const struct aquila_compile_input *in, const char *dir, void **bitcode,
                     size_t *bitcode_size, struct frontend_result *fr, struct strbuf *log);

#endif
