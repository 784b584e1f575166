# SPDX-License-Identifier: GPL-2.0-only
"""Every function of the malloc family (tests/targets/family.c): frame 0 names the public function
the program called (memalign and aligned_alloc share an address in glibc: either is accepted), a
call made inside another traced call is counted once as the outer one (realloc(NULL, n),
reallocarray, posix_memalign and aligned_alloc reach malloc inside glibc; realloc(p, 0) calls
free), sizes are what the program asked for, failed calls and free(NULL) count nothing, and a
realloc releases the old block before it adds the new one (peaks)."""

from helpers import (OPTS, check_consistency, check_debug_info, check_sites, check_summary,
                     expect_rc, heaptrace, pre_main, site_lines, site_records, summary_record,
                     target, variants)


@variants(*OPTS)
def test_family(opt):
    prog = target("family", opt)
    r = heaptrace(prog, name="family-" + opt)
    expect_rc(r, 0)
    rep = r.report
    check_consistency(r, rep)
    check_sites(r, rep, site_records(r), lines=site_lines("family"))
    if pre_main(rep):
        r.fail("live blocks that do not reach main: %s" % pre_main(rep))
    check_debug_info(r, rep, prog)


@variants(*OPTS)
def test_family_summary(opt):
    """alloc_calls, free_calls, live blocks and bytes, peaks and total_allocated_bytes, exactly
    as the program counted its own calls (it uses no stdio, so glibc allocates nothing else)."""
    r = heaptrace(target("family", opt), name="family-sum-" + opt)
    expect_rc(r, 0)
    check_summary(r, r.report, summary_record(r))


def test_family_total_backtraces():
    """total_backtraces counts backtraces that are no longer live too (free_each, the first
    malloc of grow_realloc, ...), so it is larger than backtraces."""
    r = heaptrace(target("family"))
    s = r.report["summary"]
    if not s["total_backtraces"] > s["backtraces"]:
        r.fail("total_backtraces %s is not above backtraces %s"
               % (s["total_backtraces"], s["backtraces"]))
