# SPDX-License-Identifier: GPL-2.0-only
"""report --format=massif, read by valgrind's own ms_print (Debian's valgrind): on history
(tests/targets/history.c: a 2 MB peak in the middle, then freed) its largest snapshot is the
report's peak, the snapshot it marks as the peak has the JSON peak's bytes per caller (frame 1),
and the last one the bytes live at the end, per caller too."""

import collections
import os
import re
import shutil

from helpers import Fail, expect_rc, one_error_line, run
import helpers
from test_pprof import recorded, report

ROW = re.compile(r"^\s*(\d+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)$")
CHILD = re.compile(r"^->\d+\.\d+% \(([\d,]+)B\) 0x[0-9A-F]+: (\S+)")


def num(s):
    return int(s.replace(",", ""))


def ms_print(path):
    """ms_print --threshold=0: [(snapshot, total, {caller: bytes} or None)] and the peak's
    number."""
    exe = shutil.which("ms_print")
    if not exe:
        raise Fail("ms_print is missing (Debian's valgrind)")
    p = run([exe, "--threshold=0", path])
    if p.rc != 0:
        raise Fail("ms_print exited %s" % p.rc, p.describe())
    m = re.search(r"Detailed snapshots: \[(.*)\]", p.stdout)
    peak = re.search(r"(\d+) \(peak\)", m.group(1)) if m else None
    if not peak:
        raise Fail("ms_print shows no peak snapshot", p.stdout[:3000])
    snaps = []
    for line in p.stdout.splitlines():
        row = ROW.match(line)
        if row:
            snaps.append([int(row.group(1)), num(row.group(3)), None])
            continue
        child = CHILD.match(line)
        if child and snaps:
            if snaps[-1][2] is None:
                snaps[-1][2] = collections.Counter()
            snaps[-1][2][child.group(2)] += num(child.group(1))
    return snaps, int(peak.group(1)), p.stdout


def callers(backtraces, key):
    out = collections.Counter()
    for b in backtraces:
        out[b["frames"][1]["function"]] += b[key]
    return dict(out)


def test_massif_history():
    r, log = recorded("history", "O0")
    expect_rc(r, 0)
    path = os.path.join(os.path.dirname(log), "massif.out")
    p = report(log, "--format=massif", "--outfile=" + path)
    if p.rc != 0:
        raise Fail("report --format=massif exited %s" % p.rc, p.describe())
    snaps, peak_num, text = ms_print(path)
    rep = r.report
    peak = rep["peak"]
    if max(s[1] for s in snaps) != rep["summary"]["peak_live_bytes"]:
        raise Fail("ms_print's largest snapshot holds %d bytes, the report's peak is %d"
                   % (max(s[1] for s in snaps), rep["summary"]["peak_live_bytes"]), text[:4000])
    at_peak = [s for s in snaps if s[0] == peak_num]
    if not at_peak or at_peak[0][1] != peak["live_bytes"] or \
            dict(at_peak[0][2] or {}) != callers(peak["backtraces"], "size"):
        raise Fail("the peak snapshot: %s, expected %d bytes, %s" % (
            at_peak, peak["live_bytes"], callers(peak["backtraces"], "size")), text[:4000])
    last = snaps[-1]
    if last[1] != rep["summary"]["live_bytes"] or \
            dict(last[2] or {}) != callers(rep["backtraces"], "size"):
        raise Fail("the last snapshot: %s, expected %d bytes, %s" % (
            last, rep["summary"]["live_bytes"], callers(rep["backtraces"], "size")), text[-3000:])
    times = [s[0] for s in snaps]
    if times != list(range(len(snaps))):
        raise Fail("snapshots out of order: %s" % times[:20])


def test_massif_refuses_at():
    """--format=massif covers the whole run: with --at it is a usage error (exit 1)."""
    r, log = recorded("history", "O0")
    one_error_line(run([helpers.HEAPTRACE, "report", "--format=massif", "--at=peak", log]), 1,
                   ["--at"])
