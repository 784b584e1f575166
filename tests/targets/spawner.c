// SPDX-License-Identifier: GPL-2.0-only
/*
 * spawner: a main thread that starts and joins workers one after another, for heaptrace -p while
 * it does (so an attach or a detach often finds it stopped inside clone).
 * usage: spawner   (writes "ready\n", spawns until its standard input ends, then writes
 *                   "spawned N\n" and exits 0)
 * Each worker gets a block the main thread allocated (a magic word and its number), checks it,
 * clears the magic and frees it, and allocates and frees a block of its own. A clone run twice
 * starts two workers with one block: the second finds the magic cleared (exit 3) or glibc
 * aborts on the double free. No stdio.
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC 0x5350574eu /* "SPWN" */

struct start {
	uint32_t magic;
	unsigned long n;
};

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		exit(2);
}

static void *worker(void *arg)
{
	struct start *st = arg;
	volatile char *own;

	if (st->magic != MAGIC) {
		say("a worker's start block was used twice\n");
		_exit(3);
	}
	st->magic = 0;
	own = malloc(40 + st->n % 64);
	if (!own)
		_exit(2);
	own[0] = 1;
	free((void *)own);
	free(st);
	return NULL;
}

/* Whether standard input has ended (or has data: any byte ends the run too). */
static int input_ended(void)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

int main(void)
{
	unsigned long n = 0;
	char line[64];

	say("ready\n");
	while (!input_ended()) {
		struct start *st = malloc(sizeof(*st));
		pthread_t t;

		if (!st)
			return 2;
		st->magic = MAGIC;
		st->n = ++n;
		if (pthread_create(&t, NULL, worker, st) || pthread_join(t, NULL))
			return 2;
	}
	snprintf(line, sizeof(line), "spawned %lu\n", n);
	say(line);
	return 0;
}
