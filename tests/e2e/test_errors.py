# SPDX-License-Identifier: GPL-2.0-only
"""Bad input and the command line: exit status 1 for a usage error, 2 when tracing cannot start,
every error one line on stderr beginning "heaptrace:"; --help and --version exit 0; the man page
documents every long option --help prints, and --help prints every option of CONTRACT_OPTIONS."""

import os
import re
import shutil
import struct

from helpers import (HEAPTRACE, ROOT, Fail, need_heaptrace, one_error_line, run, scratch, target,
                     variants)

# The options every release has (long forms are the contract; all in man/heaptrace.1).
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


# ---------------------------------------------------------------------------------------------
# Naming what is wrong: option values, unwritable reports, programs that cannot run here

VALUE_OPTIONS = ["--pid", "-p", "--duration", "--depth", "-d", "--sort", "-s", "--top",
                 "--outfile", "--format", "--interval", "--count", "--older", "--min-size",
                 "--max-size", "--sample"]


@variants(*VALUE_OPTIONS)
def test_missing_value(option):
    """An option that takes a value, given none (last on the command line): exit 1 and one line
    "option 'OPTION' needs a value", naming the option as written, long or short."""
    one_error_line(ht([option]), 1, ["option '%s' needs a value" % option])


@variants("-vx", "-xv", "-fZ")
def test_unknown_short_in_group(group):
    """An unknown letter in a group of short options is named alone: -vx says '-x'."""
    letter = next(c for c in group[1:] if c not in "vf")
    one_error_line(ht([group, target("clean")]), 1, ["unknown option '-%s'" % letter])


def test_value_for_flag():
    """--help=x: the option is known but takes no value."""
    one_error_line(ht(["--help=x"]), 1, ["option '--help' takes no value"])


@variants("text", "json")
def test_report_unwritable(fmt):
    """--outfile=/dev/full: every write of the report fails. Exit 2 (the report was not
    written), whatever the program's own status (exitcode exits 3), and one line."""
    one_error_line(ht(["--format=" + fmt, "--outfile=/dev/full", target("exitcode")]), 2,
                   ["No space left on device"])


def test_truncated_elf():
    """A copy of a target cut at 100 bytes: its program headers run past the end."""
    d = scratch("truncated")
    path = os.path.join(d, "cut")
    with open(target("clean"), "rb") as f:
        data = f.read(100)
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o755)
    one_error_line(ht([path]), 2, ["%s: truncated ELF file" % path])


EM_386, EM_X86_64, EM_AARCH64 = 3, 62, 183


def host_machine():
    """e_machine of the targets (this heaptrace's architecture), little-endian hosts only."""
    with open(target("clean"), "rb") as f:
        head = f.read(20)
    if head[5] != 1:
        return None
    return int.from_bytes(head[18:20], "little")


@variants("aarch64", "i386", "unknown")
def test_foreign_arch(kind):
    """An ELF executable for another architecture, made by patching e_machine (and, for the
    32-bit x86 one, the class) in a copy of a target: exit 2 and one line naming the
    architecture of the file and the one heaptrace traces."""
    need_heaptrace()
    host = host_machine()
    if host is None:
        raise Skip("a big-endian host")
    d = scratch("foreign-" + kind)
    path = os.path.join(d, "prog")
    with open(target("clean"), "rb") as f:
        data = bytearray(f.read())
    if kind == "aarch64":
        machine, name = (EM_AARCH64, "an aarch64 program") if host != EM_AARCH64 else \
            (EM_X86_64, "an x86_64 program")
    elif kind == "i386":
        machine, name = EM_386, "an i386 (32-bit x86) program"
        # a 32-bit ELF header with one program header, nothing else: named before it is read
        data = bytearray(b"\x7fELF\x01\x01\x01" + bytes(9)
                         + struct.pack("<HHIIIIIHHHHHH", 2, EM_386, 1, 0x8048054, 52, 0, 0,
                                       52, 32, 1, 0, 0, 0)
                         + struct.pack("<IIIIIIII", 1, 0, 0x8048000, 0x8048000, 84, 84, 5,
                                       0x1000))
    else:
        machine, name = 999, "a program for ELF machine 999"
    data[18:20] = machine.to_bytes(2, "little")
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o755)
    p = ht(["--version"])
    traces = p.stdout.split("(")[-1].split(")")[0] if p.rc == 0 else ""
    one_error_line(ht([path]), 2, ["%s: %s; this heaptrace traces %s programs"
                                   % (path, name, traces)])


def test_script_missing_interpreter():
    """A #! script whose interpreter does not exist: execve says only ENOENT; heaptrace names
    the interpreter."""
    d = scratch("script-interp")
    path = os.path.join(d, "script")
    with open(path, "w") as f:
        f.write("#!/no/such/interp -x\necho hello\n")
    os.chmod(path, 0o755)
    one_error_line(ht([path]), 2, ["%s: its interpreter /no/such/interp is missing" % path])


def test_missing_dynamic_linker():
    """A dynamic executable whose PT_INTERP names a file that does not exist (a copy of a target
    with that path overwritten): execve says only ENOENT; heaptrace names the dynamic linker."""
    d = scratch("no-ldso")
    path = os.path.join(d, "prog")
    with open(target("clean"), "rb") as f:
        data = bytearray(f.read())
    is64 = data[4] == 2
    phoff = int.from_bytes(data[0x20:0x28] if is64 else data[0x1c:0x20], "little")
    phentsize = int.from_bytes(data[0x36:0x38] if is64 else data[0x2a:0x2c], "little")
    phnum = int.from_bytes(data[0x38:0x3a] if is64 else data[0x2c:0x2e], "little")
    for i in range(phnum):
        ph = data[phoff + i * phentsize:phoff + (i + 1) * phentsize]
        if int.from_bytes(ph[0:4], "little") != 3:  # PT_INTERP
            continue
        off = int.from_bytes(ph[8:16] if is64 else ph[4:8], "little")
        size = int.from_bytes(ph[32:40] if is64 else ph[16:20], "little")
        fake = b"/no-such-ld" + b"x" * (size - 12) + b"\0"
        data[off:off + size] = fake
        break
    else:
        raise Skip("the target has no PT_INTERP (a static build)")
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o755)
    one_error_line(ht([path]), 2, ["its dynamic linker %s is missing"
                                   % fake[:-1].decode()])
