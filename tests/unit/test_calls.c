// SPDX-License-Identifier: GPL-2.0-only
/*
 * The accounting core (account/acct.c) without a process: entries as a breakpoint stop or an
 * entry stub's record shows them, returns, nesting, realloc, longjmp's abandoned frames and
 * --sample/--depth, checked against the table's figures.
 */
#include "account/acct.h"
#include "eventlog/record.h"
#include "heap/hooks.h"
#include "heap/table.h"
#include "unittest.h"

/* The accounting needs a word size and the anonymous-mapping flag only: any arch serves. */
const struct arch_ops *const arch = &arch_x86_64_ops;

/* No event log in these tests (record_on stays false: the log is never written). */
bool record_on;

void record_alloc_slow(struct proc *p, pid_t tid, uint64_t ptr, uint64_t size, uint32_t bt,
		       uint64_t ns)
{
	(void)p, (void)tid, (void)ptr, (void)size, (void)bt, (void)ns;
}

void record_free_slow(struct proc *p, pid_t tid, uint64_t ptr, uint64_t ns)
{
	(void)p, (void)tid, (void)ptr, (void)ns;
}

void record_library_free_slow(struct proc *p, pid_t tid, uint64_t ptr)
{
	(void)p, (void)tid, (void)ptr;
}

void record_realloc_slow(struct proc *p, pid_t tid, char what, unsigned heap, uint64_t arg,
			 uint64_t ns)
{
	(void)p, (void)tid, (void)what, (void)heap, (void)arg, (void)ns;
}

void record_range_slow(struct proc *p, pid_t tid, unsigned heap, uint64_t lo, uint64_t hi,
		       uint64_t ns)
{
	(void)p, (void)tid, (void)heap, (void)lo, (void)hi, (void)ns;
}

/* No Python interpreter either. */
void python_release(struct proc *p, uint64_t key)
{
	(void)p, (void)key;
}

/* The process's memory: posix_memalign's *memptr, and every string 6 bytes long. */
static uint64_t memptr_value;

static int fake_read_word(pid_t tid, uint64_t addr, unsigned size, uint64_t *val)
{
	(void)tid, (void)addr, (void)size;
	*val = memptr_value;
	return 0;
}

static int fake_string_size(pid_t tid, uint64_t addr, unsigned unit, uint64_t *size)
{
	(void)tid, (void)addr, (void)unit;
	*size = 6;
	return 0;
}

static const struct acct_mem fake_mem = { fake_read_word, fake_string_size };

struct fake {
	struct proc p;
	struct thread t;
	struct acct a;
	uint64_t ns;
};

static void setup(struct fake *f, unsigned depth, unsigned sample)
{
	memset(f, 0, sizeof(*f));
	table_init(&f->p.table);
	f->p.pid = 100;
	f->p.counting = true;
	for (unsigned i = 0; i < HOOK_COUNT; i++)
		f->p.hook_addr[i] = 0x1000 + 0x10 * i;
	f->t.tid = 100;
	f->t.p = &f->p;
	f->a = (struct acct){ .depth = depth, .sample = sample, .mem = &fake_mem };
	f->p.acct = &f->a;
}

static void teardown(struct fake *f)
{
	for (unsigned i = 0; i < f->t.cap; i++)
		free(f->t.frames[i].pcs);
	free(f->t.frames);
	free(f->t.late);
	free(f->p.freed);
	table_destroy(&f->p.table);
}

/* A call as a stop shows it: its arguments and caller. */
struct call {
	uint64_t args[3];
	uint64_t ret;
	bool tail;
	unsigned asked; /* times the caller was asked */
};

static uint64_t call_arg(void *ctx, unsigned i)
{
	return i < 3 ? ((struct call *)ctx)->args[i] : 0;
}

static int call_caller(void *ctx, uint64_t *ret, bool *tail)
{
	struct call *c = ctx;

	c->asked++;
	*ret = c->ret;
	*tail = c->tail;
	return 0;
}

/* A stack of five frames above the caller. */
static unsigned unwind5(void *ctx, struct unwind_reader *rd, uint64_t *pcs, unsigned max)
{
	unsigned n = 0;

	(void)ctx, (void)rd;
	for (; n < max && n < 5; n++)
		pcs[n] = 0x5000 + 0x100 * n;
	return n;
}

/* An entry at a stop, in calls_entry's order: frames below sp are dropped first. */
static struct frame *stop(struct fake *f, unsigned hook, uint64_t sp, struct call *c)
{
	struct acct_entry e = {
		.hook = hook,
		.sp = sp,
		.pc = f->p.hook_addr[hook],
		.ns = f->ns += 1000000,
		.arg = call_arg,
		.caller = call_caller,
		.unwind = unwind5,
		.ctx = c,
	};

	acct_drop_stale(&f->t, sp, 0);
	return acct_enter(&f->a, &f->t, &e);
}

/* The innermost call returns retval. */
static void ret(struct fake *f, uint64_t retval)
{
	acct_return(&f->a, &f->t, f->t.nframes - 1, retval);
}

/* The depth of the backtrace of live block ptr (heap 0), 0 if it is not live. */
static unsigned bt_depth(const struct fake *f, uint64_t ptr)
{
	const struct block *b = table_find(&f->p.table, ptr);

	return b ? f->p.table.bts[b->bt].depth : 0;
}

#define CHECK_HEAP(f, ac, fc, uf, lb, ly)                                                          \
	do {                                                                                       \
		CHECK_EQ((f)->p.table.sum.alloc_calls, ac);                                        \
		CHECK_EQ((f)->p.table.sum.free_calls, fc);                                         \
		CHECK_EQ((f)->p.table.sum.unknown_frees, uf);                                      \
		CHECK_EQ((f)->p.table.sum.live_blocks, lb);                                        \
		CHECK_EQ((f)->p.table.sum.live_bytes, ly);                                         \
	} while (0)

TEST_CASE(malloc_entry_and_return)
{
	struct fake f;
	struct call c = { .args = { 10 }, .ret = 0x4000 };
	struct frame *fr;

	setup(&f, 8, 1);
	fr = stop(&f, HOOK_MALLOC, 0x7000, &c);
	REQUIRE(fr);
	CHECK_EQ(f.t.nframes, 1);
	CHECK_EQ(fr->ret, 0x4000);
	CHECK_EQ(fr->npcs, 6); /* malloc, then the five frames unwound */
	CHECK_EQ(fr->pcs[0], f.p.hook_addr[HOOK_MALLOC]);
	CHECK_EQ(fr->pcs[1], 0x5000);
	CHECK_EQ(f.a.unwinds, 1);
	CHECK_HEAP(&f, 0, 0, 0, 0, 0); /* nothing until it returns */
	ret(&f, 0x100);
	CHECK_EQ(f.t.nframes, 0);
	CHECK_HEAP(&f, 1, 0, 0, 1, 10);
	CHECK_EQ(bt_depth(&f, 0x100), 6);
	teardown(&f);
}

TEST_CASE(free_counted_at_entry)
{
	struct fake f;
	struct call m = { .args = { 10 }, .ret = 0x4000 };
	struct call fr = { .args = { 0x100 }, .ret = 0x4000 };
	struct call unknown = { .args = { 0x999 }, .ret = 0x4000 };
	struct call null = { .args = { 0 }, .ret = 0x4000 };

	setup(&f, 8, 1);
	stop(&f, HOOK_MALLOC, 0x7000, &m);
	ret(&f, 0x100);
	CHECK(!stop(&f, HOOK_FREE, 0x7000, &fr)); /* no return to catch */
	CHECK_HEAP(&f, 1, 1, 0, 0, 0);
	CHECK(!stop(&f, HOOK_FREE, 0x7000, &unknown));
	CHECK_HEAP(&f, 1, 1, 0, 0, 0); /* held: counted when the thread shows what it was */
	CHECK_EQ(f.t.nlate, 1);
	CHECK(!stop(&f, HOOK_FREE, 0x7000, &null)); /* free(NULL) counts nothing */
	CHECK_EQ(f.t.nlate, 1);
	stop(&f, HOOK_MALLOC, 0x7000, &m); /* the thread goes on: an unknown free */
	CHECK_HEAP(&f, 1, 1, 1, 0, 0);
	CHECK_EQ(f.t.nlate, 0);
	ret(&f, 0x200);
	CHECK_HEAP(&f, 2, 1, 1, 1, 10);
	CHECK_EQ(fr.asked + unknown.asked + null.asked, 0); /* no caller needed */
	teardown(&f);
}

/* realloc calls malloc and free inside: counted once, as the realloc. */
TEST_CASE(nested_calls_counted_as_the_outer)
{
	struct fake f;
	struct call m = { .args = { 10 }, .ret = 0x4000 };
	struct call r = { .args = { 0x100, 50 }, .ret = 0x4100 };
	struct call inner_m = { .args = { 50 }, .ret = 0x9000 }, inner_f = { .args = { 0x100 } };

	setup(&f, 8, 1);
	stop(&f, HOOK_MALLOC, 0x7000, &m);
	ret(&f, 0x100);
	REQUIRE(stop(&f, HOOK_REALLOC, 0x7000, &r));
	CHECK_HEAP(&f, 1, 0, 0, 0, 0); /* the old block is out while the realloc runs */
	CHECK(!stop(&f, HOOK_MALLOC, 0x6f00, &inner_m));
	CHECK(!stop(&f, HOOK_FREE, 0x6f00, &inner_f));
	CHECK_EQ(f.t.nframes, 1);
	CHECK_HEAP(&f, 1, 0, 0, 0, 0);
	ret(&f, 0x200);
	CHECK_HEAP(&f, 2, 1, 0, 1, 50);
	CHECK_EQ(bt_depth(&f, 0x100), 0);
	CHECK_EQ(bt_depth(&f, 0x200), 6);
	teardown(&f);
}

/* operator delete calls free: counted at delete's entry, free inside it not again. */
TEST_CASE(delete_nests_free)
{
	struct fake f;
	struct call n = { .args = { 24 }, .ret = 0x4000 }, d = { .args = { 0x300 }, .ret = 0x4000 };
	struct call inner_f = { .args = { 0x300 }, .ret = 0x9000 };

	setup(&f, 8, 1);
	stop(&f, HOOK_NEW, 0x7000, &n);
	ret(&f, 0x300);
	REQUIRE(stop(&f, HOOK_DELETE, 0x7000, &d));
	CHECK_HEAP(&f, 1, 1, 0, 0, 0);
	CHECK(!stop(&f, HOOK_FREE, 0x6f00, &inner_f));
	ret(&f, 0);
	CHECK_HEAP(&f, 1, 1, 0, 0, 0);
	CHECK_EQ(f.t.nframes, 0);
	teardown(&f);
}

TEST_CASE(realloc_same_and_new_pointer)
{
	struct fake f;
	struct call m = { .args = { 10 }, .ret = 0x4000 };
	struct call same = { .args = { 0x100, 20 }, .ret = 0x4000 };
	struct call moved = { .args = { 0x100, 30 }, .ret = 0x4000 };

	setup(&f, 8, 1);
	stop(&f, HOOK_MALLOC, 0x7000, &m);
	ret(&f, 0x100);
	REQUIRE(stop(&f, HOOK_REALLOC, 0x7000, &same));
	ret(&f, 0x100); /* grown in place */
	CHECK_HEAP(&f, 2, 1, 0, 1, 20);
	CHECK_EQ(table_find(&f.p.table, 0x100)->size, 20);
	REQUIRE(stop(&f, HOOK_REALLOC, 0x7000, &moved));
	ret(&f, 0x200);
	CHECK_HEAP(&f, 3, 2, 0, 1, 30);
	CHECK(!table_find(&f.p.table, 0x100));
	CHECK_EQ(table_find(&f.p.table, 0x200)->size, 30);
	teardown(&f);
}

TEST_CASE(realloc_zero_and_failure)
{
	struct fake f;
	struct call m = { .args = { 10 }, .ret = 0x4000 };
	struct call fail = { .args = { 0x100, 1 << 30 }, .ret = 0x4000 };
	struct call zero = { .args = { 0x100, 0 }, .ret = 0x4000 };

	setup(&f, 8, 1);
	stop(&f, HOOK_MALLOC, 0x7000, &m);
	ret(&f, 0x100);
	REQUIRE(stop(&f, HOOK_REALLOC, 0x7000, &fail));
	ret(&f, 0); /* failed: the old block is live again, as it was */
	CHECK_HEAP(&f, 1, 0, 0, 1, 10);
	CHECK_EQ(bt_depth(&f, 0x100), 6);
	REQUIRE(stop(&f, HOOK_REALLOC, 0x7000, &zero));
	ret(&f, 0); /* realloc(p, 0) freed p and returned NULL (glibc) */
	CHECK_HEAP(&f, 1, 1, 0, 0, 0);
	teardown(&f);
}

/* A call longjmp left never returns: a later entry above its frame drops it, and a realloc's
 * old block goes back. */
TEST_CASE(longjmp_drops_abandoned_frames)
{
	struct fake f;
	struct call m = { .args = { 10 }, .ret = 0x4000 };
	struct call r = { .args = { 0x100, 50 }, .ret = 0x4000 };
	struct call later = { .args = { 7 }, .ret = 0x4000 };

	setup(&f, 8, 1);
	stop(&f, HOOK_MALLOC, 0x7000, &m);
	ret(&f, 0x100);
	REQUIRE(stop(&f, HOOK_REALLOC, 0x6000, &r));
	CHECK_HEAP(&f, 1, 0, 0, 0, 0);
	/* longjmp out of the realloc, then a malloc from a frame above it */
	REQUIRE(stop(&f, HOOK_MALLOC, 0x7000, &later));
	CHECK_EQ(f.t.nframes, 1);
	CHECK_HEAP(&f, 1, 0, 0, 1, 10);
	ret(&f, 0x300);
	CHECK_HEAP(&f, 2, 0, 0, 2, 17);
	teardown(&f);
}

/* A recorded return names its call: deeper calls it returned past are dropped. */
TEST_CASE(record_return_past_deeper_calls)
{
	static const struct hook_desc pool = { "test_pool_alloc", HK_ALLOC, 0, -1, -1, 0, 0, 0 };
	int hook = hook_add_custom(&pool, "test_pool");
	struct calls_rec outer = { .args = { 64 }, .sp = 0x7000, .ret = 0x4000, .cookie = 0x10,
				   .returns = true };
	struct calls_rec inner = { .hook = HOOK_MALLOC, .args = { 4096 }, .sp = 0x6000,
				   .ret = 0x4800, .cookie = 0x20, .returns = true };
	struct fake f;
	unsigned heap;

	REQUIRE(hook > 0);
	heap = hook_table[hook].heap;
	setup(&f, 8, 1);
	outer.hook = hook;
	acct_rec_entry(&f.a, &f.t, &outer, unwind5, NULL);
	acct_rec_entry(&f.a, &f.t, &inner, unwind5, NULL); /* another heap: its own call */
	CHECK_EQ(f.t.nframes, 2);
	CHECK(f.t.frames[0].stubbed && f.t.frames[0].logged);
	acct_rec_return(&f.a, &f.t, 0x10, 0x500); /* the malloc's return never came */
	CHECK_EQ(f.t.nframes, 0);
	CHECK_HEAP(&f, 0, 0, 0, 0, 0);
	CHECK_EQ(table_heap_sum(&f.p.table, heap)->alloc_calls, 1);
	CHECK_EQ(table_heap_sum(&f.p.table, heap)->live_bytes, 64);
	acct_rec_return(&f.a, &f.t, 0x20, 0x600); /* of no call in flight: ignored */
	CHECK_HEAP(&f, 0, 0, 0, 0, 0);
	teardown(&f);
}

/* A signal handler's calls over a malloc in flight (its stub interrupted): counted, each its own,
 * with a malloc made inside the handler's realloc part of it; the interrupted malloc returns
 * first (its return reserved before the handler ran), and the handler's frames keep their
 * indices until they return. */
TEST_CASE(handler_calls_over_a_call_in_flight)
{
	struct calls_rec outer = { .hook = HOOK_MALLOC, .args = { 24 }, .sp = 0x7000, .ret = 0x4000,
				   .cookie = 0x10, .returns = true };
	struct calls_rec h = { .hook = HOOK_REALLOC, .args = { 0, 7777 }, .sp = 0x6000,
			       .ret = 0x4100, .cookie = 0x20, .returns = true,
			       .handler = true };
	struct calls_rec inside = { .hook = HOOK_MALLOC, .args = { 7777 }, .sp = 0x5f00,
				    .ret = 0x4200, .cookie = 0x30, .returns = true };
	struct fake f;

	setup(&f, 8, 1);
	acct_rec_entry(&f.a, &f.t, &outer, unwind5, NULL);
	acct_rec_entry(&f.a, &f.t, &h, unwind5, NULL);
	acct_rec_entry(&f.a, &f.t, &inside, unwind5, NULL); /* realloc's own: not counted */
	CHECK_EQ(f.t.nframes, 2);
	CHECK(f.t.frames[1].handler);
	acct_rec_return(&f.a, &f.t, 0x30, 0x900);
	acct_rec_return(&f.a, &f.t, 0x10, 0x500); /* the interrupted call, under the handler's */
	CHECK_EQ(f.t.nframes, 2);
	CHECK(f.t.frames[0].over);
	CHECK_HEAP(&f, 1, 0, 0, 1, 24);
	acct_rec_return(&f.a, &f.t, 0x20, 0x900);
	CHECK_EQ(f.t.nframes, 0);
	CHECK_HEAP(&f, 2, 0, 0, 2, 24 + 7777);
	teardown(&f);
}

/* A free while a plain malloc is the innermost call in flight is not the malloc's (it calls no
 * traced free): a signal handler's, counted. Inside a realloc it is the realloc's own. */
TEST_CASE(free_under_plain_malloc_counted)
{
	struct call m = { .args = { 40 }, .ret = 0x4000 }, g = { .args = { 0x500 }, .ret = 0x4100 };
	struct call r = { .args = { 0x600, 80 }, .ret = 0x4200 }, h = { .args = { 0x900 } };
	struct fake f;

	setup(&f, 8, 1);
	REQUIRE(stop(&f, HOOK_MALLOC, 0x7000, &m));
	ret(&f, 0x500);
	REQUIRE(stop(&f, HOOK_MALLOC, 0x7000, &m));
	stop(&f, HOOK_FREE, 0x6000, &g); /* a handler's free of the first block */
	ret(&f, 0x600);
	CHECK_HEAP(&f, 2, 1, 0, 1, 40);
	REQUIRE(stop(&f, HOOK_REALLOC, 0x7000, &r));
	stop(&f, HOOK_FREE, 0x6f00, &h); /* realloc's own free: part of it */
	ret(&f, 0x700);
	CHECK_HEAP(&f, 3, 2, 0, 1, 80);
	teardown(&f);
}

/* operator new recorded without a return of its own: the malloc inside, of its size, gives
 * its block. */
TEST_CASE(record_new_completed_by_inner_malloc)
{
	struct fake f;
	struct calls_rec n = { .hook = HOOK_NEW, .args = { 24 }, .sp = 0x7000, .ret = 0x4000,
			       .cookie = 0x10, .awaits_inner = true };
	struct calls_rec m = { .hook = HOOK_MALLOC, .args = { 24 }, .sp = 0x6f00, .ret = 0x9000,
			       .cookie = 0x20, .returns = true };

	setup(&f, 8, 1);
	acct_rec_entry(&f.a, &f.t, &n, unwind5, NULL);
	acct_rec_entry(&f.a, &f.t, &m, unwind5, NULL);
	CHECK_EQ(f.t.nframes, 1);
	CHECK_EQ(f.t.frames[0].inner_cookie, 0x20);
	acct_rec_return(&f.a, &f.t, 0x20, 0x700);
	CHECK_EQ(f.t.nframes, 0);
	CHECK_HEAP(&f, 1, 0, 0, 1, 24);
	CHECK_EQ(bt_depth(&f, 0x700), 6);
	CHECK_EQ(f.p.table.pcs[f.p.table.bts[table_find(&f.p.table, 0x700)->bt].pcs_off],
		 f.p.hook_addr[HOOK_NEW]);
	teardown(&f);
}

/* A tail call from a traced call returns through it: not followed. */
TEST_CASE(tail_calls_not_followed)
{
	struct fake f;
	struct call c = { .args = { 10 }, .ret = 0x4000, .tail = true };
	struct calls_rec r = { .hook = HOOK_MALLOC, .args = { 10 }, .sp = 0x7000 };

	setup(&f, 8, 1);
	CHECK(!stop(&f, HOOK_MALLOC, 0x7000, &c));
	acct_rec_entry(&f.a, &f.t, &r, unwind5, NULL);
	CHECK_EQ(f.t.nframes, 0);
	f.p.counting = false; /* an unfollowed child: nothing is counted */
	c.tail = false;
	CHECK(!stop(&f, HOOK_MALLOC, 0x7000, &c));
	teardown(&f);
}

/* --sample=3: allocations 0, 3, 6.. of the process are unwound, the others get their caller
 * only; frees do not advance the count. Stops and records share it. */
TEST_CASE(sample_every_third)
{
	struct fake f;
	struct call c = { .args = { 10 }, .ret = 0x4000 }, fr = { .ret = 0x4000 };
	struct calls_rec r = { .hook = HOOK_MALLOC, .args = { 10 }, .sp = 0x7000, .ret = 0x4400,
			       .returns = true };
	unsigned depths[6];

	setup(&f, 8, 3);
	for (unsigned i = 0; i < 6; i++) {
		if (i % 2) {
			r.cookie = 0x10 * (i + 1);
			acct_rec_entry(&f.a, &f.t, &r, unwind5, NULL);
			acct_rec_return(&f.a, &f.t, r.cookie, 0x100 * (i + 1));
		} else {
			stop(&f, HOOK_MALLOC, 0x7000, &c);
			ret(&f, 0x100 * (i + 1));
		}
		fr.args[0] = 0x100 * (i + 1);
		depths[i] = bt_depth(&f, 0x100 * (i + 1));
		stop(&f, HOOK_FREE, 0x7000, &fr);
	}
	CHECK_EQ(f.a.unwinds, 2);
	CHECK_EQ(f.p.unwind_seq, 6);
	CHECK_EQ(depths[0], 6);
	CHECK_EQ(depths[1], 2);
	CHECK_EQ(depths[2], 2);
	CHECK_EQ(depths[3], 6);
	CHECK_EQ(depths[4], 2);
	CHECK_EQ(depths[5], 2);
	CHECK_HEAP(&f, 6, 6, 0, 0, 0);
	teardown(&f);
}

/* --depth=1: the allocation function alone, nothing unwound, sampled or not; the sample count
 * still advances at every allocation, a stop's or a record's. */
TEST_CASE(depth_one)
{
	struct fake f;
	struct call c = { .args = { 10 }, .ret = 0x4000 };
	struct calls_rec r = { .hook = HOOK_MALLOC, .args = { 10 }, .sp = 0x7000, .ret = 0x4400,
			       .cookie = 0x10, .returns = true };

	setup(&f, 1, 2);
	stop(&f, HOOK_MALLOC, 0x7000, &c);
	ret(&f, 0x100);
	acct_rec_entry(&f.a, &f.t, &r, unwind5, NULL);
	acct_rec_return(&f.a, &f.t, 0x10, 0x200);
	stop(&f, HOOK_MALLOC, 0x7000, &c);
	ret(&f, 0x300);
	CHECK_EQ(f.a.unwinds, 0);
	CHECK_EQ(f.p.unwind_seq, 3);
	CHECK_EQ(bt_depth(&f, 0x100), 1);
	CHECK_EQ(bt_depth(&f, 0x200), 1);
	CHECK_EQ(bt_depth(&f, 0x300), 1);
	CHECK_HEAP(&f, 3, 0, 0, 3, 30);
	teardown(&f);
}

/* posix_memalign's block is read in memory at its return; strdup's size is its string's. */
TEST_CASE(memory_read_at_return)
{
	struct fake f;
	struct call pm = { .args = { 0x7ff0, 64, 100 }, .ret = 0x4000 };

	setup(&f, 8, 1);
	memptr_value = 0x800;
	REQUIRE(stop(&f, HOOK_POSIX_MEMALIGN, 0x7000, &pm));
	ret(&f, 0); /* success */
	CHECK_HEAP(&f, 1, 0, 0, 1, 100);
	CHECK(table_find(&f.p.table, 0x800));
	teardown(&f);
}

/* free() of ptr by the fake's thread, at a stop. */
static void free_at(struct fake *f, uint64_t ptr)
{
	struct call c = { .args = { ptr }, .ret = 0x4000 };

	CHECK(!stop(f, HOOK_FREE, 0x7000, &c));
}

/* malloc(size) by the fake's thread, returning ptr. */
static void malloc_at(struct fake *f, uint64_t size, uint64_t ptr)
{
	struct call c = { .args = { size }, .ret = 0x4000 };

	stop(f, HOOK_MALLOC, 0x7000, &c);
	ret(f, ptr);
}

/* glibc's end of a thread: the blocks in its cache (freed by the program before), then the
 * cache itself (never seen): the C library's frees when the thread ends by its own exit. */
TEST_CASE(thread_cache_at_own_exit)
{
	struct fake f;

	setup(&f, 8, 1);
	malloc_at(&f, 24, 0x100);
	malloc_at(&f, 40, 0x200);
	free_at(&f, 0x100);
	free_at(&f, 0x200);
	free_at(&f, 0x200); /* tcache_thread_shutdown: bin by bin */
	free_at(&f, 0x100);
	free_at(&f, 0x900); /* the cache itself */
	CHECK_HEAP(&f, 2, 2, 0, 0, 0);
	CHECK_EQ(f.t.nlate, 3);
	acct_late_park(&f.t, true); /* a report meanwhile counts them as unknown */
	CHECK_EQ(f.p.table.sum.unknown_frees, 3);
	acct_late_park(&f.t, false);
	CHECK_EQ(f.p.table.sum.unknown_frees, 0);
	f.t.own_exit = true;
	acct_late_end(&f.t);
	CHECK_HEAP(&f, 2, 2, 0, 0, 0);
	CHECK_EQ(f.p.table.sum.library_frees, 3);
	CHECK_EQ(f.t.nlate, 0);
	teardown(&f);
}

/* A free of a block never seen, before the cache's: the program's, an unknown free; and
 * a block handed out again is not in the cache any more. */
TEST_CASE(foreign_free_before_the_cache)
{
	struct fake f;

	setup(&f, 8, 1);
	malloc_at(&f, 24, 0x100);
	free_at(&f, 0x100);
	malloc_at(&f, 24, 0x100); /* handed out again, and freed */
	free_at(&f, 0x100);
	malloc_at(&f, 24, 0x300);
	free_at(&f, 0x300);
	free_at(&f, 0x5550); /* a foreign block, after the thread's last allocation */
	free_at(&f, 0x100);
	free_at(&f, 0x300);
	free_at(&f, 0x900);
	f.t.own_exit = true;
	acct_late_end(&f.t);
	CHECK_HEAP(&f, 3, 3, 1, 0, 0);
	CHECK_EQ(f.p.table.sum.library_frees, 3);
	teardown(&f);
}

/* A thread ended by the process's exit or a signal: its held frees are unknown frees. */
TEST_CASE(held_frees_unknown_without_own_exit)
{
	struct fake f;

	setup(&f, 8, 1);
	malloc_at(&f, 24, 0x100);
	free_at(&f, 0x100);
	free_at(&f, 0x100);
	free_at(&f, 0x900);
	acct_late_end(&f.t);
	CHECK_HEAP(&f, 1, 1, 2, 0, 0);
	CHECK_EQ(f.p.table.sum.library_frees, 0);
	teardown(&f);
}

/* Only the last held free may be of a block never freed: one of many is an unknown free. */
TEST_CASE(only_the_cache_itself_never_seen)
{
	struct fake f;

	setup(&f, 8, 1);
	for (uint64_t i = 1; i <= 40; i++)
		malloc_at(&f, 24, 0x1000 * i);
	for (uint64_t i = 1; i <= 40; i++)
		free_at(&f, 0x1000 * i);
	free_at(&f, 0x77000); /* not freed before, first: before the cache's frees */
	for (uint64_t i = 1; i <= 40; i++)
		free_at(&f, 0x1000 * i);
	free_at(&f, 0x88000);
	f.t.own_exit = true;
	acct_late_end(&f.t);
	CHECK_HEAP(&f, 40, 40, 1, 0, 0);
	CHECK_EQ(f.p.table.sum.library_frees, 41);
	teardown(&f);
}
