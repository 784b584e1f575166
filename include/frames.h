/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_FRAMES_H
#define HEAPTRACE_FRAMES_H

/*
 * Walking the words of a tracee's stack through a memory-read callback, so that the same code
 * serves a live thread (remote_read) and a copy of its stack, and can be unit tested on any
 * host.
 */
#include <stdint.h>
#include <sys/types.h>

/* Read up to len bytes at addr into buf. Return the number read (short at an unmapped page)
 * or -errno. */
typedef ssize_t (*frames_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Called with each whole word read and its address. */
typedef void (*frames_word_fn)(void *ctx, uint64_t addr, uint64_t val);

/* Most bytes frames_each_word reads: a bound for a corrupt or unknown stack top. */
#define FRAMES_WALK_MAX (64u << 10)

/*
 * Call fn for every word_size-byte word (4 or 8, little-endian) from lo rounded down to a word
 * up to hi, at most FRAMES_WALK_MAX bytes, stopping at the first failed or short read.
 * Return the number of words passed to fn.
 */
size_t frames_each_word(uint64_t lo, uint64_t hi, unsigned word_size, frames_read_fn read,
			void *rctx, frames_word_fn fn, void *fctx);

#endif
