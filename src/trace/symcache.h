/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SYMCACHE_H
#define HEAPTRACE_SYMCACHE_H

/*
 * A traced process's symbolizer (symbols.h), kept from one report to the next and read ahead.
 * libdw inflates a module's compressed debug sections the first time it is asked for a source
 * line in it: about 0.1 s of CPU for Debian's libc6-dbg alone, paid at every report (and every
 * refresh of --live) when each opened a symbolizer of its own. Once the program has made an
 * allocation, a thread of heaptrace's reads every module's symbols and debug information while
 * the program runs, on a symbolizer no other thread touches until the report takes it.
 *
 * What libdw read stays in heaptrace's memory (tracing python3 with libc6-dbg installed: 12
 * MiB more RSS mid-run), so only the first SYMCACHE_KEEP processes keep theirs; with -f, the
 * others' are made for a report and freed after it, as before.
 */
#define SYMCACHE_KEEP 2

struct proc;
struct symbolizer;

/* Start reading p's modules ahead, unless p has a symbolizer, or one is read ahead already
 * (for p or another process: one at a time), or SYMCACHE_KEEP processes keep theirs. */
void symcache_warm(struct proc *p);

/* p's symbolizer over its modules as they are now (waits for a reading ahead to end); p's,
 * valid until symcache_release or symcache_drop of p. */
struct symbolizer *symcache_get(struct proc *p);

/* Done with it for now: it stays only if p keeps one (SYMCACHE_KEEP). */
void symcache_release(struct proc *p);

/* Forget p's symbolizer (its modules went away: exec, or p is freed). A reading ahead still
 * running finishes on its own and frees what it made. */
void symcache_drop(struct proc *p);

#endif
