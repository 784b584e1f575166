# SPDX-License-Identifier: GPL-2.0-only
"""Stripped programs, as they are on a board, with their symbols from elsewhere: --symbols=FILE
(the copy before stripping) and --debug-dir=DIR (DIR/.build-id/xx/rest.debug, a separate debug
file), matched by build-id. The same exact checks as for the unstripped builds."""

import os
import shutil
import subprocess

from helpers import Fail, HEAPTRACE, one_error_line, run, scratch, target
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
