// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entry stubs (stubs.h), the threads: their key (the thread pointer) and stack top in the
 * table every area's data page holds (STUB_D_TOPS), which the stub code reads to know how much
 * stack to copy; and the stand-ins that take a gone thread's records not read yet.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "stubs"
#include "patch/stubs.h"
#include "stub_arch.h"
#include "target/process.h"
#include "target/remote.h"
#include "util/log.h"
#include "util/maps.h"
#include "util/util.h"

static unsigned tops_hash(uint64_t key)
{
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 57);
}

/* The table's top word for a stack [lo, top): top, and in its low 12 bits the pages below top
 * the stub code may copy from (stub_layout.h, STUB_TOPS_PAGES). */
static uint64_t tops_word(uint64_t top, uint64_t lo)
{
	uint64_t pages = top > lo ? (top - lo) >> 12 : 0;

	return (top & ~4095ull) | (pages > STUB_TOPS_PAGES ? STUB_TOPS_PAGES : pages);
}

/* Write { key, top } for t into the process's table (top first: a stub that matches the
 * key must read its top). */
static bool tops_put_in(pid_t tid, uint64_t area, uint64_t key, uint64_t word)
{
	uint64_t base = area + 4096 + STUB_D_TOPS;
	uint8_t tab[(STUB_TOPS_MASK + 1) * 16];
	int free_slot = -1;

	if (remote_read(tid, base, tab, sizeof(tab)) != (ssize_t)sizeof(tab))
		return true; /* the process is going: nothing to tell */
	for (unsigned i = 0; i < STUB_TOPS_PROBE; i++) {
		unsigned k = (tops_hash(key) + i) & STUB_TOPS_MASK;
		uint64_t kv;

		memcpy(&kv, tab + 16 * k, 8);
		if (kv == key) {
			free_slot = (int)k;
			break;
		}
		if (free_slot < 0 && (kv == 0 || kv == 1))
			free_slot = (int)k; /* empty, or a thread that exited */
		if (kv == 0)
			break;
	}
	if (free_slot < 0)
		return false; /* its copies end at the page of their sp */
	remote_write_word(tid, base + 16 * free_slot + 8, 8, word);
	remote_write_word(tid, base + 16 * free_slot, 8, key);
	return true;
}

/*
 * Every area's data page has the table (each area's code reads its own). The table is fixed
 * (it fills the data page, whose offsets the stub code reaches with immediates): a thread whose
 * key finds no free slot among STUB_TOPS_PROBE gets copies that end at the page of its sp, which
 * cuts its deep backtraces. Said once per process, with what it costs.
 */
void stubs_tops_put(struct proc *p, pid_t tid, uint64_t key, uint64_t top, uint64_t lo)
{
	struct stubs *s = p->stubs;
	bool put = true;

	for (unsigned i = 0; i < s->nareas; i++)
		put &= tops_put_in(tid, s->area[i], key, tops_word(top, lo));
	if (!put && !s->tops_full_told) {
		s->tops_full_told = true;
		pr_warn("process %d: a thread found no room in the stubs' thread table (%u slots, "
			"%u looked at per thread): the backtraces of its allocations may stop "
			"within a page of stack (--mode=breakpoint has no such limit)",
			p->pid, STUB_TOPS_MASK + 1, STUB_TOPS_PROBE);
	}
}

/*
 * The end of the mapping that holds sp, in thread tid's process: the top of that thread's
 * stack (*lo: the mapping's start). *tp is set to 0 unless a mapping holds its thread control block: mips64's kernel keeps
 * a thread pointer across an exec (x86_64 and aarch64 clear it), so until the C library sets its
 * own, a launched program's main thread still has the one of the program before the exec
 * (heaptrace's), which points nowhere in the new image.
 */
static uint64_t stack_top(pid_t tid, uint64_t sp, uint64_t *tp, uint64_t *lo)
{
	struct mapping *maps = NULL;
	ssize_t n = maps_read(tid, &maps);
	uint64_t top = 0, tcb = arch->tls_window(*tp, 0);
	bool tp_mapped = false;

	for (ssize_t i = 0; i < n; i++) {
		if (sp >= maps[i].start && sp < maps[i].end) {
			top = maps[i].end;
			*lo = maps[i].start;
		}
		tp_mapped |= tcb >= maps[i].start && tcb < maps[i].end;
	}
	free(maps);
	if (!tp_mapped)
		*tp = 0;
	return top;
}

struct thread *stubs_standin(struct stubs *s, struct thread *g)
{
	struct stubs_reader *rd = &s->rd;

	rd->phantom = xrealloc(rd->phantom, (rd->nphantom + 1) * sizeof(*rd->phantom));
	rd->phantom[rd->nphantom++] = g;
	return g;
}

void stubs_thread(struct thread *t)
{
	struct arch_regs regs;

	if (!t->p || !t->p->stubs || arch_get_regs(t->tid, &regs) ||
	    arch_get_tls_reg(t->tid, &regs))
		return;
	t->tls = arch->get_tls(&regs); /* 0 before the C library set it up */
	/* its maps through itself: proc_mem_pid may name a main thread that has exited */
	t->stack_top = stack_top(t->tid, arch->get_sp(&regs), &t->tls, &t->stack_lo);
	t->tls_pending = !t->tls;
	/* its records all come after this: it has not run since it was made */
	t->key_from = stubs_head(t->p->stubs);
	t->key_until = UINT64_MAX;
	t->p->stubs->threads_gen++; /* the reader's key table is rebuilt */
	if (!t->tls)
		return;
	if (t->stack_top)
		stubs_tops_put(t->p, t->tid, t->tls, t->stack_top, t->stack_lo);
}

struct mem_ctx {
	uint64_t at;
	uint8_t *buf;
	size_t len;
	pid_t tid;
};

static void mem_cb(struct thread *t, void *arg)
{
	struct mem_ctx *c = arg;

	if (!c->tid && remote_read(t->tid, c->at, c->buf, c->len) == (ssize_t)c->len)
		c->tid = t->tid;
}

/*
 * Read len bytes at at in p into buf through a thread that can: proc_mem_pid's, else any of
 * p's. A launched program's main thread that called pthread_exit stays a zombie with no memory,
 * and heaptrace hears of its end only when the whole process ends, so proc_mem_pid may still
 * name it. Return the thread that read, or 0.
 */
static pid_t read_via_any(struct proc *p, uint64_t at, uint8_t *buf, size_t len)
{
	struct mem_ctx c = { at, buf, len, 0 };
	pid_t pid = proc_mem_pid(p);

	if (remote_read(pid, at, buf, len) == (ssize_t)len)
		return pid;
	proc_for_each_thread(p, mem_cb, &c);
	return c.tid;
}

/* Free t's slot in the table of the area at base (a newer thread with its key, registered
 * since, keeps its own: then t's key_until is set). t is out of the thread hash already: it is
 * read and written through another thread of its process. */
static void tops_free_in(struct thread *t, uint64_t area)
{
	uint64_t base = area + 4096 + STUB_D_TOPS, tomb = 1;
	uint8_t tab[(STUB_TOPS_MASK + 1) * 16];
	pid_t via = read_via_any(t->p, base, tab, sizeof(tab));

	if (!via)
		return;
	for (unsigned i = 0; i < STUB_TOPS_PROBE; i++) {
		unsigned k = (tops_hash(t->tls) + i) & STUB_TOPS_MASK;
		uint64_t kv;

		memcpy(&kv, tab + 16 * k, 8);
		if (kv == t->tls) {
			remote_write_data(via, base + 16 * k, &tomb, 8);
			return;
		}
		if (!kv)
			return;
	}
}

void stubs_thread_gone(struct thread *t)
{
	struct stubs *s = t->p ? t->p->stubs : NULL;

	if (!s)
		return;
	s->threads_gen++; /* the reader's key table may hold t: rebuilt before its next look */
	if (!s->ctl)
		return;
	if (t->tls && s->rd.tail != stubs_head(s)) {
		/* records of it may still come: a stand-in takes its calls in flight */
		struct thread *g = xcalloc(1, sizeof(*g));

		*g = *t;
		g->hnext = NULL;
		g->key_until = stubs_head(s);
		t->frames = NULL;
		t->nframes = t->cap = 0;
		t->late = NULL; /* and its held frees (account/acct.h), counted when it is buried */
		t->nlate = t->late_cap = t->late_parked = 0;
		stubs_standin(s, g);
	}
	if (!t->tls || t->p->exited || t->key_until != UINT64_MAX)
		return;
	for (unsigned i = 0; i < s->nareas; i++)
		tops_free_in(t, s->area[i]);
}
