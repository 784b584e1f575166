# SPDX-License-Identifier: GPL-2.0-only
"""The processes of a -f log (tests/targets/forker.c: five) in the formats that hold one
process, and in diff. report --pid=PID chooses one; without it, heaptrack, pprof, massif, html
and diff refuse a log of several processes in one line that names --pid and the log's pids.
Per process, each viewer's totals are the live run's figures for that process: report --pid
in JSON is the live report; heaptrack_print's leak (and leak per call chain where the frames
have names: forker's processes, not the stripped shell's), pprof's four
totals (and inuse_space at the process's own peak), ms_print's last snapshot are its live
bytes; diff --pid=PARENT,CHILD of the log with itself is, per site, what forker.c says: the
child has child_leak's 2222 bytes the parent has not, and lacks parent_leak_after's 3333."""

import json
import os

from helpers import (Fail, expect_rc, heaptrace, need_heaptrace, one_error_line, run, scratch,
                     target)
import helpers
from test_massif import ROW, ms_print, num
from test_pprof import pprof_top
from test_record import chain_key, heaptrack_print, heaptrack_size


def forker_log():
    """forker -f with --record: (Run, log, {pid: its live JSON report})."""
    need_heaptrace()
    d = scratch("procs-forker")
    log = os.path.join(d, "run.htlog")
    r = heaptrace(target("forker"), opts=["--follow-fork", "--record=%s" % log],
                  name="procs-forker")
    expect_rc(r, 0)
    live = {rep["pid"]: rep for rep in r.reports}
    if len(live) != 5:
        r.fail("%d processes reported live, forker makes 5" % len(live))
    return r, log, live


def ht(r, *args):
    """heaptrace ARGS: the Proc, or Fail if it did not exit 0."""
    p = run([helpers.HEAPTRACE] + list(args))
    if p.rc != 0 or p.timed_out:
        raise Fail("heaptrace %s exited %s" % (" ".join(args), p.rc),
                   p.describe() + "\n" + r.describe())
    return p


def test_procs_need_pid():
    """A log of five processes: each single-file format and diff exit 2 in one line naming
    --pid=PID and the five pids; an unknown --pid too."""
    r, log, live = forker_log()
    out = os.path.join(os.path.dirname(log), "refused")
    for args in (["report", log, "--format=pprof", "--outfile=" + out],
                 ["report", log, "--format=heaptrack", "--outfile=" + out],
                 ["report", log, "--format=massif", "--outfile=" + out],
                 ["report", log, "--format=html", "--outfile=" + out],
                 ["diff", log, log]):
        p = run([helpers.HEAPTRACE] + args)
        one_error_line(p, 2)
        line = p.stderr.strip()
        if "--pid=PID" not in line or "5 processes" not in line or \
                not all(str(pid) in line for pid in live):
            raise Fail("heaptrace %s: %r does not name --pid=PID and the 5 pids"
                       % (" ".join(args[:3]), line))
    p = run([helpers.HEAPTRACE, "report", log, "--pid=1", "--format=json"])
    one_error_line(p, 2)
    line = p.stderr.strip()
    if "no process 1" not in line:
        raise Fail("report --pid=1 says %r" % line)


def test_procs_each_format():
    """Each process chosen by --pid: its JSON is the live report, and heaptrack_print, pprof
    and ms_print give its live figures."""
    r, log, live = forker_log()
    d = os.path.dirname(log)
    for pid, rep in sorted(live.items()):
        s = rep["summary"]
        off = json.loads(ht(r, "report", log, "--pid=%d" % pid, "--format=json").stdout)
        if off != rep:
            keys = sorted(k for k in set(rep) | set(off) if rep.get(k) != off.get(k))
            r.fail("report --pid=%d differs from the live report in %s" % (pid, keys))
        # heaptrack: the leak, and the leak per call chain
        htk = os.path.join(d, "p%d.heaptrack" % pid)
        ht(r, "report", log, "--pid=%d" % pid, "--format=heaptrack", "--outfile=" + htk)
        text, leaked = heaptrack_print(htk, "leaked")
        want = "total memory leaked: %s\n" % heaptrack_size(s["live_bytes"])
        if want not in text:
            r.fail("heaptrack_print of process %d does not say %r" % (pid, want))
        got = {c: n for c, n in leaked.items() if n}
        want = {}
        for b in rep["backtraces"]:
            want[chain_key(b["frames"])] = want.get(chain_key(b["frames"]), 0) + b["size"]
        # per chain where every frame has a name (heaptrack names the others by address):
        # forker's own two processes; the shells' (stripped dash) by their total above
        named = all(fr["function"] for b in rep["backtraces"] for fr in b["frames"])
        if named and got != want:
            r.fail("process %d: heaptrack_print's leak per chain %s, live %s" % (pid, got, want))
        # pprof: four totals, and the process's own peak
        pb = os.path.join(d, "p%d.pb.gz" % pid)
        ht(r, "report", log, "--pid=%d" % pid, "--format=pprof", "--outfile=" + pb)
        for index, key in (("inuse_space", "live_bytes"), ("inuse_objects", "live_blocks"),
                           ("alloc_space", "total_allocated_bytes"),
                           ("alloc_objects", "alloc_calls")):
            _, tot, text = pprof_top(pb, index)
            if tot != s[key]:
                r.fail("process %d: pprof's %s total %d, the live %s %d"
                       % (pid, index, tot, key, s[key]))
        ht(r, "report", log, "--pid=%d" % pid, "--format=pprof", "--at=peak", "--outfile=" + pb)
        _, tot, text = pprof_top(pb, "inuse_space")
        if tot != rep["peak"]["live_bytes"]:
            r.fail("process %d: pprof at its peak %d bytes, the live peak %d"
                   % (pid, tot, rep["peak"]["live_bytes"]))
        # massif: the last snapshot is the heap at the end
        ms = os.path.join(d, "p%d.massif" % pid)
        ht(r, "report", log, "--pid=%d" % pid, "--format=massif", "--outfile=" + ms)
        if s["peak_live_bytes"]:
            snaps, _, text = ms_print(ms)
        else:  # no heap ever (true after its exec): no peak snapshot, which ms_print() wants
            p = run(["ms_print", "--threshold=0", ms])
            if p.rc != 0:
                raise Fail("ms_print exited %s" % p.rc, p.describe())
            snaps = [[int(m.group(1)), num(m.group(3))] for m in map(ROW.match,
                                                                    p.stdout.splitlines()) if m]
        if not snaps or snaps[-1][1] != s["live_bytes"]:
            r.fail("process %d: ms_print's last snapshot %s, live bytes %d"
                   % (pid, snaps[-1][1] if snaps else None, s["live_bytes"]))


def test_procs_diff_parent_child():
    """diff --pid=PARENT,CHILD of the log with itself: per site, the fork child's growth over
    its parent is what forker.c does (child_leak +2222 bytes, parent_leak_after -3333), and the
    totals are the live reports' difference."""
    r, log, live = forker_log()

    def has(rep, fn):
        return any(fr["function"] == fn for b in rep["backtraces"] for fr in b["frames"])

    parent = [p for p, rep in live.items() if has(rep, "parent_leak_after")]
    child = [p for p, rep in live.items() if has(rep, "child_leak")]
    if len(parent) != 1 or len(child) != 1:
        r.fail("the live run has %d parents and %d fork children" % (len(parent), len(child)))
    p = ht(r, "diff", "--pid=%d,%d" % (parent[0], child[0]), "--format=json", log, log)
    dj = json.loads(p.stdout)["diff"]
    for side, pid in (("a", parent[0]), ("b", child[0])):
        if dj[side]["live_bytes"] != live[pid]["summary"]["live_bytes"]:
            r.fail("diff's %s has %d live bytes, process %d had %d"
                   % (side, dj[side]["live_bytes"], pid, live[pid]["summary"]["live_bytes"]))
    got = {b["frames"][1]["function"]: b["bytes_growth"] for b in dj["backtraces"]}
    want = {"child_leak": 2222, "parent_leak_after": -3333}
    if got != want:
        r.fail("diff parent to child per site: %s, forker.c makes %s" % (got, want))
