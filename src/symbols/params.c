// SPDX-License-Identifier: GPL-2.0-only
/* A function's argument words from its DWARF (libdw; see params.h). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PR_DOMAIN "params"
#include "util/log.h"
#include "symbols/params.h"
#include "symbols/symbols.h"

struct find {
	Dwarf_Addr addr;
	Dwarf_Die die;
	bool found;
};

static int func_cb(Dwarf_Die *d, void *arg)
{
	struct find *f = arg;
	Dwarf_Addr lo;

	if (dwarf_lowpc(d, &lo) || lo != f->addr)
		return DWARF_CB_OK;
	f->die = *d;
	f->found = true;
	return DWARF_CB_ABORT;
}

/* The type named by die's DW_AT_type without typedefs and qualifiers. Return false if it has
 * none (void). */
static bool type_of(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;
	Dwarf_Die t;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return false;
	return dwarf_peel_type(&t, type) == 0;
}

/* Words a value of type takes, or -E2BIG for one that may go on the stack whatever the
 * count: an aggregate, or a float wider than 8 bytes (x86_64's long double). */
static int words_of(Dwarf_Die *type, unsigned word_size)
{
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	int size;

	switch (dwarf_tag(type)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		return 1;
	case DW_TAG_base_type:
	case DW_TAG_enumeration_type:
		break;
	default:
		return -E2BIG;
	}
	size = dwarf_bytesize(type);
	if (size <= 0 || (unsigned)size > 2 * word_size)
		return -E2BIG;
	if (dwarf_attr(type, DW_AT_encoding, &a) && !dwarf_formudata(&a, &enc) &&
	    (enc == DW_ATE_float || enc == DW_ATE_complex_float) && size > 8)
		return -E2BIG;
	return (int)(((unsigned)size + word_size - 1) / word_size);
}

/* Argument words of subprogram die (params.h). */
static int count_words(Dwarf_Die *die, unsigned word_size)
{
	Dwarf_Attribute a;
	Dwarf_Die origin, child, type;
	int words = 0;

	/* an out-of-line copy of an inlined function lists its parameters at its origin */
	if (dwarf_attr(die, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &origin))
		die = &origin;
	if (type_of(die, &type) && words_of(&type, word_size) < 0)
		return -E2BIG; /* an aggregate result: a hidden pointer argument, or memory */
	if (dwarf_child(die, &child))
		return 0;
	do {
		int w;

		if (dwarf_tag(&child) == DW_TAG_unspecified_parameters)
			return -E2BIG;
		if (dwarf_tag(&child) != DW_TAG_formal_parameter)
			continue;
		w = type_of(&child, &type) ? words_of(&type, word_size) : -E2BIG;
		if (w < 0)
			return w;
		if (w == 2 && word_size == 4)
			words += words & 1; /* AAPCS: a 64-bit argument in an even register pair */
		words += w;
	} while (!dwarf_siblingof(&child, &child));
	return words;
}

/* params_words from the DWARF of the file at path alone. */
static int words_in(const char *path, uint64_t addr, unsigned word_size)
{
	struct find f = { .addr = addr };
	Dwarf_Die cu;
	Dwarf *dw;
	int ret = -ENOENT, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (dw && dwarf_addrdie(dw, addr, &cu)) {
		dwarf_getfuncs(&cu, func_cb, &f, 0);
		if (f.found)
			ret = count_words(&f.die, word_size);
	}
	if (dw)
		dwarf_end(dw);
	close(fd);
	pr_dbg(2, "%s at %#llx: %d argument words", path, (unsigned long long)addr, ret);
	return ret;
}

int params_words(const char *path, uint64_t addr, unsigned word_size)
{
	char hex[SYM_BUILD_ID_MAX], debug[PATH_MAX];
	const char *src = sym_source(path);
	int ret = -ENOENT;

	/* where its symbols come from (--symbols, --debug-dir), the file itself, and a Debian
	 * -dbgsym package's file (named by build-id, as libdwfl finds it) */
	if (strcmp(src, path))
		ret = words_in(src, addr, word_size);
	if (ret == -ENOENT)
		ret = words_in(path, addr, word_size);
	if (ret == -ENOENT && !sym_build_id_hex(path, hex, sizeof(hex))) {
		snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex,
			 hex + 2);
		if (!access(debug, R_OK))
			ret = words_in(debug, addr, word_size);
	}
	return ret;
}
