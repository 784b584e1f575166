/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_INVENTORY_H
#define HEAPTRACE_INVENTORY_H

/*
 * The heap that was there before the attach, read out of the allocator's own bookkeeping in a
 * private copy of the process's memory (an inv_image), without symbols. Pure: the copy is made
 * by heapsnap.c while every thread is stopped; everything here works on the copy only, every
 * target pointer is looked up in it with a range check and every loop has a bound, so a corrupt
 * or torn heap gives a partial result (complete false, with problems), never a crash or a hang.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/table.h"

/* What a piece of the copy is, for the reader's plausibility checks. */
enum inv_kind {
	INV_DATA, /* a writable segment of a mapped file and the .bss right after it */
	INV_HEAP, /* [heap], or a 64 MiB-aligned anonymous piece (a candidate arena heap) */
	INV_PAGE, /* a page read where an mmapped chunk may start */
	INV_TLS, /* the static TLS next to a thread pointer */
};

struct inv_region {
	uint64_t addr, len;
	const uint8_t *data;
	enum inv_kind kind;
};

/* An anonymous writable mapping that may hold mmapped chunks, from its start to end. */
struct inv_span {
	uint64_t start, end;
};

struct inv_image {
	const struct inv_region *r; /* sorted by addr */
	size_t nr;
	const struct inv_span *anon;
	size_t nanon;
	const struct inv_span *ro; /* read-only mappings of files: where vtables may be */
	size_t nro;
	const uint64_t *tp; /* thread pointers (fs_base on x86_64), none if unknown */
	const uint64_t *tls; /* where each thread's INV_TLS_WINDOW bytes of static TLS start
			      * (arch_ops.tls_window); NULL: below its thread pointer */
	size_t ntp;
	uint64_t brk_start, brk_end; /* [heap], 0 if none */
	uint64_t page_size;
	/* called now and then with the bytes of heap walked so far and in all; may be NULL */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

struct inv_block {
	uint64_t ptr, size; /* user address and usable size */
};

/* A C++ class found by RTTI among the live blocks. */
struct inv_type {
	char name[120];
	uint64_t blocks, bytes;
};

/* Read len bytes of the process (or core) at addr into buf; false if not all could be. */
typedef bool (*inv_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Size classes of the report: blocks of up to 16 << i bytes. */
#define INV_NCLASSES 40
#define INV_MAX_PROBLEMS 16
#define INV_TLS_WINDOW 8192 /* bytes of static TLS read next to each thread pointer */
#define INV_MMAP_PROBE 4096 /* bytes read where an mmapped chunk may start */
#define INV_CACHED_MAX 1032 /* glibc's largest tcache block (64-bit): larger ones never are */

struct inventory {
	char allocator[32]; /* "glibc-2.36", "musl-mallocng", "" when not recognised */
	bool complete;
	uint64_t live_blocks, live_bytes; /* usable sizes (glibc), requested sizes (musl) */
	uint64_t free_bytes; /* tcache + fastbins + bins + top (chunk sizes); musl: free slots */
	uint64_t heap_bytes; /* the arenas' heaps: every chunk, free or not */
	uint64_t mmapped_blocks, mmapped_bytes; /* chunk sizes */
	uint64_t tcache_blocks, tcache_bytes, fastbin_blocks, fastbin_bytes;
	uint64_t bin_blocks, bin_bytes, top_bytes, largest_free, unknown_bytes; /* musl: bin_* are
										* the free slots */
	unsigned arenas, threads;
	double stop_ms, analysis_ms;
	struct inv_block *blocks; /* every live block, by address within each heap */
	size_t nblocks, blocks_cap;
	/* glibc: the free chunks a thread cache may hand back as its thread ends (in a tcache,
	 * a fastbin or a bin; up to INV_CACHED_MAX bytes), their user addresses and usable sizes */
	struct inv_block *cached;
	size_t ncached, cached_cap;
	uint64_t class_blocks[INV_NCLASSES], class_bytes[INV_NCLASSES];
	struct inv_type *types; /* by bytes, largest first */
	size_t ntypes;
	char problems[INV_MAX_PROBLEMS][160];
	unsigned nproblems, problems_dropped;
};

/* The mmapped chunk whose header is in page (len bytes read at pos, inside a mapping ending at
 * end): glibc puts prev_size 0, flags exactly IS_MMAPPED and a page-multiple size at the start
 * of the mapping, or, after memalign, prev_size = lead and the header lead bytes in. Return true
 * with its address and size. */
bool inv_mmap_chunk_at(const uint8_t *page, size_t len, uint64_t pos, uint64_t end,
		       uint64_t page_size, uint64_t *chunk, uint64_t *size);

/* Read glibc's malloc (2.35 to 2.40 layout, LP64) from img into inv (zeroed by the caller,
 * allocator set). Return 0, or -ENOENT when no main_arena was found (a problem says so). */
int inv_glibc_read(const struct inv_image *img, struct inventory *inv);

/*
 * musl's mallocng (1.2.1 to 1.2.5, LP64; invmusl.c). inv_musl_context: the allocator context
 * found by its shape in img's data and verified by its first meta area; 0 if none, then
 * *unread is the first meta area of a plausible context that the copy lacks (0 if none).
 * inv_musl_missing: the ranges of the process the reading of ctx needs and img lacks (meta
 * areas, groups), sorted and merged; *n of them, in an xmalloc'd array (NULL when none);
 * *again if once they are read, they may lead to more (a meta area's next, a slot's header).
 * inv_musl_read: fill inv (zeroed, allocator set) with the live slots and their requested sizes.
 */
uint64_t inv_musl_context(const struct inv_image *img, uint64_t *unread);
struct inv_span *inv_musl_missing(const struct inv_image *img, uint64_t ctx, size_t *n,
				  bool *again);
int inv_musl_read(const struct inv_image *img, uint64_t ctx, struct inventory *inv);

/* Pointer to len bytes of the copy at addr, or NULL if not all copied in one region. */
const uint8_t *inv_ptr(const struct inv_image *img, uint64_t addr, uint64_t len);
bool inv_read64(const struct inv_image *img, uint64_t addr, uint64_t *val);

/* Add a problem line (printf format) and mark the inventory incomplete. */
void inv_problem(struct inventory *inv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void inv_add_block(struct inventory *inv, uint64_t ptr, uint64_t size);
/* Note a free chunk (user address ptr, usable size) in inv->cached if it is small enough. */
void inv_add_cached(struct inventory *inv, uint64_t ptr, uint64_t size);
/* Index of the size class of a block of size bytes, and the class's upper bound. */
unsigned inv_class(uint64_t size);
static inline uint64_t inv_class_max(unsigned c)
{
	return (uint64_t)16 << c;
}

void inv_free(struct inventory *inv);

/* Fill inv->types from the live blocks' first words (invtypes.c): rd reads the vtables and
 * type_info objects, which are not in the copy. */
void inv_type_census(struct inventory *inv, const struct inv_image *img, inv_read_fn rd,
		     void *ctx);

/* The minor version of the glibc in the ELF file at path, 0 if it holds none. */
unsigned inv_glibc_minor(const char *path);
/* The name of another allocator a module's file name names ("jemalloc", "tcmalloc", ...), or NULL. */
const char *inv_other_allocator(const char *name);

/* Make every block of inv a live block of t under a "[before attach]" backtrace of its size
 * class (table.h: TABLE_PC_BEFORE_ATTACH), so later frees of them are matched. */
void inv_seed(const struct inventory *inv, struct table *t, uint64_t now);

#endif
