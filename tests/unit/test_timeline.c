// SPDX-License-Identifier: GPL-2.0-only
/* The timeline: intervals, merging when the run outgrows them, carried figures. */
#include <stdlib.h>
#include <string.h>

#include "heap/timeline.h"
#include "unittest.h"

#define MS 1000000ULL

TEST_CASE(points_and_maxima)
{
	struct timeline tl;

	timeline_init(&tl);
	timeline_note(&tl, 0, 10, 1);
	timeline_note(&tl, 500000, 30, 2); /* same ms: the later state, the larger maximum */
	timeline_note(&tl, 600000, 20, 1);
	timeline_note(&tl, 3 * MS + 1, 5, 1);
	CHECK_EQ(tl.n, 4);
	CHECK_EQ(tl.p[0].live_bytes, 20);
	CHECK_EQ(tl.p[0].max_bytes, 30);
	CHECK(!tl.p[1].seen && !tl.p[2].seen);
	CHECK_EQ(tl.p[3].live_bytes, 5);
}

TEST_CASE(doubling)
{
	struct timeline tl;

	timeline_init(&tl);
	for (uint64_t i = 0; i < 1000; i++)
		timeline_note(&tl, i * MS, i, 1);
	/* 1000 ms in at most 256 intervals: 4 ms each */
	CHECK_EQ(tl.interval_ns, 4 * MS);
	CHECK_EQ(tl.n, 250);
	CHECK_EQ(tl.p[0].live_bytes, 3);
	CHECK_EQ(tl.p[0].max_bytes, 3);
	CHECK_EQ(tl.p[249].live_bytes, 999);
}

TEST_CASE(json_carries_quiet_intervals)
{
	struct timeline tl;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	timeline_init(&tl);
	timeline_note(&tl, 0, 100, 2);
	timeline_note(&tl, 2 * MS, 50, 1);
	timeline_json(f, &tl);
	fclose(f);
	CHECK_STREQ(buf, ",\"timeline\":{\"interval_ns\":1000000,\"points\":["
			 "{\"elapsed_ns\":1000000,\"live_bytes\":100,\"live_blocks\":2,"
			 "\"max_live_bytes\":100},"
			 "{\"elapsed_ns\":2000000,\"live_bytes\":100,\"live_blocks\":2,"
			 "\"max_live_bytes\":100},"
			 "{\"elapsed_ns\":3000000,\"live_bytes\":50,\"live_blocks\":1,"
			 "\"max_live_bytes\":50}]}");
	free(buf);
}

