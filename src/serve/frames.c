// SPDX-License-Identifier: GPL-2.0-only
/* The symbolised frames of a traced process, kept between requests (frames.h). */
#include <stdlib.h>
#include <string.h>

#include "serve/frames.h"
#include "symbols/symbols.h"
#include "util/util.h"

void sframes_init(struct sframes *c, pid_t pid, uint32_t epoch)
{
	*c = (struct sframes){ .pid = pid, .epoch = epoch };
}

void sframes_free(struct sframes *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		free((void *)c->v[i].inlined);
	free(c->v);
	free(c->ids.v);
	for (uint32_t i = 0; i < c->strs_cap; i++)
		free(c->strs[i]);
	free(c->strs);
	free(c->mod_ids.v);
	free(c->build_ids);
	*c = (struct sframes){ 0 };
}

static void strs_grow(struct sframes *c)
{
	uint32_t cap = c->strs_cap ? c->strs_cap * 2 : 256;
	char **v = xcalloc(cap, sizeof(*v));

	for (uint32_t i = 0; i < c->strs_cap; i++) {
		uint64_t h;

		if (!c->strs[i])
			continue;
		h = pairmap_str_hash(c->strs[i], 0);
		while (v[h & (cap - 1)])
			h++;
		v[h & (cap - 1)] = c->strs[i];
	}
	free(c->strs);
	c->strs = v;
	c->strs_cap = cap;
}

const char *sframes_str(struct sframes *c, const char *s)
{
	uint64_t h;

	if (!s)
		return NULL;
	if ((c->nstrs + 1) * 4 > c->strs_cap * 3)
		strs_grow(c);
	for (h = pairmap_str_hash(s, 0);; h++) {
		char **slot = &c->strs[h & (c->strs_cap - 1)];

		if (!*slot) {
			*slot = xstrdup(s);
			c->nstrs++;
			return *slot;
		}
		if (!strcmp(*slot, s))
			return *slot;
	}
}

static uint32_t *slot_of(struct sframes *c, uint64_t pc, bool frame0)
{
	return pairmap_slot(&c->ids, pc, frame0 ? 2 : 1);
}

bool sframes_has(struct sframes *c, uint64_t pc, bool frame0)
{
	/* a look-up may grow the map or leave an empty slot keyed: it stays empty (value 0) */
	return c->ids.cap && *slot_of(c, pc, frame0);
}

void sframes_add(struct sframes *c, uint64_t pc, bool frame0, const struct sym_frame *sf)
{
	uint32_t *slot = slot_of(c, pc, frame0);
	struct sym_frame *f;
	struct sym_inline *inl = NULL;

	if (*slot)
		return;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	f = &c->v[c->n];
	*f = *sf;
	f->function = sframes_str(c, sf->function);
	f->module = sframes_str(c, sf->module);
	f->file = sframes_str(c, sf->file);
	if (sf->ninlined) {
		inl = xmalloc(sf->ninlined * sizeof(*inl));
		for (unsigned i = 0; i < sf->ninlined; i++)
			inl[i] = (struct sym_inline){ sframes_str(c, sf->inlined[i].function),
						      sframes_str(c, sf->inlined[i].file),
						      sf->inlined[i].line };
	}
	f->inlined = inl;
	*slot = ++c->n;
	c->ids.n++;
}

void sframes_resolve(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	struct sframes *c = ctx;
	uint32_t id = c->ids.cap ? *slot_of(c, pc, index == 0) : 0;

	*out = id ? c->v[id - 1] : (struct sym_frame){ .line = -1 };
}

const char *sframes_build_id(struct sframes *c, const char *path)
{
	const char *key = sframes_str(c, path);
	uint32_t *slot = pairmap_slot(&c->mod_ids, (uint64_t)(uintptr_t)key, 0);
	char hex[SYM_BUILD_ID_MAX];

	if (!*slot) {
		if (sym_build_id_hex(path, hex, sizeof(hex)))
			hex[0] = '\0';
		c->build_ids = xrealloc(c->build_ids, (c->nbuild_ids + 1) * sizeof(*c->build_ids));
		c->build_ids[c->nbuild_ids++] = sframes_str(c, hex);
		*slot = c->nbuild_ids;
		c->mod_ids.n++;
	}
	return *c->build_ids[*slot - 1] ? c->build_ids[*slot - 1] : NULL;
}
