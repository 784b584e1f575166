// SPDX-License-Identifier: GPL-2.0-only
/* Merges of recorded Python frames, remembered (unwind/pymemo.h). */
#include <string.h>

#include "unittest.h"
#include "unwind/pymemo.h"

static const uint64_t codes[3] = { 0x7f0000001000ull, 0x7f0000002000ull, 0x7f0000003000ull };
static const uint64_t instrs[3] = { 0x7f0000001040ull, 0x7f0000002081ull, 0x7f00000030c0ull };
static const uint64_t native[4] = { 0x401000, 0x402000, 0x403000, 0x404000 };
static const uint64_t merged[6] = { 0x401000, 0x402000, 1, 2, 3, 0x404000 };

static struct pymemo_key key(void)
{
	return (struct pymemo_key){ codes, instrs, native, 3, 4, 8 };
}

TEST_CASE(found_as_kept)
{
	struct pymemo *m = pymemo_new();
	struct pymemo_key k = key();
	uint64_t out[PYMEMO_PCS];

	CHECK_EQ(pymemo_find(m, &k, out), 0);
	pymemo_keep(m, &k, merged, 6);
	memset(out, 0, sizeof(out));
	CHECK_EQ(pymemo_find(m, &k, out), 6);
	CHECK(!memcmp(out, merged, sizeof(merged)));
	pymemo_free(m);
}

/* Each word of the key counts: another instruction, code object, native frame, count or
 * depth is another merge. */
TEST_CASE(every_word_counts)
{
	struct pymemo *m = pymemo_new();
	struct pymemo_key k = key();
	uint64_t out[PYMEMO_PCS], other[4];

	pymemo_keep(m, &k, merged, 6);
	memcpy(other, instrs, sizeof(instrs));
	other[2] ^= 2;
	k.instrs = other;
	CHECK_EQ(pymemo_find(m, &k, out), 0);
	k = key();
	memcpy(other, codes, sizeof(codes));
	other[0] += 8;
	k.codes = other;
	CHECK_EQ(pymemo_find(m, &k, out), 0);
	k = key();
	memcpy(other, native, sizeof(native));
	other[3]++;
	k.pcs = other;
	CHECK_EQ(pymemo_find(m, &k, out), 0);
	k = key();
	k.nframes = 2;
	CHECK_EQ(pymemo_find(m, &k, out), 0);
	k = key();
	k.n = 3;
	CHECK_EQ(pymemo_find(m, &k, out), 0);
	k = key();
	k.max = 7;
	CHECK_EQ(pymemo_find(m, &k, out), 0);
	k = key();
	CHECK_EQ(pymemo_find(m, &k, out), 6);
	pymemo_free(m);
}

TEST_CASE(forget_drops_all)
{
	struct pymemo *m = pymemo_new();
	struct pymemo_key k = key();
	uint64_t out[PYMEMO_PCS];

	pymemo_keep(m, &k, merged, 6);
	pymemo_forget(m);
	CHECK_EQ(pymemo_find(m, &k, out), 0);
	pymemo_keep(m, &k, merged, 5);
	CHECK_EQ(pymemo_find(m, &k, out), 5);
	pymemo_free(m);
}

/* Keys too big for an entry are neither kept nor found; no memo finds nothing. */
TEST_CASE(too_big_and_none)
{
	struct pymemo *m = pymemo_new();
	struct pymemo_key k = key();
	uint64_t out[PYMEMO_PCS];

	k.max = PYMEMO_PCS + 1;
	pymemo_keep(m, &k, merged, 6);
	CHECK_EQ(pymemo_find(m, &k, out), 0);
	k = key();
	CHECK_EQ(pymemo_find(NULL, &k, out), 0);
	pymemo_forget(NULL);
	pymemo_free(m);
}
