// SPDX-License-Identifier: GPL-2.0-only
/*
 * `heaptrace report`: a --record log replayed (replay.h) to the moment asked for and written
 * in the format asked for, one process or every one of the log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "offline"
#include "cmd/offline.h"
#include "cmd/side.h"
#include "output/heaptrack.h"
#include "output/html.h"
#include "output/massif.h"
#include "output/pprof.h"
#include "util/log.h"
#include "util/util.h"

static void extra_json(FILE *f, void *ctx)
{
	timeline_json(f, &((struct replay *)ctx)->tl);
}

static void extra_text(FILE *f, void *ctx)
{
	timeline_text(f, &((struct replay *)ctx)->tl);
}


/* The log as heaptrack's data file: a second replay, the symbolizer of the first. */
static int heaptrack_file(const struct offline_opts *o, struct side *sd)
{
	struct htk *h = htk_open(o->out, sd->p->command, side_resolve_named, &sd->res);
	struct replay *rp = replay_file(o, AT_END, 0, 0, h, NULL, NULL);
	uint64_t end_ms = rp ? (sd->p->now_ns - sd->p->start_ns) / 1000000 : 0;
	int ret = htk_close(h, end_ms);

	if (!rp)
		return -EINVAL;
	replay_free(rp);
	if (ret)
		pr_err("writing the report: %s", strerror(-ret));
	return ret;
}

/* --format=html: the page, with the top backtraces over the timeline from a second replay
 * up to the same moment (none from standard input, which cannot be read twice). */
static int html_page(const struct offline_opts *o, struct side *sd, const struct report_info *ri)
{
	uint64_t peak = sd->p->t.sum.peak_live_bytes;
	struct offline_opts so = *o;
	struct html_series s;
	struct replay *rp;
	int ret;

	if (!strcmp(o->path, "-"))
		return html_write(o->out, &sd->p->t, ri, NULL);
	html_series_init(&s, &sd->p->t, &sd->p->tl);
	so.series = &s;
	rp = replay_file(&so, o->at == AT_PEAK && !peak ? AT_END : o->at, o->at_ms * 1000000,
			 peak, NULL, NULL, NULL);
	if (!rp) {
		html_series_free(&s);
		return -EINVAL;
	}
	ret = html_write(o->out, &sd->p->t, ri, &s);
	replay_free(rp);
	html_series_free(&s);
	return ret;
}

/* The table of the moment asked for as a pprof profile; the modules as its mappings. */
static int pprof_file(const struct offline_opts *o, struct side *sd)
{
	const struct replay *rp = sd->p;
	struct pprof_module *mods = xcalloc(rp->mods.n ? rp->mods.n : 1, sizeof(*mods));
	char (*hex)[129] = xcalloc(rp->mods.n ? rp->mods.n : 1, sizeof(*hex));
	struct pprof_info pi = {
		.mods = mods,
		.nmods = rp->mods.n,
		.resolve = side_resolve_named,
		.resolve_ctx = &sd->res,
		.duration_ns = rp->now_ns - rp->start_ns,
		.comment = rp->command,
	};
	int ret;

	for (size_t i = 0; i < rp->mods.n; i++) {
		const struct module *m = &rp->mods.v[i];

		for (size_t k = 0; k < rp->idlen[i]; k++)
			sprintf(hex[i] + 2 * k, "%02x", rp->ids[i][k]);
		mods[i] = (struct pprof_module){ .path = m->path, .start = m->start,
						 .limit = m->end, .file_offset = m->start - m->base,
						 .build_id = rp->idlen[i] ? hex[i] : NULL };
	}
	ret = pprof_write(o->out, &rp->t, &pi);
	if (ret == -ENOTSUP)
		pr_err("this heaptrace was built without pprof output (libprotobuf-c, protoc-c "
		       "and zlib)");
	else if (ret)
		pr_err("writing the report: %s", strerror(-ret));
	free(hex);
	free(mods);
	return ret;
}

/* The whole run as massif's file: the timeline, the heap at its peak and at the end. */
static int massif_file(const struct offline_opts *o, struct side *sd)
{
	const struct replay *rp = sd->p;
	const struct table_summary *s = &rp->t.sum;
	struct massif_info mi = {
		.command = rp->command,
		.end_ns = rp->now_ns - rp->start_ns,
		.peak_ns = s->peak_ns > rp->start_ns ? s->peak_ns - rp->start_ns : 0,
		.resolve = side_resolve_named,
		.resolve_ctx = &sd->res,
	};
	int ret = massif_write(o->out, &rp->t, &rp->tl, &mi);

	if (ret)
		pr_err("writing the report: %s", strerror(-ret));
	return ret;
}

/* --only-leaked at a moment: the block is live at the end too. */
static bool keep_leaked(void *ctx, const struct block *blk)
{
	return lifetime_leaked(ctx, blk->ptr);
}

/* Report one process of the log with resolver res. Return 0 or -errno. */
static int report_proc(const struct offline_opts *o, struct side *sd, struct replay *rp,
		       struct offline_resolve *res)
{
	bool html = o->report.format == FMT_HTML;
	struct report_opts ro = o->report;
	struct report_info ri;
	char kind[48];

	ro.depth_limit = rp->depth;
	if (o->at == AT_END)
		snprintf(kind, sizeof(kind), "final");
	else if (o->at == AT_PEAK)
		snprintf(kind, sizeof(kind), "at its peak");
	else
		snprintf(kind, sizeof(kind), "at %" PRIu64 " ms", o->at_ms);
	ri = (struct report_info){
		.pid = rp->pid,
		.command = rp->command,
		.exited = rp->ended && rp->exited,
		.exit_status = rp->exit_status,
		.kind = kind,
		.has_statm = rp->ended && rp->has_statm,
		.statm_vss = rp->statm[0],
		.statm_rss = rp->statm[1],
		.statm_shared = rp->statm[2],
		.now_ns = rp->now_ns,
		.elapsed_ns = rp->now_ns - rp->start_ns,
		.resolve = side_resolve_named,
		.resolve_ctx = res,
		.extra_json = o->timeline || html ? extra_json : NULL,
		.extra_text = o->timeline ? extra_text : NULL,
		.extra_ctx = rp,
		.keep = sd->leaked ? keep_leaked : NULL,
		.keep_ctx = &sd->lt,
		.allocators = rp->has_allocators ? (const char *const *)rp->allocators : NULL,
		.nallocators = rp->nallocators,
		.heap_names = (const char *const *)rp->root->heap_names,
	};

	if (o->at == AT_TIME && rp->now_ns - rp->start_ns < o->at_ms * 1000000)
		pr_warn("--at=%" PRIu64 " is past the end of process %d's log, which lasts %.3f ms: "
			"this is the report of its end", o->at_ms, rp->pid,
			(rp->now_ns - rp->start_ns) / 1e6);
	if (html)
		return html_page(o, sd, &ri);
	return report_write(o->out, &rp->t, &ro, &ri);
}

/* Processes in the order they ended (as the live final reports came), those that did not
 * after them in log order. */
static int by_end(const void *a, const void *b)
{
	const struct replay *x = *(struct replay *const *)a, *y = *(struct replay *const *)b;
	uint64_t kx = x->end_seq ? x->end_seq : UINT64_MAX, ky = y->end_seq ? y->end_seq : UINT64_MAX;

	return kx < ky ? -1 : kx > ky;
}

/* A child's report, with a symbolizer of its own modules (an exec changed them). */
static int report_child(const struct offline_opts *o, struct side *sd, struct replay *rp)
{
	char **files = xcalloc(rp->mods.n ? rp->mods.n : 1, sizeof(*files));
	struct offline_resolve res = { .rp = rp };
	int ret;

	for (size_t i = 0; i < rp->mods.n; i++)
		files[i] = side_find_file(o, rp, i);
	res.sym = sym_open_files(&rp->mods, files, sd->dpath);
	sym_set_jit(res.sym, rp->jit);
	ret = report_proc(o, sd, rp, &res);
	sym_close(res.sym);
	for (size_t i = 0; i < rp->mods.n; i++)
		free(files[i]);
	free(files);
	return ret;
}

int offline_report(const struct offline_opts *o)
{
	struct replay **order;
	struct side sd;
	size_t n;
	/* one file of one process: heaptrack, pprof, massif and a page */
	bool one = o->heaptrack || o->pprof || o->massif || o->report.format == FMT_HTML;
	int ret = side_open(o, &sd, one);

	if (ret)
		return ret;
	if (o->heaptrack || o->pprof || o->massif) {
		ret = o->pprof	? pprof_file(o, &sd) :
		      o->massif ? massif_file(o, &sd) :
				  heaptrack_file(o, &sd);
		side_close(&sd);
		return ret;
	}
	n = sd.rp->nprocs;
	if (sd.leaked && n > 1) {
		pr_err("%s: --only-leaked at a moment reads logs of one process only (this one has "
		       "%zu)", o->path, n);
		side_close(&sd);
		return -EINVAL;
	}
	/* one report per process, as a live -f run writes them, or --pid's */
	order = xmalloc(n * sizeof(*order));
	memcpy(order, sd.rp->procs, n * sizeof(*order));
	if (one || o->pid) {
		order[0] = sd.p;
		n = 1;
	}
	if (n > 1)
		qsort(order, n, sizeof(*order), by_end);
	for (size_t i = 0; i < n && !ret; i++)
		ret = order[i] == sd.p ? report_proc(o, &sd, sd.p, &sd.res) :
					 report_child(o, &sd, order[i]);
	if (ret && ret != -EINVAL)
		pr_err("writing the report: %s", strerror(-ret));
	free(order);
	side_close(&sd);
	return ret;
}

