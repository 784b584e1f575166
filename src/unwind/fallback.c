// SPDX-License-Identifier: GPL-2.0-only
/* The hooks of a traced process's unwinds: what its code, symbols and CFI say of each address,
 * cached; the quick steps by cached CFI rules; and the stack scan's live side. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "fallback"
#include "arch/arch.h"
#include "unwind/cfi.h"
#include "unwind/fallback.h"
#include "unwind/frames.h"
#include "unwind/quickmemo.h"
#include "util/log.h"
#include "symbols/perfmap.h"
#include "symbols/symbols.h"
#include "unwind/jitcode.h"
#include "unwind/unwind.h"
#include "util/util.h"

/* Functions no frame is below: the scan does not go past them. */
static const char *const outermost[] = {
	"_start", "__start", "__libc_start_main", "__libc_start_call_main", "start_thread",
	"thread_start", "clone", "__clone", "clone3", "__clone3", "_dl_start_user",
};

static ssize_t read_words(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const unsigned w = arch->word_size;
	size_t done = 0;

	(void)ctx;
	for (; done + w <= len; done += w) {
		uint64_t v;

		if (unwind_read_current(addr + done, &v))
			break;
		memcpy((uint8_t *)buf + done, &v, w); /* little-endian targets */
	}
	return done;
}

/* Where a return address lies: in main, in an outermost function, or elsewhere. */
enum place { PLACE_OTHER, PLACE_MAIN, PLACE_OUTERMOST };

#define CACHE_SIZE 4096 /* a power of two */
#define CALLS_SIZE 4096 /* likewise */

/*
 * Per process: its symbols, and what they say of each code address looked up. libdwfl's
 * address lookup walks the whole symbol table (measured: forkstress's 595000 allocations took
 * 2 minutes of CPU more without this cache), and most backtraces end in the same few places.
 */
#define CFI_UNSEEN -2 /* not looked up yet */
#define CFI_NO_MODULE -1 /* in no module libdwfl knows (the vdso): libunwind's to step */
/* A return address the perf map did not name is looked up again (the map read on) only after
 * this long: the code of a frame is named before it runs, so a miss is seldom a late line. */
#define JIT_RECHECK_NS 10000000ull

struct fallback {
	struct symbolizer *sym;
	bool no_quick; /* HEAPTRACE_NO_QUICK: every backtrace by libunwind's steps */
	struct qmemo *memo; /* quick backtraces, by what they read (quickmemo.h) */
	/* the executable file mappings, read when code in no module was met (jit_alias) */
	struct mapping *xmaps;
	size_t nxmaps;
	uint64_t xmaps_ns; /* when, 0: never */
	struct entry {
		uint64_t key; /* code address << 1 | is_return, 0 = empty */
		uint64_t start; /* function start (code address), 0 if unknown */
		enum place place;
		bool named; /* start and place looked up (libunwind's frames need only cfi) */
		int cfi; /* enum cfi_table of a return address, or CFI_UNSEEN, CFI_NO_MODULE */
		signed char signal; /* of a code address: a signal frame's (1), not (0), unseen */
		signed char jit; /* of a return address: in JIT code (1), not (0), unseen (-1) */
		signed char quick; /* rule holds its cfi_rule (1), it has none (0), unseen (-1) */
		uint64_t jit_ns; /* when it was last found not to be */
		struct cfi_rule rule;
	} cache[CACHE_SIZE];
	struct call_seen { /* after_call() of a word */
		uint64_t word, target;
		bool known, ok;
	} calls[CALLS_SIZE];
};

static bool same_name(const char *sym, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(sym, name, n) && (!sym[n] || sym[n] == '@'); /* __libc_start_main@@.. */
}

static enum place place_of_name(const char *name)
{
	if (!name)
		return PLACE_OTHER;
	if (same_name(name, "main"))
		return PLACE_MAIN;
	for (size_t i = 0; i < sizeof(outermost) / sizeof(outermost[0]); i++)
		if (same_name(name, outermost[i]))
			return PLACE_OUTERMOST;
	return PLACE_OTHER;
}

/* p's, made at the first look-up. */
static struct fallback *fallback_of(struct proc *p)
{
	struct fallback *fb = p->fallback;

	if (!fb) {
		fb = p->fallback = xcalloc(1, sizeof(*fb));
		fb->sym = sym_open(&p->mods);
		fb->no_quick = getenv("HEAPTRACE_NO_QUICK") != NULL;
		fb->memo = qmemo_new();
	}
	return fb;
}

/* The cache entry of code address pc (a return address if is_return). */
static struct entry *entry_of(struct proc *p, uint64_t pc, bool is_return)
{
	uint64_t key = (arch->code_addr(frames_addr(pc)) << 1) | is_return;
	struct entry *e = &fallback_of(p)->cache[hash64(key) & (CACHE_SIZE - 1)];

	if (e->key != key)
		*e = (struct entry){ .key = key, .cfi = CFI_UNSEEN, .signal = -1, .jit = -1,
				     .quick = -1 };
	return e;
}

/* Is code address code in a module's code, not just its extent: a pointer to its data (seen
 * in the arm guest: to ld.so's __stack_chk_guard, after the random canary, which decoded as
 * a bl now and then) is no return address. */
static bool in_code(struct proc *p, uint64_t code)
{
	const struct module *m = modlist_find(&p->mods, code);

	return m && m->exec && code >= m->exec_start + ARCH_CALL_WINDOW && code <= m->exec_end;
}

static bool read_after_call(uint64_t ret, uint64_t *target)
{
	uint8_t insn[ARCH_CALL_WINDOW];

	if (read_words(NULL, arch->code_addr(ret) - ARCH_CALL_WINDOW, insn, sizeof(insn)) !=
	    sizeof(insn))
		return false;
	return arch->after_call(insn, ret, target);
}

/*
 * Is ret (a word as the stack holds it: arm's Thumb bit says how the call before it reads)
 * just after a call in a module's code? *target: a direct call's destination. Each answer is
 * kept, by the word: a module's code does not change while it is mapped, and a stack scan
 * tries the same stale return addresses record after record (node: 1,000 words a record).
 */
static bool after_call(void *ctx, uint64_t ret, uint64_t *target)
{
	struct proc *p = ctx;
	struct call_seen *c = &fallback_of(p)->calls[hash64(ret) & (CALLS_SIZE - 1)];

	if (c->word != ret || !c->known) {
		c->word = ret;
		c->known = true;
		c->ok = in_code(p, arch->code_addr(ret)) && read_after_call(ret, &c->target);
	}
	*target = c->target;
	return c->ok;
}

static bool is_return(void *ctx, uint64_t ret)
{
	uint64_t target;

	return after_call(ctx, ret, &target);
}

/* The same, with its function's start and place. */
static struct entry *look_up(struct proc *p, uint64_t pc, bool is_return)
{
	struct entry *e = entry_of(p, pc, is_return);

	if (!e->named) {
		uint64_t s = 0;
		const char *name = sym_function(p->fallback->sym, e->key >> 1, is_return, &s);

		e->start = name ? arch->code_addr(s) : 0;
		e->place = place_of_name(name);
		e->named = true;
	}
	return e;
}

/* The executable file mapping of fb's list that holds addr, or NULL. */
static const struct mapping *xmap_at(const struct fallback *fb, uint64_t addr)
{
	for (size_t i = 0; i < fb->nxmaps; i++)
		if (addr >= fb->xmaps[i].start && addr < fb->xmaps[i].end)
			return &fb->xmaps[i];
	return NULL;
}

/*
 * Code address code lies in no module: is it in a second mapping of a module's file (V8 maps
 * its builtins again, next to the code it generates, so that the calls between them are
 * short)? Return the address of the same byte of the file in the module's own mappings, or 0.
 * The mappings are read again when code is in none of them, at most every JIT_RECHECK_NS.
 */
static uint64_t jit_alias(struct proc *p, uint64_t code)
{
	struct fallback *fb = p->fallback;
	const struct mapping *a = xmap_at(fb, code);
	uint64_t off;

	if (!a && (!fb->xmaps_ns || now_ns() - fb->xmaps_ns >= JIT_RECHECK_NS)) {
		struct mapping *maps = NULL;
		ssize_t n = maps_read(proc_mem_pid(p), &maps);

		fb->nxmaps = 0;
		for (ssize_t i = 0; i < n; i++)
			if (maps[i].path[0] == '/' && maps[i].prot & MAP_X)
				maps[fb->nxmaps++] = maps[i];
		free(fb->xmaps);
		fb->xmaps = maps;
		fb->xmaps_ns = now_ns();
		a = xmap_at(fb, code);
	}
	if (!a || modlist_find(&p->mods, code))
		return 0;
	off = code - a->start + a->offset;
	for (size_t i = 0; i < fb->nxmaps; i++) {
		const struct mapping *b = &fb->xmaps[i];

		if (b != a && b->inode == a->inode && !strcmp(b->path, a->path) &&
		    off >= b->offset && off - b->offset < b->end - b->start &&
		    modlist_find(&p->mods, b->start))
			return b->start + (off - b->offset);
	}
	return 0;
}

/*
 * Is return address pc in code a JIT compiler generated, as the process's perf map says? In no
 * module: the map names it (kept for pc, perfmap.h), or names the code of which it is a second
 * mapping (jit_alias: then that name is kept for pc). In a module: V8 names its builtins there
 * too, code with frame pointers and without CFI.
 */
static bool jit_code(struct proc *p, uint64_t pc)
{
	struct entry *e = entry_of(p, pc, true);
	uint64_t code = arch->code_addr(frames_addr(pc)), start, off, alias;
	struct perfmap *pm;
	const char *name;

	if (e->jit >= 0 && (e->jit || now_ns() - e->jit_ns < JIT_RECHECK_NS))
		return e->jit;
	pm = jit_map(p);
	if (modlist_find(&p->mods, code - 1)) {
		e->jit = perfmap_find(pm, code - 1, &start) ||
			 (perfmap_refresh(pm) && perfmap_find(pm, code - 1, &start));
	} else if (perfmap_name(pm, code, true, &off)) {
		e->jit = true;
	} else if (perfmap_state(pm) == PERFMAP_OPEN && (alias = jit_alias(p, code - 1)) &&
		   (name = perfmap_find(pm, alias, &start))) {
		perfmap_note(pm, code, alias + 1 - start, name);
		e->jit = true;
	} else {
		e->jit = false;
	}
	e->jit_ns = now_ns();
	return e->jit;
}

/* May ret be a caller's pc: a return address in code, or in JIT code, whose instructions the
 * stack copy does not hold? */
static bool ret_ok(void *ctx, uint64_t ret)
{
	return is_return(ctx, ret) || jit_code(ctx, ret);
}

/* The call site of return address pc, as libdwfl looks code up. */
static uint64_t call_site(uint64_t pc)
{
	return arch->code_addr(frames_addr(pc)) - 1;
}

/* Which CFI describes the call site of return address pc: enum cfi_table or CFI_NO_MODULE. */
static int cfi_of(struct proc *p, uint64_t pc)
{
	struct entry *e = entry_of(p, pc, true);

	if (e->cfi == CFI_UNSEEN) {
		Dwfl_Module *m = sym_module(p->fallback->sym, call_site(pc));

		e->cfi = m ? (int)cfi_covers(m, call_site(pc)) : CFI_NO_MODULE;
	}
	return e->cfi;
}

static uint64_t func_start(void *ctx, uint64_t pc, bool is_return)
{
	return look_up(ctx, pc, is_return)->start;
}

static enum place place_of(struct proc *p, uint64_t pc)
{
	return look_up(p, pc, true)->place;
}

/*
 * The scan ends at main: the C library calls it through a pointer, which no call instruction
 * can confirm, and in a static program the words above main's frame are left by the startup
 * code (measured on x86_64: do_lookup_x, _int_malloc taken for main's callers). It ends at
 * an outermost function too (seen in the aarch64 guest: _start found twice above
 * __libc_start_main_impl).
 */
static bool is_last(void *ctx, uint64_t pc)
{
	return place_of(ctx, pc) != PLACE_OTHER;
}

/*
 * libunwind steps where .eh_frame describes the code and .eh_frame_hdr indexes it (without
 * the index, as gcc links -static, libunwind finds no table and guesses, on x86_64 the
 * right pc with a wrong sp), in code libdwfl has no module for (the vdso's signal return),
 * and on arm first everywhere: only it reads .ARM.exidx, the C library's only table, which
 * extend() could not go on from (a program's -g code has .debug_frame and exidx both; C code
 * without unwind tables has a "cannot unwind" entry, where libunwind stops and extend()
 * takes over). Elsewhere extend() steps, so that each frame says truly how it was found.
 */
static bool tables(void *ctx, uint64_t pc)
{
	int t = cfi_of(ctx, pc);

	/* JIT code: libunwind would guess (an rbp chain) and call the frame one of its tables' */
	if (t == CFI_NO_MODULE && jit_code(ctx, pc))
		return false;
	return t == CFI_EH_HDR || t == CFI_NO_MODULE || arch->exidx;
}

/*
 * A step by CFI from the frame at return address pc with registers r, whose caller's frame
 * lies at or above lo. Return 0 with r and *ret the caller's, 1 at the outermost frame, or
 * -errno (-ENOENT: no CFI for pc).
 */
static int step_cfi(struct proc *p, uint64_t pc, struct frames_regs *r, uint64_t lo,
		    uint64_t *ret)
{
	struct frames_regs next = *r;
	uint64_t sp, nsp;
	int err;

	if (cfi_of(p, pc) <= CFI_NONE)
		return -ENOENT;
	err = cfi_step(sym_module(p->fallback->sym, call_site(pc)), call_site(pc),
		       unwind_read_current, &next, ret);
	if (err)
		return err;
	if (!frames_reg(&next, arch->dwarf_sp, &nsp) || nsp < lo || !*ret ||
	    (frames_reg(r, arch->dwarf_sp, &sp) && nsp == sp && *ret == pc) || !ret_ok(p, *ret))
		return -EINVAL;
	*r = next;
	return 0;
}

/* The caller's registers from the frame record at fp, whose saved frame pointer is nfp; *lo:
 * the caller's frame is above the record. Return 0. */
static int to_caller(struct frames_regs *r, uint64_t fp, uint64_t nfp, uint64_t *lo)
{
	r->known = 0;
	if (nfp)
		frames_set_reg(r, arch->fp_reg, nfp);
	if (arch->fp_sp_off)
		frames_set_reg(r, arch->dwarf_sp, fp + arch->fp_sp_off);
	*lo = fp + 2 * arch->word_size;
	return 0;
}

/*
 * A step along frame records (arch_ops.fp_reg) from the frame at return address pc whose
 * frame lies at or above *lo: the record must lie there too, the next one higher up (or be
 * the last, 0), and its return address follow a direct call of the function holding pc. A
 * frame pointer left by a function that keeps none points at the record of a frame further
 * up, which fails that (seen in the aarch64 guest: x29 of -fomit-frame-pointer code led to
 * __libc_start_call_main's record, __libc_start_main taken for the caller). A call through
 * a register or a PLT cannot be checked so: the scan takes over there. Return 0 with r (the
 * frame pointer, and sp where the record says it), *lo (a bound below the caller's frame)
 * and *ret the caller's, or -errno.
 */
static int step_fp(struct proc *p, uint64_t pc, struct frames_regs *r, uint64_t *lo,
		   uint64_t *ret)
{
	const unsigned w = arch->word_size;
	uint64_t fp, nfp, target, start;

	if (arch->fp_reg < 0 || !frames_reg(r, arch->fp_reg, &fp) || fp < *lo || fp % w)
		return -ENOENT;
	if (unwind_read_current(fp, &nfp) || unwind_read_current(fp + w, ret))
		return -EFAULT;
	if (!*ret || !after_call(p, *ret, &target) || (nfp && nfp <= fp))
		return -EINVAL;
	start = func_start(p, pc, true);
	if (!target || !start || target != start)
		return -EINVAL;
	return to_caller(r, fp, nfp, lo);
}

/*
 * A step along the frame record of JIT code (jit_code), which V8, the JVM and LuaJIT keep
 * frame pointers in and describe with no CFI: a real step, not a guess, when the chain is
 * plausible. The record must lie at or above *lo, aligned, inside the thread's stack, the next
 * one higher up (or be the last, 0), and its return address follow a call in a module's code
 * (of any kind: JIT code calls through registers) or lie in JIT code. Return 0 with r, *lo and
 * *ret the caller's, as step_fp does, or -errno.
 */
static int step_jit(struct proc *p, struct frames_regs *r, uint64_t *lo, uint64_t *ret)
{
	const unsigned w = arch->word_size;
	uint64_t fp, nfp, top;

	if (arch->fp_reg < 0 || !frames_reg(r, arch->fp_reg, &fp) || fp < *lo || fp % w)
		return -ENOENT;
	if (unwind_current_top(&top) && (fp > top || top - fp < 2 * w))
		return -EINVAL;
	if (unwind_read_current(fp, &nfp) || unwind_read_current(fp + w, ret))
		return -EFAULT;
	if (!*ret || (nfp && nfp <= fp) || !ret_ok(p, *ret))
		return -EINVAL;
	return to_caller(r, fp, nfp, lo);
}

/* The C library's restorer: glibc's .eh_frame describes it as a signal frame (its x86_64 FDE
 * starts a byte early, so that a look-up at pc - 1 finds it too). libunwind 1.6 knows it only
 * by its code, and glibc 2.36's padding after the system call is not what it looks for. */
static bool signal_frame(void *ctx, uint64_t pc)
{
	struct proc *p = ctx;
	struct entry *e = entry_of(p, pc, false);

	if (e->signal < 0) {
		Dwfl_Module *m = sym_module(p->fallback->sym, arch->code_addr(pc));

		e->signal = m && cfi_signal_frame(m, arch->code_addr(pc));
	}
	return e->signal;
}

/*
 * pcs[0] is the caller's pc at an allocation function's entry, a return address as well.
 * Frame by frame: CFI (.eh_frame or .debug_frame), else a frame record; where neither
 * serves, the stack scan finds the rest. Past main only CFI goes on: the words above main's
 * frame are the start-up code's (measured on x86_64: do_lookup_x, _int_malloc taken for
 * main's callers by the scan).
 */
static unsigned extend(void *ctx, uint64_t *pcs, unsigned n, const struct frames_regs *r0,
		       unsigned max)
{
	struct proc *p = ctx;
	struct frames_env e = { arch->word_size, read_words, p, after_call, func_start, is_last };
	struct frames_regs r = *r0;
	uint64_t lo = 0;
	bool past_main = false;
	enum place place;

	if (!n || n >= max)
		return n;
	/* libunwind's steps wanted the stack above the copy: what the copy holds above the last
	 * frame is that frame's own (a big frame's locals), where a scan would take stale words
	 * for its callers */
	if (unwind_current_ran_off()) {
		if (place_of(p, pcs[n - 1]) == PLACE_OTHER)
			pcs[n - 1] |= FRAMES_STOPPED;
		return n;
	}
	frames_reg(&r, arch->dwarf_sp, &lo);
	for (place = place_of(p, pcs[n - 1]); n < max && place != PLACE_OUTERMOST;
	     place = place_of(p, pcs[n - 1])) {
		uint64_t pc = frames_addr(pcs[n - 1]), ret;
		enum frames_how how = FRAMES_CFI;
		int err;

		past_main |= place == PLACE_MAIN;
		ret = 0;
		err = step_cfi(p, pc, &r, lo, &ret);
		if (err == -EINVAL && ret && signal_frame(p, ret)) {
			/* a handler's frame, whose caller is the kernel's signal frame: the scan
			 * would find stale return addresses, the frames before the signal */
			pcs[n - 1] |= FRAMES_STOPPED;
			return n;
		}
		if (err < 0 && err != -ENOENT)
			pr_dbg(2, "pc %#" PRIx64 ": CFI step refused (%d)", pc, err);
		if (err == 1 || (err && past_main))
			return n;
		if (!err) {
			frames_reg(&r, arch->dwarf_sp, &lo);
		} else {
			how = FRAMES_FP;
			if (!jit_code(p, pc)) {
				if (step_fp(p, pc, &r, &lo, &ret))
					break;
			} else if ((err = step_jit(p, &r, &lo, &ret))) {
				pr_dbg(2, "pc %#" PRIx64 ": JIT code's frame record refused (%d)", pc,
				       err);
				break;
			}
		}
		pcs[n++] = ret | (uint64_t)how << FRAMES_HOW_SHIFT;
	}
	if (n >= max || place != PLACE_OTHER || past_main)
		return n;
	if (lo)
		n += frames_scan(&e, frames_addr(pcs[n - 1]), true, lo, pcs + n, max - n);
	if (n < max && place_of(p, pcs[n - 1]) == PLACE_OTHER)
		pcs[n - 1] |= FRAMES_STOPPED;
	return n;
}

/*
 * The entry of the frame at pc, a return address unless first (the frame an unwind starts in,
 * whose rules libunwind looks up at its exact pc), with quick and rule set: 1 where libunwind
 * would step the frame (tables()) and by rules of the simple kind. The same for as long as the
 * module is mapped.
 */
static struct entry *quick_entry(struct proc *p, uint64_t pc, bool first)
{
	struct entry *e = entry_of(p, pc, !first);
	uint64_t at;
	Dwfl_Module *m;
	struct cfi_rule ru;
	bool ok;

	if (e->quick >= 0)
		return e;
	at = first ? arch->code_addr(frames_addr(pc)) : call_site(pc);
	m = sym_module(p->fallback->sym, at);
	ok = m && tables(p, pc) && !cfi_rule(m, at, &ru);
	e = entry_of(p, pc, !first); /* tables() may have put another address in its slot */
	e->quick = ok;
	if (ok)
		e->rule = ru;
	return e;
}

/*
 * The registers a quick walk steps by: sp, and the frame pointer if fp_known. A step that
 * restores the frame pointer from the stack leaves its slot in fp_at (0: none), read only when
 * a later step finds its frame by it: every word read is one a remembered backtrace depends on
 * (quickmemo.h), and code without frame pointers saves a variable there.
 */
struct quick_regs {
	uint64_t sp, fp, fp_at;
	bool fp_known;
};

/* The frame pointer of r into *fp, read from its slot if a step left it there: 0 or -errno. */
static int quick_fp(struct quick_regs *r, uint64_t mask, uint64_t *fp, struct qmemo_log *log)
{
	if (r->fp_at) {
		if (qmemo_read(log, r->fp_at, &r->fp))
			return -EINVAL;
		r->fp &= mask;
		r->fp_at = 0;
	} else {
		log->fp_used |= !log->fp_restored;
	}
	*fp = r->fp;
	return 0;
}

/* One quick step from the frame at pc (first or not) by rule ru, with registers r: 0 with the
 * caller's in r and *ret its pc, 1 if there is no caller, or -EINVAL where the step is not the
 * simple kind libunwind would take as it is. The words read, and whether it used the frame
 * pointer r started with, go into log. */
static int quick_step(struct proc *p, const struct cfi_rule *ru, uint64_t pc, bool first,
		      struct quick_regs *r, uint64_t *ret, struct qmemo_log *log)
{
	const uint64_t mask = arch->word_size == 4 ? 0xffffffffull : ~0ull;
	uint64_t cfa, fp;

	/* no caller: libunwind stops, and so does extend() (its CFI step, at a return address,
	 * finds no caller either; at an outermost function it takes no step) */
	if (ru->ra == CFI_LOST)
		return !first || place_of(p, pc) == PLACE_OUTERMOST ? 1 : -EINVAL;
	if (ru->cfa_reg == arch->dwarf_sp)
		cfa = (r->sp + (uint64_t)ru->cfa_off) & mask;
	else if (r->fp_known && !quick_fp(r, mask, &fp, log))
		cfa = (fp + (uint64_t)ru->cfa_off) & mask;
	else
		return -EINVAL;
	if (qmemo_read(log, (cfa + (uint64_t)ru->ra_off) & mask, ret))
		return -EINVAL;
	*ret &= mask;
	/* step_ok()'s tests (unwind.c): up the stack (ret_ok: below) */
	if (cfa < r->sp || (cfa == r->sp && *ret == pc) || !*ret)
		return -EINVAL;
	r->sp = cfa;
	if (ru->fp == CFI_AT_CFA) {
		r->fp_at = (cfa + (uint64_t)ru->fp_off) & mask;
		r->fp_known = true;
		log->fp_restored = true;
	} else if (ru->fp == CFI_LOST) {
		r->fp_at = 0;
		r->fp_known = false;
	}
	return 0;
}

/*
 * libunwind's steps without libunwind where each is of the simple kind a cfi_rule holds, which
 * libunwind takes as the rule says: a cached rule and a word or two read per frame, where
 * libunwind parses the frame's rules again (from its own cache, under a lock) and reads every
 * register's. Frames past libunwind's part (extend()), a caller's pc that is no return address
 * (ret_ok() takes JIT code's too, whose frames are libunwind's to refuse) or any other kind of
 * step: 0, and unwind_capture goes libunwind's way from the start, so that every backtrace is
 * the same.
 */
static unsigned quick_walk(struct proc *p, struct qmemo_key k, uint64_t *pcs,
			   struct qmemo_log *log)
{
	uint64_t pc = k.pc;
	struct entry *e = quick_entry(p, pc, true);
	struct quick_regs r = { .sp = k.sp, .fp = k.fp, .fp_at = 0, .fp_known = k.fp_known };
	unsigned n = 0;

	for (pcs[n++] = pc; n < k.max; pcs[n++] = pc) {
		struct cfi_rule ru = e->rule;
		int err = e->quick ? quick_step(p, &ru, pc, n == 1, &r, &pc, log) : -EINVAL;

		if (err)
			return err == 1 ? n : 0;
		if (!is_return(p, pc))
			return 0;
		e = quick_entry(p, pc, false);
	}
	return n;
}

/* quick_walk, or the same backtrace remembered (quickmemo.h). */
static unsigned quick(void *ctx, uint64_t pc, const struct frames_regs *r, uint64_t *pcs,
		      unsigned max)
{
	struct proc *p = ctx;
	struct qmemo_key k = { .pc = pc, .max = max };
	struct qmemo_log log;
	unsigned n;

	k.fp_known = arch->fp_reg >= 0 && frames_reg(r, (unsigned)arch->fp_reg, &k.fp);
	/* arm: libunwind reads .ARM.exidx */
	if (!frames_reg(r, arch->dwarf_sp, &k.sp) || arch->exidx || fallback_of(p)->no_quick)
		return 0;
	n = qmemo_find(p->fallback->memo, &k, pcs);
	if (n)
		return n;
	log.n = 0;
	log.over = log.fp_used = log.fp_restored = false;
	n = quick_walk(p, k, pcs, &log);
	if (n)
		qmemo_keep(p->fallback->memo, &k, &log, pcs, n);
	return n;
}

void fallback_hooks(struct proc *p, struct unwind_hooks *h)
{
	*h = (struct unwind_hooks){ ret_ok, signal_frame, tables, extend, quick, p };
}

void fallback_flush(struct proc *p)
{
	if (p->fallback) {
		sym_close(p->fallback->sym);
		qmemo_free(p->fallback->memo);
		free(p->fallback->xmaps);
		free(p->fallback);
		p->fallback = NULL;
	}
}
