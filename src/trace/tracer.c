// SPDX-License-Identifier: GPL-2.0-only
/*
 * One run of heaptrace: launch or attach, the loop that takes every tracee event and every
 * signal of heaptrace's own, the reports, and letting go at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define PR_DOMAIN "tracer"
#include "arch/arch.h"
#include "trace/attach.h"
#include "account/calls.h"
#include "target/cpu.h"
#include "heap/custom.h"
#include "trace/detach.h"
#include "trace/dispatch.h"
#include "target/events.h"
#include "trace/held.h"
#include "trace/hints.h"
#include "heap/hooks.h"
#include "output/html.h"
#include "patch/image.h"
#include "trace/launch.h"
#include "ui/live.h"
#include "util/log.h"
#include "target/process.h"
#include "eventlog/record.h"
#include "output/report.h"
#include "trace/session.h"
#include "patch/stubs.h"
#include "symbols/symbols.h"
#include "trace/symcache.h"
#include "trace/tracer.h"
#include "util/util.h"

struct session session = { .launched_status = -1 };
static bool report_failed;
static const char *report_kind; /* the reports being written now; NULL: the final ones */

/* The final report ri of p ends p's event log: its E record says what ri does. */
static void log_end(struct proc *p, const struct report_info *ri)
{
	const struct record_ending end = {
		.now_ns = ri->now_ns, .exited = ri->exited, .exit_status = ri->exit_status,
		.has_statm = ri->has_statm, .statm_vss = ri->statm_vss, .statm_rss = ri->statm_rss,
		.statm_shared = ri->statm_shared, .command = ri->command,
		.allocators = ri->allocators, .nallocators = ri->nallocators,
	};

	record_end(p, &end);
}

void tracer_resolve_frame(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	struct tracer_resolver *rc = ctx;

	pc = arch->code_addr(pc);
	sym_resolve(rc->sym, pc, index > 0, out);
	if (index == 0) {
		/* frame 0 is the public name (malloc, not __libc_malloc; operator new(unsigned
		 * long), not tc_new) */
		for (int h = 0; h < HOOK_COUNT; h++) {
			if (rc->p->hook_addr[h] == pc) {
				char sym[64];
				const char *cxx = sym_demangled(
					rc->sym, hook_symbol(h, arch->word_size, sym, sizeof(sym)));

				out->function = cxx ? cxx : hook_table[h].name;
				out->offset = 0;
				break;
			}
		}
	}
}

void tracer_drain(struct proc *p)
{
	struct thread *t;

	if (p->exited || p->detached)
		return;
	t = proc_any_thread(p);
	if (t)
		calls_drain(p, t->tid);
	stubs_drain(p);
}

void tracer_report(struct proc *p, int sort)
{
	struct report_opts ro = session.opts->report;
	struct tracer_resolver rc = { p, symcache_get(p) };
	const char *allocators[IMAGE_MAX_ALLOCATORS];
	struct report_info ri = {
		.pid = p->pid,
		.command = p->command ? p->command : "?",
		.exited = p->exited,
		.exit_status = p->exit_status,
		.kind = report_kind ? report_kind : "final",
		.now_ns = now_ns(),
		.inv = p->inv,
		.resolve = tracer_resolve_frame,
		.resolve_ctx = &rc,
		.allocators = allocators,
	};
	int ret;

	if (ro.only_leaked && !p->exited && !p->detached) {
		/* which live blocks will never be freed is known at the end only */
		static bool said;

		if (!said)
			pr_warn("--only-leaked: the reports before the end are not printed (the "
				"blocks never freed are known at the end only)");
		said = true;
		return;
	}
	record_trace_flush(); /* the calls before the report come before it */
	if (!p->exited) /* after a detach too: the program runs on, this is its memory now */
		proc_read_statm(p);
	ri.has_statm = p->has_statm;
	ri.statm_vss = p->statm[0];
	ri.statm_rss = p->statm[1];
	ri.statm_shared = p->statm[2];
	ri.elapsed_ns = ri.now_ns - p->start_ns;
	ri.nallocators = image_allocators(p, allocators, IMAGE_MAX_ALLOCATORS);
	if (sort >= 0)
		ro.sort = sort;
	tracer_drain(p);
	calls_park(p);
	ret = ro.format == FMT_HTML ? html_write(session.opts->out, &p->table, &ri, NULL) :
				      report_write(session.opts->out, &p->table, &ro, &ri);
	if (p->exited || p->detached) { /* its final figures: the log ends with them */
		log_end(p, &ri);
		hints_python(p);
	}
	calls_unpark(p);
	pr_info("report of process %d: %u backtraces in %.1f ms", p->pid, p->table.nbts,
		(now_ns() - ri.now_ns) / 1e6);
	if (ret && !report_failed) { /* said once: --interval and -f write many reports */
		pr_err("writing the report: %s", strerror(-ret));
		report_failed = true;
	}
	symcache_release(p);
}

/* kind: which report this is (report_info.kind), NULL for the final one */
static void report_all(int sort, const char *kind)
{
	report_kind = kind;
	for (struct proc *p = procs; p; p = p->next)
		if (p->counting)
			tracer_report(p, sort);
	report_kind = NULL;
}

static void print_cost(void)
{
	struct rusage ru;
	uint64_t nstops, nunwinds, nlogged, nrecords, nwaits, backlog;

	/* what tracing cost heaptrace itself, for the benchmark */
	getrusage(RUSAGE_SELF, &ru);
	calls_stats(&nstops, &nunwinds, &nlogged);
	stubs_stats(&nrecords, &nwaits, &backlog);
	pr_info("%llu returns logged without a stop", (unsigned long long)nlogged);
	pr_info("%llu calls recorded by entry stubs, %llu times a stub waited for room, "
		"at most %llu KiB of records waiting", (unsigned long long)nrecords,
		(unsigned long long)nwaits, (unsigned long long)(backlog >> 10));
	pr_info("%llu breakpoint stops, %llu backtraces unwound, CPU %.6f s user %.6f s system",
		(unsigned long long)nstops, (unsigned long long)nunwinds,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

static uint64_t secs_ns(double s)
{
	return (uint64_t)(s * 1e9);
}

/* Read the rings of every process with entry stubs. Return true if there were records, false
 * also when no process has stubs. */
static bool drain_all(bool *any)
{
	unsigned n = 0;

	*any = false;
	for (struct proc *p = procs; p; p = p->next)
		if (stubs_active(p)) {
			*any = true;
			n += stubs_drain(p);
		}
	return n > 0;
}

/*
 * Between tracee events, read the stubs' rings. A program that allocates fast fills the 4 MiB
 * of a ring in well under a millisecond and then waits for heaptrace: while records keep
 * coming, heaptrace only yields its CPU between looks (measured on churn: sleeping 2 ms at
 * every empty look left the program waiting most of the time, 0.67 s for 0.25 s of
 * heaptrace's CPU); after a quiet millisecond it sleeps, up to 2 ms, until a tracee event or
 * a signal. Return as events_next.
 */
#define DRAIN_POLL_NS 1000000
#define DRAIN_SLEEP_NS 2000000

static int next_event(struct event *ev, uint64_t until)
{
	static uint64_t last_records;
	bool any;

	for (;;) {
		int ret = events_poll(ev);
		uint64_t now;

		if (ret)
			return ret;
		if (drain_all(&any)) {
			last_records = now_ns();
			return 0;
		}
		if (held_any()) { /* a thread waits for a record another one writes */
			sched_yield();
			return 0;
		}
		if (!any)
			return events_next(ev, until, cpu_may_poll());
		now = now_ns();
		if (until && now >= until)
			return 0;
		if (now - last_records < DRAIN_POLL_NS)
			sched_yield();
		else
			events_sleep(until && until - now < DRAIN_SLEEP_NS ? until - now :
								     DRAIN_SLEEP_NS);
	}
}

/* Once a process has made an allocation, its symbols are read while it runs (symcache.h). */
static void read_symbols_ahead(void)
{
	for (struct proc *p = procs; p; p = p->next)
		if (p->counting && !p->symcache && p->table.nbts)
			symcache_warm(p);
}

/* Take events and signals until every process ended, a signal ends tracing or the
 * deadline passes. Return the signal that ended it, 0 otherwise. */
static int loop(uint64_t deadline)
{
	const struct tracer_opts *o = session.opts;
	uint64_t next_report = o->interval > 0 && !o->live ? now_ns() + secs_ns(o->interval) : 0;
	unsigned reports = 0;

	while (procs && !session.start_failed) {
		uint64_t now = now_ns(), until = deadline;
		struct event ev;
		int ret;

		if (deadline && now >= deadline)
			return 0;
		read_symbols_ahead();
		if (next_report && now >= next_report) {
			char kind[32];

			snprintf(kind, sizeof(kind), "periodic #%u", reports + 1);
			report_all(-1, kind);
			reports++;
			next_report = o->count && reports >= o->count ? 0 : now + secs_ns(o->interval);
		}
		if (next_report && (!until || next_report < until))
			until = next_report;
		if (o->live && live_step(now, &until))
			return 0; /* q: let go, as at the end of --duration */
		if (held_any() && held_release(false))
			continue;
		ret = next_event(&ev, until);
		if (ret == -ECHILD)
			return 0;
		if (ret < 0) {
			pr_err("waitpid: %s", strerror(-ret));
			return 0;
		}
		if (ret == 0)
			continue;
		if (ev.tid > 0) {
			dispatch(ev.tid, ev.status);
			continue;
		}
		if (ev.sig == SIGUSR1 || ev.sig == SIGUSR2)
			report_all(ev.sig == SIGUSR1 ? SORT_SIZE : SORT_COUNT,
				   ev.sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
		else if (events_sig_ends(ev.sig))
			return ev.sig;
	}
	return 0;
}

/* The launched program runs on untraced: wait for it like a shell would. */
static int wait_launched(void)
{
	int status;

	if (session.launched_status >= 0 || !session.launched_pid)
		return session.launched_status;
	if (events_wait_tid(session.launched_pid, &status) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 0;
}

int tracer_run(const struct tracer_opts *o)
{
	uint64_t deadline = 0;
	int ret, sig, status;

	session.opts = o;
	calls_init(o->depth, o->sample);
	cpu_init();
	ret = o->live ? live_prepare(o) : 0;
	if (!ret)
		ret = o->pid ? attach_process(o->pid) : launch_program();
	if (ret) {
		detach_untouched();
		if (o->live)
			live_finish();
		return EXIT_START;
	}
	if (o->live)
		live_begin(o->pid ? o->pid : session.launched_pid);
	if (o->duration > 0)
		deadline = now_ns() + secs_ns(o->duration);
	sig = loop(deadline);
	if (o->live)
		live_end(); /* the terminal back before anything else is said */
	if (session.start_failed) {
		while (procs)
			proc_free(procs);
		/* the killed program is reaped here */
		if (session.launched_pid)
			events_wait_tid(session.launched_pid, NULL);
		if (o->live)
			live_finish();
		return EXIT_START;
	}
	if (procs) {
		/* --duration or a signal: let everything run on, then write the final report */
		if (sig)
			pr_info("%s: detaching", strsignal(sig));
		detach_all();
		report_all(-1, NULL);
		while (procs)
			proc_free(procs);
	}
	if (log_level)
		print_cost();
	hints_print();
	custom_warn_unfound();
	status = o->pid ? 0 : wait_launched();
	if (o->live)
		live_finish();
	if (report_failed)
		return EXIT_START;
	return status < 0 ? 0 : status;
}
