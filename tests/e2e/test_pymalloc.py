# SPDX-License-Identifier: GPL-2.0-only
"""CPython's allocator traced by default: tests/targets/py/pyobjs.py keeps N strings of 222
bytes, N bytes objects of 333 and N/4 strings of 1000 (over pymalloc's 512 bytes: malloc's),
sizes it reads with sys.getsizeof, and counts them with tracemalloc at the lines that made
them. The oracles: that count (exactly N, N, N/4), and the live blocks of each size in
heaptrace's report, which are those objects plus the few of the same size the interpreter
itself holds (at most SLACK more; 4, 1 and 14 here). With entry stubs, CPython's allocator
tables (_PyObject, _PyMem) are sent through heaptrace's stubs: in pyenv's python3.11 (shared
libpython) and in Debian's /usr/bin/python3.11 (pymalloc inlined into its callers by link-time
optimisation, stripped) alike, the objects are the heap "pymalloc", the large ones counted once
(the malloc inside is part of the Python call). With breakpoints, pyenv's entry points are
traced, and Debian's inlined pymalloc is left out with one line and the PYTHONMALLOC hint.
Under PYTHONMALLOC=malloc the objects are malloc's. Launched runs start the whole interpreter
(about 70,000 calls): entry stubs only; attached runs (-p) trace the objects alone, in both
modes (fewer of them with a stop per call, as in a forked child, which has breakpoints).
python3 -S: no site module, fewer start-up calls."""

import json
import os
import select
import subprocess

import helpers
from helpers import (HEAPTRACE, TIMEOUT, TARGETS_SRC, Fail, Run, Skip, expect_rc, heaptrace,
                     need_heaptrace, run, said, scratch)

PYENV = "/root/.pyenv/versions/3.11.7/bin/python3.11"
DEBIAN = "/usr/bin/python3.11"
N = 2000
N_STOPS = 300  # where each call stops: breakpoint mode, a forked child
SLACK = 20  # blocks of the same size the interpreter holds besides the script's


def script():
    return os.path.join(TARGETS_SRC, "py", "pyobjs.py")


def python(path):
    if not os.access(path, os.X_OK):
        raise Skip("no %s" % path)
    return path


def said_by(out):
    """The JSON line pyobjs.py printed."""
    for line in out.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise Fail("pyobjs.py printed no result", out)


def sizes(report, heap):
    """Live blocks per size of heap in report (--blocks)."""
    got = {}
    for b in report["backtraces"]:
        if b.get("heap", "malloc") != heap:
            continue
        for bl in b.get("blocks", []):
            got[bl["size"]] = got.get(bl["size"], 0) + 1
    return got


def check_objects(r, report, res, heap, other):
    """The script's objects are live blocks of heap (N of each size, within SLACK), none of
    heap other; tracemalloc counted exactly what the script made."""
    tm = res["tracemalloc"]
    for tag, n in (("STR", res["n"]), ("BYTES", res["n"]), ("BIG", res["big_n"])):
        size = res[{"STR": "str", "BYTES": "bytes", "BIG": "big"}[tag]]
        if tm is not None and tm[tag] != [n, n * size]:
            r.fail("tracemalloc counted %s at line %s, expected [%d, %d]" % (tm[tag], tag, n,
                                                                             n * size))
        got = sizes(report, heap).get(size, 0)
        if not n <= got <= n + SLACK:
            r.fail("%d live %s blocks of %d bytes, expected %d (tracemalloc's count) to %d"
                   % (got, heap, size, n, n + SLACK))
        if other and sizes(report, other).get(size, 0) > SLACK:
            r.fail("%d blocks of %d bytes in heap %s too: counted twice"
                   % (sizes(report, other)[size], size, other))


def launched(py, env=None, opts=(), name="pymalloc"):
    r = heaptrace(py, args=["-S", script(), "launch", N], opts=["--blocks"] + list(opts),
                  env=env, name=name)
    expect_rc(r, 0)
    return r, said_by(r.proc.stdout)


def python_hints(r):
    return [x for x in r.proc.stderr.splitlines() if "PYTHONMALLOC" in x]


def test_pymalloc_launched():
    """pyenv's python3.11: the objects in heap "pymalloc", the 1000-byte ones not in malloc's
    as well; the allocators say pymalloc; no PYTHONMALLOC hint; a --record log names the
    heap."""
    if helpers.MODE != "stubs":  # the interpreter's start-up: a stop per call otherwise
        return
    py = python(PYENV)
    d = scratch("pymalloc-log")
    log = os.path.join(d, "py.htlog")
    r, res = launched(py, opts=["--record=" + log])
    rep = r.report
    check_objects(r, rep, res, "pymalloc", "malloc")
    if "pymalloc" not in rep["summary"].get("allocators", []):
        r.fail("allocators %s, without pymalloc" % rep["summary"].get("allocators"))
    heaps = rep["summary"].get("heaps", {})
    if heaps.get("pymalloc", {}).get("live_blocks", 0) < 2 * N + N // 4:
        r.fail("heap pymalloc's figures miss the objects: %s" % heaps.get("pymalloc"))
    if python_hints(r):
        r.fail("a PYTHONMALLOC hint where pymalloc is traced: %s" % python_hints(r))
    out = os.path.join(d, "report.json")
    p = run([HEAPTRACE, "report", "--format=json", "--blocks", "--outfile=" + out, log])
    if p.rc != 0:
        raise Fail("heaptrace report exited %s" % p.rc, p.describe())
    with open(out) as f:
        check_objects(r, helpers.parse_json_reports(f.read())[-1], res, "pymalloc", "malloc")


def test_pymalloc_python_malloc():
    """PYTHONMALLOC=malloc: the interpreter sends its domains to malloc (after a launched
    program's tables were redirected): the objects are malloc's, in both builds, none
    pymalloc's, and no hint or warning is given."""
    env = {"PYTHONMALLOC": "malloc"}
    if helpers.MODE != "stubs":  # every call is malloc's: a stop per call otherwise
        return
    for py, name in ((PYENV, "pyenv"), (DEBIAN, "debian")):
        r, res = launched(python(py), env=env, name="pymalloc-malloc-" + name)
        check_objects(r, r.report, res, "malloc", "pymalloc")
        if python_hints(r) or said(r.proc.stderr):
            r.fail("said with PYTHONMALLOC=malloc: %s" % (python_hints(r) or
                                                         said(r.proc.stderr)))


def test_pymalloc_set_again():
    """PYTHONMALLOC=pymalloc: a launched interpreter sets its tables again at its start, after
    heaptrace redirected them; one warning says its calls since were not traced, and the
    program ends as it does untraced."""
    if helpers.MODE != "stubs":  # breakpoints hold no table
        return
    r, res = launched(python(PYENV), env={"PYTHONMALLOC": "pymalloc"}, name="pymalloc-again")
    again = [x for x in r.proc.stderr.splitlines() if "set its Python allocator again" in x]
    if len(again) != 1:
        r.fail("expected one warning that the allocator was set again, got %s" % again)
    if sizes(r.report, "pymalloc").get(res["str"], 0):
        r.fail("pymalloc blocks counted after the tables were set again")


def test_pymalloc_debian():
    """Debian's python3.11 inlines pymalloc into its callers. Entry stubs trace it through its
    tables exactly, with no line about it and no hint; breakpoints cannot (a stop at the entry
    would miss the inlined calls): one line (-v) says so, none of it is traced (a partial count
    would be a wrong one), and the PYTHONMALLOC hint is given once."""
    py = python(DEBIAN)
    if helpers.MODE == "stubs":
        r, res = launched(py, opts=["-v"], name="pymalloc-debian")
    else:
        r, res = attached(py, "pymalloc-debian", N_STOPS, opts=["-v"])
    rep = r.report
    inlined = [x for x in r.proc.stderr.splitlines() if "inlined into its callers" in x]
    if helpers.MODE == "stubs":
        check_objects(r, rep, res, "pymalloc", "malloc")
        if inlined or python_hints(r):
            r.fail("said %s" % (inlined + python_hints(r)))
        return
    if "pymalloc" in rep["summary"].get("heaps", {}) or sizes(rep, "pymalloc"):
        r.fail("heap pymalloc traced at breakpoints in a build that inlines it")
    if len(inlined) != 1 or DEBIAN not in inlined[0]:
        r.fail("expected one line saying %s's pymalloc is inlined, got %s" % (DEBIAN, inlined))
    if len(python_hints(r)) != 1:
        r.fail("expected one PYTHONMALLOC hint, got %s" % python_hints(r))
    if sizes(rep, "malloc").get(res["big"], 0) < res["big_n"]:
        r.fail("the 1000-byte strings (malloc's) are missing")


def attached(py, name, n, opts=()):
    """pyobjs.py attach n under heaptrace -p: heaptrace's Run and the script's result."""
    need_heaptrace()
    d = scratch(name)
    outfile = os.path.join(d, "report")
    t = subprocess.Popen([py, "-S", script(), "attach", str(n)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=d)
    try:
        ready, _, _ = select.select([t.stdout], [], [], 60)
        if not ready or t.stdout.readline() != b"ready\n":
            raise Fail("pyobjs.py attach did not get ready")
        proc = run([HEAPTRACE, "-p", str(t.pid), "--blocks", "--format=json",
                    "--outfile=" + outfile] + list(opts))
        out, err = t.communicate(timeout=TIMEOUT)
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
    r = Run(proc, outfile, os.path.join(d, "expect"), "json")
    if proc.rc != 0 or t.returncode != 0:
        r.fail("heaptrace -p exited %s, the script %s (%s)" % (proc.rc, t.returncode,
                                                               err.decode()[-300:]))
    return r, said_by(out.decode())


def check_attached(py, name):
    """py attached with -p before it makes its objects: all of them in heap
    pymalloc, the large ones once; the large strings it made before the attach, malloc's
    blocks in the heap found at the attach, released there by PyObject_Free (none an unknown
    free of pymalloc's); the script runs on after the detach and exits 0."""
    r, res = attached(python(py), name, N if helpers.MODE == "stubs" else N_STOPS)
    check_objects(r, r.report, res, "pymalloc", "malloc")
    summ = r.report["summary"]
    if summ.get("freed_from_before_attach", 0) < res["freed_before"]:
        r.fail("%s blocks from before the attach freed, expected at least the script's %d"
               % (summ.get("freed_from_before_attach"), res["freed_before"]))
    if summ["heaps"]["pymalloc"]["unknown_frees"] >= res["freed_before"]:
        r.fail("the strings from before the attach are unknown frees of pymalloc: %s"
               % summ["heaps"]["pymalloc"])
    if said(r.proc.stderr):
        r.fail("heaptrace said: %s" % said(r.proc.stderr))


def test_pymalloc_attached():
    check_attached(PYENV, "pymalloc-attach")


def test_pymalloc_attached_debian():
    """Debian's inlined pymalloc, through its tables (breakpoints: test_pymalloc_debian)."""
    if helpers.MODE == "stubs":
        check_attached(DEBIAN, "pymalloc-attach-debian")


def test_pymalloc_fork():
    """-f: a forked child's objects are in its own report, in heap pymalloc (without
    tracemalloc: the child has a stop per call)."""
    if helpers.MODE != "stubs":  # the parent's start-up, a stop per call otherwise
        return
    py = python(PYENV)
    r = heaptrace(py, args=["-S", script(), "fork", N_STOPS, "notm"], opts=["--blocks", "-f"],
                  name="pymalloc-fork")
    expect_rc(r, 0)
    res = said_by(r.proc.stdout)
    child = [rep for rep in r.reports if rep["pid"] == res["pid"]]
    if len(child) != 1:
        r.fail("no report of the child %d" % res["pid"])
    check_objects(r, child[0], res, "pymalloc", "malloc")
