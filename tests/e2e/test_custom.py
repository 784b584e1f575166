# SPDX-License-Identifier: GPL-2.0-only
"""The program's own allocator, named with --alloc, --realloc and --free (tests/targets/pool.c, a
bump pool carving blocks from chunks it mallocs): its blocks are a heap of their own ("heap" per
backtrace, summary.heaps), counted exactly as the program counts them; the chunks' mallocs, made
inside a traced pool function, are malloc's; calls inside a traced call of the same heap
(pool_calloc -> pool_alloc, pool_realloc -> pool_alloc and pool_free) count once, as the outer
call; a pool block at its chunk's very address is kept apart from the chunk. Bad specs: one line,
exit 1."""

from helpers import (OPTS, check_consistency, check_debug_info, check_sites, check_summary,
                     expect_rc, heaptrace, one_error_line, records, run, site_lines, site_records,
                     summary_record, target, variants)
import helpers

SPECS = ("--alloc=pool_alloc:2", "--alloc=pool_calloc:3:2", "--realloc=pool_realloc:2:3",
         "--free=pool_free:2")
FUNCS = ("pool_alloc", "pool_calloc", "pool_realloc", "pool_free")
HEAP_KEYS = ("alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes",
             "peak_live_blocks", "peak_live_bytes", "total_allocated_bytes")


def heap_record(r, name):
    recs = [x for x in records(r, "heap") if x.get("name") == name]
    if len(recs) != 1:
        r.fail("the target wrote %d heap records for %s (expected 1)" % (len(recs), name))
    return recs[0]


def check_heap(r, name, want):
    got = (r.report["summary"].get("heaps") or {}).get(name)
    if got is None:
        r.fail("summary.heaps has no %s: %r" % (name, r.report["summary"].get("heaps")))
    errors = ["summary.heaps.%s.%s = %s, expected %s" % (name, k, got.get(k), want[k])
              for k in HEAP_KEYS if got.get(k) != want[k]]
    if errors:
        r.fail("; ".join(errors))


def check_heap_fields(r, heap):
    """Every pool function's backtrace is of heap, every malloc's of malloc."""
    for bt in r.report["backtraces"]:
        fn = (bt["frames"][0].get("function") or "?")
        want = heap if fn in FUNCS else "malloc"
        if bt.get("heap") != want:
            r.fail("a backtrace of %s is of heap %r, expected %r" % (fn, bt.get("heap"), want))


@variants(*OPTS)
def test_pool(opt):
    prog = target("pool", opt)
    r = heaptrace(prog, opts=SPECS, name="pool-" + opt)
    expect_rc(r, 0)
    if helpers.said(r.proc.stderr):
        r.fail("heaptrace said something on a clean run: %r" % helpers.said(r.proc.stderr))
    rep = r.report
    check_consistency(r, rep, custom=FUNCS)
    check_sites(r, rep, site_records(r), lines=site_lines("pool"))
    check_debug_info(r, rep, prog)
    check_summary(r, rep, summary_record(r))
    check_heap(r, "pool_alloc", heap_record(r, "pool_alloc"))
    check_heap_fields(r, "pool_alloc")


def test_pool_untraced():
    """Without the options the malloc heap's figures are the same: tracing the pool adds a heap,
    it takes nothing from malloc's."""
    r = heaptrace(target("pool"), name="pool-untraced")
    expect_rc(r, 0)
    check_summary(r, r.report, summary_record(r))
    if "heaps" in r.report["summary"]:
        r.fail("heaps without --alloc: %r" % r.report["summary"].get("heaps"))
    if any(bt.get("heap") != "malloc" for bt in r.report["backtraces"]):
        r.fail("a backtrace of another heap than malloc without --alloc")


def test_pool_named_heap():
    """@HEAP names the heap; the text report marks its backtraces and gives its figures."""
    specs = [s + "@arena" for s in SPECS]
    r = heaptrace(target("pool"), opts=specs, name="pool-named")
    expect_rc(r, 0)
    check_heap(r, "arena", heap_record(r, "pool_alloc"))
    check_heap_fields(r, "arena")
    t = heaptrace(target("pool"), opts=specs, fmt="text", name="pool-named-text")
    expect_rc(t, 0)
    text = t.out or ""
    want = heap_record(r, "pool_alloc")
    if text.count("[heap: arena]") != 4:
        t.fail("the text report marks %d backtraces [heap: arena], expected 4"
               % text.count("[heap: arena]"))
    if "[heaptrace] heap arena: %d blocks," % want["live_blocks"] not in text:
        t.fail("no line \"[heaptrace] heap arena: %d blocks, ...\"" % want["live_blocks"])


def test_custom_unfound():
    """A function no module defines: traced nowhere, said once at the end; the run is as
    without it."""
    r = heaptrace(target("pool"), opts=("--alloc=no_such_pool_fn:1",), name="pool-unfound")
    expect_rc(r, 0)
    lines = [x for x in r.proc.stderr.splitlines() if x.strip()]
    if len(lines) != 1 or "no_such_pool_fn" not in lines[0]:
        r.fail("expected one warning naming no_such_pool_fn, got %r" % lines)
    check_summary(r, r.report, summary_record(r))


BAD = [
    ("--alloc=pool_alloc", "pool_alloc"),  # no argument number
    ("--alloc=pool_alloc:0", "pool_alloc:0"),  # counted from 1
    ("--alloc=pool_alloc:17", "pool_alloc:17"),  # beyond the sixteenth
    ("--alloc=pool_alloc:02", "pool_alloc:02"),
    ("--alloc=pool_alloc:2:2", "pool_alloc:2:2"),  # size and count the same argument
    ("--alloc=pool_alloc:1:2:3", "pool_alloc:1:2:3"),
    ("--realloc=pool_realloc:2", "pool_realloc:2"),  # needs PTR_ARG and SIZE_ARG
    ("--free=pool_free:1:2", "pool_free:1:2"),
    ("--alloc=:1", ":1"),
    ("--alloc=pool alloc:1", "pool alloc"),
    ("--alloc=pool_alloc:1@", "pool_alloc:1@"),
    ("--alloc=pool_alloc:1@mmap", "mmap"),  # a heap name of heaptrace's own
    ("--alloc=pool_alloc:1@malloc", "malloc"),
    ("--alloc=malloc:1", "malloc"),  # traced already
    ("--free=pool_free:2", "pool_free"),  # a heap nothing allocates in
]


@variants(*[str(i) for i in range(len(BAD))])
def test_custom_bad_spec(i):
    spec, word = BAD[int(i)]
    p = run([helpers.HEAPTRACE, spec, "--", target("pool")])
    one_error_line(p, 1, [word])


def test_custom_twice():
    prog = target("pool")
    p = run([helpers.HEAPTRACE, "--alloc=pool_alloc:2", "--alloc=pool_alloc:2", "--", prog])
    one_error_line(p, 1, ["pool_alloc"])
    p = run([helpers.HEAPTRACE] + ["--alloc=f%d:1" % i for i in range(9)] + ["--", prog])
    one_error_line(p, 1, ["more than 8"])


def test_foreign_warned():
    """An allocator heaptrace knows by name but does not trace itself (tests/targets/foreign.c,
    dlmalloc's entry points in the executable): one warning, naming it and the options that
    trace it; with those options no warning, and its heap is exact."""
    prog = target("foreign")
    r = heaptrace(prog, name="foreign")
    expect_rc(r, 0)
    lines = [x for x in r.proc.stderr.splitlines() if x.strip()]
    if len(lines) != 1 or "dlmalloc" not in lines[0] or "trace them with --alloc=" not in lines[0]:
        r.fail("expected one warning about dlmalloc with the options to use, got %r" % lines)
    specs = lines[0].split("trace them with ", 1)[1].split()
    t = heaptrace(prog, opts=specs, name="foreign-traced")
    expect_rc(t, 0)
    if helpers.said(t.proc.stderr):
        t.fail("heaptrace said something with %s: %r" % (" ".join(specs),
                                                           helpers.said(t.proc.stderr)))
    check_consistency(t, t.report, custom=("dlmalloc", "dlcalloc", "dlrealloc"))
    check_sites(t, t.report, site_records(t), lines=site_lines("foreign"))
    check_heap(t, "dlmalloc", heap_record(t, "dlmalloc"))
