/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_UNITTEST_H
#define HEAPTRACE_UNITTEST_H

/*
 * A tiny unit-test framework in the manner of uftrace's TEST_CASE. Include it from exactly one
 * file per test program: it brings its own main(). TEST_CASE(name) { ... } registers a test;
 * main() runs them in source order and prints TAP ("ok N - name", "not ok N - name", "1..N").
 * A failed CHECK prints a "# file:line" diagnostic and the test goes on; REQUIRE returns from
 * the test. The exit status is 1 if any test failed.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unittest {
	const char *name;
	void (*fn)(void);
	int line;
};

#define UNITTEST_MAX 256
static struct unittest unittest_list[UNITTEST_MAX];
static int unittest_count;
static bool unittest_failed; /* the current test failed */

static inline void unittest_register(const char *name, void (*fn)(void), int line)
{
	if (unittest_count == UNITTEST_MAX) {
		fprintf(stderr, "unittest: more than %d tests\n", UNITTEST_MAX);
		exit(99);
	}
	unittest_list[unittest_count++] = (struct unittest){ name, fn, line };
}

#define TEST_CASE(name)                                                                            \
	static void test_##name(void);                                                             \
	__attribute__((constructor)) static void register_##name(void)                             \
	{                                                                                          \
		unittest_register(#name, test_##name, __LINE__);                                   \
	}                                                                                          \
	static void test_##name(void)

#define UNITTEST_FAIL(...)                                                                         \
	do {                                                                                       \
		printf("# %s:%d: ", __FILE__, __LINE__);                                           \
		printf(__VA_ARGS__);                                                               \
		putchar('\n');                                                                     \
		unittest_failed = true;                                                            \
	} while (0)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			UNITTEST_FAIL("CHECK(%s) failed", #cond);                                  \
	} while (0)

/* Like CHECK, but ends the test: for conditions the rest of it depends on. */
#define REQUIRE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			UNITTEST_FAIL("REQUIRE(%s) failed", #cond);                                \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		uint64_t ut_a_ = (uint64_t)(a), ut_b_ = (uint64_t)(b);                             \
		if (ut_a_ != ut_b_)                                                                \
			UNITTEST_FAIL("CHECK_EQ(%s, %s) failed: %" PRIu64 " != %" PRIu64, #a, #b,  \
				      ut_a_, ut_b_);                                               \
	} while (0)

#define CHECK_STREQ(a, b)                                                                          \
	do {                                                                                       \
		const char *ut_a_ = (a), *ut_b_ = (b);                                             \
		if (!ut_a_ || !ut_b_ ? ut_a_ != ut_b_ : strcmp(ut_a_, ut_b_) != 0)                 \
			UNITTEST_FAIL("CHECK_STREQ(%s, %s) failed:\n#   \"%s\"\n#   \"%s\"", #a,   \
				      #b, ut_a_ ? ut_a_ : "(null)", ut_b_ ? ut_b_ : "(null)");     \
	} while (0)

static int unittest_by_line(const void *a, const void *b)
{
	return ((const struct unittest *)a)->line - ((const struct unittest *)b)->line;
}

int main(void)
{
	int failed = 0;

	/* Constructors may run in any order: sort by line so the numbering is stable. */
	qsort(unittest_list, unittest_count, sizeof(unittest_list[0]), unittest_by_line);
	for (int i = 0; i < unittest_count; i++) {
		unittest_failed = false;
		unittest_list[i].fn();
		printf("%sok %d - %s\n", unittest_failed ? "not " : "", i + 1,
		       unittest_list[i].name);
		fflush(stdout);
		failed += unittest_failed;
	}
	printf("1..%d\n", unittest_count);
	return failed ? 1 : 0;
}

#endif
