/* The on-disk constants of the fat binary container, shared by the writer,
 * the reader and the validator. docs/FATBIN.md is the normative description;
 * this header only gives those numbers names. */
#ifndef AQUILA_FATBIN_FORMAT_H
#define AQUILA_FATBIN_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "aquila/fatbin.h"

/* e_flags of the ELF header: "AQFB" as little-endian bytes. ET_REL with
 * EM_NONE says "no machine", so e_flags is free to carry our marker. */
#define FATBIN_ELF_FLAGS 0x42465141u

#define FATBIN_SECTION_META ".aquila.meta"
#define FATBIN_SECTION_CODE_PREFIX ".aquila.code."
#define FATBIN_SECTION_SOURCE ".aquila.source"
#define FATBIN_SECTION_OPTIONS ".aquila.options"
#define FATBIN_SECTION_DIGEST ".aquila.digest"

/* The digest: 64-bit FNV-1a over, for each .aquila.* section but the digest
 * itself, in file order, its name with the NUL, its size as a little-endian
 * u64, and its bytes. It catches accidental damage (a truncated download, a
 * flipped bit), which would otherwise reach dlopen or the CPU. */
#define FATBIN_DIGEST_INIT 0xcbf29ce484222325ull
uint64_t fatbin_digest_section(uint64_t digest, const char *name, const void *data, size_t size);

/* A length of this value in place of a string means "no string" (NULL). */
#define FATBIN_ABSENT_STRING 0xffffffffu
/* Target names become section names; keep them short and printable. */
#define FATBIN_MAX_TARGET_LEN 255u

/* Smallest encodings, used to check counts against the bytes that remain
 * before anything is allocated. A present string takes at least 5 bytes (a
 * length and its NUL), an absent one 4. An argument record: length, name,
 * type name, kind, address and access qualifiers, type qualifier, size,
 * alignment, offset. A kernel record: length, name, vec_type_hint (may be
 * absent), attributes, two 3-vectors, local memory size, three kernarg
 * fields, argument count. */
#define FATBIN_MIN_ARG_RECORD (4u + 5u + 5u + 4u * 3u + 8u + 4u * 3u)
#define FATBIN_MIN_KERNEL_RECORD (4u + 5u + 4u + 5u + 4u * 6u + 8u + 4u * 3u + 4u)
/* Kernel argument and kernarg alignments are powers of two up to this. */
#define FATBIN_MAX_ALIGNMENT 4096u

/* Checks one target name; returns NULL if fine, else why not. */
const char *fatbin_target_name_problem(const char *target);
/* Checks the semantic rules the reader enforces on a kernel, so the writer
 * never produces what the reader would refuse. Writes the reason to err. */
int fatbin_check_kernel(const struct aquila_fatbin_kernel *k, char *err, size_t errlen);

#endif
