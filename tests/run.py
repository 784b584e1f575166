#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""heaptrace's test runner (standard library only).

    python3 tests/run.py --build build [-k PATTERN]... [-v] [--heaptrace PATH]

Runs (a) the layout check (tests/layers.py, and that it refuses a planted wrong-way include),
every unit-test binary BUILD/unit/test_* (TAP: "ok N - name", "not ok N - name"; each line is one
test; a binary that crashes or exits non-zero without a "not ok" line, or runs fewer
tests than its "1..N" plan, counts as one more failure), then (b) the end-to-end tests: every
function test_* of every tests/e2e/test_*.py, in source order (see tests/e2e/helpers.py).

Prints "PASS name", "FAIL name: reason" or "SKIP name: reason" for each test, and last the line
"N passed, M failed" (", K skipped" when K > 0). Details of each failure (the command, heaptrace's
exit status, stderr and report) are written to BUILD/test-logs/NAME.log, and printed with -v; the
reports and records of a run with failures stay in BUILD/e2e-tmp-*, until the next run.
Exit status 0 if and only if nothing failed.
"""

import argparse
import fnmatch
import importlib.util
import inspect
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNIT_TIMEOUT = 120


class Results:
    def __init__(self, log_dir, verbose):
        self.passed = self.failed = self.skipped = 0
        self.log_dir = log_dir
        self.verbose = verbose

    def _log(self, name, text):
        if not text:
            return None
        os.makedirs(self.log_dir, exist_ok=True)
        path = os.path.join(self.log_dir, re.sub(r"[^\w.\[\]-]+", "_", name) + ".log")
        with open(path, "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        return path

    def ok(self, name):
        self.passed += 1
        print("PASS %s" % name, flush=True)

    def fail(self, name, reason, details=""):
        self.failed += 1
        reason = " ".join(str(reason).split()) or "failed"
        if len(reason) > 400:
            reason = reason[:400] + "..."
        print("FAIL %s: %s" % (name, reason), flush=True)
        self._log(name, "FAIL %s: %s\n\n%s" % (name, reason, details))
        if self.verbose and details:
            for line in details.rstrip("\n").splitlines():
                print("    " + line)
            sys.stdout.flush()

    def skip(self, name, reason):
        self.skipped += 1
        print("SKIP %s: %s" % (name, " ".join(str(reason).split()) or "skipped"), flush=True)

    def final_line(self):
        line = "%d passed, %d failed" % (self.passed, self.failed)
        if self.skipped:
            line += ", %d skipped" % self.skipped
        return line


def selected(name, patterns):
    if not patterns:
        return True
    for p in patterns:
        if any(c in p for c in "*?[") and fnmatch.fnmatchcase(name, "*" + p + "*"):
            return True
        if p in name:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# (a) unit tests

TAP_LINE = re.compile(r"^(not )?ok\b\s*(\d+)?\s*(?:-\s*)?(.*)$")
TAP_PLAN = re.compile(r"^1\.\.(\d+)")


def run_unit(build, patterns, res):
    unit_dir = os.path.join(build, "unit")
    if not os.path.isdir(unit_dir):
        return
    for entry in sorted(os.listdir(unit_dir)):
        path = os.path.join(unit_dir, entry)
        if (not entry.startswith("test_") or os.path.splitext(entry)[1] in (".d", ".o")
                or not os.path.isfile(path) or not os.access(path, os.X_OK)):
            continue
        binary = "unit/" + entry
        try:
            p = subprocess.run([path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=UNIT_TIMEOUT, cwd=ROOT)
            out, err, rc, timed_out = p.stdout, p.stderr, p.returncode, False
        except subprocess.TimeoutExpired as e:
            out, err, rc, timed_out = e.stdout or b"", e.stderr or b"", None, True
        out = out.decode("utf-8", "replace")
        err = err.decode("utf-8", "replace")
        details = "$ %s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (path, out, err)
        plan = None
        ran = any_fail = 0
        for line in out.splitlines():
            m = TAP_PLAN.match(line)
            if m:
                plan = int(m.group(1))
                continue
            m = TAP_LINE.match(line)
            if not m:
                continue
            ran += 1
            desc = m.group(3).strip()
            directive = ""
            if "#" in desc:
                desc, _, directive = desc.partition("#")
                desc, directive = desc.strip(), directive.strip()
            name = "%s: %s" % (binary, desc or "test %s" % (m.group(2) or ran))
            if not selected(name, patterns):
                continue
            if directive.upper().startswith("SKIP"):
                res.skip(name, directive[4:].strip(" :-") or "skipped")
            elif m.group(1):
                any_fail += 1
                res.fail(name, "not ok", details)
            else:
                res.ok(name)
        if not selected(binary, patterns) and ran:
            continue
        if timed_out:
            res.fail(binary, "did not finish within %d s" % UNIT_TIMEOUT, details)
        elif rc != 0 and not any_fail:
            why = ("killed by signal %d" % -rc) if rc < 0 else ("exited with status %d" % rc)
            res.fail(binary, why + " without a \"not ok\" line", details)
        elif plan is not None and ran < plan:
            res.fail(binary, "planned %d tests but ran %d" % (plan, ran), details)
        elif ran == 0 and rc == 0:
            res.fail(binary, "printed no TAP result", details)


# ---------------------------------------------------------------------------------------------
# (a') the layout's one-way order (tests/layers.py), and that the check catches a wrong-way
# include and a cycle in a copy of the tree where one is planted


def run_layers(patterns, res):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import layers
    name = "layers: src/ follows the one-way order, no dependency cycle"
    if selected(name, patterns):
        problems = layers.check(ROOT)
        if problems:
            res.fail(name, "%d problems, first: %s" % (len(problems), problems[0]),
                     "\n".join(problems))
        else:
            res.ok(name)
    plants = [  # (file, include planted, what the check must say)
        ("src/heap/table.c", "output/report.h",
         "src/heap/table.c includes output/report.h: heap may include only util, arch, heap"),
        ("src/output/html.h", "output/massif.h", "dependency cycle: src/output/html -> "
         "src/output/massif"),
        ("src/unwind/unwind.c", "frames.h", '"frames.h" without its folder'),
    ]
    for path, inc, expect in plants:
        name = "layers: the check refuses %s including %s" % (path, inc)
        if not selected(name, patterns):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            for d in ("src", "arch"):
                shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d))
            with open(os.path.join(tmp, path), "a") as f:
                f.write('\n#include "%s"\n' % inc)
            # massif.h must include html.h for the planted include to close a cycle
            if "massif" in inc:
                with open(os.path.join(tmp, "src/output/massif.h"), "a") as f:
                    f.write('\n#include "output/html.h"\n')
            problems = layers.check(tmp)
        if any(expect in p for p in problems):
            res.ok(name)
        else:
            res.fail(name, "the check did not say %r" % expect, "\n".join(problems))


# ---------------------------------------------------------------------------------------------
# (b) end-to-end tests


def load_module(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def collect(e2e_dir):
    """[(name, callable or None, error)] in file order, then source order."""
    tests = []
    for fname in sorted(os.listdir(e2e_dir)):
        if not (fname.startswith("test_") and fname.endswith(".py")):
            continue
        modname = fname[:-3]
        try:
            mod = load_module(os.path.join(e2e_dir, fname))
        except Exception:
            tests.append((modname, None, traceback.format_exc()))
            continue
        funcs = [f for n, f in vars(mod).items()
                 if n.startswith("test_") and inspect.isfunction(f)
                 and f.__module__ == mod.__name__]
        funcs.sort(key=lambda f: f.__code__.co_firstlineno)
        for f in funcs:
            base = "%s.%s" % (modname, f.__name__)
            vs = getattr(f, "variants", None)
            if vs:
                for v in vs:
                    run_one = (lambda f=f, v=v: f(v))
                    run_one.known_failure = getattr(f, "known_failure", None)
                    tests.append(("%s[%s]" % (base, v), run_one, None))
            else:
                tests.append((base, f, None))
    return tests


def failure_text(exc):
    """(reason, details) for an AssertionError without a Fail's reason."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = tb[-1] if tb else None
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if not reason and where is not None:
        reason = "assertion failed: %s (%s:%d)" % (where.line, os.path.basename(where.filename),
                                                   where.lineno)
    return reason or "assertion failed", "".join(traceback.format_exception(exc))


WRAPPER_C = r'''
#include <unistd.h>
int main(int argc, char **argv)
{
	char *args[argc + 3];

	args[0] = argv[0];
	args[1] = "--mode=%s";
	args[2] = "--max-stall=60000";
	for (int i = 1; i <= argc; i++)
		args[i + 2] = argv[i];
	execv("%s", args);
	return 127;
}
'''


def mode_wrapper(heaptrace, mode, tmp):
    """A heaptrace that runs in --mode=MODE: a program that execs the tool with the option
    first. exec keeps what tests look at: the process id (TracerPid), the signal mask and the
    ignored signals (a shell script would reset SIGCHLD). With --max-stall=60000 too: the tests
    check exact counts on a machine the suite keeps busy, where a reader starved for longer
    than the default 20 ms lets calls go unrecorded (test_stall.py, which tests that bound,
    gives it explicitly)."""
    tool = os.path.abspath(heaptrace or os.path.join(ROOT, "heaptrace"))
    src, path = os.path.join(tmp, "wrapper.c"), os.path.join(tmp, "heaptrace")
    with open(src, "w") as f:
        f.write(WRAPPER_C % (mode, tool))
    subprocess.run([os.environ.get("CC", "cc"), "-o", path, src], check=True)
    return path


def run_e2e(build, heaptrace, patterns, res, e2e_dir, mode=None):
    if not os.path.isdir(e2e_dir):
        return
    sys.path.insert(0, e2e_dir)
    import helpers  # noqa: E402  (tests/e2e/helpers.py)

    tmp = tempfile.mkdtemp(prefix="e2e-tmp-%d-" % os.getpid(),
                           dir=build if os.path.isdir(build) else None)
    if mode:
        heaptrace = mode_wrapper(heaptrace, mode, tmp)
    helpers.configure(ROOT, build, heaptrace, tmp)
    helpers.MODE = mode or "stubs"
    failed_before = res.failed
    for name, fn, error in collect(e2e_dir):
        if not selected(name, patterns):
            continue
        if mode:
            name = "%s[%s]" % (name, mode)
        if fn is None:
            res.fail(name, "cannot import: " + error.strip().splitlines()[-1], error)
            continue
        known = getattr(fn, "known_failure", None)
        try:
            fn()
        except helpers.Skip as e:
            res.skip(name, str(e))
        except AssertionError as e:  # helpers.Fail included
            if known:
                res.skip(name, "known failure: %s (got: %s)"
                         % (known, (str(e).strip().splitlines() or ["?"])[0]))
            elif isinstance(e, helpers.Fail):
                res.fail(name, e.reason, e.details + "\n" + "".join(traceback.format_exception(e)))
            else:
                reason, details = failure_text(e)
                res.fail(name, reason, details)
        except KeyboardInterrupt:
            raise
        except Exception as e:
            res.fail(name, "error in the test: %s: %s" % (type(e).__name__, e),
                     "".join(traceback.format_exception(e)))
        else:
            if known:
                res.fail(name, "passes now: remove its known_failure mark (%s)" % known)
            else:
                res.ok(name)
    if res.failed == failed_before:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("(reports and target records of this run kept in %s)" % tmp, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description="Run heaptrace's unit and end-to-end tests.")
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--heaptrace", help="the tool to test (default: ./heaptrace in the tree)")
    ap.add_argument("-k", action="append", dest="patterns", metavar="PATTERN",
                    help="run only tests whose name contains PATTERN (or matches it as a glob)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print failure details")
    ap.add_argument("--no-unit", action="store_true", help="skip the unit tests")
    ap.add_argument("--no-e2e", action="store_true", help="skip the end-to-end tests")
    ap.add_argument("--modes", default="",
                    help="run the end-to-end tests once per entry mode in this comma-separated "
                         "list (stubs, breakpoint), each test named with its mode; "
                         "default: once, in heaptrace's default mode")
    ap.add_argument("--e2e-dir", default=os.path.join(ROOT, "tests", "e2e"),
                    help=argparse.SUPPRESS)  # for testing the runner itself
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    # what an earlier run left: its failure logs and the scratch files of its failures
    shutil.rmtree(os.path.join(build, "test-logs"), ignore_errors=True)
    if os.path.isdir(build):
        for entry in os.listdir(build):
            m = re.match(r"e2e-tmp-(\d+)-", entry)
            if m and not os.path.exists("/proc/" + m.group(1)):  # not a run still going on
                shutil.rmtree(os.path.join(build, entry), ignore_errors=True)
    res = Results(os.path.join(build, "test-logs"), args.verbose)
    # A test that is interrupted still gets its summary line.
    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        if not args.no_unit:
            run_layers(args.patterns, res)
            run_unit(build, args.patterns, res)
        for mode in (args.modes.split(",") if args.modes else [None]):
            if not args.no_e2e:
                run_e2e(build, args.heaptrace, args.patterns, res, os.path.abspath(args.e2e_dir),
                        mode)
    except KeyboardInterrupt:
        res.fail("run.py", "interrupted")
    print(res.final_line(), flush=True)
    return 0 if res.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
