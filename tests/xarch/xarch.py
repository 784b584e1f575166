#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The cross-architecture lab (standard library only): make check-cross.

    python3 tests/xarch/xarch.py [--arches "aarch64 arm mips64"] [--opts "O0 O2"] [--timeout 600]
                                 [--only REGEX] [-v] [--bench]

For each architecture, everything under build/xarch/<arch>/ (no host package is changed):

  fetch     apt-get download the guest's Debian packages (kernel, busybox-static, the C library,
            libunwind, elfutils and their compression libraries, libstdc++) into debs/ once, and
            dpkg-deb -x them: the kernel into kernel/, busybox into busybox/, the rest into
            sysroot/ (absolute symlinks rewritten as relative ones).
  build     heaptrace, static, out of tree (obj/ and ./heaptrace in that folder) with the
            Makefile's ARCH, CROSS_COMPILE, SYSROOT, STATIC=1, BUILD and OUT; the end-to-end
            targets (tests/targets, the same Makefile as the native tests) into targets/.
  initramfs rootfs/: busybox, /init (generated), /xt/heaptrace, /xt/t/<target>, and the targets'
            ELF interpreter and DT_NEEDED closure copied from the sysroot to the same paths.
  boot      qemu-system with -smp 1, the console on stdio written to console.log. /init runs
            each case, prints its exit status and sends every file back between marker lines
            (base64), then powers off.
  check     the files are decoded into results/<run>/ and checked by the native tests' own
            functions (tests/e2e/test_*.py, helpers.py), whose heaptrace() and target() are
            replaced by a look-up of the guest's runs: the same expectations as make check.

--bench (make bench-cross) runs no cases: it boots each guest with the runs of bench_plan and
prints the cost of a traced call per entry mode and stack (see BENCH_STACKS).

Prints "PASS arch case", "FAIL arch case: reason" or "SKIP arch case: reason" for each case, the
time each guest ran, and last "N passed, M failed" (", K skipped"). Exit status 0 if and only if
nothing failed. Details of each failure go to build/xarch/<arch>/logs/<case>.log (and with -v to
stdout).
"""

import argparse
import base64
import concurrent.futures
import glob
import gzip
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
E2E = os.path.join(ROOT, "tests", "e2e")
XBUILD = os.path.join(ROOT, "build", "xarch")

# Per architecture: Debian name, GNU triplet, kernel flavour (and suffix of the package that
# holds the plain image), the qemu command line and the console device.
ARCHES = {
    "aarch64": {
        "deb": "arm64", "triplet": "aarch64-linux-gnu", "flavour": "arm64",
        "kernel_suffix": "-unsigned", "console": "ttyAMA0",
        "qemu": ["qemu-system-aarch64", "-M", "virt", "-cpu", "cortex-a57", "-m", "512",
                 "-smp", "1", "-nographic", "-no-reboot", "-nic", "none"],
    },
    "arm": {
        "deb": "armhf", "triplet": "arm-linux-gnueabihf", "flavour": "armmp",
        "kernel_suffix": "", "console": "ttyAMA0",
        "qemu": ["qemu-system-arm", "-M", "virt,highmem=off", "-cpu", "cortex-a15", "-m", "512",
                 "-smp", "1", "-nographic", "-no-reboot", "-nic", "none"],
    },
    "mips64": {
        "deb": "mips64el", "triplet": "mips64el-linux-gnuabi64", "flavour": "5kc-malta",
        "kernel_suffix": "", "console": "ttyS0",
        "qemu": ["qemu-system-mips64el", "-M", "malta", "-cpu", "MIPS64R2-generic", "-m", "256",
                 "-smp", "1", "-nographic", "-no-reboot", "-nic", "none", "-vga", "none"],
    },
}

# Libraries unpacked into the sysroot: what heaptrace links (static: the .a files of the -dev
# packages) and what the dynamic targets need at run time in the guest.
LIB_PKGS = ["libc6", "libc6-dev", "linux-libc-dev", "libgcc-s1", "libstdc++6", "libunwind8",
            "libunwind-dev", "libdw1", "libdw-dev", "libelf1", "libelf-dev", "zlib1g",
            "zlib1g-dev", "liblzma5", "liblzma-dev", "libbz2-1.0", "libbz2-dev", "libzstd1",
            "libzstd-dev"]

# The cross builds must be free of warnings: a 32-bit or big-pointer mistake (a signed length
# compared with an unsigned one on arm, an address cast to a 32-bit pointer) shows only there.
CROSS_CFLAGS = "-O2 -g -Werror"

GUEST_DIR = "/xt"  # heaptrace and the targets inside the guest
GUEST_HT = GUEST_DIR + "/heaptrace"
GUEST_T = GUEST_DIR + "/t"
GUEST_LIMIT = 600  # seconds per guest (qemu) for each entry mode its cases run in
RUN_LIMIT = 150  # seconds for one command in the guest (busybox timeout), to catch hangs
# The guests emulate their CPU: heaptrace's reader (arm's unwinder above all) falls behind the
# program by more than the default --max-stall (20 ms), and calls would go on unseen. Every run
# that gives no bound of its own waits as long as it must, so that its counts stay exact; the
# bound has its case (stubs_stall_bound).
GUEST_STALL = "--max-stall=60000"
MARK = "@@XLAB"

# The 64-bit architectures, whose glibc malloc layout the inventory reads (not arm's 32-bit one).
INVENTORY_ARCHES = ("aarch64", "mips64")

# Threads: small counts (TCG is slow); the same arithmetic as test_threads.threads_run.
THREADS = (4, 500, 10)
# SIGKILL of heaptrace: rounds, threads of steady (as test_survive: 5 rounds, 4 threads).
SURVIVE_ROUNDS = (5, 4)
# stall jump's timer (us): at most one jump in 150 ms (tests/e2e/test_stall.py: JUMP_EVERY_US)
JUMP_US = 1000
# sigover's malloc/free pairs (a SIGPROF every 100 us of CPU time: hundreds of signals)
SIGOVER_PAIRS = 20000
# Enough calls to fill the 4 MiB ring of entry stubs while heaptrace's reader is slowed.
FULL_RING = (4, 5000, 10)
# freetimes' run (test_stubs.free_times_run): the log, and the calls as they are read
FREE_TIMES = ["--record=log", "--trace-calls"]
# mips64's guest is the slowest (heaptrace takes milliseconds per record there, emulated): fewer
# allocations, still about three times the 4 MiB ring's worth of records.
FULL_RING_ARCH = {"mips64": (4, 1500, 10)}

# ABI facts in the native tests' constants that differ on an architecture: {arch: {module:
# {name: value}}}. libstdc++ 12's emergency exception pool (eh_alloc.cc) is 64 objects of 1024
# bytes plus 64 dependent exceptions with a 64-bit long (72704 bytes on x86_64, aarch64, mips64),
# but 32 objects of 512 bytes plus 32 dependent exceptions with a 32-bit long (20224 bytes on arm).
ABI = {
    "arm": {"test_cxx": {"POOL_MIN": 16 * 1024, "POOL_MAX": 24 * 1024}},
}


# ---------------------------------------------------------------------------------------------
# The plan: the guest's runs, and the native tests' functions that check them.


def suffix(opt):
    """A target build's file name suffix, as helpers.target() has it."""
    return {"O0": ""}.get(opt, "-" + opt)


# Builds without unwind tables (tests/targets/Makefile's PLAIN_VARIANTS and plainscan): CFI
# from .debug_frame, frame records (plainfp) or the stack scan (plainscan).
def plain_variants(arch):
    return ["plain", "plainstatic", "plainos", "plaindeb", "plainfp", "plainscan"] + (
        ["plainmixed"] if arch == "arm" else [])


class GuestRun:
    """One command in the guest. kind "ht": heaptrace OPTS --format=json --outfile=R -- PROG
    ARGS, as helpers.heaptrace() runs it; "attach": the target started, heaptrace -p PID OPTS
    after its "ready" line, as test_attach.attach_run() does; "plain": the target alone, no
    heaptrace (proves the guest, the console and the records without a backend)."""

    def __init__(self, kind, name, opt="O0", args=(), opts=(), mode=None, entry=None, env=()):
        self.kind, self.name, self.opt = kind, name, opt
        self.args = [str(a) for a in args]
        self.opts = list(opts)
        self.mode = mode
        self.entry = entry  # heaptrace's --mode, or None for its default
        self.env = tuple(sorted(env))  # ((name, value), ...) for heaptrace
        words = ([kind, name, opt, mode or "", entry or ""] + ["%s=%s" % e for e in self.env] +
                 self.args + self.opts)
        self.id = re.sub(r"[^\w.-]+", "_", "-".join(w for w in words if w)).strip("_")

    def with_entry(self, entry):
        return GuestRun(self.kind, self.name, self.opt, self.args, self.opts, self.mode, entry,
                        self.env)

    @property
    def ht_opts(self):
        """heaptrace's options: --mode first where one is chosen, GUEST_STALL unless the run
        gives a bound."""
        stall = [] if any(o.startswith("--max-stall") for o in self.opts) else [GUEST_STALL]
        return (["--mode=" + self.entry] if self.entry else []) + self.opts + stall

    @property
    def prog(self):
        return "%s/%s%s" % (GUEST_T, self.name, suffix(self.opt))

    def key(self):
        return (self.kind, self.prog, tuple(self.args), tuple(self.opts), self.mode, self.entry,
                self.env)


# test_unwind_cross: a chain that goes on below main into the C library (its LEVELS, CALLS
# and --depth)
CROSS_ARGS, CROSS_OPTS = (5, 20), ["--depth=16"]


def plan(opts, arch):
    """[(case name, GuestRun list or None, check(ctx))] for one architecture."""
    cases = [("static", [], lambda c: c.arch.check_static())]
    for v in plain_variants(arch):
        cases.append(("unwind[%s]" % v, [GuestRun("ht", "leaks", v)],
                      lambda c, v=v: c.mod("test_unwind").check_hows(
                          c.mod("test_unwind").plain_run(v, c.mod("test_basic")),
                          c.mod("test_unwind").want_how(v, c.arch.name))))
    cases += [
        ("unwind[plainraw]", [GuestRun("ht", "leaks", "plainraw")],
         lambda c: c.mod("test_unwind").check_hows(c.mod("test_unwind").raw_run(), "cfi")),
        ("symbols[plainstripped]", [GuestRun("ht", "leaks", "plainstripped",
                                             opts=["--symbols=%s/leaks-plain" % GUEST_T])],
         lambda c: c.mod("test_unwind").check_hows(
             c.mod("test_stripped").stripped_run(c.mod("test_basic"), False), "cfi")),
        ("symbols[static_stripped]", [GuestRun("ht", "static_stripped",
                                               opts=["--symbols=%s/static_leaks" % GUEST_T])],
         lambda c: c.mod("test_stripped").stripped_run(c.mod("test_basic"), True)),
    ]
    for opt in opts:
        cases += [
            ("leaks[%s]" % opt, [GuestRun("ht", "leaks", opt)],
             lambda c, o=opt: c.mod("test_basic").test_leaks(o)),
            ("family[%s]" % opt, [GuestRun("ht", "family", opt)],
             lambda c, o=opt: c.mod("test_family").test_family(o)),
            ("family_summary[%s]" % opt, [GuestRun("ht", "family", opt)],
             lambda c, o=opt: c.mod("test_family").test_family_summary(o)),
            ("cxx[%s]" % opt, [GuestRun("ht", "cxx", opt, opts=["--depth=24"])],
             lambda c, o=opt: c.mod("test_cxx").test_cxx(o)),
            ("cxx_summary[%s]" % opt, [GuestRun("ht", "cxx", opt, opts=["--depth=24"])],
             lambda c, o=opt: c.mod("test_cxx").test_cxx_summary(o)),
            ("unwind_cross[%s]" % opt, [GuestRun("ht", "deep", opt, args=CROSS_ARGS,
                                                 opts=CROSS_OPTS)],
             lambda c, o=opt: c.mod("test_unwind_cross").cross_run(o)),
            ("attach_sigint[%s]" % opt, [GuestRun("attach", "attach", opt, mode="int",
                                                  opts=["--no-inventory"])],
             lambda c, o=opt: c.mod("test_attach").test_attach_sigint(o)),
        ]
    n, iters, keep = THREADS
    cases += [
        ("family_total_backtraces", [GuestRun("ht", "family")],
         lambda c: c.mod("test_family").test_family_total_backtraces()),
        ("threads[O0]", [GuestRun("ht", "threads", args=[n, 1, 0]),
                         GuestRun("ht", "threads", args=[n, iters, keep])],
         lambda c: c.mod("test_threads").threads_run("O0", n, iters, keep, timeout=RUN_LIMIT)),
        ("attach_duration", [GuestRun("attach", "attach", mode="wait", opts=["--duration=1"])],
         lambda c: c.mod("test_attach").test_attach_duration()),
        ("returns_logged", [GuestRun("ht", "family", opts=["-v"])],
         lambda c: c.mod("test_retlog").check_logged(
             c.mod("test_basic").full_check("family", "O0", opts=["-v"]),
             c.arch.name in c.mod("test_retlog").LOGGING_ARCHES)),
    ]
    # the board workflow: record in the guest, report on this host from the guest's files
    cases.append(("record_host[O2]", [GuestRun("ht", "leaks", "O2", opts=["--record=log"])],
                  lambda c: check_record_host(c, "O2")))
    if arch in INVENTORY_ARCHES:
        # glibc's heap at the attach, every thread's tcache found from its thread pointer
        cases.append(("inventory_exact[O0]", [GuestRun("attach", "heapinv", mode="plain")],
                      lambda c: c.mod("test_inventory").test_inventory_exact("O0")))
    cases += allocator_cases(opts)
    return cases


def has_stubs(arch):
    """The architecture's entry stubs are on (arch/<arch>/stub_arch.h: STUBS_SUPPORTED 1)."""
    with open(os.path.join(ROOT, "arch", arch, "stub_arch.h")) as f:
        return re.search(r"^#define STUBS_SUPPORTED 1\b", f.read(), re.M) is not None


def sigframes(arch):
    """heaptrace finds the kernel's signal frames in the arch's stacks (arch/<arch>/arch.c:
    sigframe_sp), and so tells a signal handler's calls from calls nested in a traced one."""
    with open(os.path.join(ROOT, "arch", arch, "arch.c")) as f:
        return re.search(r"^\s*\.sigframe_sp = ", f.read(), re.M) is not None


def restores(arch):
    """The arch has a restoring syscall stub (arch/<arch>/arch.c: stub_code)."""
    with open(os.path.join(ROOT, "arch", arch, "arch.c")) as f:
        return re.search(r"^\s*\.stub_code = ", f.read(), re.M) is not None


def probes(arch):
    """The arch's stub code marks its critical sections (stub_arch.h: STUB_CRITICAL, or
    arch/stub_critical.h's): a reader stuck at a record never written looks at the threads,
    and skips it."""
    with open(os.path.join(ROOT, "arch", arch, "stub_arch.h")) as f:
        return re.search(r'^(#define STUB_CRITICAL\b|#include "arch/stub_critical.h")',
                         f.read(), re.M) is not None


def check_jump_probe(ctx, r):
    """Run r (stall jump: a handler that siglongjmps out of the stub code it interrupted, 150 ms
    apart at the soonest) ended with status 0, the records the jumps left were skipped after a
    look at the threads (-v), the stubs stayed on, and the calls seen and not seen are the
    pairs the loop completed plus at most one per jump, past its setup's (the run of no pairs):
    test_stall.test_jump_out_of_stub_now_and_then's checks."""
    h = ctx.h
    base = ctx.heaptrace(ctx.target("stall"), args=["jump", 0, JUMP_US, "stubs"])
    h.expect_rc(base, 0)
    run = ctx.heaptrace(r.prog, args=r.args, opts=r.opts)
    h.expect_rc(run, 0)
    m = re.search(r"^stall jump: (\d+) calls, (\d+) jumps$", run.proc.stdout, re.M)
    if not m:
        run.fail("stall printed %r" % run.proc.stdout)
    calls, jumps = int(m.group(1)), int(m.group(2))
    if not jumps:
        run.fail("no jump out of the stub code: nothing was tested")
    s = run.report["summary"]
    if s.get("stubs_turned_off") or "not traced from now on" in run.proc.stderr:
        run.fail("the stubs were turned off for %d jumps" % jumps)
    if not re.search(r"^heaptrace: \d+ records skipped that no thread would write$",
                     run.proc.stderr, re.M):
        run.fail("%d jumps out of the stub code, and no record skipped" % jumps)
    keys = ("alloc_calls", "free_calls", "unknown_frees", "library_frees", "calls_not_seen")
    mine = sum(s.get(k, 0) for k in keys) - sum(base.report["summary"].get(k, 0) for k in keys)
    if not calls <= mine <= calls + jumps:
        run.fail("%d calls seen or not seen past the setup's; the loop completed %d in pairs, "
                 "with %d jumps" % (mine, calls, jumps))


def entry_modes(arch):
    """[(heaptrace's entry mode as helpers.MODE names it, --mode to pass, case name suffix)]:
    where the arch has entry stubs, every case runs in the default mode (stubs) and again with
    --mode=breakpoint; elsewhere heaptrace's default is the breakpoint mode."""
    if has_stubs(arch):
        return [("stubs", None, ""), ("breakpoint", "breakpoint", "/breakpoint")]
    return [("breakpoint", None, "")]


def stalls(arch):
    """The arch's stub code bounds a wait for room (arch/<arch>/stub_arch.h)."""
    with open(os.path.join(ROOT, "arch", arch, "stub_arch.h")) as f:
        return re.search(r"^#define STUB_STALL_SUPPORTED 1\b", f.read(), re.M) is not None


def stall_made(h, run):
    """The calls stall says it made, and its run's calls seen and not seen."""
    m = re.search(r"^stall \w+: (\d+) calls", run.proc.stdout, re.M)
    if not m:
        run.fail("stall printed %r" % run.proc.stdout)
    s = run.report["summary"]
    counted = sum(s.get(k, 0) for k in ("alloc_calls", "free_calls", "unknown_frees",
                                        "library_frees", "calls_not_seen"))
    return int(m.group(1)), counted


def stall_counted(ctx, r, base_args):
    """Run r of stall and stall base_args (its mode, 0: no pairs) ended with status 0 (SIGSYS:
    159), and r's calls seen and not seen are the calls stall made plus what the base run
    counts beyond its own: r's run."""
    h = ctx.h
    base = ctx.heaptrace(ctx.target("stall"), args=base_args)
    h.expect_rc(base, 0)
    run = ctx.heaptrace(r.prog, args=r.args, opts=r.opts, env=dict(r.env))
    h.expect_rc(run, 0)
    made0, counted0 = stall_made(h, base)
    made, counted = stall_made(h, run)
    if counted - made != counted0 - made0:
        run.fail("%d calls seen or not seen for the %d stall made; with no pairs (%s), %d for %d"
                 % (counted, made, " ".join(map(str, base_args)), counted0, made0))
    return run


def check_stall_bound(ctx, r):
    """Run r (stall loop, one thread, its reader slowed past the bound) ended by itself, some
    of its calls were not seen, and its calls seen and not seen are the pairs stall made plus
    what its setup makes (the run of no pairs). One thread: no thread's exit frees its cache,
    which the C library does in a number of calls that varies with what the cache holds."""
    run = stall_counted(ctx, r, ["loop", 0])
    if not run.report["summary"].get("calls_not_seen"):
        run.fail("the reader a second late, and no call went on unseen: %s"
                 % run.report["summary"])


def check_seccomp_late(ctx, r):
    """Run r (stall seccomp: a filter that kills on futex, installed after the set-up, then
    pairs with the reader slowed) ended with its own output, heaptrace said its stubs wait
    without system calls, and every call is counted, seen or not, past what the C library
    makes (the run of no pairs after the filter)."""
    run = stall_counted(ctx, r, ["seccomp", 0, "kill"])
    if "installed a seccomp filter" not in run.proc.stderr:
        run.fail("heaptrace did not say that the stubs wait without system calls")


def stub_cases(opts, arch):
    """What only entry stubs change (tests/e2e/test_stubs.py): no stop per call, and a full ring
    (a reader slowed on purpose) still gives exact counts without a stop."""
    n, iters, keep = THREADS
    full = FULL_RING_ARCH.get(arch, FULL_RING)
    # arm's unwinder costs milliseconds per backtrace in the guest, in either entry mode (xarch
    # --bench: stubs 22 us per call with --depth=1; 4 threads x 500 allocations took 149 s
    # with stubs, 158 s with breakpoints): there the SIGKILL rounds and the full ring, which
    # test survival and exact counts rather than backtraces, trace without unwinding (the full
    # ring's counts are checked, not its sites)
    quick = ["--depth=1"] if arch == "arm" else []
    cases = []
    for opt in opts:
        cases.append(("stubs_no_stop[%s]" % opt, [GuestRun("ht", "leaks", opt, opts=["-v"])],
                      lambda c, o=opt: c.mod("test_stubs").check_no_stop(
                          c.mod("test_basic").full_check("leaks", o, opts=["-v"]))))
    survive = GuestRun("survive", "steady", args=SURVIVE_ROUNDS, opts=quick)
    cases.append(("survive_sigkill", [survive], lambda c, r=survive: check_survive(c, r)))
    # every traced call a breakpoint: the guard (src/patch/guard.h) must take the traps that
    # come after heaptrace's death; 3 rounds, as every call stops (slow in the guest)
    held = GuestRun("survive", "steady", args=(3, SURVIVE_ROUNDS[1]),
                    opts=["--mode=breakpoint", "-v"] + quick)
    cases.append(("survive_sigkill_breakpoints", [held],
                  lambda c, r=held: check_survive(c, r)))
    # heaptrace kills itself in each system call it makes the program run (test_survive.py's
    # INJECTIONS), where the arch has a restoring stub (arch.c: stub_code): the thread goes on
    # where it was, and the program with it
    if restores(arch):
        for call, nth in (("mmap", 1), ("mprotect", 2), ("sigaction", 3)):
            die = GuestRun("survive", "steady", args=(2, SURVIVE_ROUNDS[1]), opts=quick,
                           env=(("HEAPTRACE_TEST_DIE_INJECTING", str(nth)),))
            cases.append(("survive_injecting[%s]" % call, [die],
                          lambda c, r=die: check_survive(c, r)))
    # allocations on coroutine stacks and a sigaltstack, a guard page above each: the stubs'
    # stack copy stops at the stack's end (test_harm.py)
    cases.append(("costacks", [GuestRun("ht", "costacks", args=["launch"])],
                  lambda c: c.mod("test_harm").test_costacks_launched()))
    # a SIGPROF handler that frees and mallocs while its thread is inside a traced call, on
    # the thread's stack and on a sigaltstack: its calls are its own (test_sigframes.py)
    if sigframes(arch):
        for where in ("stack", "altstack"):
            over = GuestRun("ht", "sigover", args=[SIGOVER_PAIRS] + (
                [where] if where == "altstack" else []))
            cases.append(("handler_over_calls[%s]" % where, [over],
                          lambda c, w=where: c.mod("test_sigframes").handler_over_calls(
                              w, SIGOVER_PAIRS)))
    # siglongjmp out of a handler that interrupted the stub code, now and then: the records
    # left unwritten are skipped after a look at the threads (test_stall.py). The look comes
    # once the ring is full behind such a record: arm's guest, its reader keeping up (3,125 KiB
    # waiting at most, 5,943 records in 3 s), filled it in 2 of 3 runs, so it is left out there
    if probes(arch) and arch != "arm":
        jump = GuestRun("ht", "stall", args=["jump", 3000, JUMP_US, "stubs"],
                        opts=["-v"] + quick)
        cases.append(("stubs_jump_probe", [
            GuestRun("ht", "stall", args=["jump", 0, JUMP_US, "stubs"]), jump],
            lambda c, r=jump: check_jump_probe(c, r)))
    # a second thread's stack copied past a 4 KiB frame: its top found in the stubs' table of
    # threads (test_copysize.py)
    deep = load_module(os.path.join(E2E, "test_copysize.py")).THREAD_RUN
    cases.append(("copy_in_thread", [
        GuestRun("ht", "deepen", args=[0, 0, "thread"]),
        GuestRun("ht", "deepen", args=deep, opts=["-v", "--stack-copy=8192"])],
        lambda c: c.mod("test_copysize").test_fixed_copy_in_thread()))
    # a full ring, every call waited for (the bound far off: GUEST_STALL, as in test_stubs.py)
    slow = (("HEAPTRACE_TEST_SLOW_READER", "20"),)
    waited = ["-v"] + quick
    cases.append(("stubs_full_ring", [GuestRun("ht", "threads", args=[n, 1, 0], env=slow),
                                      GuestRun("ht", "threads", args=full, opts=waited,
                                               env=slow)],
                  lambda c: c.mod("test_stubs").check_full_ring(
                      c.mod("test_threads").threads_run("O0", *full, timeout=RUN_LIMIT,
                                                        opts=waited, env=dict(slow),
                                                        sites=not quick))))
    # the reader a second late at every look, the bound at its default (20 ms): where the stub code
    # bounds its wait (stub_arch.h: STUB_STALL_SUPPORTED), calls go on unrecorded, counted
    if stalls(arch):
        late = (("HEAPTRACE_TEST_SLOW_READER", "1000"),)
        bounded = GuestRun("ht", "stall", args=["loop", 1500], opts=["-v", "--max-stall=20"],
                           env=late)
        cases.append(("stubs_stall_bound", [GuestRun("ht", "stall", args=["loop", 0]), bounded],
                      lambda c, r=bounded: check_stall_bound(c, r)))
        # a filter that kills on futex, installed after the set-up: heaptrace's look at the
        # threads' filters (every 50 ms) has the stubs wait without system calls when the
        # ring, its reader slowed, fills (test_stall.py's, without its stop of heaptrace)
        late = GuestRun("ht", "stall", args=["seccomp", 1500, "kill"],
                        opts=["-v", "--max-stall=20"],
                        env=(("HEAPTRACE_TEST_SLOW_READER", "100"),))
        cases.append(("stubs_seccomp_late", [GuestRun("ht", "stall", args=["seccomp", 0, "kill"]),
                                             late],
                      lambda c, r=late: check_seccomp_late(c, r)))
    # --sample-bytes, decided in the stub code but on arm (test_sampling.py), on a tenth of the
    # target's calls
    samp = GuestRun("ht", "sampling", args=[10], opts=["-v", "--sample-bytes=4096"])
    cases.append(("sampling", [samp],
                  lambda c: c.mod("test_sampling").check_estimates(
                      c.mod("test_sampling").sampled(percent=10), c.arch.name != "arm")))
    # records read 1 s late on purpose: the frees keep the times the stubs stamped
    late = (("HEAPTRACE_TEST_SLOW_READER", "1000"),)
    cases.append(("stubs_free_times", [GuestRun("ht", "freetimes", opts=FREE_TIMES, env=late)],
                  lambda c: c.mod("test_stubs").check_free_times(
                      c.mod("test_basic").full_check("freetimes", "O0", opts=FREE_TIMES,
                                                     env=dict(late)))))
    return cases


# --bench (make bench-cross): the cost of one traced call in one guest run, as ratios to the
# same calls untraced and to a bare breakpoint stop in the same guest. tests/targets/deep (a
# malloc and a free per iteration, LEVELS frames of descend below main) runs untraced, under
# heaptrace in each entry mode of the arch and under tests/bench/stopfloor (one ptrace stop per
# hit, nothing else); each at 1 and at N iterations, so that start-up cancels out, in
# BENCH_ROUNDS rounds that each run every row once (the host's load comes and goes: each figure
# is the median of its rounds). The guest has one CPU: the program and its tracer take turns
# on it.
# Stacks, (name, LEVELS, --depth): 10 frames either way; "program" stays in the program (frame
# 0, malloc's entry, is taken from the registers), "cross" goes on below main into the C
# library (__libc_start_call_main, __libc_start_main) and back to the program (_start), so
# the unwinder changes module twice in each backtrace; "depth 1" unwinds nothing.
BENCH_STACKS = [("depth 1", 16, 1), ("program", 16, 10), ("cross", 5, 10)]
# N per kind of run: breakpoints cost milliseconds per call under TCG.
BENCH_N = {"native": 2000000, "floor": 4000, "stubs": 20000, "breakpoint": 1500}
BENCH_ROUNDS = 3
BENCH_FLOOR = "stopfloor"  # tests/bench/stopfloor.c


def bench_plan(arch):
    """[(row, kind, [(GuestRun at 1, GuestRun at N) per round])]; kind: native, floor, or the
    entry mode. A round is told apart by HEAPTRACE_BENCH_ROUND in the environment."""
    rows = [("native", "native", "deep", [16], None, []),
            ("stop floor", "floor", BENCH_FLOOR, [], None, [])]
    for mode, entry, _ in entry_modes(arch):
        for stack, levels, depth in BENCH_STACKS:
            rows.append(("%s, %s" % (mode, stack), mode, "deep", [levels], entry or mode,
                         ["--depth=%d" % depth]))
    plan = []
    for row, kind, prog, args, entry, opts in rows:
        pairs = []
        for i in range(BENCH_ROUNDS):
            env = (("HEAPTRACE_BENCH_ROUND", str(i)),)
            pairs.append(tuple(GuestRun("plain" if entry is None else "ht", prog,
                                        args=args + [it], entry=entry, opts=opts, env=env)
                               for it in (1, BENCH_N[kind])))
        plan.append((row, kind, pairs))
    return plan


def bench_runs(arch):
    """The guest's runs, round by round."""
    plan = bench_plan(arch)
    return [r for i in range(BENCH_ROUNDS) for _, _, pairs in plan for r in pairs[i]]


def bench_chain(o):
    """(frames, modules in order) of the backtrace in the report of a heaptrace run, or None."""
    try:
        rep = json.loads(o.files["report"])
        frames = (rep["peak"]["backtraces"] or rep["backtraces"])[0]["frames"]
    except (KeyError, IndexError, ValueError):
        return None
    mods = []
    for f in frames:
        m = os.path.basename(f.get("module") or "?")
        if not mods or mods[-1] != m:
            mods.append(m)
    return len(frames), mods


def bench_report(arch, outcomes, load):
    """Print each row's us per call (wall time of the guest's runs, 10 ms resolution; the median
    of the rounds, and the lowest and highest) and its ratio to the native call and to one stop
    of the floor."""
    rows = []
    for row, kind, pairs in bench_plan(arch):
        per = 1 if kind == "floor" else 2  # deep: a malloc and a free per iteration
        calls = per * (BENCH_N[kind] - 1)
        us, chain = [], None
        for r1, rn in pairs:
            o1, on = outcomes.get(r1.id), outcomes.get(rn.id)
            if any(o is None or o.seconds is None or o.rc != 0 for o in (o1, on)):
                note("%s bench: %s, a round failed (status %s, %s)"
                     % (arch, row, o1 and o1.rc, on and on.rc))
                continue
            us.append((on.seconds - o1.seconds) * 1e6 / calls)
            chain = chain or bench_chain(on)
        if us:
            rows.append((row, kind, sorted(us), calls, chain))
    med = {k: u[len(u) // 2] for _, k, u, *_ in rows if k in ("native", "floor")}
    note("%s bench (qemu-system TCG, one CPU; host load %s; median of %d rounds):"
         % (arch, load, BENCH_ROUNDS))
    print("  %-22s %11s %17s %9s %7s  %s" % ("", "us per call", "(lowest-highest)", "x native",
                                             "x stop", "calls; the chain's modules"), flush=True)
    for row, kind, u, calls, chain in rows:
        m = u[len(u) // 2]
        xn = "%.0f" % (m / med["native"]) if med.get("native") and kind != "native" else ""
        xs = "%.2f" % (m / med["floor"]) if med.get("floor") and kind != "native" else ""
        what = "%d" % calls
        if chain:
            what += "; %d frames: %s" % (chain[0], " > ".join(chain[1]))
        print("  %-22s %11.2f %17s %9s %7s  %s" % (row, m, "(%.4g-%.4g)" % (u[0], u[-1]), xn, xs,
                                                   what), flush=True)


# The targets alone (no heaptrace): they must exit 0 and write their records.
PLAIN = [("plain-leaks", GuestRun("plain", "leaks")),
         ("plain-family", GuestRun("plain", "family")),
         ("plain-cxx", GuestRun("plain", "cxx")),
         ("plain-threads", GuestRun("plain", "threads", args=THREADS))]


# ---------------------------------------------------------------------------------------------
# Output


class Results:
    def __init__(self, verbose):
        self.passed = self.failed = self.skipped = 0
        self.verbose = verbose

    def _log(self, arch, case, text):
        d = os.path.join(XBUILD, arch, "logs")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, re.sub(r"[^\w.\[\]-]+", "_", case) + ".log")
        with open(path, "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")

    def ok(self, arch, case):
        self.passed += 1
        print("PASS %s %s" % (arch, case), flush=True)

    def fail(self, arch, case, reason, details=""):
        self.failed += 1
        reason = " ".join(str(reason).split()) or "failed"
        if len(reason) > 400:
            reason = reason[:400] + "..."
        print("FAIL %s %s: %s" % (arch, case, reason), flush=True)
        self._log(arch, case, "FAIL %s %s: %s\n\n%s" % (arch, case, reason, details))
        if self.verbose and details:
            for line in details.rstrip("\n").splitlines():
                print("    " + line)
            sys.stdout.flush()

    def skip(self, arch, case, reason):
        self.skipped += 1
        print("SKIP %s %s: %s" % (arch, case, " ".join(str(reason).split()) or "skipped"),
              flush=True)

    def final_line(self):
        line = "%d passed, %d failed" % (self.passed, self.failed)
        if self.skipped:
            line += ", %d skipped" % self.skipped
        return line


def note(msg):
    print("== " + msg, flush=True)


class StepError(Exception):
    """A step of the pipeline failed: reason (one line) and details (a log)."""

    def __init__(self, reason, details=""):
        super().__init__(reason)
        self.reason = reason
        self.details = details


def sh(argv, cwd=None, env=None, log=None, timeout=None):
    """Run a command, its output to LOG (if given). Returns (rc, output)."""
    p = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout)
    out = p.stdout.decode("utf-8", "replace")
    if log:
        with open(log, "a") as f:
            f.write("$ %s\n%s\n(exit status %d)\n" % (" ".join(map(shlex.quote, argv)), out,
                                                      p.returncode))
    return p.returncode, out


def clean_env():
    """The environment for sub-makes: without the variables of an outer make (ARCHES, OUT, ...
    given to make check-cross would otherwise override the sub-makes' own)."""
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKELEVEL", "MAKEFILES"):
        env.pop(k, None)
    return env


def first_errors(out, n=3):
    lines = [l.strip() for l in out.splitlines() if re.search(r"\berror\b|Error \d|undefined", l)]
    return " | ".join(lines[:n]) or (out.strip().splitlines() or ["(no output)"])[-1]


# ---------------------------------------------------------------------------------------------
# fetch


class Arch:
    def __init__(self, name):
        self.name = name
        self.cfg = ARCHES[name]
        self.deb = self.cfg["deb"]
        self.triplet = self.cfg["triplet"]
        self.dir = os.path.join(XBUILD, name)
        self.debs = os.path.join(self.dir, "debs")
        self.sysroot = os.path.join(self.dir, "sysroot")
        self.kernel_dir = os.path.join(self.dir, "kernel")
        self.busybox_dir = os.path.join(self.dir, "busybox")
        self.targets = os.path.join(self.dir, "targets")
        self.heaptrace = os.path.join(self.dir, "heaptrace")
        self.rootfs = os.path.join(self.dir, "rootfs")
        self.initrd = os.path.join(self.dir, "initramfs.cpio.gz")
        self.console = os.path.join(self.dir, "console.log")
        self.results = os.path.join(self.dir, "results")
        self.log = os.path.join(self.dir, "build.log")
        self.ht_error = None  # why heaptrace is not there: (kind "skip"|"fail", reason, details)

    def kernel_package(self):
        meta = "linux-image-%s:%s" % (self.cfg["flavour"], self.deb)
        rc, out = sh(["apt-cache", "depends", meta])
        m = re.search(r"Depends:\s*(linux-image-[\w.+-]+?)(:\w+)?\s*$", out, re.M)
        if rc != 0 or not m:
            raise StepError("apt-cache depends %s found no kernel (dpkg --add-architecture %s "
                            "and apt-get update?)" % (meta, self.deb), out)
        return m.group(1) + self.cfg["kernel_suffix"]

    def fetch(self):
        stamp = os.path.join(self.dir, "fetched")
        want = sorted(LIB_PKGS + ["busybox-static", "kernel"])
        if os.path.exists(stamp):
            with open(stamp) as f:
                if f.read().split() == want:
                    return False
        for d in (self.debs, self.sysroot, self.kernel_dir, self.busybox_dir):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        kernel = self.kernel_package()
        pkgs = ["%s:%s" % (p, self.deb) for p in LIB_PKGS + ["busybox-static", kernel]]
        rc, out = sh(["apt-get", "download"] + pkgs, cwd=self.debs, log=self.log, timeout=1800)
        if rc != 0:
            raise StepError("apt-get download failed: " + first_errors(out), out)
        for deb in sorted(glob.glob(os.path.join(self.debs, "*.deb"))):
            base = os.path.basename(deb)
            if base.startswith("linux-image-"):
                dest = self.kernel_dir
            elif base.startswith("busybox-static_"):
                dest = self.busybox_dir
            else:
                dest = self.sysroot
            rc, out = sh(["dpkg-deb", "-x", deb, dest], log=self.log)
            if rc != 0:
                raise StepError("dpkg-deb -x %s failed" % base, out)
        relative_links(self.sysroot)
        with open(stamp, "w") as f:
            f.write("\n".join(want) + "\n")
        return True

    def check_static(self):
        """The heaptrace the guest ran is one self-contained file (STATIC=1)."""
        interp, needed = self.elf_deps(self.heaptrace)
        if interp or needed:
            raise StepError("%s is not static: interpreter %s, needs %s"
                            % (os.path.relpath(self.heaptrace, ROOT), interp, needed))
        rc, out = sh(["readelf", "-lW", self.heaptrace])
        # its own backtraces (and a static tracee's) need an unwind table libunwind can find:
        # PT_GNU_EH_FRAME (-Wl,--eh-frame-hdr), or PT_ARM_EXIDX on arm
        if not re.search(r"^\s*GNU_EH_FRAME\b" + (r"|^\s*EXIDX\b" if self.name == "arm" else ""),
                         out, re.M):
            raise StepError("%s has no PT_GNU_EH_FRAME (link with -Wl,--eh-frame-hdr)"
                            % os.path.relpath(self.heaptrace, ROOT), out)

    def kernel_image(self):
        k = sorted(glob.glob(os.path.join(self.kernel_dir, "boot", "vmlinuz-*")))
        if not k:
            raise StepError("no kernel/boot/vmlinuz-* in %s" % self.kernel_dir)
        return k[-1]

    # -----------------------------------------------------------------------------------------
    # build

    def build_heaptrace(self):
        """heaptrace, static, out of tree. Sets ht_error when it cannot be built."""
        if not os.path.isdir(os.path.join(ROOT, "arch", self.name)):
            self.ht_error = ("skip", "no backend: arch/%s/ does not exist yet" % self.name, "")
            return
        argv = ["make", "-C", ROOT, "--no-print-directory", "-j%d" % (os.cpu_count() or 1),
                "ARCH=" + self.name, "CROSS_COMPILE=%s-" % self.triplet,
                "SYSROOT=" + self.sysroot, "STATIC=1", "BUILD=" + os.path.join(self.dir, "obj"),
                "OUT=" + self.heaptrace, "CFLAGS=" + CROSS_CFLAGS]
        rc, out = sh(argv, env=clean_env(), log=self.log)
        if rc != 0 or not os.path.isfile(self.heaptrace):
            if os.path.exists(self.heaptrace):
                os.unlink(self.heaptrace)
            self.ht_error = ("fail", "heaptrace does not build for %s: %s"
                             % (self.name, first_errors(out)), out)

    def target_names(self, runs):
        names = set()
        for r in runs:
            names.add(os.path.basename(r.prog))
            for o in r.opts:  # --symbols=/xt/t/NAME: the guest needs that file too
                if o.startswith("--symbols=" + GUEST_T + "/"):
                    names.add(os.path.basename(o))
        return sorted(names)

    def build_targets(self, names):
        if BENCH_FLOOR in names:  # a bench program, not a target the tests trace
            names = [n for n in names if n != BENCH_FLOOR]
            os.makedirs(self.targets, exist_ok=True)
            rc, out = sh(["%s-gcc" % self.triplet, "-O2", "-Wall", "-Wextra", "-Werror", "-o",
                          os.path.join(self.targets, BENCH_FLOOR),
                          os.path.join(ROOT, "tests", "bench", BENCH_FLOOR + ".c")],
                         log=self.log)
            if rc != 0:
                raise StepError("%s does not build: %s" % (BENCH_FLOOR, first_errors(out)), out)
        argv = ["make", "--no-print-directory", "-f", os.path.join(ROOT, "tests", "targets",
                                                                   "Makefile"),
                "-j%d" % (os.cpu_count() or 1), "BUILD=" + self.targets, "ARCH=" + self.name,
                "CROSS_COMPILE=%s-" % self.triplet] + allocator_make_vars(self)
        argv += [os.path.join(self.targets, n) for n in names]
        rc, out = sh(argv, cwd=ROOT, env=clean_env(), log=self.log)
        if rc != 0:
            raise StepError("the targets do not build: " + first_errors(out), out)

    # -----------------------------------------------------------------------------------------
    # initramfs

    def sysroot_path(self, guest_path):
        return os.path.join(self.sysroot, guest_path.lstrip("/"))

    def find_lib(self, soname):
        for d in ("lib/" + self.triplet, "usr/lib/" + self.triplet, "lib", "usr/lib", "lib64",
                  "usr/lib64"):
            if os.path.lexists(os.path.join(self.sysroot, d, soname)):
                return "/%s/%s" % (d, soname)
        return None

    def copy_guest_file(self, guest_path, copied):
        """Copy GUEST_PATH from the sysroot into the rootfs at the same path, following and
        recreating symlinks; returns the guest path of the real file."""
        seen = 0
        while True:
            if guest_path in copied:
                return copied[guest_path]
            src = self.sysroot_path(guest_path)
            dst = os.path.join(self.rootfs, guest_path.lstrip("/"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.islink(src):
                link = os.readlink(src)
                if not os.path.lexists(dst):
                    os.symlink(link, dst)
                nxt = os.path.normpath(os.path.join(os.path.dirname(guest_path), link))
                copied[guest_path] = None
                seen += 1
                if seen > 20:
                    raise StepError("symlink loop at %s" % guest_path)
                real = self.copy_guest_file(nxt, copied)
                copied[guest_path] = real
                return real
            if not os.path.isfile(src):
                raise StepError("%s is not in the sysroot" % guest_path)
            shutil.copy2(src, dst)
            copied[guest_path] = guest_path
            return guest_path

    def elf_deps(self, path):
        """(interpreter or None, [DT_NEEDED])."""
        rc, out = sh(["readelf", "-ldW", path])
        if rc != 0:
            raise StepError("readelf %s failed" % path, out)
        m = re.search(r"Requesting program interpreter: ([^\]]+)\]", out)
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
        return (m.group(1).strip() if m else None), needed

    def add_closure(self, binary, copied):
        todo = [binary]
        done = set()
        while todo:
            path = todo.pop()
            if path in done:
                continue
            done.add(path)
            interp, needed = self.elf_deps(path)
            if interp:
                real = self.copy_guest_file(interp, copied)
                todo.append(self.sysroot_path(real))
            for so in needed:
                if musl_own(interp, so):
                    continue
                where = self.find_lib(so)
                if not where:
                    raise StepError("%s needs %s, which is not in the sysroot" % (
                        os.path.relpath(path, ROOT), so))
                real = self.copy_guest_file(where, copied)
                todo.append(self.sysroot_path(real))

    def make_initramfs(self, runs, with_ht):
        shutil.rmtree(self.rootfs, ignore_errors=True)
        for d in ("bin", "proc", "sys", "dev", "r", GUEST_T.lstrip("/")):
            os.makedirs(os.path.join(self.rootfs, d), exist_ok=True)
        shutil.copy2(os.path.join(self.busybox_dir, "bin", "busybox"),
                     os.path.join(self.rootfs, "bin", "busybox"))
        os.symlink("busybox", os.path.join(self.rootfs, "bin", "sh"))
        copied = {}
        for name in self.target_names(runs):
            src = os.path.join(self.targets, name)
            shutil.copy2(src, os.path.join(self.rootfs, GUEST_T.lstrip("/"), name))
            self.add_closure(src, copied)
        if with_ht:
            shutil.copy2(self.heaptrace, os.path.join(self.rootfs, GUEST_HT.lstrip("/")))
            self.add_closure(self.heaptrace, copied)  # nothing when static
        survive = os.path.join(self.rootfs, SURVIVE.lstrip("/"))
        with open(survive, "w") as f:
            f.write(SURVIVE_SH.replace("@T@", GUEST_T).replace("@HT@", GUEST_HT))
        os.chmod(survive, 0o755)
        init = os.path.join(self.rootfs, "init")
        with open(init, "w") as f:
            f.write(init_script(self, runs))
        os.chmod(init, 0o755)
        files = []
        for top, dirs, names in os.walk(self.rootfs):
            for n in sorted(dirs) + sorted(names):
                files.append(os.path.relpath(os.path.join(top, n), self.rootfs))
        cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=self.rootfs,
                              input=("\n".join(["."] + files) + "\n").encode(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if cpio.returncode != 0:
            raise StepError("cpio failed", cpio.stderr.decode("utf-8", "replace"))
        with gzip.open(self.initrd, "wb", compresslevel=6) as f:
            f.write(cpio.stdout)

    # -----------------------------------------------------------------------------------------
    # boot

    def boot(self, timeout):
        argv = self.cfg["qemu"] + ["-kernel", self.kernel_image(), "-initrd", self.initrd,
                                   "-append", "console=%s panic=-1 quiet loglevel=1"
                                   % self.cfg["console"]]
        t0 = time.monotonic()
        with open(self.console, "wb") as out:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True)
            try:
                p.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                timed_out = True
        elapsed = time.monotonic() - t0
        with open(self.console, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        return text, elapsed, timed_out, argv


def relative_links(top):
    """Rewrite the absolute symlinks under TOP (a sysroot) as relative ones."""
    for d, dirs, names in os.walk(top):
        for n in dirs + names:
            p = os.path.join(d, n)
            if os.path.islink(p):
                t = os.readlink(p)
                if t.startswith("/"):
                    rel = os.path.relpath(os.path.join(top, t.lstrip("/")), d)
                    os.unlink(p)
                    os.symlink(rel, p)


# ---------------------------------------------------------------------------------------------
# The guest's /init

INIT_HEAD = r"""#!/bin/sh
# Generated by tests/xarch/xarch.py: runs the cases, sends the files back through the console.
export PATH=/bin
/bin/busybox mkdir -p /usr/bin /sbin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
M=@@XLAB
up() { read u rest </proc/uptime; echo $u; }
echo "$M BOOT arch=$(uname -m) kernel=$(uname -r) uptime=$(up)"
send() { # run-id file
	if [ -f "$2" ]; then
		echo "$M FILE $1 ${2##*/} $(wc -c <"$2")"
		head -c 262144 "$2" | base64
		echo "$M END"
	fi
}
finish() { # run-id dir
	for f in stdout stderr report expect target.err log; do send "$1" "$2/$f"; done
	echo "$M SENT $1"
}
run() { # run-id argv...: the command with HEAPTRACE_EXPECT/OUTFILE in /r/run-id
	id=$1; shift
	d=/r/$id; mkdir -p $d; cd $d
	echo "$M RUN $id uptime=$(up)"
	t0=$(up)
	HEAPTRACE_EXPECT=$d/expect HEAPTRACE_OUTFILE=$d/report \
		timeout -s KILL @LIMIT@ "$@" </dev/null >$d/stdout 2>$d/stderr
	rc=$?
	echo "$M RC $id rc=$rc start=$t0 end=$(up)"
	finish $id $d
	cd /
}
attach() { # run-id program mode heaptrace-options...: as test_attach.attach_run
	id=$1; prog=$2; mode=$3; shift 3
	d=/r/$id; mkdir -p $d; cd $d
	echo "$M RUN $id uptime=$(up)"
	t0=$(up)
	mkfifo $d/fifo
	# opened read-write first, so that no open of it blocks: a blocked open of a FIFO is
	# interrupted by the SIGCHLD of an earlier run, and busybox sh does not retry it
	exec 3<>$d/fifo
	HEAPTRACE_EXPECT=$d/expect HEAPTRACE_OUTFILE=$d/report \
		$prog $mode </dev/null >$d/fifo 2>$d/target.err &
	tpid=$!
	line=""
	read -t 60 line <&3
	exec 3<&-
	hrc=none
	if [ "$line" = ready ]; then
		timeout -s KILL @LIMIT@ @HT@ -p $tpid --format=json --outfile=$d/report "$@" \
			</dev/null >$d/stdout 2>$d/stderr
		hrc=$?
	else
		kill -9 $tpid 2>/dev/null
	fi
	wait $tpid
	trc=$?
	echo "attach: the program (pid $tpid) exited with status $trc"
	echo "$M ATTACH $id ready=${line:-none} rc=$hrc target_rc=$trc pid=$tpid start=$t0 end=$(up)"
	finish $id $d
	cd /
}
"""

# SIGKILL of heaptrace -p while it traces steady (tests/targets/steady.c: 4 busy threads that
# answer "ping" with "pong N M", N growing only while every thread makes progress) through entry
# stubs: the stubs turn to pass-through when the kernel marks heaptrace's robust futex, and the
# program runs on. With --mode=breakpoint every traced call traps: heaptrace's SIGTRAP handler
# in the program (the guard) takes the traps once heaptrace is gone. Each round: a new steady,
# heaptrace attached until its ring is mapped in the program (breakpoints: until heaptrace -v
# said which allocators it traces, once their breakpoints are placed) and three traced pings
# came back, then SIGKILL; then steady must still make progress
# on every thread, stop on "stop" and exit 0, untraced. Prints "round I: survived" or why not.
SURVIVE_SH = r"""#!/bin/sh
rounds=$1; threads=$2; shift 2 # the rest: heaptrace's options
pong() { # the N of one ping's answer ("pong N M"), or nothing
	echo ping >&4
	read -t 30 line <&3 && line=${line#pong } && echo "${line%% *}"
}
why() { # what became of steady, and what heaptrace said
	grep -E '^(State|TracerPid|SigCgt)' /proc/$tpid/status 2>/dev/null
	wait $tpid; echo "steady's status: $?"
	cat steady$i.err ht$i.err
}
case " $* " in
*" --mode=breakpoint "*) # with -v: said once the breakpoints are placed
	ready() { grep -q "allocators traced" ht$i.err; } ;;
*)
	ready() { grep -q heaptrace-ring /proc/$1/maps 2>/dev/null; } ;;
esac
for i in $(seq 1 $rounds); do
	rm -f in out; mkfifo in out
	exec 4<>in 3<>out
	@T@/steady $threads <&4 >&3 2>steady$i.err &
	tpid=$!
	read -t 60 line <&3 || { echo "round $i: steady never ready"; exit 1; }
	@HT@ -p $tpid "$@" --format=json --outfile=report$i >ht$i.out 2>ht$i.err &
	hpid=$!
	if [ -n "$HEAPTRACE_TEST_DIE_INJECTING" ]; then # it kills itself in the call it injects
		wait $hpid
		echo "round $i: heaptrace status $?"
	else
		w=0
		until ready $tpid; do
			sleep 0.05; w=$((w + 1))
			[ $w -gt 1200 ] && { echo "round $i: not traced after 60 s"; cat ht$i.err; exit 1; }
		done
		for k in 1 2 3; do
			[ -n "$(pong)" ] || { echo "round $i: no pong while traced"; exit 1; }
		done
		kill -9 $hpid
		wait $hpid
		echo "round $i: heaptrace status $?"
	fi
	n1=$(pong)
	[ -n "$n1" ] || { echo "round $i: no pong after SIGKILL"; why; exit 1; }
	w=0
	while :; do
		n2=$(pong)
		[ -n "$n2" ] || { echo "round $i: no pong after SIGKILL"; why; exit 1; }
		[ "$n2" -gt "$n1" ] && break
		sleep 0.05; w=$((w + 1))
		[ $w -gt 1200 ] && { echo "round $i: no progress after SIGKILL ($n1)"; exit 1; }
	done
	tracer=$(grep TracerPid /proc/$tpid/status)
	echo stop >&4
	read -t 60 line <&3
	wait $tpid
	rc=$?
	exec 3<&- 4<&-
	[ "$rc" = 0 ] || { echo "round $i: steady exited $rc ($line)"; cat steady$i.err; exit 1; }
	[ "$tracer" = "TracerPid:	0" ] || { echo "round $i: still traced ($tracer)"; exit 1; }
	echo "round $i: survived ($n1 -> $n2 rounds, $line)"
done
"""
SURVIVE = GUEST_DIR + "/survive.sh"

INIT_TAIL = r"""echo "$M DONE uptime=$(up)"
sync
poweroff -f
"""


def init_script(arch, runs):
    lines = [INIT_HEAD.replace("@LIMIT@", str(RUN_LIMIT)).replace("@HT@", GUEST_HT)]
    for r in runs:
        if r.kind == "ht":
            argv = ((["env"] + ["%s=%s" % e for e in r.env] if r.env else []) + [GUEST_HT] +
                    r.ht_opts + ["--format=json", "--outfile=/r/%s/report" % r.id, "--",
                                 r.prog] + r.args)
            lines.append("run %s %s\n" % (r.id, " ".join(map(shlex.quote, argv))))
        elif r.kind == "survive":
            env = ["env"] + ["%s=%s" % e for e in r.env] if r.env else []
            lines.append("run %s %s /bin/sh %s %s\n" % (r.id, " ".join(env), SURVIVE, " ".join(
                list(map(str, r.args)) + [shlex.quote(o) for o in r.ht_opts])))
        elif r.kind == "plain":
            argv = (["env"] + ["%s=%s" % e for e in r.env] if r.env else []) + [r.prog] + r.args
            lines.append("run %s %s\n" % (r.id, " ".join(map(shlex.quote, argv))))
        else:
            lines.append("attach %s %s %s %s\n" % (r.id, r.prog, r.mode,
                                                    " ".join(map(shlex.quote, r.ht_opts))))
    lines.append(INIT_TAIL)
    return "".join(lines)


# ---------------------------------------------------------------------------------------------
# The console


class Outcome:
    """What the guest said about one run: rc, target_rc, ready, pid, seconds, files {name:
    bytes}, sent (all its files came through)."""

    def __init__(self, rid):
        self.id = rid
        self.rc = self.target_rc = self.pid = None
        self.ready = None
        self.seconds = None
        self.files = {}
        self.sent = False


def parse_console(text):
    """({run id: Outcome}, boot line, done line)."""
    outcomes = {}
    boot = done = None
    cur = None  # (outcome, file name, [lines])
    for raw in text.splitlines():
        line = raw.replace("\r", "")
        i = line.find(MARK + " ")
        if i < 0:
            if cur is not None:
                s = line.strip()
                if re.fullmatch(r"[A-Za-z0-9+/=]+", s):
                    cur[2].append(s)
            continue
        words = line[i + len(MARK) + 1:].split()
        if not words:
            continue
        kw, rest = words[0], words[1:]
        if kw == "BOOT":
            boot = " ".join(rest)
        elif kw == "DONE":
            done = " ".join(rest)
        elif kw == "RUN" and rest:
            outcomes.setdefault(rest[0], Outcome(rest[0]))
        elif kw in ("RC", "ATTACH") and rest:
            o = outcomes.setdefault(rest[0], Outcome(rest[0]))
            kv = dict(w.partition("=")[::2] for w in rest[1:])
            o.rc = int(kv["rc"]) if re.fullmatch(r"-?\d+", kv.get("rc", "")) else None
            if kw == "ATTACH":
                o.ready = kv.get("ready")
                o.target_rc = int(kv["target_rc"]) if kv.get("target_rc", "").isdigit() else None
                o.pid = int(kv["pid"]) if kv.get("pid", "").isdigit() else None
            try:
                o.seconds = float(kv["end"]) - float(kv["start"])
            except (KeyError, ValueError):
                pass
        elif kw == "SENT" and rest:
            outcomes.setdefault(rest[0], Outcome(rest[0])).sent = True
        elif kw == "FILE" and len(rest) >= 2:
            o = outcomes.setdefault(rest[0], Outcome(rest[0]))
            cur = (o, rest[1], [])
        elif kw == "END" and cur is not None:
            try:
                cur[0].files[cur[1]] = base64.b64decode("".join(cur[2]))
            except ValueError:
                cur[0].files[cur[1]] = b"(base64 garbled on the console)"
            cur = None
    return outcomes, boot, done


# ---------------------------------------------------------------------------------------------
# Checking on the host with the native tests' functions


def load_module(path):
    """Import a test module by path, as the native runner does (tests/run.py)."""
    sys.path.insert(0, os.path.dirname(E2E))
    from run import load_module as native_load
    return native_load(path)


class Context:
    """The native test modules, with heaptrace(), target() and attach_run() answering from the
    guest's runs of one architecture."""

    def __init__(self, helpers, arch, outcomes, runs, console_tail):
        self.h = helpers
        self.arch = arch
        self.outcomes = outcomes
        self.by_key = {}
        for r in runs:
            self.by_key.setdefault(r.key(), r)
        self.console_tail = console_tail
        self.mods = {}
        self.entry = None  # the --mode of the runs the current case looks up

    def mod(self, name):
        if name not in self.mods:
            m = load_module(os.path.join(E2E, name + ".py"))
            m.heaptrace = self.heaptrace
            m.target = self.target
            if hasattr(m, "attach_run"):
                m.attach_run = self.attach_run
            if hasattr(m, "attach_target"):
                m.attach_target = self.attach_target
            for k, v in ABI.get(self.arch.name, {}).get(name, {}).items():
                setattr(m, k, v)
            self.mods[name] = m
        return self.mods[name]

    def target(self, name, opt="O0"):
        return "%s/%s%s" % (GUEST_T, name, suffix(opt))

    def files_of(self, r):
        """The run's files, written to results/<id>/ (the paths Run reads)."""
        o = self.outcomes.get(r.id)
        d = os.path.join(XBUILD, self.arch.name, "results", r.id)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        if o is None:
            raise self.h.Fail("the guest never started run %s" % r.id, self.console_tail)
        if not o.sent:
            raise self.h.Fail("the console ended before run %s had finished and sent its files"
                              % r.id, self.console_tail)
        for n, data in o.files.items():
            with open(os.path.join(d, n), "wb") as f:
                f.write(data)
        return o, d

    def _read(self, d, name):
        p = os.path.join(d, name)
        if not os.path.exists(p):
            return ""
        with open(p, encoding="utf-8", errors="replace") as f:
            return f.read()

    def _proc(self, argv, o, d):
        timed_out = o.rc == 137  # busybox timeout -s KILL
        return self.h.Proc(argv, o.rc, self._read(d, "stdout"), self._read(d, "stderr"),
                           timed_out)

    def heaptrace(self, prog, args=(), opts=(), fmt="json", env=None, timeout=None, name=None,
                  env_replace=None, cwd=None):
        h = self.h
        env_t = tuple(sorted((env or {}).items()))
        r = self.by_key.get(("ht", prog, tuple(str(a) for a in args), tuple(opts), None,
                             self.entry, env_t))
        if r is None or fmt != "json" or env_replace:
            raise h.Fail("harness: no guest run for heaptrace %s -- %s %s"
                         % (" ".join(opts), prog, " ".join(map(str, args))))
        o, d = self.files_of(r)
        if o.rc is None:
            raise h.Fail("run %s did not finish in the guest" % r.id, self.console_tail)
        argv = ["(guest %s)" % self.arch.name, GUEST_HT] + r.ht_opts + [
            "--format=json", "--outfile=/r/%s/report" % r.id, "--", r.prog] + r.args
        run = h.Run(self._proc(argv, o, d), os.path.join(d, "report"), os.path.join(d, "expect"),
                    "json")
        if run.proc.timed_out:
            run.fail("heaptrace did not finish within %ss in the guest" % RUN_LIMIT)
        return run

    def attach_target(self, name, opt, mode, opts=(), env_add=None):
        """test_inventory.attach_target's outcome, from the guest."""
        if env_add:
            raise self.h.Fail("harness: no guest run with an environment for %s" % name)
        return self.attach_run(opt, mode, list(opts), name=name)[0]

    def attach_run(self, opt, mode, opts, name="attach"):
        """test_attach.attach_run's outcome, from the guest (same conditions, same messages)."""
        h = self.h
        ta = self.mod("test_attach")
        r = self.by_key.get(("attach", self.target(name, opt), (), tuple(opts), mode,
                             self.entry, ()))
        if r is None:
            raise h.Fail("harness: no guest run for attach %s %s %s %s" % (name, opt, mode,
                                                                          opts))
        o, d = self.files_of(r)
        if o.ready is None:
            raise h.Fail("run %s did not finish in the guest" % r.id, self.console_tail)
        argv = ["(guest %s)" % self.arch.name, GUEST_HT, "-p", str(o.pid), "--format=json",
                "--outfile=/r/%s/report" % r.id] + r.ht_opts
        run = h.Run(self._proc(argv, o, d), os.path.join(d, "report"),
                    os.path.join(d, "expect"), "json")
        if o.ready != "ready":
            if o.target_rc == 77:
                raise h.Skip("the attach handshake reads x86 breakpoints")
            raise h.Fail("the attach target did not get ready (status %s, said %r)"
                         % (o.target_rc, o.ready), self._read(d, "target.err"))
        if run.proc.timed_out:
            run.fail("heaptrace -p did not finish within %ss" % RUN_LIMIT)
        if o.target_rc == 77:
            raise h.Skip("the attach handshake reads x86 breakpoints")
        if o.rc != 0:
            run.fail("heaptrace -p exited %s, expected 0" % o.rc)
        if o.target_rc != 0:
            run.fail("the attached program exited %s: %s" % (
                o.target_rc, ta.TARGET_RC.get(o.target_rc, "it was disturbed")))
        return run, o.pid


def check_record_host(ctx, opt):
    """A log written by the guest's static heaptrace (--record=log, in the run's directory) and
    read by this host's heaptrace report, symbolised from the guest's root (--sysroot): the
    same figures and the same function, file and line in every frame as the guest's own live
    report, which the guest symbolised from the same files."""
    h = ctx.h
    run = ctx.heaptrace(ctx.target("leaks", opt), opts=["--record=log"])
    log = os.path.join(os.path.dirname(run.outfile), "log")
    if run.rc != 0 or not os.path.exists(log):
        run.fail("the guest run wrote no log (rc %s)" % run.rc)
    host_ht = os.path.join(ROOT, "heaptrace")
    if not os.access(host_ht, os.X_OK):
        raise h.Fail("no host heaptrace at %s (make builds it; make check runs first)" % host_ht)
    p = subprocess.run([host_ht, "report", log, "--format=json", "--sysroot=" + ctx.arch.rootfs],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise h.Fail("host report of the guest's log: exit %d: %s" % (p.returncode,
                                                                      p.stderr.strip()))
    live, off = run.reports[-1], json.loads(p.stdout.splitlines()[-1])

    def shape(rep):
        return (rep["summary"]["alloc_calls"], rep["summary"]["free_calls"],
                rep["summary"]["live_blocks"], rep["summary"]["live_bytes"],
                sorted((b["count"], b["size"], tuple((f.get("function"), f.get("file"),
                                                      f.get("line")) for f in b["frames"]))
                       for b in rep["backtraces"]))
    if shape(off) != shape(live):
        raise h.Fail("the host's report of the guest's log differs from the guest's live one",
                     "live: %r\nhost: %r" % (shape(live), shape(off)))
    named = [f for b in off["backtraces"] for f in b["frames"][1:] if f.get("line")]
    if not named or not any(f.get("function") == "main" for b in off["backtraces"]
                            for f in b["frames"]):
        raise h.Fail("the host's report has no names and lines up to main", p.stdout[:2000])


def check_survive(ctx, r):
    """SURVIVE_SH's rounds of run r: every one survived, and the script exited 0."""
    h = ctx.h
    o, d = ctx.files_of(r)
    if o.rc is None:
        raise h.Fail("run %s did not finish in the guest" % r.id, ctx.console_tail)
    out = ctx._read(d, "stdout")
    rounds = int(r.args[0])
    survived = re.findall(r"^round (\d+): survived", out, re.M)
    if o.rc != 0 or survived != [str(i) for i in range(1, rounds + 1)]:
        raise h.Fail("%d of %d rounds survived SIGKILL of heaptrace (status %s)"
                     % (len(survived), rounds, o.rc), out + ctx._read(d, "stderr"))
    killed = re.findall(r"^round \d+: heaptrace status (\d+)", out, re.M)
    if killed != ["137"] * rounds:
        raise h.Fail("heaptrace was not killed by SIGKILL in every round: %s" % killed, out)


def check_plain(h, ctx, r):
    """A target alone: exit status 0 and its records (a summary, sites when it leaks)."""
    o, d = ctx.files_of(r)
    if o.rc is None:
        raise h.Fail("run %s did not finish in the guest" % r.id, ctx.console_tail)
    run = h.Run(ctx._proc(["(guest %s)" % ctx.arch.name, r.prog] + r.args, o, d),
                os.path.join(d, "report"), os.path.join(d, "expect"), None)
    if o.rc != 0:
        run.fail("%s exited %s, expected 0" % (r.prog, o.rc))
    want = h.summary_record(run)
    if want["live_blocks"]:
        h.site_records(run)


# ---------------------------------------------------------------------------------------------
# Allocators other than glibc's malloc family: the C++ operators of libstdc++ (cxxops.cc),
# jemalloc, tcmalloc and mimalloc (vendor.h), musl dynamic and static (family.c built with
# musl), the program's own pool (--alloc/--realloc/--free) and --mmap, checked by the native
# tests' functions: the counts each target derives in its header, in each entry mode.

# Debian 12 packages all of them for arm64, armhf and mips64el (apt-cache policy
# PKG:ARCH). They are unpacked into the sysroot beside LIB_PKGS but fetched on their own (a
# stamp inside the sysroot, which goes when fetch() starts the sysroot again).
ALLOC_PKGS = ["libjemalloc-dev", "libjemalloc2", "libgoogle-perftools-dev",
              "libgoogle-perftools4", "libtcmalloc-minimal4", "libmimalloc-dev",
              "libmimalloc2.0", "musl", "musl-dev"]
VENDOR_LIBS = ("jemalloc", "tcmalloc", "mimalloc")
MUSL_NAMES = ("musl_family", "musl_static_family")


def fetch_allocators(a):
    stamp = os.path.join(a.sysroot, ".allocators-fetched")
    want = "\n".join(ALLOC_PKGS) + "\n"
    if os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == want:
                return
    debs = os.path.join(a.debs, "allocators")
    shutil.rmtree(debs, ignore_errors=True)
    os.makedirs(debs)
    rc, out = sh(["apt-get", "download"] + ["%s:%s" % (p, a.deb) for p in ALLOC_PKGS],
                 cwd=debs, log=a.log, timeout=600)
    if rc != 0:
        raise StepError("apt-get download of the allocators failed: " + first_errors(out), out)
    for deb in sorted(glob.glob(os.path.join(debs, "*.deb"))):
        rc, out = sh(["dpkg-deb", "-x", deb, a.sysroot], log=a.log)
        if rc != 0:
            raise StepError("dpkg-deb -x %s failed" % os.path.basename(deb), out)
    relative_links(a.sysroot)
    with open(stamp, "w") as f:
        f.write(want)
    note("%s: fetched the allocators (%s)" % (a.name, " ".join(ALLOC_PKGS)))


def musl_specs(a):
    """A copy of the foreign musl-dev's specs file (what musl-gcc passes to gcc) whose headers,
    start files and libraries are the sysroot's; the dynamic linker stays the guest's path. The
    library path starts with musl's lib directory, which holds its libc.so (musl-dev has only
    libc.a beside the start files). None when musl is not in the sysroot."""
    found = glob.glob(os.path.join(a.sysroot, "usr", "lib", "*", "musl-gcc.specs"))
    if not found:
        return None
    trip = os.path.basename(os.path.dirname(found[0]))
    with open(found[0]) as f:
        text = f.read()
    lib, inc = "/usr/lib/" + trip, "/usr/include/" + trip
    text = text.replace("-L" + lib, "-L%s/lib/%s -L%s%s" % (a.sysroot, trip, a.sysroot, lib))
    text = re.sub(r"(?<![\w/.-])(%s|%s)\b" % (re.escape(lib), re.escape(inc)),
                  lambda m: a.sysroot + m.group(1), text)
    out = os.path.join(a.dir, "musl-gcc.specs")
    with open(out, "w") as f:
        f.write(text)
    return out


def allocator_make_vars(a):
    """The targets Makefile's VENDOR_ROOT and MUSL_CC for this architecture."""
    specs = musl_specs(a)
    return ["VENDOR_ROOT=" + a.sysroot] + (
        ["MUSL_CC=%s-gcc -specs %s" % (a.triplet, specs)] if specs else [])


def musl_own(interp, so):
    """musl's dynamic linker is its C library and answers to libc.so itself (no file needed)."""
    return bool(interp) and os.path.basename(interp).startswith("ld-musl-") and so == "libc.so"


# test_stackpool.SPECS: operands on the stack on every arch (arm's from the 5th argument)
STACKPOOL_SPECS = ["--alloc=wide_alloc:10", "--alloc=wide_calloc:11:9",
                   "--realloc=wide_realloc:10:11", "--free=wide_free:9", "--alloc=mid_alloc:5",
                   "--free=narrow_free:7", "--alloc=reg_alloc:1"]


def allocator_cases(opts):
    cases = []
    spec = ["--alloc=pool_alloc:2", "--alloc=pool_calloc:3:2", "--realloc=pool_realloc:2:3",
            "--free=pool_free:2"]  # test_custom.SPECS
    for opt in opts:
        cases += [
            ("cxx_operators[%s]" % opt, [GuestRun("ht", "cxxops", opt)],
             lambda c, o=opt: c.mod("test_cxx").test_cxx_operators(o)),
            ("cxx_new_throws[%s]" % opt, [GuestRun("ht", "cxxops", opt, args=["throw"])],
             lambda c, o=opt: c.mod("test_cxx").test_cxx_new_throws(o)),
            ("pool[%s]" % opt, [GuestRun("ht", "pool", opt, opts=spec)],
             lambda c, o=opt: c.mod("test_custom").test_pool(o)),
            ("stackpool[%s]" % opt, [GuestRun("ht", "stackpool", opt, opts=STACKPOOL_SPECS)],
             lambda c, o=opt: c.mod("test_stackpool").test_stackpool(o)),
            ("pool_keeps_stubs[%s]" % opt, [GuestRun("ht", "pool", opt, opts=spec + ["-v"])],
             lambda c, o=opt: c.mod("test_stackpool").test_pool_keeps_stubs(o)),
            ("mmap[%s]" % opt, [GuestRun("ht", "mapper", opt, opts=["--mmap"])],
             lambda c, o=opt: c.mod("test_mmap").test_mmap(o)),
        ]
        for lib in VENDOR_LIBS:
            v = "%s:%s" % (lib, opt)
            cases.append(("allocator[%s]" % v, [GuestRun("ht", lib + "_ops", opt),
                                                GuestRun("ht", lib + "_ops", opt, args=["idle"])],
                          lambda c, v=v: c.mod("test_allocators").test_allocator(v)))
        for lib in VENDOR_LIBS[:2]:  # mimalloc's operator new aborts (test_allocators)
            v = "%s:%s" % (lib, opt)
            cases.append(("allocator_new_throws[%s]" % v,
                          [GuestRun("ht", lib + "_cxxops", opt, args=["throw"]),
                           GuestRun("ht", lib + "_cxxops", opt, args=["idle"])],
                          lambda c, v=v: c.mod("test_allocators").test_allocator_new_throws(v)))
        for name in MUSL_NAMES:
            v = "%s:%s" % (name, opt)
            cases.append(("musl[%s]" % v, [GuestRun("ht", name, opt)],
                          lambda c, v=v: c.mod("test_musl").test_musl_family(v)))
        cases.append(("allocator_mimalloc_api[%s]" % opt,
                      [GuestRun("ht", "mimalloc_api", opt),
                       GuestRun("ht", "mimalloc_api", opt, args=["idle"])],
                      lambda c, o=opt: c.mod("test_allocators").test_mimalloc_api(o)))
        cases.append(("jemalloc_prefixed[%s]" % opt, [GuestRun("ht", "jeprefix", opt)],
                      lambda c, o=opt: c.mod("test_allocators").test_jemalloc_prefixed(o)))
    return cases


# ---------------------------------------------------------------------------------------------


def fetch_all(names):
    """Fetch every architecture's packages at once (downloads overlap). {name: None, or the
    StepError/exception that stopped it}."""

    def one(name):
        a = Arch(name)
        os.makedirs(a.dir, exist_ok=True)
        with open(a.log, "w"):
            pass
        t0 = time.monotonic()
        try:
            if a.fetch():
                note("%s: fetched %d packages into %s in %.0fs" % (
                    name, len(glob.glob(os.path.join(a.debs, "*.deb"))),
                    os.path.relpath(a.dir, ROOT), time.monotonic() - t0))
            fetch_allocators(a)
        except (StepError, subprocess.TimeoutExpired) as e:
            return e
        return None

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
        return dict(zip(names, pool.map(one, names)))


def run_arch(name, args, helpers, res, fetch_error):
    a = Arch(name)
    for d in (a.results, os.path.join(a.dir, "logs")):
        shutil.rmtree(d, ignore_errors=True)
    cases = []
    for mode, entry, tag in entry_modes(name):
        base = plan(args.opts, name) + (stub_cases(args.opts, name) if mode == "stubs" else [])
        for case, rs, check in base:
            cases.append((case + tag, [r.with_entry(entry) for r in rs],
                          lambda c, check=check, mode=mode, entry=entry:
                          in_mode(c, mode, entry, check)))
    cases = [c for c in cases if re.search(args.only, c[0])]
    plain = [p for p in PLAIN if re.search(args.only, p[0])]
    bench = bench_runs(name) if args.bench else []
    if bench:
        cases, plain = [], [("bench-" + r.id, r) for r in bench]
    t_start = time.monotonic()
    try:
        if fetch_error is not None:
            raise fetch_error
        a.build_heaptrace()
        with_ht = a.ht_error is None
        runs = [r for _, r in plain]
        if with_ht:
            seen = set()
            for _, rs, _ in cases:
                for r in rs:
                    if r.key() not in seen:
                        seen.add(r.key())
                        runs.append(r)
        a.build_targets(a.target_names(runs + [r for _, rs, _ in cases for r in rs]))
        a.make_initramfs(runs, with_ht)
    except StepError as e:
        res.fail(name, "setup", e.reason, e.details)
        for case, _, _ in cases:
            res.skip(name, case, "the lab could not be set up for %s" % name)
        return
    except subprocess.TimeoutExpired as e:
        res.fail(name, "setup", "timed out: %s" % " ".join(map(str, e.cmd)))
        for case, _, _ in cases:
            res.skip(name, case, "the lab could not be set up for %s" % name)
        return
    t_built = time.monotonic()
    load = [os.getloadavg()[0]]
    try:
        limit = args.timeout or GUEST_LIMIT * len(entry_modes(name))
        text, elapsed, timed_out, argv = a.boot(limit)
        load.append(os.getloadavg()[0])
    except (OSError, StepError) as e:
        res.fail(name, "boot", "cannot start qemu: %s" % e)
        for case, _, _ in cases:
            res.skip(name, case, "the guest did not boot")
        return
    outcomes, boot, done = parse_console(text)
    tail = "$ %s\n--- console (last 60 lines of %s) ---\n%s" % (
        " ".join(argv), os.path.relpath(a.console, ROOT),
        "\n".join(text.replace("\r", "").splitlines()[-60:]))
    per_run = ", ".join("%s %.1fs" % (o.id, o.seconds) for o in outcomes.values()
                        if o.seconds is not None)
    note("%s: setup %.1fs, guest ran %.1fs%s (%s; /init at %s; %s)" % (
        name, t_built - t_start, elapsed, " TIMED OUT" if timed_out else "",
        boot or "no boot line", (re.search(r"uptime=(\S+)", boot or "") or [None, "?"])[1],
        ("done at " + done) if done else "did not finish"))
    if per_run and not bench:  # the bench's table says it
        note("%s: runs: %s" % (name, per_run))
    if boot is None:
        res.fail(name, "boot", "no output from /init%s" % (
            " (qemu killed after %ds)" % limit if timed_out else ""), tail)
    elif done is None:
        res.fail(name, "boot", "the guest did not finish its runs%s" % (
            " (qemu killed after %ds)" % limit if timed_out else ""), tail)
    if bench:
        bench_report(name, outcomes, "%.1f at the start, %.1f at the end" % tuple(load))
        return
    ctx = Context(helpers, a, outcomes, runs, tail)
    for case, r in plain:
        report(res, helpers, name, case, lambda: check_plain(helpers, ctx, r))
    for case, rs, check in cases:
        if not with_ht:
            kind, reason, details = a.ht_error
            if kind == "skip":
                res.skip(name, case, reason)
            else:
                res.fail(name, case, reason, details)
            continue
        report(res, helpers, name, case, lambda: check(ctx))


def in_mode(ctx, mode, entry, check):
    """Run check with the native tests' helpers.MODE and the guest runs of that entry mode."""
    ctx.h.MODE, ctx.entry = mode, entry
    return check(ctx)


def report(res, helpers, arch, case, fn):
    try:
        fn()
    except helpers.Skip as e:
        res.skip(arch, case, str(e))
    except helpers.Fail as e:
        res.fail(arch, case, e.reason, e.details + "\n" + traceback.format_exc())
    except StepError as e:
        res.fail(arch, case, e.reason, e.details)
    except AssertionError as e:
        res.fail(arch, case, str(e) or "assertion failed", traceback.format_exc())
    except Exception as e:
        res.fail(arch, case, "error in the check: %s: %s" % (type(e).__name__, e),
                 traceback.format_exc())
    else:
        res.ok(arch, case)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arches", default="aarch64 arm mips64")
    ap.add_argument("--opts", default="O0 O2", help='target builds to trace, e.g. "O0 O2"')
    ap.add_argument("--timeout", type=int, default=0,
                    help="seconds per guest (qemu); default %d per entry mode the arch runs"
                    % GUEST_LIMIT)
    ap.add_argument("--only", default="", metavar="REGEX",
                    help="only the cases whose name matches (while working on one)")
    ap.add_argument("--bench", action="store_true",
                    help="no cases: print the cost of one traced call in each entry mode")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.opts = args.opts.split()
    arches = args.arches.split()
    for a in arches:
        if a not in ARCHES:
            print("xarch: unknown architecture %r (known: %s)" % (a, " ".join(ARCHES)),
                  file=sys.stderr)
            return 99
    sys.path.insert(0, E2E)
    import helpers  # noqa: E402  (tests/e2e/helpers.py)


    os.makedirs(XBUILD, exist_ok=True)
    helpers.configure(ROOT, os.path.join(XBUILD), None, os.path.join(XBUILD, "tmp"))
    res = Results(args.verbose)
    fetched = fetch_all(arches)
    for a in arches:
        run_arch(a, args, helpers, res, fetched[a])
    print(res.final_line(), flush=True)
    return 0 if res.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
