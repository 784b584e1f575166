// SPDX-License-Identifier: GPL-2.0-only
/* The option tables, --help and the parsers of option values (options.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/options.h"
#include "eventlog/record.h"
#include "symbols/dbgserver.h"
#include "trace/tracer.h" /* EXIT_* */
#include "util/log.h"
#include "util/util.h"

/* One table: struct option, the short-option string and --help all come from it. */
const struct opt_desc opt_table[] = {
	{ "pid", 'p', "PID[,PID...]", "attach to running processes and all their threads" },
	{ "duration", OPT_DURATION, "SECS", "stop tracing after SECS (fractions allowed)" },
	{ "depth", 'd', "N", "backtrace depth kept per allocation (default " "%d" ")" },
	{ "sort", 's', "KEY", "size (default), count, peak-size, peak-count, age" },
	{ "top", OPT_TOP, "NUM", "backtraces shown by the text report (default 10)" },
	{ "outfile", OPT_OUTFILE, "FILE", "write the report to FILE instead of stderr" },
	{ "flame-graph", OPT_FLAME, NULL, "write folded stacks for flamegraph.pl" },
	{ "format", OPT_FORMAT, "FMT", "text (default), json, folded, html" },
	{ "follow-fork", 'f', NULL, "also trace children made by fork, vfork and clone" },
	{ "interval", OPT_INTERVAL, "SECS", "print the report every SECS while tracing" },
	{ "live", OPT_LIVE, NULL, "a top-like view of the heap every --interval (default 1 s)" },
	{ "serve", OPT_SERVE, "ADDR", "serve pprof profiles and Prometheus metrics over HTTP at "
				      "ADDR (IP:PORT, PORT or a unix socket path)" },
	{ "count", OPT_COUNT, "N", "at most N periodic reports" },
	{ "older", OPT_OLDER, "MS", "report only allocations at least MS milliseconds old" },
	{ "min-size", OPT_MIN_SIZE, "N", "report only allocations of at least N bytes" },
	{ "max-size", OPT_MAX_SIZE, "N", "report only allocations of at most N bytes" },
	{ "only-leaked", OPT_ONLY_LEAKED, NULL, "report only blocks never freed (final report)" },
	{ "temporary", OPT_TEMPORARY, NULL, "report temporary allocations, not live blocks" },
	{ "blocks", OPT_BLOCKS, NULL, "list each live block under its backtrace" },
	{ "trace-calls", OPT_TRACE_CALLS, NULL, "print each call as it is traced" },
	{ "sample", OPT_SAMPLE, "N", "unwind every N-th allocation only; counts stay exact" },
	{ "sample-bytes", OPT_SAMPLE_BYTES, "N", "take allocations by chance, one per N bytes on "
						"average; per-backtrace figures are estimates" },
	{ "alloc", OPT_ALLOC, "FUNC:SIZE_ARG[:COUNT_ARG][@HEAP]",
	  "also trace the program's own allocation function FUNC (arguments from 1)" },
	{ "realloc", OPT_REALLOC, "FUNC:PTR_ARG:SIZE_ARG[@HEAP]",
	  "also trace the program's own resizing function FUNC" },
	{ "free", OPT_FREE, "FUNC:PTR_ARG[@HEAP]", "also trace the program's own release function "
						   "FUNC" },
	{ "mmap", OPT_MMAP, NULL, "also count anonymous mappings (mmap, munmap, mremap, sbrk) as "
				  "the heap mmap" },
	{ "mode", OPT_MODE, "MODE", "stubs (default: no stop per call where safe) or breakpoint" },
	{ "stack-copy", OPT_STACK_COPY, "BYTES", "stack bytes an entry stub copies per allocation "
						 "for the unwinder (default: learned, at most "
						 "8192)" },
	{ "max-stall", OPT_MAX_STALL, "MS", "longest wait of a traced call for heaptrace "
					    "to catch up, then it goes unrecorded (default 20)" },
	{ "no-pin", OPT_NO_PIN, NULL, "breakpoint mode: do not share one CPU with a "
				      "single-threaded program" },
	{ "no-inventory", OPT_NO_INVENTORY, NULL,
	  "with --pid, do not read the heap found at the attach" },
	{ "core", OPT_CORE, "FILE", "report the heap of an ELF core file instead of tracing" },
	{ "exe", OPT_EXE, "PROGRAM", "with --core, the program that dumped it (static glibc)" },
	{ "symbols", OPT_SYMBOLS, "FILE", "symbols of a stripped module from FILE (by build-id)" },
	{ "debug-dir", OPT_DEBUG_DIR, "DIR", "separate debug files in DIR/.build-id/" },
	{ "record", OPT_RECORD, "FILE", "also write the event log to FILE (- : stdout, with -p)" },
	{ "verbose", 'v', NULL, "more diagnostics (repeat for debug output)" },
	{ "help", 'h', NULL, "show this help and exit" },
	{ "version", OPT_VERSION, NULL, "show the version and exit" },
};

/* The options of `heaptrace report FILE`, in the same form. */
const struct opt_desc report_table[] = {
	{ "format", OPT_FORMAT, "FMT", "text (default), json, folded, html, heaptrack, pprof, massif" },
	{ "outfile", OPT_OUTFILE, "FILE", "write the report to FILE instead of stdout" },
	{ "sort", 's', "KEY", "size (default), count, peak-size, peak-count, age" },
	{ "top", OPT_TOP, "NUM", "backtraces shown by the text report (default 10)" },
	{ "older", OPT_OLDER, "MS", "report only allocations at least MS milliseconds old" },
	{ "min-size", OPT_MIN_SIZE, "N", "report only allocations of at least N bytes" },
	{ "max-size", OPT_MAX_SIZE, "N", "report only allocations of at most N bytes" },
	{ "only-leaked", OPT_ONLY_LEAKED, NULL, "report only blocks never freed by the end" },
	{ "temporary", OPT_TEMPORARY, NULL, "report temporary allocations, not live blocks" },
	{ "blocks", OPT_BLOCKS, NULL, "list each live block under its backtrace" },
	{ "calls", OPT_CALLS, NULL, "print every call up to the moment, then the report" },
	{ "at", OPT_AT, "WHEN", "the heap at: end (default), peak, or MS after the start" },
	{ "timeline", OPT_TIMELINE, NULL, "add the heap over time (a table, or JSON timeline)" },
	{ "pid", OPT_PID, "PID", "only process PID of a -f log (one file: needed if several)" },
	{ "sysroot", OPT_SYSROOT, "DIR", "the recorded machine's files are under DIR" },
	{ "debuginfo-path", OPT_DEBUGINFO, "DIRS", "more directories of debug files (a:b)" },
	{ "debuginfod", OPT_DEBUGINFOD, NULL, "also ask the debuginfod servers of DEBUGINFOD_URLS" },
	{ "verbose", 'v', NULL, "more diagnostics (repeat for debug output)" },
	{ "help", 'h', NULL, "show this help and exit" },
};

/* The options of `heaptrace diff A B`. */
const struct opt_desc diff_table[] = {
	{ "format", OPT_FORMAT, "FMT", "text (default), json, html" },
	{ "outfile", OPT_OUTFILE, "FILE", "write the report to FILE instead of stdout" },
	{ "top", OPT_TOP, "NUM", "backtraces shown by the text report (default 10)" },
	{ "pid", OPT_PID, "PID[,PID]", "the process of A and B of -f logs (one pid: both)" },
	{ "sysroot", OPT_SYSROOT, "DIR", "the recorded machine's files are under DIR" },
	{ "debuginfo-path", OPT_DEBUGINFO, "DIRS", "more directories of debug files (a:b)" },
	{ "debuginfod", OPT_DEBUGINFOD, NULL, "also ask the debuginfod servers of DEBUGINFOD_URLS" },
	{ "verbose", 'v', NULL, "more diagnostics (repeat for debug output)" },
	{ "help", 'h', NULL, "show this help and exit" },
};

const size_t opt_table_n = ARRAY_SIZE(opt_table);
const size_t report_table_n = ARRAY_SIZE(report_table);
const size_t diff_table_n = ARRAY_SIZE(diff_table);
_Static_assert(ARRAY_SIZE(opt_table) <= OPT_MAX && ARRAY_SIZE(report_table) <= OPT_MAX &&
	       ARRAY_SIZE(diff_table) <= OPT_MAX, "OPT_MAX is too small");

/* The table getopt_long works from now (option_error names its options). */
static const struct opt_desc *cur_table = opt_table;
static size_t cur_n = ARRAY_SIZE(opt_table);

static void list_options(FILE *f, const struct opt_desc *table, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct opt_desc *o = &table[i];
		char left[64], help[128];

		if (o->val < 256) /* "-p, --pid=PID" */
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->val, o->name,
				 o->arg ? "=" : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? "=" : "",
				 o->arg ? o->arg : "");
		snprintf(help, sizeof(help), o->help, HEAPTRACE_DEPTH);
		if (strlen(left) > 22) /* a long argument: the help on a line of its own */
			fprintf(f, "  %s\n  %-22s %s\n", left, "", help);
		else
			fprintf(f, "  %-22s %s\n", left, help);
	}
}

void opt_usage(FILE *f)
{
	fprintf(f, "Usage: heaptrace [OPTION...] [--] PROGRAM [ARG...]\n"
		   "       heaptrace [OPTION...] -p PID\n"
		   "       heaptrace [OPTION...] --core=FILE [--exe=PROGRAM]\n"
		   "       heaptrace report [OPTION...] FILE\n"
		   "       heaptrace diff [OPTION...] A B\n\n"
		   "Trace the heap of a program from outside with ptrace: live blocks and bytes\n"
		   "per allocation backtrace.\n\nOptions:\n");
	list_options(f, opt_table, ARRAY_SIZE(opt_table));
	fprintf(f, "\nheaptrace report FILE reads a log written by --record (FILE - : stdin)\n"
		   "and writes its final report to stdout, symbolised on this machine by\n"
		   "build-id; log format version %u (newer logs are refused). Options:\n",
		RECORD_VERSION);
	list_options(f, report_table, ARRAY_SIZE(report_table));
	fprintf(f, "\nheaptrace diff A B: per backtrace, the growth of the live heap from A to B,\n"
		   "largest first; A and B are logs, each LOG or LOG@WHEN (end, peak, or MS\n"
		   "after the start: two moments of one log). Options:\n");
	list_options(f, diff_table, ARRAY_SIZE(diff_table));
	fprintf(f, "\n--live keys: s sort (size, count, growth), p pause, up/down and enter\n"
		   "a backtrace's frames, q or Ctrl-C detach (the program runs on).\n");
	fprintf(f, "\nSignals: SIGUSR1 prints the report by size, SIGUSR2 by count; SIGINT and\n"
		   "SIGTERM print the final report and detach.\n"
		   "Exit status: the program's own (128+signal if killed), 0 after --pid,\n"
		   "1 on a usage error, 2 when tracing could not start, the report or the\n"
		   "log could not be written, or (report) FILE is not a log heaptrace reads.\n");
}

int opt_usage_error(const char *fmt, const char *arg)
{
	fputs("heaptrace: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see heaptrace --help)\n", stderr);
	return EXIT_USAGE;
}

/*
 * The usage error for getopt_long's c (':' a value is missing, '?' otherwise). optopt is the
 * option's letter or OPT_* value, 0 for an unknown or ambiguous long option; arg is the last
 * argv element getopt looked at (a short option's letter may be inside a group, as in "-vx").
 */
int opt_error(int c, const char *arg)
{
	const struct opt_desc *o = NULL;
	char name[80];
	size_t len;

	for (size_t i = 0; i < cur_n; i++)
		if (optopt && cur_table[i].val == optopt)
			o = &cur_table[i];
	if (!strncmp(arg, "--", 2) && (o || !optopt)) {
		len = strcspn(arg, "=");
		if (o) /* named in full, also when abbreviated */
			snprintf(name, sizeof(name), "--%s", o->name);
		else
			snprintf(name, sizeof(name), "%.*s", (int)(len < 60 ? len : 60), arg);
	} else {
		snprintf(name, sizeof(name), "-%c", optopt);
	}
	if (c == ':')
		return opt_usage_error("option '%s' needs a value", name);
	if (o && !o->arg)
		return opt_usage_error("option '%s' takes no value", name);
	if (!optopt) {
		unsigned matches = 0;

		len = strcspn(arg + 2, "=");
		for (size_t i = 0; i < cur_n; i++)
			matches += !strncmp(cur_table[i].name, arg + 2, len);
		if (matches > 1)
			return opt_usage_error("ambiguous option '%s'", name);
	}
	return opt_usage_error("unknown option '%s'", name);
}

bool opt_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

bool opt_parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e9)
		return false;
	*out = v;
	return true;
}

/* Fill longopts (n + 1 entries) and shortopts (64 bytes, starting "+:") from table. */
void opt_getopt_tables(const struct opt_desc *table, size_t n, struct option *longopts,
			  char *shortopts)
{
	for (size_t i = 0, k = 2; i < n; i++) {
		longopts[i] = (struct option){ table[i].name,
					       table[i].arg ? required_argument : no_argument, NULL,
					       table[i].val };
		if (table[i].val < 256) {
			shortopts[k++] = table[i].val;
			if (table[i].arg)
				shortopts[k++] = ':';
		}
	}
	memset(&longopts[n], 0, sizeof(longopts[0]));
	cur_table = table;
	cur_n = n;
	opterr = 0;
}

static bool parse_format(const char *s, enum report_format *out)
{
	static const char *const names[] = { [FMT_TEXT] = "text", [FMT_JSON] = "json",
					     [FMT_FOLDED] = "folded", [FMT_HTML] = "html" };

	for (unsigned i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return true;
		}
	}
	return false;
}

/* The report options both commands share; return 0, -1 if c is not one, or the usage error's
 * exit status. */
int opt_report(int c, struct report_opts *r)
{
	uint64_t v;

	switch (c) {
	case 's':
		if (report_parse_sort(optarg, &r->sort))
			return opt_usage_error("invalid sort key '%s' (size, count, peak-size, "
					   "peak-count, age)", optarg);
		return 0;
	case OPT_TOP:
		if (!opt_parse_u64(optarg, &v) || v > UINT32_MAX)
			return opt_usage_error("invalid --top '%s'", optarg);
		r->top = v;
		return 0;
	case OPT_FORMAT:
		if (!parse_format(optarg, &r->format))
			return opt_usage_error("invalid format '%s' (text, json, folded, html)", optarg);
		return 0;
	case OPT_OLDER:
		if (!opt_parse_u64(optarg, &v) || v > UINT64_MAX / 1000000)
			return opt_usage_error("invalid --older '%s' (milliseconds)", optarg);
		r->older_ns = v * 1000000;
		return 0;
	case OPT_MIN_SIZE:
		if (!opt_parse_u64(optarg, &r->min_size))
			return opt_usage_error("invalid --min-size '%s'", optarg);
		return 0;
	case OPT_MAX_SIZE:
		if (!opt_parse_u64(optarg, &r->max_size))
			return opt_usage_error("invalid --max-size '%s'", optarg);
		return 0;
	case OPT_ONLY_LEAKED:
		r->only_leaked = true;
		return 0;
	case OPT_TEMPORARY:
		r->temporary = true;
		return 0;
	case OPT_BLOCKS:
		r->blocks = true;
		return 0;
	case 'v':
		log_level++;
		r->show_how = true; /* how each frame was found (frames.h) */
		return 0;
	default:
		return -1;
	}
}

/* The lifetime filters against the others; 0 or the usage error's exit status. */
int opt_check_lifetime(const struct report_opts *r)
{
	if (r->min_size > r->max_size)
		return opt_usage_error("%s", "--min-size is larger than --max-size");
	if (r->temporary && (r->only_leaked || r->blocks || r->older_ns || r->min_size ||
			     r->max_size != UINT64_MAX))
		return opt_usage_error("%s", "--temporary reports blocks already freed: --only-leaked, "
					 "--blocks, --older, --min-size and --max-size do not go "
					 "with it");
	return 0;
}

/* The debuginfod servers: asked only with --debuginfod (dbgserver.h). Return 0 or the usage
 * error's exit status. */
int opt_debuginfod_setup(bool wanted)
{
	int ret = dbgserver_setup(wanted);

	if (ret == -ENOSYS)
		return opt_usage_error("%s", "--debuginfod: libdebuginfod.so.1 cannot be loaded "
					 "(or this heaptrace was built without it)");
	if (ret)
		return opt_usage_error("%s", "--debuginfod: DEBUGINFOD_URLS names no server");
	return 0;
}

/* --pid's PID: true and *pid set, or false. */
bool opt_parse_pid(const char *s, int *pid)
{
	uint64_t v;

	if (!opt_parse_u64(s, &v) || !v || v > INT32_MAX)
		return false;
	*pid = (int)v;
	return true;
}
