# SPDX-License-Identifier: GPL-2.0-only
"""A Python program with known allocation sites (lines marked "# site"), traced by
tests/e2e/test_pyframes.py. Usage: allocs.py launched|attached RESULTS [ending]

It measures itself with tracemalloc (the in-process oracle): tracemalloc is started at the top
(attached: once heaptrace has patched malloc), the sites run (two of them in threads of their
own), and the blocks still live are written to RESULTS grouped by the innermost frame's line,
after tracemalloc is stopped (which frees its own tables). Then it prints "measured" and waits
for a line on stdin, so that heaptrace's report is taken at that moment, and prints "ended".

With "ending", threads that start, allocate and end at once (their thread states freed, which
CPython does after it lets go of the GIL) come and go all the time while the sites run (two
spawners, 200 such threads each at least); RESULTS says how many there were. The interpreter
switches threads at its default interval: switching far more often makes tracemalloc's own
figures stray, as it gives an object that a free list hands out (dicts, lists, tuples) the line
that takes it, where heaptrace sees no call and keeps the line that made it.
"""

import ctypes
import json
import sys
import threading
import time
import tracemalloc


def patched():
    """Does malloc's entry start with a jump or a breakpoint (heaptrace is tracing)?"""
    libc = ctypes.CDLL("libc.so.6")
    addr = ctypes.cast(libc.malloc, ctypes.c_void_p).value
    return ctypes.string_at(addr, 1)[0] in (0xE9, 0xCC)


def make_strings(n):
    out = []
    for i in range(n):
        out.append("row-%06d-" % i + "x" * 200)  # site
    return out


def make_bytes(n):
    return [bytes(300 + i % 7) for i in range(n)]  # site


def make_dicts(n):
    out = []
    for i in range(n):
        out.append({"k%d" % j: j for j in range(12)})  # site
    return out


def make_lists(n):
    return [list(range(40)) for _ in range(n)]  # site


class Node:
    def __init__(self, i):
        self.payload = bytearray(100 + i % 5)  # site


def make_nodes(n):
    return [Node(i) for i in range(n)]


def thread_strings(n, keep):
    keep.append(["t-%d-" % i * 20 for i in range(n)])  # site


def thread_tuples(n, keep):
    keep.append([tuple(range(i % 9 + 20)) for i in range(n)])  # site


def short_lived():
    text = "s-%d-" % threading.get_ident() * 40
    return len(bytearray(len(text)))


def spawn_until(stop, count, done):
    """Threads that end at once, one after another, until stop is set and at least 200 have
    ended (at most 5000). The threads ended are kept, and their kwargs is one dict, so that
    fewer of their objects go to a free list that a site takes from (see above)."""
    kwargs = {}
    while (not stop.is_set() or count[0] < 200) and count[0] < 5000:
        t = threading.Thread(target=short_lived, kwargs=kwargs)
        t.start()
        t.join()
        done.append(t)
        count[0] += 1


def run_sites(n):
    keep = [make_strings(n), make_bytes(n), make_dicts(n), make_lists(n), make_nodes(n)]
    threads = [threading.Thread(target=thread_strings, args=(n, keep)),
               threading.Thread(target=thread_tuples, args=(n, keep))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return keep


def write_results(snap, path, ended):
    lines = {}
    for st in snap.statistics("lineno"):
        fr = st.traceback[0]
        if fr.filename == __file__:
            lines[fr.lineno] = [st.count, st.size]
    with open(path, "w") as f:
        json.dump({"file": __file__, "lines": lines, "ended_threads": ended}, f)


def ready_for(how):
    """Attached: say "ready" and wait (at most 60 s) until heaptrace is tracing."""
    if how == "attached":
        print("ready", flush=True)
        deadline = time.monotonic() + 60
        while not patched():
            if time.monotonic() > deadline:
                sys.exit(99)
            time.sleep(0.01)


def main():
    ready_for(sys.argv[1])
    ending = sys.argv[3:] == ["ending"]
    stop, counts, spawners, done = threading.Event(), [], [], []
    if ending:
        for _ in range(2):
            counts.append([0])
            spawners.append(threading.Thread(target=spawn_until,
                                             args=(stop, counts[-1], done)))
            spawners[-1].start()
    tracemalloc.start()
    keep = run_sites(300)
    stop.set()
    for t in spawners:
        t.join()
    snap = tracemalloc.take_snapshot()
    tracemalloc.stop()
    write_results(snap, sys.argv[2], sum(c[0] for c in counts))
    del snap
    print("measured", flush=True)
    sys.stdin.readline()
    print("ended", flush=True)
    return keep, done


if __name__ == "__main__":
    main()
