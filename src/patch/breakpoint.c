// SPDX-License-Identifier: GPL-2.0-only
/* Breakpoints stepped over out of line or by emulation: never removed while threads run. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PR_DOMAIN "bp"
#include "patch/breakpoint.h"
#include "heap/hooks.h"
#include "util/log.h"
#include "target/remote.h"
#include "target/retlog.h"
#include "util/util.h"

/* Slots for two per breakpoint of every hook (and a few of _Unwind_RaiseException's, the
 * dynamic linker's, sigaction's), after the trapping and the logging trampolines. */
_Static_assert(BP_CODE_PAGES * 4096 / ARCH_SLOT_SIZE >=
		       2 * (HOOK_COUNT + 8) + 1 + 2 * ARCH_LOGTRAMP_MAX / ARCH_SLOT_SIZE,
	       "the scratch page holds a slot of each kind for every breakpoint");

/* Find the arch's syscall instruction in an executable mapping, other than the one the
 * stopped thread may be in (near its pc: a restart could redirect the injected call).
 * Return its address or 0. */
static uint64_t find_syscall_insn(pid_t pid, const struct mapping *maps, size_t n, uint64_t pc)
{
	static uint8_t buf[1 << 16];

	for (size_t i = 0; i < n; i++) {
		if (!(maps[i].prot & MAP_X) || !strcmp(maps[i].path, "[vsyscall]"))
			continue;
		for (uint64_t at = maps[i].start; at < maps[i].end; at += sizeof(buf)) {
			size_t len = maps[i].end - at < sizeof(buf) ? maps[i].end - at : sizeof(buf);
			ssize_t got = remote_read(pid, at, buf, len);
			size_t il = arch->syscall_insn_len;

			if (got < (ssize_t)il)
				break;
			for (size_t k = 0; k + il <= (size_t)got; k += arch->insn_align)
				if (!memcmp(buf + k, arch->syscall_insn, il) &&
				    (at + k + 2 * il < pc || at + k > pc + il))
					return at + k;
		}
	}
	return 0;
}

uint64_t bp_syscall_at(const struct bpset *s)
{
	return s->stub ? s->stub : s->syscall_insn;
}

int64_t bp_syscall(const struct bpset *s, pid_t tid, long nr, const uint64_t args[6],
		   int *pending_sig, int *err)
{
	if (s->stub)
		return remote_syscall_stub(tid, s->stub, nr, args, pending_sig, err);
	return remote_syscall(tid, s->syscall_insn, nr, args, pending_sig, err);
}

/*
 * Put the restoring stub (arch.h) at addr, keeping the bytes it covers in saved (NULL: none to
 * keep). Return 0 or -errno.
 */
static int stub_place(struct bpset *s, pid_t tid, uint64_t addr, uint8_t *saved)
{
	int ret;

	if (saved && remote_read(tid, addr, saved, arch->stub_size) != (ssize_t)arch->stub_size)
		return -EFAULT;
	ret = remote_write(tid, addr, arch->stub_code, arch->stub_data_off);
	if (!ret)
		s->stub = addr;
	return ret;
}

/* Make the two pages after the slots' writable (the ring's, the guard's table's) and put the
 * logging trampoline in slots after the trapping one. Without it returns still work, each
 * with a stop. */
static void logtramp_setup(struct bpset *s, pid_t tid, int *pending_sig, bp_syscall_ok_fn ok,
			   void *ok_ctx)
{
	uint8_t code[ARCH_LOGTRAMP_MAX];
	uint64_t args[6] = { s->page + s->code_size, 2 * s->page_size, PROT_READ | PROT_WRITE };
	uint64_t at = s->page + s->slots_used * ARCH_SLOT_SIZE;
	size_t len;
	int64_t ret;
	int err, sig = 0;

	if (!ok(ok_ctx, arch->nr_mprotect, args, bp_syscall_at(s))) {
		pr_dbg(1, "no logging trampoline: its mprotect would be refused (seccomp)");
		return;
	}
	ret = bp_syscall(s, tid, arch->nr_mprotect, args, &sig, &err);
	if (sig)
		*pending_sig = sig;
	if (err || ret) {
		pr_dbg(1, "no logging trampoline: mprotect %lld, %d", (long long)ret, err);
		return;
	}
	len = arch->logtramp_encode(code, at, args[0] + RETLOG_HEAD_OFF,
				    args[0] + RETLOG_ENTRIES_OFF, RETLOG_SLOTS - 1);
	if (remote_write(tid, at, code, len))
		return;
	s->logtramp = at;
	s->logtramp_len = len;
	s->ring = args[0];
	s->slots_used += (len + ARCH_SLOT_SIZE - 1) / ARCH_SLOT_SIZE;
}

int bp_page_inject(struct bpset *s, pid_t tid, const struct mapping *maps, size_t n,
		   uint64_t hint, uint64_t cave, int *pending_sig, bp_syscall_ok_fn ok,
		   void *ok_ctx)
{
	struct arch_regs regs;
	uint64_t args[6];
	uint8_t tramp[ARCH_SLOT_SIZE], cave_saved[ARCH_STUB_MAX];
	size_t tlen;
	int64_t ret = 0;
	int err = 0;
	bool refused;

	*pending_sig = 0;
	s->stub = 0;
	s->syscall_insn = find_syscall_insn(tid, maps, n,
					    arch_get_regs(tid, &regs) ? 0 : arch->get_pc(&regs));
	if (!s->syscall_insn)
		return -ENOENT;
	s->page_size = 4096;
	s->code_size = BP_CODE_PAGES * s->page_size;
	args[0] = hint & ~(s->page_size - 1);
	/* code, then the ring and the guard's table (made writable), then the guard's code
	 * (guard.h) */
	args[1] = s->code_size + s->page_size * (arch->logtramp_encode ? 3 : 0);
	args[2] = PROT_READ | PROT_EXEC; /* ptrace writes it anyway */
	args[3] = MAP_PRIVATE | MAP_ANONYMOUS;
	args[4] = (uint64_t)-1;
	args[5] = 0;
	if (cave && arch->stub_code)
		stub_place(s, tid, cave, cave_saved);
	refused = !ok(ok_ctx, arch->nr_mmap, args, bp_syscall_at(s));
	if (!refused)
		ret = bp_syscall(s, tid, arch->nr_mmap, args, pending_sig, &err);
	if (s->stub) /* the cave is the program's: only for this first call */
		remote_write(tid, cave, cave_saved, arch->stub_size);
	s->stub = 0;
	if (refused)
		return -ECANCELED;
	if (err)
		return err;
	if (ret < 0 && ret > -4096) {
		pr_dbg(1, "mmap in process %d: %s", tid, strerror((int)-ret));
		return (int)ret;
	}
	s->page = (uint64_t)ret;
	s->slots_used = 1; /* slot 0 holds the trampoline */
	tlen = arch->tramp_encode(tramp);
	s->tramp = s->page;
	s->tramp_len = tlen;
	pr_dbg(1, "scratch page at %#llx (hint %#llx)", (unsigned long long)s->page,
	       (unsigned long long)hint);
	err = remote_write(tid, s->tramp, tramp, tlen);
	/* later calls go through a stub at the end of the last page */
	if (!err && arch->stub_code && args[1] >= s->code_size + 2 * s->page_size)
		stub_place(s, tid, s->page + args[1] - arch->stub_size, NULL);
	if (!err && arch->logtramp_encode && !getenv("HEAPTRACE_NO_LOGTRAMP"))
		logtramp_setup(s, tid, pending_sig, ok, ok_ctx);
	return err;
}

struct bp *bp_find(struct bpset *s, uint64_t addr)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].addr == addr)
			return &s->v[i];
	return NULL;
}

/* Give hook breakpoint b its logged entry path, in a slot of its own. */
static int logentry_place(struct bpset *s, pid_t pid, struct bp *b)
{
	uint8_t code[ARCH_SLOT_SIZE];
	uint64_t cont = b->slot;
	size_t len;
	int ret;

	if (b->step == STEP_EMULATE) {
		/* logentry_encode is x86_64's, whose emulated instructions only move the pc */
		struct arch_regs r = { 0 };

		if (arch->emulate(&b->emul, &r))
			return -ENOTSUP;
		cont = arch->get_pc(&r);
	}
	if ((s->slots_used + 1) * ARCH_SLOT_SIZE > s->code_size)
		return 0; /* no room: its returns go through the trapping trampoline */
	b->logentry = s->page + s->slots_used * ARCH_SLOT_SIZE;
	len = arch->logentry_encode(code, b->logentry, s->logtramp, cont);
	ret = remote_write(pid, b->logentry, code, len);
	if (ret)
		return ret;
	s->slots_used++;
	return 0;
}

/* The guard's slot for an emulated instruction (arch.h: emul_slot), where the guard is on
 * (s->announce): a trap nobody stops at goes on through it. Return its address, 0 if none. */
static uint64_t guard_slot(struct bpset *s, pid_t pid, uint64_t addr, const uint8_t *code,
			   size_t len, uint64_t at)
{
	uint8_t slot[ARCH_SLOT_SIZE];

	if (!s->announce || !arch->emul_slot || arch->emul_slot(addr, code, len, at, slot) ||
	    remote_write(pid, at, slot, ARCH_SLOT_SIZE))
		return 0;
	s->slots_used++;
	return at;
}

int bp_insert(struct bpset *s, pid_t pid, uint64_t addr, enum bp_kind kind, int hook)
{
	uint8_t code[ARCH_MAX_INSN], slot[ARCH_SLOT_SIZE], trap[ARCH_MAX_INSN];
	struct bp b = { .addr = arch->code_addr(addr), .kind = kind, .hook = hook };
	ssize_t got;
	int ret;

	if (bp_find(s, b.addr))
		return -EEXIST;
	if (!s->page)
		return -EINVAL;
	got = remote_read(pid, b.addr, code, sizeof(code));
	if (got <= 0)
		return got < 0 ? (int)got : -EFAULT;
	if ((s->slots_used + 1) * ARCH_SLOT_SIZE > s->code_size)
		return -ENOSPC;
	b.slot = s->page + s->slots_used * ARCH_SLOT_SIZE;
	ret = arch->displace(addr, code, got, b.slot, slot, &b.emul); /* addr: with arm's mode bit */
	if (ret < 0)
		return ret;
	b.step = ret;
	if (b.step == STEP_XOL) {
		ret = remote_write(pid, b.slot, slot, ARCH_SLOT_SIZE);
		if (ret)
			return ret;
		s->slots_used++;
	} else {
		b.slot = guard_slot(s, pid, addr, code, (size_t)got, b.slot);
	}
	if (kind == BP_HOOK && s->logtramp && arch->logentry_encode) {
		ret = logentry_place(s, pid, &b);
		if (ret)
			return ret;
	}
	b.len = arch->bp_encode(addr, trap);
	b.trap_is_ours = arch->trap_pc_after && b.emul.target != b.addr + b.len;
	memcpy(b.saved, code, sizeof(b.saved));
	if (s->announce)
		s->announce(s->announce_ctx, pid, &b);
	ret = remote_write(pid, b.addr, trap, b.len);
	if (ret)
		return ret;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = b;
	pr_dbg(1, "breakpoint at %#llx (%s)", (unsigned long long)b.addr,
	       b.step == STEP_XOL ? "out of line" : "emulated");
	return 0;
}

int bp_step(const struct bp *b, struct arch_regs *regs)
{
	if (b->step == STEP_EMULATE)
		return arch->emulate(&b->emul, regs);
	arch->set_pc(regs, b->slot);
	return 0;
}

int bp_remove_all(const struct bpset *s, pid_t pid)
{
	int first = 0;

	for (size_t i = 0; i < s->n; i++) {
		int ret = remote_write(pid, s->v[i].addr, s->v[i].saved, s->v[i].len);

		if (ret && !first)
			first = ret;
	}
	return first;
}

void bp_forget(struct bpset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void bp_copy(struct bpset *dst, const struct bpset *src, void *announce_ctx)
{
	*dst = *src;
	dst->announce_ctx = announce_ctx;
	dst->v = xmalloc((src->cap ? src->cap : 1) * sizeof(*src->v));
	memcpy(dst->v, src->v, src->n * sizeof(*src->v));
}
