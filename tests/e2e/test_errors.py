# SPDX-License-Identifier: GPL-2.0-only
"""Bad input and the command line: exit status 1 for a usage error, 2 when tracing cannot start,
every error one line on stderr beginning "heaptrace:"; --help and --version exit 0; the man page
documents every long option --help prints, and --help prints every option of interface.md."""

import os
import re
import shutil

from helpers import (HEAPTRACE, ROOT, Fail, need_heaptrace, one_error_line, run, scratch, target,
                     variants)

# The option table of interface.md (long forms are the contract).
CONTRACT_OPTIONS = ["--pid", "--duration", "--depth", "--sort", "--top", "--outfile",
                    "--flame-graph", "--format", "--follow-fork", "--interval", "--count",
                    "--older", "--min-size", "--max-size", "--help", "--version"]


def ht(args, **kw):
    need_heaptrace()
    return run([HEAPTRACE] + list(args), **kw)


def test_nonexistent_program():
    d = scratch("nonexistent")
    one_error_line(ht([os.path.join(d, "no-such-program")]), 2)


def test_nonexistent_program_in_path():
    one_error_line(ht(["heaptrace-no-such-command-xyz"]), 2)


def test_not_executable_elf():
    """A real ELF executable without the x bit."""
    d = scratch("noexec")
    path = os.path.join(d, "demo-noexec")
    shutil.copyfile(target("demo"), path)
    os.chmod(path, 0o644)
    one_error_line(ht([path]), 2)


def test_not_executable_text():
    d = scratch("noexec-text")
    path = os.path.join(d, "notes.txt")
    with open(path, "w") as f:
        f.write("not a program\n")
    os.chmod(path, 0o644)
    one_error_line(ht([path]), 2)


def test_not_elf():
    """A data file with the x bit and no "#!": execve fails with ENOEXEC."""
    d = scratch("notelf")
    path = os.path.join(d, "data.bin")
    with open(path, "wb") as f:
        f.write(bytes(range(256)) * 4)
    os.chmod(path, 0o755)
    one_error_line(ht([path]), 2)


def test_directory():
    d = scratch("dir")
    one_error_line(ht([d]), 2)


def test_static_stripped():
    """A static executable without symbols: the malloc family cannot be found."""
    one_error_line(ht([target("static_stripped")]), 2, ["no allocator symbols found"])


def test_nonexistent_pid():
    with open("/proc/sys/kernel/pid_max") as f:
        pid = int(f.read()) - 1
    while os.path.exists("/proc/%d" % pid):
        pid -= 1
    one_error_line(ht(["-p", str(pid)]), 2)


@variants("--bogus", "--depth=abc", "--sort=bogus", "--format=xml", "--top=x", "--min-size=abc",
          "--max-size=abc", "--duration=abc", "--interval=abc", "--count=abc", "--older=abc",
          "--pid=abc", "-Z")
def test_usage_error(option):
    """An unknown option or a bad value is a usage error: exit status 1."""
    d = scratch("usage")
    one_error_line(ht([option, "--outfile=" + os.path.join(d, "r"), "--", target("clean")]), 1)


def test_no_program():
    """Neither PROGRAM nor --pid: a usage error."""
    one_error_line(ht([]), 1)


def test_help():
    p = ht(["--help"])
    if p.rc != 0:
        raise Fail("--help exited %s" % p.rc, p.describe())
    missing = [o for o in CONTRACT_OPTIONS if not re.search(re.escape(o) + r"\b", p.stdout)]
    if missing:
        raise Fail("--help (stdout) does not mention %s" % ", ".join(missing), p.describe())


def test_help_short():
    p = ht(["-h"])
    if p.rc != 0 or "--depth" not in p.stdout:
        raise Fail("-h exited %s or printed no help on stdout" % p.rc, p.describe())


def test_version():
    p = ht(["--version"])
    if p.rc != 0:
        raise Fail("--version exited %s" % p.rc, p.describe())
    if not re.search(r"\b\d+\.\d+\.\d+\b", p.stdout):
        raise Fail("--version prints no x.y.z version on stdout", p.describe())


def man_text():
    path = os.path.join(ROOT, "man", "heaptrace.1")
    if not os.path.isfile(path):
        raise Fail("man/heaptrace.1 does not exist")
    with open(path) as f:
        text = f.read()
    # roff: \- is a minus, \f[BIR] font changes
    return re.sub(r"\\f[BIRP]|\\f\(..|\\&", "", text.replace("\\-", "-"))


def test_man_page_options():
    """man/heaptrace.1 mentions every long option that --help prints."""
    p = ht(["--help"])
    options = sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", p.stdout)))
    if not options:
        raise Fail("--help prints no long option", p.describe())
    man = man_text()
    missing = [o for o in options if not re.search(re.escape(o) + r"(?![a-z0-9-])", man)]
    if missing:
        raise Fail("man/heaptrace.1 does not mention %s" % ", ".join(missing))


def test_man_page_sections():
    """The sections the style guide asks for."""
    man = man_text()
    found = [re.sub(r'"', "", m).strip().upper() for m in re.findall(r"^\.SH\s+(.*)$", man, re.M)]
    want = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "OUTPUT", "EXIT STATUS", "EXAMPLES",
            "SEE ALSO"]
    missing = [w for w in want if w not in found]
    if missing:
        raise Fail("man/heaptrace.1 has no section %s (has %s)" % (", ".join(missing), found))
