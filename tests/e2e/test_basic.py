# SPDX-License-Identifier: GPL-2.0-only
"""The basics: live sites, counts, sizes, call chains, file:line, summary, exit status, crashes,
execve, static executables. Each target prints what it is known to do (tests/targets/expect.h)."""

import json
import re

from helpers import (OPTS, Fail, check_consistency, check_debug_info, check_sites,
                     check_summary, expect_rc, heaptrace, pre_main, run, site_lines,
                     site_records, summary_record, target, variants, HEAPTRACE,
                     need_heaptrace)


def full_check(name, opt, rc=0, args=(), opts=(), env=None, prog=None):
    """Run NAME under heaptrace, check status, sites (exhaustive, with file:line), the exact
    summary, and that the C library made no blocks of its own. prog: another build of NAME's
    sources to run (a stripped copy)."""
    prog = prog or target(name, opt)
    r = heaptrace(prog, args=args, opts=opts, env=env, name="%s-%s" % (name, opt))
    expect_rc(r, rc)
    rep = r.report
    check_consistency(r, rep)
    want = summary_record(r)
    check_sites(r, rep, site_records(r, allow_none=want["live_blocks"] == 0),
                lines=site_lines(name))
    check_summary(r, rep, want)
    extra = pre_main(rep)
    if extra:
        r.fail("live blocks that do not reach main: %s" % extra)
    if rep.get("backtraces"):
        check_debug_info(r, rep, prog)
    if rep.get("exit_status") != rc:
        r.fail("exit_status is %r, expected %d" % (rep.get("exit_status"), rc))
    return r


@variants(*OPTS)
def test_demo(opt):
    full_check("demo", opt)


@variants(*OPTS)
def test_leaks(opt):
    full_check("leaks", opt)


@variants(*OPTS)
def test_exit_status(opt):
    """exit(3) -> heaptrace exits 3, and the report says so."""
    full_check("exitcode", opt, rc=3)


def test_exit_status_args():
    """Arguments reach the program: exitcode 42 exits 42."""
    full_check("exitcode", "O0", rc=42, args=["42"])


def test_exit_status_zero():
    full_check("exitcode", "O0", rc=0, args=["0"])


@variants(*OPTS)
def test_crash_segv(opt):
    """SIGSEGV: the report is still written, and heaptrace exits 128 + 11."""
    full_check("crash", opt, rc=139)


@variants(*OPTS)
def test_crash_abort(opt):
    full_check("crash", opt, rc=134, args=["abort"])


@variants(*OPTS)
def test_clean_json(opt):
    """Nothing live: the JSON report is written all the same, with no backtraces."""
    r = full_check("clean", opt)
    if r.report.get("backtraces") != []:
        r.fail("backtraces is %r, expected []" % r.report.get("backtraces"))


def test_clean_text():
    """Nothing live: the text report prints nothing."""
    r = heaptrace(target("clean"), fmt="text")
    expect_rc(r, 0)
    if r.out:
        r.fail("the text report is not empty when nothing is live")


@variants(*OPTS)
def test_execve(opt):
    """A successful execve replaces the heap: only the new image's blocks are reported."""
    full_check("execer", opt)


@variants(*OPTS)
def test_outside_main(opt):
    """Blocks made in a constructor, an atexit handler and a destructor (after main) are counted:
    tracing covers the program from its first instruction to its exit."""
    prog = target("ctor", opt)
    r = heaptrace(prog, name="ctor-" + opt)
    expect_rc(r, 0)
    rep = r.report
    check_consistency(r, rep)
    recs = site_records(r)
    check_sites(r, rep, recs, lines=site_lines("ctor"))
    check_summary(r, rep, summary_record(r))


@variants(*OPTS)
def test_own_signals(opt):
    """Signals the program sends itself (SIGTRAP by raise, kill and its own int3 on x86; SIGUSR1,
    SIGUSR2, SIGTERM) reach its handler (it exits 1 if one was swallowed), and heaptrace does not
    take them for its own: one report."""
    r = full_check("ownsignals", opt)
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1: the program's own SIGUSR1/SIGUSR2 made reports"
               % len(r.reports))


def static_run(opt, name, libc_startup_only, prog=None, opts=()):
    """Trace static target name: its sites exact with file:line, and the blocks glibc's start-up
    code makes before main (glibc 2.36: 5 in _dl_non_dynamic_init, never freed) seen and
    counted in the summary. libc_startup_only: those must come from __libc_start_main.
    prog: another build of name's sources to run (a stripped copy), with heaptrace's opts."""
    prog = prog or target(name, opt)
    r = heaptrace(prog, opts=opts, name="%s-%s" % (name, opt))
    expect_rc(r, 0)
    rep = r.report
    check_consistency(r, rep)
    check_sites(r, rep, site_records(r), lines=site_lines(name))
    check_debug_info(r, rep, prog)
    prog_sum = summary_record(r)
    early = pre_main(rep)
    if not early:
        r.fail("no live block from before main: static start-up allocations were missed")
    outside = [s for s in early if s.chain and "__libc_start_main" not in s.chain
               and "__libc_start_main_impl" not in s.chain]
    if libc_startup_only and outside:
        r.fail("live blocks neither from main nor from the C library's start-up: %s" % outside)
    extra = {"alloc_calls": sum(s.count for s in early),
             "live_blocks": sum(s.count for s in early),
             "live_bytes": sum(s.size for s in early)}
    check_summary(r, rep, prog_sum,
                  keys=["alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes"],
                  extra=extra)
    return rep, r


@variants(*OPTS)
def test_static(opt):
    """A static executable: the malloc family is found inside it."""
    static_run(opt, "static_leaks", libc_startup_only=False)


@variants(*OPTS)
def test_static_pie(opt):
    """A static PIE (-static-pie): no dynamic linker, loaded at a random address; the malloc
    family is found inside it at its load bias, and the start-up blocks are the only other
    live blocks."""
    rep, r = static_run(opt, "staticpie_leaks", libc_startup_only=True)
    if rep.get("exit_status") != 0:
        r.fail("exit_status is %r, expected 0" % rep.get("exit_status"))


def test_report_fields():
    """The JSON report has every field man/heaptrace.1 documents, with the right types."""
    prog = target("leaks")
    r = heaptrace(prog)
    rep = r.report
    errors = []

    def need(obj, key, types, where):
        types = types if isinstance(types, tuple) else (types,)
        if key not in obj:
            errors.append("%s has no %r" % (where, key))
        elif isinstance(obj[key], bool) or not isinstance(obj[key], types):
            errors.append("%s.%s is %r" % (where, key, obj[key]))

    need(rep, "version", str, "report")
    need(rep, "pid", int, "report")
    need(rep, "command", str, "report")
    need(rep, "exit_status", int, "report")
    need(rep, "summary", dict, "report")
    need(rep, "backtraces", list, "report")
    for k in ("alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes",
              "peak_live_blocks", "peak_live_bytes", "total_allocated_bytes", "backtraces",
              "total_backtraces", "elapsed_ns"):
        need(rep.get("summary", {}), k, int, "summary")
    for i, bt in enumerate(rep.get("backtraces", [])):
        for k in ("count", "peak_count", "size", "peak_size", "age_ns", "total_count",
                  "total_size", "frames"):
            need(bt, k, list if k == "frames" else int, "backtraces[%d]" % i)
        for j, f in enumerate(bt.get("frames", [])):
            w = "backtraces[%d].frames[%d]" % (i, j)
            need(f, "address", str, w)
            if not re.fullmatch(r"0x[0-9a-f]+", str(f.get("address"))):
                errors.append("%s.address %r is not 0x-hex" % (w, f.get("address")))
            for k, types in (("function", (str, type(None))), ("offset", (int, type(None))),
                             ("module", (str, type(None))), ("file", (str, type(None))),
                             ("line", (int, type(None)))):
                need(f, k, types, w)
    if not errors:
        if rep["command"] != prog:
            errors.append("command is %r, expected %r" % (rep["command"], prog))
        s = rep["summary"]
        if s["total_backtraces"] < s["backtraces"]:
            errors.append("total_backtraces < backtraces")
        if s["peak_live_blocks"] < s["live_blocks"] or s["peak_live_bytes"] < s["live_bytes"]:
            errors.append("a peak is below the current value")
        if s["total_allocated_bytes"] < s["live_bytes"]:
            errors.append("total_allocated_bytes < live_bytes")
        if s["elapsed_ns"] <= 0:
            errors.append("elapsed_ns is %r" % s["elapsed_ns"])
        for bt in rep["backtraces"]:
            if bt["peak_count"] < bt["count"] or bt["peak_size"] < bt["size"] or \
                    bt["total_count"] < bt["count"] or bt["total_size"] < bt["size"]:
                errors.append("a backtrace's peak or total is below its current value: %s"
                              % json.dumps({k: v for k, v in bt.items() if k != "frames"}))
                break
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + r.describe())


def test_command_with_args():
    """command is the program and its arguments joined by spaces."""
    prog = target("exitcode")
    r = heaptrace(prog, args=["0"])
    if r.report.get("command") != prog + " 0":
        r.fail("command is %r, expected %r" % (r.report.get("command"), prog + " 0"))
    if not isinstance(r.report.get("pid"), int) or r.report["pid"] <= 1:
        r.fail("pid is %r" % r.report.get("pid"))


def test_version_in_report():
    """The report's version is the one --version prints."""
    need_heaptrace()
    v = run([HEAPTRACE, "--version"])
    r = heaptrace(target("clean"))
    version = r.report.get("version")
    if not isinstance(version, str) or not re.fullmatch(r"\d+\.\d+\.\d+.*", version):
        r.fail("version %r is not x.y.z" % version)
    if version not in v.stdout:
        r.fail("--version printed %r, the report says %r" % (v.stdout.strip(), version))


def test_text_report():
    """The text report: one "=== backtrace #N ===" block per live backtrace, frames numbered from 0
    with the allocation function first, file:line for code built with -g, and the trailer."""
    r = heaptrace(target("demo"), fmt="text")
    expect_rc(r, 0)
    text = r.out or ""
    head = re.compile(r"^=== backtrace #(\d+) === \[count/peak: (\d+)/(\d+)\] "
                      r"\[size/peak: ([\d.]+ ?\w+)/([\d.]+ ?\w+)\] \[age: [\d.]+ ?\w+\] "
                      r"\[by: (\w+) \((\w+\.c):\d+\)\]\s*$")
    blocks = []
    for line in text.splitlines():
        m = head.match(line)
        if m:
            blocks.append({"n": int(m.group(1)), "count": int(m.group(2)), "frames": [],
                           "label": (m.group(6), m.group(7))})
        elif line.startswith("=== backtrace"):
            r.fail("malformed block header: %r" % line)
        elif blocks and re.match(r"^\s*\d+ \[0x[0-9a-f]+\]", line):
            blocks[-1]["frames"].append(line)
    if [b["n"] for b in blocks] != [1, 2]:
        r.fail("expected blocks #1 and #2 (demo leaks at two sites), got %s"
               % [b["n"] for b in blocks])
    # default sort is by size: the buckets (3 x 1024) before the keys (6 x 16)
    if [b["count"] for b in blocks] != [3, 6]:
        r.fail("block counts %s, expected [3, 6] (sorted by size)" % [b["count"] for b in blocks])
    want = [("cache_new_bucket", "cache.c"), ("config_intern_key", "config.c")]
    for b, (fn, src) in zip(blocks, want):
        fr = b["frames"]
        if len(fr) < 2 or not re.match(r"^\s*0 \[0x[0-9a-f]+\] malloc\b", fr[0]):
            r.fail("block #%d frame 0 is not malloc: %r" % (b["n"], fr[:1]))
        if b["label"] != (fn, src):
            r.fail("block #%d is labelled %s, expected %s in %s" % (b["n"], b["label"], fn, src))
        if not re.match(r"^\s*1 \[0x[0-9a-f]+\] %s\b.*\(%s:\d+\)" % (fn, src), fr[1]):
            r.fail("block #%d frame 1 is %r, expected %s with (%s:LINE)" % (b["n"], fr[1], fn, src))
    for key in ("heap traced num of backtrace", "heap traced allocation size", "statm info"):
        if not re.search(r"^\[heaptrace\] %s[^:\n]*:" % key, text, re.M):
            r.fail("no \"[heaptrace] %s\" line" % key)
    m = re.search(r"^\[heaptrace\] heap traced num of backtrace\s*:\s*(\d+)", text, re.M)
    if m and int(m.group(1)) != 2:
        r.fail("num of backtrace is %s, expected 2" % m.group(1))


def test_report_on_stderr():
    """Without --outfile the (text) report goes to standard error; stdout is the program's."""
    need_heaptrace()
    p = run([HEAPTRACE, "--", target("demo")])
    if p.rc != 0:
        raise Fail("heaptrace exited %s" % p.rc, p.describe())
    if "=== backtrace #1 ===" not in p.stderr:
        raise Fail("no text report on stderr", p.describe())
    if "=== backtrace" in p.stdout:
        raise Fail("the report went to stdout", p.describe())
