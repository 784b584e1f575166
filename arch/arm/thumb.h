/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_ARM_THUMB_H
#define HEAPTRACE_ARM_THUMB_H

/*
 * arm's instruction decoding and relocation (thumb.c), shared with arch.c: the register
 * indexes, the emulations a displaced instruction may need, and small byte helpers. Pure,
 * like arch.c: it builds on any host.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"


enum {
	A_R0, A_R1, A_R2, A_R3, A_R4, A_R5, A_R6, A_R7, A_R8, A_R9, A_R10, A_R11, A_R12,
	A_SP, A_LR, A_PC, A_CPSR, A_ORIG_R0,
};
#define A_TLS 18 /* not in the regset: arch_get_tls_reg (regs.c) reads TPIDRURO into it */


#define CPSR_T 0x20u /* Thumb state */
#define CPSR_IT 0x0600fc00u /* IT[1:0] = bits 26:25, IT[7:2] = bits 15:10 */

#define ARM_BKPT 0xe7f001f0u /* udf #16: arm_break_hook, ARM state only */
#define THUMB_BKPT 0xde01u /* udf #1: thumb_break_hook, Thumb state only */

enum {
	EMUL_JUMP = 1, /* PC := target (a mode address) */
	EMUL_BX, /* PC := R[imm], interworking (bx Rm) */
	EMUL_CBZ, /* PC := R[imm & 15] == 0 ? target : imm >> 32 */
	EMUL_CBNZ, /* PC := R[imm & 15] != 0 ? target : imm >> 32 */
};

static inline uint16_t rd16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, v);
	wr16(p + 2, v >> 16);
}

static inline unsigned popcount16(uint32_t v)
{
	unsigned n = 0;

	for (v &= 0xffff; v; v &= v - 1)
		n++;
	return n;
}

/* arch_ops members (arch.h says what each returns), in thumb.c. */
int arm_displace_insn(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
		      uint8_t *slot, struct arch_emul *em);
int arm_emul_slot(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
		  uint8_t *slot);
bool arm_after_call(const uint8_t *code, uint64_t ret, uint64_t *target);
int arm_entry_scan(uint64_t value, const uint8_t *code, size_t size, size_t len);
int arm_entry_relocate(uint64_t addr, const uint8_t *insn, size_t len, size_t need,
		       uint64_t at, uint8_t *buf, size_t *covered);
int arm_entry_branch(uint64_t addr, uint64_t to, uint8_t *buf);
size_t arm_entry_thunk(uint8_t *buf, uint64_t at, uint32_t word, uint64_t common);

#endif
