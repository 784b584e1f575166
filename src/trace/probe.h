/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PROBE_H
#define HEAPTRACE_PROBE_H

/*
 * The look at a process's threads that a reader stuck at a record never written asks for
 * (account/ring.c: ring_probe_wanted): every thread of it stopped, each one's pc and stack
 * searched for a stub's critical section (patch/stubs.h: stubs_thread_critical), then every
 * thread the look stopped let go as it was.
 */

/* A process's reader asks for a look. */
bool probe_wanted(void);
/* Look at a process whose reader asks for it. */
void probe_stuck_rings(void);

#endif
