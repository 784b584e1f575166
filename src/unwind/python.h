/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PYTHON_H
#define HEAPTRACE_PYTHON_H

/*
 * Python frames in backtraces, read from outside: a CPython interpreter in the process is
 * found by its exported symbols (_PyRuntime, Py_Version), the frame chain of the thread
 * holding the GIL is read at an allocation, and each frame's code object (its qualified name,
 * file and location table) is read and kept while the process lives. A Python frame goes into
 * a backtrace as an id (frames.h's FRAMES_PYTHON) of the process's table of (function, file,
 * line), which lives as long as the process's table of backtraces.
 */
#include <stdbool.h>
#include <stdint.h>

#include "symbols/symframe.h"
#include "target/process.h"

/* Does p run an interpreter whose frames heaptrace reads (its modules probed as they come)? */
bool python_found(struct proc *p);

/*
 * Merge the Python frames of p's thread with thread pointer tp, stopped or at an allocation's
 * entry, into its native backtrace pcs[0..n) (at most max frames; pcs[0] the caller's pc):
 * only if that thread holds the GIL (its frames cannot change while it is stopped). Python
 * frames take the place of the evaluation loop's native frames they ran in. Return the new n.
 */
unsigned python_merge(struct proc *p, uint64_t tp, uint64_t *pcs, unsigned n, unsigned max);

/*
 * May the block at addr have been released since the record being read was made (another
 * object may be there now)? The records after it say (account/ring.c).
 */
typedef bool python_released_fn(void *ctx, uint64_t addr);

/*
 * The same from an entry record's Python section (arch/stub_layout.h: STUB_PY_*; sec, count
 * frames written by the stub of a thread that held the GIL at the call): each code object is
 * read now, checked to be one, and kept. One in the interpreter's image, or whose block p's
 * table holds, is read again only after python_release of that block; such a block that
 * released(ctx, its address) says may be another object's now ends the Python frames.
 */
unsigned python_merge_recorded(struct proc *p, const uint8_t *sec, unsigned count, uint64_t *pcs,
			       unsigned n, unsigned max, python_released_fn *released, void *ctx);

/* Would python_merge_recorded ask released about a frame of that section: a code object whose
 * block p's table holds, not read since the block was last released? */
bool python_recorded_asks(struct proc *p, const uint8_t *sec, unsigned count);

/* The block of key (heap/table.h: its heap in it) is released, seen at the entry of the call
 * that releases it: a code object there is read again at its next record. */
void python_release(struct proc *p, uint64_t key);

/*
 * What the entry stubs' data page holds for p's interpreter (STUB_D_PY_TSTATE to STUB_D_PY_MAX,
 * in that order, as words): false if p has no interpreter heaptrace reads, or where its threads
 * keep their own thread states is not known yet (learned once the interpreter is initialised;
 * a call tries again, at most every millisecond or so).
 */
#define PYTHON_STUB_WORDS 12
bool python_stub_words(struct proc *p, uint64_t words[PYTHON_STUB_WORDS]);

/* Fill sf for the Python frame addr (frames_addr of a FRAMES_PYTHON value) of p. Return false
 * if addr is no Python frame of p. */
bool python_resolve(const struct proc *p, uint64_t addr, struct sym_frame *sf);

/* Forget the interpreter found in p's image (an exec): its frames stay nameable. */
void python_forget_image(struct proc *p);

/* child (a fork of parent) gets a copy of parent's Python frames, which its backtraces name. */
void python_fork(struct proc *child, const struct proc *parent);

/* Free all of it (p's table is going). */
void python_free(struct proc *p);

#endif
