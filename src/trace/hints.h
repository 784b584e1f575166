/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_HINTS_H
#define HEAPTRACE_HINTS_H

/*
 * Hints where users go wrong, each at most once per run, on standard error as
 * "heaptrace: hint: ...": children that ran untraced (-f), a Python program whose pymalloc
 * heaptrace could not trace (PYTHONMALLOC=malloc), node without a perf map (how to name its
 * JavaScript frames, and that V8's heap is not malloc's), a traced process killed by a signal,
 * a set-user-ID program run without its privileges because heaptrace is not root, a final
 * report whose frames mostly have no name (how to get symbols) or whose backtraces --depth cut
 * inside allocator wrappers. All but the set-user-ID one are printed at the end of the run, after
 * the reports.
 */
#include <signal.h>
#include <stdbool.h>

struct proc;

/* A child was made and is not traced (no -f). */
void hints_untraced_child(void);

/* Traced process p was killed by signal sig. */
void hints_killed(const struct proc *p, int sig);

/* p's final report is written: is it a Python program with a pymalloc not traced? */
void hints_python(const struct proc *p);

/* p's final report is written: is it node without a perf map (no names for its JavaScript
 * functions, and the JS heap is not malloc's)? */
void hints_node(struct proc *p);

struct report_info;
struct report_opts;

/* p's final report ri (with options ro) is written: are its frames named, do its backtraces
 * reach past the allocator wrappers? */
void hints_frames(const struct proc *p, const struct report_info *ri,
		  const struct report_opts *ro);

/* The program at path is about to be launched: say now if its set-user-ID or set-group-ID
 * bit will not take effect. */
void hints_launch(const char *path);

/* Print the hints gathered during the run. */
void hints_print(void);

#endif
