// SPDX-License-Identifier: GPL-2.0-only
/*
 * ownmalloc: the program defines malloc itself (in assembly, x86_64), a wrapper of the C
 * library's, whose first bytes are the target of a branch inside it (a loop back to its second
 * instruction, taken only for a size nobody asks). An entry stub cannot replace those bytes:
 * heaptrace keeps a breakpoint there, and counts as usual. Known to leave live at exit
 * 5 x 48 bytes (malloc <- keep_some <- main) and 3 x 24 bytes (calloc <- main); it mallocs and
 * frees 40 blocks of 16 bytes besides. No stdio. Elsewhere (no assembly): plain malloc.
 */
#include <stdlib.h>

#include "expect.h"

#if defined(__x86_64__)
void *__libc_malloc(size_t n);

/* malloc: push %rbx; 1: mov %rdi,%rbx; cmp $-1,%rbx; je 1b; call __libc_malloc; pop; ret */
__asm__(".text\n.globl malloc\n.type malloc,@function\nmalloc:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"1:	mov %rdi,%rbx\n"
	"	cmp $-1,%rbx\n"
	"	je 1b\n"
	"	mov %rbx,%rdi\n"
	"	call __libc_malloc@PLT\n"
	"	pop %rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size malloc,.-malloc\n");
#endif

static void *keep_some(void)
{
	void *p = malloc(48); /* site(malloc) */

	keep(p);
	expect_alloc(48);
	return p;
}

int main(void)
{
	unsigned i;

	for (i = 0; i < 5; i++)
		keep_some(); /* call(keep_some) */
	for (i = 0; i < 3; i++) {
		void *p = calloc(3, 8); /* site(calloc) */

		keep(p);
		expect_alloc(24);
	}
	for (i = 0; i < 40; i++) {
		void *p = malloc(16);

		keep(p);
		expect_alloc(16);
		free(p);
		expect_free(16);
	}
	expect_site("malloc", 5, 5 * 48, "keep_some,main");
	expect_site("calloc", 3, 3 * 24, "main");
	expect_summary(&expect_tracked);
	return 0;
}
