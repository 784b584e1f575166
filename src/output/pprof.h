/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PPROF_H
#define HEAPTRACE_PPROF_H

/*
 * --format=pprof: the table as a gzipped profile.proto (third_party/pprof/profile.proto), the
 * format pprof, speedscope and the Perfetto UI read. One sample per backtrace with four values:
 * alloc_objects/count and alloc_space/bytes (every allocation ever made from it),
 * inuse_objects/count and inuse_space/bytes (its live blocks at the moment of the report);
 * inuse_space is the default. One location per address, in the mapping of its module (with its
 * build-id); one line per function of a frame, inlined ones first, as the format wants.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output/report.h"
#include "heap/table.h"

/* A mapped file: [start, limit) holds its mappings, file_offset is the file offset at start. */
struct pprof_module {
	const char *path;
	const char *build_id; /* hex, or NULL */
	uint64_t start, limit, file_offset;
};

struct pprof_info {
	const struct pprof_module *mods;
	size_t nmods;
	report_resolve_fn resolve; /* names each frame, as for report_write */
	void *resolve_ctx;
	uint64_t duration_ns;
	const char *comment; /* the command line, or NULL */
	uint64_t time_ns; /* when it was taken (ns since the epoch), 0: not said */
	const char *default_type; /* the sample type shown first; NULL: inuse_space */
};

/* Whether this heaptrace was built with libprotobuf-c and zlib (pprof output). */
bool pprof_available(void);

/* Write t as a gzipped profile to f. Return 0, -ENOTSUP (built without it) or -errno. */
int pprof_write(FILE *f, const struct table *t, const struct pprof_info *pi);

#endif
