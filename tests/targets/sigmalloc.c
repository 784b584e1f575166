// SPDX-License-Identifier: GPL-2.0-only
/*
 * sigmalloc: a signal handler that mallocs, raised from known functions. usage: sigmalloc
 * [raise|kill|timer|all] (default all). The handler on_signal leaks one block of SIG_SIZE bytes
 * each time (site on_signal); it runs
 *   raise: by raise(SIGUSR1) in by_raise <- main,
 *   kill:  by pthread_kill(pthread_self(), SIGUSR1) in by_kill <- main,
 *   timer: by a one-shot CPU-time timer (SIGPROF) that interrupts the loop of busy <- by_timer
 *          <- main, which spins until the handler has run (no system call in the loop: the
 *          signal lands in busy).
 * So the backtrace of each block is malloc <- on_signal <- (the kernel's signal frame: the C
 * library's restorer __restore_rt) <- the interrupted code <- ... <- main: for raise and kill
 * the C library's functions that make the system call, then by_raise or by_kill; for the
 * timer, busy itself. Records: one site per way (the chains on_signal,*,by_raise,main,
 * on_signal,*,by_kill,main and on_signal,busy,by_timer,main). No stdio.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "expect.h"

#define SIG_SIZE 77

static volatile sig_atomic_t caught;
static void *volatile kept[3];

__attribute__((noipa)) void on_signal(int sig)
{
	(void)sig;
	if (caught < 3)
		kept[caught] = malloc(SIG_SIZE); /* site(on_signal) */
	caught++;
}

__attribute__((noipa)) void by_raise(void)
{
	raise(SIGUSR1); /* call(raise) */
}

__attribute__((noipa)) void by_kill(void)
{
	pthread_kill(pthread_self(), SIGUSR1); /* call(pthread_kill) */
}

/* Spin until the handler ran (interrupted here by the timer's signal). */
__attribute__((noipa)) void busy(sig_atomic_t before)
{
	while (caught == before)
		__asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) void by_timer(void)
{
	struct itimerval once = { { 0, 0 }, { 0, 1000 } }; /* one signal, after 1 ms of CPU */

	setitimer(ITIMER_PROF, &once, NULL);
	busy(caught);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "all";
	int all = !strcmp(how, "all");
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGPROF, &sa, NULL);
	if (all || !strcmp(how, "raise")) {
		by_raise();
		expect_alloc(SIG_SIZE);
		expect_site("malloc", 1, SIG_SIZE, "on_signal,*,by_raise,main");
	}
	if (all || !strcmp(how, "kill")) {
		by_kill();
		expect_alloc(SIG_SIZE);
		expect_site("malloc", 1, SIG_SIZE, "on_signal,*,by_kill,main");
	}
	if (all || !strcmp(how, "timer")) {
		by_timer();
		expect_alloc(SIG_SIZE);
		expect_site("malloc", 1, SIG_SIZE, "on_signal,busy,by_timer,main");
	}
	expect_summary(&expect_tracked);
	return 0;
}
