# SPDX-License-Identifier: GPL-2.0-only
"""Backtraces through code without unwind tables (leaks-plain*: no .eh_frame entries for its
code): every frame to main, with the target's own records as the answer, and each frame says
how it was found, as tests/targets/Makefile derives for each build: by CFI from .debug_frame
(-g), by frame records (plainfp, where the ABI fixes their layout), by the stack scan
(plainscan, and plainfp elsewhere)."""

import platform
import re

from helpers import (check_summary, fn_name, heaptrace, expect_rc, site_records, sites,
                     summary_record, target, variants)
from test_basic import full_check, static_run

HOWS = {"cfi", "fp", "scan"}
# where frame records have a fixed layout (arch_ops.fp_reg)
FP_ARCHES = {"x86_64", "aarch64"}


def host_arch():
    m = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def want_how(variant, arch):
    """How frames 2 to main of leaks-VARIANT are found (frame 1, the return address at the
    allocation function's entry, is always "cfi")."""
    if variant == "plainscan":
        return "scan"
    if variant == "plainfp":
        return "fp" if arch in FP_ARCHES else "scan"
    return "cfi"


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


@variants("plain", "plainstatic", "plainos", "plaindeb", "plainfp", "plainscan")
def test_plain_build_full_chains(variant):
    check_hows(plain_run(variant, _Basic), want_how(variant, host_arch()))


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
    check_hows(raw_run(), "cfi")


def check_hows(r, want):
    """Every backtrace that reaches main: frame 0 "entry", frame 1 "cfi", every later frame up
    to main found as want says, none stopped. Backtraces of the C library's start-up (a static
    program's) are the C library's code, as its unwind tables allow (on arm .ARM.exidx, which
    does not take libunwind through all of it): any how."""
    for b in r.report["backtraces"]:
        frames = b["frames"]
        names = [fn_name(f) for f in frames]
        if frames[0].get("how") != "entry":
            r.fail("frame 0 of %s says how=%r, expected \"entry\"" % (names, frames[0].get("how")))
        upto = names.index("main") if "main" in names else 0
        for i, f in enumerate(frames[1:upto + 1], 1):
            expect = "cfi" if i == 1 else want
            if f.get("how") != expect:
                r.fail("frame %d (%s) of %s says how=%r, expected %r"
                       % (i, names[i], names, f.get("how"), expect))
        for f in frames[upto + 1:]:
            if f.get("how") not in HOWS:
                r.fail("frame %s of %s has how=%r" % (fn_name(f), names, f.get("how")))
        if any(f.get("stopped") for f in frames):
            r.fail("a backtrace reaching main is marked stopped: %s" % names)


# where the cached CFI rules step (fallback.c's quick): not arm (libunwind reads .ARM.exidx
# there), not mips64 (elfutils 0.188's libdw has no ABI description for it)
QUICK_ARCHES = {"x86_64", "aarch64"}


def frames_of(r):
    """Every live backtrace as (count, size, frames as function+offset/how), sorted."""
    return sorted((b["count"], b["size"],
                   tuple("%s+%s/%s" % (fn_name(f), f.get("offset"), f.get("how"))
                         for f in b["frames"]))
                  for b in r.report["backtraces"])


def stepped(r):
    """(quick, libunwind) backtrace counts that -v printed."""
    return stepped_remembered(r)[::2]


def stepped_remembered(r):
    """(quick, of them remembered, libunwind) backtrace counts that -v printed."""
    m = re.search(r"^heaptrace: (\d+) backtraces stepped by cached CFI rules \((\d+) of them "
                  r"remembered\), (\d+) by libunwind$", r.proc.stderr, re.M)
    if not m:
        r.fail("-v did not say how the backtraces were stepped")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


@variants("leaks", "leaks-O2", "cxxunwind", "cxxops-O2", "family-O2", "inlined-O2", "demo-O2",
          "twins", "twins-O2")
def test_quick_steps_as_libunwind(name):
    """The steps by cached CFI rules make every backtrace libunwind's steps make (with
    HEAPTRACE_NO_QUICK=1): the same frames, found the same way, the same counts; and where
    they apply they made most of the backtraces."""
    base, _, opt = name.partition("-")
    prog = target(base, opt or "O0")
    quick = heaptrace(prog, opts=["-v"], name=name + "-quick")
    slow = heaptrace(prog, opts=["-v"], name=name + "-slow", env={"HEAPTRACE_NO_QUICK": "1"})
    for r in (quick, slow):
        expect_rc(r, 0)
    if frames_of(quick) != frames_of(slow):
        quick.fail("backtraces differ from libunwind's:\n%s\nagainst\n%s"
                   % (frames_of(quick), frames_of(slow)))
    (q, s), (q0, s0) = stepped(quick), stepped(slow)
    if q0 or not s0:
        slow.fail("HEAPTRACE_NO_QUICK=1 still stepped %d backtraces by cached rules" % q0)
    if host_arch() in QUICK_ARCHES and q <= s:
        quick.fail("only %d of %d backtraces stepped by cached CFI rules" % (q, q + s))
    if host_arch() not in QUICK_ARCHES and q:
        quick.fail("%d backtraces stepped by cached CFI rules on %s" % (q, host_arch()))


@variants("O0", "O2")
def test_remembered_backtrace_not_a_twins(opt):
    """twins: alloc_one mallocs under left and under right, at the same sp and frame pointer
    either way, alternately: a backtrace remembered by its start (unwind/quickmemo.h) must be
    checked against the words its steps read, else every block would be left's or right's.
    Every site exact, each with its own chain."""
    full_check("twins", opt, args=[2000])


@variants("O0", "O2")
def test_remembered_backtrace_whatever_the_frame_pointer(opt):
    """fpvar: alloc_one keeps no frame pointer and holds a variable, different at every call, in
    its register across its malloc, under two callers at the same sp in turns of 16 calls. A
    quick backtrace that never used the register is remembered whatever it held
    (unwind/quickmemo.h): on the arches with quick steps all but the first of a turn (15 in 16)
    could be, 3 in 4 must be; and every site is still exact, each with its own chain."""
    r = full_check("fpvar", opt, args=[2000], opts=["-v"])
    quick, remembered, _ = stepped_remembered(r)
    if host_arch() in QUICK_ARCHES and remembered < quick * 3 // 4:
        r.fail("only %d of %d quick backtraces remembered" % (remembered, quick))
