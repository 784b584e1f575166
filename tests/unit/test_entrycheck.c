// SPDX-License-Identifier: GPL-2.0-only
/*
 * The patch-safety rule of the entry stubs (src/entrycheck.c): on this machine's C library,
 * every malloc-family entry passes, and heaptrace's own x86 decoder displaces exactly the
 * whole instructions Capstone sees there; on a fixture, a loop into the first bytes, a jump
 * through a register and a pointer into them are each refused. On any host, entry_check_with
 * (the arch's own decoder: mips64's) is handed the function's bytes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>

#include "arch.h"
#include "entrycheck.h"
#include "hooks.h"
#include "symbols.h"
#include "unittest.h"

#if defined(__x86_64__) && defined(HAVE_CAPSTONE)
#include <capstone.h>

/* The path of the C library this test runs with. */
static const char *libc_path(void)
{
	static Dl_info info;

	return dladdr((void *)malloc, &info) ? info.dli_fname : NULL;
}

/* Bytes of the whole instructions Capstone decodes at the start of code, covering need. */
static size_t capstone_cover(const uint8_t *code, size_t len, uint64_t addr, size_t need)
{
	cs_insn *insn;
	size_t n, covered = 0;
	csh h;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return 0;
	n = cs_disasm(h, code, len, addr, 8, &insn);
	for (size_t i = 0; i < n && covered < need; i++)
		covered += insn[i].size;
	if (n)
		cs_free(insn, n);
	cs_close(&h);
	return covered;
}

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
		if (entry_check(path, addrs[h], size, 5)) {
			UNITTEST_FAIL("%s at %#" PRIx64 " in %s is not safe to patch",
				      hook_table[h].name, addrs[h], path);
			continue;
		}
		REQUIRE(sym_read_code(path, addrs[h], code, sizeof(code)) == sizeof(code));
		n = arch_x86_64_ops.entry_relocate(addrs[h], code, sizeof(code), 5,
						   addrs[h] + 0x1000, buf, &covered);
		CHECK(n > 0);
		/* the oracle: the same whole instructions */
		CHECK_EQ(covered, capstone_cover(code, sizeof(code), addrs[h], 5));
	}
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
		CHECK_EQ(entry_check(FIXTURE, v, sym_func_size(FIXTURE, v), 5), cases[i].want);
	}
	/* no size known: refused */
	CHECK_EQ(entry_check(FIXTURE, sym_lookup(FIXTURE, "entry_safe"), 0, 5), -EXDEV);
}

#else

TEST_CASE(no_capstone)
{
	uint64_t v = sym_lookup(FIXTURE, "fixture_entry_marker");

	CHECK(v != 0);
	CHECK_EQ(entry_check(FIXTURE, v, 16, 5), -ENOTSUP);
}

#endif

/* entry_check_with (the arch's own decoder: arm's, mips64's): the function's bytes, as the file holds
 * them, go to the scan with its value and the patch's length, and its answer comes back; a
 * function of unknown size is refused without a scan. */
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
}
