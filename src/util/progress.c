// SPDX-License-Identifier: GPL-2.0-only
/* The progress line on standard error (see progress.h). */
#include <stdio.h>
#include <unistd.h>

#include "util/progress.h"
#include "util/util.h"

#define PROGRESS_DELAY_NS 500000000 /* shorter work shows nothing */
#define PROGRESS_EVERY_NS 100000000

void progress_start(struct progress *pg, const char *what, uint64_t total)
{
	pg->what = what;
	pg->total = total;
	pg->start_ns = now_ns();
	pg->next_ns = pg->start_ns + PROGRESS_DELAY_NS;
	pg->tty = isatty(STDERR_FILENO);
	pg->shown = false;
}

void progress_update(struct progress *pg, uint64_t done)
{
	uint64_t now;

	if (!pg->tty)
		return;
	now = now_ns();
	if (now < pg->next_ns)
		return;
	pg->next_ns = now + PROGRESS_EVERY_NS;
	pg->shown = true;
	/* \r and erase to the end of the line: the line is drawn over in place */
	if (pg->total)
		fprintf(stderr, "\rheaptrace: %s: %3.0f%% (%.1f of %.1f MiB)\033[K", pg->what,
			done < pg->total ? 100.0 * done / pg->total : 100.0, done / 1048576.0,
			pg->total / 1048576.0);
	else
		fprintf(stderr, "\rheaptrace: %s: %.1f MiB\033[K", pg->what, done / 1048576.0);
	fflush(stderr);
}

void progress_end(struct progress *pg)
{
	if (pg->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	pg->shown = false;
}

void progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *pg = ctx;

	pg->total = total;
	progress_update(pg, done);
}
