// SPDX-License-Identifier: GPL-2.0-only
/* The patch-safety rule of an entry (entrycheck.h), with Capstone's x86-64 decoder or the
 * arch's own (arm's Thumb-2, mips64's). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "arch.h"
#include "entrycheck.h"
#include "symbols.h"
#include "util.h"

#define MAX_FUNC (1u << 20) /* larger functions are not checked: refused */

int entry_check_with(const struct arch_ops *a, const char *path, uint64_t value, uint64_t size,
		     size_t len)
{
	uint8_t *buf;
	ssize_t got;
	int ret;

	if (!size || size > MAX_FUNC || !a->entry_scan)
		return -EXDEV;
	buf = xmalloc(size);
	got = sym_read_code(path, a->code_addr(value), buf, size);
	ret = got == (ssize_t)size ? a->entry_scan(value, buf, size, len) :
	      got < 0		  ? (int)got :
				    -EIO;
	free(buf);
	return ret;
}

#if defined(HAVE_CAPSTONE)
#include <capstone.h>

/* True if instruction i of a function at [value, ...) reaches into (value, value + len), or
 * jumps where no decoder can follow. */
static bool unsafe(csh h, const cs_insn *i, uint64_t value, size_t len)
{
	const cs_x86 *x = &i->detail->x86;
	bool jump = cs_insn_group(h, i, CS_GRP_JUMP), call = cs_insn_group(h, i, CS_GRP_CALL);

	for (unsigned k = 0; k < x->op_count; k++) {
		const cs_x86_op *op = &x->operands[k];
		uint64_t target;

		if (op->type == X86_OP_IMM && (jump || call))
			target = (uint64_t)op->imm;
		else if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP)
			target = i->address + i->size + (uint64_t)op->mem.disp;
		else if (jump) /* through a register or memory: a jump table */
			return true;
		else
			continue;
		if (target > value && target < value + len)
			return true;
	}
	return false;
}

int entry_check(const char *path, uint64_t value, uint64_t size, size_t len)
{
	uint8_t *buf;
	const uint8_t *code;
	size_t n;
	uint64_t addr = value;
	ssize_t got;
	cs_insn *insn;
	csh h;
	int ret = 0;

	if (!size || size > MAX_FUNC)
		return -EXDEV;
	buf = xmalloc(size);
	got = sym_read_code(path, value, buf, size);
	if (got != (ssize_t)size) {
		free(buf);
		return got < 0 ? (int)got : -EIO;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		free(buf);
		return -ENOTSUP;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(h);
	code = buf;
	n = size;
	while (n && !ret) {
		if (!cs_disasm_iter(h, &code, &n, &addr, insn))
			ret = -EXDEV; /* bytes the decoder cannot follow */
		else if (unsafe(h, insn, value, len))
			ret = -EXDEV;
	}
	cs_free(insn, 1);
	cs_close(&h);
	free(buf);
	return ret;
}

#else

int entry_check(const char *path, uint64_t value, uint64_t size, size_t len)
{
	(void)path, (void)value, (void)size, (void)len;
	return -ENOTSUP;
}

#endif
