// SPDX-License-Identifier: GPL-2.0-only
/*
 * ownmalloc: the program defines malloc and calloc itself (in assembly, x86_64), wrappers of
 * the C library's, far from the C library. malloc's first bytes are the target of a branch
 * inside it (a loop back to its second instruction, taken only for a size nobody asks): an
 * entry stub cannot replace them, heaptrace keeps a breakpoint there and counts as usual.
 * calloc's can be replaced: its stub lives in a page near the executable. Known to leave live at exit
 * 5 x 48 bytes (malloc <- keep_some <- main) and 3 x 24 bytes (calloc <- main); it mallocs and
 * frees 40 blocks of 16 bytes besides. No stdio. Elsewhere (no assembly): plain malloc.
 */
#include <stdlib.h>

#include "expect.h"

#if defined(__x86_64__)
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);

/* calloc: push %rbx; push %r12; mov %rdi,%rbx; ...; call __libc_calloc; ...; ret */
__asm__(".text\n.globl calloc\n.type calloc,@function\ncalloc:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	push %r12\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	mov %rdi,%rbx\n"
	"	sub $8,%rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call __libc_calloc@PLT\n"
	"	add $8,%rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	pop %r12\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	pop %rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size calloc,.-calloc\n");

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
