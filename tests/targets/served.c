// SPDX-License-Identifier: GPL-2.0-only
/*
 * served: a heap that changes on command, for the --serve tests. One command a line on standard
 * input, answered "ok\n" on standard output once done (no stdio: nothing allocates but the
 * sites below). Blocks are kept until freed by a command.
 *   a N   site_a: N blocks of 1000 bytes (malloc)
 *   b N   site_b: N blocks of 4096 bytes (calloc(1, 4096))
 *   c N   site_c: N blocks of 65536 bytes (malloc)
 *   f     free every block of site_a
 *   q     exit 0
 * Any process may trace it (PR_SET_PTRACER_ANY), for the tests that attach with -p.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define KEEP 8192

/* volatile: stores the compiler cannot drop, so no allocation is optimised away */
static void *volatile kept_a[KEEP], *volatile kept_b[KEEP], *volatile kept_c[KEEP];
static unsigned na, nb, nc;

__attribute__((noipa)) void site_a(unsigned n)
{
	for (unsigned i = 0; i < n && na < KEEP; i++)
		kept_a[na++] = malloc(1000);
}

__attribute__((noipa)) void site_b(unsigned n)
{
	for (unsigned i = 0; i < n && nb < KEEP; i++)
		kept_b[nb++] = calloc(1, 4096);
}

__attribute__((noipa)) void site_c(unsigned n)
{
	for (unsigned i = 0; i < n && nc < KEEP; i++)
		kept_c[nc++] = malloc(65536);
}

__attribute__((noipa)) void free_a(void)
{
	while (na)
		free(kept_a[--na]);
}

/* One line of standard input into buf (without its newline); false at its end. */
static int read_line(char *buf, size_t len)
{
	size_t n = 0;
	char c;

	for (;;) {
		ssize_t r = read(0, &c, 1);

		if (r <= 0)
			return 0;
		if (c == '\n')
			break;
		if (n + 1 < len)
			buf[n++] = c;
	}
	buf[n] = '\0';
	return 1;
}

int main(void)
{
	char line[64];

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	while (read_line(line, sizeof(line))) {
		unsigned n = (unsigned)strtoul(line + 1, NULL, 10);

		if (line[0] == 'a')
			site_a(n);
		else if (line[0] == 'b')
			site_b(n);
		else if (line[0] == 'c')
			site_c(n);
		else if (line[0] == 'f')
			free_a();
		else if (line[0] == 'q')
			return 0;
		if (write(1, "ok\n", 3) != 3)
			return 98;
	}
	return 0;
}
