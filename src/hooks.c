// SPDX-License-Identifier: GPL-2.0-only
/* The traced functions and the counting rules of man/heaptrace.1 ("What is counted"), call by
 * call. */
#include <stdio.h>
#include <string.h>

#include "hooks.h"

#define ALLOC(n, sz, cnt) { n, HK_ALLOC, sz, cnt, -1, 0 }
#define NEW(n, fl) { n, HK_ALLOC, 0, -1, -1, fl }
#define DELETE(n) { n, HK_FREE, -1, -1, 0, HF_NESTS }

const struct hook_desc hook_table[HOOK_COUNT] = {
	[HOOK_MALLOC] = ALLOC("malloc", 0, -1),
	[HOOK_CALLOC] = ALLOC("calloc", 1, 0),
	[HOOK_REALLOC] = { "realloc", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_REALLOCARRAY] = { "reallocarray", HK_REALLOC, 2, 1, 0, 0 },
	[HOOK_FREE] = { "free", HK_FREE, -1, -1, 0, 0 },
	[HOOK_POSIX_MEMALIGN] = { "posix_memalign", HK_ALLOC_MEMPTR, 2, -1, 0, 0 },
	[HOOK_ALIGNED_ALLOC] = ALLOC("aligned_alloc", 1, -1),
	[HOOK_MEMALIGN] = ALLOC("memalign", 1, -1),
	[HOOK_VALLOC] = ALLOC("valloc", 0, -1),
	[HOOK_PVALLOC] = ALLOC("pvalloc", 0, -1),
	/* the nothrow forms return NULL instead of throwing (libstdc++'s catch what the plain
	 * form they call throws, so nothing unwinds past them) */
	[HOOK_NEW] = NEW("_Znwm", HF_THROWS),
	[HOOK_NEW_ARRAY] = NEW("_Znam", HF_THROWS),
	[HOOK_NEW_NOTHROW] = NEW("_ZnwmRKSt9nothrow_t", 0),
	[HOOK_NEW_ARRAY_NOTHROW] = NEW("_ZnamRKSt9nothrow_t", 0),
	[HOOK_NEW_ALIGNED] = NEW("_ZnwmSt11align_val_t", HF_THROWS),
	[HOOK_NEW_ARRAY_ALIGNED] = NEW("_ZnamSt11align_val_t", HF_THROWS),
	[HOOK_NEW_ALIGNED_NOTHROW] = NEW("_ZnwmSt11align_val_tRKSt9nothrow_t", 0),
	[HOOK_NEW_ARRAY_ALIGNED_NOTHROW] = NEW("_ZnamSt11align_val_tRKSt9nothrow_t", 0),
	[HOOK_DELETE] = DELETE("_ZdlPv"),
	[HOOK_DELETE_ARRAY] = DELETE("_ZdaPv"),
	[HOOK_DELETE_SIZED] = DELETE("_ZdlPvm"),
	[HOOK_DELETE_ARRAY_SIZED] = DELETE("_ZdaPvm"),
	[HOOK_DELETE_NOTHROW] = DELETE("_ZdlPvRKSt9nothrow_t"),
	[HOOK_DELETE_ARRAY_NOTHROW] = DELETE("_ZdaPvRKSt9nothrow_t"),
	[HOOK_DELETE_ALIGNED] = DELETE("_ZdlPvSt11align_val_t"),
	[HOOK_DELETE_ARRAY_ALIGNED] = DELETE("_ZdaPvSt11align_val_t"),
	[HOOK_DELETE_SIZED_ALIGNED] = DELETE("_ZdlPvmSt11align_val_t"),
	[HOOK_DELETE_ARRAY_SIZED_ALIGNED] = DELETE("_ZdaPvmSt11align_val_t"),
	[HOOK_DELETE_ALIGNED_NOTHROW] = DELETE("_ZdlPvSt11align_val_tRKSt9nothrow_t"),
	[HOOK_DELETE_ARRAY_ALIGNED_NOTHROW] = DELETE("_ZdaPvSt11align_val_tRKSt9nothrow_t"),
	[HOOK_UNWIND] = { "_Unwind_RaiseException", HK_UNWIND, -1, -1, -1, 0 },
};

/*
 * Where a C++ operator's name spells size_t (m on LP64, j on ILP32), or 0: right after the
 * "_Znw"/"_Zna" of operator new, after the "_ZdlPv"/"_ZdaPv" of a sized operator delete.
 */
static size_t size_t_at(const char *name)
{
	if (!strncmp(name, "_Znw", 4) || !strncmp(name, "_Zna", 4))
		return 4;
	if ((!strncmp(name, "_ZdlPv", 6) || !strncmp(name, "_ZdaPv", 6)) &&
	    (name[6] == 'm' || name[6] == 'j'))
		return 6;
	return 0;
}

int hook_lookup(const char *name)
{
	size_t at = size_t_at(name);

	for (int i = 0; i < HOOK_COUNT; i++) {
		const char *h = hook_table[i].name;

		if (!strcmp(h, name))
			return i;
		/* ILP32: the same name with j for size_t */
		if (at && name[at] == 'j' && size_t_at(h) == at && !strncmp(h, name, at) &&
		    h[at] == 'm' && !strcmp(h + at + 1, name + at + 1))
			return i;
	}
	return -1;
}

const char *hook_symbol(int h, unsigned word_size, char *buf, size_t len)
{
	size_t at;

	snprintf(buf, len, "%s", hook_table[h].name);
	at = size_t_at(buf);
	if (at && word_size == 4 && at < len && buf[at] == 'm')
		buf[at] = 'j';
	return buf;
}

unsigned hook_nargs(const struct hook_desc *d)
{
	int n = d->size > d->count ? d->size : d->count;

	n = n > d->ptr ? n : d->ptr;
	return (unsigned)(n + 1);
}

/* nmemb * size, or 0 on overflow (the call then fails and returns NULL anyway). */
static uint64_t mul_size(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? 0 : r;
}

bool hook_needs_memptr(const struct hook_call *c, uint64_t retval)
{
	return hook_table[c->id].kind == HK_ALLOC_MEMPTR && retval == 0;
}

/* The size a call asked for: args[size], times args[count] if it has one (0 on overflow). */
static uint64_t requested(const struct hook_desc *d, const uint64_t *a)
{
	uint64_t size = d->size >= 0 ? a[d->size] : 0;

	return d->count >= 0 ? mul_size(a[d->count], size) : size;
}

/* A resize of p to nothing: size 0 (or count 0), not an overflow. */
static bool zero_request(const struct hook_desc *d, const uint64_t *a)
{
	return (d->size >= 0 && a[d->size] == 0) || (d->count >= 0 && a[d->count] == 0);
}

void hook_effect(const struct hook_call *c, uint64_t retval, uint64_t memptr_value,
		 struct hook_effect *e)
{
	const struct hook_desc *d = &hook_table[c->id];
	const uint64_t *a = c->args;

	memset(e, 0, sizeof(*e));
	switch (d->kind) {
	case HK_ALLOC:
		e->allocated = retval;
		e->size = requested(d, a);
		break;
	case HK_ALLOC_MEMPTR:
		if (retval == 0) {
			e->allocated = memptr_value;
			e->size = requested(d, a);
		}
		break;
	case HK_REALLOC:
		if (retval) {
			/* success: the old block (if any) is released, the new one added */
			e->freed = a[d->ptr];
			e->allocated = retval;
			e->size = requested(d, a);
		} else if (a[d->ptr] && zero_request(d, a)) {
			e->freed = a[d->ptr]; /* realloc(p, 0) freed p and returned NULL (glibc) */
		}
		break;
	case HK_FREE:
		/* counted at the entry; with HF_NESTS its return is caught for nesting only */
		if (!(d->flags & HF_NESTS))
			e->freed = a[d->ptr];
		break;
	case HK_UNWIND:
		break;
	}
	if (!e->allocated)
		e->size = 0;
}
