/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_GUARD_H
#define HEAPTRACE_GUARD_H

/*
 * The guard: heaptrace's SIGTRAP handler inside the traced process, so that a breakpoint hit
 * when no tracer stops the thread (heaptrace was killed with SIGKILL, by the OOM killer, a
 * container stop) goes on as if the breakpoint were not there, instead of killing the program
 * with SIGTRAP's default action.
 *
 * While heaptrace lives the guard is never reached by a breakpoint (heaptrace takes the trap
 * first). It holds the program's own SIGTRAP action: a SIGTRAP of the program's own is passed
 * to it (or ignored, or made fatal by its default action). The program's sigaction calls for
 * SIGTRAP are answered by heaptrace from that copy, through a breakpoint on the C library's
 * sigaction, so the program sees and changes only its own action. The kernel resets a caught
 * SIGTRAP to SIG_DFL and unblocks it when a breakpoint traps while SIGTRAP is blocked (inside
 * a SIGTRAP handler, or in a thread that blocks it): heaptrace sees that at the stop and puts
 * the guard and the thread's mask back.
 *
 * The handler is C compiled into heaptrace (src/patch/guardcode.c, section ht_guard) and copied
 * whole into a page of its own in the process: it runs there only on the architecture it was
 * built for, which is the only one heaptrace traces. Its table fills the writable page before
 * it (after the logging ring's page: breakpoint.h); the code finds it from its own address.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define GUARD_PAGE 4096 /* the table's page, right before the code's */
#define GUARD_MAX_RETS 32
/* every breakpoint heaptrace places fits (guard.c asserts it against hooks.h): the page less
 * the header and the returns, in entries of 16 bytes */
#define GUARD_MAX_BPS ((GUARD_PAGE - 48 - 16 * GUARD_MAX_RETS) / 16)
#define GUARD_SCRATCH_OFF 3840 /* in the ring page: room for the injected sigaction's structs */

/* Laid out alike in heaptrace and in the process (fixed-width fields only). */
struct guard_data {
	/* the program's own SIGTRAP action, as it set it (handler 0: SIG_DFL, 1: SIG_IGN) */
	uint64_t prog_handler, prog_flags, prog_mask, prog_restorer;
	uint64_t tramp_pc; /* the pc a trap of the trapping return trampoline shows */
	uint32_t nbps, unused;
	struct {
		uint64_t pc; /* the pc a trap of this breakpoint shows */
		uint64_t resume; /* where the thread goes on instead */
	} bps[GUARD_MAX_BPS];
	struct {
		uint64_t sp; /* sp at a return to the trapping trampoline (0: free) */
		uint64_t ret; /* the caller's address it stands for */
	} rets[GUARD_MAX_RETS];
};

_Static_assert(sizeof(struct guard_data) <= GUARD_PAGE, "the guard's table fits in its page");

/* What heaptrace keeps of the guard of one process (in struct proc). */
struct guard_state {
	uint64_t page; /* the guard's code page in the process, 0: no guard */
	uint64_t data; /* its table, in the page before page */
	uint64_t scratch; /* room for the structs of an injected rt_sigaction */
	uint64_t handler, restorer; /* restorer 0: none (the kernel's own) */
	struct guard_data mirror; /* what the table holds */
	int stat_fd; /* /proc/PID/stat once read, -1 before (guard_check) */
	uint64_t checked_ns; /* when SIGTRAP's action was last read */
	unsigned uncovered; /* breakpoints placed after the table was full */
};

struct proc;
struct bp;
struct thread;
struct arch_regs;

/*
 * Copy the guard into page (the last page of the scratch mapping, after the ring page at ring
 * and the table's page) and make it SIGTRAP's action in p, through stopped thread tid: one
 * rt_sigaction made
 * through bp_syscall, only if the thread's seccomp state allows it (inject.h), as every later
 * one. The program's
 * action at that moment is kept as its own (SIG_IGN if keep_ign: SIG_IGN survives an exec,
 * which reset the guard). Return 0 or -errno (then the guard is off and nothing changed).
 */
int guard_install(struct proc *p, pid_t tid, uint64_t page, uint64_t ring, bool keep_ign);

/* Breakpoint b was placed: a trap of it with no tracer goes on as heaptrace would. */
void guard_add_bp(struct proc *p, pid_t tid, const struct bp *b);

/* A call's return was sent to the trapping trampoline: a trap there with sp (after the
 * return) goes back to ret. guard_forget_return: it was caught. */
void guard_note_return(struct proc *p, pid_t tid, uint64_t sp, uint64_t ret);
void guard_forget_return(struct proc *p, pid_t tid, uint64_t sp);

/* After a breakpoint stop of t: if the kernel reset SIGTRAP's action (it was blocked at the
 * trap), put the guard back, and SIGTRAP in t's mask. */
void guard_check(struct thread *t);

/* t stopped at the entry of the C library's sigaction (regs). For SIGTRAP, answer from the
 * program's own action and set regs to return 0 to the caller: return true. Else false (the
 * call goes on). */
bool guard_sigaction(struct thread *t, struct arch_regs *regs);

/* Make the program's own action SIGTRAP's action again, through stopped thread tid (a
 * detach, or a forked child let go). The guard's pages stay. */
void guard_remove(struct proc *p, pid_t tid);

/* Close what p's guard holds in heaptrace (the process is gone or let go). */
void guard_forget(struct proc *p);

/* The code to copy (NULL where the architecture has no guard yet), its length, and the
 * offsets of the handler and the signal restorer (-1: the kernel's own) in it. */
const uint8_t *guard_code(size_t *len, long *handler_off, long *restorer_off);

#endif
