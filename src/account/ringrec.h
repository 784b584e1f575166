/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_RINGREC_H
#define HEAPTRACE_RINGREC_H

/*
 * One record of the entry stubs' ring (arch/stub_layout.h), parsed: pure, so that the unit
 * tests can feed it records a program scribbled on. The ring is the program's memory too:
 * nothing in a record is trusted beyond what this checks.
 */
#include <stdbool.h>
#include <stdint.h>

#define RINGREC_MAX (1u << 20) /* the longest record heaptrace accepts */

struct ringrec {
	unsigned kind; /* STUB_KIND_* */
	uint32_t len; /* bytes, the header and all */
	uint32_t word; /* the thunk's word: hook | STUB_HOOK_* */
	uint64_t key; /* the thread pointer */
	uint64_t tsc; /* entry, free: time stamp */
	uint64_t args[3]; /* entry: the arguments; free: the pointer in args[0] */
	uint64_t sp; /* entry: sp at the entry */
	uint32_t copy; /* entry: bytes of stack copied, from the record's STUB_REC_ENTRY */
	bool returns; /* entry: its return goes through the trampoline */
	/* entry: its Python section (stub_layout.h: STUB_PY_*) at this offset, with py_count
	 * frames; 0 and 0 if none */
	uint32_t py_off, py_count;
	uint64_t cookie, result; /* return */
};

enum ringrec_state {
	RINGREC_NOT_YET, /* reserved, not written yet (or not there) */
	RINGREC_OK,
	RINGREC_BROKEN, /* written, but not a record the stubs write */
};

/*
 * Parse the record at r, at ring position pos, in a ring of size bytes (r has at least
 * min(size, RINGREC_MAX) bytes readable: the ring is mapped twice in a row). Fill *out and
 * return RINGREC_OK, or say why not.
 */
enum ringrec_state ringrec_parse(const uint8_t *r, uint64_t pos, uint64_t size,
				 struct ringrec *out);

#endif
