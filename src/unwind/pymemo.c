// SPDX-License-Identifier: GPL-2.0-only
/* Merges of recorded Python frames, remembered (pymemo.h). */
#include "unwind/pymemo.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

struct pymemo_entry {
	uint64_t gen; /* the memo's generation it was kept in; 0: empty */
	uint64_t hash;
	unsigned nframes, n, max, nout;
	uint64_t codes[PYMEMO_FRAMES], instrs[PYMEMO_FRAMES];
	uint64_t pcs[PYMEMO_PCS], out[PYMEMO_PCS];
};

struct pymemo {
	uint64_t gen; /* from 1 */
	struct pymemo_entry slot[PYMEMO_SLOTS];
};

struct pymemo *pymemo_new(void)
{
	struct pymemo *m = xcalloc(1, sizeof(*m));

	m->gen = 1;
	return m;
}

void pymemo_free(struct pymemo *m)
{
	free(m);
}

void pymemo_forget(struct pymemo *m)
{
	if (m)
		m->gen++;
}

static bool fits(const struct pymemo_key *k)
{
	return k->nframes <= PYMEMO_FRAMES && k->n <= PYMEMO_PCS && k->max <= PYMEMO_PCS;
}

/* A multiply per word, mixed once at the end: a key is looked up for every record. */
static uint64_t key_hash(const struct pymemo_key *k)
{
	const uint64_t mul = 0x9e3779b97f4a7c15ull;
	uint64_t h = ((uint64_t)k->nframes << 40) ^ ((uint64_t)k->n << 20) ^ k->max;

	for (unsigned i = 0; i < k->nframes; i++)
		h = (h ^ k->codes[i] ^ (k->instrs[i] << 17)) * mul;
	for (unsigned i = 0; i < k->n; i++)
		h = (h ^ k->pcs[i]) * mul;
	return hash64(h);
}

static bool same_words(const uint64_t *a, const uint64_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static bool same(const struct pymemo_entry *e, const struct pymemo_key *k, uint64_t hash)
{
	return e->hash == hash && e->nframes == k->nframes && e->n == k->n && e->max == k->max &&
	       same_words(e->codes, k->codes, k->nframes) &&
	       same_words(e->instrs, k->instrs, k->nframes) && same_words(e->pcs, k->pcs, k->n);
}

unsigned pymemo_find(const struct pymemo *m, const struct pymemo_key *k, uint64_t *out)
{
	uint64_t h;
	const struct pymemo_entry *e;

	if (!m || !fits(k))
		return 0;
	h = key_hash(k);
	e = &m->slot[h & (PYMEMO_SLOTS - 1)];
	if (e->gen != m->gen || !same(e, k, h))
		return 0;
	memcpy(out, e->out, e->nout * sizeof(*out));
	return e->nout;
}

void pymemo_keep(struct pymemo *m, const struct pymemo_key *k, const uint64_t *out, unsigned n)
{
	uint64_t h;
	struct pymemo_entry *e;

	if (!m || !fits(k) || n > PYMEMO_PCS)
		return;
	h = key_hash(k);
	e = &m->slot[h & (PYMEMO_SLOTS - 1)];
	e->gen = m->gen;
	e->hash = h;
	e->nframes = k->nframes;
	e->n = k->n;
	e->max = k->max;
	e->nout = n;
	memcpy(e->codes, k->codes, k->nframes * sizeof(uint64_t));
	memcpy(e->instrs, k->instrs, k->nframes * sizeof(uint64_t));
	memcpy(e->pcs, k->pcs, k->n * sizeof(uint64_t));
	memcpy(e->out, out, n * sizeof(*out));
}
