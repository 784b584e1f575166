// SPDX-License-Identifier: GPL-2.0-only
/*
 * libunwind's find_proc_info, with every module's unwind tables kept (see procinfo.h).
 *
 * libunwind-ptrace's _UPT_find_proc_info (1.6.2, Debian 12) keeps the tables of one module.
 * Asked about an address in another, it unmaps the file it had, reads /proc/PID/maps, maps the
 * other's whole file and looks for its tables again; where libunwind reads .debug_frame (arm
 * and aarch64) that look-up maps the file a second time and tries the three places of its
 * .gnu_debuglink file: about a dozen system calls and two mappings of the whole file, at each
 * change of module that libunwind's cache of unwind rules does not hide. On arm it is worse:
 * a module whose only table is .ARM.exidx (Debian's C library: no .eh_frame_hdr, no
 * .debug_frame) is never taken for the module already loaded, because that test looks at the
 * exidx range only when a .debug_frame was found; and every exidx frame is looked up twice
 * (DWARF first, then exidx), never cached. So each frame in the C library paid the whole
 * reload twice (measured in the arm guest: a backtrace through it cost 10 times one that
 * stays in the program; heaptrace's system time fell from 26.5 s to 1.4 s for 300 of them).
 *
 * Here each module gets its own _UPT context, which keeps that module's tables for good, and
 * what the ELF file says decides how a module is answered:
 *   .eh_frame_hdr, or a .debug_frame libunwind reads   its _UPT context
 *   .ARM.exidx alone                                  a binary search of the table, here
 *   none of them                                      no information, at once
 * The exidx search fills in what libunwind's own search gives (the entry's address as the
 * unwind information, format UNW_INFO_FORMAT_ARM_EXIDX); libunwind decodes the entry.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libunwind-ptrace.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PR_DOMAIN "unwind"
#include "util/log.h"
#include "util/maps.h"
#include "unwind/procinfo.h"
#include "util/util.h"

#ifndef PT_ARM_EXIDX
#define PT_ARM_EXIDX 0x70000001
#endif

/*
 * Defined by libunwind when it was configured to read .debug_frame (its configure's default on
 * arm and aarch64 only; Debian keeps it): where it is absent, a module whose only table is
 * .debug_frame has none for libunwind.
 */
extern int UNW_OBJ(dwarf_find_debug_frame)(int found, unw_dyn_info_t *di, unw_word_t ip,
					   unw_word_t segbase, const char *name,
					   unw_word_t start, unw_word_t end) __attribute__((weak));

enum tab_kind {
	TAB_UNKNOWN, /* not looked at yet */
	TAB_UPT, /* libunwind-ptrace, with the module's own context */
	TAB_EXIDX, /* .ARM.exidx alone */
	TAB_NONE, /* nothing libunwind can use */
};

struct tab {
	enum tab_kind kind;
	void *upt;
	uint64_t exidx, exidx_len; /* run-time address and size of .ARM.exidx */
	uint64_t text_end; /* end of the executable segment: the last exidx entry's end */
};

struct procinfo {
	pid_t pid;
	bool loaded; /* mods read since the last flush */
	struct modlist mods;
	struct tab *tabs; /* one per module of mods, same index */
};

struct procinfo *procinfo_new(pid_t pid)
{
	struct procinfo *pi = xcalloc(1, sizeof(*pi));

	elf_version(EV_CURRENT);
	pi->pid = pid;
	return pi;
}

void procinfo_flush(struct procinfo *pi)
{
	if (!pi)
		return;
	for (size_t i = 0; i < pi->mods.n; i++)
		if (pi->tabs[i].upt)
			_UPT_destroy(pi->tabs[i].upt);
	free(pi->tabs);
	pi->tabs = NULL;
	modlist_clear(&pi->mods);
	pi->loaded = false;
}

void procinfo_free(struct procinfo *pi)
{
	procinfo_flush(pi);
	free(pi);
}

static void load(struct procinfo *pi)
{
	struct mapping *maps = NULL;
	ssize_t n = maps_read(pi->pid, &maps);

	pi->loaded = true;
	if (n > 0)
		modlist_update(&pi->mods, maps, n);
	free(maps);
	pi->tabs = xcalloc(pi->mods.n ? pi->mods.n : 1, sizeof(*pi->tabs));
}

/* Is the section named name, header sh, a .debug_frame with contents? */
static bool is_debug_frame(const char *name, const GElf_Shdr *sh)
{
	return !strcmp(name, ".debug_frame") && sh->sh_type != SHT_NOBITS && sh->sh_size;
}

/* Is there a .debug_frame section in the ELF file path? */
static bool file_has_debug_frame(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t shstr;
	bool found = false;

	if (e && !elf_getshdrstrndx(e, &shstr))
		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e, shstr, sh.sh_name)))
				found = is_debug_frame(name, &sh);
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return found;
}

/* Does libunwind find a .debug_frame for the module at path? In the file itself, or in its
 * .gnu_debuglink file (link, read from e) at the three places libunwind looks: next to it, in
 * .debug/ next to it, and under /usr/lib/debug. */
static bool debug_frame_for(const char *path, Elf *e, size_t shstr)
{
	Elf_Scn *scn = NULL;
	const char *link = NULL, *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) : 0;

	if (!UNW_OBJ(dwarf_find_debug_frame))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstr, sh.sh_name)))
			continue;
		if (is_debug_frame(name, &sh))
			return true;
		if (!strcmp(name, ".gnu_debuglink") && (d = elf_getdata(scn, NULL)) && d->d_size &&
		    memchr(d->d_buf, 0, d->d_size))
			link = d->d_buf;
	}
	if (!link)
		return false;
	for (int i = 0; i < 3; i++) {
		static const char *const fmt[] = { "%.*s/%s", "%.*s/.debug/%s",
						   "/usr/lib/debug%.*s/%s" };
		char *p = NULL;
		bool found;

		if (asprintf(&p, fmt[i], dirlen, path, link) < 0)
			return false;
		found = file_has_debug_frame(p);
		free(p);
		if (found)
			return true;
	}
	return false;
}

/* What the ELF file of m holds, for t: its kind and, for exidx, where the table is. */
static void classify(struct tab *t, const struct module *m)
{
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Phdr exidx = { 0 }, ph;
	bool eh_hdr = false, have_bias = false, cfi;
	uint64_t bias = 0, text_end = 0;
	size_t nph = 0, shstr;

	t->kind = TAB_UPT; /* whatever cannot be read is left to libunwind, as before */
	if (!e || elf_getphdrnum(e, &nph) || elf_getshdrstrndx(e, &shstr))
		goto out;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(e, (int)i, &ph))
			goto out;
		if (ph.p_type == PT_GNU_EH_FRAME)
			eh_hdr = true;
		else if (ph.p_type == PT_ARM_EXIDX)
			exidx = ph;
		else if (ph.p_type == PT_LOAD && !have_bias) {
			/* the first segment holds file offset 0, mapped at the module's base */
			bias = m->base - (ph.p_vaddr - ph.p_offset);
			have_bias = true;
		}
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			text_end = ph.p_vaddr + ph.p_memsz;
	}
	cfi = eh_hdr || debug_frame_for(m->path, e, shstr);
	if (cfi || !have_bias)
		goto out;
	if (exidx.p_type == PT_ARM_EXIDX && exidx.p_memsz >= 8) {
		t->kind = TAB_EXIDX;
		t->exidx = bias + exidx.p_vaddr;
		t->exidx_len = exidx.p_memsz;
		t->text_end = bias + text_end;
	} else {
		t->kind = TAB_NONE;
	}
out:
	pr_dbg(2, "%s: unwind tables %s", m->path,
	       t->kind == TAB_EXIDX ? ".ARM.exidx" : t->kind == TAB_NONE ? "none" : "libunwind's");
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

/* The function address an exidx entry's first word (prel31, relative to itself) gives. */
static int exidx_fn(unw_addr_space_t as, void *arg, uint64_t entry, uint64_t *fn)
{
	unw_accessors_t *a = unw_get_accessors(as);
	unw_word_t w;
	uint32_t v;
	int ret = a->access_mem(as, entry, &w, 0, arg);

	if (ret < 0)
		return ret;
	memcpy(&v, &w, sizeof(v)); /* the 4 bytes at entry (unw_word_t is 4 bytes on arm) */
	*fn = entry + (uint64_t)(int64_t)((int32_t)(v << 1) >> 1);
	return 0;
}

/* The exidx entry of ip: the last whose function starts at or below ip (the table is sorted). */
static int exidx_find(const struct tab *t, unw_addr_space_t as, unw_word_t ip,
		      unw_proc_info_t *out, int need_info, void *arg)
{
	uint64_t lo = 0, hi = t->exidx_len / 8, fn, end = t->text_end;
	int ret;

	if ((ret = exidx_fn(as, arg, t->exidx, &fn)) < 0)
		return ret;
	if (ip < fn)
		return -UNW_ENOINFO;
	while (hi - lo > 1) { /* fn(lo) <= ip, and ip < fn(hi) when hi is an entry */
		uint64_t mid = lo + (hi - lo) / 2;

		if ((ret = exidx_fn(as, arg, t->exidx + mid * 8, &fn)) < 0)
			return ret;
		if (ip < fn)
			hi = mid;
		else
			lo = mid;
	}
	if (hi < t->exidx_len / 8 && (ret = exidx_fn(as, arg, t->exidx + hi * 8, &end)) < 0)
		return ret;
	if ((ret = exidx_fn(as, arg, t->exidx + lo * 8, &fn)) < 0)
		return ret;
	memset(out, 0, sizeof(*out));
	out->start_ip = fn;
	out->end_ip = end - 1;
	if (need_info) {
		out->format = UNW_INFO_FORMAT_ARM_EXIDX;
		out->unwind_info = (void *)(uintptr_t)(t->exidx + lo * 8);
		out->unwind_info_size = 8;
	}
	return 0;
}

int procinfo_find(struct procinfo *pi, unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *out,
		  int need_info, void *arg)
{
	const struct module *m;
	struct tab *t;

	if (!pi)
		return _UPT_find_proc_info(as, ip, out, need_info, arg);
	if (!pi->loaded)
		load(pi);
	m = modlist_find(&pi->mods, ip);
	if (!m)
		return _UPT_find_proc_info(as, ip, out, need_info, arg);
	t = &pi->tabs[m - pi->mods.v];
	if (t->kind == TAB_UNKNOWN)
		classify(t, m);
	switch (t->kind) {
	case TAB_EXIDX:
		return exidx_find(t, as, ip, out, need_info, arg);
	case TAB_NONE:
		return -UNW_ENOINFO;
	default:
		if (!t->upt)
			t->upt = _UPT_create(pi->pid);
		if (!t->upt)
			return -UNW_ENOINFO;
		return _UPT_find_proc_info(as, ip, out, need_info, t->upt);
	}
}
