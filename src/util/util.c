// SPDX-License-Identifier: GPL-2.0-only
/* Allocation wrappers that never return NULL, and the clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

static void *check(void *p)
{
	if (!p) {
		fputs("heaptrace: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

void *xmalloc(size_t size)
{
	return check(malloc(size ? size : 1));
}

void *xcalloc(size_t nmemb, size_t size)
{
	return check(calloc(nmemb ? nmemb : 1, size ? size : 1));
}

void *xrealloc(void *ptr, size_t size)
{
	return check(realloc(ptr, size ? size : 1));
}

char *xstrdup(const char *s)
{
	return check(strdup(s));
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
