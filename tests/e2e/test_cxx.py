# SPDX-License-Identifier: GPL-2.0-only
"""C++ (tests/targets/cxx.cc): new/delete, new[]/delete[], std::vector growth and reserve,
std::string. Frame 0 of a C++ site is the operator ("new", "new[]" in the records; the malloc
libstdc++'s operator new calls is not counted again); the vector's chain is 10 frames deep at -O0,
so these runs use --depth=24. libstdc++ makes its emergency exception
pool (eh_alloc.cc, 72704 bytes with libstdc++ 12 on x86_64) with malloc from a constructor before
main; that block is live at exit and its frames do not reach main: it is the one block the program
does not count itself, and the tests require exactly one such block of 64 to 80 KiB."""

from helpers import (OPTS, Site, check_consistency, check_debug_info, check_sites, check_summary,
                     expect_rc, fn_name, heaptrace, pre_main, site_lines, site_records, sites,
                     summary_record, target, variants)

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


@variants(*OPTS)
def test_cxx_operators(opt):
    """Every form of operator new and delete (tests/targets/cxxops.cc): frame 0 is the operator,
    each call counted once (not again by the malloc, aligned_alloc or free libstdc++ calls
    inside), sizes as asked, and the summary exactly the program's own count plus the pool."""
    prog = target("cxxops", opt)
    r = heaptrace(prog, name="cxxops-" + opt)
    expect_rc(r, 0)
    rep = r.report
    check_consistency(r, rep)
    check_sites(r, rep, site_records(r), lines=site_lines("cxxops"))
    pool = pool_block(r, rep)
    check_debug_info(r, rep, prog)
    extra = {"alloc_calls": 1, "live_blocks": 1, "live_bytes": pool.size,
             "peak_live_blocks": 1, "peak_live_bytes": pool.size,
             "total_allocated_bytes": pool.size}
    check_summary(r, rep, summary_record(r), extra=extra)
    names = {f["function"] for s in rep["backtraces"] for f in s["frames"][:1]}
    for want in ("operator new(unsigned long, std::align_val_t)",
                 "operator new[](unsigned long, std::nothrow_t const&)"):
        if not any(n and n.replace("unsigned int", "unsigned long") == want for n in names):
            r.fail("no frame 0 names %s: %s" % (want, sorted(n or "?" for n in names)))


@variants(*OPTS)
def test_cxx_new_throws(opt):
    """operator new that throws std::bad_alloc (and a constructor that throws after it): the
    program catches every exception and exits 0 (heaptrace gives the unwinder the real return
    address back at _Unwind_RaiseException), and the counts are the ones cxxops.cc derives."""
    r = heaptrace(target("cxxops", opt), args=["throw"], name="cxxops-throw-" + opt)
    expect_rc(r, 0)
    rep = r.report
    check_consistency(r, rep)
    pool = pool_block(r, rep)
    if [s for s in rep["backtraces"] if Site(s).reaches_main]:
        r.fail("live blocks from main after throw_some, which frees everything")
    check_summary(r, rep, summary_record(r),
                  keys=["alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes"],
                  extra={"alloc_calls": 1, "live_blocks": 1, "live_bytes": pool.size})


@variants(*OPTS)
def test_cxx_personality_frames(opt):
    """Chains through functions with a personality routine (a try block, a local with a
    destructor: tests/targets/cxxunwind.cc) and a function without a frame pointer reach main
    in every entry mode: the unwinder reads the routine's pointer in the executable's .data
    (in stubs mode, where the program runs on while its record is unwound, too), and go on
    past main into the C library's start code (the stack scan that takes over when the
    unwinder gives up found main but stopped there)."""
    r = heaptrace(target("cxxunwind", opt), opts=DEPTH, name="cxxunwind-" + opt)
    expect_rc(r, 0)
    check_sites(r, r.report, site_records(r), lines=site_lines("cxxunwind"))
    for s in sites(r.report):
        if s.reaches_main:
            names = [fn_name(f) for f in s.frames]
            after = names[names.index("main") + 1:]
            if not any(n.startswith("__libc_start") for n in after):
                r.fail("%s: no __libc_start frame after main: %s" % (s.key(), names))
    pool = pool_block(r, r.report)
    extra = {"alloc_calls": 1, "live_blocks": 1, "live_bytes": pool.size,
             "peak_live_blocks": 1, "peak_live_bytes": pool.size,
             "total_allocated_bytes": pool.size}
    check_summary(r, r.report, summary_record(r), extra=extra)
