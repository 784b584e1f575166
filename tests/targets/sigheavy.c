// SPDX-License-Identifier: GPL-2.0-only
/*
 * sigheavy: a program that lives on signals, each of which a tracer must hand to it unchanged.
 * It installs handlers for SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGTRAP and SIGSEGV, then for
 * ROUNDS rounds, between a malloc (round_alloc <- main) and a realloc of that block
 * (round_grow <- main):
 *   - raise(SIGUSR1) (its handler mallocs and frees 24 bytes: usr1_churn <- on_usr1 <- ...);
 *   - kill(getpid(), SIGUSR2);
 *   - raise(SIGTRAP), and on x86_64 an int3 of its own (the SIGTRAP handler callocs and frees
 *     3 x 8 bytes: trap_churn <- on_trap <- ..., unless the argument is "plain-trap": then the
 *     SIGTRAP handler only counts; so an allocation made while SIGTRAP is blocked, inside its
 *     own handler, is in the default run only);
 *   - a write through a NULL pointer: the SIGSEGV handler siglongjmps back;
 *   - setitimer(ITIMER_REAL) and sigsuspend until SIGALRM arrives (SIGALRM blocked otherwise, so
 *     no race); the SIGALRM handler leaks 40 bytes (alrm_leak <- on_alarm <- ...);
 *   - every CHILD_EVERY rounds, with SIGCHLD blocked, fork a child (it mallocs and frees, raises
 *     SIGUSR2 and exits 10 + round / CHILD_EVERY) and reap it, then unblock SIGCHLD: exactly one
 *     SIGCHLD per child;
 *   - the grown block is freed, except every KEEP_EVERY rounds, when it stays live.
 * Then it forks a helper and stops itself with raise(SIGSTOP). The helper polls
 * /proc/PPID/stat until its parent is stopped (state T, or t under a tracer) and sends SIGCONT,
 * again each time it sees it stopped, until the parent says it runs again (a shared page); so
 * the group-stop and SIGCONT path runs, with no sleep. The helper exits 0 (one more SIGCHLD).
 * Finally it writes the counters of every signal its handlers received on stdout, one line
 * "NAME COUNT" each (write(2), no stdio), and exits 42 when each counter is what it caused, 3 if
 * a child died of a signal or exited with another status, 1 if a counter is wrong.
 * Live at exit (ROUNDS = 50, KEEP_EVERY = 10): 5 blocks from round_grow (realloc, 300 + round
 * bytes, rounds 0, 10, .., 40: 1600 bytes) and 50 x 40 bytes from alrm_leak.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"
#include "handshake.h"

#define ROUNDS 50
#define CHILD_EVERY 5
#define KEEP_EVERY 10

enum { C_USR1, C_USR2, C_ALRM, C_CHLD, C_TRAP, C_SEGV, C_N };
static const char *const names[C_N] = { "SIGUSR1", "SIGUSR2", "SIGALRM",
					"SIGCHLD", "SIGTRAP", "SIGSEGV" };
static volatile sig_atomic_t counts[C_N];
static sigjmp_buf segv_env;
static void *volatile kept[ROUNDS * 2];
static volatile unsigned nkept;
static int *volatile nowhere;
static int trap_allocs = 1;

struct stop_page {
	volatile int about_to_stop;
	volatile int resumed;
};

__attribute__((noipa)) void usr1_churn(void)
{
	void *p = malloc(24);

	keep(p);
	free(p);
	expect_alloc(24);
	expect_free(24);
}

__attribute__((noipa)) void trap_churn(void)
{
	void *p = calloc(3, 8);

	keep(p);
	free(p);
	expect_alloc(24);
	expect_free(24);
}

__attribute__((noipa)) void alrm_leak(void)
{
	kept[nkept++] = malloc(40); /* site(alrm_leak) */
	expect_alloc(40);
}

static void on_usr1(int sig)
{
	(void)sig;
	counts[C_USR1]++;
	usr1_churn();
}

static void on_usr2(int sig)
{
	(void)sig;
	counts[C_USR2]++;
}

__attribute__((noipa)) void on_alarm(int sig)
{
	(void)sig;
	counts[C_ALRM]++;
	alrm_leak();
}

static void on_chld(int sig)
{
	(void)sig;
	counts[C_CHLD]++;
}

static void on_trap(int sig)
{
	(void)sig;
	counts[C_TRAP]++;
	if (trap_allocs)
		trap_churn();
}

static void on_segv(int sig)
{
	(void)sig;
	counts[C_SEGV]++;
	siglongjmp(segv_env, 1);
}

__attribute__((noipa)) void *round_alloc(unsigned i)
{
	void *p = malloc(100 + i);

	expect_alloc(100 + i);
	return p;
}

__attribute__((noipa)) void *round_grow(void *p, unsigned i)
{
	void *q = realloc(p, 300 + i); /* site(round_grow) */

	expect_free(100 + i);
	expect_alloc(300 + i);
	return q;
}

/* A write through NULL; the SIGSEGV handler jumps back here. */
__attribute__((noipa)) void segv_round(unsigned i)
{
	if (!sigsetjmp(segv_env, 1))
		*nowhere = (int)i;
}

static void wait_alarm(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 500 } };
	sigset_t waitmask;
	sig_atomic_t before = counts[C_ALRM];

	sigprocmask(SIG_SETMASK, NULL, &waitmask);
	sigdelset(&waitmask, SIGALRM);
	if (setitimer(ITIMER_REAL, &it, NULL))
		_exit(2);
	while (counts[C_ALRM] == before)
		sigsuspend(&waitmask);
}

/* Fork a child that exits with status code; reap it. SIGCHLD is blocked meanwhile. */
static int child_round(int code)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		_exit(2);
	if (pid == 0) {
		void *p = malloc(77);

		keep(p);
		free(p);
		raise(SIGUSR2);
		_exit(code);
	}
	if (waitpid(pid, &status, 0) != pid)
		_exit(2);
	return WIFEXITED(status) && WEXITSTATUS(status) == code ? 0 : -1;
}

/* State letter of process pid in /proc/pid/stat, 0 on error. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	struct expect_buf b = { .n = 0 };
	ssize_t n;
	int fd;

	expect_str(&b, "/proc/");
	expect_num(&b, (unsigned long)pid);
	expect_str(&b, "/stat");
	memcpy(path, b.s, b.n);
	path[b.n] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Stop ourselves; a helper child sends SIGCONT once it sees us stopped. 0 or -1. */
static int stop_and_continue(void)
{
	struct stop_page *sp = mmap(NULL, sizeof(*sp), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t parent = getpid(), pid;
	int status;

	if (sp == MAP_FAILED)
		_exit(2);
	pid = fork();
	if (pid < 0)
		_exit(2);
	if (pid == 0) {
		struct timespec start;

		clock_gettime(CLOCK_MONOTONIC, &start);
		while (!sp->resumed) {
			char st;

			if (handshake_expired(&start))
				_exit(99);
			st = proc_state(parent);
			if (sp->about_to_stop && (st == 'T' || st == 't'))
				kill(parent, SIGCONT);
			handshake_pause();
		}
		_exit(0);
	}
	sp->about_to_stop = 1;
	raise(SIGSTOP);
	sp->resumed = 1;
	if (waitpid(pid, &status, 0) != pid)
		_exit(2);
	munmap(sp, sizeof(*sp));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 99)
		_exit(99);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void say(const char *name, unsigned long n)
{
	struct expect_buf b = { .n = 0 };

	expect_str(&b, name);
	expect_str(&b, " ");
	expect_num(&b, n);
	expect_str(&b, "\n");
	if (write(1, b.s, b.n) != (ssize_t)b.n)
		_exit(2);
}

int main(int argc, char **argv)
{
	static void (*const handlers[C_N])(int) = { on_usr1, on_usr2, on_alarm,
						    on_chld, on_trap, on_segv };
	static const int sigs[C_N] = { SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGTRAP, SIGSEGV };
	unsigned long want[C_N] = { 0 };
	sigset_t chld, alrm;
	unsigned long kept_bytes = 0;
	int traps_per_round = 1, bad_child = 0, rc = 42;
	unsigned i, j;

#if defined(__x86_64__)
	traps_per_round = 2;
#endif
	if (argc > 1 && strcmp(argv[1], "plain-trap") == 0)
		trap_allocs = 0;
	for (i = 0; i < C_N; i++) {
		struct sigaction sa = { 0 };

		sa.sa_handler = handlers[i];
		sigemptyset(&sa.sa_mask);
		if (sigaction(sigs[i], &sa, NULL))
			return 2;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_BLOCK, &alrm, NULL);

	for (i = 0; i < ROUNDS; i++) {
		void *p = round_alloc(i);

		keep(p);
		raise(SIGUSR1);
		kill(getpid(), SIGUSR2);
		raise(SIGTRAP);
#if defined(__x86_64__)
		__asm__ volatile("int3");
#endif
		segv_round(i);
		p = round_grow(p, i);
		keep(p);
		wait_alarm();
		if (i % CHILD_EVERY == 0) {
			sigprocmask(SIG_BLOCK, &chld, NULL);
			if (child_round(10 + (int)(i / CHILD_EVERY)))
				bad_child = 1;
			sigprocmask(SIG_UNBLOCK, &chld, NULL);
			want[C_CHLD]++;
		}
		if (i % KEEP_EVERY == 0) {
			kept[nkept++] = p;
			kept_bytes += 300 + i;
		} else {
			free(p);
			expect_free(300 + i);
		}
	}
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (stop_and_continue())
		bad_child = 1;
	sigprocmask(SIG_UNBLOCK, &chld, NULL);
	want[C_CHLD]++;

	want[C_USR1] = ROUNDS;
	want[C_USR2] = ROUNDS;
	want[C_ALRM] = ROUNDS;
	want[C_TRAP] = ROUNDS * (unsigned long)traps_per_round;
	want[C_SEGV] = ROUNDS;
	for (j = 0; j < C_N; j++) {
		say(names[j], (unsigned long)counts[j]);
		if ((unsigned long)counts[j] != want[j])
			rc = 1;
	}
	if (bad_child)
		rc = 3;

	expect_site("realloc", ROUNDS / KEEP_EVERY, kept_bytes, "round_grow,main");
	expect_site("malloc", ROUNDS, ROUNDS * 40, "alrm_leak,on_alarm,*");
	expect_summary(&expect_tracked);
	expect_exit(rc);
	return rc;
}
