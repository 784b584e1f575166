# SPDX-License-Identifier: GPL-2.0-only
"""Python frames in backtraces, read from outside the process: tests/targets/python/allocs.py
allocates at known lines of known functions (strings, bytes, dicts, lists, class instances, two
threads), launched and attached, under pyenv's CPython 3.11 (shared libpython) and Debian's
/usr/bin/python3.11 (static, LTO, stripped). The oracle is tracemalloc in the same script: per
line of the innermost Python frame, and per function, the blocks and bytes heaptrace finds live
at the moment the script measured itself are within 2 % of tracemalloc's, at the same lines.
PYTHONMALLOC=malloc makes every Python object a malloc call, which tracemalloc sees as well."""

import ast
import collections
import json
import os
import select
import signal
import subprocess
import time

from helpers import Fail, Skip, excerpt, need_heaptrace, parse_json_reports, scratch
import helpers

PYENV = "/root/.pyenv/versions/3.11.7/bin/python3.11"
DEBIAN = "/usr/bin/python3.11"
TOLERANCE = 0.02


def script():
    return os.path.join(helpers.TARGETS_SRC, "python", "allocs.py")


def sites(path):
    """{line: qualified name of the function around it} of the lines marked '# site'."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    scopes = {}

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if isinstance(child, ast.FunctionDef):
                    for line in range(child.lineno, child.end_lineno + 1):
                        scopes[line] = name
                walk(child, name + (".<locals>." if isinstance(child, ast.FunctionDef)
                                    else "."))
    walk(ast.parse(src), "")
    return {i + 1: scopes[i + 1] for i, text in enumerate(src.splitlines())
            if text.rstrip().endswith("# site")}


def wait_line(p, want, limit):
    ready, _, _ = select.select([p.stdout], [], [], limit)
    line = p.stdout.readline() if ready else b""
    if line != want:
        raise Fail("the script said %r, not %r" % (line, want))


def report_written(outfile, tracer):
    """Wait until heaptrace has written a whole JSON report to outfile."""
    deadline = time.monotonic() + helpers.TIMEOUT
    while time.monotonic() < deadline and tracer.poll() is None:
        try:
            with open(outfile, encoding="utf-8") as f:
                if parse_json_reports(f.read()):
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise Fail("heaptrace wrote no report after SIGINT")


def traced(python, how):
    """Run the script under heaptrace (launched, or attached with -p), take heaptrace's report
    once the script has measured itself: (report, tracemalloc's results, Run-like text)."""
    need_heaptrace()
    if not os.access(python, os.X_OK):
        raise Skip("%s is not installed" % python)
    d = scratch("pyframes-%s-%s" % (os.path.basename(os.path.dirname(os.path.dirname(python))),
                                    how))
    outfile, results = os.path.join(d, "report"), os.path.join(d, "tracemalloc.json")
    env = dict(os.environ, PYTHONMALLOC="malloc")
    cmd = [python, "-S", script(), how, results]
    ht = [helpers.HEAPTRACE, "--format=json", "--outfile=" + outfile]
    pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                 cwd=d, start_new_session=True)
    target = tracer = None
    try:
        if how == "launched":
            tracer = target = subprocess.Popen(ht + ["--"] + cmd, **pipes)
        else:
            target = subprocess.Popen(cmd, **pipes)
            wait_line(target, b"ready\n", 60)
            tracer = subprocess.Popen(ht + ["-p", str(target.pid)], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      start_new_session=True)
        wait_line(target, b"measured\n", helpers.TIMEOUT)
        tracer.send_signal(signal.SIGINT)  # the detach, then the report of this moment
        if how == "launched":
            # heaptrace waits for the program it launched, which runs on untraced once the
            # report is written
            report_written(outfile, tracer)
        else:
            tracer.wait(timeout=helpers.TIMEOUT)
        target.stdin.write(b"\n")
        target.stdin.close()
        rest = target.stdout.read()
        if rest != b"ended\n":
            raise Fail("the script did not end well after the detach: %r" % rest)
        for p in (tracer, target):
            if p.wait(timeout=helpers.TIMEOUT) != 0:
                raise Fail("%s exited %s" % ("heaptrace" if p is tracer else "the script",
                                             p.returncode), excerpt(p.stderr.read().decode()))
    finally:
        for p in (tracer, target):
            if p and p.poll() is None:
                p.kill()
                p.wait()
    with open(outfile, encoding="utf-8") as f:
        report = parse_json_reports(f.read())[-1]
    with open(results, encoding="utf-8") as f:
        measured = json.load(f)
    return report, measured


def innermost(bt):
    """The innermost Python frame of a backtrace, or None."""
    for f in bt["frames"]:
        if f.get("how") == "python":
            return f
    return None


def check_python_frames(report):
    """Every Python frame is {function, file, line, how}; some backtraces have them."""
    n = 0
    for bt in report["backtraces"]:
        for f in bt["frames"]:
            if f.get("how") == "python":
                n += 1
                if set(f) != {"function", "file", "line", "how"} or not f["function"]:
                    raise Fail("a Python frame has other members: %r" % f)
    if not n:
        raise Fail("no Python frame in any backtrace")


def near(a, b):
    return abs(a - b) <= TOLERANCE * max(a, b, 1)


def check_against_tracemalloc(report, measured):
    path = measured["file"]
    want = sites(script())
    by_line = collections.defaultdict(lambda: [0, 0])
    names = collections.defaultdict(collections.Counter)
    for bt in report["backtraces"]:
        f = innermost(bt)
        if f and f["file"] == path:
            by_line[f["line"]][0] += bt["count"]
            by_line[f["line"]][1] += bt["size"]
            names[f["line"]][f["function"]] += bt["size"]
    tm = {int(k): v for k, v in measured["lines"].items()}
    problems = []
    per_fn_ht, per_fn_tm = collections.Counter(), collections.Counter()
    for line, fn in sorted(want.items()):
        blocks, size = tm.get(line, (0, 0))
        got = by_line.get(line, [0, 0])
        if not blocks or not near(blocks, got[0]) or not near(size, got[1]):
            problems.append("line %d (%s): heaptrace %d blocks %d bytes, tracemalloc %d blocks "
                            "%d bytes" % (line, fn, got[0], got[1], blocks, size))
        # the function named is the one around the line (or a comprehension in it)
        top = names[line].most_common(1)
        if not top or not (top[0][0] == fn or top[0][0].startswith(fn + ".<locals>.")):
            problems.append("line %d: heaptrace names %r, the script has %s there"
                            % (line, dict(names[line]), fn))
        per_fn_ht[fn] += got[1]
        per_fn_tm[fn] += size
    for fn in per_fn_tm:
        if not near(per_fn_tm[fn], per_fn_ht[fn]):
            problems.append("%s: heaptrace %d bytes, tracemalloc %d" % (fn, per_fn_ht[fn],
                                                                         per_fn_tm[fn]))
    if problems:
        raise Fail("Python sites differ from tracemalloc's", "\n".join(problems))


def check(python, how):
    report, measured = traced(python, how)
    check_python_frames(report)
    check_against_tracemalloc(report, measured)


def test_pyenv_attached():
    check(PYENV, "attached")


def test_debian_attached():
    check(DEBIAN, "attached")


def launched(python):
    if helpers.MODE != "stubs":  # its start-up alone is 50,000 stops: one mode is enough
        raise Skip("launched Python is tested with entry stubs")
    check(python, "launched")


def test_pyenv_launched():
    launched(PYENV)


def test_debian_launched():
    launched(DEBIAN)
