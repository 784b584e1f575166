/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_LOGCMD_H
#define HEAPTRACE_LOGCMD_H

/* The commands that read --record logs: their options, then offline.h does the work. Each
 * returns the exit status; argv[0] is the command's word. */
int logcmd_report(int argc, char **argv);
int logcmd_diff(int argc, char **argv);

#endif
