/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SIDE_H
#define HEAPTRACE_SIDE_H

/*
 * One side of a report or a diff (cmd/side.c): a log replayed up to the moment the options ask
 * for, its process, and a symbolizer opened on the files the log recorded, found on this
 * machine by build-id.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cmd/offline.h"
#include "cmd/replay.h"
#include "heap/lifetime.h"
#include "output/calltrace.h"
#include "symbols/symbols.h"

struct offline_resolve {
	struct symbolizer *sym;
	const struct replay *rp;
};

/* A report_resolve_fn (report.h), ctx a struct offline_resolve: frame 0 gets the public name
 * (malloc, not __libc_malloc; a C++ operator demangled), as in the live report
 * (snapshot_resolve_frame). */
void side_resolve_named(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out);

/* The recorded file of module i of rp on this machine (the sysroot's copy, a debug file by
 * build-id, the same path here, or with --debuginfod the servers' debug file), or NULL. */
char *side_find_file(const struct offline_opts *o, const struct replay *rp, size_t i);

/* A log replayed up to the moment o asks for, and the symbolizer of its process p. */
struct side {
	struct replay *rp;
	struct replay *p; /* the process --pid chose, else the first */
	struct offline_resolve res;
	char **files;
	char *dpath;
	bool leaked; /* lt marks the blocks never freed (--only-leaked at a moment) */
	struct lifetime lt;
	struct calltrace ct;
};

/* Replay o's log to its moment into sd; one: the command reports one process. Return 0 or
 * -EINVAL (said). */
int side_open(const struct offline_opts *o, struct side *sd, bool one);
void side_close(struct side *sd);

#endif
