// SPDX-License-Identifier: GPL-2.0-only
#include "unwind/sigframe.h"

#include <string.h>

#include "arch/arch.h"
#include "util/util.h"

int stack_copy_word(void *ctx, uint64_t addr, uint64_t *val)
{
	const struct stack_copy *c = ctx;

	if (addr < c->base || addr - c->base + sizeof(*val) > c->len)
		return -1;
	memcpy(val, c->bytes + (addr - c->base), sizeof(*val));
	return 0;
}

bool sigframe_known(void)
{
	return arch->sigframe_sp != 0 && arch->sigframe_pc != 0;
}

/* w is one of the architecture's magic words */
static bool magic(uint64_t w)
{
	for (unsigned i = 0; i < ARRAY_SIZE(arch->sigframe_magic) && arch->sigframe_magic[i]; i++)
		if (w == arch->sigframe_magic[i])
			return true;
	return false;
}

bool sigframe_anchor(const struct unwind_hooks *h, uint64_t w)
{
	return arch->sigframe_magic[0] ? magic(w) : h->signal(h->ctx, w);
}

/* The word at addr + off, cut to the architecture's size; -1 if it cannot be read */
static int word_at(stack_word_fn word, void *ctx, uint64_t addr, int off, uint64_t *val)
{
	if (word(ctx, addr + (uint64_t)(int64_t)off, val))
		return -1;
	if (arch->word_size == 4)
		*val &= 0xffffffffull;
	return 0;
}

bool sigframe_regs(stack_word_fn word, void *ctx, uint64_t addr, uint64_t *w, uint64_t *isp,
		   uint64_t *ipc)
{
	if (!sigframe_known())
		return false;
	if (arch->sigframe_magic[0]) {
		/* the magic and the size: 64 bits, also where a word has 32 */
		if (word(ctx, addr, w) || !magic(*w))
			return false;
	} else if (word_at(word, ctx, addr, 0, w) || !*w) {
		return false;
	}
	return !word_at(word, ctx, addr, arch->sigframe_sp, isp) && *isp &&
	       !word_at(word, ctx, addr, arch->sigframe_pc, ipc);
}
