// SPDX-License-Identifier: GPL-2.0-only
/* Perf maps: lines as JITs write them, fed in pieces, and files as perf would trust them. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "symbols/perfmap.h"
#include "unittest.h"

static const char *find(const struct perfmap *pm, uint64_t at, uint64_t *start)
{
	uint64_t s = 0;
	const char *name = perfmap_find(pm, at, &s);

	if (start)
		*start = s;
	return name;
}

TEST_CASE(parse_lines)
{
	uint64_t start, size;
	const char *name;
	size_t len;

	/* node --perf-basic-prof */
	REQUIRE(!perfmap_parse_line("7f535c023b80 378 JS:~makeBuffers /tmp/b.js:3:21", 47, &start,
				    &size, &name, &len));
	CHECK_EQ(start, 0x7f535c023b80ull);
	CHECK_EQ(size, 0x378);
	CHECK_EQ(len, strlen("JS:~makeBuffers /tmp/b.js:3:21"));
	CHECK(!strncmp(name, "JS:~makeBuffers /tmp/b.js:3:21", len));
	/* an 0x prefix, capitals, a \r before the end */
	REQUIRE(!perfmap_parse_line("0x1000 0X2F py::f:x.py\r", 23, &start, &size, &name, &len));
	CHECK_EQ(start, 0x1000);
	CHECK_EQ(size, 0x2f);
	CHECK_EQ(len, 10);
	/* malformed: no name, no size, not hex, too many digits, two spaces */
	CHECK(perfmap_parse_line("1000 20", 7, &start, &size, &name, &len));
	CHECK(perfmap_parse_line("1000 20 ", 8, &start, &size, &name, &len));
	CHECK(perfmap_parse_line("1000", 4, &start, &size, &name, &len));
	CHECK(perfmap_parse_line("zz 20 f", 7, &start, &size, &name, &len));
	CHECK(perfmap_parse_line("11112222333344445 20 f", 22, &start, &size, &name, &len));
	CHECK(perfmap_parse_line("1000  20 f", 10, &start, &size, &name, &len));
	CHECK(perfmap_parse_line("", 0, &start, &size, &name, &len));
}

TEST_CASE(lines_in_pieces)
{
	struct perfmap *pm = perfmap_new(NULL, 0, 0);
	const char *text = "1000 100 first\n2000 80 second one\nbad line\n3000 0 empty\n3000 10 third";
	uint64_t start;

	/* cut everywhere: the same table */
	CHECK_EQ(perfmap_feed(pm, text, 7), 0);
	CHECK_EQ(perfmap_feed(pm, text + 7, 20), 1);
	CHECK_EQ(perfmap_feed(pm, text + 27, strlen(text) - 27), 1);
	CHECK_STREQ(find(pm, 0x1000, &start), "first");
	CHECK_EQ(start, 0x1000);
	CHECK_STREQ(find(pm, 0x10ff, NULL), "first");
	CHECK(!find(pm, 0x1100, NULL));
	CHECK(!find(pm, 0xfff, NULL));
	CHECK_STREQ(find(pm, 0x207f, NULL), "second one");
	CHECK(!find(pm, 0x2080, NULL));
	/* the last line waits for its newline */
	CHECK(!find(pm, 0x3000, NULL));
	CHECK_EQ(perfmap_feed(pm, "\n", 1), 1);
	CHECK_STREQ(find(pm, 0x3005, NULL), "third");
	perfmap_free(pm);
}

TEST_CASE(later_line_wins)
{
	struct perfmap *pm = perfmap_new(NULL, 0, 0);
	uint64_t start;

	/* a big early entry, smaller ones inside it later, and code moved over the first */
	perfmap_feed(pm, "1000 1000 region\n1400 100 a\n", 28);
	perfmap_feed(pm, "1200 400 b\n1000 80 c\n", 21);
	CHECK_STREQ(find(pm, 0x1050, &start), "c");
	CHECK_EQ(start, 0x1000);
	CHECK_STREQ(find(pm, 0x1080, NULL), "region");
	CHECK_STREQ(find(pm, 0x1250, NULL), "b");
	CHECK_STREQ(find(pm, 0x1450, NULL), "b"); /* b came after a */
	CHECK_STREQ(find(pm, 0x1650, NULL), "region");
	CHECK_STREQ(find(pm, 0x1fff, NULL), "region");
	CHECK(!find(pm, 0x2000, NULL));
	/* a far later line over all of it */
	perfmap_feed(pm, "1450 10 d\n", 10);
	CHECK_STREQ(find(pm, 0x1455, NULL), "d");
	CHECK_STREQ(find(pm, 0x1460, NULL), "b");
	perfmap_free(pm);
}

TEST_CASE(names_kept_at_first_sight)
{
	struct perfmap *pm = perfmap_new(NULL, 0, 0);
	uint64_t off, pc, at;

	perfmap_feed(pm, "1000 100 old\n", 13);
	/* a return address is looked up at pc - 1: the end of the function is still its own */
	CHECK_STREQ(perfmap_name(pm, 0x1100, false, &off), "old");
	CHECK_EQ(off, 0x100);
	CHECK(!perfmap_name(pm, 0x1000, false, &off)); /* 0xfff */
	perfmap_feed(pm, "1000 100 new\n", 13);
	CHECK_STREQ(perfmap_name(pm, 0x1100, false, &off), "old");
	CHECK_STREQ(perfmap_name(pm, 0x1010, false, &off), "new");
	CHECK_EQ(off, 0x10);
	REQUIRE(perfmap_named(pm) == 2);
	CHECK_STREQ(perfmap_named_at(pm, 0, &pc, &at), "old");
	CHECK_EQ(pc, 0x1100);
	CHECK_EQ(at, 0x100);
	/* a recorded log's names */
	perfmap_note(pm, 0x1010, 1, "other");
	perfmap_note(pm, 0x9000, 0x20, "noted");
	CHECK_STREQ(perfmap_name(pm, 0x1010, false, &off), "new");
	CHECK_STREQ(perfmap_name(pm, 0x9000, false, &off), "noted");
	CHECK_EQ(off, 0x20);
	for (unsigned i = 0; i < 1000; i++) /* the memo grows */
		perfmap_note(pm, 0x100000 + i, i, "many");
	CHECK_EQ(perfmap_named(pm), 1003);
	CHECK_STREQ(perfmap_name(pm, 0x100000 + 999, false, &off), "many");
	CHECK_EQ(off, 999);
	CHECK_STREQ(perfmap_name(pm, 0x1100, false, &off), "old");
	perfmap_free(pm);
}

static char *temp_map(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/heaptrace-perfmap-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	fchmod(fd, 0644);
	close(fd);
	return path;
}

static void append(const char *path, const char *text, bool truncate)
{
	int fd = open(path, O_WRONLY | O_APPEND | (truncate ? O_TRUNC : 0));

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
			UNITTEST_FAIL("write %s", path);
		close(fd);
	}
}

TEST_CASE(file_read_as_it_grows)
{
	char *path = temp_map();
	struct perfmap *pm;
	uint64_t off;

	REQUIRE(path);
	pm = perfmap_new(path, geteuid(), 0);
	CHECK_EQ(perfmap_state(pm), PERFMAP_UNSEEN);
	append(path, "1000 100 first\n2000 10", false);
	CHECK(perfmap_refresh(pm));
	CHECK_EQ(perfmap_state(pm), PERFMAP_OPEN);
	CHECK(!find(pm, 0x2000, NULL));
	append(path, "0 second\n", false);
	/* perfmap_name reads on when its lines do not name pc */
	CHECK_STREQ(perfmap_name(pm, 0x2001, true, &off), "second");
	CHECK(!perfmap_refresh(pm));
	/* written anew (shorter): read again from its start */
	append(path, "5000 10 third\n", true);
	CHECK(perfmap_refresh(pm));
	CHECK_STREQ(find(pm, 0x5000, NULL), "third");
	CHECK(!find(pm, 0x1000, NULL));
	CHECK_STREQ(perfmap_name(pm, 0x2001, false, &off), "second"); /* named before */
	perfmap_free(pm);
	unlink(path);
}

TEST_CASE(files_perf_would_not_trust)
{
	char *path = temp_map(), link[80];
	struct perfmap *pm;
	struct timeval old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	REQUIRE(path);
	append(path, "1000 100 f\n", false);
	/* not there */
	pm = perfmap_new("/tmp/heaptrace-perfmap-none", geteuid(), 0);
	CHECK(!perfmap_refresh(pm));
	CHECK_EQ(perfmap_state(pm), PERFMAP_ABSENT);
	perfmap_free(pm);
	/* writable by others */
	chmod(path, 0666);
	pm = perfmap_new(path, geteuid(), 0);
	CHECK(!perfmap_refresh(pm));
	CHECK_EQ(perfmap_state(pm), PERFMAP_IGNORED);
	perfmap_free(pm);
	chmod(path, 0644);
	/* a symbolic link */
	snprintf(link, sizeof(link), "%s.link", path);
	if (!symlink(path, link)) {
		pm = perfmap_new(link, geteuid(), 0);
		CHECK(!perfmap_refresh(pm));
		CHECK_EQ(perfmap_state(pm), PERFMAP_IGNORED);
		perfmap_free(pm);
		unlink(link);
	}
	/* another user's (as root: given away) */
	if (!geteuid() && !chown(path, 65534, 65534)) {
		pm = perfmap_new(path, 0, 0);
		CHECK(!perfmap_refresh(pm));
		CHECK_EQ(perfmap_state(pm), PERFMAP_IGNORED);
		perfmap_free(pm);
		pm = perfmap_new(path, 65534, 0); /* its owner's */
		CHECK(perfmap_refresh(pm));
		perfmap_free(pm);
		CHECK(!chown(path, 0, 0));
	}
	/* last written before the process started: an earlier process's of its pid */
	REQUIRE(!utimes(path, old));
	pm = perfmap_new(path, geteuid(), 1000000001);
	CHECK(!perfmap_refresh(pm));
	CHECK_EQ(perfmap_state(pm), PERFMAP_IGNORED);
	perfmap_free(pm);
	pm = perfmap_new(path, geteuid(), 1000000000);
	CHECK(perfmap_refresh(pm));
	CHECK_STREQ(find(pm, 0x1000, NULL), "f");
	perfmap_free(pm);
	unlink(path);
}
