// SPDX-License-Identifier: GPL-2.0-only
/* ELF symbol lookup on a fixture library (checked against the dynamic linker's own answer)
 * and symbolisation of this test's own code with its DWARF. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols.h"
#include "unittest.h"

static void *fixture(void)
{
	static void *h;

	if (!h)
		h = dlopen(FIXTURE, RTLD_NOW | RTLD_LOCAL);
	return h;
}

/* The symbol value of name in the fixture, as the dynamic linker sees it. */
static uint64_t value_of(const char *name)
{
	void *sym = dlsym(fixture(), name);
	Dl_info info;

	if (!sym || !dladdr(sym, &info))
		return 0;
	return (uint64_t)sym - (uint64_t)info.dli_fbase;
}

TEST_CASE(hooks_found_at_their_symbol_values)
{
	uint64_t addrs[HOOK_COUNT];

	REQUIRE(fixture() != NULL);
	CHECK_EQ(sym_find_hooks(FIXTURE, addrs), 4);
	CHECK_EQ(addrs[HOOK_MALLOC], value_of("malloc"));
	CHECK_EQ(addrs[HOOK_FREE], value_of("free"));
	CHECK_EQ(addrs[HOOK_MEMALIGN], value_of("memalign"));
	/* two names, one address */
	CHECK_EQ(addrs[HOOK_ALIGNED_ALLOC], addrs[HOOK_MEMALIGN]);
	CHECK_EQ(addrs[HOOK_CALLOC], 0);
	CHECK_EQ(addrs[HOOK_REALLOC], 0);
	CHECK(addrs[HOOK_MALLOC] != 0);
}

TEST_CASE(lookup_and_elf_info)
{
	struct elf_info info;

	CHECK_EQ(sym_lookup(FIXTURE, "fixture_marker"), value_of("fixture_marker"));
	CHECK_EQ(sym_lookup(FIXTURE, "no_such_symbol"), 0);
	CHECK_EQ(sym_elf_info(FIXTURE, &info), 0);
	CHECK_EQ(info.type, ET_DYN);
	CHECK(!info.has_interp);
	CHECK_EQ(info.first_load_vaddr, 0);
	CHECK_EQ(sym_elf_info("/proc/self/status", &info), -ENOEXEC);
	CHECK(sym_elf_info("/no/such/file", &info) < 0);
}

static __attribute__((noinline)) int probe_here(void)
{
	return 7;
}

TEST_CASE(symbolise_own_code)
{
	struct mapping *maps;
	struct modlist ml = { 0 };
	struct symbolizer *s;
	struct sym_frame f;
	ssize_t n = maps_read(getpid(), &maps);

	REQUIRE(n > 0);
	modlist_update(&ml, maps, n);
	for (size_t i = 0; i < ml.n; i++) {
		struct elf_info info;

		if (!sym_elf_info(ml.v[i].path, &info)) {
			ml.v[i].bias = ml.v[i].base - info.first_load_vaddr;
			ml.v[i].bias_known = true;
		}
	}
	s = sym_open(&ml);
	sym_resolve(s, (uint64_t)probe_here + 4, false, &f);
	CHECK_STREQ(f.function, "probe_here");
	CHECK_EQ(f.offset, 4);
	CHECK_STREQ(f.file, "test_symbols.c");
	CHECK(f.line > 0);
	REQUIRE(f.module != NULL);
	CHECK(strstr(f.module, "test_symbols") != NULL);
	/* cached: the same answer twice */
	sym_resolve(s, (uint64_t)probe_here + 4, false, &f);
	CHECK_STREQ(f.function, "probe_here");
	sym_resolve(s, 0x10, true, &f);
	CHECK(f.function == NULL);
	CHECK_EQ(f.line, -1);
	sym_close(s);
	modlist_clear(&ml);
	free(maps);
	CHECK_EQ(probe_here(), 7);
}
