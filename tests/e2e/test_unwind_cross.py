# SPDX-License-Identifier: GPL-2.0-only
"""Backtraces that leave the program: deep (tests/targets/deep.c) with few levels, traced with a
depth that goes on below main, where the chain crosses into the C library
(__libc_start_main) and back. heaptrace answers libunwind's look-ups of each module's unwind
tables itself (src/unwind/procinfo.c: every module's kept, arm's exidx-only C library searched
directly), so these frames are the ones that path finds."""

from helpers import (OPTS, check_summary, fn_name, heaptrace, expect_rc, summary_record, target,
                     variants)

LEVELS, CALLS, DEPTH = 5, 20, 16


def cross_run(opt):
    """deep LEVELS CALLS: the counts exact; the block's chain is malloc, LEVELS x descend, main,
    then frames in the C library that include __libc_start_main, all found from unwind
    tables, never a frame in a third module."""
    r = heaptrace(target("deep", opt), args=[LEVELS, CALLS], opts=["--depth=%d" % DEPTH])
    expect_rc(r, 0)
    rep = r.report
    check_summary(r, rep, summary_record(r))
    bts = rep["peak"]["backtraces"]
    if len(bts) != 1:
        r.fail("%d backtraces at the peak, expected 1 (deep's block)" % len(bts))
    frames = bts[0]["frames"]
    names = [fn_name(f) for f in frames]
    want = ["malloc"] + ["descend"] * LEVELS + ["main"]
    if names[:len(want)] != want:
        r.fail("the chain begins %s, expected %s" % (names[:len(want)], want))
    libc, prog = frames[0].get("module"), frames[1].get("module")
    below = frames[len(want):]
    if not below or below[0].get("module") != libc:
        r.fail("no frame of the C library (%s) below main: %s" % (libc, names[len(want):]))
    if "__libc_start_main" not in names[len(want):]:
        r.fail("__libc_start_main is not below main: %s" % names[len(want):])
    for f in below:
        if f.get("module") not in (libc, prog):
            r.fail("%s below main is in %s" % (fn_name(f), f.get("module")))
        if f.get("how") != "cfi":
            r.fail("%s below main was found by %r, expected its unwind table (cfi)"
                   % (fn_name(f), f.get("how")))
    return r


@variants(*OPTS)
def test_cross_module_chain(opt):
    cross_run(opt)
