# SPDX-License-Identifier: GPL-2.0-only
"""C++ (tests/targets/cxx.cc): new/delete, new[]/delete[], std::vector growth and reserve,
std::string. Frame 1 of a C++ site is operator new (the chains start with "*"); the vector's chain
is 11 frames deep at -O0, so these runs use --depth=24. libstdc++ makes its emergency exception
pool (eh_alloc.cc, 72704 bytes with libstdc++ 12 on x86_64) with malloc from a constructor before
main; that block is live at exit and its frames do not reach main: it is the one block the program
does not count itself, and the tests require exactly one such block of 64 to 80 KiB."""

from helpers import (OPTS, check_consistency, check_debug_info, check_sites, check_summary,
                     expect_rc, heaptrace, pre_main, site_lines, site_records, summary_record,
                     target, variants)

DEPTH = ["--depth=24"]
POOL_MIN, POOL_MAX = 64 * 1024, 80 * 1024


def pool_block(r, rep):
    early = pre_main(rep)
    if len(early) != 1:
        r.fail("expected exactly one live backtrace outside main (libstdc++'s emergency pool), "
               "got %d: %s" % (len(early), early))
    pool = early[0]
    if pool.count != 1 or not POOL_MIN <= pool.size <= POOL_MAX:
        r.fail("the block outside main is %s, expected 1 block of %d..%d bytes"
               % (pool, POOL_MIN, POOL_MAX))
    if pool.fn not in ("malloc", "calloc"):
        r.fail("the pool was allocated by %s, expected malloc or calloc" % pool.fn)
    return pool


@variants(*OPTS)
def test_cxx(opt):
    prog = target("cxx", opt)
    r = heaptrace(prog, opts=DEPTH, name="cxx-" + opt)
    expect_rc(r, 0)
    rep = r.report
    check_consistency(r, rep)
    check_sites(r, rep, site_records(r), lines=site_lines("cxx"))
    pool_block(r, rep)
    check_debug_info(r, rep, prog)


@variants(*OPTS)
def test_cxx_summary(opt):
    """The program's own counts plus the pool: one allocation, one live block, its bytes."""
    r = heaptrace(target("cxx", opt), opts=DEPTH, name="cxx-sum-" + opt)
    expect_rc(r, 0)
    pool = pool_block(r, r.report)
    want = summary_record(r)
    extra = {"alloc_calls": 1, "live_blocks": 1, "live_bytes": pool.size,
             "peak_live_blocks": 1, "peak_live_bytes": pool.size,
             "total_allocated_bytes": pool.size}
    check_summary(r, r.report, want, extra=extra)
