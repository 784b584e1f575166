// SPDX-License-Identifier: GPL-2.0-only
/* The ring of logged returns: room before sending a call through it, taking its entries.
 * Pure: the caller reads the ring. */
#include <string.h>

#define PR_DOMAIN "retlog"
#include "util/log.h"
#include "target/retlog.h"

struct retlog_entry {
	uint32_t seq; /* reserved index + 1, written last */
	uint32_t cookie;
	uint64_t retval;
};

bool retlog_room(const struct retlog *r)
{
	/* the ring wraps at a power of two, so 32-bit differences are exact */
	return r->ring && (uint32_t)(r->head - r->tail) + r->inflight + 1 < RETLOG_SLOTS;
}

static bool is_taken(const struct retlog *r, uint32_t i)
{
	uint32_t k = i % RETLOG_SLOTS;

	return r->taken[k / 64] >> (k % 64) & 1;
}

static void set_taken(struct retlog *r, uint32_t i, bool on)
{
	uint32_t k = i % RETLOG_SLOTS;
	uint64_t bit = (uint64_t)1 << (k % 64);

	if (on)
		r->taken[k / 64] |= bit;
	else
		r->taken[k / 64] &= ~bit;
}

void retlog_take(struct retlog *r, const void *ring,
		 void (*fn)(uint32_t cookie, uint64_t retval, void *ctx), void *ctx)
{
	const struct retlog_entry *e = (const void *)((const uint8_t *)ring + RETLOG_ENTRIES_OFF);

	memcpy(&r->head, (const uint8_t *)ring + RETLOG_HEAD_OFF, sizeof(r->head));
	if ((uint32_t)(r->head - r->tail) > RETLOG_SLOTS) {
		/* more reserved than the ring holds: heaptrace's bound was broken */
		pr_warn("%u returns logged in a ring of %u: some are lost", r->head - r->tail,
			RETLOG_SLOTS);
		r->tail = r->head - RETLOG_SLOTS;
		memset(r->taken, 0, sizeof(r->taken));
	}
	for (uint32_t i = r->tail; i != r->head; i++) {
		const struct retlog_entry *x = &e[i % RETLOG_SLOTS];

		if (is_taken(r, i) || x->seq != i + 1)
			continue; /* taken before, or reserved but not written yet */
		set_taken(r, i, true);
		fn(x->cookie, x->retval, ctx);
	}
	while (r->tail != r->head && is_taken(r, r->tail))
		set_taken(r, r->tail++, false);
}
