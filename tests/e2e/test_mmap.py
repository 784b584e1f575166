# SPDX-License-Identifier: GPL-2.0-only
"""--mmap (tests/targets/mapper.c): anonymous private mappings made with the C library's mmap,
mremap and sbrk are blocks of the heap "mmap" (summary.heaps.mmap, "heap": "mmap" per
backtrace); a munmap of a block's middle splits it, of its head shortens it; mremap moves and
resizes a block (a free and an allocation); file mappings and shared anonymous ones count
nothing; the mmap and munmap glibc makes inside malloc and free are malloc's, and leave the
mmap heap alone. The figures are the program's own count, and checked against the kernel's view
of the same run under strace: the pages of anonymous private mappings and of the break's growth
still mapped at the end, and the calls that made them."""

import os
import re

from helpers import (OPTS, check_consistency, check_sites, check_summary, expect_rc, heaptrace,
                     records, run, site_lines, site_records, summary_record, target, variants,
                     which, Skip)

FUNCS = ("mmap", "mmap64", "mremap", "sbrk")
KEYS = ("alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes",
        "peak_live_blocks", "peak_live_bytes", "total_allocated_bytes")


def mmap_record(r):
    recs = [x for x in records(r, "heap") if x.get("name") == "mmap"]
    if len(recs) != 1:
        r.fail("the target wrote %d heap records for mmap (expected 1)" % len(recs))
    return recs[0]


def heap_of(r):
    got = (r.report["summary"].get("heaps") or {}).get("mmap")
    if got is None:
        r.fail("summary.heaps has no mmap: %r" % r.report["summary"].get("heaps"))
    return got


@variants(*OPTS)
def test_mmap(opt):
    r = heaptrace(target("mapper", opt), opts=("--mmap",), name="mapper-" + opt)
    expect_rc(r, 0)
    check_consistency(r, r.report, custom=FUNCS)
    check_sites(r, r.report, site_records(r), lines=site_lines("mapper"))
    check_summary(r, r.report, summary_record(r))
    got, want = heap_of(r), mmap_record(r)
    errors = ["summary.heaps.mmap.%s = %s, expected %s" % (k, got.get(k), want[k])
              for k in KEYS if got.get(k) != want[k]]
    if errors:
        r.fail("; ".join(errors))
    for bt in r.report["backtraces"]:
        if bt.get("heap") != "mmap":
            r.fail("a backtrace of heap %r: the program's own malloc left nothing live"
                   % bt.get("heap"))


def test_mmap_off():
    """Without --mmap, mappings count nothing and no mapping function is traced."""
    r = heaptrace(target("mapper"), name="mapper-off")
    expect_rc(r, 0)
    check_summary(r, r.report, summary_record(r))
    if "heaps" in r.report["summary"] or r.report["backtraces"]:
        r.fail("mappings counted without --mmap")


def kernel_view(path, page):
    """Replay strace's mmap, munmap, mremap and brk lines between the target's markers: the
    pages of anonymous private mappings and of the break's growth mapped at "end", and how many
    calls mapped such pages (mmap, a mremap of such pages, a brk that raised the break)."""
    pages, calls, brk, brk0, on = set(), 0, None, None, False
    num = r"(0x[0-9a-f]+|\d+|NULL)"

    def val(s):
        return 0 if s == "NULL" else int(s, 0)

    with open(path) as f:
        for line in f:
            if 'write(-1, "begin"' in line:
                on = True
            elif 'write(-1, "end"' in line:
                break
            elif not on:
                continue
            m = re.match(r"mmap\(%s, (\d+), [^,]+, ([A-Z_|]+), (-?\d+), \d+\)\s+= (0x[0-9a-f]+)"
                         % num, line)
            if m:
                start, n = int(m.group(5), 16), int(m.group(2))
                span = set(range(start, start + n, page))
                pages -= span
                if "MAP_PRIVATE" in m.group(3) and "MAP_ANONYMOUS" in m.group(3):
                    pages |= span
                    calls += 1
                continue
            m = re.match(r"munmap\((0x[0-9a-f]+), (\d+)\)\s+= 0", line)
            if m:
                start = int(m.group(1), 16)
                pages -= set(range(start, start + int(m.group(2)), page))
                continue
            m = re.match(r"mremap\((0x[0-9a-f]+), (\d+), (\d+), [^)]*\)\s+= (0x[0-9a-f]+)", line)
            if m:
                old = set(range(int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2)), page))
                if old & pages:
                    pages -= old
                    new = int(m.group(4), 16)
                    pages |= set(range(new, new + int(m.group(3)), page))
                    calls += 1
                continue
            m = re.match(r"brk\(%s\)\s+= (0x[0-9a-f]+)" % num, line)
            if m:
                now = int(m.group(2), 16)
                if brk is None:
                    brk = brk0 = now
                if now > brk:
                    calls += 1
                brk = now
    brk_pages = (brk - brk0) // page if brk is not None else 0
    return len(pages) + brk_pages, calls


def test_mmap_strace():
    strace = which("strace")
    if not strace:
        raise Skip("strace is not installed")
    prog = target("mapper")
    r = heaptrace(prog, opts=("--mmap",), name="mapper-strace")
    expect_rc(r, 0)
    log = os.path.join(os.path.dirname(r.outfile), "strace.log")
    p = run([strace, "-o", log, "-e", "trace=mmap,munmap,mremap,brk,write", "--", prog])
    if p.rc != 0:
        raise Skip("strace could not run the target: %s" % p.stderr.strip()[:200])
    page = os.sysconf("SC_PAGE_SIZE")
    live_pages, calls = kernel_view(log, page)
    got = heap_of(r)
    if got["live_bytes"] != live_pages * page:
        r.fail("heaps.mmap.live_bytes = %d, but %d pages stayed mapped under strace"
               % (got["live_bytes"], live_pages))
    if got["alloc_calls"] != calls:
        r.fail("heaps.mmap.alloc_calls = %d, but strace saw %d calls map such pages"
               % (got["alloc_calls"], calls))
