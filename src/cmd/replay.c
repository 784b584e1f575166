// SPDX-License-Identifier: GPL-2.0-only
/*
 * Replaying a --record log (replay.h). The reader trusts nothing in the file: every varint,
 * index, length and depth is checked, and a log that breaks a rule is refused with one line
 * naming the byte where it did. Events are replayed through table.c exactly as the tracer
 * applied them, so every figure of the live report comes out the same.
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
#include "cmd/replay.h"
#include "eventlog/logread.h"
#include "heap/lifetime.h"
#include "output/calltrace.h"
#include "output/heaptrack.h"
#include "output/html.h"
#include "symbols/perfmap.h"
#include "util/log.h"
#include "util/progress.h"
#include "util/util.h"

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
	perfmap_free(rp->jit);
	rp->jit = NULL;
}

/* J: a return address in JIT code and its name (version 5). */
static bool read_jit(struct logread *r, struct replay *rp)
{
	uint64_t pc, offset;
	char name[RECORD_MAX_STRING + 1];

	if (r->version < 5)
		return logread_corrupt(r, "an unknown record type");
	if (!logread_u(r, &pc) || !logread_u(r, &offset) ||
	    !logread_bytes(r, name, sizeof(name), NULL))
		return false;
	if (!rp->jit)
		rp->jit = perfmap_new(NULL, 0, 0);
	perfmap_note(rp->jit, pc, offset, name);
	return true;
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
		table_note_free(&rp->t, arg);
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

	for (uint64_t i = 0; i < t->live.cap; i++)
		if (t->live.slots[i].ptr)
			htk_free(rp->htk, ms, t->live.slots[i].size, t->live.slots[i].bt);
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
	for (uint64_t i = 0; i < t->live.cap; i++) {
		const struct block *b = &t->live.slots[i];

		if (b->ptr)
			htk_alloc(c->htk, 0, b->size, b->bt, table_bt_pcs(t, &t->bts[b->bt]),
				  t->bts[b->bt].depth);
	}
}

static void add_pyframe(struct replay *rp, const char *function, const char *file, int line)
{
	if (rp->npy == rp->py_cap) {
		rp->py_cap = rp->py_cap ? 2 * rp->py_cap : 64;
		rp->py = xrealloc(rp->py, rp->py_cap * sizeof(*rp->py));
	}
	rp->py[rp->npy++] = (struct replay_pyframe){ xstrdup(function), xstrdup(file), line };
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
	for (size_t i = 0; pp->jit && i < perfmap_named(pp->jit); i++) {
		uint64_t pc, offset;
		const char *name = perfmap_named_at(pp->jit, i, &pc, &offset);

		if (!c->jit)
			c->jit = perfmap_new(NULL, 0, 0);
		perfmap_note(c->jit, pc, offset, name);
	}
	for (uint32_t i = 0; i < pp->npy; i++)
		add_pyframe(c, pp->py[i].function, pp->py[i].file, pp->py[i].line);
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

/* Y: the process's next Python frame. */
static bool read_pyframe(struct logread *r, struct replay *rp)
{
	char function[RECORD_MAX_STRING + 1], file[RECORD_MAX_STRING + 1];
	int64_t line;

	if (!logread_bytes(r, function, sizeof(function), NULL) ||
	    !logread_bytes(r, file, sizeof(file), NULL) || !logread_s(r, &line))
		return false;
	if (rp->npy == UINT32_MAX || line < INT32_MIN || line > INT32_MAX)
		return logread_corrupt(r, "a Python frame out of range");
	add_pyframe(rp, function, file, (int)line);
	return true;
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
	case 'Y':
		return read_pyframe(r, rp);
	case 'B':
		return read_backtrace(r, rp);
	case 'J':
		return read_jit(r, rp);
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
		table_note_alloc(&rp->t, ptr);
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
		table_note_free(&rp->t, ptr);
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
	case 'L':
		if (r->version < 4 || !logread_u(r, &tid) || !logread_u(r, &ptr))
			return r->version < 4 ? logread_corrupt(r, "an unknown record type") : false;
		table_heap_sum(&rp->t, table_key_heap(ptr))->library_frees++;
		return true;
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


/* Replay the log of o into a new replay, up to the moment rp_at says. Return it, or NULL
 * (said). */
struct replay *replay_file(const struct offline_opts *o, enum offline_at at, uint64_t at_ns,
			   uint64_t at_peak, struct htk *htk, struct lifetime *lt,
			   struct calltrace *ct)
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

void replay_free(struct replay *rp)
{
	for (size_t i = 1; i < rp->nprocs; i++)
		replay_free(rp->procs[i]);
	if (rp->nprocs)
		free(rp->procs);
	table_destroy(&rp->t);
	modlist_clear(&rp->mods);
	perfmap_free(rp->jit);
	free(rp->ids);
	free(rp->idlen);
	free(rp->held);
	for (unsigned i = 0; i < rp->nallocators; i++)
		free(rp->allocators[i]);
	for (unsigned h = 0; h < HEAP_MAX; h++)
		free(rp->heap_names[h]);
	for (uint32_t i = 0; i < rp->npy; i++) {
		free(rp->py[i].function);
		free(rp->py[i].file);
	}
	free(rp->py);
	free(rp);
}
