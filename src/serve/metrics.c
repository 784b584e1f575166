// SPDX-License-Identifier: GPL-2.0-only
/* /metrics in Prometheus' text format (metrics.h). */
#include <inttypes.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "heap/hooks.h"
#include "serve/metrics.h"

/* The length of the UTF-8 character at s (at most n bytes there), 0 if it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 :
		     (s[0] & 0xf8) == 0xf0 ? 4 : 0;

	if (!len || len > n || (len == 2 && s[0] < 0xc2))
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

void metrics_label(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), out = 0;

	while (n && out < METRICS_LABEL_MAX) {
		size_t len = utf8_len(p, n);

		if (!len) {
			fputc('?', f);
			len = 1;
		} else if (*p == '\\' || *p == '"') {
			fprintf(f, "\\%c", *p);
		} else if (*p == '\n') {
			fputs("\\n", f);
		} else {
			fwrite(p, 1, len, f);
		}
		p += len;
		n -= len;
		out += len;
	}
}

static void help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static void labels(FILE *f, const struct capture_proc *p, const char *heap)
{
	fprintf(f, "{pid=\"%d\",command=\"", (int)p->pid);
	metrics_label(f, p->command);
	fputc('"', f);
	if (heap)
		fprintf(f, ",heap=\"%s\"", heap);
	fputc('}', f);
}

/* The heaps of the run: malloc's, and the others named by the options. */
static const char *heap_of(unsigned h)
{
	return hook_heap_name(h);
}

/* One value of every process and heap. Which: an offset into struct table_summary. */
static void per_heap(FILE *f, const struct capture_metrics *m, const char *name,
		     const char *type, const char *text, size_t which, bool malloc_only)
{
	help(f, name, type, text);
	for (unsigned i = 0; i < m->nprocs; i++) {
		const struct capture_proc *p = &m->procs[i];

		for (unsigned h = 0; h < HEAP_MAX && h < TABLE_HEAPS; h++) {
			if (!heap_of(h) || (malloc_only && h))
				continue;
			fputs(name, f);
			labels(f, p, heap_of(h));
			fprintf(f, " %" PRIu64 "\n",
				*(const uint64_t *)((const char *)&p->sum[h] + which));
		}
	}
}

#define SUM(field) offsetof(struct table_summary, field)

/* heaptrace's own CPU and resident memory. */
static void own(FILE *f)
{
	struct rusage ru;
	long pages = 0, rss = 0, page = sysconf(_SC_PAGESIZE);
	FILE *sf = fopen("/proc/self/statm", "re");

	getrusage(RUSAGE_SELF, &ru);
	help(f, "process_cpu_seconds_total", "counter",
	     "CPU time heaptrace itself used (user and system), in seconds.");
	fprintf(f, "process_cpu_seconds_total %.6f\n",
		ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	if (sf) {
		if (fscanf(sf, "%ld %ld", &pages, &rss) != 2)
			rss = -1;
		fclose(sf);
	}
	if (sf && rss >= 0) {
		help(f, "process_resident_memory_bytes", "gauge",
		     "Resident memory of heaptrace itself, in bytes.");
		fprintf(f, "process_resident_memory_bytes %ld\n", rss * page);
	}
}

void metrics_write(FILE *f, const struct capture_metrics *m)
{
	help(f, "heaptrace_processes", "gauge", "Processes heaptrace traces now.");
	fprintf(f, "heaptrace_processes %u\n", m->nprocs);
	per_heap(f, m, "heaptrace_live_bytes", "gauge", "Bytes in live blocks.",
		 SUM(live_bytes), false);
	per_heap(f, m, "heaptrace_live_blocks", "gauge", "Live blocks.", SUM(live_blocks), false);
	per_heap(f, m, "heaptrace_peak_live_bytes", "gauge",
		 "The most bytes that were live at once.", SUM(peak_live_bytes), false);
	per_heap(f, m, "heaptrace_peak_live_blocks", "gauge",
		 "The most blocks that were live at once.", SUM(peak_live_blocks), false);
	per_heap(f, m, "heaptrace_alloc_calls_total", "counter",
		 "Allocation calls (a moving realloc counts one, and one free).", SUM(alloc_calls),
		 false);
	per_heap(f, m, "heaptrace_free_calls_total", "counter", "Calls that freed a block.",
		 SUM(free_calls), false);
	per_heap(f, m, "heaptrace_unknown_frees_total", "counter",
		 "Frees of blocks heaptrace never saw allocated.", SUM(unknown_frees), false);
	per_heap(f, m, "heaptrace_allocated_bytes_total", "counter",
		 "Bytes of every allocation made.", SUM(total_allocated_bytes), true);
	help(f, "heaptrace_target_resident_bytes", "gauge",
	     "Resident memory of the traced process, in bytes.");
	for (unsigned i = 0; i < m->nprocs; i++) {
		if (!m->procs[i].has_statm)
			continue;
		fputs("heaptrace_target_resident_bytes", f);
		labels(f, &m->procs[i], NULL);
		fprintf(f, " %" PRIu64 "\n", m->procs[i].rss);
	}
	help(f, "heaptrace_ring_waiting_bytes", "gauge",
	     "Bytes of records the entry stubs wrote that heaptrace had not read yet.");
	for (unsigned i = 0; i < m->nprocs; i++) {
		fputs("heaptrace_ring_waiting_bytes", f);
		labels(f, &m->procs[i], NULL);
		fprintf(f, " %" PRIu64 "\n", m->procs[i].ring_waiting);
	}
	help(f, "heaptrace_calls_not_seen_total", "counter",
	     "Calls the entry stubs left unrecorded as heaptrace fell behind for longer than "
	     "--max-stall, or whose return a jump took: when nonzero, the other counts are not "
	     "exact.");
	for (unsigned i = 0; i < m->nprocs; i++) {
		fputs("heaptrace_calls_not_seen_total", f);
		labels(f, &m->procs[i], NULL);
		fprintf(f, " %" PRIu64 "\n", m->procs[i].calls_not_seen);
	}
	help(f, "heaptrace_ring_records_total", "counter",
	     "Calls recorded by entry stubs and read by heaptrace.");
	fprintf(f, "heaptrace_ring_records_total %" PRIu64 "\n", m->ring_records);
	help(f, "heaptrace_ring_full_waits_total", "counter",
	     "Times a stub found its ring full and waited for heaptrace.");
	fprintf(f, "heaptrace_ring_full_waits_total %" PRIu64 "\n", m->ring_waits);
	own(f);
}
