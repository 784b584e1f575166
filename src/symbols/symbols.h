/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SYMBOLS_H
#define HEAPTRACE_SYMBOLS_H

/*
 * ELF facts with libelf (hooked symbols, load segments, interpreter) and, at report time,
 * pc -> function, offset, module, source file and line with libdwfl, cached per pc.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heap/hooks.h"
#include "symbols/symframe.h"
#include "util/maps.h"

struct elf_info {
	int type; /* ET_EXEC, ET_DYN */
	int machine; /* EM_* */
	int elf_class; /* ELFCLASS32 / ELFCLASS64 */
	uint64_t entry;
	uint64_t first_load_vaddr; /* p_vaddr of the first PT_LOAD, page aligned */
	bool has_interp; /* PT_INTERP: dynamically linked */
	char interp[256]; /* its path ("" if none, or too long) */
	bool truncated; /* the file ends before its program headers or a loaded segment do */
};

/* Return 0, -ENOEXEC if path is not ELF, or -errno. */
int sym_elf_info(const char *path, struct elf_info *info);

/* Read len bytes of the ELF file at path as loaded at virtual address vaddr (its code as the
 * file has it). Return the bytes read or -errno (-ENOENT: not in a loaded segment). */
ssize_t sym_read_code(const char *path, uint64_t vaddr, void *buf, size_t len);

/* A place for len bytes of code of ours after the end of an executable segment of the ELF file
 * at path, in the last page it maps (bytes no code of its own uses). Return 0 with *vaddr, or
 * -errno (-ENOSPC: none). */
int sym_exec_cave(const char *path, size_t len, uint64_t *vaddr);

/*
 * Find the malloc family in the symbol tables (.symtab and .dynsym) of the ELF file at path.
 * addrs[i] receives the file's symbol value of hook i (0 if not defined there). Return the
 * number found, or -errno.
 */
int sym_find_hooks(const char *path, uint64_t addrs[HOOK_COUNT]);
/* The same, and in *foreign the bit of each allocator heaptrace does not trace itself
 * (hook_foreign) whose entry point path defines. */
int sym_find_hooks_foreign(const char *path, uint64_t addrs[HOOK_COUNT], uint32_t *foreign);

/* Where path's symbols are read from: the --symbols file of its build-id, else the file
 * DIR/.build-id/xx/rest.debug of --debug-dir, else path (valid until the next call). */
const char *sym_source(const char *path);

/* The size of the function symbol whose value is value in path (the largest, of aliases), or 0. */
uint64_t sym_func_size(const char *path, uint64_t value);

/* Whether the nearest function symbol of path's symbol file below code address addr spans it
 * (arm: a Thumb symbol's code starts at its value less bit 0). */
bool sym_inside_func(const char *path, uint64_t addr);
#define SYM_BUILD_ID_MAX 129 /* hex digits of a GNU build-id (up to 64 bytes), and a NUL */

/* The GNU build-id of the ELF file at path in hex. Return 0, -ENOMSG (none) or -errno. */
int sym_build_id_hex(const char *path, char *hex, size_t len);

/*
 * Read the symbols (and debug information) of any module with the same build-id from path
 * (--symbols: an unstripped copy or a separate debug file), its build-id in id. Return 0,
 * -ENOMSG (no build-id), -ENOEXEC (not ELF) or -errno.
 */
int sym_add_symbols(const char *path, char *id, size_t len);

/* Look for separate debug files as DIR/.build-id/xx/rest.debug (--debug-dir). Return 0 or
 * -errno (-ENOTDIR). */
int sym_set_debug_dir(const char *dir);

/* The values and sizes of the defined function or data symbols names[0..n) of path (0: not
 * defined), from its symbol table and its dynamic one. Return 0 or -errno. */
int sym_lookup_many(const char *path, const char *const *names, size_t n, uint64_t *values,
		    uint64_t *sizes);

/* Value of a defined function symbol in path, or 0. */
uint64_t sym_lookup(const char *path, const char *name);

/*
 * Whether code address addr (a symbol's value, the Thumb bit cleared) of the ELF file path may
 * be patched as a function's entry (symentry.c): 0 if it lies in an executable segment, starts
 * its row of the file's call frame information (if any), and lies inside no other function
 * symbol; -EFAULT outside executable code, -EILSEQ inside a function, or -errno.
 */
int sym_code_entry(const char *path, uint64_t addr);

struct symbolizer;

/* A symbolizer over the modules of one process; it keeps its own copy of what it needs. */
struct symbolizer *sym_open(const struct modlist *ml);
void sym_close(struct symbolizer *s);

/*
 * For a symbolizer made in another thread (symcache.h): the file each module of ml is read
 * from (--symbols, --debug-dir), found in the calling thread (malloc'd array of ml->n malloc'd
 * paths); sym_open_sources opens on them without touching this file's shared state, and
 * sym_add_modules reports modules [from, ml->n) added since.
 */
char **sym_sources(const struct modlist *ml);
struct symbolizer *sym_open_sources(const struct modlist *ml, char *const *files);
void sym_add_modules(struct symbolizer *s, const struct modlist *ml, size_t from,
		     char *const *files);

/* Read every module's symbols and debug information now (libdw inflates compressed sections
 * then: about 0.1 s of CPU for Debian's libc6-dbg), not at the first look-up. */
void sym_warm(struct symbolizer *s);

/* The symbol of the function holding pc (a return address: at pc - 1), as the symbol table
 * has it (a version suffix, no demangling), and its value in *start; NULL if unknown. No
 * source lines: cheap enough to call while tracing. */
const char *sym_function(struct symbolizer *s, uint64_t pc, bool is_return, uint64_t *start);

/* The libdwfl module holding code address at (a return address's call site: pc - 1), for
 * its CFI (cfi.h); NULL if none. */
struct Dwfl_Module *sym_module(struct symbolizer *s, uint64_t at);

/* C++ name demangled (kept as long as s), or NULL if it is none. */
const char *sym_demangled(struct symbolizer *s, const char *name);

/* A symbolizer for a recorded process (cmd/side.c): module i is read from files[i] (NULL: not
 * found), its path kept as its name; debug_path is libdwfl's search path for separate debug
 * files ("" parts and /usr/lib/debug as in its default; NULL: the default). */
struct symbolizer *sym_open_files(const struct modlist *ml, char *const *files,
				  const char *debug_path);

/* The GNU build-id of the ELF file at path into id. Return its length, or -errno (-ENOENT:
 * the file has none). */
int sym_build_id(const char *path, uint8_t *id, size_t cap);

/* Symbolise pc; a return address (is_return) is looked up at pc - 1, the call site. A return
 * address in no module is named from s's perf map (sym_set_jit), if it has one: sf->jit. */
void sym_resolve(struct symbolizer *s, uint64_t pc, bool is_return, struct sym_frame *out);

struct perfmap;

/* Name the return addresses in no module from pm (perfmap.h; NULL: none), which must live as
 * long as s does or until the next call. */
void sym_set_jit(struct symbolizer *s, struct perfmap *pm);

#endif
