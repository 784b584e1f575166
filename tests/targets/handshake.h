/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Checkpoints for targets that talk to heaptrace while it traces them (no sleeping in the tests:
 * the target waits for the event it needs, polling, with a time limit). No stdio, no heap.
 */
#ifndef HEAPTRACE_TARGET_HANDSHAKE_H
#define HEAPTRACE_TARGET_HANDSHAKE_H

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HANDSHAKE_LIMIT_S 60 /* then the target gives up with status 99 (a harness fault) */

static inline __attribute__((unused)) void handshake_pause(void)
{
	struct timespec ts = { 0, 1000000 }; /* 1 ms between polls */

	nanosleep(&ts, NULL);
}

/* The monotonic clock by the system call: the C library's reads the time-stamp counter where
 * the kernel's clock source is the TSC, which faults in a target that turned it off (notsc). */
static inline __attribute__((unused)) void handshake_now(struct timespec *ts)
{
	if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, ts))
		_exit(99);
}

static inline __attribute__((unused)) int handshake_expired(const struct timespec *start)
{
	struct timespec now;

	handshake_now(&now);
	return now.tv_sec - start->tv_sec > HANDSHAKE_LIMIT_S;
}

/* The pid of the process tracing us (TracerPid in /proc/self/status), 0 if none, -1 on error. */
static inline __attribute__((unused)) long handshake_tracer(void)
{
	char buf[4096], *p;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "TracerPid:");
	if (!p)
		return -1;
	return strtol(p + 10, NULL, 10);
}

/* Number of '\n' in the file named by $HEAPTRACE_OUTFILE (0 if it does not exist yet). */
static inline __attribute__((unused)) unsigned long handshake_lines(void)
{
	const char *path = getenv("HEAPTRACE_OUTFILE");
	unsigned long lines = 0;
	char buf[4096];
	ssize_t n, i;
	int fd;

	if (!path)
		_exit(99);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

/* Wait until heaptrace has written at least n report lines (JSON Lines: one per report). */
static inline __attribute__((unused)) void handshake_wait_reports(unsigned long n)
{
	struct timespec start;

	handshake_now(&start);
	while (handshake_lines() < n) {
		if (handshake_expired(&start))
			_exit(99);
		handshake_pause();
	}
}

/* Wait until no process traces us any more (heaptrace detached). */
static inline __attribute__((unused)) void handshake_wait_untraced(void)
{
	struct timespec start;

	handshake_now(&start);
	while (handshake_tracer() != 0) {
		if (handshake_expired(&start))
			_exit(99);
		handshake_pause();
	}
}

#endif
