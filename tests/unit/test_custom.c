// SPDX-License-Identifier: GPL-2.0-only
/* --alloc, --realloc and --free specs: what they become in the hook table, and what is refused. */
#include <errno.h>
#include <string.h>

#include "heap/custom.h"
#include "heap/hooks.h"
#include "unittest.h"

TEST_CASE(specs_become_hooks)
{
	char why[256];
	int h;

	/* a free before the --alloc that names its heap */
	CHECK_EQ(custom_add(CUSTOM_FREE, "pool_free:2", why, sizeof(why)), 0);
	CHECK_EQ(custom_add(CUSTOM_ALLOC, "pool_alloc:2", why, sizeof(why)), 0);
	CHECK_EQ(custom_add(CUSTOM_ALLOC, "pool_calloc:3:2", why, sizeof(why)), 0);
	CHECK_EQ(custom_add(CUSTOM_REALLOC, "pool_realloc:2:3", why, sizeof(why)), 0);
	CHECK_EQ(custom_add(CUSTOM_ALLOC, "arena_new:1@arena", why, sizeof(why)), 0);
	CHECK_EQ(custom_add(CUSTOM_ALLOC, "wide_calloc:11:9", why, sizeof(why)), 0);
	CHECK_EQ(custom_add(CUSTOM_FREE, "wide_free:16", why, sizeof(why)), 0);
	CHECK_EQ(custom_commit(why, sizeof(why)), 0);

	h = hook_lookup("pool_calloc");
	REQUIRE(h >= HOOK_CUSTOM0);
	CHECK_EQ(hook_table[h].kind, HK_ALLOC);
	CHECK_EQ(hook_table[h].size, 2);
	CHECK_EQ(hook_table[h].count, 1);
	CHECK_EQ(hook_nargs(&hook_table[h]), 3);
	CHECK_STREQ(hook_heap_name(hook_table[h].heap), "pool_alloc");
	h = hook_lookup("pool_free");
	REQUIRE(h >= HOOK_CUSTOM0);
	CHECK_EQ(hook_table[h].kind, HK_FREE);
	CHECK_EQ(hook_table[h].ptr, 1);
	CHECK(hook_at_entry_only(&hook_table[h]));
	CHECK_EQ(hook_table[h].heap, hook_table[hook_lookup("pool_alloc")].heap);
	h = hook_lookup("pool_realloc");
	REQUIRE(h >= HOOK_CUSTOM0);
	CHECK_EQ(hook_table[h].kind, HK_REALLOC);
	CHECK_EQ(hook_table[h].ptr, 1);
	CHECK_EQ(hook_table[h].size, 2);
	CHECK(!hook_needs_stop(&hook_table[h]));
	h = hook_lookup("arena_new");
	REQUIRE(h >= HOOK_CUSTOM0);
	CHECK_STREQ(hook_heap_name(hook_table[h].heap), "arena");
	CHECK(hook_table[h].heap != hook_table[hook_lookup("pool_alloc")].heap);
	/* past the third: read at a breakpoint, from the stack past the registers (calls.c) */
	h = hook_lookup("wide_calloc");
	REQUIRE(h >= HOOK_CUSTOM0);
	CHECK_EQ(hook_table[h].size, 10);
	CHECK_EQ(hook_table[h].count, 8);
	CHECK_EQ(hook_nargs(&hook_table[h]), 11);
	CHECK(hook_needs_stop(&hook_table[h]));
	CHECK(!hook_args_in_regs(&hook_table[h], 8));
	h = hook_lookup("wide_free");
	REQUIRE(h >= HOOK_CUSTOM0);
	CHECK_EQ(hook_table[h].ptr, 15);
	CHECK_EQ(hook_nargs(&hook_table[h]), HOOK_MAX_ARGS);
	CHECK_STREQ(hook_heap_name(HEAP_MALLOC), "malloc");
	CHECK_EQ(hook_table[HOOK_MALLOC].heap, HEAP_MALLOC);
}

TEST_CASE(bad_specs)
{
	static const char *const bad[] = { "f", "f:", "f:0", "f:17", "f:02", "f:123", "f:1:1",
					   "f:1:2:3", ":1", "1f:1", "f g:1", "f:1@", "f:1@a b",
					   "f:1x", "f:16:16" };
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		CHECK_EQ(custom_add(CUSTOM_ALLOC, bad[i], why, sizeof(why)), -EINVAL);
		CHECK(strstr(why, "--alloc") != NULL);
	}
	CHECK_EQ(custom_add(CUSTOM_REALLOC, "r:1", why, sizeof(why)), -EINVAL);
	CHECK_EQ(custom_add(CUSTOM_FREE, "f:1:2", why, sizeof(why)), -EINVAL);
	CHECK_EQ(custom_add(CUSTOM_ALLOC, "f:1@malloc", why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "heaptrace's own") != NULL);
}
