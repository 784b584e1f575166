// SPDX-License-Identifier: GPL-2.0-only
/* Whether a thread's seccomp state lets heaptrace inject a system call (inject.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PR_DOMAIN "inject"
#include "arch/arch.h"
#include "patch/inject.h"
#include "util/log.h"
#include "target/process.h"
#include "util/util.h"

#define INJECT_MAX_FILTERS 8192 /* the kernel's 32768-instruction budget allows about 6500 */

/* --- probes: heaptrace's own filters, which it cannot read, tried on a child of its own --- */

enum probe_how {
	PROBE_PASSED, /* the call returned a value that is no error */
	PROBE_ERRNO, /* it failed: detail is the errno (an ERRNO or a tracerless TRACE filter) */
	PROBE_KILLED, /* the probe died making it: detail is the signal (SIGSYS, SIGKILL) */
	PROBE_FAILED, /* no answer: detail is why (ENOSYS: a call the probe cannot reproduce,
		       * ECHILD: it ended before the call, ETIMEDOUT: no answer in time) */
};

#define PROBE_TIMEOUT_MS 5000 /* a USER_NOTIF supervisor may hold the call: refused then */
#define PROBE_CACHE 32

struct probe {
	long nr;
	uint64_t key[6]; /* the arguments that are not addresses */
	int how, detail;
};

static struct probe probe_cache[PROBE_CACHE]; /* for the run: heaptrace adds no filter */
static size_t probe_cached;
static bool launched; /* set once before tracing (inject_init) */

/* What of call nr's arguments a probe reproduces and the answer depends on. Return false for a
 * call the probe cannot make harmlessly. */
static bool probe_key(long nr, const uint64_t a[6], uint64_t key[6])
{
	memset(key, 0, 6 * sizeof(*key));
	if (nr == arch->nr_mmap) {
		/* fixed: it could replace the probe's own memory; a file: heaptrace's fds differ */
		if ((a[3] & MAP_FIXED) || !(a[3] & MAP_ANONYMOUS))
			return false;
		memcpy(key + 1, a + 1, 5 * sizeof(*key)); /* all but the hint */
		return true;
	}
	if (nr == arch->nr_mprotect) {
		key[1] = a[1];
		key[2] = a[2];
		return true;
	}
#ifdef SYS_rt_sigaction
	if (nr == SYS_rt_sigaction) {
		key[0] = a[0];
		key[1] = !!a[1];
		key[2] = !!a[2];
		key[3] = a[3];
		return true;
	}
#endif
	return false;
}

/* The probe itself, in a fresh child of heaptrace: async-signal-safe calls only. It writes one
 * byte to fd just before the call, and the call's result (-errno on failure) after it. */
static __attribute__((noreturn)) void probe_child(int fd, long nr, const uint64_t a[6])
{
	/* all zero is SIG_DFL, no flags, an empty mask in every arch's struct sigaction */
	static uint64_t act[32], old[32];
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct rlimit no_core = { 0, 0 };
	uint64_t b[6];
	int64_t r;

	memcpy(b, a, sizeof(b));
	/* dying of SIGSYS leaves no core file (core_pattern "core": in heaptrace's directory) */
	setrlimit(RLIMIT_CORE, &no_core);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	sigaction(SIGSYS, &dfl, NULL); /* a TRAP filter kills it */
	if (nr == arch->nr_mprotect) { /* a page of its own, with the same length */
		void *page = mmap(NULL, b[1] ? b[1] : 1, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (page == MAP_FAILED)
			_exit(1);
		b[0] = (uintptr_t)page;
	} else if (nr != arch->nr_mmap) { /* rt_sigaction: set SIGTRAP's default in the probe */
		b[1] = b[1] ? (uintptr_t)act : 0;
		b[2] = b[2] ? (uintptr_t)old : 0;
	}
	if (write(fd, "c", 1) != 1)
		_exit(1);
	r = syscall(nr, (long)b[0], (long)b[1], (long)b[2], (long)b[3], (long)b[4], (long)b[5]);
	if (r == -1)
		r = -errno;
	if (write(fd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

/* Read up to len bytes from fd before deadline (ms, CLOCK_MONOTONIC). Return the count read. */
static size_t probe_read(int fd, void *buf, size_t len, uint64_t deadline_ms, bool *late)
{
	size_t got = 0;

	while (got < len) {
		uint64_t now = now_ns() / 1000000;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int ready;

		if (now >= deadline_ms) {
			*late = true;
			break;
		}
		ready = poll(&pfd, 1, (int)(deadline_ms - now));
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0) {
			*late = ready == 0;
			break;
		}
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* Make call nr with arguments a in a child of heaptrace and see what becomes of it. */
static void probe_run(long nr, const uint64_t a[6], int *how, int *detail)
{
	uint64_t deadline = now_ns() / 1000000 + PROBE_TIMEOUT_MS;
	bool late = false, called;
	int fds[2], status = 0;
	int64_t r;
	pid_t pid, got;
	char c;

	*how = PROBE_FAILED;
	if (pipe2(fds, O_CLOEXEC)) {
		*detail = errno;
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		probe_child(fds[1], nr, a);
	}
	close(fds[1]);
	if (pid < 0) {
		*detail = errno;
		close(fds[0]);
		return;
	}
	called = probe_read(fds[0], &c, 1, deadline, &late) == 1;
	if (called && probe_read(fds[0], &r, sizeof(r), deadline, &late) == sizeof(r)) {
		*how = r < 0 && r > -4096 ? PROBE_ERRNO : PROBE_PASSED;
		*detail = *how == PROBE_ERRNO ? (int)-r : 0;
	}
	if (late)
		kill(pid, SIGKILL); /* held in the call (USER_NOTIF), or stuck before it */
	close(fds[0]);
	do
		got = waitpid(pid, &status, __WALL); /* the event loop never sees it */
	while (got < 0 && errno == EINTR);
	if (*how != PROBE_FAILED)
		return;
	if (late)
		*detail = ETIMEDOUT;
	else if (called && got == pid && WIFSIGNALED(status))
		*how = PROBE_KILLED, *detail = WTERMSIG(status);
	else
		*detail = ECHILD;
}

/* Whether heaptrace's own filters let call nr with arguments a through (see inject.h). */
static bool probe_ok(long nr, const uint64_t a[6], int *how, int *detail)
{
	uint64_t key[6];
	struct probe *pr;

	if (!probe_key(nr, a, key)) {
		*how = PROBE_FAILED;
		*detail = ENOSYS;
		return false;
	}
	for (size_t i = 0; i < probe_cached; i++) {
		pr = &probe_cache[i];
		if (pr->nr == nr && !memcmp(pr->key, key, sizeof(key))) {
			*how = pr->how;
			*detail = pr->detail;
			return *how == PROBE_PASSED;
		}
	}
	probe_run(nr, a, how, detail);
	pr_dbg(1, "probe of system call %ld under heaptrace's own seccomp filters: %s %d", nr,
	       *how == PROBE_PASSED ? "passed" : *how == PROBE_ERRNO ? "errno" :
	       *how == PROBE_KILLED ? "killed by signal" : "no answer", *detail);
	if (probe_cached < PROBE_CACHE) {
		pr = &probe_cache[probe_cached++];
		pr->nr = nr;
		memcpy(pr->key, key, sizeof(key));
		pr->how = *how;
		pr->detail = *detail;
	}
	return *how == PROBE_PASSED;
}

/*
 * Whether the unreadable filters of thread tid are heaptrace's own: heaptrace is in filter mode
 * with n > 0 filters, the thread has n too, and its process descends from heaptrace. A launch
 * session traces only the program heaptrace forked and, with -f, that program's descendants,
 * from their fork on: a thread heaptrace traces in one descends from heaptrace (even after
 * an ancestor's exit reparented it). Under --pid nothing proves it.
 */
static bool own_filters(pid_t tid)
{
	static long self_mode = -2, self_n;
	struct thread *t = proc_thread_find(tid);

	if (self_mode == -2) { /* heaptrace adds no filter: read once */
		self_mode = proc_status_field(getpid(), "Seccomp");
		self_n = proc_status_field(getpid(), "Seccomp_filters");
	}
	return self_mode == 2 && self_n > 0 && launched && t && t->p &&
	       proc_status_field(tid, "Seccomp_filters") == self_n;
}

void inject_init(bool launch)
{
	launched = launch;
}

void inject_check_load(struct inject_check *c, pid_t tid)
{
	long expected;

	memset(c, 0, sizeof(*c));
	c->mode = proc_status_field(tid, "Seccomp");
	if (c->mode != 2)
		return;
	expected = proc_status_field(tid, "Seccomp_filters"); /* Linux 5.9 on; else -1 */
	for (;;) {
		struct sock_filter *insns;
		long len, got;

		/* index 0 is the oldest filter; ENOENT past the newest */
		len = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)c->n, NULL);
		if (len < 0 && errno == ENOENT && c->n > 0)
			break;
		if (len <= 0 || len > BPF_MAXINSNS || c->n == INJECT_MAX_FILTERS) {
			c->err = len < 0 ? -errno : -E2BIG;
			c->own = own_filters(tid);
			pr_dbg(1, "thread %d: seccomp filters unread (%s)%s", tid,
			       strerror(-c->err), c->own ? ", heaptrace's own: probed" : "");
			return;
		}
		insns = xcalloc(len, sizeof(*insns));
		c->progs = xrealloc(c->progs, (c->n + 1) * sizeof(*c->progs));
		c->progs[c->n].insns = insns;
		c->progs[c->n].len = len;
		got = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)c->n++, insns);
		if (got != len) {
			c->err = got < 0 ? -errno : -EIO;
			return;
		}
	}
	if (expected >= 0 && (size_t)expected != c->n)
		c->err = -ESTALE; /* cannot happen while the thread is stopped */
	pr_dbg(1, "thread %d: %zu seccomp filters", tid, c->n);
}

void inject_check_free(struct inject_check *c)
{
	for (size_t i = 0; i < c->n; i++)
		free((void *)c->progs[i].insns);
	free(c->progs);
	c->progs = NULL;
	c->n = 0;
}

bool inject_check_none(const struct inject_check *c)
{
	return c->mode == 1 || c->mode > 2 || (c->mode == 2 && c->err && !c->own);
}

bool inject_check_ok(void *ctx, long nr, const uint64_t args[6], uint64_t insn_addr)
{
	struct inject_check *c = ctx;
	/* the pc at a system call's entry is past its instruction, on every arch we support */
	struct seccomp_data d = { .nr = (int)nr, .arch = arch->audit_arch,
				  .instruction_pointer = insn_addr + arch->syscall_insn_len };
	uint32_t r = SECCOMP_RET_KILL_PROCESS; /* strict mode, unknown modes, unread filters */

	if (c->mode <= 0)
		return true;
	if (c->mode == 2 && c->err && c->own) {
		uint64_t a[6];

		for (int i = 0; i < 6; i++)
			a[i] = arch->word_size == 4 ? (uint32_t)args[i] : args[i];
		return probe_ok(nr, a, &c->probe_how, &c->probe_detail);
	}
	if (!inject_check_none(c)) {
		for (int i = 0; i < 6; i++) /* a 32-bit process's arguments are 32-bit registers */
			d.args[i] = arch->word_size == 4 ? (uint32_t)args[i] : args[i];
		r = sc_run_all(c->progs, c->n, &d);
		pr_dbg(1, "seccomp filters: %s for injected system call %ld", sc_action_name(r),
		       nr);
		if (sc_allows(r))
			return true;
	}
	c->refused_by = r;
	return false;
}

char *inject_check_why(const struct inject_check *c, const char *what, char *buf, size_t size)
{
	if (c->mode == 2 && c->err && c->own) {
		const char *self = "heaptrace's own seccomp filters, which heaptrace cannot read";
		int d = c->probe_detail;

		if (c->probe_how == PROBE_KILLED || c->probe_how == PROBE_ERRNO)
			snprintf(buf, size,
				 "it runs under %s (%s), and they forbid the %s heaptrace has to "
				 "inject: a probe process making it %s %d (%s)", self,
				 strerror(-c->err), what, c->probe_how == PROBE_KILLED ?
				 "was killed by signal" : "failed with errno", d,
				 c->probe_how == PROBE_KILLED ? strsignal(d) : strerror(d));
		else
			snprintf(buf, size,
				 "it runs under %s (%s), which may forbid the %s heaptrace has to "
				 "inject: a probe process could not try it (%s)", self,
				 strerror(-c->err), what,
				 d == ENOSYS ? "not a call heaptrace can reproduce" : strerror(d));
	} else if (c->mode == 2 && c->err) {
		bool self = proc_status_field(getpid(), "Seccomp") > 0;
		const char *hint = c->err != -EACCES ? "" :
				   self ? ": heaptrace itself runs under seccomp" :
					  ": that needs CAP_SYS_ADMIN";

		snprintf(buf, size,
			 "it runs under seccomp filters heaptrace cannot read (seccomp mode 2; "
			 "ptrace(SECCOMP_GET_FILTER): %s%s), which may forbid the %s heaptrace has "
			 "to inject", strerror(-c->err), hint, what);
	} else if (c->mode == 2) {
		snprintf(buf, size,
			 "it runs under a seccomp filter that forbids the %s heaptrace has to "
			 "inject (seccomp mode 2, action %s)", what, sc_action_name(c->refused_by));
	} else {
		snprintf(buf, size,
			 "it runs in seccomp %s (seccomp mode %ld), which forbids the %s heaptrace "
			 "has to inject",
			 c->mode == 1 ? "strict mode" : "a mode heaptrace does not know", c->mode,
			 what);
	}
	return buf;
}

bool inject_ok(pid_t tid, long nr, const uint64_t args[6], uint64_t insn_addr)
{
	struct inject_check c;
	bool ok;

	inject_check_load(&c, tid);
	ok = inject_check_ok(&c, nr, args, insn_addr);
	inject_check_free(&c);
	return ok;
}
