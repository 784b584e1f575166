// SPDX-License-Identifier: GPL-2.0-only
/* The live side of the stack scan: memory, code and symbols of a traced process. */
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "fallback.h"
#include "frames.h"
#include "symbols.h"
#include "unwind.h"
#include "util.h"

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

static bool is_return(void *ctx, uint64_t ret)
{
	uint64_t target;

	return after_call(ctx, ret, &target);
}

/* Where a return address lies: in main, in an outermost function, or elsewhere. */
enum place { PLACE_OTHER, PLACE_MAIN, PLACE_OUTERMOST };

#define CACHE_SIZE 4096 /* a power of two */

/*
 * Per process: its symbols, and what they say of each code address looked up. libdwfl's
 * address lookup walks the whole symbol table (measured: forkstress's 595000 allocations took
 * 2 minutes of CPU more without this cache), and most backtraces end in the same few places.
 */
struct fallback {
	struct symbolizer *sym;
	struct {
		uint64_t key; /* code address << 1 | is_return, 0 = empty */
		uint64_t start; /* function start (code address), 0 if unknown */
		enum place place;
	} cache[CACHE_SIZE];
};

static bool same_name(const char *sym, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(sym, name, n) && (!sym[n] || sym[n] == '@'); /* __libc_start_main@@.. */
}

static enum place place_of_name(const char *name)
{
	if (!name)
		return PLACE_OTHER;
	if (same_name(name, "main"))
		return PLACE_MAIN;
	for (size_t i = 0; i < sizeof(outermost) / sizeof(outermost[0]); i++)
		if (same_name(name, outermost[i]))
			return PLACE_OUTERMOST;
	return PLACE_OTHER;
}

/* The function start and place of code address pc (a return address if is_return). */
static void look_up(struct proc *p, uint64_t pc, bool is_return, uint64_t *start,
		    enum place *place)
{
	uint64_t key = (arch->code_addr(frames_addr(pc)) << 1) | is_return;
	struct fallback *fb = p->fallback;
	size_t i;

	if (!fb) {
		fb = p->fallback = xcalloc(1, sizeof(*fb));
		fb->sym = sym_open(&p->mods);
	}
	i = hash64(key) & (CACHE_SIZE - 1);
	if (fb->cache[i].key != key) {
		uint64_t s = 0;
		const char *name = sym_function(fb->sym, key >> 1, is_return, &s);

		fb->cache[i].key = key;
		fb->cache[i].start = name ? arch->code_addr(s) : 0;
		fb->cache[i].place = place_of_name(name);
	}
	*start = fb->cache[i].start;
	*place = fb->cache[i].place;
}

static uint64_t func_start(void *ctx, uint64_t pc, bool is_return)
{
	uint64_t start;
	enum place place;

	look_up(ctx, pc, is_return, &start, &place);
	return start;
}

static enum place place_of(struct proc *p, uint64_t pc)
{
	uint64_t start;
	enum place place;

	look_up(p, pc, true, &start, &place);
	return place;
}

/*
 * The scan ends at main: the C library calls it through a pointer, which no call instruction
 * can confirm, and in a static program the words above main's frame are left by the startup
 * code (measured on x86_64: do_lookup_x, _int_malloc taken for main's callers).
 */
static bool is_main(void *ctx, uint64_t pc)
{
	return place_of(ctx, pc) == PLACE_MAIN;
}

/* pcs[0] is the caller's pc at an allocation function's entry, a return address as well. */
static unsigned extend(void *ctx, uint64_t *pcs, unsigned n, uint64_t sp, unsigned max)
{
	struct proc *p = ctx;
	struct frames_env e = { arch->word_size, read_words, p, after_call, func_start, is_main };

	if (!n || n >= max || place_of(p, pcs[n - 1]) != PLACE_OTHER)
		return n;
	n += frames_scan(&e, frames_addr(pcs[n - 1]), true, sp, pcs + n, max - n);
	if (n < max && place_of(p, pcs[n - 1]) == PLACE_OTHER)
		pcs[n - 1] |= FRAMES_STOPPED;
	return n;
}

void fallback_hooks(struct proc *p, struct unwind_hooks *h)
{
	*h = (struct unwind_hooks){ is_return, extend, p };
}

void fallback_flush(struct proc *p)
{
	if (p->fallback) {
		sym_close(p->fallback->sym);
		free(p->fallback);
		p->fallback = NULL;
	}
}
