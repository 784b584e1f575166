// SPDX-License-Identifier: GPL-2.0-only
/*
 * dlopener: a module that appears after heaptrace's first report, and allocates. For the test
 * that a report names the frames of a library loaded after the previous report (heaptrace keeps
 * its symbolizer from one report to the next and must learn of the new module).
 * usage: dlopener    (traced with --interval and --format=json: $HEAPTRACE_OUTFILE)
 *   leak 1 x 100 (first_leak <- main); wait for report 1; dlopen zlib (libz.so.1) and keep the
 *   gzFile of gzdopen("/dev/null", "wb") open: zlib's state is malloc'd under gzdopen; exit 0.
 * Status 99: a checkpoint never came (60 s); 98: zlib could not be loaded or opened.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "expect.h"
#include "handshake.h"

static void *volatile kept[2];

__attribute__((noipa)) void first_leak(void)
{
	kept[0] = malloc(100); /* site(first_leak) */
}

int main(void)
{
	void *(*gzdopen)(int fd, const char *mode);
	void *z;
	int fd;

	first_leak();
	handshake_wait_reports(1);
	z = dlopen("libz.so.1", RTLD_NOW);
	gzdopen = z ? (void *(*)(int, const char *))dlsym(z, "gzdopen") : NULL;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (!gzdopen || fd < 0 || !(kept[1] = gzdopen(fd, "wb")))
		return 98;
	expect_site("malloc", 1, 100, "first_leak,main");
	return 0;
}
