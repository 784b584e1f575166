// SPDX-License-Identifier: GPL-2.0-only
/* One frame step with libdw's CFI (see cfi.h). */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "unwind/cfi.h"
#include "unwind/cfirows.h"

/* The frame rules at one address: libdw's, or (frame NULL) cfirows.c's. */
struct rules {
	Dwarf_Frame *frame;
	struct cfirows_row row;
};

/* The .debug_frame section of the file holding mod's DWARF, its ELF in *elf. */
static Elf_Data *debug_frame(Dwfl_Module *mod, Dwarf_Addr *bias, Elf **elf)
{
	Dwarf *dw = dwfl_module_getdwarf(mod, bias);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*elf = dw ? dwarf_getelf(dw) : NULL;
	if (!*elf || elf_getshdrstrndx(*elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(*elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(*elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".debug_frame"))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* The frame rules of mod for at, .eh_frame first; false if neither table has any. Free with
 * rules_free. */
static bool rules_at(Dwfl_Module *mod, Dwarf_Addr at, struct rules *ru, enum cfi_table *table)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	Elf_Data *data;
	Elf *elf;

	ru->frame = NULL;
	*table = CFI_NONE;
	if (cfi) {
		if (!dwarf_cfi_addrframe(cfi, at - bias, &ru->frame)) {
			*table = CFI_EH;
			return true;
		}
		/* libdw's "unknown error" (1): no ABI description, it reads no .eh_frame at all
		 * here (mips in elfutils 0.188); whether the table covers at is not known */
		if (dwarf_errno() == 1)
			*table = CFI_EH;
	}
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && !dwarf_cfi_addrframe(cfi, at - bias, &ru->frame)) {
		*table = CFI_DEBUG;
		return true;
	}
	/* libdw refuses CFI where it has no description of the ABI (mips in elfutils 0.188) */
	ru->frame = NULL;
	data = debug_frame(mod, &bias, &elf);
	if (data && !cfirows_find((const unsigned char *)elf_getident(elf, NULL), data, at - bias,
				  &ru->row)) {
		*table = CFI_DEBUG;
		return true;
	}
	return false;
}

static void rules_free(struct rules *ru)
{
	free(ru->frame);
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
	enum cfi_table table;
	struct rules ru;

	if (rules_at(mod, at, &ru, &table))
		rules_free(&ru);
	/* CFI_EH without rules: an .eh_frame libdw cannot read, for libunwind to try */
	return table == CFI_EH && has_eh_hdr(mod) ? CFI_EH_HDR : table;
}

bool cfi_signal_frame(Dwfl_Module *mod, Dwarf_Addr at)
{
	Dwarf_Addr bias, start, end;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	Dwarf_Frame *frame = NULL;
	bool signal = false;

	if (!cfi || dwarf_cfi_addrframe(cfi, at - bias, &frame))
		return false;
	if (dwarf_frame_info(frame, &start, &end, &signal) < 0)
		signal = false;
	free(frame);
	return signal;
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
			unsigned reg = a == DW_OP_bregx ? (unsigned)ops[i].number :
							  (unsigned)(a - DW_OP_breg0);
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

/* The rule of register reg as libdw gives it (see dwarf_frame_register). Return 0 or -1. */
static int reg_rule(const struct rules *ru, int reg, Dwarf_Op mem[3], Dwarf_Op **ops,
		    size_t *nops)
{
	const struct cfirows_row *row = &ru->row;

	if (ru->frame)
		return dwarf_frame_register(ru->frame, reg, mem, ops, nops);
	*nops = 0;
	*ops = mem;
	switch (reg < FRAMES_REGS ? row->kind[reg] : CFIROWS_UNDEF) {
	case CFIROWS_SAME:
		*ops = NULL;
		break;
	case CFIROWS_UNDEF:
		break;
	case CFIROWS_OFFSET:
	case CFIROWS_VAL_OFFSET:
		mem[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_call_frame_cfa };
		mem[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_plus_uconst,
					     .number = (Dwarf_Word)row->val[reg] };
		if (row->kind[reg] == CFIROWS_VAL_OFFSET)
			mem[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_stack_value };
		break;
	case CFIROWS_REGISTER:
		mem[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_bregx,
					     .number = (Dwarf_Word)row->val[reg] };
		mem[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_stack_value };
		break;
	}
	return 0;
}

/* The caller's value of register reg: 1 and *val, 0 if the rules leave it unknown, or -errno. */
static int caller_reg(const struct eval *e, const struct rules *ru, int reg, uint64_t *val)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	bool value;
	uint64_t at;
	int ret;

	if (reg_rule(ru, reg, mem, &ops, &nops))
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

static int apply(const struct rules *ru, cfi_read_fn read, struct frames_regs *r, uint64_t *ret)
{
	struct eval e = { r, read, arch->word_size == 4 ? 0xffffffffull : ~0ull, 0, false };
	struct frames_regs out = { .known = 0 };
	Dwarf_Op cfa = { .atom = DW_OP_bregx, .number = ru->row.cfa_reg,
			 .number2 = (Dwarf_Word)ru->row.cfa_off };
	Dwarf_Op *ops = &cfa;
	size_t nops = 1;
	bool value;
	int ra = ru->frame ? dwarf_frame_info(ru->frame, NULL, NULL, NULL) : (int)ru->row.ra, err;

	if (ra < 0 || (ru->frame && (dwarf_frame_cfa(ru->frame, &ops, &nops) || !nops)))
		return -EINVAL;
	err = eval(&e, ops, nops, &e.cfa, &value);
	if (err)
		return err;
	e.has_cfa = true;
	err = caller_reg(&e, ru, ra, ret);
	if (err <= 0)
		return err ? err : 1; /* no return address: the outermost frame */
	for (unsigned reg = 0; reg < arch->dwarf_regs; reg++) {
		uint64_t v;

		/* a register saved where it cannot be read, or by a rule this does not
		 * evaluate, is unknown to the caller; only the return address must be had */
		if (caller_reg(&e, ru, reg, &v) > 0)
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
	struct rules ru;
	int err;

	if (!rules_at(mod, at, &ru, &table))
		return -ENOENT;
	err = apply(&ru, read, r, ret);
	rules_free(&ru);
	return err;
}

/* Where the rules ru put register reg (none: < 0) of the caller, as a cfi_rule says it. */
static int where(const struct rules *ru, int reg, enum cfi_where *w, int64_t *off)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;

	*w = CFI_LOST;
	*off = 0;
	if (reg < 0)
		return 0;
	if (reg_rule(ru, reg, mem, &ops, &nops))
		return -EINVAL;
	if (!nops) { /* undefined (ops is mem), or the same value (NULL) */
		*w = ops ? CFI_LOST : CFI_KEPT;
		return 0;
	}
	/* saved at CFA + N: libdw says DW_OP_call_frame_cfa, then DW_OP_plus_uconst N unless 0 */
	if (ops[0].atom != DW_OP_call_frame_cfa || nops > 2 ||
	    (nops == 2 && ops[1].atom != DW_OP_plus_uconst))
		return -EINVAL;
	*w = CFI_AT_CFA;
	*off = nops == 2 ? (int64_t)ops[1].number : 0;
	return 0;
}

/* The CFA of the rules ru as register + offset, if it is that. */
static int cfa_of(const struct rules *ru, unsigned *reg, int64_t *off)
{
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_frame_cfa(ru->frame, &ops, &nops) || nops != 1)
		return -EINVAL;
	if (ops[0].atom == DW_OP_bregx) {
		*reg = (unsigned)ops[0].number;
		*off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*off = (int64_t)ops[0].number;
	} else {
		return -EINVAL;
	}
	return *reg == arch->dwarf_sp || (int)*reg == arch->fp_reg ? 0 : -EINVAL;
}

int cfi_rule(Dwfl_Module *mod, Dwarf_Addr at, struct cfi_rule *out)
{
	enum cfi_table table;
	struct rules ru;
	bool signal = false;
	int ra, err;

	if (!rules_at(mod, at, &ru, &table))
		return -ENOENT;
	if (table != CFI_EH || !ru.frame) {
		rules_free(&ru);
		return -ENOENT;
	}
	ra = dwarf_frame_info(ru.frame, NULL, NULL, &signal);
	err = ra < 0 || signal ? -EINVAL : cfa_of(&ru, &out->cfa_reg, &out->cfa_off);
	if (!err)
		err = where(&ru, ra, &out->ra, &out->ra_off);
	if (!err)
		err = where(&ru, arch->fp_reg, &out->fp, &out->fp_off);
	if (!err && out->ra == CFI_KEPT) /* the return address in a register: a leaf's */
		err = -EINVAL;
	rules_free(&ru);
	return err;
}
