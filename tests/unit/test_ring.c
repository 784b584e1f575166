// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ring's records parsed (account/ringrec.c): what the stubs write, and what a program that
 * scribbles on its ring can leave there, which must never send the reader out of the record.
 */
#include <string.h>

#include "account/ringrec.h"
#include "stub_arch.h"
#include "unittest.h"

#define SIZE 4096u /* the ring */
#define POS 0x1230u /* the record's position: a multiple of 16 */

static uint8_t rec[SIZE];

static void put64(unsigned off, uint64_t v)
{
	memcpy(rec + off, &v, 8);
}

static void put32(unsigned off, uint32_t v)
{
	memcpy(rec + off, &v, 4);
}

/* A well-formed entry record with copy bytes of stack. */
static void entry(uint32_t copy)
{
	memset(rec, 0, sizeof(rec));
	put64(STUB_R_TAG, POS | STUB_KIND_ENTRY);
	put32(STUB_R_LEN, (STUB_REC_ENTRY + copy + 15) & ~15u);
	put32(STUB_R_HOOK, 3 | STUB_HOOK_NORET);
	put64(STUB_RE_ARG0, 100);
	put64(STUB_RE_ARG1, 101);
	put64(STUB_RE_ARG2, 102);
	put64(STUB_RE_SP, 0x7ff000);
	put64(STUB_RE_TIME, 555);
	put64(STUB_RE_THREAD, 0xabc000);
	put32(STUB_RE_COPY, copy);
	put32(STUB_RE_RETURNS, 1);
}

TEST_CASE(entry_as_written)
{
	struct ringrec r;

	entry(40);
	REQUIRE(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_OK);
	CHECK_EQ(r.kind, STUB_KIND_ENTRY);
	CHECK_EQ(r.len, (STUB_REC_ENTRY + 40 + 15) & ~15u);
	CHECK_EQ(r.word, 3 | STUB_HOOK_NORET);
	CHECK_EQ(r.args[0], 100);
	CHECK_EQ(r.args[2], 102);
	CHECK_EQ(r.sp, 0x7ff000);
	CHECK_EQ(r.tsc, 555);
	CHECK_EQ(r.key, 0xabc000);
	CHECK_EQ(r.copy, 40);
	CHECK(r.returns);
}

TEST_CASE(free_and_return_as_written)
{
	struct ringrec r;

	memset(rec, 0, sizeof(rec));
	put64(STUB_R_TAG, POS | STUB_KIND_FREE);
	put32(STUB_R_LEN, STUB_REC_FREE);
	put64(STUB_RF_PTR, 0x5000);
	put64(STUB_RF_THREAD, 0xabc000);
	put64(STUB_RF_TIME, 77);
	REQUIRE(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_OK);
	CHECK_EQ(r.args[0], 0x5000);
	CHECK_EQ(r.key, 0xabc000);
	CHECK_EQ(r.tsc, 77);
	memset(rec, 0, sizeof(rec));
	put64(STUB_R_TAG, POS | STUB_KIND_RETURN);
	put32(STUB_R_LEN, STUB_REC_RETURN);
	put64(STUB_RR_COOKIE, POS - 256);
	put64(STUB_RR_RESULT, 0x6000);
	put64(STUB_RR_THREAD, 0xabc000);
	REQUIRE(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_OK);
	CHECK_EQ(r.cookie, POS - 256);
	CHECK_EQ(r.result, 0x6000);
	CHECK_EQ(r.key, 0xabc000);
}

TEST_CASE(not_written_yet)
{
	struct ringrec r;

	entry(0);
	put64(STUB_R_TAG, (POS - 16) | STUB_KIND_ENTRY); /* a lap behind: an older record's */
	CHECK(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_NOT_YET);
	put64(STUB_R_TAG, POS | 7); /* no such kind */
	CHECK(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_NOT_YET);
}

TEST_CASE(scribbled_lengths)
{
	struct ringrec r;

	entry(0);
	put32(STUB_R_LEN, STUB_REC_ENTRY + 8); /* not a multiple of 16 */
	CHECK(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_BROKEN);
	put32(STUB_R_LEN, 2 * SIZE); /* longer than the ring */
	CHECK(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_BROKEN);
	put32(STUB_R_LEN, 16); /* shorter than an entry's header */
	CHECK(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_BROKEN);
}

/* The stack copy's length is the program's to scribble on too: a record whose copy runs past
 * its own length would have the unwinder read beyond it (past the ring's mapping: a crash). */
TEST_CASE(scribbled_copy_length)
{
	struct ringrec r;
	enum ringrec_state st;

	entry(64);
	put32(STUB_RE_COPY, 0xfffffff0);
	st = ringrec_parse(rec, POS, SIZE, &r);
	CHECK(st == RINGREC_BROKEN);
	CHECK(st != RINGREC_OK || STUB_REC_ENTRY + (uint64_t)r.copy <= r.len);
	entry(64);
	put32(STUB_RE_COPY, 65); /* one byte past the record's 64 */
	CHECK(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_BROKEN);
}

/* An entry's Python section (stub_layout.h: STUB_PY_*): after the stack copy rounded up to 16,
 * present when the length leaves room; its count must fit in the record. */
TEST_CASE(python_section)
{
	struct ringrec r;
	uint32_t off = (STUB_REC_ENTRY + 40 + 15) & ~15u;

	entry(40);
	REQUIRE(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_OK);
	CHECK_EQ(r.py_count, 0);
	CHECK_EQ(r.py_off, 0);
	put32(STUB_R_LEN, off + STUB_PY_FRAMES + 2 * STUB_PY_FRAME);
	put64(off + STUB_PY_COUNT, 2);
	REQUIRE(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_OK);
	CHECK_EQ(r.py_off, off);
	CHECK_EQ(r.py_count, 2);
	/* fewer written than room for: the count says */
	put64(off + STUB_PY_COUNT, 1);
	REQUIRE(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_OK);
	CHECK_EQ(r.py_count, 1);
	/* a count past the record, or past the most the stubs write */
	put64(off + STUB_PY_COUNT, 3);
	CHECK(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_BROKEN);
	put64(off + STUB_PY_COUNT, (uint64_t)1 << 60);
	CHECK(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_BROKEN);
	put32(STUB_R_LEN, off + STUB_PY_FRAMES + 200 * STUB_PY_FRAME);
	put64(off + STUB_PY_COUNT, 200);
	CHECK(ringrec_parse(rec, POS, SIZE, &r) == RINGREC_BROKEN);
}
