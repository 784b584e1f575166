/* SPDX-License-Identifier: GPL-2.0-only */
/* leaks: one function per file, as strace's tests/stack-fcall-*.c; see main.c. */
#ifndef LEAKS_H
#define LEAKS_H

#include <stddef.h>

#define TABLE_ROWS 10
#define TABLE_ROW_SIZE 100
#define INDEX_ROWS 4
#define INDEX_ROW_SIZE 300
#define SMALL_MADE 60
#define SMALL_FREED 10
#define SMALL_SIZE 16
#define BIG_SIZE 65536
#define CALLOC_CALLS 2
#define CALLOC_NMEMB 4
#define CALLOC_SIZE 250
#define CHURN_CALLS 100
#define CHURN_SIZE 64

void load_all(void);
void load_table(unsigned rows);
void load_index(unsigned rows);
void *alloc_row(size_t size);
void *leak_small(void);
void *leak_big(void);
void *leak_calloc(void);
void churn(unsigned n);

#endif
