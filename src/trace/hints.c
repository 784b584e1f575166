// SPDX-License-Identifier: GPL-2.0-only
/* Hints, once per run (hints.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/labels.h"
#include "output/report.h"
#include "symbols/perfmap.h"
#include "trace/hints.h"
#include "target/process.h"
#include "unwind/jitcode.h"

/* The frame hints look at the backtraces that allocated the most, this many. */
#define HINTS_BACKTRACES 200

static struct {
	unsigned untraced; /* children not traced */
	int killed_pid, killed_sig;
	unsigned killed; /* processes killed by a signal */
	int python_pid;
	int node_pid; /* a node process without a perf map */
	int unnamed_pid; /* a process whose frames mostly have no name */
	unsigned unnamed, frames;
	int wrapped_pid; /* a process with backtraces cut inside allocator wrappers */
	unsigned wrapped, depth;
} h;

static void hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void hint(const char *fmt, ...)
{
	va_list ap;

	fputs("heaptrace: hint: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void hints_untraced_child(void)
{
	h.untraced++;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Is p's image a Python interpreter (the executable, or a libpython it maps)? */
static bool is_python(const struct proc *p)
{
	if (p->exe && !strncmp(base(p->exe), "python", 6))
		return true;
	for (size_t i = 0; i < p->mods.n; i++)
		if (!strncmp(base(p->mods.v[i].path), "libpython", 9))
			return true;
	return false;
}

/*
 * Does p allocate its small objects with pymalloc? Unless PYTHONMALLOC says malloc (or
 * malloc_debug). Its environment: /proc/PID/environ while it runs, else heaptrace's own, which
 * a launched program and its children inherit.
 */
static bool pymalloc_on(const struct proc *p)
{
	char path[64], buf[65536];
	const char *v = NULL;
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", p->pid);
	fd = p->exited ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n > 0) {
		buf[n] = '\0';
		for (char *s = buf; s < buf + n; s += strlen(s) + 1)
			if (!strncmp(s, "PYTHONMALLOC=", 13))
				v = s + 13;
	} else {
		v = getenv("PYTHONMALLOC");
	}
	return !v || strncmp(v, "malloc", 6);
}

void hints_killed(const struct proc *p, int sig)
{
	if (!h.killed++) {
		h.killed_pid = p->pid;
		h.killed_sig = sig;
	}
}

void hints_python(const struct proc *p)
{
	/* where CPython's entry points are traced, its blocks are in the report already */
	if (!h.python_pid && is_python(p) && pymalloc_on(p) &&
	    !p->hook_addr[HOOK_PY_OBJECT_MALLOC])
		h.python_pid = p->pid;
}

/* Is p node (the executable node or nodejs, or a libnode it maps)? */
static bool is_node(const struct proc *p)
{
	if (p->exe && (!strcmp(base(p->exe), "node") || !strcmp(base(p->exe), "nodejs")))
		return true;
	for (size_t i = 0; i < p->mods.n; i++)
		if (!strncmp(base(p->mods.v[i].path), "libnode.so", 10))
			return true;
	return false;
}

void hints_node(struct proc *p)
{
	struct perfmap *pm;

	if (h.node_pid || !is_node(p))
		return;
	pm = jit_map(p);
	if (perfmap_state(pm) == PERFMAP_UNSEEN)
		perfmap_refresh(pm); /* looked for now: no backtrace went through JIT code */
	if (perfmap_state(pm) == PERFMAP_ABSENT)
		h.node_pid = p->pid;
}

void hints_frames(const struct proc *p, const struct report_info *ri,
		  const struct report_opts *ro)
{
	struct report_frame_stats st;

	if (h.unnamed_pid && h.wrapped_pid)
		return;
	report_frame_stats(ri, &p->table, ro->depth_limit, HINTS_BACKTRACES, &st);
	if (!h.unnamed_pid && st.frames && 2 * st.unnamed > st.frames) {
		h.unnamed_pid = p->pid;
		h.unnamed = st.unnamed;
		h.frames = st.frames;
	}
	if (!h.wrapped_pid && st.in_wrappers) {
		h.wrapped_pid = p->pid;
		h.wrapped = st.in_wrappers;
		h.depth = ro->depth_limit;
	}
}

void hints_launch(const char *path)
{
	struct stat st;

	if (stat(path, &st) || !(st.st_mode & (S_ISUID | S_ISGID)))
		return;
	if ((st.st_mode & S_ISUID && st.st_uid != geteuid() && geteuid()) ||
	    (st.st_mode & S_ISGID && st.st_gid != getegid() && geteuid()))
		hint("%s is set-%s-ID; traced by heaptrace, which is not root, it runs without "
		     "those privileges (the kernel drops the bit under ptrace): run heaptrace as "
		     "root to trace it as it really runs", path, st.st_mode & S_ISUID ? "user" :
											  "group");
}

void hints_print(void)
{
	if (h.untraced)
		hint("%u child process%s ran untraced: -f (--follow-fork) traces them too",
		     h.untraced, h.untraced == 1 ? "" : "es");
	if (h.python_pid)
		hint("process %d is a Python program whose own allocator (pymalloc) heaptrace "
		     "could not trace (-v says why): its small objects are not in the report; run "
		     "it with PYTHONMALLOC=malloc to see them", h.python_pid);
	if (h.node_pid)
		hint("process %d is node, run without a perf map: its JavaScript frames have no "
		     "names (run node --perf-basic-prof --interpreted-frames-native-stack; they lie "
		     "deep: --depth=32); V8's own heap is not malloc's, only Buffers and native "
		     "memory are traced", h.node_pid);
	if (h.unnamed_pid)
		hint("%u of the %u frames of process %d's main backtraces have no name (stripped "
		     "binaries): give their debug information with --symbols=FILE or "
		     "--debug-dir=DIR, install the distribution's debug packages (-dbgsym, -dbg or "
		     "-debuginfo), or record with --record=LOG and name them with heaptrace report "
		     "--debuginfod LOG", h.unnamed, h.frames, h.unnamed_pid);
	if (h.wrapped_pid)
		hint("%u backtrace%s of process %d end inside allocator wrappers, cut at "
		     "--depth=%u before the code that called them: a larger --depth reaches it",
		     h.wrapped, h.wrapped == 1 ? "" : "s", h.wrapped_pid, h.depth);
	if (h.killed) {
		char name[32];
#ifdef __GLIBC__
		const char *abbrev = sigabbrev_np(h.killed_sig);
#else
		const char *abbrev = NULL;
#endif

		if (abbrev)
			snprintf(name, sizeof(name), "SIG%s", abbrev);
		else
			snprintf(name, sizeof(name), "signal %d", h.killed_sig);
		hint("process %d was killed by %s (%s)%s", h.killed_pid, name,
		     strsignal(h.killed_sig), h.killed > 1 ? "; other processes were too" : "");
	}
}
