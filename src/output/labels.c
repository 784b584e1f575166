// SPDX-License-Identifier: GPL-2.0-only
/* Backtraces' labels and the frame hints' figures (labels.h). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/labels.h"
#include "symbols/wrappers.h"
#include "unwind/frames.h"
#include "util/util.h"

void report_frame(const struct report_info *ri, const struct table *t, const struct bt *b,
		  unsigned idx, struct sym_frame *sf)
{
	static char cls[48];
	uint64_t pc = table_bt_pcs(t, b)[idx];

	*sf = (struct sym_frame){ .line = -1 };
	if (table_bt_before_attach(t, b)) {
		snprintf(cls, sizeof(cls), "[blocks of up to %" PRIu64 " bytes]",
			 table_bt_pcs(t, b)[1]);
		sf->function = idx ? cls : "[before attach]";
		return;
	}
	if (ri->resolve)
		ri->resolve(ri->resolve_ctx, frames_addr(pc), idx, sf);
}

bool report_frame_guessed(const struct table *t, const struct bt *b, unsigned idx)
{
	return idx && !table_bt_before_attach(t, b) &&
	       frames_how_of(table_bt_pcs(t, b)[idx]) == FRAMES_SCAN;
}

/* The label frame of b: its innermost Python frame if it has one, else the first frame that is
 * no allocator; its index and name (NULL: none after frame 0 is named and no allocator), *sf
 * that frame's; *wrapped: the outermost frame named as an allocator before
 * it (0: none). */
static unsigned label_frame(const struct report_info *ri, const struct table *t,
			    const struct bt *b, struct sym_frame *sf, const char **name,
			    const char **file, int *line, unsigned *wrapped)
{
	*wrapped = 0;
	/* in a Python program the script's innermost frame, past the interpreter's machinery */
	for (unsigned d = 1; d < b->depth && !table_bt_before_attach(t, b); d++) {
		if (frames_how_of(table_bt_pcs(t, b)[d]) != FRAMES_PYTHON)
			continue;
		report_frame(ri, t, b, d, sf);
		if (!sf->function)
			break;
		*name = sf->function;
		*file = sf->file;
		*line = sf->line;
		return d;
	}
	for (unsigned d = 1; d < b->depth; d++) {
		report_frame(ri, t, b, d, sf);
		*name = wrap_frame_name(sf, file, line);
		if (*name)
			return d;
		if (sf->function)
			*wrapped = d;
	}
	*name = NULL;
	return b->depth;
}

unsigned report_label(const struct report_info *ri, const struct table *t, const struct bt *b,
		      char *buf, size_t len)
{
	struct sym_frame sf;
	const char *name, *file;
	int line;
	unsigned wrapped, d = label_frame(ri, t, b, &sf, &name, &file, &line, &wrapped);

	if (name) {
		const char *mark = report_frame_guessed(t, b, d) ? "?" : "";

		if (file && line > 0)
			snprintf(buf, len, "%s%s (%s:%d)", mark, name, file, line);
		else
			snprintf(buf, len, "%s%s", mark, name);
		return d;
	}
	/* an unnamed frame, past the wrappers if one is (a wrapper's own static helpers are
	 * unnamed too in a stripped library) */
	for (d = wrapped + 1 < b->depth ? wrapped + 1 : 1; d < b->depth; d++) {
		report_frame(ri, t, b, d, &sf);
		if (sf.module && !sf.function) {
			snprintf(buf, len, "%s%s +0x%" PRIx64,
				 report_frame_guessed(t, b, d) ? "?" : "", sf.module,
				 sf.module_offset);
			return d;
		}
	}
	report_frame(ri, t, b, 0, &sf);
	snprintf(buf, len, "%s", sf.function ? sf.function : "??");
	return 0;
}

/* Backtraces of table ctx by bytes allocated in all, most first. */
static int by_total(const void *a, const void *b, void *ctx)
{
	const struct table *t = ctx;
	uint64_t x = t->bts[*(const uint32_t *)a].total_size;
	uint64_t y = t->bts[*(const uint32_t *)b].total_size;

	return x > y ? -1 : x < y;
}

void report_frame_stats(const struct report_info *ri, const struct table *t,
			unsigned depth_limit, unsigned max, struct report_frame_stats *st)
{
	uint32_t *order = xmalloc((t->nbts ? t->nbts : 1) * sizeof(*order)), n = 0;

	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < t->nbts; i++)
		if (!table_bt_before_attach(t, &t->bts[i]))
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), by_total, (void *)t);
	for (uint32_t i = 0; i < n && i < max; i++) {
		const struct bt *b = &t->bts[order[i]];
		struct sym_frame sf;
		const char *name, *file;
		int line;
		unsigned wrapped;

		st->backtraces++;
		for (unsigned d = 1; d < b->depth; d++) {
			report_frame(ri, t, b, d, &sf);
			st->frames++;
			st->unnamed += !sf.function;
		}
		/* cut at --depth with no frame past the wrappers, one of which is named */
		if (depth_limit && b->depth >= depth_limit &&
		    label_frame(ri, t, b, &sf, &name, &file, &line, &wrapped) == b->depth &&
		    wrapped && !(table_bt_pcs(t, b)[b->depth - 1] & FRAMES_STOPPED))
			st->in_wrappers++;
	}
	free(order);
}
