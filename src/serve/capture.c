// SPDX-License-Identifier: GPL-2.0-only
/*
 * The snapshots --serve takes at the tracer's loop's turn, and the mailbox through which the
 * server's thread asks for them (capture.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define PR_DOMAIN "serve"
#include "account/calls.h"
#include "account/ring.h"
#include "patch/image.h"
#include "serve/capture.h"
#include "target/process.h"
#include "trace/snapshot.h"
#include "trace/symcache.h"
#include "unwind/frames.h"
#include "util/log.h"
#include "util/util.h"

static struct {
	pthread_mutex_t mu;
	int fd; /* eventfd: an answer is ready */
	bool pending; /* a question waits for the loop (read without the lock by capture_step) */
	bool ready, closed;
	enum capture_kind kind;
	pid_t pid, default_pid;
	enum capture_status st;
	struct capture_profile *prof;
	uint32_t next_bt; /* where symbolising the copy goes on */
	struct capture_metrics *met;
	/* per traced process: its frames (loop's, read by the server thread between questions) */
	struct sframes **caches;
	unsigned ncaches;
} cap = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

int capture_init(void)
{
	cap.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return cap.fd < 0 ? -errno : cap.fd;
}

void capture_set_default(pid_t pid)
{
	cap.default_pid = pid;
}

/* With cap.mu held: the answer is ready, wake the server thread. */
static void finish(enum capture_status st)
{
	uint64_t one = 1;

	if (st != CAPTURE_OK) {
		capture_free_profile(cap.prof);
		cap.prof = NULL;
		capture_free_metrics(cap.met);
		cap.met = NULL;
	}
	cap.st = st;
	cap.ready = true;
	__atomic_store_n(&cap.pending, false, __ATOMIC_RELEASE);
	if (write(cap.fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_dbg(0, "eventfd: %s", strerror(errno));
}

void capture_ask(enum capture_kind kind, pid_t pid)
{
	pthread_mutex_lock(&cap.mu);
	cap.kind = kind;
	cap.pid = pid;
	cap.ready = false;
	cap.next_bt = 0;
	if (cap.closed)
		finish(CAPTURE_CLOSED);
	else
		__atomic_store_n(&cap.pending, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cap.mu);
}

bool capture_take(enum capture_status *st, struct capture_profile **prof,
		  struct capture_metrics **met)
{
	uint64_t n;
	bool ready;

	if (read(cap.fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		pr_dbg(0, "eventfd: %s", strerror(errno));
	pthread_mutex_lock(&cap.mu);
	ready = cap.ready;
	if (ready) {
		*st = cap.st;
		*prof = cap.prof;
		*met = cap.met;
		cap.prof = NULL;
		cap.met = NULL;
		cap.ready = false;
	}
	pthread_mutex_unlock(&cap.mu);
	return ready;
}

/* The traced process pid (0: the default one, else the oldest), or NULL. */
static struct proc *find_proc(pid_t pid)
{
	struct proc *oldest = NULL;

	for (struct proc *p = procs; p; p = p->next) {
		if (!p->counting)
			continue;
		if (p->pid == (pid ? pid : cap.default_pid))
			return p;
		oldest = p; /* procs has the newest first */
	}
	return pid ? NULL : oldest;
}

/* p's frames, a fresh cache after an execve; the caches of processes gone are freed. */
static struct sframes *cache_of(struct proc *p)
{
	struct sframes *c = NULL;
	unsigned k = 0;

	for (unsigned i = 0; i < cap.ncaches; i++) {
		struct sframes *ci = cap.caches[i];
		struct proc *q = proc_by_pid(ci->pid);

		if (!q || (q == p && ci->epoch != p->table.epoch)) {
			sframes_free(ci);
			free(ci);
			continue;
		}
		cap.caches[k++] = ci;
		if (q == p)
			c = ci;
	}
	cap.ncaches = k;
	if (!c) {
		c = xmalloc(sizeof(*c));
		sframes_init(c, p->pid, p->table.epoch);
		cap.caches = xrealloc(cap.caches, (cap.ncaches + 1) * sizeof(*cap.caches));
		cap.caches[cap.ncaches++] = c;
	}
	return c;
}

static void *memdup(const void *src, size_t len)
{
	void *d = xmalloc(len ? len : 1);

	if (len)
		memcpy(d, src, len);
	return d;
}

/* The modules of p as the profile's mappings. */
static void take_modules(struct proc *p, struct capture_profile *cp)
{
	const struct modlist *ml = &p->mods;

	cp->mods = xcalloc(ml->n ? ml->n : 1, sizeof(*cp->mods));
	for (size_t i = 0; i < ml->n; i++) {
		const struct module *m = &ml->v[i];
		const char *path = sframes_str(cp->frames, m->path);

		cp->mods[cp->nmods++] = (struct pprof_module){
			.path = path, .build_id = sframes_build_id(cp->frames, path),
			.start = m->start, .limit = m->end, .file_offset = m->start - m->base,
		};
	}
}

/* A copy of p's figures now: what the table holds once its rings are read, with the blocks of
 * the reallocs in flight counted live, as a report has it. */
static struct capture_profile *take_profile(struct proc *p, bool symbolise)
{
	struct capture_profile *cp = xcalloc(1, sizeof(*cp));
	const char *allocs[IMAGE_MAX_ALLOCATORS];
	const struct table *t = &p->table;
	struct timespec ts;

	snapshot_drain(p);
	calls_park(p);
	cp->t.bts = memdup(t->bts, t->nbts * sizeof(*t->bts));
	cp->t.nbts = cp->t.bts_cap = t->nbts;
	cp->t.pcs = memdup(t->pcs, t->npcs * sizeof(*t->pcs));
	cp->t.npcs = cp->t.pcs_cap = t->npcs;
	cp->t.sum = t->sum;
	memcpy(cp->t.heap_sum, t->heap_sum, sizeof(t->heap_sum));
	cp->t.base_ns = t->base_ns;
	cp->t.epoch = t->epoch;
	cp->t.peak_epoch = t->peak_epoch;
	cp->t.sample_bytes = t->sample_bytes; /* the figures are estimates: the profile says so */
	calls_unpark(p);
	cp->pid = p->pid;
	cp->command = xstrdup(p->command ? p->command : "?");
	cp->now_ns = now_ns();
	cp->elapsed_ns = cp->now_ns - p->start_ns;
	clock_gettime(CLOCK_REALTIME, &ts);
	cp->wall_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (!p->exited)
		proc_read_statm(p);
	cp->has_statm = p->has_statm;
	memcpy(cp->statm, p->statm, sizeof(cp->statm));
	cp->nallocators = image_allocators(p, allocs, CAPTURE_ALLOCATORS);
	for (unsigned i = 0; i < cp->nallocators; i++)
		cp->allocators[i] = xstrdup(allocs[i]);
	if (symbolise) {
		cp->frames = cache_of(p);
		take_modules(p, cp);
	}
	return cp;
}

/* Symbolise the copy's frames not in its cache yet, until deadline. Return true when done. */
static bool symbolise(struct proc *p, struct capture_profile *cp, uint64_t deadline)
{
	struct snapshot_resolver rc = { p, NULL };
	bool done = true;

	for (uint32_t i = cap.next_bt; i < cp->t.nbts; i++) {
		const struct bt *b = &cp->t.bts[i];

		if ((!b->count && !b->total_count) || table_bt_before_attach(&cp->t, b))
			continue;
		for (uint32_t d = 0; d < b->depth; d++) {
			uint64_t pc = frames_addr(table_bt_pcs(&cp->t, b)[d]);
			struct sym_frame sf = { .line = -1 };

			if (sframes_has(cp->frames, pc, d == 0))
				continue;
			if (!rc.sym)
				rc.sym = symcache_get(p);
			snapshot_resolve_frame(&rc, pc, d, &sf);
			sframes_add(cp->frames, pc, d == 0, &sf);
		}
		if (now_ns() >= deadline && i + 1 < cp->t.nbts) {
			cap.next_bt = i + 1;
			done = false;
			break;
		}
	}
	if (rc.sym)
		symcache_release(p);
	return done;
}

static void take_metrics(void)
{
	struct capture_metrics *m = xcalloc(1, sizeof(*m));
	unsigned n = 0;

	for (struct proc *p = procs; p; p = p->next)
		n += p->counting;
	m->procs = xcalloc(n ? n : 1, sizeof(*m->procs));
	for (struct proc *p = procs; p; p = p->next) {
		struct capture_proc *cp;

		if (!p->counting)
			continue;
		cp = &m->procs[m->nprocs++];
		cp->pid = p->pid;
		cp->command = xstrdup(p->command ? p->command : "?");
		cp->ring_waiting = ring_waiting(p); /* before this drain reads them */
		snapshot_drain(p);
		calls_park(p);
		cp->sum[0] = p->table.sum;
		for (unsigned h = 1; h < HEAP_MAX && h < TABLE_HEAPS; h++)
			cp->sum[h] = p->table.heap_sum[h];
		calls_unpark(p);
		cp->calls_not_seen = p->calls_not_seen; /* after the drain that read them */
		if (!p->exited)
			proc_read_statm(p);
		cp->has_statm = p->has_statm;
		cp->rss = p->statm[1];
	}
	ring_stats(&m->ring_records, &m->ring_waits, &m->ring_backlog_max);
	cap.met = m;
}

/* With cap.mu held: go on with the question asked. */
static void answer(uint64_t now)
{
	struct proc *p;

	if (cap.kind == CAPTURE_METRICS) {
		take_metrics();
		finish(CAPTURE_OK);
		return;
	}
	p = find_proc(cap.pid);
	if (!p) {
		finish(CAPTURE_NO_PROCESS);
		return;
	}
	if (!cap.prof) {
		cap.prof = take_profile(p, cap.kind == CAPTURE_PROFILE);
		if (cap.kind == CAPTURE_PROFILE_FIGURES) {
			finish(CAPTURE_OK);
			return;
		}
	}
	if (p->pid != cap.prof->pid || p->table.epoch != cap.prof->t.epoch)
		finish(CAPTURE_CHANGED); /* its frames are of other modules now */
	else if (symbolise(p, cap.prof, now + CAPTURE_SLICE_NS))
		finish(CAPTURE_OK);
}

void capture_step(uint64_t now, uint64_t *until)
{
	uint64_t next = now + CAPTURE_TICK_NS;

	if (__atomic_load_n(&cap.pending, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&cap.mu);
		if (cap.pending)
			answer(now);
		pthread_mutex_unlock(&cap.mu);
		if (__atomic_load_n(&cap.pending, __ATOMIC_ACQUIRE))
			next = now + 1000000; /* symbolising goes on at the next turn */
	}
	/* the loop sleeps until a tracee event or *until: come back to look for a question */
	if (!*until || *until > next)
		*until = next;
}

void capture_close(void)
{
	pthread_mutex_lock(&cap.mu);
	cap.closed = true;
	if (cap.pending)
		finish(CAPTURE_CLOSED);
	pthread_mutex_unlock(&cap.mu);
}

void capture_fini(void)
{
	capture_free_profile(cap.prof);
	capture_free_metrics(cap.met);
	cap.prof = NULL;
	cap.met = NULL;
	for (unsigned i = 0; i < cap.ncaches; i++) {
		sframes_free(cap.caches[i]);
		free(cap.caches[i]);
	}
	free(cap.caches);
	cap.caches = NULL;
	cap.ncaches = 0;
	if (cap.fd >= 0)
		close(cap.fd);
	cap.fd = -1;
}

void capture_free_profile(struct capture_profile *p)
{
	if (!p)
		return;
	free(p->t.bts);
	free(p->t.pcs);
	free(p->command);
	for (unsigned i = 0; i < p->nallocators; i++)
		free(p->allocators[i]);
	free(p->mods);
	free(p);
}

void capture_free_metrics(struct capture_metrics *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < m->nprocs; i++)
		free(m->procs[i].command);
	free(m->procs);
	free(m);
}
