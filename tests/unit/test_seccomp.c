// SPDX-License-Identifier: GPL-2.0-only
/* The seccomp filter interpreter: results, the kernel's precedence across filters, loads of
 * 64-bit arguments word by word, and the programs the kernel would refuse to run. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "patch/seccomp.h"
#include "unittest.h"

#define ARCH_X86_64 0xc000003eU /* AUDIT_ARCH_X86_64 */
#define NR_MMAP 9
#define NR_MPROTECT 10
#define NR_GETPID 39

#define OFF(field) offsetof(struct seccomp_data, field)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (OFF(args) + 8 * (i))
#define ARG_HI(i) (OFF(args) + 8 * (i) + 4)
#else
#define ARG_LO(i) (OFF(args) + 8 * (i) + 4)
#define ARG_HI(i) (OFF(args) + 8 * (i))
#endif
#define LEN(prog) (sizeof(prog) / sizeof((prog)[0]))

static struct seccomp_data call(int nr, uint64_t a0, uint64_t a2)
{
	struct seccomp_data d = { .nr = nr, .arch = ARCH_X86_64, .instruction_pointer = 0x401002 };

	d.args[0] = a0;
	d.args[2] = a2;
	return d;
}

static uint32_t run1(const struct sock_filter *f, size_t len, struct seccomp_data d)
{
	uint32_t r = 0xdeadbeef;

	if (sc_run(f, len, &d, &r))
		return 0xdeadbeef;
	return r;
}

/* A real filter's shape: wrong arch kills, mmap kills, everything else is allowed. */
static const struct sock_filter kill_mmap[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF(arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_MMAP, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static const struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };

TEST_CASE(allow_and_kill)
{
	struct seccomp_data d = call(NR_GETPID, 0, 0);
	struct sc_prog one = { kill_mmap, LEN(kill_mmap) };

	CHECK_EQ(run1(allow, 1, d), SECCOMP_RET_ALLOW);
	CHECK_EQ(run1(kill_mmap, LEN(kill_mmap), d), SECCOMP_RET_ALLOW);
	CHECK(sc_allows(sc_run_all(&one, 1, &d)));
	d = call(NR_MMAP, 0, PROT_READ | PROT_EXEC);
	CHECK_EQ(run1(kill_mmap, LEN(kill_mmap), d), SECCOMP_RET_KILL_PROCESS);
	CHECK(!sc_allows(sc_run_all(&one, 1, &d)));
	CHECK_STREQ(sc_action_name(sc_run_all(&one, 1, &d)), "kill-process");
	d = call(NR_GETPID, 0, 0);
	d.arch = 0x40000003; /* AUDIT_ARCH_I386: the filter's arch check kills */
	CHECK_EQ(run1(kill_mmap, LEN(kill_mmap), d), SECCOMP_RET_KILL_PROCESS);
}

TEST_CASE(errno_and_the_other_actions)
{
	struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM) };
	struct sc_prog p = { f, 1 };
	struct seccomp_data d = call(NR_MMAP, 0, 0);
	static const uint32_t refused[] = { SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP | 7,
					    SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_USER_NOTIF,
					    SECCOMP_RET_TRACE | 1, 0x7fe00000 /* unknown */ };

	CHECK_EQ(sc_run_all(&p, 1, &d), SECCOMP_RET_ERRNO | EPERM); /* the data is kept */
	CHECK_STREQ(sc_action_name(SECCOMP_RET_ERRNO | EPERM), "errno");
	for (size_t i = 0; i < LEN(refused); i++) {
		f[0].k = refused[i];
		CHECK(!sc_allows(sc_run_all(&p, 1, &d)));
	}
	CHECK(sc_allows(SECCOMP_RET_LOG));
	CHECK(sc_allows(SECCOMP_RET_ALLOW | 0x1234)); /* data bits do not change the action */
}

/* Two filters: the lowest action wins whatever their order, KILL_PROCESS (negative) first. */
TEST_CASE(precedence_across_filters)
{
	static const uint32_t order[] = { SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD,
					  SECCOMP_RET_TRAP, SECCOMP_RET_ERRNO | 1,
					  SECCOMP_RET_USER_NOTIF, SECCOMP_RET_TRACE,
					  SECCOMP_RET_LOG, SECCOMP_RET_ALLOW };
	struct sock_filter a[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	struct sock_filter b[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	struct sc_prog ab[] = { { a, 1 }, { b, 1 } }, ba[] = { { b, 1 }, { a, 1 } };
	struct seccomp_data d = call(NR_MMAP, 0, 0);

	for (size_t i = 0; i < LEN(order); i++) {
		for (size_t j = 0; j < LEN(order); j++) {
			uint32_t want = order[i < j ? i : j];

			a[0].k = order[i];
			b[0].k = order[j];
			CHECK_EQ(sc_run_all(ab, 2, &d), want);
			CHECK_EQ(sc_run_all(ba, 2, &d), want);
		}
	}
	/* one filter allows, the other kills mmap: the kill wins */
	struct sc_prog mixed[] = { { allow, 1 }, { kill_mmap, LEN(kill_mmap) } };

	CHECK_EQ(sc_run_all(mixed, 2, &d), SECCOMP_RET_KILL_PROCESS);
	d.nr = NR_GETPID;
	CHECK_EQ(sc_run_all(mixed, 2, &d), SECCOMP_RET_ALLOW);
	/* LOG and ALLOW: LOG, still allowed */
	a[0].k = SECCOMP_RET_LOG;
	b[0].k = SECCOMP_RET_ALLOW;
	CHECK(sc_allows(sc_run_all(ab, 2, &d)));
}

/*
 * 64-bit arguments are loaded one 32-bit word at a time, as libseccomp compiles them: kill
 * mmap/mprotect with PROT_EXEC in args[2] (low word), and errno for args[0] >= 0x7f0000000000
 * (high word compared first, then the low word).
 */
TEST_CASE(argument_words)
{
	static const struct sock_filter f[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_MMAP, 1, 0),
		/* 2 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_MPROTECT, 0, 9),
		/* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
		/* 4 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
		/* 5 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		/* 6 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(0)),
		/* 7 */ BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 0x7f00, 3, 0),
		/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x7f00, 0, 3),
		/* 9 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		/* 10 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0, 0, 1),
		/* 11 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		/* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	CHECK_EQ(run1(f, LEN(f), call(NR_MMAP, 0, PROT_READ | PROT_EXEC)),
		 SECCOMP_RET_KILL_PROCESS);
	CHECK_EQ(run1(f, LEN(f), call(NR_MPROTECT, 0, PROT_EXEC)), SECCOMP_RET_KILL_PROCESS);
	CHECK_EQ(run1(f, LEN(f), call(NR_MPROTECT, 0, PROT_READ | PROT_WRITE)), SECCOMP_RET_ALLOW);
	/* PROT_EXEC only in the high word of args[2]: the low word is what counts */
	CHECK_EQ(run1(f, LEN(f), call(NR_MMAP, 0, (uint64_t)PROT_EXEC << 32)), SECCOMP_RET_ALLOW);
	CHECK_EQ(run1(f, LEN(f), call(NR_MMAP, 0x7effffffffffULL, PROT_READ)), SECCOMP_RET_ALLOW);
	CHECK_EQ(run1(f, LEN(f), call(NR_MMAP, 0x7f0000000000ULL, PROT_READ)),
		 SECCOMP_RET_ERRNO | EPERM);
	CHECK_EQ(run1(f, LEN(f), call(NR_MMAP, 0x7f0100000000ULL, PROT_READ)),
		 SECCOMP_RET_ERRNO | EPERM);
	CHECK_EQ(run1(f, LEN(f), call(NR_GETPID, 0x7f0100000000ULL, PROT_EXEC)), SECCOMP_RET_ALLOW);
}

/* The instruction pointer, both words, and the rest of the dialect: ALU, X, scratch memory. */
TEST_CASE(pointer_alu_and_memory)
{
	static const struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF(instruction_pointer) + 4),
		BPF_STMT(BPF_ST, 3), /* M[3] = high word */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF(instruction_pointer)),
		BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 4),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
		BPF_STMT(BPF_MISC | BPF_TAX, 0), /* X = (ip >> 4) & 0xff */
		BPF_STMT(BPF_LD | BPF_MEM, 3),
		BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 3),
		BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0), /* A = 3 * high + X */
		BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 1),
		BPF_STMT(BPF_ALU | BPF_XOR | BPF_K, 0x100),
		BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	static const struct sock_filter g[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0), /* 64 */
		BPF_STMT(BPF_LDX | BPF_IMM, 6),
		BPF_STMT(BPF_ALU | BPF_SUB | BPF_X, 0), /* 58 */
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 2), /* 29 */
		BPF_STMT(BPF_ALU | BPF_NEG, 0),
		BPF_STMT(BPF_ALU | BPF_NEG, 0),
		BPF_STMT(BPF_STX, 0), /* M[0] = 6 */
		BPF_STMT(BPF_LDX | BPF_MEM, 0),
		BPF_STMT(BPF_ALU | BPF_RSH | BPF_X, 0), /* 29 >> 6 = 0 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct seccomp_data d = call(NR_MMAP, 0, 0);

	d.instruction_pointer = 0x00000002000004a0ULL;
	CHECK_EQ(run1(f, LEN(f), d), SECCOMP_RET_ERRNO | (((3 * 2 + 0x4a) << 1) ^ 0x100));
	CHECK_EQ(run1(g, LEN(g), d), SECCOMP_RET_ERRNO | 6);
}

/* The kernel's conversion runs "A / X" with X = 0 as "return 0": KILL_THREAD, refused. */
TEST_CASE(division_by_x_zero)
{
	static const struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_IMM, 10),
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	CHECK_EQ(run1(f, LEN(f), call(NR_MMAP, 0, 0)), SECCOMP_RET_KILL_THREAD);
}

static void check_malformed(const struct sock_filter *f, size_t len, const char *what)
{
	struct seccomp_data d = call(NR_MMAP, 0, 0);
	struct sc_prog p = { f, len };
	uint32_t r;

	if (sc_run(f, len, &d, &r) != -EINVAL)
		UNITTEST_FAIL("%s: not refused", what);
	if (sc_run_all(&p, 1, &d) != SECCOMP_RET_KILL_PROCESS)
		UNITTEST_FAIL("%s: does not count as a kill", what);
}

TEST_CASE(bad_jumps)
{
	struct sock_filter jeq[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_MMAP, 2, 0), /* taken: past the end */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter untaken[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_MMAP, 0, 5), /* false branch out */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter ja[] = {
		BPF_STMT(BPF_JMP | BPF_JA, 1), /* onto the end */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter ja_huge[] = {
		BPF_STMT(BPF_JMP | BPF_JA, 0xffffffffU), /* wraps around in 32 bits */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter ja_ok[] = {
		BPF_STMT(BPF_JMP | BPF_JA, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	check_malformed(jeq, LEN(jeq), "a taken jump past the end");
	check_malformed(untaken, LEN(untaken), "an untaken jump past the end");
	check_malformed(ja, LEN(ja), "ja onto the end");
	check_malformed(ja_huge, LEN(ja_huge), "ja by 2^32 - 1");
	CHECK_EQ(run1(ja_ok, LEN(ja_ok), call(NR_MMAP, 0, 0)), SECCOMP_RET_ALLOW);
}

TEST_CASE(empty_and_malformed_programs)
{
	static struct sock_filter big[BPF_MAXINSNS + 1];
	struct sock_filter no_ret[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF(nr)) };
	struct sock_filter beyond[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64),
					BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter unaligned[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
					   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter byte_load[] = { BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
					   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter mod[] = { BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3),
				     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter div0[] = { BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
				      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter shift[] = { BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32),
				       BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter unwritten[] = { BPF_STMT(BPF_LD | BPF_MEM, 5),
					   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter mem_index[] = { BPF_STMT(BPF_ST, BPF_MEMWORDS),
					   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter ret_x[] = { BPF_STMT(BPF_RET | BPF_X, 0) };
	struct sock_filter high_bits[] = { BPF_STMT(0x100 | BPF_ALU | BPF_ADD | BPF_K, 1),
					   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter early_ret[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
					   BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF(nr)) };
	struct seccomp_data d = call(NR_MMAP, 0, 0);

	check_malformed(allow, 0, "an empty program");
	check_malformed(NULL, 0, "no program");
	CHECK_EQ(sc_run_all(NULL, 0, &d), SECCOMP_RET_KILL_PROCESS); /* mode 2 with no filter */
	for (size_t i = 0; i < LEN(big); i++)
		big[i] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	check_malformed(big, LEN(big), "4097 instructions");
	CHECK_EQ(run1(big, BPF_MAXINSNS, d), SECCOMP_RET_ALLOW); /* 4096 are fine */
	check_malformed(no_ret, LEN(no_ret), "no return");
	check_malformed(early_ret, LEN(early_ret), "a last instruction that is no return");
	check_malformed(beyond, LEN(beyond), "a load past seccomp_data");
	check_malformed(unaligned, LEN(unaligned), "an unaligned load");
	check_malformed(byte_load, LEN(byte_load), "a byte load");
	check_malformed(mod, LEN(mod), "BPF_MOD");
	check_malformed(div0, LEN(div0), "a division by constant 0");
	check_malformed(shift, LEN(shift), "a shift by 32");
	check_malformed(unwritten, LEN(unwritten), "scratch memory read before written");
	check_malformed(mem_index, LEN(mem_index), "scratch memory index 16");
	check_malformed(ret_x, LEN(ret_x), "return X");
	check_malformed(high_bits, LEN(high_bits), "an opcode with bits above 8");
}

TEST_CASE(audit_arch_of_each_arch)
{
	CHECK_EQ(arch_x86_64_ops.audit_arch, 0xc000003eU);
	CHECK_EQ(arch_aarch64_ops.audit_arch, 0xc00000b7U);
	CHECK_EQ(arch_arm_ops.audit_arch, 0x40000028U);
	CHECK_EQ(arch_mips64_ops.audit_arch, 0xc0000008U); /* MIPSEL64: n64, little-endian */
}
