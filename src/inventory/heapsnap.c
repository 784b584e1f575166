// SPDX-License-Identifier: GPL-2.0-only
/*
 * The snapshot behind the pre-attach inventory: while every thread is stopped, copy what the
 * allocator's bookkeeping lives in ([heap], 64 MiB-aligned anonymous pieces that may be arena
 * heaps, writable file segments and the .bss after them, the first page of every mmapped chunk,
 * the words below each thread pointer) into a buffer faulted in before the stop (page faults in
 * heaptrace were the largest cost of the stop window), then read the allocator out of the copy
 * while the program runs again (inventory.h).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define PR_DOMAIN "inventory"
#include "arch/arch.h"
#include "inventory/heapsnap.h"
#include "heap/hooks.h"
#include "util/log.h"
#include "util/maps.h"
#include "target/process.h"
#include "util/progress.h"
#include "util/util.h"

#define HEAP_ALIGN (64ull << 20) /* glibc's arena heaps (HEAP_MAX_SIZE on LP64) */
#define DATA_MAX (16ull << 20) /* larger file-backed writable mappings are not libc's data */
#define READ_PIECE (64ull << 20)
#define SNAP_MAX_HOPS 65536 /* mmapped chunks read per mapping */
#define SCAN_BATCH 256 /* page headers read by one process_vm_readv */
#define SCAN_PAGES 16384 /* pages of a mapping searched for mmapped chunks past a non-chunk */
#define MUSL_ROUNDS 8 /* reads of what mallocng's areas and groups lead to */

struct heapsnap {
	pid_t pid;
	uint8_t *buf; /* pre-faulted */
	size_t cap, used;
	struct inv_region *r;
	size_t nr, rcap;
	struct inv_span *anon;
	size_t nanon, acap;
	struct inv_span *ro; /* read-only file mappings: vtables for the type census */
	size_t nro, rocap;
	uint64_t *tp, *tls; /* thread pointers, and where their static TLS windows start */
	size_t ntp, tpcap;
	void **extra; /* pieces that did not fit in buf */
	size_t nextra, xcap;
	uint64_t brk_start, brk_end;
	uint64_t musl_ctx; /* mallocng's context, 0 if the copy holds none */
	double stop_ms;
	bool taken;
};

/* A full copy of [start, end) of this kind, as maps shows it now. */
struct plan {
	uint64_t start, end;
	enum inv_kind kind;
};

static void plan_add(struct plan **v, size_t *n, size_t *cap, uint64_t s, uint64_t e,
		     enum inv_kind k)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = (struct plan){ s, e, k };
}

static bool anon_path(const char *path)
{
	return !path[0] || !strncmp(path, "[anon:", 6);
}

/* What to copy in full, and the anonymous mappings to look for mmapped chunks in. */
static size_t make_plan(struct heapsnap *s, const struct mapping *m, size_t n, struct plan **out,
			size_t *bytes)
{
	struct plan *v = NULL;
	size_t nv = 0, cap = 0;

	s->nanon = 0;
	s->nro = 0;
	*bytes = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t len = m[i].end - m[i].start;

		if (m[i].path[0] == '/' && (m[i].prot & (MAP_R | MAP_W)) == MAP_R) {
			if (s->nro == s->rocap) {
				s->rocap = s->rocap ? s->rocap * 2 : 64;
				s->ro = xrealloc(s->ro, s->rocap * sizeof(*s->ro));
			}
			s->ro[s->nro++] = (struct inv_span){ m[i].start, m[i].end };
		}
		if ((m[i].prot & (MAP_R | MAP_W)) != (MAP_R | MAP_W))
			continue;
		if (!strcmp(m[i].path, "[heap]")) {
			s->brk_start = m[i].start;
			s->brk_end = m[i].end;
			plan_add(&v, &nv, &cap, m[i].start, m[i].end, INV_HEAP);
		} else if (m[i].path[0] == '/' && len <= DATA_MAX) {
			plan_add(&v, &nv, &cap, m[i].start, m[i].end, INV_DATA);
		} else if (anon_path(m[i].path)) {
			/* the .bss after a file's writable segment, in one piece with it: an
			 * object may straddle the two (the reader looks each up in one piece) */
			if (i && m[i - 1].end == m[i].start && m[i - 1].path[0] == '/' &&
			    len <= DATA_MAX && (m[i - 1].prot & MAP_W)) {
				if (nv && v[nv - 1].kind == INV_DATA && v[nv - 1].end == m[i].start)
					v[nv - 1].end = m[i].end;
				else
					plan_add(&v, &nv, &cap, m[i].start, m[i].end, INV_DATA);
			}
			for (uint64_t x = (m[i].start + HEAP_ALIGN - 1) & ~(HEAP_ALIGN - 1);
			     x < m[i].end && x >= m[i].start; x += HEAP_ALIGN)
				plan_add(&v, &nv, &cap, x,
					 m[i].end - x < HEAP_ALIGN ? m[i].end : x + HEAP_ALIGN,
					 INV_HEAP);
			if (s->nanon == s->acap) {
				s->acap = s->acap ? s->acap * 2 : 64;
				s->anon = xrealloc(s->anon, s->acap * sizeof(*s->anon));
			}
			s->anon[s->nanon++] = (struct inv_span){ m[i].start, m[i].end };
		}
	}
	for (size_t i = 0; i < nv; i++)
		*bytes += v[i].end - v[i].start;
	*bytes += s->nanon * INV_MMAP_PROBE;
	*out = v;
	return nv;
}

static void *snap_alloc(struct heapsnap *s, size_t len)
{
	void *p;

	len = (len + 15) & ~(size_t)15;
	if (s->used + len <= s->cap) {
		p = s->buf + s->used;
		s->used += len;
		return p;
	}
	if (s->nextra == s->xcap) {
		s->xcap = s->xcap ? s->xcap * 2 : 64;
		s->extra = xrealloc(s->extra, s->xcap * sizeof(*s->extra));
	}
	p = xmalloc(len);
	s->extra[s->nextra++] = p;
	return p;
}

static void buf_map(struct heapsnap *s, size_t bytes)
{
	if (s->buf)
		munmap(s->buf, s->cap);
	s->cap = bytes + bytes / 4 + (1u << 20);
	s->buf = mmap(NULL, s->cap, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->buf == MAP_FAILED) {
		s->buf = NULL;
		s->cap = 0;
	}
}

static int region_cmp(const void *x, const void *y)
{
	const struct inv_region *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The copy as the pure reader sees it (regions sorted). */
static void snap_image(struct heapsnap *s, struct inv_image *img)
{
	qsort(s->r, s->nr, sizeof(*s->r), region_cmp);
	*img = (struct inv_image){
		.r = s->r, .nr = s->nr, .anon = s->anon, .nanon = s->nanon,
		.ro = s->ro, .nro = s->nro, .tp = s->tp, .tls = s->tls, .ntp = s->ntp,
		.brk_start = s->brk_start, .brk_end = s->brk_end,
		.page_size = sysconf(_SC_PAGESIZE),
	};
}

/* Does the program's data (read now, while it runs) hold a mallocng context? Then its groups,
 * in anonymous mappings, are copied in the stop: the buffer is sized for them. */
static bool musl_likely(pid_t pid, const struct plan *v, size_t nv)
{
	struct inv_region *r = xcalloc(nv ? nv : 1, sizeof(*r));
	struct inv_image img = { .r = r };
	uint64_t unread = 0;
	bool found;

	for (size_t i = 0; i < nv; i++) {
		uint64_t len = v[i].end - v[i].start;
		uint8_t *d;
		struct iovec local, remote = { (void *)(uintptr_t)v[i].start, len };

		if (v[i].kind != INV_DATA)
			continue;
		d = xmalloc(len);
		local = (struct iovec){ d, len };
		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
			free(d);
			continue;
		}
		r[img.nr++] = (struct inv_region){ v[i].start, len, d, INV_DATA };
	}
	qsort(r, img.nr, sizeof(*r), region_cmp);
	found = inv_musl_context(&img, &unread) || unread;
	for (size_t i = 0; i < img.nr; i++)
		free((void *)r[i].data);
	free(r);
	return found;
}

struct heapsnap *heapsnap_prepare(pid_t pid)
{
	struct heapsnap *s = xcalloc(1, sizeof(*s));
	struct mapping *m = NULL;
	struct plan *v = NULL;
	ssize_t n = maps_read(pid, &m);
	size_t bytes = 0, nv;

	s->pid = pid;
	if (n > 0) {
		nv = make_plan(s, m, n, &v, &bytes);
		if (musl_likely(pid, v, nv)) { /* the data, [heap], and the groups' mappings */
			bytes = 0;
			for (size_t i = 0; i < nv; i++)
				if (v[i].kind == INV_DATA || v[i].start == s->brk_start)
					bytes += v[i].end - v[i].start;
			for (size_t i = 0; i < s->nanon; i++)
				bytes += s->anon[i].end - s->anon[i].start;
		}
		buf_map(s, bytes);
	}
	free(v);
	free(m);
	return s;
}

/* Copy len bytes at addr into a new region (shortened to what could be read). */
static void copy_region(struct heapsnap *s, uint64_t addr, uint64_t len, enum inv_kind kind)
{
	uint8_t *p = snap_alloc(s, len);
	uint64_t done = 0;

	while (done < len) {
		size_t piece = len - done < READ_PIECE ? len - done : READ_PIECE;
		struct iovec local = { p + done, piece }, remote = { (void *)(uintptr_t)(addr + done), piece };
		ssize_t got = process_vm_readv(s->pid, &local, 1, &remote, 1, 0);

		if (got <= 0)
			break;
		done += got;
		if ((size_t)got < piece)
			break;
	}
	if (!done)
		return;
	if (s->nr == s->rcap) {
		s->rcap = s->rcap ? s->rcap * 2 : 256;
		s->r = xrealloc(s->r, s->rcap * sizeof(*s->r));
	}
	s->r[s->nr++] = (struct inv_region){ addr, done, p, kind };
}

static bool planned(const struct plan *v, size_t n, uint64_t addr, uint64_t len)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= v[i].start && addr + len <= v[i].end)
			return true;
	return false;
}

/*
 * The first page after pos, before end, that starts like an mmapped chunk (prev_size 0, flags
 * exactly IS_MMAPPED, a page-multiple size inside the mapping); 0 if none. A thread's stack
 * mapped next to mmapped chunks merges with them into one mapping on kernels before 6.7 (which
 * made MAP_STACK mappings VM_NOHUGEPAGE, so they stopped merging): the chunks then follow
 * memory that is no chunk. The pages' first words are read SCAN_BATCH at a time.
 */
static uint64_t next_chunk_page(struct heapsnap *s, uint64_t pos, uint64_t end, uint64_t page_size)
{
	uint64_t hdr[SCAN_BATCH][2];
	struct iovec local[SCAN_BATCH], remote[SCAN_BATCH];
	uint64_t p = (pos & ~(page_size - 1)) + page_size, pages = 0;

	/* a thread's stack ends just above its thread pointer (glibc puts the thread's descriptor
	 * and static TLS at the top): no chunk below it */
	for (size_t i = 0; i < s->ntp; i++)
		if (s->tp[i] >= p && s->tp[i] < end)
			p = (s->tp[i] & ~(page_size - 1)) + page_size;

	while (p < end && pages < SCAN_PAGES) {
		unsigned n = 0;
		ssize_t got;

		for (uint64_t q = p; q < end && n < SCAN_BATCH; q += page_size, n++) {
			local[n] = (struct iovec){ hdr[n], 16 };
			remote[n] = (struct iovec){ (void *)(uintptr_t)q, 16 };
		}
		got = process_vm_readv(s->pid, local, n, remote, n, 0);
		if (got <= 0)
			return 0;
		for (unsigned i = 0; i < n && (ssize_t)(16 * (i + 1)) <= got; i++) {
			uint64_t q = p + i * page_size, sz = hdr[i][1] & ~7ull;

			if (!hdr[i][0] && (hdr[i][1] & 7) == 2 && sz >= page_size &&
			    !(sz % page_size) && q + sz <= end && q + sz > q)
				return q;
		}
		p += (uint64_t)n * page_size;
		pages += n;
	}
	return 0;
}

/* The first page of every mmapped chunk in span a, hopping from chunk to chunk (adjacent
 * mappings merge into one), past memory that is no chunk by next_chunk_page. */
static void copy_mmapped(struct heapsnap *s, const struct inv_span *a, const struct plan *v,
			 size_t nv, uint64_t page_size)
{
	uint64_t pos = a->start;

	for (unsigned hops = 0; pos < a->end && hops < SNAP_MAX_HOPS; hops++) {
		uint64_t len = a->end - pos < INV_MMAP_PROBE ? a->end - pos : INV_MMAP_PROBE;
		uint8_t page[INV_MMAP_PROBE];
		uint64_t chunk, size;
		ssize_t got;

		if (planned(v, nv, pos, len)) {
			/* copied in full already: the reader hops through it in the copy */
			return;
		}
		copy_region(s, pos, len, INV_PAGE);
		if (!s->nr || s->r[s->nr - 1].addr != pos)
			return;
		got = s->r[s->nr - 1].len;
		memcpy(page, s->r[s->nr - 1].data, got);
		if (!inv_mmap_chunk_at(page, got, pos, a->end, page_size, &chunk, &size)) {
			pos = next_chunk_page(s, pos, a->end, page_size);
			if (!pos)
				return;
			continue;
		}
		pos = chunk + size;
	}
}

struct tid_list {
	pid_t *v;
	size_t n, cap;
};

static void collect_tid(struct thread *t, void *ctx)
{
	struct tid_list *l = ctx;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = t->tid;
}

/* The thread pointer of a stopped thread, 0 if unknown. */
static uint64_t thread_pointer(pid_t tid)
{
	uint64_t tp = 0;

	if (arch_thread_pointer(tid, &tp))
		return 0;
	return tp;
}

/* mallocng: its context in the copied data, then the meta areas and groups it leads to, read
 * in rounds (an area's list and a group's offsets are known once the copy holds what points at
 * them). Return the context, 0 if the copy holds none. */
static uint64_t musl_copy(struct heapsnap *s)
{
	uint64_t ctx = 0, unread = 0;

	for (unsigned round = 0; round < MUSL_ROUNDS; round++) {
		struct inv_image img;
		struct inv_span *miss;
		bool again;
		size_t n;

		snap_image(s, &img);
		if (!ctx) {
			ctx = inv_musl_context(&img, &unread);
			pr_dbg(2, "mallocng context 0x%llx, unread area 0x%llx",
			       (unsigned long long)ctx, (unsigned long long)unread);
			if (!ctx && !unread)
				return 0;
			if (!ctx) {
				copy_region(s, unread, 4096, INV_HEAP);
				continue;
			}
		}
		miss = inv_musl_missing(&img, ctx, &n, &again);
		for (size_t i = 0; i < n; i++)
			copy_region(s, miss[i].start, miss[i].end - miss[i].start, INV_HEAP);
		pr_dbg(2, "mallocng round %u: %zu ranges read", round, n);
		free(miss);
		if (!n || !again)
			break;
	}
	return ctx;
}

void heapsnap_take(struct heapsnap *s, struct proc *p)
{
	uint64_t t0 = now_ns(), page_size = sysconf(_SC_PAGESIZE);
	struct tid_list tids = { 0 };
	struct mapping *m = NULL;
	struct plan *v = NULL;
	size_t nv = 0, bytes = 0;
	struct progress pg;
	ssize_t n;

	s->pid = proc_mem_pid(p);
	n = maps_read(s->pid, &m); /* again: the heap may have grown since the prepare */
	if (n > 0)
		nv = make_plan(s, m, n, &v, &bytes);
	if (bytes > s->cap)
		buf_map(s, bytes);
	/* the data and [heap] first: they say which allocator's bookkeeping to follow */
	for (size_t i = 0; i < nv; i++)
		if (v[i].kind == INV_DATA || v[i].start == s->brk_start)
			copy_region(s, v[i].start, v[i].end - v[i].start, v[i].kind);
	s->musl_ctx = musl_copy(s);
	progress_start(&pg, "heap at attach: copying", s->musl_ctx ? 0 : bytes);
	for (size_t i = 0, done = 0; i < nv && !s->musl_ctx; i++) {
		if (v[i].kind != INV_DATA && v[i].start != s->brk_start)
			copy_region(s, v[i].start, v[i].end - v[i].start, v[i].kind);
		done += v[i].end - v[i].start;
		progress_update(&pg, done);
	}
	progress_end(&pg);
	proc_for_each_thread(p, collect_tid, &tids);
	for (size_t i = 0; i < tids.n; i++) {
		uint64_t tp = thread_pointer(tids.v[i]);
		size_t have = s->nr;

		if (!tp)
			continue;
		if (s->musl_ctx) /* mallocng keeps nothing per thread: the count only */
			have = SIZE_MAX;
		/* the window, or its part next to tp when it starts below the mapping */
		for (uint64_t w = INV_TLS_WINDOW; w >= 8 && s->nr == have; w /= 2)
			copy_region(s, arch->tls_window(tp, w), w, INV_TLS);
		if (s->ntp == s->tpcap) {
			s->tpcap = s->tpcap ? s->tpcap * 2 : 16;
			s->tp = xrealloc(s->tp, s->tpcap * sizeof(*s->tp));
			s->tls = xrealloc(s->tls, s->tpcap * sizeof(*s->tls));
		}
		s->tls[s->ntp] = arch->tls_window(tp, INV_TLS_WINDOW);
		s->tp[s->ntp++] = tp;
	}
	for (size_t i = 0; i < s->nanon && !s->musl_ctx; i++)
		copy_mmapped(s, &s->anon[i], v, nv, page_size);
	s->stop_ms = (now_ns() - t0) / 1e6;
	s->taken = true;
	{
		uint64_t copied = 0;

		for (size_t i = 0; i < s->nr; i++)
			copied += s->r[i].len;
		pr_dbg(1, "snapshot: %zu regions, %llu bytes, %zu threads, buffer %zu of %zu bytes "
			  "used, %.1f ms", s->nr, (unsigned long long)copied, s->ntp, s->used,
		       s->cap, s->stop_ms);
	}
	free(tids.v);
	free(v);
	free(m);
}

/* Which allocator the hooked malloc belongs to: another allocator by its module's name, glibc
 * by its banner in the module (*minor), musl by the context found in the copy. */
static void identify(struct heapsnap *s, struct proc *p, struct inventory *inv, unsigned *minor)
{
	const struct module *mod = p->hook_addr[HOOK_MALLOC] ?
					   modlist_find(&p->mods, p->hook_addr[HOOK_MALLOC]) : NULL;
	const char *base, *other;

	*minor = 0;
	if (!mod) {
		inv_problem(inv, "malloc's module is not known: inventory not supported");
		return;
	}
	base = strrchr(mod->path, '/') ? strrchr(mod->path, '/') + 1 : mod->path;
	if ((other = inv_other_allocator(base))) {
		snprintf(inv->allocator, sizeof(inv->allocator), "%s", other);
		inv_problem(inv, "inventory not supported for %s", other);
		return;
	}
	*minor = inv_glibc_minor(mod->path);
	if (*minor)
		snprintf(inv->allocator, sizeof(inv->allocator), "glibc-2.%u", *minor);
	else if (s->musl_ctx)
		snprintf(inv->allocator, sizeof(inv->allocator), "musl-mallocng");
	else
		inv_problem(inv, "malloc in %s is neither glibc's nor musl's: inventory not supported",
			    base);
}

/* Read-only data of the running process (vtables, type_info): it does not change. */
static bool read_live(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct heapsnap *s = ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(s->pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

struct inventory *heapsnap_analyse(struct heapsnap *s, struct proc *p)
{
	struct inventory *inv = xcalloc(1, sizeof(*inv));
	uint64_t t0 = now_ns();
	struct progress pg;
	unsigned minor;

	progress_start(&pg, "heap at attach: analysing", 0);
	inv->complete = true;
	inv->stop_ms = s->stop_ms;
	identify(s, p, inv, &minor);
	if (!minor && s->musl_ctx && s->taken) {
		struct inv_image img;

		snap_image(s, &img);
		inv_musl_read(&img, s->musl_ctx, inv);
		inv_type_census(inv, &img, read_live, s);
	} else if (minor) {
		struct inv_image img;

		snap_image(s, &img);
		img.progress = progress_cb;
		img.progress_ctx = &pg;
		if (minor < 35 || minor > 40 || arch->elf_class != ELFCLASS64)
			inv_problem(inv, "inventory not supported for %s on %s (layout not known)",
				    inv->allocator, arch->name);
		else if (!s->taken || !s->nr)
			inv_problem(inv, "the snapshot could not be taken");
		else if (!inv_glibc_read(&img, inv))
			inv_type_census(inv, &img, read_live, s);
	}
	progress_end(&pg);
	inv->analysis_ms = (now_ns() - t0) / 1e6;
	pr_info("heap at attach: %s, %llu live blocks, stopped %.1f ms, analysed in %.1f ms",
		inv->allocator[0] ? inv->allocator : "unknown allocator",
		(unsigned long long)inv->live_blocks, inv->stop_ms, inv->analysis_ms);
	for (unsigned i = 0; i < inv->nproblems; i++)
		pr_info("heap at attach: %s", inv->problems[i]);
	return inv;
}

void heapsnap_free(struct heapsnap *s)
{
	if (!s)
		return;
	if (s->buf)
		munmap(s->buf, s->cap);
	for (size_t i = 0; i < s->nextra; i++)
		free(s->extra[i]);
	free(s->extra);
	free(s->r);
	free(s->anon);
	free(s->ro);
	free(s->tp);
	free(s->tls);
	free(s);
}
