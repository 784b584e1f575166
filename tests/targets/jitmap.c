// SPDX-License-Identifier: GPL-2.0-only
/*
 * jitmap: code made at run time and named in a perf map, as a JIT compiler names its code, for
 * the tests of JIT frames (tests/e2e/test_jit.py). The machine code is written out for x86_64;
 * elsewhere the target exits 77.
 *
 * usage: jitmap MODE    MODE: ok; other (the map then belongs to uid 65534: needs root, else
 *                       exit 77); writable (the map's mode is then 0666)
 *
 * It maps an anonymous region, writes three functions into it, each with a frame record as V8
 * and the JVM keep one, and makes the region executable:
 *   inner(size):     push rbp; mov rbp, rsp; movabs rax, malloc; call rax; pop rbp; ret
 *   late(size):      the same, elsewhere in the region
 *   outer(size, fn): push rbp; mov rbp, rsp; call rsi; pop rbp; ret
 * /tmp/perf-PID.map names them line by line, as a JIT appends them: a stale name for inner's
 * addresses, then its real one (a later line wins), then outer's. call_jit calls
 * outer(1000, inner) 3 times; then late's line is appended and call_jit calls outer(2000, late)
 * twice (the map read on from where it was). The map stays, as a JIT's does: the test removes
 * it.
 *
 * Records: site fn=malloc count=3 bytes=3000 chain=jit_inner_fn,jit_outer_fn,call_jit,main;
 * site fn=malloc count=2 bytes=4000 chain=jit_late_fn,jit_outer_fn,call_jit,main (mode ok);
 * and the summary. No stdio: nothing allocates but the generated code.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "expect.h"

#define INNER 0x100 /* offsets of the functions in the region */
#define LATE 0x200
#define OUTER 0x300
#define FN_SIZE 0x20 /* the size each is given in the map */

typedef void *(*outer_fn)(size_t size, void *fn);

static char map_path[64];
static int map_fd = -1;
static void *volatile kept[8];

#if defined(__x86_64__)
/* An inner function: malloc(size) through an absolute address, in a frame of its own. */
static void put_inner(uint8_t *at)
{
	static const uint8_t head[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8 };
	static const uint8_t tail[] = { 0xff, 0xd0, 0x5d, 0xc3 };
	uint64_t target = (uint64_t)(uintptr_t)malloc;

	memcpy(at, head, sizeof(head));
	memcpy(at + sizeof(head), &target, sizeof(target));
	memcpy(at + sizeof(head) + sizeof(target), tail, sizeof(tail));
}

/* outer(size, fn): fn(size), in a frame of its own. */
static void put_outer(uint8_t *at)
{
	static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd6, 0x5d, 0xc3 };

	memcpy(at, code, sizeof(code));
}
#endif

/* Append "START SIZE name" to the map, as a JIT does (one write per line). */
static void map_line(uint8_t *region, unsigned off, const char *name)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "%lx %x %s\n",
			 (unsigned long)(uintptr_t)(region + off), FN_SIZE, name);

	if (n <= 0 || write(map_fd, line, (size_t)n) != n)
		_exit(99);
}

__attribute__((noipa)) void call_jit(uint8_t *region, unsigned fn, size_t size, unsigned i)
{
	kept[i] = ((outer_fn)(void *)(region + OUTER))(size, region + fn); /* call(jit_outer_fn) */
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ok";
	struct expect_sum sum = { 0 };
	uint8_t *region;
	unsigned i;

#if !defined(__x86_64__)
	(void)mode;
	(void)map_line;
	return 77;
#else
	region = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return 99;
	memset(region, 0xcc, 4096);
	put_inner(region + INNER);
	put_inner(region + LATE);
	put_outer(region + OUTER);
	if (mprotect(region, 4096, PROT_READ | PROT_EXEC))
		return 99;
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	map_fd = open(map_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (map_fd < 0)
		return 99;
	if (!strcmp(mode, "other") && fchown(map_fd, 65534, 65534)) {
		unlink(map_path);
		return 77;
	}
	if (!strcmp(mode, "writable") && fchmod(map_fd, 0666))
		return 99;
	map_line(region, INNER, "jit_stale_fn");
	map_line(region, INNER, "jit_inner_fn");
	map_line(region, OUTER, "jit_outer_fn");
	for (i = 0; i < 3; i++) {
		call_jit(region, INNER, 1000, i);
		expect_alloc_in(&sum, 1000);
	}
	map_line(region, LATE, "jit_late_fn");
	for (i = 0; i < 2; i++) {
		call_jit(region, LATE, 2000, 3 + i);
		expect_alloc_in(&sum, 2000);
	}
	if (!strcmp(mode, "ok")) {
		expect_site("malloc", 3, 3000, "jit_inner_fn,jit_outer_fn,call_jit,main");
		expect_site("malloc", 2, 4000, "jit_late_fn,jit_outer_fn,call_jit,main");
	}
	sum.tracked = 0; /* the counts only: check_summary's keys */
	expect_summary(&sum);
	close(map_fd);
	return 0;
#endif
}
