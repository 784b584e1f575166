// SPDX-License-Identifier: GPL-2.0-only
/*
 * The entry stubs' code (arch/<arch>/stubcode.c), run in this process: a function patched as
 * heaptrace patches the malloc family, called for real. Its result, its registers and its
 * stack come back unchanged; the ring gets the records stubs.c reads, in their layout; the off
 * word and the owner word stop the records; a full ring makes the call wait until a reader
 * frees room.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch.h"
#include "stub_arch.h"
#include "unittest.h"

#if STUBS_SUPPORTED && defined(__x86_64__)

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

/* The fake allocator: push %rbx; mov %rdi,%rax; add $1,%rax; pop %rbx; ret (rax = arg + 1). */
static const uint8_t fake_fn[] = { 0x53, 0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0x5b, 0xc3 };

/* Map the stub pages and a ring as heaptrace does, and patch fake_fn as hook 0 (flags). */
static bool setup(struct env *e, uint32_t flags, unsigned copy)
{
	const struct arch_ops *x = &arch_x86_64_ops;
	uint8_t *two = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *base;
	uint64_t at, thunk;
	size_t covered;
	int n, len;

	if (two == MAP_FAILED)
		return false;
	e->code = two;
	e->data = two + 4096;
	e->fn = two + 2 * 4096;
	memcpy(e->code, ht_stub_blob, 4096);
	memset(e->data, 0, 4096);
	memcpy(e->fn, fake_fn, sizeof(fake_fn));
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
	wr64(e->data + STUB_D_CTL, (uint64_t)e->ctl);
	wr64(e->data + STUB_D_RING, (uint64_t)e->ring);
	wr64(e->data + STUB_D_MASK, RING - 1);
	wr64(e->data + STUB_D_SIZE, RING);
	wr64(e->data + STUB_D_COPY, copy);
	wr64(e->data + STUB_D_TRAMP, (uint64_t)e->code + (ht_stub_ret - ht_stub_blob));
	at = (uint64_t)e->code + 2048;
	thunk = at;
	len = (int)x->entry_thunk(e->code + 2048, at, flags,
				  (uint64_t)e->code + (ht_stub_entry - ht_stub_blob));
	n = x->entry_relocate((uint64_t)e->fn, fake_fn, sizeof(fake_fn), 5, at + len,
			      e->code + 2048 + len, &covered);
	if (n < 0 || covered != 8)
		return false;
	wr64(e->data + STUB_D_CONT, thunk + len);
	return x->entry_branch((uint64_t)e->fn, thunk, e->fn) == 5;
}

static void teardown(struct env *e)
{
	munmap(e->code, 3 * 4096);
	munmap(e->ctl, 4096 + 2 * RING);
	close(e->fd);
}

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

TEST_CASE(entry_and_return_recorded)
{
	struct env e;
	bool ok;

	REQUIRE(setup(&e, 0, 256));
	for (uint64_t i = 0; i < 40; i++) { /* laps over the 8 KiB ring, read as it fills */
		uint64_t head = rd64(e.ctl + STUB_C_HEAD), pos = head;
		const uint8_t *r;

		CHECK_EQ(call_fn(&e, 1000 + i, &ok), 1001 + i);
		CHECK(ok);
		r = e.ring + (pos & (RING - 1));
		CHECK_EQ(rd64(r), pos | STUB_KIND_ENTRY);
		CHECK_EQ(rd64(r + 16), 1000 + i); /* the argument */
		CHECK_EQ(rd64(r + 56), 0xb0b0); /* rbx at the entry */
		CHECK_EQ(rd64(r + 64), 0x1212); /* r12 */
		CHECK_EQ(rd64(r + 88), 0x1515); /* r15 */
		CHECK(rd64(r + 104) == (uint64_t)pthread_self()); /* the thread pointer */
		CHECK(*(const uint32_t *)(r + 112) <= 256); /* the stack copy, bounded */
		CHECK_EQ(*(const uint32_t *)(r + 116), 1); /* the return is recorded */
		/* the copy starts with the return address: into call_fn (larger when built with
		 * the sanitizers) */
		CHECK(rd64(r + STUB_REC_ENTRY) > (uint64_t)call_fn &&
		      rd64(r + STUB_REC_ENTRY) < (uint64_t)call_fn + 4096);
		pos += *(const uint32_t *)(r + 8);
		r = e.ring + (pos & (RING - 1));
		CHECK_EQ(rd64(r), pos | STUB_KIND_RETURN);
		CHECK_EQ(rd64(r + 16), head); /* the cookie: the entry's position */
		CHECK_EQ(rd64(r + 24), 1001 + i); /* the result */
		CHECK_EQ(rd64(e.ctl + STUB_C_HEAD), pos + STUB_REC_RETURN);
		wr64(e.ctl + STUB_C_TAIL, rd64(e.ctl + STUB_C_HEAD)); /* read */
	}
	teardown(&e);
}

TEST_CASE(free_recorded_at_entry_only)
{
	struct env e;
	bool ok;

	REQUIRE(setup(&e, STUB_HOOK_FREE, 256));
	CHECK_EQ(call_fn(&e, 0x5000, &ok), 0x5001);
	CHECK(ok);
	CHECK_EQ(rd64(e.ring), 0 | STUB_KIND_FREE);
	CHECK_EQ(*(const uint32_t *)(e.ring + 8), STUB_REC_FREE);
	CHECK_EQ(*(const uint32_t *)(e.ring + 12), STUB_HOOK_FREE);
	CHECK_EQ(rd64(e.ring + 16), 0x5000);
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

#else

TEST_CASE(no_stubs_here)
{
	CHECK(arch_x86_64_ops.entry_relocate != NULL);
}

#endif
