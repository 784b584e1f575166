// SPDX-License-Identifier: GPL-2.0-only
/*
 * seccomp: processes under seccomp, for heaptrace -p and for a launched program that execs
 * (tests/e2e/test_seccomp.py). Filters are classic BPF written here, checking the arch first
 * as real filters do, installed with PR_SET_NO_NEW_PRIVS + PR_SET_SECCOMP; no stdio.
 *
 *   seccomp strict          mallocs a 300-byte block and fills it, allows any tracer, enters
 *                           strict mode (read, write, exit, rt_sigreturn only), writes "ready\n",
 *                           then answers each line on stdin: "ping" with "pong\n" (after checking
 *                           the block: "damaged\n" if it changed), anything else or end of
 *                           input with SYS_exit(4).
 *   seccomp refused FILTER  the same block, then FILTER, any tracer, "ready\n"; waits for a line
 *                           on stdin, exits 5 if something still traces it; checks the block,
 *                           mallocs, fills, checks and frees 100 blocks (exit 6 if any is
 *                           damaged), writes "alive\n" and exits 3.
 *   seccomp traced FILTER   like attach.c "int", one thread: leaks 2 x 64 and mallocs X (500)
 *                           before; FILTER, any tracer, "ready\n", waits until the entries of
 *                           malloc, calloc and free change (breakpoints); leaks 3 x 48
 *                           (after_attach <- traced <- main) and calloc(4, 10) (calloc_site
 *                           <- traced <- main), frees X (unknown to heaptrace), writes its
 *                           records (tests/targets/expect.h), SIGINT to its tracer,
 *                           waits for the report and the detach, exits 3 if the entries are not
 *                           restored, else mallocs and frees untraced and exits 0.
 *   seccomp exec FILTER     mallocs and frees a little, installs FILTER, then
 *                           execve("/proc/self/exe", {argv0, "after"}).
 *   seccomp after           exits 6 if something traces it, mallocs, checks and frees 100
 *                           blocks (exit 6 if damaged), writes "after: untraced\n" and exits 5.
 *   seccomp launched        for heaptrace -- under "seccomp wrap": exits 6 if nothing traces it;
 *                           leaks 3 x 48 (after_attach <- launched <- main) and calloc(4, 10)
 *                           (calloc_site <- launched <- main), mallocs and frees 500 bytes,
 *                           writes its records, "launched: traced\n" and exits 0.
 *   seccomp wrap PROG ARG.. installs "allow" and execs PROG: PROG runs under seccomp (for
 *                           heaptrace itself: it cannot read other processes' filters then).
 *   seccomp wrap-with FILTER PROG ARG..  the same under FILTER.
 * FILTER: kill-mmap (any mmap: SECCOMP_RET_KILL_PROCESS), eperm-mmap (any mmap: EPERM),
 * kill-exec (mmap or mprotect with PROT_EXEC: kill), kill-mprotect (any mprotect: kill),
 * unrelated (ptrace: kill, acct: EPERM), wx-kill (an mmap both writable and executable, or an
 * mprotect with PROT_EXEC: kill, as systemd's MemoryDenyWriteExecute), anon-exec-kill and
 * anon-exec-eperm (an anonymous mmap with PROT_EXEC: kill or EPERM; what the dynamic linker does
 * passes), allow.
 * Exit 77: no seccomp here (or an arch this file does not know); 98: execve or a write failed;
 * 99: a checkpoint never came; 2: bad usage.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "entries.h"
#include "expect.h"
#include "handshake.h"

#if defined(__x86_64__)
#define ARCH_HERE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH_HERE AUDIT_ARCH_AARCH64
#elif defined(__arm__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARCH_HERE AUDIT_ARCH_ARM
#elif defined(__mips__) && _MIPS_SIM == _ABI64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARCH_HERE AUDIT_ARCH_MIPSEL64
#else
#define ARCH_HERE 0 /* exit 77 */
#endif

#ifdef __NR_mmap2
#define NR_MMAP __NR_mmap2 /* arm: what the C library and heaptrace call */
#else
#define NR_MMAP __NR_mmap
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif

/* The low 32 bits of argument i (a filter sees each 64-bit argument as two words). */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args[i]) + 4)
#else
#define ARG_LO(i) offsetof(struct seccomp_data, args[i])
#endif

#define LOAD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define IF_EQ(v, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (v), (t), (f))
#define IF_SET(v, t, f) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (v), (t), (f))
/* Instructions 0-3 of every filter: another arch is killed, then A = the call's number. */
#define PROLOGUE                                                                                   \
	LOAD(offsetof(struct seccomp_data, arch)), IF_EQ(ARCH_HERE, 1, 0),                         \
		RET(SECCOMP_RET_KILL_PROCESS), LOAD(offsetof(struct seccomp_data, nr))

#define KILL SECCOMP_RET_KILL_PROCESS
#define EPERM_RET (SECCOMP_RET_ERRNO | EPERM)

static const struct sock_filter f_kill_mmap[] = { PROLOGUE, IF_EQ(NR_MMAP, 0, 1), RET(KILL),
						   RET(SECCOMP_RET_ALLOW) };
static const struct sock_filter f_eperm_mmap[] = { PROLOGUE, IF_EQ(NR_MMAP, 0, 1), RET(EPERM_RET),
						    RET(SECCOMP_RET_ALLOW) };
static const struct sock_filter f_kill_mprotect[] = { PROLOGUE, IF_EQ(__NR_mprotect, 0, 1),
						       RET(KILL), RET(SECCOMP_RET_ALLOW) };
static const struct sock_filter f_kill_exec[] = {
	PROLOGUE,
	/* 4 */ IF_EQ(NR_MMAP, 1, 0),
	/* 5 */ IF_EQ(__NR_mprotect, 0, 3),
	/* 6 */ LOAD(ARG_LO(2)),
	/* 7 */ IF_SET(PROT_EXEC, 0, 1),
	/* 8 */ RET(KILL),
	/* 9 */ RET(SECCOMP_RET_ALLOW),
};
/* systemd's MemoryDenyWriteExecute: no writable and executable mmap, no mprotect to exec */
static const struct sock_filter f_wx_kill[] = {
	PROLOGUE,
	/* 4 */ IF_EQ(NR_MMAP, 0, 3),
	/* 5 */ LOAD(ARG_LO(2)),
	/* 6 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, PROT_WRITE | PROT_EXEC),
	/* 7 */ IF_EQ(PROT_WRITE | PROT_EXEC, 3, 4),
	/* 8 */ IF_EQ(__NR_mprotect, 0, 3),
	/* 9 */ LOAD(ARG_LO(2)),
	/* 10 */ IF_SET(PROT_EXEC, 0, 1),
	/* 11 */ RET(KILL),
	/* 12 */ RET(SECCOMP_RET_ALLOW),
};
static const struct sock_filter f_unrelated[] = {
	PROLOGUE,
	/* 4 */ IF_EQ(__NR_ptrace, 0, 1),
	/* 5 */ RET(KILL),
	/* 6 */ IF_EQ(__NR_acct, 0, 1),
	/* 7 */ RET(EPERM_RET),
	/* 8 */ RET(SECCOMP_RET_ALLOW),
};
#define ANON_EXEC(action)                                                                          \
	{                                                                                          \
		PROLOGUE,                                                                          \
		/* 4 */ IF_EQ(NR_MMAP, 0, 5),                                                     \
		/* 5 */ LOAD(ARG_LO(3)),                                                          \
		/* 6 */ IF_SET(MAP_ANONYMOUS, 0, 3),                                              \
		/* 7 */ LOAD(ARG_LO(2)),                                                          \
		/* 8 */ IF_SET(PROT_EXEC, 0, 1),                                                  \
		/* 9 */ RET(action),                                                              \
		/* 10 */ RET(SECCOMP_RET_ALLOW),                                                  \
	}
static const struct sock_filter f_anon_exec_kill[] = ANON_EXEC(KILL);
static const struct sock_filter f_anon_exec_eperm[] = ANON_EXEC(EPERM_RET);
static const struct sock_filter f_allow[] = { PROLOGUE, RET(SECCOMP_RET_ALLOW) };

#define FILTER(name, f) { name, f, sizeof(f) / sizeof(f[0]) }
static const struct {
	const char *name;
	const struct sock_filter *insns;
	unsigned short len;
} filters[] = {
	FILTER("kill-mmap", f_kill_mmap),
	FILTER("eperm-mmap", f_eperm_mmap),
	FILTER("kill-exec", f_kill_exec),
	FILTER("kill-mprotect", f_kill_mprotect),
	FILTER("unrelated", f_unrelated),
	FILTER("wx-kill", f_wx_kill),
	FILTER("anon-exec-kill", f_anon_exec_kill),
	FILTER("anon-exec-eperm", f_anon_exec_eperm),
	FILTER("allow", f_allow),
};

static void say(const char *s)
{
	size_t n = strlen(s);

	if (write(1, s, n) != (ssize_t)n)
		_exit(98);
}

static void install(const char *name)
{
	struct sock_fprog prog = { 0, NULL };

	for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
		if (!strcmp(filters[i].name, name))
			prog = (struct sock_fprog){ filters[i].len,
						    (struct sock_filter *)filters[i].insns };
	if (!prog.len)
		_exit(2);
	if (ARCH_HERE == 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(77);
}

#define BLOCK_SIZE 300
static unsigned char *block; /* made before the attach, checked after */

static void block_make(void)
{
	block = malloc(BLOCK_SIZE);
	if (!block)
		_exit(6);
	for (unsigned i = 0; i < BLOCK_SIZE; i++)
		block[i] = (unsigned char)(i * 7 + 1);
}

static int block_ok(void)
{
	for (unsigned i = 0; i < BLOCK_SIZE; i++)
		if (block[i] != (unsigned char)(i * 7 + 1))
			return 0;
	return 1;
}

/* malloc, fill, check and free 100 small blocks (brk: no mmap). Return 0 if all were right. */
static int heap_works(void)
{
	unsigned char *v[100];
	int bad = 0;

	for (unsigned i = 0; i < 100; i++) {
		v[i] = malloc(16 + 8 * i);
		if (!v[i])
			return -1;
		memset(v[i], (int)i, 16 + 8 * i);
	}
	for (unsigned i = 0; i < 100; i++) {
		for (unsigned j = 0; j < 16 + 8 * i; j++)
			bad |= v[i][j] != (unsigned char)i;
		free(v[i]);
	}
	return bad ? -1 : 0;
}

/* Read one line from stdin; return 0 at its end, the length otherwise (no stdio). */
static size_t read_line(char *buf, size_t size)
{
	size_t n = 0;

	while (n < size - 1) {
		ssize_t got = read(0, buf + n, 1);

		if (got <= 0)
			return 0;
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = '\0';
	return n;
}

static void strict_mode(void)
{
	char buf[64];

	block_make();
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	/* "ready" only once in strict mode: an attach always finds it there */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0))
		_exit(77);
	say("ready\n");
	while (read_line(buf, sizeof(buf)) && !strcmp(buf, "ping\n"))
		say(block_ok() ? "pong\n" : "damaged\n");
	syscall(SYS_exit, 4); /* exit_group is not allowed in strict mode */
}

static int refused(const char *filter)
{
	char buf[64];

	block_make();
	install(filter);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	say("ready\n");
	read_line(buf, sizeof(buf)); /* heaptrace -p comes and goes meanwhile */
	if (handshake_tracer() != 0)
		return 5;
	if (!block_ok() || heap_works())
		return 6;
	say("alive\n");
	return 3;
}

/* --- traced: heaptrace -p traces it, the filter notwithstanding --- */

static void *volatile kept[8];


__attribute__((noipa)) void before_attach(unsigned i)
{
	kept[i] = malloc(64);
}

__attribute__((noipa)) void after_attach(unsigned i)
{
	kept[2 + i] = malloc(48); /* site(after_attach) */
	expect_alloc(48);
}

__attribute__((noipa)) void calloc_site(void)
{
	kept[5] = calloc(4, 10); /* site(calloc_site) */
	expect_alloc(40);
}

static int traced(const char *filter)
{
	struct timespec start;
	long tracer;
	void *x;

	entries_save();
	for (unsigned i = 0; i < 2; i++)
		before_attach(i);
	x = malloc(500);
	keep(x);
	install(filter);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	say("ready\n");
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!entries_trapped(1)) {
		if (handshake_expired(&start))
			return 99;
		handshake_pause();
	}
	for (unsigned i = 0; i < 3; i++)
		after_attach(i);
	calloc_site();
	free(x);
	expect_tracked.unknown_frees = 1;
	expect_site("malloc", 3, 144, "after_attach,traced,main");
	expect_site("calloc", 1, 40, "calloc_site,traced,main");
	expect_summary(&expect_tracked);
	tracer = handshake_tracer();
	if (tracer <= 0 || kill((pid_t)tracer, SIGINT) != 0)
		return 98;
	handshake_wait_reports(1);
	handshake_wait_untraced();
	if (!entries_trapped(0))
		return 3;
	return heap_works() ? 6 : 0;
}

/* --- launched: heaptrace launched it, both under heaptrace's own filter --- */

static int launched(void)
{
	void *x;

	if (handshake_tracer() <= 0)
		return 6;
	for (unsigned i = 0; i < 3; i++)
		after_attach(i);
	calloc_site();
	x = malloc(500);
	keep(x);
	expect_alloc(500);
	free(x);
	expect_free(500);
	expect_site("malloc", 3, 144, "after_attach,launched,main");
	expect_site("calloc", 1, 40, "calloc_site,launched,main");
	expect_summary(&expect_tracked);
	say("launched: traced\n");
	return 0;
}

int main(int argc, char **argv)
{
	extern char **environ;
	const char *mode = argc > 1 ? argv[1] : "";

	if (ARCH_HERE == 0)
		return 77;
	if (!strcmp(mode, "strict"))
		strict_mode();
	if (!strcmp(mode, "refused") && argc == 3)
		return refused(argv[2]);
	if (!strcmp(mode, "traced") && argc == 3)
		return traced(argv[2]);
	if (!strcmp(mode, "exec") && argc == 3) {
		char *args[] = { argv[0], "after", NULL };

		if (heap_works())
			return 6;
		install(argv[2]);
		execve("/proc/self/exe", args, environ);
		return 98;
	}
	if (!strcmp(mode, "after")) {
		if (handshake_tracer() != 0 || heap_works())
			return 6;
		say("after: untraced\n");
		return 5;
	}
	if (!strcmp(mode, "launched"))
		return launched();
	if (!strcmp(mode, "wrap") && argc > 2) {
		install("allow");
		execv(argv[2], argv + 2);
		return 98;
	}
	if (!strcmp(mode, "wrap-with") && argc > 3) {
		install(argv[2]);
		execv(argv[3], argv + 3);
		return 98;
	}
	return 2;
}
