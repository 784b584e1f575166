// SPDX-License-Identifier: GPL-2.0-only
/*
 * mapper: a program that maps memory itself, traced with --mmap. Between the markers
 * write(-1, "begin", 5) and write(-1, "end", 3) (EBADF: strace shows them), with P the page
 * size, it does, in the mmap heap:
 *   map_a     mmap(5P) anonymous private            a block of 5P
 *   punch     munmap(a + 2P, P)                     a hole in its middle: two blocks, 2P and 2P
 *   map_b     mmap(3P), then mremap to 8P (may move) 1 free, 1 allocation of 8P (frame 0 mremap)
 *   drop_c    mmap(2P), munmap(2P)                  1 allocation, 1 free
 *   files     a private file mapping and a shared anonymous one, both unmapped: nothing
 *   trim      munmap(a, P)                          the first piece loses its first page: P
 *   grow_brk  sbrk(2P), then sbrk(-P)               a block of 2P at the old break, then P
 * Live at exit: P (map_a) + 2P (map_a) + 8P (map_b) + P (grow_brk) = 12P in 4 blocks (a split
 * makes two blocks of one: live_blocks is not alloc_calls - free_calls there); peak 4 blocks,
 * 14P; 5 allocations of 20P in all; 2 frees. After "end", malloc(200000) and its free (glibc
 * maps and unmaps such a block inside malloc and free: those are malloc's, in the malloc heap
 * only). No stdio. The records: "heap name=mmap" (the whole heap) and the malloc summary.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "expect.h"

#define LEAF __attribute__((noipa))
#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)

static struct expect_sum maps;
static size_t P;
static char *volatile a, *volatile b;

/* The counts of a munmap that leaves d more blocks and removes bytes. */
static void split(long d, size_t bytes)
{
	maps.live_blocks += d;
	maps.live_bytes -= bytes;
	if (maps.live_blocks > maps.peak_live_blocks)
		maps.peak_live_blocks = maps.live_blocks;
}

static void *map(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		_exit(99);
	return p;
}

LEAF void map_a(void)
{
	a = map(5 * P, RW, ANON, -1); /* site(map_a) */
	expect_alloc_in(&maps, 5 * P);
}

LEAF void punch(void)
{
	if (munmap(a + 2 * P, P))
		_exit(99);
	split(1, P);
}

LEAF void map_b(void)
{
	char *p = map(3 * P, RW, ANON, -1);

	expect_alloc_in(&maps, 3 * P);
	b = mremap(p, 3 * P, 8 * P, MREMAP_MAYMOVE); /* site(map_b) */
	if (b == MAP_FAILED)
		_exit(99);
	expect_free_in(&maps, 3 * P);
	expect_alloc_in(&maps, 8 * P);
}

LEAF void drop_c(void)
{
	char *p = map(2 * P, RW, ANON, -1);

	expect_alloc_in(&maps, 2 * P);
	if (munmap(p, 2 * P))
		_exit(99);
	expect_free_in(&maps, 2 * P);
}

LEAF void files(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	char *f, *s;

	if (fd < 0)
		_exit(99);
	f = map(P, PROT_READ, MAP_PRIVATE, fd);
	s = map(P, RW, MAP_SHARED | MAP_ANONYMOUS, -1);
	if (munmap(f, P) || munmap(s, P))
		_exit(99);
	close(fd);
}

LEAF void trim(void)
{
	if (munmap(a, P))
		_exit(99);
	split(0, P);
}

LEAF void grow_brk(void)
{
	if (sbrk((intptr_t)(2 * P)) == (void *)-1) /* site(grow_brk) */
		_exit(99);
	expect_alloc_in(&maps, 2 * P);
	if (sbrk(-(intptr_t)P) == (void *)-1)
		_exit(99);
	split(0, P);
}

LEAF void malloc_big(void)
{
	void *p = malloc(200000);

	keep(p);
	free(p);
	expect_alloc(200000);
	expect_free(200000);
}

int main(void)
{
	P = (size_t)sysconf(_SC_PAGESIZE);
	if (write(-1, "begin", 5) != -1)
		return 99;
	map_a(); /* call(map_a) */
	punch();
	map_b(); /* call(map_b) */
	drop_c();
	files();
	trim();
	grow_brk(); /* call(grow_brk) */
	if (write(-1, "end", 3) != -1)
		return 99;
	malloc_big();

	expect_site("mmap", 2, 3 * P, "map,map_a,main");
	expect_site("mremap", 1, 8 * P, "map_b,main");
	expect_site("sbrk", 1, P, "grow_brk,main");
	expect_summary(&expect_tracked);
	expect_summary_of("heap name=mmap", &maps);
	return 0;
}
