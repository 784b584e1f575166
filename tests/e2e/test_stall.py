# SPDX-License-Identifier: GPL-2.0-only
"""A traced call never waits long for heaptrace (tests/targets/stall.c). An entry stub that finds
its ring full waits at most --max-stall (20 ms) for heaptrace to read, then the call goes on
unrecorded and counted; every report then gives the count and marks its counts not exact.

- heaptrace stopped (SIGSTOP) for 1 s while the program allocates: its longest single call, timed
  by itself, stays within 10 x the bound (the promise, not a speed); it finishes with its own
  output and status; the calls seen plus those not seen are the calls it made.
- Two threads taking SIGUSR1 every millisecond, a handler that allocates when it did not interrupt
  the C library (so also when it interrupted a stub): the program finishes, launched and
  attached, and where no call went unseen every call of its loops is counted.
- siglongjmp out of a 10 kHz timer's handler (a timeout pattern): records left unwritten stop
  the reader again and again; heaptrace turns the process's stubs off, says so in one line and
  in the report, and the program finishes at full speed.
- The same at most 7 times a second (a 1 kHz timer, jumps 150 ms apart at the soonest), the
  handler jumping only when it interrupted heaptrace's code: each record left unwritten is
  skipped once a look at the stopped threads finds none that can still write it; the stubs stay
  on, -v counts the records skipped, and the calls seen and not seen are those of the completed
  pairs (a jump adds at most one call not paired).
- A seccomp filter installed after the stubs were set up, that kills on futex (or allows only
  the calls the program makes): heaptrace notices it and the stubs wait without system calls; with
  heaptrace stopped so that the ring fills, the program lives on and finishes."""

import os
import re
import select
import signal
import subprocess
import time

import helpers
from helpers import Fail, Skip, TIMEOUT, heaptrace, need_heaptrace, scratch, target

BOUND_MS = 20  # --max-stall's default, given explicitly (tests/run.py's wrapper sets another)


def stall_stubs():
    """True where these checks hold: x86_64's entry stubs (every architecture's stubs bound
    their wait, but the look at the threads and the watched seccomp calls are x86_64's; the
    other architectures' bound is tested in the guests: tests/xarch/xarch.py)."""
    return helpers.MODE == "stubs" and os.uname().machine == "x86_64"


def need_stubs():
    if not stall_stubs():
        raise Skip("these checks are x86_64's entry stubs'")


def ended(t, mode, why=""):
    """Wait for the traced stall MODE to end (exit 0, else fail, why added): what it made."""
    if t.finish(60) != 0:
        t.fail("exited %s, expected 0%s" % (t.p.returncode, why))
    return made(t.out, mode)


def summary_of(path):
    with open(path) as f:
        return helpers.parse_json_reports(f.read())[-1]["summary"]


def seen(s):
    """Calls the report accounts for, one way or another."""
    return (s["alloc_calls"] + s["free_calls"] + s["unknown_frees"]
            + s.get("library_frees", 0))


class Traced:
    """heaptrace --format=json launching stall ARGS, its output read as it comes."""

    def __init__(self, name, args, opts=()):
        need_heaptrace()
        self.dir = scratch(name)
        self.report = os.path.join(self.dir, "report")
        self.argv = ([helpers.HEAPTRACE, "--format=json", "--outfile=" + self.report,
                      "--max-stall=%d" % BOUND_MS] + list(opts)
                     + ["--", target("stall")] + [str(a) for a in args])
        self.p = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  cwd=self.dir, start_new_session=True)

    def readline(self):
        ready, _, _ = select.select([self.p.stdout], [], [], TIMEOUT)
        return self.p.stdout.readline().decode() if ready else ""

    def stop_for(self, secs):
        os.kill(self.p.pid, signal.SIGSTOP)
        time.sleep(secs)
        os.kill(self.p.pid, signal.SIGCONT)

    def finish(self, limit=TIMEOUT):
        try:
            out, err = self.p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            out, err = self.p.communicate()
            raise Fail("%s did not finish within %s s" % (" ".join(self.argv), limit),
                       err.decode())
        self.out, self.err = out.decode(), err.decode()
        return self.p.returncode

    def fail(self, reason):
        raise Fail(reason, "$ %s\nstatus %s\n--- stdout ---\n%s\n--- stderr ---\n%s"
                   % (" ".join(self.argv), self.p.returncode, self.out, self.err))


def baseline(mode, *args):
    """The calls the C library and the target's setup make: stall MODE 0 under heaptrace."""
    r = heaptrace(target("stall"), args=[mode, 0] + list(args), name="stall-%s-0" % mode)
    if r.rc != 0:
        r.fail("stall %s 0 exited %s" % (mode, r.rc))
    return seen(r.report["summary"])


def made(out, mode):
    m = re.search(r"^stall %s: (\d+) calls(?:, longest (\d+) ns|, (\d+) in handlers|, (\d+) "
                  r"jumps)?$" % mode, out, re.M)
    if not m:
        raise Fail("stall %s printed %r" % (mode, out))
    return [int(g) for g in m.groups() if g is not None]


def test_stopped_heaptrace_bounded():
    """SIGSTOP of heaptrace for 1 s while stall loops: bounded calls, the unseen ones counted."""
    need_stubs()
    base = baseline("loop")
    t = Traced("stall-loop", ["loop", 2500])
    if t.readline() != "looping\n":
        t.finish()
        t.fail("stall loop did not start")
    time.sleep(0.5)
    t.stop_for(1.0)
    if t.finish() != 0:
        t.fail("heaptrace (and stall) exited %s, expected 0" % t.p.returncode)
    calls, longest = made(t.out, "loop")
    s = summary_of(t.report)
    if longest > 10 * BOUND_MS * 1000000:
        t.fail("the longest call took %.1f ms, past 10 x --max-stall (%d ms)"
               % (longest / 1e6, BOUND_MS))
    if not s.get("calls_not_seen") or s.get("counts_exact") is not False:
        t.fail("no call went unseen while heaptrace was stopped: %s" % s)
    if seen(s) + s["calls_not_seen"] != calls + base:
        t.fail("%d calls seen + %d not seen, the program made %d (+ %d of its setup)"
               % (seen(s), s["calls_not_seen"], calls, base))
    if "calls not seen" not in t.err:
        t.fail("heaptrace did not say that calls went unseen")


def test_signal_handlers_allocate():
    """Issue point 1 launched: stall signals finishes; exact where nothing was lost, the
    handlers' calls included (those made while the interrupted code was inside a stub are the
    handler's own). The program's calls are its allocations and frees of blocks heaptrace saw
    allocated: the frees of the two workers' thread caches, which the C library makes as they
    end, are not (the baseline's workers never allocate). Those are library_frees, or unknown
    frees when a handler allocated in the middle of them (the thread's exit runs code outside
    the C library, where the handler allocates)."""
    base = baseline("signals")
    t = Traced("stall-signals", ["signals", 1500])
    calls, handlers = ended(t, "signals")
    s = summary_of(t.report)
    if s.get("counts_exact") is False:
        return  # some calls went unseen: the report says so
    mine = s["alloc_calls"] + s["free_calls"]
    if mine != calls + handlers + base:
        t.fail("%d calls seen (and %d library frees, %d unknown), the loops made %d, the "
               "handlers %d (+ %d of the setup)"
               % (mine, s.get("library_frees", 0), s["unknown_frees"], calls, handlers, base))


def test_signal_handlers_allocate_attached():
    """Issue point 1 attached: the program started alone, heaptrace -p, both finish."""
    need_heaptrace()
    d = scratch("stall-signals-attached")
    prog = subprocess.Popen([target("stall"), "signals", "2500"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=d, start_new_session=True)
    time.sleep(0.3)
    report = os.path.join(d, "report")
    ht = subprocess.Popen([helpers.HEAPTRACE, "-p", str(prog.pid), "--no-inventory",
                           "--max-stall=%d" % BOUND_MS,
                           "--format=json", "--outfile=" + report], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, cwd=d)
    try:
        out, err = prog.communicate(timeout=60)
        _, hterr = ht.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        for p in (prog, ht):
            p.kill()
        raise Fail("stall signals or heaptrace -p did not finish within 60 s")
    if prog.returncode != 0 or not out.decode().startswith("stall signals: "):
        raise Fail("attached, stall signals exited %s and printed %r"
                   % (prog.returncode, out), hterr.decode())
    if ht.returncode != 0:
        raise Fail("heaptrace -p exited %s" % ht.returncode, hterr.decode())


def test_jump_out_of_handler():
    """Issue point 3: siglongjmp out of a handler that interrupted a stub, at 10 kHz. Either safe
    outcome: the records left unwritten are skipped after looks at the threads and the calls
    are counted (seen and not seen: the completed pairs, plus at most one per jump), or the
    looks come too often and the stubs are turned off, said in one line and in the report."""
    base = baseline("jump") if stall_stubs() else 0
    t = Traced("stall-jump", ["jump", 3000], opts=["-v"])
    calls, jumps = ended(t, "jump")
    if not stall_stubs():
        return
    s = summary_of(t.report)
    said_off = "its calls are not traced from now on" in t.err
    if said_off != (s.get("stubs_turned_off") is True):
        t.fail("the line and the report disagree on the stubs turned off (line: %s, report: %s)"
               % (said_off, s.get("stubs_turned_off")))
    if said_off:
        return  # its later calls are not seen, nor counted: the report says so
    if not re.search(r"^heaptrace: \d+ records skipped that no thread would write$", t.err, re.M):
        t.fail("%d jumps at 10 kHz, the stubs on, and no record skipped" % jumps)
    mine = seen(s) + s.get("calls_not_seen", 0) - base
    if not calls <= mine <= calls + jumps:
        t.fail("%d calls seen or not seen past the setup's %d; the loop completed %d in pairs, "
               "with %d jumps" % (mine, base, calls, jumps))


# a 1 kHz timer; stall jump ... stubs jumps 150 ms apart at the soonest: fewer than 7 a second,
# fewer looks that skip records than turn the stubs off (8 a second)
JUMP_EVERY_US = 1000


def test_jump_out_of_stub_now_and_then():
    """siglongjmp out of a handler that interrupted heaptrace's code, 150 ms apart at the soonest:
    the records left unwritten are skipped (-v counts them), the stubs stay on, and the calls
    seen and not seen are the program's pairs plus at most one per jump (a call a jump left after
    it was made), beyond what its setup makes (stall jump 0)."""
    need_heaptrace()
    if not stall_stubs():
        raise Skip("the look at the threads is x86_64's entry stubs'")
    base = baseline("jump", JUMP_EVERY_US, "stubs")
    t = Traced("stall-jump-stubs", ["jump", 3000, JUMP_EVERY_US, "stubs"],
               opts=["-v", "--max-stall=60000"])
    calls, jumps = ended(t, "jump")
    s = summary_of(t.report)
    m = re.search(r"^heaptrace: (\d+) records skipped that no thread would write$", t.err, re.M)
    if s.get("stubs_turned_off") or "not traced from now on" in t.err:
        t.fail("the stubs were turned off for %d jumps" % jumps)
    if not m:
        t.fail("%d jumps out of heaptrace's code, and no record skipped" % jumps)
    # a call whose return a jump took is not seen (its result is not known), and said so
    mine = seen(s) + s.get("calls_not_seen", 0) - base
    if not calls <= mine <= calls + jumps:
        t.fail("%d calls seen or not seen past the setup's %d; the loops completed %d in "
               "pairs, with %d jumps" % (mine, base, calls, jumps))


def seccomp_run(filt):
    t = Traced("stall-seccomp-" + filt, ["seccomp", 1500, filt])
    line = t.readline()
    if line != "filtered\n":
        t.finish()
        if t.p.returncode == 77:
            raise Skip("no seccomp filter here")
        t.fail("stall seccomp did not install its filter")
    time.sleep(0.4)  # heaptrace looks every 50 ms; the window before is documented (BUGS)
    t.stop_for(0.7)  # the ring fills: the stubs wait, with no system call
    ended(t, "seccomp", " (SIGSYS is 159)")
    if not stall_stubs():
        return
    s = summary_of(t.report)
    if "installed a seccomp filter" not in t.err:
        t.fail("heaptrace did not say that the stubs wait without system calls")
    if not s.get("calls_not_seen"):
        t.fail("the ring never filled while heaptrace was stopped: %s" % s)


def seccomp_now_run(filt, via=()):
    """The filter installed and the ring filled at once, with heaptrace reading: no window.
    heaptrace watches the C library's calls that install filters (prctl, syscall), and its
    stubs then wait without system calls. Every call is counted, seen or not."""
    need_heaptrace()
    args = ["seccomp-now", 1000, filt] + list(via)
    base = baseline(*args[:1], *args[2:]) if stall_stubs() else 0
    t = Traced("stall-" + "-".join(map(str, args)), args, opts=["-v"])
    if t.finish(60) == 77:
        raise Skip("no seccomp filter here")
    if t.p.returncode != 0:
        t.fail("exited %s, expected 0 (SIGSYS is 159)" % t.p.returncode)
    calls = made(t.out, "seccomp-now")[0]
    if not stall_stubs():
        return
    s = summary_of(t.report)
    m = re.search(r"^heaptrace: \d+ calls recorded by entry stubs, (\d+) times a stub waited",
                  t.err, re.M)
    if not m or not int(m.group(1)):
        t.fail("the ring never filled under the new filter (-v: %s)" % (m and m.group(0)))
    if "installed a seccomp filter" not in t.err:
        t.fail("heaptrace did not say that the stubs wait without system calls")
    mine = seen(s) + s.get("calls_not_seen", 0) - base
    if mine != calls:
        t.fail("%d calls seen or not seen past the setup's %d; the loop made %d"
               % (mine, base, calls))


def test_seccomp_at_once_kills_futex():
    """A filter that kills on futex, installed through syscall(SYS_seccomp), the ring full at
    once."""
    seccomp_now_run("kill")


def test_seccomp_at_once_whitelist_prctl():
    """A whitelist filter installed through prctl(PR_SET_SECCOMP), the ring full at once."""
    seccomp_now_run("whitelist", ["prctl"])


def test_seccomp_kills_futex():
    """Issue point 4: a filter installed after the set-up that kills on futex."""
    seccomp_run("kill")


def test_seccomp_whitelist():
    """Issue point 4: a whitelist filter (futex not in it)."""
    seccomp_run("whitelist")
