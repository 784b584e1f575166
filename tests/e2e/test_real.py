# SPDX-License-Identifier: GPL-2.0-only
"""Real programs nobody here wrote, compared with valgrind in the same test run:
valgrind --run-libc-freeres=no --run-cxx-freeres=no PROGRAM reports "in use at exit: X bytes in Y
blocks"; heaptrace's summary live_bytes and live_blocks must be exactly X and Y.

Making the two runs see the same program: valgrind's client gets a few extra environment
variables (LD_PRELOAD of its own libraries, LD_LIBRARY_PATH, GLIBCXX_FORCE_NEW, GLIBCPP_FORCE_NEW,
PWD), and Python copies its whole environment into os.environ, whose blocks are live at exit: each
byte of environment changes live_bytes. So the heaptrace run gets the environment valgrind's
client saw (read by running env under valgrind), with LD_PRELOAD renamed to a name of the same
length so that nothing is preloaded but the sizes match; both run in the same directory, with
PYTHONHASHSEED=0. With that, the numbers agree exactly (checked against an LD_PRELOAD counter
with the same environment). The libraries valgrind preloads are loaded by the dynamic linker with
its own minimal allocator, which neither tool counts.

alloc_calls and free_calls are compared with valgrind's "total heap usage: N allocs, M frees"
too: heaptrace counts a moving realloc as one allocation and one free, as valgrind does
(man/heaptrace.1, "What is counted").
Skipped when valgrind (or sqlite3) is not installed."""

import os
import re
import sys

import helpers
from helpers import Fail, Skip, expect_rc, heaptrace, run, scratch, which

PY_SCRIPT = ("import json, collections\n"
             "d = {str(i): [i] * (i % 7) for i in range(2000)}\n"
             "c = collections.Counter(len(v) for v in d.values())\n"
             "s = json.dumps(d, sort_keys=True)\n"
             "assert json.loads(s) == d\n"
             "keep = [bytearray(1000 + i) for i in range(20)]\n"
             "print(len(s), sorted(c.items()))\n")

SQL = ("create table t(a integer primary key, b text);"
       "with recursive n(x) as (select 1 union all select x + 1 from n where x < 500)"
       " insert into t select x, printf('row %d', x) from n;"
       "create index tb on t(b);"
       "select count(*), sum(a) from t where b like 'row 1%';")

VG_IN_USE = re.compile(r"in use at exit: ([\d,]+) bytes in ([\d,]+) blocks")
VG_TOTAL = re.compile(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees")


def python_binary():
    for p in ("/usr/bin/python3", os.path.realpath(sys.executable)):
        if os.path.isfile(p) and os.access(p, os.X_OK):
            with open(p, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return p
    raise Skip("no python3 ELF executable")


def num(s):
    return int(s.replace(",", ""))


def compare(argv, base_env, name):
    vg = which("valgrind")
    if not vg:
        raise Skip("valgrind is not installed")
    d = scratch(name)
    vg_opts = [vg, "--run-libc-freeres=no", "--run-cxx-freeres=no"]
    # The environment valgrind's client sees.
    env_proc = run(vg_opts + ["-q", "/usr/bin/env", "-0"], env_replace=base_env, cwd=d)
    if env_proc.rc != 0:
        raise Fail("valgrind env failed", env_proc.describe())
    client_env = dict(item.split("=", 1) for item in env_proc.stdout.split("\0") if "=" in item)
    if "LD_PRELOAD" in client_env:
        client_env["LD_PRELOAX"] = client_env.pop("LD_PRELOAD")

    v = run(vg_opts + list(argv), env_replace=base_env, cwd=d, timeout=600)
    m = VG_IN_USE.search(v.stderr)
    t = VG_TOTAL.search(v.stderr)
    if v.rc != 0 or not m or not t:
        raise Fail("valgrind run failed or printed no heap summary", v.describe())
    vg_bytes, vg_blocks = num(m.group(1)), num(m.group(2))
    vg_allocs, vg_frees = num(t.group(1)), num(t.group(2))

    r = heaptrace(argv[0], args=argv[1:], opts=["--blocks"], env_replace=client_env, cwd=d,
                  name=name, timeout=600)
    expect_rc(r, 0)
    if r.proc.stdout != v.stdout:
        r.fail("the program's output differs under heaptrace (%r) and valgrind (%r)"
               % (r.proc.stdout[:200], v.stdout[:200]))
    s = r.report["summary"]
    return r, s, (vg_bytes, vg_blocks, vg_allocs, vg_frees)


def check_live(r, s, vg, what):
    vg_bytes, vg_blocks = vg[0], vg[1]
    if (s["live_bytes"], s["live_blocks"]) != (vg_bytes, vg_blocks):
        r.fail("%s: heaptrace live %d bytes in %d blocks, valgrind in use at exit %d bytes in "
               "%d blocks" % (what, s["live_bytes"], s["live_blocks"], vg_bytes, vg_blocks))


def check_calls(r, s, vg, what):
    if (s["alloc_calls"], s["free_calls"]) != (vg[2], vg[3]):
        r.fail("%s: heaptrace %d allocations, %d frees; valgrind %d allocs, %d frees"
               % (what, s["alloc_calls"], s["free_calls"], vg[2], vg[3]))


def base(extra=None):
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "LC_ALL": "C"}
    env.update(extra or {})
    return env


def malloc_made(report):
    """Live blocks and bytes of heap pymalloc that malloc made: pymalloc hands a request of 0
    or of over 512 bytes to malloc, and its block is counted as the Python call's."""
    n = size = 0
    for bt in report["backtraces"]:
        if bt.get("heap") == "pymalloc":
            for b in bt.get("blocks", []):
                if b["size"] == 0 or b["size"] > 512:
                    n += 1
                    size += b["size"]
    return n, size


def test_python_live():
    """python3 -c SCRIPT with its own small-object allocator (pymalloc: arenas are mmap'd, the
    larger objects are malloc'd): valgrind's blocks are malloc's and those of pymalloc's that
    malloc made."""
    if helpers.MODE == "stubs":
        # pymalloc's own blocks (its arena map's nodes, its arena table), which malloc makes
        # inside a Python call, are taken for that call's and not counted: man page, BUGS
        raise Skip("pymalloc's own bookkeeping blocks are not counted with entry stubs")
    py = python_binary()
    r, s, vg = compare([py, "-c", PY_SCRIPT], base(), "python")
    n, size = malloc_made(r.report)
    check_live(r, dict(s, live_bytes=s["live_bytes"] + size, live_blocks=s["live_blocks"] + n),
               vg, "python3 (malloc's blocks and pymalloc's that malloc made)")


def test_python_malloc_live():
    """PYTHONMALLOC=malloc: every object is a malloc block (tens of thousands of calls)."""
    py = python_binary()
    r, s, vg = compare([py, "-c", PY_SCRIPT], base({"PYTHONMALLOC": "malloc"}), "python-malloc")
    check_live(r, s, vg, "python3 (PYTHONMALLOC=malloc)")


def test_python_malloc_calls():
    py = python_binary()
    r, s, vg = compare([py, "-c", PY_SCRIPT], base({"PYTHONMALLOC": "malloc"}), "python-calls")
    check_calls(r, s, vg, "python3 (PYTHONMALLOC=malloc)")


def sqlite():
    p = which("sqlite3")
    if not p:
        raise Skip("sqlite3 is not installed")
    return p


def test_sqlite_live():
    d = scratch("sqlite-home")
    r, s, vg = compare([sqlite(), ":memory:", SQL], base({"HOME": d}), "sqlite")
    check_live(r, s, vg, "sqlite3")


def test_sqlite_calls():
    d = scratch("sqlite-home")
    r, s, vg = compare([sqlite(), ":memory:", SQL], base({"HOME": d}), "sqlite-calls")
    check_calls(r, s, vg, "sqlite3")
