/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_UTIL_H
#define HEAPTRACE_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Allocation helpers: they print one line and exit(2) when memory runs out. */
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);

/* 64-bit mixer (splitmix64 finaliser) for the hash tables. */
static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
