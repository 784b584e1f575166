/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PROCINFO_H
#define HEAPTRACE_PROCINFO_H

/*
 * Where libunwind finds the unwind table of an address: its find_proc_info accessor, with the
 * tables of every module of a process kept from one unwind to the next (libunwind-ptrace keeps
 * one module's, see procinfo.c).
 */
#include <libunwind.h>
#include <sys/types.h>

struct procinfo;

struct procinfo *procinfo_new(pid_t pid);
void procinfo_free(struct procinfo *pi);
/* The mappings changed: forget the modules (read again at the next look-up). */
void procinfo_flush(struct procinfo *pi);

/*
 * libunwind's find_proc_info accessor (unw_accessors_t) for pi's process (NULL: libunwind's
 * own look-up): arg is the _UPT context given to unw_init_remote, used for addresses in no
 * mapped file. Return 0 or -UNW_ENOINFO (or another -UNW_ code from libunwind).
 */
int procinfo_find(struct procinfo *pi, unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *out,
		  int need_info, void *arg);

#endif
