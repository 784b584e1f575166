// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reports: pick the backtraces with live blocks (optionally counting only the blocks that pass
 * the size/age filters), sort them, and print text, JSON Lines or folded stacks. This is the
 * only place that symbolises PCs, through the resolver in struct report_info.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/blockview.h"
#include "unwind/frames.h"
#include "heap/hooks.h"
#include "output/report.h"
#include "util/util.h"

#ifndef HEAPTRACE_VERSION
#define HEAPTRACE_VERSION "0.0.0"
#endif

struct entry {
	uint32_t bt;
	uint64_t count, size; /* live, after filters */
	uint64_t key; /* ascending sort key */
};

static const char *const sort_names[] = {
	[SORT_SIZE] = "size",
	[SORT_COUNT] = "count",
	[SORT_PEAK_SIZE] = "peak-size",
	[SORT_PEAK_COUNT] = "peak-count",
	[SORT_AGE] = "age",
};

int report_parse_sort(const char *s, enum report_sort *out)
{
	for (unsigned i = 0; i < ARRAY_SIZE(sort_names); i++) {
		if (!strcmp(s, sort_names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->bt < y->bt ? -1 : x->bt > y->bt;
}

bool report_keeps_block(const struct table *t, const struct block *blk,
			const struct report_opts *o, const struct report_info *ri)
{
	return blk->size >= o->min_size && blk->size <= o->max_size &&
	       since(ri->now_ns, table_block_ns(t, blk)) >= o->older_ns &&
	       (!ri->keep || ri->keep(ri->keep_ctx, blk));
}

/* The filters of report_write, for blockview_build. */
struct keep_args {
	const struct report_opts *o;
	const struct report_info *ri;
};

static bool keeps_block(void *ctx, const struct table *t, const struct block *blk)
{
	const struct keep_args *k = ctx;

	return report_keeps_block(t, blk, k->o, k->ri);
}

/* Return the sorted list of backtraces to report (caller frees) and its length in *n. */
static struct entry *select_bts(const struct table *t, const struct report_opts *o,
				const struct report_info *ri, uint32_t *n)
{
	bool filtered = !o->temporary && (o->older_ns || o->min_size ||
					  o->max_size != UINT64_MAX || ri->keep);
	struct entry *e = xmalloc((t->nbts ? t->nbts : 1) * sizeof(*e));
	uint32_t i, k = 0;

	for (i = 0; i < t->nbts; i++) {
		e[i].bt = i;
		e[i].count = filtered ? 0 : o->temporary ? t->bts[i].temporary : t->bts[i].count;
		e[i].size = filtered ? 0 : o->temporary ? t->bts[i].temporary_size : t->bts[i].size;
	}
	for (uint64_t s = 0; filtered && s < t->blocks_cap; s++) {
		const struct block *blk = &t->blocks[s];

		if (!blk->ptr || !report_keeps_block(t, blk, o, ri))
			continue;
		e[blk->bt].count++;
		e[blk->bt].size += blk->size;
	}

	for (i = 0; i < t->nbts; i++) {
		const struct bt *b = &t->bts[i];
		uint64_t v;

		if (!e[i].count)
			continue;
		switch (o->sort) {
		case SORT_COUNT:
			v = e[i].count;
			break;
		case SORT_PEAK_SIZE:
			v = b->peak_size;
			break;
		case SORT_PEAK_COUNT:
			v = b->peak_count;
			break;
		case SORT_AGE:
			v = ~b->first_ns; /* oldest first: smallest first_ns */
			break;
		default:
			v = e[i].size;
			break;
		}
		e[k] = e[i];
		e[k++].key = ~v; /* largest first */
	}
	qsort(e, k, sizeof(*e), entry_cmp);
	*n = k;
	return e;
}

/* Frame idx of backtrace b. The blocks found at the attach have no call site: their two
 * frames name the group ("[before attach]") and its size class. */
static void resolve(const struct report_info *ri, const struct table *t, const struct bt *b,
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

/* Was b cut at --depth? It was if it has that many frames and its last is neither where
 * the unwinder stopped for lack of information nor a function every stack of a thread starts
 * in (a stack of exactly --depth frames is whole). The blocks found at the attach have no
 * call chain to cut. */
static bool truncated(const struct table *t, const struct bt *b, const struct report_opts *o,
		      const struct report_info *ri)
{
	static const char *const outermost[] = { "_start", "__start", "clone", "__clone",
						 "clone3", "__clone3" };
	uint64_t last;
	struct sym_frame sf;

	if (!o->depth_limit || b->depth < o->depth_limit || table_bt_before_attach(t, b))
		return false;
	last = table_bt_pcs(t, b)[b->depth - 1];
	if (last & FRAMES_STOPPED)
		return false;
	resolve(ri, t, b, b->depth - 1, &sf);
	for (unsigned i = 0; sf.function && i < ARRAY_SIZE(outermost); i++)
		if (!strcmp(sf.function, outermost[i]))
			return false;
	return true;
}

/* The program's name: the base name of the command's first word. */
static void comm_of(const char *command, char *buf, size_t len)
{
	const char *end = command ? strchr(command, ' ') : NULL, *base;
	size_t n;

	if (!command) {
		snprintf(buf, len, "?");
		return;
	}
	n = end ? (size_t)(end - command) : strlen(command);
	for (base = command + n; base > command && base[-1] != '/'; base--)
		;
	n -= (size_t)(base - command);
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), base);
}

/* v in decimal units, as classic heaptrace: unit[0] below 1000, then unit[1..3] with three
 * decimals; the thresholds keep "1000.000 MB" from appearing. */
static const char *fmt_scaled(char *buf, size_t len, uint64_t v, const char *const unit[4])
{
	if (v < 1000)
		snprintf(buf, len, "%" PRIu64 " %s", v, unit[0]);
	else if (v < 1000000)
		snprintf(buf, len, "%.3f %s", v / 1e3, unit[1]);
	else if (v < 999999500)
		snprintf(buf, len, "%.3f %s", v / 1e6, unit[2]);
	else
		snprintf(buf, len, "%.3f %s", v / 1e9, unit[3]);
	return buf;
}

static const char *fmt_size(char *buf, size_t len, uint64_t n)
{
	static const char *const unit[4] = { "bytes", "KB", "MB", "GB" };

	return fmt_scaled(buf, len, n, unit);
}

static const char *fmt_age(char *buf, size_t len, uint64_t ns)
{
	static const char *const unit[4] = { "ns", "us", "ms", "sec" };

	return fmt_scaled(buf, len, ns, unit);
}

static uint64_t live_bts(const struct table *t)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < t->nbts; i++)
		n += t->bts[i].count > 0;
	return n;
}

/* A name on one text line: control characters (never in real symbols) become '?'. */
static void text_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
}

/* The "heap at attach" section: the allocator's own figures at the moment of the attach. */
static void text_inventory(FILE *f, const struct table *t, const struct inventory *inv)
{
	char b1[32], b2[32], b3[32], b4[32];

	fprintf(f, "[heaptrace] heap at attach (%s%s): %" PRIu64 " live blocks, %s live\n",
		inv->allocator[0] ? inv->allocator : "allocator not recognised",
		inv->complete ? "" : ", PARTIAL", inv->live_blocks,
		fmt_size(b1, sizeof(b1), inv->live_bytes));
	fprintf(f, "[heaptrace]   heap %s in %u arenas, free %s (largest free chunk %s), "
		   "%" PRIu64 " mmapped blocks of %s\n",
		fmt_size(b1, sizeof(b1), inv->heap_bytes), inv->arenas,
		fmt_size(b2, sizeof(b2), inv->free_bytes),
		fmt_size(b3, sizeof(b3), inv->largest_free), inv->mmapped_blocks,
		fmt_size(b4, sizeof(b4), inv->mmapped_bytes));
	fprintf(f, "[heaptrace]   threads stopped %.1f ms for the copy; %" PRIu64
		   " of these blocks freed since\n", inv->stop_ms, t->sum.freed_from_before_attach);
	for (size_t i = 0; i < inv->ntypes && i < 5; i++) {
		fprintf(f, "[heaptrace]   type %s: %" PRIu64 " blocks, %s\n", inv->types[i].name,
			inv->types[i].blocks, fmt_size(b1, sizeof(b1), inv->types[i].bytes));
	}
	for (unsigned i = 0; i < inv->nproblems; i++)
		fprintf(f, "[heaptrace]   problem: %s\n", inv->problems[i]);
}

/*
 * The modules where backtraces stopped for lack of unwind information, one note each with the
 * number of backtraces: without it a short backtrace looks like a complete one.
 */
static void write_stopped(FILE *f, const struct table *t, const struct report_info *ri,
			  const struct entry *e, uint32_t n)
{
	const char *seen[16];
	unsigned count[16], nseen = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct bt *b = &t->bts[e[i].bt];
		uint64_t last = b->depth ? table_bt_pcs(t, b)[b->depth - 1] : 0;
		struct sym_frame sf;
		unsigned k;

		if (table_bt_before_attach(t, b) || !(last & FRAMES_STOPPED))
			continue;
		resolve(ri, t, b, b->depth - 1, &sf);
		if (!sf.module)
			sf.module = "??";
		for (k = 0; k < nseen && strcmp(seen[k], sf.module); k++)
			;
		if (k == nseen && nseen < ARRAY_SIZE(seen)) {
			seen[nseen] = sf.module;
			count[nseen++] = 0;
		}
		if (k < nseen)
			count[k]++;
	}
	for (unsigned k = 0; k < nseen; k++) {
		fprintf(f, "[heaptrace] note: %u backtrace%s stopped early in ", count[k],
			count[k] == 1 ? "" : "s");
		text_name(f, seen[k]);
		fputs(": no unwind information there (build with -fasynchronous-unwind-tables, or "
		      "keep .debug_frame)\n", f);
	}
}

static void text_frames(FILE *f, const struct table *t, const struct bt *b,
			const struct report_info *ri, const struct report_opts *o)
{
	const uint64_t *pcs = table_bt_pcs(t, b);
	char buf[32];

	for (uint32_t d = 0; d < b->depth; d++) {
		struct sym_frame sf;

		resolve(ri, t, b, d, &sf);
		snprintf(buf, sizeof(buf), "0x%" PRIx64, frames_addr(pcs[d]));
		/* code inlined at the pc, innermost first, numbered as the frame it is in */
		for (unsigned k = 0; k < sf.ninlined; k++) {
			const struct sym_inline *in = &sf.inlined[k];

			fprintf(f, "   [%14s] ", buf);
			text_name(f, in->function ? in->function : "??");
			if (in->file && in->line > 0) {
				fputs(" (", f);
				text_name(f, in->file);
				fprintf(f, ":%d)", in->line);
			}
			fputs(" [inlined]\n", f);
		}
		fprintf(f, "%2u [%14s] ", d, buf);
		if (sf.function) {
			text_name(f, sf.function);
			if (!table_bt_before_attach(t, b))
				fprintf(f, " +0x%" PRIx64, sf.offset);
		} else if (sf.module) { /* where to look: the module and the offset in it */
			text_name(f, sf.module);
			fprintf(f, " +0x%" PRIx64, sf.module_offset);
		} else {
			fputs("??", f);
		}
		if (sf.file && sf.line > 0) {
			fputs(" (", f);
			text_name(f, sf.file);
			fprintf(f, ":%d)", sf.line);
		}
		if (o->show_how && d && !table_bt_before_attach(t, b))
			fprintf(f, " [%s]", frames_how_name(frames_how_of(pcs[d])));
		fputc('\n', f);
	}
	if (truncated(t, b, o, ri))
		fprintf(f, "%2u [%14s] [...] (cut at --depth=%u)\n", b->depth, "", o->depth_limit);
}

/* The backtraces live when the heap peaked, largest first; their number in *n (caller frees). */
static struct entry *peak_bts(const struct table *t, uint32_t *n)
{
	struct entry *e = xmalloc((t->nbts ? t->nbts : 1) * sizeof(*e));
	uint32_t k = 0;

	for (uint32_t i = 0; i < t->nbts; i++) {
		table_bt_at_peak(t, &t->bts[i], &e[k].count, &e[k].size);
		if (!e[k].count)
			continue;
		e[k].bt = i;
		e[k].key = ~e[k].size;
		k++;
	}
	qsort(e, k, sizeof(*e), entry_cmp);
	*n = k;
	return e;
}

/* When the heap peaked, as time since tracing started. */
static uint64_t peak_elapsed(const struct table *t, const struct report_info *ri)
{
	uint64_t ago = since(ri->now_ns, t->sum.peak_ns);

	return ri->elapsed_ns > ago ? ri->elapsed_ns - ago : 0;
}

/* A heap that peaked this high counts as notable even when nothing is live at the end. */
#define REPORT_NOTABLE_PEAK 1000000

/* The heap at its peak, under its own heading, when it was at least twice the heap now. */
static void text_peak(FILE *f, const struct table *t, const struct report_opts *o,
		      const struct report_info *ri)
{
	const struct table_summary *s = &t->sum;
	char b1[32], b2[32];
	uint32_t n;
	struct entry *e;

	if (!s->peak_live_bytes || s->peak_live_bytes < 2 * s->live_bytes)
		return;
	e = peak_bts(t, &n);
	fprintf(f, "\n=== heap at its peak: %s in %" PRIu64 " blocks, %s after the start ===\n\n",
		fmt_size(b1, sizeof(b1), s->peak_live_bytes), s->peak_at_blocks,
		fmt_age(b2, sizeof(b2), peak_elapsed(t, ri)));
	for (uint32_t i = 0; i < n && (!o->top || i < o->top); i++) {
		fprintf(f, "=== peak #%u === [count: %" PRIu64 "] [size: %s]\n", i + 1, e[i].count,
			fmt_size(b1, sizeof(b1), e[i].size));
		text_frames(f, t, &t->bts[e[i].bt], ri, o);
		fputc('\n', f);
	}
	free(e);
}

/* "[heaptrace] report for pid 1234 (prog), 3.214 s after start: final" */
static void text_header(FILE *f, const struct report_info *ri)
{
	char comm[64];

	if (!ri->kind)
		return;
	comm_of(ri->command, comm, sizeof(comm));
	fprintf(f, "[heaptrace] report for pid %d (", ri->pid);
	text_name(f, comm);
	fprintf(f, "), %.3f s after start: %s\n", ri->elapsed_ns / 1e9, ri->kind);
}

/* The name of heap h (hooks.h), NULL if there is none. */
static const char *heap_name(const struct report_info *ri, unsigned h)
{
	if (!ri->heap_names)
		return hook_heap_name(h);
	return h < HEAP_MAX ? ri->heap_names[h] : NULL;
}

/* The custom heaps (hooks.h), one line each: their blocks are not in the figures above. */
static void text_heaps(FILE *f, const struct table *t, const struct report_info *ri)
{
	char b1[32], b2[32];

	for (unsigned h = 1; h < HEAP_MAX && h < TABLE_HEAPS; h++) {
		const struct table_summary *s = &t->heap_sum[h];

		if (!heap_name(ri, h))
			continue;
		fprintf(f, "[heaptrace] heap %s: %" PRIu64 " blocks, %s live; peak %" PRIu64
			   " blocks, %s\n", heap_name(ri, h), s->live_blocks,
			fmt_size(b1, sizeof(b1), s->live_bytes), s->peak_live_blocks,
			fmt_size(b2, sizeof(b2), s->peak_live_bytes));
	}
}

/* "heaps" in the summary: the custom heaps' figures, by name (none: no "heaps"). */
static void json_heaps(FILE *f, const struct table *t, const struct report_info *ri)
{
	bool first = true;

	for (unsigned h = 1; h < HEAP_MAX && h < TABLE_HEAPS; h++) {
		const struct table_summary *s = &t->heap_sum[h];

		if (!heap_name(ri, h))
			continue;
		fputs(first ? ",\"heaps\":{" : ",", f);
		first = false;
		report_json_str(f, heap_name(ri, h));
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

static void write_text(FILE *f, const struct table *t, const struct report_opts *o,
		       const struct report_info *ri, const struct entry *e, uint32_t n,
		       const struct blockview *bv)
{
	char b1[32], b2[32], b3[32];
	bool notable = n || t->sum.peak_live_bytes >= REPORT_NOTABLE_PEAK;

	if (notable || ri->inv)
		text_header(f, ri);
	if (ri->inv)
		text_inventory(f, t, ri->inv);
	if (!n) {
		/* like classic heaptrace: a clean heap prints nothing, unless it was once large */
		if (t->sum.peak_live_bytes >= REPORT_NOTABLE_PEAK)
			fprintf(f, "[heaptrace] nothing is live; the heap peaked at %s in %" PRIu64
				   " blocks, %s after the start (the JSON report's peak, or "
				   "heaptrace report --at=peak on a --record log, shows where)\n",
				fmt_size(b1, sizeof(b1), t->sum.peak_live_bytes),
				t->sum.peak_at_blocks,
				fmt_age(b2, sizeof(b2), peak_elapsed(t, ri)));
		return;
	}
	if (o->top && n > o->top)
		n = o->top;
	for (uint32_t i = 0; i < n; i++) {
		const struct bt *b = &t->bts[e[i].bt];

		if (o->temporary) {
			fprintf(f, "=== backtrace #%u === [temporary: %" PRIu64 " of %" PRIu64
				   " calls] [size: %s]\n", i + 1, e[i].count, b->total_count,
				fmt_size(b1, sizeof(b1), e[i].size));
			text_frames(f, t, b, ri, o);
			fputc('\n', f);
			continue;
		}
		fprintf(f, "=== backtrace #%u === [count/peak: %" PRIu64 "/%" PRIu64 "] ", i + 1,
			e[i].count, b->peak_count);
		fprintf(f, "[size/peak: %s/%s] [age: %s]", fmt_size(b1, sizeof(b1), e[i].size),
			fmt_size(b2, sizeof(b2), b->peak_size),
			fmt_age(b3, sizeof(b3), since(ri->now_ns, b->first_ns)));
		if (b->heap)
			fprintf(f, " [heap: %s]", heap_name(ri, b->heap));
		fputc('\n', f);
		text_frames(f, t, b, ri, o);
		if (bv)
			blockview_text(f, bv, t, e[i].bt, ri->now_ns);
		fputc('\n', f);
	}
	write_stopped(f, t, ri, e, n);
	fprintf(f, "[heaptrace] heap traced num of backtrace : %" PRIu64 "\n", live_bts(t));
	fprintf(f, "[heaptrace] heap traced allocation size  : %s\n",
		fmt_size(b1, sizeof(b1), t->sum.live_bytes));
	fprintf(f, "[heaptrace] calls (alloc/free/unknown)   : %" PRIu64 " / %" PRIu64 " / %" PRIu64
		   "\n", t->sum.alloc_calls, t->sum.free_calls, t->sum.unknown_frees);
	fprintf(f, "[heaptrace] peak (size/blocks/time)      : %s / %" PRIu64 " / %s\n",
		fmt_size(b1, sizeof(b1), t->sum.peak_live_bytes), t->sum.peak_at_blocks,
		fmt_age(b2, sizeof(b2), peak_elapsed(t, ri)));
	if (ri->has_statm)
		fprintf(f, "[heaptrace] statm info (VSS/RSS/shared)  : %s / %s / %s\n",
			fmt_size(b1, sizeof(b1), ri->statm_vss),
			fmt_size(b2, sizeof(b2), ri->statm_rss),
			fmt_size(b3, sizeof(b3), ri->statm_shared));
	text_heaps(f, t, ri);
	if (ri->allocators) {
		fputs("[heaptrace] allocators traced         :", f);
		for (unsigned i = 0; i < ri->nallocators; i++)
			fprintf(f, "%s %s", i ? "," : "", ri->allocators[i]);
		fputs(ri->nallocators ? "\n" : " none\n", f);
	}
	text_peak(f, t, o, ri);
}

/*
 * Folded stacks, outermost frame first. A frame without a name is "[module basename]" as
 * stackcollapse-perf.pl writes it (the resolver gives no module offset), or "??" without a
 * module. ';' separates frames and newlines end records, so both become '_' inside names;
 * spaces stay (C++ signatures), since flamegraph.pl splits the count off at the last space.
 */
static void folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' || *s == '\n' || *s == '\r' ? '_' : *s, f);
}

static void write_folded(FILE *f, const struct table *t, const struct report_opts *o,
			 const struct report_info *ri, const struct entry *e, uint32_t n)
{
	char comm[64];

	comm_of(ri->command, comm, sizeof(comm));
	for (uint32_t i = 0; i < n; i++) {
		const struct bt *b = &t->bts[e[i].bt];

		if (o->label_process) {
			fputc('[', f);
			folded_name(f, comm);
			fprintf(f, " pid %d];", ri->pid);
		}
		if (truncated(t, b, o, ri))
			fputs("[...];", f);
		for (uint32_t d = b->depth; d-- > 0;) {
			struct sym_frame sf;
			const char *base;

			resolve(ri, t, b, d, &sf);
			if (sf.function) {
				folded_name(f, sf.function);
				for (unsigned k = sf.ninlined; k-- > 0;) {
					fputc(';', f);
					folded_name(f, sf.inlined[k].function ?
								sf.inlined[k].function : "??");
				}
			} else if (sf.module) {
				base = strrchr(sf.module, '/');
				fputc('[', f);
				folded_name(f, base ? base + 1 : sf.module);
				fputc(']', f);
			} else {
				fputs("??", f);
			}
			if (d)
				fputc(';', f);
		}
		fprintf(f, " %" PRIu64 "\n", e[i].size);
	}
}

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

void report_json_place(FILE *f, const struct sym_frame *sf)
{
	fputs(",\"module\":", f);
	report_json_str(f, sf->module);
	fputs(",\"file\":", f);
	report_json_str(f, sf->file);
	if (sf->line > 0)
		fprintf(f, ",\"line\":%d", sf->line);
	else
		fputs(",\"line\":null", f);
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

static void json_frames(FILE *f, const struct table *t, const struct bt *b,
			const struct report_info *ri)
{
	const uint64_t *pcs = table_bt_pcs(t, b);

	for (uint32_t d = 0; d < b->depth; d++) {
		struct sym_frame sf;

		resolve(ri, t, b, d, &sf);
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
		if (!table_bt_before_attach(t, b))
			fprintf(f, ",\"how\":\"%s\"",
				d ? frames_how_name(frames_how_of(pcs[d])) : "entry");
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
	fprintf(f, "],\"truncated\":%s", truncated(t, b, o, ri) ? "true" : "false");
}

/* ,"peak":{...}: the heap when live_bytes first reached its maximum, every backtrace. */
static void json_peak(FILE *f, const struct table *t, const struct report_opts *o,
		      const struct report_info *ri)
{
	uint32_t n;
	struct entry *e = peak_bts(t, &n);

	fprintf(f, ",\"peak\":{\"live_bytes\":%" PRIu64 ",\"live_blocks\":%" PRIu64
		   ",\"elapsed_ns\":%" PRIu64 ",\"backtraces\":[",
		t->sum.peak_live_bytes, t->sum.peak_at_blocks,
		t->sum.peak_live_bytes ? peak_elapsed(t, ri) : 0);
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
	qsort(e, n, sizeof(*e), entry_cmp);
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
static void write_json(FILE *f, const struct table *t, const struct report_opts *o,
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
		live_bts(t), t->nbts, ri->elapsed_ns);
	if (ri->inv)
		fprintf(f, ",\"freed_from_before_attach\":%" PRIu64, s->freed_from_before_attach);
	if (s->library_frees) /* a run's only: the event log does not keep them */
		fprintf(f, ",\"library_frees\":%" PRIu64, s->library_frees);
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
			since(ri->now_ns, b->first_ns), b->total_count, b->total_size,
			b->total_count, b->temporary);
		json_frames(f, t, b, ri);
		json_bt_end(f, t, b, o, ri);
		fputs(",\"heap\":", f);
		report_json_str(f, heap_name(ri, b->heap));
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

int report_write(FILE *f, const struct table *t, const struct report_opts *o,
		 const struct report_info *ri)
{
	uint32_t n;
	struct entry *e = select_bts(t, o, ri, &n);
	struct blockview bv;
	struct keep_args keep = { o, ri };

	if (o->blocks)
		blockview_build(&bv, t, keeps_block, &keep);
	switch (o->format) {
	case FMT_JSON:
		write_json(f, t, o, ri, e, n, o->blocks ? &bv : NULL);
		break;
	case FMT_FOLDED:
		write_folded(f, t, o, ri, e, n);
		break;
	default:
		write_text(f, t, o, ri, e, n, o->blocks ? &bv : NULL);
		if (ri->extra_text)
			ri->extra_text(f, ri->extra_ctx);
		break;
	}
	if (o->blocks)
		blockview_free(&bv);
	free(e);
	if (fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
