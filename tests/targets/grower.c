// SPDX-License-Identifier: GPL-2.0-only
/*
 * grower: a heap that grows when asked, for --live (tests/e2e/test_live.py).
 * usage: grower FIFO
 *
 * At the start hold_many makes HOLD_BLOCKS = 1000 blocks of HOLD_SIZE = 16 bytes and keeps them:
 * 16000 bytes in 1000 blocks. Then it allows any tracer (PR_SET_PTRACER_ANY), writes
 * "grower: ready PID\n" on standard output, and reads lines from FIFO (opened for reading and
 * writing, so that writers may come and go):
 *   "grow"      grow_site makes GROW_BLOCKS = 4 blocks of GROW_SIZE = 10000 bytes and keeps
 *               them: after n grows it holds 40000*n bytes in 4*n blocks; then "grower: grew N"
 *   "say TEXT"  write TEXT and a newline on standard output
 *   "exit N"    exit with status N, freeing nothing
 * So from the first grow on, by live bytes grow_site comes first (40000*n > 16000) and by live
 * blocks hold_many (1000 > 4*n while n < 250); by growth since the last screen, grow_site when
 * it grew in between (hold_many never grows after the start).
 * Its own allocations are only these; no stdio.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "expect.h"

#define HOLD_BLOCKS 1000
#define HOLD_SIZE 16
#define GROW_BLOCKS 4
#define GROW_SIZE 10000
#define MAX_GROWS 200

static void *held[HOLD_BLOCKS];
static void *grown[MAX_GROWS * GROW_BLOCKS];
static unsigned ngrown;

__attribute__((noipa)) void hold_many(void)
{
	for (unsigned i = 0; i < HOLD_BLOCKS; i++)
		held[i] = malloc(HOLD_SIZE); /* site(hold_many) */
}

__attribute__((noipa)) void grow_site(void)
{
	for (unsigned i = 0; i < GROW_BLOCKS && ngrown < MAX_GROWS * GROW_BLOCKS; i++) {
		grown[ngrown] = malloc(GROW_SIZE); /* site(grow_site) */
		memset(grown[ngrown++], 1, GROW_SIZE);
	}
}

static void say(const char *s, size_t n)
{
	if (write(1, s, n) < 0)
		_exit(2);
	if (write(1, "\n", 1) < 0)
		_exit(2);
}

/* "prefix" and a number, as one line. */
static void say_num(const char *prefix, unsigned long v)
{
	char buf[64], digits[24];
	size_t n = strlen(prefix), k = 0;

	memcpy(buf, prefix, n);
	do
		digits[k++] = '0' + v % 10;
	while (v /= 10);
	while (k)
		buf[n++] = digits[--k];
	say(buf, n);
}

int main(int argc, char **argv)
{
	char line[256];
	size_t len = 0;
	unsigned grows = 0;
	int fd;

	if (argc != 2)
		return 2;
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 2;
	hold_many();
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	say_num("grower: ready ", getpid());
	for (;;) {
		ssize_t n = read(fd, line + len, 1);
		char *cmd = line;

		if (n <= 0)
			return 2;
		if (line[len] != '\n' && len < sizeof(line) - 1) {
			len++;
			continue;
		}
		line[len] = '\0';
		len = 0;
		if (!strcmp(cmd, "grow")) {
			grow_site();
			say_num("grower: grew ", ++grows);
		} else if (!strncmp(cmd, "say ", 4)) {
			say(cmd + 4, strlen(cmd + 4));
		} else if (!strncmp(cmd, "exit ", 5)) {
			_exit(atoi(cmd + 5));
		}
	}
}
