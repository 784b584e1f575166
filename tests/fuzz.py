#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A bounded, seeded fuzz pass over heaptrace's readers of untrusted files, meant for the
sanitizer build (make fuzz SANITIZE=1): mutated --record logs fed to `heaptrace report`, mutated
core files to `heaptrace --core`, and mutated ELF executables to the ELF reader (as the --exe of
--symbols of a copy of the program they were made from).

  python3 tests/fuzz.py --build BUILD --heaptrace HEAPTRACE [--seconds S] [--seed N]

The seeds are made here: a log recorded from tests/targets/leaks, a gcore of a sleeping process
(skipped without gdb's gcore), and tests/targets/static_leaks. Each input must end heaptrace
within TIMEOUT seconds, with no sanitizer report and not by a signal, with status 0, 1 or 2 (an
ELF input: any status, as heaptrace then traces a copy of static_leaks and ends with its status,
which bogus symbols may change): a crash, a sanitizer report or a hang fails its kind, and the
input is kept in BUILD/fuzz-failures/ with the command that ran it. One line per kind (what ran, how many inputs, the seed), then "N passed,
M failed" with one test per kind. The same seed gives the same inputs.
"""

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 20  # seconds an input may take: a hang, beyond
SANITIZER_WORDS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "ERROR: UndefinedBehaviorSanitizer")
INTERESTING = (0, 1, 0x7f, 0x80, 0xff)
INTERESTING_WIDE = (0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xffffffffffffffff,
                    0x7fffffffffffffff, 0x1000, 0xfffffffffffff000)


def mutate(rng, data, header=0):
    """One mutated copy of data: a few bit flips, bytes set to edge values, wide fields set
    (aligned words, most often in the first header bytes), a cut, or a chunk repeated."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        if not b:
            break
        if op == 0:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[rng.randrange(len(b))] = rng.choice(INTERESTING)
        elif op in (2, 3):
            span = header if header and op == 2 and header < len(b) else len(b)
            width = rng.choice((2, 4, 8))
            at = rng.randrange(max(span - width, 1)) & ~(width - 1)
            v = rng.choice(INTERESTING_WIDE) & ((1 << (8 * width)) - 1)
            b[at:at + width] = v.to_bytes(width, "little")
        elif op == 4:
            del b[rng.randrange(len(b)):]
        else:
            i = rng.randrange(len(b))
            n = rng.randint(1, min(64, len(b) - i))
            b[i:i] = b[i:i + n]
    return bytes(b)


class Kind:
    """One reader: name, seed file, the argv for an input path, the header span to aim at,
    whether any exit status is heaptrace's to give."""

    def __init__(self, name, seed, argv, header, any_status=False):
        self.name, self.seed, self.argv, self.header = name, seed, argv, header
        self.any_status = any_status
        self.ran = 0
        self.failures = []


def env_for_sanitizers():
    env = dict(os.environ)
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    env.setdefault("ASAN_OPTIONS", "abort_on_error=0")
    return env


def run_one(argv, env, any_status):
    """(what went wrong or None, stderr)."""
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=TIMEOUT, env=env,
                           start_new_session=True)
    except subprocess.TimeoutExpired as e:
        return "no end within %d s (a hang)" % TIMEOUT, (e.stderr or b"").decode("utf-8",
                                                                                  "replace")
    err = p.stderr.decode("utf-8", "replace")
    for w in SANITIZER_WORDS:
        if w in err:
            return "a sanitizer report (%s)" % w, err
    if p.returncode < 0:
        return "killed by %s" % signal.Signals(-p.returncode).name, err
    if not any_status and p.returncode not in (0, 1, 2):
        return "exit status %d" % p.returncode, err
    return None, err


def make_seeds(build, heaptrace, work, env):
    """The seed files: {kind name: path}. A seed that cannot be made is left out (said)."""
    seeds = {}
    leaks = os.path.join(build, "targets", "leaks")
    static = os.path.join(build, "targets", "static_leaks")
    for path in (leaks, static):
        if not os.path.isfile(path):
            sys.exit("fuzz: %s is not built (make targets)" % path)
    log = os.path.join(work, "seed.htlog")
    p = subprocess.run([heaptrace, "--record=" + log, "--outfile=/dev/null", leaks],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                       timeout=120)
    if p.returncode == 0 and os.path.exists(log):
        seeds["log"] = log
    else:
        print("fuzz: no seed log: %s" % p.stderr.decode("utf-8", "replace").strip())
    gcore = shutil.which("gcore")
    if gcore:
        sleeper = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
        try:
            prefix = os.path.join(work, "core")
            subprocess.run([gcore, "-o", prefix, str(sleeper.pid)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)
            core = "%s.%d" % (prefix, sleeper.pid)
            if os.path.exists(core):
                seeds["core"] = core
        finally:
            sleeper.kill()
            sleeper.wait()
    if "core" not in seeds:
        print("fuzz: no seed core (gdb's gcore missing or failed): cores left out")
    seeds["elf"] = static
    return seeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build-san")
    ap.add_argument("--heaptrace", default=None)
    ap.add_argument("--seconds", type=float, default=120, help="the whole pass, all kinds")
    ap.add_argument("--seed", type=int, default=None, help="default: from the clock")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    heaptrace = os.path.abspath(args.heaptrace or os.path.join(build, "heaptrace"))
    seed = args.seed if args.seed is not None else int(time.time())
    env = env_for_sanitizers()
    work = tempfile.mkdtemp(prefix="fuzz-", dir=build)
    keep = os.path.join(build, "fuzz-failures")
    seeds = make_seeds(build, heaptrace, work, env)
    inp = os.path.join(work, "input")
    out = os.path.join(work, "out")
    kinds = []
    if "log" in seeds:
        kinds.append(Kind("log", seeds["log"], lambda f: [
            heaptrace, "report", f, "--format=json", "--outfile=" + out], 64))
    if "core" in seeds:
        kinds.append(Kind("core", seeds["core"], lambda f: [
            heaptrace, "--core=" + f, "--format=json", "--outfile=" + out], 64 + 56 * 8))
    prog = os.path.join(work, "static_leaks")
    shutil.copy(seeds["elf"], prog)
    kinds.append(Kind("elf", seeds["elf"], lambda f: [
        heaptrace, "--symbols=" + f, "--format=json", "--outfile=" + out, prog],
        64 + 56 * 8, any_status=True))
    rng = random.Random(seed)
    budget = args.seconds / max(len(kinds), 1)
    for k in kinds:
        with open(k.seed, "rb") as f:
            data = f.read()
        deadline = time.monotonic() + budget
        while time.monotonic() < deadline:
            mutated = mutate(rng, data, k.header)
            with open(inp, "wb") as f:
                f.write(mutated)
            os.chmod(inp, 0o644)  # read, never run: the program traced is prog
            argv = k.argv(inp)
            what, err = run_one(argv, env, k.any_status)
            k.ran += 1
            if what:
                os.makedirs(keep, exist_ok=True)
                saved = os.path.join(keep, "%s-%d-%d" % (k.name, seed, k.ran))
                shutil.copy(inp, saved)
                with open(saved + ".txt", "w") as f:
                    f.write("$ %s\n%s\n%s" % (" ".join(argv).replace(inp, saved), what, err))
                k.failures.append("%s: %s" % (saved, what))
        print("fuzz: %s: %d mutated inputs of %s (%d bytes), seed %d: %s" % (
            k.name, k.ran, os.path.basename(k.seed), len(data), seed,
            "%d failed" % len(k.failures) if k.failures else "all clean"))
        for line in k.failures[:10]:
            print("fuzz:   " + line)
    shutil.rmtree(work, ignore_errors=True)
    failed = sum(1 for k in kinds if k.failures)
    print("%d passed, %d failed" % (len(kinds) - failed, failed))
    return 1 if failed or not kinds else 0


if __name__ == "__main__":
    sys.exit(main())
