# SPDX-License-Identifier: GPL-2.0-only
"""heaptrace and seccomp (tests/targets/seccomp.c). heaptrace injects an mmap (and an mprotect)
into the process it traces; under seccomp it first decides, from the thread's own filters, whether
the kernel would let them through, and never makes a call that could be refused.

- heaptrace -p of a process in strict mode, or under a filter that kills on mmap, kills on
  PROT_EXEC or returns EPERM for mmap: exit status 2, one line naming seccomp that says to start
  the program under heaptrace; the process is left exactly as it was (no tracer, the same
  mappings: nothing was injected) and goes on working, with its own output and exit status.
- A filter that forbids only what heaptrace does not inject (ptrace, acct; writable and
  executable mappings), or only the optional mprotect: heaptrace -p traces the process with exact
  counts.
- A launched program that installs a filter forbidding anonymous executable mmaps and then execs:
  the new image runs on untraced, with one warning naming seccomp; heaptrace's exit status and
  the program's output are those of the run without heaptrace.
- heaptrace itself under seccomp cannot read any filter (PTRACE_SECCOMP_GET_FILTER: EACCES). A
  process it did not launch (-p) is one it must not touch: the conservative path. A program it
  launched that added no filter runs under heaptrace's own filters: heaptrace decides each call
  with a probe, a child of its own making the same call, and traces the program exactly (an
  allow-all filter) or leaves it untraced with one warning (a filter that kills or refuses
  anonymous executable mmaps: the probe dies or fails instead of the program)."""

import os
import select
import subprocess

from helpers import (HEAPTRACE, Fail, Run, Skip, TIMEOUT, check_sites, check_summary, heaptrace,
                     need_heaptrace, one_error_line, run, scratch, site_records, summary_record,
                     target, variants)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEAPTRACE_")}
    env.update(extra)
    return env


class Target:
    """seccomp ARGS started by the test, its "ready" line read; its stdin is a pipe."""

    def __init__(self, name, args, env=None):
        self.dir = scratch(name)
        self.p = subprocess.Popen([target("seccomp")] + list(args), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env or clean_env(), cwd=self.dir, bufsize=0,
                                  start_new_session=True)
        line = self.readline()
        if line != b"ready\n":
            self.kill()
            if self.p.returncode == 77:
                raise Skip("no seccomp filters here (or an arch seccomp.c does not know)")
            raise Fail("seccomp %s did not get ready (status %s, said %r)"
                       % (" ".join(args), self.p.returncode, line))
        self.pid = self.p.pid

    def readline(self):
        ready, _, _ = select.select([self.p.stdout], [], [], TIMEOUT)
        return self.p.stdout.readline() if ready else b""

    def say(self, text):
        self.p.stdin.write(text.encode())

    def finish(self, text=b""):
        try:
            out, err = self.p.communicate(text, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Fail("the target did not finish")
        return self.p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def maps(self):
        with open("/proc/%d/maps" % self.pid) as f:
            return f.read()

    def tracers(self):
        """{tid: TracerPid} of its threads that have a tracer."""
        out = {}
        for tid in os.listdir("/proc/%d/task" % self.pid):
            with open("/proc/%d/task/%s/status" % (self.pid, tid)) as f:
                for line in f:
                    if line.startswith("TracerPid:") and int(line.split()[1]):
                        out[int(tid)] = int(line.split()[1])
        return out

    def kill(self):
        if self.p.returncode is None:
            self.p.kill()
            self.p.communicate()


def refused_attach(t, wrap=False, words=("start the program under heaptrace",)):
    """heaptrace -p of t (run under the seccomp wrapper if wrap): exit 2, one line naming
    seccomp (and words), no tracer left, the same mappings as before."""
    need_heaptrace()
    before = t.maps()
    argv = [HEAPTRACE, "-p", str(t.pid), "--format=json",
            "--outfile=" + os.path.join(t.dir, "report")]
    if wrap:
        argv = [target("seccomp"), "wrap"] + argv
    p = run(argv)
    if p.timed_out:
        raise Fail("heaptrace -p did not finish", p.describe())
    if p.rc == 77 and wrap:
        raise Skip("cannot put heaptrace under seccomp here")
    one_error_line(p, 2, ["seccomp"])
    line = p.stderr.strip()
    for w in words:
        if w not in line:
            raise Fail("the error does not say %r: %r" % (w, line), p.describe())
    if t.tracers():
        raise Fail("threads still traced after heaptrace gave up: %s" % t.tracers(), p.describe())
    if t.maps() != before:
        raise Fail("the process's mappings changed: heaptrace injected something",
                   p.describe() + "\n--- before ---\n" + before + "\n--- after ---\n" + t.maps())
    return p


def test_strict_attach():
    """A process in seccomp strict mode (read, write, exit, rt_sigreturn only), blocked reading
    its stdin: heaptrace -p gives up without injecting anything; the process still answers,
    checks a block made before, and exits with its own status (4)."""
    t = Target("seccomp-strict", ["strict"])
    try:
        p = refused_attach(t, words=("strict", "start the program under heaptrace"))
        t.say("ping\n")
        line = t.readline()
        if line != b"pong\n":
            raise Fail("after heaptrace the strict-mode process answered %r, expected "
                       "'pong' (status %s)" % (line, t.p.poll()), p.describe())
        rc, out, err = t.finish(b"ping\nexit\n")
        if (rc, out, err) != (4, "pong\n", ""):
            raise Fail("the strict-mode process exited %s, said %r (stderr %r); expected 4 and "
                       "one more 'pong'" % (rc, out, err), p.describe())
    finally:
        t.kill()


REFUSED_RC = {5: "it was still traced", 6: "its heap or a block made before was damaged",
              -31: "killed by SIGSYS: a forbidden system call was made"}


@variants("kill-mmap", "kill-exec", "eperm-mmap")
def test_filter_attach_refused(flt):
    """A filter that kills the process on mmap (SECCOMP_RET_KILL_PROCESS), kills it on an mmap or
    mprotect with PROT_EXEC, or returns EPERM for mmap: heaptrace -p exits 2 with one line naming
    seccomp; the process runs on untraced, mallocs and checks its data, writes "alive" and exits
    with its own status (3)."""
    t = Target("seccomp-" + flt, ["refused", flt])
    try:
        p = refused_attach(t)
        rc, out, err = t.finish(b"go\n")
        if (rc, out, err) != (3, "alive\n", ""):
            raise Fail("after heaptrace the process exited %s%s, said %r (stderr %r); expected "
                       "3 and 'alive'" % (rc, " (%s)" % REFUSED_RC[rc] if rc in REFUSED_RC
                                          else "", out, err), p.describe())
    finally:
        t.kill()


TRACED_RC = {3: "its malloc/calloc/free entries were not restored after the detach",
             6: "its heap was damaged", 98: "it could not signal its tracer",
             99: "a checkpoint never came (breakpoints never seen, or no report/detach)",
             -31: "killed by SIGSYS: a forbidden system call was made"}


@variants("unrelated", "wx-kill", "kill-mprotect")
def test_filter_attach_traced(flt):
    """A filter that kills on ptrace and returns EPERM for acct ("unrelated"), one that kills
    on an mmap both writable and executable or an mprotect with PROT_EXEC (systemd's
    MemoryDenyWriteExecute: heaptrace's read+exec mmap and read+write mprotect pass), or one that
    kills on any mprotect (heaptrace then leaves out the mprotect of its ring: returns stop
    instead): heaptrace -p traces the process normally; the report is exact (3 x 48 and
    calloc(4, 10) live, one unknown free) and the process ends cleanly after the detach."""
    need_heaptrace()
    d = scratch("seccomp-traced-" + flt)
    outfile = os.path.join(d, "report")
    expectfile = os.path.join(d, "expect")
    t = Target("seccomp-traced-" + flt, ["traced", flt],
               env=clean_env(HEAPTRACE_EXPECT=expectfile, HEAPTRACE_OUTFILE=outfile))
    try:
        proc = run([HEAPTRACE, "-p", str(t.pid), "--format=json", "--outfile=" + outfile,
                    "--no-inventory"])
        rc, out, err = t.finish()
        r = Run(proc, outfile, expectfile, "json")
        if proc.timed_out:
            r.fail("heaptrace -p did not finish within %ss" % TIMEOUT)
        if proc.rc != 0:
            r.fail("heaptrace -p exited %s, expected 0" % proc.rc)
        if rc != 0:
            r.fail("the traced process exited %s: %s" % (rc, TRACED_RC.get(rc, "disturbed")))
        if len(r.reports) != 1:
            r.fail("%d reports, expected 1" % len(r.reports))
        check_sites(r, r.report, site_records(r))
        check_summary(r, r.report, summary_record(r),
                      keys=["alloc_calls", "free_calls", "unknown_frees", "live_blocks",
                            "live_bytes"])
    finally:
        t.kill()


@variants("anon-exec-kill", "anon-exec-eperm")
def test_launch_exec_under_filter(flt):
    """heaptrace -- seccomp exec FILTER: the program (traced) installs a filter that kills on, or
    refuses with EPERM, an anonymous mmap with PROT_EXEC (the dynamic linker's mmaps pass), then
    execs itself: the new image runs on untraced with one warning naming seccomp, and heaptrace
    exits with the status of the run without heaptrace (5), the program's output unchanged."""
    need_heaptrace()
    native = run([target("seccomp"), "exec", flt], env_replace=clean_env())
    if native.rc == 77:
        raise Skip("no seccomp filters here")
    if (native.rc, native.stdout) != (5, "after: untraced\n"):
        raise Fail("seccomp exec %s without heaptrace exited %s (harness)" % (flt, native.rc),
                   native.describe())
    r = heaptrace(target("seccomp"), ["exec", flt], env=None, name="seccomp-exec-" + flt)
    one_error_line(r.proc, native.rc, ["seccomp"])
    if "untraced" not in r.proc.stderr:
        r.fail("the warning does not say the program runs on untraced")
    if r.proc.stdout != native.stdout:
        r.fail("the program said %r under heaptrace, %r without" % (r.proc.stdout,
                                                                     native.stdout))


def test_unreadable_filters_attach():
    """heaptrace itself under seccomp (seccomp wrap heaptrace ...) cannot read the filters of a
    process (PTRACE_SECCOMP_GET_FILTER: EACCES), even one that forbids nothing heaptrace needs
    and has as many filters as heaptrace (one): a process heaptrace did not launch may have
    other ones, so -p exits 2 with one line saying it cannot read them (no probe), and the
    process runs on untouched."""
    t = Target("seccomp-unreadable", ["refused", "unrelated"])
    try:
        p = refused_attach(t, wrap=True, words=("cannot read", "start the program"))
        rc, out, err = t.finish(b"go\n")
        if (rc, out, err) != (3, "alive\n", ""):
            raise Fail("after heaptrace the process exited %s, said %r (stderr %r); expected 3 "
                       "and 'alive'" % (rc, out, err), p.describe())
    finally:
        t.kill()


def test_unreadable_filters_launch():
    """heaptrace under seccomp (an allow-all filter it cannot read) launching a program: the
    program inherits heaptrace's filter and adds none, so heaptrace probes its mmap, mprotect
    and rt_sigaction on a child of its own, all pass, and the program is traced with exact
    counts (3 x 48 and calloc(4, 10) live, 500 bytes freed), its output and status unchanged."""
    need_heaptrace()
    d = scratch("seccomp-unreadable-launch")
    outfile = os.path.join(d, "report")
    expectfile = os.path.join(d, "expect")
    p = run([target("seccomp"), "wrap", HEAPTRACE, "--format=json", "--outfile=" + outfile,
             "--", target("seccomp"), "launched"],
            env_replace=clean_env(HEAPTRACE_EXPECT=expectfile), cwd=d)
    if p.rc == 77:
        raise Skip("cannot put heaptrace under seccomp here")
    r = Run(p, outfile, expectfile, "json")
    if p.timed_out:
        r.fail("heaptrace did not finish within %ss" % TIMEOUT)
    if p.rc != 0:
        r.fail("heaptrace exited %s, expected 0%s" % (p.rc, " (the program ran untraced)"
                                                      if p.rc == 6 else ""))
    if p.stderr.strip():
        r.fail("heaptrace said something: %r" % p.stderr)
    if p.stdout != "launched: traced\n":
        r.fail("the program said %r, expected 'launched: traced'" % p.stdout)
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1" % len(r.reports))
    check_sites(r, r.report, site_records(r))
    check_summary(r, r.report, summary_record(r))


@variants("anon-exec-kill", "anon-exec-eperm")
def test_unreadable_filters_launch_refused(flt):
    """heaptrace under a filter it cannot read that kills (or refuses with EPERM) anonymous
    executable mmaps, launching a program: the program inherits it, heaptrace's probe of its
    read+exec scratch mmap dies of SIGSYS (or gets EPERM) instead of the program, which runs on
    untraced with one warning naming seccomp; heaptrace exits with the program's status (5), the
    program's output unchanged, and the probe left no core file behind."""
    need_heaptrace()
    d = scratch("seccomp-unreadable-refused-" + flt)
    p = run([target("seccomp"), "wrap-with", flt, HEAPTRACE, "--format=json",
             "--outfile=" + os.path.join(d, "report"), "--", target("seccomp"), "after"],
            env_replace=clean_env(), cwd=d)
    if p.rc == 77:
        raise Skip("cannot put heaptrace under seccomp here")
    if p.rc == -31:
        raise Fail("killed by SIGSYS: heaptrace or the program made a forbidden call",
                   p.describe())
    one_error_line(p, 5, ["seccomp"])
    for w in ("untraced", "probe"):
        if w not in p.stderr:
            raise Fail("the warning does not say %r" % w, p.describe())
    if p.stdout != "after: untraced\n":
        raise Fail("the program said %r, expected 'after: untraced'" % p.stdout, p.describe())
    cores = [f for f in os.listdir(d) if f.startswith("core")]
    if cores:
        raise Fail("the probe left core files: %s" % cores, p.describe())
