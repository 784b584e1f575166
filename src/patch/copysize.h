/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_COPYSIZE_H
#define HEAPTRACE_COPYSIZE_H

/*
 * How many bytes of stack an entry stub copies (STUB_D_COPY), learned from what the unwinder
 * reads of the copies. Most backtraces need a few hundred bytes of the 8 KiB a stub copies by
 * default, and the copy is most of what an entry record costs: the program's time copying it,
 * and the reader's, whose loads miss the cache on memory another CPU has just written.
 *
 * A window of records is watched at the size the stubs copy; then the size becomes a quarter
 * more than the most any of their unwinds read, plus COPYSIZE_SLACK, rounded up to
 * COPYSIZE_ALIGN, at least COPYSIZE_MIN and at most the full size (--stack-copy). An unwind
 * that stopped short for want of a word past the end of a copy that the learned size cut (not
 * the stack's end) is cut short: the size goes back to the full one at once, and the next
 * window, twice as long, learns again. So a program whose stacks deepen loses frames of the
 * records already in the ring when it does, each such backtrace marked as stopped, and fewer
 * each time.
 */
#include <stdbool.h>
#include <stdint.h>

#define COPYSIZE_MIN 256u
#define COPYSIZE_ALIGN 128u
#define COPYSIZE_SLACK 128u
#define COPYSIZE_WINDOW 4096u /* records in the first window */
#define COPYSIZE_WINDOW_MAX (1u << 24)

struct copysize {
	bool learn; /* false: the stubs always copy full */
	unsigned full; /* --stack-copy: the most, and the size until one is learned */
	unsigned now, prev; /* what the stubs copy now, and before the last change */
	unsigned used; /* most bytes an unwind read of its copy in this window */
	unsigned seen, window; /* records seen in this window, and its length */
	unsigned least; /* the smallest size the stubs were set to copy */
	uint64_t cut; /* backtraces cut short by a learned size */
};

void copysize_init(struct copysize *c, unsigned full, bool learn);

/*
 * After the unwind of a record whose copy of the stack is len bytes from sp: the unwind read
 * the first used bytes of it, and over if it wanted a word just past its end. Return true if
 * the backtrace was cut short by a learned size. *put: the size the stubs are to copy from now
 * on, or 0 to leave it.
 */
bool copysize_seen(struct copysize *c, uint64_t sp, unsigned len, unsigned used, bool over,
		   unsigned *put);

#endif
