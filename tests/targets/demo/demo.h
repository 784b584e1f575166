/* SPDX-License-Identifier: GPL-2.0-only */
/* demo: a tiny configuration parser and value cache; see main.c for what it leaks. */
#ifndef DEMO_H
#define DEMO_H

#include <stddef.h>

#define KEY_MAX 16 /* every key gets a fixed 16-byte buffer */
#define BUCKET_SIZE 1024 /* every cache bucket is 1 KiB */

struct entry {
	char *key;
	char *value;
	struct entry *next;
};

struct cache {
	unsigned nbuckets, buckets_made;
	char *bucket[8];
};

/* config.c */
struct entry *config_parse(const char *text, unsigned *count);
char *config_intern_key(const char *key, size_t len);
void config_free(struct entry *list);

/* cache.c */
struct cache *cache_new(unsigned nbuckets);
void cache_put(struct cache *c, unsigned slot, const char *value);
char *cache_new_bucket(void);
void cache_free(struct cache *c);

#endif
