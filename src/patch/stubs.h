/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUBS_H
#define HEAPTRACE_STUBS_H

/*
 * Entry stubs: traced calls with no ptrace stop. Each hooked entry's first bytes become a
 * branch to a per-function thunk in a code page injected into the process; the common stub
 * code (arch/<arch>/stubcode.c) records the call in a ring shared with heaptrace (a memfd
 * both map), sends an allocation's return through a recording trampoline, runs the displaced
 * instructions and goes on. heaptrace reads the ring while the program runs (stubs_drain),
 * in the order the records were reserved, and unwinds each allocation from the copy of the
 * stack top its record carries. A function whose entry cannot be patched safely keeps its
 * breakpoint. When heaptrace dies, the kernel marks a robust futex heaptrace owns in the
 * ring's control page, and the stubs stop recording: the program runs on untraced.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "patch/breakpoint.h"

struct proc;
struct thread;

/* Entry stubs can be used on this architecture. */
bool stubs_supported(void);

/*
 * Map the stub pages and the ring in the process of stopped thread tid (its scratch page is
 * in place): every system call is first put to ok (seccomp). ring_size: bytes of ring
 * (a power of two), copy: most bytes of stack per allocation. Return 0, or -errno (nothing
 * mapped that matters: every hook then keeps its breakpoint).
 */
int stubs_setup(struct proc *p, pid_t tid, unsigned long ring_size, unsigned copy,
		bp_syscall_ok_fn ok, void *ok_ctx);

/* Patch hook's entry at symbol value addr (arm: bit 0 = Thumb), in module m, to go through its
 * stub. All of p's
 * threads must be stopped. Return 0, -EEXIST (an alias, patched already), or -errno: then keep
 * the breakpoint (-v says why; -EXDEV: something in the function leads into its first bytes). */
int stubs_patch(struct proc *p, pid_t tid, uint64_t addr, int hook, const struct module *m);

/* The stubs' recording return trampoline in p, or 0: a call caught at a breakpoint may return
 * through it with a cookie that has STUBS_COOKIE_BP set (calls.c). */
uint64_t stubs_tramp(const struct proc *p);
#define STUBS_COOKIE_BP (1ull << 63)

/* p has patched entries whose records must be read. */
bool stubs_active(const struct proc *p);

/* Stopped thread t of p is new (attach or clone): note its thread pointer and stack top. */
void stubs_thread(struct thread *t);

/* Thread t is about to be freed. */
void stubs_thread_gone(struct thread *t);

/* Read and account every complete record of p. Return how many were read. */
unsigned stubs_drain(struct proc *p);

/* Where p's ring ends now, if records before it are still unread (a thread reserved one and is
 * writing it); 0 when every record is read, or p has no stubs. */
uint64_t stubs_unread_until(const struct proc *p);

/* True if p's records before position pos are all read (or p has no stubs any more). */
bool stubs_read_to(const struct proc *p, uint64_t pos);

/* The same when no thread of p will write again (p is gone, or every thread is stopped before
 * the detach): a record reserved and never written is skipped, not waited for. */
unsigned stubs_drain_final(struct proc *p);

/* Put every patched entry back and turn the stubs off (the pages stay mapped: a thread may be
 * inside them, or return through the trampoline), through stopped thread tid of p. */
void stubs_off(struct proc *p, pid_t tid);

/* child is a fork of parent (its memory a copy, its ring the same): note its patched entries. */
void stubs_fork(struct proc *child, const struct proc *parent);

/* At the forked child's first stop (thread tid): turn its stubs off and put its entries back;
 * with follow, give those hooks breakpoints instead. */
void stubs_child_start(struct proc *child, pid_t tid, bool follow);

/* Forget p's ring and stubs (exec, or p is gone). */
void stubs_forget(struct proc *p);

/* Records read, times a stub found the ring full, and the most bytes of records heaptrace
 * found waiting at once (how far it fell behind), for -v. */
void stubs_stats(uint64_t *records, uint64_t *waits, uint64_t *backlog);

#endif
