// SPDX-License-Identifier: GPL-2.0-only
/* The table of allocators and allocator wrappers that labels look past (wrappers.h). */
#include <string.h>

#include "symbols/wrappers.h"
#include "util/util.h"

/*
 * One table, as man/heaptrace.1 lists it. A name ending in '*' is a prefix. A wrapper belongs
 * here when the block it returns is its caller's: the caller is what a reader acts on.
 */
static const char *const wrappers[] = {
	/* C library */
	"malloc", "calloc", "realloc", "reallocarray", "free", "memalign", "posix_memalign",
	"aligned_alloc", "valloc", "pvalloc", "strdup", "strndup", "__libc_malloc", "__libc_calloc",
	"__libc_realloc", "__libc_memalign", "__libc_valloc", "__libc_pvalloc", "__strdup",
	"__strndup", "_int_malloc", "_int_realloc", "_int_memalign", "tcache_init",
	/* C++ (libstdc++) */
	"operator new*", "operator new[]*", "_Znw*", "_Zna*", "std::allocator<*",
	"std::__new_allocator<*", "__gnu_cxx::new_allocator<*", "std::allocator_traits<*",
	/* jemalloc, tcmalloc, mimalloc */
	"je_*", "mallocx", "rallocx", "tc_malloc*", "tc_calloc", "tc_realloc", "tc_new*",
	"mi_malloc*", "mi_calloc*", "mi_realloc*", "mi_zalloc*", "mi_new*", "_mi_*",
	/* CPython */
	"PyMem_*", "_PyMem_*", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc",
	"_PyObject_Malloc", "_PyObject_Calloc", "_PyObject_Realloc", "pymalloc_*",
	"_PyObject_GC_Alloc", "_PyObject_GC_Link", "gc_alloc", "_PyObject_MallocWithType",
	"_PyObject_GC_New*", "PyType_GenericAlloc", "_PyType_AllocNoTrack",
	/* GLib */
	"g_malloc", "g_malloc0", "g_realloc", "g_try_malloc", "g_try_malloc0", "g_try_realloc",
	"g_malloc_n", "g_malloc0_n", "g_realloc_n", "g_try_malloc_n", "g_try_malloc0_n",
	"g_try_realloc_n", "g_strdup", "g_strndup", "g_memdup", "g_memdup2", "g_slice_alloc",
	"g_slice_alloc0", "g_new*",
	/* xmalloc-style wrappers (gnulib, git, binutils and many more) */
	"xmalloc", "xcalloc", "xrealloc", "xstrdup", "xstrndup", "xzalloc", "xmallocz",
	"xmallocz_gently", "xmemdup", "xmemdupz", "xnmalloc", "xnrealloc", "x2realloc",
	"x2nrealloc", "xcharalloc", "xreallocarray", "xireallocarray", "ximalloc", "xicalloc",
	"do_xmalloc", "emalloc", "ecalloc", "erealloc", "estrdup", "safe_malloc", "safe_calloc",
	"safe_realloc",
	/* Perl, jq, SQLite */
	"Perl_safesysmalloc", "Perl_safesyscalloc", "Perl_safesysrealloc", "Perl_savepv*",
	"jv_mem_*", "sqlite3Malloc", "sqlite3MallocZero", "sqlite3MemMalloc", "sqlite3MemRealloc",
	"sqlite3Realloc", "sqlite3_malloc", "sqlite3_malloc64", "sqlite3_realloc",
	"sqlite3_realloc64", "sqlite3DbMalloc*", "sqlite3DbRealloc", "sqlite3DbReallocOrFree",
	"sqlite3DbStrDup", "sqlite3DbStrNDup", "sqlite3PageMalloc", "mallocWithAlarm",
	"dbMallocRawFinish", "dbReallocFinish", "pcache1Alloc", "pcache1AllocPage",
};

bool wrap_is_allocator(const char *function)
{
	for (size_t i = 0; i < ARRAY_SIZE(wrappers); i++) {
		const char *w = wrappers[i];
		size_t n = strlen(w);

		if (w[n - 1] == '*' ? !strncmp(function, w, n - 1) : !strcmp(function, w))
			return true;
	}
	return false;
}

const char *wrap_frame_name(const struct sym_frame *sf, const char **file, int *line)
{
	for (unsigned k = 0; k < sf->ninlined; k++) {
		const struct sym_inline *in = &sf->inlined[k];

		if (in->function && !wrap_is_allocator(in->function)) {
			*file = in->file;
			*line = in->line;
			return in->function;
		}
	}
	*file = sf->file;
	*line = sf->line;
	if (sf->function && !wrap_is_allocator(sf->function))
		return sf->function;
	return NULL;
}
