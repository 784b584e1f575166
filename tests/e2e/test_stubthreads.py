# SPDX-License-Identifier: GPL-2.0-only
"""The stubs' thread table in a process whose main thread has exited (tests/targets/leaderchurn.c,
traced with -p): its 200 workers come and go one after another, each with a key of its own, more
than the table holds (128) unless a gone worker's slot is freed for the next. A worker missing
from the table gets stack copies that end at the page of its sp (heaptrace says so once), and a
backtrace cut after a frame or two. Every worker's block must have the whole chain leaf <- level2
<- level1 <- worker_main, and the table must not have been found full. In breakpoint mode there
is no table: the same figures."""

import os
import select
import subprocess

from helpers import (HEAPTRACE, TIMEOUT, Fail, Run, check_sites, need_heaptrace, run, scratch,
                     site_records, target)


def test_stubthreads_leader_gone():
    need_heaptrace()
    d = scratch("leaderchurn")
    outfile = os.path.join(d, "report")
    expectfile = os.path.join(d, "expect")
    env = dict(os.environ, HEAPTRACE_EXPECT=expectfile, HEAPTRACE_OUTFILE=outfile)
    t = subprocess.Popen([target("leaderchurn"), "200"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=d)
    try:
        ready, _, _ = select.select([t.stdout], [], [], TIMEOUT)
        line = t.stdout.readline() if ready else b""
        if line != b"ready\n":
            raise Fail("leaderchurn did not get ready (said %r)" % line)
        proc = run([HEAPTRACE, "-p", str(t.pid), "--format=json", "--outfile=" + outfile,
                    "--no-inventory"])
        t.wait(timeout=TIMEOUT)
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
    r = Run(proc, outfile, expectfile, "json")
    if proc.timed_out or proc.rc != 0:
        r.fail("heaptrace -p exited %s, expected 0" % proc.rc)
    if t.returncode != 0:
        r.fail("leaderchurn exited %s, expected 0" % t.returncode)
    check_sites(r, r.report, site_records(r), exhaustive=False)
    if "no room in the stubs' thread table" in proc.stderr:
        r.fail("the stubs' thread table filled up: gone workers' slots were not freed")
