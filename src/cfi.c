// SPDX-License-Identifier: GPL-2.0-only
/* One frame step with libdw's CFI (see cfi.h). */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>

#include "arch.h"
#include "cfi.h"

/* The frame rules of mod for at, .eh_frame first; NULL if neither table has any. The caller
 * frees the frame. */
static Dwarf_Frame *frame_at(Dwfl_Module *mod, Dwarf_Addr at, enum cfi_table *table)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);

	if (cfi && !dwarf_cfi_addrframe(cfi, at - bias, &frame)) {
		*table = CFI_EH;
		return frame;
	}
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && !dwarf_cfi_addrframe(cfi, at - bias, &frame)) {
		*table = CFI_DEBUG;
		return frame;
	}
	return NULL;
}

/* Does mod's ELF file have a PT_GNU_EH_FRAME header (.eh_frame_hdr)? */
static bool has_eh_hdr(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			return true;
	}
	return false;
}

enum cfi_table cfi_covers(Dwfl_Module *mod, Dwarf_Addr at)
{
	enum cfi_table table = CFI_NONE;

	free(frame_at(mod, at, &table));
	return table == CFI_EH && has_eh_hdr(mod) ? CFI_EH_HDR : table;
}

struct eval {
	const struct frames_regs *r;
	cfi_read_fn read;
	uint64_t mask; /* a word of the traced process */
	uint64_t cfa;
	bool has_cfa;
};

/*
 * Evaluate a DWARF expression as CFI rules use them (libdw gives every rule as one: a
 * register plus an offset, the CFA plus an offset, or a short expression). *value: the last
 * operation was DW_OP_stack_value (the result is the register's value, not where it is
 * saved). Return 0 or -EINVAL for anything else.
 */
static int eval(const struct eval *e, const Dwarf_Op *ops, size_t nops, uint64_t *out,
		bool *value)
{
	uint64_t st[8];
	size_t sp = 0;

	*value = false;
	for (size_t i = 0; i < nops; i++) {
		uint8_t a = ops[i].atom;
		uint64_t v;

		if (*value || sp == sizeof(st) / sizeof(st[0]))
			return -EINVAL; /* DW_OP_stack_value ends an expression */
		if (a == DW_OP_call_frame_cfa) {
			if (!e->has_cfa)
				return -EINVAL;
			st[sp++] = e->cfa;
		} else if (a == DW_OP_bregx || (a >= DW_OP_breg0 && a <= DW_OP_breg31)) {
			unsigned reg = a == DW_OP_bregx ? (unsigned)ops[i].number : (unsigned)(a - DW_OP_breg0);
			uint64_t off = a == DW_OP_bregx ? ops[i].number2 : ops[i].number;

			if (!frames_reg(e->r, reg, &v))
				return -EINVAL;
			st[sp++] = (v + off) & e->mask;
		} else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			st[sp++] = a - DW_OP_lit0;
		} else if (a == DW_OP_const1u || a == DW_OP_const1s || a == DW_OP_const2u ||
			   a == DW_OP_const2s || a == DW_OP_const4u || a == DW_OP_const4s ||
			   a == DW_OP_const8u || a == DW_OP_const8s || a == DW_OP_constu ||
			   a == DW_OP_consts) {
			st[sp++] = ops[i].number & e->mask;
		} else if (a == DW_OP_plus_uconst) {
			if (!sp)
				return -EINVAL;
			st[sp - 1] = (st[sp - 1] + ops[i].number) & e->mask;
		} else if (a == DW_OP_plus || a == DW_OP_minus || a == DW_OP_and) {
			if (sp < 2)
				return -EINVAL;
			sp--;
			st[sp - 1] = a == DW_OP_plus ? st[sp - 1] + st[sp] :
				     a == DW_OP_minus ? st[sp - 1] - st[sp] : st[sp - 1] & st[sp];
			st[sp - 1] &= e->mask;
		} else if (a == DW_OP_deref) {
			if (!sp || e->read(st[sp - 1], &v))
				return -EINVAL;
			st[sp - 1] = v & e->mask;
		} else if (a == DW_OP_stack_value) {
			*value = true;
		} else {
			return -EINVAL;
		}
	}
	if (sp != 1)
		return -EINVAL;
	*out = st[0];
	return 0;
}

/* The caller's value of register reg: 1 and *val, 0 if the rules leave it unknown, or -errno. */
static int caller_reg(const struct eval *e, Dwarf_Frame *frame, int reg, uint64_t *val)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	bool value;
	uint64_t at;
	int ret;

	if (dwarf_frame_register(frame, reg, mem, &ops, &nops))
		return -EINVAL;
	if (!nops) /* undefined (ops is mem), or the same value as in this frame (NULL) */
		return !ops && frames_reg(e->r, reg, val) ? 1 : 0;
	ret = eval(e, ops, nops, &at, &value);
	if (ret)
		return ret;
	if (value) {
		*val = at;
		return 1;
	}
	ret = e->read(at, val);
	if (ret)
		return ret;
	*val &= e->mask;
	return 1;
}

static int apply(Dwarf_Frame *frame, cfi_read_fn read, struct frames_regs *r, uint64_t *ret)
{
	struct eval e = { r, read, arch->word_size == 4 ? 0xffffffffull : ~0ull, 0, false };
	struct frames_regs out = { .known = 0 };
	Dwarf_Op *ops;
	size_t nops;
	bool value;
	int ra = dwarf_frame_info(frame, NULL, NULL, NULL), err;

	if (ra < 0 || dwarf_frame_cfa(frame, &ops, &nops) || !nops)
		return -EINVAL;
	err = eval(&e, ops, nops, &e.cfa, &value);
	if (err)
		return err;
	e.has_cfa = true;
	err = caller_reg(&e, frame, ra, ret);
	if (err <= 0)
		return err ? err : 1; /* no return address: the outermost frame */
	for (unsigned reg = 0; reg < arch->dwarf_regs; reg++) {
		uint64_t v;

		/* a register saved where it cannot be read, or by a rule this does not
		 * evaluate, is unknown to the caller; only the return address must be had */
		if (caller_reg(&e, frame, reg, &v) > 0)
			frames_set_reg(&out, reg, v);
	}
	frames_set_reg(&out, arch->dwarf_sp, e.cfa); /* the caller's sp is the CFA */
	*r = out;
	return 0;
}

int cfi_step(Dwfl_Module *mod, Dwarf_Addr at, cfi_read_fn read, struct frames_regs *r,
	     uint64_t *ret)
{
	enum cfi_table table;
	Dwarf_Frame *frame = frame_at(mod, at, &table);
	int err;

	if (!frame)
		return -ENOENT;
	err = apply(frame, read, r, ret);
	free(frame);
	return err;
}
