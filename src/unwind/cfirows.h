/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_CFIROWS_H
#define HEAPTRACE_CFIROWS_H

/*
 * The frame rules of one address from a .debug_frame section, interpreted here: libdw's own
 * interpreter (dwarf_cfi_addrframe) refuses every frame of an architecture it has no ABI
 * description for (elfutils 0.188, Debian 12's, has none for mips: "unknown error").
 * Registers a CIE and FDE leave unspecified keep their value, as callee-saved ones do.
 */
#include <elfutils/libdw.h>
#include <stdint.h>

#include "unwind/frames.h"

enum cfirows_rule { CFIROWS_SAME, CFIROWS_UNDEF, CFIROWS_OFFSET, CFIROWS_VAL_OFFSET,
		    CFIROWS_REGISTER };

/* The rules at one address: CFA = register cfa_reg + cfa_off; register i by kind[i] with
 * val[i] (the offset from the CFA, or the register holding it); ra: the return address
 * column. */
struct cfirows_row {
	unsigned ra, cfa_reg;
	int64_t cfa_off;
	uint8_t kind[FRAMES_REGS];
	int64_t val[FRAMES_REGS];
};

/*
 * The row for address at (as the section's addresses are) of the .debug_frame bytes in data,
 * from an ELF file with identification e_ident (its class gives the address size). Return 0,
 * -ENOENT (no FDE for at), or -EINVAL (an expression rule, or data it cannot read).
 */
int cfirows_find(const unsigned char *e_ident, Elf_Data *data, uint64_t at,
		 struct cfirows_row *row);

#endif
