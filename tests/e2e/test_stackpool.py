# SPDX-License-Identifier: GPL-2.0-only
"""The program's own allocator with its operands on the stack (tests/targets/stackpool.c: the
9th to 11th arguments of ten-word functions, a 5th and a 7th, and a size in the first register of
a function that takes ten): each read where the ABI puts it, in both entry modes, and the
program's figures and exit status as untraced. The target checks every argument it is given and
exits 70-79 if a tracer moved its stack (a return caught by a trampoline that moves sp, where
heaptrace cannot know that the function reads none there). A copy without debug information is
traced as exactly, and says why its calls stop at their return; the pool target (test_custom),
whose functions take every argument in registers, keeps its stubs."""

import os
import shutil

import helpers
from helpers import (OPTS, Fail, check_consistency, check_debug_info, check_sites,
                     check_summary, expect_rc, heaptrace, records, run, scratch, site_lines,
                     site_records, summary_record, target, variants)
from test_custom import SPECS as POOL_SPECS, FUNCS as POOL_FUNCS, check_heap, heap_record

SPECS = ("--alloc=wide_alloc:10", "--alloc=wide_calloc:11:9", "--realloc=wide_realloc:10:11",
         "--free=wide_free:9", "--alloc=mid_alloc:5", "--free=narrow_free:7",
         "--alloc=reg_alloc:1")
FUNCS = ("wide_alloc", "wide_calloc", "wide_realloc", "wide_free", "mid_alloc", "narrow_free",
         "reg_alloc")


def check_pool_heap(r):
    recs = records(r, "heap")
    if len(recs) != 1 or recs[0].get("name") != "wide_alloc":
        r.fail("the target wrote %r heap records (expected 1, wide_alloc)" % recs)
    check_heap(r, "wide_alloc", heap_record(r, "wide_alloc"))
    for bt in r.report["backtraces"]:
        fn = bt["frames"][0].get("function") or "?"
        if bt.get("heap") != ("wide_alloc" if fn in FUNCS else "malloc"):
            r.fail("a backtrace of %s is of heap %r" % (fn, bt.get("heap")))


@variants(*OPTS)
def test_stackpool_untraced(opt):
    """The target passes its own checks when nothing traces it (so that its exit status under
    heaptrace says what heaptrace did)."""
    p = run([target("stackpool", opt)])
    if p.rc != 0:
        raise Fail("stackpool exits %s untraced, expected 0" % p.rc, p.describe())


def without_debug_info(name):
    """A copy of target NAME stripped of its debug information (objcopy --strip-debug)."""
    prog = os.path.join(scratch(name + "-nodebug"), name + "-nodebug")
    shutil.copy(target(name), prog)
    p = run(["objcopy", "--strip-debug", prog])
    if p.rc != 0:
        raise Fail("objcopy --strip-debug failed", p.describe())
    return prog


@variants(*OPTS)
def test_stackpool(opt):
    prog = target("stackpool", opt)
    r = heaptrace(prog, opts=SPECS, name="stackpool-" + opt)
    expect_rc(r, 0)  # 70-79: an argument the target was given was not the one passed
    if helpers.said(r.proc.stderr):
        r.fail("heaptrace said something on a clean run: %r" % helpers.said(r.proc.stderr))
    rep = r.report
    check_consistency(r, rep, custom=FUNCS)
    check_sites(r, rep, site_records(r), lines=site_lines("stackpool"))
    check_debug_info(r, rep, prog)
    check_summary(r, rep, summary_record(r))
    check_pool_heap(r)


def test_stackpool_no_debug_info():
    """Without debug information nothing tells whether a function reads the stack: every
    custom function that returns a block returns through a stop (-v says so), exactly counted."""
    prog = without_debug_info("stackpool")
    r = heaptrace(prog, opts=SPECS + ("-v",), name="stackpool-nodebug")
    expect_rc(r, 0)
    for fn in ("wide_alloc", "wide_calloc", "wide_realloc", "mid_alloc", "reg_alloc"):
        if not any(x.startswith("heaptrace: %s in process " % fn) and
                   "returns through a stop (no debug information" in x
                   for x in r.proc.stderr.splitlines()):
            r.fail("-v does not say why %s returns through a stop" % fn)
    check_consistency(r, r.report, custom=FUNCS)
    check_summary(r, r.report, summary_record(r))
    check_pool_heap(r)


def test_pool_no_debug_info():
    """pool.c without its debug information: its functions return through a stop, whose
    trampoline takes the place of their return address; the backtraces of the chunks' mallocs
    made inside them still go on through their callers (new_chunk, pool_alloc, leak_a, main)."""
    prog = without_debug_info("pool")
    r = heaptrace(prog, opts=POOL_SPECS, name="pool-nodebug")
    expect_rc(r, 0)
    check_consistency(r, r.report, custom=POOL_FUNCS)
    check_sites(r, r.report, site_records(r))
    check_summary(r, r.report, summary_record(r))
    check_heap(r, "pool_alloc", heap_record(r, "pool_alloc"))


def test_pool_symbols_file():
    """The same copy with --symbols naming the file it was stripped from: the debug information
    is read there, and the functions return without a stop again."""
    prog = without_debug_info("pool")
    r = heaptrace(prog, opts=POOL_SPECS + ("--symbols=" + target("pool"), "-v"),
                  name="pool-symbols")
    expect_rc(r, 0)
    said = [x for x in r.proc.stderr.splitlines() if "returns through a stop" in x]
    if said:
        r.fail("-v said %r" % said[0])
    check_summary(r, r.report, summary_record(r))
    check_heap(r, "pool_alloc", heap_record(r, "pool_alloc"))


@variants(*OPTS)
def test_pool_keeps_stubs(opt):
    """pool.c's functions take two or three words, as their debug information says: their
    returns move sp as the malloc family's do (no stop, no breakpoint kept for them)."""
    r = heaptrace(target("pool", opt), opts=POOL_SPECS + ("-v",), name="pool-stubs-" + opt)
    expect_rc(r, 0)
    for fn in ("pool_alloc", "pool_calloc", "pool_realloc", "pool_free"):
        said = [x for x in r.proc.stderr.splitlines() if "%s in process" % fn in x]
        if said:
            r.fail("-v said %r" % said[0])
    check_summary(r, r.report, summary_record(r))
