// SPDX-License-Identifier: GPL-2.0-only
/* A function's argument words from its DWARF, on a fixture library built with -g (and one
 * built without, which says nothing). */
#include <errno.h>

#include "symbols/params.h"
#include "symbols/symbols.h"
#include "unittest.h"

/* params_words of the fixture's function name; 1000 if the fixture has no such symbol. */
static int words(const char *name, unsigned word_size)
{
	uint64_t v = sym_lookup(FIXTURE, name);

	return v ? params_words(FIXTURE, v, word_size) : 1000;
}

TEST_CASE(scalars_count_words)
{
	CHECK_EQ(words("p_none", 8), 0);
	CHECK_EQ(words("p_two", 8), 2); /* a typedef'd const size_t is a word */
	CHECK_EQ(words("p_ten", 8), 10);
	CHECK_EQ(words("p_pair", 8), 2);
	CHECK_EQ(words("p_pair", 4), 4); /* int, a skipped word, the pair */
	CHECK_EQ(words("p_double", 8), 2); /* counted as a word: more than it may take */
}

TEST_CASE(stack_whatever_the_count)
{
	CHECK_EQ(words("p_var", 8), -E2BIG);
	CHECK_EQ(words("p_struct", 8), -E2BIG);
	CHECK_EQ(words("p_ldouble", 8), -E2BIG);
	CHECK_EQ(words("p_sret", 8), -E2BIG);
}

TEST_CASE(unknown_without_debug_info)
{
	uint64_t v = sym_lookup(FIXTURE_NODEBUG, "malloc");

	REQUIRE(v != 0);
	CHECK_EQ(params_words(FIXTURE_NODEBUG, v, 8), -ENOENT);
	CHECK_EQ(params_words(FIXTURE, 1, 8), -ENOENT); /* no function there */
	CHECK_EQ(params_words("/nonexistent/heaptrace-fixture", 4096, 8), -ENOENT);
}
