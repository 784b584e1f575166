# SPDX-License-Identifier: GPL-2.0-only
"""heaptrace -p PID (tests/targets/attach.c). The target starts a second thread, says "ready",
and waits until heaptrace's breakpoints are in place (it looks at the first byte of malloc, calloc
and free: x86_64 only, else it exits 77 and the test is skipped). Then it allocates in both
threads, frees a block made before the attach (an unknown free), and sends SIGINT to its tracer;
heaptrace writes the final report, removes its breakpoints, detaches and exits 0, and the target
checks that its code is restored and exits 0.

A busy process (tests/targets/busy.c: worker threads churning and leaking, started by the test,
"ready PID" on its stdout, "stop" on its stdin): after -p with --duration or SIGINT, the test
compares every executable file mapping of the process (/proc/PID/mem) with its file, lets the
process finish, and checks the report's consistency. And processes heaptrace must refuse, with
exit status 2 and one line: one another tracer (strace) holds, wholly or one thread of it, a
kernel thread, a zombie and heaptrace itself. A process whose main thread has exited
(tests/targets/leaderexit.c) is traced through its other threads."""

import os
import select
import signal
import subprocess
import time

from helpers import (HEAPTRACE, OPTS, Busy, Fail, Proc, Run, Skip, check_sites, check_summary,
                     code_diffs, describe_sites, list_sum_errors, need_heaptrace, one_error_line,
                     parse_json_reports, run, said, scratch, site_records, sites, summary_record, target, tracer_pids,
                     variants, which, TIMEOUT)

TARGET_RC = {3: "its malloc/calloc/free entries were not restored after the detach",
             99: "a checkpoint never came (breakpoints never seen, or no report/detach)",
             98: "it could not signal its tracer"}


def attached_run(t, argv, outfile, expectfile):
    """Run heaptrace -p (argv) to its end, then wait for the target process t to end (killed
    if it does not): heaptrace's Proc and the Run of its JSON report."""
    proc = run(argv)
    try:
        t.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        t.kill()
        t.wait()
    r = Run(proc, outfile, expectfile, "json")
    if proc.timed_out:
        r.fail("heaptrace -p did not finish within %ss" % TIMEOUT)
    return proc, r


def start_ready(name, opt, mode, d, limit, args=()):
    """Start target name (its opt build) with argument mode, then args, in d, its records and
    report there, and read its first line within limit seconds. Returns (Popen, outfile,
    expectfile, line); a target whose line is not "ready" is ended (its returncode set)."""
    outfile = os.path.join(d, "report")
    expectfile = os.path.join(d, "expect")
    env = dict(os.environ, HEAPTRACE_EXPECT=expectfile, HEAPTRACE_OUTFILE=outfile)
    t = subprocess.Popen([target(name, opt), mode] + list(args), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=d)
    ready, _, _ = select.select([t.stdout], [], [], limit)
    line = t.stdout.readline() if ready else b""
    if line != b"ready\n":
        t.kill()
        t.wait()
    return t, outfile, expectfile, line


def attach_run(opt, mode, opts):
    need_heaptrace()
    d = scratch("attach-%s-%s" % (mode, opt))
    t, outfile, expectfile, line = start_ready("attach", opt, mode, d, 60)
    try:
        if line != b"ready\n":
            if t.returncode == 77:
                raise Skip("the attach handshake reads x86 breakpoints")
            raise Fail("the attach target did not get ready (status %s, said %r)"
                       % (t.returncode, line))
        argv = [HEAPTRACE, "-p", str(t.pid), "--format=json", "--outfile=" + outfile] + opts
        proc, r = attached_run(t, argv, outfile, expectfile)
        if t.returncode == 77:
            raise Skip("the attach handshake reads x86 breakpoints")
        if proc.rc != 0:
            r.fail("heaptrace -p exited %s, expected 0" % proc.rc)
        if t.returncode != 0:
            r.fail("the attached program exited %s: %s" % (
                t.returncode, TARGET_RC.get(t.returncode, "it was disturbed")))
        return r, t.pid
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        t.stdout.close()
        t.stderr.close()


@variants(*OPTS)
def test_attach_sigint(opt):
    r, pid = attach_run(opt, "int", ["--no-inventory"])
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1" % len(r.reports))
    rep = r.report
    if rep.get("pid") != pid:
        r.fail("pid %r, expected %d" % (rep.get("pid"), pid))
    if rep.get("exit_status") is not None:
        r.fail("exit_status %r after a detach, expected null" % rep.get("exit_status"))
    check_sites(r, rep, site_records(r))
    check_summary(r, rep, summary_record(r),
                  keys=["alloc_calls", "free_calls", "unknown_frees", "live_blocks", "live_bytes"])


def test_attach_duration():
    """-p PID --duration=1: the report when the time is up, then a clean detach."""
    r, pid = attach_run("O0", "wait", ["--duration=1"])
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1" % len(r.reports))
    if r.report.get("exit_status") is not None:
        r.fail("exit_status %r after a detach, expected null" % r.report.get("exit_status"))


# ---------------------------------------------------------------------------------------------
# A busy multi-threaded process (tests/targets/busy.c), and processes heaptrace must refuse

BUSY_THREADS = 4
LEAK_SIZE = 72  # busy.c's LEAK_SIZE
CHURN = {"churn_malloc", "churn_realloc", "churn_calloc"}


def check_busy_report(r, pid, nthreads):
    """(d): one report of the detached process; nothing negative; the summary agrees with the
    list (live_blocks = sum of the counts, = alloc_calls - free_calls); every live block is
    busy's: leak_block's are 72 bytes each, and the workers hold at most one churn block each.
    Every error found is reported."""
    if len(r.reports) != 1:
        r.fail("%d reports, expected 1" % len(r.reports))
    rep = r.report
    summ = rep["summary"]
    errors = []
    if rep.get("pid") != pid or rep.get("exit_status") is not None:
        errors.append("pid %r, exit_status %r; expected %d and null after a detach"
                      % (rep.get("pid"), rep.get("exit_status"), pid))
    errors += ["summary.%s = %s" % (k, v) for k, v in summ.items()
               if isinstance(v, int) and v < 0]
    if summ["alloc_calls"] <= 0:
        errors.append("no allocation was traced in the whole session")
    ss = sites(rep)
    for s in ss:
        for k in ("count", "size", "peak_count", "peak_size", "total_count", "total_size"):
            if not isinstance(getattr(s, k), int) or getattr(s, k) < 0:
                errors.append("%s: %s = %r" % (s.key(), k, getattr(s, k)))
        if s.peak_count < s.count or s.total_count < s.count or s.peak_size < s.size:
            errors.append("%s: peak or total below the current value" % s.key())
    errors += list_sum_errors(summ, ss)
    gap = summ["alloc_calls"] - summ["free_calls"] - summ["live_blocks"]
    if gap:
        # busy's workers realloc all the time: the old block of a realloc in flight is
        # released when the realloc returns (man/heaptrace.1, BUGS), so it is live until then
        errors.append("alloc_calls - free_calls = %d but live_blocks = %d: %d blocks neither "
                      "live nor freed (old blocks of reallocs in flight at the report?)"
                      % (summ["alloc_calls"] - summ["free_calls"], summ["live_blocks"], gap))
    churn = 0
    for s in ss:
        caller = s.chain[0] if s.chain else None
        if caller == "leak_block":
            if s.fn != "malloc" or s.size != LEAK_SIZE * s.count:
                errors.append("%s: %d blocks of %d bytes, expected malloc blocks of %d bytes"
                              % (s.key(), s.count, s.size, LEAK_SIZE))
        elif caller in CHURN:
            churn += s.count
        else:
            errors.append("a live block busy never keeps: %s" % s)
    if churn > nthreads:
        errors.append("%d live churn blocks, but each of the %d workers holds at most one at a "
                      "time (frees missed?)" % (churn, nthreads))
    if errors:
        raise Fail(errors[0] + ("" if len(errors) == 1 else " (and %d more)" % (len(errors) - 1)),
                   "\n".join(errors) + "\n--- live backtraces ---\n" + describe_sites(rep)
                   + "\n" + r.describe())


def check_detached(r, busy):
    """(a) was checked by the caller; (b) no thread traced any more and every executable
    mapping equal to its file (breakpoints all removed); (c) busy finishes by itself."""
    traced = {tid: tp for tid, tp in tracer_pids(busy.pid).items() if tp}
    if traced:
        r.fail("threads still traced after heaptrace exited: %s" % traced)
    checked, diffs = code_diffs(busy.pid)
    if diffs:
        r.fail("code differs from the files after the detach: " + "; ".join(diffs))
    if checked < 3:
        r.fail("only %d executable file mappings to compare (the program, libc and ld.so "
               "expected)" % checked)
    busy.expect_clean_end(r)


def sigint_session(argv, pid):
    """Run heaptrace -p (argv) until a breakpoint shows in pid's code (polled, with a time
    limit), then, 50 ms later, send it SIGINT. Returns (Proc, whether a breakpoint showed)."""
    ht = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True)
    in_place = False
    try:
        deadline = time.monotonic() + TIMEOUT
        while ht.poll() is None and time.monotonic() < deadline:
            if code_diffs(pid)[1]:
                in_place = True
                break
            time.sleep(0.001)
        if in_place:
            # a moment for the busy threads to run through the armed entries: on a loaded
            # machine the SIGINT could otherwise come before any of them allocated
            time.sleep(0.05)
            ht.send_signal(signal.SIGINT)
        out, err = ht.communicate(timeout=TIMEOUT)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(ht.pid, signal.SIGKILL)
        out, err = ht.communicate()
        timed_out = True
    return Proc(argv, ht.returncode, out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"), timed_out), in_place


@variants("O0-duration", "O2-duration", "O0-sigint", "O2-sigint")
def test_attach_busy(variant):
    """-p PID of a process whose 4 threads churn malloc/realloc/calloc/free and leak, for
    --duration=0.5 or until SIGINT (sent once a breakpoint shows in the process's code):
    heaptrace exits 0; then no thread is traced, every executable file mapping equals its file,
    the process finishes its work with the right output and status, and the report is
    consistent (live_blocks = sum of the backtraces' counts, nothing negative)."""
    need_heaptrace()
    opt, mode = variant.split("-")
    busy = Busy("busy-" + variant, BUSY_THREADS, opt)
    try:
        outfile = os.path.join(busy.dir, "report")
        argv = [HEAPTRACE, "-p", str(busy.pid), "--format=json", "--outfile=" + outfile,
                "--no-inventory"]
        if mode == "duration":
            proc = run(argv + ["--duration=0.5"])
        else:
            proc, in_place = sigint_session(argv, busy.pid)
            if not in_place and not proc.timed_out:
                Run(proc, outfile, "", "json").fail(
                    "heaptrace ended before any breakpoint showed in the process's code")
        r = Run(proc, outfile, "", "json")
        if proc.timed_out:
            r.fail("heaptrace -p did not finish within %ss" % TIMEOUT)
        if proc.rc != 0:
            r.fail("heaptrace -p exited %s, expected 0" % proc.rc)
        check_detached(r, busy)
        check_busy_report(r, busy.pid, BUSY_THREADS)
    finally:
        busy.kill()


def wait_traced(pid, tid):
    """Poll until thread tid of pid has a tracer; return its pid."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        tp = tracer_pids(pid).get(tid, 0)
        if tp:
            return tp
        if time.monotonic() > deadline:
            raise Fail("thread %d of %d never got its tracer" % (tid, pid))
        time.sleep(0.001)


@variants("process", "one-thread")
def test_refuse_other_tracer(mode):
    """A process that another tracer (strace) already traces, all of it ("process": strace --
    busy) or only one of its worker threads ("one-thread": strace -p TID): heaptrace -p exits 2
    with one line "heaptrace: ..." that names the other tracer or ptrace_scope, leaves the
    threads it could seize untraced and running, and disturbs neither strace nor the program."""
    need_heaptrace()
    strace = which("strace")
    if not strace:
        raise Skip("strace is not installed")
    st = None
    if mode == "process":
        busy = Busy("refuse-strace", 2, prefix=[strace, "-o", "/dev/null", "--"])
    else:
        busy = Busy("refuse-strace-thread", 2)
    try:
        if mode == "process":
            victim = busy.pid
        else:
            victim = max(tracer_pids(busy.pid))  # a worker: tids grow, the main thread is pid
            if victim == busy.pid:
                raise Fail("busy has no worker thread")
            st = subprocess.Popen([strace, "-o", "/dev/null", "-p", str(victim)],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, start_new_session=True)
        tracer = wait_traced(busy.pid, victim)
        p = run([HEAPTRACE, "-p", str(busy.pid), "--duration=1", "--format=json",
                 "--outfile=" + os.path.join(busy.dir, "report")])
        if p.timed_out:
            raise Fail("heaptrace -p of a traced process did not finish", p.describe())
        one_error_line(p, 2, ["already traces it", "another tracer"])
        now = tracer_pids(busy.pid)
        if now.get(victim) != tracer:
            raise Fail("thread %d's tracer is %s after heaptrace, was %d (strace)"
                       % (victim, now.get(victim), tracer), p.describe())
        others = {tid: tp for tid, tp in now.items() if tid != victim and tp}
        if mode == "one-thread" and others:
            raise Fail("threads left traced after heaptrace gave up: %s" % others, p.describe())
        if st is not None:
            st.send_signal(signal.SIGINT)  # strace detaches and exits
            _, err = st.communicate(timeout=TIMEOUT)
            if tracer_pids(busy.pid).get(victim):
                raise Fail("strace did not detach (harness)", err.decode("utf-8", "replace"))
        busy.expect_clean_end()
    finally:
        if st is not None and st.poll() is None:
            st.kill()
            st.communicate()
        busy.kill()


PF_KTHREAD = 0x00200000


def kernel_thread():
    """The pid of a kernel thread we can see (kthreadd is pid 2 outside a pid namespace)."""
    pids = sorted(int(e) for e in os.listdir("/proc") if e.isdigit())
    for pid in [2] + pids:
        if pid == 1:
            continue
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, IndexError, ProcessLookupError):
            continue
        if int(fields[6]) & PF_KTHREAD:  # field 9, "flags"
            return pid
    return None


def test_refuse_kernel_thread():
    """-p of a kernel thread: exit 2 and one line "heaptrace: ..." that says so (no crash, no
    hang)."""
    need_heaptrace()
    pid = kernel_thread()
    if pid is None:
        raise Skip("no kernel thread is visible here (a pid namespace)")
    d = scratch("kthread")
    p = run([HEAPTRACE, "-p", str(pid), "--duration=1", "--format=json",
             "--outfile=" + os.path.join(d, "report")])
    if p.timed_out:
        raise Fail("heaptrace -p %d (a kernel thread) did not finish" % pid, p.describe())
    one_error_line(p, 2, ["a kernel thread"])


# ---------------------------------------------------------------------------------------------
# Processes that are not what they seem: zombies, kernel threads, heaptrace, a gone main thread


def thread_state(pid, tid=None):
    """The state letter of /proc/PID/stat (of thread tid if given), None if gone."""
    path = "/proc/%d/task/%d/stat" % (pid, tid) if tid else "/proc/%d/stat" % pid
    try:
        with open(path) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def test_refuse_zombie():
    """A process that has exited and that its parent (this test) has not reaped: exit 2 and one
    line saying it is a zombie (not "a kernel thread", though its cmdline is empty too)."""
    need_heaptrace()
    z = subprocess.Popen([target("exitcode"), "0"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env={k: v for k, v in os.environ.items()
                              if not k.startswith("HEAPTRACE_")})
    try:
        deadline = time.monotonic() + TIMEOUT
        while thread_state(z.pid) != "Z":  # not z.poll(): that would reap it
            if time.monotonic() > deadline:
                raise Fail("the child never became a zombie (state %s)" % thread_state(z.pid))
            time.sleep(0.001)
        p = run([HEAPTRACE, "-p", str(z.pid), "--duration=1", "--outfile=/dev/null"])
        one_error_line(p, 2, ["process %d is a zombie (it has exited; its parent has not reaped "
                              "it)" % z.pid])
    finally:
        z.wait()


def test_refuse_self():
    """-p with heaptrace's own pid (known only to itself: sh execs it with $$): exit 2, one
    line "cannot trace heaptrace itself"."""
    need_heaptrace()
    d = scratch("self")
    p = run(["sh", "-c", 'exec "$0" -p $$ --duration=1 --outfile="$1"', HEAPTRACE,
             os.path.join(d, "report")])
    if p.timed_out:
        raise Fail("heaptrace -p (itself) did not finish", p.describe())
    one_error_line(p, 2, ["cannot trace heaptrace itself"])


LEADER_RC = {3: "its malloc/free entries were not restored after the detach",
             99: "a checkpoint never came (breakpoints never seen, or no report/detach)",
             98: "it could not signal its tracer"}


@variants("O0-int", "O2-int", "O0-exit", "O2-exit")
def test_attach_leader_exited(variant):
    """-p of a process whose main thread called pthread_exit (tests/targets/leaderexit.c): the
    main thread is a zombie no tracer may seize, the worker runs on. heaptrace traces the process
    through the worker: the report has the process's pid and command line and exactly the
    worker's 3 x 40 bytes; "int": SIGINT from the worker, heaptrace exits 0, the worker finds
    malloc and free restored and the process exits 0; "exit": the worker exits 5 while traced,
    and the report says exit_status 5."""
    need_heaptrace()
    opt, mode = variant.split("-")
    d = scratch("leaderexit-" + variant)
    t, outfile, expectfile, line = start_ready("leaderexit", opt, mode, d, TIMEOUT)
    try:
        if line != b"ready\n":
            raise Fail("leaderexit did not get ready (status %s, said %r)"
                       % (t.returncode, line))
        tasks = sorted(int(x) for x in os.listdir("/proc/%d/task" % t.pid))
        if thread_state(t.pid) != "Z" or len(tasks) != 2:
            raise Fail("leaderexit: main thread state %s, threads %s; expected Z and 2"
                       % (thread_state(t.pid), tasks))
        argv = [HEAPTRACE, "-p", str(t.pid), "--format=json", "--outfile=" + outfile,
                "--no-inventory"]
        proc, r = attached_run(t, argv, outfile, expectfile)
        if proc.rc != 0:
            r.fail("heaptrace -p exited %s, expected 0" % proc.rc)
        want_rc = 0 if mode == "int" else 5
        if t.returncode != want_rc:
            r.fail("leaderexit exited %s, expected %d%s" % (
                t.returncode, want_rc, ": " + LEADER_RC[t.returncode]
                if t.returncode in LEADER_RC else ""))
        if len(r.reports) != 1:
            r.fail("%d reports, expected 1" % len(r.reports))
        rep = r.report
        if rep.get("pid") != t.pid or "leaderexit" not in (rep.get("command") or ""):
            r.fail("pid %r, command %r; expected %d and leaderexit's command line"
                   % (rep.get("pid"), rep.get("command"), t.pid))
        if rep.get("exit_status") != (None if mode == "int" else 5):
            r.fail("exit_status %r, expected %s" % (rep.get("exit_status"),
                                                    "null" if mode == "int" else 5))
        check_sites(r, rep, site_records(r))
        if mode == "int":
            check_summary(r, rep, summary_record(r),
                          keys=["alloc_calls", "free_calls", "unknown_frees", "live_blocks",
                                "live_bytes"])
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        t.stdout.close()
        t.stderr.close()


def test_attach_report_unwritable():
    """-p with --outfile=/dev/full: the final report cannot be written. heaptrace still detaches
    cleanly (the process finishes its work), then exits 2 with one line."""
    need_heaptrace()
    busy = Busy("attach-devfull", 2)
    try:
        p = run([HEAPTRACE, "-p", str(busy.pid), "--duration=0.5", "--format=json",
                 "--outfile=/dev/full"])
        if p.timed_out:
            raise Fail("heaptrace -p did not finish", p.describe())
        one_error_line(p, 2, ["No space left on device"])
        busy.expect_clean_end()
    finally:
        busy.kill()


SPAWNER_ROUNDS = 6


def test_attach_spawning():
    """-p, six times over, of a process whose main thread starts and joins a worker thread after
    another (tests/targets/spawner.c): the attach and the detach often find that thread stopped
    inside clone, where an injected call would make the clone run again (two workers with one
    start block: the target's exit 3, or glibc's double-free abort). Each round heaptrace exits
    0, says nothing, and counts the workers' calls; then the process ends with its own output
    and status 0."""
    need_heaptrace()
    d = scratch("spawner")
    t = subprocess.Popen([target("spawner")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=d)
    try:
        if t.stdout.readline() != b"ready\n":
            raise Fail("spawner did not get ready (status %s)" % t.poll())
        for i in range(SPAWNER_ROUNDS):
            outfile = os.path.join(d, "report%d" % i)
            proc = run([HEAPTRACE, "-p", str(t.pid), "--duration=0.3", "--format=json",
                        "--outfile=" + outfile, "--no-inventory"])
            if proc.timed_out or proc.rc != 0 or said(proc.stderr):
                raise Fail("round %d: heaptrace -p exited %s%s" % (
                    i, "(timed out)" if proc.timed_out else proc.rc,
                    ", said: " + said(proc.stderr) if said(proc.stderr) else ""),
                    proc.stderr)
            with open(outfile, encoding="utf-8") as f:
                summary = parse_json_reports(f.read())[-1]["summary"]
            if summary["alloc_calls"] < 1 or summary["free_calls"] < 1:
                raise Fail("round %d: %d allocations and %d frees counted while the workers "
                           "ran" % (i, summary["alloc_calls"], summary["free_calls"]))
            if t.poll() is not None:
                raise Fail("round %d: spawner exited %s while traced" % (i, t.returncode),
                           t.stderr.read().decode())
        out, err = t.communicate(b"end\n", timeout=TIMEOUT)
        if t.returncode != 0 or not out.decode().startswith("spawned "):
            raise Fail("spawner exited %s, said %r" % (t.returncode, out.decode()),
                       err.decode())
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
