// SPDX-License-Identifier: GPL-2.0-only
/* Stack words through a memory-read callback (see frames.h). */
#include <string.h>

#include "frames.h"

size_t frames_each_word(uint64_t lo, uint64_t hi, unsigned word_size, frames_read_fn read,
			void *rctx, frames_word_fn fn, void *fctx)
{
	uint8_t buf[4096];
	size_t words = 0;
	uint64_t at = lo & ~(uint64_t)(word_size - 1);

	if (hi > at + FRAMES_WALK_MAX)
		hi = at + FRAMES_WALK_MAX;
	while (at < hi) {
		size_t len = hi - at < sizeof(buf) ? hi - at : sizeof(buf);
		ssize_t got = read(rctx, at, buf, len);
		/* the count of whole words read, in size_t: a failed read (-errno) reads none, on
		 * 32-bit hosts too, where ssize_t against an unsigned sum would compare unsigned */
		size_t n = got > 0 ? (size_t)got : 0;

		for (size_t k = 0; k + word_size <= n; k += word_size) {
			uint64_t v = 0;

			memcpy(&v, buf + k, word_size); /* little-endian targets */
			fn(fctx, at + k, v);
			words++;
		}
		if (n < len)
			break;
		at += len;
	}
	return words;
}
