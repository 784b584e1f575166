# SPDX-License-Identifier: GPL-2.0-only
"""Python in states heaptrace must read with care, traced by tests/e2e/test_pyframes.py.
Usage: churn.py threads|finalise N

threads: 8 threads whose frame chains grow and shrink all the time (recursion, generators,
exceptions) allocate in known functions while the others run; prints "ok TOTAL" at the end.
finalise: daemon threads are still allocating in Python code while the interpreter is
finalised at the main thread's exit; prints "ok" just before it.
"""

import sys
import threading


def deep(n, out):
    if n:
        return deep(n - 1, out)
    out.append("leaf-%d" % len(out) * 3)
    return len(out)


def gen(n):
    for i in range(n):
        yield [i] * 5


def failing(n):
    try:
        raise ValueError("x" * n)
    except ValueError as e:
        return str(e)


def worker(k, n, totals):
    out = []
    for i in range(n):
        deep(i % 30, out)
        for item in gen(i % 7):
            out.append(item)
        out.append(failing(i % 50))
    totals[k] = len(out)


def run_threads(n):
    totals = [0] * 8
    threads = [threading.Thread(target=worker, args=(k, n, totals)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("ok", sum(totals), flush=True)


def forever():
    out = []
    while True:
        deep(10, out)
        if len(out) > 1000:
            out.clear()


def run_finalise(n):
    for _ in range(4):
        threading.Thread(target=forever, daemon=True).start()
    keep = [bytes(100) for _ in range(n)]
    print("ok", flush=True)
    return keep


if __name__ == "__main__":
    if sys.argv[1] == "threads":
        run_threads(int(sys.argv[2]))
    else:
        run_finalise(int(sys.argv[2]))
