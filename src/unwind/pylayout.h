/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PYLAYOUT_H
#define HEAPTRACE_PYLAYOUT_H

/*
 * What heaptrace knows of a CPython interpreter's memory, with no process: the offsets of the
 * structures it reads from outside (per version, from the version's own headers), the 3.11
 * location table that maps an instruction to its line, and how Python frames take the place of
 * the evaluation loop's native frames in a backtrace. Pure: unit tested on any host.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Offsets in bytes, named after the fields of CPython's headers (Include/internal/
 * pycore_runtime.h, pycore_frame.h, cpython/pystate.h, cpython/code.h, cpython/unicodeobject.h,
 * cpython/bytesobject.h).
 */
struct pylayout {
	uint32_t version; /* major << 8 | minor */
	/* _PyRuntimeState */
	uint16_t rt_tstate_current; /* gilstate.tstate_current: the thread holding the GIL */
	uint16_t rt_finalizing; /* _finalizing: set once the interpreter starts to end */
	/* gilstate.autoTSSkey: the Py_tss_t (int initialised, then the pthread key) in which
	 * each thread keeps its own PyThreadState */
	uint16_t rt_tss_key;
	uint16_t rt_interp_main; /* interpreters.main */
	/* PyInterpreterState */
	uint16_t is_threads_head; /* threads.head: its thread states, through next */
	/* PyThreadState */
	uint16_t ts_next, ts_cframe, ts_thread_id;
	/* _PyCFrame */
	uint16_t cf_current_frame;
	/* _PyInterpreterFrame, and how many bytes of it are read */
	uint16_t fr_code, fr_previous, fr_prev_instr, fr_is_entry, fr_owner, fr_size;
	/* PyCodeObject (a PyVarObject: ob_size counts its code units), and the bytes read */
	uint16_t co_size, co_firstlineno, co_filename, co_name, co_qualname, co_linetable, co_code,
		co_head;
	/* PyObject, PyVarObject, PyBytesObject */
	uint16_t ob_type, ob_size, bytes_data;
	/* PyASCIIObject and PyCompactUnicodeObject: state's bits, where the characters are */
	uint16_t str_length, str_state, str_ascii_data, str_compact_data;
	uint8_t str_kind_shift, str_compact_bit, str_ascii_bit;
	uint8_t owner_max; /* highest valid _PyInterpreterFrame.owner */
};

/* The layout of CPython major.minor, or NULL if heaptrace does not know it. */
const struct pylayout *pylayout_find(unsigned major, unsigned minor);

/* Most Python frames read from one thread (a bound for a looping or corrupt chain). */
#define PYLAYOUT_MAX_FRAMES 256u

/* The line of the instruction addrq bytes into a code object's instructions, from its 3.11
 * location table (co_linetable, len bytes) and co_firstlineno: firstlineno for a negative
 * addrq (the frame has not started), -1 where the table says no line or ends first. */
int pylayout_line(const uint8_t *table, size_t len, int firstlineno, int64_t addrq);

/*
 * The UTF-8 text of a str object whose head (len bytes read at its address) has state word
 * state: 0 if it is compact, with *data_off and *nchars where its characters are and *kind
 * their width (1, 2 or 4 bytes); -EINVAL otherwise.
 */
int pylayout_str(const struct pylayout *l, uint32_t state, uint64_t length, unsigned *data_off,
		 unsigned *kind);

/* Append the UTF-8 encoding of n characters of width kind at chars to out (cap bytes, NUL
 * terminated, cut at a character). Return the bytes written, or SIZE_MAX if a character is
 * none a str holds (a surrogate, or past U+10FFFF: the memory read is not a str's). */
size_t pylayout_utf8(const void *chars, size_t n, unsigned kind, char *out, size_t cap);

/*
 * Merge a backtrace's native frames pcs[0..n) (pcs[0] the caller's pc, the others return
 * addresses; eval(ctx, pc) says whether one is in the evaluation loop) with the thread's
 * Python frames py[0..m) (innermost first; entry[i]: frame i was the first of its loop's
 * invocation, _PyInterpreterFrame.is_entry): each loop frame is replaced by the Python frames
 * it ran, and those left over (the native walk stopped short of the loop) follow the native
 * frames. The result goes to out (at most max). Return its length.
 */
unsigned pylayout_merge(const uint64_t *pcs, unsigned n, const uint64_t *py, const bool *entry,
			unsigned m, bool (*eval)(void *ctx, uint64_t pc), void *ctx,
			uint64_t *out, unsigned max);

#endif
