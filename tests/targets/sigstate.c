// SPDX-License-Identifier: GPL-2.0-only
/*
 * sigstate: prints, on one line of stdout, how it found SIGCHLD ("default", "ignored" or
 * "handled", and whether SA_NOCLDSTOP is set) and its blocked-signal mask (signals 1 to 64, as a
 * hex number, bit N-1 for signal N), then exits with status N (its argument, 7 by default). Traced
 * and untraced, it must print the same: heaptrace gives a program the signal state it was
 * started with.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sigaction sa;
	unsigned long long mask = 0;
	sigset_t set;
	char line[128];
	int n;

	if (sigaction(SIGCHLD, NULL, &sa) || sigprocmask(SIG_BLOCK, NULL, &set))
		return 2;
	for (int sig = 1; sig <= 64 && sig < NSIG; sig++)
		if (sigismember(&set, sig) == 1)
			mask |= 1ULL << (sig - 1);
	n = snprintf(line, sizeof(line), "SIGCHLD %s%s mask %#llx\n",
		     sa.sa_handler == SIG_DFL ? "default" : sa.sa_handler == SIG_IGN ? "ignored" :
										   "handled",
		     sa.sa_flags & SA_NOCLDSTOP ? " nocldstop" : "", mask);
	if (n <= 0 || write(1, line, (size_t)n) != n)
		return 2;
	return argc > 1 ? atoi(argv[1]) : 7;
}
