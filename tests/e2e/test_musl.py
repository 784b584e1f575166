# SPDX-License-Identifier: GPL-2.0-only
"""musl (tests/targets/musl_family.c, musl_static_family.c: family.c built with musl-gcc). A
dynamic musl program's C library is its dynamic linker, ld-musl-ARCH.so.1: the malloc family is
found there. Counts, sizes and frames are exact as with glibc; musl's memalign, posix_memalign and
valloc call aligned_alloc, calloc calls malloc and reallocarray calls realloc, each counted once
as the outer call. musl allocates nothing on its own for a program without stdio, so every live
block reaches main. Valgrind cannot run musl programs (no symbols for its preload), so the program's
own count is the reference."""

import helpers
from helpers import (OPTS, check_consistency, check_debug_info, check_sites, check_summary,
                     expect_rc, heaptrace, pre_main, site_lines, site_records, summary_record,
                     target, variants)

NAMES = ("musl_family", "musl_static_family")


def run_family(name, opt):
    prog = target(name, opt)
    r = heaptrace(prog, name="%s-%s" % (name, opt))
    expect_rc(r, 0)
    if helpers.said(r.proc.stderr):
        r.fail("heaptrace said something on a clean run: %r" % helpers.said(r.proc.stderr))
    return prog, r


@variants(*["%s:%s" % (n, o) for n in NAMES for o in OPTS])
def test_musl_family(v):
    name, opt = v.split(":")
    prog, r = run_family(name, opt)
    rep = r.report
    check_consistency(r, rep)
    check_sites(r, rep, site_records(r), lines=site_lines("family"))
    if pre_main(rep):
        r.fail("live blocks that do not reach main: %s" % pre_main(rep))
    check_debug_info(r, rep, prog)
    check_summary(r, rep, summary_record(r))
