/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Self-describing targets: a target states what it is known to do by appending records to the
 * file named by $HEAPTRACE_EXPECT (nothing happens when it is unset), in the manner of strace's
 * tests/brk.c. The end-to-end tests compare heaptrace's report with these records, so the facts
 * are written down once, next to the code that makes them true.
 *
 * Writing a record must not change what is counted: no stdio, no heap. Each record is one
 * write(2) on an O_APPEND descriptor, so a forked child and its parent may both write.
 *
 * Records, one a line, "KIND key=value ...":
 *   site fn=malloc count=N bytes=B [peak_count=N peak_bytes=B total_count=N] chain=leaf,...,main
 *       live blocks at exit made by fn (frame 0) under this call chain (frame 1 on, cut at main;
 *       "*" in the chain stands for any number of frames, e.g. C++'s operator new and templates)
 *   summary alloc_calls=N free_calls=N unknown_frees=N live_blocks=N live_bytes=N
 *           [peak_live_blocks=N peak_live_bytes=N total_allocated_bytes=N]
 *       what the program itself does; allocations the C library or libstdc++ make on their own
 *       are not in it, and the tests account for them separately
 *   heap name=NAME alloc_calls=N ... total_allocated_bytes=N
 *       the same figures as a summary record (all of them), for the custom heap NAME (the
 *       program's own allocator traced with --alloc, --realloc and --free: summary.heaps.NAME)
 *   exit status=N           the status heaptrace must exit with
 *   any record may carry scope=NAME (e.g. scope=child in a forked child).
 * The allocation call of each site carries a comment marking its line, site(FUNCTION), which the
 * tests read to check the file and line of that frame; a call in a chain may carry call(CALLEE),
 * the line its caller's frame must show.
 */
#ifndef HEAPTRACE_TARGET_EXPECT_H
#define HEAPTRACE_TARGET_EXPECT_H

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Keep p alive in the optimiser's eyes: the compiler may not drop or merge a malloc/free pair. */
#define keep(p) __asm__ volatile("" : : "g"(p) : "memory")

struct expect_buf {
	char s[512];
	size_t n;
};

static inline __attribute__((unused)) void expect_str(struct expect_buf *b, const char *s)
{
	while (*s && b->n < sizeof(b->s) - 1)
		b->s[b->n++] = *s++;
}

static inline __attribute__((unused)) void expect_num(struct expect_buf *b, unsigned long v)
{
	char d[24];
	int i = 0;

	do
		d[i++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (i > 0 && b->n < sizeof(b->s) - 1)
		b->s[b->n++] = d[--i];
}

static inline __attribute__((unused)) void expect_kv(struct expect_buf *b, const char *k,
						     unsigned long v)
{
	expect_str(b, " ");
	expect_str(b, k);
	expect_str(b, "=");
	expect_num(b, v);
}

static const char *expect_scope_name;

/* Tag every later record of this process with scope=NAME (NULL: no tag). */
static inline __attribute__((unused)) void expect_scope(const char *name)
{
	expect_scope_name = name;
}

static inline __attribute__((unused)) void expect_flush(struct expect_buf *b)
{
	const char *path = getenv("HEAPTRACE_EXPECT");
	int fd;

	if (!path || !*path)
		return;
	if (expect_scope_name) {
		expect_str(b, " scope=");
		expect_str(b, expect_scope_name);
	}
	expect_str(b, "\n");
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, b->s, b->n) != (ssize_t)b->n)
		_exit(99); /* a harness fault, not a heaptrace one */
	close(fd);
}

static inline __attribute__((unused)) void expect_site(const char *fn, unsigned long count,
						       unsigned long bytes, const char *chain)
{
	struct expect_buf b;

	b.n = 0;

	expect_str(&b, "site fn=");
	expect_str(&b, fn);
	expect_kv(&b, "count", count);
	expect_kv(&b, "bytes", bytes);
	expect_str(&b, " chain=");
	expect_str(&b, chain);
	expect_flush(&b);
}

/* A site whose peak and total the program also knows (made from one call instruction). */
static inline __attribute__((unused)) void expect_site_peak(const char *fn, unsigned long count,
							    unsigned long bytes,
							    unsigned long peak_count,
							    unsigned long peak_bytes,
							    unsigned long total_count,
							    const char *chain)
{
	struct expect_buf b;

	b.n = 0;
	expect_str(&b, "site fn=");
	expect_str(&b, fn);
	expect_kv(&b, "count", count);
	expect_kv(&b, "bytes", bytes);
	expect_kv(&b, "peak_count", peak_count);
	expect_kv(&b, "peak_bytes", peak_bytes);
	expect_kv(&b, "total_count", total_count);
	expect_str(&b, " chain=");
	expect_str(&b, chain);
	expect_flush(&b);
}

/* What the program does itself, counted by the target as it goes. */
struct expect_sum {
	unsigned long alloc_calls, free_calls, unknown_frees, live_blocks, live_bytes;
	/* kept only by expect_alloc/expect_free (tracked == 1) */
	int tracked;
	unsigned long peak_live_blocks, peak_live_bytes, total_allocated_bytes;
};

/* kind: "summary", or "heap name=NAME" */
static inline __attribute__((unused)) void expect_summary_of(const char *kind,
							     const struct expect_sum *s)
{
	struct expect_buf b;

	b.n = 0;
	expect_str(&b, kind);
	expect_kv(&b, "alloc_calls", s->alloc_calls);
	expect_kv(&b, "free_calls", s->free_calls);
	expect_kv(&b, "unknown_frees", s->unknown_frees);
	expect_kv(&b, "live_blocks", s->live_blocks);
	expect_kv(&b, "live_bytes", s->live_bytes);
	if (s->tracked) {
		expect_kv(&b, "peak_live_blocks", s->peak_live_blocks);
		expect_kv(&b, "peak_live_bytes", s->peak_live_bytes);
		expect_kv(&b, "total_allocated_bytes", s->total_allocated_bytes);
	}
	expect_flush(&b);
}

static inline __attribute__((unused)) void expect_summary(const struct expect_sum *s)
{
	expect_summary_of("summary", s);
}

/*
 * The running count of a target that tracks each of its calls as heaptrace counts them (one
 * object shared by all files of a target: a weak definition). A realloc that moves or keeps a
 * block is expect_free(old) then expect_alloc(new), in that order, as man/heaptrace.1 says
 * ("What is counted").
 */
__attribute__((weak)) struct expect_sum expect_tracked;

static inline __attribute__((unused)) void expect_alloc_in(struct expect_sum *s,
							   unsigned long size)
{
	s->tracked = 1;
	s->alloc_calls++;
	s->total_allocated_bytes += size;
	s->live_blocks++;
	s->live_bytes += size;
	if (s->live_blocks > s->peak_live_blocks)
		s->peak_live_blocks = s->live_blocks;
	if (s->live_bytes > s->peak_live_bytes)
		s->peak_live_bytes = s->live_bytes;
}

static inline __attribute__((unused)) void expect_free_in(struct expect_sum *s,
							  unsigned long size)
{
	s->free_calls++;
	s->live_blocks--;
	s->live_bytes -= size;
}

static inline __attribute__((unused)) void expect_alloc(unsigned long size)
{
	expect_alloc_in(&expect_tracked, size);
}

static inline __attribute__((unused)) void expect_free(unsigned long size)
{
	expect_free_in(&expect_tracked, size);
}

static inline __attribute__((unused)) void expect_exit(int status)
{
	struct expect_buf b;

	b.n = 0;

	expect_str(&b, "exit");
	expect_kv(&b, "status", (unsigned long)status);
	expect_flush(&b);
}

#endif
