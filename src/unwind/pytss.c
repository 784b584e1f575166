// SPDX-License-Identifier: GPL-2.0-only
/* Finding a thread's own slot of a pthread key in its struct pthread (pytss.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "unwind/pytss.h"

#define PYTSS_PAIR 16 /* struct pthread_key_data: seq, data */

static uint64_t word(const uint8_t *pt, size_t off)
{
	uint64_t v;

	memcpy(&v, pt + off, sizeof(v));
	return v;
}

/* Does a word of pt hold the address addr (specific[0], the array's start)? */
static bool points_to(const uint8_t *pt, size_t len, uint64_t addr)
{
	for (size_t off = 0; off + 8 <= len; off += 8)
		if (word(pt, off) == addr)
			return true;
	return false;
}

int pytss_slot(const uint8_t *pt, size_t len, uint64_t pd, unsigned key, uint64_t val)
{
	size_t first = (size_t)key * PYTSS_PAIR + 8;
	int found = -ENOENT;

	if (key >= PYTSS_KEYS || !val)
		return -EINVAL;
	for (size_t off = first; off + 8 <= len && off <= (size_t)INT32_MAX; off += 8) {
		if (word(pt, off) != val || !(word(pt, off - 8) & 1) ||
		    !points_to(pt, len, pd + (off - first)))
			continue;
		if (found >= 0)
			return -EEXIST;
		found = (int)off;
	}
	return found;
}
