/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_MAPS_H
#define HEAPTRACE_MAPS_H

/* /proc/PID/maps: mappings, and the modules (mapped ELF files) they make up. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MAP_R 1
#define MAP_W 2
#define MAP_X 4

struct mapping {
	uint64_t start, end, offset;
	unsigned prot; /* MAP_R | MAP_W | MAP_X */
	uint64_t inode;
	char path[256]; /* "" for anonymous, "[vdso]"... as in the file */
};

/* One mapped file, kept for symbolisation after the process is gone. */
struct module {
	char *path;
	uint64_t start, end; /* lowest and highest address of its mappings */
	uint64_t base; /* start of the mapping of file offset 0 */
	uint64_t bias; /* load bias: runtime address - ELF virtual address (set by the caller) */
	bool bias_known;
	bool scanned; /* its symbols were searched for hooks */
	bool exec; /* has an executable mapping */
	uint64_t exec_start, exec_end; /* lowest and highest address of its executable mappings */
};

struct modlist {
	struct module *v;
	size_t n, cap;
};

/* Parse one line of /proc/PID/maps. Return 0, or -EINVAL for a malformed line. */
int maps_parse_line(const char *line, struct mapping *m);

/* Read all mappings of pid into a new array (free it). Return the count or -errno. */
ssize_t maps_read(pid_t pid, struct mapping **out);

/*
 * Merge the file-backed mappings into ml: a module is identified by path and base; new ones
 * are appended, known ones have their extent updated. Return the number of modules added.
 */
size_t modlist_update(struct modlist *ml, const struct mapping *maps, size_t n);

/* The module whose extent holds addr, or NULL. Later (newer) modules win on overlap. */
const struct module *modlist_find(const struct modlist *ml, uint64_t addr);

/* dst (empty) becomes a deep copy of src. */
void modlist_copy(struct modlist *dst, const struct modlist *src);

void modlist_clear(struct modlist *ml);

#endif
