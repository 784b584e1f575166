# SPDX-License-Identifier: GPL-2.0-only
"""heaptrace never harms the program it traces, not even when heaptrace is killed or signalled.

The program is tests/targets/steady.c: busy's worker threads (malloc, realloc, calloc, free
without end, checking their data) that answer "ping" on their standard input with the fewest
and the most rounds any thread has made ("pong N M"), so the test sees every thread make
progress; "stop" ends
it with "steady: N threads stopped" and its own status. Every wait below is a handshake (a
breakpoint showing in the program's code, a signal taken by heaptrace, a thread traced or not,
a ping answered), with a time limit only to catch hangs.

- SIGKILL of heaptrace -p at five moments (breakpoints just placed, after tracing a while, in a
  SIGUSR1 report, while detaching after SIGINT, during the attach), 5 rounds each: the program
  lives, no thread of it is traced, every thread makes progress through every traced function,
  and it ends with its own output and status. Breakpoints stay in its code by design (a safety
  net in the program makes them harmless), so the code is not compared here.
- Every signal that ends heaptrace (HUP, PIPE, QUIT, TERM, INT, XCPU, XFSZ, ALRM, and USR1
  then TERM), 5 rounds each: heaptrace writes the report, detaches and exits 0; the program's
  code equals its files again, and the program runs on and ends as above.
- A thread stopped in a signal handler halfway through writing a record, the ring full behind
  it and another thread waiting for room, when SIGTERM ends heaptrace -p (tests/targets/stall.c,
  park), 5 rounds: the detach leaves that record's room alone, the program's code equals its
  files, and once let go the thread finishes its record and the program ends as its own.
- Launch mode: SIGKILL of heaptrace once the breakpoints show; and the program ignoring SIGHUP
  while its process group gets one (a terminal hangup), with and without heaptrace then killed:
  the program lives and exits with its own status and output (this test process adopts it as
  a child subreaper when heaptrace dies).
- heaptrace's stderr a pipe whose reader goes away after the first line (| head -1), with -v
  or a --format=json report there: heaptrace gets EPIPE and SIGPIPE, detaches cleanly, exits.
- A report bigger than a pipe's buffer to a pipe nobody reads for 3 s: meanwhile the program
  answers every ping within 100 ms and makes progress; then the report is complete JSON.
- Bursts of SIGUSR1 and SIGUSR2 at heaptrace's start-up (from the moment it has blocked them),
  20 rounds with -p and 20 launching tests/targets/leaks: heaptrace always starts, never hangs,
  exits 0, and the launched program's final report has its exact counts.
- Breakpoint mode, every call a stop of one of 4 threads: heaptrace serves them in turn, so the
  slowest thread keeps pace with the fastest.
"""

import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import time

import helpers
from helpers import (HEAPTRACE, Busy, Fail, Proc, Run, Skip, check_consistency, check_debug_info,
                     check_sites, check_summary, code_diffs, list_sum_errors, need_heaptrace,
                     pre_main, scratch, site_lines, site_records, sites, summary_record, target,
                     tracer_pids, variants)

THREADS = 4
ROUNDS = 5
HANG = 15  # seconds: any single wait; only to catch hangs
TRACED_ROUNDS = 200  # "some time traced": every thread makes this many rounds under heaptrace
LAUNCH_STATUS = 7  # what steady exits with in the launch tests


class Hang(Fail):
    """Something that takes milliseconds did not happen within HANG seconds: the rounds after
    it would hang the same way, rounds() stops."""


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def status_text(rc):
    if rc is None:
        return "still running"
    if rc < 0:
        why = {signal.SIGTRAP: " (a breakpoint hit untraced)"}.get(-rc, "")
        return "killed by %s%s" % (signal.Signals(-rc).name, why)
    return "exited %d%s" % (rc, " (a thread found its data damaged)" if rc == 3 else "")


def wait_status_text(status):
    if os.WIFEXITED(status):
        return status_text(os.WEXITSTATUS(status))
    if os.WIFSIGNALED(status):
        return status_text(-os.WTERMSIG(status))
    return "status 0x%x" % status


class Steady(Busy):
    """steady (see the module's doc) started by the test, or by heaptrace (prefix)."""

    def __init__(self, name, nthreads=THREADS, args=(), prefix=(), status=0):
        super().__init__(name, nthreads, prog="steady", args=args, prefix=prefix,
                         status=status)
        self.adopted = False  # launched by heaptrace, which died: this process reaps it
        self.gone_status = None  # its wait status, once this process reaped it (adopted)

    def gone(self, timeout=0):
        """Why the program does not answer: how it ended (waiting up to timeout seconds for
        that: its output closes a moment before it can be reaped)."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.adopted:
                rc = self.p.poll()
                if rc is not None:
                    return status_text(rc)
            elif self.gone_status is not None:
                return wait_status_text(self.gone_status)
            else:
                got, status = os.waitpid(self.pid, os.WNOHANG)
                if got:
                    self.gone_status = status
                    continue
            if time.monotonic() >= deadline:
                return "still running"
            time.sleep(0.001)

    def ping(self, timeout=HANG):
        """Ask for progress: (N, seconds until the answer)."""
        start = time.monotonic()
        try:
            os.write(self.p.stdin.fileno(), b"ping\n")
        except BrokenPipeError:
            raise Fail("steady is gone: %s" % self.gone(HANG))
        ready, _, _ = select.select([self.p.stdout], [], [], timeout)
        line = self.p.stdout.readline() if ready else None
        took = time.monotonic() - start
        if line is None:
            raise Hang("steady did not answer a ping within %d s (a thread left stopped?)"
                       % timeout)
        if not line:
            raise Fail("steady is gone: %s" % self.gone(HANG))
        if not line.startswith(b"pong ") or not line.endswith(b"\n") or len(line.split()) != 3:
            raise Fail("steady answered %r to a ping (%s)" % (line, self.gone(HANG)))
        self.most = int(line.split()[2])
        return int(line.split()[1]), took

    def progress(self, more=2):
        """Ping until every thread has made MORE rounds since the first answer."""
        first, _ = self.ping()
        deadline = time.monotonic() + HANG
        while True:
            n, _ = self.ping()
            if n >= first + more:
                return
            if time.monotonic() > deadline:
                raise Fail("a thread of steady made no progress in %d s (%d rounds, then %d)"
                           % (HANG, first, n))
            time.sleep(0.001)


def start(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=None, cwd=None):
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                            env=env, cwd=cwd, start_new_session=True, preexec_fn=no_core)


def text(b):
    return b.decode("utf-8", "replace") if b is not None else ""


def finish(ht, argv, after):
    """Wait for heaptrace to exit by itself (a limit to catch hangs); return its Proc."""
    try:
        out, err = ht.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(ht.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = ht.communicate()
        proc = Proc([str(a) for a in argv], ht.returncode, text(out), text(err), True)
        raise Hang("heaptrace did not exit within %d s after %s" % (HANG, after),
                   proc.describe())
    return Proc([str(a) for a in argv], ht.returncode, text(out), text(err))


def stop_heaptrace(ht):
    """Clean up after a failed round: heaptrace killed (its whole session), reaped."""
    if ht.poll() is None:
        try:
            os.killpg(ht.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    ht.communicate()


def poll_until(cond, what, ht=None, pause=0.001):
    """Poll cond() until true; fail if heaptrace (ht) exits first or after HANG seconds."""
    deadline = time.monotonic() + HANG
    while True:
        got = cond()
        if got:
            return got
        if ht is not None and ht.poll() is not None:
            raise Fail("heaptrace %s before %s" % (status_text(ht.returncode), what))
        if time.monotonic() > deadline:
            raise Hang("%s did not happen within %d s" % (what, HANG))
        time.sleep(pause)


def wait_breakpoints(t, ht):
    """Until a breakpoint shows in the program's code (as sigint_session polls)."""
    def placed():
        try:
            return bool(code_diffs(t.pid)[1])
        except FileNotFoundError:
            raise Fail("steady is gone before the breakpoints showed: %s" % t.gone())
    poll_until(placed, "a breakpoint showed in the program's code", ht)


def pending(pid, sig):
    """Whether sig is pending for process pid (shared or for its main thread)."""
    mask = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("ShdPnd:", "SigPnd:")):
                mask |= int(line.split()[1], 16)
    return bool(mask & (1 << (sig - 1)))


def wait_taken(ht, sig):
    """Until heaptrace has taken sig off its pending signals (it blocks them and takes them
    with sigwaitinfo): what it does on that signal is then under way (or done, if it exited)."""
    try:
        poll_until(lambda: not pending(ht.pid, sig), "heaptrace took %s" % sig.name, ht,
                   pause=0.0001)
    except (Fail, FileNotFoundError):
        if ht.poll() is None:
            raise


def check_runs_on(t, proc, clean_code, after):
    """The program lives, no thread of it is traced, (clean_code: every executable file
    mapping equals its file), every thread makes progress, and it ends with its own output and
    status."""
    details = proc.describe()
    if t.p.poll() is not None:
        _, err = t.p.communicate()
        raise Fail("steady did not survive %s: %s" % (after, t.gone()), details
                   + "\n--- steady's stderr ---\n" + text(err))
    traced = {tid: tp for tid, tp in tracer_pids(t.pid).items() if tp}
    if traced:
        raise Fail("threads of steady still traced after %s: %s" % (after, traced), details)
    if clean_code:
        checked, diffs = code_diffs(t.pid)
        if diffs:
            raise Fail("code differs from the files after %s: %s" % (after, "; ".join(diffs)),
                       details)
        if checked < 3:
            raise Fail("only %d executable file mappings to compare" % checked, details)
    try:
        t.progress()
        t.expect_clean_end()
    except Fail as e:
        if t.p.poll() is not None and not t.p.stderr.closed:
            details += "\n--- steady's stderr ---\n" + text(t.p.stderr.read())
        raise Fail("after %s: %s" % (after, e.reason), e.details + "\n" + details)


def rounds(n, one_round, max_failures=None):
    """Run one_round(i) for i in range(n), every round even when one fails (up to max_failures
    of them); fail with them all."""
    failed = []
    ran = 0
    for i in range(n):
        if max_failures and len(failed) >= max_failures:
            break
        ran += 1
        try:
            one_round(i)
        except Fail as e:
            failed.append((i, e))
            if isinstance(e, Hang):
                break
    if failed:
        i, e = failed[0]
        raise Fail("%d of %d rounds failed%s; round %d: %s"
                   % (len(failed), ran, "" if ran == n else " (%d not run)" % (n - ran), i,
                      e.reason),
                   "\n\n".join("=== round %d: %s\n%s" % (i, e.reason, e.details)
                               for i, e in failed))


def attach_argv(t, outfile, opts=()):
    return [HEAPTRACE, "-p", str(t.pid), "--format=json", "--outfile=" + outfile] + list(opts)


# ---------------------------------------------------------------------------------------------
# 1. SIGKILL of heaptrace -p at several moments


def kill_at_breakpoints(t, ht, i):
    wait_breakpoints(t, ht)
    return "SIGKILL once its breakpoints showed"


def kill_after_tracing(t, ht, i):
    wait_breakpoints(t, ht)
    t.progress(TRACED_ROUNDS)
    return "SIGKILL after %d rounds of every thread traced" % TRACED_ROUNDS


def kill_in_report(t, ht, i):
    wait_breakpoints(t, ht)
    os.kill(ht.pid, signal.SIGUSR1)
    if i % 2:  # odd rounds: once heaptrace took the signal, so in the report
        wait_taken(ht, signal.SIGUSR1)
        return "SIGKILL once heaptrace took SIGUSR1 (in the report)"
    return "SIGKILL right after SIGUSR1"


def kill_detaching(t, ht, i):
    wait_breakpoints(t, ht)
    os.kill(ht.pid, signal.SIGINT)
    if i % 2:  # odd rounds: once heaptrace took the signal, so in the detach
        wait_taken(ht, signal.SIGINT)
        return "SIGKILL once heaptrace took SIGINT (detaching)"
    return "SIGKILL right after SIGINT"


def kill_attaching(t, ht, i):
    if i % 2:  # odd rounds: as soon as a thread shows heaptrace as its tracer
        poll_until(lambda: ht.pid in tracer_pids(t.pid).values(),
                   "a thread of steady traced by heaptrace", ht, pause=0.0001)
        return "SIGKILL once heaptrace seized a thread"
    return "SIGKILL right after heaptrace started"


MOMENTS = {"breakpoints": kill_at_breakpoints, "traced": kill_after_tracing,
           "report": kill_in_report, "detaching": kill_detaching,
           "attaching": kill_attaching}


@variants(*MOMENTS)
def test_sigkill_attached(moment):
    """SIGKILL of heaptrace -p (4 threads churning) at one moment of the session, 5 rounds:
    the program survives every one (alive, untraced, progress, its own output and status)."""
    need_heaptrace()

    def one_round(i):
        t = Steady("kill-%s-%d" % (moment, i))
        try:
            argv = attach_argv(t, os.path.join(t.dir, "report"))
            ht = start(argv)
            try:
                what = MOMENTS[moment](t, ht, i)
                os.kill(ht.pid, signal.SIGKILL)
            except BaseException:
                stop_heaptrace(ht)
                raise
            proc = finish(ht, argv, "its " + what)
            ok = (-signal.SIGKILL, 0) if moment == "detaching" else (-signal.SIGKILL,)
            if proc.rc not in ok:
                raise Fail("heaptrace %s, expected killed by SIGKILL" % status_text(proc.rc),
                           proc.describe())
            check_runs_on(t, proc, clean_code=False, after="heaptrace's " + what)
        finally:
            t.kill()

    rounds(ROUNDS, one_round)


# The worst moments, made certain: heaptrace kills itself inside the system calls it makes the
# program run (HEAPTRACE_TEST_DIE_INJECTING=N: at the syscall-entry stop of the N-th one), with
# that thread's registers and signal mask set for heaptrace's call. On x86_64 every one goes
# through a stub that puts them back: 1 the mmap of heaptrace's pages (its stub in padding after
# the C library's code), 2 the mprotect of the ring page, 3 the rt_sigaction of the guard.
INJECTIONS = {"mmap": 1, "mprotect": 2, "sigaction": 3}


@variants(*INJECTIONS)
def test_sigkill_injecting(call):
    """heaptrace -p dies with SIGKILL in the middle of the call it injects (5 rounds): the thread
    that was making it goes on where it was, every thread of the program makes progress and the
    program ends with its own output and status."""
    need_heaptrace()

    def one_round(i):
        t = Steady("inject-%s-%d" % (call, i))
        try:
            argv = attach_argv(t, os.path.join(t.dir, "report"))
            env = dict(os.environ, HEAPTRACE_TEST_DIE_INJECTING=str(INJECTIONS[call]))
            proc = finish(start(argv, env=env), argv, "its death in the %s it injected" % call)
            if proc.rc != -signal.SIGKILL:
                raise Fail("heaptrace %s, expected to kill itself in the %s it injects"
                           % (status_text(proc.rc), call), proc.describe())
            check_runs_on(t, proc, clean_code=False, after="heaptrace's death in the " + call)
        finally:
            t.kill()

    rounds(ROUNDS, one_round)


# ---------------------------------------------------------------------------------------------
# 2. Signals that end heaptrace -p: a clean detach

SIGNALS = ["HUP", "PIPE", "QUIT", "TERM", "INT", "XCPU", "XFSZ", "ALRM", "USR1-TERM"]


def check_reports(r, pid, n):
    """n JSON reports of the detached process pid (the last the final one), each consistent."""
    if len(r.reports) != n:
        r.fail("%d reports, expected %d" % (len(r.reports), n))
    for rep in r.reports:
        if rep.get("pid") != pid or rep.get("exit_status") is not None:
            r.fail("a report has pid %r, exit_status %r; expected %d and null"
                   % (rep.get("pid"), rep.get("exit_status"), pid))
        errors = list_sum_errors(rep["summary"], sites(rep))
        if errors:
            r.fail(errors[0])


@variants(*SIGNALS)
def test_signal_detaches(name):
    """SIGNAL sent to heaptrace -p once its breakpoints show, 5 rounds: heaptrace writes the
    report (a second one first for USR1-TERM), removes its breakpoints, detaches and exits 0;
    the program's code equals its files, and it runs on and ends with its own output."""
    need_heaptrace()
    sigs = [signal.Signals["SIG" + s] for s in name.split("-")]
    sent = " then ".join(sig.name for sig in sigs)

    def one_round(i):
        t = Steady("sig-%s-%d" % (name, i))
        try:
            outfile = os.path.join(t.dir, "report")
            argv = attach_argv(t, outfile)
            ht = start(argv)
            try:
                wait_breakpoints(t, ht)
                for s in sigs:
                    os.kill(ht.pid, s)
            except BaseException:
                stop_heaptrace(ht)
                raise
            proc = finish(ht, argv, sent)
            r = Run(proc, outfile, "", "json")
            if proc.rc != 0:
                r.fail("heaptrace %s after %s, expected exit 0" % (status_text(proc.rc), sent))
            check_reports(r, t.pid, len(sigs))
            check_runs_on(t, proc, clean_code=True, after=sent + " to heaptrace")
        finally:
            t.kill()

    rounds(ROUNDS, one_round)


def ring_control_page(pid):
    """The range of the control page of heaptrace's ring in process pid (the memfd's mapping
    at file offset 0, src/patch/stubs.c: map_ring), or None before it is mapped."""
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) > 5 and fields[5].startswith("/memfd:heaptrace-ring") and \
                    int(fields[2], 16) == 0:
                lo = int(fields[0].split("-")[0], 16)
                return lo, lo + 4096
    return None


def ring_waiters(pid):
    """Threads of pid in a system call on an address in the ring's control page: stubs that
    wait for room (a futex on the tail) or wake heaptrace's reader."""
    ctl = ring_control_page(pid)
    waiting = []
    for tid in os.listdir("/proc/%d/task" % pid) if ctl else ():
        try:
            with open("/proc/%d/task/%s/syscall" % (pid, tid)) as f:
                fields = f.read().split()
        except OSError:
            continue  # the thread ended
        if len(fields) > 1 and fields[0] != "running" and ctl[0] <= int(fields[1], 16) < ctl[1]:
            waiting.append(int(tid))
    return waiting


PARK_TRIES = 50  # parks of stall's thread until one is halfway through a record


def parked_mid_record(prog, pid, ht):
    """Let stall (tests/targets/stall.c, park) park its thread in a stub until the ring fills
    behind it: the thread is halfway through a record (the reader stops there) and another
    waits for room. True once so; False after PARK_TRIES parks."""
    for _ in range(PARK_TRIES):
        if not select.select([prog.stdout], [], [], HANG)[0]:
            raise Hang("stall park did not park its thread within %d s" % HANG)
        line = prog.stdout.readline()
        if line == b"" and prog.wait() == 77:
            raise Skip("stall park reads the interrupted pc on x86_64 only")
        if line != b"parked\n":
            raise Fail("stall park printed %r, expected 'parked'" % line)
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            if ht.poll() is not None:
                raise Fail("heaptrace %s while stall was parked" % status_text(ht.returncode))
            if ring_waiters(pid):
                return True
            time.sleep(0.001)
        prog.stdin.write(b"again\n")
        prog.stdin.flush()
    return False


def test_detach_mid_record():
    """stall park: one thread stopped in a signal handler halfway through a record, the ring
    full behind it, another thread waiting for room, when SIGTERM ends heaptrace -p; 5 rounds.
    The detach must not give the room of that record to the waiting thread, and the stub must
    not take its record's length back from the ring: once let go, the parked thread finishes
    its record and the program ends with its own output, exit 0."""
    need_heaptrace()
    if helpers.MODE != "stubs":
        raise Skip("entry stubs only (--mode=stubs)")

    def one_round(i):
        d = scratch("detach-mid-record-%d" % i)
        prog = subprocess.Popen([target("stall"), "park", "100"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=d,
                                start_new_session=True, preexec_fn=no_core)
        try:
            outfile = os.path.join(d, "report")
            argv = [HEAPTRACE, "-p", str(prog.pid), "--format=json", "--outfile=" + outfile]
            ht = start(argv)
            try:
                if not parked_mid_record(prog, prog.pid, ht):
                    raise Fail("in %d parks, stall's thread never held a record the ring "
                               "filled behind" % PARK_TRIES)
                os.kill(ht.pid, signal.SIGTERM)
            except BaseException:
                stop_heaptrace(ht)
                raise
            proc = finish(ht, argv, "SIGTERM")
            if proc.rc != 0:
                raise Fail("heaptrace %s after SIGTERM, expected exit 0" % status_text(proc.rc),
                           proc.describe())
            checked, diffs = code_diffs(prog.pid)
            if diffs or checked < 3:
                raise Fail("after the detach, %d executable file mappings compared, differing: "
                           "%s" % (checked, "; ".join(diffs) or "none"), proc.describe())
            try:
                out, err = prog.communicate(b"go\n", timeout=HANG)
            except subprocess.TimeoutExpired:
                raise Hang("stall park did not end within %d s of 'go'" % HANG, proc.describe())
            if prog.returncode != 0 or not out.startswith(b"stall park: "):
                raise Fail("after the detach, stall park %s and printed %r"
                           % (status_text(prog.returncode), out),
                           proc.describe() + "\n--- stall's stderr ---\n" + text(err))
        finally:
            if prog.poll() is None:
                prog.kill()
                prog.wait()

    rounds(ROUNDS, one_round)


# ---------------------------------------------------------------------------------------------
# 3. Launch mode: heaptrace dies, the program it launched lives

PR_SET_CHILD_SUBREAPER = 36


def set_subreaper(on):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(1 if on else 0), ctypes.c_ulong(0),
                  ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        raise Fail("prctl(PR_SET_CHILD_SUBREAPER): %s" % os.strerror(ctypes.get_errno()))


def launch(name, outfile, args):
    """steady (2 threads, exit status LAUNCH_STATUS) launched by heaptrace."""
    return Steady(name, 2, args=list(args) + ["-x", str(LAUNCH_STATUS)], status=LAUNCH_STATUS,
                  prefix=[HEAPTRACE, "--format=json", "--outfile=" + outfile, "--"])


def adopted_runs_on(t, after):
    """heaptrace is dead; the program, adopted by this process, lives, is untraced, has its CPU
    mask back, makes progress, prints its own line and exits with its own status."""
    t.adopted = True
    if t.gone() != "still running":
        raise Fail("the launched program did not survive %s: %s" % (after, t.gone()))
    traced = {tid: tp for tid, tp in tracer_pids(t.pid).items() if tp}
    if traced:
        raise Fail("threads of the program still traced after %s: %s" % (after, traced))
    mask, ours = os.sched_getaffinity(t.pid), os.sched_getaffinity(0)
    if mask != ours:
        raise Fail("the program's CPU mask is %s after %s, expected %s"
                   % (sorted(mask), after, sorted(ours)))
    try:
        t.progress()
    except Fail as e:
        raise Fail("after %s: %s" % (after, e.reason))
    os.write(t.p.stdin.fileno(), b"stop\n")
    t.p.stdin.close()
    out = b""
    while select.select([t.p.stdout], [], [], HANG)[0]:  # until the program's end closes it
        chunk = os.read(t.p.stdout.fileno(), 4096)
        if not chunk:
            break
        out += chunk
    how = t.gone(HANG)
    want = "steady: 2 threads stopped\n"
    if how != status_text(LAUNCH_STATUS) or text(out) != want:
        raise Fail("after %s, the launched program %s and printed %r, expected exit %d and %r"
                   % (after, how, text(out), LAUNCH_STATUS, want))


def reap_launched(t):
    """Clean up: heaptrace and the program (this process's child once heaptrace is gone)."""
    if t.p.poll() is None:
        t.kill()  # heaptrace and the program: one session
    elif t.gone_status is None:
        try:
            os.kill(t.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if t.gone_status is None:
        try:
            os.waitpid(t.pid, 0)
        except ChildProcessError:
            pass  # reaped by heaptrace
    for f in (t.p.stdin, t.p.stdout, t.p.stderr):
        if f is not None and not f.closed:
            f.close()


@variants("sigkill", "hup", "hup-sigkill")
def test_launched_survives(mode):
    """heaptrace runs steady (2 threads); once its breakpoints show (they are before main):
    sigkill (5 rounds): SIGKILL of heaptrace; hup (2 rounds): steady ignores SIGHUP (-H) and its
    process group, heaptrace included, gets SIGHUP (a terminal hangup; PTRACE_O_EXITKILL used to
    kill steady then): heaptrace detaches, the code is clean again, and heaptrace exits with
    steady's status once steady ends; hup-sigkill (2 rounds): the same SIGHUP, then SIGKILL of
    heaptrace at once. The program lives, untraced, with its own CPU mask, makes progress and
    exits with its own output and status, read through pipes the test holds."""
    need_heaptrace()
    set_subreaper(True)

    def one_round(i):
        d = scratch("launch-%s-%d" % (mode, i))
        outfile = os.path.join(d, "report")
        t = launch("launched-%s-%d" % (mode, i), outfile, ["-H"] if "hup" in mode else [])
        try:
            wait_breakpoints(t, t.p)
            if "hup" in mode:
                os.killpg(t.p.pid, signal.SIGHUP)
            if "sigkill" in mode:
                os.kill(t.p.pid, signal.SIGKILL)
                try:
                    rc = t.p.wait(HANG)
                except subprocess.TimeoutExpired:
                    raise Fail("heaptrace did not die of SIGKILL")
                if rc != -signal.SIGKILL:
                    raise Fail("heaptrace %s, expected killed by SIGKILL" % status_text(rc))
                adopted_runs_on(t, "heaptrace's SIGKILL")
                return
            # hup: heaptrace detaches and waits for the program
            poll_until(lambda: not any(tracer_pids(t.pid).values()),
                       "heaptrace detached after SIGHUP", t.p)
            checked, diffs = code_diffs(t.pid)
            if diffs or checked < 3:
                raise Fail("after SIGHUP: %d mappings compared, code differs: %s"
                           % (checked, "; ".join(diffs)))
            t.progress()
            rc, out, err = t.stop()
            proc = Proc([str(a) for a in t.p.args], rc, out, err)
            r = Run(proc, outfile, "", "json")
            want = "steady: 2 threads stopped\n"
            if rc != LAUNCH_STATUS or out != want:
                r.fail("after SIGHUP, heaptrace %s and the program printed %r; expected exit %d "
                       "(the program's) and %r" % (status_text(rc), out, LAUNCH_STATUS, want))
            if len(r.reports) != 1 or r.report.get("pid") != t.pid:
                r.fail("%d reports (expected 1, the final one of process %d)"
                       % (len(r.reports), t.pid))
        finally:
            reap_launched(t)

    try:
        rounds(ROUNDS if mode == "sigkill" else 2, one_round)
    finally:
        set_subreaper(False)


# ---------------------------------------------------------------------------------------------
# 4. heaptrace -p PID 2>&1 | head -1


@variants("verbose", "json")
def test_stderr_reader_gone(mode):
    """heaptrace's stdout and stderr are one pipe whose reader closes after the first line.
    verbose: -v, report to a file; the first line is the diagnostic of a SIGUSR1 report, the
    second SIGUSR1's diagnostic then meets the closed pipe; heaptrace must detach and exit 0
    (its report still written). json: --format=json --interval=0.1 to stderr; the first line
    is a whole periodic report, the next one meets the closed pipe; heaptrace must detach and
    exit (any status: its final report cannot be written). Either way by itself, on the
    EPIPE/SIGPIPE, with no other signal; the program's code is clean and it runs on."""
    need_heaptrace()
    t = Steady("stderr-gone-" + mode)
    rfd = wfd = None
    try:
        outfile = os.path.join(t.dir, "report")
        if mode == "verbose":
            argv = attach_argv(t, outfile, ["-v"])
        else:
            argv = [HEAPTRACE, "-p", str(t.pid), "--format=json", "--interval=0.1"]
        rfd, wfd = os.pipe()
        ht = start(argv, stdout=wfd, stderr=wfd)
        os.close(wfd)
        wfd = None
        try:
            wait_breakpoints(t, ht)
            if mode == "verbose":
                os.kill(ht.pid, signal.SIGUSR1)
            first = b""
            deadline = time.monotonic() + HANG
            while not first.endswith(b"\n"):  # head -1: byte by byte up to the newline
                if not select.select([rfd], [], [], max(0, deadline - time.monotonic()))[0]:
                    raise Fail("heaptrace wrote no line within %d s" % HANG)
                c = os.read(rfd, 1)
                if not c:
                    raise Fail("heaptrace closed its stderr after %r" % first)
                first += c
            os.close(rfd)
            rfd = None
            if mode == "verbose":
                if not first.startswith(b"heaptrace: "):
                    raise Fail("the first line is %r, expected a diagnostic" % first[:200])
                os.kill(ht.pid, signal.SIGUSR1)  # its diagnostic meets the closed pipe
            else:
                try:
                    json.loads(first)
                except ValueError as e:
                    raise Fail("the first line is not a whole JSON report: %s" % e)
        except BaseException:
            stop_heaptrace(ht)
            raise
        proc = finish(ht, argv, "its stderr reader went away")
        if mode == "verbose":
            r = Run(proc, outfile, "", "json")
            if proc.rc != 0:
                r.fail("heaptrace %s, expected exit 0 (its report went to a file)"
                       % status_text(proc.rc))
            rep = r.report
            if rep.get("pid") != t.pid or rep.get("exit_status") is not None:
                r.fail("the final report has pid %r, exit_status %r"
                       % (rep.get("pid"), rep.get("exit_status")))
        elif proc.rc is None or proc.rc < 0:
            raise Fail("heaptrace %s, expected it to exit" % status_text(proc.rc),
                       proc.describe())
        check_runs_on(t, proc, clean_code=True, after="EPIPE on heaptrace's stderr")
    finally:
        for fd in (rfd, wfd):
            if fd is not None:
                os.close(fd)
        t.kill()


# ---------------------------------------------------------------------------------------------
# 5. A big report to a pipe nobody reads for a while

PATHS = 512  # steady -l: backtraces of 11 frames (--depth=11 tells them apart)
UNREAD_S = 3.0
PING_EVERY = 0.05
# Every ping answered within PING_LIMIT but PING_LATE_MAX of them, and those within PING_HARD:
# the 2 CPUs are shared with other jobs (pings took 174 ms under a load of 8, 642 and 887 ms with
# the cross-architecture lab's qemu beside), while a stopped program answers none (Hang).
PING_LIMIT = 0.1
PING_LATE_MAX = 6
PING_HARD = 2.0
PROGRESS_WINDOW = 1.0  # every thread makes a round in any such stretch (2 shared CPUs)


def test_report_to_unread_pipe():
    """heaptrace -p --duration=0.3 --format=json --depth=11 on steady with 512 live call paths,
    the report on stderr, a pipe the test does not read: the report is bigger than the pipe's
    buffer (64 KiB), so heaptrace blocks writing it. Once heaptrace has seized steady and let it
    go again (--duration), for 3 s more: heaptrace still runs (blocked), steady answers every
    ping (every 50 ms) within 100 ms (6 may take up to 2 s) and every thread makes progress
    in every second (2 CPUs shared with other jobs: a thread may wait its turn for a good part
    of a second). Then the
    pipe holds one whole JSON report, over 64 KiB, and heaptrace exits 0; the program's code is
    clean and it runs on."""
    need_heaptrace()
    t = Steady("unread-pipe", args=["-l", str(PATHS)])
    ht = None
    try:
        argv = [HEAPTRACE, "-p", str(t.pid), "--duration=0.3", "--format=json", "--depth=11"]
        ht = start(argv)
        poll_until(lambda: ht.pid in tracer_pids(t.pid).values(), "heaptrace seized steady", ht)
        poll_until(lambda: not any(tracer_pids(t.pid).values()),
                   "heaptrace let steady go (--duration=0.3)", ht)
        pongs = []
        begin = time.monotonic()
        while time.monotonic() - begin < UNREAD_S:
            n, took = t.ping()
            pongs.append((time.monotonic() - begin, n, took))
            time.sleep(max(0, PING_EVERY - took))
        blocked = ht.poll() is None
        proc = finish(ht, argv, "its report was read")
        ht = None
        errors = []
        slow = [(round(at, 3), round(took, 3)) for at, _, took in pongs if took > PING_LIMIT]
        if len(slow) > PING_LATE_MAX or any(took > PING_HARD for _, took in slow):
            errors.append("%d of %d pings answered later than %d ms: (at s, took s) %s"
                          % (len(slow), len(pongs), PING_LIMIT * 1000, slow[:10]))
        stuck = []
        for at, n, _ in pongs:
            before = [(a, m) for a, m, _ in pongs if a <= at - PROGRESS_WINDOW]
            if before and before[-1][1] >= n:
                stuck.append((round(before[-1][0], 3), round(at, 3), n))
        if stuck:
            errors.append("some thread made no progress in %d windows of %d ms: (from s, to s, "
                          "rounds) %s" % (len(stuck), PROGRESS_WINDOW * 1000, stuck[:10]))
        if not blocked:
            errors.append("heaptrace (%s) had finished before the pipe was read: the report "
                          "fitted in the pipe?" % status_text(proc.rc))
        if proc.rc != 0:
            errors.append("heaptrace %s, expected exit 0" % status_text(proc.rc))
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        reps = [line for line in lines if line.startswith("{")]
        if len(reps) != 1:
            errors.append("%d JSON lines on stderr, expected 1 report" % len(reps))
        elif len(reps[0]) <= 65536:
            errors.append("the report is %d bytes, not over a pipe's 64 KiB" % len(reps[0]))
        else:
            try:
                rep = json.loads(reps[0])
                if rep.get("pid") != t.pid:
                    errors.append("the report's pid is %r" % rep.get("pid"))
            except ValueError as e:
                errors.append("the report is not whole JSON: %s" % e)
        if errors:
            raise Fail(errors[0] + ("" if len(errors) == 1 else " (and %d more)"
                                    % (len(errors) - 1)),
                       "\n".join(errors) + "\npongs (at s, rounds, took s): %s\n%s"
                       % ([(round(a, 3), n, round(k, 4)) for a, n, k in pongs],
                          proc.describe()))
        check_runs_on(t, proc, clean_code=True, after="the report was read")
    finally:
        if ht is not None:
            stop_heaptrace(ht)
        t.kill()


# ---------------------------------------------------------------------------------------------
# 6. SIGUSR1/SIGUSR2 bursts at heaptrace's start-up

BURST_ROUNDS = 20
BURST = 50


def blocked_mask(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("SigBlk:"):
                return int(line.split()[1], 16)
    return 0


def burst(ht):
    """50 SIGUSR1 and 5 SIGUSR2 in a tight loop, from the moment heaptrace has blocked them.
    A signal that comes before a program's first instruction (while the dynamic linker loads
    heaptrace's libraries) takes its default action, whatever the program: so the burst starts
    as soon as /proc shows them blocked in heaptrace (polled without a pause), i.e. at the
    earliest moment heaptrace can answer for."""
    want = (1 << (signal.SIGUSR1 - 1)) | (1 << (signal.SIGUSR2 - 1))
    deadline = time.monotonic() + HANG
    while True:
        try:
            if blocked_mask(ht.pid) & want == want:
                break
        except FileNotFoundError:
            pass
        if ht.poll() is not None:
            raise Fail("heaptrace %s before it blocked SIGUSR1 and SIGUSR2"
                       % status_text(ht.returncode))
        if time.monotonic() > deadline:
            raise Hang("heaptrace did not block SIGUSR1 and SIGUSR2 within %d s" % HANG)
    try:
        for k in range(BURST):
            os.kill(ht.pid, signal.SIGUSR1)
            if k % 10 == 9:
                os.kill(ht.pid, signal.SIGUSR2)
    except ProcessLookupError:
        pass  # heaptrace already gone: its status says why


def test_usr1_burst_attach():
    """20 rounds of heaptrace -p --duration=0.5 sent 50 SIGUSR1 and 5 SIGUSR2 during its
    start-up (see burst): it starts, exits 0, every report line is whole JSON, the last the
    final report of the process; the program is untraced, its code clean, and it runs on and
    ends normally."""
    need_heaptrace()

    def one_round(i):
        t = Steady("burst-attach-%d" % i)
        try:
            outfile = os.path.join(t.dir, "report")
            argv = attach_argv(t, outfile, ["--duration=0.5"])
            ht = start(argv)
            try:
                burst(ht)
            except BaseException:
                stop_heaptrace(ht)
                raise
            proc = finish(ht, argv, "a burst of SIGUSR1")
            r = Run(proc, outfile, "", "json")
            if proc.rc != 0:
                r.fail("heaptrace %s, expected exit 0" % status_text(proc.rc))
            rep = r.report
            if rep.get("pid") != t.pid or rep.get("exit_status") is not None:
                r.fail("the final report has pid %r, exit_status %r"
                       % (rep.get("pid"), rep.get("exit_status")))
            check_runs_on(t, proc, clean_code=True, after="heaptrace's session")
        finally:
            t.kill()

    rounds(BURST_ROUNDS, one_round, max_failures=5)


def test_usr1_burst_launch():
    """20 rounds of heaptrace -- leaks sent 50 SIGUSR1 and 5 SIGUSR2 during its start-up (see
    burst): it starts, exits with leaks' status 0, and the final report has exactly the counts
    of a quiet run (the live sites with file:line, the summary, nothing else live)."""
    need_heaptrace()
    prog = target("leaks")
    lines = site_lines("leaks")

    def one_round(i):
        d = scratch("burst-launch-%d" % i)
        outfile = os.path.join(d, "report")
        expectfile = os.path.join(d, "expect")
        argv = [HEAPTRACE, "--format=json", "--outfile=" + outfile, "--", prog]
        env = dict(os.environ, HEAPTRACE_EXPECT=expectfile, HEAPTRACE_OUTFILE=outfile)
        ht = start(argv, env=env, cwd=d)
        try:
            burst(ht)
        except BaseException:
            stop_heaptrace(ht)
            raise
        proc = finish(ht, argv, "a burst of SIGUSR1")
        r = Run(proc, outfile, expectfile, "json")
        if proc.rc != 0:
            r.fail("heaptrace %s, expected exit 0 (leaks' status)" % status_text(proc.rc))
        rep = r.report
        if rep.get("exit_status") != 0:
            r.fail("the last report's exit_status is %r, expected 0" % rep.get("exit_status"))
        check_consistency(r, rep)
        want = summary_record(r)
        check_sites(r, rep, site_records(r), lines=lines)
        check_summary(r, rep, want)
        extra = pre_main(rep)
        if extra:
            r.fail("live blocks that do not reach main: %s" % extra)
        check_debug_info(r, rep, prog)

    rounds(BURST_ROUNDS, one_round, max_failures=5)


# ---------------------------------------------------------------------------------------------
# 7. Every thread gets its turn

FAIR_SETTLE_S = 1.0
FAIR_S = 2.0
FAIR_RATIO = 0.5  # about 1 when served in turn; 0.003 to 0.2 served in the kernel's order


def test_threads_served_in_turn():
    """heaptrace -p --mode=breakpoint on steady (4 threads, every malloc-family call a stop):
    over 2 s traced (from 1 s after the attach), the thread that made the fewest rounds made at
    least half as many as the one that made the most. A tracer that takes stops in the order
    the kernel's wait lists them serves the first threads of that list again and again: the
    last one made 0.3 % to 20 % as many then."""
    need_heaptrace()
    if helpers.MODE != "breakpoint":
        raise Skip("breakpoint mode only (--mode=breakpoint): a stop per call")
    t = Steady("in-turn")
    ht = None
    try:
        argv = attach_argv(t, os.path.join(t.dir, "report"))
        ht = start(argv)
        wait_breakpoints(t, ht)
        t.progress()
        time.sleep(FAIR_SETTLE_S)  # past the start, while heaptrace still reads symbols
        least0, _ = t.ping()
        most0 = t.most
        time.sleep(FAIR_S)
        least1, _ = t.ping()
        most1 = t.most
        os.kill(ht.pid, signal.SIGINT)
        proc = finish(ht, argv, "SIGINT")
        ht = None
        slow, fast = least1 - least0, most1 - most0
        if fast <= 0 or slow < FAIR_RATIO * fast:
            raise Fail("in %.1f s traced the slowest thread of steady made %d rounds, the "
                       "fastest %d: a thread waits while others are served" % (FAIR_S, slow, fast),
                       proc.describe())
        check_runs_on(t, proc, clean_code=True, after="the detach")
    finally:
        if ht is not None:
            stop_heaptrace(ht)
        t.kill()
