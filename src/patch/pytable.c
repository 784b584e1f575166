// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython's allocator tables (pytable.h): found from the code of PyObject_Malloc and
 * PyMem_Malloc, checked in the process, their words sent through the entry stubs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "python"
#include "arch/arch.h"
#include "heap/hooks.h"
#include "patch/pytable.h"
#include "patch/stubs.h"
#include "symbols/symbols.h"
#include "target/process.h"
#include "target/remote.h"
#include "util/log.h"
#include "util/maps.h"
#include "util/util.h"

/* A PyMemAllocatorEx: the context passed first, then the four functions, in hook order. */
#define PYT_CTX 0
#define PYT_WORDS 5

/* The most bytes of a PyObject_Malloc, PyMem_Malloc or PyObject_Free that only calls through
 * the table (16 to 35 in CPython 3.6 to 3.13, shared or static): larger, it holds pymalloc's
 * own code, inlined. The table's two words are read within its first bytes either way. */
#define PY_DISPATCH_MAX 64

/* True if m's entry points hold pymalloc's code (link-time optimisation): a call inlined in
 * their callers reaches no entry. */
static bool inlined(const struct module *m, const uint64_t *hooks)
{
	static const int probe[] = { HOOK_PY_OBJECT_MALLOC, HOOK_PY_MEM_MALLOC,
				     HOOK_PY_OBJECT_FREE };

	for (size_t i = 0; i < ARRAY_SIZE(probe); i++)
		if (hooks[probe[i]] &&
		    sym_func_size(m->path, arch->code_addr(hooks[probe[i]])) > PY_DISPATCH_MAX)
			return true;
	return false;
}

/*
 * The table the function at symbol value sym of m calls through, in the process: the first two
 * PC-relative words it reads that are neighbours (ctx and malloc, in either order; pyenv's
 * build loads ctx then jumps through malloc, Debian's loads both and compares malloc with
 * pymalloc's). 0 if not found.
 */
static uint64_t table_of(const struct module *m, uint64_t sym)
{
	uint8_t code[PY_DISPATCH_MAX];
	uint64_t refs[4];
	ssize_t n = sym_read_code(m->path, arch->code_addr(sym), code, sizeof(code));
	unsigned k;

	if (n <= 0 || !arch->pc_data_refs)
		return 0;
	k = arch->pc_data_refs(arch->code_addr(sym), code, (size_t)n, refs, ARRAY_SIZE(refs));
	for (unsigned i = 0; i + 1 < k; i++) {
		uint64_t lo = refs[i] < refs[i + 1] ? refs[i] : refs[i + 1];
		uint64_t hi = refs[i] < refs[i + 1] ? refs[i + 1] : refs[i];

		if (hi - lo == 8 && !(lo & 7))
			return lo + m->bias;
	}
	return 0;
}

/* w is the thunk of a word heaptrace redirected already (another hook of the same table). */
static bool ours(const struct stubs *s, uint64_t w)
{
	for (unsigned i = 0; s && i < s->npatch; i++)
		if (s->patch[i].slot && s->patch[i].thunk == w)
			return true;
	return false;
}

/* The table at addr is one: in writable memory, its four functions in m's code (or already
 * sent to the stubs). */
static bool table_ok(struct proc *p, pid_t tid, const struct module *m, uint64_t addr)
{
	pid_t pid = proc_mem_pid(p);
	uint64_t w[PYT_WORDS];
	struct mapping *maps = NULL;
	ssize_t n = maps_read(pid, &maps);
	bool writable = false;

	for (ssize_t i = 0; i < n; i++)
		if (maps[i].start <= addr && addr + sizeof(w) <= maps[i].end)
			writable = (maps[i].prot & MAP_W) != 0;
	free(maps);
	if (!writable || remote_read(tid, addr, w, sizeof(w)) != (ssize_t)sizeof(w))
		return false;
	for (unsigned i = PYT_CTX + 1; i < PYT_WORDS; i++)
		if ((w[i] < m->exec_start || w[i] >= m->exec_end) && !ours(p->stubs, w[i]))
			return false;
	return true;
}

/* The index of hook h's word in its table (1: malloc ... 4: free). */
static unsigned word_of(int h)
{
	return 1 + (unsigned)(h <= HOOK_PY_OBJECT_FREE ? h - HOOK_PY_OBJECT_MALLOC :
						       h - HOOK_PY_MEM_MALLOC);
}

/*
 * The domain's table sends its calls to malloc (PYTHONMALLOC=malloc): its malloc word is the
 * raw domain's (PyMem_RawMalloc's table), and its blocks are malloc's, traced as such.
 */
static bool is_raw(pid_t tid, const struct module *m, uint64_t table)
{
	uint64_t raw_sym = sym_lookup(m->path, "PyMem_RawMalloc");
	uint64_t raw = raw_sym ? table_of(m, raw_sym) : 0, a, b;

	return raw && raw != table && !remote_read_word(tid, raw + 8, 8, &a) &&
	       !remote_read_word(tid, table + 8, 8, &b) && a == b;
}

/* Hook h's word in its table (the object domain's or the memory one's), 1 if that domain is
 * malloc's, or 0. */
static uint64_t slot_of(struct proc *p, pid_t tid, int h, const struct module *m,
			const uint64_t *hooks)
{
	bool obj = h <= HOOK_PY_OBJECT_FREE;
	int first = obj ? HOOK_PY_OBJECT_MALLOC : HOOK_PY_MEM_MALLOC;
	uint64_t table = hooks[first] ? table_of(m, hooks[first]) : 0;
	uint64_t other = hooks[obj ? HOOK_PY_MEM_MALLOC : HOOK_PY_OBJECT_MALLOC];

	/* two domains, two tables: one address for both would be a misreading */
	if (!table || (other && table_of(m, other) == table) ||
	    !table_ok(p, tid, m, table))
		return 0;
	if (is_raw(tid, m, table))
		return 1; /* not pymalloc's */
	return table + 8 * (uint64_t)word_of(h);
}

int pytable_arm(struct proc *p, pid_t tid, int h, const struct module *m, const uint64_t *hooks)
{
	uint64_t slot = p->stubs ? slot_of(p, tid, h, m, hooks) : 0;
	uint64_t entry = arch->code_addr(hooks[h] + m->bias);
	bool inl = inlined(m, hooks);
	/* a forked child gets a breakpoint at the entry where that sees every call */
	int ret = slot > 1 ? stubs_patch_slot(p, tid, slot, h, inl ? 0 : entry) : -ENOENT;

	if (slot == 1)
		return 0;
	if (!ret) {
		p->hook_addr[h] = entry;
		hook_enable_pymalloc();
		pr_dbg(1, "traced %s through its table at %#llx (%s)", hook_table[h].name,
		       (unsigned long long)slot, m->path);
		return 0;
	}
	pr_dbg(1, "%s not traced through its table: %s", hook_table[h].name,
	       ret == -ENOENT ? "no table" : strerror(-ret));
	if (!inl)
		return 1;
	if (h == HOOK_PY_OBJECT_MALLOC)
		pr_info("%s: its Python allocator (pymalloc) is inlined into its callers, and %s: "
			"its blocks are not traced", m->path,
			!p->stubs ? "only entry stubs reach it (not --mode=breakpoint)" :
				    ret == -ENOENT ? "its allocator table was not found" :
						     strerror(-ret));
	return 0;
}

/*
 * Where the word of patch sp leads now: 1 to heaptrace's thunk, directly or through a wrapper
 * (whose context holds a PyMemAllocatorEx with the word: tracemalloc's at the context, the debug
 * hooks' after a byte of domain id); -1 to pymalloc's own function again, directly or wrapped
 * (the interpreter set its tables again); 0 elsewhere (malloc's, under PYTHONMALLOC=malloc).
 */
static int leads_to(pid_t tid, const struct stubs_patch *sp)
{
	uint64_t old, now, ctx, w;

	memcpy(&old, sp->saved, sizeof(old));
	if (remote_read_word(tid, sp->addr, 8, &now))
		return 0;
	if (now == sp->thunk || now == old)
		return now == sp->thunk ? 1 : -1;
	if (remote_read_word(tid, sp->addr - 8 * (uint64_t)word_of(sp->hook), 8, &ctx) || !ctx ||
	    ctx & 7)
		return 0;
	for (uint64_t off = 0; off <= 8; off += 8)
		if (!remote_read_word(tid, ctx + off + 8 * (uint64_t)word_of(sp->hook), 8, &w) &&
		    (w == sp->thunk || w == old))
			return w == sp->thunk ? 1 : -1;
	return 0;
}

void pytable_check(struct proc *p, pid_t tid)
{
	struct stubs *s = p->stubs;

	for (unsigned i = 0; s && !s->slots_told && i < s->npatch; i++) {
		const struct stubs_patch *sp = &s->patch[i];

		if (!sp->slot || leads_to(tid, sp) >= 0)
			continue;
		s->slots_told = true;
		pr_warn("process %d set its Python allocator again after heaptrace traced it "
			"(PYTHONMALLOC or -X dev at its start): %s and the like made since were not "
			"traced; heaptrace -p traces them", p->pid, hook_table[sp->hook].name);
	}
}
