// SPDX-License-Identifier: GPL-2.0-only
/* The size of the entry stubs' stack copies, learned (copysize.h). */
#include "patch/copysize.h"

void copysize_init(struct copysize *c, unsigned full, bool learn)
{
	*c = (struct copysize){ .learn = learn, .full = full, .now = full, .prev = full,
				.least = full, .window = COPYSIZE_WINDOW };
}

/* Did the stubs' size, not the stack's end, end a copy of len bytes from sp? A stub copies up
 * to the thread's stack top or the end of sp's page, page boundaries both, or its size. */
static bool cut_by_size(const struct copysize *c, uint64_t sp, unsigned len)
{
	return len < c->full && ((sp + len) % 4096 || len == c->now || len == c->prev);
}

static void set_size(struct copysize *c, unsigned size, unsigned *put)
{
	c->prev = c->now;
	c->now = size;
	if (size < c->least)
		c->least = size;
	c->used = 0;
	c->seen = 0;
	*put = size;
}

bool copysize_seen(struct copysize *c, uint64_t sp, unsigned len, unsigned used, bool over,
		   unsigned *put)
{
	unsigned want;

	*put = 0;
	if (!c->learn)
		return false;
	if (over && cut_by_size(c, sp, len)) {
		c->cut++;
		if (c->window < COPYSIZE_WINDOW_MAX)
			c->window *= 2;
		if (c->now < c->full)
			set_size(c, c->full, put);
		return true;
	}
	if (used > c->used)
		c->used = used;
	if (++c->seen < c->window)
		return false;
	want = c->used + c->used / 4 + COPYSIZE_SLACK;
	want = (want + COPYSIZE_ALIGN - 1) / COPYSIZE_ALIGN * COPYSIZE_ALIGN;
	if (want < COPYSIZE_MIN)
		want = COPYSIZE_MIN;
	if (want > c->full)
		want = c->full;
	if (want != c->now)
		set_size(c, want, put);
	else
		c->used = c->seen = 0;
	return false;
}
