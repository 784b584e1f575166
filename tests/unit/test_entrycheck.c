// SPDX-License-Identifier: GPL-2.0-only
/*
 * The patch-safety rule of the entry stubs (src/patch/entrycheck.c) and x86_64's decoder behind it
 * (arch/x86_64/decoder.c). On any host: instructions of every x86-64 map with their known
 * lengths, branch targets and RIP-relative addresses, and what must be refused. On x86_64: a
 * fixture's loop into the first bytes, jump through a register and pointer into them are each
 * refused. Where Capstone is installed it is the oracle: over every function of this machine's
 * big libraries, whatever the decoder calls safe Capstone calls safe, and where both decode,
 * they agree on every instruction's length and branch target; for the allocators' entries
 * (glibc's malloc family, libstdc++'s operators, jemalloc, tcmalloc, mimalloc) the verdicts
 * are the same. On any host, entry_check_with is handed the function's bytes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <malloc.h>
#include <unistd.h>

#include "../../arch/x86_64/decoder.h"
#include "arch/arch.h"
#include "patch/entrycheck.h"
#include "heap/hooks.h"
#include "symbols/symbols.h"
#include "unittest.h"

/* Instructions with their known facts (objdump -d of what gas assembles). */
static const struct {
	const char *hex;
	int len; /* 0: refused */
	int flow;
	int64_t target; /* X86_REL: from the instruction's address (0x1000); rip: the operand's */
	bool rip;
} known[] = {
	{ "55", 1, X86_NEXT, 0, false }, /* push %rbp */
	{ "f30f1efa", 4, X86_NEXT, 0, false }, /* endbr64 */
	{ "4889e5", 3, X86_NEXT, 0, false }, /* mov %rsp,%rbp */
	{ "66662e0f1f840000000000", 11, X86_NEXT, 0, false }, /* data16 cs nopw 0x0(%rax,%rax,1) */
	{ "488d05f8ffffff", 7, X86_NEXT, 0xfff, true }, /* lea -0x8(%rip),%rax */
	{ "48b88877665544332211", 10, X86_NEXT, 0, false }, /* movabs $0x1122334455667788,%rax */
	{ "66b83412", 4, X86_NEXT, 0, false }, /* mov $0x1234,%ax */
	{ "48a18877665544332211", 10, X86_NEXT, 0, false }, /* movabs 0x1122334455667788,%rax */
	{ "67a144332211", 6, X86_NEXT, 0, false }, /* addr32 mov 0x11223344,%eax */
	{ "66c7054e0000003412", 9, X86_NEXT, 0x1000 + 9 + 0x4e, true }, /* movw $0x1234,0x4e(%rip) */
	{ "48c7c0ffffffff", 7, X86_NEXT, 0, false }, /* mov $-1,%rax */
	{ "f6c101", 3, X86_NEXT, 0, false }, /* test $1,%cl */
	{ "f7d8", 2, X86_NEXT, 0, false }, /* neg %eax */
	{ "c8100001", 4, X86_NEXT, 0, false }, /* enter $0x10,$1 */
	{ "c20800", 3, X86_NEXT, 0, false }, /* ret $8 */
	{ "74fe", 2, X86_REL, 0x1000, false }, /* je . */
	{ "0f8400010000", 6, X86_REL, 0x1106, false }, /* je .+0x106 */
	{ "e8fbffffff", 5, X86_REL, 0x1000, false }, /* call . */
	{ "e9fbefffff", 5, X86_REL, 0, false }, /* jmp 0 */
	{ "f2e900000000", 6, X86_REL, 0x1006, false }, /* bnd jmp */
	{ "e2fe", 2, X86_REL, 0x1000, false }, /* loop . */
	{ "e3fe", 2, X86_REL, 0x1000, false }, /* jrcxz . */
	{ "c7f810000000", 6, X86_REL, 0x1016, false }, /* xbegin .+0x16 */
	{ "c6f8ff", 3, X86_NEXT, 0, false }, /* xabort $0xff */
	{ "ffe0", 2, X86_INDIRECT, 0, false }, /* jmp *%rax */
	{ "3effe0", 3, X86_INDIRECT, 0, false }, /* notrack jmp *%rax */
	{ "ff2500000000", 6, X86_INDIRECT, 0x1006, true }, /* jmp *0x0(%rip) */
	{ "ff14c5000000ff", 7, X86_NEXT, 0, false }, /* call *-0x1000000(,%rax,8) */
	{ "ffd0", 2, X86_NEXT, 0, false }, /* call *%rax */
	{ "0f0b", 2, X86_NEXT, 0, false }, /* ud2 */
	{ "660f3a0fc108", 6, X86_NEXT, 0, false }, /* palignr $8,%xmm1,%xmm0 */
	{ "660f3800c1", 5, X86_NEXT, 0, false }, /* pshufb %xmm1,%xmm0 */
	{ "f30fb8c0", 4, X86_NEXT, 0, false }, /* popcnt %eax,%eax */
	{ "660f73d908", 5, X86_NEXT, 0, false }, /* psrldq $8,%xmm1 */
	{ "0fbae003", 4, X86_NEXT, 0, false }, /* bt $3,%eax */
	{ "c5f877", 3, X86_NEXT, 0, false }, /* vzeroupper */
	{ "c5fe6f0510000000", 8, X86_NEXT, 0x1018, true }, /* vmovdqu 0x10(%rip),%ymm0 */
	{ "c4e27d78c0", 5, X86_NEXT, 0, false }, /* vpbroadcastb %xmm0,%ymm0 */
	{ "c4e3fd00c01b", 6, X86_NEXT, 0, false }, /* vpermq $0x1b,%ymm0,%ymm0 */
	{ "c5fdc2c100", 5, X86_NEXT, 0, false }, /* vcmpeqpd %ymm1,%ymm0,%ymm0 */
	{ "62f17d4874c1", 6, X86_NEXT, 0, false }, /* vpcmpeqb %zmm1,%zmm0,%k0 */
	{ "62e1fe486f4001", 7, X86_NEXT, 0, false }, /* vmovdqu64 0x40(%rax),%zmm16 */
	{ "62f37d483ec100", 7, X86_NEXT, 0, false }, /* vpcmpub $0,%zmm1,%zmm0,%k0 */
	{ "62f1fd4873d008", 7, X86_NEXT, 0, false }, /* vpsrlq $8,%zmm0,%zmm0 */
	{ "62e1fe486f0500010000", 10, X86_NEXT, 0x110a, true }, /* vmovdqu64 0x100(%rip) */
	{ "d9ee", 2, X86_NEXT, 0, false }, /* fldz */
	{ "dd442408", 4, X86_NEXT, 0, false }, /* fldl 8(%rsp) */
	/* refused */
	{ "06", 0, 0, 0, false }, /* push %es: invalid in 64-bit mode */
	{ "9a", 0, 0, 0, false }, /* lcall ptr16:32 */
	{ "0f0fc0b4", 0, 0, 0, false }, /* 3DNow! */
	{ "8fe878c2c001", 0, 0, 0, false }, /* XOP */
	{ "62f57c4858c1", 0, 0, 0, false }, /* vaddph: AVX-512 FP16's map 5 */
	{ "66e800000000", 0, 0, 0, false }, /* call rel16 */
	{ "666648e8fbffffff", 8, X86_REL, 0x1003, false }, /* data16 data16 rex.W call */
	{ "66c5f877", 0, 0, 0, false }, /* 66 before VEX */
	{ "48c5f877", 0, 0, 0, false }, /* REX before VEX */
	{ "ffe8", 0, 0, 0, false }, /* ljmp through a register */
	{ "fff8", 0, 0, 0, false }, /* FF /7 */
	{ "48e8", 0, 0, 0, false }, /* cut short */
	{ "0f3800", 0, 0, 0, false }, /* cut short */
	{ "0f38ff00", 0, 0, 0, false }, /* an undefined 0F 38 opcode */
	{ "4040", 0, 0, 0, false }, /* two REX */
	{ "66666666666666666666666666666690", 0, 0, 0, false }, /* 16 bytes */
};

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;

	for (; hex[0] && hex[1]; hex += 2)
		sscanf(hex, "%2hhx", &out[n++]);
	return n;
}

TEST_CASE(decoder_knows_each_map)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		uint8_t code[32];
		size_t n = unhex(known[i].hex, code);
		struct x86_dec d;
		int ret = x86_dec_insn(code, n, 0x1000, &d);

		if (!known[i].len) {
			if (ret != -EXDEV)
				UNITTEST_FAIL("%s decoded (%zu bytes), not refused", known[i].hex, d.len);
			continue;
		}
		if (ret || d.len != (size_t)known[i].len || (int)d.flow != known[i].flow ||
		    d.rip != known[i].rip ||
		    (d.flow == X86_REL && d.target != (uint64_t)known[i].target) ||
		    (d.rip && d.rip_addr != (uint64_t)known[i].target))
			UNITTEST_FAIL("%s: ret %d len %zu flow %d target %#" PRIx64 " rip %d %#" PRIx64,
				      known[i].hex, ret, d.len, d.flow, d.target, d.rip, d.rip_addr);
		/* one byte short is refused, never decoded as something shorter */
		CHECK_EQ(x86_dec_insn(code, n - 1, 0x1000, &d), -EXDEV);
	}
}

TEST_CASE(scan_rule)
{
	uint8_t code[64];
	size_t n;

	/* push; mov; je back to +1: refused; to the entry itself: allowed */
	n = unhex("53" "4889f8" "74fb" "5b" "c3", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), -EXDEV);
	n = unhex("53" "4889f8" "74fa" "5b" "c3", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), 0);
	/* lea of entry+2 refused; of entry+5 allowed */
	n = unhex("53" "488d05faffffff" "c3", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), -EXDEV);
	n = unhex("53" "488d05fdffffff" "c3", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), 0);
	/* a jump through a register anywhere; bytes that do not decode at the end */
	n = unhex("53" "5b" "ffe0", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), -EXDEV);
	/* through indexed memory (a jump table) too; a tail call through a RIP-relative pointer
	 * (CPython's PyObject_Free: mov %rdi,%rsi; mov X(%rip),%rdi; jmp *Y(%rip)) is not, unless
	 * the pointer itself lies in the patch */
	n = unhex("53" "5b" "ff24c5" "00200000", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), -EXDEV);
	n = unhex("4889fe" "488b3de6cf2a00" "ff2500d02a00", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), 0);
	n = unhex("53" "5b" "ff25faffffff", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), -EXDEV);
	n = unhex("53" "5b" "c3" "06", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), -EXDEV);
	/* the last instruction cut by the function's size */
	n = unhex("53" "5b" "e800000000", code);
	CHECK_EQ(x86_entry_scan(0x1000, code, n - 1, 5), -EXDEV);
	CHECK_EQ(x86_entry_scan(0x1000, code, n, 5), 0);
}

#if defined(__x86_64__)

/* The C library's file: found by a function of its own that no sanitizer runtime replaces
 * (under ASan, malloc is libasan's). */
static const char *libc_path(void)
{
	static Dl_info info;

	return dladdr((void *)gnu_get_libc_version, &info) ? info.dli_fname : NULL;
}

TEST_CASE(fixture_entries)
{
	static const struct {
		const char *name;
		int want;
	} cases[] = {
		{ "entry_safe", 0 },
		{ "entry_loop", -EXDEV },
		{ "entry_table", -EXDEV },
		{ "entry_pointer", -EXDEV },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = sym_lookup(FIXTURE, cases[i].name);

		REQUIRE(v != 0);
		CHECK_EQ(entry_check_with(&arch_x86_64_ops, FIXTURE, v, sym_func_size(FIXTURE, v), 5),
			 cases[i].want);
	}
	/* no size known: refused */
	CHECK_EQ(entry_check_with(&arch_x86_64_ops, FIXTURE, sym_lookup(FIXTURE, "entry_safe"), 0, 5),
		 -EXDEV);
}

#endif

#if defined(__x86_64__) && defined(HAVE_CAPSTONE)
#include <capstone.h>

static csh cs;

static bool cs_ready(void)
{
	static int state; /* 0 untried, 1 open, -1 failed */

	if (!state) {
		state = cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK ? 1 : -1;
		if (state > 0)
			cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	}
	return state > 0;
}

/* Capstone's facts about one decoded instruction, as decoder.h gives ours. */
static void cs_facts(const cs_insn *i, struct x86_dec *d)
{
	const cs_x86 *x = &i->detail->x86;
	bool jump = cs_insn_group(cs, i, CS_GRP_JUMP), call = cs_insn_group(cs, i, CS_GRP_CALL);

	memset(d, 0, sizeof(*d));
	d->len = i->size;
	switch (i->id) { /* relative branches Capstone 4 puts in no group (loop*) */
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE: case X86_INS_JRCXZ:
	case X86_INS_JECXZ: case X86_INS_XBEGIN:
		jump = true;
	}
	for (unsigned k = 0; k < x->op_count; k++) {
		const cs_x86_op *op = &x->operands[k];

		if (op->type == X86_OP_IMM && (jump || call)) {
			d->flow = X86_REL;
			d->target = (uint64_t)op->imm;
		} else if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP) {
			d->rip = true;
			d->rip_addr = i->address + i->size + (uint64_t)op->mem.disp;
		}
		if (jump && op->type != X86_OP_IMM)
			d->flow = X86_INDIRECT;
	}
}

/* The rule with Capstone's decoder (what heaptrace used before decoder.c; the rule itself is
 * decoder.c's, on Capstone's facts): 0, -EXDEV, or -EILSEQ where Capstone cannot decode an
 * instruction. */
static int cs_scan(uint64_t value, const uint8_t *code, size_t size, size_t len)
{
	cs_insn *insn = cs_malloc(cs);
	uint64_t addr = value;
	int ret = 0;

	while (size && !ret) {
		struct x86_dec d;

		if (!cs_disasm_iter(cs, &code, &size, &addr, insn)) {
			ret = -EILSEQ;
			break;
		}
		cs_facts(insn, &d);
		if (x86_dec_enters(&d, value, len))
			ret = -EXDEV;
	}
	cs_free(insn, 1);
	return ret;
}

struct tally {
	unsigned funcs, ours_safe, cs_safe, unsafe_ours_only, insns, mismatches, by_objdump;
	unsigned ours_stops, cs_stops; /* functions one decodes further than the other */
	unsigned vex, evex; /* of the instructions compared */
	unsigned od_funcs, od_insns, od_evex; /* compared with objdump where Capstone stops */
	unsigned cs_wrong; /* Capstone differs from ours, objdump agrees with ours */
};

static void put_bytes(const char *what, uint64_t at, const uint8_t *p, size_t n)
{
	printf("#   %s at %#" PRIx64 ":", what, at);
	for (size_t k = 0; k < n && k < 16; k++)
		printf(" %02x", p[k]);
	putchar('\n');
}

/* A prefix objdump writes before a mnemonic. */
static bool is_prefix(const char *w)
{
	static const char *const pfx[] = { "bnd", "notrack", "cs", "ds", "es", "ss", "fs", "gs",
					   "data16", "addr32", "lock", "rep", "repz", "repnz",
					   "xacquire", "xrelease" };

	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strcmp(w, pfx[i]))
			return true;
	return !strncmp(w, "rex", 3);
}

/*
 * Where Capstone 4 cannot decode (AVX-512 mask and EVEX 256-bit compares, rdpkru...), the
 * second oracle: binutils' objdump over the function's bytes at value. Return 1 if it decodes
 * every instruction as ours does (length, relative target, indirect jump, RIP-relative
 * address), 0 if one of them stops first, -1 if they disagree (printed); *insns and *evex
 * count the instructions compared.
 */
static int objdump_agrees(uint64_t value, const uint8_t *code, size_t size, unsigned *insns,
			  unsigned *evex)
{
	int ret = 1;
	char cmd[1024], line[1024], tmp[] = "/tmp/ht-entrycheck-XXXXXX";
	int fd = mkstemp(tmp);
	size_t off = 0;
	bool ok = true;
	FILE *f;

	if (fd < 0)
		return 0;
	ok = write(fd, code, size) == (ssize_t)size;
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "objdump -D -w -b binary -m i386:x86-64 --adjust-vma=%#" PRIx64 " %s", value, tmp);
	f = ok ? popen(cmd, "r") : NULL;
	if (!f) {
		unlink(tmp);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *text, *word, *save = NULL, *operand;
		struct x86_dec d, o = { 0 };
		unsigned long long at;

		if (!tab || sscanf(line, " %llx:", &at) != 1)
			continue;
		text = strchr(tab + 1, '\t');
		if (!text)
			text = tab + strlen(tab);
		for (char *b = tab + 1; b < text; b++)
			o.len += b[0] != ' ' && (b[1] == ' ' || b[1] == '\t' || b + 1 == text);
		if (at != value + off || strstr(text, "(bad)") || strstr(text, ".byte") ||
		    x86_dec_insn(code + off, size - off, at, &d)) {
			ret = 0;
			break;
		}
		if (strstr(text, "(%rip)")) {
			char *hash = strchr(text, '#');

			o.rip = true;
			o.rip_addr = hash ? strtoull(hash + 1, NULL, 16) : 0;
		}
		/* prefixes (bnd, notrack, ds...) come before the mnemonic */
		for (word = strtok_r(text, " \t\n", &save); word && is_prefix(word);
		     word = strtok_r(NULL, " \t\n", &save))
			;
		operand = word ? strtok_r(NULL, " \t\n", &save) : NULL;
		if (word && operand &&
		    (word[0] == 'j' || !strncmp(word, "call", 4) || !strncmp(word, "loop", 4) ||
		     !strcmp(word, "xbegin"))) {
			if (operand[0] != '*')
				o.flow = X86_REL, o.target = strtoull(operand, NULL, 16);
			else if (word[0] == 'j')
				o.flow = X86_INDIRECT;
		}
		if (d.len != o.len || d.flow != o.flow || (d.flow == X86_REL && d.target != o.target) ||
		    d.rip != o.rip || (d.rip && d.rip_addr != o.rip_addr)) {
			printf("# objdump disagrees at %#" PRIx64 ": %s", value + off, line);
			ret = -1;
			break;
		}
		++*insns;
		*evex += strstr(line, "\t62 ") != NULL;
		off += d.len;
	}
	while (fgets(line, sizeof(line), f)) /* the rest, unread */
		;
	pclose(f);
	unlink(tmp);
	return ret == 1 && off != size ? 0 : ret;
}

/* Both decoders in step over one function, until either cannot go on. */
static void compare_insns(const char *file, const char *name, uint64_t value, const uint8_t *code,
			  size_t size, struct tally *t)
{
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *cp = code;
	size_t left = size;
	uint64_t addr = value;

	while (left) {
		size_t off = size - left;
		struct x86_dec ours, theirs;
		int r = x86_dec_insn(code + off, left, value + off, &ours);
		bool ok = cs_disasm_iter(cs, &cp, &left, &addr, insn);

		if (r || !ok) {
			if (r && ok && ++t->ours_stops <= 10)
				printf("# %s: %s+%#zx: only Capstone decodes %s %s\n", file, name, off,
				       insn->mnemonic, insn->op_str);
			else if (!r && !ok) {
				t->cs_stops++;
				if (t->cs_stops <= 20)
					put_bytes("only ours decodes", value + off, code + off,
						  size - off);
			}
			break;
		}
		t->insns++;
		for (size_t k = off; k < off + ours.len; k++) {
			if (strchr("\x66\x67\xf0\xf2\xf3\x2e\x36\x3e\x26\x64\x65", code[k]) &&
			    code[k])
				continue;
			t->vex += code[k] == 0xc4 || code[k] == 0xc5;
			t->evex += code[k] == 0x62;
			break;
		}
		cs_facts(insn, &theirs);
		if (ours.len != theirs.len || ours.flow != theirs.flow ||
		    (ours.flow == X86_REL && ours.target != theirs.target) ||
		    ours.rip != theirs.rip || (ours.rip && ours.rip_addr != theirs.rip_addr)) {
			/* Capstone 4 has its own errors (an EVEX register form with rounding,
			 * 62 f2 7d 78 a8 d1, is 7 bytes long for it): objdump decides */
			if (objdump_agrees(value + off, code + off, ours.len, &t->od_insns,
					   &t->od_evex) > 0) {
				if (++t->cs_wrong <= 10)
					printf("# %s: %s+%#zx: Capstone's %s %s is wrong, objdump "
					       "agrees with ours\n", file, name, off, insn->mnemonic,
					       insn->op_str);
				break;
			}
			if (++t->mismatches <= 40) {
				printf("# %s: %s+%#zx: ours len %zu flow %d target %#" PRIx64
				       " rip %d; Capstone %s %s: len %zu flow %d target %#" PRIx64
				       " rip %d\n",
				       file, name, off, ours.len, ours.flow, ours.target, ours.rip,
				       insn->mnemonic, insn->op_str, theirs.len, theirs.flow,
				       theirs.target, theirs.rip);
				put_bytes("bytes", value + off, code + off, size - off);
			}
			break;
		}
	}
	cs_free(insn, 1);
}

/* The symbol table of path's separate debug file (/usr/lib/debug/.build-id/), if any. */
static Elf *debug_elf(const char *path, int *fd)
{
	char hex[SYM_BUILD_ID_MAX], dbg[256];

	if (sym_build_id_hex(path, hex, sizeof(hex)))
		return NULL;
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	*fd = open(dbg, O_RDONLY);
	return *fd < 0 ? NULL : elf_begin(*fd, ELF_C_READ, NULL);
}

struct func {
	uint64_t value, size;
	const char *name;
	size_t shndx;
	bool from_debug;
};

static int by_value(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->shndx < y->shndx ? -1 : x->shndx > y->shndx;
}

/* STT_FUNC and ifunc symbols of e's symbol tables, appended to *f. */
static size_t add_funcs(Elf *e, struct func **f, size_t n, size_t *cap, bool from_debug)
{
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(data, k, &s) || !s.st_size || s.st_shndx == SHN_UNDEF ||
			    (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC))
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (n == *cap)
				*f = realloc(*f, (*cap = *cap ? 2 * *cap : 4096) * sizeof(**f));
			(*f)[n++] = (struct func){ s.st_value, s.st_size, strdup(name ? name : "?"),
						   s.st_shndx, from_debug };
		}
	}
	return n;
}

/* The bytes of function f of e (a shared object or executable: its loadable segments, fd its
 * file; a relocatable object: its section), in a new buffer; NULL if not there. */
static uint8_t *func_bytes(Elf *e, int fd, const struct func *f)
{
	uint8_t *code = malloc(f->size);
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t nph;

	if (!code || !gelf_getehdr(e, &eh))
		goto fail;
	if (eh.e_type == ET_REL) {
		Elf_Scn *scn = elf_getscn(e, f->shndx);
		Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

		if (!d || !d->d_buf || f->value + f->size > d->d_size)
			goto fail;
		memcpy(code, (uint8_t *)d->d_buf + f->value, f->size);
		return code;
	}
	if (elf_getphdrnum(e, &nph))
		goto fail;
	for (size_t p = 0; p < nph; p++)
		if (gelf_getphdr(e, p, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    f->value >= ph.p_vaddr && f->value + f->size <= ph.p_vaddr + ph.p_filesz &&
		    pread(fd, code, f->size, ph.p_offset + f->value - ph.p_vaddr) == (ssize_t)f->size)
			return code;
fail:
	free(code);
	return NULL;
}

/* Every function of e (fd its file) through both rules and both decoders. */
static void walk_elf(const char *path, Elf *e, int fd, struct tally *t)
{
	struct func *f = NULL;
	size_t n = 0, cap = 0;
	int dfd = -1;
	Elf *de = debug_elf(path, &dfd);
	GElf_Ehdr eh;

	n = add_funcs(e, &f, n, &cap, false);
	n = add_funcs(de, &f, n, &cap, true);
	if (n)
		qsort(f, n, sizeof(*f), by_value);
	for (size_t k = 0; k < n && gelf_getehdr(e, &eh); k++) {
		uint8_t *code;
		int ours, theirs, od;

		/* a relocatable object's values are per section: only duplicates in one */
		if (k && f[k].value == f[k - 1].value &&
		    (eh.e_type != ET_REL || f[k].shndx == f[k - 1].shndx))
			continue;
		if (f[k].from_debug && eh.e_type == ET_REL)
			continue;
		code = func_bytes(e, fd, &f[k]);
		if (!code)
			continue;
		t->funcs++;
		ours = x86_entry_scan(f[k].value, code, f[k].size, 5);
		theirs = cs_scan(f[k].value, code, f[k].size, 5);
		t->ours_safe += !ours;
		t->cs_safe += !theirs;
		od = theirs == -EILSEQ ? objdump_agrees(f[k].value, code, f[k].size, &t->od_insns,
							 &t->od_evex) : 0;
		t->od_funcs += theirs == -EILSEQ;
		t->mismatches += od < 0;
		if (!ours && theirs == -EILSEQ && od > 0)
			t->by_objdump++;
		else if (!ours && theirs && ++t->unsafe_ours_only <= 20)
			printf("# %s: %s at %#" PRIx64 ": safe for ours, not for Capstone\n", path,
			       f[k].name, f[k].value);
		compare_insns(path, f[k].name, f[k].value, code, f[k].size, t);
		free(code);
	}
	for (size_t k = 0; k < n; k++)
		free((void *)f[k].name);
	free(f);
	if (de)
		elf_end(de);
	if (dfd >= 0)
		close(dfd);
}

/* Every function of the ELF file or archive (each member) at path. */
static int walk_file(const char *path, struct tally *t)
{
	int fd = open(path, O_RDONLY);
	Elf *e, *m;
	Elf_Cmd cmd = ELF_C_READ;

	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		close(fd);
		return -ENOEXEC;
	}
	if (elf_kind(e) == ELF_K_AR) {
		while ((m = elf_begin(fd, cmd, e))) {
			if (elf_kind(m) == ELF_K_ELF)
				walk_elf(path, m, fd, t);
			cmd = elf_next(m);
			elf_end(m);
		}
	} else {
		walk_elf(path, e, fd, t);
	}
	elf_end(e);
	close(fd);
	return 0;
}

/* The first of dirs/name that exists, in buf; NULL if none. */
static const char *find_lib(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
					    "/usr/lib64", "/usr/bin" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(buf, len, "%s/%s", dirs[i], name);
		if (!access(buf, R_OK))
			return buf;
	}
	return NULL;
}

/*
 * The oracle over whole libraries: the C library (with its debug file's symbols where
 * libc6-dbg is installed: its SSE2, AVX2 and EVEX string functions), libstdc++, libm,
 * libcrypto, Python, big ones with AVX code where installed, static archives (every function
 * keeps its symbol: OpenSSL's and libgcrypt's AVX-512 assembly), gcc's AVX-512 code of
 * fixture_avx512.c; more may be named in HEAPTRACE_ENTRY_CORPUS (colon-separated paths).
 */
TEST_CASE(capstone_agrees_over_libraries)
{
	static const char *const libs[] = {
		"libc.so.6", "libstdc++.so.6", "libm.so.6", "libcrypto.so.3",
		"libpython3.11.so.1.0", "python3.11", "libSvtAv1Enc.so.1", "libx265.so.199",
		"libaom.so.3", "libz3.so.4", "libjemalloc.so.2", "libtcmalloc.so.4",
		"libmimalloc.so.2",
		/* archives keep every function's symbol: OpenSSL's and libgcrypt's AVX2 and
		 * AVX-512 assembly */
		"libcrypto.a", "libgcrypt.a", "libzstd.a",
	};
	struct tally t = { 0 };
	char buf[512], *extra = getenv("HEAPTRACE_ENTRY_CORPUS");
	unsigned files = 0;

	REQUIRE(cs_ready());
	REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		const char *path = find_lib(libs[i], buf, sizeof(buf));
		struct tally before = t;

		if (!path) {
			printf("# %s: not installed here\n", libs[i]);
			continue;
		}
		CHECK_EQ(walk_file(path, &t), 0);
		files++;
		printf("# %s: %u functions, safe: ours %u, Capstone %u\n", path,
		       t.funcs - before.funcs, t.ours_safe - before.ours_safe,
		       t.cs_safe - before.cs_safe);
	}
#ifdef FIXTURE_AVX512
	CHECK_EQ(walk_file(FIXTURE_AVX512, &t), 0);
	files++;
#endif
	for (char *p = extra ? strtok(extra, ":") : NULL; p; p = strtok(NULL, ":")) {
		CHECK_EQ(walk_file(p, &t), 0);
		files++;
	}
	printf("# %u files, %u functions, %u instructions compared (VEX %u, EVEX %u): safe for "
	       "ours %u, for Capstone %u; safe for ours where Capstone cannot decode, with "
	       "objdump's agreement %u, without %u; length/target mismatches %u; functions ours "
	       "stops decoding first %u, Capstone first %u\n",
	       files, t.funcs, t.insns, t.vex, t.evex, t.ours_safe, t.cs_safe, t.by_objdump,
	       t.unsafe_ours_only, t.mismatches, t.ours_stops, t.cs_stops);
	printf("# where Capstone cannot decode: %u functions, %u instructions (EVEX %u) compared "
	       "with objdump; where Capstone is wrong and objdump agrees with ours: %u\n",
	       t.od_funcs, t.od_insns, t.od_evex, t.cs_wrong);
	CHECK(files >= 4);
	CHECK(t.funcs > 10000);
	CHECK_EQ(t.unsafe_ours_only, 0);
	CHECK_EQ(t.mismatches, 0);
}

/* Bytes of the whole instructions Capstone decodes at the start of code, covering need. */
static size_t capstone_cover(const uint8_t *code, size_t len, uint64_t addr, size_t need)
{
	cs_insn *insn;
	size_t n, covered = 0;

	n = cs_disasm(cs, code, len, addr, 8, &insn);
	for (size_t i = 0; i < n && covered < need; i++)
		covered += insn[i].size;
	if (n)
		cs_free(insn, n);
	return covered;
}

/* An allocator's entries: the same verdict from both decoders. Return how many are safe. */
static int allocator_verdicts(const char *path)
{
	uint64_t addrs[HOOK_COUNT];
	int safe = 0;

	if (sym_find_hooks(path, addrs) <= 0)
		return -ENOENT;
	for (int h = 0; h < HOOK_COUNT; h++) {
		uint8_t *code;
		uint64_t size;
		int ours, theirs;

		if (!addrs[h])
			continue;
		size = sym_func_size(path, addrs[h]);
		if (!size || !(code = malloc(size)))
			continue;
		if (sym_read_code(path, addrs[h], code, size) == (ssize_t)size) {
			ours = entry_check_with(&arch_x86_64_ops, path, addrs[h], size, 5);
			theirs = cs_scan(addrs[h], code, size, 5);
			if (ours != theirs)
				UNITTEST_FAIL("%s in %s: ours %d, Capstone %d", hook_table[h].name,
					      path, ours, theirs);
			safe += !ours;
		}
		free(code);
	}
	return safe;
}

TEST_CASE(allocator_entries_same_verdicts)
{
	static const char *const libs[] = { "libstdc++.so.6", "libjemalloc.so.2",
					    "libtcmalloc.so.4", "libtcmalloc_minimal.so.4",
					    "libmimalloc.so.2" };
	char buf[512];

	REQUIRE(cs_ready());
	REQUIRE(libc_path() != NULL);
	printf("# %s: %d entries safe\n", libc_path(), allocator_verdicts(libc_path()));
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		const char *path = find_lib(libs[i], buf, sizeof(buf));

		if (path)
			printf("# %s: %d entries safe\n", path, allocator_verdicts(path));
	}
}

#endif

#if defined(__x86_64__)

/* Every malloc-family entry of the C library here passes, and entry_relocate displaces whole
 * instructions (as Capstone sees them, where installed). */
TEST_CASE(libc_family_entries_are_safe)
{
	const char *path = libc_path();
	uint64_t addrs[HOOK_COUNT];

	REQUIRE(path != NULL);
	REQUIRE(sym_find_hooks(path, addrs) >= 9);
	for (int h = 0; h < HOOK_COUNT; h++) {
		uint8_t code[ARCH_MAX_INSN], buf[128];
		size_t covered = 0;
		uint64_t size;
		int n;

		if (!addrs[h])
			continue;
		size = sym_func_size(path, addrs[h]);
		CHECK(size > 0);
		if (entry_check_with(&arch_x86_64_ops, path, addrs[h], size, 5)) {
			UNITTEST_FAIL("%s at %#" PRIx64 " in %s is not safe to patch",
				      hook_table[h].name, addrs[h], path);
			continue;
		}
		REQUIRE(sym_read_code(path, addrs[h], code, sizeof(code)) == sizeof(code));
		n = arch_x86_64_ops.entry_relocate(addrs[h], code, sizeof(code), 5,
						   addrs[h] + 0x1000, buf, &covered);
		CHECK(n > 0);
#if defined(HAVE_CAPSTONE)
		/* the oracle: the same whole instructions */
		CHECK_EQ(covered, capstone_cover(code, sizeof(code), addrs[h], 5));
#endif
	}
}

#endif

/* entry_check_with (the arch's own decoder: x86_64's, arm's, mips64's): the function's bytes,
 * as the file holds them, go to the scan with its value and the patch's length, and its answer
 * comes back; a function of unknown size, or an arch without a scan, is refused without one. */
static const uint8_t *scan_seen;
static size_t scan_size, scan_len;
static uint64_t scan_value;

static int scan_record(uint64_t value, const uint8_t *code, size_t size, size_t len)
{
	static uint8_t copy[4096];

	memcpy(copy, code, size < sizeof(copy) ? size : sizeof(copy));
	scan_seen = copy;
	scan_size = size;
	scan_value = value;
	scan_len = len;
	return -EXDEV;
}

static uint64_t same_addr(uint64_t v)
{
	return v;
}

static const struct arch_ops scan_ops = { .code_addr = same_addr, .entry_scan = scan_record };

TEST_CASE(arch_scan_gets_the_function)
{
	uint64_t v = sym_lookup(FIXTURE, "fixture_entry_marker");
	uint64_t size = sym_func_size(FIXTURE, v);
	uint8_t want[4096];

	REQUIRE(v != 0 && size > 0 && size <= sizeof(want));
	REQUIRE(sym_read_code(FIXTURE, v, want, size) == (ssize_t)size);
	CHECK_EQ(entry_check_with(&scan_ops, FIXTURE, v, size, 8), -EXDEV);
	CHECK_EQ(scan_size, size);
	CHECK_EQ(scan_value, v);
	CHECK_EQ(scan_len, 8);
	CHECK(scan_seen && memcmp(scan_seen, want, size) == 0);
	scan_seen = NULL;
	CHECK_EQ(entry_check_with(&scan_ops, FIXTURE, v, 0, 8), -EXDEV);
	CHECK(scan_seen == NULL);
	/* an arch without a scan: refused */
	CHECK_EQ(entry_check_with(&(struct arch_ops){ .code_addr = same_addr }, FIXTURE, v, size, 8),
		 -EXDEV);
}
