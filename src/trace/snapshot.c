// SPDX-License-Identifier: GPL-2.0-only
/* The heap of a traced process now: drained, symbolised, reported (snapshot.h). */
#include <string.h>

#define PR_DOMAIN "tracer"
#include "arch/arch.h"
#include "account/calls.h"
#include "account/ring.h"
#include "eventlog/record.h"
#include "heap/hooks.h"
#include "output/html.h"
#include "output/report.h"
#include "patch/image.h"
#include "patch/stubs.h"
#include "symbols/symbols.h"
#include "target/process.h"
#include "trace/hints.h"
#include "trace/session.h"
#include "trace/snapshot.h"
#include "trace/symcache.h"
#include "unwind/python.h"
#include "util/log.h"
#include "util/util.h"

void snapshot_resolve_frame(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	struct snapshot_resolver *rc = ctx;

	if (python_resolve(rc->p, pc, out))
		return;
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

void snapshot_drain(struct proc *p)
{
	struct thread *t;

	if (p->exited || p->detached)
		return;
	t = proc_any_thread(p);
	if (t)
		calls_drain(p, t->tid);
	ring_drain(p);
}

/* --only-leaked: which live blocks will never be freed is known at the end only. True if
 * p's report waits for the end. */
static bool report_waits(const struct proc *p, const struct report_opts *ro)
{
	static bool said;

	if (!ro->only_leaked || p->exited || p->detached)
		return false;
	if (!said)
		pr_warn("--only-leaked: the reports before the end are not printed (the "
			"blocks never freed are known at the end only)");
	said = true;
	return true;
}

/* The figures of p the report shows besides its table (allocators: room for its names). */
static void fill_info(struct proc *p, struct report_info *ri, const char **allocators)
{
	if (!p->exited) /* after a detach too: the program runs on, this is its memory now */
		proc_read_statm(p);
	ri->has_statm = p->has_statm;
	ri->statm_vss = p->statm[0];
	ri->statm_rss = p->statm[1];
	ri->statm_shared = p->statm[2];
	ri->elapsed_ns = ri->now_ns - p->start_ns;
	ri->calls_not_seen = p->calls_not_seen;
	ri->stubs_stuck = p->stubs_stuck;
	ri->nallocators = image_allocators(p, allocators, IMAGE_MAX_ALLOCATORS);
}

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

/* Write p's report; at its end, its final figures go to the log. Return 0 or -errno. */
static int write_report(struct proc *p, const struct report_opts *ro, struct report_info *ri)
{
	int ret;

	snapshot_drain(p);
	calls_park(p);
	ret = ro->format == FMT_HTML ? html_write(session.opts->out, &p->table, ri, NULL) :
				       report_write(session.opts->out, &p->table, ro, ri);
	if (p->exited || p->detached) { /* its final figures: the log ends with them */
		log_end(p, ri);
		hints_python(p);
		hints_node(p);
		hints_frames(p, ri, ro);
	}
	calls_unpark(p);
	return ret;
}

void snapshot_report(struct proc *p, int sort, const char *kind)
{
	struct report_opts ro = session.opts->report;
	struct snapshot_resolver rc = { p, symcache_get(p) };
	const char *allocators[IMAGE_MAX_ALLOCATORS];
	struct report_info ri = {
		.pid = p->pid,
		.command = p->command ? p->command : "?",
		.exited = p->exited,
		.exit_status = p->exit_status,
		.kind = kind ? kind : "final",
		.now_ns = now_ns(),
		.inv = p->inv,
		.resolve = snapshot_resolve_frame,
		.resolve_ctx = &rc,
		.allocators = allocators,
	};
	int ret;

	if (report_waits(p, &ro))
		return;
	record_trace_flush(); /* the calls before the report come before it */
	fill_info(p, &ri, allocators);
	if (sort >= 0)
		ro.sort = sort;
	ret = write_report(p, &ro, &ri);
	pr_info("report of process %d: %u backtraces in %.1f ms", p->pid, p->table.nbts,
		(now_ns() - ri.now_ns) / 1e6);
	if (ret && !session.report_failed) { /* said once: --interval and -f write many reports */
		pr_err("writing the report: %s", strerror(-ret));
		session.report_failed = true;
	}
	symcache_release(p);
}
