// SPDX-License-Identifier: GPL-2.0-only
/* The --record log's decoder: header, zstd stream, varints and strings (logread.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#define PR_DOMAIN "offline"
#include "eventlog/logread.h"
#include "eventlog/record.h"
#include "util/log.h"

bool logread_fill(struct logread *r)
{
	while (r->pos == r->len) {
		ZSTD_outBuffer ob = { r->out, r->out_cap, 0 };

		if (r->ib.pos == r->ib.size) {
			ssize_t n = read(r->fd, r->in, LOGREAD_IN_SIZE);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				r->state = r->zret ? LOGREAD_TRUNCATED : LOGREAD_EOF;
				if (n < 0)
					r->why = strerror(errno);
				return false;
			}
			r->ib = (ZSTD_inBuffer){ r->in, (size_t)n, 0 };
			r->nread += n;
			progress_update(&r->pg, r->nread);
		}
		r->zret = ZSTD_decompressStream(r->z, &ob, &r->ib);
		if (ZSTD_isError(r->zret)) {
			r->state = LOGREAD_CORRUPT;
			r->why = ZSTD_getErrorName(r->zret);
			return false;
		}
		r->pos = 0;
		r->len = ob.pos;
	}
	return true;
}

/* Inside a record the data may not end. */
bool logread_need(struct logread *r, bool ok)
{
	if (!ok && r->state == LOGREAD_EOF)
		r->state = LOGREAD_TRUNCATED;
	return ok;
}

bool logread_corrupt(struct logread *r, const char *why)
{
	r->state = LOGREAD_CORRUPT;
	r->why = why;
	return false;
}

bool logread_u(struct logread *r, uint64_t *v)
{
	uint8_t b;

	*v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (!logread_need(r, logread_byte(r, &b)))
			return false;
		if (shift == 63 && b > 1)
			break;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return logread_corrupt(r, "a number longer than 64 bits");
}

bool logread_s(struct logread *r, int64_t *v)
{
	uint64_t u;

	if (!logread_u(r, &u))
		return false;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return true;
}

/* A string or byte array of at most cap - 1 bytes, NUL-terminated; its length in *len. */
bool logread_bytes(struct logread *r, char *buf, size_t cap, size_t *len)
{
	uint64_t n;
	uint8_t b;

	if (!logread_u(r, &n))
		return false;
	if (n >= cap)
		return logread_corrupt(r, "a string longer than the format allows");
	for (uint64_t i = 0; i < n; i++) {
		if (!logread_need(r, logread_byte(r, &b)))
			return false;
		buf[i] = (char)b;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return true;
}

/* Check the header. Return 0 or -EINVAL (said). */
int logread_header(struct logread *r)
{
	uint8_t h[RECORD_HEADER_SIZE];
	size_t got = 0;
	uint32_t version;

	while (got < sizeof(h)) {
		ssize_t n = read(r->fd, h + got, sizeof(h) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pr_err("%s: %s", r->name, strerror(errno));
			return -errno;
		}
		if (!n)
			break;
		got += n;
	}
	if (got < 8 || memcmp(h, RECORD_MAGIC, 8)) {
		pr_err("%s: not a heaptrace log (written by heaptrace --record)", r->name);
		return -EINVAL;
	}
	if (got < sizeof(h)) {
		pr_err("%s: truncated log (its header is cut short)", r->name);
		return -EINVAL;
	}
	version = h[8] | h[9] << 8 | h[10] << 16 | (uint32_t)h[11] << 24;
	if (version > RECORD_VERSION || !version) {
		pr_err("%s: log format version %u; this heaptrace reads version %u and older",
		       r->name, version, RECORD_VERSION);
		return -EINVAL;
	}
	r->version = version;
	return 0;
}
