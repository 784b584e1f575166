# SPDX-License-Identifier: GPL-2.0-only
"""Reports a person can act on, against targets that know what they did: the heap at its peak
when nothing is live at the end (tests/targets/peakonly.c) in text, JSON, HTML and report on a
--record log; its temporary allocations as heaptrace counts them, as heaptrack_print counts them
in heaptrace's heaptrack file, and as the target made them; labels that name the callers of
an xmalloc-style wrapper (tests/targets/wrapped.c) in text, the HTML page and the live view;
the hints for unnamed frames and for backtraces cut inside wrappers, once and only where they
apply; frames found by scanning the stack marked in text as JSON marks them; pprof refused
to a terminal; report --at past the end of a log warned about."""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import time

import helpers
from helpers import Fail, expect_rc, heaptrace, run, site_lines, target
from test_html import page_of, view
from test_live import Tmux, prepare as live_prepare, rows as live_rows
from test_pprof import offline, report
from test_record import recorded


def heaptrack_file(r, log):
    """report --format=heaptrack of log, beside it."""
    path = os.path.join(os.path.dirname(log), "run.heaptrack")
    p = report(log, "--format=heaptrack", "--outfile=%s" % path)
    if p.rc != 0:
        r.fail("report --format=heaptrack exited %s" % p.rc)
    return path


def views(r, name):
    return [x for x in r.records if x["kind"] == "view" and x["name"] == name]


def hints(p):
    return [line for line in p.stderr.splitlines() if line.startswith("heaptrace: hint:")]


def label_of(fn, name):
    """The label of the backtrace allocated in fn (a site(fn) marker in target name)."""
    f, n = site_lines(name)[fn]
    return "%s (%s:%d)" % (fn, f, n)


def mib(n):
    """The text report's sizes (binary units, three decimals) above 1 KiB."""
    return "%.3f MiB" % (n / 1048576) if n >= 1048576 else "%.3f KiB" % (n / 1024)


def check_peak_text(r, text, where):
    """peakonly's text report: the note, then its peak: grow_cache's blocks, then grow_index's,
    with their labels, counts and bytes."""
    total = views(r, "peaktotal")[0]
    if "[heaptrace] nothing is live at the end: the heap at its peak follows\n" not in text:
        r.fail("%s: no note that nothing is live" % where)
    head = "\n=== heap at its peak: %s in %d blocks, " % (mib(total["bytes"]), total["blocks"])
    if head not in text or "=== backtrace #" in text:
        r.fail("%s: no peak section %r, or live backtraces listed" % (where, head.strip()))
    peak = text[text.index(head):]
    want = [(v["leaf"], v["count"], v["bytes"]) for v in views(r, "peak")]
    want.sort(key=lambda w: -w[2])
    pos = []
    for i, (leaf, count, size) in enumerate(want):
        line = "=== peak #%d === [count: %d] [size: %s] [by: %s]\n" % (
            i + 1, count, mib(size), label_of(leaf, "peakonly"))
        pos.append(peak.find(line))
        if pos[-1] < 0:
            r.fail("%s: no line %r in the peak section" % (where, line))
    if pos != sorted(pos):
        r.fail("%s: the peak's backtraces are not largest first" % where)


def check_peak_json(r, rep, where):
    total = views(r, "peaktotal")[0]
    pk = rep["peak"]
    if (pk["live_bytes"], pk["live_blocks"]) != (total["bytes"], total["blocks"]) or \
            rep["summary"]["live_blocks"] != 0:
        r.fail("%s: the peak is %s bytes in %s blocks, peakonly made %s in %s"
               % (where, pk["live_bytes"], pk["live_blocks"], total["bytes"], total["blocks"]))
    got = {b["frames"][1]["function"]: (b["count"], b["size"]) for b in pk["backtraces"]}
    want = {v["leaf"]: (v["count"], v["bytes"]) for v in views(r, "peak")}
    if got != want:
        r.fail("%s: the peak's backtraces are %s, peakonly made %s" % (where, got, want))


def test_peak_when_nothing_live():
    """peakonly frees everything after a known peak: every report shows the heap at its peak,
    its sites with their blocks and bytes then."""
    r, log = recorded("peakonly", "O0", fmt="text")
    expect_rc(r, 0)
    check_peak_text(r, r.out or "", "the live run's text")
    check_peak_text(r, offline(r, log), "report's text")
    check_peak_json(r, json.loads(offline(r, log, "--format=json")), "report's JSON")
    j = heaptrace(target("peakonly"), name="peakonly-json")
    expect_rc(j, 0)
    check_peak_json(j, j.report, "the live run's JSON")
    v = view(page_of(log, "peak.html"))
    total = views(r, "peaktotal")[0]
    if v["first_measure"] != "bytes at the peak" or v["first_sort"] != "size_at_peak":
        r.fail("the page opens on %r sorted by %r, not on the heap at its peak"
               % (v["first_measure"], v["first_sort"]))
    if v["first_where"] != label_of("grow_cache", "peakonly") or \
            v["cards"].get("blocks at the peak") != str(total["blocks"]) or \
            "Nothing is live at the end" not in v["cap"]:
        r.fail("the page's first row %r, blocks at the peak %r, caption %r"
               % (v["first_where"], v["cards"].get("blocks at the peak"), v["cap"]))
    if v["roots"]["bytes at the peak"] != total["bytes"]:
        r.fail("the flame graph at the peak holds %s bytes" % v["roots"]["bytes at the peak"])


def test_small_peak_silent():
    """clean frees its few small blocks: its text report is still empty."""
    r = heaptrace(target("clean"), fmt="text", name="clean-silent")
    expect_rc(r, 0)
    if r.out:
        r.fail("a text report for a heap that never held 1 MiB")


def test_temporary_as_heaptrack():
    """peakonly's temporary allocations: heaptrace's figure, heaptrack_print's on heaptrace's
    heaptrack file of the same log, and the target's own count are one."""
    r, log = recorded("peakonly", "O2")
    expect_rc(r, 0)
    want = views(r, "temporary")[0]["count"]
    mine = r.report["summary"]["temporary"]
    text = run(["heaptrack_print", "-f", heaptrack_file(r, log)]).stdout
    m = re.search(r"^temporary memory allocations: (\d+)", text, re.M)
    if not m:
        r.fail("heaptrack_print gives no temporary allocations: %s" % text[-500:])
    if (mine, int(m.group(1))) != (want, want):
        r.fail("temporary allocations: heaptrace %d, heaptrack_print %s, peakonly made %d"
               % (mine, m.group(1), want))
    per = {t["frames"][1]["function"]: t["temporary"] for t in r.report["temporary"]}
    if per != {"temp_block": 40, "pair_block": 10}:
        r.fail("temporary allocations per site: %s" % per)


def test_labels_past_wrappers():
    """wrapped allocates through xmalloc and xstrdup: the text report's labels and the HTML
    page's legend and table name load_names and load_table."""
    r, log = recorded("wrapped", "O2", fmt="text")
    expect_rc(r, 0)
    want = {v["leaf"]: label_of(v["leaf"], "wrapped") for v in views(r, "label")}
    got = re.findall(r"^=== backtrace #\d+ === .* \[by: (.*)\]$", r.out or "", re.M)
    if sorted(got) != sorted(want.values()):
        r.fail("the text report's labels are %s, expected %s" % (got, sorted(want.values())))
    v = view(page_of(log, "wrapped.html"))
    legend = [x for x in v["legend"] if x != "other backtraces"]
    if sorted(legend) != sorted(want.values()):
        r.fail("the timeline's legend reads %s, expected %s" % (v["legend"], want))
    if v["first_where"] != want["load_table"]:
        r.fail("the table's first row is %r, expected %r" % (v["first_where"], want["load_table"]))


def test_live_view_labels():
    """wrapped under --live (plain text frames: standard output is no terminal): the ALLOCATED
    BY column names load_table and load_names."""
    helpers.need_heaptrace()
    want = [label_of("load_table", "wrapped"), label_of("load_names", "wrapped")]
    p = subprocess.Popen([helpers.HEAPTRACE, "--live", "--interval=0.1", target("wrapped"),
                          "wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    text = ""
    try:
        end = time.monotonic() + 60
        while not all(re.search(r"^\s+\d+\s+\d+\s+[+-]\d+\s+%s$" % re.escape(w), text, re.M)
                      for w in want):
            ready, _, _ = select.select([p.stdout], [], [], 1)
            if ready:
                chunk = os.read(p.stdout.fileno(), 65536).decode()
                if not chunk:
                    raise Fail("heaptrace's output ended without both labels", text[-3000:])
                text += chunk
            if time.monotonic() > end:
                raise Fail("the live view never named %s" % want, text[-3000:])
        p.stdin.close()
        text += p.stdout.read().decode()
        p.wait(timeout=60)
        if p.returncode != 0:
            raise Fail("heaptrace --live exited %s" % p.returncode, text[-2000:])
    finally:
        if p.returncode is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=60)


def test_live_view_labels_terminal():
    """wrapped under --live in a terminal (tmux): the view's ALLOCATED BY column names
    load_table and load_names, no row xmalloc, xstrdup or malloc; q detaches, the program runs
    on (still waiting for its byte on standard input) and ends with 0, heaptrace's status."""
    live_prepare()
    want = [label_of("load_table", "wrapped"), label_of("load_names", "wrapped")]
    d = helpers.scratch("live-labels-tty")
    fifo = os.path.join(d, "stdin")
    os.mkfifo(fifo)
    # held open for writing too: the program's stdin opens without waiting and stays open
    keep = os.open(fifo, os.O_RDWR)
    # the program's standard input is the FIFO; the view reads its keys from /dev/tty
    t = Tmux("live-labels-tty", ["sh", "-c", 'exec "$0" --live --interval=0.3 "$1" wait < "$2"',
                                 helpers.HEAPTRACE, target("wrapped"), fifo])
    try:
        s = t.wait(lambda s: all(w in [r[3] for r in live_rows(s)] for w in want),
                   "rows labelled %s" % want)
        if not t.alternate_on():
            raise Fail("the view is not on the alternate screen", s)
        wrappers = [r[3] for r in live_rows(s)
                    if re.match(r"(xmalloc|xstrdup|malloc)\b", r[3])]
        if wrappers:
            raise Fail("rows labelled by the wrappers: %s" % wrappers, s)
        t.keys("q")
        s = t.wait(lambda s: not live_rows(s), "the normal screen after q")
        if t.alternate_on():
            raise Fail("still on the alternate screen after q", s)
        if os.path.exists(t.status_file):
            raise Fail("heaptrace ended before the program was given its byte", s)
        os.write(keep, b"x")
        rc = t.status()
        if rc != 0:
            raise Fail("heaptrace exited %d, the program 0" % rc, t.screen())
    finally:
        t.close()
        os.close(keep)


def test_hint_depth():
    """wrapped with --depth=2: its backtraces end in xmalloc; one hint says --depth, naming
    how many; none at the default depth."""
    r = heaptrace(target("wrapped"), opts=["--depth=2"], name="wrapped-depth2")
    expect_rc(r, 0)
    got = hints(r.proc)
    cut = [b for b in r.report["backtraces"] if b["truncated"] and
           b["frames"][-1]["function"] in ("xmalloc", "xstrdup")]
    n = "%d backtrace%s of process" % (len(cut), "" if len(cut) == 1 else "s")
    if not cut or len(got) != 1 or n not in got[0] or "--depth=2" not in got[0]:
        r.fail("expected one --depth hint for %s, got %s" % (n, got))
    r = heaptrace(target("wrapped"), name="wrapped-depth")
    expect_rc(r, 0)
    if hints(r.proc):
        r.fail("hints at the default depth: %s" % hints(r.proc))


def test_hint_symbols():
    """A stripped program: one hint on how to get symbols; none with --symbols, none for the
    unstripped build."""
    r = heaptrace(target("leaks", "plainstripped"), name="hint-stripped")
    expect_rc(r, 0)
    got = hints(r.proc)
    if len(got) != 1 or not all(w in got[0] for w in ("have no name", "--symbols", "-dbgsym",
                                                     "--debuginfod")):
        r.fail("expected one symbols hint, got %s" % got)
    for name, prog, opts in (("hint-symbols", target("leaks", "plainstripped"),
                              ["--symbols=" + target("leaks", "plain")]),
                             ("hint-plain", target("leaks", "plain"), [])):
        r = heaptrace(prog, opts=opts, name=name)
        expect_rc(r, 0)
        if hints(r.proc):
            r.fail("%s: hints %s" % (name, hints(r.proc)))


def test_guess_marked():
    """leaks-plainstripped unwinds by scanning the stack: as many frames are marked [guess] in
    the text report as JSON marks "how": "scan", and the legend says what it means once."""
    r, log = recorded("leaks", "plainstripped")
    expect_rc(r, 0)
    rep = json.loads(offline(r, log, "--format=json"))
    scans = sum(f.get("how") == "scan" for b in rep["backtraces"] for f in b["frames"])
    text = offline(r, log, "--top=0")
    body = text.split("\n=== heap at its peak")[0]
    marked = len(re.findall(r"^\s*\d+ \[\s*0x[0-9a-f]+\] .* \[guess\]$", body, re.M))
    if not scans or marked != scans:
        r.fail("%d frames marked [guess] in text, JSON has %d found by scanning"
               % (marked, scans))
    if text.count("frames marked [guess]") != 1:
        r.fail("the [guess] note is there %d times" % text.count("frames marked [guess]"))


def test_pprof_refused_on_terminal():
    """report --format=pprof with standard output a terminal (under script): one line, status
    1; with --outfile, the file."""
    if helpers.MODE != "stubs":  # reads a log: the same in every mode
        return
    r, log = recorded("history", "O0")
    expect_rc(r, 0)
    script = shutil.which("script")
    if not script:
        raise Fail("script is missing (bsdutils)")
    cmd = "%s report --format=pprof %s" % (helpers.HEAPTRACE, log)
    p = run([script, "-qec", cmd, "/dev/null"])
    lines = [x for x in p.stdout.replace("\r", "").splitlines() if x.strip()]
    if p.rc != 1 or len(lines) != 1 or "--format=pprof" not in lines[0] or \
            "--outfile" not in lines[0]:
        r.fail("on a terminal: status %s, output %r" % (p.rc, lines[:3]))
    out = os.path.join(os.path.dirname(log), "run.pb.gz")
    p = report(log, "--format=pprof", "--outfile=" + out)
    if p.rc != 0 or not os.path.getsize(out):
        r.fail("report --format=pprof --outfile exited %s" % p.rc)


def test_at_past_end_warns():
    """report --at past the end of a log: a warning naming the log's length, and the report of
    its end; none for a moment inside the log."""
    if helpers.MODE != "stubs":  # reads a log: the same in every mode
        return
    r, log = recorded("history", "O0")
    expect_rc(r, 0)
    p = report(log, "--at=3600000")
    warn = [x for x in p.stderr.splitlines() if x.startswith("heaptrace: warning:")]
    if p.rc != 0 or len(warn) != 1 or not re.search(r"past the end .* lasts [\d.]+ ms", warn[0]):
        r.fail("report --at=3600000: status %s, warnings %s" % (p.rc, warn))
    if "=== backtrace #1 ===" not in p.stdout:
        r.fail("no report of the log's end")
    p = report(log, "--at=0")
    if p.rc != 0 or "warning" in p.stderr:
        r.fail("report --at=0 warns: %s" % p.stderr)
