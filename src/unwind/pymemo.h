/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PYMEMO_H
#define HEAPTRACE_PYMEMO_H

/*
 * Backtraces merged with an entry record's Python frames (python.c), remembered by what they
 * were merged from: the record's code objects and instruction words, and the native frames.
 * Where every code object is one python.c takes from its cache without a read (watched: its
 * block's release is seen), the merge is a function of those alone while none of them is
 * released, so a later record with the same words gets the same backtrace without the look-up
 * of each frame's code object, line and interned frame. A loop that allocates from one Python
 * line, the usual case, merges once. pymemo_forget drops every entry at once (a generation):
 * python.c calls it when a code object it watched is released or its cache starts again.
 */
#include <stdint.h>

#define PYMEMO_SLOTS 256 /* a power of two */
#define PYMEMO_FRAMES 16 /* Python frames a remembered merge may have been made from */
#define PYMEMO_PCS 32 /* native frames in, and merged frames out, at most */

/* What a merge is made from: frames codes[i], instrs[i] (i < nframes) into pcs[0..n), at
 * most max frames out. */
struct pymemo_key {
	const uint64_t *codes, *instrs, *pcs;
	unsigned nframes, n, max;
};

struct pymemo;

struct pymemo *pymemo_new(void);
void pymemo_free(struct pymemo *m);
void pymemo_forget(struct pymemo *m);

/* The merge remembered for k: its frames into out, and their number; else 0. */
unsigned pymemo_find(const struct pymemo *m, const struct pymemo_key *k, uint64_t *out);

/* Remember that k merged into out[0..n). */
void pymemo_keep(struct pymemo *m, const struct pymemo_key *k, const uint64_t *out, unsigned n);

#endif
