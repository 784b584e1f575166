// SPDX-License-Identifier: GPL-2.0-only
/* `heaptrace diff`: growth per backtrace between two moments, of one log or two. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "offline"
#include "cmd/offline.h"
#include "cmd/side.h"
#include "output/html.h"
#include "output/labels.h"
#include "util/log.h"
#include "util/util.h"

struct diff_row {
	char *key; /* the frames by name: the same code in two runs at other addresses */
	int side; /* 0: A, 1: B (the backtrace bt is of that side) */
	uint32_t bt;
	uint64_t count[2], size[2];
};

/* A frame's name for matching: function, file and line, else the module and the offset. */
static void frame_key(FILE *f, struct side *sd, uint64_t pc, unsigned idx)
{
	struct sym_frame sf;
	const struct module *m = modlist_find(&sd->p->mods, pc);

	side_resolve_named(&sd->res, pc, idx, &sf);
	if (sf.function)
		fprintf(f, "%s@%s:%d", sf.function, sf.file ? sf.file : "", sf.line);
	else if (m)
		fprintf(f, "%s+%" PRIx64, strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 :
								 m->path,
			pc - m->base);
	else
		fprintf(f, "?%" PRIx64, pc);
	fputc('\x1f', f);
}

/* Rows for the live backtraces of side s. */
static void diff_rows(struct side *sd, int s, struct diff_row **rows, size_t *n, size_t *cap)
{
	const struct table *t = &sd->p->t;

	for (uint32_t i = 0; i < t->nbts; i++) {
		const struct bt *b = &t->bts[i];
		const uint64_t *pcs = table_bt_pcs(t, b);
		size_t len = 0;
		FILE *f;
		struct diff_row *r;

		if (!b->count)
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*rows = xrealloc(*rows, *cap * sizeof(**rows));
		}
		r = &(*rows)[(*n)++];
		memset(r, 0, sizeof(*r));
		f = open_memstream(&r->key, &len);
		if (!f) {
			r->key = xstrdup("");
			continue;
		}
		for (uint32_t d = 0; d < b->depth; d++)
			frame_key(f, sd, pcs[d], d);
		fclose(f);
		r->side = s;
		r->bt = i;
		r->count[s] = b->count;
		r->size[s] = b->size;
	}
}

static int row_by_key(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : x->side - y->side;
}

static int64_t growth(const struct diff_row *r)
{
	return (int64_t)(r->size[1] - r->size[0]);
}

static int row_by_growth(const void *a, const void *b)
{
	int64_t x = growth(a), y = growth(b);

	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(((const struct diff_row *)a)->key, ((const struct diff_row *)b)->key);
}

/* Row r's label (output/labels.h), as in a report. */
static const char *diff_label(struct side *sd, const struct diff_row *r, char *buf, size_t len)
{
	const struct report_info ri = { .resolve = side_resolve_named, .resolve_ctx = &sd->res };

	report_label(&ri, &sd->p->t, &sd->p->t.bts[r->bt], buf, len);
	return buf;
}

static void diff_frames(FILE *f, struct side *sd, const struct diff_row *r, bool json)
{
	const struct table *t = &sd->p->t;
	const struct bt *b = &t->bts[r->bt];
	const uint64_t *pcs = table_bt_pcs(t, b);

	for (uint32_t d = 0; d < b->depth; d++) {
		struct sym_frame sf;
		const struct module *m = modlist_find(&sd->p->mods, pcs[d]);

		side_resolve_named(&sd->res, pcs[d], d, &sf);
		if (json) {
			fprintf(f, "%s{\"function\":", d ? "," : "");
			report_json_str(f, sf.function);
			report_json_place(f, &sf);
			fputc('}', f);
			continue;
		}
		fprintf(f, "%2u ", d);
		if (sf.function)
			fprintf(f, "%s", sf.function);
		else if (m)
			fprintf(f, "%s +0x%" PRIx64, m->path, pcs[d] - m->base);
		else
			fprintf(f, "0x%" PRIx64, pcs[d]);
		if (sf.file && sf.line > 0)
			fprintf(f, " (%s:%d)", sf.file, sf.line);
		fputc('\n', f);
	}
}

static void side_json(FILE *f, const char *name, const struct offline_opts *o,
		      const struct side *sd)
{
	fprintf(f, "\"%s\":{\"log\":", name);
	report_json_str(f, o->path);
	fprintf(f, ",\"elapsed_ns\":%" PRIu64 ",\"live_bytes\":%" PRIu64 ",\"live_blocks\":%" PRIu64
		   "}",
		sd->p->now_ns - sd->p->start_ns, sd->p->t.sum.live_bytes,
		sd->p->t.sum.live_blocks);
}

/* The diff's JSON, inside a page. */
static int diff_html(const struct offline_opts *a, const struct offline_opts *b)
{
	struct offline_opts j = *b;
	char *buf = NULL;
	size_t len = 0;
	int ret;

	j.report.format = FMT_JSON;
	j.out = open_memstream(&buf, &len);
	if (!j.out)
		return -errno;
	ret = offline_diff(a, &j);
	fclose(j.out);
	if (!ret) {
		ret = html_write_diff(b->out, buf, len);
		if (ret)
			pr_err("writing the report: %s", strerror(-ret));
	}
	free(buf);
	return ret;
}

int offline_diff(const struct offline_opts *a, const struct offline_opts *b)
{
	struct side sd[2];
	struct diff_row *rows = NULL;
	size_t n = 0, cap = 0, k = 0;
	FILE *f = b->out;
	bool json = b->report.format == FMT_JSON;
	int ret;

	if (b->report.format == FMT_HTML)
		return diff_html(a, b);
	ret = side_open(a, &sd[0], true);
	if (ret)
		return ret;
	ret = side_open(b, &sd[1], true);
	if (ret) {
		side_close(&sd[0]);
		return ret;
	}
	diff_rows(&sd[0], 0, &rows, &n, &cap);
	diff_rows(&sd[1], 1, &rows, &n, &cap);
	/* one row per key: B's backtrace where both have it */
	qsort(rows, n, sizeof(*rows), row_by_key);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(rows[k - 1].key, rows[i].key)) {
			struct diff_row *r = &rows[k - 1];

			r->count[rows[i].side] += rows[i].count[rows[i].side];
			r->size[rows[i].side] += rows[i].size[rows[i].side];
			if (rows[i].side == 1) {
				r->side = 1;
				r->bt = rows[i].bt;
			}
			free(rows[i].key);
			continue;
		}
		rows[k++] = rows[i];
	}
	n = k;
	qsort(rows, n, sizeof(*rows), row_by_growth);
	if (json) {
		fputs("{\"diff\":{", f);
		side_json(f, "a", a, &sd[0]);
		fputc(',', f);
		side_json(f, "b", b, &sd[1]);
		fputs(",\"backtraces\":[", f);
	} else {
		fprintf(f, "[heaptrace] live heap growth from %s at %.3f ms to %s at %.3f ms: "
			   "%+" PRId64 " bytes, %+" PRId64 " blocks\n",
			a->path, (sd[0].p->now_ns - sd[0].p->start_ns) / 1e6, b->path,
			(sd[1].p->now_ns - sd[1].p->start_ns) / 1e6,
			(int64_t)(sd[1].p->t.sum.live_bytes - sd[0].p->t.sum.live_bytes),
			(int64_t)(sd[1].p->t.sum.live_blocks - sd[0].p->t.sum.live_blocks));
	}
	for (size_t i = 0, shown = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];
		char label[512];

		if (r->count[0] == r->count[1] && r->size[0] == r->size[1])
			continue;
		if (json) {
			fprintf(f, "%s{\"bytes_growth\":%" PRId64 ",\"blocks_growth\":%" PRId64
				   ",\"count_a\":%" PRIu64 ",\"size_a\":%" PRIu64
				   ",\"count_b\":%" PRIu64 ",\"size_b\":%" PRIu64 ",\"frames\":[",
				shown ? "," : "", growth(r), (int64_t)(r->count[1] - r->count[0]),
				r->count[0], r->size[0], r->count[1], r->size[1]);
			diff_frames(f, &sd[r->side], r, true);
			fputs("],\"label\":", f);
			report_json_str(f, diff_label(&sd[r->side], r, label, sizeof(label)));
			fputc('}', f);
		} else if (!b->report.top || shown < b->report.top) {
			fprintf(f, "\n=== growth #%zu === [%+" PRId64 " bytes, %+" PRId64
				   " blocks] [A: %" PRIu64 " blocks, %" PRIu64 " bytes] [B: %"
				   PRIu64 " blocks, %" PRIu64 " bytes] [by: %s]\n",
				shown + 1, growth(r), (int64_t)(r->count[1] - r->count[0]),
				r->count[0], r->size[0], r->count[1], r->size[1],
				diff_label(&sd[r->side], r, label, sizeof(label)));
			diff_frames(f, &sd[r->side], r, false);
		}
		shown++;
	}
	if (json)
		fputs("]}}\n", f);
	for (size_t i = 0; i < n; i++)
		free(rows[i].key);
	free(rows);
	side_close(&sd[0]);
	side_close(&sd[1]);
	if (fflush(f) || ferror(f)) {
		pr_err("writing the report: %s", strerror(errno ? errno : EIO));
		return -EIO;
	}
	return 0;
}
