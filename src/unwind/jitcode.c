// SPDX-License-Identifier: GPL-2.0-only
/* Where a traced process's perf map is (jitcode.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/perfmap.h"
#include "target/process.h"
#include "unwind/jitcode.h"

#define JIT_START_MARGIN 10 /* s */

/* From /proc/PID/status: the effective uid and the pid in the innermost pid namespace. Return
 * false if it cannot be read (the process is gone). */
static bool read_status(pid_t pid, uid_t *uid, long *nspid)
{
	char path[64], line[512];
	bool have_uid = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	*nspid = pid;
	while (fgets(line, sizeof(line), f)) {
		unsigned long real, eff;
		char *last;

		if (sscanf(line, "Uid: %lu %lu", &real, &eff) == 2) {
			*uid = (uid_t)eff;
			have_uid = true;
		} else if (!strncmp(line, "NSpid:", 6)) {
			last = strrchr(line, '\t');
			*nspid = strtol(last ? last + 1 : line + 6, NULL, 10);
		}
	}
	fclose(f);
	return have_uid && *nspid > 0;
}

/* When pid started, in seconds since the epoch (the boot time's resolution); 0 if not known. */
static int64_t started(pid_t pid)
{
	char path[64], buf[1024], *s;
	unsigned long long ticks = 0, btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	s = strrchr(buf, ')'); /* after the command, which may hold spaces */
	/* field 22, starttime: the 20th after the command */
	if (!s || sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", &ticks) != 1 || hz <= 0)
		return 0;
	f = fopen("/proc/stat", "re");
	while (f && fgets(buf, sizeof(buf), f) && sscanf(buf, "btime %llu", &btime) != 1)
		;
	if (f)
		fclose(f);
	return btime ? (int64_t)(btime + ticks / (unsigned long long)hz) : 0;
}

/* Is pid in another mount namespace than heaptrace? */
static bool other_mounts(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return !stat(path, &a) && !stat("/proc/self/ns/mnt", &b) &&
	       (a.st_ino != b.st_ino || a.st_dev != b.st_dev);
}

struct perfmap *jit_map(struct proc *p)
{
	char path[96];
	uid_t uid = geteuid(); /* the process gone: perf's own rule, its user or root */
	long nspid = p->pid;
	int64_t start;

	if (p->jit)
		return p->jit;
	if (read_status(p->pid, &uid, &nspid) && (nspid != p->pid || other_mounts(p->pid)))
		snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%ld.map", (int)p->pid, nspid);
	else
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)p->pid);
	/* early by a margin: the boot time is in whole seconds, and steps of the clock since
	 * move it */
	start = started(p->pid);
	p->jit = perfmap_new(path, uid, start > JIT_START_MARGIN ? start - JIT_START_MARGIN : 0);
	return p->jit;
}

void jit_forget(struct proc *p)
{
	perfmap_free(p->jit);
	p->jit = NULL;
}
