// SPDX-License-Identifier: GPL-2.0-only
/* One line per call, live or from a log (calltrace.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/calltrace.h"
#include "heap/hooks.h"
#include "output/report.h"
#include "util/util.h"

void calltrace_init(struct calltrace *ct, FILE *f, bool json)
{
	memset(ct, 0, sizeof(*ct));
	ct->f = f;
	ct->json = json;
}

void calltrace_destroy(struct calltrace *ct)
{
	free(ct->held);
	ct->held = NULL;
	ct->nheld = ct->held_cap = 0;
}

enum { ADDR_NONE, ADDR_NULL, ADDR_UNKNOWN, ADDR_KNOWN };

struct call {
	const char *fn;
	int addr_kind; /* realloc's old block: ADDR_NULL for realloc(NULL, n) */
	uint64_t addr;
	bool has_size, returns, has_result; /* returns: it has a result (free has none) */
	uint64_t size, result;
};

static void put_call(struct calltrace *ct, int pid, uint32_t tid, uint64_t ns,
		     const struct call *c)
{
	static const char *const addr_text[] = { "", "NULL", "?" };
	FILE *f = ct->f;

	if (ct->json) {
		fputs("{\"call\":", f);
		report_json_str(f, c->fn ? c->fn : "?");
		fprintf(f, ",\"elapsed_ns\":%" PRIu64 ",\"pid\":%d,\"tid\":%" PRIu32, ns, pid, tid);
		if (c->has_size)
			fprintf(f, ",\"size\":%" PRIu64, c->size);
		else
			fputs(",\"size\":null", f);
		if (c->addr_kind == ADDR_KNOWN)
			fprintf(f, ",\"address\":\"0x%" PRIx64 "\"", c->addr);
		else
			fputs(",\"address\":null", f);
		if (c->has_result)
			fprintf(f, ",\"result\":\"0x%" PRIx64 "\"}\n", c->result);
		else
			fputs(",\"result\":null}\n", f);
		return;
	}
	fprintf(f, "[%12.6f ms] %d/%" PRIu32 " %s(", ns / 1e6, pid, tid, c->fn ? c->fn : "?");
	if (c->addr_kind == ADDR_KNOWN)
		fprintf(f, "0x%" PRIx64, c->addr);
	else
		fputs(addr_text[c->addr_kind], f);
	if (c->addr_kind != ADDR_NONE && c->returns)
		fputs(", ", f);
	if (c->has_size)
		fprintf(f, "%" PRIu64, c->size);
	else if (c->returns)
		fputc('?', f);
	fputc(')', f);
	if (c->has_result)
		fprintf(f, " = 0x%" PRIx64, c->result);
	else if (c->returns)
		fputs(" = NULL", f);
	fputc('\n', f);
}

void calltrace_flush(struct calltrace *ct)
{
	struct calltrace_pend *p = &ct->pend;
	struct call c = { .fn = "realloc", .addr_kind = p->known ? ADDR_KNOWN : ADDR_UNKNOWN,
			  .addr = p->old, .has_size = true, .returns = true };

	if (!ct->pending)
		return;
	ct->pending = false;
	put_call(ct, p->pid, p->tid, p->ns, &c);
}

static struct calltrace_held *held_of(struct calltrace *ct, int pid, uint32_t tid)
{
	for (size_t i = 0; i < ct->nheld; i++)
		if (ct->held[i].pid == pid && ct->held[i].tid == tid)
			return &ct->held[i];
	return NULL;
}

/* Take the old block thread tid holds; 0 if none. */
static uint64_t take_held(struct calltrace *ct, int pid, uint32_t tid)
{
	struct calltrace_held *h = held_of(ct, pid, tid);
	uint64_t old;

	if (!h)
		return 0;
	old = h->old;
	*h = ct->held[--ct->nheld];
	return old;
}

void calltrace_alloc(struct calltrace *ct, int pid, uint32_t tid, uint64_t ns, int hook,
		     uint64_t size, uint64_t ptr)
{
	struct calltrace_pend *p = &ct->pend;
	bool realloc_kind = hook >= 0 && (hook_table[hook].kind == HK_REALLOC ||
					  hook_table[hook].kind == HK_RESIZE);
	struct call c = { .fn = hook >= 0 ? hook_table[hook].name : NULL, .has_size = true, .size = size, .returns = true,
			  .has_result = true, .result = ptr };

	if (ct->pending && p->pid == pid && p->tid == tid && realloc_kind && p->ns == ns) {
		/* the realloc that released p->old returned this block (both have its time) */
		ct->pending = false;
		c.addr_kind = p->known ? ADDR_KNOWN : ADDR_UNKNOWN;
		c.addr = p->old;
	} else {
		calltrace_flush(ct);
		c.addr_kind = realloc_kind ? ADDR_NULL : ADDR_NONE;
	}
	put_call(ct, pid, tid, ns, &c);
}

void calltrace_free(struct calltrace *ct, int pid, uint32_t tid, uint64_t ns, uint64_t ptr)
{
	struct call c = { .fn = "free", .addr_kind = ADDR_KNOWN, .addr = ptr };

	calltrace_flush(ct);
	put_call(ct, pid, tid, ns, &c);
}

void calltrace_take(struct calltrace *ct, int pid, uint32_t tid, uint64_t ptr)
{
	struct calltrace_held *h = held_of(ct, pid, tid);

	calltrace_flush(ct);
	if (!h) {
		if (ct->nheld == ct->held_cap) {
			ct->held_cap = ct->held_cap ? ct->held_cap * 2 : 16;
			ct->held = xrealloc(ct->held, ct->held_cap * sizeof(*ct->held));
		}
		h = &ct->held[ct->nheld++];
	}
	*h = (struct calltrace_held){ pid, tid, ptr };
}

void calltrace_put_back(struct calltrace *ct, int pid, uint32_t tid, uint64_t ns)
{
	struct call c = { .fn = "realloc", .addr_kind = ADDR_UNKNOWN, .returns = true };

	if (held_of(ct, pid, tid)) {
		c.addr_kind = ADDR_KNOWN;
		c.addr = take_held(ct, pid, tid);
	}
	calltrace_flush(ct);
	put_call(ct, pid, tid, ns, &c);
}

void calltrace_release(struct calltrace *ct, int pid, uint32_t tid, uint64_t ns, bool known)
{
	bool had = known && held_of(ct, pid, tid);
	uint64_t old = had ? take_held(ct, pid, tid) : 0;

	calltrace_flush(ct);
	ct->pending = true;
	ct->pend = (struct calltrace_pend){ pid, tid, ns, old, had };
}

static void rc_alloc(void *ctx, int pid, uint32_t tid, uint64_t ns, int hook, uint64_t size,
		     uint64_t ptr)
{
	calltrace_alloc(ctx, pid, tid, ns, hook, size, ptr);
}

static void rc_free(void *ctx, int pid, uint32_t tid, uint64_t ns, uint64_t ptr)
{
	calltrace_free(ctx, pid, tid, ns, ptr);
}

static void rc_take(void *ctx, int pid, uint32_t tid, uint64_t ptr)
{
	calltrace_take(ctx, pid, tid, ptr);
}

static void rc_put_back(void *ctx, int pid, uint32_t tid, uint64_t ns)
{
	calltrace_put_back(ctx, pid, tid, ns);
}

static void rc_release(void *ctx, int pid, uint32_t tid, uint64_t ns, bool known)
{
	calltrace_release(ctx, pid, tid, ns, known);
}

static void rc_flush(void *ctx)
{
	calltrace_flush(ctx);
}

const struct record_calls calltrace_record_calls = {
	.alloc = rc_alloc,
	.free = rc_free,
	.take = rc_take,
	.put_back = rc_put_back,
	.release = rc_release,
	.flush = rc_flush,
};
