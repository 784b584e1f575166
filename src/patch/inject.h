/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_INJECT_H
#define HEAPTRACE_INJECT_H

/*
 * May heaptrace make a thread run a system call (remote_syscall)? Under seccomp a call the
 * thread may not make kills the process (KILL_*, TRAP) or fails (ERRNO, TRACE, USER_NOTIF), so
 * before each injection the thread's seccomp state is read and its filters are run on the exact
 * call: number, arguments, instruction pointer (seccomp.h). Strict mode allows nothing heaptrace
 * injects. Filters heaptrace cannot read (PTRACE_SECCOMP_GET_FILTER needs CAP_SYS_ADMIN and
 * heaptrace itself outside seccomp) allow nothing either, unless they are provably heaptrace's
 * own: heaptrace runs in filter mode, launched the program (the thread belongs to a process it
 * forked, or to a descendant it traces) and the thread has as many filters as heaptrace. Filters
 * are inherited and only ever added, so an equal count means the program added none. The call is
 * then decided by a probe: a child of heaptrace, under the same filters, makes the same call
 * (harmless there) and is watched. Seccomp state belongs to a thread, and a program may add
 * filters or enter strict mode at any time: check with the thread that will make the call
 * stopped, right before the call, never from an older reading.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "patch/seccomp.h"

/* The seccomp state of one stopped thread, and what it said of the last call refused. */
struct inject_check {
	long mode; /* Seccomp: of /proc/TID/status: 0 none, 1 strict, 2 filter, -1 no seccomp */
	struct sc_prog *progs; /* mode 2: the thread's filters, oldest first */
	size_t n;
	int err; /* mode 2: -errno when the filters could not all be read */
	/* err set, and the filters are heaptrace's own (see above): calls are probed */
	bool own;
	uint32_t refused_by; /* what the filters returned for the last call refused */
	int probe_how, probe_detail; /* own: what the probe of the last call refused did */
};

/* Once before tracing: whether heaptrace launched the program (not --pid), the first condition
 * for unreadable filters to be its own (see above). */
void inject_init(bool launched);

/* Read the seccomp state and, in filter mode, every filter of stopped thread tid. When they
 * cannot be read, own says whether they are heaptrace's own: only in a launch session (not
 * --pid, whose process heaptrace did not fork), for a thread heaptrace traces. */
void inject_check_load(struct inject_check *c, pid_t tid);
void inject_check_free(struct inject_check *c);

/* True if no call can pass: strict mode, a mode heaptrace does not know, or unread filters
 * that are not heaptrace's own. */
bool inject_check_none(const struct inject_check *c);

/*
 * Would the kernel let the thread make system call nr with args (as its registers will hold
 * them) at the syscall instruction at insn_addr? ctx: a loaded struct inject_check (this is a
 * bp_syscall_ok_fn). A refusal is kept in it for inject_check_why.
 * Under heaptrace's own unreadable filters (own), the answer is a probe's, made once per call
 * number and the arguments that are not addresses, and kept for the run (heaptrace's filters
 * never change). The probe knows mmap (anonymous, not MAP_FIXED), mprotect and rt_sigaction;
 * any other call is refused. What it cannot reproduce: the instruction pointer and the
 * addresses (mmap's hint, mprotect's page, rt_sigaction's structs) are the probe's own, so a
 * filter that tests those could decide differently; filters almost never do.
 */
bool inject_check_ok(void *ctx, long nr, const uint64_t args[6], uint64_t insn_addr);

/* Why calls are refused, for a message: "it runs under a seccomp filter that forbids the mmap
 * heaptrace has to inject (...)"; what names the call (e.g. "mmap"). Return buf. */
char *inject_check_why(const struct inject_check *c, const char *what, char *buf, size_t size);

/* All three for one call in stopped thread tid: load, check, free. */
bool inject_ok(pid_t tid, long nr, const uint64_t args[6], uint64_t insn_addr);

#endif
