# SPDX-License-Identifier: GPL-2.0-only
"""report --format=heaptrack, opened by heaptrack_gui (Debian's heaptrack-gui) with Qt's
offscreen platform: it reads the file (its parser reads it three times, in a thread of its
own), builds its views and then waits for the user, alive. What this checks is that the GUI
survives heaptrace's file: heaptrack_gui 1.4.0 dies with SIGSEGV when an allocation-info record
is first used out of the order the records were defined, while heaptrack_print reads the same
file without a complaint and with the right totals (test_heaptrack_gui_sees_a_crash shows both
on a file made so). The GUI's figures are not read here: it has no export and no command-line
view, and its offscreen platform has no accessibility bridge (test_record checks the totals
with heaptrack_print, which shares heaptrack's reader).

"Loaded" is the process at rest: alive, and its CPU time (every thread's) unchanged for a
whole second after it used some; under a loaded machine that only takes longer."""

import os
import shutil
import signal
import subprocess
import time

from helpers import TIMEOUT, Fail, Skip, expect_rc
from test_record import heaptrack_file, heaptrack_print, recorded


def gui_exe():
    exe = shutil.which("heaptrack_gui")
    if not exe:
        raise Fail("heaptrack_gui is missing (Debian's heaptrack-gui; tests/deps.sh installs it)")
    return exe


def cpu_ticks(pid):
    """The process's user and system time, all threads, in clock ticks; None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    if fields[0] == "Z":
        return None
    return int(fields[11]) + int(fields[12])


def open_in_gui(path):
    """Run heaptrack_gui on path until it is at rest or dies: (alive, exit status, stderr).
    An alive GUI is then stopped with SIGTERM, which must end it as SIGTERM does."""
    d = os.path.dirname(path)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_RUNTIME_DIR=d,
               HOME=d)  # its settings and caches go to the scratch directory
    err_path = path + ".gui-stderr"
    with open(err_path, "w") as err:
        p = subprocess.Popen([gui_exe(), path], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err, env=env,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        last, still_since = None, None
        while time.monotonic() < deadline:
            if p.poll() is not None:
                break
            t = cpu_ticks(p.pid)
            now = time.monotonic()
            if t is not None and t == last and t > 0:
                if still_since is None:
                    still_since = now
                elif now - still_since >= 1.0:
                    break
            else:
                still_since = None
            last = t
            time.sleep(0.1)
        else:
            raise Fail("heaptrack_gui did not come to rest in %d s on %s" % (TIMEOUT, path))
        alive = p.poll() is None
        if alive:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    with open(err_path) as f:
        return alive, p.returncode, f.read()


def test_heaptrack_gui_opens():
    """history and leaks as heaptrack's file: heaptrack_gui loads each, stays up at rest, and
    ends on SIGTERM (not on a signal of its own)."""
    for name, opt in (("history", "O0"), ("leaks", "O2")):
        r, log = recorded(name, opt)
        expect_rc(r, 0)
        path = heaptrack_file(r, log)
        alive, rc, err = open_in_gui(path)
        if not alive:
            raise Fail("heaptrack_gui died on %s's file with status %s" % (name, rc),
                       err[-3000:] + "\n" + r.describe())
        if rc != -signal.SIGTERM:
            raise Fail("heaptrack_gui ended with status %s on SIGTERM" % rc, err[-3000:])


def sentinel_variant(src, dst):
    """src with one unused allocation-info record defined before the first (a copy of it),
    every + and - shifted to keep its own: the same heap to heaptrack_print, but the first
    info used is the second defined."""
    out, added = [], False
    with open(src) as f:
        for line in f.read().split("\n"):
            if line.startswith("a ") and not added:
                out.append(line)
                added = True
            if line[:2] in ("+ ", "- "):
                line = line[:2] + "%x" % (int(line[2:], 16) + 1)
            out.append(line)
    with open(dst, "w") as f:
        f.write("\n".join(out))


def test_heaptrack_gui_sees_a_crash():
    """The check above can fail: a file heaptrack_print reads with the same totals but whose
    allocation infos are used out of order makes heaptrack_gui 1.4.0 die, and open_in_gui says
    so."""
    r, log = recorded("leaks", "O0")
    expect_rc(r, 0)
    path = heaptrack_file(r, log)
    bad = os.path.join(os.path.dirname(path), "sentinel.heaptrack")
    sentinel_variant(path, bad)
    good_text, _ = heaptrack_print(path, "allocations")
    bad_text, _ = heaptrack_print(bad, "allocations")
    tail = lambda t: [l for l in t.splitlines() if l.startswith(("calls to", "peak heap",
                                                                   "total memory leaked"))]
    if tail(good_text) != tail(bad_text) or not tail(good_text):
        raise Fail("heaptrack_print reads the out-of-order variant differently",
                   "%s\n%s" % (tail(good_text), tail(bad_text)))
    alive, rc, err = open_in_gui(bad)
    if alive:
        raise Skip("this heaptrack_gui survives allocation infos used out of order")
    if rc != -signal.SIGSEGV:
        raise Fail("heaptrack_gui ended with status %s on the out-of-order file, not SIGSEGV"
                   % rc, err[-3000:])
