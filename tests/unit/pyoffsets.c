// SPDX-License-Identifier: GPL-2.0-only
/*
 * The offsets of src/unwind/pylayout.c's 3.11 table, from CPython's own headers: built apart
 * from test_pylayout.c (the headers define names of their own) where the 3.11 headers are
 * installed (PY311_INCLUDE in the Makefile).
 */
#include <stdbool.h>

#include "unwind/pylayout.h"

#ifdef HAVE_PY311
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <string.h>

/* The lowest bit of the state word that a field set to all ones sets. */
#define STATE_BIT(field, ones)                                                                     \
	({                                                                                         \
		PyASCIIObject o;                                                                   \
		uint32_t w = 0;                                                                    \
		memset(&o, 0, sizeof(o));                                                          \
		o.state.field = ones;                                                              \
		memcpy(&w, &o.state, sizeof(w));                                                   \
		(uint8_t) __builtin_ctz(w);                                                        \
	})

/* python.c reads a Py_tss_t as one word: the int initialised, then the key */
_Static_assert(offsetof(Py_tss_t, _is_initialized) == 0 && offsetof(Py_tss_t, _key) == 4 &&
		       sizeof(Py_tss_t) == 8,
	       "Py_tss_t: initialised, then the key");

bool pyoffsets_311(struct pylayout *l)
{
	*l = (struct pylayout){
		.version = PY_MAJOR_VERSION << 8 | PY_MINOR_VERSION,
		.rt_tstate_current = offsetof(_PyRuntimeState, gilstate.tstate_current),
		.rt_finalizing = offsetof(_PyRuntimeState, _finalizing),
		.rt_tss_key = offsetof(_PyRuntimeState, gilstate.autoTSSkey),
		.rt_interp_main = offsetof(_PyRuntimeState, interpreters.main),
		.is_threads_head = offsetof(PyInterpreterState, threads.head),
		.ts_next = offsetof(PyThreadState, next),
		.ts_cframe = offsetof(PyThreadState, cframe),
		.ts_thread_id = offsetof(PyThreadState, thread_id),
		.cf_current_frame = offsetof(_PyCFrame, current_frame),
		.fr_code = offsetof(_PyInterpreterFrame, f_code),
		.fr_previous = offsetof(_PyInterpreterFrame, previous),
		.fr_prev_instr = offsetof(_PyInterpreterFrame, prev_instr),
		.fr_is_entry = offsetof(_PyInterpreterFrame, is_entry),
		.fr_owner = offsetof(_PyInterpreterFrame, owner),
		.fr_size = sizeof(_PyInterpreterFrame) - sizeof(PyObject *), /* localsplus[1] */
		.co_size = offsetof(PyVarObject, ob_size),
		.co_firstlineno = offsetof(PyCodeObject, co_firstlineno),
		.co_filename = offsetof(PyCodeObject, co_filename),
		.co_name = offsetof(PyCodeObject, co_name),
		.co_qualname = offsetof(PyCodeObject, co_qualname),
		.co_linetable = offsetof(PyCodeObject, co_linetable),
		.co_code = offsetof(PyCodeObject, co_code_adaptive),
		.co_head = offsetof(PyCodeObject, co_linetable) + sizeof(PyObject *),
		.ob_type = offsetof(PyObject, ob_type),
		.ob_size = offsetof(PyVarObject, ob_size),
		.bytes_data = offsetof(PyBytesObject, ob_sval),
		.str_length = offsetof(PyASCIIObject, length),
		.str_state = offsetof(PyASCIIObject, state),
		.str_ascii_data = sizeof(PyASCIIObject),
		.str_compact_data = sizeof(PyCompactUnicodeObject),
		.str_kind_shift = STATE_BIT(kind, 7),
		.str_compact_bit = STATE_BIT(compact, 1),
		.str_ascii_bit = STATE_BIT(ascii, 1),
		.owner_max = FRAME_OWNED_BY_FRAME_OBJECT,
	};
	return PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 11;
}
#else
bool pyoffsets_311(struct pylayout *l)
{
	(void)l;
	return false;
}
#endif
