// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>

#include "util/pairmap.h"
#include "util/util.h"

static uint32_t pair_hash(uint64_t a, uint64_t b)
{
	return (uint32_t)hash64(a ^ hash64(b));
}

uint32_t *pairmap_slot(struct pairmap *m, uint64_t a, uint64_t b)
{
	uint32_t mask, s;

	if ((m->n + 1) * 4 > m->cap * 3) { /* at most 3/4 full */
		struct pair *old = m->v;
		uint32_t old_cap = m->cap;

		m->cap = old_cap ? old_cap * 2 : 256;
		m->v = xcalloc(m->cap, sizeof(*m->v));
		for (uint32_t i = 0; i < old_cap; i++) {
			if (!old[i].v)
				continue;
			for (s = pair_hash(old[i].a, old[i].b) & (m->cap - 1); m->v[s].v;
			     s = (s + 1) & (m->cap - 1))
				;
			m->v[s] = old[i];
		}
		free(old);
	}
	mask = m->cap - 1;
	for (s = pair_hash(a, b) & mask; m->v[s].v; s = (s + 1) & mask)
		if (m->v[s].a == a && m->v[s].b == b)
			return &m->v[s].v;
	m->v[s].a = a;
	m->v[s].b = b;
	return &m->v[s].v;
}
