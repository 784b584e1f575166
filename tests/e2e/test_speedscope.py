# SPDX-License-Identifier: GPL-2.0-only
"""report --format=pprof, opened in speedscope (the npm package, pinned in tests/html/, its
built app loaded by file:// in Debian's headless chromium, tests/html/speedscope.mjs): the
profile is given to the welcome page's file input as a user would, then speedscope's own Export
button saves its model of the profile and its Sandwich view is read.

speedscope shows one sample type of a pprof profile: the profile's default_sample_type, else
the last one (its pprof importer, in the bundle of speedscope 1.25.0); heaptrace's default and
last are both inuse_space, so speedscope shows the live bytes, and alloc_* and inuse_objects
cannot be seen there. Of a location's lines it keeps the last (the outermost function, at the
line of the inlined call), so inlined functions do not appear as frames of their own.

Checked: the whole profile's weight is the JSON report's live bytes (at --at=peak, the peak's),
each function's total and self weight in the export are the JSON report's live bytes per
function (each function once per backtrace; self: where it is the innermost frame), and the
Sandwich table shows those figures in speedscope's byte format."""

import collections
import json
import os

from helpers import OPTS, TIMEOUT, Fail, expect_rc, run, variants
import helpers
from test_html import chromium, tests_html_dir
from test_pprof import pprof_file
from test_record import recorded


def open_in_speedscope(path, shot=None):
    """What speedscope shows of the profile at path (speedscope.mjs's JSON)."""
    exe = chromium()
    argv = ["node", os.path.join(tests_html_dir(), "speedscope.mjs"), path]
    if shot:
        argv.append("--screenshot=%s" % shot)
    p = run(argv, env={"CHROMIUM": exe}, timeout=TIMEOUT)
    if p.rc != 0 or p.timed_out:
        raise Fail("speedscope could not open %s" % path, p.describe())
    v = json.loads(p.stdout.strip().splitlines()[-1])
    if v["errors"]:
        raise Fail("console errors in speedscope: %s" % v["errors"][:5])
    if v["requests"]:
        raise Fail("speedscope made requests: %s" % v["requests"][:5])
    if not v["title"].startswith(os.path.basename(path)):
        raise Fail("speedscope's title is %r, not the file's name" % v["title"])
    return v


def export_weights(v):
    """From speedscope's export: (unit, total, {function: total}, {function: self}).
    The export of a pprof import is one "evented" profile: frames open (O) and close (C) at
    weights; a function's total is the weight during which it is on the stack (once, however
    often it is there), its self the weight during which it is on top."""
    ex = v["export"]
    if len(ex["profiles"]) != 1:
        raise Fail("speedscope made %d profiles of one pprof file" % len(ex["profiles"]))
    prof = ex["profiles"][0]
    if prof["type"] != "evented":
        raise Fail("speedscope exported a %r profile, not an evented one" % prof["type"])
    names = [f["name"] for f in ex["shared"]["frames"]]
    if len(set(names)) != len(names):
        raise Fail("two speedscope frames share a name: %s" % names)
    total, self_w = collections.Counter(), collections.Counter()
    stack, depth_of, opened = [], collections.Counter(), {}
    last = prof["startValue"]
    for e in prof["events"]:
        at = e["at"]
        if stack:
            self_w[names[stack[-1]]] += at - last
        last = at
        f = e["frame"]
        if e["type"] == "O":
            stack.append(f)
            depth_of[f] += 1
            if depth_of[f] == 1:
                opened[f] = at
        else:
            if not stack or stack[-1] != f:
                raise Fail("speedscope's export closes frame %d out of order" % f)
            stack.pop()
            depth_of[f] -= 1
            if depth_of[f] == 0:
                total[names[f]] += at - opened.pop(f)
    if stack:
        raise Fail("speedscope's export leaves frames open")
    whole = prof["endValue"] - prof["startValue"]
    return prof["unit"], whole, {k: v for k, v in total.items() if v}, \
        {k: v for k, v in self_w.items() if v}


def json_weights(backtraces):
    """The JSON report's live bytes per function: (total, self), as speedscope counts them
    (the frame's own function; inlined ones are folded into it, see above)."""
    total, self_w = collections.Counter(), collections.Counter()
    for b in backtraces:
        names = [fr["function"] or "??" for fr in b["frames"]]
        for n in set(names):
            total[n] += b["size"]
        self_w[names[0]] += b["size"]
    return {k: v for k, v in total.items() if v}, {k: v for k, v in self_w.items() if v}


def speedscope_bytes(n):
    """speedscope's byte format (its ByteFormatter: B under 1024, then KB, MB, GB of 1024
    with two decimals)."""
    if n < 1024:
        return "%d B" % n
    for unit in ("KB", "MB", "GB"):
        n /= 1024
        if n < 1024 or unit == "GB":
            return "%.2f %s" % (n, unit)


def check(r, v, live_bytes, backtraces):
    unit, whole, total, self_w = export_weights(v)
    if unit != "bytes":
        r.fail("speedscope shows %r, not bytes (inuse_space)" % unit)
    if whole != live_bytes:
        r.fail("speedscope's profile weighs %d bytes, the report's live bytes are %d"
               % (whole, live_bytes))
    want_total, want_self = json_weights(backtraces)
    for what, got, want in (("total", total, want_total), ("self", self_w, want_self)):
        if got != want:
            keys = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            raise Fail("speedscope's %s bytes per function differ from the JSON report's in %s"
                       % (what, keys),
                       "speedscope: %s\nreport: %s\n%s" % (got, want, r.describe()))
    rows = {row[2]: row for row in v["sandwich"]}
    if set(rows) != set(want_total):
        r.fail("the Sandwich view lists %s, the report's functions are %s"
               % (sorted(rows), sorted(want_total)))
    for name, row in rows.items():
        shown = (row[0].split(" (")[0], row[1].split(" (")[0])
        want = (speedscope_bytes(want_total[name]), speedscope_bytes(want_self.get(name, 0)))
        if shown != want:
            r.fail("the Sandwich view shows %s total/self %s, the report's bytes are %s"
                   % (name, shown, want))


@variants(*OPTS)
def test_speedscope_live_bytes(opt):
    """leaks: speedscope's weights, total and per function, are the JSON report's live bytes."""
    r, log = recorded("leaks", opt)
    expect_rc(r, 0)
    path = pprof_file(r, log)
    shot = os.path.join(helpers.BUILD, "html-shots", "speedscope-leaks-%s.png" % opt)
    os.makedirs(os.path.dirname(shot), exist_ok=True)
    v = open_in_speedscope(path, shot=shot)
    check(r, v, r.report["summary"]["live_bytes"], r.report["backtraces"])


def test_speedscope_at_peak():
    """history --at=peak: speedscope's weights are the JSON report's heap at its peak."""
    r, log = recorded("history", "O0")
    expect_rc(r, 0)
    path = pprof_file(r, log, "--at=peak")
    v = open_in_speedscope(path)
    peak = r.report["peak"]
    check(r, v, peak["live_bytes"], peak["backtraces"])
