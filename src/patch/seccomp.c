// SPDX-License-Identifier: GPL-2.0-only
/*
 * A classic BPF interpreter for seccomp filters, with the kernel's semantics: what
 * seccomp_check_filter and bpf_check_classic accept, run as the kernel's conversion to eBPF
 * runs it (32-bit A and X starting at 0, loads from struct seccomp_data in host byte order).
 */
#include <errno.h>
#include <string.h>

#include "patch/seccomp.h"

#define SC_DATA_LEN ((uint32_t)sizeof(struct seccomp_data))
#define SC_CODE_BITS (BPF_CLASS(0xff) | BPF_OP(0xff) | BPF_SRC(0xff)) /* code is 16 bits wide */

/* A = A op v for ALU instruction code (all but NEG). Return 0, 1 when it divides by X = 0
 * (the kernel's conversion then ends the program with 0), or -EINVAL outside the dialect. */
static int alu(uint16_t code, uint32_t *a, uint32_t v)
{
	if (code & ~SC_CODE_BITS)
		return -EINVAL;
	switch (BPF_OP(code)) {
	case BPF_ADD:
		*a += v;
		return 0;
	case BPF_SUB:
		*a -= v;
		return 0;
	case BPF_MUL:
		*a *= v;
		return 0;
	case BPF_DIV:
		if (!v) /* a constant 0 is refused at load time */
			return BPF_SRC(code) == BPF_K ? -EINVAL : 1;
		*a /= v;
		return 0;
	case BPF_AND:
		*a &= v;
		return 0;
	case BPF_OR:
		*a |= v;
		return 0;
	case BPF_XOR:
		*a ^= v;
		return 0;
	case BPF_LSH:
	case BPF_RSH:
		/* a constant must be below 32; X is masked, as eBPF's 32-bit shifts do */
		if (BPF_SRC(code) == BPF_K && v >= 32)
			return -EINVAL;
		*a = BPF_OP(code) == BPF_LSH ? *a << (v & 31) : *a >> (v & 31);
		return 0;
	default: /* BPF_MOD and the rest are not in the seccomp dialect */
		return -EINVAL;
	}
}

/* Whether conditional jump code is taken for A and v: 1 or 0, or -EINVAL. */
static int jump_taken(uint16_t code, uint32_t a, uint32_t v)
{
	if (code & ~SC_CODE_BITS)
		return -EINVAL;
	switch (BPF_OP(code)) {
	case BPF_JEQ:
		return a == v;
	case BPF_JGT:
		return a > v;
	case BPF_JGE:
		return a >= v;
	case BPF_JSET:
		return (a & v) != 0;
	default:
		return -EINVAL;
	}
}

int sc_run(const struct sock_filter *insns, size_t len, const struct seccomp_data *d,
	   uint32_t *ret)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	unsigned written = 0; /* scratch words stored on this path */
	size_t pc = 0, steps = 0;

	if (!insns || len == 0 || len > BPF_MAXINSNS)
		return -EINVAL;
	if (insns[len - 1].code != (BPF_RET | BPF_K) && insns[len - 1].code != (BPF_RET | BPF_A))
		return -EINVAL; /* the kernel wants a return last, taken or not */
	/* jumps only go forward, so len steps are enough; the bound holds even if not */
	while (pc < len && steps++ < len) {
		const struct sock_filter *f = &insns[pc++];
		uint32_t k = f->k, v = BPF_SRC(f->code) == BPF_X ? x : k;
		int r;

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k >= SC_DATA_LEN || (k & 3))
				return -EINVAL;
			memcpy(&a, (const char *)d + k, 4);
			continue;
		case BPF_LD | BPF_W | BPF_LEN:
			a = SC_DATA_LEN;
			continue;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = SC_DATA_LEN;
			continue;
		case BPF_LD | BPF_IMM:
			a = k;
			continue;
		case BPF_LDX | BPF_IMM:
			x = k;
			continue;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
			if (k >= BPF_MEMWORDS || !(written & (1u << k)))
				return -EINVAL;
			*(BPF_CLASS(f->code) == BPF_LD ? &a : &x) = mem[k];
			continue;
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return -EINVAL;
			mem[k] = f->code == BPF_ST ? a : x;
			written |= 1u << k;
			continue;
		case BPF_MISC | BPF_TAX:
			x = a;
			continue;
		case BPF_MISC | BPF_TXA:
			a = x;
			continue;
		case BPF_ALU | BPF_NEG:
			a = -a;
			continue;
		case BPF_RET | BPF_K:
			*ret = k;
			return 0;
		case BPF_RET | BPF_A:
			*ret = a;
			return 0;
		case BPF_JMP | BPF_JA:
			if (k >= len - pc) /* the kernel: k < flen - pc - 1, before the increment */
				return -EINVAL;
			pc += k;
			continue;
		default:
			break;
		}
		if (BPF_CLASS(f->code) == BPF_ALU) {
			r = alu(f->code, &a, v);
			if (r < 0)
				return r;
			if (r) {
				*ret = 0;
				return 0;
			}
			continue;
		}
		r = BPF_CLASS(f->code) == BPF_JMP ? jump_taken(f->code, a, v) : -EINVAL;
		if (r < 0)
			return r;
		/* the kernel checks both branches at load time: so do we, whichever is taken */
		if (f->jt >= len - pc || f->jf >= len - pc)
			return -EINVAL;
		pc += r ? f->jt : f->jf;
	}
	return -EINVAL; /* unreachable: the last instruction returns */
}

/* The kernel's ACTION_ONLY(): the action bits, compared as a signed value (KILL_PROCESS < 0). */
static int32_t action_rank(uint32_t r)
{
	return (int32_t)(r & SECCOMP_RET_ACTION_FULL);
}

uint32_t sc_run_all(const struct sc_prog *progs, size_t n, const struct seccomp_data *d)
{
	uint32_t ret = SECCOMP_RET_ALLOW;

	if (n == 0)
		return SECCOMP_RET_KILL_PROCESS;
	for (size_t i = 0; i < n; i++) {
		uint32_t cur;

		if (sc_run(progs[i].insns, progs[i].len, d, &cur))
			cur = SECCOMP_RET_KILL_PROCESS;
		if (action_rank(cur) < action_rank(ret))
			ret = cur;
	}
	return ret;
}

bool sc_allows(uint32_t r)
{
	r &= SECCOMP_RET_ACTION_FULL;
	return r == SECCOMP_RET_ALLOW || r == SECCOMP_RET_LOG;
}

const char *sc_action_name(uint32_t r)
{
	switch (r & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_KILL_PROCESS:
		return "kill-process";
	case SECCOMP_RET_KILL_THREAD:
		return "kill-thread";
	case SECCOMP_RET_TRAP:
		return "trap";
	case SECCOMP_RET_ERRNO:
		return "errno";
	case SECCOMP_RET_USER_NOTIF:
		return "user-notif";
	case SECCOMP_RET_TRACE:
		return "trace";
	case SECCOMP_RET_LOG:
		return "log";
	case SECCOMP_RET_ALLOW:
		return "allow";
	default:
		return "unknown (a kill)";
	}
}
