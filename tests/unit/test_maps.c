// SPDX-License-Identifier: GPL-2.0-only
/* /proc/PID/maps parsing and the module list, from captured text. */
#include <string.h>

#include "util/maps.h"
#include "unittest.h"

static const char *const captured[] = {
	"55d0c5a00000-55d0c5a01000 r--p 00000000 fe:01 1234   /usr/bin/prog\n",
	"55d0c5a01000-55d0c5a02000 r-xp 00001000 fe:01 1234   /usr/bin/prog\n",
	"55d0c5a02000-55d0c5a03000 rw-p 00002000 fe:01 1234   /usr/bin/prog\n",
	"55d0c6000000-55d0c6021000 rw-p 00000000 00:00 0      [heap]\n",
	"7f1000000000-7f1000028000 r--p 00000000 fe:01 99     /usr/lib/x86_64-linux-gnu/libc.so.6\n",
	"7f1000028000-7f100019d000 r-xp 00028000 fe:01 99     /usr/lib/x86_64-linux-gnu/libc.so.6\n",
	"7f100019d000-7f10001f5000 r--p 0019d000 fe:01 99     /usr/lib/x86_64-linux-gnu/libc.so.6\n",
	"7f10001f5000-7f10001fb000 rw-p 001f5000 fe:01 99     /usr/lib/x86_64-linux-gnu/libc.so.6\n",
	"7f10001fb000-7f1000208000 rw-p 00000000 00:00 0 \n",
	"7ffc1c000000-7ffc1c021000 rw-p 00000000 00:00 0      [stack]\n",
	"7ffc1c1f0000-7ffc1c1f2000 r-xp 00000000 00:00 0      [vdso]\n",
	"7f2000000000-7f2000001000 r-xp 00000000 fe:01 77     /tmp/dir with spaces/lib x.so\n",
};

#define N (sizeof(captured) / sizeof(captured[0]))

static void parse_all(struct mapping *m)
{
	for (size_t i = 0; i < N; i++)
		CHECK_EQ(maps_parse_line(captured[i], &m[i]), 0);
}

TEST_CASE(parse_fields)
{
	struct mapping m[N];

	parse_all(m);
	CHECK_EQ(m[1].start, 0x55d0c5a01000ULL);
	CHECK_EQ(m[1].end, 0x55d0c5a02000ULL);
	CHECK_EQ(m[1].offset, 0x1000);
	CHECK_EQ(m[1].prot, MAP_R | MAP_X);
	CHECK_EQ(m[1].inode, 1234);
	CHECK_STREQ(m[1].path, "/usr/bin/prog");
	CHECK_STREQ(m[3].path, "[heap]");
	CHECK_STREQ(m[8].path, "");
	CHECK_EQ(m[8].prot, MAP_R | MAP_W);
	CHECK_STREQ(m[11].path, "/tmp/dir with spaces/lib x.so");
}

TEST_CASE(malformed_lines)
{
	struct mapping m;

	CHECK_EQ(maps_parse_line("", &m), -22);
	CHECK_EQ(maps_parse_line("garbage\n", &m), -22);
	CHECK_EQ(maps_parse_line("2000-1000 r-xp 0 0:0 0 x\n", &m), -22);
}

TEST_CASE(modules_from_mappings)
{
	struct mapping m[N];
	struct modlist ml = { 0 }, copy = { 0 };
	const struct module *mod;

	parse_all(m);
	CHECK_EQ(modlist_update(&ml, m, N), 3);
	CHECK_EQ(ml.n, 3);
	CHECK_STREQ(ml.v[0].path, "/usr/bin/prog");
	CHECK_EQ(ml.v[0].base, 0x55d0c5a00000ULL);
	CHECK_EQ(ml.v[0].end, 0x55d0c5a03000ULL);
	CHECK(ml.v[0].exec);
	CHECK_EQ(ml.v[1].end, 0x7f10001fb000ULL);
	/* the code alone: the stack scan takes no word pointing at a module's data for a return
	 * address */
	CHECK_EQ(ml.v[0].exec_start, 0x55d0c5a01000ULL);
	CHECK_EQ(ml.v[0].exec_end, 0x55d0c5a02000ULL);
	CHECK_EQ(ml.v[1].exec_start, 0x7f1000028000ULL);
	CHECK_EQ(ml.v[1].exec_end, 0x7f100019d000ULL);
	CHECK_EQ(ml.v[2].exec_start, 0x7f2000000000ULL);
	CHECK_EQ(ml.v[2].exec_end, 0x7f2000001000ULL);
	mod = modlist_find(&ml, 0x7f1000030000ULL);
	REQUIRE(mod != NULL);
	CHECK_STREQ(mod->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CHECK(modlist_find(&ml, 0x7ffc1c000100ULL) == NULL);
	/* the same mappings again add nothing */
	CHECK_EQ(modlist_update(&ml, m, N), 0);
	CHECK_EQ(ml.v[1].exec_start, 0x7f1000028000ULL);
	CHECK_EQ(ml.v[1].exec_end, 0x7f100019d000ULL);
	modlist_copy(&copy, &ml);
	CHECK_EQ(copy.n, 3);
	CHECK(copy.v[2].path != ml.v[2].path);
	CHECK_STREQ(copy.v[2].path, ml.v[2].path);
	modlist_clear(&ml);
	modlist_clear(&copy);
	CHECK_EQ(ml.n, 0);
}
