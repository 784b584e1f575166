/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PYTSS_H
#define HEAPTRACE_PYTSS_H

/*
 * Where a thread keeps its own value of a pthread key, as an offset from its struct pthread,
 * learned from one thread whose value is known. glibc keeps the values of keys below
 * PYTSS_KEYS in the thread's own struct pthread, in an array of { seq, data } pairs
 * (specific_1stblock) whose address the same struct also holds (specific[0]); where that array
 * lies depends on glibc's version, and its debug info is seldom installed, so it is found by
 * what it holds. CPython keeps each thread's own PyThreadState in such a key (its runtime's
 * gilstate.autoTSSkey): the x86_64 entry stubs read it at the thread pointer (which is the
 * struct pthread there) to know their own state. Pure: unit tested on a synthetic struct.
 */
#include <stddef.h>
#include <stdint.h>

#define PYTSS_KEYS 32 /* glibc's PTHREAD_KEY_2NDLEVEL_SIZE: keys kept in struct pthread */
#define PYTSS_WINDOW 4096 /* bytes of a struct pthread searched */

/*
 * pt: len bytes read at pd, a thread's struct pthread (pthread_self()), whose value of key is
 * val (nonzero). Return the offset from pd of that value's word: the one word of pt that holds
 * val, has an odd word before it (the key's sequence number, odd while the key is in use) and
 * is the data word of key's pair in an array whose address some word of pt holds. -ENOENT if no
 * word is that, -EEXIST if more than one is, -EINVAL if key >= PYTSS_KEYS or val is 0.
 */
int pytss_slot(const uint8_t *pt, size_t len, uint64_t pd, unsigned key, uint64_t val);

#endif
