# SPDX-License-Identifier: GPL-2.0-only
"""Lifetime filters and individual views, live and from a --record log: --only-leaked (also at
a moment of the log), --temporary, --older relative to the report's moment, --blocks, report
--calls and live --trace-calls (the same lines), and --debuginfod (only when asked: a silent
server no longer holds a report).

tests/targets/history.c's header gives its history: 8 peak_block blocks of 262144 bytes, then 3
keep_block blocks of 100 bytes (the peak: 11 blocks), the 8 peak blocks freed, then 50 times a
temp_block of 64 bytes freed at once (50 temporary allocations); at exit the 3 keep blocks are
live. tests/targets/family.c's header gives its calls (grow_realloc's chain, realloc(NULL, 202),
realloc(p, 0), a realloc that fails)."""

import json
import os
import re
import signal
import socket
import subprocess
import time

from helpers import (HEAPTRACE, OPTS, Fail, check_sites, expect_rc, heaptrace, need_heaptrace,
                     one_error_line, records, run, scratch, site_records, target, variants)

PEAK_SIZE, KEEP_SIZE, TEMP_SIZE = 262144, 100, 64


def recorded(name, opt="O0", fmt="json", opts=()):
    """Run target name with --record; return (Run, log path)."""
    need_heaptrace()
    d = scratch("views-%s-%s-%s" % (name, opt, fmt))
    log = os.path.join(d, "run.htlog")
    r = heaptrace(target(name, opt), opts=["--record=%s" % log] + list(opts), fmt=fmt,
                  name="views-%s-%s-%s" % (name, opt, fmt))
    expect_rc(r, 0)
    if not os.path.isfile(log):
        r.fail("no log was written")
    return r, log


def report(r, log, *opts):
    p = run([HEAPTRACE, "report", log] + list(opts))
    if p.rc != 0 or p.timed_out:
        raise Fail("heaptrace report %s exited %s" % (" ".join(opts), p.rc),
                   p.describe() + "\n" + r.describe())
    return p.stdout


def report_json(r, log, *opts):
    return json.loads(report(r, log, "--format=json", *opts).splitlines()[-1])


def leaves(rep, key="backtraces"):
    """{leaf function (frame 1): (count, size)} of a report's backtraces."""
    out = {}
    for b in rep[key]:
        leaf = b["frames"][1]["function"] if len(b["frames"]) > 1 else None
        if leaf in out:
            raise Fail("two backtraces from %s" % leaf)
        out[leaf] = (b["count"], b["size"])
    return out


def views(r, name):
    return [x for x in r.records if x["kind"] == "view" and x["name"] == name]


@variants(*OPTS)
def test_only_leaked(opt):
    """--only-leaked: live, the final report lists the blocks never freed (the target's live
    sites, exactly); from the log at the peak, only the peak's blocks still live at the end
    (keep_block's 3, not peak_block's 8); at the start, nothing."""
    r, log = recorded("history", opt, opts=["--only-leaked"])
    rep = r.report
    if rep.get("lifetime") != "leaked":
        r.fail("the report does not say lifetime=leaked")
    check_sites(r, rep, site_records(r))
    # at the peak, every keep_block block is one that stays live to the end; every peak_block
    # block is freed later (history.c)
    peak = {v["leaf"]: (v["count"], v["bytes"]) for v in views(r, "peak")}
    want = {"keep_block": peak["keep_block"]}
    got = leaves(report_json(r, log, "--only-leaked", "--at=peak"))
    if got != want:
        r.fail("--only-leaked at the peak: %s, expected %s" % (got, want))
    every = leaves(report_json(r, log, "--at=peak"))
    if every != peak:
        r.fail("at the peak without the filter: %s, expected %s" % (every, peak))
    at0 = report_json(r, log, "--only-leaked", "--at=0")
    if at0["backtraces"]:
        r.fail("--only-leaked at the start lists %s" % leaves(at0))
    end = report_json(r, log, "--only-leaked")
    if leaves(end) != leaves(rep) or end["summary"] != rep["summary"]:
        r.fail("--only-leaked from the log differs from the live one")
    # the summary describes the whole heap, filtered or not
    if report_json(r, log, "--only-leaked", "--at=peak")["summary"] != \
            report_json(r, log, "--at=peak")["summary"]:
        r.fail("--only-leaked changed the summary")


@variants(*OPTS)
def test_temporary(opt):
    """--temporary: instead of the live blocks, each backtrace's temporary allocations (count
    and bytes): temp_block's 50 blocks of 64 bytes, nothing else; live and from the log, in
    json, folded and text."""
    r, log = recorded("history", opt, opts=["--temporary"])
    calls = {v["leaf"]: v for v in views(r, "calls")}
    # each of the target's sites allocates one size, so temporary bytes = temporary * size
    want = {k: (v["temporary"], v["temporary"] * v["total_size"] // v["alloc_calls"])
            for k, v in calls.items() if v["temporary"]}
    if want != {"temp_block": (50, 50 * TEMP_SIZE)}:
        raise Fail("history.c's view records changed: %s" % want)
    rep = r.report
    if leaves(rep) != want or rep.get("lifetime") != "temporary":
        r.fail("--temporary live: %s, expected %s" % (leaves(rep), want))
    off = report_json(r, log, "--temporary")
    if off != rep:
        r.fail("--temporary from the log differs from the live report")
    folded = report(r, log, "--temporary", "--format=folded").splitlines()
    if len(folded) != 1 or not folded[0].endswith(";malloc %d" % (50 * TEMP_SIZE)) or \
            "temp_block" not in folded[0]:
        r.fail("--temporary folded: %s" % folded)
    text = report(r, log, "--temporary")
    if "=== backtrace #1 === [temporary: 50 of 50 calls] [size: 3.125 KiB] [by: temp_block (history.c:" not in text:
        r.fail("--temporary text lacks temp_block's heading:\n%s" % text[:2000])
    for bad in (["--temporary", "--only-leaked"], ["--temporary", "--min-size=1"],
                ["--temporary", "--blocks"]):
        one_error_line(run([HEAPTRACE, "report", log] + bad), 1, ["--temporary"])
        one_error_line(run([HEAPTRACE] + bad + [target("history")]), 1, ["--temporary"])


def calls_of(text):
    """The call objects of --calls/--trace-calls JSON output, and the report objects."""
    objs = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [o for o in objs if "call" in o], [o for o in objs if "call" not in o]


def test_calls_history():
    """report --calls: every call of history in order, exact (sizes, addresses: each free
    names a block an earlier call returned), then the report; the same lines as the live
    --trace-calls of the same run, in text and json."""
    r, log = recorded("history", opts=["--trace-calls"])
    live_calls, live_reps = calls_of(r.out)
    off_calls, off_reps = calls_of(report(r, log, "--calls", "--format=json"))
    if off_calls != live_calls or off_reps != live_reps:
        r.fail("report --calls differs from the live --trace-calls")
    pid = live_reps[-1]["pid"]
    mine = [c for c in off_calls if c["size"] in (PEAK_SIZE, KEEP_SIZE, TEMP_SIZE)]
    made = {c["result"] for c in mine}
    mine = mine + [c for c in off_calls if c["call"] == "free" and c["address"] in made]
    mine.sort(key=off_calls.index)
    shape = [(c["call"], c["size"]) for c in mine]
    want = [("malloc", PEAK_SIZE)] * 8 + [("malloc", KEEP_SIZE)] * 3 + [("free", None)] * 8 + \
        [("malloc", TEMP_SIZE), ("free", None)] * 50
    if shape != want:
        r.fail("history's calls: %s" % shape)
    peaks = [c["result"] for c in mine[:8]]
    if [c["address"] for c in mine[11:19]] != peaks:
        r.fail("the frees do not name the peak blocks in order")
    for a, f in zip(mine[19::2], mine[20::2]):
        if f["address"] != a["result"]:
            r.fail("a temp_block free names %s, not the block just made %s"
                   % (f["address"], a["result"]))
    if any((c["pid"], c["tid"]) != (pid, pid) or c["elapsed_ns"] <= 0 for c in off_calls):
        r.fail("a call of the single-threaded target has another pid/tid or no time")
    if any(c["address"] is not None for c in mine if c["call"] == "malloc") or \
            any(c["result"] is not None for c in mine if c["call"] == "free"):
        r.fail("malloc with an address or free with a result")
    # text: the same calls, one line each, before the report
    rt, logt = recorded("history", fmt="text", opts=["--trace-calls"])
    text = report(rt, logt, "--calls")
    if text != rt.out:
        rt.fail("report --calls text differs from the live --trace-calls")
    lines = [line for line in text.splitlines() if re.match(r"\[ *\d", line)]
    line_re = re.compile(r"\[ *\d+\.\d{6} ms\] (\d+)/(\d+) (\w+)\((.*)\)( = (0x[0-9a-f]+|NULL))?$")
    for line in lines:
        if not line_re.match(line):
            rt.fail("a call line of another form: %r" % line)
    if sum(line.endswith("malloc(64) = " + line.split(" = ")[-1]) for line in lines) < 50:
        rt.fail("fewer than 50 malloc(64) lines")


def test_calls_family():
    """The realloc family as calls (family.c): grow_realloc's chain, each realloc naming the
    block the previous call returned; realloc(NULL, 202); realloc(p, 0) = NULL freeing
    malloc(303)'s block; the realloc that fails (= NULL, p stays and is freed)."""
    r, log = recorded("family", fmt="text", opts=["--trace-calls"])
    text = report(r, log, "--calls")
    # a failed call's time is not in the log: compare the rest
    strip = re.compile(r"^\[ *[\d.]+ ms\](?= \d+/\d+ realloc\(0x[0-9a-f]+, \?\) = NULL$)", re.M)
    if strip.sub("[-]", text) != strip.sub("[-]", r.out or ""):
        r.fail("report --calls differs from the live --trace-calls")
    calls = [re.sub(r"^\[[^]]*\] \d+/\d+ ", "", line) for line in text.splitlines()
             if re.match(r"\[ *\d", line)]

    def find(pattern, start=0):
        for i in range(start, len(calls)):
            m = re.fullmatch(pattern, calls[i])
            if m:
                return i, m
        r.fail("no call %s after #%d in:\n%s" % (pattern, start, "\n".join(calls)))

    i, m = find(r"malloc\(10\) = (0x[0-9a-f]+)")
    block = m.group(1)
    for size in (100, 1000, 3000, 5000):
        i, m = find(r"realloc\((0x[0-9a-f]+), %d\) = (0x[0-9a-f]+)" % size, i + 1)
        if m.group(1) != block:
            r.fail("realloc to %d names %s, not the block %s" % (size, m.group(1), block))
        block = m.group(2)
    find(r"realloc\(NULL, 202\) = 0x[0-9a-f]+")
    find(r"reallocarray\(NULL, 150\) = 0x[0-9a-f]+")
    find(r"calloc\(91\) = 0x[0-9a-f]+")
    i, m = find(r"malloc\(303\) = (0x[0-9a-f]+)")
    i, m2 = find(r"realloc\((0x[0-9a-f]+), 0\) = NULL", i + 1)
    if m2.group(1) != m.group(1):
        r.fail("realloc(p, 0) names %s, not malloc(303)'s %s" % (m2.group(1), m.group(1)))
    i, m = find(r"malloc\(32\) = (0x[0-9a-f]+)", i + 1)
    i, m2 = find(r"realloc\((0x[0-9a-f]+), \?\) = NULL", i + 1)
    i3, m3 = find(r"free\((0x[0-9a-f]+)\)", i + 1)
    if not m.group(1) == m2.group(1) == m3.group(1):
        r.fail("the failed realloc and the free do not name malloc(32)'s block")


def test_blocks_and_older():
    """--blocks lists each live block under its backtrace: keep_block's 3 blocks, at the
    addresses its calls returned; their ages are from the report's moment; --older keeps
    exactly the blocks at least that old (also in report, relative to --at)."""
    r, log = recorded("history", opts=["--trace-calls", "--blocks"])
    calls, reps = calls_of(r.out)
    rep = reps[-1]
    keep = [c["result"] for c in calls if c["size"] == KEEP_SIZE]
    bts = {b["frames"][1]["function"]: b for b in rep["backtraces"]}
    got = [(x["address"], x["size"]) for x in bts["keep_block"]["blocks"]]
    if sorted(got) != sorted((a, KEEP_SIZE) for a in keep):
        r.fail("keep_block's blocks are %s, its calls returned %s" % (got, keep))
    off = report_json(r, log, "--blocks")
    if off != rep:
        r.fail("--blocks from the log differs from the live report")
    at = report_json(r, log, "--blocks", "--at=peak")
    made = {c["result"]: c["elapsed_ns"] for c in calls if "result" in c and c["result"]}
    ages = {}
    for b in at["backtraces"]:
        if len(b["blocks"]) != b["count"] or sum(x["size"] for x in b["blocks"]) != b["size"]:
            r.fail("a backtrace's blocks do not add up to its count and size: %s" % b)
        for x in b["blocks"]:
            # a block's time is kept to the millisecond
            age = at["summary"]["elapsed_ns"] - made[x["address"]]
            if not age <= x["age_ns"] < age + 1000000:
                r.fail("block %s: age %d at the peak, made %d ns before" % (x["address"],
                                                                           x["age_ns"], age))
            ages[x["address"]] = x["age_ns"]
    if len(ages) != 11:
        r.fail("%d blocks at the peak, expected 11" % len(ages))
    for ms in sorted({a // 1000000 for a in ages.values()} | {0, 10 ** 6}):
        filt = report_json(r, log, "--blocks", "--at=peak", "--older=%d" % ms)
        kept = {x["address"] for b in filt["backtraces"] for x in b["blocks"]}
        want = {a for a, age in ages.items() if age >= ms * 1000000}
        if kept != want:
            r.fail("--older=%d at the peak kept %d blocks, expected %d" % (ms, len(kept),
                                                                          len(want)))
        if sum(b["count"] for b in filt["backtraces"]) != len(want):
            r.fail("--older=%d: the counts do not match the blocks" % ms)


def test_view_usage():
    need_heaptrace()
    log = os.path.join(scratch("views-usage"), "none.htlog")
    one_error_line(run([HEAPTRACE, "report", log, "--calls", "--format=folded"]), 1,
                   ["--calls"])
    one_error_line(run([HEAPTRACE, "report", log, "--calls", "--format=heaptrack"]), 1,
                   ["--calls"])
    one_error_line(run([HEAPTRACE, "--trace-calls", "--flame-graph", target("history")]), 1,
                   ["--trace-calls"])
    one_error_line(run([HEAPTRACE, "report", log, "--debuginfod"],
                       env_replace={k: v for k, v in os.environ.items()
                                    if k != "DEBUGINFOD_URLS"}), 1, ["DEBUGINFOD_URLS"])


def test_no_debuginfod_library_while_tracing():
    """libdw (0.188) loads libdebuginfod, and libcurl's 30 shared objects with it, whenever it
    searches for the debug file of a module that has none here, server or not; heaptrace asks
    no server unless told to (--debuginfod, report only), so none of them may be in its memory
    after two periodic reports of a program stripped of its debug information."""
    d = scratch("no-debuginfod")
    prog = os.path.join(d, "checkpoint")
    subprocess.run(["objcopy", "--strip-debug", target("checkpoint"), prog], check=True)
    out = os.path.join(d, "reports.jsonl")
    env = dict(os.environ, HEAPTRACE_OUTFILE=out, HEAPTRACE_EXPECT=os.path.join(d, "expect"))
    p = subprocess.Popen([HEAPTRACE, "--format=json", "--outfile=" + out, "--interval=0.3",
                          "--count=3", "--", prog, "wait", "3"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    reports, maps = 0, ""
    try:
        deadline = time.monotonic() + 60
        while reports < 2 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            if os.path.exists(out):
                with open(out) as f:
                    reports = sum(1 for line in f if line.endswith("\n"))
        with open("/proc/%d/maps" % p.pid) as f:
            maps = f.read()
    finally:
        _, err = p.communicate(timeout=60)
    if reports < 2 or p.returncode != 0:
        raise Fail("checkpoint wait 3 under --interval=0.3 --count=3: %d reports, status %s: %s"
                   % (reports, p.returncode, err.decode(errors="replace")))
    loaded = sorted({line.split()[-1] for line in maps.splitlines()
                     if os.path.basename(line.split()[-1]).startswith(("libdebuginfod",
                                                                       "libcurl"))})
    if loaded:
        raise Fail("heaptrace loaded %s while tracing, with no --debuginfod" % ", ".join(loaded))


def test_debuginfod_only_when_asked():
    """A DEBUGINFOD_URLS server that accepts connections and never answers: report (of a log
    with a stripped program, which has no debug information here) ignores it and is as fast
    as without it; with --debuginfod it gives the server up after DEBUGINFOD_TIMEOUT seconds
    without a byte, says so once, and reports; SIGTERM stops it meanwhile."""
    r, log = recorded("leaks", "plainstripped")
    plain = report(r, log, "--format=json")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    try:
        env = {"DEBUGINFOD_URLS": "http://127.0.0.1:%d" % srv.getsockname()[1],
               "DEBUGINFOD_CACHE_PATH": os.path.join(scratch("debuginfod-cache"), "c"),
               "DEBUGINFOD_TIMEOUT": "2"}
        t = time.monotonic()
        p = run([HEAPTRACE, "report", log, "--format=json"], env=env, timeout=60)
        if p.rc != 0 or p.stdout != plain or p.stderr:
            raise Fail("report with a silent DEBUGINFOD_URLS server differs", p.describe())
        if time.monotonic() - t > 20:
            raise Fail("report took %.1f s with a silent server it was not asked to use"
                       % (time.monotonic() - t))
        p = run([HEAPTRACE, "report", log, "--format=json", "--debuginfod"], env=env,
                timeout=60)
        if p.timed_out or p.rc != 0 or p.stdout != plain:
            raise Fail("report --debuginfod with a silent server did not end with the report",
                       p.describe())
        if p.stderr.count("debuginfod server") != 1:
            raise Fail("report --debuginfod did not say once that the server was silent",
                       p.describe())
        env["DEBUGINFOD_TIMEOUT"] = "600"
        env["DEBUGINFOD_CACHE_PATH"] += "2"
        q = subprocess.Popen([HEAPTRACE, "report", log, "--debuginfod"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=dict(os.environ, **env))
        time.sleep(1)
        q.send_signal(signal.SIGTERM)
        try:
            rc = q.wait(timeout=20)
        except subprocess.TimeoutExpired:
            q.kill()
            q.wait()
            raise Fail("report --debuginfod ignored SIGTERM")
        if rc != -signal.SIGTERM:
            raise Fail("report --debuginfod ended with %s after SIGTERM" % rc)
    finally:
        srv.close()


def test_record_follow_fork():
    """-f with --record: every followed process is in the log (forker.c: the parent, the fork
    child, and the three children that run a shell or /bin/true), and report writes each
    one's report as the live run did, in the same order, every figure the same; report
    --calls lists the calls of more than one process."""
    for mode_fmt in ("json", "text"):
        r, log = recorded("forker", fmt=mode_fmt, opts=["--follow-fork"])
        off = report(r, log, "--format=%s" % mode_fmt)
        if off != r.out:
            r.fail("the reports from the -f log differ from the live ones:\n%s" % off[:3000])
    r, log = recorded("forker", opts=["--follow-fork"])
    if len(r.reports) != 5 or len({rep["pid"] for rep in r.reports}) != 5:
        r.fail("%d reports of %d processes, expected 5" % (len(r.reports),
                                                             len({x["pid"] for x in r.reports})))
    calls, reps = calls_of(report(r, log, "--calls", "--format=json"))
    if reps != r.reports:
        r.fail("report --calls changed the reports")
    # the fork child's 100 blocks made and freed, and its leak, are its own calls
    child = [x for x in reps if any(f["function"] == "child_leak" for b in x["backtraces"]
                                    for f in b["frames"])]
    if len(child) != 1:
        r.fail("%d reports with child_leak, expected 1" % len(child))
    check_sites(r, child[0], records(r, "site", "child"))
    mine = [c for c in calls if c["pid"] == child[0]["pid"]]
    if sum(c["call"] == "free" for c in mine) < 100 or not any(
            c["size"] == 2222 for c in mine) or any(c["tid"] != c["pid"] for c in mine):
        r.fail("the fork child's calls are not its own: %d calls" % len(mine))
    one_error_line(run([HEAPTRACE, "report", log, "--only-leaked", "--at=peak"]), 2,
                   ["one process"])
