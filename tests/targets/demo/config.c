// SPDX-License-Identifier: GPL-2.0-only
/* demo: parse "key=value" lines into a list. config_free forgets the keys (a known leak). */
#include <stdlib.h>
#include <string.h>

#include "demo.h"

char *config_intern_key(const char *key, size_t len)
{
	char *k = malloc(KEY_MAX); /* site(config_intern_key) */

	if (len >= KEY_MAX)
		len = KEY_MAX - 1;
	memcpy(k, key, len);
	k[len] = '\0';
	return k;
}

struct entry *config_parse(const char *text, unsigned *count)
{
	struct entry *head = NULL, **tail = &head;

	*count = 0;
	while (*text) {
		const char *eq = strchr(text, '='), *nl = strchr(text, '\n');
		size_t key_len = (size_t)(eq - text);
		struct entry *e = malloc(sizeof(*e));

		e->key = config_intern_key(text, key_len); /* call(config_intern_key) */
		e->value = malloc((size_t)(nl - eq)); /* value and its '\0' */
		memcpy(e->value, eq + 1, (size_t)(nl - eq - 1));
		e->value[nl - eq - 1] = '\0';
		e->next = NULL;
		*tail = e;
		tail = &e->next;
		++*count;
		text = nl + 1;
	}
	return head;
}

void config_free(struct entry *list)
{
	while (list) {
		struct entry *next = list->next;

		free(list->value); /* the key is forgotten here */
		free(list);
		list = next;
	}
}
