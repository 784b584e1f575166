// SPDX-License-Identifier: GPL-2.0-only
/*
 * The .debug_frame interpreter (cfirows.c) on a hand-assembled section laid out as gcc emits
 * it for mips64 (leaks-plain's leak_big: daddiu sp,-16; sd gp,0(sp); ...; sd ra,8(sp); jalr;
 * ld ra; ld gp; jr ra): a CIE with the CFA in r29 and the return address in column 31, an FDE
 * that moves the CFA, saves r28 and r31, remembers the state, restores it all in the
 * epilogue and brings it back after; and an FDE with an expression it refuses.
 */
#include <elf.h>
#include <errno.h>

#include "unwind/cfirows.h"
#include "unittest.h"

static const uint8_t section[] = {
	/* CIE: length 12, id, version 1, "", code align 1, data align -4, ra 31 */
	12, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 1, 0x7c, 31,
	0x0d, 29, /* def_cfa_register r29 (offset 0) */
	0, /* nop */
	/* FDE: length 40, CIE at 0, [0x10f0, 0x1124) */
	40, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x10, 0, 0, 0, 0, 0, 0, 0x34, 0, 0, 0, 0, 0, 0, 0,
	0x44, 0x0e, 16, /* 0x10f4: def_cfa_offset 16 */
	0x44, 0x80 | 28, 4, /* 0x10f8: r28 at cfa - 16 */
	0x02, 0x10, 0x80 | 31, 2, /* advance_loc1 to 0x1108: r31 at cfa - 8 */
	0x0a, /* remember_state */
	0x54, 0x0e, 0, 0xc0 | 31, 0xc0 | 28, /* 0x111c: def_cfa_offset 0, restore r31, r28 */
	0x44, 0x0b, /* 0x1120: restore_state */
	0, 0,
	/* FDE: length 24, CIE at 0, [0x2000, 0x2010): def_cfa_expression { DW_OP_breg29 0 } */
	24, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0,
	0x0f, 2, 0x8d, 0, 0,
};

static int find(uint64_t at, struct cfirows_row *row)
{
	unsigned char ident[EI_NIDENT] = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
					   ELFDATA2LSB, EV_CURRENT };
	Elf_Data data = { .d_buf = (void *)section, .d_type = ELF_T_BYTE,
			  .d_version = EV_CURRENT, .d_size = sizeof(section), .d_align = 1 };

	memset(row, 0xee, sizeof(*row));
	return cfirows_find(ident, &data, at, row);
}

TEST_CASE(cie_rules_at_entry)
{
	struct cfirows_row r;

	REQUIRE(find(0x10f0, &r) == 0);
	CHECK(r.ra == 31 && r.cfa_reg == 29 && r.cfa_off == 0);
	CHECK(r.kind[31] == CFIROWS_SAME && r.kind[28] == CFIROWS_SAME);
}

TEST_CASE(prologue_rows)
{
	struct cfirows_row r;

	REQUIRE(find(0x10f4, &r) == 0);
	CHECK(r.cfa_off == 16 && r.kind[28] == CFIROWS_SAME);
	REQUIRE(find(0x1107, &r) == 0);
	CHECK(r.kind[28] == CFIROWS_OFFSET && r.val[28] == -16 && r.kind[31] == CFIROWS_SAME);
	REQUIRE(find(0x1113, &r) == 0); /* the call site of the jalr's return address */
	CHECK(r.cfa_reg == 29 && r.cfa_off == 16);
	CHECK(r.kind[31] == CFIROWS_OFFSET && r.val[31] == -8);
	CHECK(r.kind[28] == CFIROWS_OFFSET && r.val[28] == -16);
}

TEST_CASE(restore_and_restore_state)
{
	struct cfirows_row r;

	REQUIRE(find(0x111c, &r) == 0);
	CHECK(r.cfa_off == 0 && r.kind[31] == CFIROWS_SAME && r.kind[28] == CFIROWS_SAME);
	REQUIRE(find(0x1120, &r) == 0);
	CHECK(r.cfa_off == 16 && r.kind[31] == CFIROWS_OFFSET && r.val[31] == -8);
}

TEST_CASE(outside_and_refused)
{
	struct cfirows_row r;

	CHECK(find(0x10ef, &r) == -ENOENT);
	CHECK(find(0x1200, &r) == -ENOENT);
	CHECK(find(0x2004, &r) == -EINVAL);
}
