# SPDX-License-Identifier: GPL-2.0-only
"""Inlined code in backtraces (tests/targets/inlined.c): the four allocation sites of build()
are in always_inline helpers, so the line table gives the helper's malloc line for all four.
Each frame 1 must read build at the line of its own call, with the inlined helpers (and the
chain raw_block <- pair_block for the pair) listed innermost first at their lines, in JSON, text,
folded stacks, the offline report of a log and pprof. Return addresses are looked up at the
call (pc - 1), so _start never gets a line of the code after its call."""

import os
import re

import helpers
from helpers import (OPTS, Fail, check_sites, expect_rc, site_lines, site_records,
                     variants)
from test_pprof import offline, pprof_file, pprof_top, recorded


def call_lines():
    """{size: (callee, line)} from the "call(CALLEE) SIZE" markers of inlined.c."""
    out = {}
    with open(os.path.join(helpers.TARGETS_SRC, "inlined.c")) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"call\((\w+)\) (\d+)", line)
            if m:
                out[int(m.group(2))] = (m.group(1), n)
    return out


def want_chain(size):
    """The inlined list and the line of build expected for the site of size bytes."""
    sites = site_lines("inlined")
    callee, line = call_lines()[size]
    chain = [{"function": "raw_block", "file": "inlined.c", "line": sites["raw_block"][1]}]
    if callee == "pair_block":
        chain.append({"function": "pair_block", "file": "inlined.c",
                      "line": sites["pair_block"][1]})
    return chain, line


def check_start_frames(r, rep):
    for b in rep["backtraces"]:
        for fr in b["frames"]:
            if fr["function"] == "_start" and fr["line"] is not None and fr["file"] != "start.S":
                r.fail("_start at %s:%s, a line that is not its own" % (fr["file"], fr["line"]))


@variants(*OPTS)
def test_inline_chains(opt):
    r, log = recorded("inlined", opt)
    expect_rc(r, 0)
    rep = r.report
    check_sites(r, rep, site_records(r))
    check_start_frames(r, rep)
    by_size = {b["size"]: b for b in rep["backtraces"] if len(b["frames"]) > 1
               and b["frames"][1]["function"] == "build"}
    if sorted(by_size) != sorted(call_lines()):
        r.fail("build's sites: %s bytes, expected %s" % (sorted(by_size), sorted(call_lines())))
    for size, b in sorted(by_size.items()):
        chain, line = want_chain(size)
        fr = b["frames"][1]
        if fr.get("inlined") != chain or (fr["file"], fr["line"]) != ("inlined.c", line):
            r.fail("the %d-byte site: build at %s:%s inlining %s; expected inlined.c:%d "
                   "inlining %s" % (size, fr["file"], fr["line"], fr.get("inlined"), line, chain))
    if len({b["frames"][1]["line"] for b in by_size.values()}) != 4:
        r.fail("the four sites do not have four lines")
    if any("inlined" in fr for b in by_size.values() for fr in b["frames"][2:3]):
        r.fail("main has inlined frames it does not have")
    # the same from the log, and in the other formats
    off = offline(r, log, "--format=json")
    if off.strip() != r.out.strip():
        r.fail("the offline report differs from the live one")
    folded = offline(r, log, "--format=folded")
    if "build;pair_block;raw_block;malloc 48\n" not in folded or \
            "build;raw_block;malloc 16\n" not in folded:
        raise Fail("folded stacks without the inlined frames", folded)
    text = offline(r, log)
    addr = "%14s" % by_size[48]["frames"][1]["address"]
    lines = site_lines("inlined")
    pair = ("   [%s] raw_block (inlined.c:%d) [inlined]\n"
            "   [%s] pair_block (inlined.c:%d) [inlined]\n"
            " 1 [%s] build +0x" % (addr, lines["raw_block"][1], addr, lines["pair_block"][1],
                                   addr))
    if pair not in text:
        raise Fail("the text report does not show the pair's inline chain", text[:3000])
    path = pprof_file(r, log)
    cum, _, ptext = pprof_top(path, "inuse_space")
    # pprof marks the functions of inlined lines so
    want = {"raw_block (inline)": 160, "pair_block (inline)": 48, "build": 160}
    if {k: cum.get(k) for k in want} != want:
        raise Fail("pprof: %s, expected %s" % ({k: cum.get(k) for k in want}, want), ptext)
