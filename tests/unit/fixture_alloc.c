// SPDX-License-Identifier: GPL-2.0-only
/* A fixture library that defines part of the malloc family (an allocator replacement), with
 * memalign and aligned_alloc at one address as in glibc. Never called: only its symbols are read. */
#include <stddef.h>

static char arena[1 << 12];

void *malloc(size_t n)
{
	return n < sizeof(arena) ? arena : NULL;
}

void free(void *p)
{
	(void)p;
}

void *memalign(size_t al, size_t n)
{
	return al && n < sizeof(arena) ? arena : NULL;
}

void *aligned_alloc(size_t al, size_t n) __attribute__((alias("memalign")));

int fixture_marker(void)
{
	return 42;
}
