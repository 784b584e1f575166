/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PYTABLE_H
#define HEAPTRACE_PYTABLE_H

/*
 * CPython's allocator tables. Every call of the PyMem_* and PyObject_* domains goes through a
 * table of function pointers (3.11's _PyMem and _PyObject, each a PyMemAllocatorEx: ctx, then
 * malloc, calloc, realloc, free): the entry points call through it, and where link-time
 * optimisation inlined pymalloc into their callers (Debian's python3.11), the inlined code runs
 * only while the table's pointer is pymalloc's own, and calls through it otherwise. With entry
 * stubs heaptrace points the table's words at thunks of its stubs, so that every call reaches
 * them, as tracemalloc (which wraps the same tables) sees them.
 */
#include <stdint.h>
#include <sys/types.h>

struct module;
struct proc;

/*
 * Trace CPython's hook h (HOOK_PY_*) of module m (hooks: the symbol values of its hooks in its
 * file) in p, stopped through thread tid: through its table where the stubs can, else say that
 * an inlined pymalloc is left out. Return 0 (traced, or left out), 1 to trace its entry point
 * instead (its pymalloc not inlined), or -errno.
 */
int pytable_arm(struct proc *p, pid_t tid, int h, const struct module *m, const uint64_t *hooks);

/*
 * Say once if p (stopped through tid: at its end, or before the detach) has put another
 * allocator into a table heaptrace redirected (the interpreter sets its tables at start-up
 * under PYTHONMALLOC or -X dev, after a launched program's hooks were placed): the calls
 * since then were not seen. A wrapper that calls heaptrace's thunk (tracemalloc) is fine.
 */
void pytable_check(struct proc *p, pid_t tid);

#endif
