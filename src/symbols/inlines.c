// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inlined calls (inlines.h). dwarf_getscopes lists the DIEs whose ranges hold the address,
 * innermost first: lexical blocks, DW_TAG_inlined_subroutine instances, then the
 * DW_TAG_subprogram of the real function. Each inlined instance names its function through
 * DW_AT_abstract_origin and says where it was called from (DW_AT_call_file, an index into the
 * compilation unit's file table, and DW_AT_call_line).
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/inlines.h"
#include "util/util.h"

char *__cxa_demangle(const char *name, char *buf, size_t *len, int *status);

/* The function of an inlined instance: its linkage name demangled (C++ scopes and all), or
 * its name. */
static const char *inline_name(Dwarf_Die *die, inlines_keep_fn keep, void *ctx)
{
	Dwarf_Attribute a;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	int status = -1;
	char *dm;

	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (name && name[0] == '_' && name[1] == 'Z') {
		dm = __cxa_demangle(name, NULL, NULL, &status);
		if (status == 0 && dm)
			return keep(ctx, dm);
		free(dm);
	}
	return name ? name : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* The physical chain of scopes from the innermost function instance holding at (an inlined
 * instance, or the function itself) out to the compilation unit; its length, or <= 0. */
static int function_scopes(Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die **chain)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, addr, &scopes), i, ret = 0;

	/* dwarf_getscopes goes on from an inlined instance into its abstract definition, not
	 * into what it was inlined into: only its first function-like scope is wanted */
	for (i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			ret = dwarf_getscopes_die(&scopes[i], chain);
			break;
		}
	}
	free(scopes);
	return ret;
}

unsigned inlines_at(Dwfl_Module *mod, Dwarf_Addr at, const char **file, int *line,
		    const struct sym_inline **out, inlines_keep_fn keep, void *ctx)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, at, &bias), *scopes = NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	struct sym_inline *v;
	unsigned k = 0;
	int n, i;

	*out = NULL;
	if (!cu || (n = function_scopes(cu, at - bias, &scopes)) <= 0)
		return 0;
	for (i = 0; i < n && dwarf_tag(&scopes[i]) != DW_TAG_subprogram; i++)
		k += dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
	if (!k) {
		free(scopes);
		return 0;
	}
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	v = (struct sym_inline *)keep(ctx, xcalloc(k, sizeof(*v)));
	k = 0;
	for (i = 0; i < n && dwarf_tag(&scopes[i]) != DW_TAG_subprogram; i++) {
		Dwarf_Attribute a;
		Dwarf_Word w;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		v[k].function = inline_name(&scopes[i], keep, ctx);
		v[k].file = *file;
		v[k++].line = *line;
		/* what follows is at this instance's call site */
		*file = NULL;
		*line = -1;
		if (files && !dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &w) &&
		    w < nfiles)
			*file = base_name(dwarf_filesrc(files, w, NULL, NULL));
		if (!dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &w) && w > 0 &&
		    w < 0x7fffffff)
			*line = (int)w;
	}
	free(scopes);
	*out = v;
	return k;
}
