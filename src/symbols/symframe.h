/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SYMFRAME_H
#define HEAPTRACE_SYMFRAME_H

/*
 * A symbolised frame, as symbols.h's sym_resolve fills it and the writers print it. A header
 * of its own so that inlines.h, which symbols.c uses, needs nothing of symbols.h.
 */
#include <stdbool.h>
#include <stdint.h>

/* A function inlined at a frame's pc, and where in it the pc (or the next inlined call) is. */
struct sym_inline {
	const char *function;
	const char *file; /* base name */
	int line; /* -1 when unknown */
};

/* One symbolised frame. NULL / 0 / -1 fields are unknown. Strings stay owned by the resolver. */
struct sym_frame {
	const char *function;
	uint64_t offset; /* pc - start of function (valid when function != NULL) */
	const char *module;
	const char *file; /* base name of the source file */
	int line; /* -1 when unknown */
	/* the calls inlined at pc, innermost first: inlined[0] holds pc, each is called from the
	 * next, and the last from function at file:line (which is then that call's line) */
	unsigned ninlined;
	const struct sym_inline *inlined;
	uint64_t module_offset; /* pc - where module is mapped (valid when module != NULL) */
	bool jit; /* code a JIT generated, named from its perf map (perfmap.h); no module */
};

#endif
