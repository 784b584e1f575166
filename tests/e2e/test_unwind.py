# SPDX-License-Identifier: GPL-2.0-only
"""Backtraces through code without unwind tables (leaks-plain: -O2 -g, no .eh_frame entries for
its code, no frame pointers): the stack scan finds every frame to main, with the target's own
records as the answer, and each frame says how it was found."""

from helpers import Fail, fn_name, variants
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


@variants("plain", "plainstatic")
def test_plain_build_full_chains(variant):
    check_hows(plain_run(variant, _Basic))


def check_hows(r):
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
    if not scanned:
        raise Fail("no frame was found by the stack scan: the test proves nothing "
                   "(does leaks-plain have unwind tables?)")
