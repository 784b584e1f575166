# SPDX-License-Identifier: GPL-2.0-only
"""pyobjs: Python objects of sizes nothing else in the interpreter has, for test_pymalloc.py.

usage: pyobjs.py launch|attach|fork N [notm]

It keeps N strings of STR_SIZE bytes, N bytes objects of BYTES_SIZE bytes (pymalloc's, at most
512 bytes) and N // 4 strings of BIG_SIZE bytes (over 512: pymalloc hands them to malloc), made
at lines of their own, and prints one JSON line: the sizes as sys.getsizeof gives them (what
Python asks its allocator for: a str or bytes has no GC header) and what tracemalloc, started
just before, counts live at each of those lines.
  - launch: then ends with os._exit, so that every object is still live in heaptrace's final
    report.
  - attach: first makes N // 4 strings of BIG_SIZE (malloc's blocks, which heaptrace finds in
    the heap at the attach), prints "ready" and waits until PyObject_Malloc's first bytes
    change (heaptrace -p has traced it), frees those strings (the result's "freed_before"),
    makes the objects, sends its tracer SIGINT (final report and detach),
    waits until it is no longer traced and exits 0 (exit 99: no tracer within 60 s).
  - fork: a forked child makes the objects and ends with os._exit; the parent waits for it.
notm: without tracemalloc (its counts are then null), whose tables cost a malloc per object.
"""

import ctypes
import json
import os
import signal
import sys
import time
import tracemalloc

STR_LEN, BYTES_LEN, BIG_LEN = 173, 300, 951
STR_FILL = "q" * (STR_LEN - 8)
BYTES_FILL = b"b" * (BYTES_LEN - 8)
BIG_FILL = "g" * (BIG_LEN - 8)


def make_str(i):
    return ("%08d" % i) + STR_FILL  # line STR


def make_bytes(i):
    return (b"%08d" % i) + BYTES_FILL  # line BYTES


def make_big(i):
    return ("%08d" % i) + BIG_FILL  # line BIG


def lines():
    src = open(__file__).read().splitlines()
    return {tag: next(k + 1 for k, s in enumerate(src) if s.endswith("# line " + tag))
            for tag in ("STR", "BYTES", "BIG")}


def make(n, **more):
    tm_on = sys.argv[3:] != ["notm"]
    if tm_on:
        tracemalloc.start()
    strs = [None] * n
    byts = [None] * n
    bigs = [None] * (n // 4)
    for i in range(n):
        strs[i] = make_str(i)
        byts[i] = make_bytes(i)
    for i in range(n // 4):
        bigs[i] = make_big(i)
    snap = tracemalloc.take_snapshot() if tm_on else None
    tm = {} if tm_on else None
    for tag, line in lines().items() if tm_on else ():
        stats = snap.filter_traces([tracemalloc.Filter(True, __file__, line)]).statistics(
            "lineno")
        tm[tag] = [sum(s.count for s in stats), sum(s.size for s in stats)]
    out = {"pid": os.getpid(), "n": n, "big_n": n // 4, "str": sys.getsizeof(strs[0]),
           "bytes": sys.getsizeof(byts[0]), "big": sys.getsizeof(bigs[0]), "tracemalloc": tm}
    out.update(more)
    print(json.dumps(out), flush=True)
    return strs, byts, bigs


def tracer():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return 0


def wait(cond):
    end = time.monotonic() + 60
    while not cond():
        if time.monotonic() > end:
            os._exit(99)
        time.sleep(0.01)


def attach(n):
    old = [make_big(i) for i in range(n // 4)]
    libc = ctypes.CDLL("libc.so.6")
    entry = ctypes.cast(libc.malloc, ctypes.c_void_p).value
    print("ready", flush=True)
    # malloc's entry gets a jump or a breakpoint in the same stop as CPython's allocator
    wait(lambda: ctypes.string_at(entry, 1)[0] in (0xE9, 0xCC))
    freed_before = len(old)
    del old
    keep = make(n, freed_before=freed_before)
    os.kill(tracer(), signal.SIGINT)
    wait(lambda: tracer() == 0)
    del keep
    sys.exit(0)


def main():
    mode, n = sys.argv[1], int(sys.argv[2])
    if mode == "attach":
        attach(n)
    elif mode == "fork":
        pid = os.fork()
        if pid == 0:
            keep = make(n)
            os._exit(0 if keep else 1)
        os.waitpid(pid, 0)
        os._exit(0)
    else:
        keep = make(n)
        os._exit(0 if keep else 1)


main()
