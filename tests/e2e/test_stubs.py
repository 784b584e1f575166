# SPDX-License-Identifier: GPL-2.0-only
"""Entry stubs (--mode=stubs: src/patch/stubs.c, the ring read by src/account/ring.c): traced
calls cost the program no ptrace stop, the ring they are recorded in may fill (the program then
waits for heaptrace, never stops), and an entry that cannot be patched keeps its breakpoint, with
the same exact counts. The whole suite runs in both modes (tests/run.py --modes); these tests
look at what only stubs change, and at what a late reading of the ring must not change: the
times of the calls."""

import json
import os
import re

import helpers
from helpers import HEAPTRACE, OPTS, Fail, Skip, run, summary_record, variants
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
    the 4 MiB ring, the stubs wait for room (on a futex, never a ptrace stop; --max-stall long
    enough that no call goes unrecorded), and every count is still exact."""
    need_stubs()
    check_full_ring(threads_run(opt, 4, 5000, 10, timeout=600, opts=["-v", "--max-stall=60000"],
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


@variants(*OPTS)
def test_stops_after_earlier_records(opt):
    """mixedstops: 8 threads (more than this machine's CPUs) each make 5,000 malloc/free pairs
    through stubs and 5,000 posix_memalign/free pairs, posix_memalign on a breakpoint (a stop at
    its entry and at its return). A thread preempted while its stub writes a record must not let
    another thread's stop be taken before the calls that thread recorded earlier (src/trace/held.c):
    counts exact against the program's own and a 1-iteration run (but for the frees at each
    thread's exit of the chunks its cache holds, unknown to heaptrace, which the aligned blocks
    make more numerous than in that run: 36 per thread here, 5 after 1 iteration)."""
    r = threads_run(opt, 8, 5000, 4, timeout=300, opts=["-v"], name="mixedstops",
                    exact_unknown=False)
    if helpers.MODE != "stubs":
        return
    kept = re.findall(r"^heaptrace: (\w+) in process \d+ keeps a breakpoint", r.proc.stderr,
                      re.M)
    if "posix_memalign" not in kept or "malloc" in kept:
        r.fail("expected posix_memalign alone on a breakpoint, malloc on a stub: kept %s" % kept)


# tests/targets/freetimes.c: FREED_N early_block blocks of FREED_SIZE, all freed, then a quiet
# phase between its "freed" and "woke" stamps, then one mark_block of MARK_SIZE.
FREED_N, FREED_SIZE, MARK_SIZE = 4, 65536, 1234
# every record read at least 1 s after it was written (src/account/ring.c: slow_reader), more than
# freetimes' quiet phase: a free dated when it was read would come after mark_block's malloc
LATE_READER = {"HEAPTRACE_TEST_SLOW_READER": "1000"}


@variants(*OPTS)
def test_free_times_exact(opt):
    """Each record carries its own time: with records read late on purpose, freetimes' frees
    are dated before its quiet phase, as the program stamped them, in --trace-calls, in report
    --calls and in the timeline of the --record log (in breakpoint mode every call is seen at
    its stop, so the times are exact there too)."""
    check_free_times(free_times_run(opt))


def free_times_run(opt):
    return full_check("freetimes", opt, opts=["--record=log", "--trace-calls"],
                      env=LATE_READER)


def calls_of(text):
    return [o for o in (json.loads(line) for line in text.splitlines() if line.strip())
            if "call" in o]


def check_free_times(r):
    """r: freetimes under free_times_run (tests/xarch too). The quiet phase lasted, by the
    program's own clock, q = woke - freed; heaptrace's times must see at least q / 2 between
    every early_block free and mark_block's malloc (exact times give q: the slack is for the
    conversion of the stubs' clock, never for load, which stretches both clocks alike)."""
    stamps = {x["name"]: x["ns"] for x in r.records if x["kind"] == "stamp"}
    if set(stamps) != {"freed", "woke"}:
        r.fail("freetimes wrote the stamps %s" % sorted(stamps))
    quiet = stamps["woke"] - stamps["freed"]
    log = os.path.join(os.path.dirname(r.outfile), "log")
    p = run([HEAPTRACE, "report", log, "--calls", "--format=json"])
    if p.rc != 0:
        raise Fail("heaptrace report --calls exited %s" % p.rc, p.describe())
    live = calls_of(r.out or "")
    if calls_of(p.stdout) != live:
        r.fail("report --calls differs from the live --trace-calls")
    marks = [i for i, c in enumerate(live) if c["call"] == "malloc" and c["size"] == MARK_SIZE]
    mark = [live[i]["elapsed_ns"] for i in marks]
    before = live[:marks[0]] if marks else live  # mark_block may reuse a freed address
    made = [c["result"] for c in before if c["call"] == "malloc" and c["size"] == FREED_SIZE]
    frees = [c["elapsed_ns"] for c in before if c["call"] == "free" and c["address"] in made]
    if len(made) != FREED_N or len(frees) != FREED_N or len(mark) != 1:
        r.fail("calls: %d early_block mallocs, %d of their frees, %d mark_block mallocs"
               % (len(made), len(frees), len(mark)))
    late = [f for f in frees if mark[0] - f < quiet // 2]
    if late:
        r.fail("frees dated %s ns, mark_block's malloc at %d ns: the program's quiet phase of "
               "%d ns between them is missing (a free dated when it was read?)"
               % (late, mark[0], quiet))
    check_quiet_timeline(r, log, max(frees), mark[0])


def check_quiet_timeline(r, log, freed, mark):
    """The --record log's timeline: no interval inside (freed, mark) holds the freed blocks."""
    p = run([HEAPTRACE, "report", log, "--timeline", "--format=json"])
    if p.rc != 0:
        raise Fail("heaptrace report --timeline exited %s" % p.rc, p.describe())
    tl = json.loads(p.stdout.splitlines()[-1])["timeline"]
    inside = [x for x in tl["points"]
              if x["elapsed_ns"] - tl["interval_ns"] >= freed and x["elapsed_ns"] <= mark]
    if not inside:
        r.fail("no timeline interval of %d ns inside the quiet phase (%d, %d)"
               % (tl["interval_ns"], freed, mark))
    held = [x for x in inside if x["live_bytes"] >= FREED_N * FREED_SIZE]
    if held:
        r.fail("the timeline holds the freed blocks in the quiet phase: %s" % held)
