// SPDX-License-Identifier: GPL-2.0-only
/* Tracee memory: process_vm_readv first (one syscall for a whole range), ptrace as fallback. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define PR_DOMAIN "remote"
#include "arch/arch.h"
#include "target/events.h"
#include "util/log.h"
#include "target/remote.h"

static ssize_t peek_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;
	uint64_t base = addr & ~(uint64_t)(sizeof(long) - 1);

	while (done < len) {
		uint64_t at = base + ((addr + done - base) & ~(uint64_t)(sizeof(long) - 1));
		size_t skip = addr + done - at, n;
		long word;

		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, pid, (void *)(uintptr_t)at, NULL);
		if (errno)
			return done ? (ssize_t)done : -errno;
		n = sizeof(long) - skip;
		if (n > len - done)
			n = len - done;
		memcpy((char *)buf + done, (char *)&word + skip, n);
		done += n;
	}
	return done;
}

ssize_t remote_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n >= 0)
		return n;
	if (errno == ESRCH)
		return -ESRCH;
	/* EFAULT on a partially mapped range, EPERM/ENOSYS on odd kernels: go word by word */
	return peek_read(pid, addr, buf, len);
}

int remote_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	const size_t w = sizeof(long);
	size_t done = 0;

	while (done < len) {
		uint64_t at = (addr + done) & ~(uint64_t)(w - 1);
		size_t skip = addr + done - at, n = w - skip;
		long word;

		if (n > len - done)
			n = len - done;
		if (n != w) {
			errno = 0;
			word = ptrace(PTRACE_PEEKDATA, pid, (void *)(uintptr_t)at, NULL);
			if (errno)
				return -errno;
		}
		memcpy((char *)&word + skip, (const char *)buf + done, n);
		if (ptrace(PTRACE_POKEDATA, pid, (void *)(uintptr_t)at, (void *)word) < 0)
			return -errno;
		done += n;
	}
	return 0;
}

int remote_write_data(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	return remote_write(pid, addr, buf, len);
}

unsigned remote_readv(pid_t pid, const uint64_t *addrs, unsigned n, void *buf, size_t each)
{
	struct iovec local[REMOTE_READV_MAX], remote[REMOTE_READV_MAX];
	ssize_t got;

	if (n > REMOTE_READV_MAX)
		n = REMOTE_READV_MAX;
	for (unsigned i = 0; i < n; i++) {
		local[i] = (struct iovec){ (uint8_t *)buf + i * each, each };
		remote[i] = (struct iovec){ (void *)(uintptr_t)addrs[i], each };
	}
	/* a transfer stops within the first piece it cannot read whole: not counted */
	got = n ? process_vm_readv(pid, local, n, remote, n, 0) : 0;
	return got > 0 ? (unsigned)((size_t)got / each) : 0;
}

int remote_read_word(pid_t pid, uint64_t addr, unsigned word_size, uint64_t *val)
{
	uint32_t v32;
	ssize_t n;

	if (word_size == 8) {
		n = remote_read(pid, addr, val, 8);
		return n == 8 ? 0 : n < 0 ? (int)n : -EFAULT;
	}
	n = remote_read(pid, addr, &v32, 4);
	*val = v32;
	return n == 4 ? 0 : n < 0 ? (int)n : -EFAULT;
}

int remote_string_size(pid_t pid, uint64_t addr, unsigned unit, uint64_t *size)
{
	uint8_t buf[512];
	uint64_t at = addr;

	for (;;) {
		/* up to the page's end: the next page may be unmapped */
		size_t len = 4096 - (at & 4095);
		ssize_t n;

		n = remote_read(pid, at, buf, len < sizeof(buf) ? len : sizeof(buf));
		if (n < (ssize_t)unit)
			return n < 0 ? (int)n : -EFAULT;
		/* units are aligned from addr: a unit split by the chunk's end is read again */
		n -= n % unit;
		for (ssize_t i = 0; i < n; i += unit) {
			if (buf[i] == 0 && (unit == 1 || buf[i + 1] == 0)) {
				*size = at + i + unit - addr;
				return 0;
			}
		}
		at += n;
	}
}

int remote_write_word(pid_t pid, uint64_t addr, unsigned word_size, uint64_t val)
{
	uint32_t v32 = (uint32_t)val;

	return word_size == 8 ? remote_write(pid, addr, &val, 8) : remote_write(pid, addr, &v32, 4);
}

/* Resume with PTRACE_SYSCALL until the next syscall stop of tid. Every blockable signal is
 * blocked meanwhile (see remote_syscall); a SIGSTOP still comes, stashed in *pending_sig. */
static int to_syscall_stop(pid_t tid, int *pending_sig)
{
	int status;
	pid_t got;

	for (;;) {
		if (ptrace(PTRACE_SYSCALL, tid, 0, 0) < 0)
			return -errno;
		got = events_wait_tid(tid, &status);
		if (got < 0)
			return got;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) == (SIGTRAP | 0x80))
			return 0;
		if (status >> 16)
			continue; /* an event stop (e.g. PTRACE_EVENT_STOP): nothing to deliver */
		*pending_sig = WSTOPSIG(status); /* delivered after the call */
	}
}

/*
 * HEAPTRACE_TEST_DIE_INJECTING=N: heaptrace kills itself with SIGKILL in the N-th injected
 * call, the thread in the middle of it (at its syscall-entry stop). For the tests only.
 */
static void test_death(void)
{
	static long left = -1;

	if (left < 0) {
		const char *s = getenv("HEAPTRACE_TEST_DIE_INJECTING");

		left = s ? atol(s) : 0;
	}
	if (left > 0 && --left == 0)
		raise(SIGKILL);
}

/* remote_syscall and remote_syscall_stub: stub is true when insn_addr is a restoring stub. */
static int64_t inject(pid_t tid, uint64_t insn_addr, bool stub, long nr, const uint64_t args[6],
		      int *pending_sig, int *err)
{
	struct arch_regs saved, back, regs;
	uint64_t mask, all = ~0ULL;
	bool masked;
	int ret;

	*pending_sig = 0;
	*err = arch_get_regs(tid, &saved);
	if (*err)
		return -1;
	/* where the thread goes back to: a system call it was in is made again */
	back = saved;
	arch->syscall_restart(&back);
	/*
	 * Signals that arrive during the call stay pending in the kernel, with their siginfo,
	 * and reach the program after it as if nothing had happened: a signal taken by heaptrace
	 * here could only be given back later with a siginfo made up by the kernel.
	 */
	masked = !ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(mask), &mask);
	if (stub) {
		uint8_t data[ARCH_STUB_MAX];

		if (!masked)
			return *err = -EIO, -1;
		arch->stub_data(data, &back, mask);
		*err = remote_write(tid, insn_addr + arch->stub_data_off, data,
				    arch->stub_size - arch->stub_data_off);
		if (*err)
			return -1;
	}
	masked = masked && !ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(all), &all);
	regs = saved;
	arch->syscall_setup(&regs, insn_addr, nr, args);
	ret = arch_set_regs(tid, &regs);
	if (!ret)
		ret = to_syscall_stop(tid, pending_sig); /* entry */
	if (!ret)
		test_death(); /* the tests' way to kill heaptrace at its worst moment */
	if (!ret)
		ret = to_syscall_stop(tid, pending_sig); /* exit */
	if (!ret)
		ret = arch_get_regs(tid, &regs);
	if (ret != -ESRCH) {
		arch_set_regs(tid, &back);
		if (masked)
			ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask);
	}
	*err = ret;
	pr_dbg(1, "injected syscall %ld in %d: %lld", nr, tid,
	       ret ? 0LL : (long long)arch->syscall_result(&regs));
	return ret ? -1 : arch->syscall_result(&regs);
}

int64_t remote_syscall(pid_t tid, uint64_t insn_addr, long nr, const uint64_t args[6],
		       int *pending_sig, int *err)
{
	return inject(tid, insn_addr, false, nr, args, pending_sig, err);
}

int64_t remote_syscall_stub(pid_t tid, uint64_t stub, long nr, const uint64_t args[6],
			    int *pending_sig, int *err)
{
	return inject(tid, stub, true, nr, args, pending_sig, err);
}
