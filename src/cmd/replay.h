/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_REPLAY_H
#define HEAPTRACE_REPLAY_H

/*
 * A --record log replayed (cmd/replay.c) for `heaptrace report` and `diff`: one table per
 * recorded process, filled by the same table.c rules the tracer applied, so every figure of the
 * live report comes out the same.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cmd/offline.h"
#include "eventlog/record.h"
#include "heap/hooks.h"
#include "heap/table.h"
#include "heap/timeline.h"
#include "util/maps.h"

struct calltrace;
struct html_series;
struct perfmap;
struct htk;
struct lifetime;

/* The recorded process as the log says it. */
struct replay {
	struct table t;
	struct modlist mods;
	struct perfmap *jit; /* the names of JIT code (J records), NULL if none */
	uint8_t (*ids)[64];
	uint8_t *idlen;
	struct {
		uint64_t pc;
		unsigned hook;
	} hookpcs[64]; /* frame-0 pcs of the allocation functions, as B records named them */
	unsigned nhookpcs;
	struct held {
		uint64_t tid;
		struct block blk;
		uint64_t id; /* lifetime.h */
	} *held; /* realloc's old blocks taken out and not yet released or put back, per thread */
	size_t nheld, held_cap;
	size_t ids_cap;
	int pid;
	uint64_t start_ns, now_ns;
	unsigned machine;
	unsigned depth; /* --depth of the run, 0: unknown */
	char command[RECORD_MAX_STRING + 1];
	bool started, ended, exited, has_statm;
	/* the allocators traced (summary.allocators), from the E record of a version 2 log */
	char *allocators[RECORD_MAX_ALLOCATORS];
	unsigned nallocators;
	bool has_allocators;
	enum offline_at at; /* where to stop */
	uint64_t at_ns; /* AT_TIME: since start_ns */
	uint64_t at_peak; /* AT_PEAK: the peak's live bytes */
	struct timeline tl;
	struct htk *htk; /* --format=heaptrack: the events go there too */
	struct html_series *series; /* --format=html: the top backtraces over time */
	struct lifetime *lt; /* --only-leaked at a moment: the blocks' ids, or NULL */
	struct calltrace *ct; /* --calls: the calls are printed, or NULL */
	int exit_status;
	uint64_t statm[3];
	/* the log's processes (S, then N records), procs[0] this one; kept in the first */
	struct replay **procs;
	size_t nprocs, cur; /* cur: the process the records are of now (W) */
	struct replay *root; /* the one with procs */
	/* its Python frames (Y records), by the index backtraces hold (frames.h: FRAMES_PYTHON) */
	struct replay_pyframe {
		char *function, *file;
		int line;
	} *py;
	uint32_t npy, py_cap;
	char *heap_names[HEAP_MAX]; /* in the root: by number (H records), [0] "malloc" */
	uint64_t end_seq; /* 1 + how many processes ended before this one, 0 if it did not */
	uint64_t nended; /* in the root */
	/* in the root: the pid of the process --pid chose (0: none, the first process is
	 * followed and every one's calls printed), whose peak --at=peak is, whose events the
	 * heaptrack file and the html series follow, and whose calls --calls prints; the first
	 * process of that pid in the log (sel_found) */
	int sel_pid;
	bool sel_found, sel_peak;
	struct htk *sel_htk;
	struct html_series *sel_series;
	struct calltrace *sel_ct;
};

/* Replay the log of o into a new replay, up to the moment at (at_ns after the start for
 * AT_TIME, at_peak live bytes for AT_PEAK); its events also go to htk, lt and ct where not
 * NULL. Return it, or NULL (said). */
struct replay *replay_file(const struct offline_opts *o, enum offline_at at, uint64_t at_ns,
			   uint64_t at_peak, struct htk *htk, struct lifetime *lt,
			   struct calltrace *ct);
void replay_free(struct replay *rp);

#endif
