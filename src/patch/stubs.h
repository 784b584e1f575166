/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUBS_H
#define HEAPTRACE_STUBS_H

/*
 * Entry stubs: traced calls with no ptrace stop. Each hooked entry's first bytes become a
 * branch to a per-function thunk in a code page injected into the process; the common stub
 * code (arch/<arch>/stubcode.c) records the call in a ring shared with heaptrace (a memfd
 * both map), sends an allocation's return through a recording trampoline, runs the displaced
 * instructions and goes on. heaptrace reads the ring while the program runs (ring_drain),
 * in the order the records were reserved, and unwinds each allocation from the copy of the
 * stack top its record carries. A function whose entry cannot be patched safely keeps its
 * breakpoint. When heaptrace dies, the kernel marks a robust futex heaptrace owns in the
 * ring's control page, and the stubs stop recording: the program runs on untraced.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "heap/hooks.h"
#include "patch/breakpoint.h"
#include "patch/copysize.h"
#include "util/pairmap.h"

struct module;
struct proc;
struct thread;

/*
 * The files of the stubs: stubs.c maps the pages and the ring into the process (setup),
 * stubpatch.c patches the entries (and puts them back: off, fork, forget), stubtops.c keeps the
 * table of the threads' keys and stack tops that the stub code reads, stubowner.c holds
 * heaptrace's robust futex. The reader of the ring is account/ring.c: it reads struct stubs
 * below, and keeps its own state in struct stubs_reader.
 */

struct stubs_patch {
	uint64_t addr, sym; /* code address, symbol value (arm: bit 0 = Thumb) */
	uint8_t saved[ARCH_MAX_INSN];
	int len, hook;
	/* a function pointer redirected to its thunk (stubs_patch_slot): addr is the pointer's
	 * address, saved its old value, sym the entry point the pointer stands for */
	bool slot;
	uint64_t thunk;
};

/* One key's thread, in the reader's table (account/ring.c). */
struct stubs_key {
	uint64_t key;
	struct thread *t;
};

/*
 * The reader's state for one ring, so that rings are read apart (account/ring.c owns it; here
 * because patch's thread hooks and forget touch the stand-ins and the generation).
 */
struct stubs_reader {
	uint64_t tail; /* bytes read */
	/* an entry record's caller frame for the unwinder (stub_regs), cleared with the reader:
	 * stub_regs sets the same words each time, and clearing 520 bytes per record cost a
	 * twentieth of the reader's time */
	struct arch_regs regs;
	uint64_t tsc0, ns0; /* the clock the records' time stamps are read with, at setup */
	double ns_per_tick; /* calibrated over the longest span seen (0: not yet) */
	uint64_t batch_ns, batch_tsc; /* both clocks, read once per batch of records */
	uint64_t nrecords, nwaits, peak_backlog; /* stubs_stats */
	uint64_t lost; /* the stubs' STUB_C_LOST_* counters, added up, when last read */
	bool lost_told;
	uint64_t stuck_at, stuck_ns, stuck_lost; /* a record at stuck_at unread since stuck_ns,
						   * lost calls then */
	uint64_t waits_ns; /* stuck: when calls were first seen waiting for it, 0: not yet */
	bool probe_wanted; /* stuck: the threads are to be looked at (trace/probe.c) */
	uint64_t probe_ns; /* when they last were, for this record */
	uint64_t dead_before; /* a record before it not written yet never will be (a look) */
	uint64_t nskipped; /* records skipped as never to be written */
	uint64_t unslotted_taken; /* of STUB_C_LOST_UNSLOTTED: calls dropped for them */
	uint64_t skips_since; /* the second the last skips were counted in */
	unsigned skips; /* looks that skipped records in that second */
	long slow_ms; /* HEAPTRACE_TEST_SLOW_READER, read at setup */
	struct thread **phantom; /* stand-ins: threads seen only by their key, or gone with records
				  * not read yet */
	unsigned nphantom;
	/*
	 * key -> thread, every thread of the process (its tls, 0 included) and every stand-in: open
	 * addressing, a key there once per thread that had it. Built from the threads when gen is
	 * not the ring's threads_gen (a thread came, went, or learned its key), then kept up to
	 * date by the reader's own stand-ins.
	 */
	struct stubs_key *keys;
	unsigned keys_mask, nkeys, keys_gen;
	/* the last key found, while it is the only entry of its key: a program's threads make
	 * runs of records, and most programs have one thread */
	struct stubs_key keys_last;
	struct thread *unknown; /* the one thread with no key yet, if only one (npending) */
	unsigned npending;
	struct copysize copy; /* the stubs' stack copy size, learned (STUB_D_COPY) */
	/* account/ring.c's index of releases ahead of the record read, for released_since: the
	 * records from tail to front were parsed for it, and last has, for each block released
	 * there, its latest release's position - base + 1 */
	struct stubs_ahead {
		uint64_t base, front;
		struct pairmap last;
		uint64_t wait_at, wait_ns; /* a record not written there since then */
	} ahead;
};

#define STUBS_AREAS 4 /* stub pages: one within a branch's reach of each module with hooks */
/* Watched entries (stubs_watch_seccomp): their continuations in the data page's slots after
 * the hooks', from STUBS_WATCH0 */
#define STUBS_WATCHES 2
#define STUBS_WATCH0 HOOK_COUNT

/* One process's stubs and ring. */
struct stubs {
	uint64_t area[STUBS_AREAS]; /* in the process: each area's code page, then its data page */
	unsigned area_used[STUBS_AREAS]; /* bytes of per-hook code in each */
	unsigned nareas;
	uint64_t ctl_addr; /* in the process: the control page, then the ring twice */
	uint8_t *ctl; /* heaptrace's own mapping of the same */
	uint8_t *ring;
	size_t map_len;
	uint64_t size;
	struct stubs_patch patch[HOOK_COUNT + STUBS_WATCHES];
	unsigned npatch;
	unsigned copy; /* STUB_D_COPY */
	unsigned stall; /* STUB_D_STALL: slices (ms) a stub may wait for room */
	bool nosys; /* STUB_C_NOSYS set, by heaptrace or by a watched call */
	uint64_t filters; /* the threads' seccomp filters at setup, added up (stubs_seccomp) */
	uint64_t filters_ns; /* when stubs_seccomp last looked */
	bool stuck_off; /* turned off for a record never written (account/ring.c) */
	bool nosys_told; /* a stub waited since nosys was set: said once */
	uint64_t main_lo, main_top; /* STUB_D_MAIN_LO, STUB_D_MAIN_TOP (main_stack) */
	bool off;
	bool tops_full_told; /* a thread found no room in the table: said once */
	bool notsc_told; /* the process turned the time-stamp counter off: said once */
	bool slots_told; /* a redirected pointer was set again by the program: said once */
	bool python; /* the data pages' Python words are written (STUB_D_PY_*) */
	unsigned threads_gen; /* moves when a thread comes, goes or learns its key */
	struct stubs_reader rd;
};

#define STUBS_CTL_SIZE 4096u /* the control page, before the ring */
#define STUBS_GEN_OFF 2048u /* per-hook code in the code page, after the common code */

extern const uint8_t ht_stub_blob[], ht_stub_entry[], ht_stub_ret[], ht_stub_code_end[],
	ht_stub_blob_end[];

/* The stub code marks its critical sections (stub_arch.h: STUB_CRITICAL), so that a reader
 * stuck at a record never written can tell a dead one (stubprobe.c). */
bool stubs_probe_supported(void);
/* Thread tid of p, stopped, may hold a record of p's stubs reserved and not written: its pc,
 * or the pc a signal frame on its stack saved, lies in a critical section. */
bool stubs_thread_critical(struct proc *p, pid_t tid);

/* An interpreter was mapped or initialised after p's stub areas were made: write its words
 * into their data pages (once, when python_stub_words has them), so that the stubs record
 * Python frames from now on. Cheap to call often: the ring's reader calls it until then. */
void stubs_python(struct proc *p);

/* Entry stubs can be used on this architecture. */
bool stubs_supported(void);

/* The most bytes of stack a stub copies when the size is learned (copysize.h). */
#define STUBS_COPY_LEARN_MAX 8192u

/*
 * Map the stub pages and the ring in the process of stopped thread tid (its scratch page is
 * in place): every system call is first put to ok (seccomp). ring_size: bytes of ring
 * (a power of two), copy: bytes of stack per allocation (0: learned, at most
 * STUBS_COPY_LEARN_MAX), stall_ms: the longest a call
 * waits for room before it goes on unrecorded (0: none). Return 0, or -errno (nothing
 * mapped that matters: every hook then keeps its breakpoint).
 */
int stubs_setup(struct proc *p, pid_t tid, unsigned long ring_size, unsigned copy,
		unsigned stall_ms, bp_syscall_ok_fn ok, void *ok_ctx);

/*
 * A thread of p may have installed a seccomp filter since the stubs were set up (looked at
 * every STUBS_SECCOMP_NS at most, from the reader's loop): their waits for room, the only
 * system calls they make, then make none (STUB_C_NOSYS), as a filter may forbid futex. The
 * watched entries (stubs_watch_seccomp) set it at once, before the filter exists.
 */
#define STUBS_SECCOMP_NS 50000000ull
void stubs_seccomp(struct proc *p);

/* Turn p's stubs off while its threads run (the data pages' off word): every entry goes on
 * unrecorded, and no stub reserves ring space any more. The patched entries stay. */
void stubs_data_off(struct proc *p);

/* Write the 8-byte word at off of every data page of s, through thread or process pid (stopped
 * or running: the data pages are writable, process_vm_writev). */
void stubs_data_put(const struct stubs *s, pid_t pid, unsigned off, uint64_t v);

/* Patch hook's entry at symbol value addr (arm: bit 0 = Thumb), in module m, to go through its
 * stub. All of p's
 * threads must be stopped. Return 0, -EEXIST (an alias, patched already), or -errno: then keep
 * the breakpoint (-v says why; -EXDEV: something in the function leads into its first bytes). */
int stubs_patch(struct proc *p, pid_t tid, uint64_t addr, int hook, const struct module *m);

/* Watch the calls of the C library in module m that install a seccomp filter (where the stub
 * code can: stub_arch.h, STUB_WATCH_SUPPORTED); p's threads stopped. A call that cannot be
 * watched is said with -v; the filters are then only looked at (stubs_seccomp). */
void stubs_watch_seccomp(struct proc *p, pid_t tid, const struct module *m);

/*
 * Send the calls through the function pointer at slot in p's memory (CPython's allocator table,
 * patch/pytable.h) through hook's stub instead: the pointer gets a thunk whose continuation is
 * its old value, and the stub records the arguments after the context the function takes first
 * (STUB_HOOK_CTX). sym: the entry point a forked child gets a breakpoint at (0: none). All of p's
 * threads must be stopped. Return 0 or -errno.
 */
int stubs_patch_slot(struct proc *p, pid_t tid, uint64_t slot, int hook, uint64_t sym);

/* The stubs' recording return trampoline in p, or 0: a call caught at a breakpoint may return
 * through it with a cookie that has STUBS_COOKIE_BP set (calls.c). */
uint64_t stubs_tramp(const struct proc *p);
#define STUBS_COOKIE_BP (1ull << 63)

/* p has patched entries whose records must be read. */
bool stubs_active(const struct proc *p);

/* Stopped thread t of p is new (attach or clone): note its thread pointer and stack top. */
void stubs_thread(struct thread *t);

/*
 * Stopped thread t took a SIGSEGV: if the stub code's clock read faulted (the thread turned the
 * time-stamp counter off, prctl PR_SET_TSC), turn the stubs' clock off in every area, move t
 * past the read with no stamp, and return true: the signal is heaptrace's, not the program's.
 */
bool stubs_clock_fault(struct thread *t);

/* Thread t is about to be freed. */
void stubs_thread_gone(struct thread *t);

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

/* The counters (struct stubs_reader) of the rings forgotten so far, added up (ring_stats). */
void stubs_retired(uint64_t *records, uint64_t *waits, uint64_t *backlog);
/* Their records skipped as never to be written (ring_skipped). */
uint64_t stubs_retired_skipped(void);
/* The same of their stack copies' sizes (struct copysize): backtraces cut short, and the
 * smallest size learned (0: none). */
void stubs_retired_copy(uint64_t *cut, unsigned *least);

/* Which area's code p's entry at addr can branch to, or -1. */
int stubs_area_for(const struct stubs *s, uint64_t addr);

/* The ring's head: bytes the stubs reserved so far. */
uint64_t stubs_head(const struct stubs *s);

/* Write { key, top } into the table of every area of p (through tid): the stub code of the
 * thread with that key then copies its stack up to top, when its sp lies in [lo, top) (else to
 * the end of sp's page: stub_layout.h, STUB_TOPS_PAGES). */
void stubs_tops_put(struct proc *p, pid_t tid, uint64_t key, uint64_t top, uint64_t lo);

/* Keep g as a stand-in of s's (a thread known only by its key, or one gone with records
 * unread); the reader frees it once its records are read. Return g. */
struct thread *stubs_standin(struct stubs *s, struct thread *g);

/* heaptrace's robust futex (stubowner.c): the id of the thread that owns every ring's owner
 * word, started at the first call (0 if it could not start); link and unlink the word of the
 * ring whose control page heaptrace maps at ctl. */
pid_t stubs_owner(void);
void stubs_owner_link(uint8_t *ctl);
void stubs_owner_unlink(uint8_t *ctl);

#endif
