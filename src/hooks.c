// SPDX-License-Identifier: GPL-2.0-only
/* The malloc family and the counting rules of man/heaptrace.1 ("What is counted"), call by call. */
#include <string.h>

#include "hooks.h"

const struct hook_desc hook_table[HOOK_COUNT] = {
	[HOOK_MALLOC] = { "malloc", 1, false },
	[HOOK_CALLOC] = { "calloc", 2, false },
	[HOOK_REALLOC] = { "realloc", 2, false },
	[HOOK_REALLOCARRAY] = { "reallocarray", 3, false },
	[HOOK_FREE] = { "free", 1, true },
	[HOOK_POSIX_MEMALIGN] = { "posix_memalign", 3, false, true },
	[HOOK_ALIGNED_ALLOC] = { "aligned_alloc", 2, false },
	[HOOK_MEMALIGN] = { "memalign", 2, false },
	[HOOK_VALLOC] = { "valloc", 1, false },
	[HOOK_PVALLOC] = { "pvalloc", 1, false },
};

int hook_lookup(const char *name)
{
	for (int i = 0; i < HOOK_COUNT; i++)
		if (!strcmp(hook_table[i].name, name))
			return i;
	return -1;
}

/* nmemb * size, or 0 on overflow (the call then fails and returns NULL anyway). */
static uint64_t mul_size(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? 0 : r;
}

bool hook_needs_memptr(const struct hook_call *c, uint64_t retval)
{
	return c->id == HOOK_POSIX_MEMALIGN && retval == 0;
}

void hook_effect(const struct hook_call *c, uint64_t retval, uint64_t memptr_value,
		 struct hook_effect *e)
{
	const uint64_t *a = c->args;
	uint64_t size;

	memset(e, 0, sizeof(*e));
	switch (c->id) {
	case HOOK_MALLOC:
	case HOOK_VALLOC:
	case HOOK_PVALLOC:
		e->allocated = retval;
		e->size = a[0];
		break;
	case HOOK_CALLOC:
		e->allocated = retval;
		e->size = mul_size(a[0], a[1]);
		break;
	case HOOK_ALIGNED_ALLOC:
	case HOOK_MEMALIGN:
		e->allocated = retval;
		e->size = a[1];
		break;
	case HOOK_POSIX_MEMALIGN:
		if (retval == 0) {
			e->allocated = memptr_value;
			e->size = a[2];
		}
		break;
	case HOOK_REALLOC:
	case HOOK_REALLOCARRAY:
		size = c->id == HOOK_REALLOC ? a[1] : mul_size(a[1], a[2]);
		if (retval) {
			/* success: the old block (if any) is released, the new one added */
			e->freed = a[0];
			e->allocated = retval;
			e->size = size;
		} else if (a[0] && size == 0 &&
			   (c->id == HOOK_REALLOC || (a[1] == 0 || a[2] == 0))) {
			e->freed = a[0]; /* realloc(p, 0) freed p and returned NULL (glibc) */
		}
		break;
	case HOOK_FREE:
		e->freed = a[0];
		break;
	case HOOK_COUNT:
		break;
	}
	if (!e->allocated)
		e->size = 0;
}
