# SPDX-License-Identifier: GPL-2.0-only
"""Python frames in backtraces, read from outside the process: tests/targets/python/allocs.py
allocates at known lines of known functions (strings, bytes, dicts, lists, class instances, two
threads), launched and attached, under pyenv's CPython 3.11 (shared libpython) and Debian's
/usr/bin/python3.11 (static, LTO, stripped). The oracle is tracemalloc in the same script: per
line of the innermost Python frame, and per function, the blocks and bytes heaptrace finds live
at the moment the script measured itself are within 2 % of tracemalloc's, at the same lines.
PYTHONMALLOC=malloc makes every Python object a malloc call, which tracemalloc sees as well; with
the default allocator, heaptrace's entry stubs trace pymalloc through CPython's allocator tables,
which tracemalloc wraps too."""

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
from test_record import heaptrack_print

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


def traced(python, how, opts=(), args=(), pymalloc=False, target=None):
    """Run the script, or TARGET (a script of the same protocol), with ARGS after its own, under
    heaptrace OPTS (launched, or attached with -p); take heaptrace's report once the script has
    measured itself: (report, tracemalloc's results). pymalloc: CPython's own allocator (the
    default), else PYTHONMALLOC=malloc."""
    need_heaptrace()
    if not os.access(python, os.X_OK):
        raise Skip("%s is not installed" % python)
    name = "".join("-" + a for a in args) + ("-pymalloc" if pymalloc else "")
    if target:
        name += "-" + os.path.splitext(os.path.basename(target))[0]
    d = scratch("pyframes-%s-%s%s" % (os.path.basename(os.path.dirname(os.path.dirname(python))),
                                      how, name))
    outfile, results = os.path.join(d, "report"), os.path.join(d, "tracemalloc.json")
    env = dict(os.environ)
    env.pop("PYTHONMALLOC", None)
    if not pymalloc:
        env["PYTHONMALLOC"] = "malloc"
    cmd = [python, "-S", target or script(), how, results] + list(args)
    ht = [helpers.HEAPTRACE, "--format=json", "--outfile=" + outfile] + list(opts)
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


def check(python, how, pymalloc=False):
    report, measured = traced(python, how, pymalloc=pymalloc)
    check_python_frames(report)
    check_against_tracemalloc(report, measured)


def check_pymalloc(python, how):
    """The default allocator: pymalloc's blocks, through CPython's tables, per Python line as
    tracemalloc counts them (it wraps the same tables). Entry stubs only: breakpoints cannot
    reach Debian's inlined pymalloc, and stop at every object in pyenv's."""
    if helpers.MODE != "stubs":
        raise Skip("CPython's allocator tables go through entry stubs")
    check(python, how, pymalloc=True)


def test_pyenv_pymalloc_attached():
    check_pymalloc(PYENV, "attached")


def test_debian_pymalloc_attached():
    check_pymalloc(DEBIAN, "attached")


def test_pyenv_pymalloc_launched():
    check_pymalloc(PYENV, "launched")


def test_debian_pymalloc_launched():
    check_pymalloc(DEBIAN, "launched")


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


def ending(python, how):
    """Threads that start and end at once (their thread states freed, often while another
    thread's stub runs) come and go while the others allocate: the program ends as it does
    untraced, with its own output, and the sites' figures are tracemalloc's. The stubs' walk
    is what is tested: breakpoint mode reads from outside, and its stops slow the sites down
    so much that tracemalloc's figures stray (tests/targets/python/allocs.py says why)."""
    if helpers.MODE != "stubs":
        raise Skip("threads ending are tested with entry stubs")
    report, measured = traced(python, how, args=["ending"])
    if measured["ended_threads"] < 400:
        raise Fail("only %d short-lived threads ran" % measured["ended_threads"])
    check_python_frames(report)
    check_against_tracemalloc(report, measured)


def test_threads_ending_attached():
    ending(PYENV, "attached")


def test_threads_ending_launched():
    ending(DEBIAN, "launched")


def check_code_reused(how, pymalloc):
    """tests/targets/python/codereuse.py frees each round's code objects, and most rounds get
    an earlier round's addresses: each round's live blocks are under its own file and function
    (f_R in genR.py), as many as tracemalloc finds there. A code object taken for the one that
    had its address before would give them another round's names."""
    target = os.path.join(helpers.TARGETS_SRC, "python", "codereuse.py")
    report, measured = traced(DEBIAN, how, pymalloc=pymalloc, target=target)
    if measured["reused"] < measured["rounds"] // 2:
        raise Fail("only %d of %d rounds reused a code address: the case is not made"
                   % (measured["reused"], measured["rounds"]))
    got = collections.defaultdict(lambda: [0, 0])
    problems = []
    for bt in report["backtraces"]:
        f = innermost(bt)
        if not f or not f["file"].startswith("gen"):
            continue
        r = f["file"][len("gen"):-len(".py")]
        if f["function"] != "<module>" and f["function"].split(".")[0] != "f_" + r:
            problems.append("%s in %s" % (f["function"], f["file"]))
        got[f["file"]][0] += bt["count"]
        got[f["file"]][1] += bt["size"]
    want = {k: v for k, v in measured["files"].items() if k.startswith("gen")}
    if len(want) != measured["rounds"]:
        raise Fail("tracemalloc found %d rounds' files, not %d" % (len(want),
                                                                    measured["rounds"]))
    for path, (blocks, size) in sorted(want.items()):
        # attached, heaptrace may read a record after its code object is gone: no Python
        # frames then, never another's
        if how == "attached" and got[path][0] <= blocks and got[path][1] <= size:
            continue
        if not near(blocks, got[path][0]) or not near(size, got[path][1]):
            problems.append("%s: heaptrace %d blocks %d bytes, tracemalloc %d blocks %d bytes"
                            % (path, got[path][0], got[path][1], blocks, size))
    problems += ["%s: heaptrace has blocks there, tracemalloc none" % p
                 for p in set(got) - set(want)]
    if problems:
        raise Fail("Python frames of reused code addresses are wrong", "\n".join(problems))


def test_code_reused_launched():
    # CPython's allocator tables go through entry stubs only
    check_code_reused("launched", pymalloc=helpers.MODE == "stubs")


def test_code_reused_attached():
    check_code_reused("attached", pymalloc=helpers.MODE == "stubs")


def test_code_reused_malloc():
    check_code_reused("launched", pymalloc=False)


def test_record_names_them():
    """--record writes the Python frames into the log: heaptrace report names them as the live
    report did (JSON, against tracemalloc again), and so do heaptrack's and pprof's files."""
    if helpers.MODE != "stubs":  # reads a log: the same in every mode
        raise Skip("a log's Python frames are tested with entry stubs")
    d = scratch("pyframes-record")
    log = os.path.join(d, "run.log")
    report, measured = traced(DEBIAN, "attached", ["--record=" + log])
    offline = helpers.run([helpers.HEAPTRACE, "report", log, "--format=json"])
    if offline.rc != 0:
        raise Fail("heaptrace report exited %s" % offline.rc, offline.describe())
    check_python_frames(parse_json_reports(offline.stdout)[-1])
    check_against_tracemalloc(parse_json_reports(offline.stdout)[-1], measured)
    htk = os.path.join(d, "run.heaptrack")
    p = helpers.run([helpers.HEAPTRACE, "report", log, "--format=heaptrack", "--outfile=" + htk])
    if p.rc != 0:
        raise Fail("heaptrace report --format=heaptrack exited %s" % p.rc, p.describe())
    chains = " ".join(heaptrack_print(htk, "allocations")[1])
    for fn in set(sites(script()).values()):
        if "%s (%s)" % (fn, os.path.basename(measured["file"])) not in chains:
            raise Fail("heaptrack_print does not name %s" % fn, excerpt(chains))


# ---------------------------------------------------------------------------------------------
# Bad states: fewer or no Python frames, never wrong ones, and the program unharmed


def churn():
    return os.path.join(helpers.TARGETS_SRC, "python", "churn.py")


def functions(path):
    """{qualified name: (first line, last line)} of the functions in path, and <module>."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = {"<module>": (1, 10 ** 6)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            out[node.name] = (node.lineno, node.end_lineno)
    return out


def run_churn(python, mode, n):
    """heaptrace -- python churn.py MODE N to its end: (report, heaptrace's Proc), after checking
    that the program said what it says untraced and ended as it does."""
    need_heaptrace()
    if not os.access(python, os.X_OK):
        raise Skip("%s is not installed" % python)
    env = {"PYTHONMALLOC": "malloc"}
    alone = helpers.run([python, "-S", churn(), mode, str(n)], env=env)
    if alone.rc != 0:
        raise Fail("churn.py fails untraced", alone.describe())
    r = helpers.heaptrace(python, ["-S", churn(), mode, str(n)], env=env,
                          name="pyframes-churn-%s" % mode)
    if r.rc != 0 or r.proc.stdout != alone.stdout:
        r.fail("traced, churn.py exited %s and said %r (untraced: 0, %r)"
               % (r.rc, r.proc.stdout, alone.stdout))
    return r.report, r


def check_frames_right(report, path):
    """Every Python frame of path names a function of path at a line inside it."""
    fns = functions(path)
    n = 0
    for bt in report["backtraces"]:
        for f in bt["frames"]:
            if f.get("how") != "python" or f["file"] != path:
                continue
            n += 1
            span = fns.get(f["function"].split(".")[-1])
            if not span or f["line"] is None or not span[0] <= f["line"] <= span[1]:
                raise Fail("a Python frame that is not the script's: %r" % f)
    return n


def test_threads_changing_frames():
    """8 threads whose frame chains change all the time, all allocating."""
    report, r = run_churn(PYENV, "threads", 300 if helpers.MODE == "stubs" else 40)
    if not check_frames_right(report, churn()):
        r.fail("no Python frame of the script")


def test_finalising():
    """Threads run Python code while the interpreter is finalised at exit."""
    report, r = run_churn(DEBIAN, "finalise", 2000)
    check_frames_right(report, churn())


def test_unknown_versions():
    """Another CPython: one line says its Python frames are not shown; traced without them."""
    seen = 0
    for version in ("3.10.13", "3.12.1", "3.13.0"):
        python = "/root/.pyenv/versions/%s/bin/python%s" % (version, version[:version.rindex(".")])
        if not os.access(python, os.X_OK):
            continue
        seen += 1
        report, r = run_churn(python, "threads", 20)
        said = [line for line in r.proc.stderr.splitlines() if "Python frames" in line]
        if len(said) != 1 or "not shown" not in said[0]:
            r.fail("Python %s: expected one line saying Python frames are not shown, got %r"
                   % (version, said))
        if any(f.get("how") == "python" for bt in report["backtraces"] for f in bt["frames"]):
            r.fail("Python %s: Python frames in the report" % version)
        if not report["summary"]["alloc_calls"]:
            r.fail("Python %s: no allocation traced" % version)
    if not seen:
        raise Skip("no CPython of another version installed")
