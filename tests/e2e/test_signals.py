# SPDX-License-Identifier: GPL-2.0-only
"""Reports while tracing goes on (tests/targets/checkpoint.c): SIGUSR1 (by size) and SIGUSR2 (by
count) print a report and tracing continues; SIGINT/SIGTERM print the final report and detach, and
heaptrace then waits for the program and exits with its status; --interval/--count; --duration.
The target itself signals heaptrace and waits (polling) for the report line to appear in the
--outfile: no sleeps here. Reports before the final one, and after a detach, have exit_status
null. Started with SIGCHLD ignored, heaptrace still works and the program still finds SIGCHLD
ignored (tests/targets/sigstate.c)."""

import os
import resource
import signal

from helpers import (HEAPTRACE, TIMEOUT, Fail, Run, check_sites, expect_rc, heaptrace,
                     need_heaptrace, run, scratch, site_records, sites, target)

FIRST = ("malloc", "first_leak,main")
SECOND = ("malloc", "second_leak,main")


def keys(rep):
    return [(s.fn, ",".join(s.chain)) for s in sites(rep) if s.reaches_main]


def test_sigusr1_sigusr2():
    r = heaptrace(target("checkpoint"), args=["usr"], name="usr")
    expect_rc(r, 0)
    reps = r.reports
    if len(reps) != 3:
        r.fail("%d reports, expected 3 (SIGUSR1, SIGUSR2, final)" % len(reps))
    want = [[FIRST], [SECOND, FIRST], [FIRST, SECOND]]
    for i, (rep, w) in enumerate(zip(reps, want), 1):
        if keys(rep) != w:
            r.fail("report %d lists %s, expected %s" % (i, keys(rep), w))
    if [rep.get("exit_status") for rep in reps] != [None, None, 0]:
        r.fail("exit_status of the reports: %s, expected [None, None, 0]"
               % [rep.get("exit_status") for rep in reps])
    check_sites(r, reps[-1], site_records(r))


def sig_final(mode):
    r = heaptrace(target("checkpoint"), args=[mode], name=mode)
    expect_rc(r, 5)
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1" % len(r.reports))
    rep = r.report
    if rep.get("exit_status") is not None:
        r.fail("exit_status %r after the detach, expected null" % rep.get("exit_status"))
    if FIRST not in keys(rep):
        r.fail("first_leak is not in the report: %s" % keys(rep))


def test_sigint():
    """SIGINT: final report, detach; the program runs on untraced (no SIGTRAP) and exits 5."""
    sig_final("int")


def test_sigterm():
    sig_final("term")


def test_interval_count():
    """--interval=0.3 --count=2: two periodic reports, then the final one. (The program leaks
    first_leak as it starts: a shorter interval can report before that on a loaded machine.)"""
    r = heaptrace(target("checkpoint"), args=["wait", 2], opts=["--interval=0.3", "--count=2"],
                  name="interval")
    expect_rc(r, 0)
    st = [rep.get("exit_status") for rep in r.reports]
    if st != [None, None, 0]:
        r.fail("reports' exit_status %s, expected [None, None, 0]" % st)
    for i, rep in enumerate(r.reports, 1):
        if FIRST not in keys(rep):
            r.fail("report %d does not list first_leak" % i)


def test_module_loaded_after_a_report():
    """tests/targets/dlopener.c: zlib is loaded after the first (periodic) report and allocates
    under gzdopen. heaptrace keeps its symbolizer from one report to the next (symcache.h), so
    it must learn of the new module: the final report names zlib's frames (module libz.so.1,
    the exported gzdopen) in a chain that reaches main, and first_leak as before."""
    r = heaptrace(target("dlopener"), opts=["--interval=0.2", "--count=1"], name="dlopener")
    expect_rc(r, 0)
    if len(r.reports) != 2:
        r.fail("%d reports, expected a periodic one and the final one" % len(r.reports))
    final = r.reports[-1]
    if FIRST not in keys(final):
        r.fail("the final report does not list first_leak")
    zlib = [s for s in sites(final)
            if any(os.path.basename(f.get("module") or "").startswith("libz.so")
                   for f in s.frames)]
    named = [s for s in zlib if s.reaches_main and
             any(f.get("function") == "gzdopen" for f in s.frames)]
    if not named:
        r.fail("no backtrace through zlib's gzdopen to main; zlib's: %s"
               % [[(f.get("function"), f.get("module")) for f in s.frames] for s in zlib])


def test_duration():
    """--duration=1: one report when the time is up, then the program runs on untraced; heaptrace
    waits for it and exits with its status (0)."""
    r = heaptrace(target("checkpoint"), args=["wait", 1], opts=["--duration=1"], name="duration")
    expect_rc(r, 0)
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1" % len(r.reports))
    if r.report.get("exit_status") is not None:
        r.fail("exit_status %r after the detach, expected null" % r.report.get("exit_status"))
    if FIRST not in keys(r.report):
        r.fail("first_leak is not in the report: %s" % keys(r.report))


# ---------------------------------------------------------------------------------------------
# Started with SIGCHLD ignored: heaptrace sees its program end, the program gets SIGCHLD as given


def _careless_parent():
    """preexec_fn: start the command as a careless parent may, with SIGCHLD ignored (the kernel
    then reaps children at once) and SIGUSR1 blocked; no core dump."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _run_careless(argv, env=None):
    return run(argv, env=env, preexec_fn=_careless_parent)


def test_sigchld_ignored_status():
    """heaptrace started with SIGCHLD ignored still sees its program's stops and end: it exits
    with the program's status (exitcode 7) and the report is exact, exit_status 7."""
    need_heaptrace()
    d = scratch("sigchld-ignored")
    outfile, expectfile = os.path.join(d, "report"), os.path.join(d, "expect")
    proc = _run_careless([HEAPTRACE, "--format=json", "--outfile=" + outfile, "--",
                          target("exitcode"), "7"], env={"HEAPTRACE_EXPECT": expectfile})
    r = Run(proc, outfile, expectfile, "json")
    if proc.timed_out:
        r.fail("heaptrace did not finish within %ss" % TIMEOUT)
    expect_rc(r, 7)
    if r.report.get("exit_status") != 7:
        r.fail("exit_status %r, expected 7" % r.report.get("exit_status"))
    check_sites(r, r.report, site_records(r))


def test_sigchld_ignored_program_sees():
    """The program gets the signal state heaptrace was started with, as it would untraced:
    SIGCHLD ignored, SIGUSR1 blocked (tests/targets/sigstate.c prints both)."""
    need_heaptrace()
    d = scratch("sigchld-sigstate")
    untraced = _run_careless([target("sigstate"), "7"])
    traced = _run_careless([HEAPTRACE, "--outfile=" + os.path.join(d, "report"), "--",
                            target("sigstate"), "7"])
    if untraced.rc != 7 or "SIGCHLD ignored" not in untraced.stdout:
        raise Fail("sigstate untraced under the wrapper: status %s, said %r (harness)"
                   % (untraced.rc, untraced.stdout), untraced.describe())
    if traced.timed_out or traced.rc != 7 or traced.stdout != untraced.stdout:
        raise Fail("traced, sigstate exited %s and said %r; untraced 7 and %r"
                   % (traced.rc, traced.stdout, untraced.stdout), traced.describe())
