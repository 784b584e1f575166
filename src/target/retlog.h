/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_RETLOG_H
#define HEAPTRACE_RETLOG_H

/*
 * Returns logged by the target itself: a traced call sent through the logging trampoline
 * (arch.h, logtramp_encode) appends { seq, cookie, return value } to a ring in the scratch
 * mapping and goes on without a stop. heaptrace reads the ring at its next stop of that
 * process, before a report and before letting go. Entries are reserved with an atomic
 * counter and written afterwards, so they complete out of order: each is taken when its
 * seq shows it complete, and the tail waits for the oldest.
 */
#include <stdbool.h>
#include <stdint.h>

#define RETLOG_SLOTS 128u /* a power of two */
#define RETLOG_HEAD_OFF 0 /* u32 counter of reserved entries */
#define RETLOG_ENTRIES_OFF 64 /* RETLOG_SLOTS entries of 16 bytes */
#define RETLOG_SIZE (RETLOG_ENTRIES_OFF + 16 * RETLOG_SLOTS)

struct retlog {
	uint64_t ring; /* the ring's address in the process, 0: returns stop at the trampoline */
	uint32_t tail; /* oldest entry not taken yet */
	uint32_t head; /* the counter as last read */
	uint64_t taken[RETLOG_SLOTS / 64]; /* entries at or after tail taken already */
	unsigned inflight; /* calls sent through the trampoline and not accounted yet (calls.c) */
};

/*
 * True if one more call may be sent through the trampoline: every call in flight and every
 * entry the tail still waits for fit in the ring without overwriting one not yet taken.
 */
bool retlog_room(const struct retlog *r);

/* Take every complete entry of a copy of the ring (RETLOG_SIZE bytes), in the order they
 * were reserved, calling fn for each. */
void retlog_take(struct retlog *r, const void *ring,
		 void (*fn)(uint32_t cookie, uint64_t retval, void *ctx), void *ctx);

#endif
