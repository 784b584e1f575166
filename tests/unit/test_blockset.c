// SPDX-License-Identifier: GPL-2.0-only
/* The live-block set: lookups, removals and growth in place against a plain array. */
#include "heap/blockset.h"
#include "unittest.h"

/* Every block knows its distance from home, and every slot from its home to it is taken (no
 * probe meets a hole before its block); no key marked; n blocks in all. Return the number of
 * faults. */
static unsigned check_order(const struct blockset *s)
{
	uint64_t n = 0, faults = 0;

	for (uint64_t i = 0; i < s->cap; i++) {
		uint64_t key = s->slots[i].ptr, home, d;

		if (!key)
			continue;
		n++;
		if (key & BLOCKSET_KEY_FREE_BIT)
			faults++;
		home = blockset_home(key, s->cap);
		d = i >= home ? i - home : i + s->cap - home;
		if (d != s->slots[i].dist)
			faults++;
		for (uint64_t k = home; k != i; k = k + 1 == s->cap ? 0 : k + 1)
			if (!s->slots[k].ptr)
				faults++;
	}
	return faults + (n != s->n);
}

/* A pseudo-random sequence (xorshift), so a failure replays. */
static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

TEST_CASE(random_inserts_and_removals_across_growth)
{
	enum { N = 200000 };
	static uint64_t keys[N];
	static bool in[N];
	struct blockset s = { 0 };
	uint64_t x = 88172645463325252ull, live = 0, grew = 0, cap = 0;

	/* distinct keys in a scrambled order: an odd multiplier is a bijection mod 2^36 */
	for (int i = 0; i < N; i++)
		keys[i] = 0x7f0000000000ull + ((uint64_t)i * 2654435761u % (1ull << 36)) * 16 + 16;
	for (int step = 0; step < 3 * N; step++) {
		int i = (int)(next_rand(&x) % N);
		struct block *b = blockset_find(&s, keys[i]);

		if (in[i] != (b != NULL)) {
			UNITTEST_FAIL("step %d: key %d %s", step, i, in[i] ? "lost" : "found, not in");
			break;
		}
		if (b && b->size != (uint64_t)i) {
			UNITTEST_FAIL("step %d: key %d holds size %" PRIu64, step, i,
				      (uint64_t)b->size);
			break;
		}
		/* two inserts for every removal: the set grows through several capacities */
		if (b && next_rand(&x) % 3 == 0) {
			blockset_remove(&s, b);
			in[i] = false;
			live--;
		} else if (!b) {
			struct block nb = { .ptr = keys[i], .size = (uint64_t)i, .bt = (uint32_t)i };

			if (i % 2) {
				blockset_insert(&s, &nb);
			} else {
				bool added = false;
				struct block *at = blockset_claim(&s, keys[i], &added);

				CHECK(added && at->ptr == keys[i] && at->size == 0);
				at->size = nb.size;
			}
			in[i] = true;
			live++;
		}
		if (s.cap != cap) {
			grew++;
			cap = s.cap;
			CHECK_EQ(check_order(&s), 0);
		}
	}
	CHECK_EQ(s.n, live);
	CHECK(grew >= 5);
	CHECK_EQ(check_order(&s), 0);
	for (uint64_t i = 0, wrong = 0; i < N && wrong < 10; i++)
		if (in[i] != (blockset_find(&s, keys[i]) != NULL) && ++wrong)
			UNITTEST_FAIL("key %" PRIu64 " %s at the end", i, in[i] ? "lost" : "found");
	blockset_destroy(&s);
}

TEST_CASE(growth_with_runs_that_wrap)
{
	/* fill a fresh set to its limit with keys at the top of the array, whose runs wrap to
	 * slot 0, then one more: the growth must place every one again */
	struct blockset s = { 0 };
	struct block nb = { .ptr = 0 };
	uint64_t key = 0x10000, n = 0, cap;

	nb.ptr = 0x10;
	blockset_insert(&s, &nb);
	blockset_remove(&s, blockset_find(&s, 0x10));
	cap = s.cap;
	REQUIRE(cap > 0);
	while ((n + 1) * 4 <= cap * 3) {
		for (;; key += 16)
			if (blockset_home(key, cap) >= cap - cap / 8)
				break;
		nb.ptr = key;
		nb.size = n++;
		blockset_insert(&s, &nb);
		key += 16;
	}
	REQUIRE(s.cap == cap);
	CHECK(s.slots[0].ptr != 0); /* the runs wrapped */
	nb.ptr = key + 16;
	blockset_insert(&s, &nb);
	CHECK(s.cap > cap);
	CHECK_EQ(check_order(&s), 0);
	for (uint64_t k = 0x10000, found = 0; found < n; k += 16)
		if (blockset_home(k, cap) >= cap - cap / 8 && k < key) {
			const struct block *b = blockset_find(&s, k);

			if (!b || b->size != found) {
				UNITTEST_FAIL("block %" PRIu64 " lost in the growth", found);
				break;
			}
			found++;
		}
	blockset_destroy(&s);
}

TEST_CASE(copy_owns_its_slots)
{
	struct blockset a = { 0 }, b;
	struct block nb = { .ptr = 0x1000, .size = 5, .bt = 1, .time_ms = 2 };

	blockset_insert(&a, &nb);
	blockset_copy(&b, &a);
	blockset_remove(&a, blockset_find(&a, 0x1000));
	CHECK(blockset_find(&a, 0x1000) == NULL);
	REQUIRE(blockset_find(&b, 0x1000) != NULL);
	CHECK_EQ(blockset_find(&b, 0x1000)->size, 5);
	blockset_destroy(&a);
	blockset_destroy(&b);
	CHECK(b.slots == NULL && b.n == 0);
}
