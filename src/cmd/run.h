/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_RUN_H
#define HEAPTRACE_RUN_H

/* heaptrace [OPTION...] PROGRAM, -p PID or --core=FILE: parse, check, trace and report.
 * Return the exit status (main.c documents them). */
int run_trace(int argc, char **argv);

#endif
