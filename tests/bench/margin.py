# SPDX-License-Identifier: GPL-2.0-only
"""The margin: what one more call costs under each tool, as a long-running program feels it.

Every workload runs at a small and a large size; a tool's cost per call is the slope between
the two, (T_large - T_small) / (calls_large - calls_small), so that start-up, symbol reading and
the final report cancel out (heaptrack's shell wrapper and interpreter start in about 0.3 s,
which a whole-run average spreads over the calls). T is the wall clock, and the CPU time (user +
system) of the whole process tree: wait4's rusage of the process run, which adds every
descendant it and they reaped (heaptrace's threads, heaptrack's interpreter and compressor, the
program). The calls are heaptrace's count in its default mode (alloc_calls + free_calls +
unknown_frees of its JSON summary, every heap's) of each size: the workloads are
deterministic. The tools' columns are the overhead, the tool's slope minus the untraced
slope; the untraced slope is shown beside.
Each cell is the median of interleaved runs (every size and tool once per round).
"""
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIMEOUT = 1800  # seconds per run; only catches hangs
# A tool whose run takes longer than this is not run again for that workload (its column says
# "slow"): breakpoint mode stops at every call, minutes on node and python3.
CELL_LIMIT = 120


class RunError(Exception):
    pass


SAMPLE_BYTES = 524288  # the "sampled" column: --sample-bytes, heapprofd's default


def tree_run(argv, env):
    """Run argv to completion; return (wall seconds, CPU seconds of the process tree)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
        timer = threading.Timer(TIMEOUT, proc.kill)
        timer.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        timer.cancel()
        code = os.waitstatus_to_exitcode(status)
        if code:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-2:]
            raise RunError(f"{' '.join(map(str, argv))}: exit status {code}"
                           + "".join(f"\n    {line}" for line in tail))
        return wall, ru.ru_utime + ru.ru_stime


def json_calls(path):
    """Calls in the last JSON report heaptrace wrote to path, every heap's (CPython's pymalloc
    has a summary of its own)."""
    s = json.loads(Path(path).read_text().strip().splitlines()[-1])["summary"]
    return sum(h["alloc_calls"] + h["free_calls"] + h["unknown_frees"]
               for h in [s] + list(s.get("heaps", {}).values()))


def jq_input(directory, records):
    """A JSON array of RECORDS objects for jq, written once per size."""
    path = Path(directory) / f"jq-{records}.json"
    if not path.exists():
        with path.open("w") as f:
            f.write("[")
            for i in range(records):
                f.write(("," if i else "") + json.dumps(
                    {"id": i, "name": f"item-{i}", "tags": [f"t{i % 7}", f"u{i % 13}"],
                     "score": i * 0.5, "nested": {"a": i % 100, "b": str(i)}}))
            f.write("]")
    return str(path)


def workloads(bins, scale, scratch):
    """(name, argv(size), small size, large size[, environment added]) of every workload that
    can run here."""
    def n(base):
        return max(1, int(base * scale))

    python = os.path.realpath(shutil.which("python3", path="/usr/bin:/bin") or "python3")
    wl = [
        ("churn-fp", lambda k: [bins["churn-fp"], str(k)], n(200000), n(1000000)),
        ("churn-nofp", lambda k: [bins["churn-nofp"], str(k)], n(200000), n(1000000)),
        ("threads x4", lambda k: [bins["threads"], "4", str(k)], n(50000), n(250000)),
        ("cxx", lambda k: [bins["cxx"], str(k)], n(2000), n(10000)),
        ("python3 json", lambda k: [python, str(HERE / "workload.py"), str(k)], n(6), n(30)),
        # every object a malloc call, which heaptrack sees too: the same calls for both tools
        # (set in the environment: heaptrack does not follow an exec, as of env)
        ("python3 json, PYTHONMALLOC=malloc",
         lambda k: [python, str(HERE / "workload.py"), str(k)], n(2), n(10),
         {"PYTHONMALLOC": "malloc"}),
    ]
    sqlite = shutil.which("sqlite3")
    if sqlite:
        wl.append(("sqlite3", lambda k: [sqlite, ":memory:", f".parameter set @n {k}",
                                         f".read {HERE / 'workload.sql'}"],
                   n(4000), n(20000)))
    node = shutil.which("node")
    if node:
        wl.append(("node buffers", lambda k: [node, str(HERE / "workload.js"), str(k)],
                   n(30), n(150)))
    jq = shutil.which("jq")
    if jq:
        wl.append(("jq", lambda k: [jq, "-c", "map(select(.id % 3 == 0) | .name)",
                                     jq_input(scratch, k)], n(20000), n(100000)))
    return wl


def cells_of(argv, heaptrace, heaptrack, out):
    """tool -> (argv, parse) for one size: parse returns heaptrace's count of calls."""
    cells = {"native": (argv, None)}
    if heaptrace:
        for tool, mode, more in (("heaptrace", "stubs", []), ("breakpoint", "breakpoint", []),
                                 ("sampled", "stubs", [f"--sample-bytes={SAMPLE_BYTES}"])):
            path = f"{out}.{tool}"
            # the calls are the default mode's count: breakpoint mode leaves out CPython's
            # allocator tables where the interpreter inlined its allocator
            cells[tool] = ([heaptrace, f"--mode={mode}", "--depth=8", "--format=json",
                            f"--outfile={path}"] + more + ["--"] + argv,
                           (lambda path=path: json_calls(path)) if tool == "heaptrace" else None)
    if heaptrack:
        cells["heaptrack"] = ([heaptrack, "-o", f"{out}.heaptrack"] + argv, None)
    return cells


def measure(name, argv_of, sizes, heaptrace, heaptrack, env, runs, log, failed):
    """{(tool, size): (median wall, median CPU)} and {size: calls}, interleaved by round."""
    samples, calls, slow = {}, {}, set()
    with tempfile.TemporaryDirectory(prefix="margin.") as d:
        for _ in range(runs):
            for size in sizes:
                for tool, (argv, parse) in cells_of(argv_of(size), heaptrace, heaptrack,
                                                    f"{d}/{size}").items():
                    key = (tool, size)
                    if samples.get(key, []) is None:
                        continue
                    if tool in slow:
                        continue
                    log(f"margin {name} {tool} {size}")
                    try:
                        samples.setdefault(key, []).append(tree_run(argv, env))
                        if parse:
                            calls[size] = parse()
                    except (RunError, OSError, ValueError, KeyError, IndexError) as e:
                        failed.append(f"margin {name} {tool} {size}: {e}")
                        samples[key] = None
                        continue
                    if samples[key][-1][0] > CELL_LIMIT and tool not in ("native", "heaptrace"):
                        slow.add(tool)
                    for f in Path(d).glob("*.heaptrack*"):
                        f.unlink()
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for k, v in samples.items() if v and k[0] not in slow}
    return med, calls, slow


def slopes(med, calls, sizes):
    """tool -> (wall us/call, CPU us/call) between the two sizes, untraced slope included."""
    small, large = sizes
    if calls.get(large, 0) <= calls.get(small, 0):
        return {}
    dc = calls[large] - calls[small]
    out = {}
    for tool in {t for t, _ in med}:
        if (tool, small) in med and (tool, large) in med:
            out[tool] = tuple((med[(tool, large)][i] - med[(tool, small)][i]) / dc * 1e6
                              for i in (0, 1))
    return out


def section(bins, scale, heaptrace, heaptrack, env, runs, log, failed, goals, print_rows,
            only=None):
    """Measure every workload's slopes (only those whose name contains one of ONLY's
    comma-separated texts, if given), print
    the table, add the goals; return the rows."""
    rows, table = [], []
    with tempfile.TemporaryDirectory(prefix="margin-in.") as scratch:
        for name, argv_of, small, large, *more in workloads(bins, scale, scratch):
            if only and not any(t in name for t in only.split(",")):
                continue
            med, calls, slow = measure(name, argv_of, (small, large), heaptrace, heaptrack,
                                       dict(env, **(more[0] if more else {})), runs, log,
                                       failed)
            s = slopes(med, calls, (small, large))
            if "native" not in s:
                continue
            nat = s["native"]
            row = {"workload": name, "calls small/large": f"{calls[small]}/{calls[large]}",
                   "native ns/call": f"{nat[0] * 1000:.0f}"}
            over = {t: (v[0] - nat[0], v[1] - nat[1]) for t, v in s.items() if t != "native"}
            for tool, (wall, cpu) in over.items():
                row[f"{tool} wall"] = f"{wall:.3f}"
                row[f"{tool} CPU"] = f"{cpu:.3f}"
            for tool in slow:
                row[f"{tool} wall"] = row[f"{tool} CPU"] = "slow"
            if "heaptrace" in over and "heaptrack" in over:
                ht, hk = over["heaptrace"], over["heaptrack"]
                row["wall ht/hk"] = f"{ht[0] / hk[0]:.2f}" if hk[0] > 0.005 else "hk ~0"
                row["CPU ht/hk"] = f"{ht[1] / hk[1]:.2f}" if hk[1] > 0.005 else "hk ~0"
                goals.append((f"24 margin wall <= heaptrack's, {name}",
                              f"{ht[0]:.3f} vs {hk[0]:.3f} us", "<=", ht[0] <= hk[0]))
                goals.append((f"24 margin CPU <= 1.5x heaptrack's, {name}",
                              f"{ht[1]:.3f} vs {hk[1]:.3f} us", "<= 1.5x",
                              ht[1] <= 1.5 * hk[1]))
            if name == "churn-fp" and "heaptrace" in over:
                goals.append(("24 margin wall on churn at full fidelity",
                              f"{over['heaptrace'][0]:.3f} us", "<= 0.1 us",
                              over["heaptrace"][0] <= 0.1))
            if name == "churn-fp" and "sampled" in over:
                goals.append((f"24 margin wall on churn, --sample-bytes={SAMPLE_BYTES}",
                              f"{over['sampled'][0]:.3f} us", "<= 0.05 us",
                              over["sampled"][0] <= 0.05))
            rows.append(row)
    cols = ["workload", "calls small/large", "native ns/call", "heaptrace wall", "heaptrace CPU",
            "sampled wall", "sampled CPU", "breakpoint wall", "breakpoint CPU", "heaptrack wall",
            "heaptrack CPU", "wall ht/hk", "CPU ht/hk"]
    print(f"\nmargin: cost per call as the slope between a small and a large run, "
          f"median of {runs} interleaved round(s)")
    if not rows:
        print("no workload measured (--workloads=%s names none that runs here)" % only)
        return rows
    print_rows(cols, [[r.get(c, "-") for c in cols] for r in rows])
    print("""
native ns/call   the untraced program's own time per call (wall slope)
TOOL wall, CPU   the tool's slope minus the untraced one, in microseconds per call: wall
                 clock, and CPU (user + system) of the whole process tree: the program, the
                 tool's threads and its helper processes (heaptrack_interpret, its compressor)
heaptrace        the default entry mode (stubs), --depth=8; breakpoint: --mode=breakpoint
sampled          heaptrace --sample-bytes=%d (stubs; per-backtrace figures estimated)
heaptrack        heaptrack -o FILE PROG (its default depth, every call)
ht/hk            heaptrace's overhead over heaptrack's ("hk ~0": heaptrack's is below 5 ns)
slow             a run took over %d s: not measured further""" % (SAMPLE_BYTES, CELL_LIMIT))
    return rows
