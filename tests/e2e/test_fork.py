# SPDX-License-Identifier: GPL-2.0-only
"""fork, vfork, system and popen (tests/targets/forker.c). Without --follow-fork the children run
untraced (a breakpoint left in a child would kill it with SIGTRAP: the target then exits non-zero)
and there is one report, the parent's. With --follow-fork there is one report per process (JSON
Lines): five, each with exit_status 0; the fork child's table starts as a copy of the parent's.
tests/targets/forkstress.c forks hundreds of children while other threads allocate."""

from helpers import (OPTS, check_consistency, check_sites, expect_rc, heaptrace, records,
                     site_lines, site_records, summary_record, target, unrecorded, variants)


@variants(*OPTS)
def test_fork_not_followed(opt):
    r = heaptrace(target("forker", opt), name="forker-" + opt)
    expect_rc(r, 0)
    if len(r.reports) != 1:
        r.fail("%d reports without --follow-fork, expected 1" % len(r.reports))
    rep = r.report
    if rep.get("exit_status") != 0:
        r.fail("exit_status %r, expected 0" % rep.get("exit_status"))
    check_sites(r, rep, site_records(r))


@variants(*OPTS)
def test_fork_followed(opt):
    r = heaptrace(target("forker", opt), opts=["--follow-fork"], name="forker-f-" + opt)
    expect_rc(r, 0)
    reps = r.reports
    if len(reps) != 5:
        r.fail("%d reports with --follow-fork, expected 5 (parent, fork child, vfork child, "
               "system's and popen's shells)" % len(reps))
    pids = [rep.get("pid") for rep in reps]
    if len(set(pids)) != len(pids):
        r.fail("reports with the same pid: %s" % pids)
    bad = [(rep.get("pid"), rep.get("exit_status")) for rep in reps if rep.get("exit_status") != 0]
    if bad:
        r.fail("processes whose exit_status is not 0 (pid, status): %s" % bad)

    def has(rep, fn):
        return any(any(f.get("function") == fn for f in bt.get("frames", []))
                   for bt in rep.get("backtraces", []))

    parents = [rep for rep in reps if has(rep, "parent_leak_after")]
    children = [rep for rep in reps if has(rep, "child_leak")]
    if len(parents) != 1 or len(children) != 1:
        r.fail("expected one report with parent_leak_after and one with child_leak, got %d and %d"
               % (len(parents), len(children)))
    if parents[0] is children[0]:
        r.fail("the parent's and the child's blocks are in one report")
    check_sites(r, parents[0], site_records(r))
    check_sites(r, children[0], records(r, "site", "child"))


@variants(*OPTS)
def test_fork_child_crash(opt):
    """--follow-fork, a child killed by SIGSEGV: its report says exit_status 139 and lists its
    blocks; the parent's says 0, and heaptrace exits with the parent's status."""
    r = heaptrace(target("forker", opt), args=["crashchild"], opts=["--follow-fork"],
                  name="forker-crash-" + opt)
    expect_rc(r, 0)
    reps = r.reports
    if len(reps) != 2:
        r.fail("%d reports, expected 2 (parent and child)" % len(reps))
    by_status = {rep.get("exit_status"): rep for rep in reps}
    if sorted(by_status, key=str) != [0, 139]:
        r.fail("exit_status of the reports: %s, expected 0 and 139"
               % [rep.get("exit_status") for rep in reps])
    check_sites(r, by_status[0], site_records(r))
    check_sites(r, by_status[139], records(r, "site", "child"))


def test_fork_child_crash_not_followed():
    r = heaptrace(target("forker"), args=["crashchild"], name="forker-crash-nf")
    expect_rc(r, 0)
    if len(r.reports) != 1:
        r.fail("%d reports without --follow-fork, expected 1" % len(r.reports))
    check_sites(r, r.report, site_records(r))


STRESS_CHILDREN = 300
STRESS_KEYS = ["alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes"]


@variants(*OPTS)
def test_fork_stress(opt):
    """tests/targets/forkstress.c: 4 threads malloc and free while the main thread forks 300
    children one after the other (each mallocs, frees and _exits 0), without --follow-fork:
    every child exits normally (a breakpoint left in a child's copy of the code would kill it
    with SIGTRAP; the target checks each status, and prints and exits 3 otherwise), and the
    parent's counts are exact. The C library's own blocks and frees for the threads are measured
    by a run with 0 children, as in test_threads."""
    prog = target("forkstress", opt)
    base = heaptrace(prog, args=[0], name="forkstress-base-" + opt)
    expect_rc(base, 0)
    check_consistency(base, base.report)
    base_prog = summary_record(base)
    glibc = {k: base.report["summary"][k] - base_prog[k] for k in STRESS_KEYS}
    r = heaptrace(prog, args=[STRESS_CHILDREN], name="forkstress-" + opt)
    if r.rc == 3:
        r.fail("children did not exit normally: %s" % r.proc.stdout.strip().splitlines()[:5])
    expect_rc(r, 0)
    want_out = "forkstress: %d children, 4 threads\n" % STRESS_CHILDREN
    if r.proc.stdout != want_out:
        r.fail("the program printed %r, expected %r" % (r.proc.stdout, want_out))
    if len(r.reports) != 1:
        r.fail("%d reports without --follow-fork, expected 1" % len(r.reports))
    rep = r.report
    check_consistency(r, rep)
    recs = site_records(r)
    check_sites(r, rep, recs, exhaustive=False, lines=site_lines("forkstress"))
    left, left_base = unrecorded(rep, recs), unrecorded(base.report, site_records(base))
    if left != left_base:
        r.fail("live blocks besides the program's differ from the 0-children run: %s vs %s"
               % (left, left_base))
    want = summary_record(r)
    errors = ["summary.%s = %s, expected %s (program %s + glibc's %s)"
              % (k, rep["summary"][k], want[k] + glibc[k], want[k], glibc[k])
              for k in STRESS_KEYS if rep["summary"][k] != want[k] + glibc[k]]
    if errors:
        r.fail("; ".join(errors))
    if rep.get("exit_status") != 0:
        r.fail("exit_status %r, expected 0" % rep.get("exit_status"))
