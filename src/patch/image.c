// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process image: the modules it maps, where the malloc family is in them, the scratch page
 * and the breakpoints placed on a fresh image (at its first instruction, after an attach, and
 * whenever the dynamic linker reports a library change).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "image"
#include "heap/custom.h"
#include "patch/guard.h"
#include "unwind/fallback.h"
#include "patch/image.h"
#include "patch/pytable.h"
#include "patch/inject.h"
#include "inventory/inventory.h"
#include "util/log.h"
#include "symbols/params.h"
#include "target/remote.h"
#include "patch/stubs.h"
#include "symbols/symbols.h"
#include "unwind/unwind.h"
#include "util/util.h"

static struct image_opts image_opts; /* set once before tracing (image_init) */

void image_init(const struct image_opts *o)
{
	image_opts = *o;
}

static bool is_libc(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
	       !strncmp(base, "ld-musl", 7);
}

/* Say once per allocator that module m defines the entry points (foreign, hook_foreign bits)
 * of one heaptrace does not trace, unless named with --alloc. */
static void warn_foreign(const struct module *m, uint32_t foreign)
{
	static uint32_t said;

	for (int i = 0; i < 32; i++) {
		const struct hook_foreign *f = hook_foreign_at(i);

		if (!(foreign & 1u << i) || (said & 1u << i) || !f || hook_lookup(f->symbol) >= 0)
			continue;
		said |= 1u << i;
		pr_warn("%s defines %s (%s): the blocks it carves from its own memory are not "
			"traced; trace them with %s", m->path, f->symbol, f->what, f->spec);
	}
}

/* Note the load bias of modules [old, n) and the hooks they define. */
static void note_modules(struct proc *p, size_t old)
{
	if (p->mods.n == old)
		return;
	p->mod_hooks = xrealloc(p->mod_hooks, p->mods.n * sizeof(*p->mod_hooks));
	for (size_t i = old; i < p->mods.n; i++) {
		struct module *m = &p->mods.v[i];
		struct elf_info info;

		memset(p->mod_hooks[i], 0, sizeof(p->mod_hooks[i]));
		if (sym_elf_info(m->path, &info))
			continue;
		m->bias = m->base - info.first_load_vaddr;
		m->bias_known = true;
		/* glibc's dynamic linker has only its own minimal allocator; musl's is the C
		 * library itself (ld-musl-ARCH.so.1 = libc.so) */
		if (m->exec && ((int)i != p->interp || is_libc(m->path))) {
			uint32_t foreign;

			sym_find_hooks_foreign(m->path, p->mod_hooks[i], &foreign);
			warn_foreign(m, foreign);
		}
	}
	p->mod_hooks_n = p->mods.n;
	if (p->unw)
		unwind_flush(p->unw);
	fallback_flush(p);
	stubs_python(p);
}

/* Read the mappings again (libraries were loaded or unloaded). */
void image_scan(struct proc *p)
{
	struct mapping *maps = NULL;
	ssize_t n = maps_read(proc_mem_pid(p), &maps);
	size_t old = p->mods.n;

	if (n < 0)
		return;
	modlist_update(&p->mods, maps, n);
	free(maps);
	note_modules(p, old);
}

/* The C++ runtime, whose operators new and delete a replacement allocator's replace. */
static bool is_cxx_runtime(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libstdc++.so", 12) || !strncmp(base, "libc++.so", 9);
}

/* Rank for choosing which module's definition a process uses: the executable first, then
 * other libraries (a replacement allocator: jemalloc, tcmalloc, mimalloc), the C++ runtime,
 * the C library last, as symbol lookup would (g++ links libstdc++ after the program's own
 * libraries). */
static int module_rank(const struct proc *p, size_t i)
{
	const char *path = p->mods.v[i].path;

	if (p->exe && !strcmp(path, p->exe))
		return 0;
	return is_libc(path) ? 3 : is_cxx_runtime(path) ? 2 : 1;
}

/*
 * A breakpoint a killed heaptrace left behind (its guard kept the program alive) is taken out
 * first: the file's bytes go back where the code still shows the breakpoint instruction.
 */
static void heal(struct proc *p, pid_t tid, uint64_t addr)
{
	uint8_t trap[ARCH_MAX_INSN], now[ARCH_MAX_INSN], file[ARCH_MAX_INSN];
	size_t len = arch->bp_encode(addr, trap);
	uint64_t code = arch->code_addr(addr);
	const struct module *m = modlist_find(&p->mods, code);

	if (bp_find(p->bps, code)) /* ours already (aliases share an address) */
		return;
	if (!m || !m->bias_known || remote_read(tid, code, now, len) != (ssize_t)len ||
	    memcmp(now, trap, len))
		return;
	if (sym_read_code(m->path, code - m->bias, file, len) != (ssize_t)len ||
	    !memcmp(file, trap, len))
		return;
	if (!remote_write(tid, code, file, len))
		pr_info("process %d: took out a breakpoint an earlier heaptrace left at %#llx",
			p->pid, (unsigned long long)code);
}

/* Place a breakpoint at symbol value addr (the guard learns of it first: bpset.announce).
 * Return as bp_insert. */
static int place(struct proc *p, pid_t tid, uint64_t addr, enum bp_kind kind, int hook)
{
	heal(p, tid, addr);
	return bp_insert(p->bps, tid, addr, kind, hook);
}

/* Send hook h's entry at symbol value addr, in module m, through its stub, or else place a
 * breakpoint there. Return as bp_insert. */
static int patch(struct proc *p, pid_t tid, uint64_t addr, int h, const struct module *m)
{
	int ret;

	if (!p->stubs)
		return place(p, tid, addr, BP_HOOK, h);
	ret = stubs_patch(p, tid, addr, h, m);
	if (!ret || ret == -EEXIST)
		return ret;
	pr_info("%s in process %d keeps a breakpoint (a stop per call): %s", hook_table[h].name,
		p->pid,
		ret == -ENOTSUP ? "its first instructions cannot be moved, or its result is read "
				  "at the return" :
		ret == -EBUSY ? "a thread is running, or stopped inside its first instructions" :
		ret == -ERANGE ? "the stub page is out of reach" :
		ret == -EXDEV ? "something in the function leads into its first bytes" :
		ret == -E2BIG ? "it may take arguments on the stack, which a stub would shift" :
				strerror(-ret));
	return place(p, tid, addr, BP_HOOK, h);
}

/*
 * With the guard on, the program's sigaction(SIGTRAP, ...) must be answered by heaptrace
 * (guard.h): a breakpoint on the C library's sigaction, in module m.
 * Every other way to set a handler in glibc and musl (signal, sigset, bsd_signal) calls it.
 */
static void watch_sigaction(struct proc *p, pid_t tid, const struct module *m)
{
	static const char *const names[] = { "__sigaction", "sigaction", "__libc_sigaction" };
	uint64_t addr = 0;
	int ret;

	if (!p->guard->page)
		return;
	for (size_t i = 0; !addr && i < ARRAY_SIZE(names); i++)
		addr = sym_lookup(m->path, names[i]);
	if (!addr && p->interp < 0) {
		/* a static executable links only what it calls (musl's does not always call it) */
		pr_dbg(1, "no sigaction in %s: the program sets no signal handler", m->path);
		return;
	}
	if (!addr) {
		pr_warn("no sigaction in %s: the program would see heaptrace's SIGTRAP handler",
			m->path);
		return;
	}
	ret = place(p, tid, addr + m->bias, BP_SIGACTION, -1);
	if (ret && ret != -EEXIST)
		pr_warn("cannot watch sigaction in process %d: %s", p->pid, strerror(-ret));
}

/* The C library, whose sigaction the program calls: the module of malloc (index), unless that
 * is a replacement allocator's and a C library is mapped too. */
static const struct module *sigaction_module(const struct proc *p, int malloc_mod)
{
	for (size_t i = 0; i < p->mods.n; i++)
		if (p->mods.v[i].exec && p->mods.v[i].bias_known && is_libc(p->mods.v[i].path))
			return &p->mods.v[i];
	return &p->mods.v[malloc_mod];
}

bool image_regs_only(const struct proc *p, int h)
{
	if (!hook_args_in_regs(&hook_table[h], arch->reg_args))
		return false;
	return h < HOOK_CUSTOM0 || p->custom_regs_only[h - HOOK_CUSTOM0];
}

/* Learn whether custom hook h's function, at symbol value sym of module m's file, takes every
 * argument in registers (image_regs_only). */
static void learn_arity(struct proc *p, int h, const struct module *m, uint64_t sym)
{
	int words;

	if (h < HOOK_CUSTOM0)
		return;
	words = params_words(m->path, arch->code_addr(sym), arch->word_size);
	p->custom_regs_only[h - HOOK_CUSTOM0] = words >= 0 && (unsigned)words <= arch->reg_args;
	if (!p->custom_regs_only[h - HOOK_CUSTOM0] && !hook_at_entry_only(&hook_table[h]))
		pr_info("%s in process %d returns through a stop (%s), which leaves its stack "
			"as it is", hook_table[h].name, p->pid,
			words == -ENOENT ? "no debug information tells its arguments" :
			words >= 0 || words == -E2BIG ? "it may take arguments on the stack" :
							 strerror(-words));
}

/* The name of the allocator module m is: a replacement's, the C library's (glibc or musl,
 * told apart in a static executable by a function only musl has), else the file's. */
static const char *allocator_name(const struct proc *p, const struct module *m, char *buf,
				  size_t len)
{
	const char *base = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
	const char *other = inv_other_allocator(base);

	if (other)
		return other;
	if (is_libc(m->path)) /* musl's is libc.so under a musl directory, or ld-musl-ARCH */
		return strstr(m->path, "musl") ? "musl" : "glibc";
	if (p->interp < 0 && p->exe && !strcmp(m->path, p->exe))
		return sym_lookup(m->path, "__init_libc") ? "musl" : "glibc";
	snprintf(buf, len, "malloc of %s", base);
	return buf;
}

/* Note whether hook h, traced in module m, is glibc's realloc or reallocarray. */
static void note_realloc(struct proc *p, int h, const struct module *m)
{
	char buf[80];
	bool glibc;

	if (h != HOOK_REALLOC && h != HOOK_REALLOCARRAY)
		return;
	glibc = !strcmp(allocator_name(p, m, buf, sizeof(buf)), "glibc");
	if (h == HOOK_REALLOC)
		p->glibc_realloc = glibc;
	else
		p->glibc_reallocarray = glibc;
}

/* Place the breakpoint of hook h at its definition in module i. Return 0 or -errno after
 * printing why. */
static int arm_hook(struct proc *p, pid_t tid, int h, size_t i)
{
	const struct module *m = &p->mods.v[i];
	uint64_t addr = p->mod_hooks[i][h] + m->bias; /* arm: with the Thumb bit */
	int ret = sym_code_entry(m->path, arch->code_addr(p->mod_hooks[i][h]));

	if (ret == -EFAULT || ret == -EILSEQ) { /* a bogus symbol table: its code left alone */
		pr_warn("%s in %s: its symbol (%#llx) points %s: not traced", hook_table[h].name,
			m->path, (unsigned long long)arch->code_addr(p->mod_hooks[i][h]),
			ret == -EFAULT ? "outside the executable code" :
					 "into the middle of a function");
		return 0;
	}
	if (hook_is_python(h)) {
		ret = pytable_arm(p, tid, h, m, p->mod_hooks[i]);
		if (ret <= 0)
			return ret;
	}
	learn_arity(p, h, m, p->mod_hooks[i][h]);
	ret = patch(p, tid, addr, h, m);

	addr = arch->code_addr(addr);
	if (ret == -EEXIST) {
		p->hook_addr[h] = addr; /* an alias (memalign = aligned_alloc) */
		note_realloc(p, h, m);
		return 0;
	}
	if (ret == -ENOSPC) { /* the scratch page is full: the rest of hook_table is not traced */
		if (!p->hooks_full)
			pr_warn("process %d: no room left to trace %s (%s) and the entries after it "
				"in heaptrace's list", p->pid, hook_table[h].name, m->path);
		p->hooks_full = true;
		return 0;
	}
	if (ret && ((h >= HOOK_MMAP && h <= HOOK_SBRK) || hook_table[h].heap != HEAP_MALLOC)) {
		/* an extra the user asked for (--alloc, --mmap) or CPython's: the rest is traced
		 * all the same */
		pr_warn("cannot trace %s at %#llx in %s: %s: it is left out", hook_table[h].name,
			(unsigned long long)addr, m->path,
			ret == -ENOTSUP ? "its first instruction is not supported yet" :
			ret == -ERANGE ? "the scratch page is too far away" : strerror(-ret));
		return 0;
	}
	if (ret) {
		pr_err("cannot trace %s at %#llx in %s: %s", hook_table[h].name,
		       (unsigned long long)addr, m->path,
		       ret == -ENOTSUP ? "its first instruction is not supported yet" :
		       ret == -ERANGE	? "the scratch page is too far away" :
					  strerror(-ret));
		return ret;
	}
	p->hook_addr[h] = addr;
	note_realloc(p, h, m);
	custom_found(h);
	if (hook_is_python(h))
		hook_enable_pymalloc();
	pr_dbg(1, "traced %s at %#llx (%s)", hook_table[h].name, (unsigned long long)addr,
	       m->path);
	return 0;
}

/* Add name to out[*n] unless it is there. */
static void add_name(const char **out, unsigned *n, unsigned max, const char *name)
{
	for (unsigned i = 0; i < *n; i++)
		if (!strcmp(out[i], name))
			return;
	if (*n < max)
		out[(*n)++] = name;
}

unsigned image_allocators(struct proc *p, const char **out, unsigned max)
{
	static char names[IMAGE_MAX_ALLOCATORS][96];
	unsigned n = 0, k = 0;

	for (int h = 0; h < HOOK_COUNT && k < IMAGE_MAX_ALLOCATORS; h++) {
		const struct hook_desc *d = &hook_table[h];
		const struct module *m;
		const char *name;
		char buf[80];

		if (!p->hook_addr[h] || d->kind == HK_UNWIND)
			continue;
		if (d->heap == HEAP_PYMALLOC) {
			snprintf(names[k], sizeof(names[k]), "pymalloc");
		} else if (d->heap != HEAP_MALLOC) {
			snprintf(names[k], sizeof(names[k]), "%s (--%s)", hook_heap_name(d->heap),
				 d->heap == HEAP_MMAP ? "mmap" : "alloc");
		} else {
			m = modlist_find(&p->mods, p->hook_addr[h]);
			if (!m)
				continue;
			name = allocator_name(p, m, buf, sizeof(buf));
			/* operators new and delete: their own entry unless their module's malloc
			 * is listed (jemalloc's); a module heaptrace has no name for (the
			 * executable's own operators) is "operators of FILE", not "malloc of" */
			if (h >= HOOK_NEW && h <= HOOK_DELETE_ARRAY_ALIGNED_NOTHROW &&
			    !(p->hook_addr[HOOK_MALLOC] &&
			      modlist_find(&p->mods, p->hook_addr[HOOK_MALLOC]) == m)) {
				if (is_cxx_runtime(m->path))
					snprintf(names[k], sizeof(names[k]), "%s operators",
						 strstr(m->path, "libc++") ? "libc++" :
									     "libstdc++");
				else if (name == buf)
					snprintf(names[k], sizeof(names[k]), "operators of %s",
						 strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 :
									 m->path);
				else
					snprintf(names[k], sizeof(names[k]), "%s operators", name);
			} else {
				snprintf(names[k], sizeof(names[k]), "%s", name);
			}
		}
		add_name(out, &n, max, names[k]);
		if (n && out[n - 1] == names[k])
			k++;
	}
	return n;
}

/* Say with -v which allocators process p has traced now. */
static void say_allocators(struct proc *p)
{
	const char *names[IMAGE_MAX_ALLOCATORS];
	char line[512] = "";
	unsigned n;

	if (log_level < 1)
		return;
	n = image_allocators(p, names, IMAGE_MAX_ALLOCATORS);
	for (unsigned i = 0; i < n; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", i ? ", " : "",
			 names[i]);
	pr_info("process %d: allocators traced: %s", p->pid, n ? line : "none");
}

/*
 * Place the entry breakpoints once a module defines malloc; later, those of hooks a library
 * loaded since defines (a C++ runtime a C program loads with dlopen). Return 0, 1 if none
 * yet, or -errno after printing why.
 */
int image_arm_hooks(struct proc *p, pid_t tid)
{
	int chosen[HOOK_COUNT];
	bool was_armed = p->armed, throws = false, more = false;

	/* hooks a module loaded later defines are armed then (an executable's own malloc is
	 * there before the C library, which brings the rest of the family; a C++ runtime a C
	 * program loads with dlopen) */
	for (int h = 0; h < HOOK_COUNT; h++) {
		chosen[h] = -1;
		for (size_t i = 0; i < p->mod_hooks_n; i++)
			if (p->mod_hooks[i][h] &&
			    (chosen[h] < 0 || module_rank(p, i) < module_rank(p, chosen[h])))
				chosen[h] = i;
	}
	if (!p->armed && chosen[HOOK_MALLOC] < 0)
		return 1;
	for (int h = 0; h < HOOK_COUNT; h++) {
		int ret;

		/* only where an operator that may throw is traced (hooks.h, HF_THROWS); in every
		 * module that defines it (libgcc_s's, and libunwind's that tcmalloc loads: which
		 * one a throw calls depends on symbol versions) */
		if (hook_table[h].kind == HK_UNWIND) {
			for (size_t i = 0; throws && i < p->mod_hooks_n; i++) {
				if (!p->mod_hooks[i][h])
					continue;
				ret = arm_hook(p, tid, h, i);
				if (ret)
					return ret;
			}
			continue;
		}
		/* libstdc++'s (and libc++'s) operator delete in every form calls free, or
		 * another form that does: free counts it, and its breakpoints would only take
		 * room in the scratch page */
		if (chosen[h] >= 0 && hook_table[h].kind == HK_FREE &&
		    is_cxx_runtime(p->mods.v[chosen[h]].path))
			continue;
		if (chosen[h] >= 0 && !p->hook_addr[h]) {
			ret = arm_hook(p, tid, h, chosen[h]);
			if (ret)
				return ret;
			more |= p->hook_addr[h] != 0;
		}
		if (p->hook_addr[h] && (hook_table[h].flags & HF_THROWS))
			throws = true;
	}
	if (!was_armed) {
		const struct module *libc = sigaction_module(p, chosen[HOOK_MALLOC]);

		watch_sigaction(p, tid, libc);
		stubs_watch_seccomp(p, tid, libc);
	}
	p->armed = true;
	if (more)
		say_allocators(p);
	return 0;
}

/* Say in one line why the image is left alone (seccomp, inject.h): after an attach heaptrace
 * gives up (-EPERM); a fresh image of a launched program runs on untraced (-EXDEV). */
static int inject_refused(struct proc *p, const struct inject_check *c, bool attached)
{
	char why[320];

	inject_check_why(c, "mmap", why, sizeof(why));
	if (attached) {
		pr_err("cannot trace process %d: %s; start the program under heaptrace instead",
		       p->pid, why);
		return -EPERM;
	}
	pr_warn("%s (process %d): %s: it runs on untraced", p->exe ? p->exe : p->command, p->pid,
		why);
	return -EXDEV;
}

/* Executable bytes no code of the process uses, for the restoring stub of the first injected
 * call (breakpoint.h), or 0. */
static uint64_t stub_cave(const struct proc *p)
{
	uint64_t vaddr;

	if (!arch->stub_code)
		return 0;
	for (size_t i = 0; i < p->mods.n; i++) {
		const struct module *m = &p->mods.v[i];

		if (m->exec && m->bias_known && !sym_exec_cave(m->path, arch->stub_size, &vaddr))
			return vaddr + m->bias;
	}
	return 0;
}

/* bpset.announce (ctx: the process): the guard learns of a breakpoint before its trap is in
 * the code. */
static void guard_announce(void *ctx, pid_t tid, const struct bp *b)
{
	guard_add_bp(ctx, tid, b);
}

/* Place the guard (guard.h) in the last page of the scratch mapping, if the ring's page and
 * the table's are there, writable (breakpoint.h). Without it, heaptrace's death with SIGKILL
 * would leave breakpoints that kill the program: -v says so. */
static void sigtrap_guard(struct proc *p, pid_t tid)
{
	int ret = -ENOTSUP;

	if (p->bps->ring && !getenv("HEAPTRACE_NO_GUARD"))
		ret = guard_install(p, tid, p->bps->ring + 2 * p->bps->page_size, p->bps->ring,
				    p->keep_ign);
	if (!ret) {
		p->bps->announce = guard_announce;
		p->bps->announce_ctx = p;
	}
	if (ret)
		pr_info("process %d has no SIGTRAP guard (%s): if heaptrace is killed with "
			"SIGKILL, its next traced call ends it", p->pid, strerror(-ret));
}

static void thread_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	stubs_thread(t);
}

/* The entry stubs and their ring (stubs.h), in --mode=stubs: without them (-v says why),
 * every hook gets a breakpoint. */
static void entry_stubs(struct proc *p, pid_t tid, struct inject_check *check)
{
	int ret;

	if (!image_opts.stubs || !stubs_supported())
		return;
	ret = stubs_setup(p, tid, 4u << 20, image_opts.stack_copy, image_opts.max_stall_ms,
			  inject_check_ok, check);
	if (ret) {
		pr_info("process %d: no entry stubs (%s): a stop per traced call", p->pid,
			strerror(-ret));
		return;
	}
	proc_for_each_thread(p, thread_cb, NULL);
}

/*
 * Map the scratch page and place the breakpoints of a fresh image. The thread is stopped at
 * a clean point (the first instruction, or an attach stop). near: an address the page should
 * be close to. Return 0, -EXDEV (a fresh image left untraced), or -errno after printing why.
 */
int image_setup(struct proc *p, struct thread *t, uint64_t near, bool attached)
{
	struct inject_check check;
	struct mapping *maps = NULL;
	ssize_t n;
	uint64_t ldso;
	int ret, sig;

	proc_read_exe(p);
	if (p->exe) {
		struct elf_info info;

		if (!sym_elf_info(p->exe, &info) &&
		    (info.machine != arch->elf_machine || info.elf_class != arch->elf_class)) {
			pr_warn("%s (process %d) is not a %s program: it runs on untraced", p->exe,
				p->pid, arch->name);
			return -EXDEV;
		}
	}
	/* no system call goes into the thread unless its seccomp state lets it through */
	inject_check_load(&check, t->tid);
	if (inject_check_none(&check)) {
		inject_check_free(&check);
		return inject_refused(p, &check, attached);
	}
	/* through a live thread when the main thread has exited: /proc/PID shows no memory */
	p->unw = unwind_new(proc_mem_pid(p));
	n = maps_read(proc_mem_pid(p), &maps);
	if (n < 0) {
		inject_check_free(&check);
		pr_err("reading /proc/%d/maps: %s", proc_mem_pid(p), strerror((int)-n));
		return (int)n;
	}
	modlist_update(&p->mods, maps, n);
	for (size_t i = 0; i < p->mods.n; i++) {
		const struct module *m = &p->mods.v[i];
		const char *b = strrchr(m->path, '/') + 1;

		if (p->exe && !strcmp(m->path, p->exe))
			continue;
		/* at the first instruction the PC is in the dynamic linker (static: the exe) */
		if (attached ? !strncmp(b, "ld-linux", 8) || !strncmp(b, "ld.so", 5) ||
				       !strncmp(b, "ld-musl", 7)
			     : near >= m->start && near < m->end)
			p->interp = i;
	}
	note_modules(p, 0);
	for (size_t i = 0; attached && i < p->mods.n; i++)
		if (p->mod_hooks[i][HOOK_MALLOC])
			near = p->mods.v[i].start; /* the page goes near the allocator */
	ret = bp_page_inject(p->bps, t->tid, maps, n, (near & ~0xfffULL) - 0x200000,
			     stub_cave(p), &sig, inject_check_ok, &check);
	free(maps);
	if (sig)
		t->pending_sig = sig;
	if (!ret)
		sigtrap_guard(p, t->tid);
	if (!ret)
		entry_stubs(p, t->tid, &check);
	inject_check_free(&check);
	if (ret == -ECANCELED)
		return inject_refused(p, &check, attached);
	if (ret) {
		pr_err("cannot map a scratch page in process %d: %s", p->pid,
		       ret == -ENOENT ? "no system call instruction found" : strerror(-ret));
		return ret;
	}
	memset(&p->retlog, 0, sizeof(p->retlog));
	p->retlog.ring = p->bps->ring;
	if (p->interp >= 0) {
		const struct module *m = &p->mods.v[p->interp];

		ldso = m->bias_known ? sym_lookup(m->path, "_dl_debug_state") : 0;
		if (ldso) {
			ret = place(p, t->tid, ldso + m->bias, BP_LDSO, -1);
			if (ret)
				pr_warn("cannot watch library loading in %d: %s", p->pid,
					strerror(-ret));
		} else {
			pr_warn("%s has no _dl_debug_state: libraries loaded later are not seen",
				m->path);
		}
	}
	/* a dynamic program's C library is not mapped yet: armed at _dl_debug_state */
	ret = attached || p->interp < 0 ? image_arm_hooks(p, t->tid) : 0;
	if (ret < 0)
		return ret;
	if (ret > 0) {
		pr_err("%s: no allocator symbols found", p->exe ? p->exe : p->command);
		return -ENOENT;
	}
	return 0;
}
