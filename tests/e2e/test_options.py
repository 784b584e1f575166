# SPDX-License-Identifier: GPL-2.0-only
"""Report options on the leaks target (tests/targets/leaks/main.c), whose five live sites sort
differently by size, count and age:
  table  alloc_row <- load_table <- load_all <- main  10 x 100    = 1000
  index  alloc_row <- load_index <- load_all <- main   4 x 300    = 1200
  small  leak_small <- main                           50 x 16     = 800 (peak 60 / 960)
  big    leak_big <- main                              1 x 65536  = 65536
  calloc leak_calloc <- main                           2 x 1000   = 2000
made in that order (table first). --sort, --top, --min-size/--max-size, --older, --depth,
--format=folded/--flame-graph."""

import re

from helpers import (OPTS, Fail, check_consistency, expect_rc, fn_name, heaptrace, sites,
                     target, variants)

TABLE = ("malloc", "alloc_row,load_table,load_all,main")
INDEX = ("malloc", "alloc_row,load_index,load_all,main")
SMALL = ("malloc", "leak_small,main")
BIG = ("malloc", "leak_big,main")
CALLOC = ("calloc", "leak_calloc,main")
BYTES = {TABLE: 1000, INDEX: 1200, SMALL: 800, BIG: 65536, CALLOC: 2000}
LIVE_BLOCKS, LIVE_BYTES = 67, 70536


def order(r, rep):
    out = []
    for s in sites(rep):
        if not s.reaches_main:
            r.fail("a live site of leaks does not reach main: %s" % s)
        out.append((s.fn, ",".join(s.chain)))
    return out


def names(o):
    short = {TABLE: "table", INDEX: "index", SMALL: "small", BIG: "big", CALLOC: "calloc"}
    return [short.get(k, "%s <- %s" % k) for k in o]


def check_order(sort, want, key):
    opts = ["--sort=%s" % sort] if sort else []
    r = heaptrace(target("leaks"), opts=opts, name="sort-%s" % sort)
    expect_rc(r, 0)
    rep = r.report
    check_consistency(r, rep)
    got = order(r, rep)
    if got != want:
        r.fail("--sort=%s listed %s, expected %s" % (sort, names(got), names(want)))
    values = [bt[key] for bt in rep["backtraces"]]
    if key == "age_ns":
        if values != sorted(values, reverse=True):
            r.fail("--sort=age: age_ns %s is not oldest first" % values)
    elif values != sorted(values, reverse=True):
        r.fail("--sort=%s: %s values %s are not largest first" % (sort, key, values))


def test_sort_default_is_size():
    check_order(None, [BIG, CALLOC, INDEX, TABLE, SMALL], "size")


def test_sort_size():
    check_order("size", [BIG, CALLOC, INDEX, TABLE, SMALL], "size")


def test_sort_count():
    check_order("count", [SMALL, TABLE, INDEX, CALLOC, BIG], "count")


def test_sort_peak_size():
    check_order("peak-size", [BIG, CALLOC, INDEX, TABLE, SMALL], "peak_size")


def test_sort_peak_count():
    check_order("peak-count", [SMALL, TABLE, INDEX, CALLOC, BIG], "peak_count")


def test_sort_age():
    """Oldest first: the order of each site's first allocation."""
    check_order("age", [TABLE, INDEX, SMALL, BIG, CALLOC], "age_ns")


HEAD = re.compile(r"^=== backtrace #(\d+) === \[count/peak: (\d+)/(\d+)\]")


def text_blocks(r):
    return [(int(m.group(1)), int(m.group(2)))
            for m in (HEAD.match(line) for line in (r.out or "").splitlines()) if m]


def test_top_text():
    """--top=2: the text report shows the two largest backtraces only."""
    r = heaptrace(target("leaks"), opts=["--top=2"], fmt="text")
    expect_rc(r, 0)
    got = text_blocks(r)
    if got != [(1, 1), (2, 2)]:
        r.fail("--top=2 showed blocks (number, count) %s, expected [(1, 1), (2, 2)]: big, calloc"
               % got)


def test_top_default_text():
    """The default --top is 10: all five sites show."""
    r = heaptrace(target("leaks"), fmt="text")
    got = text_blocks(r)
    if [n for n, _ in got] != [1, 2, 3, 4, 5]:
        r.fail("expected blocks #1..#5, got %s" % got)


def test_top_json_lists_all():
    """--top is for the text report: the JSON report lists every live backtrace."""
    r = heaptrace(target("leaks"), opts=["--top=2"])
    if len(r.report["backtraces"]) != 5:
        r.fail("--top=2 --format=json listed %d backtraces, expected all 5"
               % len(r.report["backtraces"]))


def test_sort_count_text():
    r = heaptrace(target("leaks"), opts=["--sort=count"], fmt="text")
    got = [c for _, c in text_blocks(r)]
    if got != [50, 10, 4, 2, 1]:
        r.fail("--sort=count text counts %s, expected [50, 10, 4, 2, 1]" % got)


def filtered(opts, want):
    base = heaptrace(target("leaks"), name="unfiltered")
    r = heaptrace(target("leaks"), opts=opts, name="filtered")
    expect_rc(r, 0)
    got = sorted(order(r, r.report))
    if got != sorted(want):
        r.fail("%s listed %s, expected %s" % (" ".join(opts), names(got), names(sorted(want))))
    s, b = r.report["summary"], base.report["summary"]
    for k in ("alloc_calls", "free_calls", "live_blocks", "live_bytes", "peak_live_blocks",
              "peak_live_bytes", "total_allocated_bytes", "backtraces", "total_backtraces"):
        if s.get(k) != b.get(k):
            r.fail("%s changed summary.%s: %s, unfiltered %s (filters never touch the summary)"
                   % (" ".join(opts), k, s.get(k), b.get(k)))
    if s["live_blocks"] != LIVE_BLOCKS or s["live_bytes"] != LIVE_BYTES:
        r.fail("summary live %s blocks %s bytes, expected %d, %d"
               % (s["live_blocks"], s["live_bytes"], LIVE_BLOCKS, LIVE_BYTES))


def test_min_max_size():
    """Blocks of 100 to 1000 bytes, both ends included: table (100), index (300), calloc (1000)."""
    filtered(["--min-size=100", "--max-size=1000"], [TABLE, INDEX, CALLOC])


def test_min_size():
    filtered(["--min-size=1001"], [BIG])


def test_max_size():
    filtered(["--max-size=99"], [SMALL])


def test_older():
    """--older=MS: nothing in a short run is an hour old; the summary stays whole."""
    filtered(["--older=3600000"], [])


def test_older_zero():
    filtered(["--older=0"], [TABLE, INDEX, SMALL, BIG, CALLOC])


def test_depth_3():
    """--depth=3 keeps frame 0 and two callers; the two alloc_row chains stay apart."""
    r = heaptrace(target("leaks"), opts=["--depth=3"])
    expect_rc(r, 0)
    got = sorted(([fn_name(f) for f in bt["frames"]], bt["count"]) for bt in r.report["backtraces"])
    want = sorted([(["malloc", "alloc_row", "load_table"], 10),
                   (["malloc", "alloc_row", "load_index"], 4),
                   (["malloc", "leak_small", "main"], 50),
                   (["malloc", "leak_big", "main"], 1),
                   (["calloc", "leak_calloc", "main"], 2)])
    if got != want:
        r.fail("--depth=3 gave (frames, count) %s, expected %s" % (got, want))


def test_depth_1():
    """--depth=1: only frame 0 is kept, so all malloc blocks share one backtrace."""
    r = heaptrace(target("leaks"), opts=["--depth=1"])
    expect_rc(r, 0)
    got = sorted(([fn_name(f) for f in bt["frames"]], bt["count"], bt["size"])
                 for bt in r.report["backtraces"])
    want = [(["calloc"], 2, 2000), (["malloc"], 65, 68536)]
    if got != want:
        r.fail("--depth=1 gave %s, expected %s" % (got, want))


def test_depth_default():
    """The default depth is 8 frames (frame 0 included): the C++ vector chain is deeper."""
    r = heaptrace(target("cxx"))
    expect_rc(r, 0)
    depths = [len(bt["frames"]) for bt in r.report["backtraces"]]
    if max(depths) != 8:
        r.fail("the deepest backtrace has %d frames, expected 8 (default --depth)" % max(depths))


def parse_folded(r):
    out = []
    for line in (r.out or "").splitlines():
        if not line.strip():
            continue
        stack, _, value = line.rpartition(" ")
        if not stack or not re.fullmatch(r"\d+", value):
            r.fail("folded line %r is not \"frame;...;frame BYTES\"" % line)
        out.append((stack.split(";"), int(value)))
    return out


def check_folded(fmt_opts, fmt, opt):
    """One line per live backtrace (as many as the JSON report lists: at -O2 gcc unrolls main's
    two calls of leak_calloc, so two backtraces have the same names), the values add up to the
    live bytes, and per chain (from main on) the bytes of each site."""
    js = heaptrace(target("leaks", opt), name="folded-json-" + opt)
    nbts = len(js.report["backtraces"])
    r = heaptrace(target("leaks", opt), opts=fmt_opts, fmt=fmt, name="folded-" + opt)
    expect_rc(r, 0)
    lines = parse_folded(r)
    if len(lines) != nbts:
        r.fail("%d folded lines, expected one per live backtrace (%d)" % (len(lines), nbts))
    if sum(v for _, v in lines) != LIVE_BYTES:
        r.fail("folded values add up to %d, expected the live bytes %d"
               % (sum(v for _, v in lines), LIVE_BYTES))
    got = {}
    for frames, value in lines:
        frames = [re.sub(r"(\.(constprop|isra|part|cold)(\.\d+)?)+$", "", f) for f in frames]
        if frames[-1] not in ("malloc", "calloc"):
            r.fail("folded stack %r does not end with the allocation function" % ";".join(frames))
        if "main" not in frames:
            r.fail("folded stack %r has no main (outermost frame first)" % ";".join(frames))
        inner = frames[len(frames) - 1 - frames[::-1].index("main"):]
        key = (inner[-1], ",".join(reversed(inner[:-1])))
        got[key] = got.get(key, 0) + value
    if got != BYTES:
        r.fail("folded stacks (from main) %s, expected %s" % (got, BYTES))
    return lines


@variants(*OPTS)
def test_format_folded(opt):
    check_folded([], "folded", opt)


def test_flame_graph():
    """--flame-graph is --format=folded."""
    a = check_folded(["--flame-graph"], None, "O0")
    b = check_folded([], "folded", "O0")

    def norm(lines):
        return sorted((";".join(f for f in fr if not re.match(r"^\[?0x", f)), v) for fr, v in lines)

    if norm(a) != norm(b):
        raise Fail("--flame-graph and --format=folded differ",
                   "flame-graph: %s\nfolded: %s" % (norm(a), norm(b)))


def test_format_text_explicit():
    r = heaptrace(target("leaks"), fmt="text")
    if len(text_blocks(r)) != 5:
        r.fail("--format=text: expected 5 backtrace blocks, got %d" % len(text_blocks(r)))
