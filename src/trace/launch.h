/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_LAUNCH_H
#define HEAPTRACE_LAUNCH_H

/* Start the program of session.opts traced from its first instruction. Return 0 or -errno
 * after printing why (nothing is left running then). */
int launch_program(void);

#endif
