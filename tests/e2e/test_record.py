# SPDX-License-Identifier: GPL-2.0-only
"""--record=FILE and heaptrace report FILE: the log of a run, reported offline, gives the live
report of the same run (every figure, every frame, in json, text and folded), and the figures
the target knows about itself (tests/targets/expect.h); across threads and an execve too.
Symbolisation happens at report time, by build-id: from a sysroot when the program is no
longer where it ran, never from a different file at the same path. Bad logs (missing,
truncated, wrong magic, a newer version, random bytes, a directory) give one line and exit 2."""

import json
import os
import shutil
import subprocess

from helpers import (HEAPTRACE, OPTS, TIMEOUT, Busy, Fail, check_consistency, check_sites,
                     check_summary, expect_rc, heaptrace, need_heaptrace, one_error_line, run,
                     scratch, site_records, summary_record, target, variants)


def report(log, *opts):
    """heaptrace report LOG OPTS: the Proc."""
    return run([HEAPTRACE, "report", log] + list(opts))


def recorded(name, opt, fmt="json", args=(), opts=()):
    """Run target name with --record; return (Run, log path)."""
    need_heaptrace()
    d = scratch("record-%s-%s-%s" % (name, opt, fmt))
    log = os.path.join(d, "run.htlog")
    r = heaptrace(target(name, opt), args=args, opts=["--record=%s" % log] + list(opts),
                  fmt=fmt, name="record-%s-%s-%s" % (name, opt, fmt))
    if not os.path.isfile(log):
        r.fail("no log was written")
    return r, log


def offline(r, log, *opts):
    p = report(log, *opts)
    if p.rc != 0 or p.timed_out:
        raise Fail("heaptrace report exited %s" % p.rc, p.describe() + "\n" + r.describe())
    return p.stdout


def same_json(r, live, off_text):
    off = json.loads(off_text)
    if off != live:
        diffs = [k for k in set(live) | set(off) if live.get(k) != off.get(k)]
        raise Fail("the offline report differs from the live one in %s" % sorted(diffs),
                   "live: %s\noffline: %s\n%s" % (json.dumps(live)[:3000], off_text[:3000],
                                                  r.describe()))
    return off


@variants(*OPTS)
def test_record_json_same_as_live(opt):
    """leaks: the offline JSON is the live JSON, and has the target's own figures and sites."""
    r, log = recorded("leaks", opt)
    expect_rc(r, 0)
    off = same_json(r, r.report, offline(r, log, "--format=json"))
    check_consistency(r, off)
    check_summary(r, off, summary_record(r))
    check_sites(r, off, site_records(r))


def test_record_text_same_as_live():
    """The text report from the log is the live one, byte for byte (ages included: the log
    keeps every time to the nanosecond)."""
    r, log = recorded("demo", "O0", fmt="text")
    expect_rc(r, 0)
    text = offline(r, log)
    if not r.out or text != r.out:
        raise Fail("the offline text report differs from the live one",
                   "live:\n%s\noffline:\n%s" % (r.out, text))


def test_record_folded_same_as_live():
    r, log = recorded("leaks", "O2", fmt="folded")
    folded = offline(r, log, "--format=folded")
    if not r.out or folded != r.out:
        raise Fail("the offline folded stacks differ from the live ones",
                   "live:\n%s\noffline:\n%s" % (r.out, folded))


def test_record_options_apply():
    """Sort, --top and size filters work on the log as on a live run."""
    r, log = recorded("leaks", "O0", opts=["--sort=count", "--min-size=100"])
    off = same_json(r, r.report, offline(r, log, "--format=json", "--sort=count",
                                         "--min-size=100"))
    if any(b["size"] < 100 * b["count"] for b in off["backtraces"]):
        raise Fail("--min-size=100 kept smaller blocks", json.dumps(off)[:2000])


def test_record_threads():
    """Four threads churning at once: the log has every event, the figures agree."""
    r, log = recorded("threads", "O0", args=["4", "2000", "10"])
    expect_rc(r, 0)
    live = r.report
    off = same_json(r, live, offline(r, log, "--format=json"))
    if off["summary"]["alloc_calls"] < 4 * (2000 + 10):
        raise Fail("only %d allocations in the log" % off["summary"]["alloc_calls"])


def test_record_exec():
    """A program that runs execve: the log forgets the old image as the live table does."""
    r, log = recorded("execer", "O0")
    same_json(r, r.report, offline(r, log, "--format=json"))


# The other heaps: the program's own allocator (tests/targets/pool.c, as test_custom.py traces
# it) and anonymous mappings (tests/targets/mapper.c, as test_mmap.py does).
OTHER_HEAPS = {  # kind: (target, options, the heap's name)
    "alloc": ("pool", ["--alloc=pool_alloc:2", "--alloc=pool_calloc:3:2",
                       "--realloc=pool_realloc:2:3", "--free=pool_free:2"], "pool_alloc"),
    "mmap": ("mapper", ["--mmap"], "mmap"),
}


@variants(*sorted(OTHER_HEAPS))
def test_record_other_heaps(kind):
    """--alloc and --mmap: the log carries their heaps too, so heaptrace report gives the live
    report (summary.heaps, every backtrace with its heap), in json and in text."""
    name, opts, heap = OTHER_HEAPS[kind]
    r, log = recorded(name, "O0", opts=opts)
    expect_rc(r, 0)
    off = same_json(r, r.report, offline(r, log, "--format=json"))
    if heap not in (off["summary"].get("heaps") or {}):
        raise Fail("no heap %s in the offline report" % heap, json.dumps(off)[:2000])
    r, log = recorded(name, "O0", fmt="text", opts=opts)
    expect_rc(r, 0)
    text = offline(r, log)
    if not r.out or text != r.out:
        raise Fail("the offline text report differs from the live one",
                   "live:\n%s\noffline:\n%s" % (r.out, text))


def test_record_sysroot():
    """The program moved away after the run (as on a board): without --sysroot its frames keep
    their module but no name; with the sysroot holding it, every frame is the live one."""
    need_heaptrace()
    d = scratch("record-sysroot")
    prog = os.path.join(d, "bin", "leaks")
    os.makedirs(os.path.dirname(prog))
    shutil.copy2(target("leaks", "O0"), prog)
    log = os.path.join(d, "run.htlog")
    r = heaptrace(prog, opts=["--record=%s" % log], name="record-sysroot")
    expect_rc(r, 0)
    sysroot = os.path.join(d, "board")
    moved = sysroot + prog
    os.makedirs(os.path.dirname(moved))
    shutil.move(prog, moved)
    bare = json.loads(offline(r, log, "--format=json"))
    mods = [f for b in bare["backtraces"] for f in b["frames"] if f["module"] == prog]
    if not mods or any(f["function"] or f["line"] for f in mods):
        raise Fail("without the sysroot, the program's frames should have its module and no "
                   "name", json.dumps(bare)[:3000])
    same_json(r, r.report, offline(r, log, "--format=json", "--sysroot=%s" % sysroot))


def test_record_other_file_same_path():
    """A different program at the recorded path (another build-id) lends it no names."""
    need_heaptrace()
    d = scratch("record-buildid")
    prog = os.path.join(d, "prog")
    shutil.copy2(target("leaks", "O0"), prog)
    log = os.path.join(d, "run.htlog")
    r = heaptrace(prog, opts=["--record=%s" % log], name="record-buildid")
    expect_rc(r, 0)
    os.unlink(prog)
    shutil.copy2(target("demo", "O0"), prog)
    off = json.loads(offline(r, log, "--format=json"))
    named = [f["function"] for b in off["backtraces"] for f in b["frames"]
             if f["module"] == prog and f["function"]]
    if named:
        raise Fail("frames of the recorded program were named from another file: %s" % named)


def bad_log(name, data):
    d = scratch("badlog-" + name)
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def good_log():
    r, log = recorded("leaks", "O0")
    expect_rc(r, 0)
    with open(log, "rb") as f:
        return f.read()


def test_record_bad_logs():
    """Every broken log: one line naming the problem, exit 2."""
    need_heaptrace()
    data = good_log()
    if not shutil.which("zstd"):
        raise Fail("the zstd command is missing (tests/deps.sh installs it)")
    raw = subprocess.run(["zstd", "-dc"], input=data[16:], capture_output=True).stdout
    newer = int.from_bytes(data[8:12], "little") + 1  # one this heaptrace does not know
    cases = [
        ("truncated", data[:len(data) // 2], ["truncated", "corrupt"]),
        ("header-only", data[:16], ["truncated"]),
        ("short-header", data[:10], ["truncated"]),
        ("magic", b"NOTALOG!" + data[8:], ["not a heaptrace log"]),
        ("newer", data[:8] + newer.to_bytes(4, "little") + data[12:], ["version %d" % newer]),
        ("random", os.urandom(4096), ["not a heaptrace log"]),
        ("random-body", data[:16] + os.urandom(4096), ["corrupt"]),
        ("empty", b"", ["not a heaptrace log"]),
    ]
    # valid zstd, records cut before the end record; records that break the format
    cut = subprocess.run(["zstd", "-c", "-q"], input=raw[:len(raw) - 5],
                         capture_output=True).stdout
    cases.append(("no-end-record", data[:16] + cut, ["truncated"]))
    junk = subprocess.run(["zstd", "-c", "-q"], input=raw[:40] + b"\xff" * 64,
                          capture_output=True).stdout
    cases.append(("bad-record", data[:16] + junk, ["corrupt"]))
    for name, blob, words in cases:
        p = report(bad_log(name, blob), "--format=json")
        one_error_line(p, 2, words)
    one_error_line(report(os.path.join(scratch("nolog"), "missing")), 2, ["No such file"])
    one_error_line(report(scratch("dirlog")), 2, ["directory"])


def test_record_older_version():
    """A log of the malloc heap alone is what version 2 wrote: marked version 2, it still
    reads, with the same figures."""
    r, log = recorded("leaks", "O0")
    expect_rc(r, 0)
    with open(log, "rb") as f:
        data = f.read()
    old = bad_log("version2", data[:8] + bytes([2, 0, 0, 0]) + data[12:])
    same_json(r, r.report, offline(r, old, "--format=json"))


def test_record_usage():
    """--record=- with a launched program is refused (its output would mix with the log);
    an unwritable log is said in one line with exit 2, before the program runs."""
    need_heaptrace()
    p = run([HEAPTRACE, "--record=-", target("leaks")])
    one_error_line(p, 1, ["--record=-"])
    p = run([HEAPTRACE, "--record=/nonexistent/dir/log", target("leaks")])
    one_error_line(p, 2, ["--record"])
    one_error_line(run([HEAPTRACE, "report"]), 1, ["no log"])
    one_error_line(run([HEAPTRACE, "report", "a", "b"]), 1, ["one log"])
    one_error_line(run([HEAPTRACE, "report", "--format=xml", "a"]), 1, ["xml"])
    one_error_line(run([HEAPTRACE, "report", "--bogus", "a"]), 1, ["--bogus"])


def test_record_stdout_attached():
    """heaptrace --record=- -p PID streams the log on standard output (the board's way to send
    it away), and heaptrace report - reads it from standard input: the live figures again."""
    need_heaptrace()
    b = Busy("record-stdout", 2)
    try:
        outfile = os.path.join(b.dir, "report")
        p = subprocess.run([HEAPTRACE, "--record=-", "-p", str(b.pid), "--duration=0.5",
                            "--format=json", "--outfile=%s" % outfile],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
        if p.returncode != 0:
            raise Fail("heaptrace -p exited %d: %s" % (p.returncode, p.stderr[-2000:]))
        b.expect_clean_end()
    finally:
        b.kill()
    with open(outfile) as f:
        live = json.loads(f.read().splitlines()[-1])
    # the allocator's own figures at the attach are not in the log (its blocks are)
    live.pop("heap_at_attach", None)
    live["summary"].pop("freed_from_before_attach", None)
    if not p.stdout.startswith(b"HTRACLOG"):
        raise Fail("standard output does not start with the log's header: %r" % p.stdout[:16])
    q = subprocess.run([HEAPTRACE, "report", "-", "--format=json"], input=p.stdout,
                       capture_output=True, timeout=TIMEOUT)
    if q.returncode != 0:
        raise Fail("heaptrace report - exited %d: %s" % (q.returncode, q.stderr[-2000:]))
    off = json.loads(q.stdout)
    if off != live:
        raise Fail("the log streamed on stdout does not give the live report",
                   "live: %s\noffline: %s" % (json.dumps(live)[:3000], q.stdout[:3000]))
    if off["summary"]["alloc_calls"] == 0:
        raise Fail("the busy process made no allocations while traced")


# ---------------------------------------------------------------------------------------------
# Views of a whole run: the heap at its peak, temporary allocations, calls per backtrace
# (tests/targets/history.c writes what they must be)


def by_leaf(bts):
    """{leaf function (frame 1): backtrace} of a list of backtraces."""
    out = {}
    for b in bts:
        leaf = b["frames"][1]["function"] if len(b["frames"]) > 1 else None
        if leaf in out:
            raise Fail("two backtraces from %s" % leaf)
        out[leaf] = b
    return out


def check_views(r, rep):
    """The peak object, the temporary array and the calls per live backtrace of a history
    report against the target's view records."""
    views = [x for x in r.records if x["kind"] == "view"]
    total = [v for v in views if v["name"] == "peaktotal"][0]
    peak = rep.get("peak") or {}
    if (peak.get("live_bytes"), peak.get("live_blocks")) != (total["bytes"], total["blocks"]):
        r.fail("peak has %s bytes in %s blocks, expected %d in %d"
               % (peak.get("live_bytes"), peak.get("live_blocks"), total["bytes"],
                  total["blocks"]))
    if not 0 < peak["elapsed_ns"] <= rep["summary"]["elapsed_ns"]:
        r.fail("the peak's time %s is not within the run" % peak["elapsed_ns"])
    at_peak = by_leaf(peak["backtraces"])
    want = {v["leaf"]: (v["count"], v["bytes"]) for v in views if v["name"] == "peak"}
    got = {k: (b["count"], b["size"]) for k, b in at_peak.items()}
    if got != want:
        r.fail("the heap at its peak is %s, expected %s" % (got, want))
    calls = {v["leaf"]: (v["alloc_calls"], v["temporary"], v["total_size"]) for v in views
             if v["name"] == "calls"}
    temp = {k: (b["alloc_calls"], b["temporary"], b["total_size"])
            for k, b in by_leaf(rep["temporary"]).items()}
    want_temp = {k: v for k, v in calls.items() if v[1]}
    if temp != want_temp:
        r.fail("temporary is %s, expected %s" % (temp, want_temp))
    live = {k: (b["alloc_calls"], b["temporary"], b["total_size"])
            for k, b in by_leaf(rep["backtraces"]).items()}
    want_live = {k: calls[k] for k in live}
    if live != want_live or not live:
        r.fail("the live backtraces' calls are %s, expected %s" % (live, want_live))
    if rep["summary"]["temporary"] != sum(v[1] for v in calls.values()):
        r.fail("summary.temporary is %s" % rep["summary"]["temporary"])


@variants(*OPTS)
def test_views_live_and_logged(opt):
    """history: the peak, temporary allocations and calls, exact, live and from the log."""
    r, log = recorded("history", opt)
    expect_rc(r, 0)
    check_summary(r, r.report, summary_record(r))
    check_sites(r, r.report, site_records(r))
    check_views(r, r.report)
    off = same_json(r, r.report, offline(r, log, "--format=json"))
    check_views(r, off)


def test_views_text():
    """Text: a heading and the heap at its peak, since it was far above the end."""
    r, log = recorded("history", "O0", fmt="text")
    expect_rc(r, 0)
    text = r.out or ""
    head = "\n=== heap at its peak: 2.000 MiB in 11 blocks, "
    if head not in text:
        r.fail("no peak section %r in the text report" % head.strip())
    peak = text[text.index(head):]
    one = peak.find("=== peak #1 === [count: 8] [size: 2.000 MiB] [by: peak_block (history.c:")
    two = peak.find("=== peak #2 === [count: 3] [size: 300 B] [by: keep_block (history.c:")
    if not 0 < one < two or "peak_block" not in peak[one:two] or \
            "keep_block" not in peak[two:]:
        r.fail("the peak section does not list peak_block (8) then keep_block (3)")
    if offline(r, log) != text:
        r.fail("the text report from the log differs")


def test_views_at_peak():
    """report --at=peak: the heap right after the allocation that took it to its maximum."""
    r, log = recorded("history", "O0")
    expect_rc(r, 0)
    rep = json.loads(offline(r, log, "--format=json", "--at=peak"))
    total = [x for x in r.records if x["kind"] == "view" and x["name"] == "peaktotal"][0]
    s = rep["summary"]
    if (s["live_bytes"], s["live_blocks"], s["free_calls"]) != (total["bytes"],
                                                                 total["blocks"], 0):
        r.fail("at the peak: %s" % s)
    got = {k: (b["count"], b["size"]) for k, b in by_leaf(rep["backtraces"]).items()}
    want = {x["leaf"]: (x["count"], x["bytes"]) for x in r.records
            if x["kind"] == "view" and x["name"] == "peak"}
    if got != want:
        r.fail("the backtraces at the peak are %s, expected %s" % (got, want))
    if rep["exit_status"] is not None or "statm" in rep:
        r.fail("a report in the middle of the run has an exit status or statm")
    if s["elapsed_ns"] != r.report["peak"]["elapsed_ns"]:
        r.fail("--at=peak is at %s ns, the live report's peak at %s"
               % (s["elapsed_ns"], r.report["peak"]["elapsed_ns"]))
    zero = json.loads(offline(r, log, "--format=json", "--at=0"))
    if zero["summary"]["alloc_calls"] != 0:
        r.fail("--at=0 has allocations: %s" % zero["summary"])
    late = offline(r, log, "--format=json", "--at=99999999")
    same_json(r, r.report, late)
    one_error_line(report(log, "--at=soon"), 1, ["--at"])
    one_error_line(report("-", "--at=peak"), 1, ["--at"])


def test_views_timeline():
    """report --timeline: the most bytes of any interval is the peak, the last interval holds
    what is live at the end, time goes forward; a table in text."""
    r, log = recorded("history", "O0")
    expect_rc(r, 0)
    rep = json.loads(offline(r, log, "--format=json", "--timeline"))
    tl = rep["timeline"]
    pts = tl["points"]
    if not pts or len(pts) > 256:
        r.fail("%d timeline points" % len(pts))
    times = [p["elapsed_ns"] for p in pts]
    if times != [tl["interval_ns"] * (i + 1) for i in range(len(pts))]:
        r.fail("the timeline's times are not its intervals: %s" % times[:10])
    if max(p["max_live_bytes"] for p in pts) != r.report["summary"]["peak_live_bytes"]:
        r.fail("the timeline's largest heap is not the peak")
    at = [i for i, p in enumerate(pts) if p["max_live_bytes"] == rep["peak"]["live_bytes"]][0]
    if not times[at] - tl["interval_ns"] <= rep["peak"]["elapsed_ns"] <= times[at]:
        r.fail("the peak (%d ns) is not in the interval that has it (ends %d)"
               % (rep["peak"]["elapsed_ns"], times[at]))
    last = pts[-1]
    if (last["live_bytes"], last["live_blocks"]) != (300, 3):
        r.fail("the timeline ends with %s" % last)
    del rep["timeline"]
    same_json(r, r.report, json.dumps(rep))
    text = offline(r, log, "--timeline")
    if "\n=== timeline ===\n" not in text or "     2097452\n" not in text:
        r.fail("the text timeline is missing or has no peak row")


# ---------------------------------------------------------------------------------------------
# heaptrace diff


def diff(*args):
    p = run([HEAPTRACE, "diff"] + list(args))
    if p.rc != 0:
        raise Fail("heaptrace diff exited %s" % p.rc, p.describe())
    return p.stdout


def test_diff_two_moments():
    """history from its start to its peak: peak_block and keep_block grew by exactly what the
    target made; from the peak to the end only peak_block shrank."""
    r, log = recorded("history", "O0")
    expect_rc(r, 0)
    d = json.loads(diff("--format=json", log + "@0", log + "@peak"))["diff"]
    got = {b["frames"][1]["function"]: (b["bytes_growth"], b["blocks_growth"])
           for b in d["backtraces"]}
    want = {x["leaf"]: (x["bytes"], x["count"]) for x in r.records
            if x["kind"] == "view" and x["name"] == "peak"}
    if got != want:
        r.fail("growth to the peak: %s, expected %s" % (got, want))
    if d["b"]["live_bytes"] - d["a"]["live_bytes"] != sum(v[0] for v in want.values()):
        r.fail("the live bytes of the two moments: %s, %s" % (d["a"], d["b"]))
    d = json.loads(diff("--format=json", log + "@peak", log))["diff"]
    got = {b["label"].split(" (")[0]: (b["bytes_growth"], b["blocks_growth"], b["count_b"])
           for b in d["backtraces"]}
    if got != {"peak_block": (-want["peak_block"][0], -want["peak_block"][1], 0)}:
        r.fail("from the peak to the end: %s" % got)
    text = diff(log + "@0", log + "@peak")
    if "=== growth #1 === [+2097152 bytes, +8 blocks]" not in text or \
            "[by: peak_block (history.c:" not in text:
        r.fail("the text diff lacks the peak_block growth", text)


def test_diff_two_runs():
    """Two runs of one program, at other addresses (ASLR): every backtrace is matched by its
    names, so nothing grew."""
    r1, log1 = recorded("leaks", "O0")
    r2, log2 = recorded("leaks", "O0")
    a1 = r1.report["backtraces"][0]["frames"][1]["address"]
    a2 = r2.report["backtraces"][0]["frames"][1]["address"]
    with open("/proc/sys/kernel/randomize_va_space") as f:
        if f.read().strip() != "0" and a1 == a2:
            r2.fail("two runs at the same address %s: the test proves nothing" % a1)
    d = json.loads(diff("--format=json", log1, log2))["diff"]
    if d["backtraces"]:
        r2.fail("two runs of leaks differ in %d backtraces (addresses %s, %s): %s"
                % (len(d["backtraces"]), a1, a2, json.dumps(d)[:1500]))
    if (d["a"]["live_bytes"], d["b"]["live_bytes"]) != (r1.report["summary"]["live_bytes"],
                                                        r2.report["summary"]["live_bytes"]):
        r2.fail("the diff's live bytes are not the runs': %s" % d)
    one_error_line(run([HEAPTRACE, "diff", log1]), 1, ["two logs"])
    one_error_line(run([HEAPTRACE, "diff", "--format=folded", log1, log2]), 1, ["text or json"])
    one_error_line(run([HEAPTRACE, "diff", log1, os.path.join(scratch("nolog"), "x")]), 2,
                   ["No such file"])


# ---------------------------------------------------------------------------------------------
# report --format=heaptrack, read by heaptrack's own heaptrack_print (Debian's heaptrack)


def heaptrack_size(n):
    """heaptrack_print's byte format: 1000 as the step, two decimals, B K M G."""
    units = "BKMGT"
    i = 0
    v = float(n)
    while abs(v) > 1000 and i < len(units) - 1:
        v /= 1000
        i += 1
    return "%dB" % n if i == 0 else "%.2f%s" % (v, units[i])


def heaptrack_print(path, cost):
    """heaptrack_print's flame graph integers per call chain ("main (f.c);leaf (g.c);")."""
    exe = shutil.which("heaptrack_print")
    if not exe:
        raise Fail("heaptrack_print is missing (Debian's heaptrack; tests/deps.sh installs it)")
    out = path + "." + cost
    p = run([exe, "-f", path, "-F", out, "--flamegraph-cost-type", cost])
    if p.rc != 0:
        raise Fail("heaptrack_print exited %s" % p.rc, p.describe())
    sites = {}
    with open(out) as f:
        for line in f:
            chain, _, n = line.rstrip("\n").rpartition(" ")
            sites[chain] = sites.get(chain, 0) + int(n)
    return p.stdout, sites


def chain_key(frames):
    """Our frames (0: the allocation function) as heaptrack_print -F names the chain."""
    names = []
    for fr in frames[1:]:
        names.append("%s (%s)" % (fr["function"], fr["file"]))
        if fr["function"] == "main":
            break
    return ";".join(reversed(names)) + ";"


def heaptrack_file(r, log):
    path = os.path.join(os.path.dirname(log), "run.heaptrack")
    p = report(log, "--format=heaptrack", "--outfile=%s" % path)
    if p.rc != 0:
        raise Fail("report --format=heaptrack exited %s" % p.rc, p.describe())
    return path


def test_heaptrack_format_history():
    """history as heaptrack's file: heaptrack_print gives its calls, peak and leak, and per call
    site the allocations, the bytes leaked and the bytes at the peak, exactly. (Its temporary
    count follows heaptrack's reader, which also counts the frees of the file's first
    allocation site that come right after another free, so it is not compared here:
    test_reports.py compares it on a target where that cannot happen.)"""
    r, log = recorded("history", "O0")
    expect_rc(r, 0)
    path = heaptrack_file(r, log)
    summ = r.report["summary"]
    text, allocs = heaptrack_print(path, "allocations")
    want_lines = ["calls to allocation functions: %d " % summ["alloc_calls"],
                  "peak heap memory consumption: %s\n" % heaptrack_size(summ["peak_live_bytes"]),
                  "total memory leaked: %s\n" % heaptrack_size(summ["live_bytes"])]
    missing = [w for w in want_lines if w not in text]
    if missing:
        r.fail("heaptrack_print does not say %s" % missing)
    views = [x for x in r.records if x["kind"] == "view"]
    chains = {b["frames"][1]["function"]: chain_key(b["frames"])
              for b in r.report["peak"]["backtraces"] + r.report["temporary"]}
    want = {chains[v["leaf"]]: v["alloc_calls"] for v in views if v["name"] == "calls"}
    if allocs != want:
        r.fail("allocations per site: %s, expected %s" % (allocs, want))
    _, leaked = heaptrack_print(path, "leaked")
    want = {c: 0 for c in allocs}
    want.update({chain_key(b["frames"]): b["size"] for b in r.report["backtraces"]})
    if leaked != want:
        r.fail("leaked per site: %s, expected %s" % (leaked, want))
    _, peak = heaptrack_print(path, "peak")
    want = {c: 0 for c in allocs}
    want.update({chain_key(b["frames"]): b["size"] for b in r.report["peak"]["backtraces"]})
    if peak != want:
        r.fail("peak per site: %s, expected %s" % (peak, want))


def test_heaptrack_format_leaks():
    """leaks (malloc and calloc, chains through several files): heaptrack_print's
    calls and leak are ours, and its bytes leaked per call chain are our live bytes."""
    r, log = recorded("leaks", "O2")
    expect_rc(r, 0)
    path = heaptrack_file(r, log)
    summ = r.report["summary"]
    text, _ = heaptrack_print(path, "allocations")
    for w in ["calls to allocation functions: %d " % summ["alloc_calls"],
              "total memory leaked: %s\n" % heaptrack_size(summ["live_bytes"])]:
        if w not in text:
            r.fail("heaptrack_print does not say %r" % w)
    _, leaked = heaptrack_print(path, "leaked")
    want = {}
    for b in r.report["backtraces"]:
        want[chain_key(b["frames"])] = want.get(chain_key(b["frames"]), 0) + b["size"]
    got = {c: n for c, n in leaked.items() if n}
    if got != want:
        r.fail("leaked per call chain: %s, expected %s" % (got, want))


@variants(*OPTS)
def test_record_cxx_operators_named(opt):
    """cxxops: frame 0 of a C++ site is named from the log as live, "operator new(unsigned
    long)" and its kin demangled (not "_Znwm"); the offline JSON is the live JSON."""
    r, log = recorded("cxxops", opt, opts=["--depth=24"])
    expect_rc(r, 0)
    off = same_json(r, r.report, offline(r, log, "--format=json"))
    check_sites(r, off, site_records(r))
