// SPDX-License-Identifier: GPL-2.0-only
/* The live blocks by key: linear probing that grows in place (blockset.h). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heap/blockset.h"

/* Set on a key while the set grows: the block still sits where the old capacity put it.
 * No key has the top bit (table.h checks its keys). */
#define PENDING BLOCKSET_KEY_FREE_BIT

#define MIN_BYTES (24u * 1024)
#define MAX_CAP UINT32_MAX /* blockset_home scales a 32-bit hash */

static bool over_load(uint64_t n, uint64_t cap)
{
	return n * 4 > cap * 3;
}

static void out_of_memory(void)
{
	fputs("heaptrace: out of memory\n", stderr);
	exit(2);
}

static size_t page_round(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (bytes + page - 1) / page * page;
}

static uint64_t next_slot(const struct blockset *s, uint64_t i)
{
	return i + 1 == s->cap ? 0 : i + 1;
}

static void too_far(void)
{
	fputs("heaptrace: a run of live blocks too long to count (65535 slots)\n", stderr);
	exit(2);
}

/*
 * Put b in at the first free slot from i on, d slots past its home. A slot still PENDING
 * counts as free: its block is taken out and placed in turn. Return b's slot.
 */
static struct block *place_from(struct blockset *s, struct block b, uint64_t i, uint64_t d)
{
	struct block *first = NULL;

	for (;; i = next_slot(s, i), d++) {
		struct block *at = &s->slots[i], moved;

		if (d > BLOCKSET_MAX_DIST)
			too_far();
		if (at->ptr && !(at->ptr & PENDING))
			continue;
		moved = *at;
		b.dist = d;
		*at = b;
		first = first ? first : at;
		if (!moved.ptr)
			return first;
		b = moved; /* a block the growth has not placed yet: from its new home */
		b.ptr &= ~PENDING;
		i = blockset_home(b.ptr, s->cap);
		i = i ? i - 1 : s->cap - 1; /* the loop steps to its home, at distance 0 */
		d = (uint64_t)-1;
	}
}

static struct block *place(struct blockset *s, struct block b)
{
	return place_from(s, b, blockset_home(b.ptr, s->cap), 0);
}

/*
 * Grow to hold want blocks under the load limit. mremap extends the mapping (the kernel moves
 * pages, never copies them), then every block is marked and placed again for the new
 * capacity (place() moves a marked block out of a slot it needs). A block is never in two
 * places, so the set never costs two arrays at once. No placed block's probe passes a
 * marked slot (its probe would have taken it), so emptying one breaks no probe.
 */
static void grow(struct blockset *s, uint64_t want)
{
	uint64_t old_cap = s->cap, cap = s->cap;
	size_t bytes;
	void *p;

	while (over_load(want, cap))
		cap = cap ? cap + cap / 2 : MIN_BYTES / sizeof(struct block);
	if (cap > MAX_CAP)
		out_of_memory();
	bytes = page_round(cap * sizeof(struct block));
	if (s->slots)
		p = mremap(s->slots, s->bytes, bytes, MREMAP_MAYMOVE);
	else
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		out_of_memory();
	s->slots = p;
	s->bytes = bytes;
	s->cap = bytes / sizeof(struct block) < MAX_CAP ? bytes / sizeof(struct block) : MAX_CAP;
	for (uint64_t i = 0; i < old_cap; i++)
		if (s->slots[i].ptr)
			s->slots[i].ptr |= PENDING;
	for (uint64_t i = 0; i < old_cap; i++) {
		struct block b = s->slots[i];

		if (!(b.ptr & PENDING))
			continue;
		b.ptr &= ~PENDING;
		memset(&s->slots[i], 0, sizeof(s->slots[i]));
		place(s, b);
	}
}

void blockset_destroy(struct blockset *s)
{
	if (s->slots)
		munmap(s->slots, s->bytes);
	memset(s, 0, sizeof(*s));
}

void blockset_copy(struct blockset *dst, const struct blockset *src)
{
	*dst = *src;
	if (!src->slots)
		return;
	dst->slots = mmap(NULL, src->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (dst->slots == MAP_FAILED)
		out_of_memory();
	memcpy(dst->slots, src->slots, src->cap * sizeof(struct block));
}

void blockset_reserve(struct blockset *s, uint64_t more)
{
	if (over_load(s->n + more, s->cap))
		grow(s, s->n + more);
}

struct block *blockset_find(const struct blockset *s, uint64_t key)
{
	if (!key || !s->n)
		return NULL;
	for (uint64_t i = blockset_home(key, s->cap); s->slots[i].ptr; i = next_slot(s, i))
		if (s->slots[i].ptr == key)
			return &s->slots[i];
	return NULL;
}

struct block *blockset_claim(struct blockset *s, uint64_t key, bool *added)
{
	uint64_t i, d = 0;

	if (over_load(s->n + 1, s->cap))
		grow(s, s->n + 1);
	for (i = blockset_home(key, s->cap); s->slots[i].ptr; i = next_slot(s, i), d++)
		if (s->slots[i].ptr == key) {
			*added = false;
			return &s->slots[i];
		}
	*added = true;
	s->n++;
	return place_from(s, (struct block){ .ptr = key }, i, d);
}

void blockset_insert(struct blockset *s, const struct block *b)
{
	if (over_load(s->n + 1, s->cap))
		grow(s, s->n + 1);
	s->n++;
	place(s, *b);
}

void blockset_remove(struct blockset *s, struct block *at)
{
	uint64_t hole = (uint64_t)(at - s->slots), gap = 1;

	/* move back each later block of the run whose home is not between the hole and it, so
	 * that no probe meets a hole before its block */
	for (uint64_t j = next_slot(s, hole); s->slots[j].ptr; j = next_slot(s, j), gap++) {
		if (s->slots[j].dist < gap)
			continue;
		s->slots[hole] = s->slots[j];
		s->slots[hole].dist -= gap;
		hole = j;
		gap = 0;
	}
	memset(&s->slots[hole], 0, sizeof(s->slots[hole]));
	s->n--;
}
