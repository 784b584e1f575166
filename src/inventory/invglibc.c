// SPDX-License-Identifier: GPL-2.0-only
/*
 * glibc's malloc (ptmalloc, 2.35 to 2.40 on LP64; measured on 2.36 x86_64) read from a private
 * copy without symbols:
 *  - main_arena (static, not exported) by its shape: 126 bins each empty (fd == bk == the bin
 *    itself) or pointing into a heap, a plausible `next`, a top chunk inside [heap];
 *  - mp_ by the word sbrk_base at 0x60 next to tcache_bins (<= 64) at 0x68;
 *  - the other arenas around main_arena.next, each heap through heap_info.prev;
 *  - every heap walked chunk by chunk: a chunk is allocated as far as the arena knows when the
 *    next chunk's PREV_INUSE bit is set; fastbin and tcache entries keep that bit, so both are
 *    walked (safe-linked: next = (&fd >> 12) ^ fd) and taken out of the live set;
 *  - mmapped chunks at the start of anonymous mappings (heapsnap.c read them).
 * A header that fails its checks is reported and the walk resynchronises further on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inventory/inventory.h"
#include "util/util.h"

#define HEAP_MAX (64ull << 20) /* HEAP_MAX_SIZE on LP64: arena heaps are aligned to it */
#define MIN_CHUNK 0x20
#define P_INUSE 1ull
#define M_MAPPED 2ull
#define A_NONMAIN 4ull
#define FLAGS 7ull

/* struct malloc_state */
#define MS_MUTEX 0x0
#define MS_FASTBINS 0x10 /* NFASTBINS chunk pointers */
#define MS_TOP 0x60
#define MS_BINS 0x70 /* fd/bk pairs of bins 1.. */
#define MS_NEXT 0x870
#define MS_SYSTEM_MEM 0x888
#define MS_SIZE 0x898
#define NFASTBINS 10
#define NBINS_CHECKED 126
#define ARENA_HOPS 256
/* struct heap_info (pagesize added in 2.35): the arena follows it in its first heap */
#define HI_AR_PTR 0x0
#define HI_PREV 0x8
#define HI_SIZE 0x10
#define HI_SIZEOF 0x30
#define HEAP_HOPS 1024
/* first chunk of a non-main arena: after heap_info and malloc_state, chunk2mem 16-aligned */
#define ARENA_FIRST_CHUNK 0x8d0
/* struct malloc_par */
#define MP_N_MMAPS 0x3c
#define MP_SBRK_BASE 0x60
#define MP_TCACHE_BINS 0x68
#define MP_TCACHE_COUNT 0x78
/* tcache_perthread_struct: uint16_t counts[64], then 64 entry pointers (user addresses) */
#define TC_CHUNK 0x290
#define TC_BINS 64
#define TC_ENTRIES 0x80
#define RESYNC_RUN 64 /* valid headers in a row that end a resynchronisation */
#define RESYNC_PROBES (4u << 20)

enum cstate { C_LIVE, C_FREE, C_FAST, C_TCACHE, C_TCSTRUCT, C_TOP, C_UNKNOWN };

struct chunk {
	uint64_t addr, size;
	uint8_t state;
	uint8_t first; /* the first chunk of a heap */
	uint16_t arena;
};

struct seg {
	uint64_t start, end; /* first chunk, end of the heap's chunks */
	uint64_t top; /* the arena's top if it is in this heap, else 0 (ends at a fencepost) */
	unsigned arena;
	bool main;
};

struct gctx {
	const struct inv_image *img;
	struct inventory *inv;
	uint64_t arenas[ARENA_HOPS];
	unsigned narenas;
	struct seg *segs;
	size_t nsegs, segs_cap;
	struct chunk *c;
	size_t nc, cap;
	uint64_t mp; /* &mp_, 0 if not found */
	uint64_t tcache_count; /* bound on tcache counts */
	uint64_t sbrk_base;
	const uint8_t *seg_data; /* the copy of the heap being walked, from seg_start */
	uint64_t seg_start, seg_len;
};

static bool rd(const struct gctx *g, uint64_t addr, uint64_t *v)
{
	/* the heap being walked first: one region, no search (most reads are its headers) */
	uint64_t off = addr - g->seg_start;

	if (g->seg_data && off < g->seg_len && off + 8 <= g->seg_len) {
		memcpy(v, g->seg_data + off, 8);
		return true;
	}
	return inv_read64(g->img, addr, v);
}

static uint64_t rd0(const struct gctx *g, uint64_t addr)
{
	uint64_t v = 0;

	rd(g, addr, &v);
	return v;
}

static bool in_kind(const struct inv_image *img, uint64_t addr, enum inv_kind kind)
{
	for (size_t i = 0; i < img->nr; i++)
		if (img->r[i].kind == kind && addr >= img->r[i].addr &&
		    addr < img->r[i].addr + img->r[i].len)
			return true;
	return false;
}

/* Every bin of the arena at a empty or pointing into a heap. */
static bool bins_plausible(const struct gctx *g, uint64_t a)
{
	const uint8_t *p = inv_ptr(g->img, a + MS_BINS, NBINS_CHECKED * 16);

	if (!p)
		return false;
	for (unsigned i = 0; i < NBINS_CHECKED; i++) {
		uint64_t fd, bk, self = a + MS_BINS + i * 16 - 16;

		memcpy(&fd, p + i * 16, 8);
		memcpy(&bk, p + i * 16 + 8, 8);
		if (fd == self && bk == self)
			continue;
		if (fd == self || bk == self || (fd & 15) || (bk & 15) ||
		    !in_kind(g->img, fd, INV_HEAP) || !in_kind(g->img, bk, INV_HEAP))
			return false;
	}
	return true;
}

static bool next_plausible(const struct gctx *g, uint64_t a)
{
	uint64_t next;

	return rd(g, a + MS_NEXT, &next) &&
	       (next == a || (next % HEAP_MAX == HI_SIZEOF && bins_plausible(g, next)));
}

/* The copied [heap] region holding addr: the one the image names, or (a core file names none)
 * any anonymous region holding it. */
static const struct inv_region *brk_region(const struct gctx *g, uint64_t addr)
{
	const struct inv_image *img = g->img;

	for (size_t i = 0; i < img->nr; i++) {
		const struct inv_region *r = &img->r[i];

		if (r->kind == INV_HEAP && addr >= r->addr && addr < r->addr + r->len &&
		    (!img->brk_start || (r->addr == img->brk_start)))
			return r;
	}
	return NULL;
}

/* main_arena: bins and next by shape, then its top chunk inside [heap]. */
static uint64_t find_main_arena(struct gctx *g)
{
	const struct inv_image *img = g->img;

	for (size_t i = 0; i < img->nr; i++) {
		const struct inv_region *r = &img->r[i];

		if (r->kind != INV_DATA)
			continue;
		for (uint64_t off = 0; off + MS_SIZE <= r->len; off += 16) {
			uint64_t a = r->addr + off, top, tsz, sysmem, lo, hi;
			const struct inv_region *h;

			if (!bins_plausible(g, a) || !next_plausible(g, a))
				continue;
			if (!rd(g, a + MS_TOP, &top) || !(h = brk_region(g, top)))
				continue;
			lo = h->addr;
			hi = h->addr + h->len;
			if (!rd(g, top + 8, &tsz) || (tsz & (M_MAPPED | A_NONMAIN)) ||
			    top + (tsz & ~FLAGS) > hi || !rd(g, a + MS_SYSTEM_MEM, &sysmem) ||
			    top + (tsz & ~FLAGS) - sysmem < lo)
				continue;
			g->sbrk_base = top + (tsz & ~FLAGS) - sysmem;
			return a;
		}
	}
	return 0;
}

/* mp_: sbrk_base at 0x60 and tcache_bins (at most 64) at 0x68. */
static void find_mp(struct gctx *g)
{
	for (size_t i = 0; i < g->img->nr; i++) {
		const struct inv_region *r = &g->img->r[i];

		if (r->kind != INV_DATA)
			continue;
		for (uint64_t off = 0; off + 0x88 <= r->len; off += 8) {
			uint64_t v, bins, count;

			memcpy(&v, r->data + off + MP_SBRK_BASE, 8);
			if (v != g->sbrk_base)
				continue;
			memcpy(&bins, r->data + off + MP_TCACHE_BINS, 8);
			memcpy(&count, r->data + off + MP_TCACHE_COUNT, 8);
			if (bins > TC_BINS || count > 0xffff)
				continue;
			g->mp = r->addr + off;
			g->tcache_count = count;
			return;
		}
	}
}

static void add_seg(struct gctx *g, uint64_t start, uint64_t end, uint64_t top, unsigned arena)
{
	if (g->nsegs == g->segs_cap) {
		g->segs_cap = g->segs_cap ? g->segs_cap * 2 : 16;
		g->segs = xrealloc(g->segs, g->segs_cap * sizeof(*g->segs));
	}
	g->segs[g->nsegs++] = (struct seg){ start, end, top, arena, arena == 0 };
}

/* The heaps of non-main arena a, newest (holding top) first, back through heap_info.prev. */
static void arena_heaps(struct gctx *g, unsigned ai)
{
	uint64_t a = g->arenas[ai], top = rd0(g, a + MS_TOP), tsz = rd0(g, top + 8) & ~FLAGS;
	uint64_t h = top & ~(HEAP_MAX - 1), sum = 0, sysmem = rd0(g, a + MS_SYSTEM_MEM);
	unsigned hops;

	for (hops = 0; h && hops < HEAP_HOPS; hops++) {
		bool first_heap = a == h + HI_SIZEOF;
		uint64_t ar, size, prev, first = h + (first_heap ? ARENA_FIRST_CHUNK : HI_SIZEOF);

		if (!rd(g, h + HI_AR_PTR, &ar) || !rd(g, h + HI_SIZE, &size) ||
		    !rd(g, h + HI_PREV, &prev)) {
			inv_problem(g->inv, "heap 0x%llx of arena 0x%llx was not copied",
				    (unsigned long long)h, (unsigned long long)a);
			return;
		}
		if (ar != a || size > HEAP_MAX || size < first - h || !inv_ptr(g->img, h, size)) {
			inv_problem(g->inv, "heap_info at 0x%llx does not belong to arena 0x%llx",
				    (unsigned long long)h, (unsigned long long)a);
			return;
		}
		if (!hops && top + tsz != h + size)
			inv_problem(g->inv, "top of arena 0x%llx does not end its heap",
				    (unsigned long long)a);
		add_seg(g, first, h + size, hops ? 0 : top, ai);
		sum += size;
		if (a == h + HI_SIZEOF)
			break; /* the arena's first heap */
		h = prev;
	}
	if (hops == HEAP_HOPS)
		inv_problem(g->inv, "arena 0x%llx: heap list does not end", (unsigned long long)a);
	if (sum != sysmem)
		inv_problem(g->inv, "arena 0x%llx: heaps hold %llu bytes, system_mem says %llu",
			    (unsigned long long)a, (unsigned long long)sum,
			    (unsigned long long)sysmem);
}

static int seg_cmp(const void *x, const void *y)
{
	const struct seg *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

static void add_chunk(struct gctx *g, uint64_t addr, uint64_t size, uint8_t state, unsigned arena,
		      bool first)
{
	if (g->nc == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 4096;
		g->c = xrealloc(g->c, g->cap * sizeof(*g->c));
	}
	g->c[g->nc++] = (struct chunk){ addr, size, state, first, (uint16_t)arena };
}

/* A heap chunk header at c as the walk of s accepts it: size in *sz, raw word in *raw. */
static bool header_ok(const struct gctx *g, const struct seg *s, uint64_t c, uint64_t *sz,
		      uint64_t *raw)
{
	uint64_t v;

	if (!rd(g, c + 8, &v))
		return false;
	*raw = v;
	*sz = v & ~FLAGS;
	if (c == s->top)
		return *sz >= 16 && !(*sz & 15) && c + *sz == s->end && !(v & M_MAPPED);
	return *sz >= MIN_CHUNK && !(*sz & 15) && c + *sz <= s->end && c + *sz > c &&
	       !(v & M_MAPPED) && !(s->main && (v & A_NONMAIN));
	/* a non-main arena's chunks carry NON_MAIN_ARENA only while in use: free ones are
	 * relabelled size | PREV_INUSE */
}

/* From c, do RESYNC_RUN headers in a row check out (or the chain end exactly at the end)? */
static bool chain_ok(const struct gctx *g, const struct seg *s, uint64_t c)
{
	for (unsigned k = 0; k < RESYNC_RUN; k++) {
		uint64_t sz, raw;

		if (c == s->end || (!s->top && c + 16 == s->end))
			return true;
		if (!header_ok(g, s, c, &sz, &raw))
			return false;
		if (c == s->top)
			return true;
		c += sz;
	}
	return true;
}

/* Walk one heap. The state of each chunk comes from the next header's PREV_INUSE bit. */
static void walk_seg(struct gctx *g, const struct seg *s)
{
	uint64_t c = s->start, steps = (s->end - s->start) / 16 + 1;
	size_t prev = SIZE_MAX; /* index of the chunk whose in-use bit the next header holds */

	g->seg_data = inv_ptr(g->img, s->start, s->end - s->start);
	g->seg_start = s->start;
	g->seg_len = g->seg_data ? s->end - s->start : 0;

	while (c < s->end && steps--) {
		uint64_t sz, raw;

		if (!s->top && (c + 16 == s->end || (rd(g, c + 8, &raw) && (raw & ~FLAGS) == 16))) {
			/* an old heap's fencepost: its P bit is the last chunk's */
			if (prev != SIZE_MAX && rd(g, c + 8, &raw))
				g->c[prev].state = raw & P_INUSE ? C_LIVE : C_FREE;
			return;
		}
		if (!header_ok(g, s, c, &sz, &raw)) {
			uint64_t o = c + 16, probes = 0;

			while (o < s->end && probes++ < RESYNC_PROBES && !chain_ok(g, s, o))
				o += 16;
			inv_problem(g->inv,
				    "bad chunk header at 0x%llx (0x%llx): %llu bytes skipped",
				    (unsigned long long)c, (unsigned long long)rd0(g, c + 8),
				    (unsigned long long)(o - c));
			if (prev != SIZE_MAX)
				/* its in-use bit was in that header */
				g->c[prev].state = C_UNKNOWN;
			g->inv->unknown_bytes += o - c;
			prev = SIZE_MAX;
			if (o >= s->end || probes > RESYNC_PROBES)
				return;
			c = o;
			continue;
		}
		if (prev != SIZE_MAX && g->c[prev].state != C_UNKNOWN)
			g->c[prev].state = raw & P_INUSE ? C_LIVE : C_FREE;
		if (c == s->top) {
			add_chunk(g, c, sz, C_TOP, s->arena, c == s->start);
			return;
		}
		add_chunk(g, c, sz, C_LIVE, s->arena, c == s->start);
		prev = g->nc - 1;
		c += sz;
	}
	if (s->top)
		inv_problem(g->inv, "the walk of heap 0x%llx missed its top chunk 0x%llx",
			    (unsigned long long)s->start, (unsigned long long)s->top);
}

/* The walked chunk at addr, or NULL. */
static struct chunk *chunk_at(const struct gctx *g, uint64_t addr)
{
	size_t lo = 0, hi = g->nc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->c[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->nc && g->c[lo].addr == addr ? &g->c[lo] : NULL;
}

static void walk_fastbins(struct gctx *g, unsigned ai)
{
	uint64_t a = g->arenas[ai];

	for (unsigned i = 0; i < NFASTBINS; i++) {
		uint64_t p = rd0(g, a + MS_FASTBINS + 8 * i), size = MIN_CHUNK + 16 * i;

		for (size_t steps = 0; p; steps++) {
			struct chunk *ch = chunk_at(g, p);
			uint64_t fd;

			if (!ch || ch->size != size || ch->state != C_LIVE || ch->arena != ai ||
			    steps > g->nc || !rd(g, p + 16, &fd)) {
				inv_problem(g->inv, "fastbin %u of arena 0x%llx: bad entry 0x%llx",
					    i,
					    (unsigned long long)a, (unsigned long long)p);
				break;
			}
			ch->state = C_FAST;
			p = ((p + 16) >> 12) ^ fd;
		}
	}
}

/* Does the chunk at c hold a tcache_perthread_struct? Marks its entries if mark. Returns 1 for
 * a valid struct with entries, 2 for an all-empty one, 0 otherwise. */
static int tcache_check(struct gctx *g, uint64_t c, uint64_t key, bool mark)
{
	const uint8_t *t = inv_ptr(g->img, c + 16, TC_ENTRIES + TC_BINS * 8);
	bool any = false;

	if (!t)
		return 0;
	for (unsigned i = 0; i < TC_BINS; i++) {
		uint16_t n;
		uint64_t e;

		memcpy(&n, t + 2 * i, 2);
		memcpy(&e, t + TC_ENTRIES + 8 * i, 8);
		if (n > g->tcache_count || !n != !e)
			return 0;
		any |= n != 0;
		for (unsigned k = 0; k < n; k++) {
			struct chunk *ch = e & 15 ? NULL : chunk_at(g, e - 16);
			uint64_t next, k2;

			if (!ch || ch->size != MIN_CHUNK + 16 * i ||
			    (ch->state != C_LIVE && !(mark && ch->state == C_TCACHE)) ||
			    !rd(g, e, &next) || !rd(g, e + 8, &k2) || k2 != key)
				return 0;
			if (mark)
				ch->state = C_TCACHE;
			e = (e >> 12) ^ next;
		}
		if (e)
			return 0;
	}
	return any ? 1 : 2;
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static uint64_t tls_start(const struct inv_image *img, size_t t)
{
	return img->tls ? img->tls[t] : img->tp[t] - INV_TLS_WINDOW;
}

/* The offset in the static TLS where every thread keeps its tcache pointer: the one at which
 * most threads point at a candidate struct (a stray pointer in one thread's TLS loses). */
static void tls_tcache(struct gctx *g, const uint64_t *cand, size_t ncand, uint64_t *per_thread)
{
	unsigned votes[INV_TLS_WINDOW / 8] = { 0 }, best = 0, bestv = 0;
	const struct inv_image *img = g->img;

	for (size_t t = 0; t < img->ntp; t++) {
		const uint8_t *w = inv_ptr(img, tls_start(img, t), INV_TLS_WINDOW);

		for (unsigned k = 0; w && k < INV_TLS_WINDOW / 8; k++) {
			uint64_t v;

			memcpy(&v, w + 8 * k, 8);
			if (v && bsearch(&v, cand, ncand, sizeof(*cand), u64_cmp))
				votes[k]++;
		}
	}
	for (unsigned k = INV_TLS_WINDOW / 8; k-- > 0;)
		if (votes[k] > bestv) {
			bestv = votes[k];
			best = k;
		}
	for (size_t t = 0; t < img->ntp; t++) {
		uint64_t v = 0;

		if (bestv)
			inv_read64(img, tls_start(img, t) + 8 * best, &v);
		per_thread[t] = v;
	}
}

/* The key in the second word of e, if e looks like the first entry of tcache bin b: a walked
 * chunk of the bin's size, in use as far as the arena knows, whose safe-linked next decodes to
 * 0 or to another such chunk. */
static bool entry_key(struct gctx *g, uint64_t e, unsigned b, uint64_t *key)
{
	struct chunk *ch = e & 15 ? NULL : chunk_at(g, e - 16), *nx;
	uint64_t next, n;

	if (!ch || ch->size != MIN_CHUNK + 16 * b || ch->state != C_LIVE || !rd(g, e, &next) ||
	    !rd(g, e + 8, key) || !*key)
		return false;
	n = (e >> 12) ^ next;
	return !n || (!(n & 15) && (nx = chunk_at(g, n - 16)) && nx->size == ch->size);
}

/* The key of the first entry of the candidate struct at c that looks like one, or 0. */
static uint64_t struct_key(struct gctx *g, uint64_t c)
{
	const uint8_t *t = inv_ptr(g->img, c, TC_ENTRIES + TC_BINS * 8);
	uint64_t e, k;

	for (unsigned b = 0; t && b < TC_BINS; b++) {
		memcpy(&e, t + TC_ENTRIES + 8 * b, 8);
		if (e && entry_key(g, e, b, &k))
			return k;
	}
	return 0;
}

/*
 * The tcache key shared by every entry (2.34+; one per process): from the structs the threads'
 * TLS points at where one has an entry, else the most common key among the candidate structs'
 * first entries that decode (a user block of the struct's size full of pointers to objects of
 * one type would win a vote over raw second words). tcache_check then holds every entry of a
 * struct to it.
 */
static uint64_t tcache_key(struct gctx *g, const uint64_t *cand, size_t ncand,
			   const uint64_t *per_thread)
{
	uint64_t best = 0;
	size_t bestn = 0, n = 0;
	uint64_t *keys = xmalloc((ncand ? ncand : 1) * sizeof(*keys));

	for (size_t t = 0; t < g->img->ntp; t++)
		if (per_thread[t] && bsearch(&per_thread[t], cand, ncand, sizeof(*cand), u64_cmp) &&
		    (best = struct_key(g, per_thread[t])))
			break;
	for (size_t i = 0; !best && i < ncand; i++)
		if ((keys[n] = struct_key(g, cand[i])))
			n++;
	if (n)
		qsort(keys, n, sizeof(*keys), u64_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && keys[j] == keys[i]; j++)
			;
		if (j - i > bestn) {
			bestn = j - i;
			best = keys[i];
		}
	}
	free(keys);
	return best;
}

static void walk_tcaches(struct gctx *g)
{
	size_t ncand = 0;
	uint64_t *cand, *per_thread, key;

	for (size_t i = 0; i < g->nc; i++)
		ncand += g->c[i].state == C_LIVE && g->c[i].size == TC_CHUNK;
	cand = xmalloc((ncand ? ncand : 1) * sizeof(*cand));
	ncand = 0;
	for (size_t i = 0; i < g->nc; i++)
		if (g->c[i].state == C_LIVE && g->c[i].size == TC_CHUNK)
			cand[ncand++] = g->c[i].addr + 16; /* sorted: the chunks are */
	per_thread = xcalloc(g->img->ntp ? g->img->ntp : 1, sizeof(*per_thread));
	tls_tcache(g, cand, ncand, per_thread);
	key = tcache_key(g, cand, ncand, per_thread);
	for (size_t i = 0; i < ncand; i++) {
		struct chunk *ch = chunk_at(g, cand[i] - 16);
		bool owned = false;
		int kind = tcache_check(g, ch->addr, key, false);

		for (size_t t = 0; t < g->img->ntp; t++)
			owned |= per_thread[t] == cand[i];
		if (kind == 1 || (kind == 2 && (owned || ch->first))) {
			if (kind == 1)
				tcache_check(g, ch->addr, key, true);
			ch->state = C_TCSTRUCT;
		} else if (owned) {
			inv_problem(g->inv, "the tcache at 0x%llx of a thread does not validate "
				    "(a thread stopped inside malloc or free?)",
				    (unsigned long long)cand[i]);
		}
	}
	g->inv->threads = g->img->ntp;
	free(per_thread);
	free(cand);
}

/* The first page in (pos, end) that the copy holds and that starts like an mmapped chunk, 0 if
 * none: chunks may follow memory that is no chunk in one mapping (a thread's stack merged with
 * them), which the snapshot read past. */
static uint64_t next_chunk_copy(const struct inv_image *img, uint64_t pos, uint64_t end)
{
	uint64_t ps = img->page_size;

	for (uint64_t q = (pos & ~(ps - 1)) + ps; q < end && q > pos; q += ps) {
		const uint8_t *h = inv_ptr(img, q, 16);
		uint64_t prev, sz;

		if (!h)
			continue;
		memcpy(&prev, h, 8);
		memcpy(&sz, h + 8, 8);
		if (!prev && (sz & 7) == 2 && (sz & ~7ull) >= ps && !((sz & ~7ull) % ps) &&
		    q + (sz & ~7ull) <= end)
			return q;
	}
	return 0;
}

static void walk_mmapped(struct gctx *g)
{
	const struct inv_image *img = g->img;
	uint64_t n_mmaps;

	for (size_t i = 0; i < img->nanon; i++) {
		uint64_t pos = img->anon[i].start, end = img->anon[i].end;

		for (unsigned hops = 0; pos < end && hops < (1u << 20); hops++) {
			uint64_t len = end - pos < INV_MMAP_PROBE ? end - pos : INV_MMAP_PROBE;
			const uint8_t *page = inv_ptr(img, pos, len);
			uint64_t chunk, size;

			if (!page ||
			    !inv_mmap_chunk_at(page, len, pos, end, img->page_size, &chunk, &size)) {
				/* no chunk here: the next page copied further on may hold one
				 * (the snapshot read past memory that is no chunk) */
				pos = next_chunk_copy(img, pos, end);
				if (!pos)
					break;
				continue;
			}
			inv_add_block(g->inv, chunk + 16, size - 16);
			g->inv->mmapped_blocks++;
			g->inv->mmapped_bytes += size;
			pos = chunk + size;
		}
	}
	if (g->mp && rd(g, g->mp + MP_N_MMAPS, &n_mmaps) &&
	    (uint32_t)n_mmaps != g->inv->mmapped_blocks)
		inv_problem(g->inv, "%llu mmapped chunks found, the allocator counts %u",
			    (unsigned long long)g->inv->mmapped_blocks, (uint32_t)n_mmaps);
}

static void tally(struct gctx *g)
{
	struct inventory *inv = g->inv;

	for (size_t i = 0; i < g->nc; i++) {
		const struct chunk *ch = &g->c[i];

		inv->heap_bytes += ch->size;
		if (ch->state == C_FREE || ch->state == C_FAST || ch->state == C_TCACHE)
			inv_add_cached(inv, ch->addr + 16, ch->size - 8);
		switch (ch->state) {
		case C_LIVE:
			inv_add_block(inv, ch->addr + 16, ch->size - 8);
			break;
		case C_FREE:
			inv->bin_blocks++;
			inv->bin_bytes += ch->size;
			break;
		case C_FAST:
			inv->fastbin_blocks++;
			inv->fastbin_bytes += ch->size;
			break;
		case C_TCACHE:
			inv->tcache_blocks++;
			inv->tcache_bytes += ch->size;
			break;
		case C_TOP:
			inv->top_bytes += ch->size;
			break;
		case C_UNKNOWN:
			inv->unknown_bytes += ch->size;
			break;
		default:
			break;
		}
		if (ch->state != C_LIVE && ch->state != C_TCSTRUCT && ch->state != C_UNKNOWN &&
		    ch->size > inv->largest_free)
			inv->largest_free = ch->size;
	}
	inv->free_bytes = inv->bin_bytes + inv->fastbin_bytes + inv->tcache_bytes + inv->top_bytes;
}

int inv_glibc_read(const struct inv_image *img, struct inventory *inv)
{
	struct gctx g = { .img = img, .inv = inv, .tcache_count = 0xffff };
	uint64_t a, next, mutex, mp_sbrk;
	unsigned hops;

	a = find_main_arena(&g);
	if (!a) {
		inv_problem(inv, "glibc's main_arena was not found");
		return -ENOENT;
	}
	find_mp(&g);
	if (!g.mp)
		inv_problem(inv, "glibc's mp_ was not found: mmapped chunks are not cross-checked");
	else if (rd(&g, g.mp + MP_SBRK_BASE, &mp_sbrk) && mp_sbrk != g.sbrk_base)
		inv_problem(inv, "sbrk_base disagrees");
	/* the arena ring */
	for (hops = 0, next = a; hops < ARENA_HOPS; hops++) {
		g.arenas[g.narenas++] = next;
		if (!rd(&g, next + MS_NEXT, &next) || next == a)
			break;
		if (next % HEAP_MAX != HI_SIZEOF || !bins_plausible(&g, next)) {
			inv_problem(inv, "arena ring broken at 0x%llx", (unsigned long long)next);
			break;
		}
	}
	if (hops == ARENA_HOPS)
		inv_problem(inv, "the arena ring does not close");
	inv->arenas = g.narenas;
	for (unsigned i = 0; i < g.narenas; i++) {
		if (rd(&g, g.arenas[i] + MS_MUTEX, &mutex) && (uint32_t)mutex)
			inv_problem(inv,
				    "arena 0x%llx was locked: a thread was stopped inside malloc",
				    (unsigned long long)g.arenas[i]);
		if (i)
			arena_heaps(&g, i);
	}
	{
		uint64_t top = rd0(&g, a + MS_TOP);

		add_seg(&g, (g.sbrk_base + 15) & ~15ull, top + (rd0(&g, top + 8) & ~FLAGS), top, 0);
	}
	qsort(g.segs, g.nsegs, sizeof(*g.segs), seg_cmp);
	for (size_t i = 0, total = 0, done = 0; i < g.nsegs; i++) {
		if (!i)
			for (size_t k = 0; k < g.nsegs; k++)
				total += g.segs[k].end - g.segs[k].start;
		if (img->progress)
			img->progress(img->progress_ctx, done, total);
		done += g.segs[i].end - g.segs[i].start;
		if (i && g.segs[i].start < g.segs[i - 1].end) {
			inv_problem(inv, "heaps overlap at 0x%llx",
				    (unsigned long long)g.segs[i].start);
			continue;
		}
		walk_seg(&g, &g.segs[i]);
	}
	for (unsigned i = 0; i < g.narenas; i++)
		walk_fastbins(&g, i);
	walk_tcaches(&g);
	tally(&g);
	walk_mmapped(&g);
	free(g.segs);
	free(g.c);
	return 0;
}
