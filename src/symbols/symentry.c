// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether a symbol may be patched: its value must be code, where a function starts, as far as
 * the file tells (symbols.h, sym_code_entry): in an executable segment, at the start of its row
 * of call frame information, and inside no other function symbol.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols.h"
#include "util/util.h"

/*
 * The file last asked about, kept open: every hook of a module is asked about in turn, and
 * opening the C library and its call frame information each time cost about 1 ms a hook.
 */
static struct {
	char *path;
	int fd;
	Elf *e;
	Dwarf_CFI *cfi;
} last = { .fd = -1 };

static Elf *open_file(const char *path)
{
	if (last.path && !strcmp(last.path, path))
		return last.e;
	if (last.cfi)
		dwarf_cfi_end(last.cfi);
	if (last.e)
		elf_end(last.e);
	if (last.fd >= 0)
		close(last.fd);
	free(last.path);
	memset(&last, 0, sizeof(last));
	last.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (last.fd < 0)
		return NULL;
	last.path = xstrdup(path);
	elf_version(EV_CURRENT);
	last.e = elf_begin(last.fd, ELF_C_READ_MMAP, NULL);
	if (last.e && elf_kind(last.e) == ELF_K_ELF)
		last.cfi = dwarf_getcfi_elf(last.e);
	return last.e && elf_kind(last.e) == ELF_K_ELF ? last.e : NULL;
}

/* In an executable PT_LOAD segment of e. */
static bool in_exec_segment(Elf *e, uint64_t addr)
{
	size_t nph;

	if (elf_getphdrnum(e, &nph) < 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr - ph.p_vaddr < ph.p_memsz)
			return (ph.p_flags & PF_X) != 0;
	}
	return false;
}

/* The start of the row of the call frame information cfi that holds addr (a row lies within
 * its function), or addr when there is none (no .eh_frame, or code it does not cover). */
static uint64_t cfi_row_start(Dwarf_CFI *cfi, uint64_t addr)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr start = addr, end;

	if (cfi && !dwarf_cfi_addrframe(cfi, addr, &fr)) {
		if (dwarf_frame_info(fr, &start, &end, NULL) < 0)
			start = addr;
		free(fr);
	}
	return start;
}

int sym_code_entry(const char *path, uint64_t addr)
{
	Elf *e = open_file(path);

	if (!e)
		return last.fd < 0 ? -errno : -ENOEXEC;
	if (!in_exec_segment(e, addr))
		return -EFAULT;
	if (cfi_row_start(last.cfi, addr) != addr || sym_inside_func(path, addr))
		return -EILSEQ;
	return 0;
}
