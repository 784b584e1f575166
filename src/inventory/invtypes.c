// SPDX-License-Identifier: GPL-2.0-only
/*
 * C++ type census of the blocks found at the attach, by RTTI, without symbols: a block whose
 * first word points into a read-only mapping of a file may start with a vptr (the Itanium ABI
 * puts the primary one at offset 0); then vptr[-1] is its std::type_info, whose second word
 * points at the mangled class name ("6Circle"), which libstdc++'s __cxa_demangle turns into
 * "Circle". Each step is checked (pointers into read-only file mappings, a NUL-terminated
 * printable name that demangles), so a plain block is not taken for an object. Types are read
 * once per distinct vptr. Arrays from new[] with a cookie, -fno-rtti code and non-polymorphic
 * types are not seen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory/inventory.h"
#include "util/util.h"

#define NAME_MAX_LEN 120

/* libstdc++ (heaptrace links it already for libunwind's C++ users) */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct vref {
	uint64_t vptr, size;
};

static int vref_cmp(const void *x, const void *y)
{
	const struct vref *a = x, *b = y;

	return a->vptr < b->vptr ? -1 : a->vptr > b->vptr;
}

static bool in_ro(const struct inv_image *img, uint64_t addr)
{
	for (size_t i = 0; i < img->nro; i++)
		if (addr >= img->ro[i].start && addr < img->ro[i].end)
			return true;
	return false;
}

/* The demangled class name of the objects whose vptr is v, into name; false if v is no vptr. */
static bool class_name(const struct inv_image *img, inv_read_fn rd, void *ctx, uint64_t v,
		       char *name, size_t len)
{
	uint64_t ti, w[2];
	char mangled[NAME_MAX_LEN + 8], *dem;
	const char *m = mangled;
	int status = -1;
	size_t n;

	if (!rd(ctx, v - 8, &ti, 8) || (ti & 7) || !in_ro(img, ti) || !rd(ctx, ti, w, 16) ||
	    !in_ro(img, w[0]) || !in_ro(img, w[1]))
		return false;
	memset(mangled, 0, sizeof(mangled));
	if (!rd(ctx, w[1], mangled, NAME_MAX_LEN))
		return false;
	n = strnlen(mangled, NAME_MAX_LEN);
	if (n == NAME_MAX_LEN || !n)
		return false;
	if (*m == '*') /* a type local to one object file */
		m++;
	if (!((*m >= '1' && *m <= '9') || *m == 'N'))
		return false;
	for (const char *c = m; *c; c++)
		if (*c <= ' ' || *c > '~')
			return false;
	dem = __cxa_demangle(m, NULL, NULL, &status);
	if (status || !dem) {
		free(dem);
		return false;
	}
	snprintf(name, len, "%s", dem);
	free(dem);
	return true;
}

static int type_cmp(const void *x, const void *y)
{
	const struct inv_type *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->name, b->name);
}

void inv_type_census(struct inventory *inv, const struct inv_image *img, inv_read_fn rd,
		     void *ctx)
{
	struct vref *v = xmalloc((inv->nblocks ? inv->nblocks : 1) * sizeof(*v));
	size_t nv = 0;

	for (size_t i = 0; i < inv->nblocks; i++) {
		uint64_t w;

		if (inv->blocks[i].size >= 8 && inv_read64(img, inv->blocks[i].ptr, &w) &&
		    !(w & 7) && in_ro(img, w))
			v[nv++] = (struct vref){ w, inv->blocks[i].size };
	}
	qsort(v, nv, sizeof(*v), vref_cmp);
	for (size_t i = 0, j; i < nv; i = j) {
		char name[sizeof(inv->types[0].name)];
		uint64_t blocks = 0, bytes = 0;
		size_t k;

		for (j = i; j < nv && v[j].vptr == v[i].vptr; j++) {
			blocks++;
			bytes += v[j].size;
		}
		if (!class_name(img, rd, ctx, v[i].vptr, name, sizeof(name)))
			continue;
		for (k = 0; k < inv->ntypes && strcmp(inv->types[k].name, name); k++)
			;
		if (k == inv->ntypes) {
			inv->types = xrealloc(inv->types, (k + 1) * sizeof(*inv->types));
			memset(&inv->types[k], 0, sizeof(inv->types[k]));
			snprintf(inv->types[k].name, sizeof(inv->types[k].name), "%s", name);
			inv->ntypes++;
		}
		inv->types[k].blocks += blocks;
		inv->types[k].bytes += bytes;
	}
	if (inv->ntypes)
		qsort(inv->types, inv->ntypes, sizeof(*inv->types), type_cmp);
	free(v);
}
