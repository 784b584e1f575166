// SPDX-License-Identifier: GPL-2.0-only
/*
 * inlined: allocations made in helpers the compiler must inline (always_inline works at -O0,
 * at -O2 and despite -fno-inline), for the inline chains of report frames (test_inline.py).
 *   raw_block(n): malloc(n), inlined;
 *   pair_block(n): raw_block(2 * n), inlined too (a chain of two);
 *   build(): four calls, each a site of its own: raw_block(16), raw_block(32), pair_block(24)
 *   (48 bytes) and raw_block(64), every block kept.
 * Frame 1 of all four is in build; its line table says raw_block's malloc line for each, so
 * without inline frames all four sites would read the same line. With them, frame 1 is build
 * at the line of its own call ("call(...)" below), raw_block (and pair_block) inlined there at
 * "site(...)". No stdio; the sites and the summary go to expect.h's records.
 */
#include <stdlib.h>

#include "expect.h"

static inline __attribute__((always_inline)) void *raw_block(size_t n)
{
	return malloc(n); /* site(raw_block) */
}

static inline __attribute__((always_inline)) void *pair_block(size_t n)
{
	return raw_block(2 * n); /* site(pair_block) */
}

static void *kept[4];

__attribute__((noipa)) void build(void)
{
	kept[0] = raw_block(16); /* call(raw_block) 16 */
	kept[1] = raw_block(32); /* call(raw_block) 32 */
	kept[2] = pair_block(24); /* call(pair_block) 48 */
	kept[3] = raw_block(64); /* call(raw_block) 64 */
}

int main(void)
{
	build();
	for (int i = 0; i < 4; i++)
		keep(kept[i]);
	expect_alloc(16);
	expect_alloc(32);
	expect_alloc(48);
	expect_alloc(64);
	expect_site("malloc", 4, 16 + 32 + 48 + 64, "build,main"); /* the four, by their chain */
	expect_summary(&expect_tracked);
	return 0;
}
