// SPDX-License-Identifier: GPL-2.0-only
/* The traced functions and the counting rules of man/heaptrace.1 ("What is counted"), call by
 * call. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "heap/hooks.h"

#define ALLOC(n, sz, cnt) { n, HK_ALLOC, sz, cnt, -1, 0 }
#define NEW(n, fl) { n, HK_ALLOC, 0, -1, -1, fl }
#define DELETE(n) { n, HK_FREE, -1, -1, 0, HF_NESTS }
#define FREE(n) DELETE(n)
/* a copy of a string, its size read at the return (HF_STRING); buf: the caller's buffer */
#define STRDUP(n, buf, fl) { n, HK_ALLOC, -1, -1, buf, HF_STRING | (fl) }
/* recalloc(p, count, size, alignment, offset) */
#define RECALLOC_AT(n) { n, HK_REALLOC, 2, 1, 0, 0, HEAP_MALLOC, 5 }
/* mimalloc's re*alloc(heap, p, [count,] size, ...) of w argument words (0: up to 4) */
#define HEAP_RE(n, cnt, w) { n, HK_REALLOC, (cnt) < 0 ? 2 : 3, cnt, 1, 0, HEAP_MALLOC, w }

/* CPython's PyObject_* and PyMem_* (HEAP_PYMALLOC) */
#define PY_ALLOC(n, sz, cnt) { n, HK_ALLOC, sz, cnt, -1, 0, HEAP_PYMALLOC }
#define PY_REALLOC(n) { n, HK_REALLOC, 1, -1, 0, 0, HEAP_PYMALLOC }
#define PY_FREE(n) { n, HK_FREE, -1, -1, 0, HF_NESTS, HEAP_PYMALLOC }

struct hook_desc hook_table[HOOK_COUNT] = {
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
	/*
	 * Replacement allocators. Where one of these is an alias of a name above (tcmalloc's
	 * tc_malloc is its malloc), the breakpoint is the one above's. A release other than the
	 * C library's free may call another traced function (mimalloc's mi_free_size calls
	 * mi_free): HF_NESTS.
	 */
	[HOOK_CFREE] = FREE("cfree"),
	/* jemalloc: mallocx(size, flags), rallocx(ptr, size, flags), xallocx(ptr, size, extra,
	 * flags), sdallocx(ptr, size, flags), dallocx(ptr, flags) */
	[HOOK_JE_MALLOCX] = ALLOC("mallocx", 0, -1),
	[HOOK_JE_RALLOCX] = { "rallocx", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_JE_XALLOCX] = { "xallocx", HK_RESIZE, 1, -1, 0, 0 },
	[HOOK_JE_SDALLOCX] = FREE("sdallocx"),
	[HOOK_JE_DALLOCX] = FREE("dallocx"),
	/* tcmalloc (gperftools) */
	[HOOK_TC_MALLOC] = ALLOC("tc_malloc", 0, -1),
	[HOOK_TC_MALLOC_SKIP_NEW_HANDLER] = ALLOC("tc_malloc_skip_new_handler", 0, -1),
	[HOOK_TC_CALLOC] = ALLOC("tc_calloc", 1, 0),
	[HOOK_TC_REALLOC] = { "tc_realloc", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_TC_FREE] = FREE("tc_free"),
	[HOOK_TC_CFREE] = FREE("tc_cfree"),
	[HOOK_TC_FREE_SIZED] = FREE("tc_free_sized"),
	[HOOK_TC_MEMALIGN] = ALLOC("tc_memalign", 1, -1),
	[HOOK_TC_POSIX_MEMALIGN] = { "tc_posix_memalign", HK_ALLOC_MEMPTR, 2, -1, 0, 0 },
	[HOOK_TC_VALLOC] = ALLOC("tc_valloc", 0, -1),
	[HOOK_TC_PVALLOC] = ALLOC("tc_pvalloc", 0, -1),
	[HOOK_TC_NEW] = NEW("tc_new", HF_THROWS),
	[HOOK_TC_NEWARRAY] = NEW("tc_newarray", HF_THROWS),
	[HOOK_TC_NEW_NOTHROW] = NEW("tc_new_nothrow", 0),
	[HOOK_TC_NEWARRAY_NOTHROW] = NEW("tc_newarray_nothrow", 0),
	[HOOK_TC_DELETE] = FREE("tc_delete"),
	[HOOK_TC_DELETEARRAY] = FREE("tc_deletearray"),
	[HOOK_TC_DELETE_SIZED] = FREE("tc_delete_sized"),
	[HOOK_TC_DELETEARRAY_SIZED] = FREE("tc_deletearray_sized"),
	[HOOK_TC_DELETE_NOTHROW] = FREE("tc_delete_nothrow"),
	[HOOK_TC_DELETEARRAY_NOTHROW] = FREE("tc_deletearray_nothrow"),
	/* mimalloc: its main allocation API (mi_heap_*(heap, ...) take the heap first). Its
	 * posix_memalign, memalign, valloc, pvalloc, aligned_alloc, reallocarray and reallocarr
	 * forms call these, as mi_heap_reallocn and mi_heap_reallocf call mi_heap_realloc; the
	 * rest are after the mapping calls */
	[HOOK_MI_MALLOC] = ALLOC("mi_malloc", 0, -1),
	[HOOK_MI_ZALLOC] = ALLOC("mi_zalloc", 0, -1),
	[HOOK_MI_CALLOC] = ALLOC("mi_calloc", 1, 0),
	[HOOK_MI_MALLOCN] = ALLOC("mi_mallocn", 1, 0),
	[HOOK_MI_REALLOC] = { "mi_realloc", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_MI_REALLOCN] = { "mi_reallocn", HK_REALLOC, 2, 1, 0, 0 },
	[HOOK_MI_REALLOCF] = { "mi_reallocf", HK_REALLOC, 1, -1, 0, HF_FREES_ON_FAIL },
	[HOOK_MI_REZALLOC] = { "mi_rezalloc", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_MI_RECALLOC] = { "mi_recalloc", HK_REALLOC, 2, 1, 0, 0 },
	[HOOK_MI_EXPAND] = { "mi_expand", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_MI_MALLOC_ALIGNED] = ALLOC("mi_malloc_aligned", 0, -1),
	[HOOK_MI_ZALLOC_ALIGNED] = ALLOC("mi_zalloc_aligned", 0, -1),
	[HOOK_MI_CALLOC_ALIGNED] = ALLOC("mi_calloc_aligned", 1, 0),
	[HOOK_MI_REALLOC_ALIGNED] = { "mi_realloc_aligned", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_MI_HEAP_MALLOC] = ALLOC("mi_heap_malloc", 1, -1),
	[HOOK_MI_HEAP_ZALLOC] = ALLOC("mi_heap_zalloc", 1, -1),
	[HOOK_MI_HEAP_CALLOC] = ALLOC("mi_heap_calloc", 2, 1),
	[HOOK_MI_HEAP_REALLOC] = { "mi_heap_realloc", HK_REALLOC, 2, -1, 1, 0 },
	[HOOK_MI_FREE] = FREE("mi_free"),
	[HOOK_MI_FREE_SIZE] = FREE("mi_free_size"),
	[HOOK_MI_FREE_ALIGNED] = FREE("mi_free_aligned"),
	[HOOK_MI_NEW] = NEW("mi_new", HF_THROWS),
	[HOOK_MI_NEW_NOTHROW] = NEW("mi_new_nothrow", 0),
	[HOOK_MI_NEW_ALIGNED] = NEW("mi_new_aligned", HF_THROWS),
	[HOOK_MI_NEW_ALIGNED_NOTHROW] = NEW("mi_new_aligned_nothrow", 0),
	[HOOK_MI_NEW_N] = { "mi_new_n", HK_ALLOC, 1, 0, -1, HF_THROWS },
	[HOOK_MI_NEW_REALLOC] = { "mi_new_realloc", HK_REALLOC, 1, -1, 0, HF_THROWS },
	/* jemalloc with the je_ prefix */
	[HOOK_JEP_MALLOC] = ALLOC("je_malloc", 0, -1),
	[HOOK_JEP_CALLOC] = ALLOC("je_calloc", 1, 0),
	[HOOK_JEP_REALLOC] = { "je_realloc", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_JEP_FREE] = FREE("je_free"),
	[HOOK_JEP_POSIX_MEMALIGN] = { "je_posix_memalign", HK_ALLOC_MEMPTR, 2, -1, 0, 0 },
	[HOOK_JEP_ALIGNED_ALLOC] = ALLOC("je_aligned_alloc", 1, -1),
	[HOOK_JEP_MEMALIGN] = ALLOC("je_memalign", 1, -1),
	[HOOK_JEP_VALLOC] = ALLOC("je_valloc", 0, -1),
	[HOOK_JEP_MALLOCX] = ALLOC("je_mallocx", 0, -1),
	[HOOK_JEP_RALLOCX] = { "je_rallocx", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_JEP_XALLOCX] = { "je_xallocx", HK_RESIZE, 1, -1, 0, 0 },
	[HOOK_JEP_SDALLOCX] = FREE("je_sdallocx"),
	[HOOK_JEP_DALLOCX] = FREE("je_dallocx"),
	[HOOK_UNWIND] = { "_Unwind_RaiseException", HK_UNWIND, -1, -1, -1, 0 },
	/* the mapping calls: named by hook_enable_mmap */
	[HOOK_MMAP] = { NULL, HK_MMAP, 1, 3, -1, 0, HEAP_MMAP },
	[HOOK_MMAP64] = { NULL, HK_MMAP, 1, 3, -1, 0, HEAP_MMAP },
	[HOOK_MUNMAP] = { NULL, HK_UNMAP, 1, -1, 0, 0, HEAP_MMAP },
	[HOOK_MREMAP] = { NULL, HK_MREMAP, 2, 1, 0, 0, HEAP_MMAP },
	[HOOK_SBRK] = { NULL, HK_SBRK, 0, -1, -1, 0, HEAP_MMAP },
	/*
	 * mimalloc's entry points that reach its internals without a traced one (2.0, Debian
	 * 12's; the _at forms take an offset after the alignment, which is not kept). The string
	 * copies' blocks are as long as the string they return, with its terminator: mi_strndup's
	 * is the string's first n bytes and a terminator, mi_realpath's the resolved path's copy
	 * (mi_heap_strndup of it; with a buffer of the caller's, realpath's result is that
	 * buffer), mi_wcsdup's of 16-bit units; mi_dupenv_s(&buf, &size, name) returns 0 and
	 * mi_strdup(getenv(name)) in *buf, or NULL when unset (mi_wdupenv_s: EINVAL on Linux).
	 */
	[HOOK_MI_MALLOC_SMALL] = ALLOC("mi_malloc_small", 0, -1),
	[HOOK_MI_ZALLOC_SMALL] = ALLOC("mi_zalloc_small", 0, -1),
	[HOOK_MI_STRDUP] = STRDUP("mi_strdup", -1, 0),
	[HOOK_MI_STRNDUP] = STRDUP("mi_strndup", -1, 0),
	[HOOK_MI_REALPATH] = STRDUP("mi_realpath", 1, HF_CALLER_BUF),
	[HOOK_MI_MBSDUP] = STRDUP("mi_mbsdup", -1, 0),
	[HOOK_MI_WCSDUP] = STRDUP("mi_wcsdup", -1, HF_WIDE),
	[HOOK_MI_DUPENV_S] = { "mi_dupenv_s", HK_ALLOC_MEMPTR, -1, -1, 0, HF_STRING },
	[HOOK_MI_WDUPENV_S] = { "mi_wdupenv_s", HK_ALLOC_MEMPTR, -1, -1, 0, HF_STRING | HF_WIDE },
	[HOOK_MI_MALLOC_ALIGNED_AT] = ALLOC("mi_malloc_aligned_at", 0, -1),
	[HOOK_MI_ZALLOC_ALIGNED_AT] = ALLOC("mi_zalloc_aligned_at", 0, -1),
	[HOOK_MI_CALLOC_ALIGNED_AT] = ALLOC("mi_calloc_aligned_at", 1, 0),
	[HOOK_MI_REALLOC_ALIGNED_AT] = { "mi_realloc_aligned_at", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_MI_REZALLOC_ALIGNED] = { "mi_rezalloc_aligned", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_MI_REZALLOC_ALIGNED_AT] = { "mi_rezalloc_aligned_at", HK_REALLOC, 1, -1, 0, 0 },
	[HOOK_MI_RECALLOC_ALIGNED] = { "mi_recalloc_aligned", HK_REALLOC, 2, 1, 0, 0 },
	[HOOK_MI_RECALLOC_ALIGNED_AT] = RECALLOC_AT("mi_recalloc_aligned_at"),
	[HOOK_MI_ALIGNED_RECALLOC] = { "mi_aligned_recalloc", HK_REALLOC, 2, 1, 0, 0 },
	[HOOK_MI_ALIGNED_OFFSET_RECALLOC] = RECALLOC_AT("mi_aligned_offset_recalloc"),
	[HOOK_MI_HEAP_MALLOCN] = ALLOC("mi_heap_mallocn", 2, 1),
	[HOOK_MI_HEAP_MALLOC_SMALL] = ALLOC("mi_heap_malloc_small", 1, -1),
	[HOOK_MI_HEAP_STRDUP] = STRDUP("mi_heap_strdup", -1, 0),
	[HOOK_MI_HEAP_STRNDUP] = STRDUP("mi_heap_strndup", -1, 0),
	[HOOK_MI_HEAP_REALPATH] = STRDUP("mi_heap_realpath", 2, HF_CALLER_BUF),
	[HOOK_MI_HEAP_MALLOC_ALIGNED] = ALLOC("mi_heap_malloc_aligned", 1, -1),
	[HOOK_MI_HEAP_MALLOC_ALIGNED_AT] = ALLOC("mi_heap_malloc_aligned_at", 1, -1),
	[HOOK_MI_HEAP_ZALLOC_ALIGNED] = ALLOC("mi_heap_zalloc_aligned", 1, -1),
	[HOOK_MI_HEAP_ZALLOC_ALIGNED_AT] = ALLOC("mi_heap_zalloc_aligned_at", 1, -1),
	[HOOK_MI_HEAP_CALLOC_ALIGNED] = ALLOC("mi_heap_calloc_aligned", 2, 1),
	[HOOK_MI_HEAP_CALLOC_ALIGNED_AT] = { "mi_heap_calloc_aligned_at", HK_ALLOC, 2, 1, -1, 0,
					     HEAP_MALLOC, 5 },
	[HOOK_MI_HEAP_REALLOC_ALIGNED] = { "mi_heap_realloc_aligned", HK_REALLOC, 2, -1, 1, 0 },
	[HOOK_MI_HEAP_REALLOC_ALIGNED_AT] = HEAP_RE("mi_heap_realloc_aligned_at", -1, 5),
	[HOOK_MI_HEAP_REZALLOC] = HEAP_RE("mi_heap_rezalloc", -1, 0),
	[HOOK_MI_HEAP_RECALLOC] = HEAP_RE("mi_heap_recalloc", 2, 0),
	[HOOK_MI_HEAP_REZALLOC_ALIGNED] = HEAP_RE("mi_heap_rezalloc_aligned", -1, 0),
	[HOOK_MI_HEAP_REZALLOC_ALIGNED_AT] = HEAP_RE("mi_heap_rezalloc_aligned_at", -1, 5),
	[HOOK_MI_HEAP_RECALLOC_ALIGNED] = HEAP_RE("mi_heap_recalloc_aligned", 2, 5),
	[HOOK_MI_HEAP_RECALLOC_ALIGNED_AT] = HEAP_RE("mi_heap_recalloc_aligned_at", 2, 6),
	/* releases that call mi_free or mi_free_size on x86_64, but their internals on arm */
	[HOOK_MI_CFREE] = FREE("mi_cfree"),
	[HOOK_MI_FREE_SIZE_ALIGNED] = FREE("mi_free_size_aligned"),
	/* CPython's domains: a free calls free() for a block malloc made (HF_NESTS) */
	[HOOK_PY_OBJECT_MALLOC] = PY_ALLOC("PyObject_Malloc", 0, -1),
	[HOOK_PY_OBJECT_CALLOC] = PY_ALLOC("PyObject_Calloc", 1, 0),
	[HOOK_PY_OBJECT_REALLOC] = PY_REALLOC("PyObject_Realloc"),
	[HOOK_PY_OBJECT_FREE] = PY_FREE("PyObject_Free"),
	[HOOK_PY_MEM_MALLOC] = PY_ALLOC("PyMem_Malloc", 0, -1),
	[HOOK_PY_MEM_CALLOC] = PY_ALLOC("PyMem_Calloc", 1, 0),
	[HOOK_PY_MEM_REALLOC] = PY_REALLOC("PyMem_Realloc"),
	[HOOK_PY_MEM_FREE] = PY_FREE("PyMem_Free"),
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

		if (!h)
			continue; /* a free custom slot */
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

/* heap names by index; HEAP_MALLOC's is fixed, HEAP_MMAP's named with --mmap, HEAP_PYMALLOC's
 * once a process has it */
static const char *heap_names[HEAP_MAX] = { [HEAP_MALLOC] = "malloc" };

static void hook_heap_name_set(unsigned h, const char *name)
{
	heap_names[h] = name;
}

const char *hook_heap_name(unsigned h)
{
	return h < HEAP_MAX ? heap_names[h] : NULL;
}

void hook_enable_mmap(void)
{
	hook_table[HOOK_MMAP].name = "mmap";
	hook_table[HOOK_MMAP64].name = "mmap64";
	hook_table[HOOK_MUNMAP].name = "munmap";
	hook_table[HOOK_MREMAP].name = "mremap";
	hook_table[HOOK_SBRK].name = "sbrk";
	hook_heap_name_set(HEAP_MMAP, "mmap");
}

void hook_enable_pymalloc(void)
{
	hook_heap_name_set(HEAP_PYMALLOC, "pymalloc");
}

int hook_add_custom(const struct hook_desc *d, const char *heap_name)
{
	unsigned heap = HEAP_MAX;
	int slot = HOOK_CUSTOM0;

	if (hook_lookup(d->name) >= 0)
		return -EEXIST;
	while (slot < HOOK_COUNT && hook_table[slot].name)
		slot++;
	for (unsigned h = 0; h < HEAP_MAX && heap == HEAP_MAX; h++)
		if (heap_names[h] && !strcmp(heap_names[h], heap_name))
			heap = h;
	for (unsigned h = 0; h < HEAP_MAX && heap == HEAP_MAX; h++)
		if (!heap_names[h] && h != HEAP_MMAP && h != HEAP_PYMALLOC)
			heap = h;
	if (slot == HOOK_COUNT || heap == HEAP_MAX)
		return -ENOSPC;
	heap_names[heap] = heap_name;
	hook_table[slot] = *d;
	hook_table[slot].heap = (uint8_t)heap;
	return slot;
}

unsigned hook_nargs(const struct hook_desc *d)
{
	int n = d->size > d->count ? d->size : d->count;

	n = n > d->ptr ? n : d->ptr;
	return (unsigned)(n + 1);
}

bool hook_sampled(const struct hook_desc *d)
{
	return (d->kind == HK_ALLOC || d->kind == HK_REALLOC) && d->size >= 0 &&
	       d->heap != HEAP_MMAP && !(d->flags & (HF_STRING | HF_CALLER_BUF));
}

uint64_t hook_asked_size(const struct hook_call *c)
{
	const struct hook_desc *d = &hook_table[c->id];
	uint64_t size = c->args[d->size], count = d->count >= 0 ? c->args[d->count] : 1;

	return count && size > UINT64_MAX / count ? UINT64_MAX : size * count;
}

bool hook_args_in_regs(const struct hook_desc *d, unsigned reg_args)
{
	if (d->heap != HEAP_MALLOC && d->heap != HEAP_MMAP)
		return hook_nargs(d) <= reg_args;
	/* mmap(addr, len, prot, flags, fd, off), mremap(old, size, new, flags, [new_addr]); the
	 * rest take at most 4 (xallocx) but where words says (mimalloc's _at forms) */
	return reg_args >= (d->kind == HK_MMAP ? 6u : d->kind == HK_MREMAP ? 5u :
			    d->words ? d->words : 4u);
}

static const struct hook_foreign foreign[] = {
	{ "dlmalloc", "dlmalloc",
	  "--alloc=dlmalloc:1 --alloc=dlcalloc:2:1 --realloc=dlrealloc:1:2 --free=dlfree:1" },
	{ "mspace_malloc", "dlmalloc's mspaces",
	  "--alloc=mspace_malloc:2 --realloc=mspace_realloc:2:3 --free=mspace_free:2" },
	{ "rpmalloc", "rpmalloc",
	  "--alloc=rpmalloc:1 --alloc=rpcalloc:2:1 --realloc=rprealloc:1:2 --free=rpfree:1" },
	{ "tlsf_malloc", "TLSF",
	  "--alloc=tlsf_malloc:2 --realloc=tlsf_realloc:2:3 --free=tlsf_free:2" },
	{ "xxmalloc", "Hoard", "--alloc=xxmalloc:1 --free=xxfree:1" },
	{ "apr_palloc", "APR's pools (blocks released with their pool)", "--alloc=apr_palloc:2" },
};

int hook_foreign_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
		if (!strcmp(foreign[i].symbol, name))
			return (int)i;
	return -1;
}

const struct hook_foreign *hook_foreign_at(int i)
{
	return i >= 0 && (size_t)i < sizeof(foreign) / sizeof(foreign[0]) ? &foreign[i] : NULL;
}

/* A mapping call's failure: MAP_FAILED, (void *)-1, in either word size. */
static bool map_failed(uint64_t retval, unsigned word_size)
{
	return word_size == 4 ? (uint32_t)retval == UINT32_MAX : retval == UINT64_MAX;
}

void hook_map_effect(const struct hook_call *c, uint64_t retval, unsigned word_size,
		     uint32_t map_anonymous, struct hook_map_effect *e)
{
	const struct hook_desc *d = &hook_table[c->id];
	const uint64_t *a = c->args;
	int64_t incr;

	memset(e, 0, sizeof(*e));
	if (map_failed(retval, word_size))
		return;
	switch (d->kind) {
	case HK_MMAP:
		/* whatever was mapped there before is gone (MAP_FIXED); an anonymous private
		 * mapping is a block (MAP_PRIVATE is 2 on every arch: the type's low bits) */
		e->release_lo = retval;
		e->release_hi = retval + a[d->size];
		if ((a[d->count] & map_anonymous) && (a[d->count] & 0xf) == 2) {
			e->allocated = retval;
			e->size = a[d->size];
		}
		break;
	case HK_UNMAP:
		if (retval == 0) {
			e->release_lo = a[d->ptr];
			e->release_hi = a[d->ptr] + a[d->size];
		}
		break;
	case HK_MREMAP:
		e->release_lo = a[d->ptr];
		e->release_hi = a[d->ptr] + a[d->count];
		e->allocated = retval;
		e->size = a[d->size];
		e->only_if_released = true;
		break;
	case HK_SBRK:
		/* the old break; an increment of the word size, signed */
		incr = word_size == 4 ? (int32_t)a[d->size] : (int64_t)a[d->size];
		if (incr > 0) {
			e->allocated = retval;
			e->size = (uint64_t)incr;
		} else if (incr < 0) {
			e->release_lo = retval + (uint64_t)incr;
			e->release_hi = retval;
		}
		break;
	default:
		break;
	}
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

unsigned hook_string_unit(const struct hook_call *c, const struct hook_effect *e)
{
	const struct hook_desc *d = &hook_table[c->id];

	if (!(d->flags & HF_STRING) || !e->allocated)
		return 0;
	return d->flags & HF_WIDE ? 2 : 1;
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
		/* mi_realpath with a buffer returns it (or NULL) */
		if ((d->flags & HF_CALLER_BUF) && a[d->ptr])
			break;
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
		} else if (a[d->ptr] && (zero_request(d, a) || (d->flags & HF_FREES_ON_FAIL))) {
			e->freed = a[d->ptr]; /* realloc(p, 0) freed p and returned NULL (glibc) */
		}
		break;
	case HK_RESIZE:
		if (retval >= a[d->size]) { /* resized in place: released and added again */
			e->freed = a[d->ptr];
			e->allocated = a[d->ptr];
			e->size = a[d->size];
		}
		break;
	case HK_FREE:
		/* counted at the entry; with HF_NESTS its return is caught for nesting only */
		if (!(d->flags & HF_NESTS))
			e->freed = a[d->ptr];
		break;
	case HK_UNWIND:
	case HK_MMAP: /* ranges: hook_map_effect */
	case HK_UNMAP:
	case HK_MREMAP:
	case HK_SBRK:
		break;
	}
	if (!e->allocated)
		e->size = 0;
}
