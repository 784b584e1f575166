// SPDX-License-Identifier: GPL-2.0-only
/* Reports: sorting, --top, filters, the three formats, with a fake symbol resolver. */
#include <errno.h>
#include <ctype.h>

#include "unwind/frames.h"
#include "output/report.h"
#include "util/util.h"
#include "unittest.h"

/* PCs the fake resolver knows. */
#define PC_MALLOC 0x1000
#define PC_MAKE_NODE 0x2000
#define PC_FN_X 0x2100
#define PC_FN_Y 0x2200
#define PC_FN_Z 0x2300
#define PC_MAIN 0x3000
#define PC_LIBFOO 0x4000 /* module known, function not */
#define PC_WEIRD 0x5000 /* a name with characters every format must escape */
#define PC_NOTHING 0x6000 /* nothing known */

static unsigned resolver_calls;

static void fake_resolve(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	(void)index;
	resolver_calls++;
	CHECK(ctx == &resolver_calls);
	out->module = "/usr/bin/prog";
	switch (pc) {
	case PC_MALLOC:
		*out = (struct sym_frame){ .function = "malloc", .offset = 0x1b,
					   .module = "/lib/libc.so.6", .line = -1 };
		break;
	case PC_MAKE_NODE:
		*out = (struct sym_frame){ .function = "make_node", .offset = 0x14,
					   .module = "/usr/bin/prog", .file = "list.c", .line = 42 };
		break;
	case PC_FN_X:
		out->function = "fn_x";
		break;
	case PC_FN_Y:
		out->function = "fn_y";
		break;
	case PC_FN_Z:
		out->function = "fn_z";
		break;
	case PC_MAIN:
		*out = (struct sym_frame){ .function = "main", .offset = 0x20,
					   .module = "/usr/bin/prog", .file = "prog.c", .line = 10 };
		break;
	case PC_LIBFOO:
		out->module = "/usr/lib/libfoo.so";
		out->module_offset = 0x2f1c0;
		break;
	case PC_WEIRD:
		out->function = "f\"q\\b;c d\n";
		out->offset = 3;
		break;
	default:
		out->module = NULL;
		break;
	}
}

static struct report_opts opts(enum report_format fmt, enum report_sort sort)
{
	return (struct report_opts){ .format = fmt, .sort = sort, .max_size = UINT64_MAX };
}

static struct report_info info(uint64_t now)
{
	return (struct report_info){ .pid = 1234,
				     .command = "prog arg",
				     .now_ns = now,
				     .elapsed_ns = 777,
				     .resolve = fake_resolve,
				     .resolve_ctx = &resolver_calls };
}

/* The report as a string (caller frees). */
static char *run(const struct table *t, const struct report_opts *o, const struct report_info *ri)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK_EQ(report_write(f, t, o, ri), 0);
	fclose(f);
	return buf;
}

/*
 * Three backtraces that every sort key orders differently:
 *   X (index 0): count 3, size 30,  peak 5/50,  first at 300
 *   Y (index 1): count 1, size 100, peak 1/100, first at 200
 *   Z (index 2): count 2, size 60,  peak 2/400, first at 100 (blocks at 150 and 400)
 */
/* Block times are kept in ms: scale 1000000 makes the times below milliseconds. */
static void build_xyz_scaled(struct table *t, uint64_t scale)
{
	static const uint64_t px[] = { PC_MALLOC, PC_FN_X, PC_MAIN };
	static const uint64_t py[] = { PC_MALLOC, PC_FN_Y, PC_MAIN };
	static const uint64_t pz[] = { PC_MALLOC, PC_FN_Z, PC_MAIN };
	uint32_t x, y, z;

	table_init(t);
	x = table_intern(t, px, 3);
	y = table_intern(t, py, 3);
	z = table_intern(t, pz, 3);
	table_alloc(t, 0xa00, 400, z, 100 * scale);
	table_free(t, 0xa00);
	table_alloc(t, 0xa10, 30, z, 150 * scale);
	table_alloc(t, 0xa20, 30, z, 400 * scale);
	table_alloc(t, 0xb00, 100, y, 200 * scale);
	for (uint64_t i = 0; i < 5; i++)
		table_alloc(t, 0xc00 + i * 16, 10, x, (300 + i) * scale);
	table_free(t, 0xc00);
	table_free(t, 0xc10);
}

static void build_xyz(struct table *t)
{
	build_xyz_scaled(t, 1);
}

/* A minimal JSON syntax check: return the end of the value at s, or NULL. */
static const char *json_value(const char *s)
{
	if (*s == '{' || *s == '[') {
		char close = *s == '{' ? '}' : ']';

		if (*++s == close)
			return s + 1;
		for (;;) {
			if (close == '}') {
				if (*s != '"' || !(s = json_value(s)) || *s++ != ':')
					return NULL;
			}
			if (!(s = json_value(s)))
				return NULL;
			if (*s == close)
				return s + 1;
			if (*s++ != ',')
				return NULL;
		}
	}
	if (*s == '"') {
		for (s++; *s != '"'; s++) {
			if ((unsigned char)*s < 0x20)
				return NULL;
			if (*s == '\\' && !*++s)
				return NULL;
		}
		return s + 1;
	}
	if (!strncmp(s, "null", 4) || !strncmp(s, "true", 4))
		return s + 4;
	if (!strncmp(s, "false", 5))
		return s + 5;
	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s))
		return NULL;
	while (isdigit((unsigned char)*s))
		s++;
	return s;
}

static bool json_valid_line(const char *s)
{
	const char *end = json_value(s);

	return end && end[0] == '\n' && end[1] == '\0';
}

/* Which of X, Y, Z each line of a folded report names, in order: e.g. "ZYX". */
static void folded_order(const char *out, char *order)
{
	for (const char *l = out; (l = strstr(l, ";fn_")); l += 4)
		*order++ = toupper((unsigned char)l[4]);
	*order = '\0';
}

TEST_CASE(parse_sort)
{
	enum report_sort s = SORT_SIZE;

	CHECK_EQ(report_parse_sort("count", &s), 0);
	CHECK_EQ(s, SORT_COUNT);
	CHECK_EQ(report_parse_sort("peak-size", &s), 0);
	CHECK_EQ(s, SORT_PEAK_SIZE);
	CHECK_EQ(report_parse_sort("peak-count", &s), 0);
	CHECK_EQ(s, SORT_PEAK_COUNT);
	CHECK_EQ(report_parse_sort("age", &s), 0);
	CHECK_EQ(s, SORT_AGE);
	CHECK_EQ(report_parse_sort("size", &s), 0);
	CHECK_EQ(s, SORT_SIZE);
	CHECK_EQ(report_parse_sort("Size", &s), -EINVAL);
	CHECK_EQ(report_parse_sort("", &s), -EINVAL);
	CHECK_EQ(report_parse_sort("peak", &s), -EINVAL);
	CHECK_EQ(s, SORT_SIZE);
}

TEST_CASE(sort_keys)
{
	static const struct {
		enum report_sort sort;
		const char *order;
	} cases[] = {
		{ SORT_SIZE, "YZX" },	   { SORT_COUNT, "XZY" }, { SORT_PEAK_SIZE, "ZYX" },
		{ SORT_PEAK_COUNT, "XZY" }, { SORT_AGE, "ZYX" },
	};
	struct table t;
	struct report_info ri = info(1000);
	char order[8];

	build_xyz(&t);
	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		struct report_opts o = opts(FMT_FOLDED, cases[i].sort);
		char *out = run(&t, &o, &ri);

		folded_order(out, order);
		CHECK_STREQ(order, cases[i].order);
		free(out);
	}
	table_destroy(&t);
}

TEST_CASE(sort_ties_by_index)
{
	static const uint64_t p1[] = { PC_MALLOC, PC_FN_Z }, p2[] = { PC_MALLOC, PC_FN_X };
	struct table t;
	struct report_opts o = opts(FMT_FOLDED, SORT_SIZE);
	struct report_info ri = info(1000);
	char *out;

	table_init(&t);
	table_alloc(&t, 0x10, 8, table_intern(&t, p1, 2), 5);
	table_alloc(&t, 0x20, 8, table_intern(&t, p2, 2), 5);
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "fn_z;malloc 8\nfn_x;malloc 8\n");
	free(out);
	o.sort = SORT_AGE;
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "fn_z;malloc 8\nfn_x;malloc 8\n");
	free(out);
	table_destroy(&t);
}

TEST_CASE(text_exact_layout)
{
	static const uint64_t pcs[] = { PC_MALLOC, PC_MAKE_NODE, PC_LIBFOO, PC_NOTHING };
	struct table t;
	struct report_opts o = opts(FMT_TEXT, SORT_SIZE);
	struct report_info ri = info(1000 + 6236000);
	uint32_t b;
	char *out;

	table_init(&t);
	b = table_intern(&t, pcs, 4);
	table_alloc(&t, 0x100, 22704, b, 1000);
	table_alloc(&t, 0x200, 8976, b, 2000);
	table_free(&t, 0x200);
	ri.has_statm = true;
	ri.statm_vss = 134201000;
	ri.statm_rss = 40960;
	ri.statm_shared = 0;
	resolver_calls = 0;
	out = run(&t, &o, &ri);
	CHECK_STREQ(out,
		    "=== backtrace #1 === [count/peak: 1/2] [size/peak: 22.172 KiB/30.938 KiB] "
		    "[age: 6.236 ms] [by: make_node (list.c:42)]\n"
		    " 0 [        0x1000] malloc +0x1b\n"
		    " 1 [        0x2000] make_node +0x14 (list.c:42)\n"
		    " 2 [        0x4000] /usr/lib/libfoo.so +0x2f1c0\n"
		    " 3 [        0x6000] ??\n"
		    "\n"
		    "[heaptrace] heap traced num of backtrace : 1\n"
		    "[heaptrace] heap traced allocation size  : 22.172 KiB\n"
		    "[heaptrace] calls (alloc/free/unknown)   : 2 / 1 / 0\n"
		    "[heaptrace] peak (size/blocks then/time) : 30.938 KiB / 2 / 0 ns\n"
		    "[heaptrace] most live blocks at any time : 2\n"
		    "[heaptrace] statm info (VSS/RSS/shared)  : "
		    "127.984 MiB / 40.000 KiB / 0 B\n");
	CHECK_EQ(resolver_calls, 5); /* the label's frame, then the four */
	free(out);

	ri.has_statm = false;
	out = run(&t, &o, &ri);
	CHECK(strstr(out, "statm") == NULL);
	free(out);
	table_destroy(&t);
}

/* Each text report starts with a line naming its process and which report it is. */
TEST_CASE(text_header_line)
{
#define HEADER "[heaptrace] report for pid 1234 (prog), 3.214 s after start: periodic #3\n" \
	       "=== backtrace #1 ==="
	static const uint64_t pcs[] = { PC_MALLOC, PC_MAKE_NODE };
	struct table t;
	struct report_opts o = opts(FMT_TEXT, SORT_SIZE);
	struct report_info ri = info(5000);
	char *out;

	table_init(&t);
	table_alloc(&t, 0x100, 10, table_intern(&t, pcs, 2), 10);
	ri.command = "/usr/bin/prog --flag x";
	ri.elapsed_ns = 3214000000ull;
	ri.kind = "periodic #3";
	out = run(&t, &o, &ri);
	CHECK(!strncmp(out, HEADER, strlen(HEADER)));
	free(out);
	table_free(&t, 0x100); /* nothing live, nothing notable: nothing at all */
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "");
	free(out);
	table_destroy(&t);
}

/* A backtrace as deep as --depth may have been cut: "[...]" outermost in text and folded,
 * "truncated" in JSON; a shorter one is not. */
TEST_CASE(depth_cut_marked)
{
	static const uint64_t deep[] = { PC_MALLOC, PC_FN_X, PC_MAIN };
	static const uint64_t shallow[] = { PC_MALLOC, PC_FN_Y };
	struct table t;
	struct report_opts o = opts(FMT_FOLDED, SORT_SIZE);
	struct report_info ri = info(5000);
	char *out;

	table_init(&t);
	table_alloc(&t, 0x100, 20, table_intern(&t, deep, 3), 10);
	table_alloc(&t, 0x200, 10, table_intern(&t, shallow, 2), 10);
	o.depth_limit = 3;
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "[...];main;fn_x;malloc 20\nfn_y;malloc 10\n");
	free(out);
	o.label_process = true;
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "[prog pid 1234];[...];main;fn_x;malloc 20\n"
			 "[prog pid 1234];fn_y;malloc 10\n");
	free(out);
	o.format = FMT_TEXT;
	out = run(&t, &o, &ri);
	CHECK(strstr(out, " 2 [        0x3000] main +0x20 (prog.c:10)\n"
			  " 3 [              ] [...] (cut at --depth=3)\n\n"));
	CHECK(strstr(strstr(out, "fn_y"), "[...]") == NULL); /* the shorter one is whole */
	free(out);
	o.format = FMT_JSON;
	out = run(&t, &o, &ri);
	CHECK(strstr(out, "\"line\":10,\"how\":\"cfi\"}],\"truncated\":true}"));
	CHECK(strstr(out, "\"how\":\"cfi\"}],\"truncated\":false}"));
	free(out);
	table_destroy(&t);
}

/* The header line of a one-block report of `size` bytes that is `age` ns old. */
static char *one_block_header(uint64_t size, uint64_t age)
{
	static const uint64_t pcs[] = { PC_MALLOC };
	struct table t;
	struct report_opts o = opts(FMT_TEXT, SORT_SIZE);
	struct report_info ri = info(10 + age);
	char *out;

	table_init(&t);
	table_alloc(&t, 0x100, size, table_intern(&t, pcs, 1), 10);
	out = run(&t, &o, &ri);
	*strchr(out, '\n') = '\0';
	table_destroy(&t);
	return out;
}

TEST_CASE(units)
{
	static const struct {
		uint64_t size, age;
		const char *line;
	} cases[] = {
		{ 0, 0, "[size/peak: 0 B/0 B] [age: 0 ns] [by: malloc]" },
		{ 1023, 999, "[size/peak: 1023 B/1023 B] [age: 999 ns] [by: malloc]" },
		{ 1024, 1000, "[size/peak: 1.000 KiB/1.000 KiB] [age: 1.000 us] [by: malloc]" },
		{ 1048575, 999999,
		  "[size/peak: 1023.999 KiB/1023.999 KiB] [age: 999.999 us] [by: malloc]" },
		{ 1048576, 1500000, "[size/peak: 1.000 MiB/1.000 MiB] [age: 1.500 ms] [by: malloc]" },
		{ 1073741823, 999999499,
		  "[size/peak: 1.000 GiB/1.000 GiB] [age: 999.999 ms] [by: malloc]" },
		{ 1610612736, 999999999,
		  "[size/peak: 1.500 GiB/1.500 GiB] [age: 1.000 sec] [by: malloc]" },
		{ 5000000000000, 2500000000,
		  "[size/peak: 4.547 TiB/4.547 TiB] [age: 2.500 sec] [by: malloc]" },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		char *out = one_block_header(cases[i].size, cases[i].age);
		const char *tail = strstr(out, "[size/peak");

		CHECK_STREQ(tail, cases[i].line);
		free(out);
	}
}

TEST_CASE(text_top)
{
	struct table t;
	struct report_opts o = opts(FMT_TEXT, SORT_SIZE);
	struct report_info ri = info(1000);
	char *out;

	build_xyz(&t);
	o.top = 2;
	resolver_calls = 0;
	out = run(&t, &o, &ri);
	CHECK(strstr(out, "=== backtrace #1 === [count/peak: 1/1] "
			  "[size/peak: 100 B/100 B]"));
	CHECK(strstr(out, "=== backtrace #2 === [count/peak: 2/2] "
			  "[size/peak: 60 B/400 B]"));
	CHECK(strstr(out, "=== backtrace #3 ===") == NULL);
	CHECK(strstr(out, "fn_x") == NULL);
	/* The summary lines describe the whole heap, not the top. */
	CHECK(strstr(out, "[heaptrace] heap traced num of backtrace : 3\n"));
	CHECK(strstr(out, "[heaptrace] heap traced allocation size  : 190 B\n"));
	/* the heap peaked at 400 B (Z's first block, since freed): twice the end or more */
	CHECK(strstr(out, "\n=== heap at its peak: 400 B in 1 blocks, "));
	CHECK(strstr(out, "=== peak #1 === [count: 1] [size: 400 B] [by: fn_z]\n 0 ["));
	CHECK(strstr(out, "=== peak #2 ===") == NULL);
	CHECK_EQ(resolver_calls, 12); /* once per frame printed, and per label */
	free(out);

	o.top = 0;
	out = run(&t, &o, &ri);
	CHECK(strstr(out, "=== backtrace #3 === [count/peak: 3/5] [size/peak: 30 B/50 B]"));
	free(out);
	o.top = 10;
	out = run(&t, &o, &ri);
	CHECK(strstr(out, "=== backtrace #3 ===") && !strstr(out, "=== backtrace #4"));
	free(out);
	table_destroy(&t);
}

TEST_CASE(nothing_live)
{
	static const uint64_t pcs[] = { PC_MALLOC, PC_MAIN };
	struct table t;
	struct report_opts o = opts(FMT_TEXT, SORT_SIZE);
	struct report_info ri = info(1000);
	char *out;

	table_init(&t);
	table_alloc(&t, 0x10, 8, table_intern(&t, pcs, 2), 5);
	table_free(&t, 0x10);
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "");
	free(out);
	o.format = FMT_FOLDED;
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "");
	free(out);
	/* JSON is always written. */
	o.format = FMT_JSON;
	out = run(&t, &o, &ri);
	CHECK(json_valid_line(out));
	CHECK(strstr(out, "\"live_blocks\":0,"));
	CHECK(strstr(out, "\"backtraces\":0,\"total_backtraces\":1,"));
	CHECK(strstr(out, ",\"backtraces\":[],\"peak\":{\"live_bytes\":8,\"live_blocks\":1,"));
	CHECK(strstr(out, "\"backtraces\":[{\"count\":1,\"size\":8,\"frames\":["));
	free(out);
	/* nothing live but a large peak (1 MiB or more): the heap at its peak, with its
	 * backtraces */
	table_alloc(&t, 0x20, 2 << 20, 0, 6);
	table_free(&t, 0x20);
	o.format = FMT_TEXT;
	out = run(&t, &o, &ri);
	CHECK(strstr(out, "[heaptrace] nothing is live at the end: the heap at its peak follows\n"));
	CHECK(strstr(out, "\n=== heap at its peak: 2.000 MiB in 1 blocks, "));
	CHECK(strstr(out, "=== peak #1 === [count: 1] [size: 2.000 MiB] [by: main (prog.c:10)]\n 0 ["));
	CHECK(strstr(out, "=== backtrace #") == NULL);
	free(out);
	/* one byte less than 1 MiB: silent */
	table_destroy(&t);
	table_init(&t);
	table_alloc(&t, 0x20, (1 << 20) - 1, table_intern(&t, pcs, 2), 6);
	table_free(&t, 0x20);
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "");
	free(out);
	o.format = FMT_JSON;
	table_destroy(&t);

	/* An empty table too. */
	table_init(&t);
	out = run(&t, &o, &ri);
	CHECK(json_valid_line(out));
	free(out);
	o.format = FMT_TEXT;
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "");
	free(out);
	table_destroy(&t);
}

#define MS 1000000ULL

TEST_CASE(filters)
{
	static const struct {
		uint64_t min, max, older;
		const char *folded;
	} cases[] = {
		{ 50, UINT64_MAX, 0, "main;fn_y;malloc 100\n" },
		{ 0, 30, 0, "main;fn_z;malloc 60\nmain;fn_x;malloc 30\n" },
		{ 20, 50, 0, "main;fn_z;malloc 60\n" },
		{ 10, 10, 0, "main;fn_x;malloc 30\n" },
		/* now 1000: only blocks made at or before 250 (Y at 200, one Z at 150) */
		{ 0, UINT64_MAX, 750, "main;fn_y;malloc 100\nmain;fn_z;malloc 30\n" },
		{ 0, UINT64_MAX, 800, "main;fn_y;malloc 100\nmain;fn_z;malloc 30\n" },
		{ 0, UINT64_MAX, 801, "main;fn_z;malloc 30\n" },
		{ 0, UINT64_MAX, 1000, "" },
		{ 101, UINT64_MAX, 0, "" },
	};
	struct table t;
	struct report_info ri = info(1000 * MS);

	build_xyz_scaled(&t, MS);
	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		struct report_opts o = opts(FMT_FOLDED, SORT_SIZE);
		char *out;

		o.min_size = cases[i].min;
		o.max_size = cases[i].max;
		o.older_ns = cases[i].older * MS;
		out = run(&t, &o, &ri);
		CHECK_STREQ(out, cases[i].folded);
		free(out);

		/* Text: nothing at all when every backtrace is filtered out. */
		o.format = FMT_TEXT;
		out = run(&t, &o, &ri);
		CHECK(!*cases[i].folded == !*out);
		free(out);
	}

	/* The summary ignores filters; the per-backtrace peaks and totals stay the backtrace's. */
	{
		struct report_opts o = opts(FMT_JSON, SORT_SIZE);
		char *out;

		o.min_size = 20;
		o.max_size = 50;
		out = run(&t, &o, &ri);
		CHECK(json_valid_line(out));
		CHECK(strstr(out, "\"live_blocks\":6,\"live_bytes\":190,"));
		CHECK(strstr(out, "\"backtraces\":3,\"total_backtraces\":3,"));
		CHECK(strstr(out, "\"backtraces\":[{\"count\":2,\"peak_count\":2,\"size\":60,"
				  "\"peak_size\":400,\"age_ns\":900000000,\"total_count\":3,"
				  "\"total_size\":460,\"alloc_calls\":3,\"temporary\":0,\"frames\":["));
		CHECK(strstr(out, "fn_x") == NULL && strstr(out, "fn_y") == NULL);
		free(out);

		o.format = FMT_TEXT;
		out = run(&t, &o, &ri);
		CHECK(strstr(out, "=== backtrace #1 === [count/peak: 2/2] "
				  "[size/peak: 60 B/400 B]"));
		CHECK(strstr(out, "num of backtrace : 3\n"));
		CHECK(strstr(out, "allocation size  : 190 B\n"));
		free(out);
	}
	table_destroy(&t);
}

TEST_CASE(json_output)
{
	/* the last two frames found by a stack scan, which stopped at the last */
	static const uint64_t pw[] = { PC_MALLOC, PC_WEIRD, PC_LIBFOO,
				       PC_NOTHING | (uint64_t)FRAMES_SCAN << FRAMES_HOW_SHIFT,
				       PC_MAKE_NODE | (uint64_t)FRAMES_SCAN << FRAMES_HOW_SHIFT |
					       FRAMES_STOPPED };
	struct table t;
	struct report_opts o = opts(FMT_JSON, SORT_COUNT);
	struct report_info ri = info(1000);
	char expect[512];
	char *out;

	build_xyz(&t);
	table_alloc(&t, 0xd00, 7, table_intern(&t, pw, 5), 999);
	o.top = 1; /* text only: JSON lists every backtrace */
	resolver_calls = 0;
	out = run(&t, &o, &ri);
	CHECK(json_valid_line(out));
	CHECK_EQ(resolver_calls, 3 * 3 + 5 + 3); /* and Z at the peak */
	CHECK(!strncmp(out, "{\"version\":\"", 12));
	CHECK(strstr(out, ",\"pid\":1234,\"command\":\"prog arg\",\"exit_status\":null,"));
	snprintf(expect, sizeof(expect),
		 "\"summary\":{\"alloc_calls\":10,\"free_calls\":3,\"unknown_frees\":0,"
		 "\"live_blocks\":7,\"live_bytes\":197,\"peak_live_blocks\":%" PRIu64
		 ",\"peak_live_bytes\":%" PRIu64 ",\"total_allocated_bytes\":617,\"temporary\":0,"
		 "\"backtraces\":4,\"total_backtraces\":4,\"elapsed_ns\":777}",
		 t.sum.peak_live_blocks, t.sum.peak_live_bytes);
	CHECK(strstr(out, expect));
	CHECK(strstr(out, "statm") == NULL);
	/* Sorted by count: X (3), Z (2), Y (1), W (1, interned after Y). */
	CHECK(strstr(out, "fn_x") < strstr(out, "fn_z"));
	CHECK(strstr(out, "fn_z") < strstr(out, "fn_y"));
	CHECK(strstr(out, "fn_y") < strstr(out, "f\\\"q"));
	CHECK(strstr(out, "{\"count\":3,\"peak_count\":5,\"size\":30,\"peak_size\":50,"
			  "\"age_ns\":700,\"total_count\":5,\"total_size\":50,\"alloc_calls\":5,"
			  "\"temporary\":0,\"frames\":["
			  "{\"address\":\"0x1000\",\"function\":\"malloc\",\"offset\":27,"
			  "\"module\":\"/lib/libc.so.6\",\"file\":null,\"line\":null,\"how\":\"entry\"},"));
	/* Escaping, and unknown names and lines. */
	CHECK(strstr(out, "{\"address\":\"0x5000\",\"function\":\"f\\\"q\\\\b;c d\\u000a\","
			  "\"offset\":3,\"module\":\"/usr/bin/prog\","
			  "\"file\":null,\"line\":null,\"how\":\"cfi\"}"));
	CHECK(strstr(out, "{\"address\":\"0x4000\",\"function\":null,\"offset\":null,"
			  "\"module\":\"/usr/lib/libfoo.so\",\"file\":null,\"line\":null,\"how\":\"cfi\"}"));
	CHECK(strstr(out, "{\"address\":\"0x6000\",\"function\":null,\"offset\":null,"
			  "\"module\":null,\"file\":null,\"line\":null,\"how\":\"scan\"}"));
	CHECK(strstr(out, "\"function\":\"make_node\",\"offset\":20,\"module\":\"/usr/bin/prog\","
			  "\"file\":\"list.c\",\"line\":42,\"how\":\"scan\",\"stopped\":true}],"
			  "\"truncated\":false,\"heap\":\"malloc\"}],\"peak\":{\"live_bytes\":400,"
			  "\"live_blocks\":1,"));
	CHECK(strstr(out, "\"peak\":{\"live_bytes\":400,\"live_blocks\":1,\"elapsed_ns\":0,"
			  "\"backtraces\":[{\"count\":1,\"size\":400,\"frames\":[{\"address\":"
			  "\"0x1000\",\"function\":\"malloc\""));
	CHECK(strstr(out, "}],\"truncated\":false}]},\"temporary\":[]}\n"));
	free(out);

	/* An exited process, statm, and a command that needs escaping. */
	ri.exited = true;
	ri.exit_status = 130;
	ri.has_statm = true;
	ri.statm_vss = 1;
	ri.statm_rss = 2;
	ri.statm_shared = 3;
	ri.command = "sh -c \"echo\\t\"";
	out = run(&t, &o, &ri);
	CHECK(json_valid_line(out));
	CHECK(strstr(out, ",\"command\":\"sh -c \\\"echo\\\\t\\\"\",\"exit_status\":130,"));
	CHECK(strstr(out, "\"statm\":{\"vss\":1,\"rss\":2,\"shared\":3}"));
	free(out);

	ri.command = NULL;
	ri.exit_status = 0;
	out = run(&t, &o, &ri);
	CHECK(strstr(out, ",\"command\":null,\"exit_status\":0,"));
	free(out);
	table_destroy(&t);
}

TEST_CASE(folded_output)
{
	static const uint64_t pw[] = { PC_MALLOC, PC_WEIRD, PC_LIBFOO, PC_NOTHING, PC_MAIN };
	struct table t;
	struct report_opts o = opts(FMT_FOLDED, SORT_SIZE);
	struct report_info ri = info(1000);
	char *out;

	build_xyz(&t);
	table_alloc(&t, 0xd00, 7, table_intern(&t, pw, 5), 999);
	o.top = 1; /* text only */
	resolver_calls = 0;
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "main;fn_y;malloc 100\n"
			 "main;fn_z;malloc 60\n"
			 "main;fn_x;malloc 30\n"
			 "main;??;[libfoo.so];f\"q\\b_c d_;malloc 7\n");
	CHECK_EQ(resolver_calls, 3 * 3 + 5);
	free(out);

	/* A control character must not break the text layout either. */
	o.format = FMT_TEXT;
	o.top = 0;
	out = run(&t, &o, &ri);
	CHECK(strstr(out, " 1 [        0x5000] f\"q\\b;c d? +0x3\n"));
	free(out);
	table_destroy(&t);
}

TEST_CASE(resolver_optional)
{
	struct table t;
	struct report_opts o = opts(FMT_FOLDED, SORT_SIZE);
	struct report_info ri = info(1000);
	char *out;

	build_xyz(&t);
	ri.resolve = NULL;
	out = run(&t, &o, &ri);
	CHECK_STREQ(out, "??;??;?? 100\n??;??;?? 60\n??;??;?? 30\n");
	free(out);
	o.format = FMT_JSON;
	out = run(&t, &o, &ri);
	CHECK(json_valid_line(out));
	free(out);
	table_destroy(&t);
}

TEST_CASE(write_error)
{
	struct table t;
	struct report_opts o = opts(FMT_JSON, SORT_SIZE);
	struct report_info ri = info(1000);
	FILE *f = fopen("/dev/full", "w");

	if (!f)
		return; /* no /dev/full here */
	build_xyz(&t);
	CHECK(report_write(f, &t, &o, &ri) < 0);
	fclose(f);
	table_destroy(&t);
}
