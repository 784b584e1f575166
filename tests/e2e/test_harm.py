# SPDX-License-Identifier: GPL-2.0-only
"""heaptrace never harms the program, in the corners the entry stubs meet: programs that run fine
natively must finish under heaptrace with their own output and status, within a time limit, and
with exact counts, launched and attached (-p), in each entry mode.

- tests/targets/x86_64/notsc.c turns the time-stamp counter off (prctl PR_SET_TSC,
  PR_TSC_SIGSEGV), before or after the attach, then allocates in two threads: the stub code must
  not run rdtsc there (x86_64 only; where the kernel does not enforce the setting, the target
  says so and only the counts are checked).
- tests/targets/costacks.c allocates on ucontext coroutine stacks and in a handler on a
  sigaltstack, each with a guard page right above it: the stubs' stack copy must stop at the
  guard.
- tests/targets/bpkill.c: four threads mixing malloc and posix_memalign (which keeps a
  breakpoint); heaptrace -p is killed with SIGKILL 0.5 s after its patches show, 20 rounds in
  the stubs mode (5 in the other): the program runs on and ends with its own output every time.
"""

import os
import select
import signal
import subprocess
import time

import helpers
from helpers import (HEAPTRACE, Busy, Fail, Skip, check_sites, code_diffs, heaptrace,
                     need_heaptrace, records, scratch, site_records, target, tracer_pids)
from test_attach import attached_run

LIMIT = 60  # seconds a run may take: only to catch a hung program


def check_run(r, prog, said, rc=0):
    """The program ended by itself with status rc, its own output, and heaptrace the same."""
    if r.proc.timed_out:
        r.fail("%s did not finish within %d s" % (prog, LIMIT))
    if r.rc != rc:
        r.fail("heaptrace exited %s, expected the program's %d" % (r.rc, rc))
    if r.proc.stdout != said:
        r.fail("the program printed %r, expected %r" % (r.proc.stdout, said))


def start_ready(name, args, d):
    """Start target name with "attach" and args in d, its records and report there, and read
    its first line: (Popen, outfile, expectfile, line); a target not "ready" is ended."""
    outfile = os.path.join(d, "report")
    expectfile = os.path.join(d, "expect")
    env = dict(os.environ, HEAPTRACE_EXPECT=expectfile, HEAPTRACE_OUTFILE=outfile)
    t = subprocess.Popen([target(name), "attach"] + list(args), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=d)
    ready, _, _ = select.select([t.stdout], [], [], LIMIT)
    line = t.stdout.readline() if ready else b""
    if line != b"ready\n":
        t.kill()
        t.wait()
    return t, outfile, expectfile, line


def attach_target(name, args, opts=()):
    """Run target name with "attach" and args, heaptrace -p on it until the target sends it
    SIGINT: the Run of the report, the target's Popen (ended) and its stdout after "ready"."""
    need_heaptrace()
    d = scratch("%s-%s" % (name, "-".join(args) or "attach"))
    t, outfile, expectfile, line = start_ready(name, args, d)
    try:
        if line != b"ready\n":
            if t.returncode == 77:
                raise Skip("%s: this kernel has no PR_SET_TSC" % name)
            raise Fail("%s did not get ready (status %s, said %r)" % (name, t.returncode, line))
        argv = [HEAPTRACE, "-p", str(t.pid), "--no-inventory", "--format=json",
                "--outfile=" + outfile] + list(opts)
        proc, r = attached_run(t, argv, outfile, expectfile)
        rest = t.stdout.read().decode("utf-8", "replace")
        if proc.rc != 0:
            r.fail("heaptrace -p exited %s, expected 0" % proc.rc)
        return r, t, rest
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        t.stdout.close()
        t.stderr.close()


def tsc_enforced(r):
    """Whether the kernel makes rdtsc fault after PR_SET_TSC here (the target's "tsc" record)."""
    recs = records(r, "tsc")
    if len(recs) != 1:
        r.fail("the target wrote %d tsc records, expected 1" % len(recs))
    return recs[0]["faults"] == 1


def check_tsc(r):
    """Where the kernel enforces the setting, the stubs met it: heaptrace said so (-v)."""
    said = "turned the time-stamp counter off" in r.proc.stderr
    if helpers.MODE == "stubs" and tsc_enforced(r) and not said:
        r.fail("rdtsc faults here, yet heaptrace never met the switched-off counter")


def check_counts(r):
    """Every site the target recorded, exact (the C library's own blocks aside)."""
    recs = site_records(r)
    if not recs:
        r.fail("the target wrote no site records")
    check_sites(r, r.report, recs, exhaustive=False, check_peaks=False)


# ---------------------------------------------------------------------------------------------
# The time-stamp counter turned off


def notsc_target():
    try:
        return target("notsc")
    except Fail:
        raise Skip("notsc is an x86_64 target")


def test_notsc_launched():
    """The program turns the counter off in main, after heaptrace set its stubs up."""
    prog = notsc_target()
    r = heaptrace(prog, args=["launch"], opts=["-v"], timeout=LIMIT, name="notsc-launch")
    if r.rc == 77:
        raise Skip("this kernel has no PR_SET_TSC")
    check_run(r, "notsc", "notsc: done\n")
    check_counts(r)
    check_tsc(r)


@helpers.variants("before", "after")
def test_notsc_attached(when):
    """heaptrace -p on a program that turned the counter off before the attach, or does after."""
    notsc_target()
    args = ["before"] if when == "before" else []
    r, t, rest = attach_target("notsc", args, opts=["-v"])
    if t.returncode != 0 or rest != "notsc: done\n":
        r.fail("notsc exited %s and printed %r, expected 0 and 'notsc: done'"
               % (t.returncode, rest))
    check_counts(r)
    check_tsc(r)


# ---------------------------------------------------------------------------------------------
# Coroutine and signal stacks with guard pages


def test_costacks_launched():
    r = heaptrace(target("costacks"), args=["launch"], timeout=LIMIT, name="costacks-launch")
    check_run(r, "costacks", "costacks: done\n")
    check_counts(r)


def test_costacks_attached():
    r, t, rest = attach_target("costacks", [])
    if t.returncode != 0 or rest != "costacks: done\n":
        r.fail("costacks exited %s and printed %r, expected 0 and 'costacks: done'"
               % (t.returncode, rest))
    check_counts(r)


# ---------------------------------------------------------------------------------------------
# SIGKILL of heaptrace while it holds breakpoint stops


def _status(rc):
    return "killed by %s" % signal.Signals(-rc).name if rc is not None and rc < 0 else \
        "exited %s" % rc


def test_sigkill_holding():
    """SIGKILL of heaptrace -p 0.5 s after its patches show in bpkill's code (posix_memalign on
    a breakpoint, the others on stubs): bpkill lives, untraced, and ends with its own output
    and status. 20 rounds in the stubs mode, 5 in the other."""
    need_heaptrace()
    n = 20 if helpers.MODE == "stubs" else 5
    failed = []
    for i in range(n):
        t = Busy("bpkill-%d" % i, 4, prog="bpkill")
        try:
            ht = subprocess.Popen([HEAPTRACE, "-p", str(t.pid), "--no-inventory",
                                   "--outfile=/dev/null"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True)
            deadline = time.monotonic() + LIMIT
            while not code_diffs(t.pid)[1]:
                if ht.poll() is not None or time.monotonic() > deadline:
                    raise Fail("heaptrace's patches never showed (heaptrace %s)"
                               % _status(ht.poll()))
                time.sleep(0.005)
            time.sleep(0.5)
            ht.kill()
            ht.communicate()
            traced = {tid: tp for tid, tp in tracer_pids(t.pid).items() if tp}
            if traced:
                raise Fail("threads of bpkill still traced after heaptrace's SIGKILL: %s"
                           % traced)
            t.expect_clean_end()
        except Fail as e:
            failed.append("round %d: %s" % (i, e.reason))
        finally:
            t.kill()
    if failed:
        raise Fail("%d of %d rounds failed; %s" % (len(failed), n, failed[0]),
                   "\n".join(failed))
