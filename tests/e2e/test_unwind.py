# SPDX-License-Identifier: GPL-2.0-only
"""Backtraces through code without unwind tables (leaks-plain: -O2 -g, no .eh_frame entries for
its code, no frame pointers): the stack scan finds every frame to main, with the target's own
records as the answer, and each frame says how it was found."""

from helpers import (Fail, check_summary, fn_name, heaptrace, expect_rc, site_records, sites,
                     summary_record, target, variants)
from test_basic import full_check, static_run

HOWS = {"cfi", "fp", "scan"}


def plain_run(variant, basic):
    """leaks-VARIANT traced, with test_basic's checks (basic: that module): every site and count
    exact, each chain to main as the target records it; static, the C library's start-up
    blocks reached from __libc_start_main too."""
    if "static" in variant:
        return basic.static_run(variant, "leaks", libc_startup_only=True)[1]
    return basic.full_check("leaks", variant)


class _Basic:
    full_check = staticmethod(full_check)
    static_run = staticmethod(static_run)


@variants("plain", "plainstatic", "plainos", "plaindeb")
def test_plain_build_full_chains(variant):
    check_hows(plain_run(variant, _Basic))


def subsequence(short, full):
    it = iter(full)
    return all(name in it for name in short)


def raw_run():
    """leaks-plainraw (-O2 -g alone): inlining and tail calls drop frames the source has, so
    each live site's chain need only be a part of a recorded chain ending at main (and have its
    block size); but each site belongs to one record, the records' counts and sizes add up
    exactly (no two sites merged), and the summary is exact."""
    r = heaptrace(target("leaks", "plainraw"), name="leaks-plainraw")
    expect_rc(r, 0)
    rep = r.report
    recs = site_records(r)
    got = {i: [0, 0] for i in range(len(recs))}
    for s in sites(rep):
        if not s.reaches_main:
            r.fail("%s does not reach main" % s.key())
        # a tail call from main (leak_small's "return malloc(16)") leaves chain "main" alone:
        # the target's sites differ in block size too
        owners = [i for i, rec in enumerate(recs) if fn_name({"function": rec["fn"]}) == s.fn
                  and subsequence(s.chain, rec["chain"].split(","))
                  and s.chain[-1:] == ["main"]
                  and s.size * rec["count"] == rec["bytes"] * s.count]
        if len(owners) != 1:
            r.fail("%s belongs to %d recorded sites" % (s.key(), len(owners)))
        got[owners[0]][0] += s.count
        got[owners[0]][1] += s.size
    for i, rec in enumerate(recs):
        if got[i] != [rec["count"], rec["bytes"]]:
            r.fail("%s <- %s: %d blocks, %d bytes live; the target made %d, %d" % (
                rec["fn"], rec["chain"], got[i][0], got[i][1], rec["count"], rec["bytes"]))
    check_summary(r, rep, summary_record(r))
    return r


def test_plain_raw_sites_not_merged():
    check_hows(raw_run(), need_scan=False)


def check_hows(r, need_scan=True):
    """Every frame's how known, some found by the scan, none that reaches main stopped."""
    scanned = 0
    for b in r.report["backtraces"]:
        frames = b["frames"]
        if frames[0].get("how") != "entry":
            r.fail("frame 0 of %s says how=%r, expected \"entry\""
                   % (fn_name(frames[0]), frames[0].get("how")))
        for f in frames[1:]:
            if f.get("how") not in HOWS:
                r.fail("frame %s has how=%r" % (fn_name(f), f.get("how")))
            scanned += f["how"] == "scan"
        if any(f.get("stopped") for f in frames):
            r.fail("a backtrace reaching main is marked stopped: %s"
                   % [fn_name(f) for f in frames])
    if need_scan and not scanned:
        raise Fail("no frame was found by the stack scan: the test proves nothing "
                   "(does leaks-plain have unwind tables?)")
