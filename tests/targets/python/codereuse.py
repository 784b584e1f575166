# SPDX-License-Identifier: GPL-2.0-only
"""Code objects freed and their addresses taken by others, traced by tests/e2e/test_pyframes.py.
Usage: codereuse.py launched|attached RESULTS

Each round compiles a function of its own name in a file of its own name (f_R in genR.py),
calls it once to make blocks that stay live, and lets go of it: its code objects are freed, and
CPython's allocator gives the next round's the same addresses more often than not. tracemalloc
(the oracle) measures the live blocks by the innermost frame's file; RESULTS holds them and how
many rounds had a code address an earlier round had. Then the script prints "measured", waits
for a line on stdin, so that heaptrace's report is taken at that moment, and prints "ended".
"""

import gc
import json
import sys
import tracemalloc

from allocs import ready_for

ROUNDS = 40
BLOCKS = 200  # tracemalloc does not see the few blocks malloc gives a function object


def rounds():
    """Run the rounds: (the blocks they keep, how many reused an earlier round's address)."""
    kept, seen, reused = [], set(), 0
    for r in range(ROUNDS):
        src = "def f_%d(n):\n    return [bytearray(%d) for _ in range(n)]\n" % (r, 1000 + 8 * r)
        ns = {}
        exec(compile(src, "gen%d.py" % r, "exec"), ns)
        kept.append(ns["f_%d" % r](BLOCKS))
        code = ns["f_%d" % r].__code__
        addrs = {id(code)} | {id(c) for c in code.co_consts if hasattr(c, "co_code")}
        reused += bool(addrs & seen)
        seen |= addrs
        del ns, code
        gc.collect()
    return kept, reused


def main():
    ready_for(sys.argv[1])
    tracemalloc.start()
    kept, reused = rounds()
    snap = tracemalloc.take_snapshot()
    tracemalloc.stop()
    files = {s.traceback[0].filename: [s.count, s.size] for s in snap.statistics("filename")}
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"files": files, "reused": reused, "rounds": ROUNDS}, f)
    print("measured", flush=True)
    sys.stdin.readline()
    del kept
    print("ended", flush=True)


main()
