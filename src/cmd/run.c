// SPDX-License-Identifier: GPL-2.0-only
/* The tracing command: its options, their checks, the run and its output files (run.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "cmd/core.h"
#include "cmd/logcmd.h"
#include "cmd/options.h"
#include "cmd/program.h"
#include "cmd/run.h"
#include "eventlog/record.h"
#include "heap/custom.h"
#include "heap/hooks.h"
#include "output/calltrace.h"
#include "patch/stubs.h"
#include "serve/server.h"
#include "symbols/symbols.h"
#include "trace/hints.h"
#include "trace/tracer.h"
#include "ui/live.h"
#include "util/log.h"
#include "util/util.h"

#define RUN_MAX_PIDS 64

/* What the command line asks of a trace. */
struct run_args {
	struct tracer_opts o;
	const char *outfile, *core, *exe, *record;
	bool trace_calls; /* --trace-calls */
	bool customs; /* --alloc, --realloc, --free or --mmap */
	pid_t pids[RUN_MAX_PIDS]; /* -p PID,PID... */
};

/* -p PID[,PID...] (again: more of them); a pid given twice counts once. Return 0 or the usage
 * error's exit status. */
static int parse_pids(const char *arg, struct run_args *a)
{
	char buf[32];

	for (const char *s = arg;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		uint64_t v;
		unsigned i;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (!opt_parse_u64(buf, &v) || !v || v > INT32_MAX)
			return opt_usage_error("invalid process id '%s'", buf);
		for (i = 0; i < a->o.npids && a->pids[i] != (pid_t)v; i++)
			;
		if (i == a->o.npids) {
			if (a->o.npids == RUN_MAX_PIDS)
				return opt_usage_error("%s", "at most 64 processes with -p");
			a->pids[a->o.npids++] = (pid_t)v;
		}
		if (!comma)
			break;
		s = comma + 1;
	}
	a->o.pids = a->pids;
	a->o.pid = a->pids[0];
	return 0;
}

/* One tracing option c (its value in optarg): 0, -1 if c is none, or the usage error's exit
 * status. */
static int trace_option(int c, struct run_args *a)
{
	char why[256];
	uint64_t v;
	int ret;

	switch (c) {
	case 'p':
		return parse_pids(optarg, a);
	case OPT_SERVE:
		if (serve_parse(optarg, why, sizeof(why)))
			return opt_usage_error("%s", why);
		a->o.serve = &serve_view;
		return 0;
	case OPT_DURATION:
		if (!opt_parse_secs(optarg, &a->o.duration))
			return opt_usage_error("invalid duration '%s'", optarg);
		return 0;
	case 'd':
		if (!opt_parse_u64(optarg, &v) || !v || v > MAX_DEPTH)
			return opt_usage_error("invalid depth '%s' (1 to 256)", optarg);
		a->o.depth = v;
		return 0;
	case OPT_OUTFILE:
		a->outfile = optarg;
		return 0;
	case OPT_RECORD:
		a->record = optarg;
		return 0;
	case OPT_TRACE_CALLS:
		a->trace_calls = true;
		return 0;
	case OPT_FLAME:
		a->o.report.format = FMT_FOLDED;
		return 0;
	case 'f':
		a->o.follow_fork = true;
		return 0;
	case OPT_NO_PIN:
		a->o.pin = false;
		return 0;
	case OPT_MODE:
		if (!strcmp(optarg, "stubs"))
			a->o.mode = MODE_STUBS;
		else if (!strcmp(optarg, "breakpoint"))
			a->o.mode = MODE_BREAKPOINT;
		else
			return opt_usage_error("invalid mode '%s' (stubs, breakpoint)", optarg);
		return 0;
	case OPT_STACK_COPY:
		if (!opt_parse_u64(optarg, &v) || v < 64 || v > 65536)
			return opt_usage_error("invalid --stack-copy '%s' (64 to 65536)", optarg);
		a->o.stack_copy = v;
		return 0;
	case OPT_MAX_STALL:
		if (!opt_parse_u64(optarg, &v) || v > 60000)
			return opt_usage_error("invalid --max-stall '%s' (0 to 60000 ms)", optarg);
		a->o.max_stall_ms = v;
		return 0;
	case OPT_SYMBOLS:
		ret = prog_add_symbols(optarg);
		if (ret)
			return ret;
		return 0;
	case OPT_DEBUG_DIR:
		ret = sym_set_debug_dir(optarg);
		if (ret) {
			pr_err("--debug-dir=%s: %s", optarg, strerror(-ret));
			return EXIT_USAGE;
		}
		return 0;
	case OPT_NO_INVENTORY:
		a->o.inventory = false;
		return 0;
	case OPT_CORE:
		a->core = optarg;
		return 0;
	case OPT_EXE:
		a->exe = optarg;
		return 0;
	case OPT_INTERVAL:
		if (!opt_parse_secs(optarg, &a->o.interval))
			return opt_usage_error("invalid interval '%s'", optarg);
		return 0;
	case OPT_LIVE:
		a->o.live = &live_view;
		return 0;
	case OPT_COUNT:
		if (!opt_parse_u64(optarg, &v) || !v || v > UINT32_MAX)
			return opt_usage_error("invalid count '%s'", optarg);
		a->o.count = v;
		return 0;
	case OPT_SAMPLE:
		if (!opt_parse_u64(optarg, &v) || !v || v > UINT32_MAX)
			return opt_usage_error("invalid --sample '%s'", optarg);
		a->o.sample = v;
		return 0;
	case OPT_SAMPLE_BYTES:
		if (!opt_parse_u64(optarg, &v) || !v || v > TRACER_SAMPLE_BYTES_MAX)
			return opt_usage_error("invalid --sample-bytes '%s' (1 to 2^40)", optarg);
		a->o.sample_bytes = v;
		return 0;
	case OPT_ALLOC:
	case OPT_REALLOC:
	case OPT_FREE:
		if (custom_add(c == OPT_ALLOC ? CUSTOM_ALLOC : c == OPT_REALLOC ?
			       CUSTOM_REALLOC : CUSTOM_FREE, optarg, why, sizeof(why)))
			return opt_usage_error("%s", why);
		a->customs = true;
		return 0;
	case OPT_MMAP:
		hook_enable_mmap();
		a->customs = true;
		return 0;
	default:
		return -1;
	}
}

/* Parse the options before PROGRAM into a. Return 0, or the exit status (*done: --help or
 * --version was answered, exit 0). */
static int parse_options(int argc, char **argv, struct run_args *a, bool *done)
{
	struct option longopts[OPT_MAX + 1];
	char shortopts[64] = "+:"; /* '+': stop at PROGRAM; ':': a missing value is ':', not '?' */
	int c, ret;

	opt_getopt_tables(opt_table, opt_table_n, longopts, shortopts);
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h' || c == OPT_VERSION) {
			if (c == 'h')
				opt_usage(stdout);
			else
				printf("heaptrace %s (%s)\n", HEAPTRACE_VERSION, arch->name);
			*done = true;
			return 0;
		}
		ret = trace_option(c, a);
		if (ret < 0) /* a report option, or ':' or '?' */
			ret = opt_report(c, &a->o.report);
		if (ret < 0)
			return opt_error(c, argv[optind - 1]);
		if (ret)
			return ret;
	}
	return 0;
}

/* The options against each other. Return 0 or the usage error's exit status. */
static int check_options(int argc, struct run_args *a)
{
	char why[256];
	int ret;

	ret = opt_check_lifetime(&a->o.report);
	if (ret)
		return ret;
	if (a->o.pid && optind < argc)
		return opt_usage_error("%s", "give either --pid or a program, not both");
	if (a->core && (a->o.pid || optind < argc))
		return opt_usage_error("%s", "--core reads a core file: no --pid or program with it");
	if (a->exe && !a->core)
		return opt_usage_error("%s", "--exe goes with --core");
	if (a->customs && a->core)
		return opt_usage_error("%s", "--alloc, --realloc, --free and --mmap trace calls: not "
					 "with --core");
	if (custom_commit(why, sizeof(why)))
		return opt_usage_error("%s", why);
	if (!a->o.pid && !a->core && optind >= argc)
		return opt_usage_error("%s", "no program to trace");
	/* the program's CPU is chosen for it only in breakpoint mode, where stops are shared */
	if (a->o.mode == MODE_STUBS && stubs_supported())
		a->o.pin = false;
	if (a->o.count && !a->o.interval)
		return opt_usage_error("%s", "--count needs --interval");
	if (a->o.serve && a->core)
		return opt_usage_error("%s", "--serve serves a traced run, not a core file");
	if (a->o.live && (a->o.count || a->core))
		return opt_usage_error("%s", a->o.count ? "--count limits periodic reports, not --live" :
						   "--live watches a running program, not a core file");
	a->o.report.depth_limit = a->o.depth;
	a->o.report.label_process = a->o.follow_fork;
	if (a->record && !strcmp(a->record, "-") && !a->o.pid && !a->core)
		return opt_usage_error("%s", "--record=- needs --pid (a launched program writes to the "
					 "same standard output)");
	if (a->record && !strcmp(a->record, "-") && a->o.live)
		return opt_usage_error("%s", "--record=- and --live both want standard output");
	if (a->record && !*a->record)
		return opt_usage_error("%s", "--record needs a file name");
	if (a->record && a->core)
		return opt_usage_error("%s", "--record logs a traced run, not a core file");
	if (a->o.sample_bytes && (a->o.sample > 1 || a->record || a->trace_calls || a->core))
		return opt_usage_error("--sample-bytes goes with none of %s",
				       "--sample, --record, --trace-calls, --core");
	if (a->trace_calls && (a->core || a->o.report.format == FMT_FOLDED))
		return opt_usage_error("%s", "--trace-calls prints the calls of a traced run, in text or "
					 "json");

	return 0;
}

/* PROGRAM found and checked as exec would see it (not with --pid or --core). Return 0 or the
 * exit status. */
static int find_program(char **argv, struct run_args *a)
{
	int ret;

	if (!a->o.pid && !a->core) {
		int err;
		char *path = prog_find(argv[optind], &err);

		if (!path) {
			pr_err("%s: %s", argv[optind],
			       err == ENOENT && !strchr(argv[optind], '/') ? "command not found" :
									      strerror(err));
			return EXIT_START;
		}
		ret = prog_check_symbols(argv[optind], path);
		if (!ret)
			ret = prog_check(argv[optind], path);
		if (ret) {
			free(path);
			return ret;
		}
		a->o.path = path;
		a->o.argv = argv + optind;
	}
	return 0;
}

/* --outfile and --record opened. Return 0 or the exit status (a->o.path freed). */
static int open_outputs(struct run_args *a)
{
	int ret;

	if (a->outfile) {
		a->o.out = fopen(a->outfile, "we");
		if (!a->o.out) {
			pr_err("cannot open --outfile %s: %s", a->outfile, strerror(errno));
			free((char *)a->o.path);
			return EXIT_START;
		}
	} else {
		a->o.out = stderr;
	}
	if (a->record && (ret = record_open(a->record, a->o.depth))) {
		pr_err("cannot open --record %s: %s", a->record, strerror(-ret));
		if (a->o.out != stderr)
			fclose(a->o.out);
		free((char *)a->o.path);
		return EXIT_START;
	}
	return 0;
}

/* Trace (or report the core file), then close the outputs. Return the exit status. */
static int trace_and_close(struct run_args *a)
{
	struct calltrace trace;
	int ret;

	if (a->trace_calls) {
		calltrace_init(&trace, a->o.out, a->o.report.format == FMT_JSON);
		record_trace_calls(&calltrace_record_calls, &trace);
	}
	if (a->o.path)
		hints_launch(a->o.path);
	if (a->core)
		ret = core_report(a->core, a->exe, a->o.out, &a->o.report) ? EXIT_START : 0;
	else
		ret = tracer_run(&a->o);
	if (a->trace_calls) {
		record_trace_flush();
		calltrace_destroy(&trace);
	}
	free((char *)a->o.path);
	if (a->record) {
		int err = record_close();

		if (err) {
			pr_err("writing --record %s: %s", a->record, strerror(-err));
			ret = EXIT_START;
		}
	}
	if (a->o.out != stderr) {
		/* a failed report write was said already (tracer_run then returns EXIT_START) */
		bool said = ferror(a->o.out);

		if (fclose(a->o.out) && !said) {
			pr_err("writing %s: %s", a->outfile, strerror(errno));
			ret = EXIT_START;
		}
	}
	return ret;
}

int run_trace(int argc, char **argv)
{
	struct run_args a = {
		.o = {
			.depth = HEAPTRACE_DEPTH,
			.sample = 1,
			.pin = true,
			.mode = MODE_STUBS,
			.stack_copy = 0, /* learned (stubs_setup) */
			.max_stall_ms = 20,
			.inventory = true,
			.report = { .format = FMT_TEXT, .sort = SORT_SIZE, .top = 10,
				    .max_size = UINT64_MAX },
		},
	};
	bool done = false;
	int ret = parse_options(argc, argv, &a, &done);

	if (ret || done)
		return ret;
	/* options of tracing, then a command word (heaptrace -v report LOG; "--" before it
	 * names a program): the options are left to the command's own */
	if (optind < argc && strcmp(argv[optind - 1], "--") &&
	    (!strcmp(argv[optind], "report") || !strcmp(argv[optind], "diff"))) {
		char **sub = argv + optind;

		optind = 0; /* getopt starts afresh */
		return !strcmp(sub[0], "report") ? logcmd_report(argc - (int)(sub - argv), sub) :
						   logcmd_diff(argc - (int)(sub - argv), sub);
	}
	ret = check_options(argc, &a);
	if (!ret)
		ret = find_program(argv, &a);
	if (!ret)
		ret = open_outputs(&a);
	return ret ? ret : trace_and_close(&a);
}
