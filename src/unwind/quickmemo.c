// SPDX-License-Identifier: GPL-2.0-only
#include "unwind/quickmemo.h"

#include <stdlib.h>
#include <string.h>

#include "unwind/unwind.h"
#include "util/util.h"

#define QMEMO_SLOTS 64 /* a power of two: backtraces kept, by their pc and sp */

struct qmemo_entry {
	struct qmemo_key key; /* max 0: empty */
	bool fp_used; /* the backtrace depends on key.fp and key.fp_known (qmemo_log) */
	unsigned nwords, n;
	uint64_t lo, end; /* the lowest word's address, the end of the highest */
	uint64_t addr[QMEMO_WORDS], val[QMEMO_WORDS];
	uint64_t pcs[QMEMO_FRAMES];
};

struct qmemo {
	struct qmemo_entry slot[QMEMO_SLOTS];
};

struct qmemo *qmemo_new(void)
{
	return xcalloc(1, sizeof(struct qmemo));
}

void qmemo_free(struct qmemo *m)
{
	free(m);
}

static struct qmemo_entry *slot_of(struct qmemo *m, const struct qmemo_key *k)
{
	return &m->slot[hash64(k->pc ^ (k->sp * 0x9e3779b97f4a7c15ULL)) & (QMEMO_SLOTS - 1)];
}

/* Is k the key of e's backtrace? Its frame pointer counts only where the backtrace used it. */
static bool same_key(const struct qmemo_entry *e, const struct qmemo_key *k)
{
	const struct qmemo_key *a = &e->key;

	return a->pc == k->pc && a->sp == k->sp && a->max == k->max &&
	       (!e->fp_used ||
		(a->fp_known == k->fp_known && (!a->fp_known || a->fp == k->fp)));
}

unsigned qmemo_find(struct qmemo *m, const struct qmemo_key *k, uint64_t *pcs)
{
	const struct qmemo_entry *e = slot_of(m, k);

	if (!e->key.max || !same_key(e, k) ||
	    !unwind_current_same(e->addr, e->val, e->nwords, e->lo, e->end))
		return 0;
	memcpy(pcs, e->pcs, e->n * sizeof(*pcs));
	unwind_current_remembered();
	return e->n;
}

int qmemo_read(struct qmemo_log *log, uint64_t addr, uint64_t *val)
{
	int err = unwind_read_current(addr, val);

	if (err)
		return err;
	if (log->n == QMEMO_WORDS) {
		log->over = true;
	} else {
		log->addr[log->n] = addr;
		log->val[log->n++] = *val;
	}
	return 0;
}

void qmemo_keep(struct qmemo *m, const struct qmemo_key *k, const struct qmemo_log *log,
		const uint64_t *pcs, unsigned n)
{
	struct qmemo_entry *e = slot_of(m, k);

	if (log->over || !n || n > QMEMO_FRAMES || !k->max)
		return;
	e->key = *k;
	e->fp_used = log->fp_used;
	e->nwords = log->n;
	e->lo = UINT64_MAX;
	e->end = 0;
	for (unsigned i = 0; i < log->n; i++) {
		if (log->addr[i] < e->lo)
			e->lo = log->addr[i];
		if (log->addr[i] + sizeof(uint64_t) > e->end)
			e->end = log->addr[i] + sizeof(uint64_t);
	}
	e->n = n;
	memcpy(e->addr, log->addr, log->n * sizeof(*log->addr));
	memcpy(e->val, log->val, log->n * sizeof(*log->val));
	memcpy(e->pcs, pcs, n * sizeof(*pcs));
}
