/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_LIVE_H
#define HEAPTRACE_LIVE_H

/*
 * --live: a view of the traced heap refreshed every --interval, like top. On a terminal
 * (standard output) a full-screen view drawn with ncurses, keys read from the terminal;
 * otherwise, or in a build without ncurses, plain text frames on standard output.
 *
 * A launched program whose standard output or error is heaptrace's terminal writes there through
 * a pseudo-terminal of heaptrace's while the view is up (so it still sees a terminal, and cannot
 * garble the view): its last lines are shown under the view, and when the view closes all of it
 * (the last 1 MiB) is written to the terminal, and what follows is passed through as it comes.
 */
#include <stdbool.h>
#include <stdint.h>

struct tracer_opts;

/* Before launching or attaching: choose the view and, for a launched program, open the
 * pseudo-terminal. Return 0 or -errno (said). */
int live_prepare(const struct tracer_opts *o);

/* In the launched child before exec: its terminal outputs become the pseudo-terminal.
 * Async-signal-safe. */
void live_child_setup(void);

/* Tracing has started (pid: the launched or attached process): show the view. */
void live_begin(int pid);

/*
 * In the tracer's loop, at every turn: refresh when due, take the keys. Lower *until (0: none)
 * to when it must run again. Return true when the user asked to detach (q, Ctrl-C).
 */
bool live_step(uint64_t now, uint64_t *until);

/* Close the view and give the terminal back (the program's held output is written then). */
void live_end(void);

/* The launched program has exited: pass through the last of its output, release everything. */
void live_finish(void);

#endif
