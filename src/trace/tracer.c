// SPDX-License-Identifier: GPL-2.0-only
/*
 * One run of heaptrace: launch or attach, the loop that takes every tracee event and every
 * signal of heaptrace's own, when to report (snapshot.c writes the reports), and letting go
 * at the end.
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
#include "account/calls.h"
#include "heap/custom.h"
#include "output/report.h"
#include "patch/image.h"
#include "patch/inject.h"
#include "patch/stubs.h"
#include "target/cpu.h"
#include "target/events.h"
#include "target/process.h"
#include "trace/attach.h"
#include "trace/detach.h"
#include "trace/dispatch.h"
#include "trace/held.h"
#include "trace/hints.h"
#include "trace/launch.h"
#include "trace/lifecycle.h"
#include "trace/probe.h"
#include "trace/session.h"
#include "patch/stubs.h"
#include "account/ring.h"
#include "symbols/symbols.h"
#include "trace/snapshot.h"
#include "trace/symcache.h"
#include "trace/tracer.h"
#include "util/log.h"
#include "util/util.h"

/* kind: which report this is (report_info.kind), NULL for the final one */
static void report_all(int sort, const char *kind)
{
	for (struct proc *p = procs; p; p = p->next)
		if (p->counting)
			snapshot_report(p, sort, kind);
}

/* --sample-bytes: what was taken, and where it was decided. */
static void print_sampled(void)
{
	uint64_t taken, not_taken, in_stubs;

	if (!session.opts->sample_bytes)
		return;
	calls_sample_stats(session.acct, &taken, &not_taken, &in_stubs);
	pr_info("--sample-bytes=%llu: %llu allocations taken, %llu not (%llu decided in entry "
		"stubs)", (unsigned long long)session.opts->sample_bytes,
		(unsigned long long)taken, (unsigned long long)not_taken,
		(unsigned long long)in_stubs);
}

static void print_cost(void)
{
	struct rusage ru;
	uint64_t nstops, nunwinds, nlogged, nrecords, nwaits, backlog, nquick, nslow, ncut, skipped;
	uint64_t nremembered;
	unsigned least;

	/* what tracing cost heaptrace itself, for the benchmark */
	getrusage(RUSAGE_SELF, &ru);
	calls_stats(session.acct, &nstops, &nunwinds, &nlogged);
	ring_stats(&nrecords, &nwaits, &backlog);
	pr_info("%llu returns logged without a stop", (unsigned long long)nlogged);
	pr_info("%llu calls recorded by entry stubs, %llu times a stub waited for room, "
		"at most %llu KiB of records waiting", (unsigned long long)nrecords,
		(unsigned long long)nwaits, (unsigned long long)(backlog >> 10));
	if ((skipped = ring_skipped()))
		pr_info("%llu records skipped that no thread would write",
			(unsigned long long)skipped);
	ring_copy_stats(&ncut, &least);
	if (least)
		pr_info("stack copies of at least %u bytes, %llu backtraces cut short by them",
			least, (unsigned long long)ncut);
	pr_info("%llu breakpoint stops, %llu backtraces unwound, CPU %.6f s user %.6f s system",
		(unsigned long long)nstops, (unsigned long long)nunwinds,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	calls_unwind_stats(session.acct, &nquick, &nremembered, &nslow);
	pr_info("%llu backtraces stepped by cached CFI rules (%llu of them remembered), %llu by "
		"libunwind", (unsigned long long)nquick, (unsigned long long)nremembered,
		(unsigned long long)nslow);
	print_sampled();
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
			n += ring_drain(p);
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
		if (probe_wanted())
			return 0; /* loop looks */
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
		if (o->live && o->live->step(now, &until))
			return 0; /* q: let go, as at the end of --duration */
		if (o->serve)
			o->serve->step(now, &until); /* never asks to let go */
		if (held_any() && held_release(false, dispatch))
			continue;
		probe_stuck_rings();
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

/* The launched program runs on untraced: wait for its end like a shell would. A stop taken
 * from the kernel before the detach and not handed out yet is passed over: returning on it
 * would end heaptrace, and with --live the program's terminal, while the program runs. */
static int wait_launched(void)
{
	int status = 0;
	pid_t got;

	if (session.launched_status >= 0 || !session.launched_pid)
		return session.launched_status;
	do
		got = events_wait_tid(session.launched_pid, &status);
	while (got == session.launched_pid && !WIFEXITED(status) && !WIFSIGNALED(status));
	if (got < 0) {
		pr_warn("cannot wait for process %d: %s", session.launched_pid, strerror(-got));
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Attach to every process of -p. One that cannot be traced is said and let go, and the others
 * are traced (as strace -p does). Return 0, or the last -errno when none could be. */
static int attach_all(const struct tracer_opts *o)
{
	unsigned n = o->npids ? o->npids : 1, traced = 0;
	int ret = 0;

	for (unsigned i = 0; i < n; i++) {
		pid_t pid = o->npids ? o->pids[i] : o->pid;
		int err = attach_process(pid); /* a failure is said there */

		if (!err) {
			traced++;
			continue;
		}
		ret = err;
		detach_untouched_pid(pid);
	}
	if (traced && traced < n)
		pr_warn("%u of the %u processes of -p traced, the others let go (said above)",
			traced, n);
	return traced ? 0 : ret;
}

/* The views (--serve, --live) that are on, in the order they are prepared. */
static unsigned views(const struct tracer_opts *o, const struct tracer_view *v[2])
{
	unsigned n = 0;

	if (o->serve) /* first: a bad address stops the run before the terminal is taken */
		v[n++] = o->serve;
	if (o->live)
		v[n++] = o->live;
	return n;
}

/* Set up the run and launch or attach. Return 0, or -errno after printing why (nothing is
 * traced then). */
static int start(const struct tracer_opts *o)
{
	const struct tracer_view *v[2];
	int ret = 0;

	session.opts = o;
	image_init(&(struct image_opts){ o->mode == MODE_STUBS, o->stack_copy, o->max_stall_ms });
	inject_init(!o->pid);
	session.acct = calls_new(o->depth, o->sample);
	cpu_init();
	for (unsigned i = 0, n = views(o, v); i < n && !ret; i++)
		ret = v[i]->prepare(o);
	if (!ret)
		ret = o->pid ? attach_all(o) : launch_program();
	if (ret)
		detach_untouched();
	return ret;
}

/* The launched program could not be traced: it was killed, its remains go. */
static void give_up(void)
{
	while (procs)
		lifecycle_free(procs);
	/* the killed program is reaped here */
	if (session.launched_pid)
		events_wait_tid(session.launched_pid, NULL);
}

/* Tracing ended with sig (0: none): let everything run on, then write the final reports. */
static void end_tracing(int sig)
{
	if (procs) {
		/* --duration or a signal: let everything run on, then write the final report */
		if (sig)
			pr_info("%s: detaching", strsignal(sig));
		detach_all();
		report_all(-1, NULL);
		while (procs)
			lifecycle_free(procs);
	}
	if (log_level)
		print_cost();
	hints_print();
	custom_warn_unfound();
}

int tracer_run(const struct tracer_opts *o)
{
	const struct tracer_view *v[2];
	unsigned nviews = views(o, v);
	uint64_t deadline = 0;
	int sig, status;

	events_on_stop(arch->trap_pc_after ? dispatch_stop_seen : NULL);
	if (start(o)) {
		for (unsigned i = 0; i < nviews; i++)
			v[i]->finish();
		return EXIT_START;
	}
	for (unsigned i = 0; i < nviews; i++)
		v[i]->begin(o->pid ? o->pid : session.launched_pid);
	if (o->duration > 0)
		deadline = now_ns() + secs_ns(o->duration);
	sig = loop(deadline);
	for (unsigned i = 0; i < nviews; i++)
		v[i]->end(); /* the terminal back before anything else is said */
	if (session.start_failed)
		give_up();
	else
		end_tracing(sig);
	status = session.start_failed || o->pid ? 0 : wait_launched();
	for (unsigned i = 0; i < nviews; i++)
		v[i]->finish();
	/* every process was freed (end_tracing, give_up): nothing reads the accounting now */
	calls_free(session.acct);
	session.acct = NULL;
	if (session.start_failed || session.report_failed)
		return EXIT_START;
	return status < 0 ? 0 : status;
}
