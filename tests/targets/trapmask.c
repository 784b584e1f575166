// SPDX-License-Identifier: GPL-2.0-only
/*
 * trapmask: allocations made while the program's SIGTRAP is blocked or ignored must leave its
 * SIGTRAP disposition and signal mask as they were (a tracer's breakpoint is its own business;
 * on Linux, a trap taken while SIGTRAP is blocked or ignored makes the kernel reset SIGTRAP to
 * SIG_DFL and unblock it, so the tracer has to keep that from reaching the program). Three
 * cases, each with a malloc and a free (trap_churn <- main, or <- on_trap):
 *   blocked: a SIGTRAP handler is installed, SIGTRAP is blocked with sigprocmask;
 *   handler: raise(SIGTRAP), whose handler allocates (SIGTRAP is blocked inside it), twice;
 *   ignored: SIGTRAP is SIG_IGN, then raise(SIGTRAP) (which must do nothing);
 *   worker (trapmask worker, alone, without records: pthread_create's own blocks are glibc's):
 *   a thread that blocks every signal allocates (trap_churn <- worker): its mask is still
 *   full after, and the handler still ours.
 * After each it writes one line on stdout, "CASE: handler H, SIGTRAP M" (H is ours, SIG_DFL or
 * SIG_IGN; M blocked or unblocked; write(2), no stdio), and puts the disposition back if it
 * changed. Known to print
 *   blocked: handler ours, SIGTRAP blocked
 *   handler: handler ours, SIGTRAP unblocked
 *   ignored: handler SIG_IGN, SIGTRAP unblocked
 * and exit 0; it exits with bit 1, 2 or 4 set when the blocked, handler or ignored case found a
 * change (the raise of the ignored case is skipped then, it would kill the program). Live at
 * exit: 3 x 64 bytes from trap_leak <- main; in all 4 + 3 allocations and 4 frees. The worker
 * case prints "worker: handler ours, SIGTRAP blocked" and "worker: every signal blocked" and
 * exits 0, or 8 when it found a change.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"

static volatile sig_atomic_t caught;
static void *volatile kept[3];

__attribute__((noipa)) void trap_churn(void)
{
	void *p = malloc(32);

	keep(p);
	free(p);
	expect_alloc(32);
	expect_free(32);
}

__attribute__((noipa)) void trap_leak(unsigned i)
{
	kept[i] = malloc(64); /* site(trap_leak) */
	expect_alloc(64);
}

static void on_trap(int sig)
{
	(void)sig;
	caught++;
	trap_churn();
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) != (ssize_t)strlen(s))
		_exit(2);
}

/* Report the disposition and mask of SIGTRAP; return 0 if they are (handler, blocked). */
static int check(const char *what, void (*handler)(int), int blocked)
{
	struct sigaction now;
	sigset_t mask;
	int is_blocked;

	sigaction(SIGTRAP, NULL, &now);
	sigprocmask(SIG_BLOCK, NULL, &mask);
	is_blocked = sigismember(&mask, SIGTRAP);
	say(what);
	say(": handler ");
	say(now.sa_handler == on_trap ? "ours" : now.sa_handler == SIG_DFL ? "SIG_DFL" :
	    now.sa_handler == SIG_IGN ? "SIG_IGN" : "other");
	say(is_blocked ? ", SIGTRAP blocked\n" : ", SIGTRAP unblocked\n");
	return now.sa_handler == handler && is_blocked == blocked ? 0 : -1;
}

static void set_trap(void (*handler)(int))
{
	struct sigaction sa = { 0 };

	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, NULL))
		_exit(2);
}

/* The worker case, in a thread that blocks every signal: 0 if its mask is still full. */
static void *worker(void *arg)
{
	sigset_t all, now;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	trap_churn();
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	if (check("worker", on_trap, 1))
		return (void *)1;
	say(sigismember(&now, SIGUSR1) && sigismember(&now, SIGTERM) ? "worker: every signal blocked\n" :
								       "worker: signals unblocked\n");
	return sigismember(&now, SIGUSR1) && sigismember(&now, SIGTERM) ? NULL : (void *)1;
}

int main(int argc, char **argv)
{
	sigset_t trap;
	int rc = 0;

	set_trap(on_trap);
	if (argc > 1 && !strcmp(argv[1], "worker")) {
		pthread_t th;
		void *bad = (void *)1;

		if (pthread_create(&th, NULL, worker, NULL) || pthread_join(th, &bad) || bad)
			rc |= 8;
		return rc;
	}
	sigemptyset(&trap);
	sigaddset(&trap, SIGTRAP);

	/* blocked */
	sigprocmask(SIG_BLOCK, &trap, NULL);
	trap_churn();
	if (check("blocked", on_trap, 1))
		rc |= 1;
	sigprocmask(SIG_UNBLOCK, &trap, NULL);
	set_trap(on_trap);
	trap_leak(0);

	/* handler */
	raise(SIGTRAP);
	if (check("handler", on_trap, 0)) {
		rc |= 2;
		set_trap(on_trap);
	}
	raise(SIGTRAP);
	if (caught != 2)
		rc |= 2;
	trap_leak(1);

	/* ignored */
	set_trap(SIG_IGN);
	trap_churn();
	if (check("ignored", SIG_IGN, 0))
		rc |= 4;
	else
		raise(SIGTRAP);
	trap_leak(2);

	expect_site("malloc", 3, 192, "trap_leak,main");
	expect_summary(&expect_tracked);
	expect_exit(rc);
	return rc;
}
