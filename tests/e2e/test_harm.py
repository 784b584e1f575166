# SPDX-License-Identifier: GPL-2.0-only
"""heaptrace never harms the program, in the corners the entry stubs meet: programs that run fine
natively must finish under heaptrace with their own output and status, within a time limit, and
with exact counts, launched and attached (-p), in each entry mode.

- tests/targets/x86_64/notsc.c turns the time-stamp counter off (prctl PR_SET_TSC,
  PR_TSC_SIGSEGV), before or after the attach, then allocates in two threads: the stub code must
  not run rdtsc there (x86_64 only; where the kernel does not enforce the setting, the target
  says so and only the counts are checked).
- tests/targets/costacks.c allocates on ucontext coroutine stacks and in a handler on a
  sigaltstack, each with a guard page right above it: the stubs' stack copy must stop at the
  guard.
- tests/targets/bpkill.c: four threads mixing malloc and posix_memalign (which keeps a
  breakpoint); heaptrace -p is killed with SIGKILL 0.5 s after its patches show, 20 rounds in
  the stubs mode (5 in the other): the program runs on and ends with its own output every time.
- Executables edited as the kernel still runs them: a section header table past the end of the
  file; a symbol table that puts malloc into the middle of the function or into read-only data
  (heaptrace leaves it alone, in one line, and the program runs untouched); a core file whose
  program headers lie at an odd offset, or that has no writable segment.
- The heap found at the attach of an idle python3 -m http.server and an idle interactive bash
  reads complete.
"""

import json
import os
import select
import shutil
import signal
import struct
import subprocess
import time

import helpers
from helpers import (HEAPTRACE, Busy, Fail, Skip, check_sites, check_summary, code_diffs,
                     heaptrace, need_heaptrace, one_error_line, records, scratch, site_records,
                     sites, summary_record, target, tracer_pids)
from test_attach import attached_run, start_ready

LIMIT = 60  # seconds a run may take: only to catch a hung program


def check_run(r, prog, said, rc=0):
    """The program ended by itself with status rc, its own output, and heaptrace the same."""
    if r.proc.timed_out:
        r.fail("%s did not finish within %d s" % (prog, LIMIT))
    if r.rc != rc:
        r.fail("heaptrace exited %s, expected the program's %d" % (r.rc, rc))
    if r.proc.stdout != said:
        r.fail("the program printed %r, expected %r" % (r.proc.stdout, said))


def attach_target(name, args, opts=()):
    """Run target name with "attach" and args, heaptrace -p on it until the target sends it
    SIGINT: the Run of the report, the target's Popen (ended) and its stdout after "ready"."""
    need_heaptrace()
    d = scratch("%s-%s" % (name, "-".join(args) or "attach"))
    t, outfile, expectfile, line = start_ready(name, "O0", "attach", d, LIMIT, args)
    try:
        if line != b"ready\n":
            if t.returncode == 77:
                raise Skip("%s: this kernel has no PR_SET_TSC" % name)
            raise Fail("%s did not get ready (status %s, said %r)" % (name, t.returncode, line))
        argv = [HEAPTRACE, "-p", str(t.pid), "--no-inventory", "--format=json",
                "--outfile=" + outfile] + list(opts)
        proc, r = attached_run(t, argv, outfile, expectfile)
        rest = t.stdout.read().decode("utf-8", "replace")
        if proc.rc != 0:
            r.fail("heaptrace -p exited %s, expected 0" % proc.rc)
        return r, t, rest
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        t.stdout.close()
        t.stderr.close()


def tsc_enforced(r):
    """Whether the kernel makes rdtsc fault after PR_SET_TSC here (the target's "tsc" record)."""
    recs = records(r, "tsc")
    if len(recs) != 1:
        r.fail("the target wrote %d tsc records, expected 1" % len(recs))
    return recs[0]["faults"] == 1


def check_tsc(r):
    """Where the kernel enforces the setting, the stubs met it: heaptrace said so (-v)."""
    said = "turned the time-stamp counter off" in r.proc.stderr
    if helpers.MODE == "stubs" and tsc_enforced(r) and not said:
        r.fail("rdtsc faults here, yet heaptrace never met the switched-off counter")


def check_counts(r):
    """Every site the target recorded, exact (the C library's own blocks aside)."""
    recs = site_records(r)
    if not recs:
        r.fail("the target wrote no site records")
    check_sites(r, r.report, recs, exhaustive=False, check_peaks=False)


# ---------------------------------------------------------------------------------------------
# The time-stamp counter turned off


def notsc_target():
    try:
        return target("notsc")
    except Fail:
        raise Skip("notsc is an x86_64 target")


def test_notsc_launched():
    """The program turns the counter off in main, after heaptrace set its stubs up."""
    prog = notsc_target()
    r = heaptrace(prog, args=["launch"], opts=["-v"], timeout=LIMIT, name="notsc-launch")
    if r.rc == 77:
        raise Skip("this kernel has no PR_SET_TSC")
    check_run(r, "notsc", "notsc: done\n")
    check_counts(r)
    check_tsc(r)


@helpers.variants("before", "after")
def test_notsc_attached(when):
    """heaptrace -p on a program that turned the counter off before the attach, or does after."""
    notsc_target()
    args = ["before"] if when == "before" else []
    r, t, rest = attach_target("notsc", args, opts=["-v"])
    if t.returncode != 0 or rest != "notsc: done\n":
        r.fail("notsc exited %s and printed %r, expected 0 and 'notsc: done'"
               % (t.returncode, rest))
    check_counts(r)
    check_tsc(r)


# ---------------------------------------------------------------------------------------------
# Coroutine and signal stacks with guard pages


def test_costacks_launched():
    r = heaptrace(target("costacks"), args=["launch"], timeout=LIMIT, name="costacks-launch")
    check_run(r, "costacks", "costacks: done\n")
    check_counts(r)


def test_costacks_attached():
    r, t, rest = attach_target("costacks", [])
    if t.returncode != 0 or rest != "costacks: done\n":
        r.fail("costacks exited %s and printed %r, expected 0 and 'costacks: done'"
               % (t.returncode, rest))
    check_counts(r)


# ---------------------------------------------------------------------------------------------
# SIGKILL of heaptrace while it holds breakpoint stops


def _status(rc):
    return "killed by %s" % signal.Signals(-rc).name if rc is not None and rc < 0 else \
        "exited %s" % rc


def test_sigkill_holding():
    """SIGKILL of heaptrace -p 0.5 s after its patches show in bpkill's code (posix_memalign on
    a breakpoint, the others on stubs): bpkill lives, untraced, and ends with its own output
    and status. 20 rounds in the stubs mode, 5 in the other."""
    need_heaptrace()
    n = 20 if helpers.MODE == "stubs" else 5
    failed = []
    for i in range(n):
        t = Busy("bpkill-%d" % i, 4, prog="bpkill")
        try:
            ht = subprocess.Popen([HEAPTRACE, "-p", str(t.pid), "--no-inventory",
                                   "--outfile=/dev/null"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True)
            deadline = time.monotonic() + LIMIT
            while not code_diffs(t.pid)[1]:
                if ht.poll() is not None or time.monotonic() > deadline:
                    raise Fail("heaptrace's patches never showed (heaptrace %s)"
                               % _status(ht.poll()))
                time.sleep(0.005)
            time.sleep(0.5)
            ht.kill()
            ht.communicate()
            traced = {tid: tp for tid, tp in tracer_pids(t.pid).items() if tp}
            if traced:
                raise Fail("threads of bpkill still traced after heaptrace's SIGKILL: %s"
                           % traced)
            t.expect_clean_end()
        except Fail as e:
            failed.append("round %d: %s" % (i, e.reason))
        finally:
            t.kill()
    if failed:
        raise Fail("%d of %d rounds failed; %s" % (len(failed), n, failed[0]),
                   "\n".join(failed))


# ---------------------------------------------------------------------------------------------
# Executables judged as the kernel judges them


def elf64_copy(name, suffix, change):
    """A copy of target NAME (a little-endian ELF64 file) with change(bytearray) applied."""
    with open(target(name), "rb") as f:
        b = bytearray(f.read())
    if b[4] != 2 or b[5] != 1:
        raise Skip("the test edits little-endian ELF64 files")
    change(b)
    path = os.path.join(scratch(name + "-" + suffix), name + "-" + suffix)
    with open(path, "wb") as f:
        f.write(b)
    os.chmod(path, 0o755)
    return path


def bogus_section_headers(b):
    struct.pack_into("<Q", b, 0x28, len(b) + 0x100000)  # e_shoff past the end of the file


@helpers.variants("leaks", "static_leaks")
def test_bogus_section_headers(name):
    """A program whose section header table lies past the end of its file runs natively (exec
    reads only the program headers): a dynamic one is traced, its summary exact; a static one,
    whose symbol table cannot be read, is refused in one line (status 2), as a stripped one is."""
    prog = elf64_copy(name, "badsh", bogus_section_headers)
    native = subprocess.run([prog], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            timeout=LIMIT)
    if native.returncode != 0:
        raise Fail("the edited %s does not run natively (status %s)" % (name,
                                                                          native.returncode))
    r = heaptrace(prog, timeout=LIMIT, name=name + "-badsh")
    if name == "leaks":
        if r.rc != 0:
            r.fail("heaptrace exited %s, expected the program's 0" % r.rc)
        check_summary(r, r.report, summary_record(r))  # its frames have no names now
    else:
        one_error_line(r.proc, 2, ["no allocator symbols"])


def symtab_set(b, symbol, value_of):
    """Set the value of every .symtab entry named symbol to value_of(old value, sections)."""
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
    secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]

    def name_at(strtab_off, at):
        return bytes(b[strtab_off + at:b.index(0, strtab_off + at)])

    named = {name_at(secs[shstrndx][4], s[0]).decode(): s for s in secs}
    n = 0
    for s in secs:
        if s[1] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[s[6]][4]
        for at in range(s[4], s[4] + s[5], s[9]):
            if name_at(strtab, struct.unpack_from("<I", b, at)[0]) == symbol.encode():
                old, = struct.unpack_from("<Q", b, at + 8)
                struct.pack_into("<Q", b, at + 8, value_of(old, named))
                n += 1
    if not n:
        raise Fail("no %s in the symbol table" % symbol)


BOGUS = {"mid": (lambda v, secs: v + 1, "into the middle of a function"),
         "rodata": (lambda v, secs: secs[".rodata"][3] + 64, "outside the executable code")}


@helpers.variants(*BOGUS)
def test_bogus_malloc_symbol(where):
    """A static program whose symbol table puts malloc one byte into the function, or into its
    read-only data: heaptrace says in one line that it leaves malloc alone, and the program runs
    on untouched (its own status; its other functions traced)."""
    value_of, said = BOGUS[where]
    prog = elf64_copy("static_leaks", "malloc-" + where,
                      lambda b: symtab_set(b, "malloc", value_of))
    r = heaptrace(prog, timeout=LIMIT, name="bogus-malloc-" + where)
    if r.rc != 0:
        r.fail("heaptrace exited %s, expected the program's 0" % r.rc)
    lines = [x for x in r.proc.stderr.splitlines() if x.strip()]
    if len(lines) != 1 or "malloc" not in lines[0] or said not in lines[0]:
        r.fail("heaptrace said %r, expected one line that malloc's symbol points %s"
               % (lines, said))
    if any(s.fn == "malloc" for s in sites(r.report)):
        r.fail("malloc was traced at a bogus address")


# ---------------------------------------------------------------------------------------------
# Core files with odd but valid layouts


def move_phdrs(b):
    """The program header table moved to an odd offset at the end of the file."""
    phoff, = struct.unpack_from("<Q", b, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
    table = bytes(b[phoff:phoff + phentsize * phnum])
    if len(b) % 2 == 0:
        b.append(0)
    struct.pack_into("<Q", b, 0x20, len(b))
    b.extend(table)


def drop_writable(b):
    """Every segment read-only: no heap, no data to read."""
    phoff, = struct.unpack_from("<Q", b, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
    for i in range(phnum):
        at = phoff + i * phentsize + 4  # p_flags
        flags, = struct.unpack_from("<I", b, at)
        struct.pack_into("<I", b, at, flags & ~2)


def heap_of(rep):
    """The report's heap_at_attach but its timing."""
    h = dict((rep or {}).get("heap_at_attach") or {})
    h.pop("analysis_ms", None)
    return h


def core_report(core, exe, out):
    p = helpers.run([HEAPTRACE, "--core=" + core, "--exe=" + exe, "--format=json",
                     "--outfile=" + out])
    rep = None
    if p.rc == 0 and os.path.exists(out):
        with open(out) as f:
            rep = json.loads(f.read())
    return p, rep


def test_core_odd_layout():
    """A core (gcore of tests/targets/heapinv.c) whose program headers lie at an odd offset is
    read as the original (the headers are copied, never read in place); one with no writable
    segment gives a report or one error line, never a crash (both clean under UBSan in the
    sanitizer build). No entry mode involved: run in the stubs mode only."""
    need_heaptrace()
    if helpers.MODE != "stubs":
        raise Skip("no tracing involved: run in the stubs mode only")
    gcore = shutil.which("gcore")
    if not gcore:
        raise Skip("gcore (gdb) is not installed")
    d = scratch("core-odd")
    env = dict(os.environ, HEAPTRACE_EXPECT=os.path.join(d, "expect"),
               HEAPTRACE_OUTFILE=os.path.join(d, "report"))
    t = subprocess.Popen([target("heapinv"), "plain"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=d)
    try:
        ready, _, _ = select.select([t.stdout], [], [], LIMIT)
        if not ready or t.stdout.readline() != b"ready\n":
            raise Fail("heapinv did not get ready")
        g = helpers.run([gcore, "-o", os.path.join(d, "core"), str(t.pid)])
        core = os.path.join(d, "core.%d" % t.pid)
        if g.rc != 0 or not os.path.exists(core):
            raise Fail("gcore failed", g.describe())
    finally:
        t.kill()
        t.wait()
        t.stdout.close()
        t.stderr.close()
    p, want = core_report(core, target("heapinv"), os.path.join(d, "want"))
    if want is None:
        raise Fail("heaptrace --core of the original core exited %s" % p.rc, p.describe())
    with open(core, "rb") as f:
        orig = f.read()
    os.unlink(core)
    for name, change in (("moved", move_phdrs), ("readonly", drop_writable)):
        b = bytearray(orig)
        change(b)
        path = os.path.join(d, "core-" + name)
        with open(path, "wb") as f:
            f.write(b)
        p, got = core_report(path, target("heapinv"), os.path.join(d, "got-" + name))
        os.unlink(path)
        if name == "moved":
            if got is None or not heap_of(want) or heap_of(got) != heap_of(want):
                raise Fail("the core with its program headers at an odd offset reads "
                           "differently (exit %s)" % p.rc, p.describe())
        elif p.rc not in (0, 2) or (p.rc == 2 and len(p.stderr.strip().splitlines()) != 1):
            raise Fail("a core with no writable segment: exit %s" % p.rc, p.describe())


# ---------------------------------------------------------------------------------------------
# The heap found at the attach of idle real processes


def wait_output(pipe, want, limit):
    """Read pipe until its text so far contains want (False after limit seconds)."""
    got, deadline = b"", time.monotonic() + limit
    while want not in got:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([pipe], [], [], max(left, 0))
        if not ready:
            return False
        chunk = os.read(pipe.fileno(), 4096)
        if not chunk:
            return False
        got += chunk
    return True


IDLE = {"python-http": ([shutil.which("python3") or "python3", "-u", "-m", "http.server", "0",
                         "--bind", "127.0.0.1"], "stdout", b"Serving HTTP"),
        "bash": (["bash", "--norc", "--noprofile", "-i"], "stderr", b"idle> ")}


@helpers.variants(*IDLE)
def test_inventory_idle(name):
    """heaptrace -p on an idle python3 -m http.server and an idle interactive bash: the heap at
    the attach is read whole (complete, no problems: every tcache struct validates with the
    process's one key)."""
    need_heaptrace()
    if helpers.MODE != "stubs":
        raise Skip("the inventory is read before any entry is patched: stubs mode only")
    argv, stream, want = IDLE[name]
    if not shutil.which(argv[0]):
        raise Skip("%s is not installed" % argv[0])
    d = scratch("idle-" + name)
    env = dict(os.environ, PS1="idle> ", HOME=d)
    t = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=d, start_new_session=True)
    try:
        if not wait_output(getattr(t, stream), want, LIMIT):
            raise Fail("%s did not get idle" % name)
        out = os.path.join(d, "report")
        p = helpers.run([HEAPTRACE, "-p", str(t.pid), "--duration=0.5", "--format=json",
                         "--outfile=" + out])
        if p.rc != 0:
            raise Fail("heaptrace -p exited %s" % p.rc, p.describe())
        with open(out) as f:
            rep = json.loads(f.read().splitlines()[-1])
        h = rep.get("heap_at_attach") or {}
        if h.get("complete") is not True or h.get("problems"):
            raise Fail("the heap of idle %s: complete %r, problems %r"
                       % (name, h.get("complete"), h.get("problems")), p.describe())
    finally:
        t.kill()
        t.communicate()
