// SPDX-License-Identifier: GPL-2.0-only
/*
 * massif.out (massif.h), as ms_print parses it: "desc:", "cmd:" and "time_unit:" lines, then
 * per snapshot "snapshot=N", "time=", "mem_heap_B=", "mem_heap_extra_B=", "mem_stacks_B=" and
 * "heap_tree=" (empty, detailed or peak). A detailed tree is one node a line, "nK: BYTES TEXT",
 * indented one space per level, K its number of children, which follow it, largest first: the
 * top node holds every live byte, its children are the allocation functions' callers (frame 1),
 * theirs the callers' callers. heaptrace counts the bytes asked for, so the allocator's own
 * overhead (mem_heap_extra_B) and the stacks are 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/frames.h"
#include "output/massif.h"
#include "util/util.h"

/* A backtrace's bytes in the tree being written. */
struct leaf {
	const struct bt *b;
	uint64_t bytes;
};

struct tree {
	FILE *f;
	const struct table *t;
	const struct massif_info *mi;
};

static uint64_t pc_at(const struct tree *tr, const struct leaf *l, uint32_t d)
{
	return d < l->b->depth ? frames_addr(table_bt_pcs(tr->t, l->b)[d]) : 0;
}

static const struct table *sort_table; /* for qsort's comparator */

/* Order by frames 1, 2, ... so that each node's backtraces are next to each other. */
static int leaf_cmp(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;
	const uint64_t *px = table_bt_pcs(sort_table, x->b), *py = table_bt_pcs(sort_table, y->b);

	for (uint32_t d = 1; d < x->b->depth || d < y->b->depth; d++) {
		uint64_t u = d < x->b->depth ? frames_addr(px[d]) : 0;
		uint64_t v = d < y->b->depth ? frames_addr(py[d]) : 0;

		if (u != v)
			return u < v ? -1 : 1;
	}
	return 0;
}

/* A node's place: "0xADDR: function (file:line)" as massif writes it. */
static void node_text(const struct tree *tr, const struct leaf *l, uint32_t d)
{
	uint64_t pc = pc_at(tr, l, d);
	struct sym_frame sf = { .line = -1 };

	if (table_bt_before_attach(tr->t, l->b)) {
		fprintf(tr->f, " 0x0: [before attach]\n");
		return;
	}
	if (tr->mi->resolve)
		tr->mi->resolve(tr->mi->resolve_ctx, pc, d, &sf);
	fprintf(tr->f, " 0x%" PRIX64 ": ", pc);
	for (const char *s = sf.function ? sf.function : "???"; *s; s++)
		fputc(*s == '\n' ? ' ' : *s, tr->f);
	if (sf.file && sf.line > 0)
		fprintf(tr->f, " (%s:%d)\n", sf.file, sf.line);
	else if (sf.module)
		fprintf(tr->f, " (in %s)\n", sf.module);
	else
		fputc('\n', tr->f);
}

/* Backtraces v[lo, hi) of one node that share frame d. */
struct group {
	size_t lo, hi;
	uint64_t bytes;
};

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->lo < y->lo ? -1 : 1;
}

/* The groups of v[lo, hi) (sorted by leaf_cmp) by frame d, largest first, in *out (free it);
 * return how many. Backtraces that end above frame d are in none. */
static size_t groups(const struct tree *tr, struct leaf *v, size_t lo, size_t hi, uint32_t d,
		     struct group **out)
{
	struct group *g = xmalloc((hi - lo + 1) * sizeof(*g));
	size_t n = 0;

	for (size_t i = lo; i < hi; i++) {
		if (pc_at(tr, &v[i], d) == 0 && !table_bt_before_attach(tr->t, v[i].b))
			continue; /* the backtrace ends above this level */
		if (n && pc_at(tr, &v[i], d) == pc_at(tr, &v[g[n - 1].lo], d) &&
		    g[n - 1].hi == i) {
			g[n - 1].hi = i + 1;
			g[n - 1].bytes += v[i].bytes;
			continue;
		}
		g[n++] = (struct group){ i, i + 1, v[i].bytes };
	}
	qsort(g, n, sizeof(*g), group_cmp);
	*out = g;
	return n;
}

/* The node of frame d over v[lo, hi) (one pc), and below it its callers. */
static void write_node(const struct tree *tr, struct leaf *v, size_t lo, size_t hi, uint32_t d,
		       uint64_t bytes)
{
	struct group *g;
	size_t n = 0;

	if (!table_bt_before_attach(tr->t, v[lo].b))
		n = groups(tr, v, lo, hi, d + 1, &g);
	else
		g = NULL;
	fprintf(tr->f, "%*sn%zu: %" PRIu64, (int)d, "", n, bytes);
	node_text(tr, &v[lo], d);
	for (size_t i = 0; i < n; i++)
		write_node(tr, v, g[i].lo, g[i].hi, d + 1, g[i].bytes);
	free(g);
}

/* The detailed tree of the backtraces' bytes in v (n of them, total bytes). */
static void write_tree(const struct tree *tr, struct leaf *v, size_t n, uint64_t total)
{
	struct group *g;
	size_t k;

	sort_table = tr->t;
	qsort(v, n, sizeof(*v), leaf_cmp);
	k = groups(tr, v, 0, n, 1, &g);
	fprintf(tr->f, "n%zu: %" PRIu64 " (heap allocation functions) malloc/new/new[], "
		       "--alloc-fns, etc.\n", k, total);
	for (size_t i = 0; i < k; i++)
		write_node(tr, v, g[i].lo, g[i].hi, 1, g[i].bytes);
	free(g);
}

static void snapshot(FILE *f, unsigned *num, uint64_t ms, uint64_t bytes, const char *tree)
{
	fprintf(f, "#-----------\nsnapshot=%u\n#-----------\ntime=%" PRIu64 "\nmem_heap_B=%" PRIu64
		   "\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
		(*num)++, ms, bytes, tree);
}

/* A detailed snapshot: the live bytes per backtrace now, or at the peak. */
static void detailed(const struct tree *tr, unsigned *num, uint64_t ms, bool peak)
{
	const struct table *t = tr->t;
	struct leaf *v = xmalloc((t->nbts ? t->nbts : 1) * sizeof(*v));
	uint64_t total = 0, count;
	size_t n = 0;

	for (uint32_t i = 0; i < t->nbts; i++) {
		uint64_t bytes = t->bts[i].size;

		if (peak)
			table_bt_at_peak(t, &t->bts[i], &count, &bytes);
		if (!bytes)
			continue;
		v[n++] = (struct leaf){ &t->bts[i], bytes };
		total += bytes;
	}
	snapshot(tr->f, num, ms, total, peak ? "peak" : "detailed");
	write_tree(tr, v, n, total);
	free(v);
}

int massif_write(FILE *f, const struct table *t, const struct timeline *tl,
		 const struct massif_info *mi)
{
	struct tree tr = { f, t, mi };
	uint64_t carry = 0, peak_ms = mi->peak_ns / 1000000, last_ms = 0;
	uint32_t peak_at = t->sum.peak_live_bytes ? (uint32_t)(mi->peak_ns / tl->interval_ns) :
						   UINT32_MAX;
	unsigned num = 0;

	fputs("desc: heaptrace report --format=massif (bytes asked for; no allocator overhead)\n"
	      "cmd: ", f);
	for (const char *s = mi->command ? mi->command : "?"; *s; s++)
		fputc(*s == '\n' ? ' ' : *s, f);
	fputs("\ntime_unit: ms\n", f);
	snapshot(f, &num, 0, 0, "empty");
	for (uint32_t i = 0; i < tl->n; i++) {
		uint64_t ms = (i + 1) * tl->interval_ns / 1000000;

		if (i == peak_at) /* the peak, in its interval: before that interval's end */
			detailed(&tr, &num, peak_ms, true);
		if (tl->p[i].seen)
			carry = tl->p[i].live_bytes;
		snapshot(f, &num, ms, carry, "empty");
		last_ms = ms;
	}
	if (peak_at != UINT32_MAX && peak_at >= tl->n)
		detailed(&tr, &num, peak_ms, true);
	detailed(&tr, &num, mi->end_ns / 1000000 > last_ms ? mi->end_ns / 1000000 : last_ms,
		 false);
	if (fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
