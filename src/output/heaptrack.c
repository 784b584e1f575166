// SPDX-License-Identifier: GPL-2.0-only
/*
 * heaptrack's data file (heaptrack.h). Its rules that are easy to get wrong: string, frame and
 * trace indices count from 1 and 0 means none, allocation infos count from 0; a frame's
 * address is the return address minus one (the call), and its file:line is looked up there;
 * the innermost trace node is the allocation function's caller.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/heaptrack.h"
#include "unwind/frames.h"
#include "util/pairmap.h"
#include "util/util.h"

#ifndef HEAPTRACE_VERSION
#define HEAPTRACE_VERSION "0.0.0"
#endif

struct htk {
	FILE *f;
	report_resolve_fn resolve;
	void *ctx;
	struct pairmap strings; /* (hash, 0) -> index; collisions checked against names[] */
	char **names;
	uint32_t nstrings;
	struct pairmap ips, nodes, infos;
	uint32_t nips, nnodes, ninfos;
	uint32_t *bt_trace; /* per backtrace: its trace node + 1, 0 = not yet */
	uint32_t nbt_trace;
	uint64_t last_ms;
	bool ticked;
};

/* The string's index (1-based), written the first time; 0 for none. */
static uint32_t string(struct htk *h, const char *s)
{
	uint64_t hash;

	if (!s || !*s)
		return 0;
	hash = pairmap_str_hash(s, 0);
	for (uint64_t salt = 0;; salt++) {
		uint32_t *v = pairmap_slot(&h->strings, hash, salt);

		if (*v && !strcmp(h->names[*v - 1], s))
			return *v;
		if (*v)
			continue; /* another string with this hash */
		h->strings.n++;
		h->names = xrealloc(h->names, (h->nstrings + 1) * sizeof(*h->names));
		h->names[h->nstrings] = xstrdup(s);
		*v = ++h->nstrings;
		/* no newline can be in a record; names never have one */
		fprintf(h->f, "s %zx ", strlen(s));
		for (; *s; s++)
			fputc(*s == '\n' ? ' ' : *s, h->f);
		fputc('\n', h->f);
		return *v;
	}
}

/* The frame of return address pc (1-based). */
static uint32_t frame(struct htk *h, uint64_t pc, unsigned idx)
{
	uint32_t *v = pairmap_slot(&h->ips, pc, 0), ip;
	struct sym_frame sf = { .line = -1 };
	uint32_t mod, fn, file;

	if (*v)
		return *v;
	h->ips.n++;
	ip = *v = ++h->nips; /* string() below grows the strings' map only */
	if (h->resolve)
		h->resolve(h->ctx, pc, idx, &sf);
	mod = string(h, sf.module);
	fn = string(h, sf.function);
	file = sf.line > 0 ? string(h, sf.file) : 0;
	fprintf(h->f, "i %" PRIx64 " %x", pc - 1, mod);
	if (fn || file)
		fprintf(h->f, " %x", fn);
	if (file)
		fprintf(h->f, " %x %x", file, (unsigned)sf.line);
	fputc('\n', h->f);
	return ip;
}

/* The trace node of backtrace bt (1-based), written outermost first the first time. */
static uint32_t trace(struct htk *h, uint32_t bt, const uint64_t *pcs, uint32_t depth)
{
	uint32_t parent = 0;

	if (bt < h->nbt_trace && h->bt_trace[bt])
		return h->bt_trace[bt];
	for (uint32_t d = depth; d-- > 1;) {
		/* the address, without how the frame was found (frames.h) */
		uint32_t ip = frame(h, frames_addr(pcs[d]), d),
			 *v = pairmap_slot(&h->nodes, ip, parent);

		if (!*v) {
			h->nodes.n++;
			*v = ++h->nnodes;
			fprintf(h->f, "t %x %x\n", ip, parent);
		}
		parent = *v;
	}
	if (bt >= h->nbt_trace) {
		uint32_t cap = bt + 1 > 2 * h->nbt_trace ? bt + 1 : 2 * h->nbt_trace;

		h->bt_trace = xrealloc(h->bt_trace, cap * sizeof(*h->bt_trace));
		memset(h->bt_trace + h->nbt_trace, 0, (cap - h->nbt_trace) * sizeof(*h->bt_trace));
		h->nbt_trace = cap;
	}
	h->bt_trace[bt] = parent;
	return parent;
}

static void tick(struct htk *h, uint64_t ms)
{
	if (h->ticked && ms <= h->last_ms)
		return;
	fprintf(h->f, "c %" PRIx64 "\n", ms);
	h->last_ms = ms;
	h->ticked = true;
}

struct htk *htk_open(FILE *f, const char *command, report_resolve_fn resolve, void *ctx)
{
	struct htk *h = xcalloc(1, sizeof(*h));

	h->f = f;
	h->resolve = resolve;
	h->ctx = ctx;
	fputs("v 10400 3\n# written by heaptrace " HEAPTRACE_VERSION "\nX ", f);
	for (; command && *command; command++)
		fputc(*command == '\n' ? ' ' : *command, f);
	fputc('\n', f);
	return h;
}

void htk_alloc(struct htk *h, uint64_t ms, uint64_t size, uint32_t bt, const uint64_t *pcs,
	       uint32_t depth)
{
	uint32_t t = trace(h, bt, pcs, depth), *v;

	tick(h, ms);
	v = pairmap_slot(&h->infos, size, t);
	if (!*v) {
		/* written right before its first use: infos are first used in index order */
		h->infos.n++;
		*v = ++h->ninfos;
		fprintf(h->f, "a %" PRIx64 " %x\n", size, t);
	}
	fprintf(h->f, "+ %x\n", *v - 1);
}

void htk_free(struct htk *h, uint64_t ms, uint64_t size, uint32_t bt)
{
	uint32_t *v;

	if (bt >= h->nbt_trace || !h->bt_trace[bt])
		return; /* allocated before this file began: heaptrack writes nothing either */
	v = pairmap_slot(&h->infos, size, h->bt_trace[bt]);
	if (!*v)
		return; /* never allocated in this file (the slot stays empty) */
	tick(h, ms);
	fprintf(h->f, "- %x\n", *v - 1);
}

void htk_forget(struct htk *h)
{
	memset(h->bt_trace, 0, h->nbt_trace * sizeof(*h->bt_trace));
}

int htk_close(struct htk *h, uint64_t ms)
{
	int ret;

	/* always a last c: heaptrack takes the runtime from it */
	fprintf(h->f, "c %" PRIx64 "\n", ms > h->last_ms ? ms : h->last_ms);
	fprintf(h->f, "# strings: %x\n# ips: %x\n", h->nstrings, h->nips);
	ret = fflush(h->f) || ferror(h->f) ? -EIO : 0;
	for (uint32_t i = 0; i < h->nstrings; i++)
		free(h->names[i]);
	free(h->names);
	free(h->strings.v);
	free(h->ips.v);
	free(h->nodes.v);
	free(h->infos.v);
	free(h->bt_trace);
	free(h);
	return ret;
}
