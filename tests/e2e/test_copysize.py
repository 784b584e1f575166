# SPDX-License-Identifier: GPL-2.0-only
"""The entry stubs' stack copy, its size learned from the unwinds (src/patch/copysize.h): a
program whose stack deepens after the size was learned (tests/targets/deepen.c) keeps its exact
counts; each backtrace is its whole chain, or the part the copy held marked as stopped, never
frames guessed from a big frame's stale words; the size goes back up; and --stack-copy fixes
the size. The same in a second thread, whose stack the stubs find in their table of threads
(test_fixed_copy_in_thread, run in the guests of make check-cross too)."""

import re

import helpers
from helpers import (Skip, check_summary, expect_rc, fn_name, heaptrace, summary_record,
                     target)

SHALLOW, DEEP = 40000, 20000
# in a thread, fewer: the guests of make check-cross run it under emulation
THREAD_RUN = (2000, 500, "thread")
FULL = ["malloc", "deep_leaf", "big_frame", "run"]


def copies(r):
    """(least size, backtraces cut short) from -v, or None if no ring was read."""
    m = re.search(r"^heaptrace: stack copies of at least (\d+) bytes, (\d+) backtraces cut "
                  r"short by them$", r.proc.stderr, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def glibc_extra(args):
    """What the C library adds to deepen ARGS's summary: a thread's DTV, from pthread_create,
    measured by a run that makes no call of its own (none without a thread)."""
    if "thread" not in args:
        return None
    base = heaptrace(target("deepen"), args=[0, 0, "thread"])
    expect_rc(base, 0)
    want = summary_record(base)
    return {k: base.report["summary"][k] - want[k] for k in want if k not in ("kind", "scope")}


def deepen(opts=(), args=(SHALLOW, DEEP)):
    """deepen ARGS traced with -v: status and summary exact, every live block at the deep site;
    return (the run, blocks with the whole chain, blocks whose chain stops at big_frame)."""
    r = heaptrace(target("deepen"), args=list(args), opts=["-v"] + list(opts))
    expect_rc(r, 0)
    check_summary(r, r.report, summary_record(r), extra=glibc_extra(args))
    whole = cut = 0
    for b in r.report["backtraces"]:
        names = [fn_name(f) for f in b["frames"]]
        stopped = [i for i, f in enumerate(b["frames"]) if f.get("stopped")]
        if "pthread_create" in names:
            continue  # the C library's DTV for the thread (in the summary's extra)
        # in a thread, frames past run() are the C library's start of a thread, whose last
        # may be marked stopped where the stack (and so the copy) ends (seen on arm, mips64)
        outer = [i for i in stopped if i < len(FULL) or "thread" not in args]
        if names[:4] == FULL and not outer:
            whole += b["count"]
        elif names == FULL[:3] and stopped == [2]:
            cut += b["count"]
        else:
            r.fail("a backtrace neither whole nor cut at big_frame: %s (stopped at %s)"
                   % (names, stopped))
    if whole + cut != args[1]:
        r.fail("%d + %d blocks at the deep site, expected %d" % (whole, cut, args[1]))
    return r, whole, cut


def test_learned_copy_deepening():
    """Learned, then run off: the backtraces of the records copied at the learned size are cut
    at the frame the copy ends in, as many as -v says, and the rest are whole."""
    r, whole, cut = deepen()
    got = copies(r)
    if helpers.MODE != "stubs":
        if cut or got:
            r.fail("breakpoint mode: %d cut backtraces, -v said %s" % (cut, got))
        return
    if not got:
        r.fail("-v did not say how much stack the stubs copied")
    least, ncut = got
    if least >= 4096:
        r.fail("the stubs still copied %d bytes after %d shallow calls" % (least, SHALLOW))
    if ncut != cut or not whole:
        r.fail("%d backtraces cut by -v, %d blocks cut and %d whole in the report"
               % (ncut, cut, whole))


def test_fixed_copy(args=(SHALLOW, DEEP)):
    """--stack-copy=8192: that size for every record, nothing cut, every chain whole."""
    if helpers.MODE != "stubs":
        raise Skip("stack copies are the entry stubs'")
    r, whole, cut = deepen(["--stack-copy=8192"], args)
    if copies(r) != (8192, 0) or cut:
        r.fail("-v said %s, %d blocks cut" % (copies(r), cut))


def test_fixed_copy_in_thread():
    """--stack-copy=8192 in a second thread: its stack's top comes from the stubs' table of
    threads (found by its thread pointer's hash), so its copies too run past big_frame's 4 KiB."""
    test_fixed_copy(THREAD_RUN)
