// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86-64 instruction lengths and control flow for the entry stubs' patch-safety rule
 * (decoder.h), from the opcode maps of the Intel SDM volume 2 (appendix A) in 64-bit mode.
 * What it does not know for certain it refuses: a refusal costs a function its stub (it keeps
 * its breakpoint), a wrong length could hide a branch into the patched bytes.
 */
#include <errno.h>
#include <string.h>

#include "decoder.h"

enum {
	F_M = 1 << 0, /* ModRM (and SIB, displacement) follow the opcode */
	F_I8 = 1 << 1, /* imm8 */
	F_I16 = 1 << 2, /* imm16 */
	F_IZ = 1 << 3, /* imm16 with 66 (and no REX.W), else imm32 */
	F_IV = 1 << 4, /* mov r, imm: imm64 with REX.W, imm16 with 66, else imm32 */
	F_MOFFS = 1 << 5, /* a 64-bit address, 32-bit with 67 */
	F_REL8 = 1 << 6, /* rel8 branch */
	F_REL32 = 1 << 7, /* rel32 branch (rel16 with 66: refused) */
	F_GRP = 1 << 8, /* the ModRM reg field changes the rule: group() */
	F_BAD = 1 << 9, /* invalid in 64-bit mode, a prefix out of place, or not known here */
};

#define R(a, b, f) [a ... b] = (f)

/* The one-byte map. 0F, 62 (EVEX), C4 and C5 (VEX) are escapes handled before it is read. */
static const uint16_t map1[256] = {
	R(0x00, 0x03, F_M), [0x04] = F_I8, [0x05] = F_IZ, R(0x06, 0x07, F_BAD),
	R(0x08, 0x0b, F_M), [0x0c] = F_I8, [0x0d] = F_IZ, R(0x0e, 0x0f, F_BAD),
	R(0x10, 0x13, F_M), [0x14] = F_I8, [0x15] = F_IZ, R(0x16, 0x17, F_BAD),
	R(0x18, 0x1b, F_M), [0x1c] = F_I8, [0x1d] = F_IZ, R(0x1e, 0x1f, F_BAD),
	R(0x20, 0x23, F_M), [0x24] = F_I8, [0x25] = F_IZ, R(0x26, 0x27, F_BAD),
	R(0x28, 0x2b, F_M), [0x2c] = F_I8, [0x2d] = F_IZ, R(0x2e, 0x2f, F_BAD),
	R(0x30, 0x33, F_M), [0x34] = F_I8, [0x35] = F_IZ, R(0x36, 0x37, F_BAD),
	R(0x38, 0x3b, F_M), [0x3c] = F_I8, [0x3d] = F_IZ, R(0x3e, 0x3f, F_BAD),
	R(0x40, 0x4f, F_BAD), /* REX not right before the opcode */
	R(0x50, 0x5f, 0),
	R(0x60, 0x62, F_BAD), [0x63] = F_M, R(0x64, 0x67, F_BAD),
	[0x68] = F_IZ, [0x69] = F_M | F_IZ, [0x6a] = F_I8, [0x6b] = F_M | F_I8, R(0x6c, 0x6f, 0),
	R(0x70, 0x7f, F_REL8),
	[0x80] = F_M | F_I8, [0x81] = F_M | F_IZ, [0x82] = F_BAD, [0x83] = F_M | F_I8,
	R(0x84, 0x8e, F_M), [0x8f] = F_M | F_GRP,
	R(0x90, 0x99, 0), [0x9a] = F_BAD, R(0x9b, 0x9f, 0),
	R(0xa0, 0xa3, F_MOFFS), R(0xa4, 0xa7, 0), [0xa8] = F_I8, [0xa9] = F_IZ, R(0xaa, 0xaf, 0),
	R(0xb0, 0xb7, F_I8), R(0xb8, 0xbf, F_IV),
	[0xc0] = F_M | F_I8, [0xc1] = F_M | F_I8, [0xc2] = F_I16, [0xc3] = 0,
	R(0xc4, 0xc5, F_BAD), [0xc6] = F_M | F_GRP, [0xc7] = F_M | F_GRP,
	[0xc8] = F_I16 | F_I8, [0xc9] = 0, [0xca] = F_I16, [0xcb] = 0, [0xcc] = 0, [0xcd] = F_I8,
	[0xce] = F_BAD, [0xcf] = 0,
	R(0xd0, 0xd3, F_M), R(0xd4, 0xd6, F_BAD), [0xd7] = 0, R(0xd8, 0xdf, F_M),
	R(0xe0, 0xe3, F_REL8), R(0xe4, 0xe7, F_I8), R(0xe8, 0xe9, F_REL32), [0xea] = F_BAD,
	[0xeb] = F_REL8, R(0xec, 0xef, 0),
	[0xf0] = F_BAD, [0xf1] = 0, R(0xf2, 0xf3, F_BAD), R(0xf4, 0xf5, 0),
	R(0xf6, 0xf7, F_M | F_GRP), R(0xf8, 0xfd, 0), R(0xfe, 0xff, F_M | F_GRP),
};

/* The two-byte map (0F xx). 0F 38 and 0F 3A are escapes handled before it is read. */
static const uint16_t map2[256] = {
	R(0x00, 0x03, F_M), [0x04] = F_BAD, R(0x05, 0x09, 0), [0x0a] = F_BAD, [0x0b] = 0,
	[0x0c] = F_BAD, [0x0d] = F_M, R(0x0e, 0x0f, F_BAD), /* femms, 3DNow! */
	R(0x10, 0x1f, F_M),
	R(0x20, 0x23, F_M), R(0x24, 0x27, F_BAD), R(0x28, 0x2f, F_M),
	R(0x30, 0x35, 0), [0x36] = F_BAD, [0x37] = 0, R(0x38, 0x3f, F_BAD),
	R(0x40, 0x4f, F_M),
	R(0x50, 0x6f, F_M),
	R(0x70, 0x73, F_M | F_I8), R(0x74, 0x76, F_M), [0x77] = 0, R(0x78, 0x79, F_M | F_GRP),
	R(0x7a, 0x7b, F_BAD), R(0x7c, 0x7f, F_M),
	R(0x80, 0x8f, F_REL32),
	R(0x90, 0x9f, F_M),
	R(0xa0, 0xa2, 0), [0xa3] = F_M, [0xa4] = F_M | F_I8, [0xa5] = F_M, R(0xa6, 0xa7, F_BAD),
	R(0xa8, 0xaa, 0), [0xab] = F_M, [0xac] = F_M | F_I8, R(0xad, 0xaf, F_M),
	R(0xb0, 0xb7, F_M), [0xb8] = F_M | F_GRP, [0xb9] = F_M, [0xba] = F_M | F_I8 | F_GRP,
	R(0xbb, 0xbf, F_M),
	R(0xc0, 0xc1, F_M), [0xc2] = F_M | F_I8, [0xc3] = F_M, R(0xc4, 0xc6, F_M | F_I8),
	[0xc7] = F_M, R(0xc8, 0xcf, 0),
	R(0xd0, 0xff, F_M),
};

/* 0F 38 xx (ModRM, no immediate) and 0F 3A xx (ModRM, imm8) without VEX or EVEX: the opcodes
 * the SDM defines; the rest are refused. */
static const uint8_t map38_ok[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x10, 0x14,
	0x15, 0x17, 0x1c, 0x1d, 0x1e, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x28, 0x29, 0x2a,
	0x2b, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x37, 0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d,
	0x3e, 0x3f, 0x40, 0x41, 0x80, 0x81, 0x82, 0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xcf,
	0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xf0, 0xf1, 0xf5, 0xf6, 0xf8, 0xf9,
};
static const uint8_t map3a_ok[] = {
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x14, 0x15, 0x16, 0x17, 0x20, 0x21,
	0x22, 0x40, 0x41, 0x42, 0x44, 0x60, 0x61, 0x62, 0x63, 0xcc, 0xce, 0xcf, 0xdf,
};

#undef R

static bool in_list(const uint8_t *list, size_t n, uint8_t op)
{
	return memchr(list, op, n) != NULL;
}

/* What a decode has seen so far. */
struct state {
	const uint8_t *p;
	size_t n, i;
	bool o16, a32, rexw, rep, repne, lock;
	bool vex; /* VEX or EVEX: the opcode maps of those prefixes */
	int map; /* 1: one byte, 2: 0F, 3: 0F 38, 4: 0F 3A */
	uint8_t op;
};

static int get(struct state *s, uint8_t *b)
{
	if (s->i >= s->n)
		return -EXDEV;
	*b = s->p[s->i++];
	return 0;
}

/* The flags of an opcode whose reg field (reg, mod) picks the form; F_BAD if invalid. */
static int group(const struct state *s, int flags, uint8_t modrm)
{
	unsigned reg = (modrm >> 3) & 7, mod = modrm >> 6;

	if (s->map == 2) {
		if (s->op == 0x78 || s->op == 0x79) /* vmread/vmwrite; SSE4a's extrq/insertq */
			return s->o16 || s->repne ? F_BAD : flags & ~F_GRP;
		if (s->op == 0xb8) /* popcnt; jmpe without F3 */
			return s->rep ? flags & ~F_GRP : F_BAD;
		return reg >= 4 ? flags & ~F_GRP : F_BAD; /* 0F BA: bt, bts, btr, btc */
	}
	switch (s->op) {
	case 0x8f: /* pop r/m; the rest is AMD's XOP */
		return reg == 0 ? F_M : F_BAD;
	case 0xc6: /* mov r/m8, imm8; xabort */
		return reg == 0 || modrm == 0xf8 ? F_M | F_I8 : F_BAD;
	case 0xc7: /* mov r/m, imm; xbegin */
		return reg == 0 ? F_M | F_IZ : modrm == 0xf8 ? F_M | F_REL32 : F_BAD;
	case 0xf6: /* test r/m8, imm8 (and /1, its alias); not, neg, mul, imul, div, idiv */
		return reg <= 1 ? F_M | F_I8 : F_M;
	case 0xf7:
		return reg <= 1 ? F_M | F_IZ : F_M;
	case 0xfe: /* inc, dec r/m8 */
		return reg <= 1 ? F_M : F_BAD;
	case 0xff: /* inc dec call callf jmp jmpf push */
		if (reg == 7 || ((reg == 3 || reg == 5) && mod == 3))
			return F_BAD;
		return F_M;
	}
	return F_BAD;
}

/* ModRM, SIB and displacement: sets d->rip and the offset of a RIP-relative disp32. */
static int modrm_rest(struct state *s, uint8_t modrm, struct x86_dec *d, size_t *disp_at)
{
	unsigned mod = modrm >> 6, rm = modrm & 7;
	uint8_t sib;

	if (mod == 3)
		return 0;
	if (rm == 4) {
		if (get(s, &sib))
			return -EXDEV;
		if (mod == 0 && (sib & 7) == 5)
			mod = 2; /* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		if (s->a32)
			return -EXDEV; /* EIP-relative: not in compiled code */
		d->rip = true;
		*disp_at = s->i;
		mod = 2;
	}
	s->i += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return s->i > s->n ? -EXDEV : 0;
}

/* Immediate bytes of flags. */
static size_t imm_size(const struct state *s, int flags)
{
	size_t k = 0;

	if (flags & F_I8)
		k += 1;
	if (flags & F_I16)
		k += 2;
	if (flags & F_IZ)
		k += s->o16 && !s->rexw ? 2 : 4;
	if (flags & F_IV)
		k += s->rexw ? 8 : s->o16 ? 2 : 4;
	if (flags & F_MOFFS)
		k += s->a32 ? 4 : 8;
	return k;
}

/* The VEX (C4, C5) or EVEX (62) prefix at s->p[s->i - 1]: its map, and s->op read. */
static int vex_prefix(struct state *s, uint8_t esc)
{
	uint8_t b1, b2, b3;

	if (s->o16 || s->rep || s->repne || s->lock)
		return -EXDEV; /* #UD before VEX/EVEX */
	s->vex = true;
	if (get(s, &b1))
		return -EXDEV;
	if (esc == 0xc5) {
		s->map = 2;
	} else if (esc == 0xc4) {
		if (get(s, &b2))
			return -EXDEV;
		if ((b1 & 0x1f) < 1 || (b1 & 0x1f) > 3)
			return -EXDEV;
		s->map = 1 + (b1 & 0x1f);
	} else {
		/* P0: R X B R' 0 0 m m (maps 5 and 6, FP16, and APX are not known here);
		 * P1: W vvvv 1 pp; P2. */
		if (get(s, &b2) || get(s, &b3))
			return -EXDEV;
		if ((b1 & 0x0c) || !(b1 & 3) || !(b2 & 0x04))
			return -EXDEV;
		s->map = 1 + (b1 & 3);
	}
	return get(s, &s->op);
}

/* Flags of a VEX or EVEX opcode: every one has ModRM but vzeroupper/vzeroall (VEX 0F 77);
 * imm8 in map 0F 3A and for 0F 70-73, C2, C4-C6. */
static int vex_flags(const struct state *s, uint8_t esc)
{
	if (s->map == 2 && s->op == 0x77)
		return esc == 0x62 ? F_BAD : 0;
	if (s->map == 4)
		return F_M | F_I8;
	if (s->map == 2 && ((s->op >= 0x70 && s->op <= 0x73) || s->op == 0xc2 ||
			    (s->op >= 0xc4 && s->op <= 0xc6)))
		return F_M | F_I8;
	return F_M;
}

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* Legacy prefixes and REX; s->i is left on the opcode. */
static int prefixes(struct state *s)
{
	for (;;) {
		uint8_t b;

		if (s->i >= s->n || s->i >= 14)
			return -EXDEV;
		b = s->p[s->i];
		switch (b) {
		case 0x66: s->o16 = true; break;
		case 0x67: s->a32 = true; break;
		case 0xf0: s->lock = true; break;
		case 0xf2: s->repne = true; break;
		case 0xf3: s->rep = true; break;
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65: break;
		default:
			if ((b & 0xf0) == 0x40) { /* REX: the last byte before the opcode */
				s->rexw = b & 8;
				s->i++;
				if (s->i < s->n && (s->p[s->i] & 0xf0) == 0x40)
					return -EXDEV;
			}
			return 0;
		}
		s->i++;
	}
}

/* The opcode and its flags, through the escapes. */
static int opcode(struct state *s, int *flags)
{
	uint8_t b;

	if (get(s, &b))
		return -EXDEV;
	if (b == 0xc4 || b == 0xc5 || b == 0x62) {
		if (s->i > 1 && (s->p[s->i - 2] & 0xf0) == 0x40)
			return -EXDEV; /* REX before VEX: #UD */
		if (vex_prefix(s, b))
			return -EXDEV;
		*flags = vex_flags(s, b);
		return 0;
	}
	s->map = 1;
	s->op = b;
	if (b != 0x0f) {
		*flags = map1[b];
		return 0;
	}
	if (get(s, &b))
		return -EXDEV;
	s->map = 2;
	s->op = b;
	if (b == 0x38 || b == 0x3a) {
		s->map = b == 0x38 ? 3 : 4;
		if (get(s, &s->op))
			return -EXDEV;
		if (s->map == 3)
			*flags = in_list(map38_ok, sizeof(map38_ok), s->op) ? F_M : F_BAD;
		else
			*flags = in_list(map3a_ok, sizeof(map3a_ok), s->op) ? F_M | F_I8 : F_BAD;
		return 0;
	}
	*flags = map2[b];
	return 0;
}

int x86_dec_insn(const uint8_t *code, size_t n, uint64_t pc, struct x86_dec *d)
{
	struct state s = { .p = code, .n = n };
	size_t disp_at = 0;
	uint8_t modrm = 0;
	int flags;

	memset(d, 0, sizeof(*d));
	if (prefixes(&s) || opcode(&s, &flags) || (flags & F_BAD))
		return -EXDEV;
	if (flags & F_M) {
		if (get(&s, &modrm))
			return -EXDEV;
		if (flags & F_GRP)
			flags = group(&s, flags, modrm);
		if ((flags & F_BAD) || modrm_rest(&s, modrm, d, &disp_at))
			return -EXDEV;
	}
	if ((flags & (F_REL8 | F_REL32)) && s.o16 && !s.rexw)
		return -EXDEV; /* rel16 or not: the CPUs differ; REX.W wins over 66 on all
				* (66 66 48 e8: the call of a TLS general-dynamic access) */
	s.i += imm_size(&s, flags);
	if (flags & F_REL8)
		s.i += 1;
	if (flags & F_REL32)
		s.i += 4;
	if (s.i > s.n || s.i > 15)
		return -EXDEV;
	d->len = s.i;
	if (disp_at)
		d->rip_addr = pc + s.i + (uint64_t)(int64_t)le32(code + disp_at);
	if (flags & F_REL8) {
		d->flow = X86_REL;
		d->target = pc + s.i + (uint64_t)(int64_t)(int8_t)code[s.i - 1];
	} else if (flags & F_REL32) {
		d->flow = X86_REL;
		d->target = pc + s.i + (uint64_t)(int64_t)le32(code + s.i - 4);
	} else if (s.map == 1 && !s.vex && s.op == 0xff &&
		   (((modrm >> 3) & 7) == 4 || ((modrm >> 3) & 7) == 5)) {
		d->flow = X86_INDIRECT;
	}
	return 0;
}

static bool inside(uint64_t a, uint64_t value, size_t len)
{
	return a > value && a < value + len;
}

/*
 * A jump through a RIP-relative pointer (jmp *X(%rip): no register, no index, so no jump table)
 * is a tail call through a function pointer or a GOT entry (CPython's PyObject_Malloc through
 * its allocator table, code built with -fno-plt): it goes to a function's entry, not into the
 * bytes of this one's. Only one through a register, or indexed memory, may go anywhere.
 */
bool x86_dec_enters(const struct x86_dec *d, uint64_t value, size_t len)
{
	return (d->flow == X86_INDIRECT && !d->rip) ||
	       (d->flow == X86_REL && inside(d->target, value, len)) ||
	       (d->rip && inside(d->rip_addr, value, len));
}

int x86_entry_scan(uint64_t value, const uint8_t *code, size_t size, size_t len)
{
	for (size_t off = 0; off < size;) {
		struct x86_dec d;

		if (x86_dec_insn(code + off, size - off, value + off, &d) ||
		    x86_dec_enters(&d, value, len))
			return -EXDEV;
		off += d.len;
	}
	return 0;
}

unsigned x86_pc_data_refs(uint64_t pc, const uint8_t *code, size_t size, uint64_t *out,
			  unsigned max)
{
	unsigned n = 0;

	for (size_t off = 0; off < size && n < max;) {
		struct x86_dec d;

		if (x86_dec_insn(code + off, size - off, pc + off, &d))
			break;
		if (d.rip)
			out[n++] = d.rip_addr;
		off += d.len;
	}
	return n;
}
