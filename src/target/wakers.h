/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_WAKERS_H
#define HEAPTRACE_WAKERS_H

/*
 * The pids of the children events.c starts to end a waitpid of the main thread (the wakers),
 * so that the main thread takes their exits for what they are and not for a tracee's. The
 * child itself is started by a function passed in: the unit tests play the kernel's part.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#define WAKERS_MAX 64u

struct wakers {
	atomic_int pid[WAKERS_MAX]; /* started, not reaped yet; 0: a free slot */
};

/*
 * Start a child that exits at once, having the kernel store its pid at *slot before it runs
 * (clone's CLONE_PARENT_SETTID). Return its pid or -errno.
 */
typedef pid_t (*wakers_start_fn)(atomic_int *slot, void *arg);

/*
 * Start one waker with start(slot, arg) in a free slot. Called by one thread only. Return the
 * child's pid, 0 when every slot holds a waker not reaped yet (the main thread has enough
 * wake-ups to take), or -errno.
 */
pid_t wakers_start(struct wakers *w, wakers_start_fn start, void *arg);

/* True, once, if pid is a waker's: the caller reaped it, and its slot is free again. */
bool wakers_reaped(struct wakers *w, pid_t pid);

#endif
