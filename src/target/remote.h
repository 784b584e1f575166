/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_REMOTE_H
#define HEAPTRACE_REMOTE_H

/* Tracee memory and injected system calls. The thread must be in a ptrace-stop. */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read len bytes at addr: process_vm_readv, falling back to PTRACE_PEEKDATA.
 * Return the number of bytes read (short at an unmapped page) or -errno. */
ssize_t remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Read n pieces of each bytes, piece i at addrs[i] into buf + i * each, with one
 * process_vm_readv (n at most REMOTE_READV_MAX). Return how many pieces, from the first, were
 * read whole: the rest are left to remote_read, which can read what this cannot. */
#define REMOTE_READV_MAX 128
unsigned remote_readv(pid_t pid, const uint64_t *addrs, unsigned n, void *buf, size_t each);

/* Write len bytes at addr with PTRACE_POKEDATA (works on read-only code pages).
 * Return 0 or -errno. */
int remote_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* Write len bytes at addr of writable memory (a stack) with one process_vm_writev,
 * falling back to remote_write. Return 0 or -errno. */
int remote_write_data(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* Read one pointer-sized word (word_size bytes) at addr. Return 0 or -errno. */
int remote_read_word(pid_t pid, uint64_t addr, unsigned word_size, uint64_t *val);
int remote_write_word(pid_t pid, uint64_t addr, unsigned word_size, uint64_t val);

/* The bytes of the string at addr, of units of unit bytes (1 or 2), with its terminating zero
 * unit, in *size. Return 0 or -errno (the string runs into unreadable memory). */
int remote_string_size(pid_t pid, uint64_t addr, unsigned unit, uint64_t *size);

/*
 * Run one system call in stopped thread tid by pointing it at a syscall instruction at
 * insn_addr, then put its registers back. A signal that arrives meanwhile is returned in
 * *pending_sig (0 if none) for the caller to deliver. Return the call's result (a value or
 * -errno from the tracee), or a negative errno from ptrace in *err (0 on success).
 */
int64_t remote_syscall(pid_t tid, uint64_t insn_addr, long nr, const uint64_t args[6],
		       int *pending_sig, int *err);

/* The same through a restoring stub at stub (arch_ops.stub_code, placed in the process):
 * should heaptrace die during the call, the thread still goes back to where it was, with its
 * registers and signal mask. */
int64_t remote_syscall_stub(pid_t tid, uint64_t stub, long nr, const uint64_t args[6],
			    int *pending_sig, int *err);

#endif
