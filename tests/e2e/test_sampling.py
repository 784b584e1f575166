# SPDX-License-Identifier: GPL-2.0-only
"""--sample-bytes=N (src/heap/table.h: TABLE_SCALED): an allocation of s bytes is taken with
probability 1/k, k = ceil(N/s) (always at s >= N), and a taken block counts as k blocks in its
backtrace's figures. On tests/targets/sampling.c, whose sites keep known numbers of blocks of
one size each: the summary stays exact (every call and block is counted, and a free of a block
not taken is known); each site's estimate lies within 5 standard deviations of what the target
made (each block's estimate is k with probability 1/k, else 0: variance k - 1 per block), a
site at or above N exactly; and -v says how many calls were taken and where that was decided
(the x86_64 entry stubs decide for calls with one size argument)."""

import math
import platform
import re

import helpers
from helpers import (Skip, check_summary, expect_rc, heaptrace, match_record, one_error_line, run,
                     site_records, summary_record, target)

N = 4096
PERCENT = 100  # of the target's base counts (the cross guests take fewer)


def odds(size):
    return 1 if size >= N else -(-N // max(size, 1))


def sampled(opts=(), fmt="json", percent=PERCENT):
    r = heaptrace(target("sampling"), args=[percent], fmt=fmt,
                  opts=["-v", "--sample-bytes=%d" % N] + list(opts))
    expect_rc(r, 0)
    return r


def said(r):
    """(taken, not taken, decided in the stubs) from -v."""
    m = re.search(r"^heaptrace: --sample-bytes=(\d+): (\d+) allocations taken, (\d+) not "
                  r"\((\d+) decided in entry stubs\)$", r.proc.stderr, re.M)
    if not m or int(m.group(1)) != N:
        r.fail("-v did not say what --sample-bytes=%d took" % N)
    return int(m.group(2)), int(m.group(3)), int(m.group(4))


def check_estimates(r, stubs_decide):
    """The summary exact, every site's estimated blocks within 5 sigma of the target's count
    (its bytes that count times the site's one size), the sites at or above N exact, nothing
    shown for the blocks not taken; -v's counts add up to the calls, most were not taken, and
    the entry stubs decided some if and only if stubs_decide."""
    check_summary(r, r.report, summary_record(r))
    if r.report["summary"].get("sample_bytes") != N:
        r.fail("the JSON summary does not say sample_bytes %d" % N)
    errors = []
    for rec in site_records(r):
        found = match_record(r.report, rec)
        n, size = rec["count"], rec["bytes"] // rec["count"]
        k = odds(size)
        est = sum(s.count for s in found)
        est_bytes = sum(s.size for s in found)
        sigma = math.sqrt(n * (k - 1))
        if abs(est - n) > 5 * sigma or est_bytes != est * size:
            errors.append("%s <- %s: %d blocks, %d bytes estimated; made %d of %d bytes "
                          "(k %d, 5 sigma %.0f)" % (rec["fn"], rec["chain"], est, est_bytes, n,
                                                     size, k, 5 * sigma))
    if errors:
        r.fail("; ".join(errors))
    for bt in r.report["backtraces"]:
        if not bt["frames"] or bt["frames"][0].get("address") == "0x1":
            r.fail("a backtrace of the blocks not taken is shown: %s" % bt)
    taken, not_taken, in_stubs = said(r)
    calls = r.report["summary"]["alloc_calls"]
    if taken + not_taken != calls or taken * 5 > calls:
        r.fail("-v: %d taken and %d not, of %d allocation calls" % (taken, not_taken, calls))
    if stubs_decide != (in_stubs > 0):
        r.fail("%d calls decided in the entry stubs (mode %s)" % (in_stubs, helpers.MODE))


def test_estimates_within_error():
    """check_estimates, in both modes (the x86_64 stubs decide for malloc and realloc)."""
    check_estimates(sampled(), helpers.MODE == "stubs" and platform.machine() == "x86_64")


def test_text_report_says_so():
    """The text report's summary says the figures are estimates, and of what."""
    if helpers.MODE != "stubs":
        raise Skip("the same report in both modes")
    r = sampled(fmt="text")
    if not re.search(r"^\[heaptrace\] sampled \(--sample-bytes\)\s+: 1 allocation in %d bytes "
                     r"on average: each backtrace's figures are estimates" % N, r.out or "", re.M):
        r.fail("the text report does not say it was sampled")


def test_bad_values():
    """--sample-bytes must be 1 to 2^40, and goes with none of --sample, --record,
    --trace-calls: exit 1, one line."""
    if helpers.MODE != "stubs":
        raise Skip("options are read before any mode")
    helpers.need_heaptrace()
    prog = target("sampling")
    for opts, word in ((["--sample-bytes=0"], "invalid --sample-bytes"),
                       (["--sample-bytes=x"], "invalid --sample-bytes"),
                       (["--sample-bytes=%d" % (2 ** 40 + 1)], "invalid --sample-bytes"),
                       (["--sample-bytes=64", "--sample=2"], "goes with none of"),
                       (["--sample-bytes=64", "--record=/dev/null"], "goes with none of"),
                       (["--sample-bytes=64", "--trace-calls"], "goes with none of")):
        one_error_line(run([helpers.HEAPTRACE] + opts + ["--", prog]), 1, [word])
