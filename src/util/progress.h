/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PROGRESS_H
#define HEAPTRACE_PROGRESS_H

/*
 * A one-line progress indicator on standard error for long work (reading a big log, the heap
 * snapshot at an attach), only when standard error is a terminal. Work that ends within half
 * a second shows nothing; the line is redrawn at most ten times a second and erased at the end.
 */
#include <stdbool.h>
#include <stdint.h>

struct progress {
	const char *what;
	uint64_t total; /* 0: not known, only the amount done is shown */
	uint64_t start_ns, next_ns;
	bool tty, shown;
};

/* what: e.g. "reading app.log"; total in bytes. */
void progress_start(struct progress *pg, const char *what, uint64_t total);
void progress_update(struct progress *pg, uint64_t done);
void progress_end(struct progress *pg);

/* The same as a callback: ctx is a struct progress (inventory.h's inv_image.progress). */
void progress_cb(void *ctx, uint64_t done, uint64_t total);

#endif
