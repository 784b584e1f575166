/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PAIRMAP_H
#define HEAPTRACE_PAIRMAP_H

/* (a, b) -> a nonzero u32 (callers store index + 1), open addressing: the id tables of the
 * viewer formats (heaptrack.c, pprof.c). Zero-initialise; free(m.v) when done. */
#include <stdint.h>

struct pairmap {
	struct pair {
		uint64_t a, b;
		uint32_t v;
	} *v;
	uint32_t n, cap;
};

/* The value slot of (a, b): 0 when new, and the caller then sets it and counts it in n. */
uint32_t *pairmap_slot(struct pairmap *m, uint64_t a, uint64_t b);

/* FNV-1a of s, its start mixed with seed (a second seed probes past a collision). */
static inline uint64_t pairmap_str_hash(const char *s, uint64_t seed)
{
	uint64_t h = 1469598103934665603ULL ^ seed;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

#endif
