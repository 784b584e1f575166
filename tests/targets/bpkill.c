// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpkill: four threads mixing malloc and posix_memalign (which keeps a breakpoint when the
 * other functions go through entry stubs), for heaptrace -p to be killed with SIGKILL while it
 * holds some of them at their breakpoints. Says "ready PID\n", then runs until "stop" (or end
 * of file) on its standard input; each thread checks the bytes it wrote into every block. Then
 * "bpkill: N threads stopped\n" and status 0 (3: a block's bytes were damaged).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#define THREADS 4

static volatile int stop;

static void *work(void *arg)
{
	unsigned seed = (unsigned)(unsigned long)arg;

	while (!stop) {
		void *a = NULL, *b = malloc(24 + seed % 64);
		unsigned char *c;

		if (posix_memalign(&a, 64, 100 + seed % 200) || !a || !b)
			_exit(4);
		memset(a, (int)seed & 0xff, 100);
		memset(b, (int)~seed & 0xff, 24);
		c = a;
		for (unsigned i = 0; i < 100; i++)
			if (c[i] != (seed & 0xff))
				_exit(3);
		free(b);
		free(a);
		seed = seed * 1103515245u + 12345u;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	char line[64];

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	for (unsigned long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, (void *)(i + 1)))
			return 5;
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) && strcmp(line, "stop\n"))
		;
	stop = 1;
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("bpkill: %d threads stopped\n", THREADS);
	return 0;
}
