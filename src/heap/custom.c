// SPDX-License-Identifier: GPL-2.0-only
/* The --alloc, --realloc and --free specs: parsed, checked, and added to the hook table. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "custom"
#include "heap/custom.h"
#include "heap/hooks.h"
#include "util/log.h"
#include "util/util.h"

/* Arguments are counted from 1, up to the most a call keeps (HOOK_MAX_ARGS). Those past the
 * third, which no entry stub records (HOOK_STUB_ARGS), are read at a breakpoint: from the
 * registers, or from the stack past them (calls.c). */
#define ARG_MAX HOOK_MAX_ARGS
#define NAME_MAX_LEN 64

static const char *const option[] = { [CUSTOM_ALLOC] = "--alloc", [CUSTOM_REALLOC] = "--realloc",
				      [CUSTOM_FREE] = "--free" };
static const char *const form[] = { [CUSTOM_ALLOC] = "FUNC:SIZE_ARG[:COUNT_ARG][@HEAP]",
				    [CUSTOM_REALLOC] = "FUNC:PTR_ARG:SIZE_ARG[@HEAP]",
				    [CUSTOM_FREE] = "FUNC:PTR_ARG[@HEAP]" };

static struct spec {
	enum custom_shape shape;
	char func[NAME_MAX_LEN + 1];
	char heap[NAME_MAX_LEN + 1]; /* "" until committed: the default heap */
	int args[2]; /* from 1; 0 if absent */
} specs[HOOK_CUSTOM_MAX];
static unsigned nspecs;
static bool found[HOOK_CUSTOM_MAX];

/* A symbol name (C or mangled C++) or a heap name: letters, digits, '_', '.', '$'. */
static bool valid_name(const char *s, size_t n)
{
	if (!n || n > NAME_MAX_LEN || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.$", s[i]))
			return false;
	return true;
}

/* An argument number at s (1..ARG_MAX, no leading 0), up to a ':', '@' or the end; 0 if
 * none. */
static int parse_arg(const char *s, const char **end)
{
	int n = 0;

	if (*s < '1' || *s > '9')
		return 0;
	for (; isdigit((unsigned char)*s) && n <= ARG_MAX; s++)
		n = 10 * n + (*s - '0');
	if (n > ARG_MAX || (*s && !strchr(":@", *s)))
		return 0;
	*end = s;
	return n;
}

int custom_add(enum custom_shape shape, const char *spec, char *why, size_t len)
{
	unsigned want = shape == CUSTOM_ALLOC ? 1 : shape == CUSTOM_REALLOC ? 2 : 1;
	size_t n = strcspn(spec, ":@");
	struct spec sp = { .shape = shape };
	const char *s = spec + n;
	unsigned got = 0;

	if (nspecs == HOOK_CUSTOM_MAX) {
		snprintf(why, len, "more than %d --alloc, --realloc and --free functions",
			 HOOK_CUSTOM_MAX);
		return -ENOSPC;
	}
	if (!valid_name(spec, n))
		goto bad;
	memcpy(sp.func, spec, n);
	while (*s == ':' && got < 2) {
		sp.args[got] = parse_arg(s + 1, &s);
		if (!sp.args[got++])
			goto bad;
	}
	/* --alloc takes one or two numbers, the others exactly theirs; all different */
	if (got < want || got > (shape == CUSTOM_ALLOC ? 2u : want) ||
	    (got == 2 && sp.args[0] == sp.args[1]))
		goto bad;
	if (*s == '@') {
		n = strlen(s + 1);
		if (!valid_name(s + 1, n))
			goto bad;
		memcpy(sp.heap, s + 1, n);
	} else if (*s) {
		goto bad;
	}
	if (!strcmp(sp.heap, hook_heap_name(HEAP_MALLOC)) || !strcmp(sp.heap, "mmap") ||
	    !strcmp(sp.heap, "pymalloc")) {
		snprintf(why, len, "%s=%s: the heap name %s is heaptrace's own", option[shape],
			 spec, sp.heap);
		return -EINVAL;
	}
	specs[nspecs++] = sp;
	return 0;
bad:
	snprintf(why, len, "invalid %s '%s' (%s; arguments counted from 1 to %d, all different)",
		 option[shape], spec, form[shape], ARG_MAX);
	return -EINVAL;
}

/* The heap of a spec without @HEAP: named after the first --alloc's FUNC, else the first
 * --realloc's; NULL if there is none. */
static const char *default_heap(void)
{
	for (unsigned i = 0; i < nspecs; i++)
		if (specs[i].shape == CUSTOM_ALLOC)
			return specs[i].func;
	for (unsigned i = 0; i < nspecs; i++)
		if (specs[i].shape == CUSTOM_REALLOC)
			return specs[i].func;
	return NULL;
}

/* True if some spec allocates in heap. */
static bool heap_allocates(const char *heap)
{
	for (unsigned i = 0; i < nspecs; i++)
		if (specs[i].shape != CUSTOM_FREE && !strcmp(specs[i].heap, heap))
			return true;
	return false;
}

static void to_desc(const struct spec *sp, struct hook_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->name = sp->func;
	d->size = d->count = d->ptr = -1;
	switch (sp->shape) {
	case CUSTOM_ALLOC:
		d->kind = HK_ALLOC;
		d->size = (int8_t)(sp->args[0] - 1);
		d->count = (int8_t)(sp->args[1] - 1);
		break;
	case CUSTOM_REALLOC:
		d->kind = HK_REALLOC;
		d->ptr = (int8_t)(sp->args[0] - 1);
		d->size = (int8_t)(sp->args[1] - 1);
		break;
	case CUSTOM_FREE:
		d->kind = HK_FREE;
		d->ptr = (int8_t)(sp->args[0] - 1);
		break;
	}
}

void custom_found(int h)
{
	if (h >= HOOK_CUSTOM0 && h < HOOK_COUNT)
		found[h - HOOK_CUSTOM0] = true;
}

void custom_warn_unfound(void)
{
	for (int h = HOOK_CUSTOM0; h < HOOK_COUNT; h++)
		if (hook_table[h].name && !found[h - HOOK_CUSTOM0])
			pr_warn("%s: traced in no process (no module defines a function of that "
				"name, or it was left out)", hook_table[h].name);
}

int custom_commit(char *why, size_t len)
{
	const char *def = default_heap();

	for (unsigned i = 0; i < nspecs; i++)
		if (!specs[i].heap[0] && def)
			snprintf(specs[i].heap, sizeof(specs[i].heap), "%s", def);
	for (unsigned i = 0; i < nspecs; i++) {
		struct spec *sp = &specs[i];
		struct hook_desc d;
		int ret;

		if (!heap_allocates(sp->heap)) {
			snprintf(why, len, "%s=%s%s%s: no --alloc or --realloc puts blocks in %s%s",
				 option[sp->shape], sp->func, sp->heap[0] ? "@" : "", sp->heap,
				 sp->heap[0] ? "heap " : "", sp->heap[0] ? sp->heap : "its heap");
			return -EINVAL;
		}
		to_desc(sp, &d);
		ret = hook_add_custom(&d, sp->heap);
		if (ret == -EEXIST) {
			snprintf(why, len, "%s=%s: %s is traced already%s", option[sp->shape],
				 sp->func, sp->func,
				 hook_lookup(sp->func) >= HOOK_CUSTOM0 ? " (named twice)" :
									 " (heaptrace's own list)");
			return ret;
		}
		if (ret < 0) {
			/* malloc's, mmap's and pymalloc's are heaptrace's own */
			snprintf(why, len, "more than %d heaps of --alloc, --realloc and --free",
				 HEAP_MAX - 3);
			return ret;
		}
	}
	return 0;
}
