// SPDX-License-Identifier: GPL-2.0-only
/*
 * ownsignals: signals that are the program's own, which a tracer must deliver to it, neither
 * swallow nor take for its own: SIGTRAP by raise(), by kill(getpid()) and, on x86, from an int3
 * the program executes itself (SI_KERNEL like a breakpoint's: only its address tells them
 * apart), and SIGUSR1, SIGUSR2 and SIGTERM raised
 * to itself (heaptrace's own control signals, but these are sent to the program, so heaptrace
 * prints no extra report). A handler counts them. Between them it leaks 3 x 99 bytes
 * (trap_leak <- main). Known to exit 0 when every signal reached the handler, else 1. No stdio.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "expect.h"

static volatile sig_atomic_t caught;
static void *volatile kept[3];

static void on_signal(int sig)
{
	(void)sig;
	caught++;
}

__attribute__((noipa)) void trap_leak(unsigned i)
{
	kept[i] = malloc(99); /* site(trap_leak) */
	expect_alloc(99);
}

int main(void)
{
	static const int sigs[] = { SIGTRAP, SIGUSR1, SIGUSR2, SIGTERM };
	struct sigaction sa = { 0 };
	int want = 5;
	unsigned i;

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return 2;
	trap_leak(0);
	raise(SIGTRAP);
	kill(getpid(), SIGTRAP);
	trap_leak(1);
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("int3");
	want++;
#endif
	raise(SIGUSR1);
	raise(SIGUSR2);
	raise(SIGTERM);
	trap_leak(2);
	expect_site("malloc", 3, 297, "trap_leak,main");
	expect_summary(&expect_tracked);
	return caught == want ? 0 : 1;
}
