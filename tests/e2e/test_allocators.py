# SPDX-License-Identifier: GPL-2.0-only
"""C++ programs linked with a replacement allocator (tests/targets/vendor.h: jemalloc_ops,
tcmalloc_ops, mimalloc_ops): the library's malloc, free, operator new and delete, and its own
entry points (jemalloc's mallocx, rallocx, xallocx, sdallocx, dallocx; tcmalloc's tc_*;
mimalloc's mi_*) are traced; every live block the program makes is found with its size and frame
0, and the program's own count is exactly the difference between its run and a run in which it
does nothing in main (the library's, libstdc++'s and the C library's own allocations, the same in
both). Peaks cannot be told apart that way and are not compared."""

from helpers import (OPTS, check_consistency, check_debug_info, check_sites, check_summary,
                     expect_rc, heaptrace,
                     site_lines, site_records, summary_record, target, variants, Fail)

LIBS = ("jemalloc", "tcmalloc", "mimalloc")
KEYS = ("alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes",
        "total_allocated_bytes")


def quiet(r):
    if r.proc.stderr.strip():
        r.fail("heaptrace said something on a clean run: %r" % r.proc.stderr.strip())


@variants(*["%s:%s" % (lib, o) for lib in LIBS for o in OPTS])
def test_allocator(v):
    lib, opt = v.split(":")
    prog = target(lib + "_ops", opt)
    r = heaptrace(prog, name="%s-%s" % (lib, opt))
    expect_rc(r, 0)
    quiet(r)
    rep = r.report
    check_consistency(r, rep)
    check_sites(r, rep, site_records(r), lines=site_lines("vendor"))
    check_debug_info(r, rep, prog)
    idle = heaptrace(prog, args=["idle"], name="%s-idle-%s" % (lib, opt))
    expect_rc(idle, 0)
    quiet(idle)
    baseline_diff(r, idle, summary_record(r), KEYS)


def baseline_diff(r, idle, want, keys):
    got, base = r.report["summary"], idle.report["summary"]
    errors = ["summary.%s = %s (%s in the idle run), the program counted %s"
              % (k, got[k], base[k], want[k]) for k in keys if got[k] - base[k] != want[k]]
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + r.describe())


@variants(*["%s:%s" % (lib, o) for lib in ("jemalloc", "tcmalloc") for o in OPTS])
def test_allocator_new_throws(v):
    """The library's own operator new throwing std::bad_alloc (tests/targets/cxxops.cc "throw"):
    the program catches it and exits 0, and counts as cxxops.cc derives (over its idle run).
    mimalloc is left out: its operator new aborts on such a request, untraced too."""
    lib, opt = v.split(":")
    prog = target(lib + "_cxxops", opt)
    r = heaptrace(prog, args=["throw"], name="%s-throw-%s" % (lib, opt))
    expect_rc(r, 0)
    quiet(r)
    check_consistency(r, r.report)
    idle = heaptrace(prog, args=["idle"], name="%s-throw-idle-%s" % (lib, opt))
    expect_rc(idle, 0)
    baseline_diff(r, idle, summary_record(r), KEYS[:5])


@variants(*OPTS)
def test_jemalloc_prefixed(opt):
    """A jemalloc built with the je_ prefix (tests/targets/jeprefix.c: its entry points defined
    by the executable, as Debian's jemalloc has no prefix): je_malloc, je_calloc, je_realloc,
    je_free, je_posix_memalign, je_mallocx, je_rallocx, je_dallocx and je_sdallocx are found and
    counted exactly as the program counts them, in the malloc heap. At -O2 the executable's
    je_malloc starts with a pc-relative load (x86_64: mov disp32(%rip)), which a breakpoint
    steps over from the scratch page near the libraries, out of a 32-bit displacement's reach
    from a PIE executable: arch/x86_64 runs it with a base register instead."""
    prog = target("jeprefix", opt)
    r = heaptrace(prog, name="jeprefix-" + opt)
    expect_rc(r, 0)
    quiet(r)
    check_consistency(r, r.report)
    check_sites(r, r.report, site_records(r), lines=site_lines("jeprefix"))
    check_summary(r, r.report, summary_record(r))
