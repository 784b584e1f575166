/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_DISPATCH_H
#define HEAPTRACE_DISPATCH_H

/* What heaptrace does at each stop of a tracee: breakpoints, new children, exec, exits. */
#include <sys/types.h>

#include "target/process.h"

/* A stop of tid seen before it is taken (events_on_stop): a breakpoint's thread gets its pc
 * moved back onto the trap while heaptrace holds it (see dispatch.c). */
void dispatch_stop_seen(pid_t tid, int status);

/* Handle waitpid's status for tid and resume it (or keep it stopped while detaching). */
void dispatch(pid_t tid, int status);

/* t is in a group-stop: let it stay stopped, reporting events (PTRACE_LISTEN). */
void dispatch_listen(struct thread *t);

/* Resume t, delivering sig (0: none); while detaching keep it stopped with sig noted. */
void dispatch_resume(struct thread *t, int sig);

/* If t is stopped at an event inside a system call it may leave (not a vfork parent, not after
 * an exec), let it end that call and stop again in a plain stop, where heaptrace can inject
 * calls through it (see dispatch.c). Return whether it was let go for that. */
bool dispatch_step_out(struct thread *t);

/* pt reported a clone, fork or vfork event: register the new thread or process. */
void dispatch_new_child(struct thread *pt, int event);

/* t ended with waitpid status; a process whose leader ended is reported and freed. */
void dispatch_exit(struct thread *t, int status);

#endif
