# SPDX-License-Identifier: GPL-2.0-only
"""Hints, once per run on standard error ("heaptrace: hint: ..."): children that ran untraced
(tests/targets/forker.c makes four: the fork child, the vfork child, system's and popen's
shells), a process killed by a signal (tests/targets/crash.c dies of SIGSEGV or SIGABRT), a
Python program whose pymalloc is not traced (Debian's python3, which inlines it: see
test_pymalloc.py), a set-user-ID program run by a heaptrace that is not root; and
no hint where none applies."""

import os
import shutil
import stat
import tempfile

import helpers
from helpers import HEAPTRACE, Fail, Skip, expect_rc, heaptrace, run, target


FRAME_HINTS = ("have no name", "inside allocator wrappers")


def hints(r, stripped=False):
    """The hints of run r; stripped: the program is a distribution's stripped binary (/bin/sh,
    python3), whose own hints on its frames (unnamed, cut inside allocator wrappers: see
    test_reports.py) are left out."""
    return [line for line in r.proc.stderr.splitlines() if line.startswith("heaptrace: hint:")
            and not (stripped and any(h in line for h in FRAME_HINTS))]


def one_hint(r, words, stripped=False):
    got = hints(r, stripped)
    if len(got) != 1 or not all(w in got[0] for w in words):
        r.fail("expected one hint naming %s, got %s" % (words, got))


def test_hint_untraced_children():
    r = heaptrace(target("forker"), name="hint-forker")
    expect_rc(r, 0)
    one_hint(r, ["4 child processes ran untraced", "-f (--follow-fork)"])
    r = heaptrace(target("forker"), opts=["--follow-fork"], name="hint-forker-f")
    expect_rc(r, 0)
    if hints(r, stripped=True):  # the children are /bin/sh
        r.fail("hints with --follow-fork: %s" % hints(r, stripped=True))
    r = heaptrace(target("leaks"), name="hint-none")
    expect_rc(r, 0)
    if hints(r):
        r.fail("hints for a plain program: %s" % hints(r))


def test_hint_killed_by_signal():
    for arg, sig, desc, rc in (("segv", "SIGSEGV", "Segmentation fault", 139),
                               ("abort", "SIGABRT", "Aborted", 134)):
        r = heaptrace(target("crash"), args=[arg], name="hint-crash-" + arg)
        expect_rc(r, rc)
        one_hint(r, ["process %d was killed by %s (%s)" % (r.report["pid"], sig, desc)])


def test_hint_python():
    """Debian's python3 inlines pymalloc: entry stubs trace it through its allocator tables
    (no hint); breakpoints cannot, and the hint says to use PYTHONMALLOC=malloc. Under
    PYTHONMALLOC=malloc no hint in either mode."""
    python = "/usr/bin/python3"
    if not os.access(python, os.X_OK):
        raise Skip("no /usr/bin/python3")
    r = heaptrace(python, args=["-c", "pass"], name="hint-python")
    expect_rc(r, 0)
    if helpers.MODE == "stubs":
        if hints(r, stripped=True):
            r.fail("a hint where pymalloc is traced: %s" % hints(r, stripped=True))
    else:
        one_hint(r, ["is a Python program", "PYTHONMALLOC=malloc"], stripped=True)
    r = heaptrace(python, args=["-c", "pass"], env={"PYTHONMALLOC": "malloc"},
                  name="hint-python-malloc")
    expect_rc(r, 0)
    if hints(r, stripped=True):
        r.fail("a hint with PYTHONMALLOC=malloc: %s" % hints(r, stripped=True))


def test_hint_setuid_not_root():
    """A set-user-ID root copy of tests/targets/suid.c, traced by heaptrace run as nobody
    (setpriv): the hint comes before the program runs, which runs as nobody (exit 9 all the
    same)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        raise Skip("needs root and setpriv to run heaptrace as another user")
    d = tempfile.mkdtemp(prefix="heaptrace-hint-suid-")
    try:
        os.chmod(d, 0o755)
        prog, tool = os.path.join(d, "suid"), os.path.join(d, "heaptrace")
        shutil.copyfile(target("suid"), prog)
        shutil.copyfile(HEAPTRACE, tool)
        os.chmod(prog, 0o755 | stat.S_ISUID)
        os.chmod(tool, 0o755)
        p = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", tool,
                 "--outfile=/dev/null", prog], env={"HEAPTRACE_EXPECT": "/dev/null"})
        got = [line for line in p.stderr.splitlines() if line.startswith("heaptrace: hint:")]
        if p.rc != 9 or len(got) != 1 or "set-user-ID" not in got[0] or prog not in got[0]:
            raise Fail("expected exit 9 and one set-user-ID hint", p.describe())
        p = run([HEAPTRACE, "--outfile=/dev/null", prog], env={"HEAPTRACE_EXPECT": "/dev/null"})
        if p.rc != 9 or "hint" in p.stderr:
            raise Fail("root tracing a set-user-ID program got a hint", p.describe())
    finally:
        shutil.rmtree(d)
