#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Measure heaptrace's cost per traced call against native runs, ltrace and a ptrace floor.

    python3 tests/bench/bench.py --build build [--quick] [--runs N] [--scale X]

Builds the workloads of tests/bench/ into BUILD/bench/ and runs each natively, under
./heaptrace --format=json (default depth) and, when installed, under ltrace; the runs of
one workload are interleaved and each cell is their median, so every ratio is to a native
run taken in the same invocation. The floor is a minimal single-thread tracer (floor.c):
one int3 on malloc, stepped over on each hit. Timings are printed, never checked: the exit
status is 0 unless something failed to run.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TIMEOUT = 3600  # seconds per run; only catches hangs
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
LTRACE_ARGS = ["-f", "-e", "malloc+free+calloc+realloc", "-c"]


class RunError(Exception):
    pass


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def run(argv, env, stdout):
    """Run argv to completion; return (wall seconds, peak RSS in KiB).

    The peak RSS is /usr/bin/time's %M when it is installed; otherwise wait4's ru_maxrss,
    which also counts the Python process the child was forked from.
    """
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as rss:
        timed = [TIME, "-f", "%M", "-o", rss.name] + argv if TIME else argv
        start = time.perf_counter()
        proc = subprocess.Popen(timed, env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                                stderr=err)
        timer = threading.Timer(TIMEOUT, proc.kill)
        timer.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            raise RunError(f"{' '.join(argv)}: exit status {proc.returncode}"
                           + "".join(f"\n    {line}" for line in tail))
        return wall, int(rss.read().split()[-1]) if TIME else ru.ru_maxrss


def measure(name, cells, env, runs, failed):
    """Run every cell once per round, interleaved, so drift hits all of them alike.

    cells maps a key ("native", "heaptrace", ...) to (argv, parse): "{out}" in argv becomes
    a temporary file, and parse(out_path, stdout_path) reads the result of the run. Return
    {key: (median wall, median RSS, last parse result)} for the cells that never failed.
    """
    samples = {key: [] for key in cells}
    for _ in range(runs):
        for key, (argv, parse) in cells.items():
            if samples[key] is None:
                continue
            log(f"{name} {key}")
            try:
                with tempfile.NamedTemporaryFile(prefix="bench.") as out, \
                        tempfile.NamedTemporaryFile(prefix="bench.") as stdout:
                    wall, rss = run([str(a).replace("{out}", out.name) for a in argv], env,
                                    stdout)
                    res = parse(out.name, stdout.name) if parse else None
                samples[key].append((wall, rss, res))
            except (RunError, OSError, ValueError, KeyError, IndexError) as e:
                failed.append(f"{name} {key}: {e}")
                samples[key] = None
    return {key: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v),
                  v[-1][2]) for key, v in samples.items() if v}


def heaptrace_summary(out, _):
    """The summary of the last (final) JSON report in the outfile."""
    lines = Path(out).read_text().strip().splitlines()
    if not lines:
        raise RunError("heaptrace wrote no report")
    return json.loads(lines[-1])["summary"]


def ltrace_calls(out, _):
    """The 'total' calls of ltrace -c."""
    for line in Path(out).read_text().splitlines():
        f = line.split()
        if f and f[-1] == "total":
            return int(f[-2])
    raise RunError("no ltrace -c summary")


def floor_hits(_, stdout):
    """floor.c prints "hits N" after the workload's own output (churn has none)."""
    return int(Path(stdout).read_text().split()[-1])


def build(out):
    """Compile the workloads and the floor tracer; return {name: path}."""
    out.mkdir(parents=True, exist_ok=True)
    cc = ["gcc", "-O2", "-g", "-Wall"]
    jobs = {
        "churn-fp": cc + ["-fno-omit-frame-pointer", HERE / "churn.c"],
        "churn-nofp": cc + ["-fomit-frame-pointer", HERE / "churn.c"],
        "threads": cc + ["-pthread", HERE / "threads.c"],
        "cxx": ["g++", "-O2", "-g", "-Wall", HERE / "cxx.cc"],
        "floor": cc + [HERE / "floor.c", "-ldl"],
    }
    for name, cmd in jobs.items():
        subprocess.run(cmd + ["-o", out / name], check=True)
    return {name: str(out / name) for name in jobs}


def workloads(bins, scale):
    """(name, argv) of every workload that can run here, sized by scale."""
    def n(base):
        return str(max(1, int(base * scale)))

    wl = [
        ("churn-fp", [bins["churn-fp"], n(200000)]),
        ("churn-nofp", [bins["churn-nofp"], n(200000)]),
        ("threads", [bins["threads"], "4", n(50000)]),
        ("cxx", [bins["cxx"], n(2000)]),
    ]
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    wl.append(("python3", [os.path.realpath(python), str(HERE / "workload.py"), n(30)]))
    sqlite = shutil.which("sqlite3")
    if sqlite:
        wl.append(("sqlite3", [sqlite, ":memory:", f".parameter set @n {n(20000)}",
                               f".read {HERE / 'workload.sql'}"]))
    else:
        print("sqlite3 not installed: its workload is skipped")
    return wl


def secs(s):
    return f"{s:.3f}s" if s < 100 else f"{s:.1f}s"


def row_cells(name, res, us_stop):
    """The table cells of one workload from its measured results."""
    cell = {"workload": name}
    if "native" not in res:
        return cell
    native, native_rss, _ = res["native"]
    cell["native"] = secs(native)
    ht_us, ht_calls = None, 0
    if "heaptrace" in res:
        wall, rss, s = res["heaptrace"]
        calls = ht_calls = s["alloc_calls"] + s["free_calls"] + s["unknown_frees"]
        stops = 2 * s["alloc_calls"] + s["free_calls"] + s["unknown_frees"]
        ht_us = (wall - native) / calls * 1e6 if calls else None
        cell.update({"calls": str(calls), "heaptrace": secs(wall),
                     "slowdown": f"{wall / native:.1f}x",
                     "RSS nat/ht": f"{native_rss / 1024:.1f}/{rss / 1024:.1f}"})
        if ht_us is not None:
            cell["us/call"] = f"{ht_us:.2f}"
        if stops and us_stop:
            cell["x floor"] = f"{(wall - native) * 1e6 / (stops * us_stop):.2f}"
    if "ltrace" in res:
        wall, _, calls = res["ltrace"]
        lt_us = (wall - native) / calls * 1e6 if calls else None
        cell.update({"ltrace": secs(wall), "lt calls": str(calls)})
        if lt_us:
            cell["lt us/call"] = f"{lt_us:.2f}"
        if calls < ht_calls / 2:
            cell["lt calls"] += "*"  # ltrace lost calls: the ratio would mean nothing
        elif lt_us and ht_us is not None:
            cell["ht/lt"] = f"{ht_us / lt_us:.2f}"
    return cell


def print_table(cells):
    cols = ["workload", "calls", "native", "heaptrace", "us/call", "slowdown", "RSS nat/ht",
            "ltrace", "lt calls", "lt us/call", "ht/lt", "x floor"]
    table = [[c.get(col, "-") for col in cols] for c in cells]
    widths = [max(len(col), *(len(t[i]) for t in table)) for i, col in enumerate(cols)]
    for line in [cols] + table:
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                        for i, (v, w) in enumerate(zip(line, widths))))
    print("""
calls       heaptrace's count: alloc_calls + free_calls + unknown_frees (its JSON summary)
us/call     (heaptrace - native) / calls, in microseconds; lt us/call is the same for
            ltrace over the calls it counted itself (free(NULL) included; fewer when
            it misses calls, as ltrace -f does in threads; * marks less than half of
            heaptrace's count, and then no ht/lt)
slowdown    heaptrace / native
RSS nat/ht  peak RSS in MiB of the native run and of the heaptrace run (for heaptrace,
            the larger of its own and the traced program's, as getrusage reports it)
ht/lt       heaptrace's us/call divided by ltrace's
x floor     (heaptrace - native) / (stops x the floor's us per stop), where an allocation
            needs 2 stops (entry, return) and a free 1; the floor is single-threaded""")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--quick", action="store_true", help="1 run per cell, a tenth of the work")
    ap.add_argument("--runs", type=int, help="runs per cell (default 3, 1 with --quick)")
    ap.add_argument("--scale", type=float, help="work factor (default 1, 0.1 with --quick)")
    ap.add_argument("--heaptrace", default=str(ROOT / "heaptrace"), help="the tracer to measure")
    args = ap.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    scale = args.scale or (0.1 if args.quick else 1.0)
    failed = []

    bins = build(Path(args.build).resolve() / "bench")
    env = dict(os.environ, PYTHONHASHSEED="0", LC_ALL="C")
    heaptrace = args.heaptrace if os.access(args.heaptrace, os.X_OK) else None
    ltrace = shutil.which("ltrace")
    print(f"machine: nproc {len(os.sched_getaffinity(0))}, Linux {platform.release()} "
          f"{platform.machine()}, {' '.join(platform.libc_ver())}")
    print(f"cells: median of {runs} interleaved run(s), wall clock, work scale {scale:g}")
    if heaptrace:
        print(f"heaptrace: {heaptrace} --format=json --outfile=TMP -- PROG ARG... "
              "(default depth)")
    else:
        failed.append(f"{args.heaptrace} is not built (make heaptrace)")
    if ltrace:
        ver = subprocess.run([ltrace, "-V"], capture_output=True, text=True).stdout
        print(f"ltrace:    {ltrace} {' '.join(LTRACE_ARGS)} -o TMP PROG ARG... "
              f"({ver.splitlines()[0].strip()})")
    else:
        print("ltrace:    not installed, its columns are skipped")
    wl = workloads(bins, scale)
    print("workloads:")
    for name, argv in wl:
        print(f"  {name:<11} {' '.join(argv)}")

    results = {}
    for name, argv in wl:
        cells = {"native": (argv, None)}
        if heaptrace:
            cells["heaptrace"] = ([heaptrace, "--format=json", "--outfile={out}", "--"] + argv,
                                  heaptrace_summary)
        if ltrace:
            cells["ltrace"] = ([ltrace] + LTRACE_ARGS + ["-o", "{out}"] + argv, ltrace_calls)
        if name == "churn-fp":  # the floor runs the same workload, with the handshake
            floor_argv = [bins["floor"], argv[0], "--stop"] + argv[1:]
            cells["floor"] = (floor_argv, floor_hits)
        results[name] = measure(name, cells, env, runs, failed)

    us_stop = None
    fl = results.get("churn-fp", {})
    if "floor" in fl and "native" in fl and fl["floor"][2]:
        native, wall, hits = fl["native"][0], fl["floor"][0], fl["floor"][2]
        us_stop = (wall - native) / hits / 2 * 1e6
        print(f"\nfloor (single thread only): {' '.join(floor_argv)}\n"
              "  one int3 on malloc in libc; each hit is stepped over (write back the byte,\n"
              "  PTRACE_SINGLESTEP, re-insert), 2 ptrace stops per hit\n"
              f"  native {secs(native)}, under the floor {secs(wall)}, {hits} hits -> "
              f"{us_stop:.2f} us per stop")
    print()
    print_table([row_cells(name, results[name], us_stop) for name, _ in wl])
    for f in failed:
        print(f"FAILED: {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
