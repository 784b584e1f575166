// SPDX-License-Identifier: GPL-2.0-only
/* The stack copy's size, learned from the unwinds (patch/copysize.h). */
#include "patch/copysize.h"
#include "unittest.h"

#define SP 0x7ffc0000f010ull /* not at a page's end: a copy from it ends where its size says */

/* n records whose unwinds read used bytes of copies of len bytes; the last size put, or 0. */
static unsigned feed(struct copysize *c, unsigned n, unsigned len, unsigned used)
{
	unsigned last = 0, put;

	for (unsigned i = 0; i < n; i++) {
		CHECK(!copysize_seen(c, SP, len, used, false, &put));
		if (put)
			last = put;
	}
	return last;
}

TEST_CASE(learns_after_a_window)
{
	struct copysize c;

	copysize_init(&c, 8192, true);
	CHECK_EQ(feed(&c, COPYSIZE_WINDOW - 1, 8192, 300), 0);
	/* 300 + 75 + 128 = 503, rounded up to 512 */
	CHECK_EQ(feed(&c, 1, 8192, 300), 512);
	CHECK_EQ(c.now, 512);
	CHECK_EQ(c.least, 512);
	/* another window of the same: no change */
	CHECK_EQ(feed(&c, COPYSIZE_WINDOW, 512, 300), 0);
}

TEST_CASE(never_below_the_least_nor_above_full)
{
	struct copysize c;

	copysize_init(&c, 8192, true);
	CHECK_EQ(feed(&c, COPYSIZE_WINDOW, 8192, 0), COPYSIZE_MIN);
	copysize_init(&c, 1024, true);
	CHECK_EQ(feed(&c, COPYSIZE_WINDOW, 1024, 1000), 0); /* 1378 wanted: 1024 is the most */
	CHECK_EQ(c.now, 1024);
}

TEST_CASE(running_off_a_learned_copy_cuts_and_goes_back_to_full)
{
	struct copysize c;
	unsigned put;

	copysize_init(&c, 8192, true);
	feed(&c, COPYSIZE_WINDOW, 8192, 300);
	CHECK_EQ(c.now, 512);
	/* cut short: back to full at once, the next window twice as long */
	CHECK(copysize_seen(&c, SP, 512, 512, true, &put));
	CHECK_EQ(put, 8192);
	CHECK_EQ(c.cut, 1);
	/* a record copied at the old size, read after the change: cut too, nothing to put */
	CHECK(copysize_seen(&c, SP, 512, 512, true, &put));
	CHECK_EQ(put, 0);
	CHECK_EQ(c.cut, 2);
	/* the deeper stacks are learned over the longer window */
	CHECK_EQ(feed(&c, 4 * COPYSIZE_WINDOW - 1, 8192, 4400), 0);
	CHECK_EQ(feed(&c, 1, 8192, 4400), 5632); /* 4400 + 1100 + 128 = 5628 */
	CHECK_EQ(c.least, 512);
}

TEST_CASE(a_copy_the_stack_ended_is_not_cut)
{
	struct copysize c;
	unsigned put;

	copysize_init(&c, 8192, true);
	feed(&c, COPYSIZE_WINDOW, 8192, 300);
	/* 200 bytes up to a page's end (the stack's top): the unwind wanting more is not cut */
	CHECK(!copysize_seen(&c, 0x7ffc0000ff38ull, 200, 200, true, &put));
	CHECK_EQ(put, 0);
	CHECK_EQ(c.cut, 0);
	/* nor is a full-size copy */
	CHECK(!copysize_seen(&c, SP, 8192, 8192, true, &put));
	CHECK_EQ(c.cut, 0);
}

TEST_CASE(a_fixed_size_is_kept)
{
	struct copysize c;
	unsigned put;

	copysize_init(&c, 2048, false);
	CHECK_EQ(feed(&c, 4 * COPYSIZE_WINDOW, 2048, 100), 0);
	CHECK(!copysize_seen(&c, SP, 2048, 2048, true, &put));
	CHECK_EQ(put, 0);
	CHECK_EQ(c.now, 2048);
}
