# SPDX-License-Identifier: GPL-2.0-only
"""--format=html: the page of a report, a diff and a live run, opened in headless chromium
(Debian's, driven by playwright-core from tests/html/, `npm ci` there when its node_modules is
missing). What the page draws is compared with heaptrace's JSON of the same log, and with what
tests/targets/history.c knows about itself: no console errors and no requests, the flame
graph's root totals, a click on its widest frame zooms, one timeline period per period of
report --timeline and their maximum the peak, a table row per backtrace with every column. A
screenshot at 1280x800 (and one at phone width) stays in BUILD/html-shots/. Also: the tooltip
has file:line, the search box highlights."""

import json
import os
import shutil
import subprocess

from helpers import (TIMEOUT, Busy, Fail, Skip, expect_rc, heaptrace, need_heaptrace, run,
                     scratch, target)
import helpers


def tests_html_dir():
    return os.path.join(helpers.ROOT, "tests", "html")


def chromium():
    """The browser and the driver, or Skip/Fail saying why not."""
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium")
    if not exe:
        raise Skip("chromium is not installed (tests/deps.sh installs Debian's chromium)")
    d = tests_html_dir()
    # playwright-core drives chromium; speedscope is the viewer test_speedscope opens
    if not all(os.path.isdir(os.path.join(d, "node_modules", m))
               for m in ("playwright-core", "speedscope")):
        if not shutil.which("npm"):
            raise Fail("npm is missing (tests/deps.sh installs it) to install tests/html's "
                       "packages")
        p = run(["npm", "ci", "--no-audit", "--no-fund"], cwd=d, timeout=600)
        if p.rc != 0:
            raise Fail("npm ci in tests/html failed", p.describe())
    return exe


def view(page, measure=None, shot=None, search=None):
    """What chromium shows of page (tests/html/check.mjs's JSON)."""
    exe = chromium()
    argv = ["node", os.path.join(tests_html_dir(), "check.mjs"), page]
    if measure is not None:
        argv.append("--measure=%d" % measure)
    if search is not None:
        argv.append("--search=%s" % search)
    if shot:
        argv.append("--screenshot=%s" % shot)
    p = run(argv, env={"CHROMIUM": exe}, timeout=TIMEOUT)
    if p.rc != 0 or p.timed_out:
        raise Fail("chromium could not show %s" % page, p.describe())
    v = json.loads(p.stdout.strip().splitlines()[-1])
    if v["errors"]:
        raise Fail("console errors on the page: %s" % v["errors"][:5])
    if v["requests"]:
        raise Fail("the page made requests: %s" % v["requests"][:5])
    if v["phone_width"] > 390:
        raise Fail("at phone width (390 px) the page is %d px wide" % v["phone_width"])
    return v


def ht(*args):
    p = run([helpers.HEAPTRACE] + list(args))
    if p.rc != 0 or p.timed_out:
        raise Fail("heaptrace %s exited %s" % (args[0], p.rc), p.describe())
    return p.stdout


def recorded_history(name):
    """history run with --record; (Run, log, its JSON report with the timeline)."""
    need_heaptrace()
    d = scratch(name)
    log = os.path.join(d, "run.htlog")
    r = heaptrace(target("history"), opts=["--record=%s" % log], name=name)
    expect_rc(r, 0)
    rep = json.loads(ht("report", log, "--format=json", "--timeline"))
    return r, log, rep


def page_of(log, name, *opts):
    out = os.path.join(os.path.dirname(log), name)
    ht("report", log, "--format=html", "--outfile=%s" % out, *opts)
    return out


ROOTS = (("live bytes", lambda s, rep: s["live_bytes"]),
         ("live blocks", lambda s, rep: s["live_blocks"]),
         ("allocated bytes", lambda s, rep: s["total_allocated_bytes"]),
         ("allocation calls", lambda s, rep: s["alloc_calls"]),
         ("temporary allocations", lambda s, rep: s["temporary"]),
         ("bytes at the peak", lambda s, rep: rep["peak"]["live_bytes"]))


def check_roots(v, rep):
    """Each measure's flame graph adds up to the report's total."""
    s = rep["summary"]
    got = {k: v["roots"].get(k) for k, _ in ROOTS}
    want = {k: f(s, rep) for k, f in ROOTS}
    if got != want:
        raise Fail("the flame graph's roots are %s, the report's totals %s" % (got, want))


def check_table(v, rep):
    # every figure of a backtrace is a column; "truncated" (cut at --depth) is a flag, not one;
    # "heap" (malloc, or a custom heap of --alloc/--mmap) has no column yet
    cols = set(k for b in rep["backtraces"] for k in b
               if k not in ("frames", "truncated", "heap"))
    if not cols <= set(v["headers"]):
        raise Fail("the table lacks the columns %s" % sorted(cols - set(v["headers"])))
    live = [b for b in v["rows"] if b[v["headers"].index("count")] != "0"]
    if len(live) != len(rep["backtraces"]):
        raise Fail("the table has %d live backtraces, the report %d"
                   % (len(live), len(rep["backtraces"])))


def test_html_report_launched():
    """history, launched: the page of its log against its JSON and its own figures."""
    r, log, rep = recorded_history("html-launched")
    page = page_of(log, "report.html")
    shots = os.path.join(helpers.BUILD, "html-shots")
    os.makedirs(shots, exist_ok=True)
    shot = os.path.join(shots, "report-1280x800.png")
    # allocated bytes: peak_block, keep_block and temp_block side by side, to zoom into one
    v = view(page, measure=2, shot=shot, search="peak_")
    check_roots(v, rep)
    # hovering: its name, file:line and bytes (history makes 8 blocks of 256 KiB there)
    if not (v.get("tip") or "").startswith("peak_block (history.c:") or \
            "2.00 MiB" not in v["tip"]:
        raise Fail("the tooltip of peak_block says %r" % v.get("tip"))
    if v.get("search_hits") != ["peak_block"]:
        raise Fail("searching peak_ highlights %s" % v.get("search_hits"))
    total = [x for x in r.records if x["kind"] == "view" and x["name"] == "peaktotal"][0]
    if v["roots"]["bytes at the peak"] != total["bytes"]:
        raise Fail("the flame graph at the peak holds %s bytes, history made %d"
                   % (v["roots"]["bytes at the peak"], total["bytes"]))
    pts = rep["timeline"]["points"]
    if v["periods"] != len(pts):
        raise Fail("the timeline draws %d periods, the log has %d" % (v["periods"], len(pts)))
    peak = rep["summary"]["peak_live_bytes"]
    if (v["period_max"], v["peak_marker"]) != (peak, peak) or peak != total["bytes"]:
        raise Fail("the timeline's largest period %s and its peak marker %s, the peak %d"
                   % (v["period_max"], v["peak_marker"], peak))
    z = v.get("zoom")
    if not z or z["name"] != "peak_block" or abs(z["width_after"] - z["full"]) > 1 or \
            z["frames_after"] >= z["frames_before"]:
        raise Fail("a click on the widest frame (peak_block) did not zoom to it: %s" % z)
    check_table(v, rep)
    top = v["rows"][0][-1]
    if not top.startswith("keep_block (history.c:"):
        raise Fail("the table's largest live backtrace is %r, not keep_block" % top)
    for f in (shot, shot.replace(".png", "-phone.png")):
        if not os.path.isfile(f) or os.path.getsize(f) < 10000:
            raise Fail("no screenshot %s" % f)


def test_html_diff():
    """history from its start to its peak, as a page: peak_block grew by 8 blocks of 256 KiB
    and keep_block by 3 of 100 bytes, the flame graph of growth adds up to the peak."""
    r, log, rep = recorded_history("html-diff")
    out = os.path.join(os.path.dirname(log), "diff.html")
    ht("diff", "--format=html", "--outfile=%s" % out, log + "@0", log + "@peak")
    d = json.loads(ht("diff", "--format=json", log + "@0", log + "@peak"))["diff"]
    v = view(out)
    if v["kind"] != "diff":
        raise Fail("the diff page says it is a %s" % v["kind"])
    want = {x["leaf"]: x["bytes"] for x in r.records if x["kind"] == "view" and
            x["name"] == "peak"}
    if v["roots"].get("bytes grown") != sum(want.values()) or \
            sum(b["bytes_growth"] for b in d["backtraces"]) != sum(want.values()):
        raise Fail("the growth drawn is %s bytes, history grew %s" % (v["roots"], want))
    grown = {row[-1].split(" (")[0]: row[0] for row in v["rows"]}
    if grown != {"peak_block": "+2.00 MiB", "keep_block": "+300 B"}:
        raise Fail("the diff table shows %s" % grown)


def test_html_attached():
    """An attached process: the live page (with the heap at the attach) and the page of its
    log hold the figures of the log's JSON report."""
    need_heaptrace()
    b = Busy("html-attached", 2)
    try:
        log = os.path.join(b.dir, "run.htlog")
        live = os.path.join(b.dir, "live.html")
        p = subprocess.run([helpers.HEAPTRACE, "--record=%s" % log, "-p", str(b.pid),
                            "--duration=0.5", "--format=html", "--outfile=%s" % live],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
        if p.returncode != 0:
            raise Fail("heaptrace -p exited %d: %s" % (p.returncode, p.stderr[-2000:]))
        b.expect_clean_end()
    finally:
        b.kill()
    rep = json.loads(ht("report", log, "--format=json", "--timeline"))
    v = view(live)
    if v["roots"]["live bytes"] != rep["summary"]["live_bytes"]:
        raise Fail("the live page's flame graph holds %s bytes, the log's report %s"
                   % (v["roots"]["live bytes"], rep["summary"]["live_bytes"]))
    if "allocator" not in (v["attach"] or ""):
        raise Fail("the live page has no heap at attach: %r" % v["attach"])
    if v["periods"]:
        raise Fail("a live page has a timeline of %d periods" % v["periods"])
    v = view(page_of(log, "report.html"))
    check_roots(v, rep)
    if v["periods"] != len(rep["timeline"]["points"]):
        raise Fail("the timeline draws %d periods, the log has %d"
                   % (v["periods"], len(rep["timeline"]["points"])))
    check_table(v, rep)
    if "size class" not in (v["attach"] or ""):
        raise Fail("the log's page does not list the blocks live at the attach: %r"
                   % v["attach"])


def test_html_sampled():
    """--sample-bytes=4096 on tests/targets/sampling.c: the caption says the figures of each
    backtrace, the flame graph and the timeline are estimates, and the allocation calls card is
    the target's exact count."""
    if helpers.MODE != "stubs":
        raise Skip("the same page in both modes")
    need_heaptrace()
    r = heaptrace(target("sampling"), args=[20], fmt="html", opts=["--sample-bytes=4096"])
    expect_rc(r, 0)
    page = r.outfile + ".html"  # chromium takes a page by its name
    shutil.copyfile(r.outfile, page)
    v = view(page)
    if "Sampled (--sample-bytes=4096)" not in v["cap"] or "estimates" not in v["cap"]:
        raise Fail("the caption does not say the page is sampled: %r" % v["cap"])
    calls = [x for x in r.records if x["kind"] == "summary"][0]["alloc_calls"]
    shown = "".join(c for c in v["cards"].get("allocation calls", "") if c.isdigit())
    if shown != str(calls):
        raise Fail("the allocation calls card says %r, the target made %d"
                   % (v["cards"].get("allocation calls"), calls))
