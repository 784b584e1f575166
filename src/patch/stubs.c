// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entry stubs (stubs.h): the pages and the ring in the process, the patched entries, the
 * thread table the stubs read, and the reader of the ring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PR_DOMAIN "stubs"
#include "unwind/fallback.h"
#include "account/calls.h"
#include "patch/entrycheck.h"
#include "patch/image.h"
#include "util/log.h"
#include "util/maps.h"
#include "target/process.h"
#include "target/remote.h"
#include "stub_arch.h"
#include "patch/stubs.h"
#include "symbols/symbols.h"
#include "unwind/unwind.h"
#include "util/util.h"

#define CTL_SIZE 4096u

/* The data page (stub_layout.h): a continuation word for every hook between the header and
 * the threads' table, which ends with the page; the hook in the low byte of the thunk's word,
 * below its flags. */
_Static_assert(STUB_D_MAIN_TOP + 8 <= STUB_D_CONT && STUB_D_CONT + 8 * HOOK_COUNT <= STUB_D_TOPS &&
		       STUB_D_TOPS + 16 * (STUB_TOPS_MASK + 1) <= 4096,
	       "the stubs' data page holds every hook's continuation");
_Static_assert(HOOK_COUNT <= STUB_HOOK_MASK + 1 && STUB_HOOK_FREE > STUB_HOOK_MASK &&
		       STUB_HOOK_NORET > STUB_HOOK_MASK,
	       "the thunk's word holds every hook");
#define GEN_OFF 2048u /* per-hook code in the code page, after the common code */
#define MAX_REC (1u << 20) /* longest record heaptrace accepts */

struct patch {
	uint64_t addr, sym; /* code address, symbol value (arm: bit 0 = Thumb) */
	uint8_t saved[ARCH_MAX_INSN];
	int len, hook;
};

#define AREAS 4 /* stub pages: one within a branch's reach of each module with hooks */

struct stubs {
	uint64_t area[AREAS]; /* in the process: each area's code page, then its data page */
	unsigned area_used[AREAS]; /* bytes of per-hook code in each */
	unsigned nareas;
	uint64_t ctl_addr; /* in the process: the control page, then the ring twice */
	uint8_t *ctl; /* heaptrace's own mapping of the same */
	uint8_t *ring;
	size_t map_len;
	uint64_t size, tail;
	struct patch patch[HOOK_COUNT];
	unsigned npatch;
	unsigned copy; /* STUB_D_COPY */
	uint64_t main_lo, main_top; /* STUB_D_MAIN_LO, STUB_D_MAIN_TOP (main_stack) */
	bool off;
	uint64_t tsc0, ns0; /* the clock the records' time stamps are read with */
	struct thread **phantom; /* stand-ins: threads seen only by their key, or gone with records
				  * not read yet */
	unsigned nphantom;
	/* the threads of recent records, by their key's hash (thread_of): a record's key found
	 * by a look at every thread of every process, one in two records with 4 threads taking
	 * turns, was a quarter of heaptrace's CPU */
	struct thread *recent[16];
};

#if STUBS_SUPPORTED

extern const uint8_t ht_stub_blob[], ht_stub_entry[], ht_stub_ret[], ht_stub_code_end[],
	ht_stub_blob_end[];

static uint64_t nrecords, nwaits, peak_backlog;

/* ---- heaptrace's robust futex: the kernel marks the owner words when heaptrace dies ---- */

static struct robust_list_head robust = { .list = { &robust.list } };
static pid_t owner_tid;

static void *owner_main(void *arg)
{
	uint32_t never = 0;

	(void)arg;
	/* this thread's list, in place of the C library's: it takes no lock of its own */
	robust.futex_offset = STUB_C_OWNER - STUB_C_ROBUST;
	syscall(SYS_set_robust_list, &robust, sizeof(robust));
	__atomic_store_n(&owner_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	syscall(SYS_futex, &owner_tid, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	for (;;)
		syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return NULL;
}

/* The thread whose death the stubs watch, started once. Return its id, or 0. */
static pid_t owner(void)
{
	static bool started;
	pthread_t th;

	if (!started) {
		started = true;
		if (pthread_create(&th, NULL, owner_main, NULL))
			return 0;
		while (!__atomic_load_n(&owner_tid, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, &owner_tid, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	}
	return owner_tid;
}

/* The list entry of s's owner word: in the control page, futex_offset before the word. */
static struct robust_list *robust_entry(const struct stubs *s)
{
	return (struct robust_list *)(s->ctl + STUB_C_ROBUST);
}

static void robust_link(struct stubs *s)
{
	robust_entry(s)->next = robust.list.next;
	__atomic_store_n(&robust.list.next, robust_entry(s), __ATOMIC_RELEASE);
}

static void robust_unlink(struct stubs *s)
{
	for (struct robust_list *e = &robust.list; e->next != &robust.list; e = e->next)
		if (e->next == robust_entry(s)) {
			__atomic_store_n(&e->next, robust_entry(s)->next, __ATOMIC_RELEASE);
			return;
		}
}

bool stubs_supported(void)
{
	return arch->entry_relocate != NULL;
}

/* ---- setting up ---- */

/* One system call in the process, after ok allowed it. Return its result or -errno. */
static int64_t call(struct proc *p, pid_t tid, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		    uint64_t a3, uint64_t a4, uint64_t a5, bp_syscall_ok_fn ok, void *ok_ctx)
{
	const uint64_t args[6] = { a0, a1, a2, a3, a4, a5 };
	int sig = 0, err = 0;
	int64_t ret;

	if (!ok(ok_ctx, nr, args, bp_syscall_at(p->bps)))
		return -EPERM;
	ret = bp_syscall(p->bps, tid, nr, args, &sig, &err);
	if (sig)
		proc_thread_find(tid)->pending_sig = sig;
	return err ? err : ret;
}

/*
 * Every mapping of the ring's memfd must start at the same cache colour: a CPU whose data cache
 * is indexed by virtual address (mips64) would otherwise hold two copies of a line, and the
 * kernel refuses a MAP_FIXED shared mapping out of colour (EINVAL). stub_arch.h sets
 * STUB_SHM_ALIGN where that matters (the kernel's SHMLBA); the ring's size is a multiple of it.
 */
#ifndef STUB_SHM_ALIGN
#define STUB_SHM_ALIGN 4096u
#endif

/* len bytes of PROT_NONE here, aligned to STUB_SHM_ALIGN, or MAP_FAILED. */
static void *shm_aligned(size_t len)
{
	size_t slack = STUB_SHM_ALIGN - 4096;
	uint8_t *m = mmap(NULL, len + slack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *at;

	if (m == MAP_FAILED || !slack)
		return m;
	at = (uint8_t *)(((uintptr_t)m + STUB_SHM_ALIGN - 1) & ~(uintptr_t)(STUB_SHM_ALIGN - 1));
	if (at > m)
		munmap(m, at - m);
	if (m + slack > at)
		munmap(at + len, m + slack - at);
	return at;
}

/* The memfd of the ring in the process, mapped there as control page + ring + ring again, and
 * here the same way. Return 0 or -errno. */
static int map_ring(struct proc *p, struct stubs *s, pid_t tid, bp_syscall_ok_fn ok, void *okc)
{
	static const char name[] = "heaptrace-ring";
	struct arch_regs regs;
	uint64_t name_at, base, len = CTL_SIZE + 2 * s->size;
	int64_t fd, pidfd, myfd, r;
	void *here;

	if (arch_get_regs(tid, &regs))
		return -ESRCH;
	name_at = arch->get_sp(&regs) - 1024; /* below the red zone: free at a stop */
	if (remote_write_data(tid, name_at, name, sizeof(name)))
		return -EFAULT;
	fd = call(p, tid, SYS_memfd_create, name_at, MFD_CLOEXEC, 0, 0, 0, 0, ok, okc);
	if (fd < 0)
		return (int)fd;
	r = call(p, tid, SYS_ftruncate, fd, CTL_SIZE + s->size, 0, 0, 0, 0, ok, okc);
	base = r ? 0 : (uint64_t)call(p, tid, arch->nr_mmap, 0, len + STUB_SHM_ALIGN - 4096,
				      PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, ok, okc);
	if (r || ((int64_t)base < 0 && (int64_t)base > -4096)) {
		call(p, tid, SYS_close, fd, 0, 0, 0, 0, 0, ok, okc);
		return r ? (int)r : (int)base;
	}
	if (STUB_SHM_ALIGN > 4096) { /* the slack around the aligned range, given back */
		uint64_t at = (base + STUB_SHM_ALIGN - 1) & ~(uint64_t)(STUB_SHM_ALIGN - 1);

		if (at > base)
			call(p, tid, arch->nr_munmap, base, at - base, 0, 0, 0, 0, ok, okc);
		if (base + STUB_SHM_ALIGN - 4096 > at)
			call(p, tid, arch->nr_munmap, at + len, base + STUB_SHM_ALIGN - 4096 - at, 0,
			     0, 0, 0, ok, okc);
		base = at;
	}
	r = call(p, tid, arch->nr_mmap, base, CTL_SIZE + s->size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0, ok, okc);
	if (r == (int64_t)base)
		r = call(p, tid, arch->nr_mmap, base + CTL_SIZE + s->size, s->size,
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			 CTL_SIZE >> arch->mmap_off_shift, ok, okc);
	pidfd = syscall(SYS_pidfd_open, p->pid, 0);
	/* ints: a 64-bit variadic argument would shift the others on 32-bit arm */
	myfd = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, (int)pidfd, (int)fd, 0);
	if (pidfd >= 0)
		close(pidfd);
	call(p, tid, SYS_close, fd, 0, 0, 0, 0, 0, ok, okc);
	if (r != (int64_t)(base + CTL_SIZE + s->size) || myfd < 0) {
		pr_dbg(1, "process %d: the ring's second mapping: %#llx, its memfd here: %lld",
		       p->pid, (unsigned long long)r, (long long)myfd);
		goto fail;
	}
	here = shm_aligned(len);
	if (here == MAP_FAILED ||
	    mmap(here, CTL_SIZE + s->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, myfd,
		 0) == MAP_FAILED ||
	    mmap((uint8_t *)here + CTL_SIZE + s->size, s->size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, myfd, CTL_SIZE) == MAP_FAILED) {
		if (here != MAP_FAILED)
			munmap(here, len);
		close(myfd);
		goto fail;
	}
	close(myfd);
	s->ctl = here;
	s->ring = s->ctl + CTL_SIZE;
	s->map_len = len;
	s->ctl_addr = base;
	return 0;
fail:
	call(p, tid, arch->nr_munmap, base, len, 0, 0, 0, 0, ok, okc);
	return -ENOMEM;
}

static void put64(uint8_t *at, uint64_t v)
{
	memcpy(at, &v, 8);
}

/*
 * The main thread's stack, [top - its size limit, top) (at most 1 GiB: other mappings lie
 * below), for stubs that run before the C library set the thread pointer. 0, 0 if unknown.
 */
static void main_stack(struct proc *p, uint64_t *lo, uint64_t *top)
{
	struct mapping *maps = NULL;
	ssize_t n = maps_read(proc_mem_pid(p), &maps);
	struct rlimit rl;
	uint64_t size = 1ull << 30;

	*lo = *top = 0;
	for (ssize_t i = 0; i < n; i++)
		if (!strcmp(maps[i].path, "[stack]"))
			*top = maps[i].end;
	free(maps);
	if (!prlimit(p->pid, RLIMIT_STACK, NULL, &rl) && rl.rlim_cur < size)
		size = rl.rlim_cur;
	if (*top > size)
		*lo = *top - size;
	else
		*top = 0;
}

/* An area: the code page (the common code, r-x) and the data page after it, near hint: a
 * patched entry branches there with a 32-bit displacement. Return 0 or -errno. */
static int map_code(struct proc *p, struct stubs *s, pid_t tid, uint64_t hint,
		    bp_syscall_ok_fn ok, void *okc)
{
	size_t blob = ht_stub_blob_end - ht_stub_blob;
	uint8_t data[4096] = { 0 };
	int64_t at, r;

	if ((size_t)(ht_stub_code_end - ht_stub_blob) > GEN_OFF || blob != 2 * 4096)
		return -ENOSPC;
	if (s->nareas == AREAS)
		return -ENOSPC;
	at = call(p, tid, arch->nr_mmap, hint, blob, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, ok, okc);
	if (at < 0 && at > -4096)
		return (int)at;
	put64(data + STUB_D_CTL, s->ctl_addr);
	put64(data + STUB_D_RING, s->ctl_addr + CTL_SIZE);
	put64(data + STUB_D_MASK, s->size - 1);
	put64(data + STUB_D_SIZE, s->size);
	put64(data + STUB_D_COPY, s->copy);
	put64(data + STUB_D_TRAMP, at + (ht_stub_ret - ht_stub_blob));
	put64(data + STUB_D_MAIN_LO, s->main_lo);
	put64(data + STUB_D_MAIN_TOP, s->main_top);
	/* written while not executable: the kernel makes the instruction cache see it when
	 * mprotect first maps the page executable (arm64 syncs a page at its first executable
	 * mapping); later code and patches go through ptrace writes, which sync too */
	if (remote_write_data(tid, at, ht_stub_blob, 4096) ||
	    remote_write_data(tid, at + 4096, data, sizeof(data)))
		r = -EFAULT;
	else
		r = call(p, tid, arch->nr_mprotect, at, 4096, PROT_READ | PROT_EXEC, 0, 0, 0, ok,
			 okc);
	if (r) {
		call(p, tid, arch->nr_munmap, at, blob, 0, 0, 0, 0, ok, okc);
		return r < 0 ? (int)r : -EINVAL;
	}
	s->area[s->nareas++] = at;
	return 0;
}

/* Within a branch's reach of the first area? */
static int area_for(const struct stubs *s, uint64_t addr)
{
	uint8_t branch[16];

	for (unsigned i = 0; i < s->nareas; i++)
		if (arch->entry_branch(addr, s->area[i] + GEN_OFF, branch) > 0 &&
		    arch->entry_branch(addr, s->area[i] + 4096 - 64, branch) > 0)
			return (int)i;
	return -1;
}

/*
 * Where len bytes are free nearest to addr, from the process's maps (a page kept free on
 * either side), so that mmap's hint is taken: a hint that overlaps a mapping is ignored, and
 * the kernel then maps top-down, which on 32-bit arm, below the thread stacks of an attached
 * program, lies beyond b.w's ±16 MiB. Return the hint, or fallback when nothing is known.
 */
static uint64_t free_near(struct proc *p, uint64_t addr, uint64_t len, uint64_t fallback)
{
	struct mapping *maps = NULL;
	ssize_t n = maps_read(proc_mem_pid(p), &maps);
	uint64_t best = fallback, dist = UINT64_MAX, lo = 0x10000;

	for (ssize_t i = 0; i < n; i++) { /* the gaps below each mapping */
		uint64_t hi = maps[i].start, at, d;

		if (hi > lo && hi - lo >= len + 2 * 4096) {
			at = addr < lo + 4096 ? lo + 4096 :
			     addr + len + 4096 > hi ? hi - 4096 - len : addr;
			d = at > addr ? at - addr : addr - at;
			if (d < dist) {
				dist = d;
				best = at;
			}
		}
		lo = maps[i].end;
	}
	free(maps);
	return best;
}

/* An area near every module that defines hooks and that no area reaches whole (an
 * executable's own allocator, far from the C library): its stubs would stop otherwise. */
static void more_areas(struct proc *p, struct stubs *s, pid_t tid, bp_syscall_ok_fn ok,
		       void *okc)
{
	for (size_t i = 0; i < p->mod_hooks_n && i < p->mods.n; i++) {
		const struct module *m = &p->mods.v[i];
		bool hooks = false;

		for (int h = 0; h < HOOK_COUNT; h++)
			hooks |= p->mod_hooks[i][h] != 0;
		if (hooks && (area_for(s, m->start) < 0 || area_for(s, m->end) < 0) &&
		    map_code(p, s, tid,
			     free_near(p, m->start & ~0xfffULL, 2 * 4096,
				       (m->start & ~0xfffULL) - 0x200000),
			     ok, okc))
			pr_dbg(1, "process %d: no stub page near %s", p->pid, m->path);
	}
}

/* The stub code's own system calls must pass the process's seccomp filter. */
static bool futex_allowed(const struct stubs *s, bp_syscall_ok_fn ok, void *okc)
{
	const uint64_t wait[6] = { s->ctl_addr + STUB_C_TAIL, FUTEX_WAIT, 0, 0, 0, 0 };
	const uint64_t wake[6] = { s->ctl_addr + STUB_C_DWAKE, FUTEX_WAKE, 1, 0, 0, 0 };

	for (unsigned i = 0; i < s->nareas; i++)
		if (!ok(okc, SYS_futex, wait, s->area[i]) || !ok(okc, SYS_futex, wake, s->area[i]))
			return false;
	return true;
}

int stubs_setup(struct proc *p, pid_t tid, unsigned long ring_size, unsigned copy,
		bp_syscall_ok_fn ok, void *ok_ctx)
{
	struct stubs *s;
	pid_t own = owner();
	int ret;

	if (!stubs_supported() || !p->bps->page || !own || p->stubs)
		return -ENOTSUP;
	s = xcalloc(1, sizeof(*s));
	s->size = ring_size;
	s->copy = copy;
	main_stack(p, &s->main_lo, &s->main_top);
	ret = map_ring(p, s, tid, ok, ok_ctx);
	if (!ret)
		ret = map_code(p, s, tid, p->bps->page - 0x100000, ok, ok_ctx);
	if (!ret)
		more_areas(p, s, tid, ok, ok_ctx);
	if (!ret && !futex_allowed(s, ok, ok_ctx))
		ret = -EPERM;
	if (ret) {
		if (s->ctl)
			munmap(s->ctl, s->map_len);
		free(s);
		return ret;
	}
	/* the owner word holds the owner thread's id until the kernel marks it */
	__atomic_store_n((uint32_t *)(s->ctl + STUB_C_OWNER), (uint32_t)own, __ATOMIC_RELEASE);
	robust_link(s);
	s->tsc0 = stub_ticks();
	s->ns0 = now_ns();
	p->stubs = s;
	pr_dbg(1, "process %d: stubs at %#llx, ring of %lu KiB at %#llx", p->pid,
	       (unsigned long long)s->area[0], ring_size >> 10, (unsigned long long)s->ctl_addr);
	return 0;
}

/* ---- patching ---- */

struct pc_ctx {
	uint64_t lo, hi;
	bool inside;
};

/* A thread stopped in (lo, hi): its code address (arm: get_pc sets bit 0 in Thumb state, and
 * a thread stopped on the entry itself takes the branch like a call). */
static void pc_cb(struct thread *t, void *arg)
{
	struct pc_ctx *c = arg;
	struct arch_regs regs;
	uint64_t pc;

	if (arch_get_regs(t->tid, &regs))
		return;
	pc = arch->code_addr(arch->get_pc(&regs));
	if (pc > c->lo && pc < c->hi)
		c->inside = true;
}

/*
 * libstdc++'s operator new and new[] call malloc, and end by throwing when it fails for good:
 * their stubs record the entry and leave the return alone (a return address of ours would
 * stop an exception), and the allocation is the result of the malloc inside (calls.c).
 */
static bool awaits_inner(int hook, const struct module *m)
{
	return (hook == HOOK_NEW || hook == HOOK_NEW_ARRAY) && strstr(m->path, "libstdc++");
}

int stubs_patch(struct proc *p, pid_t tid, uint64_t sym, int hook, const struct module *m)
{
	uint64_t addr = arch->code_addr(sym);
	struct stubs *s = p->stubs;
	const struct hook_desc *d = &hook_table[hook];
	uint8_t insn[ARCH_MAX_INSN], gen[128], branch[16];
	uint64_t at, thunk, cont;
	size_t covered = 0;
	struct pc_ctx pcs;
	int len, blen, a;
	/* a free record holds the first argument only: a free of another argument (a custom
	 * one's, custom.h) is recorded as a whole entry, its return ignored */
	uint32_t word = hook | (hook_at_entry_only(d) && d->ptr == 0 ? STUB_HOOK_FREE : 0) |
			(awaits_inner(hook, m) ? STUB_HOOK_NORET : 0);

	if (!s || s->off)
		return -ENOTSUP;
	/* an alias of a patched entry first: no breakpoint may go into the branch; nor may a
	 * branch go over an alias's breakpoint (its trap would be relocated into the stub) */
	for (unsigned i = 0; i < s->npatch; i++)
		if (s->patch[i].addr == addr)
			return -EEXIST;
	if (bp_find(p->bps, addr))
		return -EEXIST;
	if (hook_needs_stop(d) && !(word & STUB_HOOK_NORET))
		return -ENOTSUP; /* its result is read at the return, or its frame restored at a
				  * throw, which only a stop can do */
	if (!(word & (STUB_HOOK_FREE | STUB_HOOK_NORET)) && !image_regs_only(p, hook))
		return -E2BIG; /* its return would move sp: arguments on the stack read shifted */
	if (proc_running(p))
		return -EBUSY; /* a running thread could be in the bytes being replaced */
	if (s->npatch == HOOK_COUNT ||
	    remote_read(tid, addr, insn, sizeof(insn)) != (ssize_t)sizeof(insn))
		return -EFAULT;
	a = area_for(s, addr);
	if (a < 0)
		return -ERANGE;
	at = s->area[a] + GEN_OFF + s->area_used[a];
	thunk = at;
	len = (int)arch->entry_thunk(gen, at, word,
				     s->area[a] + (ht_stub_entry - ht_stub_blob));
	cont = at + len;
	blen = arch->entry_branch(sym, thunk, branch);
	if (blen < 0)
		return blen;
	if (!m->bias_known)
		return -ENOTSUP;
	/*
	 * A branch from elsewhere into the bytes the patch replaces, after their first, would
	 * land inside it: entry_check_with decodes the whole function. A patch no longer than the
	 * arch's instruction alignment (aarch64: one 4-byte b over one whole instruction) has no
	 * such bytes: every branch lands on the entry, and runs the stub as a call does. mips64's
	 * j and its delay slot cover entry+4: the arch's own scan decodes the function.
	 */
	if (blen > (int)arch->insn_align) {
		uint64_t size = sym_func_size(m->path, sym - m->bias);
		int safe = entry_check_with(arch, m->path, sym - m->bias, size, blen);

		if (safe)
			return safe;
	}
	{
		int n = arch->entry_relocate(sym, insn, sizeof(insn), blen, at + len, gen + len,
					     &covered);

		if (n < 0)
			return n;
		len += n;
	}
	if (GEN_OFF + s->area_used[a] + len > 4096)
		return -ENOSPC;
	/* no thread may be stopped inside the bytes the branch replaces */
	pcs = (struct pc_ctx){ addr, addr + covered, false };
	proc_for_each_thread(p, pc_cb, &pcs);
	if (pcs.inside)
		return -EBUSY;
	if (remote_write(tid, at, gen, len) ||
	    remote_write_word(tid, s->area[a] + 4096 + STUB_D_CONT + 8 * hook, 8, cont))
		return -EFAULT;
	s->area_used[a] += (len + 15) & ~15u;
	s->patch[s->npatch] = (struct patch){ .addr = addr, .sym = sym, .len = blen, .hook = hook };
	memcpy(s->patch[s->npatch].saved, insn, blen);
	if (remote_write(tid, addr, branch, blen))
		return -EFAULT;
	s->npatch++;
	return 0;
}

bool stubs_active(const struct proc *p)
{
	return p->stubs && p->stubs->ctl && !p->stubs->off;
}

uint64_t stubs_tramp(const struct proc *p)
{
	const struct stubs *s = p->stubs;

	return s && s->ctl && !s->off ? s->area[0] + (ht_stub_ret - ht_stub_blob) : 0;
}

/* ---- threads: their key (the thread pointer) and stack top, in the process's table ---- */

static unsigned tops_hash(uint64_t key)
{
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 57);
}

/* The slot of a key in struct stubs' recent (16 slots): the hash's top 4 bits. */
static unsigned recent_slot(uint64_t key)
{
	return tops_hash(key) >> 3;
}

static void forget_recent(struct stubs *s, const struct thread *t)
{
	for (unsigned i = 0; i < ARRAY_SIZE(s->recent); i++)
		if (s->recent[i] == t)
			s->recent[i] = NULL;
}

/* Write { key, top } for t into the process's table (top first: a stub that matches the
 * key must read its top). */
static void tops_put_in(pid_t tid, uint64_t area, uint64_t key, uint64_t top)
{
	uint64_t base = area + 4096 + STUB_D_TOPS;
	uint8_t tab[(STUB_TOPS_MASK + 1) * 16];
	int free_slot = -1;

	if (remote_read(tid, base, tab, sizeof(tab)) != (ssize_t)sizeof(tab))
		return;
	for (unsigned i = 0; i < STUB_TOPS_PROBE; i++) {
		unsigned k = (tops_hash(key) + i) & STUB_TOPS_MASK;
		uint64_t kv;

		memcpy(&kv, tab + 16 * k, 8);
		if (kv == key) {
			free_slot = (int)k;
			break;
		}
		if (free_slot < 0 && (kv == 0 || kv == 1))
			free_slot = (int)k; /* empty, or a thread that exited */
		if (kv == 0)
			break;
	}
	if (free_slot < 0)
		return; /* its copies end at the page of their sp */
	remote_write_word(tid, base + 16 * free_slot + 8, 8, top);
	remote_write_word(tid, base + 16 * free_slot, 8, key);
}

/* Every area's data page has the table (each area's code reads its own). */
static void tops_put(struct proc *p, pid_t tid, uint64_t key, uint64_t top)
{
	for (unsigned i = 0; i < p->stubs->nareas; i++)
		tops_put_in(tid, p->stubs->area[i], key, top);
}

/* Write the off word of every area: nothing is recorded any more. */
static void areas_off(const struct stubs *s, pid_t tid)
{
	for (unsigned i = 0; i < s->nareas; i++)
		remote_write_word(tid, s->area[i] + 4096 + STUB_D_OFF, 8, 1);
}

/*
 * The end of the mapping that holds sp: the top of that thread's stack. *tp is set to 0 unless
 * a mapping holds its thread control block: mips64's kernel keeps a thread pointer across an
 * exec (x86_64 and aarch64 clear it), so until the C library sets its own, a launched program's
 * main thread still has the one of the program before the exec (heaptrace's), which points
 * nowhere in the new image.
 */
static uint64_t stack_top(struct proc *p, uint64_t sp, uint64_t *tp)
{
	struct mapping *maps = NULL;
	ssize_t n = maps_read(proc_mem_pid(p), &maps);
	uint64_t top = 0, tcb = arch->tls_window(*tp, 0);
	bool tp_mapped = false;

	for (ssize_t i = 0; i < n; i++) {
		if (sp >= maps[i].start && sp < maps[i].end)
			top = maps[i].end;
		tp_mapped |= tcb >= maps[i].start && tcb < maps[i].end;
	}
	free(maps);
	if (!tp_mapped)
		*tp = 0;
	return top;
}

/* Keep g as a stand-in (a thread known only by its key, or one gone with records unread). */
static struct thread *standin(struct stubs *s, struct thread *g)
{
	s->phantom = xrealloc(s->phantom, (s->nphantom + 1) * sizeof(*s->phantom));
	s->phantom[s->nphantom++] = g;
	return g;
}

static uint64_t ring_head(const struct stubs *s)
{
	return __atomic_load_n((const uint64_t *)(s->ctl + STUB_C_HEAD), __ATOMIC_ACQUIRE);
}

void stubs_thread(struct thread *t)
{
	struct arch_regs regs;

	if (!t->p || !t->p->stubs || arch_get_regs(t->tid, &regs) ||
	    arch_get_tls_reg(t->tid, &regs))
		return;
	t->tls = arch->get_tls(&regs); /* 0 before the C library set it up */
	t->stack_top = stack_top(t->p, arch->get_sp(&regs), &t->tls);
	t->tls_pending = !t->tls;
	/* its records all come after this: it has not run since it was made */
	t->key_from = ring_head(t->p->stubs);
	t->key_until = UINT64_MAX;
	memset(t->p->stubs->recent, 0, sizeof(t->p->stubs->recent));
	if (!t->tls)
		return;
	if (t->stack_top)
		tops_put(t->p, t->tid, t->tls, t->stack_top);
}

/* Free t's slot in the table of the area at base (a newer thread with its key, registered
 * since, keeps its own: then t's key_until is set). */
static void tops_free_in(struct thread *t, uint64_t area)
{
	uint64_t base = area + 4096 + STUB_D_TOPS, tomb = 1;
	uint8_t tab[(STUB_TOPS_MASK + 1) * 16];

	if (remote_read(t->p->pid, base, tab, sizeof(tab)) != (ssize_t)sizeof(tab))
		return;
	for (unsigned i = 0; i < STUB_TOPS_PROBE; i++) {
		unsigned k = (tops_hash(t->tls) + i) & STUB_TOPS_MASK;
		uint64_t kv;

		memcpy(&kv, tab + 16 * k, 8);
		if (kv == t->tls) {
			remote_write_data(t->p->pid, base + 16 * k, &tomb, 8);
			return;
		}
		if (!kv)
			return;
	}
}

void stubs_thread_gone(struct thread *t)
{
	struct stubs *s = t->p ? t->p->stubs : NULL;

	if (!s || !s->ctl)
		return;
	forget_recent(s, t);
	if (t->tls && s->tail != ring_head(s)) {
		/* records of it may still come: a stand-in takes its calls in flight */
		struct thread *g = xcalloc(1, sizeof(*g));

		*g = *t;
		g->hnext = NULL;
		g->key_until = ring_head(s);
		t->frames = NULL;
		t->nframes = t->cap = 0;
		standin(s, g);
	}
	if (!t->tls || t->p->exited || t->key_until != UINT64_MAX)
		return;
	for (unsigned i = 0; i < s->nareas; i++)
		tops_free_in(t, s->area[i]);
}

struct key_ctx {
	uint64_t key, pos;
	struct thread *found, *unknown;
	unsigned nunknown;
};

/* t had the key at position pos; the newest such thread wins (the C library reuses a gone
 * thread's memory, and so its key, for a new one). */
static void key_match(struct key_ctx *c, struct thread *t)
{
	if (t->tls == c->key && t->key_from <= c->pos && c->pos < t->key_until &&
	    (!c->found || t->key_from >= c->found->key_from))
		c->found = t;
}

static void key_cb(struct thread *t, void *arg)
{
	struct key_ctx *c = arg;

	key_match(c, t);
	if (t->tls_pending) {
		c->unknown = t;
		c->nunknown++;
	}
}

/* The thread of a record's key. A key not seen yet is the only thread's that had none when
 * heaptrace looked (a launched program's main thread, before its C library set its thread
 * pointer; threads made later have theirs from their start), else a stand-in's, which keeps
 * its calls apart. */
static struct thread *thread_of(struct proc *p, uint64_t key, uint64_t pos)
{
	struct stubs *s = p->stubs;
	struct key_ctx c = { key, pos, NULL, NULL, 0 };
	struct thread **r = &s->recent[recent_slot(key)];

	if (*r && (*r)->tls == key && (*r)->key_until == UINT64_MAX)
		return *r; /* nothing registered since (stubs_thread empties recent) */
	proc_for_each_thread(p, key_cb, &c);
	for (unsigned i = 0; i < s->nphantom; i++)
		key_match(&c, s->phantom[i]);
	if (!c.found && c.nunknown == 1) {
		c.found = c.unknown;
		c.found->tls = key;
		c.found->tls_pending = false;
		c.found->key_from = 0;
		c.found->key_until = UINT64_MAX;
		if (c.found->stack_top)
			tops_put(p, proc_mem_pid(p), key, c.found->stack_top);
	}
	if (!c.found) {
		c.found = xcalloc(1, sizeof(*c.found));
		c.found->p = p;
		c.found->tls = key;
		c.found->key_until = UINT64_MAX;
		standin(s, c.found);
	}
	*r = c.found;
	return c.found;
}

/* ---- the reader ---- */

static uint64_t get64(const uint8_t *at)
{
	uint64_t v;

	memcpy(&v, at, 8);
	return v;
}

static uint32_t get32(const uint8_t *at)
{
	uint32_t v;

	memcpy(&v, at, 4);
	return v;
}

#ifndef STUB_TICKS_MASK /* stub_arch.h says where the counter is narrower and wraps */
#define STUB_TICKS_MASK UINT64_MAX
#define STUB_TICKS_SPAN UINT64_MAX
#endif

static uint64_t rec_ns(struct stubs *s, uint64_t tsc)
{
	static double ns_per_tick;
	uint64_t now = now_ns(), tnow = stub_ticks();
	uint64_t span = (tnow - s->tsc0) & STUB_TICKS_MASK, age = (tnow - tsc) & STUB_TICKS_MASK;

	/* calibrated against the monotonic clock over the longest span seen (that cannot have
	 * wrapped) */
	if (now - s->ns0 > 1000000 && now - s->ns0 < STUB_TICKS_SPAN && span &&
	    span <= STUB_TICKS_MASK / 2)
		ns_per_tick = (double)(now - s->ns0) / (double)span;
	if (!ns_per_tick || age > STUB_TICKS_MASK / 2) /* stamped after tnow: another CPU's */
		return now;
	return now - (uint64_t)((double)age * ns_per_tick);
}

struct unwind_ctx {
	struct proc *p;
	const uint8_t *rec;
};

static unsigned unwind_rec(void *arg, uint64_t *pcs, unsigned max)
{
	struct unwind_ctx *c = arg;
	const uint8_t *r = c->rec;
	uint32_t copy = get32(r + 112);
	struct arch_regs regs;
	struct unwind_hooks h;

	if (copy < 8 || !c->p->unw)
		return 0;
	stub_regs(&regs, r); /* the caller's frame: pc = return address */
	fallback_hooks(c->p, &h);
	return unwind_capture_copy(c->p->unw, &regs, get64(r + 40), r + STUB_REC_ENTRY, copy,
				   pcs, max, &h);
}

static void take_entry(struct proc *p, struct stubs *s, const uint8_t *r, uint64_t pos)
{
	struct unwind_ctx uc = { p, r };
	struct calls_rec c = {
		.hook = get32(r + 12) & STUB_HOOK_MASK,
		.sp = get64(r + 40),
		.ret = stub_ret(r),
		.cookie = pos,
		.ns = rec_ns(s, get64(r + 96)),
		.returns = get32(r + 116) != 0,
		.awaits_inner = (get32(r + 12) & STUB_HOOK_NORET) != 0,
	};

	for (unsigned i = 0; i < 3; i++)
		c.args[i] = get64(r + 16 + 8 * i);
	calls_rec_entry(thread_of(p, get64(r + 104), pos), &c, unwind_rec, &uc);
}

static void take_free(struct proc *p, struct stubs *s, const uint8_t *r, uint64_t pos)
{
	struct calls_rec c = {
		.hook = get32(r + 12) & STUB_HOOK_MASK,
		.args = { get64(r + 16) },
		.ns = rec_ns(s, get64(r + 32)),
	};

	calls_rec_entry(thread_of(p, get64(r + 24), pos), &c, NULL, NULL);
}

/* Free the stand-ins of gone threads whose records have all been read. */
static void bury(struct stubs *s)
{
	unsigned k = 0;

	for (unsigned i = 0; i < s->nphantom; i++) {
		struct thread *g = s->phantom[i];

		if (g->key_until <= s->tail) {
			forget_recent(s, g);
			proc_thread_release(g);
		} else {
			s->phantom[k++] = g;
		}
	}
	s->nphantom = k;
}

/* The position of the first complete record after the one at s->tail, up to head, or head. */
static uint64_t next_complete(const struct stubs *s, uint64_t head)
{
	for (uint64_t pos = s->tail + 16; pos < head; pos += 16) {
		const uint8_t *r = s->ring + (pos & (s->size - 1));
		uint64_t tag = __atomic_load_n((const uint64_t *)r, __ATOMIC_ACQUIRE);
		uint32_t len = get32(r + 8);

		if ((tag & ~(uint64_t)15) == pos && (tag & 15) >= STUB_KIND_ENTRY &&
		    (tag & 15) <= STUB_KIND_RETURN && len >= 16 && len % 16 == 0 &&
		    pos + len <= head)
			return pos;
	}
	return head;
}

unsigned stubs_drain_final(struct proc *p)
{
	struct stubs *s = p->stubs;
	unsigned n = stubs_drain(p);

	while (s && s->ctl) {
		uint64_t head = __atomic_load_n((uint64_t *)(s->ctl + STUB_C_HEAD),
						__ATOMIC_ACQUIRE);

		if (s->tail == head)
			break;
		/* a record a thread reserved and never wrote: it died, or is stopped for good */
		pr_dbg(1, "process %d: skipped a record never written at %#llx", p->pid,
		       (unsigned long long)s->tail);
		s->tail = next_complete(s, head);
		n += stubs_drain(p);
	}
	return n;
}

/* HEAPTRACE_TEST_SLOW_READER=MS: a reader slowed on purpose, for the tests of a full ring and
 * of late reading: it reads the records that were in the ring MS ms before, so every record is
 * read at least that late. */
static void slow_reader(void)
{
	static long ms = -1;

	if (ms < 0) {
		const char *e = getenv("HEAPTRACE_TEST_SLOW_READER");

		ms = e ? atol(e) : 0;
	}
	if (ms > 0)
		usleep(ms * 1000);
}

unsigned stubs_drain(struct proc *p)
{
	struct stubs *s = p->stubs;
	uint64_t head;
	unsigned n = 0;

	if (!s || !s->ctl)
		return 0;
	head = __atomic_load_n((uint64_t *)(s->ctl + STUB_C_HEAD), __ATOMIC_ACQUIRE);
	if (head != s->tail)
		slow_reader();
	if (head - s->tail > peak_backlog && head - s->tail <= s->size)
		peak_backlog = head - s->tail; /* how far behind the program heaptrace was */
	while (s->tail != head) {
		const uint8_t *r = s->ring + (s->tail & (s->size - 1));
		uint64_t tag = __atomic_load_n((const uint64_t *)r, __ATOMIC_ACQUIRE);
		uint32_t len = get32(r + 8), kind = tag & 15;

		if ((tag & ~(uint64_t)15) != s->tail || kind < STUB_KIND_ENTRY ||
		    kind > STUB_KIND_RETURN)
			break; /* reserved, not written yet */
		if (len < 16 || len % 16 || len > MAX_REC || len > s->size) {
			pr_warn("process %d: a broken record in the ring: the rest is lost", p->pid);
			s->tail = head;
			break;
		}
		if (kind == STUB_KIND_ENTRY)
			take_entry(p, s, r, s->tail);
		else if (kind == STUB_KIND_FREE)
			take_free(p, s, r, s->tail);
		else
			calls_rec_return(thread_of(p, get64(r + 32), s->tail), get64(r + 16),
					 get64(r + 24));
		s->tail += len;
		n++;
	}
	if (!n)
		return 0;
	nrecords += n;
	bury(s);
	__atomic_store_n((uint64_t *)(s->ctl + STUB_C_TAIL), s->tail, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n((uint32_t *)(s->ctl + STUB_C_WAITERS), 0, __ATOMIC_SEQ_CST)) {
		nwaits++;
		syscall(SYS_futex, s->ctl + STUB_C_TAIL, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
	}
	return n;
}

uint64_t stubs_unread_until(const struct proc *p)
{
	const struct stubs *s = p->stubs;
	uint64_t head;

	if (!stubs_active(p))
		return 0;
	head = ring_head(s);
	return head != s->tail ? head : 0;
}

bool stubs_read_to(const struct proc *p, uint64_t pos)
{
	return !stubs_active(p) || p->stubs->tail >= pos;
}

/* ---- letting go ---- */

static void unpatch(struct stubs *s, pid_t tid)
{
	for (unsigned i = 0; i < s->npatch; i++)
		remote_write(tid, s->patch[i].addr, s->patch[i].saved, s->patch[i].len);
}

void stubs_off(struct proc *p, pid_t tid)
{
	struct stubs *s = p->stubs;

	if (!s || s->off)
		return;
	unpatch(s, tid);
	areas_off(s, tid);
	s->off = true;
	/* a stub that reserved before the off word was set may still wait for room */
	__atomic_store_n((uint64_t *)(s->ctl + STUB_C_TAIL),
			 __atomic_load_n((uint64_t *)(s->ctl + STUB_C_HEAD), __ATOMIC_ACQUIRE),
			 __ATOMIC_SEQ_CST);
	syscall(SYS_futex, s->ctl + STUB_C_TAIL, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

void stubs_fork(struct proc *child, const struct proc *parent)
{
	const struct stubs *s = parent->stubs;
	struct stubs *c;

	if (!s || s->off || !s->npatch)
		return;
	c = xcalloc(1, sizeof(*c));
	c->nareas = s->nareas;
	memcpy(c->area, s->area, sizeof(c->area));
	c->npatch = s->npatch;
	memcpy(c->patch, s->patch, sizeof(c->patch));
	child->stubs = c; /* no ring of its own: stubs_child_start turns them off */
}

void stubs_child_start(struct proc *child, pid_t tid, bool follow)
{
	struct stubs *s = child->stubs;

	if (!s || s->ctl)
		return;
	/* the child maps its parent's ring: it must never write there */
	areas_off(s, tid);
	unpatch(s, tid);
	/* the guard, a copy of the parent's, learns of each (bpset.announce) */
	for (unsigned i = 0; follow && i < s->npatch; i++)
		bp_insert(child->bps, tid, s->patch[i].sym, BP_HOOK, s->patch[i].hook);
	free(s);
	child->stubs = NULL;
}

void stubs_forget(struct proc *p)
{
	struct stubs *s = p->stubs;

	if (!s)
		return;
	if (!s->ctl) { /* a forked child's, never started */
		free(s);
		p->stubs = NULL;
		return;
	}
	robust_unlink(s);
	munmap(s->ctl, s->map_len);
	for (unsigned i = 0; i < s->nphantom; i++) {
		s->phantom[i]->nframes = 0;
		proc_thread_release(s->phantom[i]);
	}
	free(s->phantom);
	free(s);
	p->stubs = NULL;
}

void stubs_stats(uint64_t *records, uint64_t *waits, uint64_t *backlog)
{
	*records = nrecords;
	*waits = nwaits;
	*backlog = peak_backlog;
}

#else /* !STUBS_SUPPORTED */

bool stubs_supported(void)
{
	return false;
}

int stubs_setup(struct proc *p, pid_t tid, unsigned long ring_size, unsigned copy,
		bp_syscall_ok_fn ok, void *ok_ctx)
{
	(void)p, (void)tid, (void)ring_size, (void)copy, (void)ok, (void)ok_ctx;
	return -ENOTSUP;
}

int stubs_patch(struct proc *p, pid_t tid, uint64_t addr, int hook, const struct module *m)
{
	(void)p, (void)tid, (void)addr, (void)hook, (void)m;
	return -ENOTSUP;
}

bool stubs_active(const struct proc *p)
{
	(void)p;
	return false;
}

uint64_t stubs_tramp(const struct proc *p)
{
	(void)p;
	return 0;
}

void stubs_thread(struct thread *t)
{
	(void)t;
}

void stubs_thread_gone(struct thread *t)
{
	(void)t;
}

unsigned stubs_drain(struct proc *p)
{
	(void)p;
	return 0;
}

unsigned stubs_drain_final(struct proc *p)
{
	(void)p;
	return 0;
}

uint64_t stubs_unread_until(const struct proc *p)
{
	(void)p;
	return 0;
}

bool stubs_read_to(const struct proc *p, uint64_t pos)
{
	(void)p, (void)pos;
	return true;
}

void stubs_off(struct proc *p, pid_t tid)
{
	(void)p, (void)tid;
}

void stubs_fork(struct proc *child, const struct proc *parent)
{
	(void)child, (void)parent;
}

void stubs_child_start(struct proc *child, pid_t tid, bool follow)
{
	(void)child, (void)tid, (void)follow;
}

void stubs_forget(struct proc *p)
{
	(void)p;
}

void stubs_stats(uint64_t *records, uint64_t *waits, uint64_t *backlog)
{
	*records = 0;
	*waits = 0;
	*backlog = 0;
}

#endif
