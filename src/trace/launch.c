// SPDX-License-Identifier: GPL-2.0-only
/*
 * Launching: fork, seize the child before it runs the program, then exec. Without
 * PTRACE_O_EXITKILL: as with strace, a launched program runs on if heaptrace dies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#define PR_DOMAIN "launch"
#include "target/cpu.h"
#include "target/events.h"
#include "trace/launch.h"
#include "trace/lifecycle.h"
#include "util/log.h"
#include "target/process.h"
#include "trace/session.h"
#include "util/util.h"

/* The arguments joined by spaces, for the report's command line. */
static char *join_args(char *const *argv)
{
	size_t len = 1;
	char *s;

	for (char *const *a = argv; *a; a++)
		len += strlen(*a) + 1;
	s = xmalloc(len);
	s[0] = '\0';
	for (char *const *a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

int launch_program(void)
{
	int go[2], err[2], e = 0;
	struct proc *p;
	pid_t pid;
	ssize_t n;

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		pr_err("pipe: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		pr_err("fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		char c;

		close(go[1]);
		close(err[0]);
		events_child_setup();
		if (session.opts->live)
			session.opts->live->child_setup();
		/* wait until the tracer has seized us */
		if (read(go[0], &c, 1) == 1)
			execv(session.opts->path, session.opts->argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	if (ptrace(PTRACE_SEIZE, pid, 0, SESSION_PTRACE_OPTS) < 0) {
		e = errno;
		kill(pid, SIGKILL);
		events_wait_tid(pid, NULL);
		pr_err("cannot trace %s: ptrace(SEIZE, pid %d): %s%s", session.opts->argv[0], pid,
		       strerror(e),
		       e == EPERM ? " (check /proc/sys/kernel/yama/ptrace_scope, or whether "
				    "heaptrace itself runs under a debugger)" : "");
		return -e;
	}
	if (session.opts->pin)
		cpu_pin(pid);
	p = lifecycle_new(pid);
	p->acct = session.acct;
	p->launched = true;
	session.launched_pid = pid;
	p->command = join_args(session.opts->argv);
	proc_thread_new(pid, p)->seen_first_stop = true;
	if (write(go[1], "x", 1) != 1) {
		pr_err("cannot start %s", session.opts->argv[0]);
		return -EIO;
	}
	close(go[1]);
	do
		n = read(err[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(err[0]);
	if (n == sizeof(e)) {
		events_wait_tid(pid, NULL);
		pr_err("cannot execute %s: %s", session.opts->argv[0], strerror(e));
		lifecycle_free(p);
		return -e;
	}
	return 0;
}
