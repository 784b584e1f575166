// SPDX-License-Identifier: GPL-2.0-only
/* The live side of the stack scan: memory, code and symbols of a traced process. */
#include <string.h>

#include "arch.h"
#include "fallback.h"
#include "frames.h"
#include "symbols.h"
#include "unwind.h"

/* Functions no frame is below: the scan does not go past them. */
static const char *const outermost[] = {
	"_start", "__start", "__libc_start_main", "__libc_start_call_main", "start_thread",
	"thread_start", "clone", "__clone", "clone3", "__clone3", "_dl_start_user",
};

static ssize_t read_words(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const unsigned w = arch->word_size;
	size_t done = 0;

	(void)ctx;
	for (; done + w <= len; done += w) {
		uint64_t v;

		if (unwind_read_word(addr + done, &v))
			break;
		memcpy((uint8_t *)buf + done, &v, w); /* little-endian targets */
	}
	return done;
}

static bool after_call(void *ctx, uint64_t ret, uint64_t *target)
{
	struct proc *p = ctx;
	uint64_t code = arch->code_addr(ret);
	const struct module *m = modlist_find(&p->mods, code);
	uint8_t insn[ARCH_CALL_WINDOW];

	if (!m || !m->exec || code < m->start + ARCH_CALL_WINDOW)
		return false;
	if (read_words(NULL, code - ARCH_CALL_WINDOW, insn, sizeof(insn)) != sizeof(insn))
		return false;
	return arch->after_call(insn, ret, target);
}

bool fallback_is_return(void *ctx, uint64_t ret)
{
	uint64_t target;

	return after_call(ctx, ret, &target);
}

static struct symbolizer *symbols(struct proc *p)
{
	if (!p->scan_sym)
		p->scan_sym = sym_open(&p->mods);
	return p->scan_sym;
}

static uint64_t func_start(void *ctx, uint64_t pc, bool is_return)
{
	struct sym_frame sf;

	pc = arch->code_addr(pc);
	sym_resolve(symbols(ctx), pc, is_return, &sf);
	return sf.function ? arch->code_addr(pc - sf.offset) : 0;
}

static bool in_function(struct proc *p, uint64_t pc, const char *name)
{
	struct sym_frame sf;

	sym_resolve(symbols(p), arch->code_addr(frames_addr(pc)), true, &sf);
	return sf.function && !strcmp(sf.function, name);
}

static bool is_outermost(struct proc *p, uint64_t pc)
{
	for (size_t i = 0; i < sizeof(outermost) / sizeof(outermost[0]); i++)
		if (in_function(p, pc, outermost[i]))
			return true;
	return false;
}

/*
 * The scan ends at main: the C library calls it through a pointer, which no call instruction
 * can confirm, and in a static program the words above main's frame are left by the startup
 * code (measured on x86_64: do_lookup_x, _int_malloc taken for main's callers).
 */
static bool is_main(void *ctx, uint64_t pc)
{
	return in_function(ctx, pc, "main");
}

unsigned fallback_extend(struct proc *p, uint64_t *pcs, unsigned n, uint64_t sp, unsigned max)
{
	struct frames_env e = { arch->word_size, read_words, p, after_call, func_start, is_main };

	if (n < 2 || n >= max || is_outermost(p, pcs[n - 1]) || is_main(p, pcs[n - 1]))
		return n;
	n += frames_scan(&e, frames_addr(pcs[n - 1]), true, sp, pcs + n, max - n);
	if (n < max && !is_outermost(p, pcs[n - 1]) && !is_main(p, pcs[n - 1]))
		pcs[n - 1] |= FRAMES_STOPPED;
	return n;
}

void fallback_flush(struct proc *p)
{
	sym_close(p->scan_sym);
	p->scan_sym = NULL;
}
