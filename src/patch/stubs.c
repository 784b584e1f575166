// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entry stubs (stubs.h), setting up: the ring's memfd mapped into the process and into
 * heaptrace, and the areas (a code page and its data page) within a branch's reach of the
 * modules with hooks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PR_DOMAIN "stubs"
#include "patch/stubs.h"
#include "stub_arch.h"
#include "target/process.h"
#include "target/remote.h"
#include "unwind/python.h"
#include "util/log.h"
#include "util/maps.h"
#include "util/util.h"

/* The data page (stub_layout.h): a continuation word for every hook between the header and
 * the threads' table, which ends with the page; the hook in the low byte of the thunk's word,
 * below its flags. */
_Static_assert(STUB_D_MAIN_TOP + 8 <= STUB_D_CONT &&
		       STUB_D_CONT + 8 * (STUBS_WATCH0 + STUBS_WATCHES) <= STUB_D_TOPS &&
		       STUB_D_TOPS + 16 * (STUB_TOPS_MASK + 1) <= 4096,
	       "the stubs' data page holds every hook's continuation");
_Static_assert(STUBS_WATCH0 + STUBS_WATCHES <= STUB_HOOK_MASK + 1 &&
		       STUB_HOOK_FREE > STUB_HOOK_MASK && STUB_HOOK_NORET > STUB_HOOK_MASK &&
		       STUB_HOOK_CTX > STUB_HOOK_MASK,
	       "the thunk's word holds every hook");

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

/* Descriptor fd of thread tid's process, opened here through /proc (the tracer may). Return it
 * or -1. */
static int memfd_via_proc(pid_t tid, int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)tid, fd);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* The memfd of the ring in the process, mapped there as control page + ring + ring again, and
 * here the same way. Return 0 or -errno. */
static int map_ring(struct proc *p, struct stubs *s, pid_t tid, bp_syscall_ok_fn ok, void *okc)
{
	static const char name[] = "heaptrace-ring";
	struct arch_regs regs;
	uint64_t name_at, base, len = STUBS_CTL_SIZE + 2 * s->size;
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
	r = call(p, tid, SYS_ftruncate, fd, STUBS_CTL_SIZE + s->size, 0, 0, 0, 0, ok, okc);
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
	r = call(p, tid, arch->nr_mmap, base, STUBS_CTL_SIZE + s->size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0, ok, okc);
	if (r == (int64_t)base)
		r = call(p, tid, arch->nr_mmap, base + STUBS_CTL_SIZE + s->size, s->size,
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			 STUBS_CTL_SIZE >> arch->mmap_off_shift, ok, okc);
	pidfd = syscall(SYS_pidfd_open, p->pid, 0);
	/* ints: a 64-bit variadic argument would shift the others on 32-bit arm */
	myfd = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, (int)pidfd, (int)fd, 0);
	if (pidfd >= 0)
		close(pidfd);
	if (myfd < 0) /* a main thread that has exited has no descriptors: through thread tid */
		myfd = memfd_via_proc(tid, (int)fd);
	call(p, tid, SYS_close, fd, 0, 0, 0, 0, 0, ok, okc);
	if (r != (int64_t)(base + STUBS_CTL_SIZE + s->size) || myfd < 0) {
		pr_dbg(1, "process %d: the ring's second mapping: %#llx, its memfd here: %lld",
		       p->pid, (unsigned long long)r, (long long)myfd);
		goto fail;
	}
	here = shm_aligned(len);
	if (here == MAP_FAILED ||
	    mmap(here, STUBS_CTL_SIZE + s->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 myfd, 0) == MAP_FAILED ||
	    mmap((uint8_t *)here + STUBS_CTL_SIZE + s->size, s->size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, myfd, STUBS_CTL_SIZE) == MAP_FAILED) {
		if (here != MAP_FAILED)
			munmap(here, len);
		close(myfd);
		goto fail;
	}
	close(myfd);
	s->ctl = here;
	s->ring = s->ctl + STUBS_CTL_SIZE;
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

/* The Python words of a data page (stub_layout.h: STUB_D_PY_*), where the stub code reads them
 * and the process has an interpreter heaptrace reads. */
static void python_words(struct proc *p, struct stubs *s, uint8_t *data)
{
#ifdef STUB_PY_SUPPORTED
	uint64_t w[PYTHON_STUB_WORDS];

	_Static_assert(STUB_D_PY_MAX - STUB_D_PY_TSTATE == 8 * (PYTHON_STUB_WORDS - 1),
		       "python_stub_words fills the data page's Python words in order");
	if (python_stub_words(p, w)) {
		for (unsigned i = 0; i < PYTHON_STUB_WORDS; i++)
			put64(data + STUB_D_PY_TSTATE + 8 * i, w[i]);
		s->python = true;
	}
#else
	(void)p;
	(void)s;
	(void)data;
#endif
}

void stubs_python(struct proc *p)
{
#ifdef STUB_PY_SUPPORTED
	struct stubs *s = p->stubs;
	uint64_t w[PYTHON_STUB_WORDS];
	pid_t pid = proc_mem_pid(p);

	if (!s || s->python || !python_stub_words(p, w))
		return;
	/* STUB_D_PY_MAX, which lets the stubs walk, after the words it vouches for */
	for (unsigned i = 0; i < s->nareas; i++) {
		uint64_t at = s->area[i] + 4096 + STUB_D_PY_TSTATE;

		if (remote_write_data(pid, at, w, 8 * (PYTHON_STUB_WORDS - 1)) ||
		    remote_write_data(pid, at + 8 * (PYTHON_STUB_WORDS - 1),
				      &w[PYTHON_STUB_WORDS - 1], 8)) {
			pr_warn("process %d: the entry stubs record no Python frames (their data "
				"page cannot be written)", p->pid);
			break;
		}
	}
	s->python = true;
#else
	(void)p;
#endif
}

/* The stub code's pauses (stub_pause) in one slice (STUB_STALL_SLICE_NS), at least 1: timed
 * once, at the first set-up, as they are this machine's. */
static uint64_t pauses_per_slice(void)
{
#ifdef STUB_STALL_SUPPORTED
	static uint64_t per;
	const unsigned n = 5000;
	uint64_t t0, dt;

	if (per)
		return per;
	t0 = now_ns();
	for (unsigned i = 0; i < n; i++)
		stub_pause();
	dt = now_ns() - t0;
	per = dt ? (uint64_t)n * STUB_STALL_SLICE_NS / dt + 1 : n;
	return per;
#else
	return 1; /* the stub code here waits with futex only */
#endif
}

/* An area: the code page (the common code, r-x) and the data page after it, near hint: a
 * patched entry branches there with a 32-bit displacement. Return 0 or -errno. */
static int map_code(struct proc *p, struct stubs *s, pid_t tid, uint64_t hint,
		    bp_syscall_ok_fn ok, void *okc)
{
	size_t blob = ht_stub_blob_end - ht_stub_blob;
	uint8_t data[4096] = { 0 };
	int64_t at, r;

	if ((size_t)(ht_stub_code_end - ht_stub_blob) > STUBS_GEN_OFF || blob != 2 * 4096)
		return -ENOSPC;
	if (s->nareas == STUBS_AREAS)
		return -ENOSPC;
	at = call(p, tid, arch->nr_mmap, hint, blob, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, ok, okc);
	if (at < 0 && at > -4096)
		return (int)at;
	put64(data + STUB_D_CTL, s->ctl_addr);
	put64(data + STUB_D_RING, s->ctl_addr + STUBS_CTL_SIZE);
	put64(data + STUB_D_MASK, s->size - 1);
	put64(data + STUB_D_SIZE, s->size);
	put64(data + STUB_D_COPY, s->copy);
	put64(data + STUB_D_STALL, s->stall);
	put64(data + STUB_D_PAUSES, pauses_per_slice());
	put64(data + STUB_D_TRAMP, at + (ht_stub_ret - ht_stub_blob));
	put64(data + STUB_D_SAMPLE, p->table.sample_bytes); /* the accounting's rule (table.h) */
	put64(data + STUB_D_RAND, now_ns() | 1);
	put64(data + STUB_D_MAIN_LO, s->main_lo);
	put64(data + STUB_D_MAIN_TOP, s->main_top);
	python_words(p, s, data);
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

/* The first area within a branch's reach of addr (stubs.h). */
int stubs_area_for(const struct stubs *s, uint64_t addr)
{
	uint8_t branch[16];

	for (unsigned i = 0; i < s->nareas; i++)
		if (arch->entry_branch(addr, s->area[i] + STUBS_GEN_OFF, branch) > 0 &&
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
		if (hooks && (stubs_area_for(s, m->start) < 0 || stubs_area_for(s, m->end) < 0) &&
		    map_code(p, s, tid,
			     free_near(p, m->start & ~0xfffULL, 2 * 4096,
				       (m->start & ~0xfffULL) - 0x200000),
			     ok, okc))
			pr_dbg(1, "process %d: no stub page near %s", p->pid, m->path);
	}
}

/* ---- seccomp filters installed later ---- */

/* Thread tid's seccomp: its filters, or STUBS_STRICT in strict mode (Seccomp: 1), which
 * allows no futex. 0 when unknown (a gone thread: nothing to fear from it). */
#define STUBS_STRICT 0x100000000ull
static uint64_t seccomp_of(pid_t tid)
{
	char path[64], line[128];
	uint64_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8) && atol(line + 8) == 1)
			n = STUBS_STRICT;
		else if (!strncmp(line, "Seccomp_filters:", 16) && n != STUBS_STRICT)
			n = strtoull(line + 16, NULL, 10);
	fclose(f);
	return n;
}

struct seccomp_walk {
	uint64_t most;
	uint64_t was; /* the most at setup */
	bool changed; /* a thread's differs from it */
};

static void seccomp_cb(struct thread *t, void *ctx)
{
	struct seccomp_walk *w = ctx;
	uint64_t n = seccomp_of(t->tid);

	if (n > w->most)
		w->most = n;
	if (n != w->was)
		w->changed = true;
}

/* The most seccomp filters a thread of p has (STUBS_STRICT: strict mode). */
static uint64_t seccomp_most(struct proc *p)
{
	struct seccomp_walk w = { 0, 0, false };

	proc_for_each_thread(p, seccomp_cb, &w);
	return w.most;
}

void stubs_data_put(const struct stubs *s, pid_t pid, unsigned off, uint64_t v)
{
	for (unsigned i = 0; i < s->nareas; i++)
		if (remote_write_data(pid, s->area[i] + 4096 + off, &v, 8))
			pr_dbg(1, "%d: the stubs' data page at %#llx cannot be written", pid,
			       (unsigned long long)s->area[i]);
}

void stubs_seccomp(struct proc *p)
{
#ifdef STUB_STALL_SUPPORTED
	struct stubs *s = p->stubs;
	uint32_t *nosys = s && s->ctl ? (uint32_t *)(s->ctl + STUB_C_NOSYS) : NULL;
	struct seccomp_walk w;
	uint64_t now = now_ns();

	if (nosys && !s->nosys && __atomic_load_n(nosys, __ATOMIC_ACQUIRE)) {
		s->nosys = true; /* a watched call set it */
		pr_dbg(1, "process %d is installing a seccomp filter: the stubs wait without "
			  "system calls", p->pid);
	}
	if (nosys && s->nosys && !s->nosys_told &&
	    __atomic_load_n((uint32_t *)(s->ctl + STUB_C_WAITERS), __ATOMIC_ACQUIRE)) {
		/* said when it first matters: a program that execs next never waits */
		s->nosys_told = true;
		pr_warn("process %d may have installed a seccomp filter: its traced calls wait "
			"for heaptrace without system calls", p->pid);
	}
	if (!nosys || s->off || s->nosys || now - s->filters_ns < STUBS_SECCOMP_NS)
		return;
	s->filters_ns = now;
	w = (struct seccomp_walk){ 0, s->filters, false };
	proc_for_each_thread(p, seccomp_cb, &w);
	if (!w.changed)
		return;
	/* not read (that needs the thread stopped): any new filter may forbid futex */
	__atomic_store_n(nosys, 1, __ATOMIC_RELEASE);
	s->nosys = true;
	pr_dbg(0, "process %d: a seccomp filter changed: the stubs wait without system calls",
	       p->pid);
#else
	(void)p; /* the stub code here waits with futex only */
#endif
}

void stubs_data_off(struct proc *p)
{
	struct stubs *s = p->stubs;

	if (s && s->ctl && !s->off)
		stubs_data_put(s, proc_mem_pid(p), STUB_D_OFF, 1);
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
		unsigned stall_ms, bp_syscall_ok_fn ok, void *ok_ctx)
{
	struct stubs *s;
	pid_t own = stubs_owner();
	int ret;

	if (!stubs_supported() || !p->bps->page || !own || p->stubs)
		return -ENOTSUP;
	s = xcalloc(1, sizeof(*s));
	s->size = ring_size;
	s->copy = copy ? copy : STUBS_COPY_LEARN_MAX;
	s->stall = stall_ms; /* slices of 1 ms (STUB_STALL_SLICE_NS) */
	s->filters = seccomp_most(p);
	s->filters_ns = now_ns();
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
	stubs_owner_link(s->ctl);
	s->rd.tsc0 = stub_ticks();
	s->rd.ns0 = now_ns();
	s->rd.slow_ms = -1; /* read at the first drain */
	copysize_init(&s->rd.copy, s->copy, !copy);
	s->rd.keys_gen = s->threads_gen - 1; /* the key table is built at the first record */
	p->stubs = s;
	pr_dbg(1, "process %d: stubs at %#llx, ring of %lu KiB at %#llx", p->pid,
	       (unsigned long long)s->area[0], ring_size >> 10, (unsigned long long)s->ctl_addr);
	return 0;
}

bool stubs_active(const struct proc *p)
{
	return p->stubs && p->stubs->ctl && !p->stubs->off;
}

uint64_t stubs_tramp(const struct proc *p)
{
	const struct stubs *s = p->stubs;

	if (!s || !s->ctl || s->off || s->stuck_off) /* off: the trampoline records nothing */
		return 0;
	return s->area[0] + (ht_stub_ret - ht_stub_blob);
}

uint64_t stubs_head(const struct stubs *s)
{
	return __atomic_load_n((const uint64_t *)(s->ctl + STUB_C_HEAD), __ATOMIC_ACQUIRE);
}

#ifdef STUB_CLOCK_SITES
/* The stub code's clock read at pc in one of s's areas: the offset of the instruction after it
 * in the area, or 0. */
static uint64_t clock_site(const struct stubs *s, uint64_t pc)
{
	static const uint8_t *const sites[][2] = STUB_CLOCK_SITES;

	for (unsigned a = 0; a < s->nareas; a++)
		for (unsigned i = 0; i < sizeof(sites) / sizeof(sites[0]); i++)
			if (pc == s->area[a] + (uint64_t)(sites[i][0] - ht_stub_blob))
				return s->area[a] + (uint64_t)(sites[i][1] - ht_stub_blob);
	return 0;
}
#endif

bool stubs_clock_fault(struct thread *t)
{
#ifdef STUB_CLOCK_SITES
	struct stubs *s = t->p ? t->p->stubs : NULL;
	struct arch_regs r;
	siginfo_t si;
	uint64_t next;

	/* the kernel's fault (SI_KERNEL), not a SIGSEGV the program was sent */
	if (!s || !s->ctl || ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) || si.si_code != SI_KERNEL ||
	    arch_get_regs(t->tid, &r) || !(next = clock_site(s, arch->get_pc(&r))))
		return false;
	for (unsigned a = 0; a < s->nareas; a++)
		remote_write_word(t->tid, s->area[a] + 4096 + STUB_D_NOTSC, 8, 1);
	/* the stub zeroed the registers rdtsc writes before it: 0 is "no stamp" */
	arch->set_pc(&r, next);
	if (arch_set_regs(t->tid, &r))
		return false;
	if (!s->notsc_told) {
		s->notsc_told = true;
		pr_info("process %d turned the time-stamp counter off: its calls are dated when "
			"heaptrace reads them", t->p->pid);
	}
	return true;
#else
	(void)t;
	return false;
#endif
}
