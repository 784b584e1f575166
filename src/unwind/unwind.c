// SPDX-License-Identifier: GPL-2.0-only
/* libunwind-ptrace, with our own register and memory accessors (see unwind.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <libunwind-ptrace.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "unwind"
#include "util/log.h"
#include "util/maps.h"
#include "unwind/procinfo.h"
#include "target/process.h"
#include "target/remote.h"
#include "unwind/sigmask.h"
#include "unwind/unwind.h"
#include "util/util.h"

#define LINE_SHIFT 9 /* 512-byte blocks of tracee memory */
#define LINES 16
#define PREFETCH_LINES 4 /* read at once from sp up: the frames of most backtraces */
#define RO_SHIFT 10 /* 1 KiB blocks of read-only file mappings (unwind tables) */
#define RO_LINES 256

/* Blocks of memory that does not change while mapped: kept from stop to stop. */
struct ro_cache {
	struct mapping *maps; /* file-backed mappings (see ro_load) */
	size_t n;
	uint64_t tag[RO_LINES];
	uint8_t data[RO_LINES][1 << RO_SHIFT];
};

struct unwinder {
	unw_addr_space_t as;
	void *upt; /* _UPT context: for addresses in no module (procinfo.c) */
	struct procinfo *tables; /* every module's unwind tables */
	pid_t pid;
	struct ro_cache *ro; /* NULL until the first unwind after a mapping change */
};

struct unwind_reader {
	pid_t tid; /* the thread being unwound */
	const struct arch_regs *regs; /* during a capture */
	struct unwinder *u; /* during a capture */
	struct ro_cache *ro; /* during a capture: its unwinder's */
	uint64_t tag[LINES]; /* block address | 1 when valid */
	uint8_t data[LINES][1 << LINE_SHIFT];
	/* unwinding from a record's copy of the stack (stubs.h): memory is that copy and the
	 * read-only mappings, nothing else (the live stack has moved on) */
	const uint8_t *copy;
	uint64_t copy_lo, copy_len;
	uint64_t copy_used; /* bytes from copy_lo to the end of the highest word read */
	bool copy_over; /* a word just past the copy's end was wanted (COPY_OVER) */
	uint64_t nquick, nremembered, nslow; /* unwind_reader_stats */
	struct { /* unwind_sent_begin, unwind_sent_add */
		uint64_t lo, hi;
		struct unwind_sent *v;
		unsigned n, cap;
	} sent;
};

/*
 * The reader whose capture runs on this thread. libunwind's accessors cannot be given it: their
 * argument is the _UPT context given to unw_init_remote, or a module's own (procinfo.c) when a
 * search of its table reads memory; nor can cfi_step's reads (cfi.h).
 */
static _Thread_local struct unwind_reader *active;

struct unwind_reader *unwind_reader_new(void)
{
	return xcalloc(1, sizeof(struct unwind_reader));
}

void unwind_reader_free(struct unwind_reader *rd)
{
	if (rd)
		free(rd->sent.v);
	free(rd);
}

void unwind_copy_use(const struct unwind_reader *rd, unsigned *used, bool *over)
{
	*used = (unsigned)rd->copy_used;
	*over = rd->copy_over;
}

void unwind_reader_stats(const struct unwind_reader *rd, uint64_t *quick, uint64_t *remembered,
			 uint64_t *slow)
{
	*quick = rd->nquick;
	*remembered = rd->nremembered;
	*slow = rd->nslow;
}

/* Word at addr of rd's thread, not cached: 0 or -1. */
static int read_direct(const struct unwind_reader *rd, uint64_t addr, unw_word_t *val)
{
	return remote_read(rd->tid, addr, val, sizeof(*val)) == sizeof(*val) ? 0 : -1;
}

/* Word at addr of rd's thread through a direct-mapped cache of 1 << shift byte blocks. */
static int read_line(const struct unwind_reader *rd, uint64_t addr, unw_word_t *val,
		     unsigned shift, unsigned lines, uint64_t *tag, uint8_t *data)
{
	uint64_t blk = addr >> shift << shift;
	unsigned off = addr - blk, line = (blk >> shift) % lines;
	uint8_t *d = data + ((size_t)line << shift);

	if (off + sizeof(*val) > (1u << shift)) /* straddles two blocks */
		return read_direct(rd, addr, val);
	if (tag[line] != (blk | 1)) {
		ssize_t n = remote_read(rd->tid, blk, d, (size_t)1 << shift);

		if (n != (ssize_t)1 << shift) {
			tag[line] = 0;
			return read_direct(rd, addr, val);
		}
		tag[line] = blk | 1;
	}
	memcpy(val, d + off, sizeof(*val));
	return 0;
}

static bool is_ro(const struct ro_cache *ro, uint64_t addr)
{
	size_t lo = 0, hi = ro ? ro->n : 0;

	while (lo < hi) { /* maps are sorted by address */
		size_t mid = (lo + hi) / 2;

		if (addr < ro->maps[mid].start)
			hi = mid;
		else if (addr >= ro->maps[mid].end)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* Reads this far past a copy's end are the unwind running off it: the stack it copied went on
 * (further up are other stacks, or data a scan tries as words). */
#define COPY_OVER 4096u

/* Do the bytes [lo, end) lie in rd's copy of the stack? */
static bool copy_holds(const struct unwind_reader *rd, uint64_t lo, uint64_t end)
{
	return rd->copy && lo >= rd->copy_lo && end >= lo && end - rd->copy_lo <= rd->copy_len;
}

/* The copy was read up to end (unwind_copy_use). */
static void copy_read_to(struct unwind_reader *rd, uint64_t end)
{
	if (end - rd->copy_lo > rd->copy_used)
		rd->copy_used = end - rd->copy_lo;
}

static int read_cached(struct unwind_reader *rd, uint64_t addr, unw_word_t *val)
{
	if (copy_holds(rd, addr, addr + sizeof(*val))) {
		memcpy(val, rd->copy + (addr - rd->copy_lo), sizeof(*val));
		copy_read_to(rd, addr + sizeof(*val));
		return 0;
	}
	if (rd->copy) {
		uint64_t end = addr - rd->copy_lo + sizeof(*val);

		if (!is_ro(rd->ro, addr)) {
			rd->copy_over |= addr >= rd->copy_lo && end <= rd->copy_len + COPY_OVER;
			return -1;
		}
	}
	if (is_ro(rd->ro, addr))
		return read_line(rd, addr, val, RO_SHIFT, RO_LINES, rd->ro->tag,
				 &rd->ro->data[0][0]);
	return read_line(rd, addr, val, LINE_SHIFT, LINES, rd->tag, &rd->data[0][0]);
}

/*
 * The file mappings of u's process, for the cache that outlives a stop: code and unwind tables,
 * and the modules' data, where the unwinder reads only what relocation wrote once: a C++
 * function's CIE names its personality routine through a pointer in .data
 * (DW.ref.__gxx_personality_v0), and libunwind gives up on a frame whose CIE it cannot read,
 * so without it a record's backtrace ended at the first function with a try block or a
 * destructor to run. Stacks and heaps are anonymous and never in it.
 */
static struct ro_cache *ro_load(pid_t pid)
{
	struct ro_cache *ro = xcalloc(1, sizeof(*ro));
	struct mapping *maps = NULL;
	ssize_t n = maps_read(pid, &maps);

	for (ssize_t i = 0; i < n; i++)
		if (maps[i].path[0] == '/')
			maps[ro->n++] = maps[i];
	ro->maps = maps;
	return ro;
}

static void ro_free(struct ro_cache *ro)
{
	if (ro) {
		free(ro->maps);
		free(ro);
	}
}

void unwind_prefetch(struct unwind_reader *rd, pid_t tid, uint64_t sp)
{
	uint64_t blk = sp >> LINE_SHIFT << LINE_SHIFT;
	uint8_t buf[PREFETCH_LINES << LINE_SHIFT];
	ssize_t n;

	rd->tid = tid;
	memset(rd->tag, 0, sizeof(rd->tag));
	n = remote_read(tid, blk, buf, sizeof(buf));
	for (unsigned i = 0; n > 0 && (i + 1) << LINE_SHIFT <= (size_t)n; i++) {
		uint64_t b = blk + ((uint64_t)i << LINE_SHIFT);
		unsigned line = (b >> LINE_SHIFT) % LINES;

		memcpy(rd->data[line], buf + ((size_t)i << LINE_SHIFT), 1 << LINE_SHIFT);
		rd->tag[line] = b | 1;
	}
}

void unwind_sent_begin(struct unwind_reader *rd, uint64_t lo, uint64_t hi)
{
	rd->sent.lo = lo;
	rd->sent.hi = hi;
	rd->sent.n = 0;
}

void unwind_sent_add(struct unwind_reader *rd, struct unwind_sent s)
{
	if (rd->sent.n == rd->sent.cap) {
		rd->sent.cap = rd->sent.cap ? 2 * rd->sent.cap : 16;
		rd->sent.v = xrealloc(rd->sent.v, rd->sent.cap * sizeof(*rd->sent.v));
	}
	rd->sent.v[rd->sent.n++] = s;
}

/* A word of the stack as the program wrote it: a trampoline's address put in place of a sent
 * call's return address is that return address. */
static int read_word(struct unwind_reader *rd, uint64_t addr, unw_word_t *val)
{
	const struct unwind_sent *best = NULL;
	uint64_t code;

	if (read_cached(rd, addr, val))
		return -1;
	if (!rd->sent.n) /* the common case: nothing sent, no code address to take */
		return 0;
	code = arch->code_addr(*val);
	if (code < rd->sent.lo || code >= rd->sent.hi)
		return 0;
	for (unsigned i = 0; i < rd->sent.n; i++)
		if (rd->sent.v[i].sp >= addr && (!best || rd->sent.v[i].sp < best->sp))
			best = &rd->sent.v[i];
	if (best)
		*val = (unw_word_t)best->ret;
	return 0;
}

int unwind_read_word(struct unwind_reader *rd, uint64_t addr, uint64_t *val)
{
	unw_word_t w; /* the tracee's word: heaptrace runs on the architecture it traces */

	if (read_word(rd, addr, &w))
		return -EFAULT;
	*val = w;
	return 0;
}

int unwind_read_current(uint64_t addr, uint64_t *val)
{
	return active ? unwind_read_word(active, addr, val) : -EFAULT;
}

bool unwind_current_same(const uint64_t *addr, const uint64_t *val, unsigned n, uint64_t lo,
			 uint64_t end)
{
	struct unwind_reader *rd = active;
	uint64_t v;

	/* read_word's own result, without a call per word: nothing sent to take, every word in
	 * the copy, and the highest one counted as read */
	if (rd && !rd->sent.n && copy_holds(rd, lo, end)) {
		for (unsigned i = 0; i < n; i++) {
			memcpy(&v, rd->copy + (addr[i] - rd->copy_lo), sizeof(v));
			if (v != val[i])
				return false;
		}
		copy_read_to(rd, end);
		return true;
	}
	for (unsigned i = 0; i < n; i++)
		if (unwind_read_current(addr[i], &v) || v != val[i])
			return false;
	return true;
}

void unwind_current_remembered(void)
{
	if (active)
		active->nremembered++;
}

bool unwind_current_ran_off(void)
{
	return active && active->copy && active->copy_over;
}

bool unwind_current_top(uint64_t *top)
{
	const struct thread *t;

	if (!active)
		return false;
	if (active->copy) {
		*top = active->copy_lo + active->copy_len;
		return true;
	}
	t = proc_thread_find(active->tid);
	/* a call on another stack (a coroutine's, a signal stack): not known */
	if (!t || !t->stack_top || !active->regs || arch->get_sp(active->regs) >= t->stack_top ||
	    arch->get_sp(active->regs) < t->stack_lo)
		return false;
	*top = t->stack_top;
	return true;
}

static int acc_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	(void)as;
	(void)arg;
	if (write || !active)
		return -UNW_EINVAL; /* unwinding never writes the tracee */
	return read_word(active, addr, val) ? -UNW_EINVAL : 0;
}

static int acc_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	uint64_t v;

	(void)as;
	(void)arg;
	if (write || !active || arch_unwind_reg(active->regs, reg, &v))
		return -UNW_EBADREG;
	*val = v;
	return 0;
}

/* libunwind's find_proc_info: the tables of the process being unwound (procinfo.h). */
static int acc_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *out, int need_info,
			 void *arg)
{
	return procinfo_find(active ? active->u->tables : NULL, as, ip, out, need_info, arg);
}

static unw_accessors_t accessors;

struct unwinder *unwind_new(pid_t pid)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	if (!accessors.find_proc_info) {
		accessors = _UPT_accessors;
		accessors.access_mem = acc_mem;
		accessors.access_reg = acc_reg;
		accessors.find_proc_info = acc_proc_info;
	}
	u->pid = pid;
	u->as = unw_create_addr_space(&accessors, 0);
	if (u->as) {
		unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
		/* unwind rules of 4096 return addresses instead of 128: big programs call malloc
		 * from thousands of places (about 1.5 MiB) */
		unw_set_cache_size(u->as, 4096, 0);
	}
	u->upt = _UPT_create(pid);
	u->tables = procinfo_new(pid);
	return u;
}

void unwind_destroy(struct unwinder *u)
{
	if (!u)
		return;
	if (u->upt)
		_UPT_destroy(u->upt);
	if (u->as)
		unw_destroy_addr_space(u->as);
	procinfo_free(u->tables);
	ro_free(u->ro);
	free(u);
}

void unwind_flush(struct unwinder *u)
{
	if (u->as)
		unw_flush_cache(u->as, 0, 0);
	ro_free(u->ro);
	u->ro = NULL;
	procinfo_flush(u->tables);
	/* _UPT keeps the last ELF image it read: start afresh after a mapping change */
	if (u->upt) {
		_UPT_destroy(u->upt);
		u->upt = _UPT_create(u->pid);
	}
}

unsigned unwind_capture_copy(struct unwinder *u, struct unwind_reader *rd,
			     const struct arch_regs *regs, uint64_t lo, const void *stack,
			     size_t len, uint64_t *pcs, unsigned max, const struct unwind_hooks *h)
{
	unsigned n;

	rd->tid = u->pid; /* for the read-only mappings */
	rd->copy = stack;
	rd->copy_lo = lo;
	rd->copy_len = len;
	rd->copy_used = 0;
	rd->copy_over = false;
	n = unwind_capture(u, rd, regs, pcs, max, h);
	rd->copy = NULL;
	return n;
}

/* The registers of cursor c's frame, or of the snapshot where there is no cursor. */
static void frame_regs(unw_cursor_t *c, const struct arch_regs *regs, struct frames_regs *r)
{
	r->known = 0;
	for (unsigned i = 0; i < arch->dwarf_regs && i < FRAMES_REGS; i++) {
		unw_word_t w;
		uint64_t v;

		if (c) {
			if (unw_get_reg(c, i, &w) < 0)
				continue;
			v = w;
		} else if (arch_unwind_reg(regs, i, &v)) {
			continue;
		}
		frames_set_reg(r, i, v);
	}
}

/* The registers unwind_hooks.quick needs: the stack and frame pointers. */
static void quick_regs(const struct arch_regs *regs, struct frames_regs *r)
{
	uint64_t v;

	r->known = 0;
	if (!arch_unwind_reg(regs, (int)arch->dwarf_sp, &v))
		frames_set_reg(r, arch->dwarf_sp, v);
	if (arch->fp_reg >= 0 && !arch_unwind_reg(regs, arch->fp_reg, &v))
		frames_set_reg(r, (unsigned)arch->fp_reg, v);
}

/*
 * May libunwind's step from the frame at pc (sp) to the one at ip (nsp) be taken? Without
 * unwind information libunwind guesses: the return address register again (aarch64 static:
 * the same frame twice), or a frame pointer that is none; so the new frame must be higher up
 * the stack and ip a return address (h->ret_ok). Two frames are no return addresses and pass
 * as they are: a signal frame (*sig: ip is the C library's restorer, which the kernel made the
 * handler return to, as h->signal knows it; asked only of what is no return address) and the
 * frame it interrupted (after_sig: ip is where the signal came, sp wherever that code was, a
 * sigaltstack handler's being on another stack).
 */
static bool step_ok(const struct unwind_hooks *h, uint64_t pc, uint64_t ip, uint64_t sp,
		    uint64_t nsp, bool after_sig, bool *sig)
{
	*sig = false;
	if (after_sig)
		return true;
	if (nsp < sp || (nsp == sp && ip == pc))
		return false;
	if (!h || h->ret_ok(h->ctx, ip))
		return true;
	*sig = h->signal(h->ctx, ip);
	return *sig;
}

/* libunwind's part of unwind_capture (its reader active); r: the last frame's registers where
 * it stopped short of max with hooks to go on; *after_sig: the last frame is a signal frame. */
static unsigned step_all(struct unwinder *u, const struct arch_regs *regs, uint64_t *pcs,
			 unsigned max, struct frames_regs *r, const struct unwind_hooks *h,
			 bool *after_sig)
{
	unw_cursor_t c, last; /* a copy keeps the frame before a refused step */
	unsigned n = 0;
	uint64_t sp = arch->get_sp(regs), pc = arch->get_pc(regs);

	pcs[n++] = pc;
	if (max <= 1 || !u->as || !u->upt) {
		frame_regs(NULL, regs, r);
		return n;
	}
	if (unw_init_remote(&c, u->as, u->upt) < 0) {
		frame_regs(NULL, regs, r);
		return n;
	}
	last = c;
	while (n < max && (!h || h->tables(h->ctx, pc))) {
		unw_word_t ip, nsp;
		int ret = unw_step(&c);
		bool sig;

		if (ret <= 0)
			break;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip ||
		    unw_get_reg(&c, UNW_REG_SP, &nsp) < 0)
			break;
		/* not libunwind 1.6's own test (unw_is_signal_frame): it knows glibc 2.36's
		 * restorer not, and holds for the frame after it */
		if (!step_ok(h, pc, ip, sp, nsp, *after_sig, &sig))
			break;
		/* the restorer is no call of the program's: the handler's caller, as the
		 * backtrace shows it, is the code the signal interrupted */
		if (!sig)
			pcs[n++] = ip;
		pc = ip;
		sp = nsp;
		last = c;
		*after_sig = sig;
	}
	if (h && n < max)
		frame_regs(&last, regs, r);
	return n;
}

unsigned unwind_capture(struct unwinder *u, struct unwind_reader *rd, const struct arch_regs *regs,
			uint64_t *pcs, unsigned max, const struct unwind_hooks *h)
{
	struct unwind_reader *outer = active;
	struct frames_regs r;
	bool at_sig = false;
	unsigned n = 0;

	if (!max)
		return 0;
	rd->regs = regs;
	rd->u = u;
	active = rd;
	/* memory: through the cache unwind_prefetch filled for this stop, or the copy */
	if (!u->ro)
		u->ro = ro_load(u->pid);
	rd->ro = u->ro;
	if (h && h->quick) {
		quick_regs(regs, &r);
		n = h->quick(h->ctx, arch->get_pc(regs), &r, pcs, max);
	}
	rd->nquick += n > 0;
	if (!n) {
		rd->nslow++;
		sigmask_skip(true);
		n = step_all(u, regs, pcs, max, &r, h, &at_sig);
		sigmask_skip(false);
		/* no way past a signal frame: a scan would guess stale frames */
		if (at_sig && n < max)
			pcs[n - 1] |= FRAMES_STOPPED;
		else if (h && n < max)
			n = h->extend(h->ctx, pcs, n, &r, max);
	}
	active = outer;
	rd->regs = NULL;
	rd->u = NULL;
	rd->ro = NULL;
	return n;
}
