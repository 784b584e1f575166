// SPDX-License-Identifier: GPL-2.0-only
/*
 * The registry of traced processes and their threads: creation, lookup by thread id, what
 * /proc says of them. Their life beyond it (fork, exec, teardown) is trace/lifecycle.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "target/process.h"
#include "util/util.h"

struct proc *procs;
static struct thread *thread_hash[4096];

struct thread *proc_thread_find(pid_t tid)
{
	for (struct thread *t = thread_hash[tid % ARRAY_SIZE(thread_hash)]; t; t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

struct thread *proc_thread_new(pid_t tid, struct proc *p)
{
	struct thread *t = xcalloc(1, sizeof(*t));
	struct thread **head = &thread_hash[tid % ARRAY_SIZE(thread_hash)];

	t->tid = tid;
	t->p = p;
	t->hnext = *head;
	*head = t;
	if (p)
		p->nthreads++;
	return t;
}

void proc_thread_free(struct thread *t)
{
	struct thread **pp = &thread_hash[t->tid % ARRAY_SIZE(thread_hash)];

	while (*pp != t)
		pp = &(*pp)->hnext;
	*pp = t->hnext;
	if (t->p)
		t->p->nthreads--;
	for (unsigned i = 0; t->p && i < t->nframes; i++)
		if (t->frames[i].logged && !t->frames[i].over && t->p->retlog.inflight)
			t->p->retlog.inflight--; /* its entry will never come */
	proc_thread_release(t);
}

void proc_thread_release(struct thread *t)
{
	for (unsigned i = 0; i < t->cap; i++)
		free(t->frames[i].pcs);
	free(t->frames);
	free(t->late);
	free(t);
}

struct thread *proc_any_thread(struct proc *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(thread_hash); i++)
		for (struct thread *t = thread_hash[i]; t; t = t->hnext)
			if (t->p == p)
				return t;
	return NULL;
}

bool proc_in_syscall_event(const struct thread *t)
{
	switch (t->stop_event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_VFORK_DONE:
	case PTRACE_EVENT_EXEC:
		return true;
	default:
		return false;
	}
}

/* How fit t is to work through: 2 stopped in a plain stop, 1 at an event inside a system call,
 * 0 not at all. */
static int fitness(const struct thread *t)
{
	if (!t->stopped || t->gone || !t->seen_first_stop)
		return 0;
	return proc_in_syscall_event(t) ? 1 : 2;
}

struct thread *proc_stopped_thread(struct proc *p)
{
	struct thread *best = proc_thread_find(p->pid);

	if (best && (best->p != p || !fitness(best)))
		best = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(thread_hash) && (!best || fitness(best) < 2); i++)
		for (struct thread *t = thread_hash[i]; t; t = t->hnext)
			if (t->p == p && fitness(t) > (best ? fitness(best) : 0))
				best = t;
	return best;
}

static void count_running_cb(struct thread *t, void *ctx)
{
	if (!t->stopped)
		++*(unsigned *)ctx;
}

static void interrupt_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	if (!t->stopped && ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0 && errno == ESRCH)
		t->stopped = t->gone = true; /* gone: its exit is reported later */
}

void proc_interrupt(struct proc *p)
{
	proc_for_each_thread(p, interrupt_cb, NULL);
}

struct proc *proc_by_pid(pid_t pid)
{
	for (struct proc *p = procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

unsigned proc_running(struct proc *p)
{
	unsigned running = 0;

	proc_for_each_thread(p, count_running_cb, &running);
	return running;
}

void proc_for_each_thread(struct proc *p, void (*fn)(struct thread *t, void *ctx), void *ctx)
{
	for (size_t i = 0; i < ARRAY_SIZE(thread_hash); i++) {
		struct thread *t = thread_hash[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->p == p)
				fn(t, ctx);
		}
	}
}

char *proc_cmdline(pid_t pid)
{
	char name[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/cmdline", (int)pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return xstrdup("?");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return xstrdup("?");
	if (buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return xstrdup(buf);
}

int proc_task_stat(pid_t tid, char *state, unsigned long *flags)
{
	char name[64], buf[1024], *s;
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/stat", (int)tid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp session tty_nr tpgid flags ...": comm may hold ") " */
	s = strrchr(buf, ')');
	if (!s || sscanf(s + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return -EINVAL;
	return 0;
}

pid_t proc_mem_pid(struct proc *p)
{
	struct thread *t;

	if (!p->leader_gone || proc_thread_find(p->pid))
		return p->pid;
	t = proc_any_thread(p);
	return t ? t->tid : p->pid;
}

void proc_read_statm(struct proc *p)
{
	char name[64];
	unsigned long long v[3];
	long page = sysconf(_SC_PAGESIZE);
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/statm", (int)proc_mem_pid(p));
	f = fopen(name, "re");
	if (!f)
		return;
	if (fscanf(f, "%llu %llu %llu", &v[0], &v[1], &v[2]) == 3) {
		for (int i = 0; i < 3; i++)
			p->statm[i] = v[i] * page;
		p->has_statm = true;
	}
	fclose(f);
}

/* Read /proc/PID/exe into p->exe. */
void proc_read_exe(struct proc *p)
{
	char name[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/%d/exe", (int)proc_mem_pid(p));
	n = readlink(name, buf, sizeof(buf) - 1);
	free(p->exe);
	p->exe = NULL;
	if (n > 0) {
		buf[n] = '\0';
		p->exe = xstrdup(buf);
	}
}

struct proc *proc_new(pid_t pid)
{
	struct proc *p = xcalloc(1, sizeof(*p));

	p->pid = pid;
	p->interp = -1;
	p->counting = true;
	p->start_ns = now_ns();
	table_init(&p->table);
	p->next = procs;
	procs = p;
	return p;
}

void proc_unlink(struct proc *p)
{
	struct proc **pp = &procs;

	while (*pp != p)
		pp = &(*pp)->next;
	*pp = p->next;
}

void proc_release(struct proc *p)
{
	table_destroy(&p->table);
	free(p->command);
	free(p->freed);
	free(p);
}

/* The text after "key:" in /proc/TID/status, in val (size bytes). Return 0 or -errno. */
static int status_value(pid_t tid, const char *key, char *val, size_t size)
{
	char name[64], line[256];
	size_t klen = strlen(key);
	int ret = -ENOENT;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)tid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			snprintf(val, size, "%s", line + klen + 1);
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

long proc_status_field(pid_t tid, const char *key)
{
	char val[256];

	return status_value(tid, key, val, sizeof(val)) ? -1 : atol(val);
}

long proc_syscall_nr(pid_t tid)
{
	char path[64], text[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	/* "NR arg... sp pc" in a system call, "-1 sp pc" outside one, "running" */
	if (fgets(text, sizeof(text), f) && text[0] != 'r')
		nr = strtol(text, NULL, 10);
	fclose(f);
	return nr;
}

int proc_status_hex(pid_t tid, const char *key, uint64_t *val)
{
	char text[256];
	int ret = status_value(tid, key, text, sizeof(text));

	if (!ret)
		*val = strtoull(text, NULL, 16);
	return ret;
}
