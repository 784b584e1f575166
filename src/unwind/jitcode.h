/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_JITCODE_H
#define HEAPTRACE_JITCODE_H

/*
 * The code a traced process's JIT compiler generates, as its perf map (symbols/perfmap.h)
 * names it: where that map is, for the process's image. fallback.c unwinds through that code
 * by frame pointers; the symbolizer and --record's log name its frames from the map.
 */
struct proc;
struct perfmap;

/*
 * p's perf map: /tmp/perf-PID.map, PID being the process's pid in its own pid namespace (the
 * pid the JIT wrote into the name), read through /proc/PID/root when the process is in another
 * pid or mount namespace (a container), as perf does by entering its namespaces. Made at the
 * first call (nothing is opened before perfmap_refresh); never NULL.
 */
struct perfmap *jit_map(struct proc *p);

/* Forget p's map (its image was replaced: execve, or p is freed). */
void jit_forget(struct proc *p);

#endif
