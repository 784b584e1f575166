# SPDX-License-Identifier: GPL-2.0-only
"""report --format=pprof, read by Google's pprof itself: built once from Debian's Go sources
(golang-github-google-pprof-dev, offline, in GOPATH mode) into BUILD/pprof/. Per function,
pprof -top's cumulative figures of each sample type are the ones the JSON report of the same
log gives (inuse_*: the live backtraces; at --at=peak, the heap at its peak) and the ones the
target knows about itself (alloc_*: tests/targets/history.c's calls per site)."""

import collections
import os
import re
import shutil

from helpers import OPTS, Fail, expect_rc, run, variants
import helpers
from test_record import recorded  # it runs helpers.heaptrace: right in every mode

# test_record's report() holds the HEAPTRACE of the first mode run.py imported it in


def report(log, *opts):
    """heaptrace report LOG OPTS: the Proc."""
    return run([helpers.HEAPTRACE, "report", log] + list(opts))


def offline(r, log, *opts):
    """heaptrace report LOG OPTS: its standard output, or Fail."""
    p = report(log, *opts)
    if p.rc != 0 or p.timed_out:
        raise Fail("heaptrace report exited %s" % p.rc, p.describe() + "\n" + r.describe())
    return p.stdout

GOPATH_SRC = "/usr/share/gocode"


def pprof_exe():
    """Google's pprof, built into BUILD/pprof the first time (a few seconds)."""
    d = os.path.join(helpers.BUILD, "pprof")
    exe = os.path.join(d, "pprof")
    if os.access(exe, os.X_OK):
        return exe
    go = shutil.which("go")
    if not go or not os.path.isdir(os.path.join(GOPATH_SRC, "src/github.com/google/pprof")):
        raise Fail("go or pprof's sources are missing (golang-go, golang-github-google-pprof-dev; "
                   "tests/deps.sh installs them)")
    os.makedirs(d, exist_ok=True)
    env = dict(os.environ, GO111MODULE="off", GOPATH="%s:%s" % (GOPATH_SRC, d),
               GOCACHE=os.path.join(d, "cache"), GOFLAGS="")
    p = run([go, "build", "-o", exe + ".tmp", "github.com/google/pprof"], env_replace=env,
            timeout=600)
    if p.rc != 0:
        raise Fail("building pprof failed", p.describe())
    os.rename(exe + ".tmp", exe)
    return exe


def pprof_top(path, index):
    """pprof -top for one sample type: {function: cum}, and the total."""
    p = run([pprof_exe(), "-top", "-sample_index=" + index, "-nodefraction=0",
             "-edgefraction=0", "-unit=B", path])
    if p.rc != 0:
        raise Fail("pprof -top exited %s" % p.rc, p.describe())
    cum, total = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"Showing nodes accounting for \S+, \S+ of (\d+)B? total", line)
        if m:
            total = int(m.group(1))
        m = re.match(r"\s*(\d+)B?\s+\S+%\s+\S+%\s+(\d+)B?\s+\S+%\s+(.+)$", line)
        if m:
            cum[m.group(3)] = int(m.group(2))
    if total is None:
        raise Fail("pprof -top printed no total", p.describe())
    return cum, total, p.stdout


def bad(r, reason, details=""):
    raise Fail(reason, details + "\n" + r.describe())


def frame_name(fr):
    return fr["function"] or fr["module"] or "??"


def per_function(backtraces, key):
    """Cumulative key per function over backtraces, each function once per backtrace."""
    cum = collections.Counter()
    for b in backtraces:
        names = {frame_name(fr) for fr in b["frames"]}
        # pprof marks the functions of inlined lines "(inline)"
        names |= {(i["function"] or "??") + " (inline)" for fr in b["frames"]
                  for i in fr.get("inlined", [])}
        for name in names:
            cum[name] += b[key]
    return {k: v for k, v in cum.items() if v}


def pprof_file(r, log, *opts):
    path = os.path.join(os.path.dirname(log), "run.pb.gz")
    p = report(log, "--format=pprof", "--outfile=%s" % path, *opts)
    if p.rc != 0:
        raise Fail("report --format=pprof exited %s" % p.rc, p.describe() + "\n" + r.describe())
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            bad(r, "report --format=pprof did not write a gzip file")
    return path


def compare(r, what, got, want, text):
    got = {k: v for k, v in got.items() if v}
    if got != want:
        keys = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        bad(r, "%s per function differs from the JSON report in %s" % (what, keys),
               "pprof: %s\nwant: %s\n%s" % (got, want, text))


@variants(*OPTS)
def test_pprof_inuse_same_as_json(opt):
    """leaks: pprof's inuse_space and inuse_objects per function are the JSON report's live
    bytes and blocks per function, and its totals the summary's."""
    r, log = recorded("leaks", opt)
    expect_rc(r, 0)
    path = pprof_file(r, log)
    off = r.report
    for index, key, total in (("inuse_space", "size", "live_bytes"),
                              ("inuse_objects", "count", "live_blocks")):
        cum, tot, text = pprof_top(path, index)
        if tot != off["summary"][total]:
            bad(r, "pprof's %s total is %d, the report's %s %d" % (index, tot, total,
                                                                 off["summary"][total]), text)
        compare(r, index, cum, per_function(off["backtraces"], key), text)
    for index, total in (("alloc_space", "total_allocated_bytes"),
                         ("alloc_objects", "alloc_calls")):
        _, tot, text = pprof_top(path, index)
        if tot != off["summary"][total]:
            bad(r, "pprof's %s total is %d, the report's %s %d" % (index, tot, total,
                                                                 off["summary"][total]), text)


def test_pprof_history_alloc_and_peak():
    """history: alloc_objects and alloc_space per site are the target's own calls and bytes
    (freed backtraces included); with --at=peak, inuse_space per function is the JSON peak."""
    r, log = recorded("history", "O0")
    expect_rc(r, 0)
    path = pprof_file(r, log)
    views = [x for x in r.records if x["kind"] == "view" and x["name"] == "calls"]
    objects, tot_objects, text1 = pprof_top(path, "alloc_objects")
    space, tot_space, text2 = pprof_top(path, "alloc_space")
    for v in views:
        if objects.get(v["leaf"]) != v["alloc_calls"] or space.get(v["leaf"]) != v["total_size"]:
            bad(r, "pprof gives %s %s calls and %s bytes, the target made %d and %d"
                   % (v["leaf"], objects.get(v["leaf"]), space.get(v["leaf"]),
                      v["alloc_calls"], v["total_size"]), text1 + text2)
    if tot_objects != r.report["summary"]["alloc_calls"] or \
            tot_space != r.report["summary"]["total_allocated_bytes"]:
        bad(r, "pprof's alloc totals %d/%d differ from the summary" % (tot_objects, tot_space))
    path = pprof_file(r, log, "--at=peak")
    peak = r.report["peak"]
    cum, tot, text = pprof_top(path, "inuse_space")
    if tot != peak["live_bytes"]:
        bad(r, "pprof at the peak: %d bytes, the JSON peak %d" % (tot, peak["live_bytes"]), text)
    compare(r, "inuse_space at the peak", cum, per_function(peak["backtraces"], "size"), text)


def test_pprof_mappings_have_build_ids():
    """The profile's mappings name the modules with their build-ids (pprof -raw shows them)."""
    r, log = recorded("leaks", "O0")
    path = pprof_file(r, log)
    p = run([pprof_exe(), "-raw", path])
    if p.rc != 0:
        raise Fail("pprof -raw exited %s" % p.rc, p.describe())
    exe = os.path.realpath(helpers.target("leaks", "O0"))
    rows = [line for line in p.stdout.splitlines() if exe in line or "libc.so" in line]
    if not any(re.search(r"\b[0-9a-f]{40}\b", line) for line in rows if exe in line):
        bad(r, "no mapping of %s with its build-id" % exe, p.stdout[-3000:])
    if not any("libc.so" in line for line in rows):
        bad(r, "no mapping of the C library", p.stdout[-3000:])


def test_pprof_stdin():
    """--format=pprof of standard input works (the log is read once)."""
    r, log = recorded("leaks", "O0")
    out = os.path.join(os.path.dirname(log), "stdin.pb.gz")
    with open(log, "rb") as f:
        p = run([helpers.HEAPTRACE, "report", "--format=pprof", "--outfile=" + out, "-"],
                stdin=f)
    if p.rc != 0:
        raise Fail("report --format=pprof - exited %s" % p.rc, p.describe())
    _, tot, text = pprof_top(out, "inuse_space")
    if tot != r.report["summary"]["live_bytes"]:
        bad(r, "pprof of stdin: %d bytes live, the report %d" % (tot,
                                                                 r.report["summary"]["live_bytes"]))
