// SPDX-License-Identifier: GPL-2.0-only
/* libelf for the hooked symbols; libdwfl for symbolisation at report time. */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PR_DOMAIN "symbols"
#include "symbols/inlines.h"
#include "util/log.h"
#include "symbols/perfmap.h"
#include "symbols/symbols.h"
#include "util/util.h"

/* From libstdc++ (linked with -lstdc++): demangles C++ names. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static Elf *elf_open_path(const char *path, int *fd_out)
{
	Elf *e;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(fd);
		errno = ENOEXEC;
		return NULL;
	}
	*fd_out = fd;
	return e;
}

int sym_elf_info(const char *path, struct elf_info *info)
{
	GElf_Ehdr eh;
	size_t nph, fsize = 0;
	int fd;
	Elf *e = elf_open_path(path, &fd);
	bool first = true;
	const char *raw;
	struct stat st;

	if (!e)
		return -errno;
	memset(info, 0, sizeof(*info));
	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &nph) < 0) {
		elf_end(e);
		close(fd);
		return -ENOEXEC;
	}
	info->type = eh.e_type;
	info->machine = eh.e_machine;
	info->elf_class = eh.e_ident[EI_CLASS];
	info->entry = eh.e_entry;
	raw = elf_rawfile(e, &fsize);
	if (!fstat(fd, &st))
		fsize = st.st_size;
	/* as the kernel judges it: the program headers and the loaded segments count; section
	 * headers may be missing or bogus (exec never reads them). e_phnum, not nph: libelf
	 * counts only the program headers that fit in the file. */
	info->truncated = fsize < eh.e_phoff + (uint64_t)(eh.e_phnum == PN_XNUM ? nph : eh.e_phnum) *
						       eh.e_phentsize;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > fsize)
			info->truncated = true;
		if (ph.p_type == PT_INTERP) {
			info->has_interp = true;
			if (raw && ph.p_filesz < sizeof(info->interp) && ph.p_offset < fsize &&
			    ph.p_filesz <= fsize - ph.p_offset)
				memcpy(info->interp, raw + ph.p_offset, ph.p_filesz);
		}
		if (ph.p_type == PT_LOAD && first) {
			info->first_load_vaddr = (ph.p_vaddr - ph.p_offset) & ~(uint64_t)0xfff;
			first = false;
		}
	}
	elf_end(e);
	close(fd);
	return 0;
}

/* The build-id in hex, from sym_build_id's bytes. */
int sym_build_id_hex(const char *path, char *hex, size_t len)
{
	uint8_t id[64];
	int n = sym_build_id(path, id, sizeof(id));

	if (n < 0)
		return n == -ENOENT ? -ENOMSG : n;
	if (!n || (size_t)n * 2 >= len)
		return -ENOMSG;
	for (int i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return 0;
}

/* libdwfl's debug file search path (NULL: its default) */
static char *debuginfo_path;

/* Files given with --symbols (by build-id), and --debug-dir. */
static struct sym_file {
	char *path;
	char id[SYM_BUILD_ID_MAX];
} *sym_files;
static size_t nsym_files;
static char *debug_dir;

int sym_add_symbols(const char *path, char *id, size_t len)
{
	char hex[SYM_BUILD_ID_MAX];
	int ret = sym_build_id_hex(path, hex, sizeof(hex));

	if (ret)
		return ret;
	sym_files = xrealloc(sym_files, (nsym_files + 1) * sizeof(*sym_files));
	sym_files[nsym_files].path = xstrdup(path);
	memcpy(sym_files[nsym_files++].id, hex, sizeof(hex));
	snprintf(id, len, "%s", hex);
	return 0;
}

int sym_set_debug_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	free(debug_dir);
	debug_dir = xstrdup(dir);
	/* libdwfl's own search: DIR/.build-id/xx/rest.debug, beside the defaults */
	free(debuginfo_path);
	if (asprintf(&debuginfo_path, ":.debug:/usr/lib/debug:%s", dir) < 0)
		debuginfo_path = NULL;
	return 0;
}

/* Where path's symbols are read from: the --symbols file with its build-id, else the file
 * DIR/.build-id/xx/rest.debug of --debug-dir, else path itself. */
static const char *source(const char *path)
{
	static char found[PATH_MAX];
	char hex[SYM_BUILD_ID_MAX];

	if ((!nsym_files && !debug_dir) || sym_build_id_hex(path, hex, sizeof(hex)))
		return path;
	for (size_t i = 0; i < nsym_files; i++)
		if (!strcmp(sym_files[i].id, hex))
			return sym_files[i].path;
	if (debug_dir) {
		snprintf(found, sizeof(found), "%s/.build-id/%.2s/%s.debug", debug_dir, hex, hex + 2);
		if (!access(found, R_OK))
			return found;
	}
	return path;
}

const char *sym_source(const char *path)
{
	return source(path);
}

/* Call fn for every defined function symbol of .symtab and .dynsym (of path's symbol file). */
/* Call fn for each defined function symbol of path (and data object, if objects). */
static int for_each_sym(const char *path, bool objects,
			void (*fn)(void *ctx, const char *name, uint64_t v, uint64_t size), void *ctx)
{
	Elf_Scn *scn = NULL;
	int fd;
	Elf *e = elf_open_path(source(path), &fd);

	if (!e)
		return -errno;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     (!objects || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)))
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name)
				fn(ctx, name, sym.st_value, sym.st_size);
		}
	}
	elf_end(e);
	close(fd);
	return 0;
}

static int for_each_func(const char *path,
			 void (*fn)(void *ctx, const char *name, uint64_t v, uint64_t size),
			 void *ctx)
{
	return for_each_sym(path, false, fn, ctx);
}

struct hooks_ctx {
	uint64_t *addrs;
	uint32_t *foreign;
};

static void hook_cb(void *ctx, const char *name, uint64_t v, uint64_t size)
{
	(void)size;
	struct hooks_ctx *c = ctx;
	int h = hook_lookup(name);

	if (h >= 0 && !c->addrs[h])
		c->addrs[h] = v;
	if (c->foreign && h < 0 && (h = hook_foreign_lookup(name)) >= 0)
		*c->foreign |= 1u << h;
}

int sym_find_hooks(const char *path, uint64_t addrs[HOOK_COUNT])
{
	return sym_find_hooks_foreign(path, addrs, NULL);
}

int sym_find_hooks_foreign(const char *path, uint64_t addrs[HOOK_COUNT], uint32_t *foreign)
{
	struct hooks_ctx c = { addrs, foreign };
	int n = 0, ret;

	memset(addrs, 0, HOOK_COUNT * sizeof(*addrs));
	if (foreign)
		*foreign = 0;
	ret = for_each_func(path, hook_cb, &c);
	if (ret < 0)
		return ret;
	for (int i = 0; i < HOOK_COUNT; i++)
		n += addrs[i] != 0;
	return n;
}

struct lookup_ctx {
	const char *name;
	uint64_t value;
};

static void lookup_cb(void *ctx, const char *name, uint64_t v, uint64_t size)
{
	(void)size;
	struct lookup_ctx *l = ctx;

	if (!l->value && !strcmp(name, l->name))
		l->value = v;
}

uint64_t sym_lookup(const char *path, const char *name)
{
	struct lookup_ctx l = { name, 0 };

	for_each_func(path, lookup_cb, &l);
	return l.value;
}

struct many_ctx {
	const char *const *names;
	size_t n;
	uint64_t *values, *sizes;
};

static void many_cb(void *ctx, const char *name, uint64_t v, uint64_t size)
{
	struct many_ctx *c = ctx;

	for (size_t i = 0; i < c->n; i++) {
		if (!c->values[i] && !strcmp(name, c->names[i])) {
			c->values[i] = v;
			c->sizes[i] = size;
		}
	}
}

int sym_lookup_many(const char *path, const char *const *names, size_t n, uint64_t *values,
		    uint64_t *sizes)
{
	struct many_ctx c = { names, n, values, sizes };

	memset(values, 0, n * sizeof(*values));
	memset(sizes, 0, n * sizeof(*sizes));
	return for_each_sym(path, true, many_cb, &c);
}

/*
 * The function sizes of one file, sorted by value (the largest of aliases kept): asked once per
 * patched entry, and walking a C library's symbols for each (about 30 entries) was most of the
 * entry stubs' start-up. Kept for the last file asked about, checked by its identity.
 */
static struct size_table {
	char *path;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	struct func_size {
		uint64_t value, size;
	} *f;
	size_t n, cap;
} sizes;

static void size_cb(void *ctx, const char *name, uint64_t v, uint64_t size)
{
	struct size_table *t = ctx;

	(void)name;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->f = xrealloc(t->f, t->cap * sizeof(*t->f));
	}
	t->f[t->n++] = (struct func_size){ v, size };
}

static int by_value(const void *a, const void *b)
{
	const struct func_size *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* Fill sizes for path unless they are path's already (the same file, unchanged). */
static void load_sizes(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		memset(&st, 0, sizeof(st));
	if (sizes.path && !strcmp(sizes.path, path) && sizes.dev == st.st_dev &&
	    sizes.ino == st.st_ino && sizes.mtime.tv_sec == st.st_mtim.tv_sec &&
	    sizes.mtime.tv_nsec == st.st_mtim.tv_nsec)
		return;
	free(sizes.path);
	sizes.path = xstrdup(path);
	sizes.dev = st.st_dev;
	sizes.ino = st.st_ino;
	sizes.mtime = st.st_mtim;
	sizes.n = 0;
	for_each_func(path, size_cb, &sizes);
	qsort(sizes.f, sizes.n, sizeof(*sizes.f), by_value);
}

uint64_t sym_func_size(const char *path, uint64_t value)
{
	size_t lo = 0, hi;

	load_sizes(path);
	hi = sizes.n;
	while (lo < hi) { /* the last entry of value: its largest size */
		size_t mid = lo + (hi - lo) / 2;

		if (sizes.f[mid].value <= value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && sizes.f[lo - 1].value == value ? sizes.f[lo - 1].size : 0;
}

bool sym_inside_func(const char *path, uint64_t addr)
{
	size_t lo = 0, hi;

	load_sizes(path);
	hi = sizes.n;
	while (lo < hi) { /* the first entry at or past addr */
		size_t mid = lo + (hi - lo) / 2;

		if (sizes.f[mid].value < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* bit 0 of an arm Thumb function's value is its mode: its code starts at the value less it
	 * (an odd x86_64 value masked so starts a byte early, which only ever widens a function
	 * below addr by one byte at its start) */
	while (lo && (sizes.f[lo - 1].value & ~1ull) >= addr)
		lo--;
	return lo && addr - (sizes.f[lo - 1].value & ~1ull) < sizes.f[lo - 1].size;
}

/* Symbolisation cache: open addressing on (pc, is_return). */
struct sym_entry {
	uint64_t key; /* pc << 1 | is_return, 0 = empty */
	struct sym_frame f;
};

struct symbolizer {
	Dwfl *dwfl;
	struct sym_entry *cache;
	size_t cap, n;
	char **strings; /* interned names we own */
	size_t nstrings, strings_cap;
	struct perfmap *jit; /* names for return addresses in no module (sym_set_jit) */
};

static char *own(struct symbolizer *s, char *str)
{
	if (s->nstrings == s->strings_cap) {
		s->strings_cap = s->strings_cap ? s->strings_cap * 2 : 256;
		s->strings = xrealloc(s->strings, s->strings_cap * sizeof(char *));
	}
	s->strings[s->nstrings++] = str;
	return str;
}

static char *keep_str(void *ctx, char *str)
{
	return own(ctx, str);
}

/*
 * Is there a debug file named link where libdwfl's search by .gnu_debuglink looks: for each
 * entry of the debug path (its default ":.debug:/usr/lib/debug"), "" is file's directory, a
 * relative entry a directory below it, an absolute one a root under which file's directory
 * is repeated. A leading + or - (whether to check the CRC) is not part of an entry.
 */
static bool debuglink_found(const char *file, const char *link)
{
	const char *list = debuginfo_path ? debuginfo_path : ":.debug:/usr/lib/debug";
	const char *slash = strrchr(file, '/');
	int dlen = slash ? (int)(slash - file) : 1;
	bool found = false;

	if (!slash)
		file = ".";
	if (*list == '+' || *list == '-')
		list++;
	while (!found) {
		int n = (int)strcspn(list, ":");
		char *path;
		int ret = !n		  ? asprintf(&path, "%.*s/%s", dlen, file, link) :
			  *list == '/' ? asprintf(&path, "%.*s%.*s/%s", n, list, dlen, file, link) :
					 asprintf(&path, "%.*s/%.*s/%s", dlen, file, n, list, link);

		if (ret < 0)
			return true; /* let the standard search decide */
		found = !access(path, R_OK);
		free(path);
		if (!list[n])
			break;
		list += n + 1;
	}
	return found;
}

/*
 * libdwfl's search for a module's separate debug file, only where one can be found here: by
 * build-id, then by .gnu_debuglink where dwfl_standard_find_debuginfo looks. The standard
 * search asks the debuginfod servers last, and for that libdw (0.188) loads libdebuginfod
 * and libcurl with it (about 30 shared objects) whether or not a server is named: at every
 * report of a program with a module that has no debug file here. report --debuginfod asks
 * them itself (dbgserver.h).
 */
static int find_debuginfo(Dwfl_Module *mod, void **user, const char *modname, GElf_Addr base,
			  const char *file, const char *link, GElf_Word crc, char **found)
{
	int fd = dwfl_build_id_find_debuginfo(mod, user, modname, base, file, link, crc, found);

	if (fd >= 0 || !link || !file)
		return fd;
	if (debuglink_found(file, link))
		return dwfl_standard_find_debuginfo(mod, user, modname, base, file, link, crc,
						    found);
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* Report modules [from, ml->n) of ml to s's libdwfl, files[i] (NULL: none) the ELF file to
 * read for module i, loaded at ml->v[i].bias; files NULL: each module's source(). */
static void report_modules(struct symbolizer *s, const struct modlist *ml, size_t from,
			   char *const *files)
{
	for (size_t i = from; i < ml->n; i++) {
		const struct module *m = &ml->v[i];
		/* an unstripped copy given with --symbols stands in for the module */
		const char *file = files ? files[i] : source(m->path);

		if (!m->bias_known || !file)
			continue;
		if (!dwfl_report_elf(s->dwfl, m->path, file, -1, m->bias, false))
			pr_dbg(1, "dwfl_report_elf %s: %s", file, dwfl_errmsg(-1));
	}
}

static struct symbolizer *open_files(const struct modlist *ml, char *const *files)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	s->dwfl = dwfl_begin(&dwfl_callbacks);
	if (s->dwfl) {
		dwfl_report_begin(s->dwfl);
		report_modules(s, ml, 0, files);
		dwfl_report_end(s->dwfl, NULL, NULL);
	}
	s->cap = 1024;
	s->cache = xcalloc(s->cap, sizeof(*s->cache));
	return s;
}

char **sym_sources(const struct modlist *ml)
{
	char **files = xcalloc(ml->n ? ml->n : 1, sizeof(*files));

	for (size_t i = 0; i < ml->n; i++)
		files[i] = xstrdup(source(ml->v[i].path));
	return files;
}

struct symbolizer *sym_open_sources(const struct modlist *ml, char *const *files)
{
	return open_files(ml, files);
}

void sym_add_modules(struct symbolizer *s, const struct modlist *ml, size_t from,
		     char *const *files)
{
	if (s->dwfl) {
		dwfl_report_begin_add(s->dwfl);
		report_modules(s, ml, from, files);
		dwfl_report_end(s->dwfl, NULL, NULL);
	}
	/* a pc of a module not known before was cached as no module's */
	memset(s->cache, 0, s->cap * sizeof(*s->cache));
	s->n = 0;
}

static int warm_module(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr start,
		       void *arg)
{
	Dwarf_Addr bias;

	(void)user, (void)name, (void)start, (void)arg;
	dwfl_module_getdwarf(mod, &bias);
	dwfl_module_getsymtab(mod);
	return DWARF_CB_OK;
}

void sym_warm(struct symbolizer *s)
{
	if (s->dwfl)
		dwfl_getmodules(s->dwfl, warm_module, NULL, 0);
}

struct symbolizer *sym_open(const struct modlist *ml)
{
	return open_files(ml, NULL);
}

struct symbolizer *sym_open_files(const struct modlist *ml, char *const *files,
				  const char *debug_path)
{
	free(debuginfo_path);
	debuginfo_path = debug_path ? xstrdup(debug_path) : NULL;
	return open_files(ml, files);
}

int sym_build_id(const char *path, uint8_t *id, size_t cap)
{
	int fd, ret = -ENOENT;
	Elf *e = elf_open_path(path, &fd);
	Elf_Scn *scn = NULL;

	if (!e)
		return -errno;
	while (ret == -ENOENT && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz <= cap) {
				memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
				ret = (int)nh.n_descsz;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return ret;
}

void sym_close(struct symbolizer *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (size_t i = 0; i < s->nstrings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->cache);
	free(s);
}

const char *sym_demangled(struct symbolizer *s, const char *name)
{
	int status = -1;
	char *dm = name[0] == '_' && name[1] == 'Z' ? __cxa_demangle(name, NULL, NULL, &status) :
						     NULL;

	if (status == 0 && dm)
		return own(s, dm);
	free(dm);
	return NULL;
}

static void lookup(struct symbolizer *s, uint64_t pc, bool is_return, struct sym_frame *f)
{
	uint64_t at = is_return ? pc - 1 : pc;
	Dwfl_Module *mod;
	GElf_Sym sym;
	GElf_Off off;
	const char *name, *mname, *file;
	Dwarf_Addr mstart = 0;
	Dwfl_Line *line;
	int lineno;

	memset(f, 0, sizeof(*f));
	f->line = -1;
	if (!s->dwfl || !(mod = dwfl_addrmodule(s->dwfl, at)))
		return;
	mname = dwfl_module_info(mod, NULL, &mstart, NULL, NULL, NULL, NULL, NULL);
	f->module = mname;
	f->module_offset = pc - mstart;
	name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
	if (name) {
		int status = -1;
		char *dm = name[0] == '_' && name[1] == 'Z' ?
				   __cxa_demangle(name, NULL, NULL, &status) : NULL;

		const char *ver = strchr(name, '@');

		if (status == 0 && dm)
			f->function = own(s, dm);
		else if (ver) /* drop the symbol version: __libc_start_main@@GLIBC_2.34 */
			f->function = own(s, strndup(name, ver - name));
		else
			f->function = name;
		if (status != 0)
			free(dm);
		f->offset = off + (pc - at);
	}
	line = dwfl_module_getsrc(mod, at);
	if (line && (file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL)) && lineno > 0) {
		const char *slash = strrchr(file, '/');

		f->file = slash ? slash + 1 : file;
		f->line = lineno;
	}
	/* code inlined here: its functions, and the function's own line (the call site) */
	f->ninlined = inlines_at(mod, at, &f->file, &f->line, &f->inlined, keep_str, s);
}

const char *sym_function(struct symbolizer *s, uint64_t pc, bool is_return, uint64_t *start)
{
	uint64_t at = is_return ? pc - 1 : pc;
	Dwfl_Module *mod;
	GElf_Sym sym;
	GElf_Off off;
	const char *name;

	if (!s->dwfl || !(mod = dwfl_addrmodule(s->dwfl, at)))
		return NULL;
	name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
	if (name)
		*start = at - off;
	return name;
}

Dwfl_Module *sym_module(struct symbolizer *s, uint64_t at)
{
	return s->dwfl ? dwfl_addrmodule(s->dwfl, at) : NULL;
}

void sym_resolve(struct symbolizer *s, uint64_t pc, bool is_return, struct sym_frame *out)
{
	uint64_t key = pc << 1 | is_return;
	size_t i;

	if (!key)
		key = 2;
	if (s->n * 4 >= s->cap * 3) {
		struct sym_entry *old = s->cache;
		size_t oldcap = s->cap;

		s->cap *= 2;
		s->cache = xcalloc(s->cap, sizeof(*s->cache));
		for (size_t j = 0; j < oldcap; j++) {
			if (!old[j].key)
				continue;
			i = hash64(old[j].key) & (s->cap - 1);
			while (s->cache[i].key)
				i = (i + 1) & (s->cap - 1);
			s->cache[i] = old[j];
		}
		free(old);
	}
	i = hash64(key) & (s->cap - 1);
	while (s->cache[i].key && s->cache[i].key != key)
		i = (i + 1) & (s->cap - 1);
	if (!s->cache[i].key) {
		s->cache[i].key = key;
		lookup(s, pc, is_return, &s->cache[i].f);
		s->n++;
	}
	*out = s->cache[i].f;
	/* not kept in the cache: the perf map may name it later */
	if (!out->module && is_return && s->jit) {
		uint64_t off;
		const char *name = perfmap_name(s->jit, pc, true, &off);

		if (name) {
			out->function = name;
			out->offset = off;
			out->jit = true;
		}
	}
}

void sym_set_jit(struct symbolizer *s, struct perfmap *pm)
{
	s->jit = pm;
}

/* In *ph, the first PT_LOAD program header of the ELF file at path that match accepts.
 * Return 0, or -errno (-ENOENT: none). */
static int find_load(const char *path, bool (*match)(const GElf_Phdr *ph, void *ctx), void *ctx,
		     GElf_Phdr *ph)
{
	size_t nph;
	int fd, ret = -ENOENT;
	Elf *e = elf_open_path(path, &fd);

	if (!e)
		return -errno;
	if (elf_getphdrnum(e, &nph) < 0)
		nph = 0;
	for (size_t i = 0; ret && i < nph; i++)
		if (gelf_getphdr(e, i, ph) && ph->p_type == PT_LOAD && match(ph, ctx))
			ret = 0;
	elf_end(e);
	close(fd);
	return ret;
}

struct span {
	uint64_t vaddr;
	size_t len;
};

static bool holds(const GElf_Phdr *ph, void *ctx)
{
	const struct span *s = ctx;

	return s->vaddr >= ph->p_vaddr && s->vaddr + s->len <= ph->p_vaddr + ph->p_filesz;
}

ssize_t sym_read_code(const char *path, uint64_t vaddr, void *buf, size_t len)
{
	struct span s = { vaddr, len };
	GElf_Phdr ph;
	ssize_t got;
	int fd, ret = find_load(path, holds, &s, &ph);

	if (ret)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, buf, len, ph.p_offset + (vaddr - ph.p_vaddr));
	if (got < 0)
		got = -errno;
	close(fd);
	return got;
}

/* The code segment's last page: where its file bytes end, 16-aligned, and the page's end. */
static uint64_t cave_start(const GElf_Phdr *ph)
{
	return (ph->p_vaddr + ph->p_filesz + 15) & ~(uint64_t)15;
}

static bool has_cave(const GElf_Phdr *ph, void *ctx)
{
	uint64_t page_end = (ph->p_vaddr + ph->p_filesz + 4095) & ~(uint64_t)4095;

	return (ph->p_flags & PF_X) && ph->p_memsz == ph->p_filesz &&
	       cave_start(ph) + *(size_t *)ctx <= page_end;
}

int sym_exec_cave(const char *path, size_t len, uint64_t *vaddr)
{
	GElf_Phdr ph;
	int ret = find_load(path, has_cave, &len, &ph);

	if (!ret)
		*vaddr = cave_start(&ph);
	return ret == -ENOENT ? -ENOSPC : ret;
}
