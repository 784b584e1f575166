// SPDX-License-Identifier: GPL-2.0-only
/* Python frames read from outside the process, and their table (python.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "python"
#include "arch/arch.h"
#include "arch/stub_layout.h"
#include "heap/hooks.h"
#include "heap/table.h"
#include "symbols/symbols.h"
#include "target/remote.h"
#include "unwind/frames.h"
#include "unwind/pylayout.h"
#include "unwind/pymemo.h"
#include "unwind/python.h"
#include "unwind/pytss.h"
#include "util/log.h"
#include "util/pairmap.h"
#include "util/util.h"

/* Code objects kept before the cache starts again (code made at run time, exec'd strings). */
#define PY_CODE_MAX 65536u
/* Longest name or file name read, in characters. */
#define PY_STR_MAX 1024u
/* Longest location table read, in bytes. */
#define PY_TABLE_MAX (256u << 10)
/* Thread states looked at when learning where the threads keep theirs (learn_tss). */
#define PY_TSS_STATES 64u
/* The wait before learning is tried again: while the interpreter is not initialised (one read
 * a try), and at most, after a try that found no thread's state */
#define PY_TSS_SOON_NS 1000000ull
#define PY_TSS_LATEST_NS 1000000000ull
/* A Py_tss_t read as one word: initialised (1) in its low half, the key in its high half. */
#define PY_TSS_KEY(w) ((unsigned)((w) >> 32))

/* PY_NONE: none in the modules probed so far */
enum py_state { PY_NONE, PY_UNSUPPORTED, PY_READY };

/* A code object read, known by its address and the words that identify it there. */
struct pycode {
	uint64_t addr, fingerprint;
	uint32_t function, file; /* string ids */
	int firstlineno;
	uint64_t ncode; /* code units */
	uint8_t *table;
	size_t len;
	/* the last instruction looked up and its frame id + 1 (0: none yet): a loop's call sites
	 * come back to the same instruction record after record */
	int64_t last_addrq;
	uint32_t last_frame;
	bool watched; /* in watched_ids: taken without a read until its block is released */
};

/* A Python frame as backtraces hold it: names are string ids. */
struct pyframe {
	uint32_t function, file;
	int line;
};

struct pyproc {
	enum py_state state;
	size_t mods_seen; /* modules of p probed */
	const struct pylayout *l;
	uint64_t runtime, code_type, str_type; /* _PyRuntime, PyCode_Type, PyUnicode_Type */
	uint64_t eval_lo, eval_hi; /* _PyEval_EvalFrameDefault */
	uint64_t image_lo, image_hi; /* the interpreter's module: its static code objects */
	/* where each thread keeps its own thread state (learn_tss): an offset from its thread
	 * pointer, and the TSS key's word it holds for */
	bool tss_known;
	uint64_t tss_slot, tss_keyword;
	uint64_t tss_next_ns, tss_wait_ns; /* when to try again, and the wait before that */
	/* code objects by (address, fingerprint) */
	struct pairmap code_ids;
	/* by (address, 0), the code objects whose block heaptrace sees released (python_release) */
	struct pairmap watched_ids;
	struct pycode *codes;
	uint32_t ncodes, codes_cap;
	/* interned strings and frames: never forgotten while backtraces name them */
	struct pairmap str_ids;
	char **strs;
	uint32_t nstrs, strs_cap;
	struct pairmap frame_ids;
	struct pyframe *frames;
	uint32_t nframes, frames_cap;
	/* merges of records whose code objects were all watched (pymemo.h), NULL until one */
	struct pymemo *memo;
};

static struct pyproc *pyproc_of(struct proc *p)
{
	if (!p->py)
		p->py = xcalloc(1, sizeof(*p->py));
	return p->py;
}

static uint32_t intern_str(struct pyproc *py, const char *s)
{
	uint32_t *slot = pairmap_slot(&py->str_ids, pairmap_str_hash(s, 0),
				      pairmap_str_hash(s, 0x9e3779b97f4a7c15ull));

	if (*slot)
		return *slot - 1;
	if (py->nstrs == py->strs_cap) {
		py->strs_cap = py->strs_cap ? 2 * py->strs_cap : 64;
		py->strs = xrealloc(py->strs, py->strs_cap * sizeof(*py->strs));
	}
	py->strs[py->nstrs] = xstrdup(s);
	py->str_ids.n++;
	*slot = ++py->nstrs;
	return *slot - 1;
}

static uint32_t intern_frame(struct pyproc *py, uint32_t function, uint32_t file, int line)
{
	uint32_t *slot = pairmap_slot(&py->frame_ids, (uint64_t)function << 32 | file,
				      (uint64_t)(uint32_t)line);

	if (*slot)
		return *slot - 1;
	if (py->nframes == py->frames_cap) {
		py->frames_cap = py->frames_cap ? 2 * py->frames_cap : 256;
		py->frames = xrealloc(py->frames, py->frames_cap * sizeof(*py->frames));
	}
	py->frames[py->nframes] = (struct pyframe){ function, file, line };
	py->frame_ids.n++;
	*slot = ++py->nframes;
	return *slot - 1;
}

/* ---- finding the interpreter ---- */

static bool python_module(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python3", 7) || !strncmp(base, "libpython3", 10);
}

/* Look at module m for an interpreter: set py's state if it has one. */
static void probe_module(struct proc *p, struct pyproc *py, const struct module *m)
{
	static const char *const names[] = { "_PyRuntime", "Py_Version", "PyCode_Type",
					     "_PyEval_EvalFrameDefault", "PyUnicode_Type" };
	uint64_t v[ARRAY_SIZE(names)], sz[ARRAY_SIZE(names)];
	uint32_t version = 0;

	if (!m->bias_known || !python_module(m->path) ||
	    sym_lookup_many(m->path, names, ARRAY_SIZE(names), v, sz) || !v[0])
		return;
	/* Py_Version (3.11 on) is PY_VERSION_HEX: 0x030b07f0 for 3.11.7 */
	if (v[1] && remote_read(proc_mem_pid(p), v[1] + m->bias, &version, 4) != 4)
		return;
	py->l = version ? pylayout_find(version >> 24, version >> 16 & 0xff) : NULL;
	if (!py->l || !v[2] || !v[3] || !sz[3] || !v[4]) {
		py->state = PY_UNSUPPORTED;
		if (version)
			pr_warn("process %d runs Python %u.%u: Python frames are not shown for this "
				"version (its allocations are traced without them)", p->pid,
				version >> 24, version >> 16 & 0xff);
		else
			pr_warn("process %d runs a Python older than 3.11: Python frames are not "
				"shown for it (its allocations are traced without them)", p->pid);
		return;
	}
	py->runtime = v[0] + m->bias;
	py->code_type = v[2] + m->bias;
	py->str_type = v[4] + m->bias;
	py->eval_lo = v[3] + m->bias;
	py->eval_hi = py->eval_lo + sz[3];
	py->image_lo = m->start;
	py->image_hi = m->end;
	py->state = PY_READY;
	pr_dbg(1, "process %d: Python %u.%u in %s", p->pid, version >> 24, version >> 16 & 0xff,
	       m->path);
}

static void probe(struct proc *p, struct pyproc *py)
{
	if (py->state != PY_NONE || p->mods.n == py->mods_seen)
		return;
	if (p->mods.n < py->mods_seen)
		py->mods_seen = 0;
	for (size_t i = py->mods_seen; i < p->mods.n && py->state == PY_NONE; i++)
		probe_module(p, py, &p->mods.v[i]);
	py->mods_seen = p->mods.n;
}

bool python_found(struct proc *p)
{
	struct pyproc *py = pyproc_of(p);

	probe(p, py);
	return py->state == PY_READY;
}

/* ---- reading code objects ---- */

static uint64_t word_at(const uint8_t *buf, unsigned off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* The text of the str object at addr into out, or -EINVAL. */
static int read_str(pid_t pid, const struct pylayout *l, uint64_t str_type, uint64_t addr,
		    char *out, size_t cap)
{
	uint8_t head[128], *chars;
	uint32_t state;
	unsigned off, kind;
	uint64_t n;

	if (!addr || addr & 7 || remote_read(pid, addr, head, l->str_compact_data) !=
	    (ssize_t)l->str_compact_data || word_at(head, l->ob_type) != str_type)
		return -EINVAL;
	memcpy(&state, head + l->str_state, sizeof(state));
	n = word_at(head, l->str_length);
	if (pylayout_str(l, state, n, &off, &kind))
		return -EINVAL;
	n = n < PY_STR_MAX ? n : PY_STR_MAX;
	chars = xmalloc(n * kind + 1);
	if (remote_read(pid, addr + off, chars, n * kind) != (ssize_t)(n * kind)) {
		free(chars);
		return -EINVAL;
	}
	n = pylayout_utf8(chars, n, kind, out, cap);
	free(chars);
	return n == SIZE_MAX ? -EINVAL : 0;
}

/* A bytes object's contents (co_linetable), or NULL. */
static uint8_t *read_bytes(pid_t pid, const struct pylayout *l, uint64_t addr, size_t *len)
{
	uint64_t n;
	uint8_t *buf;

	if (!addr || addr & 7 || remote_read_word(pid, addr + l->ob_size, 8, &n) ||
	    n > PY_TABLE_MAX)
		return NULL;
	buf = xmalloc(n ? n : 1);
	if (remote_read(pid, addr + l->bytes_data, buf, n) != (ssize_t)n) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static void forget_codes(struct pyproc *py)
{
	for (uint32_t i = 0; i < py->ncodes; i++)
		free(py->codes[i].table);
	free(py->code_ids.v);
	py->code_ids = (struct pairmap){ 0 };
	free(py->watched_ids.v);
	py->watched_ids = (struct pairmap){ 0 };
	py->ncodes = 0;
	pymemo_forget(py->memo);
}

/* Read the code object whose head is head (at addr) into a new cache entry, or NULL. */
static struct pycode *read_code(struct proc *p, struct pyproc *py, uint64_t addr,
				const uint8_t *head, uint64_t fp, uint32_t *slot)
{
	const struct pylayout *l = py->l;
	pid_t pid = proc_mem_pid(p);
	char name[PY_STR_MAX * 4], file[PY_STR_MAX * 4];
	struct pycode c = { .addr = addr, .fingerprint = fp };
	int32_t first;

	if (read_str(pid, l, py->str_type, word_at(head, l->co_qualname), name, sizeof(name)) ||
	    read_str(pid, l, py->str_type, word_at(head, l->co_filename), file, sizeof(file)))
		return NULL;
	c.table = read_bytes(pid, l, word_at(head, l->co_linetable), &c.len);
	if (!c.table)
		return NULL;
	memcpy(&first, head + l->co_firstlineno, sizeof(first));
	c.firstlineno = first;
	c.ncode = word_at(head, l->co_size);
	c.function = intern_str(py, name);
	c.file = intern_str(py, file);
	if (py->ncodes == py->codes_cap) {
		py->codes_cap = py->codes_cap ? 2 * py->codes_cap : 256;
		py->codes = xrealloc(py->codes, py->codes_cap * sizeof(*py->codes));
	}
	py->codes[py->ncodes] = c;
	py->code_ids.n++;
	*slot = ++py->ncodes;
	return &py->codes[py->ncodes - 1];
}

#define PY_HEAD_MAX 256 /* bytes of a code object's head that are read (pylayout: co_head) */
_Static_assert(STUB_PY_MAX_FRAMES <= REMOTE_READV_MAX, "a record's frames in one read");

/* The code object at addr whose first co_head bytes are head (NULL: read them now), from the
 * cache or read; NULL if it is none. */
static struct pycode *code_at(struct proc *p, struct pyproc *py, uint64_t addr,
			      const uint8_t *head)
{
	const struct pylayout *l = py->l;
	uint8_t own[PY_HEAD_MAX];
	uint64_t fp;
	uint32_t *slot;

	if (!addr || addr & 7)
		return NULL;
	if (!head && remote_read(proc_mem_pid(p), addr, own, l->co_head) == (ssize_t)l->co_head)
		head = own;
	if (!head || word_at(head, l->ob_type) != py->code_type)
		return NULL;
	/* another code object at an address freed and reused has other names or table */
	fp = hash64(word_at(head, l->co_qualname) ^ hash64(word_at(head, l->co_filename) ^
		    hash64(word_at(head, l->co_linetable) ^
			   word_at(head, l->co_firstlineno & ~7u))));
	if (py->ncodes >= PY_CODE_MAX)
		forget_codes(py);
	slot = pairmap_slot(&py->code_ids, addr, fp);
	if (*slot)
		return &py->codes[*slot - 1];
	return read_code(p, py, addr, head, fp, slot);
}

/* The Python frame of code object c at its instruction instr, as a backtrace holds it; 0 if
 * instr is not in it. */
static uint64_t frame_in(struct pyproc *py, struct pycode *c, uint64_t instr)
{
	int64_t addrq = (int64_t)(instr - (c->addr + py->l->co_code));

	if (addrq < -2 || addrq >= (int64_t)(c->ncode * 2))
		return 0;
	if (!c->last_frame || c->last_addrq != addrq) {
		c->last_addrq = addrq;
		c->last_frame = 1 + intern_frame(py, c->function, c->file,
						 pylayout_line(c->table, c->len, c->firstlineno,
							       addrq));
	}
	return frames_python(c->last_frame - 1);
}

/* The same for the code object at code (head: its head, or NULL); 0 if it is none. */
static uint64_t frame_at(struct proc *p, struct pyproc *py, uint64_t code, const uint8_t *head,
			 uint64_t instr)
{
	struct pycode *c = code_at(p, py, code, head);

	return c ? frame_in(py, c, instr) : 0;
}

/*
 * Code objects whose block heaptrace sees released are taken from the cache without a read
 * (the read, a system call per record, cost more than the rest of it), and so are the
 * interpreter's static ones (deep-frozen in its image, never freed). The release of a block
 * is recorded at the entry of the call that frees it, so it is read before any record made
 * after another object took its address. Only while no call went unseen: a release lost with
 * them would leave a code object's names on its successor.
 */
static bool watchable(const struct proc *p)
{
	return !p->calls_not_seen && !p->stubs_stuck;
}

static bool in_image(const struct pyproc *py, uint64_t addr)
{
	return addr >= py->image_lo && addr < py->image_hi;
}

static bool in_table(const struct proc *p, uint64_t addr)
{
	return table_find(&p->table, table_key(HEAP_MALLOC, addr)) ||
	       table_find(&p->table, table_key(HEAP_PYMALLOC, addr));
}

static struct pycode *watched_code(const struct proc *p, struct pyproc *py, uint64_t addr)
{
	uint32_t *slot;

	if (!py->watched_ids.n || !watchable(p))
		return NULL;
	slot = pairmap_slot(&py->watched_ids, addr, 0);
	return *slot && py->codes[*slot - 1].watched ? &py->codes[*slot - 1] : NULL;
}

static void watch(struct pyproc *py, struct pycode *c)
{
	uint32_t *slot = pairmap_slot(&py->watched_ids, c->addr, 0);

	if (*slot)
		py->codes[*slot - 1].watched = false;
	else
		py->watched_ids.n++;
	*slot = (uint32_t)(c - py->codes) + 1;
	c->watched = true;
}

/*
 * The code object at addr (head: its head, or NULL) for a record: watched from now on if its
 * block is; NULL if it is none, or if its block was released since the record (released):
 * what is read there now may be another's.
 */
static struct pycode *code_for_record(struct proc *p, struct pyproc *py, uint64_t addr,
				      const uint8_t *head, python_released_fn *released,
				      void *ctx)
{
	struct pycode *c = code_at(p, py, addr, head);

	if (!c || !watchable(p))
		return c;
	if (in_image(py, addr)) {
		watch(py, c);
	} else if (in_table(p, addr)) {
		if (released(ctx, addr))
			return NULL;
		watch(py, c);
	}
	return c;
}

void python_release(struct proc *p, uint64_t key)
{
	struct pyproc *py = p->py;
	uint32_t *slot;

	if (!py || !py->watched_ids.n)
		return;
	slot = pairmap_slot(&py->watched_ids, table_key_addr(key), 0);
	if (*slot && py->codes[*slot - 1].watched) {
		py->codes[*slot - 1].watched = false;
		pymemo_forget(py->memo); /* merges of its frames may name another's now */
	}
}

/* ---- the frame chain ---- */

/* The thread state of the GIL holder if it is the thread with thread pointer tp, else 0. */
static uint64_t gil_holder(pid_t pid, const struct pyproc *py, uint64_t tp)
{
	uint64_t ts, id;

	if (remote_read_word(pid, py->runtime + py->l->rt_tstate_current, 8, &ts) || !ts ||
	    ts & 7 || remote_read_word(pid, ts + py->l->ts_thread_id, 8, &id) || id != tp)
		return 0;
	return ts;
}

/* The Python frames of thread state ts, innermost first, into py_out (entry: is_entry). */
static unsigned read_chain(struct proc *p, struct pyproc *py, uint64_t ts, uint64_t *out,
			   bool *entry, unsigned max)
{
	const struct pylayout *l = py->l;
	pid_t pid = proc_mem_pid(p);
	uint64_t cf, fr;
	unsigned n = 0;

	if (remote_read_word(pid, ts + l->ts_cframe, 8, &cf) || !cf || cf & 7 ||
	    remote_read_word(pid, cf + l->cf_current_frame, 8, &fr))
		return 0;
	for (unsigned k = 0; fr && k < PYLAYOUT_MAX_FRAMES && n < max; k++) {
		uint8_t f[128];

		if (fr & 7 || remote_read(pid, fr, f, l->fr_size) != (ssize_t)l->fr_size ||
		    f[l->fr_owner] > l->owner_max || f[l->fr_is_entry] > 1)
			break;
		out[n] = frame_at(p, py, word_at(f, l->fr_code), NULL,
				  word_at(f, l->fr_prev_instr));
		if (!out[n])
			break;
		entry[n++] = f[l->fr_is_entry];
		fr = word_at(f, l->fr_previous);
	}
	return n;
}

static bool in_eval(void *ctx, uint64_t pc)
{
	const struct pyproc *py = ctx;
	uint64_t a = arch->code_addr(frames_addr(pc));

	/* return addresses: the call is the byte before */
	return a > py->eval_lo && a <= py->eval_hi;
}

/* Merge frames[0..m) into pcs[0..n) (at most max). */
static unsigned merge(struct pyproc *py, const uint64_t *frames, const bool *entry, unsigned m,
		      uint64_t *pcs, unsigned n, unsigned max)
{
	uint64_t own[PYMEMO_PCS], *out;

	if (!m)
		return n;
	out = max <= PYMEMO_PCS ? own : xmalloc(max * sizeof(*out));
	n = pylayout_merge(pcs, n, frames, entry, m, in_eval, py, out, max);
	memcpy(pcs, out, n * sizeof(*out));
	if (out != own)
		free(out);
	return n;
}

/* The Python frames of the record's section sec (want of them) merged into pcs[0..n): the
 * code objects are looked up, or read, with the release of their blocks watched. Return the
 * new number of pcs, and *pure: every code object was watched before (the merge depends on
 * the record's words alone). */
static unsigned merge_recorded(struct proc *p, struct pyproc *py, const uint64_t *codes,
			       const uint64_t *instrs, unsigned want, uint64_t *pcs, unsigned n,
			       unsigned max, python_released_fn *released, void *ctx, bool *pure)
{
	uint64_t frames[STUB_PY_MAX_FRAMES], unread[STUB_PY_MAX_FRAMES];
	unsigned at[STUB_PY_MAX_FRAMES]; /* index in unread, or STUB_PY_MAX_FRAMES */
	bool entry[STUB_PY_MAX_FRAMES];
	uint8_t heads[STUB_PY_MAX_FRAMES * PY_HEAD_MAX];
	unsigned m = 0, nunread = 0, got = 0;

	for (unsigned i = 0; i < want; i++) {
		at[i] = watched_code(p, py, codes[i]) ? STUB_PY_MAX_FRAMES : nunread;
		if (at[i] == nunread)
			unread[nunread++] = codes[i];
	}
	*pure = !nunread;
	/* the other frames' code object heads in one read: a system call per frame cost more
	 * than the rest of the record */
	if (nunread && py->l->co_head <= PY_HEAD_MAX)
		got = remote_readv(proc_mem_pid(p), unread, nunread, heads, py->l->co_head);
	for (unsigned i = 0; i < want; i++) {
		/* looked up again: an earlier frame of the same code may have been read and
		 * watched since, and py->codes may have grown */
		struct pycode *c = watched_code(p, py, codes[i]);

		if (!c)
			c = code_for_record(p, py, codes[i],
					    at[i] < got ? heads + at[i] * py->l->co_head : NULL,
					    released, ctx);
		frames[m] = c ? frame_in(py, c, instrs[i] & ~(uint64_t)STUB_PY_ENTRY_BIT) : 0;
		if (!frames[m])
			break;
		entry[m++] = instrs[i] & STUB_PY_ENTRY_BIT;
	}
	return merge(py, frames, entry, m, pcs, n, max);
}

unsigned python_merge_recorded(struct proc *p, const uint8_t *sec, unsigned count, uint64_t *pcs,
			       unsigned n, unsigned max, python_released_fn *released, void *ctx)
{
	struct pyproc *py = pyproc_of(p);
	uint64_t codes[STUB_PY_MAX_FRAMES], instrs[STUB_PY_MAX_FRAMES], native[PYMEMO_PCS];
	struct pymemo_key k = { codes, instrs, native, 0, n, max };
	unsigned want, got;
	bool pure;

	probe(p, py);
	if (py->state != PY_READY || !max)
		return n;
	want = count < STUB_PY_MAX_FRAMES ? count : STUB_PY_MAX_FRAMES;
	want = want < max ? want : max;
	k.nframes = want;
	for (unsigned i = 0; i < want; i++) {
		codes[i] = word_at(sec + STUB_PY_FRAMES + i * STUB_PY_FRAME, STUB_PY_CODE);
		instrs[i] = word_at(sec + STUB_PY_FRAMES + i * STUB_PY_FRAME, STUB_PY_INSTR);
	}
	if (n > PYMEMO_PCS)
		k.pcs = pcs; /* too many to remember (pymemo_find and _keep take none) */
	else
		memcpy(native, pcs, n * sizeof(*pcs));
	if (watchable(p) && (got = pymemo_find(py->memo, &k, pcs)))
		return got;
	got = merge_recorded(p, py, codes, instrs, want, pcs, n, max, released, ctx, &pure);
	if (pure && watchable(p) && k.pcs == native) {
		if (!py->memo)
			py->memo = pymemo_new();
		pymemo_keep(py->memo, &k, pcs, got);
	}
	return got;
}

bool python_recorded_asks(struct proc *p, const uint8_t *sec, unsigned count)
{
	struct pyproc *py = p->py;

	if (!py || py->state != PY_READY || !watchable(p))
		return false;
	for (unsigned i = 0; i < count && i < STUB_PY_MAX_FRAMES; i++) {
		uint64_t code = word_at(sec + STUB_PY_FRAMES + i * STUB_PY_FRAME, STUB_PY_CODE);

		if (!watched_code(p, py, code) && !in_image(py, code) && in_table(p, code))
			return true;
	}
	return false;
}

/* ---- where each thread keeps its own state, for the entry stubs ---- */

/*
 * Learn where each thread keeps its own thread state: the offset from its struct pthread
 * (PyThreadState.thread_id, pthread_self()) of its value of the runtime's TSS key, found in
 * the struct pthread of each thread of the main interpreter that has its state there
 * (pytss.h). Read while the process runs: a state freed meanwhile reads as other words, which
 * pytss_slot does not take for a slot. All threads found must agree. Return 0 with *slot and
 * *keyword (the key's Py_tss_t as a word), -EAGAIN if the interpreter is not initialised yet,
 * -ENOENT if no thread's state was found, -EEXIST if threads disagree.
 */
static int learn_tss(pid_t pid, const struct pyproc *py, uint64_t *slot, uint64_t *keyword)
{
	const struct pylayout *l = py->l;
	uint64_t kw, interp, ts, found = 0;
	uint8_t *pt;
	int err = -ENOENT;

	if (remote_read_word(pid, py->runtime + l->rt_tss_key, 8, &kw) || (uint32_t)kw != 1 ||
	    remote_read_word(pid, py->runtime + l->rt_interp_main, 8, &interp) || !interp ||
	    remote_read_word(pid, interp + l->is_threads_head, 8, &ts))
		return -EAGAIN;
	if (PY_TSS_KEY(kw) >= PYTSS_KEYS)
		return -ENOENT; /* kept elsewhere by the C library: never learned */
	pt = xmalloc(PYTSS_WINDOW);
	for (unsigned k = 0; ts && !(ts & 7) && k < PY_TSS_STATES; k++) {
		uint64_t pd, next;
		ssize_t len = 0;
		int off;

		if (remote_read_word(pid, ts + l->ts_next, 8, &next) ||
		    remote_read_word(pid, ts + l->ts_thread_id, 8, &pd))
			break;
		if (pd && !(pd & 7))
			len = remote_read(pid, pd, pt, PYTSS_WINDOW);
		off = len > 0 ? pytss_slot(pt, len, pd, PY_TSS_KEY(kw), ts) : -ENOENT;
		if (off == -EEXIST || (off >= 0 && found && found != (uint64_t)off)) {
			err = -EEXIST;
			break;
		}
		if (off >= 0) {
			found = off;
			err = 0;
		}
		ts = next;
	}
	free(pt);
	if (!err) {
		*slot = found;
		*keyword = kw;
	}
	return err;
}

/* Is it known where p's threads keep their states? Learn it if not, at most so often. */
static bool tss_known(struct proc *p, struct pyproc *py)
{
	uint64_t now;
	int err;

	if (py->tss_known)
		return true;
	now = now_ns();
	if (now < py->tss_next_ns)
		return false;
	err = learn_tss(proc_mem_pid(p), py, &py->tss_slot, &py->tss_keyword);
	if (!err) {
		py->tss_known = true;
		pr_dbg(1, "process %d: its threads keep their Python thread states at %#llx from "
		       "their thread pointers (key %u)", p->pid, (unsigned long long)py->tss_slot,
		       PY_TSS_KEY(py->tss_keyword));
		return true;
	}
	/* not initialised yet: soon again; no state found where it should be: less and less
	 * often, as it may never be found (another C library) */
	if (err == -EAGAIN || py->tss_wait_ns < PY_TSS_SOON_NS)
		py->tss_wait_ns = PY_TSS_SOON_NS;
	else if (py->tss_wait_ns < PY_TSS_LATEST_NS)
		py->tss_wait_ns *= 2;
	py->tss_next_ns = now + py->tss_wait_ns;
	if (err != -EAGAIN)
		pr_dbg(2, "process %d: where its threads keep their Python thread states is not "
		       "known yet (%s)", p->pid, err == -EEXIST ? "threads disagree" : "not found");
	return false;
}

bool python_stub_words(struct proc *p, uint64_t w[PYTHON_STUB_WORDS])
{
	struct pyproc *py = pyproc_of(p);
	const struct pylayout *l;

	probe(p, py);
	if (py->state != PY_READY || !tss_known(p, py))
		return false;
	l = py->l;
	w[0] = py->runtime + l->rt_tstate_current;
	w[1] = py->tss_slot;
	w[2] = l->ts_cframe;
	w[3] = l->cf_current_frame;
	w[4] = l->fr_code;
	w[5] = l->fr_prev_instr;
	w[6] = l->fr_is_entry;
	w[7] = l->fr_previous;
	w[8] = py->runtime + l->rt_finalizing;
	w[9] = py->runtime + l->rt_tss_key;
	w[10] = py->tss_keyword;
	w[11] = STUB_PY_MAX_FRAMES;
	return true;
}

unsigned python_merge(struct proc *p, uint64_t tp, uint64_t *pcs, unsigned n, unsigned max)
{
	struct pyproc *py = pyproc_of(p);
	uint64_t frames[PYLAYOUT_MAX_FRAMES];
	bool entry[PYLAYOUT_MAX_FRAMES];
	unsigned m;
	uint64_t ts;

	probe(p, py);
	if (py->state != PY_READY || !tp || !max)
		return n;
	ts = gil_holder(proc_mem_pid(p), py, tp);
	if (!ts)
		return n;
	m = read_chain(p, py, ts, frames, entry, max < PYLAYOUT_MAX_FRAMES ? max :
						 PYLAYOUT_MAX_FRAMES);
	return merge(py, frames, entry, m, pcs, n, max);
}

bool python_resolve(const struct proc *p, uint64_t addr, struct sym_frame *sf)
{
	const struct pyproc *py = p->py;
	const struct pyframe *f;
	const char *file;

	if (!frames_is_python(addr))
		return false;
	*sf = (struct sym_frame){ .line = -1 };
	if (!py || (uint32_t)addr >= py->nframes) {
		sf->function = "[python]";
		return true;
	}
	f = &py->frames[(uint32_t)addr];
	file = py->strs[f->file];
	sf->function = py->strs[f->function];
	sf->file = file;
	sf->line = f->line;
	return true;
}

void python_forget_image(struct proc *p)
{
	struct pyproc *py = p->py;

	if (!py)
		return;
	forget_codes(py);
	py->state = PY_NONE;
	py->mods_seen = 0;
	py->l = NULL;
	py->tss_known = false;
	py->tss_next_ns = py->tss_wait_ns = 0;
}

void python_fork(struct proc *child, const struct proc *parent)
{
	const struct pyproc *pp = parent->py;
	struct pyproc *py;

	if (!pp)
		return;
	py = pyproc_of(child);
	for (uint32_t i = 0; i < pp->nframes; i++) {
		const struct pyframe *f = &pp->frames[i];

		intern_frame(py, intern_str(py, pp->strs[f->function]),
			     intern_str(py, pp->strs[f->file]), f->line);
	}
}

void python_free(struct proc *p)
{
	struct pyproc *py = p->py;

	if (!py)
		return;
	forget_codes(py);
	free(py->codes);
	for (uint32_t i = 0; i < py->nstrs; i++)
		free(py->strs[i]);
	free(py->strs);
	free(py->str_ids.v);
	free(py->frames);
	free(py->frame_ids.v);
	pymemo_free(py->memo);
	free(py);
	p->py = NULL;
}
