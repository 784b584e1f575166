/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PROCESS_H
#define HEAPTRACE_PROCESS_H

/*
 * What heaptrace keeps per traced process (its table, modules, breakpoints) and per thread
 * (the hooked calls it has in flight). Threads are found by id in a hash; processes in a list.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "heap/hooks.h"
#include "util/maps.h"
#include "target/retlog.h"
#include "heap/table.h"

/* A hooked call in flight on one thread. */
struct frame {
	uint64_t ret; /* the caller's return address */
	uint64_t sp; /* sp at entry */
	uint64_t entry_ns; /* when the call was made: the birth of its block */
	bool logged; /* returns through the logging trampoline (retlog.h), not with a stop */
	bool stubbed; /* recorded by an entry stub (stubs.h): its return comes as a record */
	uint64_t cookie; /* stubbed: its entry record's position, which its return names */
	bool awaits_inner; /* stubbed, no return of its own: completed by the allocation inside */
	/* made by a signal handler that interrupted the frames below it: no call of theirs */
	bool handler;
	/* returned or dropped under a handler's frames, which keep their indices: popped with
	 * them */
	bool over;
	uint64_t inner_cookie; /* awaits_inner: the cookie of the malloc inside, of its size */
	struct hook_call call;
	struct block old; /* realloc: the block taken out at entry */
	bool took_old;
	unsigned npcs;
	uint64_t *pcs; /* backtrace captured at entry */
	uint8_t weigh; /* --sample-bytes: heap/table.h's TABLE_EXACT, _SCALED or _UNSEEN */
};

/* A free of a block heaptrace did not hold live, held until its thread shows whose it was
 * (account/acct.h: acct_late_hold). */
struct late_free {
	uint64_t key; /* table.h's key of its pointer */
	uint64_t ns; /* when it was made */
	bool cached; /* of a block freed before and not handed out since */
};

struct proc;
struct acct;
struct bpset;
struct guard_state;

struct thread {
	pid_t tid;
	struct proc *p; /* NULL until its parent's clone/fork event names it */
	struct thread *hnext;
	struct frame *frames;
	unsigned nframes, cap;
	int pending_sig; /* to deliver when detaching */
	bool stopped; /* in a ptrace-stop heaptrace has not resumed */
	bool seen_first_stop; /* a new child's initial stop arrived */
	bool parent_known; /* its parent's event arrived */
	uint64_t tls; /* thread pointer, the entry stubs' key for it (0: not known yet) */
	bool tls_pending; /* seen before its C library set the thread pointer: the key is
			   * learned from its first record (stubs.c) */
	/* the ring positions its key is its own for: a key outlives the thread in records not
	 * read yet, and the C library gives it to a new thread (stubs.c) */
	uint64_t key_from, key_until;
	uint64_t stack_top; /* end of the mapping its stack was in when first seen */
	uint64_t stack_lo; /* and its start */
	/* its frees of blocks not live made since its last allocation (acct.h); late_parked:
	 * how many a report counts as unknown frees now (calls_park) */
	struct late_free *late;
	unsigned nlate, late_cap, late_parked;
	bool own_exit; /* it ended by its own exit system call, not the process's end */
	/* it reported its exit, or PTRACE_INTERRUPT found it gone: no stop of it can run an
	 * injected call or be relied on to write the process's memory (proc_stopped_thread) */
	bool gone;
	/* stopped for a look at it (trace/probe.c), to let go after: PROBE_STOPPED_*, 0: not */
	int probe_stopped;
	/* the ptrace event of the stop it is in (PTRACE_EVENT_*, 0: none) */
	int stop_event;
	/* the pc a breakpoint's stop reported, while heaptrace holds the thread with its pc moved
	 * back onto the trap (0: not moved; trace/dispatch.c) */
	uint64_t trap_pc;
};

enum { PROBE_STOPPED_RUNNING = 1, PROBE_STOPPED_GROUP };

struct proc {
	pid_t pid;
	struct proc *next;
	char *command;
	struct table table;
	struct modlist mods;
	uint64_t (*mod_hooks)[HOOK_COUNT]; /* per module: hook symbol values found in it */
	size_t mod_hooks_n;
	int interp; /* index of the dynamic linker in mods, -1 if none */
	char *exe; /* /proc/PID/exe */
	struct bpset *bps; /* its breakpoints (breakpoint.h), made with it (trace/lifecycle.h) */
	struct retlog retlog; /* returns logged since the last stop */
	struct guard_state *guard; /* SIGTRAP's handler in the process (guard.h), likewise */
	struct stubs *stubs; /* entry stubs and their ring (stubs.h), NULL if none */
	bool keep_ign; /* the program's SIGTRAP was SIG_IGN before its last exec */
	struct unwinder *unw;
	struct fallback *fallback; /* function starts for stack scans (fallback.c) */
	struct perfmap *jit; /* its JIT's perf map (unwind/jitcode.h), NULL until needed */
	struct pyproc *py; /* its Python interpreter and frames (unwind/python.h), NULL if none */
	uint64_t hook_addr[HOOK_COUNT]; /* armed entries, 0 if none */
	/* the traced realloc and reallocarray are glibc's, which call free only for a size of
	 * 0 (account/acct.c: frees_nothing) */
	bool glibc_realloc, glibc_reallocarray;
	/* each custom hook's function (custom.h) takes no argument on the stack, as its debug
	 * information says (image_regs_only) */
	bool custom_regs_only[HOOK_CUSTOM_MAX];
	bool armed;
	bool hooks_full; /* the scratch page had no room for every hook (said once) */
	uint64_t start_bp; /* temporary breakpoint at the first instruction after exec */
	uint8_t start_saved[ARCH_MAX_INSN];
	size_t start_len;
	bool counting; /* false: only kept traced until it execs (an unfollowed vfork child) */
	bool shares_mm; /* vfork child: its memory is its parent's until it execs */
	bool detach_at_first_stop; /* an unfollowed fork child */
	bool exited;
	bool detached; /* let go: kept only for its final report */
	int exit_status;
	bool has_statm;
	uint64_t statm[3];
	/* calls its entry stubs left unrecorded (heaptrace fell behind for longer than
	 * --max-stall: account/ring.c) or whose return never came (a jump out of a signal handler:
	 * account/calls.c); stubs_stuck: and every call since its stubs were turned off for a
	 * record never written */
	uint64_t calls_not_seen;
	bool stubs_stuck;
	uint64_t start_ns;
	bool launched;
	/* being attached (-p): every thread is held until the setup is done, a thread made
	 * meanwhile too (trace/attach.c lets them all go) */
	bool attaching;
	/* attached after its main thread exited (a zombie thread no tracer may seize): traced
	 * through its other threads; /proc/PID shows no memory, see proc_mem_pid */
	bool leader_gone;
	unsigned nthreads;
	uint64_t unwind_seq; /* allocations seen, for --sample */
	struct acct *acct; /* the accounting state of the reader that serves it (account/acct.h) */
	struct inventory *inv; /* the heap found at the attach (inventory.h), NULL if none */
	struct symcache *symcache; /* its symbolizer between reports (symcache.h), NULL if none */
	/* the keys of blocks freed and not returned by an allocation since, of table epoch
	 * freed_epoch (account/acct.c); open addressing, 0: an empty slot */
	uint64_t *freed;
	uint32_t nfreed, freed_cap, freed_epoch;
};

extern struct proc *procs; /* every traced process */

/*
 * The registry's part of a new process pid: zeroed, its table empty, first in procs. The rest
 * of it (breakpoints, guard) is the trace layer's: trace/lifecycle.h makes processes.
 */
struct proc *proc_new(pid_t pid);
/* Take p out of procs (the first step of freeing it: trace/lifecycle.h). */
void proc_unlink(struct proc *p);
/* Free what the registry keeps of p (its table, command) and p: the last step. */
void proc_release(struct proc *p);

struct thread *proc_thread_find(pid_t tid);
/* A new thread of p (NULL: its process is not known yet). */
struct thread *proc_thread_new(pid_t tid, struct proc *p);
/* Take t out of the hash and free it (what the entry stubs keep of it is the trace layer's to
 * free first: lifecycle_thread_free). */
void proc_thread_free(struct thread *t);
/* Free a thread that is not in the hash (a stand-in, stubs.c). */
void proc_thread_release(struct thread *t);
void proc_for_each_thread(struct proc *p, void (*fn)(struct thread *t, void *ctx), void *ctx);
/* A thread of p (the first the hash holds), or NULL. */
struct thread *proc_any_thread(struct proc *p);
/* A thread of p in a ptrace-stop heaptrace holds that is not ending, to work through: the
 * leader if it is one, one in a plain stop before one at an event inside a system call
 * (proc_in_syscall_event: fit for writes, not for an injected call), or NULL. */
struct thread *proc_stopped_thread(struct proc *p);
/* t's stop is an event inside a system call (clone, fork, vfork, vfork-done, exec): its
 * registers are that call's, and a call injected from there would run it again. */
bool proc_in_syscall_event(const struct thread *t);
/* How many threads of p are not in a ptrace-stop heaptrace holds. */
unsigned proc_running(struct proc *p);
/* PTRACE_INTERRUPT every thread of p that is not stopped; one found gone is marked stopped and
 * gone (its exit is reported later). */
void proc_interrupt(struct proc *p);
/* The traced process pid, or NULL. */
struct proc *proc_by_pid(pid_t pid);

/* /proc/PID/cmdline with spaces between the arguments (never NULL). */
char *proc_cmdline(pid_t pid);
/* The system call thread tid (stopped) is in, from /proc/TID/syscall: its number, or -1 if none
 * or unknown. */
long proc_syscall_nr(pid_t tid);
/* The number after "key:" in /proc/TID/status (e.g. "Tgid", "TracerPid"), or -1. */
long proc_status_field(pid_t tid, const char *key);
/* The hexadecimal mask after "key:" in /proc/TID/status (e.g. "SigPnd"). Return 0 or -errno. */
int proc_status_hex(pid_t tid, const char *key, uint64_t *val);
/* The state letter (R, S, Z, ...) and the PF_* flags of /proc/TID/stat. Return 0 or -errno. */
int proc_task_stat(pid_t tid, char *state, unsigned long *flags);
/* The id under which /proc and process_vm_readv show p's memory: p->pid, or one of its traced
 * threads when its main thread has exited (leader_gone). */
pid_t proc_mem_pid(struct proc *p);
/* Read /proc/PID/statm into p->statm (bytes). */
void proc_read_statm(struct proc *p);
/* Read /proc/PID/exe into p->exe. */
void proc_read_exe(struct proc *p);

#endif
