/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_LIFETIME_H
#define HEAPTRACE_LIFETIME_H

/*
 * `report --only-leaked --at=WHEN`: which blocks live at a moment of a log are never freed
 * by its end. Each block a replay adds gets the next number (allocations and blocks found at
 * the attach, in log order), so two replays of one log number the same block alike: the first
 * replay, to the end, keeps the set of numbers still live there; the second, to the moment,
 * asks whether the block at an address has one of them. Addresses alone would not do: a
 * block freed and a new one allocated at the same address look alike.
 */
#include <stdbool.h>
#include <stdint.h>

struct lifetime {
	struct lifetime_slot {
		uint64_t ptr; /* 0: empty */
		uint64_t id;
	} *slots;
	uint64_t n, cap; /* cap: a power of two */
	uint64_t next_id;
	uint8_t *end_live; /* a bit per id, set when live at the end (from the first replay) */
	uint64_t end_ids; /* ids the bitmap covers */
};

void lifetime_init(struct lifetime *l);
void lifetime_destroy(struct lifetime *l);

/* A block was added at ptr (an allocation, or a block found at the attach): a new id. */
void lifetime_add(struct lifetime *l, uint64_t ptr);

/* The block at ptr left the heap or the table (free, realloc's take): return its id, 0 if
 * none. Ids start at 1. */
uint64_t lifetime_remove(struct lifetime *l, uint64_t ptr);

/* The block id is back at ptr (a realloc that failed, or a report's parking). */
void lifetime_put(struct lifetime *l, uint64_t ptr, uint64_t id);

/* The process ran execve: its blocks are gone. */
void lifetime_clear(struct lifetime *l);

/* l's replay reached the end: the blocks live now are the ones never freed; hand that set to
 * to, a replay of the same log. */
void lifetime_end_to(const struct lifetime *l, struct lifetime *to);

/* Is the block at ptr (live in l's replay) live at the end too? */
bool lifetime_leaked(const struct lifetime *l, uint64_t ptr);

#endif
