#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""heaptrace's own memory over a long --serve run, scraped all along (make bench).

    python3 tests/bench/serve_memory.py --build build [--minutes M] [--heaptrace PATH]

Traces tests/targets/steady (one thread churning malloc, realloc, calloc and free, and one
keeping 256 blocks live under 256 call chains, replaced for ever: the program's live heap is
flat) with --serve, fetches /metrics and /debug/pprof/heap every second, and prints every
15 s heaptrace's resident memory (its /proc status), the program's live bytes and the calls
traced so far. Prints, checks nothing: the exit status is 0 unless something failed to run.
"""
import argparse
import os
import re
import select
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        m = re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M)
    return int(m.group(1)) if m else -1


def metric(text, name):
    m = re.search(r"^%s\{[^}]*heap=\"malloc\"\} (\d+)$" % name, text, re.M)
    return int(m.group(1)) if m else -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--minutes", type=float, default=3)
    ap.add_argument("--heaptrace", default=str(ROOT / "heaptrace"))
    a = ap.parse_args()
    steady = Path(a.build) / "targets" / "steady"
    if not steady.exists():
        sys.exit("%s is not built (make targets)" % steady)
    p = subprocess.Popen([a.heaptrace, "--serve=127.0.0.1:0", "--outfile=/dev/null", "--",
                          str(steady), "-l", "256", "1"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = p.stderr.readline().decode()
    url = re.search(r"(http://\S+/)", line)
    if not url:
        p.kill()
        sys.exit("heaptrace did not say where it serves: %r" % line)
    url = url.group(1)
    if not select.select([p.stdout], [], [], 60)[0] or not p.stdout.readline().startswith(b"ready"):
        p.kill()
        sys.exit("steady did not start")
    print("%8s %14s %14s %14s %10s" % ("seconds", "heaptrace RSS", "live bytes", "calls",
                                       "profile"))
    start = time.monotonic()
    last_print = -15
    first = last = None
    try:
        while time.monotonic() - start < a.minutes * 60:
            text = urllib.request.urlopen(url + "metrics", timeout=60).read().decode()
            prof = urllib.request.urlopen(url + "debug/pprof/heap", timeout=60).read()
            t = time.monotonic() - start
            if t - last_print >= 15:
                kib = rss_kib(p.pid)
                first = kib if first is None else first
                last = kib
                print("%8.0f %11d KiB %14d %14d %7d B" % (
                    t, kib, metric(text, "heaptrace_live_bytes"),
                    metric(text, "heaptrace_alloc_calls_total"), len(prof)), flush=True)
                last_print = t
            time.sleep(1)
    finally:
        p.stdin.write(b"stop\n")
        p.stdin.flush()
        p.wait(timeout=120)
    print("heaptrace's RSS: %d KiB after the first scrape, %d KiB at the end (%+d KiB)"
          % (first, last, last - first))


if __name__ == "__main__":
    main()
