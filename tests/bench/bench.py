#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Measure heaptrace's cost per traced call against native runs, ltrace and a ptrace floor.

    python3 tests/bench/bench.py --build build [--quick] [--runs N] [--scale X]

Builds the workloads of tests/bench/ into BUILD/bench/ and runs each natively, under
./heaptrace -v --depth=8 --format=json and, when installed, under ltrace; the runs of one
workload are interleaved and each cell is their median, so every ratio is to a native run
taken in the same invocation. The floor is a minimal single-thread tracer (floor.c): one
int3 on malloc, got past on each hit by a single step (2 stops per hit) or by emulating
malloc's first instruction (1 stop per hit). ltrace and the floor run pinned to one CPU
with their program, as heaptrace runs a single-threaded program by default. Then:

  unwinding  heaptrace's own CPU (-v) per allocation at --depth=8 minus at --depth=1, on
             churn-fp and churn-nofp (the --depth=1 runs are cells of their groups)
  memory     heaptrace's peak RSS holding 1,000,000 live blocks minus 1,000 (hold.c)
  report     -v's report time for 100,000 distinct live backtraces (many_bt.c)
  launch     heaptrace --outfile=/dev/null /bin/true minus /bin/true (median of 10)
  inventory  heaptrace -p on a waiting process with 1,000,000 heap chunks (bigheap.c): how long
             the threads stay stopped for the copy of the heap, and the analysis after
             (heap_at_attach's stop_ms and analysis_ms; median of the runs)
  affinity   churn-nofp (a quarter of its work) by default, with nothing pinned, heaptrace
             alone pinned, both on one CPU (median of 3)
  record     churn-fp traced with and without --record: the program's wall clock and
             heaptrace's CPU per traced call that the log adds, and the log's bytes per event;
             then heaptrace report --format=json (wall clock, peak RSS) on the log of a churn-fp
             run of 10,000,000 events (5,000,000 iterations)

  margin     every tool's cost per call as the slope between a small and a large run of each
             workload (margin.py), in wall clock and in CPU of the whole process tree, for
             heaptrace in both entry modes and heaptrack, the untraced slope beside

  stall      the worst single call of tests/targets/stall.c (its own clock) while heaptrace is
             stopped for 1 s (SIGSTOP), and while heaptrace runs at nice 19 on the program's
             CPU, with --max-stall's default of 20 ms: the bounded stall, and the calls not seen

--only=record, --only=margin or --only=stall runs that section alone (after building the
workloads); --only=margin --workloads=TEXT[,TEXT...], only the workloads whose name contains
one of the TEXTs.

each interleaved in its own group, and a table of the goals. Timings are printed, never checked: the exit status is 0 unless
something failed to run.
"""
import argparse
import collections
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import margin

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
    """Run argv to completion; return (wall seconds, peak RSS in KiB, standard error).

    The peak RSS is /usr/bin/time's %M when it is installed; otherwise wait4's ru_maxrss,
    which also counts the Python process the child was forked from. Either is the larger of
    the child's own peak and those of the processes it reaped (RUSAGE_BOTH): for heaptrace,
    the traced program's too.
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
        err.seek(0)
        errs = err.read().decode(errors="replace")
        if proc.returncode:
            tail = errs.strip().splitlines()[-3:]
            raise RunError(f"{' '.join(argv)}: exit status {proc.returncode}"
                           + "".join(f"\n    {line}" for line in tail))
        return wall, int(rss.read().split()[-1]) if TIME else ru.ru_maxrss, errs


Cell = collections.namedtuple("Cell", "wall rss res")  # median wall, median RSS, parses


def med(cell, f):
    """The median of f over the parse results of a cell's runs."""
    return statistics.median(f(r) for r in cell.res)


def measure(name, cells, env, runs, failed):
    """Run every cell once per round, interleaved, so drift hits all of them alike.

    cells maps a key ("native", "heaptrace", ...) to (argv, parse): "{out}" in argv becomes
    a temporary file, and parse(out_path, stdout_path, stderr) reads the result of the run.
    Return {key: Cell} for the cells that never failed.
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
                    wall, rss, err = run([str(a).replace("{out}", out.name) for a in argv],
                                         env, stdout)
                    res = parse(out.name, stdout.name, err) if parse else None
                samples[key].append((wall, rss, res))
            except (RunError, OSError, ValueError, KeyError, IndexError) as e:
                failed.append(f"{name} {key}: {e}")
                samples[key] = None
    return {key: Cell(statistics.median(s[0] for s in v), statistics.median(s[1] for s in v),
                      [s[2] for s in v]) for key, v in samples.items() if v}


def heaptrace_verbose(_, __, err):
    """From heaptrace -v: the last report's time in ms, the breakpoint stops and heaptrace's
    own CPU time (user + system) in seconds."""
    report = re.findall(r"report of process \d+: \d+ backtraces in ([\d.]+) ms", err)
    total = re.search(r"(\d+) breakpoint stops, \d+ backtraces unwound, "
                      r"CPU ([\d.]+) s user ([\d.]+) s system", err)
    if not report or not total:
        raise RunError("no heaptrace -v report time or totals")
    return {"report_ms": float(report[-1]), "stops": int(total[1]),
            "cpu": float(total[2]) + float(total[3])}


def heaptrace_json(out, stdout, err):
    """heaptrace_verbose's values and the summary of the last (final) JSON report."""
    lines = Path(out).read_text().strip().splitlines()
    if not lines:
        raise RunError("heaptrace wrote no report")
    return dict(heaptrace_verbose(out, stdout, err), summary=json.loads(lines[-1])["summary"])


def heaptrace_cell(heaptrace, argv, *opts, fmt="json", pre=(), pre_prog=()):
    """A cell tracing argv with -v, OPTS and FMT; pre and pre_prog are commands (taskset)
    that run heaptrace and the program."""
    return ([*pre, heaptrace, "-v", f"--format={fmt}", "--outfile={out}", *opts, "--",
             *pre_prog, *argv], heaptrace_json if fmt == "json" else heaptrace_verbose)


def heaptrack_done(out, *_):
    """heaptrack ran to the end: its data file is there (heaptrack -o appends .zst or .gz)."""
    if not any(Path(out + ext).exists() for ext in ("", ".zst", ".gz")):
        raise RunError("heaptrack wrote no data file")
    for ext in (".zst", ".gz"):
        if Path(out + ext).exists():
            Path(out + ext).unlink()
    return True


def calls(summary):
    return summary["alloc_calls"] + summary["free_calls"] + summary["unknown_frees"]


def us_per_call(res, key):
    """(heaptrace - native) / traced calls, in microseconds, for cell key of a group."""
    return (res[key].wall - res["native"].wall) / calls(res[key].res[-1]["summary"]) * 1e6


def ltrace_calls(out, *_):
    """The 'total' calls of ltrace -c."""
    for line in Path(out).read_text().splitlines():
        f = line.split()
        if f and f[-1] == "total":
            return int(f[-2])
    raise RunError("no ltrace -c summary")


def floor_hits(_, stdout, __):
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
        "hold": cc + [HERE / "hold.c"],
        "many_bt": ["gcc", "-O0", "-g", "-Wall", HERE / "many_bt.c"],  # every site distinct
        "bigheap": cc + [HERE / "bigheap.c"],
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
        ("threads-1", [bins["threads"], "1", n(200000)]),  # the same work on one thread
        ("cxx", [bins["cxx"], n(2000)]),
    ]
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    wl.append(("python3", [os.path.realpath(python), str(HERE / "workload.py"), n(30)]))
    # its start-up and exit alone (the report waits there for the symbols read ahead, which a
    # longer run reads while it runs: the two do not subtract)
    wl.append(("python3 -c pass", [os.path.realpath(python), "-c", "pass"]))
    sqlite = shutil.which("sqlite3")
    if sqlite:
        wl.append(("sqlite3", [sqlite, ":memory:", f".parameter set @n {n(20000)}",
                               f".read {HERE / 'workload.sql'}"]))
    else:
        print("sqlite3 not installed: its workload is skipped")
    return wl


def secs(s):
    return f"{s:.3f}s" if s < 100 else f"{s:.1f}s"


def load():
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def x_floor(res, us_stop):
    """(heaptrace - native) / (heaptrace's stops x the floor's us per stop), or None."""
    if not us_stop or "heaptrace" not in res or "native" not in res:
        return None
    c = res["heaptrace"]
    stops = med(c, lambda r: r["stops"])
    return (c.wall - res["native"].wall) * 1e6 / (stops * us_stop) if stops else None


def x_need(res, us_stop):
    """(heaptrace - native) / (the stops a call needs x the floor's us per stop): 2 per
    allocation (entry, return) and 1 per free, as a tracer that stops at both would make."""
    if not us_stop or "heaptrace" not in res or "native" not in res:
        return None
    s = res["heaptrace"].res[-1]["summary"]
    need = 2 * s["alloc_calls"] + s["free_calls"] + s["unknown_frees"]
    return (res["heaptrace"].wall - res["native"].wall) * 1e6 / (need * us_stop) if need else None


def row_cells(name, res, us_stop):
    """The table cells of one workload from its measured results."""
    cell = {"workload": name}
    if "native" not in res:
        return cell
    native, native_rss = res["native"].wall, res["native"].rss
    cell["native"] = secs(native)
    ht_us, ht_calls = None, 0
    if "heaptrace" in res:
        c = res["heaptrace"]
        ht_calls = calls(c.res[-1]["summary"])
        stops = med(c, lambda r: r["stops"])
        cell.update({"calls": str(ht_calls), "stops": f"{stops:.0f}", "heaptrace": secs(c.wall),
                     "slowdown": f"{c.wall / native:.1f}x",
                     "RSS nat/ht": f"{native_rss / 1024:.1f}/{c.rss / 1024:.1f}"})
        if ht_calls:
            ht_us = us_per_call(res, "heaptrace")
            cell["us/call"] = f"{ht_us:.2f}"
        if x_floor(res, us_stop):
            cell["x floor"] = f"{x_floor(res, us_stop):.2f}"
        if x_need(res, us_stop):
            cell["x need"] = f"{x_need(res, us_stop):.2f}"
    if "ltrace" in res:
        wall, lt_calls = res["ltrace"].wall, res["ltrace"].res[-1]
        lt_us = (wall - native) / lt_calls * 1e6 if lt_calls else None
        cell.update({"ltrace": secs(wall), "lt calls": str(lt_calls)})
        if lt_us:
            cell["lt us/call"] = f"{lt_us:.2f}"
        if lt_calls < ht_calls / 2:
            cell["lt calls"] += "*"  # ltrace lost calls: the ratio would mean nothing
        elif lt_us and ht_us is not None:
            cell["ht/lt"] = f"{ht_us / lt_us:.2f}"
    return cell


def stubs_section(results, wl, us_stop, goals):
    """Entry stubs (the default mode) against breakpoints, heaptrack and the one-stop floor."""
    cols = ["workload", "calls", "stubs us/call", "x stop", "stubs CPU us/call",
            "breakpoint us/call", "heaptrack us/call", "stubs/heaptrack"]
    rows = []
    for name, _ in wl:
        res = results[name]
        if not {"native", "heaptrace"} <= set(res):
            continue
        n = calls(res["heaptrace"].res[-1]["summary"])
        us = us_per_call(res, "heaptrace")
        cpu = med(res["heaptrace"], lambda r: r["cpu"]) * 1e6 / n if n else None
        row = {"workload": name, "calls": str(n), "stubs us/call": f"{us:.2f}",
               "stubs CPU us/call": f"{cpu:.2f}" if cpu else "-"}
        if us_stop:
            row["x stop"] = f"{us / us_stop:.3f}"
            goals.append((f"10 stubs us/call / one stop, {name}", f"{us / us_stop:.3f}x",
                          "<= 0.1x", us / us_stop <= 0.1))
        if "breakpoint" in res:
            row["breakpoint us/call"] = f"{us_per_call(res, 'breakpoint'):.2f}"
        if "heaptrack" in res and n:
            ht = (res["heaptrack"].wall - res["native"].wall) / n * 1e6
            row["heaptrack us/call"] = f"{ht:.2f}"
            row["stubs/heaptrack"] = f"{us / ht:.2f}" if ht > 0 else "-"
            goals.append((f"10 no slower than heaptrack, {name}",
                          f"{res['heaptrace'].wall:.3f}s vs {res['heaptrack'].wall:.3f}s",
                          "<=", res["heaptrace"].wall <= res["heaptrack"].wall))
        rows.append(row)
    one, four = results.get("threads-1", {}), results.get("threads", {})
    if "heaptrace" in one and "heaptrace" in four:
        tput = [calls(c["heaptrace"].res[-1]["summary"]) / c["heaptrace"].wall
                for c in (one, four)]
        nat = [calls(c["heaptrace"].res[-1]["summary"]) / c["native"].wall for c in (one, four)]
        goals.append(("10 threads scale: 4 threads' calls/s over 1 thread's, traced "
                      f"(natively {nat[1] / nat[0]:.2f}x on {os.cpu_count()} CPUs)",
                      f"{tput[1] / tput[0]:.2f}x", ">= 2x", tput[1] / tput[0] >= 2))
    print(f"\nentry stubs (--mode=stubs, the default) against breakpoints and heaptrack; "
          f"one stop: {us_stop:.2f} us" if us_stop else "\nentry stubs")
    print_rows(cols, [[r.get(c, "-") for c in cols] for r in rows])
    print("""
stubs us/call       (heaptrace - native) / calls, wall clock, default mode
x stop              that over the floor's cost of one ptrace stop
stubs CPU us/call   heaptrace's own CPU (user + system, its -v line) per call: the reader
breakpoint us/call  the same run with --mode=breakpoint (a stop per call)
heaptrack us/call   (heaptrack - native) / heaptrace's count of calls (heaptrack's start-up,
                    about half a second, included)""")


def print_rows(cols, rows, indent="", left=1):
    """Columns aligned: the first LEFT to the left, the others to the right."""
    widths = [max([len(col)] + [len(r[i]) for r in rows]) for i, col in enumerate(cols)]
    for line in [cols] + rows:
        print((indent + "  ".join(v.ljust(w) if i < left else v.rjust(w)
                                  for i, (v, w) in enumerate(zip(line, widths)))).rstrip())


def print_table(cells):
    cols = ["workload", "calls", "stops", "native", "heaptrace", "us/call", "slowdown",
            "RSS nat/ht", "ltrace", "lt calls", "lt us/call", "ht/lt", "x floor", "x need"]
    print_rows(cols, [[c.get(col, "-") for col in cols] for c in cells])
    print("""
calls       heaptrace's count: alloc_calls + free_calls + unknown_frees (its JSON summary)
stops       heaptrace's breakpoint stops (its -v line, median)
us/call     (heaptrace - native) / calls, in microseconds; lt us/call is the same for
            ltrace over the calls it counted itself (free(NULL) included; fewer when
            it misses calls, as ltrace -f does in threads; * marks less than half of
            heaptrace's count, and then no ht/lt)
slowdown    heaptrace / native
RSS nat/ht  peak RSS in MiB of the native run and of the heaptrace run (for heaptrace,
            the larger of its own and the traced program's, as getrusage reports it)
ht/lt       heaptrace's us/call divided by ltrace's
x floor     (heaptrace - native) / (stops x the floor's us per stop with emulation, 1 stop
            per hit): heaptrace's cost per stop it made; the floor is single-threaded
x need      the same over the stops a call needs when its return is caught with a stop,
            2 per allocation and 1 per free (on x86_64 heaptrace logs most returns
            without a stop, so this can be below 1)""")


def floor_section(fl, command):
    """Print the floor's cost per stop both ways; return the emulating one's (or None)."""
    if "native" not in fl:
        return None
    native, per = fl["native"].wall, {}
    print(f"\nfloor (single thread only): {command}\n"
          "  one int3 on malloc in libc, got past on each hit")
    for key, stops, how in (("floor", 2, "stepped (write back, PTRACE_SINGLESTEP, re-insert)"),
                            ("floor-emu", 1, "emulated (--emulate: push %r12 done by hand)")):
        if key in fl and fl[key].res[-1]:
            hits = fl[key].res[-1]
            per[key] = (fl[key].wall - native) / hits / stops * 1e6
            print(f"  {how:<52} {stops} stop(s) per hit: {secs(fl[key].wall)} for {hits} "
                  f"hits, native {secs(native)} -> {per[key]:.2f} us per stop")
    if len(per) == 2:
        print(f"  stepped / emulated per hit: {2 * per['floor'] / per['floor-emu']:.2f}x")
    return per.get("floor-emu")


def unwinding(results, goals):
    print("\nunwinding: heaptrace's own CPU (-v, user + system) per allocation, median; the "
          "difference is\n  the median of each round's (the two runs of a round are adjacent)")
    for name in ("churn-fp", "churn-nofp"):
        res = results.get(name, {})
        if "heaptrace" not in res or "depth1" not in res:
            continue
        us = {key: [r["cpu"] / r["summary"]["alloc_calls"] * 1e6 for r in res[key].res]
              for key in ("heaptrace", "depth1")}
        rounds = [a - b for a, b in zip(us["heaptrace"], us["depth1"])]
        d = statistics.median(rounds)
        print(f"  {name:<11} --depth=8 {statistics.median(us['heaptrace']):.2f} us, --depth=1 "
              f"{statistics.median(us['depth1']):.2f} us -> {d:.2f} us per allocation to "
              f"unwind 8 frames (rounds: {', '.join(f'{x:.2f}' for x in rounds)})")
        goals.append((f"2 unwinding 8 frames, {name}", f"{d:.2f} us/alloc", "<= 2 us", d <= 2))


def memory(heaptrace, hold, big, env, runs, failed, goals):
    """heaptrace's bytes per live block: its peak RSS holding big blocks minus 1000."""
    small, cells = 1000, {}
    for n in (big, small):
        cells[f"native {n}"] = ([hold, str(n)], None)
        cells[f"heaptrace {n}"] = heaptrace_cell(heaptrace, [hold, str(n)])
    res = measure("hold", cells, env, runs, failed)
    if len(res) < 4:
        return
    print(f"\nmemory: peak RSS (/usr/bin/time %M, median) of heaptrace -v --format=json while "
          f"{os.path.basename(hold)} keeps N blocks live until exit ({load()})")
    own = True
    for n in (big, small):
        ht, nat = res[f"heaptrace {n}"], res[f"native {n}"]
        # %M is the larger of heaptrace's own peak and that of the program it reaped: it
        # is heaptrace's own only when clearly above the program's (measured natively).
        own &= ht.rss > 1.1 * nat.rss
        s = ht.res[-1]["summary"]
        print(f"  N={n:<8} heaptrace {ht.rss / 1024:7.1f} MiB, the program alone "
              f"{nat.rss / 1024:6.1f} MiB ({s['live_blocks']} live blocks, "
              f"{s['backtraces']} backtraces)")
    per = (res[f"heaptrace {big}"].rss - res[f"heaptrace {small}"].rss) * 1024 / (big - small)
    print(f"  -> {per:.1f} bytes per live block in heaptrace"
          + ("" if own else " (UNSURE: heaptrace's peak is not clearly above the program's,"
             " so %M may be the program's)"))
    goals.append(("3 heaptrace memory per live block", f"{per:.1f} bytes",
                  "<= 48 B", per <= 48 if own else None))


def report(heaptrace, many_bt, callers, env, runs, failed, goals):
    """-v's report time for callers x 100 distinct live backtraces, per format."""
    argv = [many_bt, str(callers)]
    cells = {"json": heaptrace_cell(heaptrace, argv),
             "text": heaptrace_cell(heaptrace, argv, fmt="text"),
             "text --top=1000000": heaptrace_cell(heaptrace, argv, "--top=1000000", fmt="text")}
    res = measure("many_bt", cells, env, runs, failed)
    nbt = res["json"].res[-1]["summary"]["backtraces"] if "json" in res else "?"
    print(f"\nreport: {callers * 100} distinct live backtraces ({' '.join(argv)}; the JSON "
          f"summary counts {nbt}),\n  -v's 'report ... in X ms' (symbolise and write), median "
          f"({load()})")
    for key, c in res.items():
        ms = med(c, lambda r: r["report_ms"])
        print(f"  --format={key:<20} {ms:8.1f} ms")
        goals.append((f"4 report of {nbt} backtraces, --format={key}", f"{ms:.1f} ms",
                      "< 1000 ms", ms < 1000))


def inventory(heaptrace, bigheap, count, env, runs, failed, goals):
    """The stop and the analysis of the inventory of a heap of count chunks, at -p."""
    stops, analyses, blocks = [], [], None
    for _ in range(runs):
        t = subprocess.Popen([bigheap, str(count)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, env=env)
        try:
            if t.stdout.readline() != b"ready\n":
                failed.append("bigheap did not get ready")
                return
            with tempfile.NamedTemporaryFile() as out:
                p = subprocess.run([heaptrace, "-p", str(t.pid), "--duration=0.2",
                                    "--format=json", "--outfile=" + out.name],
                                   capture_output=True, timeout=TIMEOUT)
                if p.returncode != 0:
                    failed.append(f"heaptrace -p bigheap exited {p.returncode}")
                    return
                h = json.loads(Path(out.name).read_text().splitlines()[-1])["heap_at_attach"]
        finally:
            t.stdin.close()
            t.wait()
        stops.append(h["stop_ms"])
        analyses.append(h["analysis_ms"])
        blocks = h["live_blocks"]
    print(f"\ninventory: heaptrace -p {os.path.basename(bigheap)} {count}: {blocks} live blocks "
          f"found; stopped {statistics.median(stops):.1f} ms (runs: "
          f"{', '.join(f'{x:.1f}' for x in stops)}), analysis {statistics.median(analyses):.1f} ms "
          f"({load()})")
    goals.append((f"inventory stop for {count} heap chunks", f"{statistics.median(stops):.1f} ms",
                  "<= 100 ms", statistics.median(stops) <= 100))


def launch(heaptrace, env, runs, failed, goals):
    true = "/bin/true"
    res = measure("launch", {"native": ([true], None),
                             "heaptrace": ([heaptrace, "--outfile=/dev/null", true], None)},
                  env, runs, failed)
    if len(res) == 2:
        ms = (res["heaptrace"].wall - res["native"].wall) * 1e3
        print(f"\nlaunch: heaptrace --outfile=/dev/null {true} {secs(res['heaptrace'].wall)}, "
              f"{true} {secs(res['native'].wall)} (median of {runs}) -> {ms:.1f} ms overhead "
              f"({load()})")
        goals.append(("5 launch overhead (/bin/true)", f"{ms:.1f} ms", "<= 30 ms", ms <= 30))


def affinity(heaptrace, argv, env, runs, failed, goals):
    """us per call on argv by heaptrace's default, with nothing pinned, heaptrace alone
    pinned, both pinned by taskset."""
    cpus, taskset = sorted(os.sched_getaffinity(0)), shutil.which("taskset")
    if len(cpus) < 2 or not taskset:
        print("\naffinity: skipped (needs taskset and 2 CPUs)")
        return
    one, two = [taskset, "-c", str(cpus[0])], [taskset, "-c", f"{cpus[0]},{cpus[1]}"]
    cells = {"native": (argv, None),
             "default (shares heaptrace's CPU)": heaptrace_cell(heaptrace, argv),
             "--no-pin (nothing pinned)": heaptrace_cell(heaptrace, argv, "--no-pin"),
             f"heaptrace alone on CPU {cpus[0]}": heaptrace_cell(heaptrace, argv, "--no-pin",
                                                                  pre=one, pre_prog=two),
             f"both on CPU {cpus[0]}": heaptrace_cell(heaptrace, argv, "--no-pin", pre=one)}
    res = measure("affinity", cells, env, runs, failed)
    us = {key: us_per_call(res, key) for key in cells if key != "native" and key in res}
    if "native" not in res or not us:
        return
    best = min(us, key=us.get)
    print(f"\naffinity: {' '.join(argv)} under heaptrace, us per call, median of {runs} "
          f"({load()})\n"
          f"  (heaptrace alone pinned: {' '.join(one)} heaptrace ... -- {' '.join(two)} PROG)")
    for key, v in us.items():
        print(f"  {key:<34} {v:6.2f} us/call" + ("  <- fastest" if key == best else ""))
    goals.append((f"6 CPU affinity, {os.path.basename(argv[0])}",
                  f"fastest: {best}, {us[best]:.2f} us/call", "-", None))


def record_parse(out, stdout, err):
    """heaptrace_json's values and the size of the log written to OUT.htlog (removed)."""
    res = heaptrace_json(out, stdout, err)
    log = Path(out + ".htlog")
    res["log_bytes"] = log.stat().st_size
    log.unlink()
    return res


def recording(heaptrace, churn, events, env, runs, failed, goals):
    """The cost of --record per traced call and the log's size per event; report's time for a
    log of `events` events."""
    argv = [churn, str(max(1, 200000 * events // 10000000))]
    cells = {"heaptrace": heaptrace_cell(heaptrace, argv, "--depth=8"),
             "--record": heaptrace_cell(heaptrace, argv, "--depth=8", "--record={out}.htlog")}
    cells["--record"] = (cells["--record"][0], record_parse)
    cells["native"] = (argv, None)
    res = measure("record", cells, env, runs, failed)
    if {"heaptrace", "--record", "native"} <= set(res):
        n = calls(res["--record"].res[-1]["summary"])
        wall_us = (res["--record"].wall - res["heaptrace"].wall) / n * 1e6
        cpu_us = (med(res["--record"], lambda r: r["cpu"]) -
                  med(res["heaptrace"], lambda r: r["cpu"])) / n * 1e6
        per_event = med(res["--record"], lambda r: r["log_bytes"]) / n
        print(f"\nrecord: {' '.join(argv)}, {n} traced calls, median ({load()})")
        print(f"  program wall clock added by --record {wall_us:8.3f} us/call "
              f"(native {res['native'].wall:.3f}s, traced {res['heaptrace'].wall:.3f}s, "
              f"recorded {res['--record'].wall:.3f}s)")
        print(f"  heaptrace CPU added by --record      {cpu_us:8.3f} us/call")
        print(f"  log size                             {per_event:8.3f} bytes/event")
        goals.append(("5 --record's cost per call, churn-fp", f"{wall_us:.3f} us", "~0", None))
        goals.append(("5 log bytes per event, churn-fp", f"{per_event:.2f}", "small", None))
    # report time for a log of `events` events (alloc + free calls)
    big = [churn, str(max(1, events // 2))]
    with tempfile.TemporaryDirectory(prefix="bench-log.") as d:
        log = os.path.join(d, "big.htlog")
        try:
            run([heaptrace, "--record=" + log, "--outfile=/dev/null", "--", *big], env,
                subprocess.DEVNULL)
        except (RunError, OSError) as e:
            failed.append(f"record {events} events: {e}")
            return
        size = os.path.getsize(log)
        cells = {"report": ([heaptrace, "report", log, "--format=json", "--outfile={out}"],
                            lambda out, *_: json.loads(Path(out).read_text())["summary"])}
        res = measure("report", cells, env, runs, failed)
    if "report" in res:
        s = res["report"].res[-1]
        n = calls(s)
        print(f"\nreport: heaptrace report --format=json of a log of {n} events ({size} bytes, "
              f"{size / n:.2f} bytes/event; {' '.join(big)}), median ({load()})")
        print(f"  wall clock {res['report'].wall:8.3f} s ({res['report'].wall / n * 1e9:.0f} ns/event), "
              f"peak RSS {res['report'].rss / 1024:.1f} MiB")
        goals.append((f"5 report of a {n}-event log", f"{res['report'].wall:.2f} s", "-", None))


STALL_MS = 20  # --max-stall's default


def stall_run(heaptrace, prog, env, stop_s=0.0, starve=False):
    """stall loop 2500 under heaptrace: (longest call in ms, calls made, calls not seen), or
    None. stop_s: SIGSTOP heaptrace that long 0.5 s in; starve: heaptrace at nice 19 pinned to
    the program's CPU."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "report")
        pin = ["taskset", "-c", str(max(os.sched_getaffinity(0)))] if starve else []
        argv = pin + [heaptrace, "--format=json", "--outfile=" + out,
                      "--max-stall=%d" % STALL_MS, "--", prog, "loop", "2500"]
        p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True)
        if starve:
            os.setpriority(os.PRIO_PROCESS, p.pid, 19)
        p.stdout.readline()
        if stop_s:
            time.sleep(0.5)
            os.kill(p.pid, 19)  # SIGSTOP
            time.sleep(stop_s)
            os.kill(p.pid, 18)  # SIGCONT
        text = p.communicate(timeout=TIMEOUT)[0]
        m = re.search(r"stall loop: (\d+) calls, longest (\d+) ns", text)
        if p.returncode or not m or not os.path.exists(out):
            return None
        with open(out) as f:
            summ = json.loads(f.read().splitlines()[-1])["summary"]
        return int(m.group(2)) / 1e6, int(m.group(1)), summ.get("calls_not_seen", 0)


def stall(heaptrace, prog, env, failed, goals):
    print(f"\nstall: {prog} loop 2500 under heaptrace --max-stall={STALL_MS} ({load()})")
    for what, kw in (("heaptrace stopped 1 s", {"stop_s": 1.0}),
                     ("heaptrace at nice 19 on the program's CPU", {"starve": True})):
        r = stall_run(heaptrace, prog, env, **kw)
        if not r:
            failed.append(f"stall: {what}: the run failed")
            continue
        ms, made, unseen = r
        print(f"  {what}: longest call {ms:.1f} ms, {made} calls, {unseen} not seen")
        goals.append((f"7 worst call, {what}", f"{ms:.1f} ms", f"<= {10 * STALL_MS} ms",
                      ms <= 10 * STALL_MS))


def print_goals(goals):
    print(f"\ngoals: measured in this run, never checked ({load()} at the end)")
    print_rows(["goal", "measured", "goal", "met"],
               [[g, m, t, "-" if ok is None else "yes" if ok else "no"]
                for g, m, t, ok in goals], "  ", left=4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--quick", action="store_true", help="1 run per cell, a tenth of the work")
    ap.add_argument("--runs", type=int, help="runs per cell (default 3, 1 with --quick)")
    ap.add_argument("--scale", type=float, help="work factor (default 1, 0.1 with --quick)")
    ap.add_argument("--heaptrace", default=str(ROOT / "heaptrace"), help="the tracer to measure")
    ap.add_argument("--only", choices=["record", "margin", "stall"],
                    help="run this section only")
    ap.add_argument("--workloads", metavar="TEXT",
                    help="with --only=margin: the workloads whose name contains TEXT (or one of "
                         "TEXT,TEXT...) only")
    args = ap.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    scale = args.scale or (0.1 if args.quick else 1.0)
    failed = []

    bins = build(Path(args.build).resolve() / "bench")
    env = dict(os.environ, PYTHONHASHSEED="0", LC_ALL="C")
    heaptrace = args.heaptrace if os.access(args.heaptrace, os.X_OK) else None
    ltrace = shutil.which("ltrace")
    heaptrack = shutil.which("heaptrack")
    print(f"machine: nproc {len(os.sched_getaffinity(0))}, Linux {platform.release()} "
          f"{platform.machine()}, {' '.join(platform.libc_ver())}, {load()}")
    print(f"cells: median of {runs} interleaved run(s), wall clock, work scale {scale:g}")
    if heaptrace:
        print(f"heaptrace: {heaptrace} -v --format=json --outfile=TMP --depth=8 -- PROG ARG...")
    else:
        failed.append(f"{args.heaptrace} is not built (make heaptrace)")
    if not heaptrack:
        print("heaptrack: not installed, its column is skipped")
    if ltrace:
        ver = subprocess.run([ltrace, "-V"], capture_output=True, text=True).stdout
        print(f"ltrace:    {ltrace} {' '.join(LTRACE_ARGS)} -o TMP PROG ARG... "
              f"({ver.splitlines()[0].strip()})")
    else:
        print("ltrace:    not installed, its columns are skipped")
    # ltrace and the floor share one CPU with their program, as heaptrace does by default:
    # on an idle machine each stop costs 5-10 times more when the tracer and the program
    # are on different CPUs (see the affinity section)
    taskset = shutil.which("taskset")
    pin = [taskset, "-c", str(max(os.sched_getaffinity(0)))] if taskset else []
    if pin:
        print(f"pinned:    ltrace and the floor run under {' '.join(pin)} (with their program)")
    if args.only == "margin":
        goals = []
        margin.section(bins, scale, heaptrace, heaptrack, env, runs, log, failed, goals,
                       print_rows, args.workloads)
        print_goals(goals)
        for f in failed:
            print(f"FAILED: {f}")
        return 1 if failed else 0
    stall_prog = str(Path(args.build).resolve() / "targets" / "stall")
    if args.only == "stall":
        goals = []
        if heaptrace:
            stall(heaptrace, stall_prog, env, failed, goals)
        print_goals(goals)
        for f in failed:
            print(f"FAILED: {f}")
        return 1 if failed else 0
    if args.only == "record":
        goals = []
        if heaptrace:
            recording(heaptrace, bins["churn-fp"], int(10000000 * scale), env, runs, failed,
                      goals)
        for f in failed:
            print(f"FAILED: {f}")
        return 1 if failed else 0
    wl = workloads(bins, scale)
    print("workloads:")
    for name, argv in wl:
        print(f"  {name:<11} {' '.join(argv)}")

    results, floor_argv = {}, None
    for name, argv in wl:
        cells = {"native": (argv, None)}
        if heaptrace:
            cells["heaptrace"] = heaptrace_cell(heaptrace, argv, "--depth=8")
            cells["breakpoint"] = heaptrace_cell(heaptrace, argv, "--depth=8",
                                                 "--mode=breakpoint")
            if name.startswith("churn"):  # for the cost of unwinding
                cells["depth1"] = heaptrace_cell(heaptrace, argv, "--depth=1")
        if heaptrack:
            cells["heaptrack"] = ([heaptrack, "-o", "{out}"] + argv, heaptrack_done)
        if ltrace:
            cells["ltrace"] = (pin + [ltrace] + LTRACE_ARGS + ["-o", "{out}"] + argv,
                               ltrace_calls)
        if name == "churn-fp":  # the floor runs the same workload, with the handshake
            floor_argv = [argv[0], "--stop"] + argv[1:]
            cells["floor"] = (pin + [bins["floor"]] + floor_argv, floor_hits)
            cells["floor-emu"] = (pin + [bins["floor"], "--emulate"] + floor_argv, floor_hits)
        results[name] = measure(name, cells, env, runs, failed)

    goals = []
    us_stop = None
    if floor_argv:
        us_stop = floor_section(results["churn-fp"],
                                " ".join(pin + [bins["floor"], "[--emulate]"] + floor_argv))
    print(f"\n({load()})")
    print_table([row_cells(name, results[name], us_stop) for name, _ in wl])
    stubs_section(results, wl, us_stop, goals)
    for name, _ in wl:
        x = x_need(results[name], us_stop)
        if x:
            goals.append((f"1 heaptrace / floor for the stops calls need, {name}",
                          f"{x:.2f}x ({us_per_call(results[name], 'heaptrace'):.2f} us/call)",
                          "<= 1.3x", x <= 1.3 if name.startswith("churn") else None))
    for name, _ in wl:
        res = results[name]
        if not {"native", "heaptrace", "ltrace"} <= set(res):
            continue
        lt_calls = res["ltrace"].res[-1]
        if not lt_calls or lt_calls < calls(res["heaptrace"].res[-1]["summary"]) / 2:
            continue  # ltrace lost calls: no ratio
        lt_us = (res["ltrace"].wall - res["native"].wall) / lt_calls * 1e6
        ratio = lt_us / us_per_call(res, "heaptrace")
        goals.append((f"1 faster than ltrace per call, {name}", f"{ratio:.1f}x", ">= 6x",
                      ratio >= 6 if name.startswith("churn") else None))

    if heaptrace:
        unwinding(results, goals)
        memory(heaptrace, bins["hold"], int(1000000 * scale), env, runs, failed, goals)
        report(heaptrace, bins["many_bt"], min(1000, max(1, int(1000 * scale))), env, runs,
               failed, goals)
        launch(heaptrace, env, 10, failed, goals)
        inventory(heaptrace, bins["bigheap"], int(1000000 * scale), env, runs, failed, goals)
        # a quarter of the work: unpinned, each call costs 5-10 times more
        churn_nofp = [bins["churn-nofp"], str(max(1, int(50000 * scale)))]
        affinity(heaptrace, churn_nofp, env, runs, failed, goals)
        recording(heaptrace, bins["churn-fp"], int(10000000 * scale), env, runs, failed, goals)
        stall(heaptrace, stall_prog, env, failed, goals)
    margin.section(bins, scale, heaptrace, heaptrack, env, runs, log, failed, goals, print_rows)

    print_goals(goals)
    for f in failed:
        print(f"FAILED: {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
