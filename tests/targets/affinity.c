// SPDX-License-Identifier: GPL-2.0-only
/*
 * affinity: heaptrace runs a single-threaded program on its own CPU and must give the program
 * its CPU mask back once it creates a thread or a process. This program allocates (so it is
 * traced), creates a thread, then prints the number of CPUs in its mask as seen by the main
 * thread, by the new thread and by a forked child. Run untraced and traced, the output must be
 * the same. Exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int cpus(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) ? -1 : CPU_COUNT(&set);
}

static void *thread_main(void *arg)
{
	*(int *)arg = cpus();
	free(malloc(16));
	return NULL;
}

int main(void)
{
	pthread_t th;
	int in_thread = 0, status;
	pid_t child;

	free(malloc(32));
	if (pthread_create(&th, NULL, thread_main, &in_thread) || pthread_join(th, NULL))
		return 1;
	printf("main %d\nthread %d\n", cpus(), in_thread);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		printf("child %d\n", cpus());
		exit(0);
	}
	waitpid(child, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
