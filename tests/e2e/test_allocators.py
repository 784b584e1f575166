# SPDX-License-Identifier: GPL-2.0-only
"""C++ programs linked with a replacement allocator (tests/targets/vendor.h: jemalloc_ops,
tcmalloc_ops, mimalloc_ops): the library's malloc, free, operator new and delete, and its own
entry points (jemalloc's mallocx, rallocx, xallocx, sdallocx, dallocx; tcmalloc's tc_*;
mimalloc's mi_*) are traced; every live block the program makes is found with its size and frame
0, and the program's own count is exactly the difference between its run and a run in which it
does nothing in main (the library's, libstdc++'s and the C library's own allocations, the same in
both). Peaks cannot be told apart that way and are not compared."""

import ctypes
import os
import signal
import subprocess
import time

import helpers
from helpers import (OPTS, TIMEOUT, check_consistency, check_debug_info, check_sites,
                     check_summary, expect_rc, heaptrace, need_heaptrace, scratch,
                     site_lines, site_records, summary_record, target, variants, Fail)

LIBS = ("jemalloc", "tcmalloc", "mimalloc")
KEYS = ("alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes",
        "total_allocated_bytes")


def quiet(r):
    if helpers.said(r.proc.stderr):
        r.fail("heaptrace said something on a clean run: %r" % helpers.said(r.proc.stderr))


@variants(*["%s:%s" % (lib, o) for lib in LIBS for o in OPTS])
def test_allocator(v):
    lib, opt = v.split(":")
    prog = target(lib + "_ops", opt)
    r = heaptrace(prog, name="%s-%s" % (lib, opt))
    expect_rc(r, 0)
    quiet(r)
    rep = r.report
    check_consistency(r, rep)
    check_sites(r, rep, site_records(r), lines=site_lines("vendor"))
    check_debug_info(r, rep, prog)
    idle = heaptrace(prog, args=["idle"], name="%s-idle-%s" % (lib, opt))
    expect_rc(idle, 0)
    quiet(idle)
    baseline_diff(r, idle, summary_record(r), KEYS)


def baseline_diff(r, idle, want, keys):
    got, base = r.report["summary"], idle.report["summary"]
    errors = ["summary.%s = %s (%s in the idle run), the program counted %s"
              % (k, got[k], base[k], want[k]) for k in keys if got[k] - base[k] != want[k]]
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + r.describe())


@variants(*OPTS)
def test_mimalloc_api(opt):
    """Every allocation function of mimalloc's API (tests/targets/mimalloc_api.c: 73, each from
    a leaf of its own, its block kept live) counted once, under its own name or the one the
    target's header derives, with the size it asked for (a string copy's: the string the
    program got, checked against mi_usable_size), and its five releases; the program's counts
    are the difference with its idle run."""
    prog = target("mimalloc_api", opt)
    r = heaptrace(prog, name="mimalloc_api-" + opt)
    expect_rc(r, 0)
    quiet(r)
    check_consistency(r, r.report)
    check_sites(r, r.report, site_records(r))
    idle = heaptrace(prog, args=["idle"], name="mimalloc_api-idle-" + opt)
    expect_rc(idle, 0)
    quiet(idle)
    baseline_diff(r, idle, summary_record(r), KEYS)


def test_mimalloc_api_orphaned():
    """heaptrace killed with SIGKILL once mimalloc_api is in main (its breakpoints all placed:
    84 in breakpoint mode on x86_64, beyond the SIGTRAP guard's old 48): the program, adopted
    by this process, runs every mimalloc function through the breakpoints left behind and exits
    0 after its own checks; a breakpoint the guard did not know would end it with SIGTRAP."""
    need_heaptrace()
    prog = target("mimalloc_api")
    d = scratch("mimalloc_api-orphan")
    ready = os.path.join(d, "pid")
    set_subreaper(True)
    ht = subprocess.Popen([helpers.HEAPTRACE, "--format=json", "--outfile=" + os.path.join(d, "report"),
                           "--", prog, "orphan", ready], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    pid = None
    try:
        deadline = time.monotonic() + TIMEOUT
        while not os.path.exists(ready) and ht.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        if not os.path.exists(ready):
            raise Fail("mimalloc_api never reached main under heaptrace (heaptrace %s)"
                       % ht.poll(), ht.stderr.read().decode() if ht.poll() is not None else "")
        with open(ready) as f:
            pid = int(f.read())
        ht.kill()
        if ht.wait(TIMEOUT) != -signal.SIGKILL:
            raise Fail("heaptrace exited %s, expected killed by SIGKILL" % ht.returncode)
        status = waitpid_timeout(pid, TIMEOUT)
        pid = None
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            raise Fail("the program ended with %s after heaptrace's SIGKILL, expected exit 0"
                       % (("signal %d" % os.WTERMSIG(status)) if os.WIFSIGNALED(status)
                          else "exit %d" % os.WEXITSTATUS(status)))
    finally:
        if ht.poll() is None:
            ht.kill()
            ht.wait()
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        set_subreaper(False)


def waitpid_timeout(pid, timeout):
    """The status of child pid (adopted), polled until timeout seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got:
            return status
        if time.monotonic() > deadline:
            raise Fail("the program did not end within %d s after heaptrace's SIGKILL" % timeout)
        time.sleep(0.01)


def set_subreaper(on):
    """Adopt the orphans of this process's children (PR_SET_CHILD_SUBREAPER)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, ctypes.c_ulong(1 if on else 0), ctypes.c_ulong(0), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)) != 0:
        raise Fail("prctl(PR_SET_CHILD_SUBREAPER): %s" % os.strerror(ctypes.get_errno()))


@variants(*["%s:%s" % (lib, o) for lib in ("jemalloc", "tcmalloc") for o in OPTS])
def test_allocator_new_throws(v):
    """The library's own operator new throwing std::bad_alloc (tests/targets/cxxops.cc "throw"):
    the program catches it and exits 0, and counts as cxxops.cc derives (over its idle run).
    mimalloc is left out: its operator new aborts on such a request, untraced too."""
    lib, opt = v.split(":")
    prog = target(lib + "_cxxops", opt)
    r = heaptrace(prog, args=["throw"], name="%s-throw-%s" % (lib, opt))
    expect_rc(r, 0)
    quiet(r)
    check_consistency(r, r.report)
    idle = heaptrace(prog, args=["idle"], name="%s-throw-idle-%s" % (lib, opt))
    expect_rc(idle, 0)
    baseline_diff(r, idle, summary_record(r), KEYS[:5])


@variants(*OPTS)
def test_jemalloc_prefixed(opt):
    """A jemalloc built with the je_ prefix (tests/targets/jeprefix.c: its entry points defined
    by the executable, as Debian's jemalloc has no prefix): je_malloc, je_calloc, je_realloc,
    je_free, je_posix_memalign, je_mallocx, je_rallocx, je_dallocx and je_sdallocx are found and
    counted exactly as the program counts them, in the malloc heap. At -O2 the executable's
    je_malloc starts with a pc-relative load (x86_64: mov disp32(%rip)), which a breakpoint
    steps over from the scratch page near the libraries, out of a 32-bit displacement's reach
    from a PIE executable: arch/x86_64 runs it with a base register instead."""
    prog = target("jeprefix", opt)
    r = heaptrace(prog, name="jeprefix-" + opt)
    expect_rc(r, 0)
    quiet(r)
    check_consistency(r, r.report)
    check_sites(r, r.report, site_records(r), lines=site_lines("jeprefix"))
    check_summary(r, r.report, summary_record(r))
