// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ptrace side: launch or attach, one waitpid loop for every thread of every traced
 * process, the malloc-family entry and return handlers, and detaching.
 *
 * Each traced process has its own table, modules, breakpoints and scratch page; each thread
 * a stack of the hooked calls it has in flight (normally zero or one), keyed by the stack
 * pointer at entry. Returns are caught with a trampoline: the return address of an outer
 * call is replaced by the trampoline's address, so a hit there is the return of the
 * innermost call in flight on that thread, whatever the other threads do.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define PR_DOMAIN "tracer"
#include "arch.h"
#include "breakpoint.h"
#include "hooks.h"
#include "log.h"
#include "maps.h"
#include "remote.h"
#include "report.h"
#include "symbols.h"
#include "table.h"
#include "tracer.h"
#include "unwind.h"
#include "util.h"

#define PTRACE_OPTS                                                                                \
	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |  \
	 PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXIT)

/* A hooked call in flight on one thread. */
struct frame {
	uint64_t ret; /* the caller's return address, replaced by the trampoline */
	uint64_t sp; /* sp at entry */
	struct hook_call call;
	struct block old; /* realloc: the block taken out at entry */
	bool took_old;
	unsigned npcs;
	uint64_t *pcs; /* backtrace captured at entry */
};

struct proc;

struct thread {
	pid_t tid;
	struct proc *p; /* NULL until its parent's clone/fork event names it */
	struct thread *hnext;
	struct frame *frames;
	unsigned nframes, cap;
	int pending_sig; /* to deliver when detaching */
	bool stopped; /* in a ptrace-stop heaptrace has not resumed */
	bool seen_first_stop; /* a new child's initial stop arrived */
	bool parent_known; /* its parent's event arrived */
};

struct proc {
	pid_t pid;
	struct proc *next;
	char *command;
	struct table table;
	struct modlist mods;
	uint64_t (*mod_hooks)[HOOK_COUNT]; /* per module: hook symbol values found in it */
	size_t mod_hooks_n;
	int interp; /* index of the dynamic linker in mods, -1 if none */
	char *exe; /* /proc/PID/exe */
	struct bpset bps;
	struct unwinder *unw;
	uint64_t hook_addr[HOOK_COUNT]; /* armed entries, 0 if none */
	bool armed;
	uint64_t start_bp; /* temporary breakpoint at the first instruction after exec */
	uint8_t start_saved[ARCH_MAX_INSN];
	size_t start_len;
	bool counting; /* false: only kept traced until it execs (an unfollowed vfork child) */
	bool shares_mm; /* vfork child: its memory is its parent's until it execs */
	bool detach_at_first_stop; /* an unfollowed fork child */
	bool exited;
	int exit_status;
	bool has_statm;
	uint64_t statm[3];
	uint64_t start_ns;
	bool launched;
	unsigned nthreads;
	uint64_t unwind_seq; /* allocations seen, for --sample */
};

static const struct tracer_opts *opts;
static struct proc *procs;
static struct thread *thread_hash[4096];
static bool detaching;
static int launched_status = -1;
static bool start_failed; /* the launched program could not be traced */
static pid_t launched_pid;

static volatile sig_atomic_t sig_stop, sig_report_size, sig_report_count, sig_tick;

static void on_signal(int sig)
{
	switch (sig) {
	case SIGINT:
	case SIGTERM:
		sig_stop = 1;
		break;
	case SIGUSR1:
		sig_report_size = 1;
		break;
	case SIGUSR2:
		sig_report_count = 1;
		break;
	default:
		sig_tick = 1;
	}
}

/* --- threads and processes --- */

static struct thread *thread_find(pid_t tid)
{
	for (struct thread *t = thread_hash[tid % ARRAY_SIZE(thread_hash)]; t; t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

static struct thread *thread_new(pid_t tid, struct proc *p)
{
	struct thread *t = xcalloc(1, sizeof(*t));
	struct thread **head = &thread_hash[tid % ARRAY_SIZE(thread_hash)];

	t->tid = tid;
	t->p = p;
	t->hnext = *head;
	*head = t;
	if (p)
		p->nthreads++;
	return t;
}

static void thread_free(struct thread *t)
{
	struct thread **pp = &thread_hash[t->tid % ARRAY_SIZE(thread_hash)];

	while (*pp != t)
		pp = &(*pp)->hnext;
	*pp = t->hnext;
	if (t->p)
		t->p->nthreads--;
	for (unsigned i = 0; i < t->cap; i++)
		free(t->frames[i].pcs);
	free(t->frames);
	free(t);
}

static void for_each_thread(struct proc *p, void (*fn)(struct thread *t, void *ctx), void *ctx)
{
	for (size_t i = 0; i < ARRAY_SIZE(thread_hash); i++) {
		struct thread *t = thread_hash[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->p == p)
				fn(t, ctx);
		}
	}
}

static char *read_cmdline(pid_t pid)
{
	char name[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/cmdline", (int)pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return xstrdup("?");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return xstrdup("?");
	if (buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return xstrdup(buf);
}

static void read_statm(struct proc *p)
{
	char name[64];
	unsigned long long v[3];
	long page = sysconf(_SC_PAGESIZE);
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/statm", (int)p->pid);
	f = fopen(name, "re");
	if (!f)
		return;
	if (fscanf(f, "%llu %llu %llu", &v[0], &v[1], &v[2]) == 3) {
		for (int i = 0; i < 3; i++)
			p->statm[i] = v[i] * page;
		p->has_statm = true;
	}
	fclose(f);
}

static struct proc *proc_new(pid_t pid)
{
	struct proc *p = xcalloc(1, sizeof(*p));

	p->pid = pid;
	p->interp = -1;
	p->counting = true;
	p->start_ns = now_ns();
	table_init(&p->table);
	p->next = procs;
	procs = p;
	return p;
}

static void proc_forget_image(struct proc *p)
{
	modlist_clear(&p->mods);
	free(p->mod_hooks);
	p->mod_hooks = NULL;
	p->mod_hooks_n = 0;
	p->interp = -1;
	free(p->exe);
	p->exe = NULL;
	bp_forget(&p->bps);
	unwind_destroy(p->unw);
	p->unw = NULL;
	memset(p->hook_addr, 0, sizeof(p->hook_addr));
	p->armed = false;
	p->start_bp = 0;
}

static void free_thread_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	thread_free(t);
}

static void proc_free(struct proc *p)
{
	struct proc **pp = &procs;

	while (*pp != p)
		pp = &(*pp)->next;
	*pp = p->next;
	for_each_thread(p, free_thread_cb, NULL);
	proc_forget_image(p);
	table_destroy(&p->table);
	free(p->command);
	free(p);
}

/* --- reports --- */

struct resolve_ctx {
	struct proc *p;
	struct symbolizer *sym;
};

static void resolve_frame(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	struct resolve_ctx *rc = ctx;

	pc = arch->code_addr(pc);
	sym_resolve(rc->sym, pc, index > 0, out);
	if (index == 0) {
		/* frame 0 is the public name (malloc, not __libc_malloc) */
		for (int h = 0; h < HOOK_COUNT; h++) {
			if (rc->p->hook_addr[h] == pc) {
				out->function = hook_table[h].name;
				out->offset = 0;
				break;
			}
		}
	}
}

static void write_report(struct proc *p, int sort)
{
	struct report_opts ro = opts->report;
	struct resolve_ctx rc = { p, sym_open(&p->mods) };
	struct report_info ri = {
		.pid = p->pid,
		.command = p->command ? p->command : "?",
		.exited = p->exited,
		.exit_status = p->exit_status,
		.now_ns = now_ns(),
		.resolve = resolve_frame,
		.resolve_ctx = &rc,
	};
	int ret;

	if (!p->exited)
		read_statm(p);
	ri.has_statm = p->has_statm;
	ri.statm_vss = p->statm[0];
	ri.statm_rss = p->statm[1];
	ri.statm_shared = p->statm[2];
	ri.elapsed_ns = ri.now_ns - p->start_ns;
	if (sort >= 0)
		ro.sort = sort;
	ret = report_write(opts->out, &p->table, &ro, &ri);
	if (ret)
		pr_err("writing the report: %s", strerror(-ret));
	sym_close(rc.sym);
}

static void report_all(int sort)
{
	for (struct proc *p = procs; p; p = p->next)
		if (p->counting)
			write_report(p, sort);
}

/* --- resuming --- */

static void resume(struct thread *t, int sig)
{
	if (detaching) {
		t->stopped = true;
		if (sig)
			t->pending_sig = sig;
		return;
	}
	t->stopped = false;
	if (ptrace(PTRACE_CONT, t->tid, 0, sig) < 0 && errno != ESRCH)
		pr_warn("ptrace(CONT, %d): %s", t->tid, strerror(errno));
}

/* --- modules and hooks --- */

static bool is_libc(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
	       !strncmp(base, "ld-musl", 7);
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
		if ((int)i != p->interp && m->exec)
			sym_find_hooks(m->path, p->mod_hooks[i]);
	}
	p->mod_hooks_n = p->mods.n;
	if (p->unw)
		unwind_flush(p->unw);
}

/* Read the mappings again (libraries were loaded or unloaded). */
static void scan_modules(struct proc *p)
{
	struct mapping *maps = NULL;
	ssize_t n = maps_read(p->pid, &maps);
	size_t old = p->mods.n;

	if (n < 0)
		return;
	modlist_update(&p->mods, maps, n);
	free(maps);
	note_modules(p, old);
}

/* Rank for choosing which module's definition a process uses: the executable first, then
 * other libraries (a replacement allocator), the C library last, as symbol lookup would. */
static int module_rank(const struct proc *p, size_t i)
{
	const char *path = p->mods.v[i].path;

	if (p->exe && !strcmp(path, p->exe))
		return 0;
	return is_libc(path) ? 2 : 1;
}

/* Place the entry breakpoints once a module defines malloc. Return 0, 1 if none yet, or
 * -errno after printing why. */
static int arm_hooks(struct proc *p, pid_t tid)
{
	int chosen[HOOK_COUNT];

	if (p->armed)
		return 0;
	for (int h = 0; h < HOOK_COUNT; h++) {
		chosen[h] = -1;
		for (size_t i = 0; i < p->mod_hooks_n; i++)
			if (p->mod_hooks[i][h] &&
			    (chosen[h] < 0 || module_rank(p, i) < module_rank(p, chosen[h])))
				chosen[h] = i;
	}
	if (chosen[HOOK_MALLOC] < 0)
		return 1;
	for (int h = 0; h < HOOK_COUNT; h++) {
		const struct module *m;
		uint64_t addr;
		int ret;

		if (chosen[h] < 0)
			continue;
		m = &p->mods.v[chosen[h]];
		addr = p->mod_hooks[chosen[h]][h] + m->bias; /* arm: with the Thumb bit */
		ret = bp_insert(&p->bps, tid, addr, BP_HOOK, h);
		addr = arch->code_addr(addr);
		if (ret == -EEXIST) {
			p->hook_addr[h] = addr; /* an alias (memalign = aligned_alloc) */
			continue;
		}
		if (ret) {
			pr_err("cannot trace %s at %#llx in %s: %s", hook_table[h].name,
			       (unsigned long long)addr, m->path,
			       ret == -ENOTSUP ? "its first instruction is not supported yet" :
			       ret == -ERANGE ? "the scratch page is too far away" :
						 strerror(-ret));
			return ret;
		}
		p->hook_addr[h] = addr;
		pr_dbg(0, "traced %s at %#llx (%s)", hook_table[h].name, (unsigned long long)addr,
		       m->path);
	}
	p->armed = true;
	return 0;
}

/* Read /proc/PID/exe into p->exe. */
static void read_exe(struct proc *p)
{
	char name[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/%d/exe", (int)p->pid);
	n = readlink(name, buf, sizeof(buf) - 1);
	free(p->exe);
	p->exe = NULL;
	if (n > 0) {
		buf[n] = '\0';
		p->exe = xstrdup(buf);
	}
}

/*
 * Map the scratch page and place the breakpoints of a fresh image. The thread is stopped at
 * a clean point (the first instruction, or an attach stop). near: an address the page should
 * be close to. Return 0 or -errno after printing why.
 */
static int setup_image(struct proc *p, struct thread *t, uint64_t near, bool attached)
{
	struct mapping *maps = NULL;
	ssize_t n;
	uint64_t ldso;
	int ret, sig;

	read_exe(p);
	if (p->exe) {
		struct elf_info info;

		if (!sym_elf_info(p->exe, &info) &&
		    (info.machine != arch->elf_machine || info.elf_class != arch->elf_class)) {
			pr_warn("%s (process %d) is not a %s program: it runs on untraced", p->exe,
				p->pid, arch->name);
			return -EXDEV;
		}
	}
	p->unw = unwind_new(p->pid);
	n = maps_read(p->pid, &maps);
	if (n < 0) {
		pr_err("reading /proc/%d/maps: %s", p->pid, strerror((int)-n));
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
	ret = bp_page_inject(&p->bps, t->tid, maps, n, (near & ~0xfffULL) - 0x200000, &sig);
	free(maps);
	if (sig)
		t->pending_sig = sig;
	if (ret) {
		pr_err("cannot map a scratch page in process %d: %s", p->pid, strerror(-ret));
		return ret;
	}
	if (p->interp >= 0) {
		const struct module *m = &p->mods.v[p->interp];

		ldso = m->bias_known ? sym_lookup(m->path, "_dl_debug_state") : 0;
		if (ldso) {
			ret = bp_insert(&p->bps, t->tid, ldso + m->bias, BP_LDSO, -1);
			if (ret)
				pr_warn("cannot watch library loading in %d: %s", p->pid,
					strerror(-ret));
		} else {
			pr_warn("%s has no _dl_debug_state: libraries loaded later are not seen",
				m->path);
		}
	}
	/* a dynamic program's C library is not mapped yet: armed at _dl_debug_state */
	ret = attached || p->interp < 0 ? arm_hooks(p, t->tid) : 0;
	if (ret < 0)
		return ret;
	if (ret > 0) {
		pr_err("%s: no allocator symbols found", p->exe ? p->exe : p->command);
		return -ENOENT;
	}
	return 0;
}

/* --- breakpoint handlers --- */

static struct frame *push_frame(struct thread *t)
{
	if (t->nframes == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 4;

		t->frames = xrealloc(t->frames, cap * sizeof(*t->frames));
		for (unsigned i = t->cap; i < cap; i++)
			t->frames[i].pcs = xmalloc(opts->depth * sizeof(uint64_t));
		t->cap = cap;
	}
	return &t->frames[t->nframes++];
}

/* Frames whose entry sp lies below sp were left by longjmp: their return never comes. */
static void drop_stale(struct thread *t, uint64_t sp, unsigned adjust)
{
	while (t->nframes && t->frames[t->nframes - 1].sp + adjust < sp) {
		struct frame *f = &t->frames[--t->nframes];

		if (f->took_old)
			table_put_back(&t->p->table, &f->old);
		pr_dbg(0, "thread %d: dropped a call to %s left by longjmp", t->tid,
		       hook_table[f->call.id].name);
	}
}

static void on_entry(struct thread *t, struct arch_regs *regs, const struct bp *b)
{
	struct proc *p = t->p;
	uint64_t sp = arch->get_sp(regs), ret;
	const struct hook_desc *d = &hook_table[b->hook];
	struct frame *f;

	drop_stale(t, sp, 0);
	/* inside another traced call (realloc -> malloc, posix_memalign -> malloc, ...) */
	if (t->nframes || !p->counting || detaching)
		return;
	if (d->at_entry_only) {
		uint64_t ptr = arch->get_arg(regs, 0);

		if (!table_free(&p->table, ptr) && ptr && log_level >= 2) {
			uint64_t caller = 0;

			if (arch->ret_on_stack)
				remote_read_word(t->tid, sp, arch->word_size, &caller);
			else
				caller = arch->get_ret_reg(regs);
			pr_dbg(1, "thread %d: free(%#llx) of a block never seen, from %#llx", t->tid,
			       (unsigned long long)ptr, (unsigned long long)caller);
		}
		return;
	}
	if (arch->ret_on_stack) {
		if (remote_read_word(t->tid, sp, arch->word_size, &ret))
			return;
	} else {
		ret = arch->get_ret_reg(regs);
	}
	if (bp_is_tramp(&p->bps, arch->code_addr(ret)))
		return; /* a tail call from a traced call: its return is already caught */
	f = push_frame(t);
	f->ret = ret;
	f->sp = sp;
	f->call.id = b->hook;
	for (unsigned i = 0; i < 3; i++)
		f->call.args[i] = i < d->nargs ? arch->get_arg(regs, i) : 0;
	f->took_old = false;
	if ((b->hook == HOOK_REALLOC || b->hook == HOOK_REALLOCARRAY) && f->call.args[0])
		f->took_old = table_take(&p->table, f->call.args[0], &f->old);
	if (opts->sample > 1 && p->unwind_seq++ % opts->sample) {
		/* not sampled: the allocation function and its caller, known without unwinding */
		f->pcs[0] = arch->get_pc(regs);
		f->pcs[1] = ret;
		f->npcs = opts->depth < 2 ? 1 : 2;
	} else {
		/*
		 * At the entry the caller's frame is exact: pc = return address, sp above it, the
		 * other registers untouched. Unwinding from there needs no unwind information for
		 * the allocator's first instruction, and frame pointers lead the right way even in
		 * a static program without .eh_frame_hdr.
		 */
		struct arch_regs caller = *regs;

		f->pcs[0] = arch->get_pc(regs);
		f->npcs = 1;
		if (opts->depth > 1) {
			arch->set_pc(&caller, ret);
			arch->set_sp(&caller, sp + arch->ret_sp_adjust);
			f->npcs += unwind_capture(p->unw, t->tid, &caller, f->pcs + 1,
						  opts->depth - 1);
		}
	}
	if (arch->ret_on_stack) {
		if (remote_write_word(t->tid, sp, arch->word_size,
				      arch->tramp_for(p->bps.tramp, ret))) {
			t->nframes--;
			if (f->took_old)
				table_put_back(&p->table, &f->old);
		}
	} else {
		arch->set_ret_reg(regs, arch->tramp_for(p->bps.tramp, ret));
	}
}

/* Return 0, or -1 when the thread cannot go on (no call in flight). */
static int on_return(struct thread *t, struct arch_regs *regs)
{
	struct proc *p = t->p;
	uint64_t retval = arch->get_retval(regs), memptr = 0;
	struct hook_effect e;
	struct frame *f;

	drop_stale(t, arch->get_sp(regs), arch->ret_sp_adjust);
	if (!t->nframes) {
		pr_err("thread %d returned to the trampoline with no traced call in flight", t->tid);
		return -1;
	}
	f = &t->frames[--t->nframes];
	if (hook_needs_memptr(&f->call, retval))
		remote_read_word(t->tid, f->call.args[0], arch->word_size, &memptr);
	hook_effect(&f->call, retval, memptr, &e);
	if (f->call.id == HOOK_REALLOC || f->call.id == HOOK_REALLOCARRAY) {
		if (e.freed)
			table_count_release(&p->table, f->took_old);
		else if (f->took_old)
			table_put_back(&p->table, &f->old);
	} else if (e.freed) {
		table_free(&p->table, e.freed);
	}
	if (e.allocated)
		table_alloc(&p->table, e.allocated, e.size,
			    table_intern(&p->table, f->pcs, f->npcs), now_ns());
	arch->set_pc(regs, f->ret);
	return 0;
}

/* Return true if the SIGTRAP was sent by a process, not raised by a breakpoint. */
static bool trap_is_sent(pid_t tid)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0)
		return false;
	return si.si_code <= 0;
}

static void fatal_stop(struct proc *p)
{
	/* tracing could not start: the program must not run on half traced */
	kill(p->pid, SIGKILL);
	if (p->launched)
		start_failed = true;
}

static void on_sigtrap(struct thread *t)
{
	struct proc *p = t->p;
	struct arch_regs regs;
	uint64_t pc, addr;
	struct bp *b;
	int ret;

	if (arch_get_regs(t->tid, &regs)) {
		resume(t, 0);
		return;
	}
	pc = arch->get_pc(&regs);
	addr = arch->bp_addr_from_pc(pc);
	if (p->start_bp && addr == p->start_bp) {
		remote_write(t->tid, addr, p->start_saved, p->start_len);
		p->start_bp = 0;
		arch->set_pc(&regs, addr);
		arch_set_regs(t->tid, &regs);
		ret = setup_image(p, t, addr, false);
		if (ret == -EXDEV) {
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
			proc_free(p);
			return;
		}
		if (ret) {
			fatal_stop(p);
			return;
		}
		resume(t, 0);
		return;
	}
	if (bp_is_tramp(&p->bps, addr) && !trap_is_sent(t->tid)) {
		if (on_return(t, &regs)) {
			resume(t, SIGSEGV);
			return;
		}
		arch_set_regs(t->tid, &regs);
		resume(t, 0);
		return;
	}
	b = bp_find(&p->bps, addr);
	if (!b || trap_is_sent(t->tid)) {
		resume(t, SIGTRAP); /* the program's own */
		return;
	}
	if (b->kind == BP_HOOK) {
		arch->set_pc(&regs, addr); /* unwind from the entry itself */
		on_entry(t, &regs, b);
	} else if (b->kind == BP_LDSO && !p->shares_mm) {
		scan_modules(p);
		if (arm_hooks(p, t->tid) < 0) {
			fatal_stop(p);
			return;
		}
	}
	bp_step(b, &regs);
	arch_set_regs(t->tid, &regs);
	resume(t, 0);
}

/* --- process events --- */

static void on_exec(struct thread *t)
{
	struct proc *p = t->p;
	struct arch_regs regs;
	uint8_t trap[ARCH_MAX_INSN];

	/* every other thread is gone; the survivor now has the process id */
	for (size_t i = 0; i < ARRAY_SIZE(thread_hash); i++) {
		struct thread *o = thread_hash[i], *next;

		for (; o; o = next) {
			next = o->hnext;
			if (o->p == p && o != t)
				thread_free(o);
		}
	}
	t->nframes = 0;
	if (!p->counting) { /* an unfollowed vfork child: its new image is not ours */
		ptrace(PTRACE_DETACH, t->tid, 0, 0);
		proc_free(p);
		return;
	}
	proc_forget_image(p);
	p->shares_mm = false;
	table_reset(&p->table); /* a new image, a new heap */
	p->start_ns = now_ns();
	free(p->command);
	p->command = read_cmdline(p->pid);
	p->has_statm = false;
	if (arch_get_regs(t->tid, &regs)) {
		resume(t, 0);
		return;
	}
	/* stop at the first instruction, where a syscall can be injected cleanly */
	p->start_bp = arch->get_pc(&regs);
	p->start_len = arch->bp_encode(p->start_bp, trap);
	if (remote_read(t->tid, p->start_bp, p->start_saved, p->start_len) !=
		    (ssize_t)p->start_len ||
	    remote_write(t->tid, p->start_bp, trap, p->start_len)) {
		pr_err("cannot stop process %d at its first instruction", p->pid);
		fatal_stop(p);
		return;
	}
	resume(t, 0);
}

/* Replace every word equal to from by to in [lo, hi) of tid's memory (bounded). */
static void replace_words(pid_t tid, uint64_t lo, uint64_t hi, uint64_t from, uint64_t to)
{
	const unsigned w = arch->word_size;
	uint8_t buf[4096];

	if (hi > lo + (64 << 10))
		hi = lo + (64 << 10);
	for (uint64_t at = lo & ~(uint64_t)(w - 1); at < hi; at += sizeof(buf)) {
		size_t len = hi - at < sizeof(buf) ? hi - at : sizeof(buf);
		ssize_t n = remote_read(tid, at, buf, len);

		for (ssize_t k = 0; k + w <= n; k += w) {
			uint64_t v = 0;

			memcpy(&v, buf + k, w); /* little-endian targets */
			if (v == from)
				remote_write_word(tid, at + k, w, to);
		}
		if (n < (ssize_t)len)
			break;
	}
}

/* Give every call in flight its caller's return address back before detaching. */
static void restore_cb(struct thread *t, void *ctx)
{
	struct arch_regs regs;
	uint64_t lo;
	bool dirty = false;

	(void)ctx;
	if (t->p->shares_mm || !t->nframes)
		return;
	if (arch->ret_on_stack) { /* x86_64: the slot at the entry sp is untouched until ret */
		for (unsigned i = t->nframes; i-- > 0;)
			remote_write_word(t->tid, t->frames[i].sp, arch->word_size,
					  t->frames[i].ret);
		t->nframes = 0;
		return;
	}
	/*
	 * The link register got the trampoline at entry; the callee may still hold it there or
	 * have spilled it into its own frame, which lies between the thread's sp and the entry
	 * sp. Put the caller's address back in both places.
	 */
	if (arch_get_regs(t->tid, &regs))
		return;
	lo = arch->get_sp(&regs);
	for (unsigned i = t->nframes; i-- > 0;) {
		const struct frame *f = &t->frames[i];
		uint64_t tv = arch->tramp_for(t->p->bps.tramp, f->ret);

		if (arch->get_ret_reg(&regs) == tv) {
			arch->set_ret_reg(&regs, f->ret);
			dirty = true;
		}
		replace_words(t->tid, lo, f->sp, tv, f->ret);
		lo = f->sp;
	}
	if (dirty)
		arch_set_regs(t->tid, &regs);
	t->nframes = 0;
}

/* The child of a fork heaptrace does not follow: clean its copy of memory, let it go. */
static void release_child(struct thread *t)
{
	struct proc *p = t->p;

	bp_remove_all(&p->bps, t->tid);
	/* return addresses the parent had patched are in the child's copy of the stack */
	restore_cb(t, NULL);
	ptrace(PTRACE_DETACH, t->tid, 0, 0);
	proc_free(p);
}

/* Both halves of a new tracee are known (its first stop and its parent's event): go. */
static void start_new(struct thread *t)
{
	if (t->p->detach_at_first_stop && t->tid == t->p->pid)
		release_child(t);
	else
		resume(t, 0);
}

static bool same_process(pid_t tid, pid_t tgid)
{
	char name[64], line[128];
	bool same = false;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)tid);
	f = fopen(name, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5)) {
			same = atoi(line + 5) == tgid;
			break;
		}
	fclose(f);
	return same;
}

static void copy_frames(struct thread *dst, const struct thread *src)
{
	for (unsigned i = 0; i < src->nframes; i++) {
		struct frame *f = push_frame(dst);
		uint64_t *pcs = f->pcs;

		*f = src->frames[i];
		f->pcs = pcs;
		memcpy(pcs, src->frames[i].pcs, src->frames[i].npcs * sizeof(uint64_t));
		f->took_old = false;
	}
}

static void on_new_child(struct thread *pt, int event)
{
	struct proc *pp = pt->p, *p;
	unsigned long msg;
	struct thread *t;
	pid_t tid;

	if (ptrace(PTRACE_GETEVENTMSG, pt->tid, 0, &msg) < 0)
		return;
	tid = (pid_t)msg;
	t = thread_find(tid);
	if (!t)
		t = thread_new(tid, NULL);
	if (event == PTRACE_EVENT_CLONE && same_process(tid, pp->pid)) {
		t->p = pp;
		pp->nthreads++;
	} else {
		p = proc_new(tid);
		p->command = xstrdup(pp->command ? pp->command : "?");
		/* vfork, or clone of a process that may share memory: its breakpoints are the
		 * parent's own; keep stepping over them until it execs */
		p->shares_mm = event != PTRACE_EVENT_FORK;
		p->counting = opts->follow_fork;
		p->detach_at_first_stop = !opts->follow_fork && !p->shares_mm;
		bp_copy(&p->bps, &pp->bps);
		memcpy(p->hook_addr, pp->hook_addr, sizeof(p->hook_addr));
		p->armed = pp->armed;
		modlist_copy(&p->mods, &pp->mods);
		p->interp = pp->interp;
		p->exe = pp->exe ? xstrdup(pp->exe) : NULL;
		p->mod_hooks = xcalloc(pp->mods.n ? pp->mods.n : 1, sizeof(*p->mod_hooks));
		if (pp->mods.n)
			memcpy(p->mod_hooks, pp->mod_hooks, pp->mods.n * sizeof(*p->mod_hooks));
		p->mod_hooks_n = pp->mods.n;
		p->unw = unwind_new(tid);
		if (opts->follow_fork) {
			table_destroy(&p->table);
			table_copy(&p->table, &pp->table);
		}
		t->p = p;
		p->nthreads++;
		/* the child's stack is a copy: the same calls are in flight there */
		copy_frames(t, pt);
	}
	t->parent_known = true;
	if (t->seen_first_stop)
		start_new(t);
}

static void on_exit_status(struct thread *t, int status)
{
	struct proc *p = t->p;

	if (!p) {
		thread_free(t);
		return;
	}
	if (t->tid != p->pid) {
		thread_free(t);
		return;
	}
	/* the leader is reported last, when the whole process is gone */
	p->exited = true;
	p->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (p->launched)
		launched_status = p->exit_status;
	thread_free(t);
	if (p->counting && !detaching)
		write_report(p, -1);
	proc_free(p);
}

static void handle(pid_t tid, int status)
{
	struct thread *t = thread_find(tid);
	int event = status >> 16, sig;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (t)
			on_exit_status(t, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	sig = WSTOPSIG(status);
	if (!t) { /* a new tracee's first stop before its parent's event */
		t = thread_new(tid, NULL);
		t->seen_first_stop = true;
		t->stopped = true;
		return;
	}
	t->stopped = true;
	if (!t->p) {
		t->seen_first_stop = true;
		return;
	}
	if (!t->seen_first_stop && event == PTRACE_EVENT_STOP) {
		t->seen_first_stop = true;
		if (t->parent_known)
			start_new(t);
		return;
	}
	t->seen_first_stop = true;
	switch (event) {
	case 0:
		if (sig == SIGTRAP)
			on_sigtrap(t);
		else
			resume(t, sig); /* the program's signal, unchanged */
		return;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		on_new_child(t, event);
		resume(t, 0);
		return;
	case PTRACE_EVENT_EXEC:
		on_exec(t);
		return;
	case PTRACE_EVENT_EXIT:
		if (t->tid == t->p->pid)
			read_statm(t->p); /* the last moment its memory can be seen */
		resume(t, 0);
		return;
	case PTRACE_EVENT_STOP:
		if (detaching) {
			t->stopped = true;
			return;
		}
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			/* group-stop: stay stopped, but keep reporting events */
			t->stopped = false;
			ptrace(PTRACE_LISTEN, tid, 0, 0);
			return;
		}
		resume(t, 0);
		return;
	default:
		resume(t, 0);
	}
}

/* --- detaching --- */

static void interrupt_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	if (!t->stopped && ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0 && errno == ESRCH)
		t->stopped = true; /* gone: its exit is reported later */
}

static void count_running_cb(struct thread *t, void *ctx)
{
	if (!t->stopped)
		++*(unsigned *)ctx;
}

static void detach_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	ptrace(PTRACE_DETACH, t->tid, 0, t->pending_sig);
}

static pid_t any_tid;

static void any_tid_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	any_tid = t->tid;
}

/* Stop every thread, take every breakpoint out, put return addresses back, let go. */
static void detach_all(void)
{
	detaching = true;
	for (struct proc *p = procs; p; p = p->next)
		for_each_thread(p, interrupt_cb, NULL);
	for (;;) {
		unsigned running = 0;
		int status;
		pid_t tid;

		for (struct proc *p = procs; p; p = p->next)
			for_each_thread(p, count_running_cb, &running);
		if (!running)
			break;
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		handle(tid, status);
	}
	for (struct proc *p = procs, *next; p; p = next) {
		next = p->next;
		any_tid = 0;
		for_each_thread(p, any_tid_cb, NULL);
		if (any_tid && !p->shares_mm)
			bp_remove_all(&p->bps, any_tid);
		if (any_tid && p->start_bp)
			remote_write(any_tid, p->start_bp, p->start_saved, p->start_len);
		for_each_thread(p, restore_cb, NULL);
		for_each_thread(p, detach_cb, NULL);
		proc_free(p);
	}
}

/* --- launch and attach --- */

static int launch(void)
{
	int go[2], err[2], e = 0;
	struct proc *p;
	pid_t pid;
	ssize_t n;

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		pr_err("pipe: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		pr_err("fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		char c;

		close(go[1]);
		close(err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGUSR1, SIG_DFL);
		signal(SIGUSR2, SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		/* wait until the tracer has seized us */
		if (read(go[0], &c, 1) == 1)
			execv(opts->path, opts->argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_OPTS | PTRACE_O_EXITKILL) < 0) {
		e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pr_err("cannot trace %s: ptrace(SEIZE, pid %d): %s%s", opts->argv[0], pid,
		       strerror(e),
		       e == EPERM ? " (check /proc/sys/kernel/yama/ptrace_scope, or whether "
				    "heaptrace itself runs under a debugger)" : "");
		return -e;
	}
	p = proc_new(pid);
	p->launched = true;
	launched_pid = pid;
	p->command = NULL;
	{
		size_t len = 0;

		for (char *const *a = opts->argv; *a; a++)
			len += strlen(*a) + 1;
		p->command = xmalloc(len + 1);
		p->command[0] = '\0';
		for (char *const *a = opts->argv; *a; a++) {
			if (a != opts->argv)
				strcat(p->command, " ");
			strcat(p->command, *a);
		}
	}
	thread_new(pid, p)->seen_first_stop = true;
	if (write(go[1], "x", 1) != 1) {
		pr_err("cannot start %s", opts->argv[0]);
		return -EIO;
	}
	close(go[1]);
	do
		n = read(err[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(err[0]);
	if (n == sizeof(e)) {
		waitpid(pid, NULL, __WALL);
		pr_err("cannot execute %s: %s", opts->argv[0], strerror(e));
		proc_free(p);
		return -e;
	}
	return 0;
}

static int attach(pid_t pid)
{
	char name[64];
	struct proc *p;
	bool added = true;
	struct thread *main_t;

	if (kill(pid, 0) && errno == ESRCH) {
		pr_err("no such process: %d", pid);
		return -ESRCH;
	}
	p = proc_new(pid);
	p->command = read_cmdline(pid);
	snprintf(name, sizeof(name), "/proc/%d/task", (int)pid);
	/* threads may be created while we attach: list until nothing new appears */
	while (added) {
		DIR *d = opendir(name);
		struct dirent *de;

		added = false;
		if (!d) {
			pr_err("cannot read %s: %s", name, strerror(errno));
			return -ESRCH;
		}
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			struct thread *t;

			if (tid <= 0 || thread_find(tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_OPTS) < 0) {
				int e = errno;

				if (e == ESRCH)
					continue;
				closedir(d);
				pr_err("cannot attach to process %d: ptrace(SEIZE, %d): %s%s", pid, tid,
				       strerror(e),
				       e == EPERM ? " (another tracer, or Yama ptrace_scope: "
						    "run as root or set "
						    "/proc/sys/kernel/yama/ptrace_scope to 0)" : "");
				return -e;
			}
			t = thread_new(tid, p);
			t->seen_first_stop = true;
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			added = true;
		}
		closedir(d);
	}
	/* wait until every thread is stopped */
	for (;;) {
		unsigned running = 0;
		int status;
		pid_t tid;
		struct thread *t;

		for_each_thread(p, count_running_cb, &running);
		/* threads just seized are not "stopped" until their interrupt stop arrives */
		if (!running)
			break;
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		t = thread_find(tid);
		if (!t)
			continue;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			on_exit_status(t, status);
			if (!procs)
				return -ESRCH;
			continue;
		}
		t->stopped = true;
		if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
			t->pending_sig = WSTOPSIG(status); /* delivered on resume */
		if ((status >> 16) == PTRACE_EVENT_CLONE || (status >> 16) == PTRACE_EVENT_FORK ||
		    (status >> 16) == PTRACE_EVENT_VFORK)
			on_new_child(t, status >> 16);
	}
	main_t = thread_find(pid);
	if (!main_t) {
		pr_err("process %d has no main thread left", pid);
		return -ESRCH;
	}
	if (setup_image(p, main_t, 0, true))
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(thread_hash); i++)
		for (struct thread *t = thread_hash[i]; t; t = t->hnext) {
			int sig = t->pending_sig;

			t->pending_sig = 0;
			resume(t, sig);
		}
	return 0;
}

int tracer_run(const struct tracer_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: wake waitpid */
	struct itimerval tick = { { 0, 100000 }, { 0, 100000 } };
	uint64_t start = now_ns(), deadline = 0, next_report = 0;
	unsigned reports = 0;
	int ret;

	opts = o;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	ret = o->pid ? attach(o->pid) : launch();
	if (ret) {
		while (procs) {
			struct proc *p = procs;

			for_each_thread(p, detach_cb, NULL);
			if (p->launched)
				kill(p->pid, SIGKILL);
			proc_free(p);
		}
		return EXIT_START;
	}
	/* a periodic tick makes sure a signal that lands just before waitpid is not lost */
	setitimer(ITIMER_REAL, &tick, NULL);
	if (o->duration > 0)
		deadline = start + (uint64_t)(o->duration * 1e9);
	if (o->interval > 0)
		next_report = start + (uint64_t)(o->interval * 1e9);

	while (procs) {
		uint64_t now = now_ns();
		int status;
		pid_t tid;

		if (start_failed)
			break;
		if (sig_stop || (deadline && now >= deadline))
			break;
		if (sig_report_size || sig_report_count) {
			int sort = sig_report_size ? SORT_SIZE : SORT_COUNT;

			sig_report_size = sig_report_count = 0;
			report_all(sort);
		}
		if (next_report && now >= next_report) {
			report_all(-1);
			reports++;
			next_report = o->count && reports >= o->count ?
					      0 : now + (uint64_t)(o->interval * 1e9);
		}
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				break;
			pr_err("waitpid: %s", strerror(errno));
			break;
		}
		handle(tid, status);
	}
	if (start_failed) {
		while (procs)
			proc_free(procs);
		/* the killed program is reaped below */
		if (launched_pid)
			waitpid(launched_pid, NULL, __WALL);
		return EXIT_START;
	}
	if (procs) {
		/* --duration or SIGINT/SIGTERM: final report, then let everything run on */
		report_all(-1);
		detach_all();
	}
	{
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_REAL, &off, NULL);
	}
	if (o->pid)
		return 0;
	if (launched_status < 0 && launched_pid) {
		int status;

		/* it runs on untraced: wait for it like a shell would */
		while (waitpid(launched_pid, &status, 0) < 0 && errno == EINTR)
			;
		launched_status = WIFEXITED(status) ? WEXITSTATUS(status) :
			WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 0;
	}
	return launched_status < 0 ? 0 : launched_status;
}
