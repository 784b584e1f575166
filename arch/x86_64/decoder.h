/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_X86_DECODER_H
#define HEAPTRACE_X86_DECODER_H

/*
 * An x86-64 instruction-length decoder for whole compiled functions (decoder.c): where each
 * instruction ends, where its relative branch goes and where a RIP-relative operand points.
 * Pure code: the unit tests build it on any host.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum x86_flow {
	X86_NEXT, /* falls through (a call through a register or memory included) */
	X86_REL, /* jmp, jcc, call, loop, jrcxz or xbegin to target */
	X86_INDIRECT, /* jmp through a register or memory: where to is not in the code */
};

struct x86_dec {
	size_t len;
	enum x86_flow flow;
	uint64_t target; /* X86_REL: the branch's target */
	bool rip; /* it has a RIP-relative memory operand at rip_addr */
	uint64_t rip_addr;
};

/*
 * Decode the instruction at code[0..n), at address pc. Return 0 and fill *d, or -EXDEV if the
 * bytes are not a whole instruction valid in 64-bit mode that this decoder knows for certain
 * (3DNow!, XOP, AVX-512 FP16 and APX maps, opcodes invalid in 64-bit mode included).
 */
int x86_dec_insn(const uint8_t *code, size_t n, uint64_t pc, struct x86_dec *d);

/* True if the instruction d (of a function at value) may lead into (value, value + len): a
 * relative branch or a RIP-relative operand there, or a jump through a register or indexed
 * memory (one through a RIP-relative pointer is a tail call to some function's entry). */
bool x86_dec_enters(const struct x86_dec *d, uint64_t value, size_t len);

/*
 * The patch-safety rule (arch.h entry_scan) for the size bytes at code of the function at
 * value: 0 if every byte decodes, no direct branch or RIP-relative operand points into
 * (value, value + len) and nothing jumps through a register or memory other than a RIP-relative
 * pointer; -EXDEV otherwise.
 */
int x86_entry_scan(uint64_t value, const uint8_t *code, size_t size, size_t len);

/* The RIP-relative operands of the instructions in code[0..size) at pc, in order, until one
 * does not decode or max are found (arch.h pc_data_refs). */
unsigned x86_pc_data_refs(uint64_t pc, const uint8_t *code, size_t size, uint64_t *out,
			  unsigned max);

#endif
