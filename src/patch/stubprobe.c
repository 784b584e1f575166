// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether a stopped thread may hold a ring record it reserved and has not written
 * (stubs_thread_critical), for the probe of a reader stuck at such a record (trace/probe.c):
 * a thread that left a signal handler with siglongjmp while the handler had interrupted its stub
 * leaves a record nobody will ever write, and only a look at every thread tells it from one a
 * thread is still writing.
 */
#define _GNU_SOURCE
#include "patch/stubs.h"
#include "stub_arch.h"
#include "target/remote.h"
#include "util/util.h"

#ifdef STUB_CRITICAL
/* Bytes of stack above sp looked through for a signal frame's saved pc: a handler that blocks
 * runs a few frames above the one that interrupted the stub. */
#define PROBE_STACK (64u << 10)

/* addr in one of s's critical sections; a word on a stack (word) equal to the return address
 * of a call of ht_stub_reserve does not count: the thread's pc in that call tells. */
static bool critical(const struct stubs *s, uint64_t addr, bool word)
{
	static const uint8_t *const cs[][2] = STUB_CRITICAL;

	for (unsigned a = 0; a < s->nareas; a++) {
		uint64_t base = s->area[a];

		if (addr < base || addr >= base + STUBS_GEN_OFF)
			continue;
		for (unsigned i = 0; i < ARRAY_SIZE(cs); i++) {
			uint64_t lo = base + (uint64_t)(cs[i][0] - ht_stub_blob);
			uint64_t hi = base + (uint64_t)(cs[i][1] - ht_stub_blob);

			if (addr >= lo && addr < hi && !(word && i < STUB_CRITICAL_CALLS && addr == lo))
				return true;
		}
	}
	return false;
}

bool stubs_probe_supported(void)
{
	return true;
}

bool stubs_thread_critical(const struct stubs *s, pid_t tid)
{
	struct arch_regs regs;
	uint64_t sp, words[512];

	if (arch_get_regs(tid, &regs))
		return true; /* not known: as if it did */
	if (critical(s, arch->code_addr(arch->get_pc(&regs)), false))
		return true;
	sp = arch->get_sp(&regs) & ~7ull;
	for (uint64_t at = sp; at - sp < PROBE_STACK; at += sizeof(words)) {
		ssize_t n = remote_read(tid, at, words, sizeof(words));

		for (ssize_t i = 0; i < n / 8; i++)
			if (critical(s, words[i], true))
				return true;
		if (n != (ssize_t)sizeof(words))
			break; /* the stack's end */
	}
	return false;
}
#else
bool stubs_probe_supported(void)
{
	return false; /* the stub code marks no critical section: a stuck reader turns them off */
}

bool stubs_thread_critical(const struct stubs *s, pid_t tid)
{
	(void)s;
	(void)tid;
	return true;
}
#endif
