/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_GUARD_SIGACTION_H
#define HEAPTRACE_GUARD_SIGACTION_H

/*
 * The sigaction facts of the guard (src/patch/guard.h) that several architectures share, for
 * their guard_arch.h: the kernel's generic action flags and 64-signal sigset_t
 * (asm-generic/signal-defs.h; x86_64, aarch64 and arm, not mips), and, where a guard_arch.h
 * defines GUARD_SIGACTION_LP64 first (x86_64, aarch64), the 64-bit kernel's struct sigaction
 * with its restorer field and the C library's struct sigaction.
 */
#include <stdint.h>

#define GUARD_SA_SIGINFO 0x4ULL
#define GUARD_SA_RESTORER 0x04000000ULL
#define GUARD_SA_ONSTACK 0x08000000ULL
#define GUARD_SA_RESTART 0x10000000ULL
#define GUARD_SA_NODEFER 0x40000000ULL
#define GUARD_SA_RESETHAND 0x80000000ULL
#define GUARD_SIGSET_SIZE 8 /* the kernel's sigset_t */

#ifdef GUARD_SIGACTION_LP64
/* The kernel's struct sigaction for rt_sigaction. */
struct guard_ksigaction {
	uint64_t handler, flags, restorer, mask;
};

/* The C library's struct sigaction (glibc and musl): handler, 128-byte mask, int flags,
 * restorer. */
#define GUARD_USA_HANDLER 0
#define GUARD_USA_PTR 8 /* the handler's and the restorer's size */
#define GUARD_USA_MASK 8
#define GUARD_USA_FLAGS 136
#define GUARD_USA_SIZE 152
#endif

#endif
