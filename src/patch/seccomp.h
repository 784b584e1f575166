/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SECCOMP_H
#define HEAPTRACE_SECCOMP_H

/*
 * Would a thread's seccomp filters let a system call through? A classic BPF interpreter for the
 * dialect the kernel accepts in a filter (seccomp_check_filter), run on struct seccomp_data as
 * the kernel fills it, with the results of several filters combined as seccomp_run_filters
 * does. Pure: the programs are read from the thread elsewhere (PTRACE_SECCOMP_GET_FILTER). The
 * prefix is sc_, not seccomp_, which is the kernel's and libseccomp's.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Old UAPI headers (cross sysroots) lack the newer actions; the values are ABI. */
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef SECCOMP_RET_LOG
#define SECCOMP_RET_LOG 0x7ffc0000U
#endif
#ifndef SECCOMP_RET_ACTION_FULL
#define SECCOMP_RET_ACTION_FULL 0xffff0000U
#endif

/* One filter program, as PTRACE_SECCOMP_GET_FILTER returns it (the instructions installed). */
struct sc_prog {
	const struct sock_filter *insns;
	size_t len;
};

/*
 * Run one program on d and put its 32-bit result in *ret. Return 0, or -EINVAL for a program
 * the kernel would not run: empty or longer than BPF_MAXINSNS, an instruction outside the
 * seccomp dialect, a jump or a load out of bounds, scratch memory read before it was written,
 * or running off the end without a return.
 */
int sc_run(const struct sock_filter *insns, size_t len, const struct seccomp_data *d,
	   uint32_t *ret);

/*
 * Run every program on d and combine the results as the kernel does: the one whose action
 * (ret & SECCOMP_RET_ACTION_FULL, compared as a signed value) is lowest wins: KILL_PROCESS,
 * KILL_THREAD, TRAP, ERRNO, USER_NOTIF, TRACE, LOG, ALLOW. A malformed program counts as
 * SECCOMP_RET_KILL_PROCESS, and so does an empty list (the kernel's own guard).
 */
uint32_t sc_run_all(const struct sc_prog *progs, size_t n, const struct seccomp_data *d);

/* True if result r lets the thread make the call by itself: ALLOW or LOG. Every other action
 * (and any unknown one, which the kernel treats as a kill) keeps the call from being made. */
bool sc_allows(uint32_t r);

/* The name of r's action for messages: "kill-process", "errno", "allow"... */
const char *sc_action_name(uint32_t r);

#endif
