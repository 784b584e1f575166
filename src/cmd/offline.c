// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reports from a --record log. The reader trusts nothing in the file: every varint, index,
 * length and depth is checked, and a log that breaks a rule is refused with one line naming
 * the byte where it did. Events are replayed through table.c exactly as the tracer applied them,
 * so every figure of the live report comes out the same.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define PR_DOMAIN "offline"
#include "output/calltrace.h"
#include "symbols/dbgserver.h"
#include "output/heaptrack.h"
#include "heap/hooks.h"
#include "output/html.h"
#include "heap/lifetime.h"
#include "util/log.h"
#include "util/maps.h"
#include "output/massif.h"
#include "cmd/offline.h"
#include "util/progress.h"
#include "output/pprof.h"
#include "eventlog/logread.h"
#include "eventlog/record.h"
#include "symbols/symbols.h"
#include "heap/table.h"
#include "heap/timeline.h"
#include "util/util.h"

/* The recorded process as the log says it. */
struct replay {
	struct table t;
	struct modlist mods;
	uint8_t (*ids)[64];
	uint8_t *idlen;
	struct {
		uint64_t pc;
		unsigned hook;
	} hookpcs[64]; /* frame-0 pcs of the allocation functions, as B records named them */
	unsigned nhookpcs;
	struct held {
		uint64_t tid;
		struct block blk;
		uint64_t id; /* lifetime.h */
	} *held; /* realloc's old blocks taken out and not yet released or put back, per thread */
	size_t nheld, held_cap;
	size_t ids_cap;
	int pid;
	uint64_t start_ns, now_ns;
	unsigned machine;
	unsigned depth; /* --depth of the run, 0: unknown */
	char command[RECORD_MAX_STRING + 1];
	bool started, ended, exited, has_statm;
	/* the allocators traced (summary.allocators), from the E record of a version 2 log */
	char *allocators[RECORD_MAX_ALLOCATORS];
	unsigned nallocators;
	bool has_allocators;
	enum offline_at at; /* where to stop */
	uint64_t at_ns; /* AT_TIME: since start_ns */
	uint64_t at_peak; /* AT_PEAK: the peak's live bytes */
	struct timeline tl;
	struct htk *htk; /* --format=heaptrack: the events go there too */
	struct html_series *series; /* --format=html: the top backtraces over time */
	struct lifetime *lt; /* --only-leaked at a moment: the blocks' ids, or NULL */
	struct calltrace *ct; /* --calls: the calls are printed, or NULL */
	int exit_status;
	uint64_t statm[3];
	/* the log's processes (S, then N records), procs[0] this one; kept in the first */
	struct replay **procs;
	size_t nprocs, cur; /* cur: the process the records are of now (W) */
	struct replay *root; /* the one with procs */
	char *heap_names[HEAP_MAX]; /* in the root: by number (H records), [0] "malloc" */
	uint64_t end_seq; /* 1 + how many processes ended before this one, 0 if it did not */
	uint64_t nended; /* in the root */
	/* in the root: the pid of the process --pid chose (0: none, the first process is
	 * followed and every one's calls printed), whose peak --at=peak is, whose events the
	 * heaptrack file and the html series follow, and whose calls --calls prints; the first
	 * process of that pid in the log (sel_found) */
	int sel_pid;
	bool sel_found, sel_peak;
	struct htk *sel_htk;
	struct html_series *sel_series;
	struct calltrace *sel_ct;
};

static bool get_time(struct logread *r, struct replay *rp)
{
	int64_t dt;

	if (!logread_s(r, &dt))
		return false;
	if (rp->at == AT_TIME && rp->now_ns + (uint64_t)dt - rp->start_ns > rp->at_ns) {
		rp->now_ns = rp->start_ns + rp->at_ns;
		r->state = LOGREAD_STOPPED;
		return false;
	}
	rp->now_ns += (uint64_t)dt;
	return true;
}

static void replay_forget(struct replay *rp)
{
	rp->nheld = 0;
	if (rp->lt)
		lifetime_clear(rp->lt);
	if (rp->ct)
		calltrace_flush(rp->ct);
	table_reset(&rp->t);
	modlist_clear(&rp->mods);
}

static bool read_module(struct logread *r, struct replay *rp)
{
	uint64_t start, end, base, known, bias;
	char id[65], path[RECORD_MAX_STRING + 1];
	size_t idlen;
	struct module *m;

	if (!logread_u(r, &start) || !logread_u(r, &end) || !logread_u(r, &base) ||
	    !logread_u(r, &known) || !logread_u(r, &bias) ||
	    !logread_bytes(r, id, sizeof(id), &idlen) ||
	    !logread_bytes(r, path, sizeof(path), NULL))
		return false;
	if (rp->mods.n == rp->mods.cap) {
		rp->mods.cap = rp->mods.cap ? rp->mods.cap * 2 : 16;
		rp->mods.v = xrealloc(rp->mods.v, rp->mods.cap * sizeof(*rp->mods.v));
	}
	if (rp->mods.n >= rp->ids_cap) {
		rp->ids_cap = rp->mods.cap;
		rp->ids = xrealloc(rp->ids, rp->ids_cap * sizeof(*rp->ids));
		rp->idlen = xrealloc(rp->idlen, rp->ids_cap);
	}
	m = &rp->mods.v[rp->mods.n];
	memset(m, 0, sizeof(*m));
	m->path = xstrdup(path);
	m->start = start;
	m->end = end;
	m->base = base;
	m->bias = bias;
	m->bias_known = known != 0;
	memcpy(rp->ids[rp->mods.n], id, idlen);
	rp->idlen[rp->mods.n] = (uint8_t)idlen;
	rp->mods.n++;
	return true;
}

static bool read_backtrace(struct logread *r, struct replay *rp)
{
	uint64_t hook, depth, pcs[RECORD_MAX_DEPTH], pc = 0;
	uint32_t bt;

	if (!logread_u(r, &hook) || !logread_u(r, &depth))
		return false;
	if (hook > HOOK_COUNT)
		return logread_corrupt(r,
			"a backtrace names no allocation function heaptrace knows");
	if (!depth || depth > RECORD_MAX_DEPTH)
		return logread_corrupt(r, "a backtrace of no frames or more than 256");
	for (uint64_t d = 0; d < depth; d++) {
		int64_t delta;

		if (!logread_s(r, &delta))
			return false;
		pc += (uint64_t)delta;
		pcs[d] = pc;
	}
	if (rp->t.nbts == UINT32_MAX - 1)
		return logread_corrupt(r, "too many backtraces");
	bt = table_intern(&rp->t, pcs, (uint32_t)depth);
	if (bt != rp->t.nbts - 1)
		return logread_corrupt(r, "a backtrace written twice");
	for (unsigned i = 0; hook && i <= rp->nhookpcs && i < ARRAY_SIZE(rp->hookpcs); i++) {
		if (i == rp->nhookpcs) {
			rp->hookpcs[rp->nhookpcs].pc = pcs[0];
			rp->hookpcs[rp->nhookpcs++].hook = (unsigned)hook - 1;
			break;
		}
		if (rp->hookpcs[i].pc == pcs[0])
			break;
	}
	return true;
}

/* The first process of the log, its pid known: --pid chose it, or the child of that pid
 * (take_chosen) will take what it follows. */
static void choose_root(struct replay *rp)
{
	if (rp->pid == rp->sel_pid) {
		rp->sel_found = true;
		return;
	}
	rp->sel_peak = rp->at == AT_PEAK;
	if (rp->sel_peak)
		rp->at = AT_END;
	rp->sel_htk = rp->htk;
	rp->sel_series = rp->series;
	rp->sel_ct = rp->ct;
	rp->htk = NULL;
	rp->series = NULL;
	rp->ct = NULL;
}

static bool read_start(struct logread *r, struct replay *rp)
{
	uint64_t pid, start, word, machine, depth;

	if (!logread_u(r, &pid) || !logread_u(r, &start) || !logread_u(r, &word) ||
	    !logread_u(r, &machine) || !logread_u(r, &depth) ||
	    !logread_bytes(r, rp->command, sizeof(rp->command), NULL))
		return false;
	rp->depth = depth <= RECORD_MAX_DEPTH ? (unsigned)depth : 0;
	if (pid > INT32_MAX)
		return logread_corrupt(r, "a process id out of range");
	rp->pid = (int)pid;
	if (rp == rp->root && rp->sel_pid)
		choose_root(rp);
	rp->start_ns = rp->now_ns = start;
	rp->machine = (unsigned)machine;
	rp->started = true;
	return true;
}

/* E's list of the allocators traced (version 2). */
static bool read_allocators(struct logread *r, struct replay *rp)
{
	char name[RECORD_MAX_STRING + 1];
	uint64_t n;

	if (!logread_u(r, &n))
		return false;
	if (n > RECORD_MAX_ALLOCATORS)
		return logread_corrupt(r, "more allocators than a log holds");
	for (uint64_t i = 0; i < n; i++) {
		if (!logread_bytes(r, name, sizeof(name), NULL))
			return false;
		if (rp->nallocators < RECORD_MAX_ALLOCATORS)
			rp->allocators[rp->nallocators++] = xstrdup(name);
	}
	rp->has_allocators = true;
	return true;
}

static bool read_end(struct logread *r, struct replay *rp)
{
	uint64_t exited, has_statm;
	int64_t status;

	if (!get_time(r, rp) || !logread_u(r, &exited) || !logread_s(r, &status) ||
	    !logread_u(r, &has_statm) || !logread_u(r, &rp->statm[0]) ||
	    !logread_u(r, &rp->statm[1]) || !logread_u(r, &rp->statm[2]) ||
	    !logread_bytes(r, rp->command, sizeof(rp->command), NULL))
		return false;
	rp->exited = exited != 0;
	rp->exit_status = (int)status;
	rp->has_statm = has_statm != 0;
	rp->ended = true;
	return r->version < 2 || read_allocators(r, rp);
}

/* The realloc's old block thread tid holds, or NULL. */
static struct held *held_by(struct replay *rp, uint64_t tid)
{
	for (size_t i = 0; i < rp->nheld; i++)
		if (rp->held[i].tid == tid)
			return &rp->held[i];
	return NULL;
}

static void drop_held(struct replay *rp, struct held *h)
{
	*h = rp->held[--rp->nheld];
}

/* A report counts reallocs in flight as live (calls_park): their old blocks go back. */
static void park_held(struct replay *rp)
{
	while (rp->nheld) {
		if (table_put_back(&rp->t, &rp->held[0].blk) && rp->lt)
			lifetime_put(rp->lt, rp->held[0].blk.ptr, rp->held[0].id);
		drop_held(rp, &rp->held[0]);
	}
}

/* A heap's number: one a table keeps, besides malloc's. */
static bool get_heap(struct logread *r, uint64_t *heap)
{
	if (!logread_u(r, heap))
		return false;
	if (*heap >= HEAP_MAX || *heap >= TABLE_HEAPS)
		return logread_corrupt(r, "a heap number out of range");
	return true;
}

/* H: the name of a heap besides malloc's (version 3). */
static bool read_heap(struct logread *r, struct replay *rp)
{
	char name[RECORD_MAX_STRING + 1];
	uint64_t heap;

	if (!get_heap(r, &heap) || !logread_bytes(r, name, sizeof(name), NULL))
		return false;
	if (heap == HEAP_MALLOC)
		return logread_corrupt(r, "a name for the malloc heap");
	free(rp->root->heap_names[heap]);
	rp->root->heap_names[heap] = xstrdup(name);
	/* the mapping calls' names, for frame 0 as the live report names it (--mmap) */
	if (heap == HEAP_MMAP)
		hook_enable_mmap();
	return true;
}

/* U: a range of a heap's addresses released (version 3), as table_release_range did. The
 * heaptrack file and the lifetimes see no such release (a piece of a block may stay). */
static bool read_range(struct logread *r, struct replay *rp)
{
	uint64_t tid, heap, lo, hi;

	if (!get_time(r, rp) || !logread_u(r, &tid) || !get_heap(r, &heap) || !logread_u(r, &lo) ||
	    !logread_u(r, &hi))
		return false;
	table_release_range(&rp->t, (unsigned)heap, lo, hi);
	return true;
}

/* T, P and R: a realloc's old block, moved as the tracer moved it (calls.c). */
static bool read_realloc(struct logread *r, struct replay *rp, uint8_t type)
{
	uint64_t tid, arg = 0, heap = HEAP_MALLOC;
	struct held *h;
	struct block blk;

	if (type != 'P' && !get_time(r, rp))
		return false;
	if (!logread_u(r, &tid) || (type != 'P' && !logread_u(r, &arg)))
		return false;
	h = held_by(rp, tid);
	if (type == 'T') {
		if (h)
			return logread_corrupt(r, "a thread in two reallocs at once");
		table_thread_free(&rp->t, (uint32_t)tid, arg);
		if (!table_take(&rp->t, arg, &blk))
			return logread_corrupt(r, "a realloc of a block that is not live");
		if (rp->nheld == rp->held_cap) {
			rp->held_cap = rp->held_cap ? rp->held_cap * 2 : 16;
			rp->held = xrealloc(rp->held, rp->held_cap * sizeof(*rp->held));
		}
		rp->held[rp->nheld++] =
			(struct held){ tid, blk, rp->lt ? lifetime_remove(rp->lt, arg) : 0 };
		if (rp->ct && !table_key_heap(arg))
			calltrace_take(rp->ct, rp->pid, (uint32_t)tid, arg);
		return true;
	}
	if (type == 'R') { /* known, and from version 3 the heap above it */
		heap = arg >> 1;
		arg &= 1;
		if (heap >= HEAP_MAX || heap >= TABLE_HEAPS)
			return logread_corrupt(r, "a heap number out of range");
	}
	if (type == 'P' || arg) {
		if (!h)
			return logread_corrupt(r, "a realloc's end without its start");
		heap = table_key_heap(h->blk.ptr);
		if (type == 'P' && table_put_back(&rp->t, &h->blk) && rp->lt)
			lifetime_put(rp->lt, h->blk.ptr, h->id);
		else if (type == 'R' && rp->htk)
			htk_free(rp->htk, (rp->now_ns - rp->start_ns) / 1000000, h->blk.size,
				 h->blk.bt);
		drop_held(rp, h);
	}
	if (type == 'R')
		table_heap_release(&rp->t, (unsigned)heap, arg != 0);
	if (!rp->ct || heap) /* --calls prints the malloc heap's, as --trace-calls */
		return true;
	if (type == 'P')
		calltrace_put_back(rp->ct, rp->pid, (uint32_t)tid, rp->now_ns - rp->start_ns);
	else
		calltrace_release(rp->ct, rp->pid, (uint32_t)tid, rp->now_ns - rp->start_ns,
				  arg != 0);
	return true;
}

/* To the heaptrack file: the release of the live block at ptr if there is one (a free, or
 * an allocation at an address whose free was missed), then the allocation if alloc. */
static void htk_events(struct replay *rp, uint64_t ptr, bool alloc, uint64_t size, uint32_t bt)
{
	const struct block *blk = table_find(&rp->t, ptr);
	uint64_t ms = (rp->now_ns - rp->start_ns) / 1000000;

	if (blk)
		htk_free(rp->htk, ms, blk->size, blk->bt);
	if (alloc)
		htk_alloc(rp->htk, ms, size, bt, table_bt_pcs(&rp->t, &rp->t.bts[bt]),
			  rp->t.bts[bt].depth);
}

/* To the heaptrack file: execve ended the process's heap (as the report's): its live blocks
 * are released, and backtrace indices start again. */
static void htk_exec(struct replay *rp)
{
	const struct table *t = &rp->t;
	uint64_t ms = (rp->now_ns - rp->start_ns) / 1000000;

	for (uint64_t i = 0; i < t->blocks_cap; i++)
		if (t->blocks[i].ptr)
			htk_free(rp->htk, ms, t->blocks[i].size, t->blocks[i].bt);
	htk_forget(rp->htk);
}

/* The allocation function of backtrace bt (hooks.h), -1 if the log does not say. */
static int bt_hook(const struct replay *rp, uint32_t bt)
{
	uint64_t pc = table_bt_pcs(&rp->t, &rp->t.bts[bt])[0];

	for (unsigned i = 0; i < rp->nhookpcs; i++)
		if (rp->hookpcs[i].pc == pc)
			return (int)rp->hookpcs[i].hook;
	return -1;
}

static void replay_free(struct replay *rp);

/* The child --pid chose, just forked: --at=peak is its peak, and the heaptrack file and the
 * html series follow it, the heaptrack file from the blocks it inherited on (allocated, for
 * heaptrack, at the fork: its reader knows no heap it did not see made). */
static void take_chosen(struct replay *root, struct replay *c)
{
	const struct table *t = &c->t;

	root->sel_found = true;
	c->ct = root->sel_ct;
	if (root->sel_peak) {
		c->at = AT_PEAK;
		c->at_peak = root->at_peak;
	}
	c->series = root->sel_series;
	c->htk = root->sel_htk;
	if (!c->htk)
		return;
	for (uint64_t i = 0; i < t->blocks_cap; i++) {
		const struct block *b = &t->blocks[i];

		if (b->ptr)
			htk_alloc(c->htk, 0, b->size, b->bt, table_bt_pcs(t, &t->bts[b->bt]),
				  t->bts[b->bt].depth);
	}
}

/* N: a process forked from procs[parent] (-f), with copies of its heap, modules and
 * backtraces; its times go on from the parent's. */
static bool read_fork(struct logread *r, struct replay *root, struct replay *cur)
{
	uint64_t parent, pid, start;
	struct replay *pp, *c;

	if (!logread_u(r, &parent) || !logread_u(r, &pid) || !logread_u(r, &start))
		return false;
	if (parent >= root->nprocs)
		return logread_corrupt(r, "a fork of a process not in the log");
	if (pid > INT32_MAX)
		return logread_corrupt(r, "a process id out of range");
	if (root->nprocs >= 4096)
		return logread_corrupt(r, "more than 4096 processes");
	pp = root->procs[parent];
	c = xcalloc(1, sizeof(*c));
	table_init(&c->t);
	timeline_init(&c->tl);
	root->procs = xrealloc(root->procs, (root->nprocs + 1) * sizeof(*root->procs));
	root->procs[root->nprocs++] = c;
	if (!logread_bytes(r, c->command, sizeof(c->command), NULL))
		return false;
	c->depth = pp->depth;
	table_destroy(&c->t);
	table_copy(&c->t, &pp->t);
	modlist_copy(&c->mods, &pp->mods);
	c->ids_cap = pp->mods.n;
	c->ids = xmalloc((c->ids_cap ? c->ids_cap : 1) * sizeof(*c->ids));
	c->idlen = xmalloc(c->ids_cap ? c->ids_cap : 1);
	if (pp->mods.n) {
		memcpy(c->ids, pp->ids, pp->mods.n * sizeof(*c->ids));
		memcpy(c->idlen, pp->idlen, pp->mods.n);
	}
	c->mods.cap = c->mods.n;
	memcpy(c->hookpcs, pp->hookpcs, sizeof(c->hookpcs));
	c->nhookpcs = pp->nhookpcs;
	c->pid = (int)pid;
	c->start_ns = start;
	c->now_ns = cur->now_ns;
	c->machine = pp->machine;
	c->started = true;
	/* a moment counts from the first process's start; a peak is the first process's */
	c->at = root->at == AT_TIME ? AT_TIME : AT_END;
	c->at_ns = root->start_ns + root->at_ns > start ? root->start_ns + root->at_ns - start : 0;
	c->ct = root->sel_pid ? NULL : root->ct;
	c->root = root;
	if (c->t.sum.live_blocks) /* its timeline starts with the heap it inherited */
		timeline_note(&c->tl, 0, c->t.sum.live_bytes, c->t.sum.live_blocks);
	if (root->sel_pid == c->pid && !root->sel_found)
		take_chosen(root, c);
	return true;
}

/* One record of process rp; false at the end of the data or on an error (r->state). */
static bool read_record(struct logread *r, struct replay *rp, uint8_t type);

/* One record of any process; false at the end of the data or on an error (r->state). */
static bool read_any(struct logread *r, struct replay *root)
{
	struct replay *rp = root->procs[root->cur];
	uint64_t idx;
	uint8_t type;

	if (!logread_byte(r, &type))
		return false;
	if (type == 'W') {
		if (!logread_u(r, &idx))
			return false;
		if (idx >= root->nprocs)
			return logread_corrupt(r, "records of a process not in the log");
		root->procs[idx]->now_ns = rp->now_ns; /* one clock */
		root->cur = (size_t)idx;
		return true;
	}
	if (type == 'N')
		return read_fork(r, root, rp);
	return read_record(r, rp, type);
}

static bool read_record(struct logread *r, struct replay *rp, uint8_t type)
{
	uint64_t tid, bt, size, ptr;

	if (rp->ended)
		return logread_corrupt(r, "data after the end record");
	if (!rp->started && type != 'S')
		return logread_corrupt(r, "no start record");
	switch (type) {
	case 'S':
		if (rp->started)
			return logread_corrupt(r, "a second start record");
		return read_start(r, rp);
	case 'X':
		if (rp->htk)
			htk_exec(rp);
		replay_forget(rp);
		if (!logread_u(r, &rp->start_ns) ||
		    !logread_bytes(r, rp->command, sizeof(rp->command), NULL))
			return false;
		/* the new program's timeline starts at its start */
		timeline_init(&rp->tl);
		return true;
	case 'M':
		return read_module(r, rp);
	case 'B':
		return read_backtrace(r, rp);
	case 'A':
		if (!get_time(r, rp) || !logread_u(r, &tid) || !logread_u(r, &bt) ||
		    !logread_u(r, &size) || !logread_u(r, &ptr))
			return false;
		if (bt >= rp->t.nbts)
			return logread_corrupt(r,
				"an allocation from a backtrace not written before");
		if (rp->htk)
			htk_events(rp, ptr, true, size, (uint32_t)bt);
		table_alloc(&rp->t, ptr, size, (uint32_t)bt, rp->now_ns);
		table_thread_alloc(&rp->t, (uint32_t)tid, ptr);
		if (rp->lt)
			lifetime_add(rp->lt, ptr);
		if (rp->ct && !table_key_heap(ptr))
			calltrace_alloc(rp->ct, rp->pid, (uint32_t)tid, rp->now_ns - rp->start_ns,
					bt_hook(rp, (uint32_t)bt), size, ptr);
		if (rp->at == AT_PEAK && rp->t.sum.peak_live_bytes >= rp->at_peak) {
			r->state = LOGREAD_STOPPED;
			return false;
		}
		return true;
	case 'I':
		if (!get_time(r, rp) || !logread_u(r, &bt) || !logread_u(r, &size) ||
		    !logread_u(r, &ptr))
			return false;
		if (bt >= rp->t.nbts)
			return logread_corrupt(r, "a block from a backtrace not written before");
		table_seed(&rp->t, ptr, size, (uint32_t)bt, rp->now_ns);
		if (rp->lt)
			lifetime_add(rp->lt, ptr);
		return true;
	case 'F':
		if (!get_time(r, rp) || !logread_u(r, &tid) || !logread_u(r, &ptr))
			return false;
		table_thread_free(&rp->t, (uint32_t)tid, ptr);
		if (rp->htk)
			htk_events(rp, ptr, false, 0, 0);
		table_free(&rp->t, ptr);
		if (rp->lt)
			lifetime_remove(rp->lt, ptr);
		if (rp->ct && !table_key_heap(ptr))
			calltrace_free(rp->ct, rp->pid, (uint32_t)tid, rp->now_ns - rp->start_ns,
				       ptr);
		return true;
	case 'T':
	case 'P':
	case 'R':
		return read_realloc(r, rp, type);
	case 'H':
		if (r->version < 3)
			return logread_corrupt(r, "an unknown record type");
		return read_heap(r, rp);
	case 'U':
		if (r->version < 3)
			return logread_corrupt(r, "an unknown record type");
		return read_range(r, rp);
	case 'E':
		if (!read_end(r, rp))
			return false;
		rp->end_seq = ++rp->root->nended;
		park_held(rp);
		return true;
	default:
		return logread_corrupt(r, "an unknown record type");
	}
}

/* One record, and the heap's place in the timeline after it. */
static bool replay_record(struct logread *r, struct replay *root)
{
	struct replay *rp = root->procs[root->cur];
	uint64_t bytes = rp->t.sum.live_bytes, blocks = rp->t.sum.live_blocks;

	if (!read_any(r, root))
		return false;
	if (rp != root->procs[root->cur] ||
	    (bytes == rp->t.sum.live_bytes && blocks == rp->t.sum.live_blocks))
		return true;
	/* an exec's start can be later than the last event's time (the clock is the events'):
	 * its heap, emptied, is at the start */
	timeline_note(&rp->tl, rp->now_ns > rp->start_ns ? rp->now_ns - rp->start_ns : 0,
		      rp->t.sum.live_bytes, rp->t.sum.live_blocks);
	if (rp->series)
		html_series_note(rp->series, &rp->t, rp->now_ns - rp->start_ns);
	return true;
}

/* Has every process of the log ended? */
static bool all_ended(const struct replay *root)
{
	for (size_t i = 0; i < root->nprocs; i++)
		if (!root->procs[i]->ended)
			return false;
	return true;
}

/* Replay the whole log into rp. Return 0 or -errno (said). */
static int replay_log(struct logread *r, struct replay *rp)
{
	int ret = logread_header(r);

	if (ret)
		return ret;
	r->z = ZSTD_createDCtx();
	r->in = xmalloc(LOGREAD_IN_SIZE);
	r->out_cap = ZSTD_DStreamOutSize();
	r->out = xmalloc(r->out_cap);
	r->zret = 1; /* no frame yet */
	{
		struct stat st;

		progress_start(&r->pg, r->name,
			       !fstat(r->fd, &st) && S_ISREG(st.st_mode) ? st.st_size : 0);
	}
	while (replay_record(r, rp))
		;
	progress_end(&r->pg);
	if (r->state == LOGREAD_EOF && !all_ended(rp))
		r->state = LOGREAD_TRUNCATED;
	switch (r->state) {
	case LOGREAD_STOPPED:
		for (size_t i = 0; i < rp->nprocs; i++) {
			struct replay *p = rp->procs[i];

			park_held(p);
			/* every process is seen at the moment the reading stopped */
			if (p->at == AT_TIME && p->now_ns < p->start_ns + p->at_ns)
				p->now_ns = p->start_ns + p->at_ns;
			else if (p->at != AT_TIME && p->now_ns < rp->procs[rp->cur]->now_ns)
				p->now_ns = rp->procs[rp->cur]->now_ns;
		}
		/* fall through */
	case LOGREAD_EOF:
		return 0;
	case LOGREAD_TRUNCATED:
		if (r->why) {
			pr_err("%s: %s", r->name, r->why);
			return -EIO;
		}
		pr_err("%s: truncated log (it ends after %" PRIu64 " bytes of events, without "
		       "its end record)", r->name, r->consumed);
		return -EINVAL;
	default:
		pr_err("%s: corrupt log at event byte %" PRIu64 ": %s", r->name, r->consumed,
		       r->why);
		return -EINVAL;
	}
}

/* The directories searched for debug files, colon-separated: the user's, the sysroot's, the
 * system's. */
static char *debug_dirs(const struct offline_opts *o)
{
	char *s = NULL;

	if (asprintf(&s, "%s%s%s%s/usr/lib/debug", o->debuginfo_path ? o->debuginfo_path : "",
		     o->debuginfo_path ? ":" : "", o->sysroot ? o->sysroot : "",
		     o->sysroot ? "/usr/lib/debug:" : "") < 0)
		return xstrdup("/usr/lib/debug");
	return s;
}

static char *join(const char *a, const char *b, const char *c, const char *d)
{
	char *s = NULL;

	if (asprintf(&s, "%s%s%s%s", a, b, c, d) < 0)
		return NULL;
	return s;
}

/* Is the file at path the one recorded (the same build-id; without one, any file)? */
static bool same_file(const char *path, const uint8_t *id, size_t idlen)
{
	uint8_t got[64];
	int len;

	if (access(path, R_OK))
		return false;
	len = sym_build_id(path, got, sizeof(got));
	return !idlen || (len == (int)idlen && !memcmp(got, id, idlen));
}

/* The recorded file of module i on this machine, or NULL: the sysroot's copy, a debug file
 * by build-id, or the same path here; a recorded build-id must match. */
static char *find_local(const struct offline_opts *o, const struct replay *rp, size_t i)
{
	const char *path = rp->mods.v[i].path;
	const uint8_t *id = rp->ids[i];
	size_t idlen = rp->idlen[i];
	char *c, *dirs, *d, *save;

	if (o->sysroot && (c = join(o->sysroot, path, "", ""))) {
		if (same_file(c, id, idlen))
			return c;
		free(c);
	}
	if (idlen >= 2) {
		char hex[129];

		for (size_t k = 0; k < idlen; k++)
			sprintf(hex + 2 * k, "%02x", id[k]);
		dirs = debug_dirs(o);
		for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			c = NULL;
			if (asprintf(&c, "%s/.build-id/%.2s/%s.debug", d, hex, hex + 2) < 0)
				continue;
			if (same_file(c, id, idlen)) {
				free(dirs);
				return c;
			}
			free(c);
		}
		free(dirs);
	}
	return same_file(path, id, idlen) ? xstrdup(path) : NULL;
}

/* find_local's file, or with --debuginfod, when that has no DWARF, the servers' debug file. */
static char *find_file(const struct offline_opts *o, const struct replay *rp, size_t i)
{
	char *local = find_local(o, rp, i), *remote;

	if (!dbgserver_enabled() || rp->idlen[i] < 2 || (local && dbgserver_has_dwarf(local)))
		return local;
	remote = dbgserver_find(rp->ids[i], rp->idlen[i]);
	if (!remote)
		return local;
	free(local);
	return remote;
}

struct offline_resolve {
	struct symbolizer *sym;
	const struct replay *rp;
};

static void resolve_frame(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	struct offline_resolve *res = ctx;
	const struct module *m;

	if (res->rp->machine == EM_ARM)
		pc &= ~(uint64_t)1; /* the Thumb bit */
	sym_resolve(res->sym, pc, index > 0, out);
	if (!out->module && (m = modlist_find(&res->rp->mods, pc))) {
		out->module = m->path;
		out->module_offset = pc - m->base;
	}
}

/* Frame 0 gets the public name (malloc, not __libc_malloc; a C++ operator demangled), as in
 * the live report (snapshot_resolve_frame). */
static void resolve_named(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	struct offline_resolve *res = ctx;
	const struct replay *rp = res->rp;

	resolve_frame(ctx, pc, index, out);
	for (unsigned i = 0; !index && i < rp->nhookpcs; i++) {
		/* a custom hook of the run is no hook here: its symbol names it */
		if (rp->hookpcs[i].pc == pc && hook_table[rp->hookpcs[i].hook].name) {
			int h = rp->hookpcs[i].hook;
			char sym[64];
			const char *cxx = sym_demangled(res->sym,
				hook_symbol(h, rp->machine == EM_ARM ? 4 : 8, sym, sizeof(sym)));

			out->function = cxx ? cxx : hook_table[h].name;
			out->offset = 0;
		}
	}
}

/* libdwfl's search path for separate debug files: next to the file, then debug_dirs(). */
static char *debug_path(const struct offline_opts *o)
{
	char *dirs = debug_dirs(o), *s = join(":.debug:", dirs, "", "");

	free(dirs);
	return s;
}

static void replay_free(struct replay *rp);

/* Replay the log of o into a new replay, up to the moment rp_at says. Return it, or NULL
 * (said). */
static struct replay *replay_file(const struct offline_opts *o, enum offline_at at,
				  uint64_t at_ns, uint64_t at_peak, struct htk *htk,
				  struct lifetime *lt, struct calltrace *ct)
{
	struct logread r = { .name = o->path, .fd = -1 };
	struct replay *rp;
	struct stat st;

	if (!strcmp(o->path, "-")) {
		r.fd = STDIN_FILENO;
		r.name = "standard input";
	} else {
		r.fd = open(o->path, O_RDONLY | O_CLOEXEC);
		if (r.fd >= 0 && !fstat(r.fd, &st) && S_ISDIR(st.st_mode)) {
			close(r.fd);
			r.fd = -1;
			errno = EISDIR;
		}
	}
	if (r.fd < 0) {
		pr_err("%s: %s", o->path, strerror(errno));
		return NULL;
	}
	rp = xcalloc(1, sizeof(*rp));
	table_init(&rp->t);
	timeline_init(&rp->tl);
	rp->procs = xmalloc(sizeof(*rp->procs));
	rp->procs[0] = rp;
	rp->nprocs = 1;
	rp->root = rp;
	rp->heap_names[HEAP_MALLOC] = xstrdup("malloc");
	rp->sel_pid = o->pid;
	rp->at = at;
	rp->at_ns = at_ns;
	rp->at_peak = at_peak;
	rp->htk = htk;
	rp->series = o->series;
	rp->lt = lt;
	rp->ct = ct;
	if (replay_log(&r, rp)) {
		replay_free(rp);
		rp = NULL;
	}
	if (ct)
		calltrace_flush(ct);
	if (r.fd != STDIN_FILENO)
		close(r.fd);
	ZSTD_freeDCtx(r.z);
	free(r.in);
	free(r.out);
	return rp;
}

static void replay_free(struct replay *rp)
{
	for (size_t i = 1; i < rp->nprocs; i++)
		replay_free(rp->procs[i]);
	if (rp->nprocs)
		free(rp->procs);
	table_destroy(&rp->t);
	modlist_clear(&rp->mods);
	free(rp->ids);
	free(rp->idlen);
	free(rp->held);
	for (unsigned i = 0; i < rp->nallocators; i++)
		free(rp->allocators[i]);
	for (unsigned h = 0; h < HEAP_MAX; h++)
		free(rp->heap_names[h]);
	free(rp);
}

static void extra_json(FILE *f, void *ctx)
{
	timeline_json(f, &((struct replay *)ctx)->tl);
}

static void extra_text(FILE *f, void *ctx)
{
	timeline_text(f, &((struct replay *)ctx)->tl);
}

/* A log replayed up to the moment o asks for, and the symbolizer of its process p. */
struct side {
	struct replay *rp;
	struct replay *p; /* the process --pid chose, else the first */
	struct offline_resolve res;
	char **files;
	char *dpath;
	bool leaked; /* lt marks the blocks never freed (--only-leaked at a moment) */
	struct lifetime lt;
	struct calltrace ct;
};

/* The process of rp that o->pid names, or the first when o->pid is 0 and one is all the
 * log has or all the command wants; NULL (said) if there is none or it has to be chosen. */
static struct replay *pick_proc(const struct offline_opts *o, struct replay *rp, bool one)
{
	char pids[160];
	size_t len = 0;

	for (size_t i = 0; i < rp->nprocs; i++)
		if (o->pid && rp->procs[i]->pid == o->pid)
			return rp->procs[i];
	if (!o->pid && (rp->nprocs == 1 || !one))
		return rp;
	for (size_t i = 0; i < rp->nprocs && len < sizeof(pids) - 16; i++)
		len += snprintf(pids + len, sizeof(pids) - len, "%s%d", i ? " " : "",
				rp->procs[i]->pid);
	if (len >= sizeof(pids) - 16)
		snprintf(pids + len, sizeof(pids) - len, " ...");
	if (o->pid)
		pr_err("%s: no process %d in the log (its processes: %s)", o->path, o->pid, pids);
	else
		pr_err("%s: the log has %zu processes (%s): choose one with --pid=PID", o->path,
		       rp->nprocs, pids);
	return NULL;
}

/* Replay o's log to its moment; one: the command reports one process. Return 0 or -EINVAL
 * (said). */
static int side_open(const struct offline_opts *o, struct side *sd, bool one)
{
	struct replay *rp, *p;
	bool calls_now = o->calls && o->at == AT_END;

	memset(sd, 0, sizeof(*sd));
	sd->leaked = o->report.only_leaked && o->at != AT_END;
	lifetime_init(&sd->lt);
	calltrace_init(&sd->ct, o->out, o->report.format == FMT_JSON);
	rp = replay_file(o, AT_END, 0, 0, NULL, sd->leaked ? &sd->lt : NULL,
			 calls_now ? &sd->ct : NULL);
	if (!rp) {
		lifetime_destroy(&sd->lt);
		calltrace_destroy(&sd->ct);
		return -EINVAL;
	}
	p = pick_proc(o, rp, one);
	if (!p) {
		replay_free(rp);
		lifetime_destroy(&sd->lt);
		calltrace_destroy(&sd->ct);
		return -EINVAL;
	}
	if (o->at != AT_END) {
		/* the whole log was read and checked: now up to the moment asked for */
		uint64_t peak = p->t.sum.peak_live_bytes;
		int pid = p->pid;
		struct lifetime end;

		lifetime_init(&end);
		if (sd->leaked) { /* the ids live at the end, for the same ids at the moment */
			lifetime_end_to(&sd->lt, &end);
			lifetime_destroy(&sd->lt);
			sd->lt = end;
		}
		replay_free(rp);
		if (o->at == AT_PEAK && !peak)
			rp = replay_file(o, AT_END, 0, 0, NULL, sd->leaked ? &sd->lt : NULL,
					 o->calls ? &sd->ct : NULL);
		else
			rp = replay_file(o, o->at, o->at_ms * 1000000, peak, NULL,
					 sd->leaked ? &sd->lt : NULL, o->calls ? &sd->ct : NULL);
		if (!rp) {
			lifetime_destroy(&sd->lt);
			calltrace_destroy(&sd->ct);
			return -EINVAL;
		}
		/* the same process, the first of its pid, now at the moment */
		p = NULL;
		for (size_t i = 0; i < rp->nprocs && !p; i++)
			if (rp->procs[i]->pid == pid)
				p = rp->procs[i];
		if (!p) {
			pr_err("%s: process %d did not exist yet at that moment", o->path, pid);
			replay_free(rp);
			lifetime_destroy(&sd->lt);
			calltrace_destroy(&sd->ct);
			return -EINVAL;
		}
	}
	sd->rp = rp;
	sd->p = p;
	sd->files = xcalloc(p->mods.n ? p->mods.n : 1, sizeof(*sd->files));
	for (size_t i = 0; i < p->mods.n; i++)
		sd->files[i] = find_file(o, p, i);
	sd->dpath = debug_path(o);
	sd->res.rp = p;
	sd->res.sym = sym_open_files(&p->mods, sd->files, sd->dpath);
	return 0;
}

static void side_close(struct side *sd)
{
	if (!sd->rp)
		return;
	sym_close(sd->res.sym);
	for (size_t i = 0; i < sd->p->mods.n; i++)
		free(sd->files[i]);
	free(sd->files);
	free(sd->dpath);
	replay_free(sd->rp);
	lifetime_destroy(&sd->lt);
	calltrace_destroy(&sd->ct);
	sd->rp = NULL;
}

/* The log as heaptrack's data file: a second replay, the symbolizer of the first. */
static int heaptrack_file(const struct offline_opts *o, struct side *sd)
{
	struct htk *h = htk_open(o->out, sd->p->command, resolve_named, &sd->res);
	struct replay *rp = replay_file(o, AT_END, 0, 0, h, NULL, NULL);
	uint64_t end_ms = rp ? (sd->p->now_ns - sd->p->start_ns) / 1000000 : 0;
	int ret = htk_close(h, end_ms);

	if (!rp)
		return -EINVAL;
	replay_free(rp);
	if (ret)
		pr_err("writing the report: %s", strerror(-ret));
	return ret;
}

/* --format=html: the page, with the top backtraces over the timeline from a second replay
 * up to the same moment (none from standard input, which cannot be read twice). */
static int html_page(const struct offline_opts *o, struct side *sd, const struct report_info *ri)
{
	uint64_t peak = sd->p->t.sum.peak_live_bytes;
	struct offline_opts so = *o;
	struct html_series s;
	struct replay *rp;
	int ret;

	if (!strcmp(o->path, "-"))
		return html_write(o->out, &sd->p->t, ri, NULL);
	html_series_init(&s, &sd->p->t, &sd->p->tl);
	so.series = &s;
	rp = replay_file(&so, o->at == AT_PEAK && !peak ? AT_END : o->at, o->at_ms * 1000000,
			 peak, NULL, NULL, NULL);
	if (!rp) {
		html_series_free(&s);
		return -EINVAL;
	}
	ret = html_write(o->out, &sd->p->t, ri, &s);
	replay_free(rp);
	html_series_free(&s);
	return ret;
}

/* The table of the moment asked for as a pprof profile; the modules as its mappings. */
static int pprof_file(const struct offline_opts *o, struct side *sd)
{
	const struct replay *rp = sd->p;
	struct pprof_module *mods = xcalloc(rp->mods.n ? rp->mods.n : 1, sizeof(*mods));
	char (*hex)[129] = xcalloc(rp->mods.n ? rp->mods.n : 1, sizeof(*hex));
	struct pprof_info pi = {
		.mods = mods,
		.nmods = rp->mods.n,
		.resolve = resolve_named,
		.resolve_ctx = &sd->res,
		.duration_ns = rp->now_ns - rp->start_ns,
		.comment = rp->command,
	};
	int ret;

	for (size_t i = 0; i < rp->mods.n; i++) {
		const struct module *m = &rp->mods.v[i];

		for (size_t k = 0; k < rp->idlen[i]; k++)
			sprintf(hex[i] + 2 * k, "%02x", rp->ids[i][k]);
		mods[i] = (struct pprof_module){ .path = m->path, .start = m->start,
						 .limit = m->end, .file_offset = m->start - m->base,
						 .build_id = rp->idlen[i] ? hex[i] : NULL };
	}
	ret = pprof_write(o->out, &rp->t, &pi);
	if (ret == -ENOTSUP)
		pr_err("this heaptrace was built without pprof output (libprotobuf-c, protoc-c "
		       "and zlib)");
	else if (ret)
		pr_err("writing the report: %s", strerror(-ret));
	free(hex);
	free(mods);
	return ret;
}

/* The whole run as massif's file: the timeline, the heap at its peak and at the end. */
static int massif_file(const struct offline_opts *o, struct side *sd)
{
	const struct replay *rp = sd->p;
	const struct table_summary *s = &rp->t.sum;
	struct massif_info mi = {
		.command = rp->command,
		.end_ns = rp->now_ns - rp->start_ns,
		.peak_ns = s->peak_ns > rp->start_ns ? s->peak_ns - rp->start_ns : 0,
		.resolve = resolve_named,
		.resolve_ctx = &sd->res,
	};
	int ret = massif_write(o->out, &rp->t, &rp->tl, &mi);

	if (ret)
		pr_err("writing the report: %s", strerror(-ret));
	return ret;
}

/* --only-leaked at a moment: the block is live at the end too. */
static bool keep_leaked(void *ctx, const struct block *blk)
{
	return lifetime_leaked(ctx, blk->ptr);
}

/* Report one process of the log with resolver res. Return 0 or -errno. */
static int report_proc(const struct offline_opts *o, struct side *sd, struct replay *rp,
		       struct offline_resolve *res)
{
	bool html = o->report.format == FMT_HTML;
	struct report_opts ro = o->report;
	struct report_info ri;
	char kind[48];

	ro.depth_limit = rp->depth;
	if (o->at == AT_END)
		snprintf(kind, sizeof(kind), "final");
	else if (o->at == AT_PEAK)
		snprintf(kind, sizeof(kind), "at its peak");
	else
		snprintf(kind, sizeof(kind), "at %" PRIu64 " ms", o->at_ms);
	ri = (struct report_info){
		.pid = rp->pid,
		.command = rp->command,
		.exited = rp->ended && rp->exited,
		.exit_status = rp->exit_status,
		.kind = kind,
		.has_statm = rp->ended && rp->has_statm,
		.statm_vss = rp->statm[0],
		.statm_rss = rp->statm[1],
		.statm_shared = rp->statm[2],
		.now_ns = rp->now_ns,
		.elapsed_ns = rp->now_ns - rp->start_ns,
		.resolve = resolve_named,
		.resolve_ctx = res,
		.extra_json = o->timeline || html ? extra_json : NULL,
		.extra_text = o->timeline ? extra_text : NULL,
		.extra_ctx = rp,
		.keep = sd->leaked ? keep_leaked : NULL,
		.keep_ctx = &sd->lt,
		.allocators = rp->has_allocators ? (const char *const *)rp->allocators : NULL,
		.nallocators = rp->nallocators,
		.heap_names = (const char *const *)rp->root->heap_names,
	};

	if (html)
		return html_page(o, sd, &ri);
	return report_write(o->out, &rp->t, &ro, &ri);
}

/* Processes in the order they ended (as the live final reports came), those that did not
 * after them in log order. */
static int by_end(const void *a, const void *b)
{
	const struct replay *x = *(struct replay *const *)a, *y = *(struct replay *const *)b;
	uint64_t kx = x->end_seq ? x->end_seq : UINT64_MAX, ky = y->end_seq ? y->end_seq : UINT64_MAX;

	return kx < ky ? -1 : kx > ky;
}

/* A child's report, with a symbolizer of its own modules (an exec changed them). */
static int report_child(const struct offline_opts *o, struct side *sd, struct replay *rp)
{
	char **files = xcalloc(rp->mods.n ? rp->mods.n : 1, sizeof(*files));
	struct offline_resolve res = { .rp = rp };
	int ret;

	for (size_t i = 0; i < rp->mods.n; i++)
		files[i] = find_file(o, rp, i);
	res.sym = sym_open_files(&rp->mods, files, sd->dpath);
	ret = report_proc(o, sd, rp, &res);
	sym_close(res.sym);
	for (size_t i = 0; i < rp->mods.n; i++)
		free(files[i]);
	free(files);
	return ret;
}

int offline_report(const struct offline_opts *o)
{
	struct replay **order;
	struct side sd;
	size_t n;
	/* one file of one process: heaptrack, pprof, massif and a page */
	bool one = o->heaptrack || o->pprof || o->massif || o->report.format == FMT_HTML;
	int ret = side_open(o, &sd, one);

	if (ret)
		return ret;
	if (o->heaptrack || o->pprof || o->massif) {
		ret = o->pprof	? pprof_file(o, &sd) :
		      o->massif ? massif_file(o, &sd) :
				  heaptrack_file(o, &sd);
		side_close(&sd);
		return ret;
	}
	n = sd.rp->nprocs;
	if (sd.leaked && n > 1) {
		pr_err("%s: --only-leaked at a moment reads logs of one process only (this one has "
		       "%zu)", o->path, n);
		side_close(&sd);
		return -EINVAL;
	}
	/* one report per process, as a live -f run writes them, or --pid's */
	order = xmalloc(n * sizeof(*order));
	memcpy(order, sd.rp->procs, n * sizeof(*order));
	if (one || o->pid) {
		order[0] = sd.p;
		n = 1;
	}
	if (n > 1)
		qsort(order, n, sizeof(*order), by_end);
	for (size_t i = 0; i < n && !ret; i++)
		ret = order[i] == sd.p ? report_proc(o, &sd, sd.p, &sd.res) :
					 report_child(o, &sd, order[i]);
	if (ret && ret != -EINVAL)
		pr_err("writing the report: %s", strerror(-ret));
	free(order);
	side_close(&sd);
	return ret;
}

/* ----- heaptrace diff: growth per backtrace between two moments (of one log or two) ----- */

struct diff_row {
	char *key; /* the frames by name: the same code in two runs at other addresses */
	int side; /* 0: A, 1: B (the backtrace bt is of that side) */
	uint32_t bt;
	uint64_t count[2], size[2];
};

/* A frame's name for matching: function, file and line, else the module and the offset. */
static void frame_key(FILE *f, struct side *sd, uint64_t pc, unsigned idx)
{
	struct sym_frame sf;
	const struct module *m = modlist_find(&sd->p->mods, pc);

	resolve_named(&sd->res, pc, idx, &sf);
	if (sf.function)
		fprintf(f, "%s@%s:%d", sf.function, sf.file ? sf.file : "", sf.line);
	else if (m)
		fprintf(f, "%s+%" PRIx64, strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 :
								 m->path,
			pc - m->base);
	else
		fprintf(f, "?%" PRIx64, pc);
	fputc('\x1f', f);
}

/* Rows for the live backtraces of side s. */
static void diff_rows(struct side *sd, int s, struct diff_row **rows, size_t *n, size_t *cap)
{
	const struct table *t = &sd->p->t;

	for (uint32_t i = 0; i < t->nbts; i++) {
		const struct bt *b = &t->bts[i];
		const uint64_t *pcs = table_bt_pcs(t, b);
		size_t len = 0;
		FILE *f;
		struct diff_row *r;

		if (!b->count)
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*rows = xrealloc(*rows, *cap * sizeof(**rows));
		}
		r = &(*rows)[(*n)++];
		memset(r, 0, sizeof(*r));
		f = open_memstream(&r->key, &len);
		if (!f) {
			r->key = xstrdup("");
			continue;
		}
		for (uint32_t d = 0; d < b->depth; d++)
			frame_key(f, sd, pcs[d], d);
		fclose(f);
		r->side = s;
		r->bt = i;
		r->count[s] = b->count;
		r->size[s] = b->size;
	}
}

static int row_by_key(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : x->side - y->side;
}

static int64_t growth(const struct diff_row *r)
{
	return (int64_t)(r->size[1] - r->size[0]);
}

static int row_by_growth(const void *a, const void *b)
{
	int64_t x = growth(a), y = growth(b);

	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(((const struct diff_row *)a)->key, ((const struct diff_row *)b)->key);
}

static void diff_frames(FILE *f, struct side *sd, const struct diff_row *r, bool json)
{
	const struct table *t = &sd->p->t;
	const struct bt *b = &t->bts[r->bt];
	const uint64_t *pcs = table_bt_pcs(t, b);

	for (uint32_t d = 0; d < b->depth; d++) {
		struct sym_frame sf;
		const struct module *m = modlist_find(&sd->p->mods, pcs[d]);

		resolve_named(&sd->res, pcs[d], d, &sf);
		if (json) {
			fprintf(f, "%s{\"function\":", d ? "," : "");
			report_json_str(f, sf.function);
			report_json_place(f, &sf);
			fputc('}', f);
			continue;
		}
		fprintf(f, "%2u ", d);
		if (sf.function)
			fprintf(f, "%s", sf.function);
		else if (m)
			fprintf(f, "%s +0x%" PRIx64, m->path, pcs[d] - m->base);
		else
			fprintf(f, "0x%" PRIx64, pcs[d]);
		if (sf.file && sf.line > 0)
			fprintf(f, " (%s:%d)", sf.file, sf.line);
		fputc('\n', f);
	}
}

static void side_json(FILE *f, const char *name, const struct offline_opts *o,
		      const struct side *sd)
{
	fprintf(f, "\"%s\":{\"log\":", name);
	report_json_str(f, o->path);
	fprintf(f, ",\"elapsed_ns\":%" PRIu64 ",\"live_bytes\":%" PRIu64 ",\"live_blocks\":%" PRIu64
		   "}",
		sd->p->now_ns - sd->p->start_ns, sd->p->t.sum.live_bytes,
		sd->p->t.sum.live_blocks);
}

/* The diff's JSON, inside a page. */
static int diff_html(const struct offline_opts *a, const struct offline_opts *b)
{
	struct offline_opts j = *b;
	char *buf = NULL;
	size_t len = 0;
	int ret;

	j.report.format = FMT_JSON;
	j.out = open_memstream(&buf, &len);
	if (!j.out)
		return -errno;
	ret = offline_diff(a, &j);
	fclose(j.out);
	if (!ret) {
		ret = html_write_diff(b->out, buf, len);
		if (ret)
			pr_err("writing the report: %s", strerror(-ret));
	}
	free(buf);
	return ret;
}

int offline_diff(const struct offline_opts *a, const struct offline_opts *b)
{
	struct side sd[2];
	struct diff_row *rows = NULL;
	size_t n = 0, cap = 0, k = 0;
	FILE *f = b->out;
	bool json = b->report.format == FMT_JSON;
	int ret;

	if (b->report.format == FMT_HTML)
		return diff_html(a, b);
	ret = side_open(a, &sd[0], true);
	if (ret)
		return ret;
	ret = side_open(b, &sd[1], true);
	if (ret) {
		side_close(&sd[0]);
		return ret;
	}
	diff_rows(&sd[0], 0, &rows, &n, &cap);
	diff_rows(&sd[1], 1, &rows, &n, &cap);
	/* one row per key: B's backtrace where both have it */
	qsort(rows, n, sizeof(*rows), row_by_key);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(rows[k - 1].key, rows[i].key)) {
			struct diff_row *r = &rows[k - 1];

			r->count[rows[i].side] += rows[i].count[rows[i].side];
			r->size[rows[i].side] += rows[i].size[rows[i].side];
			if (rows[i].side == 1) {
				r->side = 1;
				r->bt = rows[i].bt;
			}
			free(rows[i].key);
			continue;
		}
		rows[k++] = rows[i];
	}
	n = k;
	qsort(rows, n, sizeof(*rows), row_by_growth);
	if (json) {
		fputs("{\"diff\":{", f);
		side_json(f, "a", a, &sd[0]);
		fputc(',', f);
		side_json(f, "b", b, &sd[1]);
		fputs(",\"backtraces\":[", f);
	} else {
		fprintf(f, "[heaptrace] live heap growth from %s at %.3f ms to %s at %.3f ms: "
			   "%+" PRId64 " bytes, %+" PRId64 " blocks\n",
			a->path, (sd[0].p->now_ns - sd[0].p->start_ns) / 1e6, b->path,
			(sd[1].p->now_ns - sd[1].p->start_ns) / 1e6,
			(int64_t)(sd[1].p->t.sum.live_bytes - sd[0].p->t.sum.live_bytes),
			(int64_t)(sd[1].p->t.sum.live_blocks - sd[0].p->t.sum.live_blocks));
	}
	for (size_t i = 0, shown = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];

		if (r->count[0] == r->count[1] && r->size[0] == r->size[1])
			continue;
		if (json) {
			fprintf(f, "%s{\"bytes_growth\":%" PRId64 ",\"blocks_growth\":%" PRId64
				   ",\"count_a\":%" PRIu64 ",\"size_a\":%" PRIu64
				   ",\"count_b\":%" PRIu64 ",\"size_b\":%" PRIu64 ",\"frames\":[",
				shown ? "," : "", growth(r), (int64_t)(r->count[1] - r->count[0]),
				r->count[0], r->size[0], r->count[1], r->size[1]);
			diff_frames(f, &sd[r->side], r, true);
			fputs("]}", f);
		} else if (!b->report.top || shown < b->report.top) {
			fprintf(f, "\n=== growth #%zu === [%+" PRId64 " bytes, %+" PRId64
				   " blocks] [A: %" PRIu64 " blocks, %" PRIu64 " bytes] [B: %"
				   PRIu64 " blocks, %" PRIu64 " bytes]\n",
				shown + 1, growth(r), (int64_t)(r->count[1] - r->count[0]),
				r->count[0], r->size[0], r->count[1], r->size[1]);
			diff_frames(f, &sd[r->side], r, false);
		}
		shown++;
	}
	if (json)
		fputs("]}}\n", f);
	for (size_t i = 0; i < n; i++)
		free(rows[i].key);
	free(rows);
	side_close(&sd[0]);
	side_close(&sd[1]);
	if (fflush(f) || ferror(f)) {
		pr_err("writing the report: %s", strerror(errno ? errno : EIO));
		return -EIO;
	}
	return 0;
}
