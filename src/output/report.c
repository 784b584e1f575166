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
#include "output/labels.h"
#include "unwind/frames.h"
#include "heap/hooks.h"
#include "output/report.h"
#include "output/reportint.h"
#include "util/util.h"



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

uint64_t report_since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

int report_entry_cmp(const void *a, const void *b)
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
	       report_since(ri->now_ns, table_block_ns(t, blk)) >= o->older_ns &&
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
	for (uint64_t s = 0; filtered && s < t->live.cap; s++) {
		const struct block *blk = &t->live.slots[s];
		uint64_t w;

		if (!blk->ptr || !report_keeps_block(t, blk, o, ri))
			continue;
		w = table_weight(t, &t->bts[blk->bt], blk->size);
		e[blk->bt].count += w;
		e[blk->bt].size += w * blk->size;
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
	qsort(e, k, sizeof(*e), report_entry_cmp);
	*n = k;
	return e;
}

static void resolve(const struct report_info *ri, const struct table *t, const struct bt *b,
		    unsigned idx, struct sym_frame *sf)
{
	report_frame(ri, t, b, idx, sf);
}

/* Was b cut at --depth? It was if it has that many frames and its last is neither where
 * the unwinder stopped for lack of information nor a function every stack of a thread starts
 * in (a stack of exactly --depth frames is whole). The blocks found at the attach have no
 * call chain to cut. */
bool report_truncated(const struct table *t, const struct bt *b, const struct report_opts *o,
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

/* A time in decimal units, as classic heaptrace: unit[0] below 1000, then unit[1..3] with
 * three decimals; the thresholds keep "1000.000 ms" from appearing. */
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

/* n bytes in binary units (the README's convention): B below 1 KiB, then KiB, MiB, GiB with
 * three decimals. */
static const char *fmt_size(char *buf, size_t len, uint64_t n)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = n / 1024.0;
	unsigned u = 0;

	if (n < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", n);
		return buf;
	}
	while (v >= 1023.9995 && u + 1 < ARRAY_SIZE(unit)) { /* no "1024.000 KiB" */
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.3f %s", v, unit[u]);
	return buf;
}

static const char *fmt_age(char *buf, size_t len, uint64_t ns)
{
	static const char *const unit[4] = { "ns", "us", "ms", "sec" };

	return fmt_scaled(buf, len, ns, unit);
}

uint64_t report_live_bts(const struct table *t)
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

/* b's frames, one a line; return whether one of them is marked [guess]. */
static bool text_frames(FILE *f, const struct table *t, const struct bt *b,
			const struct report_info *ri, const struct report_opts *o)
{
	const uint64_t *pcs = table_bt_pcs(t, b);
	char buf[32];
	bool guessed = false;

	for (uint32_t d = 0; d < b->depth; d++) {
		struct sym_frame sf;

		resolve(ri, t, b, d, &sf);
		if (d && frames_how_of(pcs[d]) == FRAMES_PYTHON && !table_bt_before_attach(t, b))
			snprintf(buf, sizeof(buf), "python");
		else
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
			if (!table_bt_before_attach(t, b) && frames_how_of(pcs[d]) != FRAMES_PYTHON)
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
		else if (report_frame_guessed(t, b, d) && (guessed = true))
			fputs(" [guess]", f);
		if (sf.jit) /* named from a JIT's perf map */
			fputs(" [jit]", f);
		fputc('\n', f);
	}
	if (report_truncated(t, b, o, ri))
		fprintf(f, "%2u [%14s] [...] (cut at --depth=%u)\n", b->depth, "", o->depth_limit);
	return guessed;
}

/* " [by: LABEL]" of a backtrace's header line (labels.h). */
static void text_label(FILE *f, const struct table *t, const struct bt *b,
		       const struct report_info *ri)
{
	char buf[512];

	report_label(ri, t, b, buf, sizeof(buf));
	fputs(" [by: ", f);
	text_name(f, buf);
	fputc(']', f);
}

/* The legend of [guess], once in a report that has one. */
static void text_guess_note(FILE *f, bool guessed)
{
	if (guessed)
		fputs("[heaptrace] note: frames marked [guess] (and labels marked '?') were found by "
		      "scanning the stack where unwinding failed: they may be stale return "
		      "addresses, not callers\n", f);
}

/* The backtraces live when the heap peaked, largest first; their number in *n (caller frees). */
struct entry *report_peak_bts(const struct table *t, uint32_t *n)
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
	qsort(e, k, sizeof(*e), report_entry_cmp);
	*n = k;
	return e;
}

/* When the heap peaked, as time since tracing started. */
uint64_t report_peak_elapsed(const struct table *t, const struct report_info *ri)
{
	uint64_t ago = report_since(ri->now_ns, t->sum.peak_ns);

	return ri->elapsed_ns > ago ? ri->elapsed_ns - ago : 0;
}

/* A heap that peaked this high counts as notable even when nothing is live at the end: its
 * report shows the heap at its peak. */
#define REPORT_NOTABLE_PEAK (1024 * 1024)

/* The heap at its peak, under its own heading, when it was at least twice the heap now.
 * Return whether a frame is marked [guess]. */
static bool text_peak(FILE *f, const struct table *t, const struct report_opts *o,
		      const struct report_info *ri)
{
	const struct table_summary *s = &t->sum;
	char b1[32], b2[32];
	uint32_t n;
	struct entry *e;
	bool guessed = false;

	if (!s->peak_live_bytes || s->peak_live_bytes < 2 * s->live_bytes)
		return false;
	e = report_peak_bts(t, &n);
	fprintf(f, "\n=== heap at its peak: %s in %" PRIu64 " blocks, %s after the start ===\n\n",
		fmt_size(b1, sizeof(b1), s->peak_live_bytes), s->peak_at_blocks,
		fmt_age(b2, sizeof(b2), report_peak_elapsed(t, ri)));
	for (uint32_t i = 0; i < n && (!o->top || i < o->top); i++) {
		fprintf(f, "=== peak #%u === [count: %" PRIu64 "] [size: %s]", i + 1, e[i].count,
			fmt_size(b1, sizeof(b1), e[i].size));
		text_label(f, t, &t->bts[e[i].bt], ri);
		fputc('\n', f);
		guessed |= text_frames(f, t, &t->bts[e[i].bt], ri, o);
		fputc('\n', f);
	}
	free(e);
	return guessed;
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
const char *report_heap_name(const struct report_info *ri, unsigned h)
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

		if (!report_heap_name(ri, h))
			continue;
		fprintf(f, "[heaptrace] heap %s: %" PRIu64 " blocks, %s live; peak %" PRIu64
			   " blocks, %s\n", report_heap_name(ri, h), s->live_blocks,
			fmt_size(b1, sizeof(b1), s->live_bytes), s->peak_live_blocks,
			fmt_size(b2, sizeof(b2), s->peak_live_bytes));
	}
}

static bool text_bt(FILE *f, const struct table *t, const struct report_opts *o,
		    const struct report_info *ri, const struct entry *e, uint32_t i,
		    const struct blockview *bv)
{
	const struct bt *b = &t->bts[e->bt];
	char b1[32], b2[32], b3[32];
	bool guessed;

	if (o->temporary) {
		fprintf(f, "=== backtrace #%u === [temporary: %" PRIu64 " of %" PRIu64
			   " calls] [size: %s]", i + 1, e->count, b->total_count,
			fmt_size(b1, sizeof(b1), e->size));
	} else {
		fprintf(f, "=== backtrace #%u === [count/peak: %" PRIu64 "/%" PRIu64 "] ", i + 1,
			e->count, b->peak_count);
		fprintf(f, "[size/peak: %s/%s] [age: %s]", fmt_size(b1, sizeof(b1), e->size),
			fmt_size(b2, sizeof(b2), b->peak_size),
			fmt_age(b3, sizeof(b3), report_since(ri->now_ns, b->first_ns)));
		if (b->heap)
			fprintf(f, " [heap: %s]", report_heap_name(ri, b->heap));
	}
	text_label(f, t, b, ri);
	fputc('\n', f);
	guessed = text_frames(f, t, b, ri, o);
	if (bv && !o->temporary)
		blockview_text(f, bv, t, e->bt, ri->now_ns);
	fputc('\n', f);
	return guessed;
}

static void text_summary(FILE *f, const struct table *t, const struct report_info *ri)
{
	char b1[32], b2[32], b3[32];

	fprintf(f, "[heaptrace] heap traced num of backtrace : %" PRIu64 "\n", report_live_bts(t));
	fprintf(f, "[heaptrace] heap traced allocation size  : %s\n",
		fmt_size(b1, sizeof(b1), t->sum.live_bytes));
	fprintf(f, "[heaptrace] calls (alloc/free/unknown)   : %" PRIu64 " / %" PRIu64 " / %" PRIu64
		   "\n", t->sum.alloc_calls, t->sum.free_calls, t->sum.unknown_frees);
	fprintf(f, "[heaptrace] peak (size/blocks then/time) : %s / %" PRIu64 " / %s\n",
		fmt_size(b1, sizeof(b1), t->sum.peak_live_bytes), t->sum.peak_at_blocks,
		fmt_age(b2, sizeof(b2), report_peak_elapsed(t, ri)));
	fprintf(f, "[heaptrace] most live blocks at any time : %" PRIu64 "\n",
		t->sum.peak_live_blocks);
	if (ri->has_statm)
		fprintf(f, "[heaptrace] statm info (VSS/RSS/shared)  : %s / %s / %s\n",
			fmt_size(b1, sizeof(b1), ri->statm_vss),
			fmt_size(b2, sizeof(b2), ri->statm_rss),
			fmt_size(b3, sizeof(b3), ri->statm_shared));
	if (ri->calls_not_seen || ri->stubs_stuck)
		fprintf(f, "[heaptrace] calls not seen               : %" PRIu64 "%s (heaptrace "
			   "fell behind for longer than --max-stall, or a jump took a return%s): "
			   "the counts are not exact\n",
			ri->calls_not_seen, ri->stubs_stuck ? " and all since" : "",
			ri->stubs_stuck ? ", then its entry stubs were turned off" : "");
	if (t->sample_bytes)
		fprintf(f, "[heaptrace] sampled (--sample-bytes)     : 1 allocation in %" PRIu64
			   " bytes on average: each backtrace's figures are estimates, the lines "
			   "above are exact\n", t->sample_bytes);
	text_heaps(f, t, ri);
	if (ri->allocators) {
		fputs("[heaptrace] allocators traced         :", f);
		for (unsigned i = 0; i < ri->nallocators; i++)
			fprintf(f, "%s %s", i ? "," : "", ri->allocators[i]);
		fputs(ri->nallocators ? "\n" : " none\n", f);
	}
}

static void write_text(FILE *f, const struct table *t, const struct report_opts *o,
		       const struct report_info *ri, const struct entry *e, uint32_t n,
		       const struct blockview *bv)
{
	bool notable = n || t->sum.peak_live_bytes >= REPORT_NOTABLE_PEAK, guessed = false;

	if (notable || ri->inv)
		text_header(f, ri);
	if (ri->inv)
		text_inventory(f, t, ri->inv);
	/* like classic heaptrace: a clean heap prints nothing, unless it was once large; then
	 * its peak below says where the memory went */
	if (!notable)
		return;
	if (o->top && n > o->top)
		n = o->top;
	for (uint32_t i = 0; i < n; i++)
		guessed |= text_bt(f, t, o, ri, &e[i], i, bv);
	write_stopped(f, t, ri, e, n);
	if (!t->sum.live_blocks)
		fputs("[heaptrace] nothing is live at the end: the heap at its peak follows\n", f);
	text_summary(f, t, ri);
	guessed |= text_peak(f, t, o, ri);
	text_guess_note(f, guessed);
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
		if (report_truncated(t, b, o, ri))
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
		report_write_json(f, t, o, ri, e, n, o->blocks ? &bv : NULL);
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
