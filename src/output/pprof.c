// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof's profile.proto (pprof.h): the messages are built in memory and encoded by libprotobuf-c
 * from code protoc-c generates out of the vendored profile.proto (Debian's libprotobuf-c-dev and
 * protobuf-c-compiler: a maintained encoder rather than one of ours), then gzipped with zlib, as
 * the format requires on disk. Without them (HAVE_PPROF unset) only pprof_available exists.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/frames.h"
#include "util/pairmap.h"
#include "output/pprof.h"
#include "util/util.h"

#ifndef HAVE_PPROF

bool pprof_available(void)
{
	return false;
}

int pprof_write(FILE *f, const struct table *t, const struct pprof_info *pi)
{
	(void)f, (void)t, (void)pi;
	return -ENOTSUP;
}

#else

#include <zlib.h>

#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

bool pprof_available(void)
{
	return true;
}

/* A growable array of pointers to messages. */
struct vec {
	void **v;
	size_t n, cap;
};

static void vec_push(struct vec *a, void *p)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = p;
}

struct builder {
	const struct pprof_info *pi;
	struct vec strings, functions, locations, samples;
	struct pairmap string_ids, function_ids, location_ids;
	uint64_t *mapping_of; /* per module: its mapping id */
};

/* The string table's index of s (NULL: "", index 0). Collisions of the hash go on probing
 * with another seed. */
static int64_t str_id(struct builder *b, const char *s)
{
	uint32_t *slot;

	if (!s || !*s)
		return 0;
	for (uint64_t seed = 0;; seed++) {
		slot = pairmap_slot(&b->string_ids, pairmap_str_hash(s, seed), 0);
		if (!*slot) {
			vec_push(&b->strings, xstrdup(s));
			*slot = (uint32_t)b->strings.n; /* strings[0] is "" */
			b->string_ids.n++;
			return *slot - 1;
		}
		if (!strcmp(b->strings.v[*slot - 1], s))
			return *slot - 1;
	}
}

/* The id of the function named name in file (either may be NULL). */
static uint64_t function_id(struct builder *b, const char *name, const char *file)
{
	int64_t n = str_id(b, name ? name : "??"), fl = str_id(b, file);
	uint32_t *slot = pairmap_slot(&b->function_ids, (uint64_t)n << 32 ^ (uint64_t)fl, 0);
	pb_function *fn;

	if (*slot)
		return *slot;
	fn = xmalloc(sizeof(*fn));
	perftools__profiles__function__init(fn);
	vec_push(&b->functions, fn);
	*slot = (uint32_t)b->functions.n;
	b->function_ids.n++;
	fn->id = *slot;
	fn->name = fn->system_name = n;
	fn->filename = fl;
	return fn->id;
}

static void add_line(pb_location *loc, uint64_t function, int line)
{
	pb_line *l = xmalloc(sizeof(*l));

	perftools__profiles__line__init(l);
	l->function_id = function;
	l->line = line > 0 ? line : 0;
	loc->line = xrealloc(loc->line, (loc->n_line + 1) * sizeof(*loc->line));
	loc->line[loc->n_line++] = l;
}

static pb_location *new_location(struct builder *b, uint32_t *slot, uint64_t addr)
{
	pb_location *loc = xmalloc(sizeof(*loc));

	perftools__profiles__location__init(loc);
	vec_push(&b->locations, loc);
	*slot = (uint32_t)b->locations.n;
	loc->id = *slot;
	loc->address = addr;
	for (size_t m = 0; m < b->pi->nmods; m++) {
		const struct pprof_module *pm = &b->pi->mods[m];

		if (addr >= pm->start && addr < pm->limit)
			loc->mapping_id = b->mapping_of[m]; /* later (newer) modules win */
	}
	return loc;
}

/* The location of frame idx of backtrace bt. */
static uint64_t location_id(struct builder *b, const struct table *t, const struct bt *bt,
			    unsigned idx)
{
	uint64_t pc = frames_addr(table_bt_pcs(t, bt)[idx]);
	struct sym_frame sf = { .line = -1 };
	uint32_t *slot;
	pb_location *loc;

	if (table_bt_before_attach(t, bt)) {
		/* no call site: the group and its size class, as the text report names them;
		 * keys with bit 63 set are never a pc */
		char cls[48];

		snprintf(cls, sizeof(cls), "[blocks of up to %" PRIu64 " bytes]",
			 table_bt_pcs(t, bt)[1]);
		slot = pairmap_slot(&b->location_ids,
				    pairmap_str_hash(idx ? cls : "", 0) | 1ull << 63, 0);
		if (!*slot) {
			b->location_ids.n++;
			loc = new_location(b, slot, 0);
			add_line(loc, function_id(b, idx ? cls : "[before attach]", NULL), 0);
		}
		return *slot;
	}
	slot = pairmap_slot(&b->location_ids, pc, 0);
	if (*slot)
		return *slot;
	b->location_ids.n++;
	loc = new_location(b, slot, pc);
	if (b->pi->resolve)
		b->pi->resolve(b->pi->resolve_ctx, pc, idx, &sf);
	for (unsigned i = 0; i < sf.ninlined; i++)
		add_line(loc, function_id(b, sf.inlined[i].function, sf.inlined[i].file),
			 sf.inlined[i].line);
	if (sf.function || !sf.module)
		add_line(loc, function_id(b, sf.function, sf.file), sf.line);
	else /* no name: the module and offset, as the text report shows it */
		add_line(loc, function_id(b, sf.module, NULL), 0);
	return loc->id;
}

static void add_sample(struct builder *b, const struct table *t, const struct bt *bt)
{
	pb_sample *s = xmalloc(sizeof(*s));

	perftools__profiles__sample__init(s);
	s->n_location_id = bt->depth;
	s->location_id = xmalloc(bt->depth * sizeof(*s->location_id));
	for (uint32_t d = 0; d < bt->depth; d++)
		s->location_id[d] = location_id(b, t, bt, d); /* the leaf first: frame 0 */
	s->n_value = 4;
	s->value = xmalloc(4 * sizeof(*s->value));
	s->value[0] = (int64_t)bt->total_count;
	s->value[1] = (int64_t)bt->total_size;
	s->value[2] = (int64_t)bt->count;
	s->value[3] = (int64_t)bt->size;
	vec_push(&b->samples, s);
}

static pb_type *value_type(struct builder *b, const char *type, const char *unit)
{
	pb_type *v = xmalloc(sizeof(*v));

	perftools__profiles__value_type__init(v);
	v->type = str_id(b, type);
	v->unit = str_id(b, unit);
	return v;
}

static pb_mapping *mapping(struct builder *b, size_t m)
{
	const struct pprof_module *pm = &b->pi->mods[m];
	pb_mapping *mp = xmalloc(sizeof(*mp));

	perftools__profiles__mapping__init(mp);
	mp->id = m + 1;
	mp->memory_start = pm->start;
	mp->memory_limit = pm->limit;
	mp->file_offset = pm->file_offset;
	mp->filename = str_id(b, pm->path);
	mp->build_id = str_id(b, pm->build_id);
	/* the locations carry their names: pprof must not look for them again */
	mp->has_functions = mp->has_filenames = mp->has_line_numbers = true;
	mp->has_inline_frames = true;
	b->mapping_of[m] = mp->id;
	return mp;
}

/* Gzip len bytes of buf onto f. Return 0 or -errno. */
static int gzip_out(FILE *f, const uint8_t *buf, size_t len)
{
	z_stream z = { 0 };
	uint8_t out[64 << 10];
	int zret;

	/* 16 + 15: a gzip wrapper around a full-window deflate stream */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + 15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)buf;
	do {
		size_t chunk = len - (size_t)(z.next_in - buf);

		z.avail_in = chunk > UINT32_MAX ? UINT32_MAX : (uInt)chunk;
		z.next_out = out;
		z.avail_out = sizeof(out);
		zret = deflate(&z, chunk == z.avail_in ? Z_FINISH : Z_NO_FLUSH);
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			deflateEnd(&z);
			return errno ? -errno : -EIO;
		}
	} while (zret == Z_OK || zret == Z_BUF_ERROR);
	deflateEnd(&z);
	return zret == Z_STREAM_END ? 0 : -EIO;
}

static void free_vec(struct vec *a, void (*fn)(void *))
{
	for (size_t i = 0; i < a->n; i++)
		fn(a->v[i]);
	free(a->v);
}

static void free_location(void *p)
{
	pb_location *loc = p;

	for (size_t i = 0; i < loc->n_line; i++)
		free(loc->line[i]);
	free(loc->line);
	free(loc);
}

static void free_sample(void *p)
{
	pb_sample *s = p;

	free(s->location_id);
	free(s->value);
	free(s);
}

int pprof_write(FILE *f, const struct table *t, const struct pprof_info *pi)
{
	struct builder b = { .pi = pi };
	pb_profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_type *types[4], *period;
	pb_mapping **maps;
	int64_t comments[2];
	uint8_t *buf;
	size_t len;
	int ret;

	vec_push(&b.strings, xstrdup(""));
	types[0] = value_type(&b, "alloc_objects", "count");
	types[1] = value_type(&b, "alloc_space", "bytes");
	types[2] = value_type(&b, "inuse_objects", "count");
	types[3] = value_type(&b, "inuse_space", "bytes");
	period = value_type(&b, "space", "bytes");
	b.mapping_of = xcalloc(pi->nmods ? pi->nmods : 1, sizeof(*b.mapping_of));
	maps = xcalloc(pi->nmods ? pi->nmods : 1, sizeof(*maps));
	for (size_t m = 0; m < pi->nmods; m++)
		maps[m] = mapping(&b, m);
	/* every backtrace ever seen: the alloc_ values count the freed ones too */
	for (uint32_t i = 0; i < t->nbts; i++)
		if (t->bts[i].total_count || t->bts[i].count)
			add_sample(&b, t, &t->bts[i]);
	p.n_sample_type = 4;
	p.sample_type = types;
	p.n_sample = b.samples.n;
	p.sample = (pb_sample **)b.samples.v;
	p.n_mapping = pi->nmods;
	p.mapping = maps;
	p.n_location = b.locations.n;
	p.location = (pb_location **)b.locations.v;
	p.n_function = b.functions.n;
	p.function = (pb_function **)b.functions.v;
	p.duration_nanos = (int64_t)pi->duration_ns;
	p.period_type = period;
	/* 1: every allocation is counted; else --sample-bytes, whose values are estimates, as Go's
	 * runtime sets its MemProfileRate */
	p.period = t->sample_bytes ? (int64_t)t->sample_bytes : 1;
	comments[p.n_comment] = str_id(&b, pi->comment);
	p.n_comment += comments[p.n_comment] != 0;
	if (t->sample_bytes)
		comments[p.n_comment++] = str_id(&b, "sampled by --sample-bytes: the values are "
						     "estimates");
	p.comment = comments;
	p.time_nanos = (int64_t)pi->time_ns;
	p.default_sample_type = pi->default_type ? str_id(&b, pi->default_type) : types[3]->type;
	p.n_string_table = b.strings.n; /* last: every string is in by now */
	p.string_table = (char **)b.strings.v;
	len = perftools__profiles__profile__get_packed_size(&p);
	buf = xmalloc(len ? len : 1);
	perftools__profiles__profile__pack(&p, buf);
	ret = gzip_out(f, buf, len);
	if (!ret && (fflush(f) || ferror(f)))
		ret = errno ? -errno : -EIO;
	free(buf);
	for (unsigned i = 0; i < 4; i++)
		free(types[i]);
	free(period);
	for (size_t m = 0; m < pi->nmods; m++)
		free(maps[m]);
	free(maps);
	free(b.mapping_of);
	free_vec(&b.strings, free);
	free_vec(&b.functions, free);
	free_vec(&b.locations, free_location);
	free_vec(&b.samples, free_sample);
	free(b.string_ids.v);
	free(b.function_ids.v);
	free(b.location_ids.v);
	return ret;
}

#endif
