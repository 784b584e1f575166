// SPDX-License-Identifier: GPL-2.0-only
/*
 * demo: the program `make demo` traces. It parses a small built-in configuration into a list of
 * entries, copies the values into a cache, and tears everything down, but forgets two things.
 * Known to leave exactly two call sites live at exit, and nothing else (no stdio is used):
 *   config_intern_key <- config_parse <- main : 6 keys of KEY_MAX (16) bytes = 96 bytes
 *   cache_new_bucket <- cache_put <- main     : 3 buckets of BUCKET_SIZE (1024) bytes = 3072 bytes
 * In all it makes 22 allocations (6 entries, 6 keys, 6 values, 1 cache, 3 buckets) and 13 frees.
 */
#include "demo.h"
#include "expect.h"

static const char config_text[] = "name=demo\n"
				  "threads=4\n"
				  "log=stderr\n"
				  "retries=5\n"
				  "timeout=30\n"
				  "cache=on\n";

int main(void)
{
	struct expect_sum sum = { 0 };
	struct entry *list, *e;
	struct cache *c;
	unsigned n, slot = 0;

	list = config_parse(config_text, &n); /* call(config_parse) */
	c = cache_new(3);
	for (e = list; e; e = e->next)
		cache_put(c, slot++, e->value); /* call(cache_put) */
	config_free(list); /* frees entries and values, but not the keys */
	expect_site("malloc", n, n * KEY_MAX, "config_intern_key,config_parse,main");
	expect_site("malloc", c->buckets_made, c->buckets_made * BUCKET_SIZE,
		    "cache_new_bucket,cache_put,main");
	sum.alloc_calls = 3 * n + 1 + c->buckets_made;
	sum.free_calls = 2 * n + 1;
	sum.live_blocks = n + c->buckets_made;
	sum.live_bytes = n * KEY_MAX + c->buckets_made * BUCKET_SIZE;
	cache_free(c); /* frees the cache, but not its buckets */
	expect_summary(&sum);
	return 0;
}
