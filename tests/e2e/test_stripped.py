# SPDX-License-Identifier: GPL-2.0-only
"""Stripped programs, as they are on a board, with their symbols from elsewhere: --symbols=FILE
(the copy before stripping) and --debug-dir=DIR (DIR/.build-id/xx/rest.debug, a separate debug
file), matched by build-id, and a debug file named by the program's .gnu_debuglink. The same
exact checks as for the unstripped builds."""

import os
import shutil
import subprocess

from helpers import (Fail, HEAPTRACE, heaptrace, one_error_line, run, scratch, sites, target,
                     variants)
import test_basic
import test_unwind


def stripped_run(basic, static):
    """With test_basic's checks (basic: that module). Not static: leaks-plainstripped (no
    symbols, no unwind tables) with --symbols=leaks-plain: every site, count and chain to main
    as in the unstripped build, file:line included. Static: static_stripped with
    --symbols=static_leaks, which can be traced at all only so (the malloc family is found by
    name)."""
    if static:
        return basic.static_run("O0", "static_leaks", libc_startup_only=False,
                                prog=target("static_stripped"),
                                opts=["--symbols=" + target("static_leaks")])[1]
    return basic.full_check("leaks", "plain", prog=target("leaks", "plainstripped"),
                            opts=["--symbols=" + target("leaks", "plain")])


def test_stripped_with_symbols():
    # the CFI too comes from the copy: its .debug_frame
    test_unwind.check_hows(stripped_run(test_basic, False), "cfi")


def test_static_stripped_with_symbols():
    stripped_run(test_basic, True)


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE, check=True,
                         universal_newlines=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    raise Fail("%s has no build-id" % path)


def test_static_stripped_with_debug_dir():
    """The same with a separate debug file (objcopy --only-keep-debug) found by build-id."""
    d = scratch("debug-dir")
    src = target("static_leaks")
    bid = build_id(src)
    dest = os.path.join(d, ".build-id", bid[:2], bid[2:] + ".debug")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    subprocess.run(["objcopy", "--only-keep-debug", src, dest], check=True)
    test_basic.static_run("O0", "static_leaks", libc_startup_only=False,
                          prog=target("static_stripped"), opts=["--debug-dir=" + d])


def test_symbols_mismatch_refused():
    """--symbols=FILE named as the program but of another build: one line, exit status 1,
    and the program is not started."""
    d = scratch("mismatch")
    other = os.path.join(d, "static_stripped")
    shutil.copy(target("leaks"), other)
    one_error_line(run([HEAPTRACE, "--symbols=" + other, "--", target("static_stripped")]), 1,
                   ["does not match"])


def test_symbols_not_elf_refused():
    d = scratch("notelf")
    bad = os.path.join(d, "notes.txt")
    with open(bad, "w") as f:
        f.write("not ELF\n")
    one_error_line(run([HEAPTRACE, "--symbols=" + bad, "--", target("clean")]), 1, ["not an ELF"])


@variants("beside", "dot-debug")
def test_debuglink_found(where):
    """Stripped as Debian strips its packages, its debug file named by .gnu_debuglink (objcopy
    --add-gnu-debuglink) and put beside it or in .debug/ beside it, where libdwfl and gdb look:
    every site, count, chain and file:line as in the unstripped build. heaptrace checks those
    places before it lets libdwfl search (which would load libdebuginfod). Then the control:
    with the debug file gone, no frame of the program has a file or a function."""
    d = scratch("debuglink-" + where)
    prog = os.path.join(d, "leaks")
    dbg_dir = d if where == "beside" else os.path.join(d, ".debug")
    os.makedirs(dbg_dir, exist_ok=True)
    dbg = os.path.join(dbg_dir, "leaks.debug")
    src = target("leaks", "O0")
    subprocess.run(["objcopy", "--only-keep-debug", src, dbg], check=True)
    subprocess.run(["objcopy", "--strip-all", "--add-gnu-debuglink=" + dbg, src, prog],
                   check=True)
    test_basic.full_check("leaks", "O0", prog=prog)
    os.unlink(dbg)
    r = heaptrace(prog, name="leaks-debuglink-gone")
    named = [f for s in sites(r.report) for f in s.frames[1:]
             if os.path.realpath(f.get("module") or "") == os.path.realpath(prog) and
             (f.get("file") or f.get("function"))]
    if not r.report.get("backtraces") or named:
        r.fail("without its debug file, frames of the program still named: %s" % named[:3])
