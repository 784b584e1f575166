// SPDX-License-Identifier: GPL-2.0-only
/* demo: a cache of values in buckets made on first use. cache_free forgets the buckets. */
#include <stdlib.h>
#include <string.h>

#include "demo.h"

char *cache_new_bucket(void)
{
	char *b = malloc(BUCKET_SIZE); /* site(cache_new_bucket) */

	b[0] = '\0';
	return b;
}

struct cache *cache_new(unsigned nbuckets)
{
	struct cache *c = malloc(sizeof(*c));
	unsigned i;

	c->nbuckets = nbuckets;
	c->buckets_made = 0;
	for (i = 0; i < sizeof(c->bucket) / sizeof(c->bucket[0]); i++)
		c->bucket[i] = NULL;
	return c;
}

void cache_put(struct cache *c, unsigned slot, const char *value)
{
	char **b = &c->bucket[slot % c->nbuckets];

	if (!*b) {
		*b = cache_new_bucket(); /* call(cache_new_bucket) */
		c->buckets_made++;
	}
	strncat(*b, value, BUCKET_SIZE - strlen(*b) - 1);
}

void cache_free(struct cache *c)
{
	free(c); /* the buckets are forgotten here */
}
