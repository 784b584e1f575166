/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_BLOCKSET_H
#define HEAPTRACE_BLOCKSET_H

/*
 * The live blocks, by key (table.h: a pointer, with its heap in the top byte): open
 * addressing with linear probing, up to 3/4 full, growing by half in place (the array is its
 * own mapping, which mremap extends without a second copy). So a live block costs heaptrace
 * 24 bytes / load: 32 to 48 bytes, even while the set grows. Deletion shifts back the run
 * after the hole: there are no tombstones, and a long run of malloc and free never slows
 * lookups.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* No key may have this bit set: the set marks keys with it while it grows. */
#define BLOCKSET_KEY_FREE_BIT (UINT64_C(1) << 63)

/* 24 bytes. dist is the set's: how far past its key's home slot the block sits. */
struct block {
	uint64_t ptr; /* the key; 0 marks an empty slot */
	uint64_t size : 48; /* no address space holds a block of 2^48 bytes */
	uint64_t dist : 16;
	uint32_t bt;
	uint32_t time_ms; /* allocation time, ms after table.base_ns (saturates at 49 days) */
};

#define BLOCKSET_MAX_DIST 0xffffu

struct blockset {
	struct block *slots; /* cap slots, in a mapping of bytes */
	uint64_t n, cap;
	size_t bytes;
};

/* The slot a key's probe starts at: its hash scaled to [0, cap) (cap < 2^32). */
static inline uint64_t blockset_home(uint64_t key, uint64_t cap)
{
	return (hash64(key) >> 32) * cap >> 32;
}

/* Start loading the slot where key's probe starts, for a look-up soon: in a large set it is
 * a cache miss, which the work in between then hides. */
static inline void blockset_prefetch(const struct blockset *s, uint64_t key)
{
	if (s->slots)
		__builtin_prefetch(&s->slots[blockset_home(key, s->cap)]);
}

/* A fresh set is all zeros (no mapping until the first insert). */
void blockset_destroy(struct blockset *s);
/* dst, which owns nothing, becomes a copy of src. */
void blockset_copy(struct blockset *dst, const struct blockset *src);
/* Make room for more blocks at once. */
void blockset_reserve(struct blockset *s, uint64_t more);

struct block *blockset_find(const struct blockset *s, uint64_t key);
/*
 * The block of key (non-zero): the one in the set, or a new one with only its key set
 * (*added true). Valid until the next blockset_claim, _insert or _remove.
 */
struct block *blockset_claim(struct blockset *s, uint64_t key, bool *added);
/* Insert b, whose key (non-zero) is not in the set. */
void blockset_insert(struct blockset *s, const struct block *b);
/* Remove the block at slot at (from blockset_find). */
void blockset_remove(struct blockset *s, struct block *at);

#endif
