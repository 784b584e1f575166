/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_HEAPSNAP_H
#define HEAPTRACE_HEAPSNAP_H

/*
 * The pre-attach inventory's snapshot (ptrace side): prepare before the threads are stopped
 * (size and fault in the buffer), take while all are stopped (copy; stop time kept), analyse
 * after they run again (the pure reader of inventory.h on the copy).
 */
#include <sys/types.h>

#include "inventory/inventory.h"

struct heapsnap;
struct proc;

struct heapsnap *heapsnap_prepare(pid_t pid);
/* Every thread of p must be in a ptrace-stop. A read that fails leaves a gap in the copy. */
void heapsnap_take(struct heapsnap *s, struct proc *p);
/* The inventory of the copy (never NULL; its problems say what could not be read). p's modules
 * and hooks name the allocator. */
struct inventory *heapsnap_analyse(struct heapsnap *s, struct proc *p);
void heapsnap_free(struct heapsnap *s);

#endif
