/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_LOGREAD_H
#define HEAPTRACE_LOGREAD_H

/*
 * The decoder of a --record log (format in record.h): its header, the zstd stream and the
 * numbers and strings records are made of. It trusts nothing: a number longer than 64 bits,
 * a string longer than the format allows or data that ends inside a record set state and why
 * for the caller to say in one line. What the records mean is the replay's (cmd/replay.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "util/progress.h"

#define LOGREAD_IN_SIZE (64u << 10) /* bytes of the file read at once */

/* states; LOGREAD_STOPPED: the caller stopped at the moment it wanted */
enum { LOGREAD_OK, LOGREAD_EOF, LOGREAD_TRUNCATED, LOGREAD_CORRUPT, LOGREAD_STOPPED };

struct logread {
	const char *name;
	int fd;
	ZSTD_DCtx *z;
	uint8_t *in, *out;
	ZSTD_inBuffer ib;
	size_t out_cap, pos, len;
	size_t zret; /* last ZSTD_decompressStream result: 0 at the end of a frame */
	uint64_t consumed; /* decompressed bytes taken */
	int state;
	const char *why;
	struct progress pg; /* bytes of the file read, of its size */
	uint64_t nread;
	uint32_t version; /* the log's format version */
};

/* Check the header at r->fd and keep its version. Return 0 or -EINVAL / -errno (said). */
int logread_header(struct logread *r);

/* More decompressed data; false at the end of the data or on an error (r->state says). */
bool logread_fill(struct logread *r);

/* The next byte; false at the end of the data (r->state says why). */
static inline bool logread_byte(struct logread *r, uint8_t *b)
{
	if (r->pos == r->len && !logread_fill(r))
		return false;
	*b = r->out[r->pos++];
	r->consumed++;
	return true;
}

/* Inside a record the data may not end: ok, with the end made LOGREAD_TRUNCATED. */
bool logread_need(struct logread *r, bool ok);

/* The log breaks a rule (why): false, state LOGREAD_CORRUPT. */
bool logread_corrupt(struct logread *r, const char *why);

/* An unsigned LEB128 varint, a zigzag-encoded signed one; false on an error (state). */
bool logread_u(struct logread *r, uint64_t *v);
bool logread_s(struct logread *r, int64_t *v);

/* A string or byte array of at most cap - 1 bytes, NUL-terminated; its length in *len (if
 * len). False on an error (state). */
bool logread_bytes(struct logread *r, char *buf, size_t cap, size_t *len);

#endif
