/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_RECORD_H
#define HEAPTRACE_RECORD_H

/*
 * --record=FILE: the event log of one traced process, for `heaptrace report` (offline.h).
 *
 * The file: a 16-byte header (the 8 bytes RECORD_MAGIC, the format version as a little-endian
 * u32, a flags u32 that is 0), then one zstd stream of records. A record is a type byte and
 * fields; every number is an unsigned LEB128 varint, "s" a zigzag-encoded signed one, a string
 * or a byte array a varint length and the bytes. Indices are implicit: the n-th M record is
 * module n, the n-th B record backtrace n (both from 0, again from 0 after an X), of the
 * process the records are of; the n-th S or N record is process n.
 *
 *   S  pid start_ns word_size elf_machine depth command   first record (depth: --depth, or 0)
 *   H  heap name                       version 3, after the first S: a heap besides malloc's
 *                                      (--alloc's @HEAP, --mmap's) was traced; heap is the
 *                                      top byte of its blocks' addresses below (table_key)
 *   X  start_ns command                 the process ran execve: forget heap, modules, backtraces;
 *                                      times count from start_ns now
 *   M  start end base bias_known bias build_id path        a mapped ELF file
 *   B  hook depth pc...                hook: 1 + hooks.h id of frame 0, or 0; pcs as s-deltas
 *   A  dt tid bt size ptr              an allocation; dt (s): ns since the previous A/F/E time
 *   F  dt tid ptr                      a free (of a block known to the table or not), at the
 *                                      time the call was made
 *   T  dt tid ptr                      a realloc's entry took its live block ptr out (table_take)
 *   P  tid                             ... and it went back (the call failed or was abandoned)
 *   R  dt tid k                        ... and the realloc released it (k & 1: it was taken;
 *                                      k >> 1: version 3, the heap of the realloc function)
 *   U  dt tid heap lo hi               version 3: the addresses [lo, hi) of heap were released
 *                                      (munmap, mremap, sbrk: table_release_range)
 *   I  dt bt size ptr                  a block live before the attach (heap-at-attach inventory)
 *   L  tid ptr                         version 4: a free of a block not live that the C library
 *                                      made as thread tid ended (account/acct.h): counted in
 *                                      library_frees, the table unchanged
 *   E  dt exited exit_status(s) has_statm vss rss shared command [n name...]    the process's
 *                                      last record; version 2: the n allocators traced
 *   N  parent pid start_ns command     version 2: process parent forked process pid (-f); its heap,
 *                                      modules and backtraces start as copies of the parent's
 *   W  process                         version 2: the records from here on are of that process
 *                                      (the S process until the first W); times stay one clock
 *   J  pc offset name                  version 5: frames at return address pc, offset bytes into
 *                                      code a JIT generated, are named name (from the process's
 *                                      perf map, which may be gone when the log is read); before
 *                                      the B records that hold pc
 *   Y  function file line(s)           version 6: the process's next Python frame (its n-th Y
 *                                      record is frame n: unwind/python.h), written before the
 *                                      first B record that holds it; kept across an X, copied
 *                                      to a child with the rest (N)
 *
 * Version 3 logs every heap: the ptr of A, F and T records is the table's key (table.h:
 * table_key), whose top byte is the heap (0, malloc's, the only one of older logs).
 * The log is complete when every process in it has its E record.
 * A reader refuses a version above its own; new record types come with a new version (a version
 * 1 log is a version 2 log of one process, a version 2 log one of version 3 whose every block
 * is malloc's).
 * The writer runs on the tracer's thread only to append records to a chunk in memory; a thread
 * of its own compresses and writes full chunks. At most RECORD_QUEUE chunks wait: past that
 * the tracer waits for the disk or the pipe (bounded memory, no event is lost).
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heap/table.h"

#define RECORD_MAGIC "HTRACLOG"
#define RECORD_VERSION 6u
#define RECORD_HEADER_SIZE 16
#define RECORD_MAX_STRING 4096
#define RECORD_MAX_ALLOCATORS 16 /* names in an E record (image.h: IMAGE_MAX_ALLOCATORS) */
#define RECORD_MAX_DEPTH 256

struct proc;

/* true while a log is being written or calls are traced: the hooks below cost one test when
 * neither. */
extern bool record_on;

/*
 * --trace-calls: every process's calls of the malloc heap, as they are accounted and logged
 * (calltrace.h prints them; the command installs it, as this layer is below the writers). ns:
 * since the process started; hook: the allocation function (hooks.h), -1 if unknown.
 */
struct record_calls {
	void (*alloc)(void *ctx, int pid, uint32_t tid, uint64_t ns, int hook, uint64_t size,
		      uint64_t ptr);
	void (*free)(void *ctx, int pid, uint32_t tid, uint64_t ns, uint64_t ptr);
	void (*take)(void *ctx, int pid, uint32_t tid, uint64_t ptr);
	void (*put_back)(void *ctx, int pid, uint32_t tid, uint64_t ns);
	void (*release)(void *ctx, int pid, uint32_t tid, uint64_t ns, bool known);
	void (*flush)(void *ctx); /* before a report: print what is held back */
};
void record_trace_calls(const struct record_calls *calls, void *ctx);

/* Print what ct holds back (a realloc waiting for its new block): before a report. */
void record_trace_flush(void);

/* Start the log at path ("-": standard output); depth: --depth, for the S record. Return 0 or
 * -errno (nothing was started). */
int record_open(const char *path, unsigned depth);

/* child was forked from parent and is traced too (-f): it is in the log from here on, if the
 * parent is. */
void record_fork(const struct proc *child, const struct proc *parent);

/* What an E record says: the process at its final report (tracer.c fills it from the report). */
struct record_ending {
	uint64_t now_ns;
	bool exited;
	int exit_status;
	bool has_statm;
	uint64_t statm_vss, statm_rss, statm_shared;
	const char *command;
	const char *const *allocators; /* the allocators traced, or NULL */
	unsigned nallocators;
};

/* The final figures of p were reported: end its log there. */
void record_end(struct proc *p, const struct record_ending *end);

/* Flush, end the stream and stop the writer. Return 0, or -errno from a write that failed. */
int record_close(void);

void record_alloc_slow(struct proc *p, pid_t tid, uint64_t ptr, uint64_t size, uint32_t bt,
		       uint64_t ns);
void record_free_slow(struct proc *p, pid_t tid, uint64_t ptr, uint64_t ns);
void record_library_free_slow(struct proc *p, pid_t tid, uint64_t ptr);

/* The blocks p's table holds now were live before the attach (the inventory just seeded
 * them): they start the log. */
void record_seeded(struct proc *p);
void record_realloc_slow(struct proc *p, pid_t tid, char what, unsigned heap, uint64_t arg,
			 uint64_t ns);
void record_range_slow(struct proc *p, pid_t tid, unsigned heap, uint64_t lo, uint64_t hi,
		       uint64_t ns);

/* The table of p gained block ptr (a key, table.h: table_key) from backtrace bt (its index in
 * p->table) at time ns. The log follows the first process that allocates and the children
 * record_fork announced. */
static inline void record_alloc(struct proc *p, pid_t tid, uint64_t ptr, uint64_t size,
				uint32_t bt, uint64_t ns)
{
	if (record_on)
		record_alloc_slow(p, tid, ptr, size, bt, ns);
}

/* ptr (a key) was released by a free or a successful realloc (known to the table or not), in a
 * call made at ns (with entry stubs, heaptrace sees it later). */
static inline void record_free(struct proc *p, pid_t tid, uint64_t ptr, uint64_t ns)
{
	if (record_on && ptr)
		record_free_slow(p, tid, ptr, ns);
}

/* A free the C library made of a block not live as thread tid ended (the L record). */
static inline void record_library_free(struct proc *p, pid_t tid, uint64_t ptr)
{
	if (record_on && ptr)
		record_library_free_slow(p, tid, ptr);
}

/*
 * A realloc's old block, as calls.c moves it (table.h: table_take, table_put_back,
 * table_heap_release), so a replay sees the heap as the tracer did at every moment. ptr is a
 * key; heap that of the realloc function (hooks.h).
 */
static inline void record_take(struct proc *p, pid_t tid, uint64_t ptr, uint64_t ns)
{
	if (record_on)
		record_realloc_slow(p, tid, 'T', table_key_heap(ptr), ptr, ns);
}

static inline void record_put_back(struct proc *p, pid_t tid, unsigned heap)
{
	if (record_on)
		record_realloc_slow(p, tid, 'P', heap, 0, 0);
}

/* ns: when the realloc was called, as its new block's time */
static inline void record_release(struct proc *p, pid_t tid, unsigned heap, bool known,
				  uint64_t ns)
{
	if (record_on)
		record_realloc_slow(p, tid, 'R', heap, known, ns);
}

/* The addresses [lo, hi) of heap's blocks were released (table_release_range) by a call made
 * at ns. */
static inline void record_range(struct proc *p, pid_t tid, unsigned heap, uint64_t lo,
				uint64_t hi, uint64_t ns)
{
	if (record_on)
		record_range_slow(p, tid, heap, lo, hi, ns);
}

#endif
