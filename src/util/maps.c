// SPDX-License-Identifier: GPL-2.0-only
/* /proc/PID/maps parsing and the module list. No ptrace here. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/maps.h"
#include "util/util.h"

int maps_parse_line(const char *line, struct mapping *m)
{
	char perms[8];
	unsigned long long start, end, off, inode;
	unsigned dmaj, dmin;
	int pos = 0;
	const char *p;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &dmaj,
		   &dmin, &inode, &pos) < 7 || !pos || end < start)
		return -EINVAL;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->inode = inode;
	m->prot = (perms[0] == 'r' ? MAP_R : 0) | (perms[1] == 'w' ? MAP_W : 0) |
		  (perms[2] == 'x' ? MAP_X : 0);
	p = line + pos;
	while (*p == ' ' || *p == '\t')
		p++;
	len = strcspn(p, "\n");
	if (len >= sizeof(m->path))
		len = sizeof(m->path) - 1;
	memcpy(m->path, p, len);
	m->path[len] = '\0';
	return 0;
}

ssize_t maps_read(pid_t pid, struct mapping **out)
{
	char name[64], line[512];
	struct mapping *v = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(v, cap * sizeof(*v));
		}
		if (maps_parse_line(line, &v[n]) == 0)
			n++;
		/* a path longer than the line buffer leaves a tail: skip it */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	fclose(f);
	*out = v;
	return n;
}

/* A module's executable extent takes in mapping m of its file if m is executable. */
static void exec_extend(struct module *mod, const struct mapping *m)
{
	if (!(m->prot & MAP_X))
		return;
	if (!mod->exec || m->start < mod->exec_start)
		mod->exec_start = m->start;
	if (!mod->exec || m->end > mod->exec_end)
		mod->exec_end = m->end;
	mod->exec = true;
}

size_t modlist_update(struct modlist *ml, const struct mapping *maps, size_t n)
{
	size_t added = 0;

	for (size_t i = 0; i < n; i++) {
		const struct mapping *m = &maps[i];
		struct module *mod = NULL;
		uint64_t base;

		if (m->path[0] != '/' || m->offset != 0)
			continue; /* modules are found by their offset-0 mapping */
		base = m->start;
		for (size_t j = 0; j < ml->n; j++)
			if (ml->v[j].base == base && !strcmp(ml->v[j].path, m->path))
				mod = &ml->v[j];
		if (!mod) {
			if (ml->n == ml->cap) {
				ml->cap = ml->cap ? ml->cap * 2 : 16;
				ml->v = xrealloc(ml->v, ml->cap * sizeof(*ml->v));
			}
			mod = &ml->v[ml->n++];
			memset(mod, 0, sizeof(*mod));
			mod->path = xstrdup(m->path);
			mod->base = base;
			added++;
		}
		mod->start = m->start;
		mod->end = m->end;
		/* the following mappings of the same file (and bss right after) belong to it */
		for (size_t k = i + 1; k < n; k++) {
			if (!strcmp(maps[k].path, m->path)) {
				if (maps[k].offset == 0)
					break;
				mod->end = maps[k].end;
				exec_extend(mod, &maps[k]);
			} else if (maps[k].path[0]) {
				break;
			}
		}
		exec_extend(mod, m);
	}
	return added;
}

const struct module *modlist_find(const struct modlist *ml, uint64_t addr)
{
	for (size_t i = ml->n; i-- > 0;)
		if (addr >= ml->v[i].start && addr < ml->v[i].end)
			return &ml->v[i];
	return NULL;
}

void modlist_clear(struct modlist *ml)
{
	for (size_t i = 0; i < ml->n; i++)
		free(ml->v[i].path);
	free(ml->v);
	memset(ml, 0, sizeof(*ml));
}

void modlist_copy(struct modlist *dst, const struct modlist *src)
{
	dst->n = dst->cap = src->n;
	dst->v = xcalloc(src->n ? src->n : 1, sizeof(*dst->v));
	for (size_t i = 0; i < src->n; i++) {
		dst->v[i] = src->v[i];
		dst->v[i].path = xstrdup(src->v[i].path);
	}
}
