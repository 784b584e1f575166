/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_BREAKPOINT_H
#define HEAPTRACE_BREAKPOINT_H

/*
 * Software breakpoints that stay in place while threads run through them: a hit is stepped
 * over by running a relocated copy of the displaced instruction in a scratch page injected
 * into the tracee (XOL), or by emulating it. The same page holds the return trampoline.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "util/maps.h"

enum bp_kind {
	BP_HOOK, /* entry of a malloc-family function */
	BP_LDSO, /* the dynamic linker's _dl_debug_state: libraries were (un)loaded */
	BP_SIGACTION, /* the C library's sigaction: SIGTRAP's is answered for the guard */
};

struct bp {
	uint64_t addr; /* code address */
	uint8_t saved[ARCH_MAX_INSN]; /* original bytes under the breakpoint */
	uint8_t len; /* breakpoint length */
	enum bp_kind kind;
	int hook; /* enum hook_id for BP_HOOK */
	int step; /* STEP_XOL or STEP_EMULATE */
	uint64_t slot; /* XOL slot address; emulated: the guard's slot (arch.h: emul_slot), or 0 */
	struct arch_emul emul;
	uint64_t logentry; /* BP_HOOK: entry path of a call whose return is logged, 0 if none */
	bool trap_is_ours; /* a SIGTRAP stop at its trap PC is this breakpoint (trap_pc_after) */
};

/* Pages of slots: two per breakpoint (its displaced instruction, its logged entry path), for
 * every hook of hooks.h at once (breakpoint.c asserts it), after the trampolines. */
#define BP_CODE_PAGES 6

struct bpset {
	struct bp *v;
	size_t n, cap;
	uint64_t page; /* scratch page in the tracee, 0 until injected */
	uint64_t page_size;
	uint64_t code_size; /* the slots' pages at page; the ring's and the guard's follow */
	unsigned slots_used;
	uint64_t tramp; /* return trampoline(s): [tramp, tramp + tramp_len) */
	unsigned tramp_len;
	uint64_t logtramp; /* logging return trampoline, 0 if none (retlog.h) */
	unsigned logtramp_len;
	uint64_t ring; /* its ring: the writable page after the slots' (the guard's table's
			* follows it, writable too) */
	uint64_t syscall_insn; /* the system call instruction injected calls use */
	uint64_t stub; /* the restoring stub injected calls go through (arch.h), 0: none */
	/* told of each breakpoint before its trap is written, or NULL: the SIGTRAP guard must
	 * know a trap before the program can reach it, or heaptrace's death between the two
	 * writes leaves a trap that ends the program */
	void (*announce)(void *ctx, pid_t tid, const struct bp *b);
	void *announce_ctx; /* what announce gets as ctx */
};

/*
 * Asked before each system call bp_page_inject would make the thread run, with its number,
 * its exact arguments (as the call gets them) and the address of the syscall instruction
 * that runs it. Return true to make the call, false to leave it out: it is then never made.
 */
typedef bool (*bp_syscall_ok_fn)(void *ctx, long nr, const uint64_t args[6], uint64_t insn_addr);

/*
 * Map the scratch page in the process of stopped thread tid with an injected mmap, close
 * to hint (PC-relative operands must reach their targets from the slots), and put the
 * trampolines in it; where the arch has a logging trampoline, a writable page after it
 * holds the ring (made writable by an injected mprotect, left out if ok refuses it: returns
 * then stop). maps are the process's mappings, searched for a syscall instruction. cave (0:
 * none): arch->stub_size bytes of executable memory no code uses, where the mmap goes through
 * a restoring stub (arch.h) and whose bytes are put back after it; later calls go through one
 * in the mapping itself.
 * Return 0, -ENOENT if there is no syscall instruction, -ECANCELED if ok refused the mmap,
 * or -errno (from ptrace, or the mmap's own error); nothing is printed. *pending_sig gets a
 * signal that arrived meanwhile.
 */
int bp_page_inject(struct bpset *s, pid_t tid, const struct mapping *maps, size_t n,
		   uint64_t hint, uint64_t cave, int *pending_sig, bp_syscall_ok_fn ok,
		   void *ok_ctx);

/* A system call in the process of stopped thread tid (remote.h), through the restoring stub
 * where there is one, else at the syscall instruction bp_page_inject found. bp_syscall_at:
 * the address of the system call instruction it runs (for a seccomp check). */
int64_t bp_syscall(const struct bpset *s, pid_t tid, long nr, const uint64_t args[6],
		   int *pending_sig, int *err);
uint64_t bp_syscall_at(const struct bpset *s);

/* Place a breakpoint at code address addr. Return 0, -EEXIST, or -errno (-ENOTSUP: its
 * first instruction cannot be stepped over safely). */
int bp_insert(struct bpset *s, pid_t pid, uint64_t addr, enum bp_kind kind, int hook);

struct bp *bp_find(struct bpset *s, uint64_t addr);

/* True if code address addr is in the trapping trampoline. */
static inline bool bp_is_tramp(const struct bpset *s, uint64_t addr)
{
	return s->page && addr >= s->tramp && addr < s->tramp + s->tramp_len;
}

/* True if addr is a return address heaptrace put in place of a caller's. */
static inline bool bp_is_any_tramp(const struct bpset *s, uint64_t addr)
{
	return bp_is_tramp(s, addr) ||
	       (s->logtramp && addr >= s->logtramp && addr < s->logtramp + s->logtramp_len);
}

/* Set regs so that the thread, resumed, executes the displaced instruction and goes on. */
int bp_step(const struct bp *b, struct arch_regs *regs);

/* Put the original bytes back everywhere in pid's memory (detach, or a forked child's copy).
 * Return 0 or the first -errno. */
int bp_remove_all(const struct bpset *s, pid_t pid);

/* Forget every breakpoint and the page without touching memory (after execve). */
void bp_forget(struct bpset *s);

/* Give a child the same breakpoints (its memory is a copy of the parent's); announce_ctx: the
 * child's own, for its announce. */
void bp_copy(struct bpset *dst, const struct bpset *src, void *announce_ctx);

#endif
