# SPDX-License-Identifier: GPL-2.0-only
"""The entry stubs' stack copy, its size learned from the unwinds (src/patch/copysize.h): a
program whose stack deepens after the size was learned (tests/targets/deepen.c) keeps its exact
counts; each backtrace is its whole chain, or the part the copy held marked as stopped, never
frames guessed from a big frame's stale words; the size goes back up; and --stack-copy fixes
the size."""

import re

import helpers
from helpers import (Skip, check_summary, expect_rc, fn_name, heaptrace, summary_record,
                     target)

SHALLOW, DEEP = 40000, 20000
FULL = ["malloc", "deep_leaf", "big_frame", "main"]


def copies(r):
    """(least size, backtraces cut short) from -v, or None if no ring was read."""
    m = re.search(r"^heaptrace: stack copies of at least (\d+) bytes, (\d+) backtraces cut "
                  r"short by them$", r.proc.stderr, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def deepen(opts=()):
    """deepen traced with -v: status and summary exact, every live block at the deep site;
    return (the run, blocks with the whole chain, blocks whose chain stops at big_frame)."""
    r = heaptrace(target("deepen"), args=[SHALLOW, DEEP], opts=["-v"] + list(opts))
    expect_rc(r, 0)
    check_summary(r, r.report, summary_record(r))
    whole = cut = 0
    for b in r.report["backtraces"]:
        names = [fn_name(f) for f in b["frames"]]
        stopped = [i for i, f in enumerate(b["frames"]) if f.get("stopped")]
        if names[:4] == FULL and not stopped:
            whole += b["count"]
        elif names == FULL[:3] and stopped == [2]:
            cut += b["count"]
        else:
            r.fail("a backtrace neither whole nor cut at big_frame: %s (stopped at %s)"
                   % (names, stopped))
    if whole + cut != DEEP:
        r.fail("%d + %d blocks at the deep site, expected %d" % (whole, cut, DEEP))
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


def test_fixed_copy():
    """--stack-copy=8192: that size for every record, nothing cut, every chain whole."""
    if helpers.MODE != "stubs":
        raise Skip("stack copies are the entry stubs'")
    r, whole, cut = deepen(["--stack-copy=8192"])
    if copies(r) != (8192, 0) or cut:
        r.fail("-v said %s, %d blocks cut" % (copies(r), cut))
