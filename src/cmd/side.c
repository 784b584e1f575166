// SPDX-License-Identifier: GPL-2.0-only
/* One side of a report or a diff (side.h): the replayed log and the files of its modules. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PR_DOMAIN "offline"
#include "cmd/side.h"
#include "symbols/dbgserver.h"
#include "unwind/frames.h"
#include "util/log.h"
#include "util/util.h"

/* The directories searched for debug files, colon-separated: the user's, the sysroot's, the
 * system's. */
static char *debug_dirs(const struct offline_opts *o)
{
	char *s = NULL;

	if (asprintf(&s, "%s%s%s%s/usr/lib/debug", o->debuginfo_path ? o->debuginfo_path : "",
		     o->debuginfo_path ? ":" : "", o->sysroot ? o->sysroot : "",
		     o->sysroot ? "/usr/lib/debug:" : "") < 0)
		return xstrdup("/usr/lib/debug");
	return s;
}

static char *join(const char *a, const char *b, const char *c, const char *d)
{
	char *s = NULL;

	if (asprintf(&s, "%s%s%s%s", a, b, c, d) < 0)
		return NULL;
	return s;
}

/* Is the file at path the one recorded (the same build-id; without one, any file)? */
static bool same_file(const char *path, const uint8_t *id, size_t idlen)
{
	uint8_t got[64];
	int len;

	if (access(path, R_OK))
		return false;
	len = sym_build_id(path, got, sizeof(got));
	return !idlen || (len == (int)idlen && !memcmp(got, id, idlen));
}

/* The recorded file of module i on this machine, or NULL: the sysroot's copy, a debug file
 * by build-id, or the same path here; a recorded build-id must match. */
static char *find_local(const struct offline_opts *o, const struct replay *rp, size_t i)
{
	const char *path = rp->mods.v[i].path;
	const uint8_t *id = rp->ids[i];
	size_t idlen = rp->idlen[i];
	char *c, *dirs, *d, *save;

	if (o->sysroot && (c = join(o->sysroot, path, "", ""))) {
		if (same_file(c, id, idlen))
			return c;
		free(c);
	}
	if (idlen >= 2) {
		char hex[129];

		for (size_t k = 0; k < idlen; k++)
			sprintf(hex + 2 * k, "%02x", id[k]);
		dirs = debug_dirs(o);
		for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			c = NULL;
			if (asprintf(&c, "%s/.build-id/%.2s/%s.debug", d, hex, hex + 2) < 0)
				continue;
			if (same_file(c, id, idlen)) {
				free(dirs);
				return c;
			}
			free(c);
		}
		free(dirs);
	}
	return same_file(path, id, idlen) ? xstrdup(path) : NULL;
}

/* find_local's file, or with --debuginfod, when that has no DWARF, the servers' debug file. */
char *side_find_file(const struct offline_opts *o, const struct replay *rp, size_t i)
{
	char *local = find_local(o, rp, i), *remote;

	if (!dbgserver_enabled() || rp->idlen[i] < 2 || (local && dbgserver_has_dwarf(local)))
		return local;
	remote = dbgserver_find(rp->ids[i], rp->idlen[i]);
	if (!remote)
		return local;
	free(local);
	return remote;
}

static void resolve_frame(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	struct offline_resolve *res = ctx;
	const struct module *m;

	if (frames_is_python(pc)) { /* the log's Y records name it */
		const struct replay *rp = res->rp;

		*out = (struct sym_frame){ .function = "[python]", .line = -1 };
		if ((uint32_t)pc < rp->npy) {
			out->function = rp->py[(uint32_t)pc].function;
			out->file = rp->py[(uint32_t)pc].file;
			out->line = rp->py[(uint32_t)pc].line;
		}
		return;
	}
	if (res->rp->machine == EM_ARM)
		pc &= ~(uint64_t)1; /* the Thumb bit */
	sym_resolve(res->sym, pc, index > 0, out);
	if (!out->module && (m = modlist_find(&res->rp->mods, pc))) {
		out->module = m->path;
		out->module_offset = pc - m->base;
	}
}

void side_resolve_named(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	struct offline_resolve *res = ctx;
	const struct replay *rp = res->rp;

	resolve_frame(ctx, pc, index, out);
	for (unsigned i = 0; !index && i < rp->nhookpcs; i++) {
		/* a custom hook of the run is no hook here: its symbol names it */
		if (rp->hookpcs[i].pc == pc && hook_table[rp->hookpcs[i].hook].name) {
			int h = rp->hookpcs[i].hook;
			char sym[64];
			const char *cxx = sym_demangled(res->sym,
				hook_symbol(h, rp->machine == EM_ARM ? 4 : 8, sym, sizeof(sym)));

			out->function = cxx ? cxx : hook_table[h].name;
			out->offset = 0;
		}
	}
}

/* libdwfl's search path for separate debug files: next to the file, then debug_dirs(). */
static char *debug_path(const struct offline_opts *o)
{
	char *dirs = debug_dirs(o), *s = join(":.debug:", dirs, "", "");

	free(dirs);
	return s;
}


/* The process of rp that o->pid names, or the first when o->pid is 0 and one is all the
 * log has or all the command wants; NULL (said) if there is none or it has to be chosen. */
static struct replay *pick_proc(const struct offline_opts *o, struct replay *rp, bool one)
{
	char pids[160];
	size_t len = 0;

	for (size_t i = 0; i < rp->nprocs; i++)
		if (o->pid && rp->procs[i]->pid == o->pid)
			return rp->procs[i];
	if (!o->pid && (rp->nprocs == 1 || !one))
		return rp;
	for (size_t i = 0; i < rp->nprocs && len < sizeof(pids) - 16; i++)
		len += snprintf(pids + len, sizeof(pids) - len, "%s%d", i ? " " : "",
				rp->procs[i]->pid);
	if (len >= sizeof(pids) - 16)
		snprintf(pids + len, sizeof(pids) - len, " ...");
	if (o->pid)
		pr_err("%s: no process %d in the log (its processes: %s)", o->path, o->pid, pids);
	else
		pr_err("%s: the log has %zu processes (%s): choose one with --pid=PID", o->path,
		       rp->nprocs, pids);
	return NULL;
}

int side_open(const struct offline_opts *o, struct side *sd, bool one)
{
	struct replay *rp, *p;
	bool calls_now = o->calls && o->at == AT_END;

	memset(sd, 0, sizeof(*sd));
	sd->leaked = o->report.only_leaked && o->at != AT_END;
	lifetime_init(&sd->lt);
	calltrace_init(&sd->ct, o->out, o->report.format == FMT_JSON);
	rp = replay_file(o, AT_END, 0, 0, NULL, sd->leaked ? &sd->lt : NULL,
			 calls_now ? &sd->ct : NULL);
	if (!rp) {
		lifetime_destroy(&sd->lt);
		calltrace_destroy(&sd->ct);
		return -EINVAL;
	}
	p = pick_proc(o, rp, one);
	if (!p) {
		replay_free(rp);
		lifetime_destroy(&sd->lt);
		calltrace_destroy(&sd->ct);
		return -EINVAL;
	}
	if (o->at != AT_END) {
		/* the whole log was read and checked: now up to the moment asked for */
		uint64_t peak = p->t.sum.peak_live_bytes;
		int pid = p->pid;
		struct lifetime end;

		lifetime_init(&end);
		if (sd->leaked) { /* the ids live at the end, for the same ids at the moment */
			lifetime_end_to(&sd->lt, &end);
			lifetime_destroy(&sd->lt);
			sd->lt = end;
		}
		replay_free(rp);
		if (o->at == AT_PEAK && !peak)
			rp = replay_file(o, AT_END, 0, 0, NULL, sd->leaked ? &sd->lt : NULL,
					 o->calls ? &sd->ct : NULL);
		else
			rp = replay_file(o, o->at, o->at_ms * 1000000, peak, NULL,
					 sd->leaked ? &sd->lt : NULL, o->calls ? &sd->ct : NULL);
		if (!rp) {
			lifetime_destroy(&sd->lt);
			calltrace_destroy(&sd->ct);
			return -EINVAL;
		}
		/* the same process, the first of its pid, now at the moment */
		p = NULL;
		for (size_t i = 0; i < rp->nprocs && !p; i++)
			if (rp->procs[i]->pid == pid)
				p = rp->procs[i];
		if (!p) {
			pr_err("%s: process %d did not exist yet at that moment", o->path, pid);
			replay_free(rp);
			lifetime_destroy(&sd->lt);
			calltrace_destroy(&sd->ct);
			return -EINVAL;
		}
	}
	sd->rp = rp;
	sd->p = p;
	sd->files = xcalloc(p->mods.n ? p->mods.n : 1, sizeof(*sd->files));
	for (size_t i = 0; i < p->mods.n; i++)
		sd->files[i] = side_find_file(o, p, i);
	sd->dpath = debug_path(o);
	sd->res.rp = p;
	sd->res.sym = sym_open_files(&p->mods, sd->files, sd->dpath);
	sym_set_jit(sd->res.sym, p->jit);
	return 0;
}

void side_close(struct side *sd)
{
	if (!sd->rp)
		return;
	sym_close(sd->res.sym);
	for (size_t i = 0; i < sd->p->mods.n; i++)
		free(sd->files[i]);
	free(sd->files);
	free(sd->dpath);
	replay_free(sd->rp);
	lifetime_destroy(&sd->lt);
	calltrace_destroy(&sd->ct);
	sd->rp = NULL;
}
