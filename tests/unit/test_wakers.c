// SPDX-License-Identifier: GPL-2.0-only
/*
 * The waker children's pids (src/target/wakers.c), with the kernel's part played here: a fake
 * start hands out pids and says when the main thread reaps them.
 */
#include "target/wakers.h"
#include "unittest.h"

struct fake {
	pid_t next; /* the pid the next child gets */
};

static pid_t fake_start(atomic_int *slot, void *arg)
{
	struct fake *f = arg;

	/* what clone's CLONE_PARENT_SETTID does before the child runs */
	atomic_store(slot, f->next);
	return f->next++;
}

static pid_t failing_start(atomic_int *slot, void *arg)
{
	(void)slot;
	(void)arg;
	return -11;
}

TEST_CASE(started_then_reaped_once)
{
	static struct wakers w;
	struct fake f = { .next = 100 };

	CHECK_EQ(wakers_start(&w, fake_start, &f), 100);
	CHECK(wakers_reaped(&w, 100));
	CHECK(!wakers_reaped(&w, 100));
	CHECK_EQ(wakers_start(&w, fake_start, &f), 101);
	CHECK(wakers_reaped(&w, 101));
	CHECK(!wakers_reaped(&w, 101));
}

TEST_CASE(not_a_waker)
{
	static struct wakers w;
	struct fake f = { .next = 200 };

	CHECK(!wakers_reaped(&w, 0));
	CHECK(!wakers_reaped(&w, -1));
	CHECK(!wakers_reaped(&w, 199));
	CHECK_EQ(wakers_start(&w, fake_start, &f), 200);
	CHECK(!wakers_reaped(&w, 201));
	CHECK(!wakers_reaped(&w, 0));
}

TEST_CASE(failed_start_keeps_slot_free)
{
	static struct wakers w;
	struct fake f = { .next = 300 };

	CHECK_EQ(wakers_start(&w, failing_start, NULL), -11);
	for (unsigned i = 0; i < WAKERS_MAX; i++)
		CHECK_EQ(atomic_load(&w.pid[i]), 0);
	CHECK_EQ(wakers_start(&w, fake_start, &f), 300);
	CHECK(wakers_reaped(&w, 300));
}

/*
 * The main thread reaps a waker's exit before the waker thread is back from starting it,
 * then a traced process gets the same pid and exits: that exit is the tracee's and must be
 * reported, not taken for the waker's.
 */
struct race {
	struct wakers *w;
	pid_t pid;
	bool reaped_early; /* what the main thread was told of the early exit */
};

static pid_t racing_start(atomic_int *slot, void *arg)
{
	struct race *r = arg;

	atomic_store(slot, r->pid); /* CLONE_PARENT_SETTID, before the child runs */
	/* the child exits, and the main thread's waitpid(-1) returns it at once */
	r->reaped_early = wakers_reaped(r->w, r->pid);
	return r->pid;
}

TEST_CASE(reaped_before_start_returns)
{
	static struct wakers w;
	struct race r = { .w = &w, .pid = 4242 };

	CHECK_EQ(wakers_start(&w, racing_start, &r), 4242);
	CHECK(r.reaped_early);
	/* a tracee now has pid 4242, and exits */
	CHECK(!wakers_reaped(&w, 4242));
	for (unsigned i = 0; i < WAKERS_MAX; i++)
		CHECK_EQ(atomic_load(&w.pid[i]), 0);
}

/* Every slot holds a waker not reaped yet: no more children until one is. */
TEST_CASE(all_slots_taken)
{
	static struct wakers w;
	struct fake f = { .next = 500 };

	for (unsigned i = 0; i < WAKERS_MAX; i++)
		CHECK_EQ(wakers_start(&w, fake_start, &f), 500 + i);
	CHECK_EQ(wakers_start(&w, fake_start, &f), 0);
	CHECK(wakers_reaped(&w, 510));
	CHECK_EQ(wakers_start(&w, fake_start, &f), 500 + WAKERS_MAX);
	for (unsigned i = 0; i <= WAKERS_MAX; i++)
		CHECK_EQ(wakers_reaped(&w, 500 + i), i != 10);
}
