/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_CALLTRACE_H
#define HEAPTRACE_CALLTRACE_H

/*
 * The individual calls, as memleak -t prints them: live (--trace-calls, fed by record.c with
 * the events it logs) and from a log (report --calls, fed by the replay). One line per call
 * that changed the heap, in the order heaptrace accounted them (with entry stubs: the order
 * the rings were drained in, which is each thread's own order):
 *
 *   text  [   12.345678 ms] 4242/4243 malloc(100) = 0x55d0c1e2a2a0
 *         [   12.400001 ms] 4242/4243 free(0x55d0c1e2a2a0)
 *         [   13.000000 ms] 4242/4242 realloc(0x55d0c1e2a2a0, 200) = 0x55d0c1e2b000
 *   json  {"call":"malloc","elapsed_ns":12345678,"pid":4242,"tid":4243,"size":100,
 *          "address":null,"result":"0x55d0c1e2a2a0"}
 *
 * An allocation's argument is the block's size (nmemb*size for calloc); its time the call's
 * entry. A free is "free" (operator delete and the other freeing functions too) at the time
 * heaptrace saw it. A realloc is one call: address its old block (null if heaptrace never saw
 * it allocated), result the new one, null when it failed (size null then: the log keeps no
 * size of a failed call) or when realloc(p, 0) freed p.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "eventlog/record.h"

struct calltrace {
	FILE *f;
	bool json;
	struct calltrace_held {
		int pid;
		uint32_t tid;
		uint64_t old; /* a realloc's old block, taken at its entry */
	} *held;
	size_t nheld, held_cap;
	/* a realloc that released its old block; its new block, if any, comes next */
	bool pending;
	struct calltrace_pend {
		int pid;
		uint32_t tid;
		uint64_t ns, old;
		bool known;
	} pend;
};

void calltrace_init(struct calltrace *ct, FILE *f, bool json);
void calltrace_destroy(struct calltrace *ct);

/* The events, as record.h names them; ns: since the process started; hook: the allocation
 * function (hooks.h), -1 if unknown. */
void calltrace_alloc(struct calltrace *ct, int pid, uint32_t tid, uint64_t ns, int hook,
		     uint64_t size, uint64_t ptr);
void calltrace_free(struct calltrace *ct, int pid, uint32_t tid, uint64_t ns, uint64_t ptr);
void calltrace_take(struct calltrace *ct, int pid, uint32_t tid, uint64_t ptr);
void calltrace_put_back(struct calltrace *ct, int pid, uint32_t tid, uint64_t ns);
void calltrace_release(struct calltrace *ct, int pid, uint32_t tid, uint64_t ns, bool known);

/* Print a realloc still waiting for its new block (there is none: realloc(p, 0)). */
void calltrace_flush(struct calltrace *ct);

/* The functions above as --trace-calls' callbacks (record_trace_calls), ctx a calltrace. */
extern const struct record_calls calltrace_record_calls;

#endif
