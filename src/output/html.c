// SPDX-License-Identifier: GPL-2.0-only
/*
 * --format=html (html.h). The page is html/page.html, html/page.css, html/page.js and the
 * vendored library, compiled in as byte arrays (the Makefile's htmlpage.c); this file writes
 * them around one JSON object: the report's header (report_write's JSON of the run without its
 * backtraces, so every summary member is there), the capped backtraces with their frames
 * interned, and the timeline's stacked series.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/frames.h"
#include "output/html.h"
#include "output/labels.h"
#include "util/util.h"

/* build/htmlpage.c, generated from html/ */
extern const char html_page_html[], html_page_css[], html_d3_flame_graph_css[],
	html_lib_min_js[], html_page_js[];

/* The flame graph leaves out frames under 1/HTML_FLAME_PART of the root in every measure. */
#define HTML_FLAME_PART 5000

/* ----- the timeline's series ----- */

static uint64_t bt_size(const struct table *t, uint32_t epoch, uint32_t bt)
{
	return t->epoch == epoch && bt < t->nbts ? t->bts[bt].size : 0;
}

void html_series_init(struct html_series *s, const struct table *t, const struct timeline *tl)
{
	memset(s, 0, sizeof(*s));
	s->interval_ns = tl->interval_ns;
	s->n = tl->n;
	s->epoch = t->epoch;
	/* the largest peak_size first: a selection of the few largest, by insertion */
	for (uint32_t i = 0; i < t->nbts; i++) {
		uint64_t v = t->bts[i].peak_size;
		uint32_t j;

		if (!v || (s->k == HTML_SERIES_BTS && v <= t->bts[s->bts[s->k - 1]].peak_size))
			continue;
		if (s->k < HTML_SERIES_BTS)
			s->k++;
		for (j = s->k - 1; j && t->bts[s->bts[j - 1]].peak_size < v; j--)
			s->bts[j] = s->bts[j - 1];
		s->bts[j] = i;
	}
	s->max = xcalloc(s->n ? s->n : 1, sizeof(*s->max));
	s->at_max = xcalloc(s->n ? s->n : 1, sizeof(uint64_t) * HTML_SERIES_BTS);
	s->last = xcalloc(s->n ? s->n : 1, sizeof(uint64_t) * HTML_SERIES_BTS);
}

void html_series_note(struct html_series *s, const struct table *t, uint64_t elapsed_ns)
{
	uint64_t p = elapsed_ns / s->interval_ns;
	uint64_t *last;

	if (!s->n)
		return;
	if (p >= s->n)
		p = s->n - 1;
	last = &s->last[p * HTML_SERIES_BTS];
	for (uint32_t i = 0; i < s->k; i++)
		last[i] = bt_size(t, s->epoch, s->bts[i]);
	if (t->sum.live_bytes + 1 > s->max[p]) {
		s->max[p] = t->sum.live_bytes + 1;
		memcpy(&s->at_max[p * HTML_SERIES_BTS], last, sizeof(uint64_t) * HTML_SERIES_BTS);
	}
}

void html_series_free(struct html_series *s)
{
	free(s->max);
	free(s->at_max);
	free(s->last);
	s->max = s->at_max = s->last = NULL;
}

/* ----- the data ----- */

/* The measures the flame graph switches between: a backtrace is embedded if it is among the
 * HTML_TOP largest of any. */
enum { M_SIZE, M_COUNT, M_TOTAL_SIZE, M_CALLS, M_TEMPORARY, M_AT_PEAK, M_N };

static uint64_t measure(const struct table *t, const struct bt *b, int m)
{
	uint64_t count, size;

	switch (m) {
	case M_SIZE:
		return b->size;
	case M_COUNT:
		return b->count;
	case M_TOTAL_SIZE:
		return b->total_size;
	case M_CALLS:
		return b->total_count;
	case M_TEMPORARY:
		return b->temporary;
	default:
		table_bt_at_peak(t, b, &count, &size);
		return size;
	}
}

struct ranked {
	uint64_t v;
	uint32_t bt;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->bt < y->bt ? -1 : x->bt > y->bt;
}

/* Mark the backtraces to embed; return how many, their indices in order in *out. */
static uint32_t select_bts(const struct table *t, const struct html_series *s, uint32_t **out)
{
	struct ranked *r = xmalloc((t->nbts ? t->nbts : 1) * sizeof(*r));
	bool *keep = xcalloc(t->nbts ? t->nbts : 1, sizeof(*keep));
	uint32_t n = 0, *v;

	for (int m = 0; m < M_N; m++) {
		uint32_t k = 0;

		for (uint32_t i = 0; i < t->nbts; i++) {
			r[k].v = measure(t, &t->bts[i], m);
			r[k].bt = i;
			k += r[k].v != 0;
		}
		qsort(r, k, sizeof(*r), ranked_cmp);
		for (uint32_t i = 0; i < k && i < HTML_TOP; i++)
			keep[r[i].bt] = true;
	}
	for (uint32_t i = 0; s && i < s->k; i++)
		if (s->bts[i] < t->nbts && s->epoch == t->epoch)
			keep[s->bts[i]] = true;
	v = xmalloc((t->nbts ? t->nbts : 1) * sizeof(*v));
	for (uint32_t i = 0; i < t->nbts; i++)
		if (keep[i])
			v[n++] = i;
	free(keep);
	free(r);
	*out = v;
	return n;
}

/* Frames written once each, keyed by their word and kind (frame 0 is an entry, the others
 * return addresses, which resolve differently; the blocks found at the attach have names
 * instead). */
struct frame_set {
	struct fkey {
		uint64_t pc;
		uint32_t kind;
		uint32_t id; /* UINT32_MAX: empty */
	} *slots;
	uint32_t cap, n;
};

static uint32_t frame_id(struct frame_set *fs, uint64_t pc, uint32_t kind, bool *is_new)
{
	uint64_t h = (pc ^ kind) * 0x9e3779b97f4a7c15ull;
	uint32_t i = (uint32_t)(h >> 32) & (fs->cap - 1);

	while (fs->slots[i].id != UINT32_MAX) {
		if (fs->slots[i].pc == pc && fs->slots[i].kind == kind) {
			*is_new = false;
			return fs->slots[i].id;
		}
		i = (i + 1) & (fs->cap - 1);
	}
	fs->slots[i] = (struct fkey){ pc, kind, fs->n };
	*is_new = true;
	return fs->n++;
}

static void json_frame(FILE *f, const struct table *t, const struct bt *b, uint32_t d,
		       const struct report_info *ri)
{
	uint64_t pc = table_bt_pcs(t, b)[d];
	struct sym_frame sf = { .line = -1 };
	char cls[48];

	if (table_bt_before_attach(t, b)) {
		snprintf(cls, sizeof(cls), "[blocks of up to %" PRIu64 " bytes]", pc);
		sf.function = d ? cls : "[before attach]";
	} else if (ri->resolve) {
		ri->resolve(ri->resolve_ctx, frames_addr(pc), d, &sf);
	}
	fputs("{\"function\":", f);
	report_json_str(f, sf.function);
	report_json_place(f, &sf);
	if (report_frame_guessed(t, b, d))
		fputs(",\"guess\":true", f); /* found by scanning the stack */
	if (table_bt_before_attach(t, b))
		fputs(",\"address\":null}", f);
	else
		fprintf(f, ",\"address\":\"0x%" PRIx64 "\"}", frames_addr(pc));
}

/* ,"frames":[...],"backtraces":[...]: the embedded backtraces, their frames as indices. */
static void json_bts(FILE *f, const struct table *t, const struct report_info *ri,
		     const uint32_t *sel, uint32_t n)
{
	struct frame_set fs = { 0 };
	uint32_t *ids;
	size_t nids = 0;
	bool is_new;

	for (uint32_t i = 0; i < n; i++)
		nids += t->bts[sel[i]].depth;
	for (fs.cap = 16; fs.cap < 2 * nids; fs.cap *= 2)
		;
	fs.slots = xmalloc(fs.cap * sizeof(*fs.slots));
	for (uint32_t i = 0; i < fs.cap; i++)
		fs.slots[i].id = UINT32_MAX;
	ids = xmalloc((nids ? nids : 1) * sizeof(*ids));
	fputs(",\"frames\":[", f);
	nids = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct bt *b = &t->bts[sel[i]];

		for (uint32_t d = 0; d < b->depth; d++) {
			/* a guessed frame is another frame: it is marked so */
			uint32_t kind = table_bt_before_attach(t, b) ? 2 + !!d :
					report_frame_guessed(t, b, d) ? 4 : !!d;

			ids[nids] = frame_id(&fs, table_bt_pcs(t, b)[d], kind, &is_new);
			if (is_new) {
				if (ids[nids])
					fputc(',', f);
				json_frame(f, t, b, d, ri);
			}
			nids++;
		}
	}
	fputs("],\"backtraces\":[", f);
	nids = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct bt *b = &t->bts[sel[i]];
		uint64_t pcount, psize;
		char label[512];

		table_bt_at_peak(t, b, &pcount, &psize);
		report_label(ri, t, b, label, sizeof(label));
		fprintf(f,
			"%s{\"count\":%" PRIu64 ",\"peak_count\":%" PRIu64 ",\"size\":%" PRIu64
			",\"peak_size\":%" PRIu64 ",\"age_ns\":%" PRIu64 ",\"total_count\":%" PRIu64
			",\"total_size\":%" PRIu64 ",\"alloc_calls\":%" PRIu64
			",\"temporary\":%" PRIu64 ",\"count_at_peak\":%" PRIu64
			",\"size_at_peak\":%" PRIu64 ",\"frames\":[",
			i ? "," : "", b->count, b->peak_count, b->size, b->peak_size,
			ri->now_ns > b->first_ns ? ri->now_ns - b->first_ns : 0, b->total_count,
			b->total_size, b->total_count, b->temporary, pcount, psize);
		for (uint32_t d = 0; d < b->depth; d++)
			fprintf(f, "%s%" PRIu32, d ? "," : "", ids[nids++]);
		fputs("],\"label\":", f);
		report_json_str(f, label);
		fputc('}', f);
	}
	fputc(']', f);
	free(ids);
	free(fs.slots);
}

/* ,"series":{...}: per interval, the followed backtraces' bytes (indices into backtraces). */
static void json_series(FILE *f, const struct html_series *s, const uint32_t *sel, uint32_t n)
{
	fprintf(f, ",\"series\":{\"interval_ns\":%" PRIu64 ",\"backtraces\":[", s->interval_ns);
	for (uint32_t i = 0; i < s->k; i++) {
		uint32_t j = 0;

		while (j < n && sel[j] != s->bts[i])
			j++;
		fprintf(f, "%s%" PRIu32, i ? "," : "", j);
	}
	fputs("],\"bytes\":[", f);
	for (uint32_t p = 0, carry = UINT32_MAX; p < s->n; p++) {
		const uint64_t *row = s->max[p] ? &s->at_max[p * HTML_SERIES_BTS] :
				      carry == UINT32_MAX ? NULL : &s->last[carry * HTML_SERIES_BTS];

		if (s->max[p])
			carry = p;
		fputs(p ? ",[" : "[", f);
		for (uint32_t i = 0; i < s->k; i++)
			fprintf(f, "%s%" PRIu64, i ? "," : "", row ? row[i] : 0);
		fputc(']', f);
	}
	fputs("]}", f);
}

/* ----- the flame graph, merged here from every backtrace ----- */

/* Strings by content, each once. */
struct strtab {
	char **v;
	uint32_t n, cap;
	uint32_t *slots; /* index + 1; 0: empty */
	uint32_t scap; /* power of two */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint32_t str_id(struct strtab *st, const char *s)
{
	uint32_t i;

	if (2 * (st->n + 1) > st->scap) {
		uint32_t *old = st->slots, ocap = st->scap;

		st->scap = st->scap ? st->scap * 2 : 256;
		st->slots = xcalloc(st->scap, sizeof(*st->slots));
		for (uint32_t j = 0; j < ocap; j++) {
			if (!old[j])
				continue;
			for (i = str_hash(st->v[old[j] - 1]) & (st->scap - 1); st->slots[i];
			     i = (i + 1) & (st->scap - 1))
				;
			st->slots[i] = old[j];
		}
		free(old);
	}
	for (i = str_hash(s) & (st->scap - 1); st->slots[i]; i = (i + 1) & (st->scap - 1))
		if (!strcmp(st->v[st->slots[i] - 1], s))
			return st->slots[i] - 1;
	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 256;
		st->v = xrealloc(st->v, st->cap * sizeof(*st->v));
	}
	st->v[st->n] = xstrdup(s);
	st->slots[i] = ++st->n;
	return st->n - 1;
}

static void str_free(struct strtab *st)
{
	for (uint32_t i = 0; i < st->n; i++)
		free(st->v[i]);
	free(st->v);
	free(st->slots);
}

/* A frame of the merged tree: the path of names from the outermost frame to it. */
struct fnode {
	uint32_t parent, name, loc; /* loc: a string id, UINT32_MAX: none */
	bool more_locs; /* frames at other lines merged in */
	uint64_t v[M_N];
};

struct ftree {
	struct fnode *v;
	uint32_t n, cap;
	uint64_t *slots; /* (parent << 32 | name) + 1 keyed; value in idx */
	uint32_t *idx;
	uint32_t scap;
	struct strtab names;
};

static uint32_t ftree_child(struct ftree *ft, uint32_t parent, uint32_t name)
{
	uint64_t key = ((uint64_t)parent << 32 | name) + 1;
	uint32_t i;

	if (2 * (ft->n + 1) > ft->scap) {
		uint64_t *old = ft->slots;
		uint32_t *oidx = ft->idx, ocap = ft->scap;

		ft->scap = ft->scap ? ft->scap * 2 : 1024;
		ft->slots = xcalloc(ft->scap, sizeof(*ft->slots));
		ft->idx = xmalloc(ft->scap * sizeof(*ft->idx));
		for (uint32_t j = 0; j < ocap; j++) {
			if (!old[j])
				continue;
			for (i = (uint32_t)((old[j] * 0x9e3779b97f4a7c15ull) >> 32) & (ft->scap - 1);
			     ft->slots[i]; i = (i + 1) & (ft->scap - 1))
				;
			ft->slots[i] = old[j];
			ft->idx[i] = oidx[j];
		}
		free(old);
		free(oidx);
	}
	for (i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (ft->scap - 1); ft->slots[i];
	     i = (i + 1) & (ft->scap - 1))
		if (ft->slots[i] == key)
			return ft->idx[i];
	if (ft->n == ft->cap) {
		ft->cap = ft->cap * 2;
		ft->v = xrealloc(ft->v, ft->cap * sizeof(*ft->v));
	}
	ft->v[ft->n] = (struct fnode){ .parent = parent, .name = name, .loc = UINT32_MAX };
	ft->slots[i] = key;
	ft->idx[i] = ft->n;
	return ft->n++;
}

/* Frame d of b by name ("[module]" or "??" without one) and by file:line. */
static void frame_names(const struct table *t, const struct bt *b, uint32_t d,
			const struct report_info *ri, char *name, size_t nlen, char *loc,
			size_t llen)
{
	uint64_t pc = table_bt_pcs(t, b)[d];
	struct sym_frame sf = { .line = -1 };
	const char *base, *mark;

	*loc = '\0';
	if (table_bt_before_attach(t, b)) {
		if (d)
			snprintf(name, nlen, "[blocks of up to %" PRIu64 " bytes]", pc);
		else
			snprintf(name, nlen, "[before attach]");
		return;
	}
	if (ri->resolve)
		ri->resolve(ri->resolve_ctx, frames_addr(pc), d, &sf);
	mark = report_frame_guessed(t, b, d) ? "?" : ""; /* found by scanning the stack */
	if (sf.function) {
		snprintf(name, nlen, "%s%s", mark, sf.function);
	} else if (sf.module) {
		base = strrchr(sf.module, '/');
		snprintf(name, nlen, "%s[%s]", mark, base ? base + 1 : sf.module);
	} else {
		snprintf(name, nlen, "%s??", mark);
	}
	if (sf.file && sf.line > 0)
		snprintf(loc, llen, "%s:%d", sf.file, sf.line);
	else if (sf.module && sf.function)
		snprintf(loc, llen, "%s", sf.module);
}

/* Every backtrace merged by names from the outermost frame in; node 0 is the root. */
static void ftree_build(struct ftree *ft, const struct table *t, const struct report_info *ri)
{
	char name[512], loc[512];

	memset(ft, 0, sizeof(*ft));
	ft->cap = 1024;
	ft->v = xmalloc(ft->cap * sizeof(*ft->v));
	ft->v[0] = (struct fnode){ .parent = UINT32_MAX, .name = str_id(&ft->names, "all"),
				   .loc = UINT32_MAX };
	ft->n = 1;
	for (uint32_t i = 0; i < t->nbts; i++) {
		const struct bt *b = &t->bts[i];
		uint64_t v[M_N];
		bool any = false;
		uint32_t node = 0;

		for (int m = 0; m < M_N; m++)
			any |= (v[m] = measure(t, b, m)) != 0;
		if (!any)
			continue;
		for (int m = 0; m < M_N; m++)
			ft->v[0].v[m] += v[m];
		for (uint32_t d = b->depth; d-- > 0;) {
			uint32_t l;

			frame_names(t, b, d, ri, name, sizeof(name), loc, sizeof(loc));
			node = ftree_child(ft, node, str_id(&ft->names, name));
			l = *loc ? str_id(&ft->names, loc) : UINT32_MAX;
			if (ft->v[node].loc == UINT32_MAX)
				ft->v[node].loc = l;
			else if (l != UINT32_MAX && l != ft->v[node].loc)
				ft->v[node].more_locs = true;
			for (int m = 0; m < M_N; m++)
				ft->v[node].v[m] += v[m];
		}
	}
}

/*
 * ,"flame":{"names":[...],"nodes":[[parent,name,loc,more,v0..v5],...]}: parents before their
 * children. A node under 1/HTML_FLAME_PART of the root in every measure is left out (its parent
 * keeps its figures, drawn as the parent's own): a frame that small is under a pixel wide
 * until zoomed into a thousandth of the graph, and the page stays small.
 */
static void json_flame(FILE *f, const struct table *t, const struct report_info *ri)
{
	struct ftree ft;
	uint32_t *out_id, *str_out, k = 0, nstr = 0;
	bool *keep;

	ftree_build(&ft, t, ri);
	out_id = xmalloc(ft.n * sizeof(*out_id));
	keep = xcalloc(ft.n, sizeof(*keep));
	/* names and locations actually used */
	for (uint32_t i = 0; i < ft.n; i++) {
		const struct fnode *nd = &ft.v[i];

		keep[i] = !i || keep[nd->parent];
		for (int m = 0; i && keep[i] && m < M_N; m++) {
			if (nd->v[m] && nd->v[m] >= ft.v[0].v[m] / HTML_FLAME_PART)
				break;
			if (m == M_N - 1)
				keep[i] = false;
		}
	}
	/* the strings of the nodes kept, numbered anew */
	str_out = xmalloc((ft.names.n ? ft.names.n : 1) * sizeof(*str_out));
	memset(str_out, 0xff, (ft.names.n ? ft.names.n : 1) * sizeof(*str_out));
	fputs(",\"flame\":{\"names\":[", f);
	for (uint32_t i = 0; i < ft.n; i++) {
		uint32_t ids[2] = { ft.v[i].name, ft.v[i].loc };

		for (int j = 0; keep[i] && j < 2; j++) {
			if (ids[j] == UINT32_MAX || str_out[ids[j]] != UINT32_MAX)
				continue;
			str_out[ids[j]] = nstr;
			if (nstr++)
				fputc(',', f);
			report_json_str(f, ft.names.v[ids[j]]);
		}
	}
	fputs("],\"nodes\":[", f);
	for (uint32_t i = 0; i < ft.n; i++) {
		const struct fnode *nd = &ft.v[i];

		if (!keep[i])
			continue;
		out_id[i] = k;
		fprintf(f, "%s[%d,%" PRIu32 ",%d,%d", k ? "," : "",
			i ? (int)out_id[nd->parent] : -1, str_out[nd->name],
			nd->loc == UINT32_MAX ? -1 : (int)str_out[nd->loc], nd->more_locs);
		for (int m = 0; m < M_N; m++)
			fprintf(f, ",%" PRIu64, nd->v[m]);
		fputc(']', f);
		k++;
	}
	fputs("]}", f);
	free(str_out);
	free(keep);
	free(out_id);
	free(ft.v);
	free(ft.slots);
	free(ft.idx);
	str_free(&ft.names);
}

/* ----- the page ----- */

/* JSON inside <script>: '<' only occurs in strings, where \u003c keeps "</script>" out. */
static void put_json(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(s[i], f);
	}
}

static int put_page(FILE *f, const char *title, const char *json, size_t len)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>", f);
	for (const char *c = title; *c; c++) {
		if (*c == '<')
			fputs("&lt;", f);
		else if (*c == '&')
			fputs("&amp;", f);
		else
			fputc(*c, f);
	}
	fputs("</title>\n<style>\n", f);
	fputs(html_d3_flame_graph_css, f);
	fputs(html_page_css, f);
	fputs("</style></head>\n<body>\n", f);
	fputs(html_page_html, f);
	fputs("<script id=\"heaptrace-data\" type=\"application/json\">", f);
	put_json(f, json, len);
	fputs("</script>\n<script>\n", f);
	fputs(html_lib_min_js, f);
	fputs("</script>\n<script>\n", f);
	fputs(html_page_js, f);
	fputs("</script>\n</body></html>\n", f);
	if (fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

/* report_write's JSON of t's figures without t's backtraces (into *buf, its length in *len,
 * the final newline dropped). */
static void json_header(const struct table *t, const struct report_info *ri, char **buf,
			size_t *len)
{
	struct report_opts jo = { .format = FMT_JSON, .max_size = UINT64_MAX };
	struct table none;
	FILE *m = open_memstream(buf, len);

	table_init(&none);
	none.sum = t->sum;
	none.base_ns = t->base_ns;
	none.sample_bytes = t->sample_bytes;
	if (m) {
		report_write(m, &none, &jo, ri);
		fclose(m);
	}
	table_destroy(&none);
	if (!m) {
		*buf = xstrdup("{}");
		*len = 2;
	}
	while (*len && (*buf)[*len - 1] == '\n')
		(*buf)[--*len] = '\0';
}

int html_write(FILE *f, const struct table *t, const struct report_info *ri,
	       const struct html_series *series)
{
	char *head, *data = NULL, title[300];
	size_t hlen, dlen = 0;
	uint32_t *sel, n = select_bts(t, series, &sel), live = 0;
	FILE *m;
	int ret;

	for (uint32_t i = 0; i < t->nbts; i++)
		live += t->bts[i].count > 0;
	json_header(t, ri, &head, &hlen);
	m = open_memstream(&data, &dlen);
	if (!m) {
		free(head);
		free(sel);
		return -errno;
	}
	fprintf(m, "{\"kind\":\"report\",\"cap\":%d,\"flame_part\":%d,\"backtraces_live\":%" PRIu32
		   ",\"backtraces_total\":%" PRIu32 ",\"report\":",
		HTML_TOP, HTML_FLAME_PART, live, t->nbts);
	fwrite(head, 1, hlen, m);
	json_bts(m, t, ri, sel, n);
	json_flame(m, t, ri);
	if (series)
		json_series(m, series, sel, n);
	fputc('}', m);
	fclose(m);
	snprintf(title, sizeof(title), "heaptrace: %s", ri->command ? ri->command : "report");
	ret = put_page(f, title, data, dlen);
	free(data);
	free(head);
	free(sel);
	return ret;
}

int html_write_diff(FILE *f, const char *json, size_t len)
{
	char *data = NULL;
	size_t dlen = 0;
	FILE *m = open_memstream(&data, &dlen);
	int ret;

	if (!m)
		return -errno;
	while (len && json[len - 1] == '\n')
		len--;
	fputs("{\"kind\":\"diff\",\"report\":", m);
	fwrite(json, 1, len, m);
	fputc('}', m);
	fclose(m);
	ret = put_page(f, "heaptrace diff", data, dlen);
	free(data);
	return ret;
}
