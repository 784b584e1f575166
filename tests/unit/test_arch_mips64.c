// SPDX-License-Identifier: GPL-2.0-only
/* The mips64el (n64) arch layer: breakpoint encoding, register slots, displacing the first
 * instructions of glibc 2.36's and musl 1.2.3's malloc family (words from objdump of Debian's
 * libc6 2.36-9+deb12u14 and musl 1.2.3-1 for mips64el), the return trampoline and syscall
 * injection. */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "unittest.h"

static const struct arch_ops *m = &arch_mips64_ops;

#define LIBC 0xfff2d00000ULL /* load bias of libc.so.6 */
#define SLOT 0xfff2b00040ULL

/* NT_PRSTATUS / PTRACE_GETREGS indexes */
enum { R0 = 0, AT = 1, V0 = 2, V1 = 3, A0 = 4, A1, A2, A3, A4, A5, A6, A7, K0 = 26,
       SP = 29, RA = 31, LO = 32, HI = 33, EPC = 34 };

static uint32_t word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Displace up to two instruction words placed at addr (the rest of the buffer is padding). */
static int displace2(uint64_t addr, uint32_t w0, uint32_t w1, size_t len, uint8_t *slot,
		     struct arch_emul *em)
{
	uint8_t buf[ARCH_MAX_INSN];

	memset(buf, 0xff, sizeof(buf));
	for (int i = 0; i < 4; i++) {
		buf[i] = w0 >> (8 * i);
		buf[4 + i] = w1 >> (8 * i);
	}
	memset(slot, 0xaa, ARCH_SLOT_SIZE);
	return m->displace(addr, buf, len, SLOT, slot, em);
}

static int displace(uint64_t addr, uint32_t w, uint8_t *slot, struct arch_emul *em)
{
	return displace2(addr, w, 0x67bdffc0, ARCH_MAX_INSN, slot, em);
}

/*
 * Run the jump back that follows the relocated instruction the way the CPU would: lui
 * (sign-extending), ori, dsll on $at, then `jalr zero,at` and a nop. Return where it lands,
 * or 0 if the slot holds anything else. Whatever follows must be break.
 */
static uint64_t run_jump_back(const uint8_t *p)
{
	uint64_t at = 0;
	size_t i;

	for (i = 0; i < 6; i++) {
		uint32_t w = word(p + 4 * i);

		if ((w & 0xffff0000) == 0x3c010000) /* lui at,imm */
			at = (uint64_t)(int64_t)(int32_t)(w << 16);
		else if ((w & 0xffff0000) == 0x34210000) /* ori at,at,imm */
			at |= w & 0xffff;
		else if (w == 0x00010c38) /* dsll at,at,16 */
			at <<= 16;
		else
			return 0;
	}
	if (word(p + 24) != 0x00200009 || word(p + 28) != 0) /* jalr zero,at; nop */
		return 0;
	for (i = 32; i + 4 <= ARCH_SLOT_SIZE - 4; i += 4)
		if (word(p + i) != 0x0000000d)
			return 0;
	return at;
}

TEST_CASE(breakpoint_encoding)
{
	uint8_t buf[ARCH_MAX_INSN];

	CHECK_EQ(m->elf_machine, EM_MIPS);
	CHECK_EQ(m->elf_class, ELFCLASS64);
	CHECK_EQ(m->word_size, 8);
	CHECK_EQ(m->insn_align, 4);
	CHECK_EQ(m->bp_encode(LIBC + 0xcc858, buf), 4);
	CHECK(!memcmp(buf, "\x0d\x00\x00\x00", 4)); /* break 0 */
	CHECK_EQ(m->bp_addr_from_pc(LIBC + 0xcc858), LIBC + 0xcc858); /* EPC = the break */
	CHECK_EQ(m->code_addr(LIBC + 0xcc858), LIBC + 0xcc858);
}

TEST_CASE(register_slots)
{
	struct arch_regs r;

	memset(&r, 0, sizeof(r));
	for (int i = 0; i < 8; i++)
		r.w64[A0 + i] = 100 + i;
	r.w64[V0] = 99, r.w64[EPC] = 0x120000b10, r.w64[SP] = 0xfffb932800;
	r.w64[RA] = 0x120000c44;
	for (unsigned i = 0; i < 8; i++)
		CHECK_EQ(m->get_arg(&r, i), 100 + i);
	CHECK_EQ(m->get_arg(&r, 8), 0);
	CHECK_EQ(m->get_retval(&r), 99);
	CHECK_EQ(m->get_pc(&r), 0x120000b10);
	CHECK_EQ(m->get_sp(&r), 0xfffb932800);
	CHECK_EQ(m->get_ret_reg(&r), 0x120000c44);
	m->set_pc(&r, 0x120000b20);
	CHECK_EQ(r.w64[EPC], 0x120000b20);
	m->set_sp(&r, 0xfffb932900);
	CHECK_EQ(r.w64[SP], 0xfffb932900);
	m->set_ret_reg(&r, SLOT);
	CHECK_EQ(r.w64[RA], SLOT);
	CHECK(!m->ret_on_stack);
	CHECK_EQ(m->ret_sp_adjust, 0);
}

/* glibc 2.36 (libc.so.6) and musl 1.2.3 first instructions that are not branches. */
TEST_CASE(plain_first_instructions_run_out_of_line)
{
	static const struct { const char *what; uint64_t off; uint32_t insn; } cases[] = {
		{ "glibc malloc: daddiu sp,sp,-64", 0xcc858, 0x67bdffc0 },
		{ "glibc calloc: dmultu a0,a1", 0xcdb38, 0x0085001d },
		{ "glibc realloc: daddiu sp,sp,-112", 0xcd3c0, 0x67bdff90 },
		{ "glibc reallocarray: dmultu a1,a2", 0xcf3c0, 0x00a6001d },
		{ "glibc posix_memalign: daddiu sp,sp,-48", 0xcec08, 0x67bdffd0 },
		{ "glibc memalign/aligned_alloc: daddiu sp,sp,-32", 0xcd988, 0x67bdffe0 },
		{ "glibc valloc: daddiu sp,sp,-32", 0xcda00, 0x67bdffe0 },
		{ "glibc pvalloc: daddiu sp,sp,-32", 0xcda80, 0x67bdffe0 },
		{ "musl malloc/realloc: lui v1,0xb", 0x3c958, 0x3c03000b },
		{ "musl free: lui v0,0xb", 0x3c7b8, 0x3c02000b },
		{ "musl posix_memalign: sltiu v1,a1,8", 0x3f748, 0x2ca30008 },
		{ "musl calloc: daddiu sp,sp,-48", 0x3c648, 0x67bdffd0 },
		{ "glibc malloc, 4th: daddu gp,gp,t9", 0xcc864, 0x0399e02d },
		{ "musl aligned_alloc, 2nd: dnegu v0,a0", 0x3c974, 0x0004102f },
	};
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t addr = LIBC + cases[i].off;

		printf("# %s\n", cases[i].what);
		REQUIRE(displace(addr, cases[i].insn, slot, &em) == STEP_XOL);
		CHECK_EQ(word(slot), cases[i].insn);
		CHECK_EQ(run_jump_back(slot + 4), addr + 4);
	}
}

TEST_CASE(jump_back_reaches_any_address)
{
	/* lui sign-extends: addresses with bit 31 or bit 47 set must still come out exact */
	static const uint64_t addrs[] = {
		0x120000b10, 0x80000000, 0xfff2dcc858, 0x7fff80008000, 0xffffffff8000fffc, 4,
	};
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		REQUIRE(displace(addrs[i], 0x67bdffc0, slot, &em) == STEP_XOL);
		CHECK_EQ(run_jump_back(slot + 4), addrs[i] + 4);
	}
}

TEST_CASE(glibc_free_branch_is_emulated)
{
	/* free: beqz a0,free+0x168 (10800059) with a nop in its delay slot */
	const uint64_t addr = LIBC + 0xcd048;
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	REQUIRE(displace2(addr, 0x10800059, 0x00000000, ARCH_MAX_INSN, slot, &em) ==
		STEP_EMULATE);
	memset(&r, 0, sizeof(r));
	r.w64[A0] = 0; /* free(NULL): taken */
	r.w64[EPC] = addr;
	CHECK_EQ(m->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[EPC], LIBC + 0xcd1b0);
	r.w64[A0] = 0x1234560, r.w64[EPC] = addr; /* not taken: skip the delay slot */
	CHECK_EQ(m->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[EPC], addr + 8);
	/* $0 reads as zero even when the dump's slot 0 holds the kernel's restart flag */
	r.w64[R0] = 5, r.w64[A0] = 5, r.w64[EPC] = addr;
	CHECK_EQ(m->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[EPC], addr + 8);
	r.w64[A0] = 0, r.w64[EPC] = addr;
	CHECK_EQ(m->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[EPC], LIBC + 0xcd1b0);
	CHECK_EQ(r.w64[A0], 0);
	CHECK_EQ(r.w64[RA], 0);
}

TEST_CASE(other_branches_are_emulated)
{
	/* words from `as -march=mips64r2`; the branches at 0x..3c..0x50 all target 0x..64 */
	static const struct { uint32_t insn; int reg; int64_t val; bool taken; } cases[] = {
		{ 0x14600009, V1, 1, true }, /* bnez v1 (musl posix_memalign, 2nd) */
		{ 0x14600009, V1, 0, false },
		{ 0x04800007, A0, -1, true }, /* bltz a0 */
		{ 0x04800007, A0, 0, false },
		{ 0x18800006, A0, 0, true }, /* blez a0 */
		{ 0x18800006, A0, 1, false },
		{ 0x04810005, A0, 0, true }, /* bgez a0 */
		{ 0x04810005, A0, -5, false },
		{ 0x1c800004, A0, 7, true }, /* bgtz a0 */
		{ 0x1c800004, A0, 0, false },
	};
	static const uint64_t at[] = { 0x3c, 0x3c, 0x44, 0x44, 0x48, 0x48, 0x4c, 0x4c, 0x50, 0x50 };
	const uint64_t base = 0x120001000;
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t addr = base + at[i];

		REQUIRE(displace2(addr, cases[i].insn, 0, 8, slot, &em) == STEP_EMULATE);
		memset(&r, 0, sizeof(r));
		r.w64[cases[i].reg] = (uint64_t)cases[i].val;
		CHECK_EQ(m->emulate(&em, &r), 0);
		CHECK_EQ(r.w64[EPC], cases[i].taken ? base + 0x64 : addr + 8);
	}
	/* j 0x1000 at 0x54: the 256 MiB region of the delay slot */
	REQUIRE(displace2(base + 0x54, 0x08000400, 0, 8, slot, &em) == STEP_EMULATE);
	memset(&r, 0, sizeof(r));
	CHECK_EQ(m->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[EPC], 0x120001000);
	/* a nop is skipped */
	REQUIRE(displace2(base, 0, 0x67bdffc0, 8, slot, &em) == STEP_EMULATE);
	CHECK_EQ(m->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[EPC], base + 4);
}

/* Run a guard slot (at SLOT) from its start until the pc leaves it, each branch (with the nop
 * after it) through the arch's own emulation. false: an instruction it does not emulate. */
static bool run_guard_slot(const uint8_t *slot, struct arch_regs *r)
{
	uint8_t unused[ARCH_SLOT_SIZE];

	r->w64[EPC] = SLOT;
	for (int n = 0; n < 4 && r->w64[EPC] >= SLOT && r->w64[EPC] < SLOT + ARCH_SLOT_SIZE; n++) {
		const uint8_t *p = slot + (r->w64[EPC] - SLOT);
		struct arch_emul em;

		if (m->displace(r->w64[EPC], p, 8, SLOT + 0x1000, unused, &em) != STEP_EMULATE ||
		    m->emulate(&em, r))
			return false;
	}
	return r->w64[EPC] < SLOT || r->w64[EPC] >= SLOT + ARCH_SLOT_SIZE;
}

/* The guard's slot of an emulated branch (emul_slot) ends where heaptrace's emulation ends,
 * with the same registers, taken or not. */
TEST_CASE(guard_slots_do_what_emulation_does)
{
	static const uint32_t branches[] = {
		0x10800059, /* beqz a0 (glibc's free) */
		0x14600009, /* bnez v1 */
		0x04800007, /* bltz a0 */
		0x18800006, /* blez a0 */
		0x04810005, /* bgez a0 */
		0x1c800004, /* bgtz a0 */
		0x00800008, /* jr a0 */
	};
	static const int64_t values[] = { 0, 1, -5, LIBC + 0x10 };
	const uint64_t addr = LIBC + 0xcd048;

	for (size_t b = 0; b < sizeof(branches) / sizeof(branches[0]); b++) {
		uint8_t slot[ARCH_SLOT_SIZE], code[ARCH_MAX_INSN] = { 0 };
		struct arch_emul em;

		REQUIRE(displace2(addr, branches[b], 0, 8, slot, &em) == STEP_EMULATE);
		for (int i = 0; i < 4; i++)
			code[i] = branches[b] >> (8 * i);
		REQUIRE(m->emul_slot(addr, code, 8, SLOT, slot) == 0);
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			struct arch_regs want, got;

			memset(&want, 0, sizeof(want));
			want.w64[A0] = want.w64[V1] = (uint64_t)values[v];
			want.w64[EPC] = addr;
			got = want;
			CHECK_EQ(m->emulate(&em, &want), 0);
			CHECK(run_guard_slot(slot, &got));
			for (unsigned k = 0; k <= EPC; k++)
				CHECK_EQ(got.w64[k], want.w64[k]);
		}
	}
	/* a branch with work in its delay slot is not emulated, nor slotted; j and nop need no
	 * slot; a slot outside the target's 256 MiB region is refused */
	uint8_t slot[ARCH_SLOT_SIZE], code[ARCH_MAX_INSN] = { 0x59, 0x00, 0x80, 0x10, 0xc0, 0xff,
							      0xbd, 0x67 };

	CHECK_EQ(m->emul_slot(addr, code, 8, SLOT, slot), -ENOTSUP);
	memset(code + 4, 0, 4);
	CHECK_EQ(m->emul_slot(addr, code, 8, SLOT + 0x10000000, slot), -ERANGE);
	memset(code, 0, 4);
	CHECK_EQ(m->emul_slot(addr, code, 8, SLOT, slot), -ENOTSUP);
}

TEST_CASE(dl_debug_state_return_is_emulated)
{
	/* ld.so.1 _dl_debug_state at 0x3910, and musl's at 0xa0408: jr ra; nop */
	const uint64_t addr = 0xfff7fc3910ULL;
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	REQUIRE(displace2(addr, 0x03e00008, 0x00000000, ARCH_MAX_INSN, slot, &em) ==
		STEP_EMULATE);
	memset(&r, 0, sizeof(r));
	r.w64[RA] = 0xfff7fa1234, r.w64[EPC] = addr;
	CHECK_EQ(m->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[EPC], 0xfff7fa1234);
	CHECK_EQ(r.w64[RA], 0xfff7fa1234);
	/* R6's spelling of jr ra (jalr zero,ra) is the same */
	REQUIRE(displace2(addr, 0x03e00009, 0, 8, slot, &em) == STEP_EMULATE);
	CHECK_EQ(m->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[EPC], 0xfff7fa1234);
}

TEST_CASE(unknown_instructions_are_refused)
{
	static const struct { const char *what; uint32_t insn; } cases[] = {
		{ "sd gp,48(sp)", 0xffbc0030 },
		{ "ld v0,-28200(gp)", 0xdf8291d8 },
		{ "daddiu at,sp,-8 (writes $at)", 0x67a1fff8 },
		{ "lui at,0x1234 (writes $at)", 0x3c011234 },
		{ "jal 0x100", 0x0c000040 },
		{ "bgezal a0", 0x0491000d },
		{ "beqzl a0", 0x5080000c },
		{ "daddi a0,a0,1 (traps on overflow)", 0x60840001 },
		{ "syscall", 0x0000000c },
		{ "break", 0x0000000d },
		{ "jalr t9 (links)", 0x0320f809 },
		{ "R6 dmul v0,a0,a1", 0x0085109c },
		{ "R6 aui", 0x3c830001 },
	};
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		printf("# %s\n", cases[i].what);
		CHECK_EQ(displace2(LIBC + 0xcc858, cases[i].insn, 0, ARCH_MAX_INSN, slot, &em),
			 -ENOTSUP);
	}
	/* a branch whose delay slot is not a nop, or is not there */
	CHECK_EQ(displace2(LIBC + 0xcd048, 0x10800059, 0x67bdffc0, 16, slot, &em), -ENOTSUP);
	CHECK_EQ(displace2(LIBC + 0xcd048, 0x10800059, 0, 4, slot, &em), -ENOTSUP);
	/* too short, or MIPS16/microMIPS (odd address) */
	CHECK_EQ(displace2(LIBC + 0xcc858, 0x67bdffc0, 0, 3, slot, &em), -ENOTSUP);
	CHECK_EQ(displace2(LIBC + 0xcc859, 0x67bdffc0, 0, 16, slot, &em), -ENOTSUP);
	em.kind = 0x7f;
	{
		struct arch_regs r;

		memset(&r, 0, sizeof(r));
		CHECK_EQ(m->emulate(&em, &r), -EINVAL);
	}
}

TEST_CASE(return_trampoline)
{
	uint8_t buf[ARCH_SLOT_SIZE];

	CHECK_EQ(m->tramp_encode(buf), 4);
	CHECK_EQ(word(buf), 0x0000000d);
	CHECK_EQ(m->tramp_for(SLOT - 0x40, 0x120000c44), SLOT - 0x40);
}

/* The logging trampoline: the words were checked once against mips64el-linux-gnuabi64-as
 * (-march=mips64r2); what varies with the ring is checked here. */
TEST_CASE(logging_trampoline)
{
	const uint64_t at = SLOT + 0x40, head = SLOT - 0x40 + 0x1000;
	uint8_t buf[ARCH_LOGTRAMP_MAX];
	uint64_t v;
	size_t n = m->logtramp_encode(buf, at, head, head + 64, 127);

	REQUIRE(n == 32 * 4 + 16 && n <= ARCH_LOGTRAMP_MAX);
	CHECK_EQ(word(buf + 28), 0xdfec0064); /* ld t0, 100(ra): ra = at + 28 after bal */
	CHECK_EQ(word(buf + 68), 0xdfec006c); /* ld t0, 108(ra) */
	CHECK_EQ(word(buf + 60), 0x31ad007f); /* andi t1, t1, 127 */
	CHECK_EQ(word(buf + 92), 0xad8e0000); /* sw t2, 0(t0): seq, after sync */
	CHECK_EQ(word(buf + 116), 0x03e00008); /* jr ra */
	memcpy(&v, buf + 28 + 100, 8);
	CHECK_EQ(v, head);
	memcpy(&v, buf + 28 + 108, 8);
	CHECK_EQ(v, head + 64);
	CHECK_EQ(m->nr_mprotect, 5010);
}

TEST_CASE(syscall_injection)
{
	struct arch_regs r;
	const uint64_t args[6] = { 1, 2, 3, 4, 5, 6 };

	CHECK_EQ(m->syscall_insn_len, 4);
	CHECK(!memcmp(m->syscall_insn, "\x0c\x00\x00\x00", 4));
	CHECK_EQ(m->nr_mmap, 5009);
	CHECK_EQ(m->nr_munmap, 5011);
	memset(&r, 0, sizeof(r));
	r.w64[R0] = 5000; /* a read interrupted before the injection */
	r.w64[A6] = 0x66;
	m->syscall_setup(&r, 0xfff2d0c000, 5009, args);
	CHECK_EQ(r.w64[EPC], 0xfff2d0c000);
	CHECK_EQ(r.w64[V0], 5009);
	CHECK_EQ(r.w64[R0], 0); /* no restart logic for the injected call */
	for (int i = 0; i < 6; i++)
		CHECK_EQ(r.w64[A0 + i], i + 1); /* a0-a5 */
	CHECK_EQ(r.w64[A6], 0x66);
	/* result: v0, or -v0 when a3 says error */
	r.w64[V0] = 0xfff2b00000, r.w64[A3] = 0;
	CHECK_EQ(m->syscall_result(&r), 0xfff2b00000);
	r.w64[V0] = 12, r.w64[A3] = 1;
	CHECK_EQ(m->syscall_result(&r), -12);
}

TEST_CASE(syscall_restart)
{
	struct arch_regs r;

	/* read (5000) interrupted with -ERESTARTSYS: v0 = errno, a3 = 1, EPC past the syscall */
	memset(&r, 0, sizeof(r));
	r.w64[R0] = 5000, r.w64[V0] = 512, r.w64[A3] = 1, r.w64[K0] = 0x77, r.w64[EPC] = 0x1004;
	CHECK(m->syscall_restart(&r));
	CHECK_EQ(r.w64[V0], 5000);
	CHECK_EQ(r.w64[A3], 0x77); /* the caller's a3, saved by the kernel at entry */
	CHECK_EQ(r.w64[EPC], 0x1000);
	CHECK_EQ(r.w64[R0], 0);
	CHECK(!m->syscall_restart(&r)); /* done once */
	/* ERESTARTNOINTR, ERESTARTNOHAND: the same */
	for (uint64_t code = 513; code <= 514; code++) {
		r.w64[R0] = 5023, r.w64[V0] = code, r.w64[A3] = 1, r.w64[EPC] = 0x1004;
		CHECK(m->syscall_restart(&r));
		CHECK_EQ(r.w64[V0], 5023);
		CHECK_EQ(r.w64[EPC], 0x1000);
	}
	/* ERESTART_RESTARTBLOCK (nanosleep 5034): restart_syscall, n64 5213 */
	r.w64[R0] = 5034, r.w64[V0] = 516, r.w64[A3] = 1, r.w64[EPC] = 0x1004;
	CHECK(m->syscall_restart(&r));
	CHECK_EQ(r.w64[V0], 5213);
	CHECK_EQ(r.w64[EPC], 0x1000);
	/* EINTR, ENOIOCTLCMD (515): returned to the program as they are */
	r.w64[R0] = 5000, r.w64[V0] = 4, r.w64[A3] = 1, r.w64[EPC] = 0x1004;
	CHECK(!m->syscall_restart(&r));
	r.w64[V0] = 515;
	CHECK(!m->syscall_restart(&r));
	CHECK_EQ(r.w64[EPC], 0x1004);
	CHECK_EQ(r.w64[R0], 5000);
	/* a write that returned 512 bytes: no error, slot 0 clear */
	r.w64[R0] = 0, r.w64[V0] = 512, r.w64[A3] = 0;
	CHECK(!m->syscall_restart(&r));
	CHECK_EQ(r.w64[V0], 512);
}
