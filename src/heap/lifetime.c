// SPDX-License-Identifier: GPL-2.0-only
/* Block ids across two replays of one log, for --only-leaked at a moment (lifetime.h). */
#include <stdlib.h>
#include <string.h>

#include "heap/lifetime.h"
#include "util/util.h"

void lifetime_init(struct lifetime *l)
{
	memset(l, 0, sizeof(*l));
	l->next_id = 1;
}

void lifetime_destroy(struct lifetime *l)
{
	free(l->slots);
	free(l->end_live);
	memset(l, 0, sizeof(*l));
}

/* The slot of ptr, or the empty slot where it would go. */
static uint64_t slot_of(const struct lifetime *l, uint64_t ptr)
{
	uint64_t mask = l->cap - 1, s = hash64(ptr) & mask;

	while (l->slots[s].ptr && l->slots[s].ptr != ptr)
		s = (s + 1) & mask;
	return s;
}

static void grow(struct lifetime *l)
{
	struct lifetime_slot *old = l->slots;
	uint64_t old_cap = l->cap;

	l->cap = old_cap ? old_cap * 2 : 1024;
	l->slots = xcalloc(l->cap, sizeof(*l->slots));
	for (uint64_t i = 0; i < old_cap; i++)
		if (old[i].ptr)
			l->slots[slot_of(l, old[i].ptr)] = old[i];
	free(old);
}

void lifetime_put(struct lifetime *l, uint64_t ptr, uint64_t id)
{
	uint64_t s;

	if (!ptr)
		return;
	if ((l->n + 1) * 4 > l->cap * 3)
		grow(l);
	s = slot_of(l, ptr);
	l->n += !l->slots[s].ptr;
	l->slots[s] = (struct lifetime_slot){ ptr, id };
}

void lifetime_add(struct lifetime *l, uint64_t ptr)
{
	lifetime_put(l, ptr, l->next_id++);
}

uint64_t lifetime_remove(struct lifetime *l, uint64_t ptr)
{
	uint64_t mask = l->cap - 1, s, id, hole;

	if (!ptr || !l->cap)
		return 0;
	s = slot_of(l, ptr);
	if (!l->slots[s].ptr)
		return 0;
	id = l->slots[s].id;
	/* backward-shift deletion: no tombstones, so lookups stay short */
	hole = s;
	for (s = (s + 1) & mask; l->slots[s].ptr; s = (s + 1) & mask) {
		uint64_t home = hash64(l->slots[s].ptr) & mask;

		if (((s - home) & mask) >= ((s - hole) & mask)) {
			l->slots[hole] = l->slots[s];
			hole = s;
		}
	}
	l->slots[hole].ptr = 0;
	l->n--;
	return id;
}

void lifetime_clear(struct lifetime *l)
{
	if (l->cap)
		memset(l->slots, 0, l->cap * sizeof(*l->slots));
	l->n = 0;
}

void lifetime_end_to(const struct lifetime *l, struct lifetime *to)
{
	free(to->end_live);
	to->end_ids = l->next_id;
	to->end_live = xcalloc(to->end_ids / 8 + 1, 1);
	for (uint64_t i = 0; i < l->cap; i++)
		if (l->slots[i].ptr)
			to->end_live[l->slots[i].id / 8] |= 1u << (l->slots[i].id % 8);
}

bool lifetime_leaked(const struct lifetime *l, uint64_t ptr)
{
	uint64_t id;

	if (!l->cap || !l->end_live)
		return false;
	id = l->slots[slot_of(l, ptr)].id;
	return l->slots[slot_of(l, ptr)].ptr && id < l->end_ids &&
	       (l->end_live[id / 8] >> (id % 8) & 1);
}
