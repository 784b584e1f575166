// SPDX-License-Identifier: GPL-2.0-only
/* The JSON report (report_write's --format=json): one object on one line, man/heaptrace.1's
 * members. */
#include <inttypes.h>
#include <stdlib.h>

#include "heap/hooks.h"
#include "output/blockview.h"
#include "output/labels.h"
#include "output/report.h"
#include "output/reportint.h"
#include "unwind/frames.h"
#include "util/util.h"

#ifndef HEAPTRACE_VERSION
#define HEAPTRACE_VERSION "0.0.0"
#endif

/* "heaps" in the summary: the custom heaps' figures, by name (none: no "heaps"). */
static void json_heaps(FILE *f, const struct table *t, const struct report_info *ri)
{
	bool first = true;

	for (unsigned h = 1; h < HEAP_MAX && h < TABLE_HEAPS; h++) {
		const struct table_summary *s = &t->heap_sum[h];

		if (!report_heap_name(ri, h))
			continue;
		fputs(first ? ",\"heaps\":{" : ",", f);
		first = false;
		report_json_str(f, report_heap_name(ri, h));
		fprintf(f,
			":{\"alloc_calls\":%" PRIu64 ",\"free_calls\":%" PRIu64
			",\"unknown_frees\":%" PRIu64 ",\"live_blocks\":%" PRIu64
			",\"live_bytes\":%" PRIu64 ",\"peak_live_blocks\":%" PRIu64
			",\"peak_live_bytes\":%" PRIu64 ",\"total_allocated_bytes\":%" PRIu64 "}",
			s->alloc_calls, s->free_calls, s->unknown_frees, s->live_blocks,
			s->live_bytes, s->peak_live_blocks, s->peak_live_bytes,
			s->total_allocated_bytes);
	}
	if (!first)
		fputc('}', f);
}

/* One backtrace of the text report (entry e, number i + 1); return whether a frame is marked
 * [guess]. */
void report_json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) { /* runs of plain characters in one write: fputc each was half a large report */
		size_t n = 0;
		unsigned char c;

		while (s[n] && s[n] != '"' && s[n] != '\\' && (unsigned char)s[n] >= 0x20)
			n++;
		fwrite(s, 1, n, f);
		s += n;
		if (!*s)
			break;
		c = (unsigned char)*s++;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else
			fprintf(f, "\\u%04x", c);
	}
	fputc('"', f);
}

static void json_file_line(FILE *f, const struct sym_frame *sf)
{
	fputs(",\"file\":", f);
	report_json_str(f, sf->file);
	if (sf->line > 0)
		fprintf(f, ",\"line\":%d", sf->line);
	else
		fputs(",\"line\":null", f);
}

void report_json_place(FILE *f, const struct sym_frame *sf)
{
	fputs(",\"module\":", f);
	report_json_str(f, sf->module);
	json_file_line(f, sf);
}

/* "heap_at_attach" (man/heaptrace.1), and the summary's freed_from_before_attach before it. */
static void json_inventory(FILE *f, const struct inventory *inv)
{
	bool first = true;

	fputs(",\"heap_at_attach\":{\"allocator\":", f);
	report_json_str(f, inv->allocator[0] ? inv->allocator : NULL);
	fprintf(f,
		",\"complete\":%s,\"live_blocks\":%" PRIu64 ",\"live_bytes\":%" PRIu64
		",\"free_bytes\":%" PRIu64 ",\"heap_bytes\":%" PRIu64 ",\"mmapped_blocks\":%" PRIu64
		",\"mmapped_bytes\":%" PRIu64 ",\"arenas\":%u,\"threads\":%u,\"stop_ms\":%.3f"
		",\"analysis_ms\":%.3f,\"tcache_blocks\":%" PRIu64 ",\"tcache_bytes\":%" PRIu64
		",\"fastbin_blocks\":%" PRIu64 ",\"fastbin_bytes\":%" PRIu64
		",\"bin_blocks\":%" PRIu64 ",\"bin_bytes\":%" PRIu64 ",\"top_bytes\":%" PRIu64
		",\"largest_free\":%" PRIu64 ",\"unknown_bytes\":%" PRIu64 ",\"size_classes\":[",
		inv->complete ? "true" : "false", inv->live_blocks, inv->live_bytes,
		inv->free_bytes, inv->heap_bytes, inv->mmapped_blocks, inv->mmapped_bytes,
		inv->arenas, inv->threads, inv->stop_ms, inv->analysis_ms, inv->tcache_blocks,
		inv->tcache_bytes,
		inv->fastbin_blocks, inv->fastbin_bytes, inv->bin_blocks, inv->bin_bytes,
		inv->top_bytes, inv->largest_free, inv->unknown_bytes);
	for (unsigned c = 0; c < INV_NCLASSES; c++) {
		if (!inv->class_blocks[c])
			continue;
		fprintf(f,
			"%s{\"max_size\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
			first ? "" : ",", inv_class_max(c), inv->class_blocks[c],
			inv->class_bytes[c]);
		first = false;
	}
	fputs("],\"types\":[", f);
	for (size_t i = 0; i < inv->ntypes; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		report_json_str(f, inv->types[i].name);
		fprintf(f, ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", inv->types[i].blocks,
			inv->types[i].bytes);
	}
	fputs("],\"problems\":[", f);
	for (unsigned i = 0; i < inv->nproblems; i++) {
		if (i)
			fputc(',', f);
		report_json_str(f, inv->problems[i]);
	}
	fputs("]}", f);
}

/* A Python frame: its function (qualified name), file (as the code object names it), line. */
static void json_python_frame(FILE *f, uint32_t d, const struct sym_frame *sf)
{
	fputs(d ? ",{\"function\":" : "{\"function\":", f);
	report_json_str(f, sf->function);
	json_file_line(f, sf);
	fputs(",\"how\":\"python\"}", f);
}

static void json_frames(FILE *f, const struct table *t, const struct bt *b,
			const struct report_info *ri)
{
	const uint64_t *pcs = table_bt_pcs(t, b);

	for (uint32_t d = 0; d < b->depth; d++) {
		struct sym_frame sf;

		report_frame(ri, t, b, d, &sf);
		if (d && frames_how_of(pcs[d]) == FRAMES_PYTHON &&
		    !table_bt_before_attach(t, b)) {
			json_python_frame(f, d, &sf);
			continue;
		}
		fprintf(f, "%s{\"address\":\"0x%" PRIx64 "\",\"function\":", d ? "," : "",
			frames_addr(pcs[d]));
		report_json_str(f, sf.function);
		if (sf.function)
			fprintf(f, ",\"offset\":%" PRIu64, sf.offset);
		else
			fputs(",\"offset\":null", f);
		report_json_place(f, &sf);
		/* frame 0 is the allocation function's entry: no unwinding found it; the blocks
		 * found at the attach have no call site */
		/* a JIT's code, named from its perf map: reached by a frame-pointer step or as
		 * the allocation's caller, never by the scan (it takes no return address there) */
		if (!table_bt_before_attach(t, b))
			fprintf(f, ",\"how\":\"%s\"",
				!d ? "entry" : sf.jit ? "jit" : frames_how_name(frames_how_of(pcs[d])));
		if (pcs[d] & FRAMES_STOPPED && !table_bt_before_attach(t, b))
			fputs(",\"stopped\":true", f);
		for (unsigned k = 0; k < sf.ninlined; k++) {
			fputs(k ? ",{\"function\":" : ",\"inlined\":[{\"function\":", f);
			report_json_str(f, sf.inlined[k].function);
			fputs(",\"file\":", f);
			report_json_str(f, sf.inlined[k].file);
			if (sf.inlined[k].line > 0)
				fprintf(f, ",\"line\":%d}", sf.inlined[k].line);
			else
				fputs(",\"line\":null}", f);
			if (k + 1 == sf.ninlined)
				fputc(']', f);
		}
		fputc('}', f);
	}
}

/* The end of a backtrace's frames, and whether --depth cut it (the object stays open). */
static void json_bt_end(FILE *f, const struct table *t, const struct bt *b,
			const struct report_opts *o, const struct report_info *ri)
{
	fprintf(f, "],\"truncated\":%s", report_truncated(t, b, o, ri) ? "true" : "false");
}

/* ,"peak":{...}: the heap when live_bytes first reached its maximum, every backtrace. */
static void json_peak(FILE *f, const struct table *t, const struct report_opts *o,
		      const struct report_info *ri)
{
	uint32_t n;
	struct entry *e = report_peak_bts(t, &n);

	fprintf(f, ",\"peak\":{\"live_bytes\":%" PRIu64 ",\"live_blocks\":%" PRIu64
		   ",\"elapsed_ns\":%" PRIu64 ",\"backtraces\":[",
		t->sum.peak_live_bytes, t->sum.peak_at_blocks,
		t->sum.peak_live_bytes ? report_peak_elapsed(t, ri) : 0);
	for (uint32_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"count\":%" PRIu64 ",\"size\":%" PRIu64 ",\"frames\":[",
			i ? "," : "", e[i].count, e[i].size);
		json_frames(f, t, &t->bts[e[i].bt], ri);
		json_bt_end(f, t, &t->bts[e[i].bt], o, ri);
		fputc('}', f);
	}
	fputs("]}", f);
	free(e);
}

/* ,"temporary":[...]: the backtraces with temporary allocations, most first. */
static void json_temporary(FILE *f, const struct table *t, const struct report_opts *o,
			   const struct report_info *ri)
{
	struct entry *e = xmalloc((t->nbts ? t->nbts : 1) * sizeof(*e));
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->nbts; i++) {
		if (!t->bts[i].temporary)
			continue;
		e[n].bt = i;
		e[n++].key = ~t->bts[i].temporary;
	}
	qsort(e, n, sizeof(*e), report_entry_cmp);
	fputs(",\"temporary\":[", f);
	for (uint32_t i = 0; i < n; i++) {
		const struct bt *b = &t->bts[e[i].bt];

		fprintf(f, "%s{\"temporary\":%" PRIu64 ",\"alloc_calls\":%" PRIu64
			   ",\"total_size\":%" PRIu64 ",\"frames\":[",
			i ? "," : "", b->temporary, b->total_count, b->total_size);
		json_frames(f, t, b, ri);
		json_bt_end(f, t, b, o, ri);
		fputc('}', f);
	}
	fputs("]", f);
	free(e);
}

/* Compact JSON (no spaces after ':' or ','), one object on one line: JSON Lines. */
void report_write_json(FILE *f, const struct table *t, const struct report_opts *o,
		       const struct report_info *ri, const struct entry *e, uint32_t n,
		       const struct blockview *bv)
{
	const struct table_summary *s = &t->sum;

	fputs("{\"version\":", f);
	report_json_str(f, HEAPTRACE_VERSION);
	fprintf(f, ",\"pid\":%d,\"command\":", ri->pid);
	report_json_str(f, ri->command);
	if (ri->exited)
		fprintf(f, ",\"exit_status\":%d", ri->exit_status);
	else
		fputs(",\"exit_status\":null", f);
	fprintf(f,
		",\"summary\":{\"alloc_calls\":%" PRIu64 ",\"free_calls\":%" PRIu64
		",\"unknown_frees\":%" PRIu64 ",\"live_blocks\":%" PRIu64 ",\"live_bytes\":%" PRIu64
		",\"peak_live_blocks\":%" PRIu64 ",\"peak_live_bytes\":%" PRIu64
		",\"total_allocated_bytes\":%" PRIu64 ",\"temporary\":%" PRIu64
		",\"backtraces\":%" PRIu64 ",\"total_backtraces\":%" PRIu32
		",\"elapsed_ns\":%" PRIu64,
		s->alloc_calls, s->free_calls, s->unknown_frees, s->live_blocks, s->live_bytes,
		s->peak_live_blocks, s->peak_live_bytes, s->total_allocated_bytes, s->temporary,
		report_live_bts(t), t->nbts, ri->elapsed_ns);
	if (ri->inv)
		fprintf(f, ",\"freed_from_before_attach\":%" PRIu64, s->freed_from_before_attach);
	if (s->library_frees) /* the C library's frees of a thread's cache as it ends */
		fprintf(f, ",\"library_frees\":%" PRIu64, s->library_frees);
	if (ri->calls_not_seen || ri->stubs_stuck) /* heaptrace fell behind: not exact */
		fprintf(f, ",\"calls_not_seen\":%" PRIu64 ",\"stubs_turned_off\":%s"
			   ",\"counts_exact\":false",
			ri->calls_not_seen, ri->stubs_stuck ? "true" : "false");
	if (t->sample_bytes) /* each backtrace's figures are estimates (table.h) */
		fprintf(f, ",\"sample_bytes\":%" PRIu64, t->sample_bytes);
	json_heaps(f, t, ri);
	if (ri->allocators) {
		fputs(",\"allocators\":[", f);
		for (unsigned i = 0; i < ri->nallocators; i++) {
			fputs(i ? "," : "", f);
			report_json_str(f, ri->allocators[i]);
		}
		fputc(']', f);
	}
	fputc('}', f);
	if (ri->inv)
		json_inventory(f, ri->inv);
	if (ri->has_statm)
		fprintf(f, ",\"statm\":{\"vss\":%" PRIu64 ",\"rss\":%" PRIu64
			   ",\"shared\":%" PRIu64 "}",
			ri->statm_vss, ri->statm_rss, ri->statm_shared);
	fputs(",\"backtraces\":[", f);
	for (uint32_t i = 0; i < n; i++) {
		const struct bt *b = &t->bts[e[i].bt];

		fprintf(f,
			"%s{\"count\":%" PRIu64 ",\"peak_count\":%" PRIu64 ",\"size\":%" PRIu64
			",\"peak_size\":%" PRIu64 ",\"age_ns\":%" PRIu64 ",\"total_count\":%" PRIu64
			",\"total_size\":%" PRIu64 ",\"alloc_calls\":%" PRIu64
			",\"temporary\":%" PRIu64 ",\"frames\":[",
			i ? "," : "", e[i].count, b->peak_count, e[i].size, b->peak_size,
			report_since(ri->now_ns, b->first_ns), b->total_count, b->total_size,
			b->total_count, b->temporary);
		json_frames(f, t, b, ri);
		json_bt_end(f, t, b, o, ri);
		fputs(",\"heap\":", f);
		report_json_str(f, report_heap_name(ri, b->heap));
		if (bv)
			blockview_json(f, bv, t, e[i].bt, ri->now_ns);
		fputc('}', f);
	}
	fputs("]", f);
	if (o->only_leaked || o->temporary)
		fprintf(f, ",\"lifetime\":\"%s\"", o->temporary ? "temporary" : "leaked");
	json_peak(f, t, o, ri);
	json_temporary(f, t, o, ri);
	if (ri->extra_json)
		ri->extra_json(f, ri->extra_ctx);
	fputs("}\n", f);
}
