# SPDX-License-Identifier: GPL-2.0-only
"""heaptrace -p PID (tests/targets/attach.c). The target starts a second thread, says "ready",
and waits until heaptrace's breakpoints are in place (it looks at the first byte of malloc, calloc
and free: x86_64 only, else it exits 77 and the test is skipped). Then it allocates in both
threads, frees a block made before the attach (an unknown free), and sends SIGINT to its tracer;
heaptrace writes the final report, removes its breakpoints, detaches and exits 0, and the target
checks that its code is restored and exits 0."""

import os
import select
import subprocess

from helpers import (HEAPTRACE, OPTS, Fail, Run, Skip, check_sites, check_summary,
                     need_heaptrace, run, scratch, site_records, summary_record, target,
                     variants, TIMEOUT)

TARGET_RC = {3: "its malloc/calloc/free entries were not restored after the detach",
             99: "a checkpoint never came (breakpoints never seen, or no report/detach)",
             98: "it could not signal its tracer"}


def attach_run(opt, mode, opts):
    need_heaptrace()
    d = scratch("attach-%s-%s" % (mode, opt))
    outfile = os.path.join(d, "report")
    expectfile = os.path.join(d, "expect")
    env = dict(os.environ, HEAPTRACE_EXPECT=expectfile, HEAPTRACE_OUTFILE=outfile)
    t = subprocess.Popen([target("attach", opt), mode], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=d)
    try:
        ready, _, _ = select.select([t.stdout], [], [], 60)
        line = t.stdout.readline() if ready else b""
        if line != b"ready\n":
            t.kill()
            t.wait()
            if t.returncode == 77:
                raise Skip("the attach handshake reads x86 breakpoints")
            raise Fail("the attach target did not get ready (status %s, said %r)"
                       % (t.returncode, line))
        argv = [HEAPTRACE, "-p", str(t.pid), "--format=json", "--outfile=" + outfile] + opts
        proc = run(argv)
        try:
            t.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            t.kill()
            t.wait()
        r = Run(proc, outfile, expectfile, "json")
        if proc.timed_out:
            r.fail("heaptrace -p did not finish within %ss" % TIMEOUT)
        if t.returncode == 77:
            raise Skip("the attach handshake reads x86 breakpoints")
        if proc.rc != 0:
            r.fail("heaptrace -p exited %s, expected 0" % proc.rc)
        if t.returncode != 0:
            r.fail("the attached program exited %s: %s" % (
                t.returncode, TARGET_RC.get(t.returncode, "it was disturbed")))
        return r, t.pid
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        t.stdout.close()
        t.stderr.close()


@variants(*OPTS)
def test_attach_sigint(opt):
    r, pid = attach_run(opt, "int", [])
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1" % len(r.reports))
    rep = r.report
    if rep.get("pid") != pid:
        r.fail("pid %r, expected %d" % (rep.get("pid"), pid))
    if rep.get("exit_status") is not None:
        r.fail("exit_status %r after a detach, expected null" % rep.get("exit_status"))
    check_sites(r, rep, site_records(r))
    check_summary(r, rep, summary_record(r),
                  keys=["alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes"])


def test_attach_duration():
    """-p PID --duration=1: the report when the time is up, then a clean detach."""
    r, pid = attach_run("O0", "wait", ["--duration=1"])
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1" % len(r.reports))
    if r.report.get("exit_status") is not None:
        r.fail("exit_status %r after a detach, expected null" % r.report.get("exit_status"))
