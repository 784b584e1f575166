// SPDX-License-Identifier: GPL-2.0-only
/* The entry stubs' records, parsed (ringrec.h). */
#include <string.h>

#include "account/ringrec.h"
#include "stub_arch.h"

static uint64_t get64(const uint8_t *at)
{
	uint64_t v;

	memcpy(&v, at, 8);
	return v;
}

static uint32_t get32(const uint8_t *at)
{
	uint32_t v;

	memcpy(&v, at, 4);
	return v;
}

/* The shortest record of each kind. */
static uint32_t min_len(unsigned kind)
{
	return kind == STUB_KIND_ENTRY ? STUB_REC_ENTRY :
	       kind == STUB_KIND_FREE  ? STUB_REC_FREE :
					 STUB_REC_RETURN;
}

static void parse_entry(const uint8_t *r, struct ringrec *o)
{
	for (unsigned i = 0; i < 3; i++)
		o->args[i] = get64(r + STUB_RE_ARG0 + 8 * i);
	o->sp = get64(r + STUB_RE_SP);
	o->tsc = get64(r + STUB_RE_TIME);
	o->key = get64(r + STUB_RE_THREAD);
	o->copy = get32(r + STUB_RE_COPY);
	o->returns = get32(r + STUB_RE_RETURNS) != 0;
}

/* An entry's Python section, if its length leaves room for one after the stack copy. */
static enum ringrec_state parse_python(const uint8_t *r, struct ringrec *o)
{
	uint32_t off = (STUB_REC_ENTRY + o->copy + 15) & ~15u;
	uint64_t count;

	if (o->len <= off)
		return RINGREC_OK;
	count = get64(r + off + STUB_PY_COUNT);
	if (o->len - off < STUB_PY_FRAMES || count > STUB_PY_MAX_FRAMES ||
	    count > (o->len - off - STUB_PY_FRAMES) / STUB_PY_FRAME)
		return RINGREC_BROKEN;
	o->py_off = off;
	o->py_count = (uint32_t)count;
	return RINGREC_OK;
}

enum ringrec_state ringrec_parse(const uint8_t *r, uint64_t pos, uint64_t size,
				 struct ringrec *o)
{
	uint64_t tag = __atomic_load_n((const uint64_t *)(r + STUB_R_TAG), __ATOMIC_ACQUIRE);

	/* every field named: gcc zeroes the struct with plain stores, not a rep stos per record */
	*o = (struct ringrec){ .kind = tag & 15, .len = get32(r + STUB_R_LEN),
			       .word = get32(r + STUB_R_HOOK), .key = 0, .tsc = 0,
			       .args = { 0, 0, 0 }, .sp = 0, .copy = 0, .returns = false,
			       .py_off = 0, .py_count = 0, .cookie = 0, .result = 0 };
	if ((tag & ~(uint64_t)15) != pos || o->kind < STUB_KIND_ENTRY ||
	    o->kind > STUB_KIND_RETURN)
		return RINGREC_NOT_YET;
	if (o->len < 16 || o->len % 16 || o->len > RINGREC_MAX || o->len > size ||
	    o->len < min_len(o->kind))
		return RINGREC_BROKEN;
	switch (o->kind) {
	case STUB_KIND_ENTRY:
		parse_entry(r, o);
		/* the unwinder reads copy bytes from STUB_REC_ENTRY: within the record only */
		if (o->copy > o->len - STUB_REC_ENTRY)
			return RINGREC_BROKEN;
		return parse_python(r, o);
	case STUB_KIND_FREE:
		o->args[0] = get64(r + STUB_RF_PTR);
		o->key = get64(r + STUB_RF_THREAD);
		o->tsc = get64(r + STUB_RF_TIME);
		break;
	default:
		o->cookie = get64(r + STUB_RR_COOKIE);
		o->result = get64(r + STUB_RR_RESULT);
		o->key = get64(r + STUB_RR_THREAD);
	}
	return RINGREC_OK;
}
