// SPDX-License-Identifier: GPL-2.0-only
/*
 * heaptrace --core=FILE: the inventory of the heap (inventory.h) read out of an ELF core file
 * (gcore, or the kernel's core of a crashed process) instead of a stopped process. The core's
 * PT_LOAD segments are the copy; NT_FILE names the mapped files, NT_PRSTATUS gives each thread's
 * registers and NT_PRPSINFO the command. The report is the one --pid writes, with the blocks
 * found as "[before attach]" backtraces.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PR_DOMAIN "core"
#include "arch/arch.h"
#include "cmd/core.h"
#include "output/html.h"
#include "inventory/inventory.h"
#include "util/log.h"
#include "output/report.h"
#include "util/util.h"

#define DATA_MAX (16ull << 20) /* as heapsnap.c: larger file mappings are not libc's data */
#define NT_FILE_NOTE 0x46494c45 /* "FILE" */

struct core_file {
	uint64_t start, end, offset; /* offset in the file, in bytes */
	const char *name;
};

struct core {
	const uint8_t *map;
	size_t size;
	struct inv_region *r;
	size_t nr, rcap;
	struct inv_span *anon;
	size_t nanon, acap;
	uint64_t *tp, *tls; /* thread pointers, and where their static TLS windows start */
	size_t ntp, tpcap;
	struct core_file *files;
	size_t nfiles;
	struct inv_span *ro;
	size_t nro, rocap;
	int pid;
	char command[96];
};

static void add_region(struct core *c, uint64_t addr, uint64_t len, const uint8_t *data,
		       enum inv_kind kind)
{
	if (c->nr == c->rcap) {
		c->rcap = c->rcap ? c->rcap * 2 : 64;
		c->r = xrealloc(c->r, c->rcap * sizeof(*c->r));
	}
	c->r[c->nr++] = (struct inv_region){ addr, len, data, kind };
}

/* elf_prstatus (LP64): pr_pid at 32; the first is the thread that dumped. */
static void note_prstatus(struct core *c, const uint8_t *d, size_t len)
{
	int32_t pid;

	if (len < 36 || c->pid)
		return;
	memcpy(&pid, d + 32, 4);
	c->pid = pid;
}

/* A thread pointer, from whichever note of each thread holds it (arch_ops.core_tp). */
static void note_tp(struct core *c, uint32_t type, const uint8_t *d, size_t len)
{
	uint64_t tp = arch->core_tp(type, d, len);

	if (!tp)
		return;
	if (c->ntp == c->tpcap) {
		c->tpcap = c->tpcap ? c->tpcap * 2 : 16;
		c->tp = xrealloc(c->tp, c->tpcap * sizeof(*c->tp));
		c->tls = xrealloc(c->tls, c->tpcap * sizeof(*c->tls));
	}
	c->tls[c->ntp] = arch->tls_window(tp, INV_TLS_WINDOW);
	c->tp[c->ntp++] = tp;
}

/* NT_FILE: count, page size, count x (start, end, offset), then the names. */
static void note_file(struct core *c, const uint8_t *d, size_t len)
{
	uint64_t n, page;
	const char *name, *end = (const char *)d + len;

	if (len < 16)
		return;
	memcpy(&n, d, 8);
	memcpy(&page, d + 8, 8);
	if (n > (len - 16) / 24)
		return;
	c->files = xcalloc(n ? n : 1, sizeof(*c->files));
	name = (const char *)d + 16 + n * 24;
	for (uint64_t i = 0; i < n && name < end; i++) {
		size_t l = strnlen(name, end - name);

		memcpy(&c->files[i].start, d + 16 + i * 24, 8);
		memcpy(&c->files[i].end, d + 16 + i * 24 + 8, 8);
		memcpy(&c->files[i].offset, d + 16 + i * 24 + 16, 8);
		c->files[i].offset *= page;
		c->files[i].name = l < (size_t)(end - name) ? name : "";
		name += l + 1;
		c->nfiles++;
	}
}

static void read_notes(struct core *c, const uint8_t *d, size_t len)
{
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz, descsz, type;
		size_t desc;

		memcpy(&namesz, d + off, 4);
		memcpy(&descsz, d + off + 4, 4);
		memcpy(&type, d + off + 8, 4);
		desc = off + 12 + ((namesz + 3) & ~3u);
		if (desc > len || descsz > len - desc)
			return;
		note_tp(c, type, d + desc, descsz);
		if (type == NT_PRSTATUS)
			note_prstatus(c, d + desc, descsz);
		else if (type == NT_FILE_NOTE)
			note_file(c, d + desc, descsz);
		else if (type == NT_PRPSINFO && descsz >= 136)
			snprintf(c->command, sizeof(c->command), "%.80s",
				 (const char *)d + desc + 56);
		off = desc + ((descsz + 3) & ~3u);
	}
}

static const struct core_file *file_at(const struct core *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (addr >= c->files[i].start && addr < c->files[i].end)
			return &c->files[i];
	return NULL;
}

static int region_cmp(const void *x, const void *y)
{
	const struct inv_region *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Program header i, copied: e_phoff need not be aligned for an Elf64_Phdr. */
static void core_phdr(const struct core *c, unsigned i, Elf64_Phdr *ph)
{
	uint64_t phoff;

	memcpy(&phoff, c->map + offsetof(Elf64_Ehdr, e_phoff), 8);
	memcpy(ph, c->map + phoff + i * sizeof(*ph), sizeof(*ph));
}

/* Every writable segment with contents: a file's data, or anonymous memory (an arena heap,
 * [heap], mmapped chunks; after a file's data, possibly its .bss). */
static int read_segments(struct core *c)
{
	const Elf64_Ehdr *eh = (const void *)c->map;
	uint64_t prev_file_end = 0;

	if (eh->e_phoff > c->size || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phnum > (c->size - eh->e_phoff) / sizeof(Elf64_Phdr))
		return -EINVAL;
	for (unsigned pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < eh->e_phnum; i++) {
			Elf64_Phdr phdr, *ph = &phdr;
			const struct core_file *f;

			core_phdr(c, i, ph);
			if (ph->p_offset > c->size || ph->p_filesz > c->size - ph->p_offset)
				continue; /* a truncated core: what is missing stays unread */
			if (pass == 0) {
				if (ph->p_type == PT_NOTE)
					read_notes(c, c->map + ph->p_offset, ph->p_filesz);
				continue;
			}
			if (ph->p_type != PT_LOAD)
				continue;
			f = file_at(c, ph->p_vaddr);
			if (f && !(ph->p_flags & PF_W)) { /* where vtables may be */
				if (c->nro == c->rocap) {
					c->rocap = c->rocap ? c->rocap * 2 : 64;
					c->ro = xrealloc(c->ro, c->rocap * sizeof(*c->ro));
				}
				c->ro[c->nro++] = (struct inv_span){ ph->p_vaddr,
								     ph->p_vaddr + ph->p_memsz };
			}
			if (!ph->p_filesz || !(ph->p_flags & PF_W))
				continue;
			if (f) {
				if (ph->p_filesz <= DATA_MAX)
					add_region(c, ph->p_vaddr, ph->p_filesz,
						   c->map + ph->p_offset, INV_DATA);
				prev_file_end = ph->p_vaddr + ph->p_memsz;
				continue;
			}
			add_region(c, ph->p_vaddr, ph->p_filesz, c->map + ph->p_offset, INV_HEAP);
			if (ph->p_vaddr == prev_file_end && ph->p_filesz <= DATA_MAX)
				add_region(c, ph->p_vaddr, ph->p_filesz, c->map + ph->p_offset,
					   INV_DATA);
			if (c->nanon == c->acap) {
				c->acap = c->acap ? c->acap * 2 : 64;
				c->anon = xrealloc(c->anon, c->acap * sizeof(*c->anon));
			}
			c->anon[c->nanon++] = (struct inv_span){ ph->p_vaddr,
								 ph->p_vaddr + ph->p_filesz };
			prev_file_end = 0;
		}
	}
	if (c->nr) /* qsort's pointer must be valid even for no elements */
		qsort(c->r, c->nr, sizeof(*c->r), region_cmp);
	return 0;
}

/* Memory of the dumped process for the type census: from the core, or else (gcore leaves out
 * read-only file mappings) from the file mapped there. */
static bool read_core(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct core *c = ctx;
	const Elf64_Ehdr *eh = (const void *)c->map;
	const struct core_file *f;
	bool ok = false;
	int fd;

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		core_phdr(c, i, &ph);
		if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr && ph.p_filesz >= len &&
		    addr - ph.p_vaddr <= ph.p_filesz - len && ph.p_offset <= c->size &&
		    ph.p_filesz <= c->size - ph.p_offset) {
			memcpy(buf, c->map + ph.p_offset + (addr - ph.p_vaddr), len);
			return true;
		}
	}
	f = file_at(c, addr);
	if (!f || addr + len > f->end || (fd = open(f->name, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	ok = pread(fd, buf, len, f->offset + (addr - f->start)) == (ssize_t)len;
	close(fd);
	return ok;
}

/* The malloc of the core's process, by the files mapped in it (or exe, the executable): another
 * allocator's library, else libc.so's or the executable's glibc (*minor), else musl's mallocng
 * if img holds its context (*musl_ctx). */
static void identify(const struct core *c, const char *exe, const struct inv_image *img,
		     struct inventory *inv, unsigned *minor, uint64_t *musl_ctx)
{
	const char *libc = NULL, *other;
	uint64_t unread;

	*minor = 0;
	*musl_ctx = 0;
	for (size_t i = 0; i < c->nfiles; i++) {
		const char *base = strrchr(c->files[i].name, '/');

		base = base ? base + 1 : c->files[i].name;
		if ((other = inv_other_allocator(base))) {
			snprintf(inv->allocator, sizeof(inv->allocator), "%s", other);
			inv_problem(inv, "inventory not supported for %s", other);
			return;
		}
		if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-2.", 7))
			libc = c->files[i].name;
	}
	if (!libc)
		libc = exe ? exe : c->nfiles ? c->files[0].name : NULL;
	*minor = libc ? inv_glibc_minor(libc) : 0;
	if (*minor) {
		snprintf(inv->allocator, sizeof(inv->allocator), "glibc-2.%u", *minor);
		return;
	}
	*musl_ctx = inv_musl_context(img, &unread);
	if (*musl_ctx) {
		snprintf(inv->allocator, sizeof(inv->allocator), "musl-mallocng");
		return;
	}
	inv_problem(inv, "no glibc or musl malloc found in the core%s: inventory not supported",
		    exe ? "" : " (name the program with --exe)");
}

int core_report(const char *path, const char *exe, FILE *out, const struct report_opts *ro)
{
	struct core c = { 0 };
	struct inventory inv = { .complete = true };
	struct table t;
	struct stat st;
	unsigned minor;
	uint64_t t0 = now_ns();
	int fd, ret;
	const Elf64_Ehdr *eh;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		pr_err("%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	c.size = st.st_size;
	c.map = c.size >= sizeof(Elf64_Ehdr) ?
			mmap(NULL, c.size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	eh = (const void *)c.map;
	if (c.map == MAP_FAILED || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_CORE ||
	    eh->e_machine != arch->elf_machine) {
		pr_err("%s: not a 64-bit ELF core file of an %s process", path, arch->name);
		if (c.map != MAP_FAILED)
			munmap((void *)c.map, c.size);
		return -EINVAL;
	}
	ret = read_segments(&c);
	if (ret) {
		pr_err("%s: damaged program headers", path);
		munmap((void *)c.map, c.size);
		return ret;
	}
	{
		struct inv_image img = { .r = c.r, .nr = c.nr, .anon = c.anon, .nanon = c.nanon,
					 .ro = c.ro, .nro = c.nro, .tp = c.tp, .tls = c.tls, .ntp = c.ntp,
					 .page_size = 4096 };
		uint64_t musl_ctx;

		identify(&c, exe, &img, &inv, &minor, &musl_ctx);
		if (minor && (minor < 35 || minor > 40))
			inv_problem(&inv, "inventory not supported for %s (layout not known)",
				    inv.allocator);
		else if ((musl_ctx && !inv_musl_read(&img, musl_ctx, &inv)) ||
			 (minor && !inv_glibc_read(&img, &inv)))
			inv_type_census(&inv, &img, read_core, &c);
	}
	inv.analysis_ms = (now_ns() - t0) / 1e6;
	table_init(&t);
	inv_seed(&inv, &t, now_ns());
	{
		struct report_info ri = { .pid = c.pid, .command = c.command, .inv = &inv,
					  .now_ns = now_ns() };

		ret = ro->format == FMT_HTML ? html_write(out, &t, &ri, NULL) :
					       report_write(out, &t, ro, &ri);
		if (ret)
			pr_err("writing the report: %s", strerror(-ret));
	}
	table_destroy(&t);
	inv_free(&inv);
	free(c.r);
	free(c.anon);
	free(c.tp);
	free(c.tls);
	free(c.files);
	free(c.ro);
	munmap((void *)c.map, c.size);
	return ret;
}
