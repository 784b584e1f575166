# SPDX-License-Identifier: GPL-2.0-only
"""JIT frames named from perf maps (/tmp/perf-PID.map), and unwound through by frame pointers.

tests/targets/jitmap.c writes functions into anonymous memory at run time, names them in its
perf map line by line as a JIT does (a stale line first, code added after the first calls) and
allocates through them: the report names those frames from the map ("how": "jit"), goes on
through them to main by real steps, and a --record log still names them when the map is gone.
A map another user owns, or one anyone may write, is ignored, in one line. node, with
--perf-basic-prof --interpreted-frames-native-stack, allocates Buffers of 64 KiB and more (one
calloc each) in a function makeBuffers (tests/targets/makebuffers.js), launched and attached:
every live block the script says it made is under a backtrace that names makeBuffers. node
without a perf map gets one hint, once."""

import ctypes
import os
import re
import select
import signal
import subprocess
import time

from helpers import (OPTS, Fail, Skip, check_sites, check_summary, expect_rc, heaptrace, run,
                     scratch, site_records, summary_record, target, variants, which, TIMEOUT)
import helpers

DEPTH = "--depth=40"  # node's JavaScript frames lie 15 and more frames deep
NODE_FLAGS = ["--perf-basic-prof", "--interpreted-frames-native-stack"]


def perf_map(pid):
    return "/tmp/perf-%d.map" % pid


def remove_map(pid):
    try:
        os.unlink(perf_map(pid))
    except (FileNotFoundError, TypeError):
        pass


def jitmap_run(mode, opt="O0", opts=()):
    r = heaptrace(target("jitmap", opt), [mode], opts=list(opts), name="jitmap-" + mode)
    pid = r.reports[-1].get("pid") if r.out else None
    remove_map(pid)
    if r.rc == 77:
        raise Skip("jitmap writes x86_64 code (and gives its map away only as root)")
    expect_rc(r, 0)
    return r


def frames_of(rep, fn):
    """The frames of the live backtraces whose frames name fn."""
    return [(b, f) for b in rep["backtraces"] for f in b["frames"] if f.get("function") == fn]


@variants(*OPTS)
def test_jit_frames_named(opt):
    """jitmap: the generated functions' frames carry the names of the map's latest lines for
    their addresses, marked "jit"; the backtraces go on to main through them by frame records
    (call_jit: "fp", no frame found by the scan); counts and bytes as the target made them."""
    r = jitmap_run("ok", opt)
    rep = r.report
    check_sites(r, rep, site_records(r))
    check_summary(r, rep, summary_record(r))
    errors = []
    for fn in ("jit_inner_fn", "jit_late_fn", "jit_outer_fn"):
        found = frames_of(rep, fn)
        if not found:
            errors.append("no frame named %s" % fn)
        errors += ["%s: how %r, module %r" % (fn, f.get("how"), f.get("module"))
                   for _, f in found if f.get("how") != "jit" or f.get("module")]
    if frames_of(rep, "jit_stale_fn"):
        errors.append("a frame named from the map's earlier line for the same addresses")
    for b in rep["backtraces"]:
        names = [f.get("function") for f in b["frames"]]
        if "main" not in names:
            continue
        upto = names.index("main")
        errors += ["%s found by %s" % (f.get("function"), f.get("how"))
                   for f in b["frames"][1:upto + 1] if f.get("how") == "scan"]
        call = b["frames"][names.index("call_jit")] if "call_jit" in names else None
        if call and call.get("how") != "fp":
            errors.append("call_jit found by %r, expected fp (a JIT frame's record)"
                          % call.get("how"))
    if errors:
        r.fail(errors[0])
    if helpers.said(r.proc.stderr):
        r.fail("heaptrace said: %s" % helpers.said(r.proc.stderr))


def test_jit_names_in_log():
    """--record: the names the map gave are in the log; heaptrace report names the frames in
    text (marked [jit]), JSON, folded stacks, heaptrack's and massif's formats after the map is
    gone."""
    d = scratch("jitmap-record")
    log = os.path.join(d, "jit.htlog")
    jitmap_run("ok", opts=["--record=" + log])
    text = run([helpers.HEAPTRACE, "report", log])
    js = run([helpers.HEAPTRACE, "report", "--format=json", log])
    folded = run([helpers.HEAPTRACE, "report", "--format=folded", log])
    for p in (text, js, folded):
        if p.rc != 0:
            raise Fail("heaptrace report exited %s" % p.rc, p.describe())
    if not re.search(r"\] jit_inner_fn \+0x10 \[jit\]$", text.stdout, re.M):
        raise Fail("the text report has no frame \"jit_inner_fn +0x10 [jit]\"", text.describe())
    rep = helpers.parse_json_reports(js.stdout)[-1]
    for fn in ("jit_inner_fn", "jit_late_fn", "jit_outer_fn"):
        if not any(f.get("how") == "jit" for _, f in frames_of(rep, fn)):
            raise Fail("the log's JSON report has no jit frame %s" % fn, js.describe())
    if not re.search(r"(^|;)main;call_jit;jit_outer_fn;jit_inner_fn;malloc \d+$", folded.stdout,
                     re.M):
        raise Fail("no folded stack main;call_jit;jit_outer_fn;jit_inner_fn;malloc",
                   folded.describe())
    for fmt in ("heaptrack", "massif"):
        path = os.path.join(d, "jit." + fmt)
        p = run([helpers.HEAPTRACE, "report", "--format=" + fmt, "--outfile=" + path, log])
        with open(path, errors="replace") as f:
            got = f.read()
        missing = [fn for fn in ("jit_inner_fn", "jit_late_fn", "jit_outer_fn", "call_jit")
                   if fn not in got]
        if p.rc != 0 or missing:
            raise Fail("report --format=%s (exit %s) names no %s" % (fmt, p.rc, missing),
                       p.describe())


@variants("other", "writable")
def test_jit_map_not_trusted(mode):
    """A map owned by another user (65534), or writable by anyone: ignored, as perf ignores it,
    and said in one line naming it; no frame named from it, the counts unchanged."""
    r = jitmap_run(mode)
    rep = r.report
    check_summary(r, rep, summary_record(r))
    lines = [x for x in r.proc.stderr.splitlines() if "perf-%d.map" % rep["pid"] in x]
    if len(lines) != 1 or "ignored" not in lines[0]:
        r.fail("expected one line saying the map is ignored, got %r" % lines)
    want = "owned by uid 65534" if mode == "other" else "writable by other users"
    if want not in lines[0]:
        r.fail("the line does not say why (%r): %r" % (want, lines[0]))
    named = [f for b in rep["backtraces"] for f in b["frames"]
             if (f.get("function") or "").startswith("jit_") or f.get("how") == "jit"]
    if named:
        r.fail("frames named from an ignored map: %r" % named[:2])


# ---------------------------------------------------------------------------------------------
# node


def need_node():
    node = which("node") or which("nodejs")
    if not node:
        raise Fail("node is missing (tests/deps.sh --tests installs nodejs)")
    return node


SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "targets",
                      "makebuffers.js")


def made_line(text):
    m = re.search(r"^made (\d+) bytes (\d+)$", text or "", re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def check_buffers(r, rep, want):
    """Every Buffer's block (calloc'd, under a backtrace that names makeBuffers): as many and
    as many bytes as the script made; the makeBuffers frames named from the map ("jit"), and
    no frame below them a scanned guess."""
    count = size = 0
    errors = []
    for b in rep["backtraces"]:
        names = [f.get("function") or "" for f in b["frames"]]
        at = [i for i, n in enumerate(names) if re.search(r"\bmakeBuffers\b", n)]
        if not at or names[0] != "calloc":
            continue
        count += b["count"]
        size += b["size"]
        f = b["frames"][at[0]]
        if f.get("how") != "jit":
            errors.append("frame %d %r: how %r, expected jit" % (at[0], names[at[0]],
                                                                  f.get("how")))
        errors += ["frame %d %r found by the scan, below makeBuffers" % (i, names[i])
                   for i in range(1, at[0]) if b["frames"][i].get("how") == "scan"]
    if (count, size) != want:
        errors.insert(0, "Buffers under makeBuffers: %d blocks, %d bytes; the script made %d, "
                         "%d bytes" % ((count, size) + want))
    if errors:
        r.fail(errors[0] + ("" if len(errors) == 1 else " (and %d more)" % (len(errors) - 1)))


def test_node_launched():
    """node launched with a perf map: the report it asks for (SIGUSR1) after making its
    Buffers. One mode: node's start-up makes a million allocations."""
    if helpers.MODE != "stubs":
        raise Skip("node's start-up is traced once, in stubs mode")
    node = need_node()
    r = heaptrace(node, NODE_FLAGS + [SCRIPT, "report"], opts=[DEPTH], name="node-launched",
                  timeout=TIMEOUT)
    pid = r.reports[0].get("pid") if r.out else None
    remove_map(pid)
    expect_rc(r, 0)
    want = made_line(r.proc.stdout)
    if not want:
        r.fail("the script did not say what it made")
    check_buffers(r, r.reports[0], want)
    if any("hint: process %d is node" % pid in x for x in r.proc.stderr.splitlines()):
        r.fail("the node hint, with a perf map")


def libc_offset(name):
    """The offset of libc's function name from libc's start, and libc's path."""
    addr = ctypes.cast(getattr(ctypes.CDLL("libc.so.6"), name), ctypes.c_void_p).value
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if len(parts) >= 6 and lo <= addr < hi and "libc" in parts[5]:
                path = parts[5]
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == path and int(parts[2], 16) == 0:
                return addr - int(parts[0].split("-")[0], 16), path
    raise Fail("libc's mapping not found")


def wait_patched(pid, name):
    """Until the first byte of libc's name in process pid differs from ours (heaptrace placed
    its breakpoint or stub there)."""
    off, path = libc_offset(name)
    ours = ctypes.string_at(ctypes.cast(getattr(ctypes.CDLL("libc.so.6"), name),
                                        ctypes.c_void_p).value, 1)
    base = None
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == path and int(parts[2], 16) == 0:
                base = int(parts[0].split("-")[0], 16)
    if base is None:
        raise Fail("node maps no %s" % path)
    deadline = time.monotonic() + TIMEOUT
    fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
    try:
        while os.pread(fd, 1, base + off) == ours:
            if time.monotonic() > deadline:
                raise Fail("heaptrace never patched %s" % name)
            time.sleep(0.01)
    finally:
        os.close(fd)


class Node:
    """makebuffers.js wait, started with flags in directory d (where V8 writes its own log with
    --perf-basic-prof): "ready" read."""

    def __init__(self, flags, d):
        self.p = subprocess.Popen([need_node()] + flags + [SCRIPT, "wait"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, bufsize=0, start_new_session=True,
                                  cwd=d)
        if self.line() != "ready":
            self.kill()
            raise Fail("node did not get ready")

    def line(self):
        ready, _, _ = select.select([self.p.stdout], [], [], TIMEOUT)
        return self.p.stdout.readline().decode().strip() if ready else ""

    def say(self, text):
        self.p.stdin.write(text.encode() + b"\n")

    def kill(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
        self.p.communicate()
        remove_map(self.p.pid)


def attach(node, d, opts):
    """heaptrace -p node's pid opts, started: its Popen and report file."""
    out = os.path.join(d, "report")
    p = subprocess.Popen([helpers.HEAPTRACE, "-p", str(node.p.pid), "--format=json",
                          "--outfile=" + out] + opts, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    return p, out


def finish(p, out, d):
    """Wait for heaptrace -p to end: the Run of its report."""
    try:
        so, se = p.communicate(timeout=TIMEOUT)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        so, se = p.communicate()
        timed_out = True
    proc = helpers.Proc(p.args, p.returncode, so.decode(errors="replace"),
                        se.decode(errors="replace"), timed_out)
    r = helpers.Run(proc, out, os.path.join(d, "expect"), "json")
    if timed_out:
        r.fail("heaptrace -p did not finish")
    return r


def test_node_attached():
    """heaptrace -p on node running with a perf map, the Buffers made after the attach."""
    d = scratch("node-attached")
    node = Node(NODE_FLAGS, d)
    try:
        p, out = attach(node, d, [DEPTH, "--no-inventory"])
        wait_patched(node.p.pid, "calloc")
        node.say("go")
        want = made_line(node.line())
        if not want:
            raise Fail("node did not say what it made")
        p.send_signal(signal.SIGINT)
        r = finish(p, out, d)
        node.say("stop")
        if node.p.wait(timeout=TIMEOUT) != 0:
            r.fail("node exited %s after the detach" % node.p.returncode)
        expect_rc(r, 0)
        check_buffers(r, r.report, want)
    finally:
        node.kill()


def test_node_hint_without_map():
    """node without a perf map: one hint (how to get names, V8's heap is not malloc's), once
    for several reports."""
    d = scratch("node-hint")
    node = Node([], d)
    try:
        p, out = attach(node, d, ["--interval=0.2", "--duration=1"])
        r = finish(p, out, d)
        expect_rc(r, 0)
        if len(r.reports) < 2:
            r.fail("%d reports, expected several (--interval)" % len(r.reports))
        hints = [x for x in r.proc.stderr.splitlines() if "is node" in x]
        if len(hints) != 1 or not all(w in hints[0] for w in (
                "--perf-basic-prof", "--interpreted-frames-native-stack", "V8",
                "not malloc's", "Buffers")):
            r.fail("expected one node hint, got %r" % hints)
    finally:
        node.kill()
