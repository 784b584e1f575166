/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_ENTRYCHECK_H
#define HEAPTRACE_ENTRYCHECK_H

/*
 * Whether a function's first bytes may be replaced by a branch (stubs.h): nothing may enter
 * them but the call itself. Every instruction of the function is decoded with Capstone.
 */
#include <stddef.h>
#include <stdint.h>

/*
 * The function at symbol value value in the ELF file at path, size bytes long: return 0 if no
 * direct branch or call of it, and no RIP-relative operand, points into (value, value + len),
 * it has no indirect jump (a jump table could lead anywhere in it) and every byte decodes;
 * -EXDEV if one does, -ENOTSUP without a decoder (heaptrace built without Capstone), or
 * -errno (the file cannot be read).
 */
int entry_check(const char *path, uint64_t value, uint64_t size, size_t len);

struct arch_ops;
/* The same rule with a's own decoder (a->entry_scan; arm's Thumb-2), for the function at
 * symbol value value (arm: bit 0 set = Thumb). Return as entry_check. */
int entry_check_with(const struct arch_ops *a, const char *path, uint64_t value, uint64_t size,
		     size_t len);

#endif
