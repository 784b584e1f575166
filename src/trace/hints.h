/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_HINTS_H
#define HEAPTRACE_HINTS_H

/*
 * Hints where users go wrong, each at most once per run, on standard error as
 * "heaptrace: hint: ...": children that ran untraced (-f), a Python program whose small objects
 * come from pymalloc (PYTHONMALLOC=malloc), a traced process killed by a signal, a set-user-ID
 * program run without its privileges because heaptrace is not root. The first three are
 * printed at the end of the run, after the reports.
 */
#include <signal.h>
#include <stdbool.h>

struct proc;

/* A child was made and is not traced (no -f). */
void hints_untraced_child(void);

/* Traced process p was killed by signal sig. */
void hints_killed(const struct proc *p, int sig);

/* p's final report is written: is it a Python program with pymalloc? */
void hints_python(const struct proc *p);

/* The program at path is about to be launched: say now if its set-user-ID or set-group-ID
 * bit will not take effect. */
void hints_launch(const char *path);

/* Print the hints gathered during the run. */
void hints_print(void);

#endif
