// SPDX-License-Identifier: GPL-2.0-only
/*
 * The entry stubs' code (arch/<arch>/stubcode.c), run in this process: a function patched as
 * heaptrace patches the malloc family, called for real. Its result, its registers and its
 * stack come back unchanged; the ring gets the records stubs.c reads, in their layout; the off
 * word and the owner word stop the records; a full ring makes the call wait until a reader
 * frees room, and (x86_64) at most the bound, then the call goes on unrecorded and counted,
 * with no system call when the data page says so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"
#include "stub_arch.h"
#include "unittest.h"

#if STUBS_SUPPORTED && (defined(__x86_64__) || defined(__aarch64__) || defined(__mips__) || \
		       defined(__arm__))

extern const uint8_t ht_stub_blob[], ht_stub_entry[], ht_stub_ret[], ht_stub_blob_end[];

#define RING 8192u /* two pages, so the double mapping is exercised */

struct env {
	uint8_t *code, *data, *ctl, *ring, *fn;
	int fd;
};

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void wr64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#if defined(__x86_64__)
#define OPS arch_x86_64_ops
#define PATCH_LEN 5 /* jmp rel32 */
#define COVERED 8 /* whole instructions under it */
/* The fake allocator: push %rbx; mov %rdi,%rax; add $1,%rax; pop %rbx; ret (rax = arg + 1). */
static const uint8_t fake_fn[] = { 0x53, 0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0x5b, 0xc3 };
#define FAKE_LEN sizeof(fake_fn)
#elif defined(__mips__)
#define OPS arch_mips64_ops
#define PATCH_LEN 8 /* j and its delay slot */
#define COVERED 8
/* The fake allocator, its first instruction a branch with a delay slot as glibc's free's is:
 * beqz a0, 1f; nop; daddiu v0, a0, 1; jr ra; daddu v1, t9, zero; 1: ori v0, zero, 0x99;
 * jr ra; daddu v1, t9, zero (v0 = arg + 1, or 0x99 for 0; v1 = the t9 it was called with). */
static const uint32_t fake_fn_w[] = { 0x10800004, 0x00000000, 0x64820001, 0x03e00008,
				      0x0320182d, 0x34020099, 0x03e00008, 0x0320182d };
#define fake_fn ((const uint8_t *)fake_fn_w)
#define FAKE_LEN sizeof(fake_fn_w)
#elif defined(__arm__)
#define OPS arch_arm_ops
#define PATCH_LEN 4 /* b.w */
#define COVERED 4 /* two 16-bit instructions */
#define THUMB 1 /* the mode bit of a Thumb symbol value */
/* The fake allocator in Thumb, its second instruction PC-relative as glibc's free's is:
 * cmp r0, #0; beq 1f; adds r0, #1; bx lr; nop; 1: movs r0, #0x99; bx lr. */
static const uint16_t fake_fn_h[] = { 0x2800, 0xd002, 0x3001, 0x4770, 0xbf00, 0x2099, 0x4770 };
#define fake_fn ((const uint8_t *)fake_fn_h)
#define FAKE_LEN sizeof(fake_fn_h)
#else
#define OPS arch_aarch64_ops
#define PATCH_LEN 4 /* b */
#define COVERED 4
/* The fake allocator, its first instruction PC-relative as glibc's free's is: cbz x0, 1f;
 * add x0, x0, #1; ret; 1: mov x0, #0x99; ret (x0 = arg + 1, or 0x99 for 0). */
static const uint32_t fake_fn_w[] = { 0xb4000060, 0x91000400, 0xd65f03c0, 0xd2801320,
				      0xd65f03c0 };
#define fake_fn ((const uint8_t *)fake_fn_w)
#define FAKE_LEN sizeof(fake_fn_w)
#endif
#ifndef THUMB
#define THUMB 0
static void counter_shim(void)
{
}
#else
static void counter_shim(void);
#endif
#define P(x) ((uint64_t)(uintptr_t)(x))

/* Map the stub pages and a ring as heaptrace does, and patch fake_fn as hook 0 (flags). */
static bool setup(struct env *e, uint32_t flags, unsigned copy)
{
	const struct arch_ops *x = &OPS;
	uint8_t *two = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *base;
	uint64_t at, thunk;
	size_t covered;
	int n, len;

	if (two == MAP_FAILED)
		return false;
	counter_shim();
	e->code = two;
	e->data = two + 4096;
	e->fn = two + 2 * 4096;
	memcpy(e->code, ht_stub_blob, 4096);
	memset(e->data, 0, 4096);
	memcpy(e->fn, fake_fn, FAKE_LEN);
	e->fd = memfd_create("test-ring", MFD_CLOEXEC);
	if (e->fd < 0 || ftruncate(e->fd, 4096 + RING))
		return false;
	base = mmap(NULL, 4096 + 2 * RING, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED ||
	    mmap(base, 4096 + RING, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, e->fd, 0) ==
		    MAP_FAILED ||
	    mmap(base + 4096 + RING, RING, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, e->fd,
		 4096) == MAP_FAILED)
		return false;
	e->ctl = base;
	e->ring = base + 4096;
	wr64(e->data + STUB_D_CTL, P(e->ctl));
	wr64(e->data + STUB_D_RING, P(e->ring));
	wr64(e->data + STUB_D_MASK, RING - 1);
	wr64(e->data + STUB_D_SIZE, RING);
	wr64(e->data + STUB_D_COPY, copy);
	wr64(e->data + STUB_D_TRAMP, P(e->code) + (ht_stub_ret - ht_stub_blob));
	wr64(e->data + STUB_D_STALL, 10000); /* 10 s: the reader's, not the bound's, to end a wait */
	at = P(e->code) + 2048;
	thunk = at;
	len = (int)x->entry_thunk(e->code + 2048, at, flags,
				  P(e->code) + (ht_stub_entry - ht_stub_blob));
	n = x->entry_relocate(P(e->fn) | THUMB, fake_fn, FAKE_LEN, PATCH_LEN,
			      at + len, e->code + 2048 + len, &covered);
	if (n < 0 || covered != COVERED)
		return false;
	wr64(e->data + STUB_D_CONT, thunk + len);
	if (x->entry_branch(P(e->fn) | THUMB, thunk, e->fn) != PATCH_LEN)
		return false;
	__builtin___clear_cache((char *)e->code, (char *)e->fn + 4096);
	return true;
}

static void teardown(struct env *e)
{
	munmap(e->code, 3 * 4096);
	munmap(e->ctl, 4096 + 2 * RING);
	close(e->fd);
}

#if defined(__x86_64__)
/* Call the patched function with callee-saved sentinels; check they and sp come back. */
static __attribute__((noinline)) uint64_t call_fn(struct env *e, uint64_t arg, bool *regs_ok)
{
	register uint64_t r12 __asm__("r12") = 0x1212, r15 __asm__("r15") = 0x1515;
	uint64_t rax, rbx = 0xb0b0, sp0, sp1;

	/* few free registers are left (ASan's builds keep one more): sp0 and sp1 in memory */

	__asm__ volatile("mov %%rsp, %[sp0]\n\t"
			 "sub $128, %%rsp\n\t" /* leave the caller's red zone alone */
			 "mov %[arg], %%rdi\n\t"
			 "call *%[fn]\n\t"
			 "add $128, %%rsp\n\t"
			 "mov %%rsp, %[sp1]"
			 : "=a"(rax), "+b"(rbx), [r12] "+r"(r12), [r15] "+r"(r15),
			   [sp0] "=m"(sp0), [sp1] "=m"(sp1)
			 : [fn] "r"(e->fn), [arg] "r"(arg)
			 : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "cc", "memory");
	*regs_ok = rbx == 0xb0b0 && r12 == 0x1212 && r15 == 0x1515 && sp0 == sp1;
	return rax;
}

/* An entry record's registers: those call_fn set, its thread, its return address. */
static void check_entry_regs(const uint8_t *r)
{
	CHECK_EQ(rd64(r + STUB_RE_RBX), 0xb0b0); /* rbx at the entry */
	CHECK_EQ(rd64(r + STUB_RE_R12), 0x1212); /* r12 */
	CHECK_EQ(rd64(r + STUB_RE_R15), 0x1515); /* r15 */
	CHECK(rd64(r + STUB_RE_THREAD) == (uint64_t)pthread_self()); /* the thread pointer */
	/* the copy starts with the return address: into call_fn (larger when built with the
	 * sanitizers) */
	CHECK(rd64(r + STUB_REC_ENTRY) > (uint64_t)call_fn &&
	      rd64(r + STUB_REC_ENTRY) < (uint64_t)call_fn + 4096);
}
#elif defined(__mips__)
static uint64_t last_sp;

static uint64_t thread_pointer(void)
{
	register uint64_t v1 __asm__("$3");

	__asm__ volatile(".set push\n\t.set mips32r2\n\trdhwr $3, $29\n\t.set pop" : "=r"(v1));
	return v1;
}

/* Call the patched function with sentinels in callee-saved registers and in t0 (the stubs
 * keep it too); check they and sp come back, and that the function saw t9 = its address. */
static __attribute__((noinline)) uint64_t call_fn(struct env *e, uint64_t arg, bool *regs_ok)
{
	register uint64_t a0 __asm__("$4") = arg, t9 __asm__("$25") = (uint64_t)e->fn,
					    t0 __asm__("$12") = 0x1212,
					    s0 __asm__("$16") = 0x1616,
					    s7 __asm__("$23") = 0x2323;
	register uint64_t v0 __asm__("$2"), v1 __asm__("$3");
	uint64_t sp0, sp1;

	__asm__ volatile(".set push\n\t.set noreorder\n\t"
			 "move %[sp0], $sp\n\t"
			 "jalr $25\n\t"
			 "nop\n\t"
			 "move %[sp1], $sp\n\t"
			 ".set pop"
			 : "=r"(v0), "=r"(v1), "+r"(a0), "+r"(t9), "+r"(t0), "+r"(s0), "+r"(s7),
			   [sp0] "=&r"(sp0), [sp1] "=&r"(sp1)
			 :
			 : "$1", "$5", "$6", "$7", "$8", "$9", "$10", "$11", "$13", "$14", "$15",
			   "$24", "$31", "hi", "lo", "memory");
	*regs_ok = t0 == 0x1212 && s0 == 0x1616 && s7 == 0x2323 && sp0 == sp1 &&
		   v1 == (uint64_t)e->fn;
	last_sp = sp0;
	return v0;
}

static void check_entry_regs(const uint8_t *r)
{
	CHECK_EQ(rd64(r + STUB_RE_SP), last_sp); /* sp at the entry: the copy's start */
	CHECK_EQ(rd64(r + STUB_RE_S0), 0x1616); /* s0 */
	CHECK_EQ(rd64(r + STUB_RE_S4 + 24), 0x2323); /* s7 */
	CHECK(rd64(r + STUB_RE_THREAD) == thread_pointer());
	/* ra: the return address, into call_fn */
	CHECK(rd64(r + STUB_RE_RA) > (uint64_t)call_fn &&
	      rd64(r + STUB_RE_RA) < (uint64_t)call_fn + 4096);
}
#elif defined(__arm__)
#include <signal.h>
#include <ucontext.h>

static uint32_t last_sp;

/* qemu-user, which runs this test on other hosts, does not let user code read the generic
 * timer (Linux does, and the guest tests run there): its mrrc p15, 1, Rt, Rt2, c14 reads a
 * count that grows by one at each read, so that the time stamps' order is still checked. */
static void no_counter(int sig, siginfo_t *si, void *arg)
{
	static uint32_t ticks;
	ucontext_t *uc = arg;
	unsigned long *r = &uc->uc_mcontext.arm_r0; /* r0..r15 in a row */
	const uint16_t *pc = (const uint16_t *)uc->uc_mcontext.arm_pc;

	(void)si;
	if ((pc[0] & 0xfff0) != 0xec50 || (pc[1] & 0x0fff) != 0x0f1e) {
		signal(sig, SIG_DFL);
		return;
	}
	r[pc[1] >> 12] = ++ticks; /* Rt: the low word */
	r[pc[0] & 15] = 0;
	uc->uc_mcontext.arm_pc += 4;
}

static void counter_shim(void)
{
	struct sigaction sa = { .sa_sigaction = no_counter, .sa_flags = SA_SIGINFO };

	sigaction(SIGILL, &sa, NULL);
}

/* Call the patched function (Thumb) with sentinels in callee-saved registers and in r3 (the
 * stubs keep r0-r11); check they and sp come back. */
static __attribute__((noinline)) uint64_t call_fn(struct env *e, uint64_t arg, bool *regs_ok)
{
	register uint32_t r0 __asm__("r0") = (uint32_t)arg, r3 __asm__("r3") = 0x0303,
					    r4 __asm__("r4") = 0x0404,
					    r8 __asm__("r8") = 0x0808,
					    r11 __asm__("r11") = 0x1111;
	uint32_t sp0, sp1;

	__asm__ volatile("mov %[sp0], sp\n\t"
			 "blx %[fn]\n\t"
			 "mov %[sp1], sp"
			 : "+r"(r0), "+r"(r3), "+r"(r4), "+r"(r8), "+r"(r11), [sp0] "=&r"(sp0),
			   [sp1] "=&r"(sp1)
			 : [fn] "r"((uint32_t)(uintptr_t)e->fn | 1)
			 : "r1", "r2", "ip", "lr", "cc", "memory");
	*regs_ok = r3 == 0x0303 && r4 == 0x0404 && r8 == 0x0808 && r11 == 0x1111 && sp0 == sp1;
	last_sp = sp0;
	return r0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void check_entry_regs(const uint8_t *r)
{
	CHECK_EQ(rd64(r + STUB_RE_SP), last_sp); /* sp at the entry: the copy's start */
	CHECK_EQ(rd32(r + STUB_RE_R4), 0x0404); /* r4 */
	CHECK_EQ(rd32(r + STUB_RE_R4 + 16), 0x0808); /* r8 */
	CHECK_EQ(rd32(r + STUB_RE_R4 + 28), 0x1111); /* r11 */
	CHECK(rd64(r + STUB_RE_THREAD) == P(__builtin_thread_pointer()));
	/* lr: the return address, into call_fn, Thumb */
	CHECK(rd64(r + STUB_RE_LR) > P(call_fn) && rd64(r + STUB_RE_LR) < P(call_fn) + 4096);
	CHECK(rd64(r + STUB_RE_LR) & 1);
}
#else
static uint64_t last_sp;

/* Call the patched function with sentinels in callee-saved registers and in x9 and x15 (the
 * stubs keep those too); check they and sp come back. */
static __attribute__((noinline)) uint64_t call_fn(struct env *e, uint64_t arg, bool *regs_ok)
{
	register uint64_t x0 __asm__("x0") = arg, x9 __asm__("x9") = 0x0909,
					    x15 __asm__("x15") = 0x1515,
					    x19 __asm__("x19") = 0x1919,
					    x28 __asm__("x28") = 0x2828;
	uint64_t sp0, sp1;

	__asm__ volatile("mov %[sp0], sp\n\t"
			 "blr %[fn]\n\t"
			 "mov %[sp1], sp"
			 : "+r"(x0), "+r"(x9), "+r"(x15), "+r"(x19), "+r"(x28), [sp0] "=&r"(sp0),
			   [sp1] "=&r"(sp1)
			 : [fn] "r"(e->fn)
			 : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x10", "x11", "x12",
			   "x13", "x14", "x16", "x17", "x30", "cc", "memory");
	*regs_ok = x9 == 0x0909 && x15 == 0x1515 && x19 == 0x1919 && x28 == 0x2828 &&
		   sp0 == sp1;
	last_sp = sp0;
	return x0;
}

static void check_entry_regs(const uint8_t *r)
{
	CHECK_EQ(rd64(r + STUB_RE_SP), last_sp); /* sp at the entry: the copy's start */
	CHECK_EQ(rd64(r + STUB_RE_X19), 0x1919); /* x19 */
	CHECK_EQ(rd64(r + STUB_RE_X23 + 40), 0x2828); /* x28 */
	CHECK(rd64(r + STUB_RE_THREAD) == (uint64_t)__builtin_thread_pointer());
	/* x30: the return address, into call_fn */
	CHECK(rd64(r + STUB_RE_X30) > (uint64_t)call_fn &&
	      rd64(r + STUB_RE_X30) < (uint64_t)call_fn + 4096);
}
#endif

/* stub_ticks, ordered against the instructions around it, so that a time stamp the stub code
 * takes between two of these lies between them. */
static uint64_t fenced_ticks(void)
{
	uint64_t v;

#if defined(__x86_64__)
	__builtin_ia32_lfence();
	v = stub_ticks();
	__builtin_ia32_lfence();
#elif defined(__mips__)
	__asm__ volatile("sync" ::: "memory");
	v = stub_ticks(); /* 32 bits: a wrap between two of these is not expected in a test */
	__asm__ volatile("sync" ::: "memory");
#else
	v = stub_ticks(); /* isb first */
	__asm__ volatile("isb" ::: "memory");
#endif
	return v;
}

TEST_CASE(entry_and_return_recorded)
{
	struct env e;
	bool ok;

	REQUIRE(setup(&e, 0, 256));
	for (uint64_t i = 0; i < 40; i++) { /* laps over the 8 KiB ring, read as it fills */
		uint64_t head = rd64(e.ctl + STUB_C_HEAD), pos = head;
		const uint8_t *r;

		uint64_t t0 = fenced_ticks(), t1;

		CHECK_EQ(call_fn(&e, 1000 + i, &ok), 1001 + i);
		t1 = fenced_ticks();
		CHECK(ok);
		r = e.ring + (pos & (RING - 1));
		CHECK_EQ(rd64(r + STUB_R_TAG), pos | STUB_KIND_ENTRY);
		CHECK_EQ(rd64(r + STUB_RE_ARG0), 1000 + i); /* the argument */
		/* the time stamp */
		CHECK(rd64(r + STUB_RE_TIME) >= t0 && rd64(r + STUB_RE_TIME) <= t1);
		check_entry_regs(r);
		CHECK(*(const uint32_t *)(r + STUB_RE_COPY) <= 256); /* the stack copy, bounded */
		CHECK_EQ(*(const uint32_t *)(r + STUB_RE_RETURNS), 1); /* the return is recorded */
		pos += *(const uint32_t *)(r + STUB_R_LEN);
		r = e.ring + (pos & (RING - 1));
		CHECK_EQ(rd64(r + STUB_R_TAG), pos | STUB_KIND_RETURN);
		CHECK_EQ(rd64(r + STUB_RR_COOKIE), head); /* the cookie: the entry's position */
		CHECK_EQ(rd64(r + STUB_RR_RESULT), 1001 + i); /* the result */
		CHECK_EQ(rd64(e.ctl + STUB_C_HEAD), pos + STUB_REC_RETURN);
		wr64(e.ctl + STUB_C_TAIL, rd64(e.ctl + STUB_C_HEAD)); /* read */
	}
	teardown(&e);
}

TEST_CASE(free_recorded_at_entry_only)
{
	struct env e;
	bool ok;

	uint64_t t0, t1;

	REQUIRE(setup(&e, STUB_HOOK_FREE, 256));
	t0 = fenced_ticks();
	CHECK_EQ(call_fn(&e, 0x5000, &ok), 0x5001);
	t1 = fenced_ticks();
	CHECK(ok);
	CHECK_EQ(rd64(e.ring), 0 | STUB_KIND_FREE);
	CHECK_EQ(*(const uint32_t *)(e.ring + 8), STUB_REC_FREE);
	CHECK_EQ(*(const uint32_t *)(e.ring + 12), STUB_HOOK_FREE);
	CHECK_EQ(rd64(e.ring + 16), 0x5000);
#if defined(__x86_64__)
	CHECK(rd64(e.ring + 24) == (uint64_t)pthread_self()); /* the thread pointer, %fs:0 */
#elif defined(__mips__)
	CHECK(rd64(e.ring + 24) == thread_pointer()); /* UserLocal */
#else
	/* tpidr_el0, TPIDRURO */
	CHECK(rd64(e.ring + 24) == P(__builtin_thread_pointer()));
#endif
	/* its own time stamp, taken in the call: the free is dated when it ran, not when read */
	CHECK(rd64(e.ring + 32) >= t0 && rd64(e.ring + 32) <= t1);
	CHECK_EQ(rd64(e.ctl + STUB_C_HEAD), STUB_REC_FREE); /* nothing at the return */
	teardown(&e);
}

TEST_CASE(off_and_owner_gone_record_nothing)
{
	struct env e;
	bool ok;

	REQUIRE(setup(&e, 0, 256));
	wr64(e.data + STUB_D_OFF, 1);
	CHECK_EQ(call_fn(&e, 7, &ok), 8);
	CHECK(ok);
	wr64(e.data + STUB_D_OFF, 0);
	*(uint32_t *)(e.ctl + STUB_C_OWNER) = STUB_OWNER_DIED;
	CHECK_EQ(call_fn(&e, 9, &ok), 10);
	CHECK(ok);
	CHECK_EQ(rd64(e.ctl + STUB_C_HEAD), 0);
	teardown(&e);
}

static void *reader(void *arg)
{
	struct env *e = arg;

	/* let the caller find the ring full and wait, then read everything */
	usleep(100000);
	__atomic_store_n((uint64_t *)(e->ctl + STUB_C_TAIL),
			 __atomic_load_n((uint64_t *)(e->ctl + STUB_C_HEAD), __ATOMIC_ACQUIRE),
			 __ATOMIC_SEQ_CST);
	syscall(STUB_NR_FUTEX, e->ctl + STUB_C_TAIL, 1 /* FUTEX_WAKE */, 100, NULL, NULL, 0);
	return NULL;
}

TEST_CASE(zero_argument)
{
	struct env e;
	bool ok;

	/* aarch64's relocated cbz, arm's beq and mips64's beqz are taken, and go to the
	 * function's own branch target */
	REQUIRE(setup(&e, 0, 256));
#if defined(__x86_64__)
	CHECK_EQ(call_fn(&e, 0, &ok), 1);
#elif defined(__mips__)
	CHECK_EQ(call_fn(&e, 0, &ok), 0x99);
#else
	CHECK_EQ(call_fn(&e, 0, &ok), 0x99);
#endif
	CHECK(ok);
	teardown(&e);
}

TEST_CASE(full_ring_waits_for_the_reader)
{
	struct env e;
	pthread_t th;
	bool ok;
	uint64_t wake0;

	REQUIRE(setup(&e, STUB_HOOK_FREE, 256));
	/* all but one free record's room taken and not read */
	wr64(e.ctl + STUB_C_HEAD, RING - STUB_REC_FREE + 16);
	wr64(e.ctl + STUB_C_TAIL, 0);
	wake0 = *(uint32_t *)(e.ctl + STUB_C_DWAKE);
	REQUIRE(pthread_create(&th, NULL, reader, &e) == 0);
	CHECK_EQ(call_fn(&e, 0x77, &ok), 0x78);
	CHECK(ok);
	pthread_join(th, NULL);
	CHECK(*(uint32_t *)(e.ctl + STUB_C_DWAKE) != wake0); /* it woke the reader */
	CHECK(*(uint32_t *)(e.ctl + STUB_C_WAITERS) != 0);
	CHECK_EQ(rd64(e.ring + ((RING - STUB_REC_FREE + 16) & (RING - 1))),
		 (RING - STUB_REC_FREE + 16) | STUB_KIND_FREE);
	teardown(&e);
}

#ifdef STUB_STALL_SUPPORTED
/* A lost return's word in the control page holding v, if any. */
static bool lostret_has(const struct env *e, uint64_t v)
{
	for (unsigned i = 0; i < STUB_C_LOSTRET_SLOTS; i++)
		if (rd64(e->ctl + STUB_C_LOSTRET + 8 * i) == v)
			return true;
	return false;
}

TEST_CASE(full_ring_past_the_bound_loses_the_call)
{
	struct env e;
	bool ok;

	REQUIRE(setup(&e, STUB_HOOK_FREE, 256));
	wr64(e.data + STUB_D_STALL, 3); /* three slices of 1 ms, no reader */
	wr64(e.ctl + STUB_C_HEAD, RING - 16);
	CHECK_EQ(call_fn(&e, 0x77, &ok), 0x78);
	CHECK(ok);
	CHECK_EQ(rd64(e.ctl + STUB_C_HEAD), RING - 16); /* nothing reserved */
	CHECK_EQ(rd64(e.ctl + STUB_C_LOST_FREES), 1);
	CHECK(*(uint32_t *)(e.ctl + STUB_C_WAITERS) != 0); /* it waited */
	teardown(&e);

	/* an entry, with no wait (--max-stall=0): its return is not sent to the trampoline */
	REQUIRE(setup(&e, 0, 256));
	wr64(e.data + STUB_D_STALL, 0);
	wr64(e.ctl + STUB_C_HEAD, RING - 16);
	CHECK_EQ(call_fn(&e, 0x41, &ok), 0x42);
	CHECK(ok);
	CHECK_EQ(rd64(e.ctl + STUB_C_HEAD), RING - 16);
	CHECK_EQ(rd64(e.ctl + STUB_C_LOST_ENTRIES), 1);
	CHECK_EQ(rd64(e.ctl + STUB_C_LOST_RETURNS), 0);
	CHECK(*(uint32_t *)(e.ctl + STUB_C_WAITERS) == 0); /* it did not wait */
	teardown(&e);
}

/* An entry with room for its record only (and no wait: --max-stall=0), so that its return
 * is lost; with full, every word of STUB_C_LOSTRET taken before. */
static __attribute__((noinline)) void lost_return(bool full)
{
	const uint64_t entry = STUB_REC_ENTRY + 256; /* the record's length with 256 bytes copied */
	struct env e;
	bool ok;

	REQUIRE(setup(&e, 0, 256));
	/* this stack's range, so that the copy is the 256 bytes asked and not cut at the end of
	 * sp's page, wherever the stack's random offset puts sp */
	wr64(e.data + STUB_D_MAIN_LO, 0);
	wr64(e.data + STUB_D_MAIN_TOP, P(__builtin_frame_address(0)) + 256);
	wr64(e.data + STUB_D_STALL, 0);
	for (unsigned i = 0; full && i < STUB_C_LOSTRET_SLOTS; i++)
		wr64(e.ctl + STUB_C_LOSTRET + 8 * i, 0x1000 + 16 * i);
	wr64(e.ctl + STUB_C_HEAD, RING - entry); /* room for the entry record only */
	CHECK_EQ(call_fn(&e, 0x41, &ok), 0x42);
	CHECK(ok);
	CHECK_EQ(rd64(e.ctl + STUB_C_HEAD), RING);
	CHECK_EQ(rd64(e.ring + ((RING - entry) & (RING - 1))), (RING - entry) | STUB_KIND_ENTRY);
	CHECK_EQ(rd64(e.ctl + STUB_C_LOST_RETURNS), 1);
	CHECK(lostret_has(&e, (RING - entry) ^ STUB_LOSTRET_MARK) == !full);
	CHECK_EQ(rd64(e.ctl + STUB_C_LOST_UNSLOTTED), full);
	teardown(&e);
}

TEST_CASE(lost_return_names_its_entry)
{
	lost_return(false);
}

/* Every word taken: the lost return is counted as one with no word too
 * (STUB_C_LOST_UNSLOTTED), so that heaptrace does not count the call it drops again. */
TEST_CASE(lost_return_with_no_free_word)
{
	lost_return(true);
}

/* A filter that kills the process on futex, installed in a child that then calls the stub
 * with the ring full: it lives only if the wait makes no system call. */
static int spin_child(struct env *e)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	bool ok;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return 3;
	if (call_fn(e, 0x77, &ok) != 0x78 || !ok)
		return 1;
	return rd64(e->ctl + STUB_C_LOST_FREES) == 1 ? 0 : 2;
}

TEST_CASE(spin_wait_makes_no_system_call)
{
	struct env e;
	int status;
	pid_t pid;

	REQUIRE(setup(&e, STUB_HOOK_FREE, 256));
	wr64(e.data + STUB_D_STALL, 2);
	wr64(e.data + STUB_D_PAUSES, 1000);
	*(uint32_t *)(e.ctl + STUB_C_NOSYS) = 1;
	wr64(e.ctl + STUB_C_HEAD, RING - 16);
	pid = fork();
	REQUIRE(pid >= 0);
	if (!pid)
		_exit(spin_child(&e));
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status), 0);
	CHECK(*(uint32_t *)(e.ctl + STUB_C_WAITERS) != 0); /* it waited */
	teardown(&e);
}

/* A watched entry (STUB_HOOK_WATCH, value 317: x86_64's SYS_seccomp): no record, the function
 * runs with its argument and registers; the first argument equal to the value sets
 * STUB_C_NOSYS, any other leaves it. */
TEST_CASE(watched_entry_sets_nosys)
{
	uint32_t *nosys;
	struct env e;
	bool ok;

	REQUIRE(setup(&e, STUB_HOOK_WATCH | 317u << STUB_HOOK_WATCH_SHIFT, 256));
	nosys = (uint32_t *)(e.ctl + STUB_C_NOSYS);
	CHECK_EQ(call_fn(&e, 0x13d + 0x100000000ull, &ok), 0x13e + 0x100000000ull);
	CHECK(ok);
	CHECK_EQ(*nosys, 1); /* the low 32 bits compared: an int argument (prctl's option) */
	*nosys = 0;
	CHECK_EQ(call_fn(&e, 202, &ok), 203);
	CHECK(ok);
	CHECK_EQ(*nosys, 0);
	CHECK_EQ(rd64(e.ctl + STUB_C_HEAD), 0); /* nothing reserved */
	teardown(&e);
}
#endif

#else

TEST_CASE(no_stubs_here)
{
	CHECK(arch_x86_64_ops.entry_relocate != NULL);
}

#endif

/*
 * aarch64's encodings, on any host. The expected words were worked out by hand from the Arm
 * ARM's encodings (b: 0x14000000 | imm26; adrp: 0x90000000 | immlo << 29 | immhi << 5 | rd;
 * add: 0x91000000 | imm12 << 10 | rn << 5 | rd), the first instructions from Debian 12's arm64
 * libc6 2.36 (malloc's stp, free's cbz, memalign's adrp) and libstdc++ (operator delete's b).
 */
static uint32_t word(const uint8_t *buf, unsigned i)
{
	uint32_t w;

	memcpy(&w, buf + 4 * i, 4);
	return w;
}

static int a64_reloc(uint32_t insn, uint64_t addr, uint64_t at, uint8_t *buf, size_t *covered)
{
	uint8_t in[16] = { 0 };

	memcpy(in, &insn, 4);
	*covered = 0;
	return arch_aarch64_ops.entry_relocate(addr, in, sizeof(in), 4, at, buf, covered);
}

TEST_CASE(a64_entry_branch_and_thunk)
{
	const struct arch_ops *a = &arch_aarch64_ops;
	uint8_t buf[16];

	CHECK_EQ(a->entry_branch(0x400000, 0x401000, buf), 4);
	CHECK_EQ(word(buf, 0), 0x14000400);
	CHECK_EQ(a->entry_branch(0x10000000, 0x10000000 - (1u << 27), buf), 4); /* the far end */
	CHECK_EQ(word(buf, 0), 0x16000000);
	CHECK_EQ(a->entry_branch(0x10000000, 0x10000000 + (1u << 27), buf), -ERANGE);
	CHECK_EQ(a->entry_thunk(buf, 0x10000, 0x105, 0x10000 - 0x800), 8);
	CHECK_EQ(word(buf, 0), 0x528020b0); /* movz w16, #0x105 */
	CHECK_EQ(word(buf, 1), 0x17fffdff); /* b common */
}

TEST_CASE(a64_entry_relocate)
{
	uint8_t buf[32];
	size_t cov;

	/* stp x29, x30, [sp, #-64]!: copied, then b back */
	CHECK_EQ(a64_reloc(0xa9bc7bfd, 0x400000, 0x500000, buf, &cov), 8);
	CHECK_EQ(cov, 4);
	CHECK_EQ(word(buf, 0), 0xa9bc7bfd);
	CHECK_EQ(word(buf, 1), 0x17fc0000);
	/* cbz x0, 0x92ad4 at 0x929c4: cbz x0, .+8; b 0x929c8; b 0x92ad4 */
	CHECK_EQ(a64_reloc(0xb4000880, 0x929c4, 0x1000000, buf, &cov), 12);
	CHECK_EQ(word(buf, 0), 0xb4000040);
	CHECK_EQ(word(buf, 1), 0x17c24a71);
	CHECK_EQ(word(buf, 2), 0x17c24ab3);
	/* tbnz w3, #5, .+0x20 and b.ne .+0x40 at 0x1000: the same shape */
	CHECK_EQ(a64_reloc(0x37280103, 0x1000, 0x3000, buf, &cov), 12);
	CHECK_EQ(word(buf, 0), 0x37280043);
	CHECK_EQ(word(buf, 1), 0x17fff800);
	CHECK_EQ(word(buf, 2), 0x17fff806);
	CHECK_EQ(a64_reloc(0x54000201, 0x1000, 0x3000, buf, &cov), 12);
	CHECK_EQ(word(buf, 0), 0x54000041);
	CHECK_EQ(word(buf, 2), 0x17fff80e);
	/* adrp x2, 0x1a6000 at 0x93254: adrp x2, 0x1a6000; add x2, x2, #0; b 0x93258 */
	CHECK_EQ(a64_reloc(0xf0000882, 0x93254, 0x2000000, buf, &cov), 12);
	CHECK_EQ(word(buf, 0), 0xd0ff0d22);
	CHECK_EQ(word(buf, 1), 0x91000042);
	CHECK_EQ(word(buf, 2), 0x17824c94);
	/* adr x1, .+0x100 at 0x1000: adrp + add of 0x1100 */
	CHECK_EQ(a64_reloc(0x10000801, 0x1000, 0x5000, buf, &cov), 12);
	CHECK_EQ(word(buf, 0), 0x90ffffe1);
	CHECK_EQ(word(buf, 1), 0x91040021);
	CHECK_EQ(word(buf, 2), 0x17ffefff);
	/* b 0x9d230 at 0xa0ca0 (operator delete): one b, nothing comes back */
	CHECK_EQ(a64_reloc(0x17fff164, 0xa0ca0, 0x100000, buf, &cov), 4);
	CHECK_EQ(word(buf, 0), 0x17fe748c);
	/* bl 0x1040 at 0x1000: x30 = 0x1004 (adrp + add), b 0x1040 */
	CHECK_EQ(a64_reloc(0x94000010, 0x1000, 0x2000, buf, &cov), 12);
	CHECK_EQ(word(buf, 0), 0xf0fffffe);
	CHECK_EQ(word(buf, 1), 0x910013de);
	CHECK_EQ(word(buf, 2), 0x17fffc0e);
	/* refused: ldr x0, literal; ret; a copy out of a b's reach */
	CHECK_EQ(a64_reloc(0x58000040, 0x1000, 0x2000, buf, &cov), -ENOTSUP);
	CHECK_EQ(a64_reloc(0xd65f03c0, 0x1000, 0x2000, buf, &cov), -ENOTSUP);
	CHECK_EQ(a64_reloc(0xa9bc7bfd, 0x400000, 0x400000 + (1ull << 30), buf, &cov), -ERANGE);
}

/*
 * mips64's encodings, on any host. The expected words were worked out by hand from the MIPS64
 * encodings (j: 0x08000000 | (target & 0x0fffffff) >> 2, the region that of the delay slot;
 * beq/bne: offset in words from the delay slot; ori at, zero: 0x34010000 | imm), the first
 * instructions from Debian 12's mips64el libc6 2.36 (malloc: daddiu sp, sp, -64; sd gp, 48(sp);
 * free: beqz a0, free+0x168; nop; calloc: dmultu a0, a1; daddiu sp, sp, -80), placed as if
 * libc were mapped at 0xfff7e00000 and the stub page at 0xfff7f00000.
 */
static int mips_reloc(uint32_t w0, uint32_t w1, uint64_t addr, uint64_t at, uint8_t *buf,
		      size_t *covered)
{
	uint8_t in[16] = { 0 };

	memcpy(in, &w0, 4);
	memcpy(in + 4, &w1, 4);
	*covered = 0;
	return arch_mips64_ops.entry_relocate(addr, in, sizeof(in), 8, at, buf, covered);
}

TEST_CASE(mips_entry_branch_and_thunk)
{
	const struct arch_ops *a = &arch_mips64_ops;
	uint8_t buf[16];

	CHECK_EQ(a->entry_branch(0xfff7ecc858, 0xfff7f00800, buf), 8);
	CHECK_EQ(word(buf, 0), 0x09fc0200); /* j 0xfff7f00800 */
	CHECK_EQ(word(buf, 1), 0x00000000); /* nop in the delay slot */
	/* j keeps the top bits of the delay slot's address: another 256 MiB region is out of
	 * reach, however near (0xff_f000_0000 is the next region's first byte) */
	CHECK_EQ(a->entry_branch(0xffeffffff0, 0xfff0000000, buf), -ERANGE);
	CHECK_EQ(a->entry_branch(0xffeffffff8, 0xffe0000000, buf), 8);
	CHECK_EQ(a->entry_branch(0xffeffffffc, 0xffe0000000, buf), -ERANGE); /* slot beyond */
	CHECK_EQ(a->entry_thunk(buf, 0xfff7f00800, 0x105, 0xfff7f00000), 8);
	CHECK_EQ(word(buf, 0), 0x09fc0000); /* j common */
	CHECK_EQ(word(buf, 1), 0x34010105); /* ori at, zero, 0x105 */
}

TEST_CASE(mips_entry_relocate)
{
	uint8_t buf[32];
	size_t cov;

	/* malloc: both copied, then j malloc+8 and a nop */
	CHECK_EQ(mips_reloc(0x67bdffc0, 0xffbc0030, 0xfff7ecc858, 0xfff7f00808, buf, &cov), 16);
	CHECK_EQ(cov, 8);
	CHECK_EQ(word(buf, 0), 0x67bdffc0);
	CHECK_EQ(word(buf, 1), 0xffbc0030);
	CHECK_EQ(word(buf, 2), 0x09fb3218);
	CHECK_EQ(word(buf, 3), 0x00000000);
	/* calloc: dmultu and daddiu, the same shape */
	CHECK_EQ(mips_reloc(0x0085001d, 0x67bdffb0, 0xfff7ecdb38, 0xfff7f00808, buf, &cov), 16);
	CHECK_EQ(word(buf, 0), 0x0085001d);
	CHECK_EQ(word(buf, 2), 0x09fb36d0);
	/* free: beqz a0 skips to a j to its target (free+0x168), else j free+8 */
	CHECK_EQ(mips_reloc(0x10800059, 0x00000000, 0xfff7ecd048, 0xfff7f00808, buf, &cov), 24);
	CHECK_EQ(cov, 8);
	CHECK_EQ(word(buf, 0), 0x10800003);
	CHECK_EQ(word(buf, 1), 0x00000000);
	CHECK_EQ(word(buf, 2), 0x09fb3414);
	CHECK_EQ(word(buf, 4), 0x09fb346c);
	CHECK_EQ(word(buf, 5), 0x00000000);
	/* bgez a1 (REGIMM) with an addiu in its delay slot: the same, the slot kept */
	CHECK_EQ(mips_reloc(0x04a10010, 0x24a5ffff, 0x120001000, 0x120100000, buf, &cov), 24);
	CHECK_EQ(word(buf, 0), 0x04a10003);
	CHECK_EQ(word(buf, 1), 0x24a5ffff);
	CHECK_EQ(word(buf, 2), 0x08000402); /* j 0x120001008 */
	CHECK_EQ(word(buf, 4), 0x08000411); /* j 0x120001044 */
	/* j 0x120002000 with a nop: re-aimed from the stub, nothing comes back */
	CHECK_EQ(mips_reloc(0x08000800, 0x00000000, 0x120001000, 0x120100000, buf, &cov), 8);
	CHECK_EQ(word(buf, 0), 0x08000800);
	CHECK_EQ(word(buf, 1), 0x00000000);
	/* refused: jal, bal, beql (likely), a branch second (its slot outside the patch), a
	 * branch in a delay slot, a stub page in another 256 MiB region */
	CHECK_EQ(mips_reloc(0x0c000400, 0x00000000, 0x1000, 0x2000, buf, &cov), -ENOTSUP);
	CHECK_EQ(mips_reloc(0x04110001, 0x00000000, 0x1000, 0x2000, buf, &cov), -ENOTSUP);
	CHECK_EQ(mips_reloc(0x50800003, 0x00000000, 0x1000, 0x2000, buf, &cov), -ENOTSUP);
	CHECK_EQ(mips_reloc(0x67bdffc0, 0x10800003, 0x1000, 0x2000, buf, &cov), -ENOTSUP);
	CHECK_EQ(mips_reloc(0x10800003, 0x10800003, 0x1000, 0x2000, buf, &cov), -ENOTSUP);
	CHECK_EQ(mips_reloc(0x67bdffc0, 0xffbc0030, 0xfff7ecc858, 0x120000000, buf, &cov),
		 -ERANGE);
}

/* The whole-function check: a function at 0x1000 of daddiu sp; sd gp; then one word x. */
static int mips_scan_with(uint32_t x)
{
	const uint32_t fn[] = { 0x67bdffc0, 0xffbc0030, x, 0x00000000, 0x03e00008, 0x00000000 };

	return arch_mips64_ops.entry_scan(0x1000, (const uint8_t *)fn, sizeof(fn), 8);
}

TEST_CASE(mips_entry_scan)
{
	CHECK_EQ(mips_scan_with(0x00000000), 0); /* nop */
	CHECK_EQ(mips_scan_with(0x1580fffd), 0); /* bnez t0, the entry: runs the stub again */
	CHECK_EQ(mips_scan_with(0x1580fffe), -EXDEV); /* bnez t0, entry+4: inside the patch */
	CHECK_EQ(mips_scan_with(0x0581fffe), -EXDEV); /* bgez t0, entry+4 */
	CHECK_EQ(mips_scan_with(0x08000401), -EXDEV); /* j entry+4 */
	CHECK_EQ(mips_scan_with(0x1580ffff), 0); /* bnez t0, entry+8: after the patch */
	CHECK_EQ(mips_scan_with(0x0320f809), 0); /* jalr t9: a call */
	CHECK_EQ(mips_scan_with(0x03200008), 0); /* jr t9: a tail call */
	CHECK_EQ(mips_scan_with(0x00400008), -EXDEV); /* jr v0: a jump table could go anywhere */
}
