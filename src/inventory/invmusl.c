// SPDX-License-Identifier: GPL-2.0-only
/*
 * musl's malloc (mallocng, musl 1.2.1 to 1.2.5, LP64) read from a private copy without symbols:
 *  - the context (hidden static in libc's data, or in a static program's) by its shape: a
 *    non-zero secret, init_done 1, meta_area_head and _tail page aligned, every active[] entry
 *    0 or shaped like a meta, and the first meta area's check word equal to the secret;
 *  - the meta areas (a 4 KiB page each: check, next, nslots, then 40-byte metas) from head to
 *    tail; a meta in use has a group (mem) whose first word points back at it;
 *  - each group's slots: a slot is live when its bit is in neither avail_mask nor freed_mask;
 *    the slot's in-band header gives the user address (an offset when the slot was cycled or
 *    aligned) and the requested size, which mallocng stores (malloc_usable_size returns it);
 *    a slot that holds a nested group (reserved 6) is the allocator's, not a block.
 * Cross-check: usage_by_class[sc] is the number of slots of the freeable groups of class sc.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inventory/inventory.h"
#include "util/util.h"

#define UNIT 16
#define IB 4 /* in-band header bytes before a slot's user address */
#define PAGE 4096ull /* mallocng's meta areas and maplen are in units of 4 KiB on every arch */
/* struct malloc_context (PAGESIZE is a constant in musl's own build: no pagesize member) */
#define CTX_SECRET 0
#define CTX_INIT_DONE 8
#define CTX_AVAIL_META 24
#define CTX_AVAIL_META_COUNT 32
#define CTX_AREA_HEAD 56
#define CTX_AREA_TAIL 64
#define CTX_ACTIVE 80 /* struct meta *active[48] */
#define CTX_USAGE 464 /* size_t usage_by_class[48] */
#define CTX_SIZE 928
#define NCLASS 48
/* struct meta_area and struct meta */
#define AREA_HDR 24
#define META_SIZE 40
#define AREA_SLOTS ((PAGE - AREA_HDR) / META_SIZE)
#define AREA_HOPS (1u << 20)
#define BIG_GROUP (1ull << 20) /* at most the span of a group of several slots */
#define PART_READ (4 * PAGE) /* a slot in a mapping of its own larger than this: read in part */

/* mallocng's size classes, in units of 16 bytes (unchanged from 1.2.1 to 1.2.5) */
static const uint16_t size_classes[NCLASS] = {
	1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   12,   15,
	18,   20,   25,   31,   36,   42,   50,   63,   72,   84,   102,  127,
	146,  170,  204,  255,  292,  340,  409,  511,  584,  682,  818,  1023,
	1169, 1364, 1637, 2047, 2340, 2730, 3276, 4095, 4680, 5460, 6552, 8191,
};

static const char not_copied[] = "group not copied";

struct meta {
	uint64_t addr, mem;
	uint32_t avail, freed;
	unsigned last_idx, sizeclass;
	bool freeable;
	uint64_t maplen; /* pages of its own mapping, 0 if none */
};

static bool rd8(const struct inv_image *img, uint64_t addr, uint8_t *v)
{
	const uint8_t *p = inv_ptr(img, addr, 1);

	if (p)
		*v = *p;
	return p != NULL;
}

static bool rd16(const struct inv_image *img, uint64_t addr, uint16_t *v)
{
	const uint8_t *p = inv_ptr(img, addr, 2);

	if (p)
		memcpy(v, p, 2);
	return p != NULL;
}

static bool rd32(const struct inv_image *img, uint64_t addr, uint32_t *v)
{
	const uint8_t *p = inv_ptr(img, addr, 4);

	if (p)
		memcpy(v, p, 4);
	return p != NULL;
}

static bool meta_shaped(uint64_t a)
{
	uint64_t off = a & (PAGE - 1);

	return off >= AREA_HDR && (off - AREA_HDR) % META_SIZE == 0 &&
	       (off - AREA_HDR) / META_SIZE < AREA_SLOTS;
}

/* The context's own words at c (a copy of CTX_SIZE bytes) have its shape. */
static bool ctx_shaped(const uint8_t *c)
{
	uint64_t secret, head, tail, avail, count;
	uint32_t init;

	memcpy(&secret, c + CTX_SECRET, 8);
	memcpy(&init, c + CTX_INIT_DONE, 4);
	memcpy(&head, c + CTX_AREA_HEAD, 8);
	memcpy(&tail, c + CTX_AREA_TAIL, 8);
	memcpy(&avail, c + CTX_AVAIL_META, 8);
	memcpy(&count, c + CTX_AVAIL_META_COUNT, 8);
	/* avail_meta is one past the last slot when the tail area is full */
	if (!secret || init != 1 || !head || !tail || (head | tail) & (PAGE - 1) ||
	    count > AREA_SLOTS ||
	    (avail && !meta_shaped(avail) && avail != tail + AREA_HDR + AREA_SLOTS * META_SIZE))
		return false;
	for (unsigned i = 0; i < NCLASS; i++) {
		uint64_t a;

		memcpy(&a, c + CTX_ACTIVE + 8 * i, 8);
		if (a && !meta_shaped(a))
			return false;
	}
	return true;
}

uint64_t inv_musl_context(const struct inv_image *img, uint64_t *unread)
{
	*unread = 0;
	for (size_t i = 0; i < img->nr; i++) {
		const struct inv_region *r = &img->r[i];

		if (r->kind != INV_DATA)
			continue;
		for (uint64_t off = 0; off + CTX_SIZE <= r->len; off += 8) {
			const uint8_t *c = r->data + off;
			uint64_t secret, head, check;

			if (!ctx_shaped(c))
				continue;
			memcpy(&secret, c + CTX_SECRET, 8);
			memcpy(&head, c + CTX_AREA_HEAD, 8);
			if (!inv_read64(img, head, &check)) {
				if (!*unread)
					*unread = head;
				continue;
			}
			if (check == secret)
				return r->addr + off;
		}
	}
	return 0;
}

static uint64_t stride_of(const struct meta *m)
{
	if (!m->last_idx && m->maplen)
		return m->maplen * PAGE - UNIT;
	return (uint64_t)UNIT * size_classes[m->sizeclass < NCLASS ? m->sizeclass : 0];
}

/* The meta at a, if it is in use (its group points back at it); false with *why otherwise. */
static bool meta_read(const struct inv_image *img, uint64_t a, struct meta *m, const char **why)
{
	const uint8_t *p = inv_ptr(img, a, META_SIZE);
	uint64_t w, back;

	*why = NULL;
	if (!p) {
		*why = "not copied";
		return false;
	}
	m->addr = a;
	memcpy(&m->mem, p + 16, 8);
	memcpy(&m->avail, p + 24, 4);
	memcpy(&m->freed, p + 28, 4);
	memcpy(&w, p + 32, 8);
	m->last_idx = w & 31;
	m->freeable = (w >> 5) & 1;
	m->sizeclass = (w >> 6) & 63;
	m->maplen = w >> 12;
	if (!m->mem)
		return false; /* free or never used */
	if (m->mem & (UNIT - 1) || (m->sizeclass >= NCLASS && m->sizeclass != 63) ||
	    (m->sizeclass == 63 && (!m->maplen || m->last_idx)))
		*why = "bad fields";
	else if ((m->avail | m->freed) >> m->last_idx >> 1 || (m->avail & m->freed))
		*why = "bad masks";
	else if (m->maplen && m->last_idx &&
		 UNIT + stride_of(m) * (m->last_idx + 1) > m->maplen * PAGE)
		*why = "slots beyond its mapping";
	else if (!inv_read64(img, m->mem, &back))
		*why = not_copied;
	else if (back != a)
		*why = "group does not point back";
	return !*why;
}

/* Bytes from the group's start to the end of its last slot (or of its mapping). */
static uint64_t span_of(const struct meta *m)
{
	return m->maplen ? m->maplen * PAGE : UNIT + stride_of(m) * (m->last_idx + 1);
}

typedef void (*meta_fn)(const struct inv_image *img, const struct meta *m, void *arg);

/* Call fn for every meta in use, area by area from head to tail. Problems go to inv if set;
 * *stopped_at is the first area not in the copy, 0 if the walk reached the tail. */
static void each_meta(const struct inv_image *img, uint64_t ctx, struct inventory *inv,
		      meta_fn fn, void *arg, uint64_t *stopped_at)
{
	uint64_t secret = 0, a = 0, tail = 0;
	unsigned hops;

	*stopped_at = 0;
	inv_read64(img, ctx + CTX_SECRET, &secret);
	inv_read64(img, ctx + CTX_AREA_HEAD, &a);
	inv_read64(img, ctx + CTX_AREA_TAIL, &tail);
	for (hops = 0; a && hops < AREA_HOPS; hops++) {
		uint64_t check, next;
		uint32_t nslots;

		if (!inv_read64(img, a, &check) || !inv_read64(img, a + 8, &next) ||
		    !rd32(img, a + 16, &nslots)) {
			*stopped_at = a;
			if (inv)
				inv_problem(inv, "meta area 0x%llx was not copied",
					    (unsigned long long)a);
			return;
		}
		if (check != secret || nslots > AREA_SLOTS || (next & (PAGE - 1))) {
			if (inv)
				inv_problem(inv, "meta area 0x%llx does not validate",
					    (unsigned long long)a);
			return;
		}
		for (uint32_t i = 0; i < nslots; i++) {
			struct meta m;
			const char *why;
			uint64_t ma = a + AREA_HDR + (uint64_t)i * META_SIZE;

			if (meta_read(img, ma, &m, &why))
				fn(img, &m, arg);
			else if (why && inv)
				inv_problem(inv, "meta 0x%llx: %s", (unsigned long long)ma, why);
			else if (why == not_copied && !inv)
				fn(img, &m, arg); /* the planner reads its group */
		}
		if (a == tail)
			return;
		a = next;
	}
	if (inv)
		inv_problem(inv, "the meta area list does not reach its tail");
}

/* --- what the live snapshot still has to copy --- */

struct missing {
	struct inv_span *v;
	size_t n, cap;
	bool again; /* what is read now leads to more (an area's next, a slot's header) */
};

static void want(const struct inv_image *img, struct missing *ms, uint64_t start, uint64_t end)
{
	if (end <= start || inv_ptr(img, start, end - start))
		return;
	if (ms->n == ms->cap) {
		ms->cap = ms->cap ? ms->cap * 2 : 256;
		ms->v = xrealloc(ms->v, ms->cap * sizeof(*ms->v));
	}
	ms->v[ms->n++] = (struct inv_span){ start, end };
}

static void want_group(const struct inv_image *img, const struct meta *m, void *arg)
{
	struct missing *ms = arg;
	uint64_t span = span_of(m), stride = stride_of(m);

	if (m->last_idx || !m->maplen || span <= PART_READ) {
		if (span <= BIG_GROUP)
			want(img, ms, m->mem, m->mem + span);
		return;
	}
	/* a slot in a mapping of its own: the header page, the page of the user address (the
	 * header's offset says where it is) and the end, where the requested size is */
	want(img, ms, m->mem, m->mem + PAGE);
	want(img, ms, m->mem + span - PAGE, m->mem + span);
	{
		uint8_t r;
		uint16_t off;

		if (!inv_ptr(img, m->mem, PAGE))
			ms->again = true; /* its header says where its user address is */
		if (rd8(img, m->mem + UNIT - 3, &r) && r >> 5 == 7 &&
		    rd16(img, m->mem + UNIT - 2, &off) && (uint64_t)off * UNIT < stride) {
			uint64_t p = m->mem + UNIT + (uint64_t)off * UNIT;

			want(img, ms, (p - UNIT) & ~(PAGE - 1), ((p + UNIT) & ~(PAGE - 1)) + PAGE);
		}
	}
}

static int span_cmp(const void *x, const void *y)
{
	const struct inv_span *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

struct inv_span *inv_musl_missing(const struct inv_image *img, uint64_t ctx, size_t *n,
				  bool *again)
{
	struct missing ms = { 0 };
	uint64_t stopped;
	size_t k = 0;

	each_meta(img, ctx, NULL, want_group, &ms, &stopped);
	if (stopped) {
		/* the rest of the anonymous mapping the area is in: the next areas follow it */
		uint64_t end = stopped + PAGE;

		for (size_t i = 0; i < img->nanon; i++)
			if (stopped >= img->anon[i].start && stopped < img->anon[i].end)
				end = img->anon[i].end - stopped > BIG_GROUP ? stopped + BIG_GROUP :
									       img->anon[i].end;
		want(img, &ms, stopped, end);
		ms.again = true;
	}
	/* one read per run of touching ranges; nested groups lie inside their outer one */
	if (ms.n)
		qsort(ms.v, ms.n, sizeof(*ms.v), span_cmp);
	for (size_t i = 0; i < ms.n; i++) {
		if (k && ms.v[i].start <= ms.v[k - 1].end) {
			if (ms.v[i].end > ms.v[k - 1].end)
				ms.v[k - 1].end = ms.v[i].end;
			continue;
		}
		ms.v[k++] = ms.v[i];
	}
	*n = k;
	*again = ms.again;
	return ms.v;
}

/* --- the reading --- */

struct mctx {
	struct inventory *inv;
	uint64_t usage[NCLASS];
	uint64_t groups;
};

/* The live slot idx of group m: its user address and requested size, or false with *why. */
static bool slot_block(const struct inv_image *img, const struct meta *m, unsigned idx,
		       uint64_t *ptr, uint64_t *size, bool *nested, const char **why)
{
	uint64_t stride = stride_of(m), storage = m->mem + UNIT;
	uint64_t start = storage + stride * idx, end = start + stride - IB, p = start, off;
	uint8_t hb, h4, zero;
	uint16_t o16;
	uint32_t reserved;

	*nested = false;
	*why = "header not copied";
	if (!rd8(img, start - 3, &hb))
		return false;
	if (hb >> 5 == 7) { /* cycled or aligned: the offset to the user address is here */
		if (!rd16(img, start - 2, &o16))
			return false;
		p = start + (uint64_t)o16 * UNIT;
	}
	*why = "bad slot header";
	if (p >= end || !rd8(img, p - 3, &hb) || !rd8(img, p - 4, &h4) || (hb & 31) != idx)
		return false;
	if (h4) {
		uint32_t o32;

		if (!rd32(img, p - 8, &o32))
			return false;
		off = o32;
	} else {
		if (!rd16(img, p - 2, &o16))
			return false;
		off = o16;
	}
	if (storage + off * UNIT != p)
		return false;
	reserved = hb >> 5;
	if (reserved == 6) {
		*nested = true;
		return true;
	}
	if (reserved == 7)
		return false;
	if (reserved == 5 && (!rd32(img, end - 4, &reserved) || reserved < 5 ||
			      !rd8(img, end - 5, &zero) || zero))
		return false;
	if (reserved > end - p || (rd8(img, end, &zero) && zero) ||
	    (reserved && rd8(img, end - reserved, &zero) && zero))
		return false;
	*ptr = p;
	*size = end - reserved - p;
	return true;
}

static void read_group(const struct inv_image *img, const struct meta *m, void *arg)
{
	struct mctx *mc = arg;
	struct inventory *inv = mc->inv;
	uint64_t stride = stride_of(m), free_mask = m->avail | m->freed;
	bool own_map = m->maplen && !m->last_idx;

	mc->groups++;
	if (m->freeable && m->sizeclass < NCLASS)
		mc->usage[m->sizeclass] += m->last_idx + 1;
	/* a group in its own mapping, or in memory donated from a program's data: not nested */
	if ((m->maplen || !m->freeable) && !own_map)
		inv->heap_bytes += span_of(m);
	for (unsigned i = 0; i <= m->last_idx; i++) {
		uint64_t ptr, size;
		const char *why;
		bool nested;

		if (free_mask >> i & 1) {
			inv->bin_blocks++;
			inv->bin_bytes += stride;
			if (stride > inv->largest_free)
				inv->largest_free = stride;
			continue;
		}
		if (!slot_block(img, m, i, &ptr, &size, &nested, &why)) {
			inv_problem(inv, "slot %u of group 0x%llx: %s", i,
				    (unsigned long long)m->mem, why);
			inv->unknown_bytes += stride;
			continue;
		}
		if (nested)
			continue;
		inv_add_block(inv, ptr, size);
		if (own_map) {
			inv->mmapped_blocks++;
			inv->mmapped_bytes += m->maplen * PAGE;
		}
	}
}

int inv_musl_read(const struct inv_image *img, uint64_t ctx, struct inventory *inv)
{
	struct mctx mc = { .inv = inv };
	uint64_t stopped;

	each_meta(img, ctx, inv, read_group, &mc, &stopped);
	for (unsigned sc = 0; sc < NCLASS; sc++) {
		uint64_t usage = 0;

		inv_read64(img, ctx + CTX_USAGE + 8 * sc, &usage);
		if (usage != mc.usage[sc])
			inv_problem(inv, "size class %u: %llu slots found, the allocator counts %llu",
				    sc, (unsigned long long)mc.usage[sc],
				    (unsigned long long)usage);
	}
	inv->free_bytes = inv->bin_bytes;
	inv->arenas = 1;
	inv->threads = img->ntp;
	return 0;
}
