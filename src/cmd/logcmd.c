// SPDX-License-Identifier: GPL-2.0-only
/* heaptrace report and heaptrace diff: their options and output file (logcmd.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/logcmd.h"
#include "cmd/offline.h"
#include "cmd/options.h"
#include "trace/tracer.h" /* EXIT_* */
#include "util/log.h"
#include "util/util.h"

/* report and diff stop at SIGINT, SIGTERM, SIGHUP and SIGQUIT as other commands do (tracing
 * takes them: events.c blocks them all first). */
static void offline_signals(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGHUP);
	sigaddset(&s, SIGQUIT);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
}

/* LOG or LOG@WHEN into o's path and moment (arg is kept: the path may point into it). */
static bool parse_side(char *arg, struct offline_opts *o)
{
	char *at = strrchr(arg, '@');

	o->path = arg;
	o->at = AT_END;
	if (!at)
		return true;
	if (!strcmp(at + 1, "peak"))
		o->at = AT_PEAK;
	else if (opt_parse_u64(at + 1, &o->at_ms) && o->at_ms <= UINT64_MAX / 1000000)
		o->at = AT_TIME;
	else if (strcmp(at + 1, "end"))
		return true; /* an '@' in the file name */
	*at = '\0';
	return !(o->at != AT_END && !strcmp(arg, "-"));
}

/* The options both offline commands take besides the report's: return 0, or -1 if c is none. */
static int offline_option(int c, struct offline_opts *o, const char **outfile)
{
	switch (c) {
	case OPT_OUTFILE:
		*outfile = optarg;
		return 0;
	case OPT_SYSROOT:
		o->sysroot = optarg;
		return 0;
	case OPT_DEBUGINFO:
		o->debuginfo_path = optarg;
		return 0;
	default:
		return -1;
	}
}
/* Standard output, or --outfile opened; NULL after saying why. */
static FILE *open_out(const char *outfile)
{
	FILE *f = outfile ? fopen(outfile, "we") : stdout;

	if (!f)
		pr_err("cannot open --outfile %s: %s", outfile, strerror(errno));
	return f;
}

/* Close f (from open_out) after a command that returned ret; the exit status. */
static int close_out(FILE *f, const char *outfile, int ret)
{
	if (f != stdout && fclose(f) && !ret) {
		pr_err("writing %s: %s", outfile, strerror(errno));
		ret = -EIO;
	}
	return ret ? EXIT_START : 0;
}

/* heaptrace diff [OPTION...] A B */
int logcmd_diff(int argc, char **argv)
{
	struct option longopts[OPT_MAX + 1];
	char shortopts[64] = "+:";
	struct offline_opts a = { .report = { .format = FMT_TEXT, .top = 10 } }, b;
	const char *outfile = NULL;
	int c, ret, pid_b = 0;
	bool debuginfod = false;
	char *comma;

	offline_signals();
	opt_getopt_tables(diff_table, diff_table_n, longopts, shortopts);
	while ((c = getopt_long(argc, argv, shortopts + 1, longopts, NULL)) != -1) {
		if (!offline_option(c, &a, &outfile))
			continue;
		switch (c) {
		case OPT_DEBUGINFOD:
			debuginfod = true;
			break;
		case OPT_PID: /* PID for both logs, or PID_A,PID_B */
			comma = strchr(optarg, ',');
			if (comma)
				*comma = '\0';
			if (!opt_parse_pid(optarg, &a.pid) || !opt_parse_pid(comma ? comma + 1 : optarg, &pid_b)) {
				if (comma)
					*comma = ',';
				return opt_usage_error("invalid --pid '%s' (PID, or PID_A,PID_B)", optarg);
			}
			break;
		case 'h':
			opt_usage(stdout);
			return 0;
		default:
			ret = opt_report(c, &a.report);
			if (ret < 0)
				return opt_error(c, argv[optind - 1]);
			if (ret)
				return ret;
			if (a.report.format == FMT_FOLDED)
				return opt_usage_error("%s", "diff: the format is text or json, or html for a page");
		}
	}
	if (argc - optind != 2)
		return opt_usage_error("%s", "diff: give two logs, A and B (LOG or LOG@WHEN)");
	ret = opt_debuginfod_setup(debuginfod);
	if (ret)
		return ret;
	b = a;
	b.pid = pid_b;
	if (!parse_side(argv[optind], &a) || !parse_side(argv[optind + 1], &b))
		return opt_usage_error("%s", "diff: a moment of - (standard input) cannot be read");
	if (!strcmp(a.path, "-") && !strcmp(b.path, "-"))
		return opt_usage_error("%s", "diff: standard input can be one of the logs, not both");
	b.out = open_out(outfile);
	if (!b.out)
		return EXIT_START;
	return close_out(b.out, outfile, offline_diff(&a, &b));
}

/* heaptrace report [OPTION...] FILE */
int logcmd_report(int argc, char **argv)
{
	struct option longopts[OPT_MAX + 1];
	char shortopts[64] = "+:";
	struct offline_opts o = {
		.report = { .format = FMT_TEXT, .sort = SORT_SIZE, .top = 10,
			    .max_size = UINT64_MAX },
	};
	const char *outfile = NULL;
	int c, ret;
	bool debuginfod = false;

	offline_signals();
	opt_getopt_tables(report_table, report_table_n, longopts, shortopts);
	/* options may follow FILE: GNU order, no '+' */
	while ((c = getopt_long(argc, argv, shortopts + 1, longopts, NULL)) != -1) {
		if (!offline_option(c, &o, &outfile))
			continue;
		switch (c) {
		case OPT_TIMELINE:
			o.timeline = true;
			break;
		case OPT_CALLS:
			o.calls = true;
			break;
		case OPT_DEBUGINFOD:
			debuginfod = true;
			break;
		case OPT_PID:
			if (!opt_parse_pid(optarg, &o.pid))
				return opt_usage_error("invalid --pid '%s'", optarg);
			break;
		case OPT_FORMAT:
			o.heaptrack = !strcmp(optarg, "heaptrack");
			o.pprof = !strcmp(optarg, "pprof");
			o.massif = !strcmp(optarg, "massif");
			if (o.heaptrack || o.pprof || o.massif)
				break;
			ret = opt_report(c, &o.report);
			if (ret)
				return ret;
			break;
		case OPT_AT:
			if (!strcmp(optarg, "end"))
				o.at = AT_END;
			else if (!strcmp(optarg, "peak"))
				o.at = AT_PEAK;
			else if (opt_parse_u64(optarg, &o.at_ms) && o.at_ms <= UINT64_MAX / 1000000)
				o.at = AT_TIME;
			else
				return opt_usage_error("invalid --at '%s' (end, peak, or milliseconds)",
						   optarg);
			break;
		case 'h':
			opt_usage(stdout);
			return 0;
		default:
			ret = opt_report(c, &o.report);
			if (ret < 0)
				return opt_error(c, argv[optind - 1]);
			if (ret)
				return ret;
		}
	}
	if (optind >= argc)
		return opt_usage_error("%s", "report: no log file given");
	if (optind + 1 < argc)
		return opt_usage_error("report: one log file only ('%s' is another)", argv[optind + 1]);
	ret = opt_check_lifetime(&o.report);
	if (ret)
		return ret;
	if (o.calls && (o.heaptrack || o.report.format == FMT_FOLDED))
		return opt_usage_error("%s", "--calls prints text or json");
	if (o.heaptrack && (o.report.only_leaked || o.report.temporary || o.report.blocks))
		return opt_usage_error("%s", "--format=heaptrack writes the whole run: no --only-leaked, "
					 "--temporary or --blocks");
	ret = opt_debuginfod_setup(debuginfod);
	if (ret)
		return ret;
	o.path = argv[optind];
	if (o.massif && o.at != AT_END)
		return opt_usage_error("%s", "--format=massif shows the whole run: no --at");
	if ((o.at != AT_END || o.heaptrack) && !strcmp(o.path, "-"))
		return opt_usage_error("%s", "--at and --format=heaptrack read the log twice: give a "
					 "file, not -");
	if (o.pprof && !outfile && isatty(STDOUT_FILENO))
		return opt_usage_error("%s", "--format=pprof is gzip-compressed binary data: give "
					 "--outfile=FILE, or redirect standard output");
	o.out = open_out(outfile);
	if (!o.out)
		return EXIT_START;
	return close_out(o.out, outfile, offline_report(&o));
}
