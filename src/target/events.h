/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_EVENTS_H
#define HEAPTRACE_EVENTS_H

/*
 * The one place heaptrace waits. Its own signals are blocked all the time and taken
 * synchronously (sigtimedwait), together with SIGCHLD, which the kernel sends to a tracer at
 * every ptrace stop of its tracees: no handler ever runs, so no system call of heaptrace is
 * ever interrupted, and no signal is lost between a check and a wait.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Not a signal: the deadline timer of events_next fired. */
#define EVENTS_DEADLINE 0x10000

/* What the next call of events_next found. */
struct event {
	pid_t tid; /* > 0: a tracee changed state; status holds waitpid's status */
	int status;
	int sig; /* > 0: one of heaptrace's own signals arrived */
};

/* Block heaptrace's signals; keep the mask and dispositions heaptrace was started with. */
void events_init(void);

/* In a child about to exec the program: the signal mask and dispositions heaptrace was given,
 * so the program starts as it would without heaptrace. Async-signal-safe. */
void events_child_setup(void);

/*
 * Wait for a tracee event or one of heaptrace's signals, until deadline_ns (now_ns() time; 0:
 * no deadline). poll: spin on waitpid(WNOHANG) for a short while first (see events.c).
 * Return 1 with *ev filled, 0 at the deadline, or -errno (ECHILD: nothing left to wait for).
 */
int events_next(struct event *ev, uint64_t deadline_ns, bool poll);

/* The same without waiting: return 1 with *ev filled, 0 when nothing is there, or -errno. */
int events_poll(struct event *ev);

/* Sleep until a tracee event or one of heaptrace's signals is there, at most timeout_ns. */
void events_sleep(uint64_t timeout_ns);

/*
 * fn is called for every tracee stop events_next and events_poll find, before the stop is
 * taken from the kernel (waitid's WNOWAIT, then waitpid): while fn runs, the stop's signal is
 * still the kernel's to deliver should heaptrace die. status: waitpid's form. NULL: none.
 */
typedef void (*events_stop_fn)(pid_t tid, int status);
void events_on_stop(events_stop_fn fn);

/* waitpid for one thread (-1: any), restarted when interrupted; an event events_next or
 * events_poll already took from the kernel comes first. Return its tid or -errno. */
pid_t events_wait_tid(pid_t tid, int *status);

/* True for a signal that ends tracing (the clean detach); false for SIGUSR1/SIGUSR2 (reports)
 * and for the ones heaptrace ignores (terminal stops, window changes). */
bool events_sig_ends(int sig);

#endif
