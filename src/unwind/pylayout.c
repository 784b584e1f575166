// SPDX-License-Identifier: GPL-2.0-only
/* CPython's layouts by version, its line table and the merge of Python frames (pylayout.h). */
#include <errno.h>
#include <string.h>

#include "unwind/pylayout.h"

/*
 * 3.11, x86_64 and the other LP64 targets: offsetof() in the 3.11.7 headers (tests/unit/
 * test_pylayout.c checks them where the headers are installed). The structures read did not
 * change within 3.11 (the releases keep their ABI).
 */
static const struct pylayout py311 = {
	.version = 3 << 8 | 11,
	.rt_tstate_current = 576,
	.rt_finalizing = 24,
	.rt_tss_key = 592,
	.rt_interp_main = 48,
	.is_threads_head = 16,
	.ts_next = 8,
	.ts_cframe = 56,
	.ts_thread_id = 152,
	.cf_current_frame = 8,
	.fr_code = 32,
	.fr_previous = 48,
	.fr_prev_instr = 56,
	.fr_is_entry = 68,
	.fr_owner = 69,
	.fr_size = 72,
	.co_size = 16,
	.co_firstlineno = 72,
	.co_filename = 112,
	.co_name = 120,
	.co_qualname = 128,
	.co_linetable = 136,
	.co_code = 184,
	.co_head = 144,
	.ob_type = 8,
	.ob_size = 16,
	.bytes_data = 32,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_data = 48,
	.str_compact_data = 72,
	.str_kind_shift = 2,
	.str_compact_bit = 5,
	.str_ascii_bit = 6,
	.owner_max = 2,
};

const struct pylayout *pylayout_find(unsigned major, unsigned minor)
{
	if (major == 3 && minor == 11)
		return &py311;
	return NULL;
}

/* Objects/locations.md: an unsigned varint in 6-bit groups, bit 6 says another follows. */
static uint32_t varint(const uint8_t **p, const uint8_t *end)
{
	uint32_t val = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*p >= end || shift > 24)
			return 0;
		b = *(*p)++;
		val |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return val;
}

static int svarint(const uint8_t **p, const uint8_t *end)
{
	uint32_t v = varint(p, end);

	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/* The line delta of the entry at p (its first byte has bit 7 set). */
static int line_delta(const uint8_t *p, const uint8_t *end)
{
	unsigned code = (*p >> 3) & 15;
	const uint8_t *q = p + 1;

	switch (code) {
	case 13: /* no column */
	case 14: /* long form */
		return svarint(&q, end);
	case 10: /* one-line forms */
	case 11:
	case 12:
		return (int)code - 10;
	default: /* short forms, no location */
		return 0;
	}
}

int pylayout_line(const uint8_t *table, size_t len, int firstlineno, int64_t addrq)
{
	const uint8_t *p = table, *end = table + len;
	int line = firstlineno;
	int64_t start = 0;

	if (addrq < 0)
		return firstlineno;
	while (p < end && *p & 128) {
		int64_t stop = start + ((*p & 7) + 1) * 2;

		line += line_delta(p, end);
		if (addrq < stop)
			return (*p >> 3) == 0x1f ? -1 : line;
		start = stop;
		do
			p++;
		while (p < end && !(*p & 128));
	}
	return -1;
}

int pylayout_str(const struct pylayout *l, uint32_t state, uint64_t length, unsigned *data_off,
		 unsigned *kind)
{
	unsigned k = (state >> l->str_kind_shift) & 7;

	if (!(state >> l->str_compact_bit & 1) || (k != 1 && k != 2 && k != 4) || length > 4096)
		return -EINVAL;
	*kind = k;
	*data_off = state >> l->str_ascii_bit & 1 ? l->str_ascii_data : l->str_compact_data;
	return 0;
}

size_t pylayout_utf8(const void *chars, size_t n, unsigned kind, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n && cap; i++) {
		uint32_t c = kind == 1 ? ((const uint8_t *)chars)[i] :
			     kind == 2 ? ((const uint16_t *)chars)[i] : ((const uint32_t *)chars)[i];
		char buf[4];
		size_t k;

		if (c < 0x80) {
			buf[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			buf[0] = (char)(0xc0 | c >> 6);
			buf[1] = (char)(0x80 | (c & 63));
			k = 2;
		} else if (c < 0x10000 && (c < 0xd800 || c > 0xdfff)) {
			buf[0] = (char)(0xe0 | c >> 12);
			buf[1] = (char)(0x80 | (c >> 6 & 63));
			buf[2] = (char)(0x80 | (c & 63));
			k = 3;
		} else if (c >= 0x10000 && c <= 0x10ffff) {
			buf[0] = (char)(0xf0 | c >> 18);
			buf[1] = (char)(0x80 | (c >> 12 & 63));
			buf[2] = (char)(0x80 | (c >> 6 & 63));
			buf[3] = (char)(0x80 | (c & 63));
			k = 4;
		} else {
			return SIZE_MAX; /* a surrogate or past Unicode: not a str's text */
		}
		if (o + k >= cap)
			break;
		memcpy(out + o, buf, k);
		o += k;
	}
	if (cap)
		out[o] = '\0';
	return o;
}

unsigned pylayout_merge(const uint64_t *pcs, unsigned n, const uint64_t *py, const bool *entry,
			unsigned m, bool (*eval)(void *ctx, uint64_t pc), void *ctx,
			uint64_t *out, unsigned max)
{
	unsigned o = 0, j = 0, placed = 1;

	for (unsigned i = 0; i < n && o < max; i++) {
		if (!eval(ctx, pcs[i]) || j == m) {
			out[o++] = pcs[i];
			continue;
		}
		/* this invocation of the loop ran py[j] up to the first with is_entry set */
		while (j < m && o < max) {
			bool last = entry[j];

			out[o++] = py[j++];
			if (last)
				break;
		}
		placed = o;
	}
	/* the native walk ended before the loop: the Python frames left take the place of the
	 * native ones after the last placed (the caller's frame is kept) */
	if (j < m && o + (m - j) > max) {
		unsigned keep = m - j < max ? max - (m - j) : 0;

		if (keep < placed)
			keep = placed < o ? placed : o;
		o = keep;
	}
	while (j < m && o < max)
		out[o++] = py[j++];
	return o;
}
