// SPDX-License-Identifier: GPL-2.0-only
/* The x86_64 arch layer: breakpoint encoding, register slots, and displacing the first
 * instructions of glibc's and musl's malloc family (from objdump of Debian 12's amd64 glibc
 * 2.36 and musl 1.2.3). */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "unittest.h"

static const struct arch_ops *x = &arch_x86_64_ops;

#define LIBC 0x7f0000098930ULL
#define SLOT 0x7f0000001020ULL

static int displace(const uint8_t *code, size_t n, uint8_t *slot, struct arch_emul *em)
{
	uint8_t buf[ARCH_MAX_INSN] = { 0 };

	memcpy(buf, code, n);
	return x->displace(LIBC, buf, sizeof(buf), SLOT, slot, em);
}

/* The slot must hold the instruction, then jmp *0(%rip) to the next original one. */
static void check_jump_back(const uint8_t *slot, size_t len)
{
	uint64_t target;

	CHECK_EQ(slot[len], 0xff);
	CHECK_EQ(slot[len + 1], 0x25);
	CHECK_EQ(slot[len + 2] | slot[len + 3] | slot[len + 4] | slot[len + 5], 0);
	memcpy(&target, slot + len + 6, 8);
	CHECK_EQ(target, LIBC + len);
}

TEST_CASE(breakpoint_encoding)
{
	uint8_t buf[ARCH_MAX_INSN];

	CHECK_EQ(x->bp_encode(LIBC, buf), 1);
	CHECK_EQ(buf[0], 0xcc);
	CHECK_EQ(x->bp_addr_from_pc(LIBC + 1), LIBC);
	CHECK_EQ(x->tramp_encode(buf), 1);
	CHECK_EQ(buf[0], 0xcc);
	CHECK_EQ(x->code_addr(LIBC), LIBC);
}

TEST_CASE(register_slots)
{
	struct arch_regs r;

	memset(&r, 0, sizeof(r));
	/* struct user_regs_struct: rdi 14, rsi 13, rdx 12, rcx 11, rax 10, rip 16, rsp 19 */
	r.w64[14] = 1, r.w64[13] = 2, r.w64[12] = 3, r.w64[11] = 4, r.w64[10] = 99;
	r.w64[16] = 0x401000, r.w64[19] = 0x7ffd000;
	CHECK_EQ(x->get_arg(&r, 0), 1);
	CHECK_EQ(x->get_arg(&r, 1), 2);
	CHECK_EQ(x->get_arg(&r, 2), 3);
	CHECK_EQ(x->get_arg(&r, 3), 4);
	CHECK_EQ(x->get_retval(&r), 99);
	CHECK_EQ(x->get_pc(&r), 0x401000);
	CHECK_EQ(x->get_sp(&r), 0x7ffd000);
	x->set_pc(&r, 0x402000);
	CHECK_EQ(r.w64[16], 0x402000);
	CHECK(x->ret_on_stack);
	CHECK_EQ(x->ret_sp_adjust, 8);
}

TEST_CASE(push_and_mov_run_out_of_line)
{
	static const uint8_t push_r12[] = { 0x41, 0x54 }, push_rbx[] = { 0x53 },
			     mov_rsi_rax[] = { 0x48, 0x89, 0xf0 }, test_rdi[] = { 0x48, 0x85, 0xff },
			     sub_rsp[] = { 0x48, 0x83, 0xec, 0x18 };
	static const struct { const uint8_t *code; size_t len; } cases[] = {
		{ push_r12, 2 }, { push_rbx, 1 }, { mov_rsi_rax, 3 }, { test_rdi, 3 }, { sub_rsp, 4 },
	};
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		REQUIRE(displace(cases[i].code, cases[i].len, slot, &em) == STEP_XOL);
		CHECK(!memcmp(slot, cases[i].code, cases[i].len));
		check_jump_back(slot, cases[i].len);
	}
}

TEST_CASE(rip_relative_operand_is_rebased)
{
	/* glibc posix_memalign: cmpb $0x0, disp32(%rip) */
	static const uint8_t cmpb[] = { 0x80, 0x3d, 0x10, 0x20, 0x30, 0x00, 0x00 };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	int32_t disp;

	REQUIRE(displace(cmpb, sizeof(cmpb), slot, &em) == STEP_XOL);
	memcpy(&disp, slot + 2, 4);
	/* same absolute target from the slot */
	CHECK_EQ(SLOT + 7 + (int64_t)disp, LIBC + 7 + 0x302010);
	CHECK_EQ(slot[6], 0);
	check_jump_back(slot, 7);
}

/* A PIE executable's first page, terabytes below the scratch page near the libraries */
#define EXE 0x563a74d21660ULL

static int displace_far(const uint8_t *code, size_t n, uint8_t *slot, struct arch_emul *em)
{
	uint8_t buf[ARCH_MAX_INSN] = { 0 };

	memcpy(buf, code, n);
	return x->displace(EXE, buf, sizeof(buf), SLOT, slot, em);
}

/* The slot: push base; movabs $next, base; the instruction with modrm (at modrm_at) addressing
 * disp32(base); pop base; the jump back. */
static void check_far(const uint8_t *slot, const uint8_t *code, size_t len, size_t modrm_at,
		      uint8_t modrm, int base)
{
	uint64_t next;

	CHECK_EQ(slot[0], 0x50 + base);
	CHECK_EQ(slot[1], 0x48);
	CHECK_EQ(slot[2], 0xb8 + base);
	memcpy(&next, slot + 3, 8);
	CHECK_EQ(next, EXE + len);
	for (size_t i = 0; i < len; i++)
		CHECK_EQ(slot[11 + i], i == modrm_at ? modrm : code[i]);
	CHECK_EQ(slot[11 + len], 0x58 + base);
	CHECK_EQ(slot[12 + len], 0xff); /* jmp *0(%rip) */
	CHECK_EQ(slot[13 + len], 0x25);
	memcpy(&next, slot + 12 + len + 6, 8);
	CHECK_EQ(next, EXE + len);
}

TEST_CASE(rip_relative_out_of_reach_uses_a_base_register)
{
	/* gcc -O2's je_malloc in an executable: mov disp32(%rip),%rdx -> mov disp32(%rbx),%rdx;
	 * the disp32 is kept: rbx holds the address after the original instruction */
	static const uint8_t mov[] = { 0x48, 0x8b, 0x15, 0xb9, 0x2a, 0x00, 0x00 };
	/* cmpb $0, disp32(%rip) (reg field /7 = bh): rcx is the base */
	static const uint8_t cmpb[] = { 0x80, 0x3d, 0x10, 0x20, 0x30, 0x00, 0x00 };
	/* REX.B set (mov disp32(%rip),%r8 spelt with a redundant B): B cleared */
	static const uint8_t rexb[] = { 0x4d, 0x8b, 0x05, 0x01, 0x00, 0x00, 0x00 };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	REQUIRE(displace_far(mov, sizeof(mov), slot, &em) == STEP_XOL);
	check_far(slot, mov, sizeof(mov), 2, 0x93, 3);
	REQUIRE(displace_far(cmpb, sizeof(cmpb), slot, &em) == STEP_XOL);
	check_far(slot, cmpb, sizeof(cmpb), 1, 0xb9, 1);
	REQUIRE(displace_far(rexb, sizeof(rexb), slot, &em) == STEP_XOL);
	CHECK_EQ(slot[11], 0x4c);
	CHECK_EQ(slot[13], 0x83);
}

TEST_CASE(rip_relative_out_of_reach_refused)
{
	/* what moves rsp, reads the base itself or names rsp in the reg field */
	static const uint8_t push[] = { 0xff, 0x35, 0x10, 0x20, 0x30, 0x00 },
			     call[] = { 0xff, 0x15, 0x10, 0x20, 0x30, 0x00 },
			     pop[] = { 0x8f, 0x05, 0x10, 0x20, 0x30, 0x00 },
			     sar_cl[] = { 0xd3, 0x3d, 0x10, 0x20, 0x30, 0x00 },
			     cmpxchg16b[] = { 0x48, 0x0f, 0xc7, 0x0d, 0x10, 0x20, 0x30, 0x00 },
			     mov_rsp[] = { 0x48, 0x89, 0x25, 0x10, 0x20, 0x30, 0x00 };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	/* the decoder already refuses call, pop and cmpxchg16b (-ENOTSUP) */
	CHECK_EQ(displace_far(push, sizeof(push), slot, &em), -ERANGE);
	CHECK(displace_far(call, sizeof(call), slot, &em) < 0);
	CHECK(displace_far(pop, sizeof(pop), slot, &em) < 0);
	CHECK_EQ(displace_far(sar_cl, sizeof(sar_cl), slot, &em), -ERANGE);
	CHECK(displace_far(cmpxchg16b, sizeof(cmpxchg16b), slot, &em) < 0);
	CHECK_EQ(displace_far(mov_rsp, sizeof(mov_rsp), slot, &em), -ERANGE);
}

TEST_CASE(jumps_and_endbr_are_emulated)
{
	static const uint8_t jmp32[] = { 0xe9, 0x00, 0x01, 0x00, 0x00 }, jmp8[] = { 0xeb, 0xfe },
			     endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	REQUIRE(displace(jmp32, sizeof(jmp32), slot, &em) == STEP_EMULATE);
	memset(&r, 0, sizeof(r));
	CHECK_EQ(x->emulate(&em, &r), 0);
	CHECK_EQ(x->get_pc(&r), LIBC + 5 + 0x100);
	REQUIRE(displace(jmp8, sizeof(jmp8), slot, &em) == STEP_EMULATE);
	CHECK_EQ(em.target, LIBC);
	REQUIRE(displace(endbr, sizeof(endbr), slot, &em) == STEP_EMULATE);
	CHECK_EQ(em.target, LIBC + 4);
}

TEST_CASE(unknown_instructions_are_refused)
{
	static const uint8_t call[] = { 0xe8, 0, 0, 0, 0 }, jz[] = { 0x74, 0x07 },
			     syscall_[] = { 0x0f, 0x05 };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	CHECK_EQ(displace(call, sizeof(call), slot, &em), -ENOTSUP);
	CHECK_EQ(displace(jz, sizeof(jz), slot, &em), -ENOTSUP);
	CHECK_EQ(displace(syscall_, sizeof(syscall_), slot, &em), -ENOTSUP);
}

TEST_CASE(syscall_injection_and_restart)
{
	struct arch_regs r;
	const uint64_t args[6] = { 1, 2, 3, 4, 5, 6 };

	memset(&r, 0, sizeof(r));
	x->syscall_setup(&r, 0x7f0000001000, 9, args);
	CHECK_EQ(r.w64[16], 0x7f0000001000); /* rip */
	CHECK_EQ(r.w64[10], 9); /* rax */
	CHECK_EQ(r.w64[15], (uint64_t)-1); /* orig_rax: no restart of the injected call */
	CHECK_EQ(r.w64[14], 1); /* rdi */
	CHECK_EQ(r.w64[7], 4); /* r10, not rcx */
	/* a read interrupted with -ERESTARTSYS restarts; one that returned -EINTR does not */
	memset(&r, 0, sizeof(r));
	r.w64[15] = 0, r.w64[10] = (uint64_t)-512, r.w64[16] = 0x1002;
	CHECK(x->syscall_restart(&r));
	CHECK_EQ(r.w64[16], 0x1000);
	CHECK_EQ(r.w64[10], 0);
	r.w64[15] = 35, r.w64[10] = (uint64_t)-516, r.w64[16] = 0x1002;
	CHECK(x->syscall_restart(&r));
	CHECK_EQ(r.w64[10], 219); /* restart_syscall */
	r.w64[15] = 0, r.w64[10] = (uint64_t)-4, r.w64[16] = 0x1002;
	CHECK(!x->syscall_restart(&r));
	CHECK_EQ(r.w64[16], 0x1002);
}

/* Every architecture: the thread pointer in a core's notes, and the static TLS next to it. */
TEST_CASE(thread_pointer_in_cores_and_tls_windows)
{
	uint8_t prstatus[336] = { 0 }, tls[16] = { 0 };
	uint64_t fs = 0x7f0000001740ull, tpidr = 0xffff00001780ull;
	uint32_t tp32 = 0xb6ff0460;

	memcpy(prstatus + 112 + 21 * 8, &fs, 8);
	CHECK_EQ(arch_x86_64_ops.core_tp(NT_PRSTATUS, prstatus, sizeof(prstatus)), fs);
	CHECK_EQ(arch_x86_64_ops.core_tp(NT_PRSTATUS, prstatus, 200), 0);
	CHECK_EQ(arch_x86_64_ops.tls_window(fs, 8192), fs - 8192);
	memcpy(tls, &tpidr, 8);
	CHECK_EQ(arch_aarch64_ops.core_tp(NT_ARM_TLS, tls, 8), tpidr);
	CHECK_EQ(arch_aarch64_ops.core_tp(NT_PRSTATUS, prstatus, sizeof(prstatus)), 0);
	CHECK_EQ(arch_aarch64_ops.tls_window(tpidr, 8192), tpidr);
	memcpy(tls, &tp32, 4);
	CHECK_EQ(arch_arm_ops.core_tp(NT_ARM_TLS, tls, 4), tp32);
	CHECK_EQ(arch_arm_ops.tls_window(tp32, 8192), tp32);
	CHECK_EQ(arch_mips64_ops.core_tp(NT_PRSTATUS, prstatus, sizeof(prstatus)), 0);
	CHECK_EQ(arch_mips64_ops.tls_window(0x120007010ull, 8192), 0x120000010ull);
}
