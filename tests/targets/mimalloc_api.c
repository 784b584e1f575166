// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every allocation function of mimalloc's public API (mimalloc.h of Debian 12's mimalloc 2.0:
 * 73, mi_wcsdup and mi_wdupenv_s included), each called once from a leaf of its own
 * (leaf_NAME, frame 1, or further up where mimalloc's own frames sit between: the chain
 * starts with "*"), its block kept live; and its five releases (mi_free, mi_cfree,
 * mi_free_size, mi_free_size_aligned, mi_free_aligned) of a block made for them (armhf's
 * mi_cfree frees it without a call to mi_free: each release is traced itself).
 *
 * The size each block counts is what the call asked for: its size argument (times its count),
 * a resize's new size, and a string copy's string with its terminator. The program derives
 * that last one from what it got (strlen of the copy, of 16-bit units for mi_wcsdup), checks
 * it against the string it copied (mi_strndup: the first n bytes), and checks every block
 * against mimalloc itself: mi_usable_size(p) must hold the size counted for it (else exit 99).
 * A resize's old block (made by mi_malloc, live nowhere) counts as one allocation and one
 * free. mi_realpath with a buffer of the caller's returns that buffer: no block;
 * mi_dupenv_s's block is getenv's value copied (HEAPTRACE_EXPECT, set by the tests), none when
 * unset; mi_wdupenv_s returns EINVAL on Linux and makes none.
 *
 * Frame 0 of each is the function itself but for those that only call another traced one
 * (as mimalloc 2.0 builds them): mi_posix_memalign, mi_memalign, mi_valloc, mi_pvalloc (its
 * size rounded up to whole pages) and mi_aligned_alloc count as mi_malloc_aligned,
 * mi_reallocarray and mi_reallocarr as mi_reallocn, mi_heap_reallocn and mi_heap_reallocf as
 * mi_heap_realloc, mi_new_reallocn as mi_new_realloc, mi__expand as mi_expand; and but for
 * those that are another name of one listed before them in heaptrace's list (the name frame 0
 * shows): mi_malloc, mi_calloc and mi_realloc are malloc, calloc and realloc, mi_new and
 * mi_new_aligned the operators new.
 *
 * With the argument "idle" the program does nothing in main (the tests' baseline). With
 * "orphan FILE" it first writes its pid to FILE and waits until nothing traces it (the test
 * kills heaptrace with SIGKILL): then every call runs through the breakpoints heaptrace left,
 * which the SIGTRAP guard it put in the process must step over, each of them (a trap it does
 * not know ends the program with SIGTRAP); the program exits 0 after its own checks.
 */
#include <errno.h>
#include <stdio.h> /* rename */
#include <mimalloc.h>
#include <stdint.h>
#include <string.h>

#include "expect.h"
#include "handshake.h"

#define LEAF __attribute__((noipa))
#define ALIGN 64
#define OFFSET 16

static mi_heap_t *heap;
static const char text[] = "heaptrace counts mimalloc";
static const unsigned short wide[] = { 'w', 'i', 'd', 'e', 0 };

/* The block p counted as size bytes: mimalloc must have made it that big. */
static void got(const void *p, size_t size)
{
	if (!p || mi_usable_size(p) < size)
		_exit(99);
	keep(p);
}

/* A block of size bytes that leaf made with fn0 as frame 0, kept live. */
static void kept(const void *p, size_t size, const char *fn0, const char *chain)
{
	got(p, size);
	expect_alloc(size);
	expect_site(fn0, 1, size, chain);
}

/* pvalloc's size: a whole number of pages (mi_pvalloc asks mi_malloc_aligned for that) */
static size_t page_up(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (size + page - 1) / page * page;
}

/* A block for a resize or a release to take: by mi_malloc, not live at the end. */
static void *old_block(size_t size)
{
	void *p = mi_malloc(size);

	got(p, size);
	expect_alloc(size);
	return p;
}

/* leaf_NAME: NAME's block of size bytes, frame 0 fn0 */
#define ALLOC(name, fn0, size, call)                                                              \
	LEAF void leaf_##name(void)                                                                \
	{                                                                                          \
		kept(call, size, fn0, "*,leaf_" #name ",main");                                    \
	}

/* leaf_NAME: NAME resizes a block of old bytes (p) to size bytes */
#define RESIZE(name, fn0, old, size, call)                                                        \
	LEAF void leaf_##name(void)                                                                \
	{                                                                                          \
		void *p = old_block(old);                                                          \
		void *q = call;                                                                    \
                                                                                                   \
		expect_free(old);                                                                  \
		kept(q, size, fn0, "*,leaf_" #name ",main");                                       \
	}

ALLOC(mi_malloc, "malloc", 101, mi_malloc(101))
ALLOC(mi_calloc, "calloc", 3 * 34, mi_calloc(3, 34))
ALLOC(mi_zalloc, "mi_zalloc", 103, mi_zalloc(103))
ALLOC(mi_mallocn, "mi_mallocn", 4 * 26, mi_mallocn(4, 26))
ALLOC(mi_malloc_small, "mi_malloc_small", 105, mi_malloc_small(105))
ALLOC(mi_zalloc_small, "mi_zalloc_small", 106, mi_zalloc_small(106))
ALLOC(mi_malloc_aligned, "mi_malloc_aligned", 107, mi_malloc_aligned(107, ALIGN))
ALLOC(mi_malloc_aligned_at, "mi_malloc_aligned_at", 108, mi_malloc_aligned_at(108, ALIGN, OFFSET))
ALLOC(mi_zalloc_aligned, "mi_zalloc_aligned", 109, mi_zalloc_aligned(109, ALIGN))
ALLOC(mi_zalloc_aligned_at, "mi_zalloc_aligned_at", 110, mi_zalloc_aligned_at(110, ALIGN, OFFSET))
ALLOC(mi_calloc_aligned, "mi_calloc_aligned", 3 * 37, mi_calloc_aligned(3, 37, ALIGN))
ALLOC(mi_calloc_aligned_at, "mi_calloc_aligned_at", 2 * 56,
      mi_calloc_aligned_at(2, 56, ALIGN, OFFSET))
ALLOC(mi_heap_malloc, "mi_heap_malloc", 113, mi_heap_malloc(heap, 113))
ALLOC(mi_heap_zalloc, "mi_heap_zalloc", 114, mi_heap_zalloc(heap, 114))
ALLOC(mi_heap_calloc, "mi_heap_calloc", 5 * 23, mi_heap_calloc(heap, 5, 23))
ALLOC(mi_heap_mallocn, "mi_heap_mallocn", 4 * 29, mi_heap_mallocn(heap, 4, 29))
ALLOC(mi_heap_malloc_small, "mi_heap_malloc_small", 117, mi_heap_malloc_small(heap, 117))
ALLOC(mi_heap_malloc_aligned, "mi_heap_malloc_aligned", 118,
      mi_heap_malloc_aligned(heap, 118, ALIGN))
ALLOC(mi_heap_malloc_aligned_at, "mi_heap_malloc_aligned_at", 119,
      mi_heap_malloc_aligned_at(heap, 119, ALIGN, OFFSET))
ALLOC(mi_heap_zalloc_aligned, "mi_heap_zalloc_aligned", 120,
      mi_heap_zalloc_aligned(heap, 120, ALIGN))
ALLOC(mi_heap_zalloc_aligned_at, "mi_heap_zalloc_aligned_at", 121,
      mi_heap_zalloc_aligned_at(heap, 121, ALIGN, OFFSET))
ALLOC(mi_heap_calloc_aligned, "mi_heap_calloc_aligned", 2 * 61,
      mi_heap_calloc_aligned(heap, 2, 61, ALIGN))
ALLOC(mi_heap_calloc_aligned_at, "mi_heap_calloc_aligned_at", 3 * 41,
      mi_heap_calloc_aligned_at(heap, 3, 41, ALIGN, OFFSET))
ALLOC(mi_memalign, "mi_malloc_aligned", 124, mi_memalign(ALIGN, 124))
ALLOC(mi_valloc, "mi_malloc_aligned", 125, mi_valloc(125))
ALLOC(mi_pvalloc, "mi_malloc_aligned", page_up(126), mi_pvalloc(126))
ALLOC(mi_aligned_alloc, "mi_malloc_aligned", 128, mi_aligned_alloc(ALIGN, 128))
ALLOC(mi_new, "new", 129, mi_new(129))
ALLOC(mi_new_nothrow, "mi_new_nothrow", 130, mi_new_nothrow(130))
ALLOC(mi_new_aligned, "new", 131, mi_new_aligned(131, ALIGN))
ALLOC(mi_new_aligned_nothrow, "mi_new_aligned_nothrow", 132, mi_new_aligned_nothrow(132, ALIGN))
ALLOC(mi_new_n, "mi_new_n", 3 * 44, mi_new_n(3, 44))

RESIZE(mi_realloc, "realloc", 10, 201, mi_realloc(p, 201))
RESIZE(mi_reallocn, "mi_reallocn", 11, 2 * 101, mi_reallocn(p, 2, 101))
RESIZE(mi_reallocf, "mi_reallocf", 12, 203, mi_reallocf(p, 203))
RESIZE(mi_rezalloc, "mi_rezalloc", 13, 204, mi_rezalloc(p, 204))
RESIZE(mi_recalloc, "mi_recalloc", 14, 5 * 41, mi_recalloc(p, 5, 41))
RESIZE(mi_expand, "mi_expand", 40, 20, mi_expand(p, 20)) /* smaller: in place */
RESIZE(mi__expand, "mi_expand", 41, 21, mi__expand(p, 21))
RESIZE(mi_realloc_aligned, "mi_realloc_aligned", 15, 208, mi_realloc_aligned(p, 208, ALIGN))
RESIZE(mi_realloc_aligned_at, "mi_realloc_aligned_at", 16, 209,
       mi_realloc_aligned_at(p, 209, ALIGN, OFFSET))
RESIZE(mi_rezalloc_aligned, "mi_rezalloc_aligned", 17, 210, mi_rezalloc_aligned(p, 210, ALIGN))
RESIZE(mi_rezalloc_aligned_at, "mi_rezalloc_aligned_at", 18, 211,
       mi_rezalloc_aligned_at(p, 211, ALIGN, OFFSET))
RESIZE(mi_recalloc_aligned, "mi_recalloc_aligned", 19, 4 * 53,
       mi_recalloc_aligned(p, 4, 53, ALIGN))
RESIZE(mi_recalloc_aligned_at, "mi_recalloc_aligned_at", 20, 3 * 71,
       mi_recalloc_aligned_at(p, 3, 71, ALIGN, OFFSET))
RESIZE(mi_heap_realloc, "mi_heap_realloc", 21, 214, mi_heap_realloc(heap, p, 214))
RESIZE(mi_heap_reallocn, "mi_heap_realloc", 22, 5 * 43, mi_heap_reallocn(heap, p, 5, 43))
RESIZE(mi_heap_reallocf, "mi_heap_realloc", 23, 216, mi_heap_reallocf(heap, p, 216))
RESIZE(mi_heap_realloc_aligned, "mi_heap_realloc_aligned", 24, 217,
       mi_heap_realloc_aligned(heap, p, 217, ALIGN))
RESIZE(mi_heap_realloc_aligned_at, "mi_heap_realloc_aligned_at", 25, 218,
       mi_heap_realloc_aligned_at(heap, p, 218, ALIGN, OFFSET))
RESIZE(mi_heap_rezalloc, "mi_heap_rezalloc", 26, 219, mi_heap_rezalloc(heap, p, 219))
RESIZE(mi_heap_recalloc, "mi_heap_recalloc", 27, 4 * 55, mi_heap_recalloc(heap, p, 4, 55))
RESIZE(mi_heap_rezalloc_aligned, "mi_heap_rezalloc_aligned", 28, 221,
       mi_heap_rezalloc_aligned(heap, p, 221, ALIGN))
RESIZE(mi_heap_rezalloc_aligned_at, "mi_heap_rezalloc_aligned_at", 29, 222,
       mi_heap_rezalloc_aligned_at(heap, p, 222, ALIGN, OFFSET))
RESIZE(mi_heap_recalloc_aligned, "mi_heap_recalloc_aligned", 30, 3 * 74,
       mi_heap_recalloc_aligned(heap, p, 3, 74, ALIGN))
RESIZE(mi_heap_recalloc_aligned_at, "mi_heap_recalloc_aligned_at", 31, 2 * 112,
       mi_heap_recalloc_aligned_at(heap, p, 2, 112, ALIGN, OFFSET))
RESIZE(mi_reallocarray, "mi_reallocn", 32, 5 * 45, mi_reallocarray(p, 5, 45))
RESIZE(mi_aligned_recalloc, "mi_aligned_recalloc", 33, 2 * 113,
       mi_aligned_recalloc(p, 2, 113, ALIGN))
RESIZE(mi_aligned_offset_recalloc, "mi_aligned_offset_recalloc", 34, 3 * 76,
       mi_aligned_offset_recalloc(p, 3, 76, ALIGN, OFFSET))
RESIZE(mi_new_realloc, "mi_new_realloc", 35, 229, mi_new_realloc(p, 229))
RESIZE(mi_new_reallocn, "mi_new_realloc", 36, 2 * 115, mi_new_reallocn(p, 2, 115))

LEAF void leaf_mi_reallocarr(void)
{
	void *p = old_block(37);

	if (mi_reallocarr(&p, 3, 77)) /* NetBSD's: p is resized through its address */
		_exit(99);
	expect_free(37);
	kept(p, 3 * 77, "mi_reallocn", "*,leaf_mi_reallocarr,main");
}

LEAF void leaf_mi_posix_memalign(void)
{
	void *p = NULL;

	if (mi_posix_memalign(&p, ALIGN, 232))
		_exit(99);
	kept(p, 232, "mi_malloc_aligned", "*,leaf_mi_posix_memalign,main");
}

/* A string copy s (of units of unit bytes) that fn made of src, in leaf: counted as its
 * length with the terminator, which must be src's first max units (its whole when shorter). */
static void copied(const void *s, const void *src, size_t max, unsigned unit, const char *fn0,
		   const char *chain)
{
	size_t n = 0;

	if (!s)
		_exit(99);
	while (memcmp((const char *)s + n * unit, "\0\0", unit))
		n++;
	if (n > max || memcmp(s, src, n * unit) ||
	    (n < max && memcmp((const char *)src + n * unit, "\0\0", unit)))
		_exit(99);
	kept(s, (n + 1) * unit, fn0, chain);
}

LEAF void leaf_mi_strdup(void)
{
	copied(mi_strdup(text), text, SIZE_MAX, 1, "mi_strdup", "*,leaf_mi_strdup,main");
}

LEAF void leaf_mi_strndup(void)
{
	copied(mi_strndup(text, 9), text, 9, 1, "mi_strndup", "*,leaf_mi_strndup,main");
}

LEAF void leaf_mi_heap_strdup(void)
{
	copied(mi_heap_strdup(heap, text + 4), text + 4, SIZE_MAX, 1, "mi_heap_strdup",
	       "*,leaf_mi_heap_strdup,main");
}

LEAF void leaf_mi_heap_strndup(void)
{
	copied(mi_heap_strndup(heap, text, 1000), text, 1000, 1, "mi_heap_strndup",
	       "*,leaf_mi_heap_strndup,main");
}

LEAF void leaf_mi_mbsdup(void)
{
	copied(mi_mbsdup((const unsigned char *)text + 10), text + 10, SIZE_MAX, 1, "mi_mbsdup",
	       "*,leaf_mi_mbsdup,main");
}

LEAF void leaf_mi_wcsdup(void)
{
	copied(mi_wcsdup(wide), wide, SIZE_MAX, 2, "mi_wcsdup", "*,leaf_mi_wcsdup,main");
}

/* p is q: mi_realpath is declared malloc-like, so the compiler takes its result for a new
 * block, unequal to any other pointer, unless told nothing of where p comes from */
static int same(char *p, const char *q)
{
	__asm__("" : "+r"(p));
	return p == q;
}

/* "/proc/../dev" resolves to "/dev" (its length is what the block holds, not PATH_MAX) */
LEAF void leaf_mi_realpath(void)
{
	char *s = mi_realpath("/proc/../dev", NULL), buf[4096];

	copied(s, "/dev", SIZE_MAX, 1, "mi_realpath", "*,leaf_mi_realpath,main");
	s = mi_realpath("/proc/../dev", buf); /* the caller's buffer: no block */
	if (!same(s, buf) || strcmp(buf, "/dev"))
		_exit(99);
}

LEAF void leaf_mi_heap_realpath(void)
{
	char *s = mi_heap_realpath(heap, "/dev/../proc", NULL), buf[4096];

	copied(s, "/proc", SIZE_MAX, 1, "mi_heap_realpath", "*,leaf_mi_heap_realpath,main");
	s = mi_heap_realpath(heap, "/dev/../proc", buf);
	if (!same(s, buf) || strcmp(buf, "/proc"))
		_exit(99);
}

LEAF void leaf_mi_dupenv_s(void)
{
	const char *v = getenv("HEAPTRACE_EXPECT");
	char *s = NULL;
	size_t n = 1;

	if (mi_dupenv_s(&s, &n, "HEAPTRACE_EXPECT") || (v && n != strlen(v)) || (!v && (s || n)))
		_exit(99);
	if (v)
		copied(s, v, SIZE_MAX, 1, "mi_dupenv_s", "*,leaf_mi_dupenv_s,main");
}

LEAF void leaf_mi_wdupenv_s(void)
{
	static const unsigned short name[] = { 'H', 'O', 'M', 'E', 0 };
	unsigned short *s = NULL;
	size_t n = 0;
	int err = mi_wdupenv_s(&s, &n, name);

	if (!err && s)
		copied(s, s, SIZE_MAX, 2, "mi_wdupenv_s", "*,leaf_mi_wdupenv_s,main");
	else if (err != EINVAL || s) /* Linux: not supported, no block */
		_exit(99);
}

/* Each release of a block made for it: an allocation and a free each. */
LEAF void leaf_releases(void)
{
	void *p = old_block(301);

	mi_free(p);
	p = old_block(302);
	mi_cfree(p);
	p = old_block(303);
	mi_free_size(p, 303);
	p = old_block(304);
	mi_free_aligned(p, 8);
	p = mi_malloc_aligned(305, ALIGN);
	got(p, 305);
	expect_alloc(305);
	mi_free_size_aligned(p, 305, ALIGN);
	for (unsigned long size = 301; size <= 305; size++)
		expect_free(size);
}

/* Say our pid in file (written whole, then renamed into place), wait to be untraced. */
static void orphan(const char *file)
{
	char tmp[4096], pid[24];
	int fd, n = 0;

	for (long v = getpid(); v; v /= 10)
		pid[n++] = (char)('0' + v % 10);
	for (int i = 0; i < n / 2; i++) {
		char c = pid[i];

		pid[i] = pid[n - 1 - i];
		pid[n - 1 - i] = c;
	}
	if (strlen(file) + 5 > sizeof(tmp))
		_exit(99);
	strcpy(tmp, file);
	strcat(tmp, ".tmp");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, pid, n) != n || close(fd) || rename(tmp, file))
		_exit(99);
	handshake_wait_untraced();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "idle"))
		return 0;
	if (argc > 2 && !strcmp(argv[1], "orphan"))
		orphan(argv[2]);
	heap = mi_heap_get_default(); /* the thread's heap: no allocation */
	leaf_mi_malloc();
	leaf_mi_calloc();
	leaf_mi_zalloc();
	leaf_mi_mallocn();
	leaf_mi_malloc_small();
	leaf_mi_zalloc_small();
	leaf_mi_malloc_aligned();
	leaf_mi_malloc_aligned_at();
	leaf_mi_zalloc_aligned();
	leaf_mi_zalloc_aligned_at();
	leaf_mi_calloc_aligned();
	leaf_mi_calloc_aligned_at();
	leaf_mi_heap_malloc();
	leaf_mi_heap_zalloc();
	leaf_mi_heap_calloc();
	leaf_mi_heap_mallocn();
	leaf_mi_heap_malloc_small();
	leaf_mi_heap_malloc_aligned();
	leaf_mi_heap_malloc_aligned_at();
	leaf_mi_heap_zalloc_aligned();
	leaf_mi_heap_zalloc_aligned_at();
	leaf_mi_heap_calloc_aligned();
	leaf_mi_heap_calloc_aligned_at();
	leaf_mi_memalign();
	leaf_mi_valloc();
	leaf_mi_pvalloc();
	leaf_mi_aligned_alloc();
	leaf_mi_posix_memalign();
	leaf_mi_new();
	leaf_mi_new_nothrow();
	leaf_mi_new_aligned();
	leaf_mi_new_aligned_nothrow();
	leaf_mi_new_n();
	leaf_mi_realloc();
	leaf_mi_reallocn();
	leaf_mi_reallocf();
	leaf_mi_rezalloc();
	leaf_mi_recalloc();
	leaf_mi_expand();
	leaf_mi__expand();
	leaf_mi_realloc_aligned();
	leaf_mi_realloc_aligned_at();
	leaf_mi_rezalloc_aligned();
	leaf_mi_rezalloc_aligned_at();
	leaf_mi_recalloc_aligned();
	leaf_mi_recalloc_aligned_at();
	leaf_mi_heap_realloc();
	leaf_mi_heap_reallocn();
	leaf_mi_heap_reallocf();
	leaf_mi_heap_realloc_aligned();
	leaf_mi_heap_realloc_aligned_at();
	leaf_mi_heap_rezalloc();
	leaf_mi_heap_recalloc();
	leaf_mi_heap_rezalloc_aligned();
	leaf_mi_heap_rezalloc_aligned_at();
	leaf_mi_heap_recalloc_aligned();
	leaf_mi_heap_recalloc_aligned_at();
	leaf_mi_reallocarray();
	leaf_mi_reallocarr();
	leaf_mi_aligned_recalloc();
	leaf_mi_aligned_offset_recalloc();
	leaf_mi_new_realloc();
	leaf_mi_new_reallocn();
	leaf_mi_strdup();
	leaf_mi_strndup();
	leaf_mi_heap_strdup();
	leaf_mi_heap_strndup();
	leaf_mi_mbsdup();
	leaf_mi_wcsdup();
	leaf_mi_realpath();
	leaf_mi_heap_realpath();
	leaf_mi_dupenv_s();
	leaf_mi_wdupenv_s();
	leaf_releases();
	expect_summary(&expect_tracked);
	return 0;
}
