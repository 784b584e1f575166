/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SERVE_FRAMES_H
#define HEAPTRACE_SERVE_FRAMES_H

/*
 * The symbolised frames of one traced process, kept from one request to the next: filled on
 * the tracer's loop (only a pc not seen before is looked up), read by the server's thread when
 * it encodes a profile. The two never overlap: the server thread asks for a snapshot, the loop
 * answers it (filling this cache), and only then does the server thread read it, before it asks
 * for the next one. Strings are copied in once each, so the cache grows with the distinct frames
 * and names of the process, never with the requests.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/symframe.h"
#include "util/pairmap.h"

struct sframes {
	pid_t pid;
	uint32_t epoch; /* the process's table epoch: an execve empties the cache */
	struct pairmap ids; /* (pc, frame 0?) -> index + 1 into v */
	struct sym_frame *v;
	uint32_t n, cap;
	/* the interned strings: open addressing over a power-of-two array, NULL = empty */
	char **strs;
	uint32_t nstrs, strs_cap;
	/* build-ids by module path (hex, "" when it has none) */
	struct pairmap mod_ids; /* interned path pointer -> index + 1 into build_ids */
	const char **build_ids;
	uint32_t nbuild_ids;
};

void sframes_init(struct sframes *c, pid_t pid, uint32_t epoch);
void sframes_free(struct sframes *c);

/* Is the frame of pc (frame 0: the allocation function's entry) in the cache? */
bool sframes_has(struct sframes *c, uint64_t pc, bool frame0);

/* Keep a copy of sf as the frame of pc. */
void sframes_add(struct sframes *c, uint64_t pc, bool frame0, const struct sym_frame *sf);

/* A report_resolve_fn (output/report.h) over a struct sframes: a pc not in it is unknown. */
void sframes_resolve(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out);

/* The string s interned in c (the same pointer for equal strings); NULL for NULL. */
const char *sframes_str(struct sframes *c, const char *s);

/* The build-id (hex) of the module at path, read once (NULL: it has none). */
const char *sframes_build_id(struct sframes *c, const char *path);

#endif
