// SPDX-License-Identifier: GPL-2.0-only
/*
 * The single-thread floor: the least a ptrace breakpoint tracer can do per hit. Launch
 * PROGRAM (the churn workload with --stop), wait for its handshake SIGSTOP, put one int3 on
 * malloc's entry in its libc, and on every hit only get past it: by default write back the
 * original byte, PTRACE_SINGLESTEP, re-insert (2 stops per hit); with --emulate, carry out
 * malloc's first instruction in the registers instead, which must be x86_64 glibc's
 * "41 54 push %r12": store r12 at rsp-8, rsp -= 8, rip past it (1 stop per hit). Correct for
 * a single-threaded target only. Print the hits on standard output as "hits N".
 *
 *	floor [--emulate] PROGRAM [ARG...]
 *
 * malloc's address in the target is its offset in our own libc (the target's is the same
 * file) plus the target's libc base, both read from /proc/PID/maps.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Base address of the mapping of file PATH at offset 0 in process PID (0: self); 0 if none. */
static uintptr_t map_base(pid_t pid, const char *path)
{
	char name[64], line[PATH_MAX + 128], file[PATH_MAX];
	uintptr_t start, base = 0;
	unsigned long long off;
	FILE *f;

	snprintf(name, sizeof(name), pid ? "/proc/%d/maps" : "/proc/self/maps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		die(name);
	while (!base && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNxPTR "-%*x %*s %llx %*s %*u %4095s", &start, &off, file) == 3 &&
		    off == 0 && !strcmp(file, path))
			base = start;
	fclose(f);
	return base;
}

static int wait_stop(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	return status;
}

int main(int argc, char **argv)
{
	char libc[PATH_MAX];
	void *self_malloc = dlsym(RTLD_DEFAULT, "malloc");
	Dl_info info;
	uintptr_t addr;
	long orig, hits = 0;
	int status, emulate = argc > 1 && !strcmp(argv[1], "--emulate");
	pid_t pid;

	argv += emulate;
	argc -= emulate;
	if (argc < 2) {
		fprintf(stderr, "usage: floor [--emulate] PROGRAM [ARG...]\n");
		return 2;
	}
	if (!self_malloc || !dladdr(self_malloc, &info) || !realpath(info.dli_fname, libc)) {
		fprintf(stderr, "floor: cannot find malloc's library\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	status = wait_stop(pid); /* SIGTRAP after execve */
	if (!WIFSTOPPED(status))
		return 2;
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
	ptrace(PTRACE_CONT, pid, 0, 0);
	status = wait_stop(pid); /* the workload's raise(SIGSTOP): libc is mapped */
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP) {
		fprintf(stderr, "floor: %s did not stop itself (run it with --stop)\n", argv[1]);
		return 2;
	}
	addr = map_base(pid, libc);
	if (!addr) {
		fprintf(stderr, "floor: %s not mapped in pid %d\n", libc, (int)pid);
		return 2;
	}
	addr += (uintptr_t)self_malloc - map_base(0, libc);

	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, pid, addr, 0);
	if (errno)
		die("ptrace(PEEKTEXT)");
	if (emulate && (orig & 0xffff) != 0x5441) {
		fprintf(stderr, "floor: malloc does not begin with push %%r12 (41 54)\n");
		return 2;
	}
	if (ptrace(PTRACE_POKETEXT, pid, addr, (orig & ~0xffL) | 0xcc))
		die("ptrace(POKETEXT)");
	ptrace(PTRACE_CONT, pid, 0, 0);

	for (;;) {
		struct user_regs_struct regs;
		int sig = 0;

		status = wait_stop(pid);
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (WSTOPSIG(status) == SIGTRAP && !ptrace(PTRACE_GETREGS, pid, 0, &regs) &&
		    regs.rip - 1 == addr) {
			hits++;
			if (emulate) { /* push %r12 */
				regs.rsp -= 8;
				regs.rip = addr + 2;
				if (ptrace(PTRACE_POKEDATA, pid, regs.rsp, regs.r12) ||
				    ptrace(PTRACE_SETREGS, pid, 0, &regs))
					die("ptrace(POKEDATA/SETREGS)");
				ptrace(PTRACE_CONT, pid, 0, 0);
				continue;
			}
			regs.rip = addr; /* x86_64 reports the pc one byte past int3 */
			ptrace(PTRACE_SETREGS, pid, 0, &regs);
			ptrace(PTRACE_POKETEXT, pid, addr, orig);
			ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
			status = wait_stop(pid);
			if (!WIFSTOPPED(status))
				break;
			ptrace(PTRACE_POKETEXT, pid, addr, (orig & ~0xffL) | 0xcc);
		} else {
			sig = WSTOPSIG(status); /* not ours: deliver it */
		}
		ptrace(PTRACE_CONT, pid, 0, sig);
	}
	printf("hits %ld\n", hits);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
