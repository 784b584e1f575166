// SPDX-License-Identifier: GPL-2.0-only
/*
 * leaderexit: a process for heaptrace -p whose main thread has exited. $HEAPTRACE_OUTFILE names
 * heaptrace's --outfile.
 * usage: leaderexit [int|exit]
 * main starts a worker thread, allows any tracer (PR_SET_PTRACER_ANY) and calls pthread_exit: the
 * main thread stays a zombie (State Z in /proc/PID/status) while the worker runs on, and the
 * process keeps its id. The worker waits for that, writes "ready\n" on stdout and polls until
 * heaptrace's breakpoints are in malloc and free (the first bytes of each entry differ from a
 * copy taken before). Then it leaks 3 x 40 bytes (worker_leak <- worker_main <- glibc) and:
 *   - "int" (default): sends SIGINT to heaptrace, which writes its final report, removes its
 *     breakpoints, detaches and exits 0; the worker checks that the entries are restored (exit 3
 *     if not) and exits 0. heaptrace's report is exactly 3 allocations, 0 frees, 3 live blocks,
 *     120 bytes.
 *   - "exit": exits with status 5 while traced: the report says exit_status 5.
 * No stdio; the tracer is found through /proc/thread-self (the main thread's /proc/self/status
 * says nothing of the worker's tracer).
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "entries.h"
#include "expect.h"
#include "handshake.h"

static void *volatile kept[3];
static int by_signal = 1;


/* The first word after "key:" on a line of the file path (not its first line), in out; 0 or -1. */
static int proc_word(const char *path, const char *key, char *out, size_t outlen)
{
	char buf[4096], pat[32], *p;
	size_t n, klen = strlen(key);
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || klen + 3 > sizeof(pat))
		return -1;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	pat[0] = '\n';
	memcpy(pat + 1, key, klen);
	pat[klen + 1] = ':';
	pat[klen + 2] = '\0';
	p = strstr(buf, pat);
	if (!p)
		return -1;
	p += klen + 2;
	p += strspn(p, " \t");
	n = strcspn(p, " \t\n");
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

/* This thread's tracer (0: none). */
static long my_tracer(void)
{
	char w[32];

	return proc_word("/proc/thread-self/status", "TracerPid", w, sizeof(w)) ? -1 :
									       strtol(w, NULL, 10);
}

__attribute__((noipa)) void worker_leak(unsigned i)
{
	kept[i] = malloc(40); /* site(worker_leak) */
	expect_alloc(40);
}

__attribute__((noipa)) void *worker_main(void *arg)
{
	struct timespec start;
	char state[8] = "";
	unsigned i;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &start);
	/* the main thread's status is the process's: Z once it has exited */
	while (proc_word("/proc/self/status", "State", state, sizeof(state)) || state[0] != 'Z') {
		if (handshake_expired(&start))
			_exit(99);
		handshake_pause();
	}
	if (write(1, "ready\n", 6) != 6)
		_exit(2);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!entries_trapped(1)) {
		if (handshake_expired(&start))
			_exit(99);
		handshake_pause();
	}
	for (i = 0; i < 3; i++)
		worker_leak(i);
	expect_site("malloc", 3, 120, "worker_leak,worker_main,*");
	if (!by_signal) {
		expect_exit(5);
		exit(5);
	}
	expect_summary(&expect_tracked);
	{
		long tracer = my_tracer();

		if (tracer <= 0 || kill((pid_t)tracer, SIGINT) != 0)
			_exit(98);
	}
	handshake_wait_reports(1);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (my_tracer() != 0) {
		if (handshake_expired(&start))
			_exit(99);
		handshake_pause();
	}
	exit(entries_trapped(0) ? 0 : 3);
}

int main(int argc, char **argv)
{
	pthread_t tid;

	by_signal = !(argc > 1 && strcmp(argv[1], "exit") == 0);
	entries_save();
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (pthread_create(&tid, NULL, worker_main, NULL))
		return 2;
	pthread_exit(NULL);
}
