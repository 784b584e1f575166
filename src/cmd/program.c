// SPDX-License-Identifier: GPL-2.0-only
/* What exec would run, checked before the launch, and the --symbols files (program.h). */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "cmd/options.h"
#include "cmd/program.h"
#include "heap/hooks.h"
#include "symbols/symbols.h"
#include "util/log.h"
#include "trace/tracer.h" /* EXIT_* */
#include "util/util.h"

/* Find PROGRAM like a shell does: a name with a slash as is, otherwise along PATH. */
char *prog_find(const char *name, int *err)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	int first_err = ENOENT;

	if (strchr(name, '/')) {
		*err = access(name, F_OK) ? errno : access(name, X_OK) ? errno : 0;
		return *err ? NULL : xstrdup(name);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)len, path, len ? "/" : "", name);
		if (!stat(buf, &st) && S_ISREG(st.st_mode)) {
			if (!access(buf, X_OK)) {
				*err = 0;
				return xstrdup(buf);
			}
			first_err = EACCES;
		}
		path += len + (path[len] == ':');
	}
	*err = first_err;
	return NULL;
}

/* The architecture of ELF machine and class, as uname -m says it ("" for an unknown one). */
static const char *machine_name(int machine, int elf_class)
{
	static const struct {
		int machine, elf_class; /* elf_class 0: either */
		const char *name;
	} names[] = {
		{ EM_X86_64, ELFCLASS64, "x86_64" }, { EM_X86_64, ELFCLASS32, "x32" },
		{ EM_386, 0, "i386 (32-bit x86)" }, { EM_AARCH64, ELFCLASS64, "aarch64" },
		{ EM_AARCH64, ELFCLASS32, "aarch64 ILP32" }, { EM_ARM, 0, "arm" },
		{ EM_MIPS, ELFCLASS64, "mips64" }, { EM_MIPS, 0, "mips" },
		{ EM_PPC64, 0, "ppc64" }, { EM_PPC, 0, "ppc" },
		{ EM_RISCV, ELFCLASS64, "riscv64" }, { EM_RISCV, 0, "riscv32" },
		{ EM_S390, ELFCLASS64, "s390x" }, { EM_S390, 0, "s390" },
		{ EM_SPARCV9, 0, "sparc64" }, { EM_SPARC, 0, "sparc" }, { EM_IA_64, 0, "ia64" },
		{ 258 /* EM_LOONGARCH */, 0, "loongarch64" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].machine == machine &&
		    (!names[i].elf_class || names[i].elf_class == elf_class))
			return names[i].name;
	return "";
}

/* A #! script runs only if its interpreter does: check it as exec would. Return 0 or the exit
 * status after printing why not. */
static int check_script(const char *name, const char *path)
{
	char line[256], *interp; /* the kernel reads the first 256 bytes */
	size_t n, len;
	FILE *f = fopen(path, "re");

	if (!f) {
		pr_err("%s: %s", name, strerror(errno));
		return EXIT_START;
	}
	n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';
	interp = line + 2 + strspn(line + 2, " \t");
	len = strcspn(interp, " \t\n");
	if (!len) {
		pr_err("%s: its #! line names no interpreter", name);
		return EXIT_START;
	}
	if (!interp[len] && n == sizeof(line) - 1)
		return 0; /* longer than the kernel reads: exec says what it makes of it */
	interp[len] = '\0';
	if (access(interp, F_OK)) {
		bool cr = interp[len - 1] == '\r';

		if (cr)
			interp[len - 1] = '\0';
		pr_err("%s: its interpreter %s%s is %s%s", name, interp, cr ? "\\r" : "",
		       errno == ENOENT || errno == ENOTDIR ? "missing" : strerror(errno),
		       cr ? " (the #! line ends with a carriage return: a DOS line end)" : "");
		return EXIT_START;
	}
	if (access(interp, X_OK)) {
		pr_err("%s: its interpreter %s is not executable", name, interp);
		return EXIT_START;
	}
	return 0;
}

/* Check what exec would run. Return 0 or the exit status after printing why not. */
int prog_check(const char *name, const char *path)
{
	struct elf_info info;
	uint64_t hooks[HOOK_COUNT];
	struct stat st;
	unsigned char head[20] = { 0 }; /* e_ident, e_type, e_machine */
	FILE *f;
	int ret, machine;

	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		pr_err("%s: not a regular file", name);
		return EXIT_START;
	}
	f = fopen(path, "re");
	if (!f) {
		pr_err("%s: %s", name, strerror(errno));
		return EXIT_START;
	}
	ret = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (ret >= 2 && head[0] == '#' && head[1] == '!')
		return check_script(name, path);
	if (ret < SELFMAG || memcmp(head, ELFMAG, SELFMAG)) {
		pr_err("%s: not an ELF executable or a #! script", name);
		return EXIT_START;
	}
	/* e_machine is at the same offset in both classes: named even in a damaged file */
	machine = ret < 20 ? -1 : head[EI_DATA] == ELFDATA2MSB ? head[18] << 8 | head[19] :
								   head[19] << 8 | head[18];
	if (machine >= 0 && (machine != arch->elf_machine || head[EI_CLASS] != arch->elf_class)) {
		const char *m = machine_name(machine, head[EI_CLASS]);

		if (*m)
			pr_err("%s: %s %s program; this heaptrace traces %s programs", name,
			       strchr("aeiox", m[0]) ? "an" : "a", m, arch->name);
		else
			pr_err("%s: a program for ELF machine %d; this heaptrace traces %s programs",
			       name, machine, arch->name);
		return EXIT_START;
	}
	if (st.st_size < (head[EI_CLASS] == ELFCLASS64 ? (off_t)sizeof(Elf64_Ehdr) :
							 (off_t)sizeof(Elf32_Ehdr))) {
		pr_err("%s: truncated ELF file (%lld bytes)", name, (long long)st.st_size);
		return EXIT_START;
	}
	ret = sym_elf_info(path, &info);
	if (ret) {
		pr_err("%s: cannot read ELF headers: %s", name, strerror(-ret));
		return EXIT_START;
	}
	if (info.truncated) {
		pr_err("%s: truncated ELF file (%lld bytes)", name, (long long)st.st_size);
		return EXIT_START;
	}
	if (info.type != ET_EXEC && info.type != ET_DYN) {
		pr_err("%s: not an executable ELF file", name);
		return EXIT_START;
	}
	if (info.interp[0] && access(info.interp, F_OK) && (errno == ENOENT || errno == ENOTDIR)) {
		pr_err("%s: its dynamic linker %s is missing", name, info.interp);
		return EXIT_START;
	}
	if (!info.has_interp && sym_find_hooks(path, hooks) <= 0) {
		pr_err("%s: no allocator symbols found (a static executable without a symbol "
		       "table: rebuild it without stripping, or use an unstripped copy)", name);
		return EXIT_START;
	}
	return 0;
}

/* The --symbols files, kept to check them against the program. */
static struct symbols_arg {
	const char *path;
	char id[SYM_BUILD_ID_MAX];
} symbols_args[32];
static size_t nsymbols_args;

int prog_add_symbols(const char *path)
{
	struct symbols_arg *a = &symbols_args[nsymbols_args];
	int ret;

	if (nsymbols_args == ARRAY_SIZE(symbols_args))
		return opt_usage_error("more than %s --symbols files", "32");
	ret = sym_add_symbols(path, a->id, sizeof(a->id));
	if (ret) {
		pr_err("--symbols=%s: %s", path,
		       ret == -ENOMSG ? "no GNU build-id note to match it by" :
		       ret == -ENOEXEC ? "not an ELF file" : strerror(-ret));
		return EXIT_USAGE;
	}
	a->path = path;
	nsymbols_args++;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * A --symbols file named as the program is meant for it: refuse it unless their build-ids
 * match (symbols of another build would name every frame wrongly). Files for libraries are
 * matched when they are loaded.
 */
int prog_check_symbols(const char *name, const char *path)
{
	char id[SYM_BUILD_ID_MAX] = "";

	for (size_t i = 0; i < nsymbols_args; i++) {
		const struct symbols_arg *a = &symbols_args[i];

		if (strcmp(base_name(a->path), base_name(path)))
			continue;
		if (!id[0] && sym_build_id_hex(path, id, sizeof(id)))
			strcpy(id, "none");
		if (strcmp(id, a->id)) {
			pr_err("--symbols=%s: build-id %s does not match %s (build-id %s)", a->path,
			       a->id, name, id);
			return EXIT_USAGE;
		}
	}
	return 0;
}
