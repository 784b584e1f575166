// SPDX-License-Identifier: GPL-2.0-only
/* Debug files from debuginfod servers, with a stall time-out (dbgserver.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_DEBUGINFOD
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#endif

#define PR_DOMAIN "debuginfod"
#include "symbols/dbgserver.h"
#include "util/log.h"
#include "util/util.h"

static char *urls; /* the servers, when enabled */
static int load_client(void);
static uint64_t stall_ns = DBGSERVER_STALL_SECS * 1000000000ull;
static bool silent; /* a server went silent: ask no more */

int dbgserver_setup(bool wanted)
{
	const char *env = getenv("DEBUGINFOD_URLS");

	const char *secs = getenv("DEBUGINFOD_TIMEOUT");

	if (wanted && env && *env)
		urls = xstrdup(env);
	if (secs && atoi(secs) > 0)
		stall_ns = (uint64_t)atoi(secs) * 1000000000ull;
	unsetenv("DEBUGINFOD_URLS");
	if (!wanted)
		return 0;
	if (!urls)
		return -ENOENT;
	return load_client();
}

bool dbgserver_enabled(void)
{
	return urls && !silent;
}

bool dbgserver_has_dwarf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && !elf_getshdrstrndx(e, &shstrndx)) {
		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
			    (name = elf_strptr(e, shstrndx, sh.sh_name)))
				found = !strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info");
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

#ifdef HAVE_DEBUGINFOD
/*
 * libdebuginfod is opened only for --debuginfod: linked in, it and the libcurl it needs (about
 * 30 more shared objects, gnutls and Kerberos among them) were loaded and relocated at every
 * start of heaptrace, most of the launch cost of tracing /bin/true.
 */
static struct {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_get_user_data) *get_user_data;
	__typeof__(debuginfod_set_user_data) *set_user_data;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
} client;

static int load_client(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -ENOSYS;
	client.begin = dlsym(h, "debuginfod_begin");
	client.end = dlsym(h, "debuginfod_end");
	client.get_user_data = dlsym(h, "debuginfod_get_user_data");
	client.set_user_data = dlsym(h, "debuginfod_set_user_data");
	client.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	client.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	if (client.begin && client.end && client.get_user_data && client.set_user_data &&
	    client.set_progressfn && client.find_debuginfo)
		return 0;
	dlclose(h);
	return -ENOSYS;
}

struct progress {
	long last; /* bytes received at the last change */
	uint64_t since; /* when it changed */
};

/*
 * Called about once a second while a query runs: nonzero gives it up. Until a server sends a
 * file, a counts the calls and b is 0; then a counts the bytes received of b.
 */
static int progress(debuginfod_client *c, long a, long b)
{
	struct progress *pg = client.get_user_data(c);
	uint64_t now = now_ns();

	if (b > 0 && a != pg->last) {
		pg->last = a;
		pg->since = now;
	}
	return now - pg->since > stall_ns;
}

char *dbgserver_find(const uint8_t *id, size_t idlen)
{
	struct progress pg = { -1, now_ns() };
	debuginfod_client *c;
	char *path = NULL;
	int fd;

	if (!urls || silent || !idlen)
		return NULL;
	c = client.begin();
	if (!c)
		return NULL;
	client.set_user_data(c, &pg);
	client.set_progressfn(c, progress);
	setenv("DEBUGINFOD_URLS", urls, 1); /* read by the query, for this query only */
	fd = client.find_debuginfo(c, id, (int)idlen, &path);
	unsetenv("DEBUGINFOD_URLS");
	client.end(c);
	if (fd >= 0) {
		close(fd);
		return path;
	}
	free(path);
	if (now_ns() - pg.since > stall_ns) {
		pr_warn("no debuginfod server sent a file for %llu s: not asked again",
			(unsigned long long)(stall_ns / 1000000000ull));
		silent = true;
	}
	return NULL;
}
#else
static int load_client(void)
{
	return -ENOSYS;
}

char *dbgserver_find(const uint8_t *id, size_t idlen)
{
	(void)id;
	(void)idlen;
	return NULL;
}
#endif
