// SPDX-License-Identifier: GPL-2.0-only
/*
 * costacks: allocations made on stacks that are not a thread's own, each with a guard page
 * (PROT_NONE) right above it, as coroutine libraries lay them out: a tracer that copies the
 * stack above sp must stop at the guard, or the program dies of SIGSEGV.
 * usage: costacks [launch|attach]
 * A second thread is started first (it waits), so the process has a thread table. Then, in the
 * main thread and in the second one, NCO ucontext coroutines on consecutive stacks of one mmap
 * (STACK bytes each, a guard page above each) take turns with their thread (swapcontext), each
 * turn a malloc(24) in co_leak, ROUNDS turns, every block but the first of each coroutine freed
 * at once; the first block is kept. A coroutine on a malloc'd stack (posix-aligned with
 * aligned_alloc, its guard page inside the block) does the same. And a SIGUSR1 handler on a
 * sigaltstack with a guard page above it mallocs 56 bytes in alt_leak (kept), raised ALT times
 * per thread. Exits 0 with "costacks: done\n".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "attached.h"
#include "expect.h"

#define NCO 3
#define STACK (16 * 4096)
#define ROUNDS 50
#define ALT 5
#define PAGE 4096

struct co {
	ucontext_t ctx, back;
	void *first;
};

static void *volatile alt_kept[2][ALT];
static volatile unsigned alt_n[2];
static __thread unsigned who;

__attribute__((noipa)) void *co_leak(void)
{
	return malloc(24); /* site(co_leak) */
}

__attribute__((noipa)) void *alt_leak(void)
{
	return malloc(56); /* site(alt_leak) */
}

static void co_main(unsigned lo, unsigned hi)
{
	struct co *c = (struct co *)(((unsigned long)hi << 32) | lo);

	for (unsigned i = 0; i < ROUNDS; i++) {
		void *p = co_leak();

		if (!p)
			_exit(5);
		if (!c->first)
			c->first = p;
		else
			free(p);
		swapcontext(&c->ctx, &c->back);
	}
}

/* Run a coroutine whose stack is [lo, lo + STACK), the page above it a guard. */
static void co_run(struct co *c, char *lo)
{
	unsigned long a = (unsigned long)c;

	if (mprotect(lo + STACK, PAGE, PROT_NONE))
		_exit(7);
	getcontext(&c->ctx);
	c->ctx.uc_stack.ss_sp = lo;
	c->ctx.uc_stack.ss_size = STACK;
	c->ctx.uc_link = &c->back;
	makecontext(&c->ctx, (void (*)(void))co_main, 2, (unsigned)a, (unsigned)(a >> 32));
	for (unsigned i = 0; i < ROUNDS; i++)
		swapcontext(&c->back, &c->ctx);
	swapcontext(&c->back, &c->ctx); /* co_main returns: back through uc_link */
}

static void on_usr1(int sig)
{
	(void)sig;
	alt_kept[who][alt_n[who]++] = alt_leak();
}

static void alt_stack(void)
{
	char *m = mmap(NULL, 2 * STACK + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	stack_t ss = { .ss_sp = m + STACK, .ss_size = STACK };

	/* the signal stack has a guard page above it, and a readable page above that */
	if (m == MAP_FAILED || mprotect(m + 2 * STACK, PAGE, PROT_NONE) || sigaltstack(&ss, NULL))
		_exit(8);
	for (unsigned i = 0; i < ALT; i++)
		raise(SIGUSR1);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
}

static void *work(void *arg)
{
	struct co cos[NCO + 1];
	char *m = mmap(NULL, NCO * (STACK + PAGE), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *heap_stack = aligned_alloc(PAGE, STACK + PAGE); /* site(work) */

	who = (unsigned)(unsigned long)arg;
	if (m == MAP_FAILED || !heap_stack)
		_exit(6);
	memset(cos, 0, sizeof(cos));
	for (unsigned i = 0; i < NCO; i++)
		co_run(&cos[i], m + i * (STACK + PAGE));
	co_run(&cos[NCO], heap_stack);
	if (mprotect(heap_stack + STACK, PAGE, PROT_READ | PROT_WRITE))
		_exit(7);
	free(heap_stack);
	munmap(m, NCO * (STACK + PAGE));
	alt_stack();
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_barrier_t *b = NULL;
	pthread_t t;

	(void)b;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	attached_begin(argc, argv);
	if (pthread_create(&t, NULL, work, (void *)1ul))
		_exit(6);
	pthread_join(t, NULL);
	work((void *)0ul);
	expect_site("malloc", 2 * (NCO + 1), 2 * (NCO + 1) * 24, "co_leak,*");
	expect_site("malloc", 2 * ALT, 2 * ALT * 56, "alt_leak,*");
	attached_end();
	attached_say("costacks: done\n");
	return 0;
}
