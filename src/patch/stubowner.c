// SPDX-License-Identifier: GPL-2.0-only
/*
 * heaptrace's robust futex (stubs.h): one thread of heaptrace's owns the owner word in every
 * ring's control page, through its robust list, so that the kernel marks each word
 * (FUTEX_OWNER_DIED) when heaptrace dies, and the stubs stop recording.
 *
 * The list and the thread are process-wide by nature: the kernel keeps one robust list per
 * thread and walks it when that thread dies, so every ring's word hangs off the one list of the
 * one owner thread. They are touched when a ring is set up or forgotten, never per record.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stub_arch.h"
#include "patch/stubs.h"

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

pid_t stubs_owner(void)
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

/* The list entry of a ring's owner word: in the control page, futex_offset before the word. */
static struct robust_list *robust_entry(uint8_t *ctl)
{
	return (struct robust_list *)(ctl + STUB_C_ROBUST);
}

void stubs_owner_link(uint8_t *ctl)
{
	robust_entry(ctl)->next = robust.list.next;
	__atomic_store_n(&robust.list.next, robust_entry(ctl), __ATOMIC_RELEASE);
}

void stubs_owner_unlink(uint8_t *ctl)
{
	for (struct robust_list *e = &robust.list; e->next != &robust.list; e = e->next)
		if (e->next == robust_entry(ctl)) {
			__atomic_store_n(&e->next, robust_entry(ctl)->next, __ATOMIC_RELEASE);
			return;
		}
}
