// SPDX-License-Identifier: GPL-2.0-only
/* The patch-safety rule of an entry (entrycheck.h), with the arch's own decoder (x86_64's
 * arch/x86_64/decoder.c, arm's Thumb-2, mips64's). */
#include <errno.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "patch/entrycheck.h"
#include "symbols/symbols.h"
#include "util/util.h"

#define MAX_FUNC (1u << 20) /* larger functions are not checked: refused */

int entry_check_with(const struct arch_ops *a, const char *path, uint64_t value, uint64_t size,
		     size_t len)
{
	uint8_t *buf;
	ssize_t got;
	int ret;

	if (!size || size > MAX_FUNC || !a->entry_scan)
		return -EXDEV;
	buf = xmalloc(size);
	got = sym_read_code(path, a->code_addr(value), buf, size);
	ret = got == (ssize_t)size ? a->entry_scan(value, buf, size, len) :
	      got < 0		  ? (int)got :
				    -EIO;
	free(buf);
	return ret;
}
