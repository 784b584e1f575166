// SPDX-License-Identifier: GPL-2.0-only
/* Functions whose first bytes may or may not be replaced by a branch (src/patch/entrycheck.c), as a
 * shared library the test reads the symbols of. Never called. */
#if defined(__x86_64__)
__asm__(".text\n"
	/* nothing leads into its first bytes */
	".globl entry_safe\n.type entry_safe,@function\n"
	"entry_safe:\n"
	"	push %rbx\n	mov %rdi,%rax\n	add $1,%rax\n	pop %rbx\n	ret\n"
	".size entry_safe,.-entry_safe\n"
	/* a loop back to its second instruction, at +1 */
	".globl entry_loop\n.type entry_loop,@function\n"
	"entry_loop:\n"
	"	push %rbx\n"
	"1:	mov %rdi,%rax\n	cmp $-1,%rax\n	je 1b\n	pop %rbx\n	ret\n"
	".size entry_loop,.-entry_loop\n"
	/* a jump through a register: it could lead anywhere in the function */
	".globl entry_table\n.type entry_table,@function\n"
	"entry_table:\n"
	"	push %rbx\n	mov %rdi,%rax\n	pop %rbx\n	jmp *%rax\n"
	".size entry_table,.-entry_table\n"
	/* its address + 2 taken RIP-relative, as a pointer to code inside its first bytes */
	".globl entry_pointer\n.type entry_pointer,@function\n"
	"entry_pointer:\n"
	".Lentry_pointer:\n"
	"	push %rbx\n	lea .Lentry_pointer+2(%rip),%rax\n	pop %rbx\n	ret\n"
	".size entry_pointer,.-entry_pointer\n");
#endif

int fixture_entry_marker(void)
{
	return 7;
}
