// SPDX-License-Identifier: GPL-2.0-only
/*
 * stopfloor: the least a ptrace breakpoint tracer pays per hit, on each of heaptrace's
 * architectures (floor.c is x86_64's, on malloc itself). A child executes the architecture's
 * breakpoint instruction N times in a loop, the ones heaptrace plants (int3; brk #0; udf #1 in
 * Thumb, udf #16 in ARM state; break); the parent, its tracer, takes each SIGTRAP stop, reads
 * the registers, moves the pc past the breakpoint, writes them back and continues. One stop per
 * hit, no memory read or written. For make bench-cross (tests/xarch/xarch.py --bench), which
 * times it at 1 and at N hits in the guest.
 *
 *	stopfloor N
 *
 * Prints "hits N"; exit status 0, or 2 when a ptrace call fails or the child ends otherwise.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* The breakpoint, its length, and the pc's word in the registers ptrace reads (pc_word of a
 * regs array of word_t): NT_PRSTATUS, or PTRACE_GETREGS on mips64 (struct pt_regs). */
#if defined(__x86_64__)
#define TRAP() __asm__ volatile("int3")
#define TRAP_LEN 0 /* the kernel reports the pc past int3 already */
#define PC_WORD 16 /* user_regs_struct.rip */
typedef uint64_t word_t;
#elif defined(__aarch64__)
#define TRAP() __asm__ volatile("brk #0")
#define TRAP_LEN 4
#define PC_WORD 32 /* user_pt_regs.pc */
typedef uint64_t word_t;
#elif defined(__arm__) && defined(__thumb__)
#define TRAP() __asm__ volatile(".inst.n 0xde01")
#define TRAP_LEN 2
#define PC_WORD 15 /* pt_regs.ARM_pc */
typedef uint32_t word_t;
#elif defined(__arm__)
#define TRAP() __asm__ volatile(".inst 0xe7f001f0")
#define TRAP_LEN 4
#define PC_WORD 15
typedef uint32_t word_t;
#elif defined(__mips__) && __mips == 64
#define TRAP() __asm__ volatile("break")
#define TRAP_LEN 4
#define PC_WORD 34 /* pt_regs.cp0_epc */
#define USE_GETREGS 1
typedef uint64_t word_t;
#else
#error "stopfloor: no breakpoint for this architecture"
#endif

static int fail(const char *what)
{
	fprintf(stderr, "stopfloor: %s: %s\n", what, strerror(errno));
	return 2;
}

/* Move the stopped child's pc past the breakpoint. Return 0 or -1 (errno set). */
static int step_past(pid_t pid)
{
	word_t regs[64];
#ifdef USE_GETREGS
	if (ptrace(PTRACE_GETREGS, pid, 0, regs) < 0)
		return -1;
	regs[PC_WORD] += TRAP_LEN;
	return ptrace(PTRACE_SETREGS, pid, 0, regs) < 0 ? -1 : 0;
#else
	struct iovec iov = { regs, sizeof(regs) };

	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov) < 0)
		return -1;
	regs[PC_WORD] += TRAP_LEN;
	return ptrace(PTRACE_SETREGSET, pid, (void *)NT_PRSTATUS, &iov) < 0 ? -1 : 0;
#endif
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, hits = 0;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return fail("fork");
	if (!pid) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
			_exit(3);
		raise(SIGSTOP);
		for (unsigned long i = 0; i < n; i++)
			TRAP();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
		return fail("waitpid (the child's SIGSTOP)");
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
	if (ptrace(PTRACE_CONT, pid, 0, 0) < 0)
		return fail("ptrace(CONT)");
	for (;;) {
		if (waitpid(pid, &status, 0) < 0)
			return fail("waitpid");
		if (!WIFSTOPPED(status))
			break;
		if (WSTOPSIG(status) != SIGTRAP) {
			errno = EINVAL;
			return fail("a stop other than the breakpoint's");
		}
		hits++;
		if (step_past(pid) || ptrace(PTRACE_CONT, pid, 0, 0) < 0)
			return fail("ptrace (registers or CONT)");
	}
	printf("hits %lu\n", hits);
	return WIFEXITED(status) && !WEXITSTATUS(status) && hits == n ? 0 : 2;
}
