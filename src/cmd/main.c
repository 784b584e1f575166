// SPDX-License-Identifier: GPL-2.0-only
/*
 * heaptrace: options and exit codes. The only place that exits.
 *
 * Exit status: the traced program's own (128+signal when a signal killed it) when heaptrace
 * launched it; 0 after a clean --pid session; 1 on a usage error; 2 when tracing could not
 * start (no such program or process, a program that cannot run here, a process that cannot be
 * traced, permission denied, no allocator symbols found) or the report could not be written.
 * `heaptrace report FILE` exits 0, 1 on a usage error, 2 when FILE is not a log it reads
 * (missing, truncated, corrupt, a newer format) or the report could not be written.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "output/calltrace.h"
#include "cmd/core.h"
#include "heap/custom.h"
#include "symbols/dbgserver.h"
#include "target/events.h"
#include "trace/hints.h"
#include "heap/hooks.h"
#include "util/log.h"
#include "cmd/offline.h"
#include "eventlog/record.h"
#include "symbols/symbols.h"
#include "patch/stubs.h"
#include "trace/tracer.h"
#include "util/util.h"

#ifndef HEAPTRACE_DEPTH
#define HEAPTRACE_DEPTH 8
#endif
#ifndef HEAPTRACE_VERSION
#define HEAPTRACE_VERSION "0.0.0"
#endif
#define MAX_DEPTH 256

enum {
	OPT_DURATION = 256, OPT_TOP, OPT_OUTFILE, OPT_FLAME, OPT_FORMAT, OPT_INTERVAL, OPT_COUNT,
	OPT_OLDER, OPT_MIN_SIZE, OPT_MAX_SIZE, OPT_VERSION, OPT_SAMPLE, OPT_NO_PIN, OPT_MODE,
	OPT_STACK_COPY, OPT_NO_INVENTORY, OPT_CORE, OPT_EXE, OPT_SYMBOLS, OPT_DEBUG_DIR, OPT_RECORD,
	OPT_SYSROOT, OPT_DEBUGINFO, OPT_AT, OPT_TIMELINE, OPT_LIVE, OPT_ONLY_LEAKED, OPT_TEMPORARY,
	OPT_BLOCKS, OPT_TRACE_CALLS, OPT_CALLS, OPT_DEBUGINFOD, OPT_ALLOC, OPT_REALLOC, OPT_FREE,
	OPT_MMAP, OPT_PID,
};

/* One table: struct option, the short-option string and --help all come from it. */
static const struct opt_desc {
	const char *name;
	int val; /* short letter, or OPT_* */
	const char *arg; /* NULL: no argument */
	const char *help;
} opt_table[] = {
	{ "pid", 'p', "PID", "attach to a running process and all its threads" },
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
	{ "count", OPT_COUNT, "N", "at most N periodic reports" },
	{ "older", OPT_OLDER, "MS", "report only allocations at least MS milliseconds old" },
	{ "min-size", OPT_MIN_SIZE, "N", "report only allocations of at least N bytes" },
	{ "max-size", OPT_MAX_SIZE, "N", "report only allocations of at most N bytes" },
	{ "only-leaked", OPT_ONLY_LEAKED, NULL, "report only blocks never freed (final report)" },
	{ "temporary", OPT_TEMPORARY, NULL, "report temporary allocations, not live blocks" },
	{ "blocks", OPT_BLOCKS, NULL, "list each live block under its backtrace" },
	{ "trace-calls", OPT_TRACE_CALLS, NULL, "print each call as it is traced" },
	{ "sample", OPT_SAMPLE, "N", "unwind every N-th allocation only; counts stay exact" },
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
						 "for the unwinder (default 8192)" },
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
static const struct opt_desc report_table[] = {
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
static const struct opt_desc diff_table[] = {
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

static void usage(FILE *f)
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

static int usage_error(const char *fmt, const char *arg)
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
static int option_error(int c, const char *arg)
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
		return usage_error("option '%s' needs a value", name);
	if (o && !o->arg)
		return usage_error("option '%s' takes no value", name);
	if (!optopt) {
		unsigned matches = 0;

		len = strcspn(arg + 2, "=");
		for (size_t i = 0; i < cur_n; i++)
			matches += !strncmp(cur_table[i].name, arg + 2, len);
		if (matches > 1)
			return usage_error("ambiguous option '%s'", name);
	}
	return usage_error("unknown option '%s'", name);
}

static bool parse_u64(const char *s, uint64_t *out)
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

static bool parse_secs(const char *s, double *out)
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

/* Find PROGRAM like a shell does: a name with a slash as is, otherwise along PATH. */
static char *find_program(const char *name, int *err)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	int first_err = ENOENT;

	if (strchr(name, '/')) {
		*err = access(name, F_OK) ? errno : access(name, X_OK) ? errno : 0;
		return *err ? NULL : xstrdup(name);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)len, path, len ? "/" : "", name);
		if (!stat(buf, &st) && S_ISREG(st.st_mode)) {
			if (!access(buf, X_OK)) {
				*err = 0;
				return xstrdup(buf);
			}
			first_err = EACCES;
		}
		path += len + (path[len] == ':');
	}
	*err = first_err;
	return NULL;
}

/* The architecture of ELF machine and class, as uname -m says it ("" for an unknown one). */
static const char *machine_name(int machine, int elf_class)
{
	static const struct {
		int machine, elf_class; /* elf_class 0: either */
		const char *name;
	} names[] = {
		{ EM_X86_64, ELFCLASS64, "x86_64" }, { EM_X86_64, ELFCLASS32, "x32" },
		{ EM_386, 0, "i386 (32-bit x86)" }, { EM_AARCH64, ELFCLASS64, "aarch64" },
		{ EM_AARCH64, ELFCLASS32, "aarch64 ILP32" }, { EM_ARM, 0, "arm" },
		{ EM_MIPS, ELFCLASS64, "mips64" }, { EM_MIPS, 0, "mips" },
		{ EM_PPC64, 0, "ppc64" }, { EM_PPC, 0, "ppc" },
		{ EM_RISCV, ELFCLASS64, "riscv64" }, { EM_RISCV, 0, "riscv32" },
		{ EM_S390, ELFCLASS64, "s390x" }, { EM_S390, 0, "s390" },
		{ EM_SPARCV9, 0, "sparc64" }, { EM_SPARC, 0, "sparc" }, { EM_IA_64, 0, "ia64" },
		{ 258 /* EM_LOONGARCH */, 0, "loongarch64" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].machine == machine &&
		    (!names[i].elf_class || names[i].elf_class == elf_class))
			return names[i].name;
	return "";
}

/* A #! script runs only if its interpreter does: check it as exec would. Return 0 or the exit
 * status after printing why not. */
static int check_script(const char *name, const char *path)
{
	char line[256], *interp; /* the kernel reads the first 256 bytes */
	size_t n, len;
	FILE *f = fopen(path, "re");

	if (!f) {
		pr_err("%s: %s", name, strerror(errno));
		return EXIT_START;
	}
	n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';
	interp = line + 2 + strspn(line + 2, " \t");
	len = strcspn(interp, " \t\n");
	if (!len) {
		pr_err("%s: its #! line names no interpreter", name);
		return EXIT_START;
	}
	if (!interp[len] && n == sizeof(line) - 1)
		return 0; /* longer than the kernel reads: exec says what it makes of it */
	interp[len] = '\0';
	if (access(interp, F_OK)) {
		bool cr = interp[len - 1] == '\r';

		if (cr)
			interp[len - 1] = '\0';
		pr_err("%s: its interpreter %s%s is %s%s", name, interp, cr ? "\\r" : "",
		       errno == ENOENT || errno == ENOTDIR ? "missing" : strerror(errno),
		       cr ? " (the #! line ends with a carriage return: a DOS line end)" : "");
		return EXIT_START;
	}
	if (access(interp, X_OK)) {
		pr_err("%s: its interpreter %s is not executable", name, interp);
		return EXIT_START;
	}
	return 0;
}

/* Check what exec would run. Return 0 or the exit status after printing why not. */
static int check_program(const char *name, const char *path)
{
	struct elf_info info;
	uint64_t hooks[HOOK_COUNT];
	struct stat st;
	unsigned char head[20] = { 0 }; /* e_ident, e_type, e_machine */
	FILE *f;
	int ret, machine;

	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		pr_err("%s: not a regular file", name);
		return EXIT_START;
	}
	f = fopen(path, "re");
	if (!f) {
		pr_err("%s: %s", name, strerror(errno));
		return EXIT_START;
	}
	ret = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (ret >= 2 && head[0] == '#' && head[1] == '!')
		return check_script(name, path);
	if (ret < SELFMAG || memcmp(head, ELFMAG, SELFMAG)) {
		pr_err("%s: not an ELF executable or a #! script", name);
		return EXIT_START;
	}
	/* e_machine is at the same offset in both classes: named even in a damaged file */
	machine = ret < 20 ? -1 : head[EI_DATA] == ELFDATA2MSB ? head[18] << 8 | head[19] :
								   head[19] << 8 | head[18];
	if (machine >= 0 && (machine != arch->elf_machine || head[EI_CLASS] != arch->elf_class)) {
		const char *m = machine_name(machine, head[EI_CLASS]);

		if (*m)
			pr_err("%s: %s %s program; this heaptrace traces %s programs", name,
			       strchr("aeiox", m[0]) ? "an" : "a", m, arch->name);
		else
			pr_err("%s: a program for ELF machine %d; this heaptrace traces %s programs",
			       name, machine, arch->name);
		return EXIT_START;
	}
	if (st.st_size < (head[EI_CLASS] == ELFCLASS64 ? (off_t)sizeof(Elf64_Ehdr) :
							 (off_t)sizeof(Elf32_Ehdr))) {
		pr_err("%s: truncated ELF file (%lld bytes)", name, (long long)st.st_size);
		return EXIT_START;
	}
	ret = sym_elf_info(path, &info);
	if (ret) {
		pr_err("%s: cannot read ELF headers: %s", name, strerror(-ret));
		return EXIT_START;
	}
	if (info.truncated) {
		pr_err("%s: truncated ELF file (%lld bytes)", name, (long long)st.st_size);
		return EXIT_START;
	}
	if (info.type != ET_EXEC && info.type != ET_DYN) {
		pr_err("%s: not an executable ELF file", name);
		return EXIT_START;
	}
	if (info.interp[0] && access(info.interp, F_OK) && (errno == ENOENT || errno == ENOTDIR)) {
		pr_err("%s: its dynamic linker %s is missing", name, info.interp);
		return EXIT_START;
	}
	if (!info.has_interp && sym_find_hooks(path, hooks) <= 0) {
		pr_err("%s: no allocator symbols found (a static executable without a symbol "
		       "table: rebuild it without stripping, or use an unstripped copy)", name);
		return EXIT_START;
	}
	return 0;
}

/* The --symbols files, kept to check them against the program. */
static struct symbols_arg {
	const char *path;
	char id[SYM_BUILD_ID_MAX];
} symbols_args[32];
static size_t nsymbols_args;

static int add_symbols(const char *path)
{
	struct symbols_arg *a = &symbols_args[nsymbols_args];
	int ret;

	if (nsymbols_args == ARRAY_SIZE(symbols_args))
		return usage_error("more than %s --symbols files", "32");
	ret = sym_add_symbols(path, a->id, sizeof(a->id));
	if (ret) {
		pr_err("--symbols=%s: %s", path,
		       ret == -ENOMSG ? "no GNU build-id note to match it by" :
		       ret == -ENOEXEC ? "not an ELF file" : strerror(-ret));
		return EXIT_USAGE;
	}
	a->path = path;
	nsymbols_args++;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * A --symbols file named as the program is meant for it: refuse it unless their build-ids
 * match (symbols of another build would name every frame wrongly). Files for libraries are
 * matched when they are loaded.
 */
static int check_symbols(const char *name, const char *path)
{
	char id[SYM_BUILD_ID_MAX] = "";

	for (size_t i = 0; i < nsymbols_args; i++) {
		const struct symbols_arg *a = &symbols_args[i];

		if (strcmp(base_name(a->path), base_name(path)))
			continue;
		if (!id[0] && sym_build_id_hex(path, id, sizeof(id)))
			strcpy(id, "none");
		if (strcmp(id, a->id)) {
			pr_err("--symbols=%s: build-id %s does not match %s (build-id %s)", a->path,
			       a->id, name, id);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* Fill longopts (n + 1 entries) and shortopts (64 bytes, starting "+:") from table. */
static void getopt_tables(const struct opt_desc *table, size_t n, struct option *longopts,
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
static int report_option(int c, struct report_opts *r)
{
	uint64_t v;

	switch (c) {
	case 's':
		if (report_parse_sort(optarg, &r->sort))
			return usage_error("invalid sort key '%s' (size, count, peak-size, "
					   "peak-count, age)", optarg);
		return 0;
	case OPT_TOP:
		if (!parse_u64(optarg, &v) || v > UINT32_MAX)
			return usage_error("invalid --top '%s'", optarg);
		r->top = v;
		return 0;
	case OPT_FORMAT:
		if (!parse_format(optarg, &r->format))
			return usage_error("invalid format '%s' (text, json, folded, html)", optarg);
		return 0;
	case OPT_OLDER:
		if (!parse_u64(optarg, &v) || v > UINT64_MAX / 1000000)
			return usage_error("invalid --older '%s' (milliseconds)", optarg);
		r->older_ns = v * 1000000;
		return 0;
	case OPT_MIN_SIZE:
		if (!parse_u64(optarg, &r->min_size))
			return usage_error("invalid --min-size '%s'", optarg);
		return 0;
	case OPT_MAX_SIZE:
		if (!parse_u64(optarg, &r->max_size))
			return usage_error("invalid --max-size '%s'", optarg);
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
static int check_lifetime(const struct report_opts *r)
{
	if (r->min_size > r->max_size)
		return usage_error("%s", "--min-size is larger than --max-size");
	if (r->temporary && (r->only_leaked || r->blocks || r->older_ns || r->min_size ||
			     r->max_size != UINT64_MAX))
		return usage_error("%s", "--temporary reports blocks already freed: --only-leaked, "
					 "--blocks, --older, --min-size and --max-size do not go "
					 "with it");
	return 0;
}

/* The debuginfod servers: asked only with --debuginfod (dbgserver.h). Return 0 or the usage
 * error's exit status. */
static int debuginfod_setup(bool wanted)
{
	int ret = dbgserver_setup(wanted);

	if (ret == -ENOSYS)
		return usage_error("%s", "--debuginfod: libdebuginfod.so.1 cannot be loaded "
					 "(or this heaptrace was built without it)");
	if (ret)
		return usage_error("%s", "--debuginfod: DEBUGINFOD_URLS names no server");
	return 0;
}

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
	else if (parse_u64(at + 1, &o->at_ms) && o->at_ms <= UINT64_MAX / 1000000)
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

/* --pid's PID: true and *pid set, or false. */
static bool parse_pid(const char *s, int *pid)
{
	uint64_t v;

	if (!parse_u64(s, &v) || !v || v > INT32_MAX)
		return false;
	*pid = (int)v;
	return true;
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
static int diff_main(int argc, char **argv)
{
	struct option longopts[ARRAY_SIZE(diff_table) + 1];
	char shortopts[64] = "+:";
	struct offline_opts a = { .report = { .format = FMT_TEXT, .top = 10 } }, b;
	const char *outfile = NULL;
	int c, ret, pid_b = 0;
	bool debuginfod = false;
	char *comma;

	offline_signals();
	getopt_tables(diff_table, ARRAY_SIZE(diff_table), longopts, shortopts);
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
			if (!parse_pid(optarg, &a.pid) || !parse_pid(comma ? comma + 1 : optarg, &pid_b)) {
				if (comma)
					*comma = ',';
				return usage_error("invalid --pid '%s' (PID, or PID_A,PID_B)", optarg);
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			ret = report_option(c, &a.report);
			if (ret < 0)
				return option_error(c, argv[optind - 1]);
			if (ret)
				return ret;
			if (a.report.format == FMT_FOLDED)
				return usage_error("%s", "diff: the format is text or json, or html for a page");
		}
	}
	if (argc - optind != 2)
		return usage_error("%s", "diff: give two logs, A and B (LOG or LOG@WHEN)");
	ret = debuginfod_setup(debuginfod);
	if (ret)
		return ret;
	b = a;
	b.pid = pid_b;
	if (!parse_side(argv[optind], &a) || !parse_side(argv[optind + 1], &b))
		return usage_error("%s", "diff: a moment of - (standard input) cannot be read");
	if (!strcmp(a.path, "-") && !strcmp(b.path, "-"))
		return usage_error("%s", "diff: standard input can be one of the logs, not both");
	b.out = open_out(outfile);
	if (!b.out)
		return EXIT_START;
	return close_out(b.out, outfile, offline_diff(&a, &b));
}

/* heaptrace report [OPTION...] FILE */
static int report_main(int argc, char **argv)
{
	struct option longopts[ARRAY_SIZE(report_table) + 1];
	char shortopts[64] = "+:";
	struct offline_opts o = {
		.report = { .format = FMT_TEXT, .sort = SORT_SIZE, .top = 10,
			    .max_size = UINT64_MAX },
	};
	const char *outfile = NULL;
	int c, ret;
	bool debuginfod = false;

	offline_signals();
	getopt_tables(report_table, ARRAY_SIZE(report_table), longopts, shortopts);
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
			if (!parse_pid(optarg, &o.pid))
				return usage_error("invalid --pid '%s'", optarg);
			break;
		case OPT_FORMAT:
			o.heaptrack = !strcmp(optarg, "heaptrack");
			o.pprof = !strcmp(optarg, "pprof");
			o.massif = !strcmp(optarg, "massif");
			if (o.heaptrack || o.pprof || o.massif)
				break;
			ret = report_option(c, &o.report);
			if (ret)
				return ret;
			break;
		case OPT_AT:
			if (!strcmp(optarg, "end"))
				o.at = AT_END;
			else if (!strcmp(optarg, "peak"))
				o.at = AT_PEAK;
			else if (parse_u64(optarg, &o.at_ms) && o.at_ms <= UINT64_MAX / 1000000)
				o.at = AT_TIME;
			else
				return usage_error("invalid --at '%s' (end, peak, or milliseconds)",
						   optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			ret = report_option(c, &o.report);
			if (ret < 0)
				return option_error(c, argv[optind - 1]);
			if (ret)
				return ret;
		}
	}
	if (optind >= argc)
		return usage_error("%s", "report: no log file given");
	if (optind + 1 < argc)
		return usage_error("report: one log file only ('%s' is another)", argv[optind + 1]);
	ret = check_lifetime(&o.report);
	if (ret)
		return ret;
	if (o.calls && (o.heaptrack || o.report.format == FMT_FOLDED))
		return usage_error("%s", "--calls prints text or json");
	if (o.heaptrack && (o.report.only_leaked || o.report.temporary || o.report.blocks))
		return usage_error("%s", "--format=heaptrack writes the whole run: no --only-leaked, "
					 "--temporary or --blocks");
	ret = debuginfod_setup(debuginfod);
	if (ret)
		return ret;
	o.path = argv[optind];
	if (o.massif && o.at != AT_END)
		return usage_error("%s", "--format=massif shows the whole run: no --at");
	if ((o.at != AT_END || o.heaptrack) && !strcmp(o.path, "-"))
		return usage_error("%s", "--at and --format=heaptrack read the log twice: give a "
					 "file, not -");
	o.out = open_out(outfile);
	if (!o.out)
		return EXIT_START;
	return close_out(o.out, outfile, offline_report(&o));
}

int main(int argc, char **argv)
{
	struct option longopts[ARRAY_SIZE(opt_table) + 1];
	char shortopts[64] = "+:"; /* '+': stop at PROGRAM; ':': a missing value is ':', not '?' */
	struct tracer_opts o = {
		.depth = HEAPTRACE_DEPTH,
		.sample = 1,
		.pin = true,
		.mode = MODE_STUBS,
		.stack_copy = 8192,
		.inventory = true,
		.report = { .format = FMT_TEXT, .sort = SORT_SIZE, .top = 10, .max_size = UINT64_MAX },
	};
	const char *outfile = NULL, *core = NULL, *exe = NULL, *record = NULL;
	struct calltrace trace;
	bool trace_calls = false;
	char why[256];
	bool customs = false;
	uint64_t v;
	int c, ret;

	/* first thing: from here on a signal sent to heaptrace is taken, never fatal */
	events_init();
	if (argc > 1 && !strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	getopt_tables(opt_table, ARRAY_SIZE(opt_table), longopts, shortopts);

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!parse_u64(optarg, &v) || !v || v > INT32_MAX)
				return usage_error("invalid process id '%s'", optarg);
			o.pid = (pid_t)v;
			break;
		case OPT_DURATION:
			if (!parse_secs(optarg, &o.duration))
				return usage_error("invalid duration '%s'", optarg);
			break;
		case 'd':
			if (!parse_u64(optarg, &v) || !v || v > MAX_DEPTH)
				return usage_error("invalid depth '%s' (1 to 256)", optarg);
			o.depth = v;
			break;
		case OPT_OUTFILE:
			outfile = optarg;
			break;
		case OPT_RECORD:
			record = optarg;
			break;
		case OPT_TRACE_CALLS:
			trace_calls = true;
			break;
		case OPT_FLAME:
			o.report.format = FMT_FOLDED;
			break;
		case 'f':
			o.follow_fork = true;
			break;
		case OPT_NO_PIN:
			o.pin = false;
			break;
		case OPT_MODE:
			if (!strcmp(optarg, "stubs"))
				o.mode = MODE_STUBS;
			else if (!strcmp(optarg, "breakpoint"))
				o.mode = MODE_BREAKPOINT;
			else
				return usage_error("invalid mode '%s' (stubs, breakpoint)", optarg);
			break;
		case OPT_STACK_COPY:
			if (!parse_u64(optarg, &v) || v < 64 || v > 65536)
				return usage_error("invalid --stack-copy '%s' (64 to 65536)", optarg);
			o.stack_copy = v;
			break;
		case OPT_SYMBOLS:
			ret = add_symbols(optarg);
			if (ret)
				return ret;
			break;
		case OPT_DEBUG_DIR:
			ret = sym_set_debug_dir(optarg);
			if (ret) {
				pr_err("--debug-dir=%s: %s", optarg, strerror(-ret));
				return EXIT_USAGE;
			}
			break;
		case OPT_NO_INVENTORY:
			o.inventory = false;
			break;
		case OPT_CORE:
			core = optarg;
			break;
		case OPT_EXE:
			exe = optarg;
			break;
		case OPT_INTERVAL:
			if (!parse_secs(optarg, &o.interval))
				return usage_error("invalid interval '%s'", optarg);
			break;
		case OPT_LIVE:
			o.live = true;
			break;
		case OPT_COUNT:
			if (!parse_u64(optarg, &v) || !v || v > UINT32_MAX)
				return usage_error("invalid count '%s'", optarg);
			o.count = v;
			break;
		case OPT_SAMPLE:
			if (!parse_u64(optarg, &v) || !v || v > UINT32_MAX)
				return usage_error("invalid --sample '%s'", optarg);
			o.sample = v;
			break;
		case OPT_ALLOC:
		case OPT_REALLOC:
		case OPT_FREE:
			if (custom_add(c == OPT_ALLOC ? CUSTOM_ALLOC : c == OPT_REALLOC ?
				       CUSTOM_REALLOC : CUSTOM_FREE, optarg, why, sizeof(why)))
				return usage_error("%s", why);
			customs = true;
			break;
		case OPT_MMAP:
			hook_enable_mmap();
			customs = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("heaptrace %s (%s)\n", HEAPTRACE_VERSION, arch->name);
			return 0;
		default: /* a report option, or ':' or '?' */
			ret = report_option(c, &o.report);
			if (ret < 0)
				return option_error(c, argv[optind - 1]);
			if (ret)
				return ret;
		}
	}
	/* options of tracing, then a command word (heaptrace -v report LOG; "--" before it
	 * names a program): the options are left to the command's own */
	if (optind < argc && strcmp(argv[optind - 1], "--") &&
	    (!strcmp(argv[optind], "report") || !strcmp(argv[optind], "diff"))) {
		char **sub = argv + optind;

		optind = 0; /* getopt starts afresh */
		return !strcmp(sub[0], "report") ? report_main(argc - (int)(sub - argv), sub) :
						   diff_main(argc - (int)(sub - argv), sub);
	}
	ret = check_lifetime(&o.report);
	if (ret)
		return ret;
	if (o.pid && optind < argc)
		return usage_error("%s", "give either --pid or a program, not both");
	if (core && (o.pid || optind < argc))
		return usage_error("%s", "--core reads a core file: no --pid or program with it");
	if (exe && !core)
		return usage_error("%s", "--exe goes with --core");
	if (customs && core)
		return usage_error("%s", "--alloc, --realloc, --free and --mmap trace calls: not "
					 "with --core");
	if (custom_commit(why, sizeof(why)))
		return usage_error("%s", why);
	if (!o.pid && !core && optind >= argc)
		return usage_error("%s", "no program to trace");
	/* the program's CPU is chosen for it only in breakpoint mode, where stops are shared */
	if (o.mode == MODE_STUBS && stubs_supported())
		o.pin = false;
	if (o.count && !o.interval)
		return usage_error("%s", "--count needs --interval");
	if (o.live && (o.count || core))
		return usage_error("%s", o.count ? "--count limits periodic reports, not --live" :
						   "--live watches a running program, not a core file");
	o.report.depth_limit = o.depth;
	o.report.label_process = o.follow_fork;
	if (record && !strcmp(record, "-") && !o.pid && !core)
		return usage_error("%s", "--record=- needs --pid (a launched program writes to the "
					 "same standard output)");
	if (record && !strcmp(record, "-") && o.live)
		return usage_error("%s", "--record=- and --live both want standard output");
	if (record && !*record)
		return usage_error("%s", "--record needs a file name");
	if (record && core)
		return usage_error("%s", "--record logs a traced run, not a core file");
	if (trace_calls && (core || o.report.format == FMT_FOLDED))
		return usage_error("%s", "--trace-calls prints the calls of a traced run, in text or "
					 "json");

	if (!o.pid && !core) {
		int err;
		char *path = find_program(argv[optind], &err);

		if (!path) {
			pr_err("%s: %s", argv[optind],
			       err == ENOENT && !strchr(argv[optind], '/') ? "command not found" :
									      strerror(err));
			return EXIT_START;
		}
		ret = check_symbols(argv[optind], path);
		if (!ret)
			ret = check_program(argv[optind], path);
		if (ret) {
			free(path);
			return ret;
		}
		o.path = path;
		o.argv = argv + optind;
	}
	if (outfile) {
		o.out = fopen(outfile, "we");
		if (!o.out) {
			pr_err("cannot open --outfile %s: %s", outfile, strerror(errno));
			free((char *)o.path);
			return EXIT_START;
		}
	} else {
		o.out = stderr;
	}
	if (record && (ret = record_open(record, o.depth))) {
		pr_err("cannot open --record %s: %s", record, strerror(-ret));
		if (o.out != stderr)
			fclose(o.out);
		free((char *)o.path);
		return EXIT_START;
	}
	if (trace_calls) {
		calltrace_init(&trace, o.out, o.report.format == FMT_JSON);
		record_trace_calls(&calltrace_record_calls, &trace);
	}
	if (o.path)
		hints_launch(o.path);
	if (core)
		ret = core_report(core, exe, o.out, &o.report) ? EXIT_START : 0;
	else
		ret = tracer_run(&o);
	if (trace_calls) {
		record_trace_flush();
		calltrace_destroy(&trace);
	}
	free((char *)o.path);
	if (record) {
		int err = record_close();

		if (err) {
			pr_err("writing --record %s: %s", record, strerror(-err));
			ret = EXIT_START;
		}
	}
	if (o.out != stderr) {
		/* a failed report write was said already (tracer_run then returns EXIT_START) */
		bool said = ferror(o.out);

		if (fclose(o.out) && !said) {
			pr_err("writing %s: %s", outfile, strerror(errno));
			ret = EXIT_START;
		}
	}
	return ret;
}
