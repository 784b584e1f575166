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
#include "trace/session.h"

/*
 * The view, for tracer_opts.live (trace/session.h says what each member does). prepare opens
 * the pseudo-terminal for a launched program; child_setup makes it the child's terminal
 * outputs; end writes the program's held output; finish passes through the last of it.
 */
extern const struct tracer_view live_view;

#endif
