// SPDX-License-Identifier: GPL-2.0-only
/*
 * sigover: a signal handler that allocates while the code it interrupted is inside a traced call.
 * usage: sigover [N [altstack|realloc]]   (default 200000; altstack: the handler runs on a
 * sigaltstack of 64 KiB with a guard page above it, SA_ONSTACK; realloc: each of main's blocks
 * is made by malloc and grown by realloc before its free, so that signals land in realloc's
 * stubs too, with a realloc in flight)
 * main makes N malloc/free pairs (churn <- main) while a CPU-time timer sends SIGPROF every
 * 100 us. The handler on_prof frees the block it made last and mallocs one of HANDLER_SIZE
 * bytes, but only when the signal did not land in the C library (whose malloc is not
 * reentrant): in the program's own code, or in code that belongs to neither, which under
 * heaptrace's entry stubs is a stub, with the interrupted malloc or free in flight. Those calls
 * are the handler's own, not part of the call it interrupted, and each must be counted.
 * At the end: the handler's last block lives (site on_prof: 1 block of HANDLER_SIZE bytes),
 * and the summary is exact (every other block freed). Writes "handler N over_other M\n" (M:
 * signals that landed outside both the C library and the program) on stdout. No stdio.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "expect.h"

#define HANDLER_SIZE 7777

struct range {
	uintptr_t lo, hi;
};

static struct range libc_text, own_text;
static void *volatile kept;
static volatile unsigned long handler_allocs, handler_frees, over_other;

static int in(const struct range *r, uintptr_t pc)
{
	return pc >= r->lo && pc < r->hi;
}

/* The pc the signal interrupted, as the kernel saved it. */
static uintptr_t interrupted_pc(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__) || defined(__mips__)
	return (uintptr_t)uc->uc_mcontext.pc;
#elif defined(__arm__)
	return (uintptr_t)uc->uc_mcontext.arm_pc;
#else
#error "no interrupted pc for this architecture"
#endif
}

__attribute__((noipa)) static void on_prof(int sig, siginfo_t *si, void *uc_)
{
	uintptr_t pc = interrupted_pc(uc_);

	(void)sig;
	(void)si;
	if (in(&libc_text, pc))
		return;
	if (!in(&own_text, pc))
		over_other++;
	if (kept) {
		free(kept);
		handler_frees++;
	}
	kept = malloc(HANDLER_SIZE); /* site(on_prof) */
	if (kept)
		handler_allocs++;
}

/* The executable mappings of /proc/self/maps whose path contains name: their span. */
static int text_of(const char *name, struct range *r)
{
	static char buf[1 << 16];
	ssize_t n, len = 0;
	int fd = open("/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return -1;
	while (len < (ssize_t)sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	r->lo = UINTPTR_MAX;
	r->hi = 0;
	for (char *line = buf, *end; *line; line = end + 1) {
		unsigned long lo, hi;
		char perms[5];

		end = strchr(line, '\n');
		if (!end)
			break;
		*end = '\0';
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && perms[2] == 'x' &&
		    strstr(line, name)) {
			r->lo = lo < r->lo ? lo : r->lo;
			r->hi = hi > r->hi ? hi : r->hi;
		}
	}
	return r->hi ? 0 : -1;
}

__attribute__((noipa)) static void churn(unsigned long i)
{
	char *p = malloc(16 + i % 64);

	if (!p)
		exit(2);
	p[0] = (char)i;
	free(p);
}

__attribute__((noipa)) static void churn_realloc(unsigned long i)
{
	char *p = malloc(16), *q;

	if (!p)
		exit(2);
	q = realloc(p, 32 + i % 64);
	if (!q)
		exit(2);
	q[0] = (char)i;
	free(q);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	unsigned long grow = argc > 2 && !strcmp(argv[2], "realloc");
	struct itimerval every = { { 0, 100 }, { 0, 100 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa;
	sigset_t prof;
	char line[96];

	if (text_of("/libc.so", &libc_text) || text_of("/sigover", &own_text))
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (argc > 2 && !strcmp(argv[2], "altstack")) {
		enum { ALT = 64 << 10 };
		char *m = mmap(NULL, ALT + 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		stack_t ss = { .ss_sp = m, .ss_size = ALT };

		if (m == MAP_FAILED || mprotect(m + ALT, 4096, PROT_NONE) || sigaltstack(&ss, NULL))
			return 2;
		sa.sa_flags |= SA_ONSTACK;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &every, NULL))
		return 2;
	for (unsigned long i = 0; i < n; i++)
		grow ? churn_realloc(i) : churn(i);
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	sigprocmask(SIG_BLOCK, &prof, NULL);
	setitimer(ITIMER_PROF, &off, NULL);
	expect_site("malloc", 1, HANDLER_SIZE, "on_prof,*");
	/* a realloc counts a free and an allocation, moved or not */
	expect_summary(&(struct expect_sum){ .alloc_calls = (grow + 1) * n + handler_allocs,
					     .free_calls = (grow + 1) * n + handler_frees,
					     .live_blocks = 1, .live_bytes = HANDLER_SIZE });
	snprintf(line, sizeof(line), "handler %lu over_other %lu\n", handler_allocs, over_other);
	if (write(1, line, strlen(line)) < 0)
		return 2;
	return 0;
}
