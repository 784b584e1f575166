// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guard's code (guard.h): compiled into heaptrace, run only in the traced process, where
 * heaptrace copies the whole ht_guard section. So it must not depend on where it is: no data
 * of its own, no calls out of the section, nothing the compiler would put elsewhere (constant
 * pools, jump tables, stack-protector canaries, sanitizer calls). The Makefile checks that
 * the section has no relocation.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "patch/guard.h"
#include "guard_arch.h"

#if GUARD_SUPPORTED

#ifndef GUARD_AT_TRAMP /* one trapping return trampoline (arm has one per instruction set) */
#define GUARD_AT_TRAMP(pc, tramp) ((pc) == (tramp))
#endif
#ifndef GUARD_BP_PC /* the pc for a breakpoint's resume address (arm: without bit 0) */
#define GUARD_BP_PC(a) (a)
#endif
#ifndef GUARD_GO /* go on at a return address (arm: bit 0 for Thumb) */
#define GUARD_GO(uc, a) (GUARD_UC_PC(uc) = (a))
#endif

#define GUARD_FN                                                                                  \
	__attribute__((section("ht_guard"), used, noinline, no_stack_protector,                    \
		       no_sanitize_address, no_sanitize_undefined,                                 \
		       optimize("no-tree-vectorize", "no-jump-tables")))

/* The table: the page before the guard's (guard.h). */
static inline __attribute__((always_inline)) struct guard_data *guard_table(void)
{
	return (struct guard_data *)(uintptr_t)((guard_here() & ~(uint64_t)4095) - GUARD_PAGE);
}

/* A SIGTRAP of the program's own whose action is SIG_DFL: die of it, as without the guard. */
static inline __attribute__((always_inline)) void guard_default(int sig)
{
	struct guard_ksigaction dfl;
	long pid, tid;

	dfl.handler = 0;
	dfl.flags = 0;
	dfl.restorer = 0;
	dfl.mask = 0;
	guard_syscall4(GUARD_NR_RT_SIGACTION, sig, (long)(uintptr_t)&dfl, 0, GUARD_SIGSET_SIZE);
	pid = guard_syscall4(GUARD_NR_GETPID, 0, 0, 0, 0);
	tid = guard_syscall4(GUARD_NR_GETTID, 0, 0, 0, 0);
	/* blocked until the handler returns, then fatal */
	guard_syscall4(GUARD_NR_TGKILL, pid, tid, sig, 0);
}

GUARD_FN void guard_handler(int sig, siginfo_t *info, void *uc)
{
	volatile struct guard_data *d = guard_table();
	uint64_t pc = (uint64_t)GUARD_UC_PC(uc), sp = (uint64_t)GUARD_UC_SP(uc), h;
	uint32_t n = d->nbps < GUARD_MAX_BPS ? d->nbps : GUARD_MAX_BPS;

#if GUARD_TRAP_LEN
	/* pc on a trap itself, and the kernel's SIGTRAP: heaptrace died holding the thread's stop,
	 * its pc moved back onto the trap (trace/dispatch.c): run the trap again. Where a trap's
	 * pc is the trap's own (GUARD_TRAP_LEN 0), a held stop needs no such move. */
	if (info->si_code > 0 && pc + GUARD_TRAP_LEN == d->tramp_pc)
		return;
#endif
	for (uint32_t i = 0; i < n; i++) {
		if (d->bps[i].pc == pc) { /* a breakpoint nobody stops at: go on past it */
			/* in the breakpoint's own instruction set, as the trap */
			GUARD_UC_PC(uc) = GUARD_BP_PC(d->bps[i].resume);
			return;
		}
#if GUARD_TRAP_LEN
		if (info->si_code > 0 && d->bps[i].pc == pc + GUARD_TRAP_LEN)
			return;
#endif
	}
	if (GUARD_AT_TRAMP(pc, d->tramp_pc)) { /* a call's return caught with a trap: to its caller */
		for (uint32_t i = 0; i < GUARD_MAX_RETS; i++) {
			if (sp && d->rets[i].sp == sp) {
				GUARD_GO(uc, d->rets[i].ret);
				d->rets[i].sp = 0;
				return;
			}
		}
	}
	h = d->prog_handler;
	if (h == 1) /* SIG_IGN */
		return;
	if (h == 0) {
		guard_default(sig);
		return;
	}
	if (d->prog_flags & GUARD_SA_RESETHAND)
		d->prog_handler = 0;
	GUARD_CALL(h, sig, info, uc);
}

#ifdef GUARD_RESTORER_ASM
__asm__(".pushsection ht_guard,\"ax\",@progbits\n"
	".type guard_restorer, @function\n"
	"guard_restorer:\n\t" GUARD_RESTORER_ASM ".popsection\n");
extern const uint8_t guard_restorer[];
#endif

extern const uint8_t __start_ht_guard[], __stop_ht_guard[];

const uint8_t *guard_code(size_t *len, long *handler_off, long *restorer_off)
{
	*len = __stop_ht_guard - __start_ht_guard;
	*handler_off = (const uint8_t *)(uintptr_t)guard_handler - __start_ht_guard;
#ifdef GUARD_RESTORER_ASM
	*restorer_off = guard_restorer - __start_ht_guard;
#else
	*restorer_off = -1;
#endif
	return __start_ht_guard;
}

#else

const uint8_t *guard_code(size_t *len, long *handler_off, long *restorer_off)
{
	*len = 0;
	*handler_off = *restorer_off = -1;
	return NULL;
}

#endif
