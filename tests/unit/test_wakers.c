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
