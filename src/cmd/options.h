/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_OPTIONS_H
#define HEAPTRACE_OPTIONS_H

/*
 * The option tables of the three commands (tracing, report, diff) and what parses them: each
 * table gives struct option, the short-option string and --help. Usage errors are said in one
 * line and return EXIT_USAGE (tracer.h), for the caller to exit with.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output/report.h"

#ifndef HEAPTRACE_DEPTH
#define HEAPTRACE_DEPTH 8
#endif
#ifndef HEAPTRACE_VERSION
#define HEAPTRACE_VERSION "0.0.0"
#endif
#define MAX_DEPTH 256

enum {
	OPT_DURATION = 256, OPT_TOP, OPT_OUTFILE, OPT_FLAME, OPT_FORMAT, OPT_INTERVAL, OPT_COUNT,
	OPT_OLDER, OPT_MIN_SIZE, OPT_MAX_SIZE, OPT_VERSION, OPT_SAMPLE, OPT_SAMPLE_BYTES,
	OPT_NO_PIN, OPT_MODE,
	OPT_STACK_COPY, OPT_MAX_STALL, OPT_NO_INVENTORY, OPT_CORE, OPT_EXE, OPT_SYMBOLS,
	OPT_DEBUG_DIR, OPT_RECORD, OPT_SYSROOT, OPT_DEBUGINFO, OPT_AT, OPT_TIMELINE, OPT_LIVE,
	OPT_ONLY_LEAKED, OPT_TEMPORARY,
	OPT_BLOCKS, OPT_TRACE_CALLS, OPT_CALLS, OPT_DEBUGINFOD, OPT_ALLOC, OPT_REALLOC, OPT_FREE,
	OPT_MMAP, OPT_PID, OPT_SERVE,
};

struct opt_desc {
	const char *name;
	int val; /* short letter, or OPT_* */
	const char *arg; /* NULL: no argument */
	const char *help;
};

#define OPT_MAX 64 /* options in a table at most: struct option longopts[OPT_MAX + 1] */

extern const struct opt_desc opt_table[], report_table[], diff_table[];
extern const size_t opt_table_n, report_table_n, diff_table_n;

/* --help of every command. */
void opt_usage(FILE *f);

/* "heaptrace: " fmt (with arg) and a pointer to --help on stderr; return EXIT_USAGE. */
int opt_usage_error(const char *fmt, const char *arg);

/* The usage error for getopt_long's c (':' a value is missing, '?' otherwise); arg is the last
 * argv element getopt looked at. Return EXIT_USAGE. */
int opt_error(int c, const char *arg);

/* Fill longopts (n + 1 entries) and shortopts (64 bytes, starting "+:") from table, which
 * opt_error names options from afterwards. */
void opt_getopt_tables(const struct opt_desc *table, size_t n, struct option *longopts,
		       char *shortopts);

/* Parsers of one value: true and *out set, or false. */
bool opt_parse_u64(const char *s, uint64_t *out);
bool opt_parse_secs(const char *s, double *out);
bool opt_parse_pid(const char *s, int *pid);

/* The report options every command shares; return 0, -1 if c is not one, or the usage error's
 * exit status. */
int opt_report(int c, struct report_opts *r);

/* The lifetime filters against the others; 0 or the usage error's exit status. */
int opt_check_lifetime(const struct report_opts *r);

/* The debuginfod servers: asked only with --debuginfod (dbgserver.h). Return 0 or the usage
 * error's exit status. */
int opt_debuginfod_setup(bool wanted);

#endif
