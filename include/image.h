/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_IMAGE_H
#define HEAPTRACE_IMAGE_H

/* Modules, hooked functions and the scratch page of a process image. */
#include <stdbool.h>
#include <stdint.h>

#include "process.h"

/* Read the mappings again (libraries were loaded or unloaded). */
void image_scan(struct proc *p);

/* Place the entry breakpoints once a module defines malloc. Return 0, 1 if none does yet,
 * or -errno after printing why. */
int image_arm_hooks(struct proc *p, pid_t tid);

/*
 * Map the scratch page and place the breakpoints of a fresh image. Thread t is stopped at a
 * clean point: the first instruction (near: its address) or an attach stop (attached).
 * Return 0, -EXDEV for a program of another architecture (to be left untraced), or -errno
 * after printing why.
 */
int image_setup(struct proc *p, struct thread *t, uint64_t near, bool attached);

#endif
