// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython's layouts and line tables (unwind/pylayout.h): the 3.11 table against offsetof() in
 * the 3.11 headers where they are installed, the location table decoder against the lines
 * Python 3.11's own code.co_lines() gave for a fixture function, the str decoding and the
 * merge of Python frames into native backtraces.
 */
#include <string.h>

#include "unwind/pylayout.h"
#include "unittest.h"

bool pyoffsets_311(struct pylayout *l);

TEST_CASE(offsets_311)
{
	const struct pylayout *l = pylayout_find(3, 11);
	struct pylayout h;

	REQUIRE(l);
	if (!pyoffsets_311(&h)) {
		printf("# skip: no CPython 3.11 headers\n");
		return;
	}
#define SAME(f) CHECK_EQ(l->f, h.f)
	SAME(version);
	SAME(rt_tstate_current);
	SAME(rt_finalizing);
	SAME(rt_tss_key);
	SAME(rt_interp_main);
	SAME(is_threads_head);
	SAME(ts_next);
	SAME(ts_cframe);
	SAME(ts_thread_id);
	SAME(cf_current_frame);
	SAME(fr_code);
	SAME(fr_previous);
	SAME(fr_prev_instr);
	SAME(fr_is_entry);
	SAME(fr_owner);
	SAME(fr_size);
	SAME(co_size);
	SAME(co_firstlineno);
	SAME(co_filename);
	SAME(co_name);
	SAME(co_qualname);
	SAME(co_linetable);
	SAME(co_code);
	SAME(co_head);
	SAME(ob_type);
	SAME(ob_size);
	SAME(bytes_data);
	SAME(str_length);
	SAME(str_state);
	SAME(str_ascii_data);
	SAME(str_compact_data);
	SAME(str_kind_shift);
	SAME(str_compact_bit);
	SAME(str_ascii_bit);
	SAME(owner_max);
#undef SAME
}

TEST_CASE(unknown_versions)
{
	CHECK(!pylayout_find(3, 10));
	CHECK(!pylayout_find(3, 12));
	CHECK(!pylayout_find(2, 7));
}

/* A function's location table and the line of each instruction, as CPython 3.11.7 printed
 * them (code.co_linetable and code.co_lines(); -1: None): a loop (lines going back), blank
 * lines (the long form), an except clause and entries with no line. */
static const uint8_t fix_table[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x80, 0x41, 0xdd, 0x0d, 0x12, 0x90, 0x31, 0x89, 0x58, 0x8c,
	0x58, 0xf0, 0x00, 0x0a, 0x05, 0x11, 0xf0, 0x00, 0x0a, 0x05, 0x11, 0x88, 0x01, 0xd8, 0x0b,
	0x0c, 0x88, 0x71, 0x89, 0x35, 0xf0, 0x00, 0x03, 0x09, 0x13, 0xd8, 0x0c, 0x0d, 0x90, 0x11,
	0x89, 0x46, 0x88, 0x41, 0x88, 0x41, 0xe0, 0x0c, 0x0d, 0x90, 0x11, 0x89, 0x46, 0x88, 0x41,
	0xf0, 0x06, 0x03, 0x09, 0x11, 0xd8, 0x0c, 0x0d, 0x90, 0x31, 0x90, 0x71, 0x91, 0x35, 0x89,
	0x4d, 0x88, 0x41, 0x88, 0x41, 0xf8, 0xdd, 0x0f, 0x20, 0xf0, 0x00, 0x01, 0x09, 0x11, 0xf0,
	0x00, 0x01, 0x09, 0x11, 0xf0, 0x00, 0x01, 0x09, 0x11, 0xd8, 0x0c, 0x10, 0x88, 0x44, 0xf0,
	0x03, 0x01, 0x09, 0x11, 0xf8, 0xf8, 0xf8, 0xf0, 0x04, 0x01, 0x0c, 0x1f, 0xf0, 0x00, 0x01,
	0x0c, 0x1f, 0xdd, 0x15, 0x1a, 0x98, 0x31, 0x91, 0x58, 0x94, 0x58, 0xf0, 0x03, 0x01, 0x0c,
	0x1f, 0xf1, 0x00, 0x01, 0x0c, 0x1f, 0xf4, 0x00, 0x01, 0x0c, 0x1f, 0xf0, 0x00, 0x01, 0x05,
	0x1f
};
static const int fix_first = 2;
static const int fix_lines[][2] = {
	{ 0, 2 }, { 2, 3 }, { 4, 3 }, { 6, 4 }, { 8, 4 }, { 10, 4 }, { 12, 4 }, { 14, 4 },
	{ 16, 4 }, { 18, 4 }, { 20, 4 }, { 22, 4 }, { 24, 4 }, { 26, 4 }, { 28, 4 }, { 30, 4 },
	{ 32, 4 }, { 34, 4 }, { 36, 4 }, { 38, 4 }, { 40, 5 }, { 42, 5 }, { 44, 5 }, { 46, 5 },
	{ 48, 5 }, { 50, 6 }, { 52, 6 }, { 54, 6 }, { 56, 6 }, { 58, 6 }, { 60, 6 }, { 62, 8 },
	{ 64, 8 }, { 66, 8 }, { 68, 8 }, { 70, 8 }, { 72, 11 }, { 74, 12 }, { 76, 12 }, { 78, 12 },
	{ 80, 12 }, { 82, 12 }, { 84, 12 }, { 86, 12 }, { 88, 12 }, { 90, 12 }, { 92, -1 },
	{ 94, 13 }, { 96, 13 }, { 98, 13 }, { 100, 13 }, { 102, 13 }, { 104, 13 }, { 106, 13 },
	{ 108, 13 }, { 110, 13 }, { 112, 14 }, { 114, 14 }, { 116, 13 }, { 118, -1 }, { 120, -1 },
	{ 122, -1 }, { 124, 15 }, { 126, 15 }, { 128, 16 }, { 130, 16 }, { 132, 16 }, { 134, 16 },
	{ 136, 16 }, { 138, 16 }, { 140, 16 }, { 142, 16 }, { 144, 16 }, { 146, 16 }, { 148, 16 },
	{ 150, 16 }, { 152, 16 }, { 154, 16 }, { 156, 15 }, { 158, 15 }, { 160, 15 }, { 162, 15 },
	{ 164, 15 }, { 166, 15 }, { 168, 15 }, { 170, 15 }, { 172, 15 }
};
/* code bytes 174 */

TEST_CASE(line_table)
{
	for (size_t i = 0; i < sizeof(fix_lines) / sizeof(fix_lines[0]); i++) {
		int line = pylayout_line(fix_table, sizeof(fix_table), fix_first, fix_lines[i][0]);

		if (line != fix_lines[i][1])
			UNITTEST_FAIL("offset %d: line %d, Python says %d", fix_lines[i][0], line,
				      fix_lines[i][1]);
	}
	/* a frame that has not started (prev_instr one before the code) */
	CHECK_EQ(pylayout_line(fix_table, sizeof(fix_table), fix_first, -2), fix_first);
	/* past the table, or a table cut short */
	CHECK_EQ(pylayout_line(fix_table, sizeof(fix_table), fix_first, 174), -1);
	CHECK_EQ(pylayout_line(fix_table, 3, fix_first, 100), -1);
	CHECK_EQ(pylayout_line(fix_table, 0, fix_first, 0), -1);
}

TEST_CASE(strings)
{
	const struct pylayout *l = pylayout_find(3, 11);
	unsigned off, kind;
	char out[16];
	const uint16_t wide[] = { 'a', 0xe9, 0x20ac };

	REQUIRE(l);
	/* compact ascii, compact latin-1, not compact (a legacy string) */
	CHECK_EQ(pylayout_str(l, 1u << 2 | 1u << 5 | 1u << 6, 3, &off, &kind), 0);
	CHECK_EQ(off, l->str_ascii_data);
	CHECK_EQ(kind, 1);
	CHECK_EQ(pylayout_str(l, 2u << 2 | 1u << 5, 3, &off, &kind), 0);
	CHECK_EQ(off, l->str_compact_data);
	CHECK_EQ(kind, 2);
	CHECK(pylayout_str(l, 1u << 2, 3, &off, &kind));
	CHECK(pylayout_str(l, 3u << 2 | 1u << 5, 3, &off, &kind));
	CHECK_EQ(pylayout_utf8(wide, 3, 2, out, sizeof(out)), 6);
	CHECK_STREQ(out, "a\xc3\xa9\xe2\x82\xac");
	/* cut at a whole character */
	CHECK_EQ(pylayout_utf8(wide, 3, 2, out, 5), 3);
	CHECK_STREQ(out, "a\xc3\xa9");
	/* four bytes past U+FFFF; a surrogate or a value past U+10FFFF is no str's text */
	{
		static const uint32_t astral[] = { 0x1f600 }, past[] = { 'a', 0x110000 };
		static const uint16_t lone[] = { 'a', 0xd800 };

		CHECK_EQ(pylayout_utf8(astral, 1, 4, out, sizeof(out)), 4);
		CHECK_STREQ(out, "\xf0\x9f\x98\x80");
		CHECK_EQ(pylayout_utf8(past, 2, 4, out, sizeof(out)), SIZE_MAX);
		CHECK_EQ(pylayout_utf8(lone, 2, 2, out, sizeof(out)), SIZE_MAX);
	}
}

/* Native pcs 0x100..: the ones in [0x500, 0x600) are the evaluation loop's. */
static bool is_eval(void *ctx, uint64_t pc)
{
	(void)ctx;
	return pc >= 0x500 && pc < 0x600;
}

TEST_CASE(merge)
{
	const uint64_t pcs[] = { 0x100, 0x510, 0x200, 0x520, 0x300 };
	const uint64_t py[] = { 1, 2, 3, 4 };
	const bool entry[] = { false, true, true, true };
	uint64_t out[16];
	unsigned n;

	/* two invocations of the loop: py 1 and 2 in the first, 3 in the second, 4 left over */
	n = pylayout_merge(pcs, 5, py, entry, 4, is_eval, NULL, out, 16);
	REQUIRE(n == 7);
	CHECK_EQ(out[0], 0x100);
	CHECK_EQ(out[1], 1);
	CHECK_EQ(out[2], 2);
	CHECK_EQ(out[3], 0x200);
	CHECK_EQ(out[4], 3);
	CHECK_EQ(out[5], 0x300);
	CHECK_EQ(out[6], 4);
	/* cut at the depth */
	n = pylayout_merge(pcs, 5, py, entry, 4, is_eval, NULL, out, 3);
	REQUIRE(n == 3);
	CHECK_EQ(out[2], 2);
	/* the native walk did not reach the loop: the Python frames take the native ones' place,
	 * the caller's frame kept */
	n = pylayout_merge(pcs, 1, py, entry, 4, is_eval, NULL, out, 3);
	REQUIRE(n == 3);
	CHECK_EQ(out[0], 0x100);
	CHECK_EQ(out[1], 1);
	CHECK_EQ(out[2], 2);
	{
		const uint64_t deep[] = { 0x100, 0x101, 0x102, 0x103 };

		n = pylayout_merge(deep, 4, py, entry, 2, is_eval, NULL, out, 4);
		REQUIRE(n == 4);
		CHECK_EQ(out[1], 0x101);
		CHECK_EQ(out[2], 1);
		CHECK_EQ(out[3], 2);
	}
	/* no Python frames: the native ones as they were */
	n = pylayout_merge(pcs, 5, py, entry, 0, is_eval, NULL, out, 16);
	REQUIRE(n == 5);
	CHECK_EQ(out[1], 0x510);
}
