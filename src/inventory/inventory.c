// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pre-attach inventory's common half: lookups in the private copy, the result (blocks, size
 * classes, problems), and seeding the table with it. Pure: no ptrace.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inventory/inventory.h"
#include "util/util.h"

const uint8_t *inv_ptr(const struct inv_image *img, uint64_t addr, uint64_t len)
{
	static size_t last; /* the region of the last hit: most lookups follow one another */
	size_t lo = 0, hi = img->nr;

	if (addr + len < addr)
		return NULL;
	if (last < img->nr && addr >= img->r[last].addr &&
	    addr + len <= img->r[last].addr + img->r[last].len)
		return img->r[last].data + (addr - img->r[last].addr);
	/* the last region starting at or below addr; a few before it may overlap (TLS windows) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->r[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = 0; k < 4 && lo > k; k++) {
		const struct inv_region *r = &img->r[lo - 1 - k];

		if (addr >= r->addr && addr + len <= r->addr + r->len) {
			last = lo - 1 - k;
			return r->data + (addr - r->addr);
		}
	}
	return NULL;
}

bool inv_read64(const struct inv_image *img, uint64_t addr, uint64_t *val)
{
	const uint8_t *p = inv_ptr(img, addr, 8);

	if (!p)
		return false;
	memcpy(val, p, 8);
	return true;
}

void inv_problem(struct inventory *inv, const char *fmt, ...)
{
	va_list ap;

	inv->complete = false;
	if (inv->nproblems == INV_MAX_PROBLEMS) {
		inv->problems_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(inv->problems[inv->nproblems++], sizeof(inv->problems[0]), fmt, ap);
	va_end(ap);
}

unsigned inv_class(uint64_t size)
{
	unsigned c = 0;

	while (c + 1 < INV_NCLASSES && size > inv_class_max(c))
		c++;
	return c;
}

void inv_add_block(struct inventory *inv, uint64_t ptr, uint64_t size)
{
	unsigned c = inv_class(size);

	if (inv->nblocks == inv->blocks_cap) {
		inv->blocks_cap = inv->blocks_cap ? inv->blocks_cap * 2 : 1024;
		inv->blocks = xrealloc(inv->blocks, inv->blocks_cap * sizeof(*inv->blocks));
	}
	inv->blocks[inv->nblocks++] = (struct inv_block){ ptr, size };
	inv->live_blocks++;
	inv->live_bytes += size;
	inv->class_blocks[c]++;
	inv->class_bytes[c] += size;
}

void inv_add_cached(struct inventory *inv, uint64_t ptr, uint64_t size)
{
	if (size > INV_CACHED_MAX)
		return;
	if (inv->ncached == inv->cached_cap) {
		inv->cached_cap = inv->cached_cap ? inv->cached_cap * 2 : 256;
		inv->cached = xrealloc(inv->cached, inv->cached_cap * sizeof(*inv->cached));
	}
	inv->cached[inv->ncached++] = (struct inv_block){ ptr, size };
}

void inv_free(struct inventory *inv)
{
	free(inv->blocks);
	inv->blocks = NULL;
	free(inv->cached);
	inv->cached = NULL;
	inv->ncached = inv->cached_cap = 0;
	free(inv->types);
	inv->types = NULL;
	inv->ntypes = 0;
	inv->nblocks = inv->blocks_cap = 0;
}

bool inv_mmap_chunk_at(const uint8_t *page, size_t len, uint64_t pos, uint64_t end,
		       uint64_t page_size, uint64_t *chunk, uint64_t *size)
{
	uint64_t prev, sz;

	if (len < 16)
		return false;
	memcpy(&prev, page, 8);
	memcpy(&sz, page + 8, 8);
	/* prev_size 0, flags exactly IS_MMAPPED (2), whole pages inside the mapping */
	if (prev || (sz & 7) != 2 || sz < page_size || (sz & ~7ull) % page_size ||
	    pos + (sz & ~7ull) > end || pos + (sz & ~7ull) < pos)
		return false;
	sz &= ~7ull;
	*chunk = pos;
	*size = sz;
	/* memalign moved the chunk lead bytes in: prev_size = lead, and lead + size is the
	 * mapping; the header at the start is then stale */
	for (uint64_t lead = 16; lead + 16 <= len; lead += 16) {
		uint64_t p2, s2;

		memcpy(&p2, page + lead, 8);
		memcpy(&s2, page + lead + 8, 8);
		if (p2 == lead && (s2 & 7) == 2 && lead + (s2 & ~7ull) == sz) {
			*chunk = pos + lead;
			*size = s2 & ~7ull;
			break;
		}
	}
	return true;
}

void inv_seed(const struct inventory *inv, struct table *t, uint64_t now)
{
	uint32_t bt[INV_NCLASSES];

	for (unsigned c = 0; c < INV_NCLASSES; c++) {
		uint64_t pcs[2] = { TABLE_PC_BEFORE_ATTACH, inv_class_max(c) };

		if (inv->class_blocks[c])
			bt[c] = table_intern(t, pcs, 2);
	}
	table_reserve(t, inv->nblocks);
	for (size_t i = 0; i < inv->nblocks; i++)
		table_seed(t, inv->blocks[i].ptr, inv->blocks[i].size,
			   bt[inv_class(inv->blocks[i].size)], now);
}

/* The minor version of the glibc in the file at path (0: not glibc's): from the banner of
 * libc.so ("... release version 2.36."), or in a static executable, which has no banner, from
 * the version string "2.36" next to glibc's malloc tunables ("glibc.malloc.tcache_count"). */
unsigned inv_glibc_minor(const char *path)
{
	static const char key[] = "release version 2.";
	unsigned minor = 0;
	struct stat st;
	const char *map, *end, *v = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || st.st_size <= 0 ||
	    (map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return 0;
	}
	end = map + st.st_size;
	{
		const char *hit = memmem(map, st.st_size, "GNU C Library", 13);

		if (hit && (v = memmem(hit, end - hit, key, sizeof(key) - 1)) && v - hit < 200)
			v += sizeof(key) - 1;
		else
			v = NULL;
	}
	if (!v && memmem(map, st.st_size, "glibc.malloc.tcache_count", 25)) {
		for (const char *q = map; !v && q && q + 6 <= end;
		     q = memmem(q + 1, end - q - 1, "\0" "2.", 3)) {
			if (q[0] == '\0' && q[1] == '2' && q[2] == '.' && q + 6 <= end &&
			    q[3] >= '0' && q[3] <= '9' && q[4] >= '0' && q[4] <= '9' && !q[5])
				v = q + 3;
		}
	}
	while (v && v < end && *v >= '0' && *v <= '9')
		minor = minor * 10 + (*v++ - '0');
	munmap((void *)map, st.st_size);
	close(fd);
	return minor;
}

const char *inv_other_allocator(const char *name)
{
	static const char *const others[] = { "jemalloc", "tcmalloc", "mimalloc", "hoard",
					      "snmalloc", "rpmalloc" };

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (strstr(name, others[i]))
			return others[i];
	return NULL;
}
