// SPDX-License-Identifier: GPL-2.0-only
/*
 * heaptrace's own signals and the one wait for tracee events (see events.h).
 *
 * Every signal but the synchronous faults is blocked in the main thread, which waits in
 * waitpid and so is never interrupted. A second thread, the waker, takes the signals with
 * sigwaitinfo and queues them; to end a waitpid that may be blocked, it starts a child that
 * exits at once: waitpid(-1) returns that child, which is no tracee (wakers.c keeps their
 * pids), and the main thread looks at the queue. Deadlines are an interval timer whose SIGALRM
 * the waker takes the same way. Events are handed out in batches, so that no thread starves
 * (wait_any).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target/events.h"
#include "target/wakers.h"
#include "util/util.h"

static sigset_t blocked; /* heaptrace's signals, blocked in every thread */
static sigset_t taken; /* those the waker takes: all but SIGCHLD, which stays pending */
static sigset_t own; /* raised by the main thread's own writes */
static sigset_t orig_mask; /* what heaptrace was started with, for the program */
static struct sigaction orig_chld;

#define QUEUE_SIZE 64u /* signals the main thread has not taken yet, at most */

static int queue[QUEUE_SIZE];
static atomic_uint queue_head, queue_tail;

static struct wakers wakers; /* children started to end a waitpid, not reaped */

/*
 * Synchronous faults stay unblocked: a blocked fault signal is forced on the thread anyway
 * and, blocked, kills it at once.
 */
static const int fault_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT };

static int waker_child(void *arg)
{
	(void)arg;
	return 0;
}

/*
 * A child of heaptrace that exits at once. The kernel stores its pid in the slot before it
 * runs, so the main thread knows it for a waker however soon it reaps it. CLONE_VFORK: this
 * thread waits here until the child has exited, so the child may run on a stack in this frame.
 */
static pid_t start_waker(atomic_int *slot, void *arg)
{
	_Alignas(16) char stack[16384];
	pid_t pid;

	(void)arg;
	_Static_assert(sizeof(*slot) == sizeof(pid_t), "the kernel stores a pid_t");
	pid = clone(waker_child, stack + sizeof(stack),
		    CLONE_VM | CLONE_VFORK | CLONE_PARENT_SETTID | SIGCHLD, NULL, (pid_t *)slot);
	return pid < 0 ? -errno : pid;
}

/*
 * End a waitpid of the main thread. With every slot taken, the main thread has enough
 * wake-ups not taken yet to look at the queue.
 */
static void wake_main(void)
{
	wakers_start(&wakers, start_waker, NULL);
}

static void *waker(void *arg)
{
	(void)arg;
	for (;;) {
		unsigned head = atomic_load(&queue_head);
		siginfo_t si;
		int sig = sigwaitinfo(&taken, &si);

		if (sig <= 0)
			continue;
		if (sig == SIGALRM && si.si_code == SI_KERNEL)
			sig = EVENTS_DEADLINE; /* heaptrace's own timer, not a SIGALRM sent to it */
		/* a full queue drops only repeats of what it holds already: the reports asked
		 * for and the end are all still in it */
		if (head - atomic_load(&queue_tail) < QUEUE_SIZE) {
			queue[head % QUEUE_SIZE] = sig;
			atomic_store(&queue_head, head + 1);
		}
		wake_main();
	}
	return NULL;
}

void events_init(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	pthread_t th;

	sigfillset(&blocked);
	for (size_t i = 0; i < ARRAY_SIZE(fault_sigs); i++)
		sigdelset(&blocked, fault_sigs[i]);
	sigprocmask(SIG_BLOCK, &blocked, &orig_mask);
	/* the kernel sends SIGCHLD at every stop of a tracee: blocked everywhere and never
	 * taken, it stays one pending signal and wakes nobody */
	taken = blocked;
	sigdelset(&taken, SIGCHLD);
	sigemptyset(&own);
	sigaddset(&own, SIGPIPE);
	sigaddset(&own, SIGXFSZ);
	/*
	 * Ignored, SIGCHLD makes the kernel reap children before waitpid sees their status (the
	 * launched program's among them): heaptrace needs the default, the program gets back
	 * what heaptrace was given (events_child_setup).
	 */
	sigaction(SIGCHLD, &dfl, &orig_chld);
	pthread_create(&th, NULL, waker, NULL); /* inherits the mask: every signal blocked */
}

void events_child_setup(void)
{
	sigaction(SIGCHLD, &orig_chld, NULL);
	sigprocmask(SIG_SETMASK, &orig_mask, NULL);
}

bool events_sig_ends(int sig)
{
	switch (sig) {
	case SIGUSR1:
	case SIGUSR2:
	case EVENTS_DEADLINE:
	case SIGCHLD:
	case SIGCONT:
	case SIGWINCH:
	case SIGURG:
	case SIGTSTP: /* stopped, heaptrace would stop the program with it */
	case SIGTTIN:
	case SIGTTOU:
		return false;
	default:
		return true;
	}
}

/*
 * The oldest queued signal, or 0. SIGPIPE and SIGXFSZ raised by a write of the main thread
 * (a report's reader gone, a file too large) are sent to that thread alone, where the waker
 * cannot take them: looked for here too.
 */
#define OWN_CHECK_NS 10000000

static int take_signal(void)
{
	static const struct timespec zero = { 0, 0 };
	static uint64_t checked;
	unsigned tail = atomic_load(&queue_tail);
	uint64_t now = now_ns();
	int sig;

	/* a write that raised one failed already: a look every 10 ms is soon enough */
	if (now - checked >= OWN_CHECK_NS) {
		checked = now;
		sig = sigtimedwait(&own, NULL, &zero);
		if (sig > 0)
			return sig;
	}
	if (tail == atomic_load(&queue_head))
		return 0;
	sig = queue[tail % QUEUE_SIZE];
	atomic_store(&queue_tail, tail + 1);
	return sig;
}

/* Arm SIGALRM for deadline_ns (0: none), unless it is armed for it already. */
static void set_alarm(uint64_t deadline_ns)
{
	static uint64_t armed;
	struct itimerval it = { { 0, 0 }, { 0, 0 } };
	uint64_t now = now_ns(), left;

	if (deadline_ns == armed)
		return;
	armed = deadline_ns;
	if (deadline_ns) {
		left = deadline_ns > now ? (deadline_ns - now + 999) / 1000 : 1; /* us, not early */
		it.it_value.tv_sec = left / 1000000;
		it.it_value.tv_usec = left % 1000000;
	}
	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * When heaptrace and the program are on different CPUs, sleeping until the next stop adds
 * heaptrace's own wake-up to every stop. Polling for a short while first removes it: measured
 * here, 4 threads churning 1.8 times faster, a single thread under --no-pin 8 times. Adaptive,
 * so that a program whose stops are far apart does not keep a CPU busy: polling stops after a
 * poll found nothing and the wait that followed was long, and resumes once an event comes
 * within the window again.
 */
#define POLL_NS 100000

static bool poll_ok = true;

static events_stop_fn stop_fn;

void events_on_stop(events_stop_fn fn)
{
	stop_fn = fn;
}

/* waitpid, restarted when interrupted. */
static pid_t wait_for(pid_t pid, int *status, int flags)
{
	pid_t got;

	do
		got = waitpid(pid, status, __WALL | flags);
	while (got < 0 && errno == EINTR);
	return got;
}

/*
 * The next event of any tracee, as wait_for(-1, ...), with stop_fn shown a stop first: the
 * stop is looked at with WNOWAIT (waitpid takes a ptrace stop's signal away from the thread:
 * were heaptrace killed after that, the thread would go on without it), then taken.
 */
static pid_t wait_one(int *status, int flags)
{
	siginfo_t si;

	if (!stop_fn)
		return wait_for(-1, status, flags);
	for (;;) {
		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WNOWAIT | __WALL | flags) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (!si.si_pid)
			return 0; /* WNOHANG, nothing there */
		if (si.si_code == CLD_TRAPPED)
			stop_fn(si.si_pid, (si.si_status << 8) | 0x7f);
		return wait_for(si.si_pid, status, 0);
	}
}

/*
 * Events taken from the kernel but not handed out yet, oldest first. The kernel's wait
 * always reports the first waitable tracee of its list: with threads that stop again as soon
 * as they are resumed (breakpoints in a loop), one late in the list would wait for ever. So
 * when an event comes, every other one already there is taken with it and handed out before
 * the kernel is asked again: each thread stopped at that moment is served once (strace does
 * the same).
 */
struct taken_event {
	pid_t tid;
	int status;
};

static struct {
	struct taken_event *ev;
	unsigned head, count, cap;
} batch;

static void batch_push(pid_t tid, int status)
{
	if (batch.count == batch.cap) { /* grow, the ring unrolled to start at 0 */
		unsigned cap = batch.cap ? 2 * batch.cap : 16;
		struct taken_event *ev = xmalloc(cap * sizeof(*ev));

		for (unsigned i = 0; i < batch.count; i++)
			ev[i] = batch.ev[(batch.head + i) % batch.cap];
		free(batch.ev);
		batch = (typeof(batch)){ ev, 0, batch.count, cap };
	}
	batch.ev[(batch.head + batch.count++) % batch.cap] = (struct taken_event){ tid, status };
}

/* Take the event of tid (-1: the oldest) out of the batch: its tid, or 0 if none. */
static pid_t batch_take(pid_t tid, int *status)
{
	for (unsigned i = 0; i < batch.count; i++) {
		unsigned at = (batch.head + i) % batch.cap;
		struct taken_event e = batch.ev[at];

		if (tid != -1 && e.tid != tid)
			continue;
		/* close the gap: the older ones move up one place */
		for (unsigned j = i; j > 0; j--)
			batch.ev[(batch.head + j) % batch.cap] =
				batch.ev[(batch.head + j - 1) % batch.cap];
		batch.head = (batch.head + 1) % batch.cap;
		batch.count--;
		*status = e.status;
		return e.tid;
	}
	return 0;
}

static pid_t wait_any(int *status, int flags)
{
	pid_t got = batch_take(-1, status), more;
	int st;

	if (got)
		return got;
	got = wait_one(status, flags);
	if (got <= 0)
		return got;
	while ((more = wait_one(&st, WNOHANG)) > 0)
		batch_push(more, st);
	return got;
}

/* True, once, if what waitpid returned is the end of a child wake_main started. */
static bool waker_ended(pid_t pid, int status)
{
	return pid > 0 && (WIFEXITED(status) || WIFSIGNALED(status)) &&
	       wakers_reaped(&wakers, pid);
}

int events_next(struct event *ev, uint64_t deadline_ns, bool poll)
{
	uint64_t start = now_ns();
	pid_t tid = 0;

	memset(ev, 0, sizeof(*ev));
	set_alarm(deadline_ns);
	for (;;) {
		ev->sig = take_signal();
		if (ev->sig && ev->sig != EVENTS_DEADLINE)
			return 1;
		if (deadline_ns && now_ns() >= deadline_ns)
			return 0;
		while (poll && poll_ok && !tid && now_ns() - start < POLL_NS)
			tid = wait_any(&ev->status, WNOHANG);
		if (!tid) {
			tid = wait_any(&ev->status, 0);
			poll_ok = now_ns() - start < 10 * POLL_NS;
		}
		if (tid < 0)
			return -errno;
		if (waker_ended(tid, ev->status)) {
			tid = 0;
			continue;
		}
		ev->tid = tid;
		return 1;
	}
}

int events_poll(struct event *ev)
{
	pid_t tid;

	memset(ev, 0, sizeof(*ev));
	ev->sig = take_signal();
	if (ev->sig && ev->sig != EVENTS_DEADLINE)
		return 1;
	ev->sig = 0;
	do
		tid = wait_any(&ev->status, WNOHANG);
	while (waker_ended(tid, ev->status));
	if (tid < 0)
		return -errno;
	ev->tid = tid;
	return tid > 0;
}

/*
 * SIGCHLD, blocked everywhere, is pending whenever a tracee changed state since it was last
 * taken; heaptrace's own signals wake it too, as the waker's child exits (wake_main).
 */
void events_sleep(uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000) };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigtimedwait(&chld, NULL, &ts);
}

pid_t events_wait_tid(pid_t tid, int *status)
{
	int st;
	pid_t got;

	do {
		got = batch_take(tid, &st);
		if (!got)
			got = wait_for(tid, &st, 0);
	} while (tid == -1 && waker_ended(got, st));
	if (status)
		*status = st;
	return got < 0 ? -errno : got;
}
