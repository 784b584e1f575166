/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_LIFECYCLE_H
#define HEAPTRACE_LIFECYCLE_H

/*
 * A traced process's life beyond the registry (target/process.h): made with its breakpoint
 * set and guard state, copied at a fork, its image forgotten at an exec, and freed with what
 * every subsystem keeps of it (entry stubs, unwinder, stack scan, symbols, heap inventory,
 * the log).
 */
#include <stdbool.h>
#include <sys/types.h>

struct proc;
struct thread;

/* A new traced process pid, with an empty breakpoint set and no guard. */
struct proc *lifecycle_new(pid_t pid);

/*
 * A new process pid made by a fork of pp (its memory a copy: the same breakpoints, modules and
 * ring position), or by vfork or a clone that may share pp's memory (shares_mm). counting:
 * its allocations are traced (-f), starting from a copy of pp's table.
 */
struct proc *lifecycle_fork(const struct proc *pp, pid_t pid, bool shares_mm, bool counting);

/* Forget the modules, breakpoints and unwinder of p's image (it was replaced by execve). */
void lifecycle_forget_image(struct proc *p);

/* Free thread t: the entry stubs' records of it, then the thread itself. */
void lifecycle_thread_free(struct thread *t);

/* Free p and its threads (it must not be traced any more). */
void lifecycle_free(struct proc *p);

#endif
