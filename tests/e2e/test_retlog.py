# SPDX-License-Identifier: GPL-2.0-only
"""Returns logged without a stop (src/target/retlog.c): the same reports as with a stop at every return
(HEAPTRACE_NO_LOGTRAMP=1 turns the logging trampoline off), and blocks dated from their call even
when heaptrace reads the return much later. tests/xarch runs check_logged on every architecture."""

import platform
import re

import helpers
from helpers import OPTS, summary_record, variants
from test_basic import full_check
from test_threads import threads_run

LOGGING_ARCHES = ("x86_64", "aarch64", "arm", "mips64")  # all heaptrace runs on
LOGS = platform.machine() in LOGGING_ARCHES


def check_logged(r, logs):
    """r ran with -v: most allocations returned without a stop if logs, none otherwise.
    Return the number. With entry stubs (--mode=stubs), every call is recorded without a stop
    whatever the trampoline: the record count says so."""
    if helpers.MODE == "stubs":
        m = re.search(r"^heaptrace: (\d+) calls recorded by entry stubs", r.proc.stderr, re.M)
        allocs = summary_record(r)["alloc_calls"]
        if not m or int(m.group(1)) < allocs:
            r.fail("-v did not say that entry stubs recorded the %d allocations" % allocs)
        return int(m.group(1))
    m = re.search(r"^heaptrace: (\d+) returns logged without a stop$", r.proc.stderr, re.M)
    if not m:
        r.fail("-v did not say how many returns were logged")
    n, allocs = int(m.group(1)), summary_record(r)["alloc_calls"]
    if logs and n < allocs // 2:
        r.fail("only %d returns logged for %d allocations" % (n, allocs))
    if not logs and n:
        r.fail("%d returns logged where returns should stop" % n)
    return n


def traced(name, opt, logged, args=()):
    """Run NAME with -v, logging returns or not; check the report exactly against what the
    target says it did, and how the returns were caught."""
    r = full_check(name, opt, args=args, opts=["-v"],
                   env=None if logged else {"HEAPTRACE_NO_LOGTRAMP": "1"})
    return r, check_logged(r, logged and LOGS)


@variants(*OPTS)
def test_family_logged_and_trapped(opt):
    """Every function of the family, both ways: the same exact report."""
    traced("family", opt, True)
    traced("family", opt, False)


@variants(*OPTS)
def test_threads_trapped(opt):
    """test_threads' stress with a stop at every return (its own runs log them)."""
    threads_run(opt, 8, 20000, 10, timeout=600, env={"HEAPTRACE_NO_LOGTRAMP": "1"})


@variants(*OPTS)
def test_age_from_the_call(opt):
    """quiet's only block returns, then nothing stops for 600 ms: its age counts them."""
    for logged in (True, False):
        r, _ = traced("quiet", opt, logged)
        rep = r.report
        ages = [bt["age_ns"] for bt in rep["backtraces"]
                if any(f.get("function") == "born_early" for f in bt["frames"])]
        if len(ages) != 1:
            r.fail("expected one backtrace through born_early, got %d" % len(ages))
        if not 600e6 <= ages[0] <= rep["summary"]["elapsed_ns"]:
            r.fail("age_ns %d: not between the 600 ms the block lived quietly and the run's "
                   "%d ns" % (ages[0], rep["summary"]["elapsed_ns"]))
