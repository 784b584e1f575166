// SPDX-License-Identifier: GPL-2.0-only
/*
 * stall: programs that make heaptrace's entry stubs wait for room in their ring, for
 * tests/e2e/test_stall.py. usage: stall MODE MS [ARG]; every mode makes malloc/free pairs of
 * LOOP_SIZE bytes for MS milliseconds (0: none, the run that counts what the C library does on
 * its own), then prints one line "stall MODE: N calls ..." and exits 0.
 *   loop        one thread; writes "looping\n" first, and times each call itself: the line
 *               ends "longest L ns" (the longest single malloc or free).
 *   signals     two threads, a third sends each SIGUSR1 every millisecond; the handler makes
 *               a malloc/free pair of SIG_SIZE when it did not interrupt the C library (it
 *               reads the interrupted pc): "N calls, H in handlers".
 *   jump [US [stubs]]  one thread and a timer every US microseconds (default 100: 10 kHz)
 *               whose handler, when it did not interrupt the C library (stubs: when it
 *               interrupted heaptrace's code, x86_64 only, as park tells it, and 150 ms after
 *               the last jump at the soonest), leaves with siglongjmp to the loop (a timeout
 *               pattern): "N calls, J jumps" (the pairs completed: those a jump left are not
 *               in N).
 *   park        (x86_64) three threads make pairs: the parker from 40 calls deep, the other
 *               two only while it is parked (so that the ring fills behind a record it holds)
 *               and at the end. The main thread sends the parker SIGUSR1 every millisecond
 *               until the handler finds it interrupted in heaptrace's code (an anonymous
 *               executable mapping, read from /proc/self/maps before each signal) but not
 *               right after a system call (a stub waiting for room holds no record), and parks
 *               it there (a blocking read). It writes "parked\n" and reads a line on stdin:
 *               "again" lets the parker go and parks it anew, "go" lets it go; then pairs for
 *               MS ms: "N calls, P parks". Nothing allocates while the parker is parked but
 *               the two pair threads.
 *   seccomp F   the pairs for 100 ms, then installs filter F (kill: futex kills the process;
 *               whitelist, x86_64 only: only the calls this program makes are allowed, any
 *               other kills),
 *               writes "filtered\n", waits 300 ms without a call (heaptrace looks at the
 *               filters every 50 ms), then the pairs for MS ms.
 *   seccomp-now F [prctl]  one pair (the C library's malloc set up), then filter F, with
 *               prctl(PR_SET_SECCOMP) or else the seccomp system call through syscall(), and
 *               the pairs for MS ms straight after, so that the ring fills while the filter
 *               is new.
 * Output with write(2) from a stack buffer: nothing allocates but the loops (and the setup,
 * which the MS=0 run makes too).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "expect.h"

#define LOOP_SIZE 100
#define SIG_SIZE 7777

static uintptr_t libc_lo, libc_hi; /* the C library's code */
static volatile uint64_t made, in_handlers, jumps;
static volatile int done;
static sigjmp_buf back;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(98);
}

static char maps_buf[1 << 16];

/* fn(lo, hi, path) for each executable mapping in /proc/self/maps (path "": anonymous). No
 * allocation: a thread parked in a stub may hold a record the ring fills behind, and then a
 * malloc waits for room. */
static void each_code_mapping(void (*fn)(uintptr_t lo, uintptr_t hi, const char *path))
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n = 1;

	while (fd >= 0 && n > 0 && len < sizeof(maps_buf) - 1)
		if ((n = read(fd, maps_buf + len, sizeof(maps_buf) - 1 - len)) > 0)
			len += (size_t)n;
	if (fd >= 0)
		close(fd);
	maps_buf[len] = '\0';
	for (char *line = maps_buf, *next; *line; line = next) {
		unsigned long lo, hi;
		char perms[8];
		int end = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s%n", &lo, &hi, perms, &end) == 3 &&
		    perms[2] == 'x')
			fn(lo, hi, line + end + strspn(line + end, " "));
	}
}

static void libc_code(uintptr_t lo, uintptr_t hi, const char *path)
{
	if (strstr(path, "/libc.so"))
		libc_lo = lo, libc_hi = hi;
}

/* The executable mapping of libc.so. */
static void find_libc(void)
{
	each_code_mapping(libc_code);
	if (!libc_hi)
		_exit(97);
}

/* The interrupted pc (0: not known, on mips64). */
static uintptr_t uc_pc(void *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)((ucontext_t *)uc)->uc_mcontext.pc;
#elif defined(__arm__)
	return (uintptr_t)((ucontext_t *)uc)->uc_mcontext.arm_pc;
#else
	(void)uc;
	return 0;
#endif
}

/* True if the signal interrupted the C library (or nothing this file can tell). */
static bool in_libc(void *uc)
{
	uintptr_t pc = uc_pc(uc);

	return !pc || (pc >= libc_lo && pc < libc_hi);
}

#define MAX_ANON 8
/* heaptrace's code in this process (entry stubs and the rest), once it mapped it */
static volatile uintptr_t anon_lo[MAX_ANON], anon_hi[MAX_ANON];
static volatile unsigned nanon;
static unsigned anon_found;

static void anon_code(uintptr_t lo, uintptr_t hi, const char *path)
{
	if (*path || anon_found == MAX_ANON)
		return;
	anon_lo[anon_found] = lo;
	anon_hi[anon_found] = hi;
	anon_found++;
}

/* The anonymous executable mappings of this process: heaptrace's code, entry stubs among it. */
static void find_anon_code(void)
{
	anon_found = 0;
	each_code_mapping(anon_code);
	nanon = anon_found;
}

/* pc, in code that starts at lo, is just after a system call instruction */
static bool after_syscall(uintptr_t pc, uintptr_t lo)
{
#if defined(__x86_64__)
	return pc - 2 >= lo && ((const uint8_t *)pc)[-2] == 0x0f && ((const uint8_t *)pc)[-1] == 0x05;
#elif defined(__aarch64__)
	return pc - 4 >= lo && ((const uint32_t *)pc)[-1] == 0xd4000001; /* svc #0 */
#elif defined(__arm__)
	return pc - 2 >= lo && ((const uint16_t *)pc)[-1] == 0xdf00; /* Thumb's svc #0 */
#else
	(void)pc;
	(void)lo;
	return false;
#endif
}

/* The interrupted pc in heaptrace's code, but not right after a system call instruction:
 * there a stub waits for room, and holds no record. */
static bool in_anon_code(void *uc)
{
	uintptr_t pc = uc_pc(uc);
	unsigned i = 0;

	while (pc && i < nanon && (pc < anon_lo[i] || pc >= anon_hi[i]))
		i++;
	return pc && i < nanon && !after_syscall(pc, anon_lo[i]);
}

/* One malloc/free pair of LOOP_SIZE; its longest call into *longest. */
static __attribute__((noinline)) void pair(uint64_t *longest)
{
	uint64_t t0 = now_ns(), t1, t2;
	void *p = malloc(LOOP_SIZE);

	keep(p);
	t1 = now_ns();
	free(p);
	t2 = now_ns();
	__atomic_add_fetch(&made, 2, __ATOMIC_RELAXED);
	if (t1 - t0 > *longest)
		*longest = t1 - t0;
	if (t2 - t1 > *longest)
		*longest = t2 - t1;
}

static uint64_t pairs_for(unsigned ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u, longest = 0;

	while (now_ns() < end)
		pair(&longest);
	return longest;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	void *p;

	(void)sig;
	(void)si;
	if (in_libc(uc))
		return;
	p = malloc(SIG_SIZE);
	keep(p);
	free(p);
	__atomic_add_fetch(&in_handlers, 2, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	pairs_for((unsigned)(uintptr_t)arg);
	return NULL;
}

static void run_signals(unsigned ms)
{
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct timespec tick = { 0, 1000000 };
	pthread_t th[2];

	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)ms))
			_exit(96);
	for (uint64_t end = now_ns() + (uint64_t)ms * 1000000u; now_ns() < end;) {
		pthread_kill(th[0], SIGUSR1);
		pthread_kill(th[1], SIGUSR1);
		nanosleep(&tick, NULL);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
}

static bool jump_from_stubs; /* jump stubs: only from heaptrace's code */

/* jump stubs: at most one jump in JUMP_GAP_NS, so that the jumps are not too many per second
 * for heaptrace to look at each one (it turns the stubs off past 8 a second) */
#define JUMP_GAP_NS 150000000u

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	static uint64_t last;

	(void)sig;
	(void)si;
	if (done || (jump_from_stubs ? !in_anon_code(uc) || now_ns() - last < JUMP_GAP_NS
				     : in_libc(uc)))
		return;
	last = now_ns();
	siglongjmp(back, 1);
}

static void run_jump(unsigned ms, long us)
{
	struct sigaction sa = { .sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct itimerval every = { { us / 1000000, us % 1000000 }, { us / 1000000, us % 1000000 } };
	static uint64_t end, longest;

	end = now_ns() + (uint64_t)ms * 1000000u;
	sigaction(SIGALRM, &sa, NULL);
	if (ms)
		setitimer(ITIMER_REAL, &every, NULL);
	if (sigsetjmp(back, 1))
		jumps++;
	while (now_ns() < end) {
		static unsigned n;

		if (jump_from_stubs && n++ % 1024 == 0)
			find_anon_code(); /* heaptrace maps its code when it likes */
		pair(&longest);
	}
	done = 1;
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 0 }, { 0, 0 } }, NULL);
}

/* ---- park ---- */

static int want_park; /* set by main for one park: a signal still pending parks no more */
static volatile int parked, ended;
static int park_pipe[2];

/* A line of standard input into buf (at most size - 1 bytes), without stdio: "" at its end. */
static void read_line(char *buf, size_t size)
{
	size_t n = 0;
	char c;

	while (n < size - 1 && read(0, &c, 1) == 1) {
		buf[n++] = c;
		if (c == '\n')
			break;
	}
	buf[n] = '\0';
}

static void on_park(int sig, siginfo_t *si, void *uc)
{
	char c;

	(void)sig;
	(void)si;
	if (!in_anon_code(uc) || !__atomic_exchange_n(&want_park, 0, __ATOMIC_SEQ_CST))
		return;
	parked = 1;
	if (read(park_pipe[0], &c, 1) != 1)
		_exit(95);
}

/* Pairs from n calls deeper than its caller, until done. */
static __attribute__((noinline)) void deep_pairs(unsigned n)
{
	uint64_t longest = 0;

	if (n) {
		deep_pairs(n - 1);
		__asm__ volatile("" ::: "memory"); /* not a tail call */
		return;
	}
	while (!done)
		pair(&longest);
}

static void *parker(void *arg)
{
	(void)arg;
	deep_pairs(40);
	return NULL;
}

/* Pairs while the parker is parked (or the run ends), so that the ring fills behind the
 * record it may hold; otherwise idle, so that the parker runs freely. */
static void *busy_worker(void *arg)
{
	struct timespec nap = { 0, 50000 };
	uint64_t longest = 0;

	(void)arg;
	while (!done)
		if (parked || ended)
			pair(&longest);
		else
			nanosleep(&nap, NULL);
	return NULL;
}

/* Park the parker in a stub until stdin says "go"; return the parks. */
static unsigned run_park(unsigned ms)
{
	struct sigaction sa = { .sa_sigaction = on_park, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct timespec tick = { 0, 1000000 };
	pthread_t th[3];
	unsigned parks = 0;
	char cmd[16];

	if (pipe(park_pipe))
		_exit(96);
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, i ? busy_worker : parker, NULL))
			_exit(96);
	do {
		parked = 0;
		__atomic_store_n(&want_park, 1, __ATOMIC_SEQ_CST);
		while (!parked) {
			find_anon_code();
			if (nanon)
				pthread_kill(th[0], SIGUSR1);
			nanosleep(&tick, NULL);
		}
		parks++;
		say("parked\n");
		read_line(cmd, sizeof(cmd));
		if (write(park_pipe[1], "x", 1) != 1)
			_exit(95);
	} while (!strcmp(cmd, "again\n"));
	ended = 1;
	pairs_for(ms);
	done = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return parks;
}

#define LOAD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define ALLOW_NR(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* The filters' architecture (struct seccomp_data's arch), where this program knows it. */
#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#elif defined(__arm__)
#define FILTER_ARCH AUDIT_ARCH_ARM
#elif defined(__mips__) && defined(__MIPSEL__) && _MIPS_SIM == _ABI64
#define FILTER_ARCH AUDIT_ARCH_MIPSEL64
#endif

static int install(const char *which, bool via_prctl)
{
#ifdef FILTER_ARCH
	struct sock_filter kill_futex[] = {
		LOAD(offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		LOAD(offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
#if defined(__x86_64__)
	/* what this program and its C library call from here on; anything else kills */
	struct sock_filter whitelist[] = {
		LOAD(offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		LOAD(offsetof(struct seccomp_data, nr)),
		ALLOW_NR(SYS_write), ALLOW_NR(SYS_brk), ALLOW_NR(SYS_mmap), ALLOW_NR(SYS_munmap),
		ALLOW_NR(SYS_madvise), ALLOW_NR(SYS_mprotect), ALLOW_NR(SYS_clock_gettime),
		ALLOW_NR(SYS_exit_group), ALLOW_NR(SYS_exit), ALLOW_NR(SYS_rt_sigreturn),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
#endif
	struct sock_fprog prog;

	if (!strcmp(which, "kill"))
		prog = (struct sock_fprog){ sizeof(kill_futex) / sizeof(kill_futex[0]), kill_futex };
	else
#if defined(__x86_64__)
		prog = (struct sock_fprog){ sizeof(whitelist) / sizeof(whitelist[0]), whitelist };
#else
		return -1; /* the whitelist names x86_64's calls */
#endif
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    (via_prctl ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
		       : syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)))
		return -1;
	return 0;
#else
	(void)which;
	(void)via_prctl;
	return -1;
#endif
}

int main(int argc, char **argv)
{
	unsigned ms = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
	const char *mode = argc > 1 ? argv[1] : "";
	char line[160];
	uint64_t longest = 0;

	find_libc();
	if (!strcmp(mode, "loop")) {
		say("looping\n");
		longest = pairs_for(ms);
		snprintf(line, sizeof(line), "stall loop: %llu calls, longest %llu ns\n",
			 (unsigned long long)made, (unsigned long long)longest);
	} else if (!strcmp(mode, "signals")) {
		run_signals(ms);
		snprintf(line, sizeof(line), "stall signals: %llu calls, %llu in handlers\n",
			 (unsigned long long)made, (unsigned long long)in_handlers);
	} else if (!strcmp(mode, "jump")) {
		jump_from_stubs = argc > 4 && !strcmp(argv[4], "stubs");
		run_jump(ms, argc > 3 && atol(argv[3]) > 0 ? atol(argv[3]) : 100);
		snprintf(line, sizeof(line), "stall jump: %llu calls, %llu jumps\n",
			 (unsigned long long)made, (unsigned long long)jumps);
	} else if (!strcmp(mode, "park")) {
		unsigned parks;
#if !defined(__x86_64__)
		return 77; /* the handler reads the interrupted pc on x86_64 only */
#endif
		parks = run_park(ms);
		snprintf(line, sizeof(line), "stall park: %llu calls, %u parks\n",
			 (unsigned long long)made, parks);
	} else if (!strcmp(mode, "seccomp") && argc > 3) {
		pairs_for(100);
		if (install(argv[3], false))
			return 77;
		say("filtered\n");
		for (uint64_t end = now_ns() + 300000000u; now_ns() < end;)
			;
		pairs_for(ms);
		snprintf(line, sizeof(line), "stall seccomp: %llu calls\n", (unsigned long long)made);
	} else if (!strcmp(mode, "seccomp-now") && argc > 3) {
		free(malloc(LOOP_SIZE)); /* the C library's malloc set up (getrandom), as in MS=0 */
		if (install(argv[3], argc > 4 && !strcmp(argv[4], "prctl")))
			return 77;
		pairs_for(ms);
		snprintf(line, sizeof(line), "stall seccomp-now: %llu calls\n",
			 (unsigned long long)made);
	} else {
		say("usage: stall loop|signals|park MS, stall jump MS [US [stubs]], stall seccomp MS "
		    "kill|whitelist, or stall seccomp-now MS kill|whitelist [prctl]\n");
		return 2;
	}
	say(line);
	return 0;
}
