# SPDX-License-Identifier: GPL-2.0-only
"""What the text and folded reports say besides the backtraces: a header line per report (pid,
program, time since the start, which report), the summary's call counts and peak (the JSON
summary's figures of the same run, through one --record log), backtraces cut by --depth marked
in every format, processes kept apart in folded stacks with -f, and an unnamed frame shown by
its module and offset (an offset addr2line resolves to the site in the unstripped build)."""

import json
import os
import re
import shutil

from helpers import Fail, expect_rc, heaptrace, run, target
from test_pprof import offline, recorded

HEADER = re.compile(r"^\[heaptrace\] report for pid (\d+) \((\S+)\), (\d+\.\d{3}) s after start: "
                    r"(.+)$", re.M)


def headers(text):
    return HEADER.findall(text)


def summary_line(text, key):
    m = re.search(r"^\[heaptrace\] %s\s*: (.+)$" % re.escape(key), text, re.M)
    if not m:
        raise Fail("no '%s' line in the text report" % key, text[-2000:])
    return m.group(1)


def size_text(n):
    """The text report's sizes (report.c fmt_size): binary units."""
    if n < 1024:
        return "%d B" % n
    if n < 1048576:
        return "%.3f KiB" % (n / 1024)
    return "%.3f MiB" % (n / 1048576)


def test_text_header_and_summary():
    """demo: one header naming the pid (the JSON report's), the program and "final", as its
    first line; the summary's calls and peak lines are the JSON summary's."""
    r, log = recorded("demo", "O0", fmt="text")
    expect_rc(r, 0)
    text = r.out
    rep = json.loads(offline(r, log, "--format=json"))
    hs = headers(text)
    if len(hs) != 1 or not text.startswith("[heaptrace] report for pid"):
        r.fail("%d header lines, expected one, first: %s" % (len(hs), hs))
    pid, comm, secs, kind = hs[0]
    if int(pid) != rep["pid"] or comm != "demo" or kind != "final":
        r.fail("header %s, expected pid %d, demo, final" % (hs[0], rep["pid"]))
    if abs(float(secs) - rep["summary"]["elapsed_ns"] / 1e9) > 0.0015:
        r.fail("header says %s s, the run took %d ns" % (secs, rep["summary"]["elapsed_ns"]))
    s = rep["summary"]
    want = "%d / %d / %d" % (s["alloc_calls"], s["free_calls"], s["unknown_frees"])
    if summary_line(text, "calls (alloc/free/unknown)") != want:
        r.fail("calls line %r, expected %r" % (summary_line(text, "calls (alloc/free/unknown)"),
                                                want))
    peak = summary_line(text, "peak (size/blocks then/time)")
    if not peak.startswith("%s / %d / " % (size_text(s["peak_live_bytes"]), rep["peak"]["live_blocks"])):
        r.fail("peak line %r, expected %s in %d blocks" % (peak, s["peak_live_bytes"],
                                                           rep["peak"]["live_blocks"]))
    # the offline text report has the same header (the log keeps the times)
    if headers(offline(r, log)) != hs:
        r.fail("the offline report's header differs: %s" % headers(offline(r, log)))
    at_peak = headers(offline(r, log, "--at=peak"))
    if len(at_peak) != 1 or at_peak[0][3] != "at its peak":
        r.fail("report --at=peak headers: %s" % at_peak)


def test_text_header_per_signal():
    """checkpoint usr: the report SIGUSR1 asked for says so, and the last one is the final."""
    r = heaptrace(target("checkpoint"), args=["usr"], fmt="text", name="usr-text")
    expect_rc(r, 0)
    kinds = [h[3] for h in headers(r.out)]
    if not kinds or kinds[0] != "SIGUSR1" or kinds[-1] != "final" or \
            any(k != "SIGUSR2" for k in kinds[1:-1]):
        r.fail("reports %s, expected SIGUSR1, (SIGUSR2,) final" % kinds)


def test_folded_processes_apart():
    """forker -f: every folded stack starts with its process ([forker pid N]); the parent's and
    the child's leaks are under different pids, the ones the JSON report gives them."""
    r = heaptrace(target("forker"), opts=["--follow-fork"], fmt="folded", name="forker-folded")
    expect_rc(r, 0)
    lines = r.out.splitlines()
    labels = [re.match(r"\[(\S+) pid (\d+)\];", line) for line in lines]
    if not lines or not all(labels):
        r.fail("folded stacks without a process label: %s"
               % [line for line, m in zip(lines, labels) if not m][:3])

    def pid_of(fn):
        pids = {int(m.group(2)) for line, m in zip(lines, labels) if ";%s;" % fn in line}
        if len(pids) != 1:
            r.fail("%s under the pids %s, expected one" % (fn, sorted(pids)))
        return pids.pop()

    if pid_of("parent_leak_after") == pid_of("child_leak"):
        r.fail("the parent's and the child's stacks are under one pid")
    if {m.group(1) for m in labels} - {"forker", "sh"}:
        r.fail("process names %s" % sorted({m.group(1) for m in labels}))


def test_depth_cut_marked():
    """leaks with --depth=3: every backtrace is cut (its sites are deeper), so JSON says
    truncated, folded stacks start with [...], text ends each with [...]; with the default
    depth nothing is marked (the deepest stacks of leaks are exactly 8 frames, ending in
    _start: whole)."""
    r, log = recorded("leaks", "O0", opts=["--depth=3"])
    expect_rc(r, 0)
    bts = r.report["backtraces"]
    bad = [b for b in bts if len(b["frames"]) != 3 or b.get("truncated") is not True]
    if not bts or bad:
        r.fail("backtraces not marked truncated at --depth=3: %s" % bad[:2])
    folded = offline(r, log, "--format=folded").splitlines()
    if not folded or not all(line.startswith("[...];") for line in folded):
        r.fail("folded stacks without [...]: %s" % folded[:3])
    text = offline(r, log)
    if text.count("] [...] (cut at --depth=3)\n") != min(len(bts), 10):
        r.fail("%d text backtraces marked [...], expected %d" % (
            text.count("[...] (cut at --depth=3)"), min(len(bts), 10)), text[:3000])
    r2, log2 = recorded("leaks", "O0")
    deep = [b for b in r2.report["backtraces"] if len(b["frames"]) == 8]
    if not deep:
        r2.fail("no backtrace of 8 frames in leaks: the test lost its point")
    if any(b["truncated"] for b in r2.report["backtraces"]):
        r2.fail("whole backtraces marked truncated: %s" % [
            [f["function"] for f in b["frames"]] for b in r2.report["backtraces"]
            if b["truncated"]])
    if "[...]" in offline(r2, log2, "--format=folded"):
        r2.fail("[...] in the folded stacks of whole backtraces")


def test_unnamed_frame_module_offset():
    """The stripped leaks without --symbols: the program's frames have no names, so text shows
    them as "MODULE +0xOFFSET"; addr2line on the unstripped build at OFFSET - 1 (the call)
    names a function of the program's call chains."""
    if not shutil.which("addr2line"):
        raise Fail("addr2line is missing (binutils)")
    prog = target("leaks", "plainstripped")
    r = heaptrace(prog, fmt="text", name="stripped-text")
    expect_rc(r, 0)
    found = re.findall(r"^\s*\d+ \[\s*0x[0-9a-f]+\] (\S+) \+0x([0-9a-f]+)$", r.out, re.M)
    mine = [int(off, 16) for mod, off in found if os.path.realpath(mod) == os.path.realpath(prog)]
    if not mine:
        r.fail("no frame of %s shown as module +offset" % prog)
    p = run(["addr2line", "-f", "-e", target("leaks", "plain")] + ["0x%x" % (o - 1) for o in mine])
    names = set(p.stdout.splitlines()[0::2])
    known = {"main", "load_all", "load_table", "load_index", "alloc_row", "leak_big",
             "leak_small", "leak_calloc", "churn", "_start"}
    if not names or not names <= known:
        r.fail("addr2line names the offsets %s, expected functions of leaks (%s)"
               % (sorted(names), sorted(known)))
