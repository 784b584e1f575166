# SPDX-License-Identifier: GPL-2.0-only
"""Entry stubs (--mode=stubs, src/stubs.c): traced calls cost the program no ptrace stop, the
ring they are recorded in may fill (the program then waits for heaptrace, never stops), and an
entry that cannot be patched keeps its breakpoint, with the same exact counts. The whole suite
runs in both modes (tests/run.py --modes); these tests look at what only stubs change."""

import re

import helpers
from helpers import OPTS, Skip, summary_record, variants
from test_basic import full_check
from test_threads import threads_run


def stderr_count(r, pattern, what):
    m = re.search(pattern, r.proc.stderr, re.M)
    if not m:
        r.fail("-v did not say how many %s" % what)
    return int(m.group(1))


def stops(r):
    return stderr_count(r, r"^heaptrace: (\d+) breakpoint stops", "breakpoint stops")


def recorded(r):
    return stderr_count(r, r"^heaptrace: (\d+) calls recorded by entry stubs", "calls recorded")


def waits(r):
    return stderr_count(r, r"(\d+) times a stub waited for room", "waits for room")


def need_stubs():
    if helpers.MODE != "stubs":
        raise Skip("entry stubs only (--mode=stubs)")


@variants(*OPTS)
def test_no_stop_per_call(opt):
    """leaks (177 allocations, 110 frees, all through malloc, calloc and free): exact report,
    no breakpoint stop at all, and at least one record per call."""
    need_stubs()
    check_no_stop(full_check("leaks", opt, opts=["-v"]))


def check_no_stop(r):
    """r (-v, its report checked): no breakpoint stop, a record per call (tests/xarch too)."""
    s = summary_record(r)
    if stops(r):
        r.fail("%d breakpoint stops with entry stubs, expected 0" % stops(r))
    if recorded(r) < s["alloc_calls"] + s["free_calls"]:
        r.fail("%d records for %d calls" % (recorded(r), s["alloc_calls"] + s["free_calls"]))


@variants(*OPTS)
def test_breakpoint_mode_stops(opt):
    """--mode=breakpoint: the same exact report, one stop per traced call and nothing recorded
    by stubs (the mode the suite's second pass uses)."""
    if helpers.MODE != "breakpoint":
        raise Skip("breakpoint mode only")
    r = full_check("leaks", opt, opts=["-v"])
    s = summary_record(r)
    if recorded(r):
        r.fail("%d calls recorded by stubs in breakpoint mode" % recorded(r))
    if stops(r) < s["alloc_calls"] + s["free_calls"]:
        r.fail("%d stops for %d calls" % (stops(r), s["alloc_calls"] + s["free_calls"]))


@variants(*OPTS)
def test_full_ring(opt):
    """A reader slowed on purpose (20 ms before each reading): 4 threads x 5000 allocations fill
    the 4 MiB ring, the stubs wait for room (on a futex, never a ptrace stop), and every count
    is still exact."""
    need_stubs()
    check_full_ring(threads_run(opt, 4, 5000, 10, timeout=600, opts=["-v"],
                                env={"HEAPTRACE_TEST_SLOW_READER": "20"}))


def check_full_ring(r):
    """r (-v, its counts checked) filled the ring, and nothing stopped (tests/xarch too)."""
    if not waits(r):
        r.fail("the ring never filled: no stub waited for room")
    if stops(r):
        r.fail("%d breakpoint stops while the ring was full, expected 0" % stops(r))


@variants(*OPTS)
def test_unpatchable_entry_keeps_breakpoint(opt):
    """ownmalloc defines malloc and calloc itself, in the executable, far from the C library:
    malloc in a way no stub may replace (a loop back into its first bytes), so it keeps its
    breakpoint and -v says why; calloc and the rest of the family go through stubs (calloc's
    in a stub page near the executable). Counts are exact."""
    r = full_check("ownmalloc", opt, opts=["-v"])
    if helpers.MODE != "stubs":
        return
    kept = re.findall(r"^heaptrace: (\w+) in process \d+ keeps a breakpoint.*: (.*)$",
                      r.proc.stderr, re.M)
    if ("malloc", "something in the function leads into its first bytes") not in kept:
        r.fail("-v did not say that malloc keeps its breakpoint for its loop: %s" % kept)
    if any(fn == "calloc" for fn, _ in kept):
        r.fail("calloc, which a stub can replace, kept a breakpoint: %s" % kept)
    if not stops(r) or not recorded(r):
        r.fail("expected stops for malloc and records for the rest: %d stops, %d records"
               % (stops(r), recorded(r)))
