/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_ENTRYCHECK_H
#define HEAPTRACE_ENTRYCHECK_H

/*
 * Whether a function's first bytes may be replaced by a branch (stubs.h): nothing may enter
 * them but the call itself. Every instruction of the function is decoded by the arch's own
 * decoder (arch.h entry_scan).
 */
#include <stddef.h>
#include <stdint.h>

struct arch_ops;
/*
 * The function at symbol value value (arm: bit 0 set = Thumb) in the ELF file at path, size
 * bytes long: return 0 if a->entry_scan finds that no direct branch or call of it, and no
 * PC-relative operand, points into (value, value + len), it has no indirect jump (a jump table
 * could lead anywhere in it) and every byte decodes; -EXDEV if something may, the size is
 * unknown or the arch has no scan, or -errno (the file cannot be read).
 */
int entry_check_with(const struct arch_ops *a, const char *path, uint64_t value, uint64_t size,
		     size_t len);

#endif
