// SPDX-License-Identifier: GPL-2.0-only
/* A .debug_frame interpreter for one address (see cfirows.h). */
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "unwind/cfirows.h"

struct reader {
	const uint8_t *p, *end;
	unsigned addr_size;
	bool bad;
};

/* A LEB128 number's bits (*shift: how many were read, *last: its last byte); 0, *last 0 and
 * r->bad if it runs past the end. */
static uint64_t leb(struct reader *r, unsigned *shift, uint8_t *last)
{
	uint64_t v = 0;

	*shift = 0;
	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (*shift < 64)
			v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
		if (!(b & 0x80)) {
			*last = b;
			return v;
		}
	}
	*last = 0;
	r->bad = true;
	return 0;
}

static uint64_t uleb(struct reader *r)
{
	unsigned shift;
	uint8_t last;

	return leb(r, &shift, &last);
}

static int64_t sleb(struct reader *r)
{
	unsigned shift;
	uint8_t last;
	uint64_t v = leb(r, &shift, &last);

	if (shift < 64 && (last & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/* An unsigned little-endian value of n bytes (the targets are little-endian). */
static uint64_t fixed(struct reader *r, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, n);
	r->p += n;
	return v;
}

struct state {
	struct cfirows_row row;
	const struct cfirows_row *initial; /* for DW_CFA_restore: the CIE's rules */
	uint64_t loc, at;
	int64_t daf;
	uint64_t caf;
	struct cfirows_row saved[4]; /* DW_CFA_remember_state */
	unsigned nsaved;
};

/* v times a data alignment factor, wrapping as the target's address arithmetic does (no
 * signed overflow on bad data). */
static int64_t scaled(uint64_t v, int64_t factor)
{
	return (int64_t)(v * (uint64_t)factor);
}

static void set_rule(struct state *s, uint64_t reg, enum cfirows_rule kind, int64_t val)
{
	if (reg < FRAMES_REGS) {
		s->row.kind[reg] = kind;
		s->row.val[reg] = val;
	}
}

/* Run instructions until the location passes s->at. Return 0 or -EINVAL. */
static int run(struct state *s, struct reader *r)
{
	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++, low = op & 0x3f;
		uint64_t reg, delta = 0;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			delta = low * s->caf;
			break;
		case DW_CFA_offset:
			set_rule(s, low, CFIROWS_OFFSET, scaled(uleb(r), s->daf));
			continue;
		case DW_CFA_restore:
			if (s->initial && low < FRAMES_REGS)
				set_rule(s, low, s->initial->kind[low], s->initial->val[low]);
			continue;
		}
		switch (op & 0xc0 ? 0xff : op) {
		case 0xff:
			break;
		case DW_CFA_nop:
			continue;
		case DW_CFA_set_loc:
			s->loc = fixed(r, r->addr_size);
			if (s->loc > s->at)
				return 0;
			continue;
		case DW_CFA_advance_loc1:
			delta = fixed(r, 1) * s->caf;
			break;
		case DW_CFA_advance_loc2:
			delta = fixed(r, 2) * s->caf;
			break;
		case DW_CFA_advance_loc4:
			delta = fixed(r, 4) * s->caf;
			break;
		case DW_CFA_offset_extended:
			reg = uleb(r);
			set_rule(s, reg, CFIROWS_OFFSET, scaled(uleb(r), s->daf));
			continue;
		case DW_CFA_offset_extended_sf:
			reg = uleb(r);
			set_rule(s, reg, CFIROWS_OFFSET, scaled((uint64_t)sleb(r), s->daf));
			continue;
		case DW_CFA_GNU_negative_offset_extended:
			reg = uleb(r);
			set_rule(s, reg, CFIROWS_OFFSET, scaled(-uleb(r), s->daf));
			continue;
		case DW_CFA_val_offset:
			reg = uleb(r);
			set_rule(s, reg, CFIROWS_VAL_OFFSET, scaled(uleb(r), s->daf));
			continue;
		case DW_CFA_val_offset_sf:
			reg = uleb(r);
			set_rule(s, reg, CFIROWS_VAL_OFFSET, scaled((uint64_t)sleb(r), s->daf));
			continue;
		case DW_CFA_restore_extended:
			reg = uleb(r);
			if (s->initial && reg < FRAMES_REGS)
				set_rule(s, reg, s->initial->kind[reg], s->initial->val[reg]);
			continue;
		case DW_CFA_undefined:
			set_rule(s, uleb(r), CFIROWS_UNDEF, 0);
			continue;
		case DW_CFA_same_value:
			set_rule(s, uleb(r), CFIROWS_SAME, 0);
			continue;
		case DW_CFA_register:
			reg = uleb(r);
			set_rule(s, reg, CFIROWS_REGISTER, (int64_t)uleb(r));
			continue;
		case DW_CFA_remember_state:
			if (s->nsaved == sizeof(s->saved) / sizeof(s->saved[0]))
				return -EINVAL;
			s->saved[s->nsaved++] = s->row;
			continue;
		case DW_CFA_restore_state:
			if (!s->nsaved)
				return -EINVAL;
			/* the whole row, the CFA's rule too, as gcc expects and libdw does */
			s->row = s->saved[--s->nsaved];
			continue;
		case DW_CFA_def_cfa:
			s->row.cfa_reg = uleb(r);
			s->row.cfa_off = (int64_t)uleb(r);
			continue;
		case DW_CFA_def_cfa_sf:
			s->row.cfa_reg = uleb(r);
			s->row.cfa_off = scaled((uint64_t)sleb(r), s->daf);
			continue;
		case DW_CFA_def_cfa_register:
			s->row.cfa_reg = uleb(r);
			continue;
		case DW_CFA_def_cfa_offset:
			s->row.cfa_off = (int64_t)uleb(r);
			continue;
		case DW_CFA_def_cfa_offset_sf:
			s->row.cfa_off = scaled((uint64_t)sleb(r), s->daf);
			continue;
		case DW_CFA_GNU_args_size:
			uleb(r);
			continue;
		default: /* expressions, and what this does not know */
			return -EINVAL;
		}
		if (s->loc + delta > s->at)
			return 0;
		s->loc += delta;
	}
	return r->bad ? -EINVAL : 0;
}

/* The CIE at section offset off: its rules in *row, factors in s. */
static int read_cie(const unsigned char *e_ident, Elf_Data *data, Dwarf_Off off,
		    struct state *s, unsigned addr_size)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	struct reader r;

	if (dwarf_next_cfi(e_ident, data, false, off, &next, &e) || !dwarf_cfi_cie_p(&e) ||
	    e.cie.augmentation[0])
		return -EINVAL; /* .debug_frame CIEs of gcc have no augmentation */
	memset(&s->row, 0, sizeof(s->row));
	s->row.ra = e.cie.return_address_register;
	s->caf = e.cie.code_alignment_factor;
	s->daf = e.cie.data_alignment_factor;
	s->initial = NULL;
	s->nsaved = 0;
	s->loc = 0;
	s->at = ~0ull; /* all of the initial instructions */
	r = (struct reader){ e.cie.initial_instructions, e.cie.initial_instructions_end, addr_size,
			     false };
	return run(s, &r);
}

int cfirows_find(const unsigned char *e_ident, Elf_Data *data, uint64_t at,
		 struct cfirows_row *row)
{
	unsigned addr_size = e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int ret;

	for (; off != (Dwarf_Off)-1; off = next) {
		struct reader r;
		uint64_t start, len;
		struct state s;
		struct cfirows_row initial;

		next = (Dwarf_Off)-1; /* ends the walk unless the entry could be skipped */
		ret = dwarf_next_cfi(e_ident, data, false, off, &next, &e);
		if (ret > 0)
			break;
		if (ret < 0 || dwarf_cfi_cie_p(&e))
			continue;
		r = (struct reader){ e.fde.start, e.fde.end, addr_size, false };
		start = fixed(&r, addr_size);
		len = fixed(&r, addr_size);
		if (r.bad || at < start || at - start >= len)
			continue;
		ret = read_cie(e_ident, data, e.fde.CIE_pointer, &s, addr_size);
		if (ret)
			return ret;
		initial = s.row;
		s.initial = &initial;
		s.loc = start;
		s.at = at;
		ret = run(&s, &r);
		if (ret)
			return ret;
		*row = s.row;
		return 0;
	}
	return -ENOENT;
}
