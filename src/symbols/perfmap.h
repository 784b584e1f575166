/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PERFMAP_H
#define HEAPTRACE_PERFMAP_H

/*
 * Perf maps: the file /tmp/perf-PID.map in which a JIT compiler names the code it generates,
 * one line "START SIZE name" per function, START and SIZE in hex (perf(1) reads them so): V8's
 * --perf-basic-prof (node), the JVM's perf-map-agent, Python 3.12's -X perf, LuaJIT. The file
 * grows while the program runs, so it is read on from where the last read stopped whenever an
 * address is not named yet; a later line for the same addresses wins over an earlier one (the
 * code there moved, or was freed and other code put in its place).
 *
 * The name a return address is given the first time it is asked for is kept for it (a memo),
 * since the code there was that function's when the backtrace holding it was taken, whatever
 * comes there later; the memo is also what a --record log keeps of the map, which may be gone
 * when the log is read.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap;

/* Lines longer than this are skipped; names are cut to PERFMAP_MAX_NAME bytes. */
#define PERFMAP_MAX_LINE 8192
#define PERFMAP_MAX_NAME 1024
/* A file not there is looked for again at most this often (ns). */
#define PERFMAP_RETRY_NS 100000000ull

/* Where the file stands. */
enum perfmap_state {
	PERFMAP_UNSEEN, /* not looked for yet */
	PERFMAP_ABSENT, /* not there (yet) */
	PERFMAP_IGNORED, /* there but not trusted (said once) */
	PERFMAP_OPEN, /* read */
};

/*
 * The map at path of a process whose effective uid is uid, started at not_before (seconds since
 * the epoch, 0: not known); nothing is opened until the first perfmap_refresh. path NULL: a
 * table of names only, filled with perfmap_note (a recorded log's).
 */
struct perfmap *perfmap_new(const char *path, uid_t uid, int64_t not_before);
void perfmap_free(struct perfmap *pm);

enum perfmap_state perfmap_state(const struct perfmap *pm);

/*
 * Read what the file gained since the last read, opening it the first time (or again, at most
 * every PERFMAP_RETRY_NS, while it is not there). As perf does, the file is used only when it
 * is a regular file owned by the process's user or by root, and not writable by others;
 * otherwise it is ignored for good, with one line that says why. A file last written before
 * the process started is an earlier process's of the same pid: ignored too (said with -v). A
 * file that shrank was written anew: its lines are read again from its start. Return whether
 * lines were added.
 */
bool perfmap_refresh(struct perfmap *pm);

/* Add the lines in buf (len bytes, the file's next bytes; a line cut at the end waits for the
 * rest). Malformed lines are skipped. Return the number of entries added. */
size_t perfmap_feed(struct perfmap *pm, const char *buf, size_t len);

/* The name of the function holding code address at as the lines read so far say (the last
 * line that covers it), its start in *start; NULL if none does. */
const char *perfmap_find(const struct perfmap *pm, uint64_t at, uint64_t *start);

/*
 * The name of return address pc (its function's, looked up at pc - 1) and pc's offset in it:
 * what was found for pc before, else perfmap_find's answer, after a refresh when read is true
 * and the lines read so far have none; kept for pc from then on. NULL if none.
 */
const char *perfmap_name(struct perfmap *pm, uint64_t pc, bool read, uint64_t *offset);

/* The return addresses named so far, in the order they were first named: how many, and the
 * i-th (its pc and offset in *pc, *offset). */
size_t perfmap_named(const struct perfmap *pm);
const char *perfmap_named_at(const struct perfmap *pm, size_t i, uint64_t *pc, uint64_t *offset);

/* Name return address pc as name at offset (a recorded log's), unless it has a name. */
void perfmap_note(struct perfmap *pm, uint64_t pc, uint64_t offset, const char *name);

/* Parse one line (no newline) "START SIZE name": 0 with *start, *size and the name's start
 * (*name, *name_len: up to the line's end, a '\r' before it dropped), or -EINVAL. */
int perfmap_parse_line(const char *line, size_t len, uint64_t *start, uint64_t *size,
		       const char **name, size_t *name_len);

#endif
