/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PARAMS_H
#define HEAPTRACE_PARAMS_H

/*
 * A function's parameters as its debug information describes them: whether every argument of
 * a function named with --alloc, --realloc or --free is passed in a register, so that its
 * return may be caught by a trampoline that moves the stack pointer (calls.c, stubs.h) without
 * shifting the arguments it reads on the stack.
 */
#include <stdint.h>

/*
 * The argument words the function whose entry is at file address addr (no Thumb bit) in the
 * ELF file at path takes, in a program of word_size-byte words: one per scalar of at most a
 * word, two per scalar of two (on a 32-bit program starting at an even word, as AAPCS puts
 * them in register pairs). Its DWARF is read where its symbols are (symbols.h: sym_source),
 * else in the file, else in /usr/lib/debug/.build-id/. Return the count, -E2BIG if it may
 * take arguments on the stack whatever their count (it is variadic, takes or returns an
 * aggregate, or a floating-point value wider than 8 bytes), -ENOENT if no debug information
 * describes it, or -errno.
 */
int params_words(const char *path, uint64_t addr, unsigned word_size);

#endif
