# SPDX-License-Identifier: GPL-2.0-only
"""Helpers for the end-to-end tests: run the real ./heaptrace on a target, read its report and the
records the target printed about itself (tests/targets/expect.h), normalise and compare.

A test module is tests/e2e/test_*.py; every function named test_* in it is a test, run in the order
of the source. A test passes by returning, fails by raising AssertionError (Fail is one), and is
skipped by raising Skip. @variants("O0", "O2") runs a test once per build of the targets, with the
variant as its argument. tests/run.py calls configure() before it imports the modules.
"""

import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import tempfile

ROOT = None  # the top of the source tree
BUILD = None  # the build directory (--build)
HEAPTRACE = None  # the tool under test
MODE = "stubs"  # its entry mode (--mode): tests whose figures depend on it look here
TARGETS_SRC = None  # tests/targets
TMP = None  # scratch directory for this run of the suite
TIMEOUT = 120  # seconds; only to catch hangs, never to synchronise
_run_counter = [0]


class Skip(Exception):
    """The test cannot run here (exit 77 in the shell-test convention)."""


class Fail(AssertionError):
    """A test failure: the first argument is a one-line reason, details go to the log."""

    def __init__(self, reason, details=""):
        super().__init__(reason)
        self.reason = reason
        self.details = details


def configure(root, build, heaptrace=None, tmp=None):
    global ROOT, BUILD, HEAPTRACE, TARGETS_SRC, TMP
    ROOT = os.path.abspath(root)
    BUILD = os.path.abspath(build)
    HEAPTRACE = os.path.abspath(heaptrace or os.path.join(ROOT, "heaptrace"))
    TARGETS_SRC = os.path.join(ROOT, "tests", "targets")
    TMP = tmp or tempfile.mkdtemp(prefix="heaptrace-e2e-")


def known_failure(reason):
    """Mark a test that fails for a known, documented reason (libunwind's XFAIL_TESTS): it is
    reported as XFAIL with the reason and counted as skipped; if it starts to pass, that is a
    failure, so the mark gets removed."""

    def deco(fn):
        fn.known_failure = reason
        return fn

    return deco


def variants(*names):
    """Run the decorated test once per name, passing the name (e.g. "O0", "O2")."""

    def deco(fn):
        fn.variants = list(names)
        return fn

    return deco


OPTS = ("O0", "O2")


# ---------------------------------------------------------------------------------------------
# Running things


def need_heaptrace():
    if not os.path.isfile(HEAPTRACE) or not os.access(HEAPTRACE, os.X_OK):
        raise Fail("%s is not built (run make)" % os.path.relpath(HEAPTRACE, ROOT))


def target(name, opt="O0"):
    """Path of a built target; opt "O2" selects NAME-O2, another word W NAME-W."""
    path = os.path.join(BUILD, "targets", name + ({"O0": ""}.get(opt, "-" + opt)))
    if not os.path.isfile(path):
        raise Fail("target %s is not built (run make targets)" % os.path.relpath(path, ROOT))
    return path


def scratch(name):
    """A fresh directory for one run."""
    _run_counter[0] += 1
    d = os.path.join(TMP, "%03d-%s" % (_run_counter[0], re.sub(r"[^\w.-]", "_", name)[:60]))
    os.makedirs(d)
    return d


def _no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Proc:
    """The outcome of a command: rc, stdout, stderr (text), timed_out."""

    def __init__(self, argv, rc, stdout, stderr, timed_out=False):
        self.argv = argv
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out

    def describe(self):
        return "$ %s\nexit status: %s%s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            " ".join(self.argv),
            self.rc,
            " (timed out, killed)" if self.timed_out else "",
            excerpt(self.stdout),
            excerpt(self.stderr),
        )


def excerpt(text, lines=40, width=300):
    out = []
    for line in (text or "").splitlines()[:lines]:
        out.append(line if len(line) <= width else line[:width] + "...")
    more = len((text or "").splitlines()) - lines
    if more > 0:
        out.append("... (%d more lines)" % more)
    return "\n".join(out)


def run(argv, env=None, timeout=None, stdin=subprocess.DEVNULL, cwd=None, env_replace=None,
        preexec_fn=None):
    """Run a command in its own process group; on timeout kill that group. Returns Proc.
    env adds to the environment; env_replace is the whole environment; preexec_fn runs in the
    child before the command (it must turn core dumps off itself; by default they are off)."""
    if env_replace is not None:
        full_env = dict(env_replace)
    else:
        full_env = dict(os.environ)
        full_env.update(env or {})
    p = subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=full_env,
        cwd=cwd,
        start_new_session=True,
        preexec_fn=preexec_fn or _no_core,
    )
    try:
        out, err = p.communicate(timeout=timeout or TIMEOUT)
        timed_out = False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        timed_out = True
    return Proc(
        [str(a) for a in argv],
        p.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        timed_out,
    )


class Run:
    """One heaptrace run: proc (the heaptrace process), out (report text), reports (parsed JSON
    objects, one per line, when the format is json), records (what the target printed)."""

    def __init__(self, proc, outfile, expectfile, fmt):
        self.proc = proc
        self.outfile = outfile
        self.fmt = fmt
        self.out = None
        if os.path.exists(outfile):
            with open(outfile, encoding="utf-8", errors="replace") as f:
                self.out = f.read()
        self.records = read_records(expectfile)
        self._reports = None

    @property
    def rc(self):
        return self.proc.rc

    def describe(self):
        return "%s\n--- report (%s) ---\n%s" % (
            self.proc.describe(),
            self.outfile,
            "(no file)" if self.out is None else excerpt(self.out, 60, 400),
        )

    def fail(self, reason):
        raise Fail(reason, self.describe())

    @property
    def reports(self):
        if self._reports is None:
            if self.out is None:
                self.fail("heaptrace wrote no report file")
            try:
                self._reports = parse_json_reports(self.out)
            except ValueError as e:
                self.fail("report is not JSON: %s" % e)
        return self._reports

    @property
    def report(self):
        """The only (or the last, the final) JSON report."""
        if not self.reports:
            self.fail("the report file is empty")
        return self.reports[-1]


def heaptrace(prog, args=(), opts=(), fmt="json", env=None, timeout=None, name=None,
              env_replace=None, cwd=None):
    """Run heaptrace OPTS --format=FMT --outfile=F -- PROG ARGS. The target sees
    HEAPTRACE_EXPECT (where it writes its records) and HEAPTRACE_OUTFILE (the report file),
    unless env_replace gives the whole environment."""
    need_heaptrace()
    d = scratch(name or os.path.basename(prog))
    outfile = os.path.join(d, "report")
    expectfile = os.path.join(d, "expect")
    argv = [HEAPTRACE] + list(opts)
    if fmt is not None:
        argv.append("--format=%s" % fmt)
    argv += ["--outfile=%s" % outfile, "--", prog] + [str(a) for a in args]
    e = {"HEAPTRACE_EXPECT": expectfile, "HEAPTRACE_OUTFILE": outfile}
    e.update(env or {})
    proc = run(argv, env=e, timeout=timeout, cwd=cwd or d, env_replace=env_replace)
    r = Run(proc, outfile, expectfile, fmt)
    if proc.timed_out:
        r.fail("heaptrace did not finish within %ss" % (timeout or TIMEOUT))
    return r


def parse_json_reports(text):
    """JSON Lines (one object a line), or a single object spread over several lines."""
    text = text.strip()
    if not text:
        return []
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError:
        obj = json.loads(text)
        return obj if isinstance(obj, list) else [obj]


# ---------------------------------------------------------------------------------------------
# A busy process to attach to, and what a tracer left in it


class Busy:
    """A multi-threaded process started by the test: tests/targets/busy.c, or PROG that speaks
    the same protocol (steady.c) with ARGS before the thread count, under PREFIX (e.g. strace, or
    heaptrace launching it). Its "ready PID" line is read; stop() tells it to finish through its
    standard input and returns (status, stdout, stderr); a clean end is status STATUS and the
    line "PROG: N threads stopped". No core dump if it crashes."""

    def __init__(self, name, nthreads, opt="O0", prefix=(), prog="busy", args=(), status=0):
        self.dir = scratch(name)
        self.nthreads = nthreads
        self.prog = prog
        self.status = status
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEAPTRACE_")}
        # bufsize=0: readline reads the "ready" line byte by byte and leaves the rest for stop()
        self.p = subprocess.Popen(list(prefix) + [target(prog, opt)] + [str(a) for a in args]
                                  + [str(nthreads)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, cwd=self.dir, bufsize=0,
                                  start_new_session=True, preexec_fn=_no_core)
        ready, _, _ = select.select([self.p.stdout], [], [], TIMEOUT)
        line = self.p.stdout.readline() if ready else b""
        m = re.fullmatch(rb"ready (\d+)\n", line)
        if not m:
            self.kill()
            raise Fail("%s did not get ready (status %s, said %r)"
                       % (prog, self.p.returncode, line))
        self.pid = int(m.group(1))

    def stop(self):
        try:
            out, err = self.p.communicate(b"stop\n", timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Fail("%s did not finish after \"stop\" (a thread left stopped or trapped?)"
                       % self.prog)
        return self.p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def expect_clean_end(self, r=None):
        rc, out, err = self.stop()
        want = "%s: %d threads stopped\n" % (self.prog, self.nthreads)
        why = {3: " (a worker found its data damaged)",
               -signal.SIGTRAP: " (killed by SIGTRAP: a breakpoint was left behind)"}
        if rc != self.status or out != want:
            msg = ("after heaptrace, %s exited %s%s and printed %r, expected %d and %r"
                   % (self.prog, rc, why.get(rc, ""), out, self.status, want))
            if r is not None:
                r.fail(msg)
            raise Fail(msg, err)

    def kill(self):
        """Clean up: kill what still runs (its whole session)."""
        if self.p.returncode is not None:
            return
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.communicate()


def tracer_pids(pid):
    """{tid: TracerPid} for every thread of pid."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("TracerPid:"):
                        out[int(tid)] = int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread ended while it was listed or read
    return out


def code_diffs(pid):
    """Compare every executable file-backed mapping of pid, read from /proc/PID/mem, with its
    file at the same offset. Returns (mappings checked, [description of each difference])."""
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read().splitlines()
    checked, diffs = 0, []
    fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
    try:
        for line in maps:
            parts = line.split(None, 5)
            if len(parts) < 6 or "x" not in parts[1] or not parts[5].startswith("/") \
                    or parts[5].endswith("(deleted)"):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            offset, path = int(parts[2], 16), parts[5]
            with open(path, "rb") as f:
                f.seek(offset)
                want = f.read(end - start)
            got = os.pread(fd, len(want), start)
            checked += 1
            if got != want:
                at = next(i for i in range(min(len(got), len(want))) if got[i] != want[i]) \
                    if len(got) == len(want) else 0
                n = sum(1 for a, b in zip(got, want) if a != b)
                diffs.append("%s: %d bytes differ, first at 0x%x (file offset 0x%x): %s, file %s"
                             % (os.path.basename(path), n, start + at, offset + at,
                                got[at:at + 4].hex(), want[at:at + 4].hex()))
    finally:
        os.close(fd)
    return checked, diffs


# ---------------------------------------------------------------------------------------------
# Records printed by the targets (see tests/targets/expect.h)


def read_records(path):
    recs = []
    if not os.path.exists(path):
        return recs
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            rec = {"kind": words[0], "scope": None}
            for w in words[1:]:
                k, _, v = w.partition("=")
                rec[k] = int(v) if re.fullmatch(r"-?\d+", v) else v
            recs.append(rec)
    return recs


def records(run, kind, scope=None):
    return [r for r in run.records if r["kind"] == kind and r.get("scope") == scope]


def summary_record(run, scope=None):
    recs = records(run, "summary", scope)
    if len(recs) != 1:
        run.fail("the target wrote %d summary records (expected 1): did it run to the end?"
                 % len(recs))
    return recs[0]


def site_records(run, scope=None, allow_none=False):
    recs = records(run, "site", scope)
    if not recs and not allow_none:
        run.fail("the target wrote no site records: did it run to the end?")
    return recs


def unrecorded(report, recs):
    """The live sites no record stands for, as sorted (key, count, size) tuples."""
    seen = set()
    for rec in recs:
        seen.update(id(s.bt) for s in match_record(report, rec))
    return sorted((s.key(), s.count, s.size) for s in sites(report) if id(s.bt) not in seen)


# ---------------------------------------------------------------------------------------------
# Normalising backtraces

ALIASES = {"aligned_alloc": "memalign|aligned_alloc", "memalign": "memalign|aligned_alloc"}
ALLOC_FUNCTIONS = {"malloc", "calloc", "realloc", "reallocarray", "posix_memalign",
                   "aligned_alloc", "memalign", "valloc", "pvalloc", "new", "new[]",
                   # replacement allocators' own (tests/targets/vendor.h)
                   "mallocx", "rallocx", "xallocx", "tc_malloc_skip_new_handler", "mi_zalloc",
                   "mi_mallocn", "mi_reallocn", "mi_malloc_aligned", "mi_new_n",
                   # and every other mimalloc entry point (tests/targets/mimalloc_api.c)
                   "mi_zalloc_small", "mi_malloc_small", "mi_zalloc_aligned",
                   "mi_malloc_aligned_at", "mi_zalloc_aligned_at", "mi_calloc_aligned",
                   "mi_calloc_aligned_at", "mi_heap_malloc", "mi_heap_zalloc", "mi_heap_calloc",
                   "mi_heap_mallocn", "mi_heap_malloc_small", "mi_heap_malloc_aligned",
                   "mi_heap_malloc_aligned_at", "mi_heap_zalloc_aligned",
                   "mi_heap_zalloc_aligned_at", "mi_heap_calloc_aligned",
                   "mi_heap_calloc_aligned_at", "mi_new_nothrow", "mi_new_aligned_nothrow",
                   "mi_reallocf", "mi_rezalloc", "mi_recalloc", "mi_expand",
                   "mi_realloc_aligned", "mi_realloc_aligned_at", "mi_rezalloc_aligned",
                   "mi_rezalloc_aligned_at", "mi_recalloc_aligned", "mi_recalloc_aligned_at",
                   "mi_heap_realloc", "mi_heap_realloc_aligned", "mi_heap_realloc_aligned_at",
                   "mi_heap_rezalloc", "mi_heap_recalloc", "mi_heap_rezalloc_aligned",
                   "mi_heap_rezalloc_aligned_at", "mi_heap_recalloc_aligned",
                   "mi_heap_recalloc_aligned_at", "mi_aligned_recalloc",
                   "mi_aligned_offset_recalloc", "mi_new_realloc", "mi_strdup", "mi_strndup",
                   "mi_heap_strdup", "mi_heap_strndup", "mi_mbsdup", "mi_wcsdup", "mi_realpath",
                   "mi_heap_realpath", "mi_dupenv_s", "mi_wdupenv_s",
                   # a jemalloc with the je_ prefix (tests/targets/jeprefix.c)
                   "je_malloc", "je_calloc", "je_realloc", "je_posix_memalign", "je_mallocx",
                   "je_rallocx"}
_CLONE_SUFFIX = re.compile(r"(\.(constprop|isra|part|cold|lto_priv|localalias|clone)(\.\d+)?)+$")


def fn_name(frame):
    """A frame's function name without gcc's clone suffixes; "?" when unknown."""
    name = frame.get("function")
    if not name:
        return "?"
    return _CLONE_SUFFIX.sub("", name)


def short_alloc(name):
    """A C++ operator by its short name: "operator new[](unsigned long)" is "new[]" (its
    variants, nothrow or aligned, are told apart by the targets' call chains)."""
    if name.startswith("operator ") and "(" in name:
        name = name[len("operator "):name.index("(")]
    return name


def canon_alloc(name):
    name = short_alloc(name)
    return ALIASES.get(name, name)


class Site:
    """A live backtrace, normalised: fn (frame 0, canonical), chain (frame 1 on, cut after
    main), reaches_main, and the numbers."""

    def __init__(self, bt):
        self.bt = bt
        frames = bt.get("frames") or []
        self.frames = frames
        names = [fn_name(f) for f in frames]
        self.fn = canon_alloc(names[0]) if names else "?"
        chain = names[1:]
        self.reaches_main = "main" in chain
        # blocks live before heaptrace -p attached: no call site, grouped by size class
        self.before_attach = bool(names) and names[0] == "[before attach]"
        if self.reaches_main:
            chain = chain[: chain.index("main") + 1]
        self.chain = chain
        for k in ("count", "size", "peak_count", "peak_size", "total_count", "total_size"):
            setattr(self, k, bt.get(k))
        self.heap = bt.get("heap", "malloc")

    def key(self):
        return "%s <- %s" % (self.fn, ",".join(self.chain) or "(no frames)")

    def __repr__(self):
        return "%s: count %s size %s" % (self.key(), self.count, self.size)


def sites(report):
    return [Site(bt) for bt in report.get("backtraces") or []]


def chain_matches(pattern, chain):
    """pattern: list of names, "*" = any number of frames."""
    if not pattern:
        return not chain
    if pattern[0] == "*":
        return any(chain_matches(pattern[1:], chain[i:]) for i in range(len(chain) + 1))
    return bool(chain) and chain[0] == pattern[0] and chain_matches(pattern[1:], chain[1:])


def describe_sites(report):
    out = []
    for s in sites(report):
        out.append("  %-60s count=%s size=%s peak=%s/%s total=%s" % (
            s.key(), s.count, s.size, s.peak_count, s.peak_size, s.total_count))
    return "\n".join(out) or "  (no backtraces)"


def match_record(report, rec):
    """The live sites a site record stands for."""
    pattern = rec["chain"].split(",")
    fn = canon_alloc(rec["fn"])
    return [s for s in sites(report) if s.fn == fn and chain_matches(pattern, s.chain)]


def check_sites(run, report, recs, exhaustive=True, lines=None, check_peaks=True):
    """Compare each site record with the report (count and bytes exact, peaks and totals when
    the record has them). exhaustive: every live site that reaches main must be a recorded one.
    lines: {function: (file, line)} to check the file:line of that function's frame."""
    errors = []
    matched = set()
    for rec in recs:
        found = match_record(report, rec)
        for s in found:
            matched.add(id(s.bt))
        what = "%s <- %s" % (rec["fn"], rec["chain"])
        if not found:
            errors.append("no live backtrace for %s (expected count %d, %d bytes)"
                          % (what, rec["count"], rec["bytes"]))
            continue
        count = sum(s.count for s in found)
        size = sum(s.size for s in found)
        if (count, size) != (rec["count"], rec["bytes"]):
            errors.append("%s: count %s, %s bytes; expected count %d, %d bytes"
                          % (what, count, size, rec["count"], rec["bytes"]))
        if check_peaks and "peak_count" in rec:
            got = (sum(s.peak_count for s in found), sum(s.peak_size for s in found),
                   sum(s.total_count for s in found))
            want = (rec["peak_count"], rec["peak_bytes"], rec["total_count"])
            if got != want:
                errors.append("%s: peak_count %s, peak_size %s, total_count %s; expected %s, %s, %s"
                              % ((what,) + got + want))
        for s in found:
            errors += check_frame_lines(s, lines or {})
    if exhaustive:
        # map sites back through ids, since Site objects are rebuilt per call
        for s in sites(report):
            if s.reaches_main and id(s.bt) not in matched:
                errors.append("unexpected live backtrace %s (count %s, %s bytes)"
                              % (s.key(), s.count, s.size))
    if errors:
        raise Fail(errors[0] + ("" if len(errors) == 1 else " (and %d more)" % (len(errors) - 1)),
                   "\n".join(errors) + "\n--- live backtraces ---\n" + describe_sites(report)
                   + "\n" + run.describe())


def check_frame_lines(site, lines):
    """Frame of a function with a site(FUNCTION) marker: at that line. Frame i whose callee
    (frame i-1) has a call(CALLEE) marker in frame i's file: at that line."""
    errors = []
    frames = site.frames[: len(site.chain) + 1]
    for i, f in enumerate(frames[1:], 1):
        name = fn_name(f)
        got_file = os.path.basename(f.get("file") or "") or None
        want = None
        if name in lines:
            want = lines[name]
        elif i >= 2:
            callee = fn_name(frames[i - 1])
            for where in lines.get(("call", callee), []):
                if where[0] == got_file:
                    want = where
        if want and (got_file, f.get("line")) != want:
            errors.append("%s: frame %d (%s) is at %s:%s, expected %s:%s"
                          % (site.key(), i, name, got_file, f.get("line"), want[0], want[1]))
    return errors


def check_debug_info(run, report, module):
    """Every frame from frame 1 up to main that lies in MODULE (a target built with -g) has a
    function, a file and a line. Only chains that reach main: the rest run the C library's code,
    which a static MODULE contains without debug information."""
    errors = []
    real = os.path.realpath(module)
    seen = 0
    for s in sites(report):
        if not s.reaches_main:
            continue
        for i, f in enumerate(s.frames[1:len(s.chain) + 1], 1):
            m = f.get("module")
            if not m or os.path.realpath(m) != real:
                continue
            seen += 1
            if not f.get("function") or not f.get("file") or not isinstance(f.get("line"), int):
                errors.append("%s frame %d in %s has function %r file %r line %r" % (
                    s.key(), i, os.path.basename(m), f.get("function"), f.get("file"),
                    f.get("line")))
    if not seen:
        errors.append("no frame names the module %s" % module)
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + run.describe())


def site_lines(name):
    """The markers in a target's sources (NAME.c, NAME.cc, NAME.h or the files of NAME/): {function: (file, line)} for "site(FUNCTION)" on the
    allocation call of FUNCTION, {("call", CALLEE): [(file, line)]} for "call(CALLEE)" on a
    call of CALLEE."""
    paths = []
    d = os.path.join(TARGETS_SRC, name)
    if os.path.isdir(d):
        paths = [os.path.join(d, f) for f in sorted(os.listdir(d))]
    else:
        paths = [os.path.join(TARGETS_SRC, name + ext) for ext in (".c", ".cc", ".h")]
    out = {}
    for p in paths:
        if not os.path.isfile(p) or not p.endswith((".c", ".cc", ".h")):
            continue
        with open(p) as f:
            for n, line in enumerate(f, 1):
                for m in re.finditer(r"\b(site|call)\((\w+)\)", line):
                    if m.group(1) == "site":
                        out[m.group(2)] = (os.path.basename(p), n)
                    else:
                        out.setdefault(("call", m.group(2)), []).append((os.path.basename(p), n))
    return out


def check_summary(run, report, want, keys=None, extra=None):
    """Compare summary counts with a summary record (plus extra, e.g. libc's own blocks)."""
    summ = report.get("summary")
    if not isinstance(summ, dict):
        run.fail("the report has no summary object")
    keys = keys or [k for k in want if k not in ("kind", "scope")]
    errors = []
    for k in keys:
        expected = want[k] + (extra or {}).get(k, 0)
        if summ.get(k) != expected:
            errors.append("summary.%s = %s, expected %s" % (k, summ.get(k), expected))
    if errors:
        raise Fail("; ".join(errors), "summary: %s\n%s\n--- live backtraces ---\n%s"
                   % (json.dumps(summ), run.describe(), describe_sites(report)))


def one_error_line(p, status, words=()):
    """Proc p exited with status and said why on one stderr line beginning "heaptrace:",
    naming one of words (if any)."""
    if p.rc != status:
        raise Fail("exit status %s, expected %s" % (p.rc, status), p.describe())
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    if len(lines) != 1 or not lines[0].startswith("heaptrace:"):
        raise Fail("stderr is not one line beginning \"heaptrace:\" (%d lines: %r)"
                   % (len(lines), lines[:3]), p.describe())
    if words and not any(w in lines[0] for w in words):
        raise Fail("the error mentions none of %s: %r" % (list(words), lines[0]), p.describe())


def before_attach_blocks(report):
    """How many blocks heaptrace -p found live at the attach (heap_at_attach), 0 if none."""
    return (report.get("heap_at_attach") or {}).get("live_blocks", 0)


def list_sum_errors(summ, ss):
    """The live blocks and bytes of the summary against the sums over the listed sites."""
    errors = []
    if sum(s.count for s in ss) != summ["live_blocks"]:
        errors.append("the backtraces hold %d blocks but live_blocks = %d"
                      % (sum(s.count for s in ss), summ["live_blocks"]))
    if sum(s.size for s in ss) != summ["live_bytes"]:
        errors.append("the backtraces hold %d bytes but live_bytes = %d"
                      % (sum(s.size for s in ss), summ["live_bytes"]))
    return errors


def check_consistency(run, report, custom=()):
    """Facts that hold for any report: the summary agrees with the unfiltered list; so does
    each custom heap's (summary.heaps, --alloc) with its backtraces. custom: the functions given
    to --alloc, --realloc and --free, which frame 0 of a custom heap's backtrace names."""
    summ = report["summary"]
    ss = sites(report)
    errors = []
    seeded = before_attach_blocks(report)
    if summ["alloc_calls"] + seeded - summ["free_calls"] != summ["live_blocks"]:
        errors.append("alloc_calls + blocks found at the attach - free_calls = %d but "
                      "live_blocks = %d" % (summ["alloc_calls"] + seeded - summ["free_calls"],
                                            summ["live_blocks"]))
    errors += list_sum_errors(summ, [s for s in ss if s.heap == "malloc"])
    for name, hs in (summ.get("heaps") or {}).items():
        # a hole punched in an mmap block's middle leaves two blocks of one
        if name != "mmap" and hs["alloc_calls"] - hs["free_calls"] != hs["live_blocks"]:
            errors.append("heap %s: alloc_calls - free_calls = %d but live_blocks = %d"
                          % (name, hs["alloc_calls"] - hs["free_calls"], hs["live_blocks"]))
        errors += ["heap %s: %s" % (name, e)
                   for e in list_sum_errors(hs, [s for s in ss if s.heap == name])]
    if summ.get("backtraces") != len(ss):
        errors.append("summary.backtraces = %s but %d are listed"
                      % (summ.get("backtraces"), len(ss)))
    for s in ss:
        if s.count <= 0:
            errors.append("%s is listed with count %s" % (s.key(), s.count))
        if s.heap != "malloc" and s.heap not in (summ.get("heaps") or {}):
            errors.append("%s is of heap %r, which the summary does not list" % (s.key(), s.heap))
        if s.before_attach:
            continue
        allowed = custom if s.heap != "malloc" else ALLOC_FUNCTIONS
        if not s.frames or short_alloc(fn_name(s.frames[0])) not in allowed:
            errors.append("frame 0 of %s is not a public allocation function of heap %s"
                          % (s.key(), s.heap))
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + run.describe())


RC_HINTS = {
    99: " (99: the target gave up waiting for a checkpoint: a report or a detach that never came)",
    98: " (98: the target could not signal its tracer)",
    133: " (133 = 128 + SIGTRAP: a breakpoint was hit untraced)",
}


def expect_rc(run, rc):
    if run.rc != rc:
        run.fail("heaptrace exited %s, expected %s%s" % (run.rc, rc, RC_HINTS.get(run.rc, "")))


def pre_main(report):
    """Live sites whose frames never reach main (C library or libstdc++ start-up, threads)."""
    return [s for s in sites(report) if not s.reaches_main]


def which(name):
    return shutil.which(name)


def said(stderr):
    """What heaptrace said beyond its hints: a clean run says nothing else. Hints (how to get
    symbols, a larger --depth) depend on the machine's packages, not on the run, and have
    tests of their own (test_hints, test_reports)."""
    return "\n".join(x for x in (stderr or "").strip().splitlines()
                     if not x.startswith("heaptrace: hint: "))
