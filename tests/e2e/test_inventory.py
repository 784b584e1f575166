# SPDX-License-Identifier: GPL-2.0-only
"""heaptrace -p reads the heap that was there before the attach out of glibc's own bookkeeping
(heap_at_attach) and seeds its table with those blocks ("[before attach]" backtraces), so frees
after the attach are matched.

tests/targets/heapinv.c builds a known heap before the attach (several threads and arenas, an
exited thread, mmapped and aligned blocks, calloc/realloc, full tcaches and fastbins), counts
its own live blocks with malloc_usable_size and writes them ("inventory" and "class" records),
then waits for the breakpoints, frees every block it made ("freed count=N") and sends SIGINT to
heaptrace. The inventory must equal its count plus glibc's own live blocks, which it also
reports (the DTVs pthread_create allocated for the two live workers). static_preheap is the same
program linked -static: there glibc makes a few more blocks of its own at start-up, which the
program cannot name, so only their number is bounded; every block the program made must still be
found, since its free after the attach is matched by address. "corrupt" overwrites one live
block's size word before the attach: the inventory is partial, says so, and the rest is right.
"""

import json
import os
import select
import shutil
import subprocess

from helpers import (HEAPTRACE, Busy, Fail, Run, Skip, check_consistency, code_diffs,
                     list_sum_errors, need_heaptrace, records, run, scratch, sites, target,
                     variants, TIMEOUT)

GLIBC_EXTRA_STATIC = 16  # at most this many start-up blocks of a static glibc's own


def attach_target(name, opt, mode, opts=(), env_add=None):
    """Start target name in mode (with env_add in its environment), attach heaptrace -p with
    opts when it is ready, wait for both. Returns the Run of the JSON report."""
    need_heaptrace()
    d = scratch("inv-%s-%s-%s" % (name, mode, opt))
    outfile = os.path.join(d, "report")
    expectfile = os.path.join(d, "expect")
    env = dict(os.environ, HEAPTRACE_EXPECT=expectfile, HEAPTRACE_OUTFILE=outfile,
               **(env_add or {}))
    t = subprocess.Popen([target(name, opt), mode], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=d)
    try:
        ready, _, _ = select.select([t.stdout], [], [], TIMEOUT)
        line = t.stdout.readline() if ready else b""
        if line != b"ready\n":
            t.kill()
            t.wait()
            if t.returncode == 77:
                raise Skip("the handshake reads x86 breakpoints")
            raise Fail("%s did not get ready (status %s, said %r)" % (name, t.returncode, line))
        proc = run([HEAPTRACE, "-p", str(t.pid), "--format=json", "--outfile=" + outfile]
                   + list(opts))
        try:
            t.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            t.kill()
            t.wait()
        r = Run(proc, outfile, expectfile, "json")
        if proc.timed_out or proc.rc != 0:
            r.fail("heaptrace -p exited %s%s" % (proc.rc, " (timed out)" if proc.timed_out
                                                  else ""))
        if t.returncode != 0:
            r.fail("%s exited %s after the detach" % (name, t.returncode))
        return r
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        t.stdout.close()
        t.stderr.close()


def truth(r):
    inv = records(r, "inventory")
    freed = records(r, "freed")
    if len(inv) != 1 or len(freed) != 1:
        r.fail("the target wrote %d inventory and %d freed records, expected 1 each"
               % (len(inv), len(freed)))
    classes = {c["max_size"]: (c["blocks"], c["bytes"]) for c in records(r, "class")}
    return inv[0], freed[0]["count"], classes


def heap_at_attach(r, allocator="glibc-2."):
    h = r.report.get("heap_at_attach")
    if not isinstance(h, dict):
        r.fail("the report has no heap_at_attach object")
    for k in ("allocator", "complete", "live_blocks", "live_bytes", "free_bytes", "heap_bytes",
              "mmapped_blocks", "mmapped_bytes", "arenas", "stop_ms", "size_classes", "types",
              "problems"):
        if k not in h:
            r.fail("heap_at_attach has no %s" % k)
    if not str(h["allocator"]).startswith(allocator):
        r.fail("allocator %r, expected %s" % (h["allocator"], allocator))
    return h


def errors_of(h, want, keys):
    return ["heap_at_attach.%s = %s, expected %s" % (k, h.get(k), want[k])
            for k in keys if h.get(k) != want[k]]


def check_frees(r, freed, unknown_max=0):
    """Every block the program freed after the attach was matched to a block found at it."""
    summ = r.report["summary"]
    errors = []
    if not freed - unknown_max <= summ.get("freed_from_before_attach", -1) <= freed:
        errors.append("summary.freed_from_before_attach = %s, the program freed %d blocks made "
                      "before the attach" % (summ.get("freed_from_before_attach"), freed))
    if summ["unknown_frees"] > unknown_max:
        errors.append("summary.unknown_frees = %d, expected at most %d"
                      % (summ["unknown_frees"], unknown_max))
    return errors


@variants("O0", "O2")
def test_inventory_exact(opt):
    """The inventory equals the program's own count plus glibc's DTVs, block for block and byte
    for byte, per size class; all later frees are matched; only the DTVs stay live."""
    r = attach_target("heapinv", opt, "plain")
    h = heap_at_attach(r)
    inv, freed, classes = truth(r)
    want = {"complete": True, "problems": [],
            "live_blocks": inv["live_blocks"] + inv["glibc_blocks"],
            "live_bytes": inv["live_bytes"] + inv["glibc_bytes"],
            "mmapped_blocks": inv["mmapped_blocks"], "mmapped_bytes": inv["mmapped_bytes"],
            "arenas": 3}
    errors = errors_of(h, want, want.keys())
    got = {c["max_size"]: (c["blocks"], c["bytes"]) for c in h["size_classes"]}
    if got != classes:
        errors.append("size classes %s, expected %s" % (sorted(got.items()),
                                                          sorted(classes.items())))
    errors += check_frees(r, freed)
    summ = r.report["summary"]
    if (summ["live_blocks"], summ["live_bytes"]) != (inv["glibc_blocks"], inv["glibc_bytes"]):
        errors.append("live after the frees: %d blocks, %d bytes; expected glibc's %d, %d"
                      % (summ["live_blocks"], summ["live_bytes"], inv["glibc_blocks"],
                         inv["glibc_bytes"]))
    if not (h["free_bytes"] > 0 and h["heap_bytes"] > h["free_bytes"] and h["stop_ms"] > 0):
        errors.append("free_bytes %s, heap_bytes %s, stop_ms %s: not plausible"
                      % (h["free_bytes"], h["heap_bytes"], h["stop_ms"]))
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + r.describe())
    check_consistency(r, r.report)


def test_inventory_static():
    """A static glibc (main_arena in the executable's data, TLS at the start of the brk area):
    every block of the program is found (its free is matched), mmapped ones exactly, and glibc's
    own start-up blocks are few."""
    r = attach_target("static_preheap", "O0", "plain")
    h = heap_at_attach(r)
    inv, freed, _ = truth(r)
    want = {"complete": True, "mmapped_blocks": inv["mmapped_blocks"],
            "mmapped_bytes": inv["mmapped_bytes"], "arenas": 3}
    errors = errors_of(h, want, want.keys()) + check_frees(r, freed)
    extra = h["live_blocks"] - inv["live_blocks"] - inv["glibc_blocks"]
    if not 0 <= extra <= GLIBC_EXTRA_STATIC:
        errors.append("%d blocks beyond the program's and the DTVs (expected 0 to %d)"
                      % (extra, GLIBC_EXTRA_STATIC))
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + r.describe())
    check_consistency(r, r.report)


def test_inventory_corrupt():
    """One size word overwritten: complete is false, a problem names the bad header, at most the
    block and its neighbour (whose in-use bit was in that header) are missed, the rest is
    exact."""
    r = attach_target("heapinv", "O0", "corrupt")
    h = heap_at_attach(r)
    inv, freed, _ = truth(r)
    errors = []
    if h["complete"] is not False or not any("bad chunk header" in p for p in h["problems"]):
        errors.append("complete %r, problems %r: the corruption is not reported"
                      % (h["complete"], h["problems"]))
    total = inv["live_blocks"] + inv["glibc_blocks"]
    if not total - 3 <= h["live_blocks"] <= total:
        errors.append("live_blocks %d, expected %d less at most 3" % (h["live_blocks"], total))
    want = {"mmapped_blocks": inv["mmapped_blocks"], "mmapped_bytes": inv["mmapped_bytes"],
            "arenas": 3}
    errors += errors_of(h, want, want.keys()) + check_frees(r, freed, unknown_max=3)
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + r.describe())


def test_inventory_attach_target():
    """tests/targets/attach.c frees a block it made before the attach: with the inventory that
    free is matched (no unknown free), and the report stays consistent."""
    r = attach_target("attach", "O0", "int")
    heap_at_attach(r)
    summ = r.report["summary"]
    if summ["unknown_frees"] != 0 or summ.get("freed_from_before_attach") != 1:
        r.fail("unknown_frees %s, freed_from_before_attach %s; expected 0 and 1"
               % (summ["unknown_frees"], summ.get("freed_from_before_attach")))
    befores = [s for s in sites(r.report) if s.before_attach]
    if not befores or any(len(s.frames) != 2 for s in befores):
        r.fail("no [before attach] backtraces of 2 frames in the report")
    check_consistency(r, r.report)


def test_no_inventory():
    """--no-inventory: no heap_at_attach and no freed_from_before_attach; the pre-attach free
    is unknown again."""
    r = attach_target("attach", "O0", "int", ["--no-inventory"])
    rep = r.report
    if "heap_at_attach" in rep or "freed_from_before_attach" in rep["summary"]:
        r.fail("--no-inventory still reports the heap at the attach")
    if rep["summary"]["unknown_frees"] != 1:
        r.fail("unknown_frees %s, expected 1" % rep["summary"]["unknown_frees"])


def test_inventory_text():
    """The text report has the "heap at attach" section and the "[before attach]" groups."""
    need_heaptrace()
    d = scratch("inv-text")
    outfile = os.path.join(d, "report")
    env = dict(os.environ, HEAPTRACE_OUTFILE=outfile)
    t = subprocess.Popen([target("attach"), "wait"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=d)
    try:
        ready, _, _ = select.select([t.stdout], [], [], TIMEOUT)
        if not ready or t.stdout.readline() != b"ready\n":
            raise Fail("attach did not get ready")
        p = run([HEAPTRACE, "-p", str(t.pid), "--duration=1", "--top=100", "-v",
                 "--outfile=" + outfile])
        t.wait(timeout=TIMEOUT)
        text = open(outfile).read() if os.path.exists(outfile) else ""
        for want in ("[heaptrace] heap at attach (glibc-2.", "[before attach]",
                     "[blocks of up to "):
            if want not in text:
                raise Fail("the text report lacks %r" % want, p.describe() + "\n" + text)
        if "stopped" not in p.stderr or "heap at attach" not in p.stderr:
            raise Fail("-v does not print the stop time", p.describe())
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        t.stdout.close()
        t.stderr.close()


def test_inventory_busy():
    """A process whose threads churn while heaptrace attaches: the snapshot leaves it unharmed
    (same code, clean end), and the report agrees with itself."""
    need_heaptrace()
    busy = Busy("inv-busy", 4)
    try:
        outfile = os.path.join(busy.dir, "report")
        p = run([HEAPTRACE, "-p", str(busy.pid), "--duration=0.5", "--format=json",
                 "--outfile=" + outfile])
        r = Run(p, outfile, os.path.join(busy.dir, "none"), "json")
        if p.rc != 0:
            r.fail("heaptrace -p exited %s" % p.rc)
        _, diffs = code_diffs(busy.pid)
        if diffs:
            r.fail("code changed after the detach: %s" % diffs[:3])
        rep = r.report
        heap_at_attach(r)
        errors = list_sum_errors(rep["summary"], sites(rep))
        if errors:
            r.fail(errors[0])
        busy.expect_clean_end(r)
    finally:
        busy.kill()


# ---------------------------------------------------------------------------------------------
# --core=FILE: the same reader on a core file


def gcore_then_attach(name):
    """Start target name, dump a core of it with gcore while it waits, then attach heaptrace -p.
    Returns (Run of the -p report, Proc of heaptrace --core, its JSON report)."""
    need_heaptrace()
    gcore = shutil.which("gcore")
    if not gcore:
        raise Skip("gcore (gdb) is not installed")
    d = scratch("inv-core-" + name)
    outfile = os.path.join(d, "report")
    expectfile = os.path.join(d, "expect")
    env = dict(os.environ, HEAPTRACE_EXPECT=expectfile, HEAPTRACE_OUTFILE=outfile)
    t = subprocess.Popen([target(name), "plain"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=d)
    try:
        ready, _, _ = select.select([t.stdout], [], [], TIMEOUT)
        if not ready or t.stdout.readline() != b"ready\n":
            raise Fail("%s did not get ready" % name)
        g = run([gcore, "-o", os.path.join(d, "core"), str(t.pid)])
        corefile = os.path.join(d, "core.%d" % t.pid)
        if g.rc != 0 or not os.path.exists(corefile):
            raise Fail("gcore failed", g.describe())
        proc = run([HEAPTRACE, "-p", str(t.pid), "--format=json", "--outfile=" + outfile])
        t.wait(timeout=TIMEOUT)
        r = Run(proc, outfile, expectfile, "json")
        if proc.rc != 0 or t.returncode != 0:
            r.fail("heaptrace -p exited %s, %s %s" % (proc.rc, name, t.returncode))
        corerep = os.path.join(d, "core-report")
        c = run([HEAPTRACE, "--core=" + corefile, "--exe=" + target(name), "--format=json",
                 "--outfile=" + corerep])
        if c.rc != 0:
            raise Fail("heaptrace --core exited %s" % c.rc, c.describe())
        with open(corerep) as f:
            rep = json.loads(f.read())
        os.unlink(corefile)  # large: the heap and the threads' stacks
        return r, c, rep
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        t.stdout.close()
        t.stderr.close()


@variants("heapinv", "static_preheap")
def test_core_same_as_attach(name):
    """A gcore of the waiting target gives the same inventory as the attach that follows, and
    the core report lists the blocks as [before attach] backtraces."""
    r, c, rep = gcore_then_attach(name)
    live = heap_at_attach(r)
    h = rep.get("heap_at_attach") or {}
    keys = ["allocator", "complete", "live_blocks", "live_bytes", "free_bytes", "heap_bytes",
            "mmapped_blocks", "mmapped_bytes", "arenas", "threads", "size_classes",
            "tcache_blocks", "fastbin_blocks", "bin_blocks", "problems"]
    errors = ["--core %s = %s, -p %s" % (k, h.get(k), live.get(k))
              for k in keys if h.get(k) != live.get(k)]
    inv, _, _ = truth(r)
    if name == "heapinv" and h.get("live_blocks") != inv["live_blocks"] + inv["glibc_blocks"]:
        errors.append("--core live_blocks %s, the program counted %d + %d"
                      % (h.get("live_blocks"), inv["live_blocks"], inv["glibc_blocks"]))
    if rep["summary"]["live_blocks"] != h.get("live_blocks") or rep.get("pid") != r.report["pid"]:
        errors.append("core summary live_blocks %s, pid %s" % (rep["summary"]["live_blocks"],
                                                                rep.get("pid")))
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + c.describe())


def test_core_bad_input():
    """Not a core file: one line and exit status 2; --exe without --core is a usage error."""
    need_heaptrace()
    p = run([HEAPTRACE, "--core=" + target("heapinv")])
    if p.rc != 2 or len(p.stderr.strip().splitlines()) != 1 or "core" not in p.stderr:
        raise Fail("--core of an executable: exit %s" % p.rc, p.describe())
    p = run([HEAPTRACE, "--core=/nonexistent/core"])
    if p.rc != 2 or len(p.stderr.strip().splitlines()) != 1:
        raise Fail("--core of a missing file: exit %s" % p.rc, p.describe())
    p = run([HEAPTRACE, "--exe=/bin/true", "-p", "1"])
    if p.rc != 1:
        raise Fail("--exe without --core: exit %s, expected 1" % p.rc, p.describe())


def test_inventory_types():
    """C++ objects of a stripped program are counted per class through RTTI, exactly, and none
    of the plain blocks whose first word points into read-only data is taken for an object."""
    r = attach_target("shapes_stripped", "O0", "plain")
    h = heap_at_attach(r)
    want = {rec["name"]: (rec["blocks"], rec["bytes"]) for rec in records(r, "type")}
    got = {t["name"]: (t["blocks"], t["bytes"]) for t in h["types"]}
    if len(want) != 3 or got != want:
        r.fail("types %s, expected %s" % (sorted(got.items()), sorted(want.items())))
    if h["complete"] is not True:
        r.fail("complete %r: %s" % (h["complete"], h["problems"]))


# ---------------------------------------------------------------------------------------------
# musl's mallocng (tests/targets/musl_heapinv.c, and musl_static_heapinv linked -static): the
# requested sizes are in the heap, so the inventory equals the program's own record exactly


@variants("musl_heapinv:O0", "musl_heapinv:O2", "musl_static_heapinv:O0")
def test_inventory_musl(v):
    """Every live block with the size the program asked for, per size class; the blocks of a
    mapping of their own between those mallocng always maps alone and those it may; every free
    after the attach matched; nothing left live."""
    name, opt = v.split(":")
    r = attach_target(name, opt, "plain")
    h = heap_at_attach(r, "musl-mallocng")
    inv, freed, classes = truth(r)
    want = {"complete": True, "problems": [], "live_blocks": inv["live_blocks"],
            "live_bytes": inv["live_bytes"], "threads": 3}
    errors = errors_of(h, want, want.keys())
    got = {c["max_size"]: (c["blocks"], c["bytes"]) for c in h["size_classes"]}
    if got != classes:
        errors.append("size classes %s, expected %s" % (sorted(got.items()),
                                                          sorted(classes.items())))
    if not inv["mmap_min"] <= h["mmapped_blocks"] <= inv["mmap_max"]:
        errors.append("mmapped_blocks %d, expected %d to %d" % (h["mmapped_blocks"],
                                                                 inv["mmap_min"], inv["mmap_max"]))
    errors += check_frees(r, freed)
    summ = r.report["summary"]
    if (summ["live_blocks"], summ["live_bytes"]) != (0, 0):
        errors.append("live after the frees: %d blocks, %d bytes; expected none"
                      % (summ["live_blocks"], summ["live_bytes"]))
    if not (0 < h["free_bytes"] < h["heap_bytes"] and h["stop_ms"] > 0):
        errors.append("free_bytes %s, heap_bytes %s, stop_ms %s: not plausible"
                      % (h["free_bytes"], h["heap_bytes"], h["stop_ms"]))
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + r.describe())
    check_consistency(r, r.report)


def test_inventory_musl_corrupt():
    """One slot's in-band index overwritten: complete is false, a problem names the slot, that
    block alone is missed (a block of less than 120 bytes) and its free is the only unknown."""
    r = attach_target("musl_heapinv", "O0", "corrupt")
    h = heap_at_attach(r, "musl-mallocng")
    inv, freed, _ = truth(r)
    errors = []
    if h["complete"] is not False or not any("bad slot header" in p for p in h["problems"]):
        errors.append("complete %r, problems %r: the corruption is not reported"
                      % (h["complete"], h["problems"]))
    if h["live_blocks"] != inv["live_blocks"] - 1 or not (
            inv["live_bytes"] - 120 < h["live_bytes"] < inv["live_bytes"]):
        errors.append("live_blocks %d, live_bytes %d; expected %d and %d less under 120 bytes"
                      % (h["live_blocks"], h["live_bytes"], inv["live_blocks"] - 1,
                         inv["live_bytes"]))
    errors += check_frees(r, freed, unknown_max=1)
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + r.describe())


@variants("musl_heapinv", "musl_static_heapinv")
def test_core_musl(name):
    """A gcore of the waiting musl program gives the inventory of the attach that follows."""
    r, c, rep = gcore_then_attach(name)
    live = heap_at_attach(r, "musl-mallocng")
    h = rep.get("heap_at_attach") or {}
    keys = ["allocator", "complete", "live_blocks", "live_bytes", "free_bytes", "heap_bytes",
            "mmapped_blocks", "mmapped_bytes", "threads", "size_classes", "problems"]
    errors = ["--core %s = %s, -p %s" % (k, h.get(k), live.get(k))
              for k in keys if h.get(k) != live.get(k)]
    inv, _, _ = truth(r)
    if h.get("live_blocks") != inv["live_blocks"] or h.get("live_bytes") != inv["live_bytes"]:
        errors.append("--core live %s blocks, %s bytes; the program counted %d, %d"
                      % (h.get("live_blocks"), h.get("live_bytes"), inv["live_blocks"],
                         inv["live_bytes"]))
    if errors:
        raise Fail(errors[0], "\n".join(errors) + "\n" + c.describe())


@variants("jemalloc", "tcmalloc")
def test_inventory_other_allocator(name):
    """A program whose malloc is jemalloc's or tcmalloc's (preloaded): the inventory says it is
    not supported for that allocator and reads nothing (its heap is not misread as glibc's)."""
    lib = {"jemalloc": "libjemalloc.so.2", "tcmalloc": "libtcmalloc.so.4"}[name]
    path = next((os.path.join(d, lib) for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                                                "/usr/lib")
                 if os.path.exists(os.path.join(d, lib))), None)
    if not path:
        raise Skip("%s is not installed" % lib)
    r = attach_target("attach", "O0", "int", env_add={"LD_PRELOAD": path})
    h = heap_at_attach(r, name)
    if (h["complete"], h["problems"], h["live_blocks"]) != (
            False, ["inventory not supported for %s" % name], 0):
        r.fail("complete %r, problems %r, live_blocks %d" % (h["complete"], h["problems"],
                                                              h["live_blocks"]))
    if r.report["summary"]["unknown_frees"] != 1:
        r.fail("unknown_frees %s, expected 1 (the free of a block made before the attach)"
               % r.report["summary"]["unknown_frees"])
