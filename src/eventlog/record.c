// SPDX-License-Identifier: GPL-2.0-only
/*
 * The event log (format in record.h). The tracer's thread encodes records into a chunk; a
 * writer thread compresses full chunks with libzstd and writes them, so the traced program
 * waits for no compression and no disk. Backtraces are the table's own (its indices are dense
 * and never reused until an exec), so the log keeps no second copy of them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define PR_DOMAIN "record"
#include "eventlog/record.h"
#include "heap/hooks.h"
#include "symbols/perfmap.h"
#include "symbols/symbols.h"
#include "target/process.h"
#include "unwind/frames.h"
#include "unwind/python.h"
#include "util/log.h"
#include "util/util.h"

#define CHUNK_SIZE (64u << 10)
#define RECORD_QUEUE 64 /* chunks waiting for the writer: 4 MiB at most */
#define MAX_RECORD (16 + RECORD_MAX_DEPTH * 10 + 2 * RECORD_MAX_STRING + 64)
#define FLUSH_SECS 1 /* a quiet program's events still leave within about a second */

bool record_on;
static const struct record_calls *trace; /* --trace-calls */
static void *trace_ctx;

static struct recorder {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more, room;
	uint8_t *queue[RECORD_QUEUE];
	size_t qlen[RECORD_QUEUE];
	unsigned qhead, qn;
	bool closing;
	int err; /* first write error (-errno) */
	atomic_bool flush_wanted; /* set by the writer: hand over the chunk at the next event */
	/* the tracer's side */
	uint8_t *buf;
	size_t len;
	/* the processes in the log, by index: the first one to allocate, then the children
	 * record_fork announced */
	struct recproc {
		const struct proc *p;
		pid_t pid;
		bool ended;
		uint32_t epoch; /* p->table.epoch the indices below belong to */
		uint32_t nbts; /* backtraces written */
		size_t nmods; /* modules written */
		size_t njit; /* names of JIT code written (perfmap_named) */
		uint32_t npy; /* Python frames written (unwind/python.h) */
	} *procs;
	size_t nprocs, cur; /* cur: the process the records are of now */
	uint64_t last_ns;
	unsigned depth; /* --depth, for S records */
	unsigned heaps_put; /* bit h: heap h's H record is in the log */
} rec = { .fd = -1 };

static int write_all(int fd, const void *data, size_t len)
{
	const uint8_t *b = data;

	while (len) {
		ssize_t n = write(fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		b += n;
		len -= n;
	}
	return 0;
}

/* Compress in[0..len) with mode (continue, flush or end) and write what comes out. */
static void squeeze(ZSTD_CCtx *z, const uint8_t *in, size_t len, ZSTD_EndDirective mode,
		    uint8_t *out, size_t out_cap)
{
	ZSTD_inBuffer ib = { in, len, 0 };
	size_t left;

	do {
		ZSTD_outBuffer ob = { out, out_cap, 0 };

		left = ZSTD_compressStream2(z, &ob, &ib, mode);
		if (ZSTD_isError(left)) {
			if (!rec.err)
				rec.err = -EIO;
			return;
		}
		if (ob.pos && !rec.err)
			rec.err = write_all(rec.fd, out, ob.pos);
	} while (mode == ZSTD_e_continue ? ib.pos < ib.size : left != 0);
}

static void *writer(void *arg)
{
	ZSTD_CCtx *z = ZSTD_createCCtx();
	size_t out_cap = ZSTD_CStreamOutSize();
	uint8_t *out = xmalloc(out_cap);
	bool dirty = false; /* compressed data not flushed yet */

	(void)arg;
	/* a checksum per frame: a damaged log is refused, never misread */
	ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
	pthread_mutex_lock(&rec.lock);
	for (;;) {
		uint8_t *chunk;
		size_t len;

		while (!rec.qn && !rec.closing) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += FLUSH_SECS;
			if (pthread_cond_timedwait(&rec.more, &rec.lock, &ts) == ETIMEDOUT)
				atomic_store(&rec.flush_wanted, true);
		}
		if (!rec.qn)
			break; /* closing, all written */
		chunk = rec.queue[rec.qhead];
		len = rec.qlen[rec.qhead];
		pthread_mutex_unlock(&rec.lock);
		squeeze(z, chunk, len, ZSTD_e_continue, out, out_cap);
		free(chunk);
		dirty = true;
		pthread_mutex_lock(&rec.lock);
		rec.qhead = (rec.qhead + 1) % RECORD_QUEUE;
		rec.qn--;
		pthread_cond_signal(&rec.room);
		if (!rec.qn && !rec.closing && dirty) {
			/* nothing waits: let what we have reach the file or the pipe */
			pthread_mutex_unlock(&rec.lock);
			squeeze(z, NULL, 0, ZSTD_e_flush, out, out_cap);
			dirty = false;
			pthread_mutex_lock(&rec.lock);
		}
	}
	pthread_mutex_unlock(&rec.lock);
	squeeze(z, NULL, 0, ZSTD_e_end, out, out_cap);
	ZSTD_freeCCtx(z);
	free(out);
	return NULL;
}

/* Give the current chunk to the writer (waiting while RECORD_QUEUE chunks wait already). */
static void hand_over(void)
{
	if (!rec.len)
		return;
	pthread_mutex_lock(&rec.lock);
	while (rec.qn == RECORD_QUEUE)
		pthread_cond_wait(&rec.room, &rec.lock);
	rec.queue[(rec.qhead + rec.qn) % RECORD_QUEUE] = rec.buf;
	rec.qlen[(rec.qhead + rec.qn) % RECORD_QUEUE] = rec.len;
	rec.qn++;
	pthread_cond_signal(&rec.more);
	pthread_mutex_unlock(&rec.lock);
	rec.buf = xmalloc(CHUNK_SIZE);
	rec.len = 0;
}

/* Room for one record of any kind. */
static void room(void)
{
	if (rec.len + MAX_RECORD > CHUNK_SIZE || atomic_exchange(&rec.flush_wanted, false))
		hand_over();
}

static void put_u(uint64_t v)
{
	while (v >= 0x80) {
		rec.buf[rec.len++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	rec.buf[rec.len++] = (uint8_t)v;
}

static void put_s(int64_t v)
{
	put_u((uint64_t)v << 1 ^ (uint64_t)(v >> 63));
}

static void put_bytes(const void *b, size_t len)
{
	if (len > RECORD_MAX_STRING)
		len = RECORD_MAX_STRING;
	put_u(len);
	memcpy(rec.buf + rec.len, b, len);
	rec.len += len;
}

static void put_str(const char *s)
{
	put_bytes(s ? s : "", s ? strlen(s) : 0);
}

static void put_time(uint64_t ns)
{
	put_s((int64_t)(ns - rec.last_ns));
	rec.last_ns = ns;
}

int record_open(const char *path, unsigned depth)
{
	uint8_t head[RECORD_HEADER_SIZE] = RECORD_MAGIC;
	sigset_t all, old;
	int ret;

	if (!strcmp(path, "-")) {
		/* a copy of stdout the traced program does not inherit */
		rec.fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	} else {
		rec.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (rec.fd < 0)
		return -errno;
	head[8] = RECORD_VERSION; /* little-endian u32; the flags stay 0 */
	ret = write_all(rec.fd, head, sizeof(head));
	if (ret) {
		close(rec.fd);
		rec.fd = -1;
		return ret;
	}
	pthread_mutex_init(&rec.lock, NULL);
	pthread_cond_init(&rec.more, NULL);
	pthread_cond_init(&rec.room, NULL);
	rec.buf = xmalloc(CHUNK_SIZE);
	/* heaptrace's signals stay with the threads that take them (events.c) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&rec.thread, NULL, writer, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		close(rec.fd);
		rec.fd = -1;
		return ret;
	}
	rec.depth = depth;
	record_on = true;
	return 0;
}

/* H records: the heaps besides malloc's, named once for the whole log (all: again, after an
 * S record); a heap named while tracing (CPython's, hook_enable_pymalloc) before its first
 * backtrace. */
static void put_heaps(bool all)
{
	for (unsigned h = HEAP_MALLOC + 1; h < HEAP_MAX; h++) {
		if (!hook_heap_name(h) || (!all && (rec.heaps_put & 1u << h)))
			continue;
		rec.heaps_put |= 1u << h;
		room();
		rec.buf[rec.len++] = 'H';
		put_u(h);
		put_str(hook_heap_name(h));
	}
}

static void put_start(const struct proc *p)
{
	room();
	rec.buf[rec.len++] = 'S';
	put_u(p ? (uint64_t)p->pid : 0);
	put_u(p ? p->start_ns : 0);
	put_u(arch->word_size);
	put_u(arch->elf_machine);
	/* --depth (0 in older logs): informative, the B records carry their own, and report
	 * marks the backtraces it may have cut */
	put_u(rec.depth);
	put_str(p && p->command ? p->command : "?");
	rec.last_ns = p ? p->start_ns : 0;
	put_heaps(true);
}

static void put_modules(struct recproc *rp, const struct proc *p)
{
	for (; rp->nmods < p->mods.n; rp->nmods++) {
		const struct module *m = &p->mods.v[rp->nmods];
		uint8_t id[64];
		int idlen = sym_build_id(m->path, id, sizeof(id));

		room();
		rec.buf[rec.len++] = 'M';
		put_u(m->start);
		put_u(m->end);
		put_u(m->base);
		put_u(m->bias_known);
		put_u(m->bias);
		put_bytes(id, idlen > 0 ? (size_t)idlen : 0);
		put_str(m->path);
	}
}

/* J records: the names the perf map gave return addresses since the last ones. */
static void put_jit(struct recproc *rp, const struct proc *p)
{
	for (; p->jit && rp->njit < perfmap_named(p->jit); rp->njit++) {
		uint64_t pc, offset;
		const char *name = perfmap_named_at(p->jit, rp->njit, &pc, &offset);

		room();
		rec.buf[rec.len++] = 'J';
		put_u(pc);
		put_u(offset);
		put_str(name);
	}
}

/* The Y records of the Python frames of pcs[0..depth) not written yet, and those before them:
 * the n-th Y record of a process is its Python frame n. */
static void put_python(struct recproc *rp, const struct proc *p, const uint64_t *pcs,
		       uint32_t depth)
{
	for (uint32_t d = 0; d < depth; d++) {
		uint64_t a = frames_addr(pcs[d]);

		if (frames_how_of(pcs[d]) != FRAMES_PYTHON || !frames_is_python(a))
			continue;
		for (; rp->npy <= (uint32_t)a; rp->npy++) {
			struct sym_frame sf;

			python_resolve(p, FRAMES_PY_TAG | rp->npy, &sf);
			room();
			rec.buf[rec.len++] = 'Y';
			put_str(sf.function ? sf.function : "");
			put_str(sf.file ? sf.file : "");
			put_s(sf.line);
		}
	}
}

static void put_backtraces(struct recproc *rp, const struct proc *p, uint32_t upto)
{
	const struct table *t = &p->table;

	put_heaps(false);
	put_modules(rp, p);
	put_jit(rp, p); /* named as they were unwound */
	for (; rp->nbts <= upto; rp->nbts++) {
		const struct bt *b = &t->bts[rp->nbts];
		const uint64_t *pcs = table_bt_pcs(t, b);
		uint32_t depth = b->depth < RECORD_MAX_DEPTH ? b->depth : RECORD_MAX_DEPTH;
		unsigned hook = 0;
		uint64_t prev = 0;

		for (int h = 0; h < HOOK_COUNT && !hook; h++) /* the first, as the live report */
			if (p->hook_addr[h] && p->hook_addr[h] == arch->code_addr(pcs[0]))
				hook = h + 1;
		put_python(rp, p, pcs, depth);
		room();
		rec.buf[rec.len++] = 'B';
		put_u(hook);
		put_u(depth);
		for (uint32_t d = 0; d < depth; d++) {
			put_s((int64_t)(pcs[d] - prev));
			prev = pcs[d];
		}
	}
}

void record_trace_calls(const struct record_calls *calls, void *ctx)
{
	trace = calls;
	trace_ctx = ctx;
	record_on = true;
}

void record_trace_flush(void)
{
	if (trace)
		trace->flush(trace_ctx);
}

/* The allocation function frame 0 of p's backtrace bt is (hooks.h), -1 if none. */
static int bt_hook(const struct proc *p, uint32_t bt)
{
	uint64_t pc = arch->code_addr(table_bt_pcs(&p->table, &p->table.bts[bt])[0]);

	for (int h = 0; h < HOOK_COUNT; h++)
		if (p->hook_addr[h] && p->hook_addr[h] == pc)
			return h;
	return -1;
}

static uint64_t since_start(const struct proc *p, uint64_t ns)
{
	return ns > p->start_ns ? ns - p->start_ns : 0;
}

static struct recproc *add_proc(const struct proc *p)
{
	struct recproc *rp;

	rec.procs = xrealloc(rec.procs, (rec.nprocs + 1) * sizeof(*rec.procs));
	rp = &rec.procs[rec.nprocs++];
	*rp = (struct recproc){ .p = p, .pid = p->pid, .epoch = p->table.epoch };
	return rp;
}

/* The records that follow are of process i. */
static void switch_to(size_t i)
{
	if (i == rec.cur)
		return;
	room();
	rec.buf[rec.len++] = 'W';
	put_u(i);
	rec.cur = i;
}

/*
 * p's entry in the log, the records from here on being p's; NULL if p is not in it (any more).
 * The first process that allocates starts the log; the others are in it when record_fork
 * announced them.
 */
static struct recproc *follow(const struct proc *p)
{
	struct recproc *rp = NULL;

	for (size_t i = rec.nprocs; i-- > 0 && !rp;)
		if (rec.procs[i].p == p && rec.procs[i].pid == p->pid)
			rp = &rec.procs[i];
	if (!rp && rec.nprocs)
		return NULL;
	if (!rp) {
		rp = add_proc(p);
		put_start(p);
	}
	if (rp->ended)
		return NULL;
	switch_to((size_t)(rp - rec.procs));
	if (rp->epoch != p->table.epoch) {
		/* execve: a new image, a new heap, new backtrace indices */
		room();
		rec.buf[rec.len++] = 'X';
		put_u(p->start_ns); /* the times of the new image count from its exec */
		put_str(p->command);
		rp->epoch = p->table.epoch;
		rp->nbts = 0;
		rp->nmods = 0;
		rp->njit = 0;
	}
	return rp;
}

void record_fork(const struct proc *child, const struct proc *parent)
{
	struct recproc *pp, *cp;
	size_t parent_idx;

	if (rec.fd < 0 || !(pp = follow(parent)))
		return;
	parent_idx = (size_t)(pp - rec.procs);
	cp = add_proc(child); /* pp may have moved */
	pp = &rec.procs[parent_idx];
	/* the child's table, modules and backtraces are copies of the parent's (process.c) */
	cp->nbts = pp->nbts;
	cp->nmods = pp->nmods;
	cp->npy = pp->npy; /* and its Python frames (python_fork) */
	room();
	rec.buf[rec.len++] = 'N';
	put_u(parent_idx);
	put_u((uint64_t)child->pid);
	put_u(child->start_ns);
	put_str(child->command);
}

void record_alloc_slow(struct proc *p, pid_t tid, uint64_t ptr, uint64_t size, uint32_t bt,
		       uint64_t ns)
{
	struct recproc *rp;

	/* --trace-calls prints the malloc heap's calls, as it did before the log had others */
	if (trace && ptr && !table_key_heap(ptr))
		trace->alloc(trace_ctx, p->pid, (uint32_t)tid, since_start(p, ns), bt_hook(p, bt),
			     size, ptr);
	if (rec.fd < 0 || !ptr || !(rp = follow(p)))
		return;
	if (bt >= rp->nbts || p->mods.n > rp->nmods)
		put_backtraces(rp, p, bt);
	room();
	rec.buf[rec.len++] = 'A';
	put_time(ns);
	put_u((uint64_t)tid);
	put_u(bt);
	put_u(size);
	put_u(ptr);
}

void record_seeded(struct proc *p)
{
	const struct table *t = &p->table;
	struct recproc *rp;

	if (rec.fd < 0 || !(rp = follow(p)))
		return;
	if (t->nbts)
		put_backtraces(rp, p, t->nbts - 1);
	for (uint64_t s = 0; s < t->live.cap; s++) {
		const struct block *blk = &t->live.slots[s];

		if (!blk->ptr)
			continue;
		room();
		rec.buf[rec.len++] = 'I';
		put_time(table_block_ns(t, blk));
		put_u(blk->bt);
		put_u(blk->size);
		put_u(blk->ptr);
	}
}

void record_free_slow(struct proc *p, pid_t tid, uint64_t ptr, uint64_t ns)
{
	if (trace && !table_key_heap(ptr))
		trace->free(trace_ctx, p->pid, (uint32_t)tid, since_start(p, ns), ptr);
	if (rec.fd < 0 || !follow(p))
		return;
	room();
	rec.buf[rec.len++] = 'F';
	put_time(ns);
	put_u((uint64_t)tid);
	put_u(ptr);
}

void record_library_free_slow(struct proc *p, pid_t tid, uint64_t ptr)
{
	if (rec.fd < 0 || !follow(p))
		return;
	room();
	rec.buf[rec.len++] = 'L';
	put_u((uint64_t)tid);
	put_u(ptr);
}

/* A realloc's step (record_realloc_slow's what and arg) to --trace-calls. */
static void trace_realloc(struct proc *p, pid_t tid, char what, uint64_t arg, uint64_t ns)
{
	if (what == 'T')
		trace->take(trace_ctx, p->pid, (uint32_t)tid, arg);
	else if (what == 'P')
		trace->put_back(trace_ctx, p->pid, (uint32_t)tid, since_start(p, ns));
	else
		trace->release(trace_ctx, p->pid, (uint32_t)tid, since_start(p, ns), arg != 0);
}

void record_realloc_slow(struct proc *p, pid_t tid, char what, unsigned heap, uint64_t arg,
			 uint64_t ns)
{
	if (what == 'P') /* a failed call: its time is not in the log */
		ns = now_ns();
	if (trace && !heap)
		trace_realloc(p, tid, what, arg, ns);
	if (rec.fd < 0 || !follow(p))
		return;
	room();
	rec.buf[rec.len++] = what;
	if (what != 'P')
		put_time(ns);
	put_u((uint64_t)tid);
	if (what == 'R') /* a malloc heap's R is as version 2 wrote it */
		put_u(arg | (uint64_t)heap << 1);
	else if (what != 'P')
		put_u(arg);
}

void record_range_slow(struct proc *p, pid_t tid, unsigned heap, uint64_t lo, uint64_t hi,
		       uint64_t ns)
{
	if (rec.fd < 0 || !follow(p))
		return;
	room();
	rec.buf[rec.len++] = 'U';
	put_time(ns);
	put_u((uint64_t)tid);
	put_u(heap);
	put_u(lo);
	put_u(hi);
}

static void put_end(struct recproc *rp, const struct proc *p, const struct record_ending *end)
{
	unsigned n;

	if (p)
		put_modules(rp, p); /* libraries loaded after the last new backtrace */
	room();
	rec.buf[rec.len++] = 'E';
	put_time(end ? end->now_ns : rec.last_ns);
	put_u(end && end->exited);
	put_s(end ? end->exit_status : 0);
	put_u(end && end->has_statm);
	put_u(end ? end->statm_vss : 0);
	put_u(end ? end->statm_rss : 0);
	put_u(end ? end->statm_shared : 0);
	put_str(end ? end->command : "?");
	n = end && end->allocators ? end->nallocators : 0;
	n = n < RECORD_MAX_ALLOCATORS ? n : RECORD_MAX_ALLOCATORS;
	put_u(n);
	for (unsigned i = 0; i < n; i++) /* 16 names of at most 255 bytes: MAX_RECORD holds them */
		put_bytes(end->allocators[i], strnlen(end->allocators[i], 255));
	if (rp)
		rp->ended = true;
}

void record_end(struct proc *p, const struct record_ending *end)
{
	struct recproc *rp;

	record_trace_flush();
	if (rec.fd < 0 || !(rp = follow(p)))
		return;
	put_jit(rp, p); /* and those the report named */
	put_end(rp, p, end);
}

int record_close(void)
{
	int ret;

	record_trace_flush();
	if (rec.fd < 0)
		return 0;
	/* nothing was traced (or tracing could not start): still a valid, empty log */
	if (!rec.nprocs) {
		put_start(NULL);
		put_end(NULL, NULL, NULL);
	}
	for (size_t i = 0; i < rec.nprocs; i++) { /* every process ends in the log */
		if (rec.procs[i].ended)
			continue;
		switch_to(i);
		put_end(&rec.procs[i], NULL, NULL);
	}
	hand_over();
	pthread_mutex_lock(&rec.lock);
	rec.closing = true;
	pthread_cond_signal(&rec.more);
	pthread_mutex_unlock(&rec.lock);
	pthread_join(rec.thread, NULL);
	record_on = trace != NULL;
	free(rec.buf);
	rec.buf = NULL;
	free(rec.procs);
	rec.procs = NULL;
	ret = rec.err;
	if (close(rec.fd) && !ret)
		ret = -errno;
	rec.fd = -1;
	return ret;
}
