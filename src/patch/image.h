/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_IMAGE_H
#define HEAPTRACE_IMAGE_H

/* Modules, hooked functions and the scratch page of a process image. */
#include <stdbool.h>
#include <stdint.h>

#include "target/process.h"

/* How images are traced, the same for every process of the run (image_init). */
struct image_opts {
	bool stubs; /* entry stubs where safe (stubs.h), else a breakpoint per hook */
	unsigned stack_copy; /* bytes of stack an entry stub copies per allocation, 0: learned */
	unsigned max_stall_ms; /* longest wait of a stub for room (stubs_setup) */
};

/* Once before tracing. */
void image_init(const struct image_opts *o);

/* What each traced allocator is, for the report and -v ("glibc", "musl", "jemalloc",
 * "libstdc++ operators", "pool_alloc (--alloc)", "mmap (--mmap)", ...): at most max names,
 * valid until the next call. Return how many. */
#define IMAGE_MAX_ALLOCATORS 16
unsigned image_allocators(struct proc *p, const char **out, unsigned max);

/*
 * True if hook h's function in p takes every argument in registers, so that its return may be
 * caught by a trampoline that moves sp (calls.c, stubs.h) without shifting an argument it
 * reads on the stack: the malloc family's as hook_args_in_regs says; a custom function's only
 * if its debug information says so (its arity is not in its symbol).
 */
bool image_regs_only(const struct proc *p, int h);

/* Read the mappings again (libraries were loaded or unloaded). */
void image_scan(struct proc *p);

/* Place the entry breakpoints once a module defines malloc. Return 0, 1 if none does yet,
 * or -errno after printing why. */
int image_arm_hooks(struct proc *p, pid_t tid);

/*
 * Map the scratch page and place the breakpoints of a fresh image. Thread t is stopped at a
 * clean point: the first instruction (near: its address) or an attach stop (attached).
 * No system call is injected that t's seccomp state could refuse (seccomp.h): then, after
 * one line saying so, an attach gives up (-EPERM) and a fresh image is left untraced.
 * Return 0, -EXDEV for a program to be left untraced (another architecture, or seccomp; not
 * when attached), or -errno after printing why (one line).
 */
int image_setup(struct proc *p, struct thread *t, uint64_t near, bool attached);

#endif
