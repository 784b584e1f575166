// SPDX-License-Identifier: GPL-2.0-only
/*
 * suid: a leaking program meant to run set-user-ID (the tests copy it, chown it to another user
 * and chmod u+s). It writes a record "ids uid=RUID euid=EUID" with its real and effective user
 * IDs, so a test can tell that the set-user-ID bit took effect, and to make the record file
 * writable for the new effective user the test creates it beforehand. Known to leave live
 * 3 x 91 bytes (suid_leak <- main) and one calloc(2, 45) (suid_calloc <- main), to malloc and
 * free 12 blocks of 30 bytes, and to exit 9. No stdio.
 */
#include <stdlib.h>
#include <unistd.h>

#include "expect.h"

static void *volatile kept[4];

__attribute__((noipa)) void suid_leak(unsigned i)
{
	kept[i] = malloc(91); /* site(suid_leak) */
	expect_alloc(91);
}

__attribute__((noipa)) void suid_calloc(void)
{
	kept[3] = calloc(2, 45); /* site(suid_calloc) */
	expect_alloc(90);
}

int main(void)
{
	struct expect_buf b = { .n = 0 };
	unsigned i;

	for (i = 0; i < 3; i++)
		suid_leak(i);
	for (i = 0; i < 12; i++) {
		void *p = malloc(30);

		keep(p);
		free(p);
		expect_alloc(30);
		expect_free(30);
	}
	suid_calloc();
	expect_str(&b, "ids");
	expect_kv(&b, "uid", (unsigned long)getuid());
	expect_kv(&b, "euid", (unsigned long)geteuid());
	expect_flush(&b);
	expect_site("malloc", 3, 273, "suid_leak,main");
	expect_site("calloc", 1, 90, "suid_calloc,main");
	expect_summary(&expect_tracked);
	expect_exit(9);
	return 9;
}
