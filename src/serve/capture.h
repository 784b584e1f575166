/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_CAPTURE_H
#define HEAPTRACE_CAPTURE_H

/*
 * What --serve takes of the tracing state, at the tracer's loop's turn, for the server's thread
 * to encode on its own (server.h says why). The server thread asks for one snapshot at a time
 * through capture_ask and is woken through the fd of capture_init when it is ready; the loop
 * answers in capture_step, which costs a flag's read while no snapshot is asked for (the loop
 * comes back to it every CAPTURE_TICK_NS at least).
 *
 * A profile snapshot is a copy of the process's per-backtrace figures and its summaries (no live
 * blocks: those stay in the loop's table), of its modules with their build-ids, and the
 * process's struct sframes brought up to date with every frame of the copy. Symbolising new
 * frames is done in slices of CAPTURE_SLICE_NS per turn, so a first request on a large program
 * spreads over many turns instead of holding the reader.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heap/hooks.h"
#include "heap/table.h"
#include "output/pprof.h"
#include "serve/frames.h"

#define CAPTURE_SLICE_NS 4000000
#define CAPTURE_TICK_NS 10000000 /* how often the loop looks for a question (a flag's read) */
#define CAPTURE_ALLOCATORS 16

struct capture_profile {
	struct table t; /* bts, pcs and the summaries only: no blocks */
	pid_t pid;
	char *command;
	uint64_t now_ns, elapsed_ns, wall_ns;
	bool has_statm;
	uint64_t statm[3];
	char *allocators[CAPTURE_ALLOCATORS];
	unsigned nallocators;
	struct pprof_module *mods; /* paths and build-ids owned by frames */
	size_t nmods;
	struct sframes *frames; /* NULL when not symbolised (the base of a delta) */
};

/* One traced process's figures for /metrics. */
struct capture_proc {
	pid_t pid;
	char *command;
	struct table_summary sum[HEAP_MAX]; /* [h]: heap h's (hook_heap_name) */
	bool has_statm;
	uint64_t rss;
	uint64_t ring_waiting; /* bytes of records the entry stubs wrote that are not read yet */
	uint64_t calls_not_seen; /* proc.calls_not_seen: the counts are not exact when nonzero */
};

struct capture_metrics {
	struct capture_proc *procs;
	unsigned nprocs;
	uint64_t ring_records, ring_waits, ring_backlog_max; /* ring_stats */
};

enum capture_kind { CAPTURE_PROFILE, CAPTURE_PROFILE_FIGURES, CAPTURE_METRICS };

/* What the answer says besides its data. */
enum capture_status {
	CAPTURE_OK,
	CAPTURE_NO_PROCESS, /* no such traced process (or it ended meanwhile) */
	CAPTURE_CHANGED, /* it ran execve meanwhile: ask again */
	CAPTURE_CLOSED, /* tracing is over */
};

/* Set up the mailbox; return the fd (an eventfd) that becomes readable when an answer is
 * ready, or -errno. */
int capture_init(void);

/* The default process of ?pid= (the launched or first attached one). */
void capture_set_default(pid_t pid);

/* Server thread: ask for a snapshot of pid (0: the default process). One at a time. */
void capture_ask(enum capture_kind kind, pid_t pid);

/* Server thread, once the fd is readable: the answer (its data in *prof or *met, the caller's
 * to free with capture_free_*), or false if it is not ready yet. */
bool capture_take(enum capture_status *st, struct capture_profile **prof,
		  struct capture_metrics **met);

/* Loop: answer a pending question, within the time slices above. *until is lowered so the loop
 * comes back soon while one is pending. */
void capture_step(uint64_t now, uint64_t *until);

/* Loop, tracing over: every question from now on is answered CAPTURE_CLOSED. */
void capture_close(void);

/* After the server thread ended: free everything. */
void capture_fini(void);

void capture_free_profile(struct capture_profile *p);
void capture_free_metrics(struct capture_metrics *m);

#endif
