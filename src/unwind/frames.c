// SPDX-License-Identifier: GPL-2.0-only
/* Stack words through a memory-read callback (see frames.h). */
#include <string.h>

#include "unwind/frames.h"

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
			words++;
			if (!fn(fctx, at + k, v))
				return words;
		}
		if (n < len)
			break;
		at += len;
	}
	return words;
}

const char *frames_how_name(enum frames_how how)
{
	static const char *const names[] = { "cfi", "fp", "scan", "python" };

	return how < sizeof(names) / sizeof(names[0]) ? names[how] : "?";
}

/* One frame's search: the first slot with a direct call to start, else the first slot with
 * any call (through a register, or to a function that tail-called this one). */
struct search {
	const struct frames_env *e;
	uint64_t start; /* function of the frame below, 0 if unknown */
	uint64_t direct_at, direct, indirect_at, indirect;
};

static bool consider(void *ctx, uint64_t addr, uint64_t val)
{
	struct search *s = ctx;
	uint64_t target;

	if (!val || !s->e->after_call(s->e->ctx, val, &target))
		return true;
	if (target && s->start && target == s->start) {
		s->direct_at = addr;
		s->direct = val;
		return false;
	}
	if (!s->indirect_at) {
		s->indirect_at = addr;
		s->indirect = val;
	}
	return true;
}

unsigned frames_scan(const struct frames_env *e, uint64_t pc, bool is_return, uint64_t sp,
		     uint64_t *pcs, unsigned max)
{
	unsigned n = 0;

	while (n < max) {
		struct search s = { .e = e, .start = e->func_start(e->ctx, pc, is_return) };
		uint64_t at;

		frames_each_word(sp, sp + FRAMES_SCAN_WINDOW, e->word_size, e->read, e->ctx,
				 consider, &s);
		if (s.direct_at) {
			at = s.direct_at;
			pc = s.direct;
		} else if (s.indirect_at) {
			at = s.indirect_at;
			pc = s.indirect;
		} else {
			break;
		}
		pcs[n++] = pc | (uint64_t)FRAMES_SCAN << FRAMES_HOW_SHIFT;
		if (e->last && e->last(e->ctx, pc))
			break;
		is_return = true;
		sp = at + e->word_size;
	}
	return n;
}
