/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_QUICKMEMO_H
#define HEAPTRACE_QUICKMEMO_H

/*
 * Backtraces of the quick steps (fallback.c) remembered by what they read. A quick backtrace
 * is a function of its first pc, sp and frame pointer, of the stack words its steps read and
 * of the process's modules (their code and CFI, fixed while they are mapped: the memo goes with
 * the rest of fallback.c's caches when they change). So a later backtrace from the same pc, sp
 * and frame pointer whose words read the same is the same: a loop that allocates from one
 * place, the usual case, is unwound once and then checked a word or two per frame.
 */
#include <stdbool.h>
#include <stdint.h>

#define QMEMO_WORDS 64 /* stack words a remembered backtrace may have read */
#define QMEMO_FRAMES 32 /* frames a remembered backtrace may have */

/* What a backtrace starts from, and how deep it may go. */
struct qmemo_key {
	uint64_t pc, sp, fp;
	bool fp_known;
	unsigned max;
};

/*
 * The words one backtrace read (qmemo_read); over: more than QMEMO_WORDS, not kept. fp_used:
 * a step found a frame by the frame pointer the backtrace started with, before any step
 * restored it from the stack (fp_restored). A backtrace that never did is the same whatever
 * that register held: code built without frame pointers keeps a variable there, which differs
 * from one call to the next.
 */
struct qmemo_log {
	unsigned n;
	bool over, fp_used, fp_restored;
	uint64_t addr[QMEMO_WORDS], val[QMEMO_WORDS];
};

struct qmemo;

struct qmemo *qmemo_new(void);
void qmemo_free(struct qmemo *m);

/* A backtrace kept for k whose every word reads the same now (unwind_read_current): its
 * frames in pcs, and their number; else 0. */
unsigned qmemo_find(struct qmemo *m, const struct qmemo_key *k, uint64_t *pcs);

/* unwind_read_current, the word noted in log. */
int qmemo_read(struct qmemo_log *log, uint64_t addr, uint64_t *val);

/* Keep the backtrace pcs (n frames) made from k with the words in log. */
void qmemo_keep(struct qmemo *m, const struct qmemo_key *k, const struct qmemo_log *log,
		const uint64_t *pcs, unsigned n);

#endif
