# SPDX-License-Identifier: GPL-2.0-only
"""Frees the C library makes as a thread ends (tests/targets/threadexit.c): 100 threads malloc
and free 6 blocks, each of its own tcache bin, and end; glibc then frees what each thread's cache
holds (at least those 6 blocks, which the thread had freed) and the cache itself, which it made
without calling malloc. None of that is an unknown free: summary.unknown_frees is 0 and
summary.library_frees at least 7 per thread (more when a thread's malloc moved other free chunks
into its cache). One free() of a block no allocator returned (a fake mmapped chunk glibc gives
back with munmap), made in main or in a thread just before it ends, is exactly 1 unknown free.

The other counts are exact: the program's own record (1 + 6 per thread allocations and frees),
plus each thread's DTV, which pthread_create callocs (allocate_dtv) and glibc frees when the
thread's stack leaves its cache of stacks: 1 allocation per thread, and its frees are the DTV
blocks not live at the end. Attached (heaptrace -p while the threads wait to end, their caches
full): the cached blocks were freed before the attach, and the heap-at-attach inventory, which
finds them free, tells them apart: 0 unknown frees again, 1 with the foreign free in main."""

import os
import select
import subprocess

from helpers import (HEAPTRACE, Fail, Run, check_consistency, expect_rc, fn_name, heaptrace,
                     need_heaptrace, run, scratch, sites, summary_record, target, variants,
                     TIMEOUT)

THREADS = 100
BLOCKS = 6  # per thread, as threadexit.c


def is_dtv(site):
    """A live site of the DTVs pthread_create callocs (calloc <- allocate_dtv ...)."""
    return len(site.frames) > 1 and fn_name(site.frames[1]) == "allocate_dtv"


def check_frees(r, unknown, nthreads):
    summ = r.report["summary"]
    errors = []
    if summ["unknown_frees"] != unknown:
        errors.append("summary.unknown_frees = %s, expected %d"
                      % (summ["unknown_frees"], unknown))
    least = nthreads * (BLOCKS + 1)
    if summ.get("library_frees", 0) < least:
        errors.append("summary.library_frees = %s, expected at least %d (%d threads, each "
                      "%d cached blocks and its cache)"
                      % (summ.get("library_frees"), least, nthreads, BLOCKS))
    if errors:
        r.fail("; ".join(errors))


def launched(foreign, opt="O0"):
    r = heaptrace(target("threadexit", opt), args=[THREADS, foreign],
                  name="threadexit-%s-%s" % (foreign, opt))
    expect_rc(r, 0)
    rep = r.report
    check_consistency(r, rep)
    want = summary_record(r)
    nthreads = THREADS + (foreign == "thread")
    check_frees(r, want["unknown_frees"], nthreads)
    dtv_live = sum(s.count for s in sites(rep) if is_dtv(s))
    other = [s.key() for s in sites(rep) if not is_dtv(s)]
    summ = rep["summary"]
    errors = []
    if other:
        errors.append("live blocks besides the DTVs: %s" % other)
    if summ["alloc_calls"] != want["alloc_calls"] + nthreads:
        errors.append("summary.alloc_calls = %s, expected %s (program %s + %d DTVs)"
                      % (summ["alloc_calls"], want["alloc_calls"] + nthreads,
                         want["alloc_calls"], nthreads))
    if summ["free_calls"] != want["free_calls"] + nthreads - dtv_live:
        errors.append("summary.free_calls = %s, expected %s (program %s + %d DTVs freed)"
                      % (summ["free_calls"], want["free_calls"] + nthreads - dtv_live,
                         want["free_calls"], nthreads - dtv_live))
    if errors:
        r.fail("; ".join(errors))


@variants("O0", "O2")
def test_threadexit_no_unknown(opt):
    """100 threads end: their caches are the C library's frees, exact counts otherwise."""
    launched("none", opt)


def test_threadexit_foreign_in_main():
    launched("main")


def test_threadexit_foreign_before_thread_end():
    """A thread's last call, a free of a block never allocated, stays an unknown free."""
    launched("thread")


def attached(foreign):
    """heaptrace -p on threadexit THREADS FOREIGN attach, to its end."""
    need_heaptrace()
    d = scratch("threadexit-attach-%s" % foreign)
    outfile = os.path.join(d, "report")
    t = subprocess.Popen([target("threadexit"), str(THREADS), foreign, "attach"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=d)
    try:
        ready, _, _ = select.select([t.stdout], [], [], 60)
        line = t.stdout.readline() if ready else b""
        if line != b"ready\n":
            raise Fail("the target did not get ready (said %r)" % line)
        proc = run([HEAPTRACE, "-p", str(t.pid), "--format=json", "--outfile=" + outfile])
        t.wait(timeout=TIMEOUT)
        r = Run(proc, outfile, os.path.join(d, "expect"), "json")
        if proc.rc != 0 or t.returncode != 0:
            r.fail("heaptrace -p exited %s, the target %s; expected 0 and 0"
                   % (proc.rc, t.returncode))
        return r
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        t.stdout.close()
        t.stderr.close()


@variants("none", "main")
def test_threadexit_attached(foreign):
    r = attached(foreign)
    check_consistency(r, r.report)
    check_frees(r, 1 if foreign == "main" else 0, THREADS)
