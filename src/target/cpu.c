// SPDX-License-Identifier: GPL-2.0-only
/*
 * A ptrace stop wakes the other side; across CPUs on an idle virtual machine each wake-up
 * costs a halted vCPU's IPI: measured 230-350 us per traced call against 30-33 us with tracer
 * and program on one CPU (make bench, "affinity"). So a launched program runs on heaptrace's
 * CPU while it is one thread in one process; its own mask is given back at its first clone,
 * fork or vfork, and when heaptrace detaches. Meanwhile sched_getaffinity shows one CPU.
 */
#define _GNU_SOURCE
#include <sched.h>

#define PR_DOMAIN "cpu"
#include "target/cpu.h"
#include "util/log.h"
#include "target/process.h"

static cpu_set_t orig_mask;
static bool pinned;

void cpu_init(void)
{
	if (sched_getaffinity(0, sizeof(orig_mask), &orig_mask))
		CPU_ZERO(&orig_mask);
}

static void unpin_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	sched_setaffinity(t->tid, sizeof(orig_mask), &orig_mask);
}

void cpu_unpin(pid_t extra)
{
	if (!pinned)
		return;
	pinned = false;
	for (struct proc *p = procs; p; p = p->next)
		proc_for_each_thread(p, unpin_cb, NULL);
	if (extra > 0)
		sched_setaffinity(extra, sizeof(orig_mask), &orig_mask);
	sched_setaffinity(0, sizeof(orig_mask), &orig_mask);
	pr_dbg(0, "program and heaptrace unpinned");
}

void cpu_pin(pid_t child)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0 || CPU_COUNT(&orig_mask) < 2 || !CPU_ISSET(cpu, &orig_mask))
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(child, sizeof(one), &one))
		return;
	if (sched_setaffinity(0, sizeof(one), &one)) {
		sched_setaffinity(child, sizeof(orig_mask), &orig_mask);
		return;
	}
	pinned = true;
	pr_dbg(0, "program and heaptrace pinned to CPU %d", cpu);
}

bool cpu_may_poll(void)
{
	return !pinned && CPU_COUNT(&orig_mask) > 1;
}
