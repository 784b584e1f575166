# SPDX-License-Identifier: GPL-2.0-only
"""Whole-process behaviour: a program that lives on signals (tests/targets/sigheavy.c, with its
own SIGTRAPs, a SIGSEGV handler that siglongjmps, SIGALRM, SIGCHLD from children, and a stop by
SIGSTOP ended by SIGCONT) must print and exit exactly as it does untraced, and its SIGTRAP
disposition and mask must survive allocations made while SIGTRAP is blocked or ignored
(tests/targets/trapmask.c); an execve, from a #! script or a program re-executing itself with a
cleaned environment (tests/targets/reexec.c), restarts the counts, so the report describes the
last image only; and a set-user-ID program run by root (tests/targets/suid.c) is traced like any
other. Each target prints what it is known to do (tests/targets/expect.h)."""

import os
import shlex
import shutil
import tempfile

from helpers import (HEAPTRACE, OPTS, Fail, Run, Skip, check_consistency, check_sites,
                     check_summary, expect_rc, heaptrace, need_heaptrace, read_records, records,
                     run, scratch, site_lines, site_records, sites, summary_record, target,
                     unrecorded, variants)

SIGNAL_RC = {1: "a signal counter is wrong: a signal was swallowed, doubled or turned into "
                "another",
             3: "a child was killed by a signal or exited with the wrong status, or the "
                "SIGSTOP helper failed",
             99: "the SIGSTOP/SIGCONT handshake never ended"}


def native(prog, args=()):
    """Run a target untraced, without the HEAPTRACE_* variables (it writes no records)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEAPTRACE_")}
    p = run([prog] + [str(a) for a in args], env_replace=env)
    if p.timed_out:
        raise Fail("%s did not finish untraced" % os.path.basename(prog), p.describe())
    return p


def exact_check(r, name, rc):
    """Status, then every live site is a recorded one with its exact count, bytes and file:line,
    and the summary is exactly the program's own record."""
    expect_rc(r, rc)
    rep = r.report
    check_consistency(r, rep)
    want = summary_record(r)
    recs = site_records(r, allow_none=want["live_blocks"] == 0)
    check_sites(r, rep, recs, lines=site_lines(name))
    check_summary(r, rep, want)
    extra = unrecorded(rep, recs)
    if extra:
        r.fail("live blocks the program did not make: %s" % extra)
    if rep.get("exit_status") != rc:
        r.fail("exit_status is %r, expected %d" % (rep.get("exit_status"), rc))
    return rep


def same_output(r, nat, what):
    if r.proc.stdout != nat.stdout:
        r.fail("%s: the program printed %r under heaptrace, %r untraced"
               % (what, r.proc.stdout, nat.stdout))


def signal_heavy(opt, args):
    prog = target("sigheavy", opt)
    nat = native(prog, args)
    if nat.rc != 42:
        raise Fail("sigheavy exits %s untraced, expected 42 (a harness fault)" % nat.rc,
                   nat.describe())
    r = heaptrace(prog, args=args, name="sigheavy-%s-%s" % (opt, "-".join(args) or "default"))
    if r.rc != 42:
        r.fail("heaptrace exited %s, expected 42%s; the program printed %r" % (
            r.rc, {133: " (133 = 128 + SIGTRAP: the program died of a SIGTRAP)"}.get(
                r.rc, (" (%s)" % SIGNAL_RC[r.rc]) if r.rc in SIGNAL_RC else ""),
            r.proc.stdout))
    same_output(r, nat, "signal counters")
    exact_check(r, "sigheavy", 42)
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1: the program's own SIGUSR1/SIGUSR2 made reports"
               % len(r.reports))


@variants(*OPTS)
def test_signal_heavy(opt):
    """SIGUSR1, SIGUSR2, SIGALRM (setitimer + sigsuspend), SIGCHLD from forked children,
    SIGTRAP (raise and, on x86_64, its own int3), SIGSEGV left by siglongjmp, SIGSTOP then
    SIGCONT from a helper: the counters printed and the exit status (42) are those of the
    untraced run, and the counts are exact. The handlers allocate, the SIGTRAP handler too
    (with SIGTRAP blocked inside it)."""
    signal_heavy(opt, [])


@variants(*OPTS)
def test_signal_heavy_plain_trap(opt):
    """The same, with a SIGTRAP handler that does not allocate: every other path is held to the
    contract even while an allocation inside the SIGTRAP handler is not."""
    signal_heavy(opt, ["plain-trap"])


@variants(*OPTS)
def test_sigtrap_blocked_or_ignored(opt):
    """An allocation while SIGTRAP is blocked (sigprocmask, or inside its own handler) or
    ignored leaves the program's SIGTRAP handler, SIG_IGN and mask as they were: the lines
    the program prints about them and its status (0) are those of the untraced run."""
    prog = target("trapmask", opt)
    nat = native(prog)
    if nat.rc != 0:
        raise Fail("trapmask exits %s untraced (a harness fault)" % nat.rc, nat.describe())
    r = heaptrace(prog, name="trapmask-" + opt)
    same_output(r, nat, "SIGTRAP disposition")
    exact_check(r, "trapmask", 0)


@variants(*OPTS)
def test_sigtrap_worker_blocks_all(opt):
    """A thread that blocks every signal allocates (so SIGTRAP is blocked when the breakpoint
    traps): afterwards its mask still blocks every signal and the program's SIGTRAP handler is
    still its own, as in the untraced run (same lines, status 0)."""
    prog = target("trapmask", opt)
    nat = native(prog, ["worker"])
    if nat.rc != 0:
        raise Fail("trapmask worker exits %s untraced (a harness fault)" % nat.rc,
                   nat.describe())
    r = heaptrace(prog, args=["worker"], name="trapmask-worker-" + opt)
    same_output(r, nat, "a worker thread's mask and SIGTRAP handler")
    expect_rc(r, 0)


# ---------------------------------------------------------------------------------------------
# execve: the counts restart from zero in each new image


def no_earlier_image(r, rep, names):
    found = sorted({f.get("function") for bt in rep.get("backtraces", [])
                    for f in bt.get("frames", []) if f.get("function") in names})
    if found:
        r.fail("blocks of an earlier image are still reported (%s): the counts did not restart "
               "at execve" % ", ".join(found))


@variants(*OPTS)
def test_reexec_clean_env(opt):
    """reexec execs itself twice, first with an empty environment, then with only a marker
    variable: the report is the last image's, exactly, and exit_status its status (7)."""
    r = heaptrace(target("reexec", opt), name="reexec-" + opt)
    if r.rc in (3, 4):
        r.fail("the program saw an environment it was not given (status %s)" % r.rc)
    rep = exact_check(r, "reexec", 7)
    no_earlier_image(r, rep, {"stage0_leak", "stage1_leak"})
    if r.proc.stdout != "reexec: stage 2\n":
        r.fail("the program printed %r, expected 'reexec: stage 2'" % r.proc.stdout)


def script(name, prog):
    d = scratch(name)
    path = os.path.join(d, "run.sh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n# made by tests/e2e/test_process.py\nexec %s \"$@\"\n"
                % shlex.quote(prog))
    os.chmod(path, 0o755)
    return path


@variants(*OPTS)
def test_script_exec(opt):
    """A #!/bin/sh script that execs a program: the shell's heap is gone, the report is the
    program's (tests/targets/leaks), exactly."""
    sh = script("script-leaks-" + opt, target("leaks", opt))
    r = heaptrace(sh, name="script-leaks-" + opt)
    exact_check(r, "leaks", 0)


@variants(*OPTS)
def test_script_reexec(opt):
    """A script that execs reexec, which execs itself twice: four images, the last one
    reported."""
    sh = script("script-reexec-" + opt, target("reexec", opt))
    r = heaptrace(sh, name="script-reexec-" + opt)
    rep = exact_check(r, "reexec", 7)
    no_earlier_image(r, rep, {"stage0_leak", "stage1_leak"})


# ---------------------------------------------------------------------------------------------
# set-user-ID

NOBODY = 65534
CAP_SYS_PTRACE = 19


def effective_caps():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def test_setuid_as_root():
    """Root runs a set-user-ID program (owned by nobody, mode 4755) under heaptrace: it runs
    as user 65534, as it does untraced, and its sites, summary and status (9) are exact."""
    need_heaptrace()
    if os.geteuid() != 0:
        raise Skip("needs root")
    if not effective_caps() & (1 << CAP_SYS_PTRACE):
        raise Skip("root without CAP_SYS_PTRACE: the kernel runs a traced set-user-ID program "
                   "under the tracer's identity")
    # In a directory of its own under the system's temporary directory: the suite's scratch
    # directory is private (0700), and the program, as user 65534, must reach its record file.
    d = tempfile.mkdtemp(prefix="heaptrace-suid-")
    try:
        os.chmod(d, 0o755)
        prog = os.path.join(d, "suid")
        shutil.copyfile(target("suid"), prog)
        os.chown(prog, NOBODY, NOBODY)
        os.chmod(prog, 0o4755)
        expectfile = os.path.join(d, "expect")

        def fresh_expect():
            with open(expectfile, "w"):
                pass
            os.chmod(expectfile, 0o666)

        fresh_expect()
        nat = run([prog], env={"HEAPTRACE_EXPECT": expectfile})
        ids = [rec for rec in read_records(expectfile) if rec["kind"] == "ids"]
        if nat.rc != 9 or len(ids) != 1:
            raise Fail("the set-user-ID copy exits %s untraced and wrote %d ids records "
                       "(a harness fault)" % (nat.rc, len(ids)), nat.describe())
        if ids[0]["euid"] != NOBODY:
            raise Skip("the set-user-ID bit is not honoured here (euid %s untraced)"
                       % ids[0]["euid"])
        fresh_expect()
        outfile = os.path.join(scratch("suid"), "report")
        proc = run([HEAPTRACE, "--format=json", "--outfile=" + outfile, "--", prog],
                   env={"HEAPTRACE_EXPECT": expectfile})
        r = Run(proc, outfile, expectfile, "json")
        if proc.timed_out:
            r.fail("heaptrace did not finish")
        exact_check(r, "suid", 9)
        ids = records(r, "ids")
        if len(ids) != 1 or (ids[0]["uid"], ids[0]["euid"]) != (0, NOBODY):
            r.fail("the program ran with ids %s under heaptrace, expected uid=0 euid=%d"
                   % (ids, NOBODY))
        bad = [s.key() for s in sites(r.report) if len(s.frames) < 2 or
               os.path.basename(s.frames[1].get("module") or "") != "suid"]
        if bad:
            r.fail("frame 1 of %s is not in the set-user-ID program" % bad)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_affinity_given_back():
    """heaptrace shares one CPU with a single-threaded program it launched (much faster on an
    idle machine); once the program creates a thread or a process it has its own CPU mask
    again: the counts it prints then are those of the untraced run."""
    prog = target("affinity", "O0")
    nat = native(prog)
    if nat.rc != 0 or nat.stdout.count("\n") != 3:
        raise Fail("affinity untraced: exit %s, printed %r" % (nat.rc, nat.stdout))
    r = heaptrace(prog, name="affinity")
    expect_rc(r, 0)
    same_output(r, nat, "CPU masks")
