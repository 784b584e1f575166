# SPDX-License-Identifier: GPL-2.0-only
"""summary.allocators (and the text report's "allocators traced" line, and -v at start): what
each traced allocator is, named by the module its entry points were found in: the C library
(glibc or musl, dynamic or static), a replacement allocator, the C++ runtime's operators, the
executable's own malloc, a custom heap (--alloc), the mmap heap (--mmap)."""

from helpers import (check_sites, check_summary, expect_rc, heaptrace, pre_main, site_records,
                     summary_record, target, variants)

CASES = {
    "family": ["glibc"],
    "static_leaks": ["glibc"],
    "cxx": ["glibc", "libstdc++ operators"],
    "musl_family": ["musl"],
    "musl_static_family": ["musl"],
    "jemalloc_ops": ["jemalloc", "glibc"],  # glibc's reallocarray, valloc, ...: jemalloc has none
    "mimalloc_ops": ["mimalloc"],
    "ownmalloc": ["malloc of ownmalloc", "glibc"],
    # the executable's own operator new and delete (not "malloc of ownnew operators"); its
    # other operators (aligned, nothrow, arrays) are libstdc++'s
    "ownnew": ["glibc", "operators of ownnew", "libstdc++ operators"],
}


@variants(*sorted(CASES))
def test_allocators_named(name):
    r = heaptrace(target(name), name="allocnames-" + name)
    expect_rc(r, 0)
    got = r.report["summary"].get("allocators")
    if got != CASES[name]:
        r.fail("summary.allocators = %r, expected %r" % (got, CASES[name]))


def test_allocators_custom_text():
    r = heaptrace(target("pool"), opts=("-v", "--alloc=pool_alloc:2", "--mmap"), fmt="text",
                  name="allocnames-text")
    expect_rc(r, 0)
    want = "[heaptrace] allocators traced         : glibc, mmap (--mmap), pool_alloc (--alloc)"
    if want not in (r.out or "").splitlines():
        r.fail("no line %r in the text report" % want)
    said = [x for x in r.proc.stderr.splitlines() if "allocators traced:" in x]
    if not said or not said[0].endswith("glibc, mmap (--mmap), pool_alloc (--alloc)"):
        r.fail("-v did not say the allocators at start: %r" % said)


def test_allocators_own_operators_counted():
    """ownnew's own operators: each new counted once as "new" (not again as the malloc inside
    it), each delete once; plus libstdc++'s emergency pool, the one block outside main."""
    r = heaptrace(target("ownnew"), name="allocnames-ownnew-counts")
    expect_rc(r, 0)
    check_sites(r, r.report, site_records(r))
    early = pre_main(r.report)
    if len(early) != 1 or early[0].count != 1:
        r.fail("expected one block outside main (libstdc++'s pool), got %s" % early)
    pool = early[0].size
    check_summary(r, r.report, summary_record(r),
                  extra={"alloc_calls": 1, "live_blocks": 1, "live_bytes": pool,
                         "peak_live_blocks": 1, "peak_live_bytes": pool,
                         "total_allocated_bytes": pool})
