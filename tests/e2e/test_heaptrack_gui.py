# SPDX-License-Identifier: GPL-2.0-only
"""report --format=heaptrack, opened by heaptrack_gui (Debian's heaptrack-gui) with Qt's
offscreen platform: it reads the file (its parser reads it three times, in a thread of its
own), builds its views and then waits for the user, alive. What this checks is that the GUI
survives heaptrace's file: heaptrack_gui 1.4.0 dies with SIGSEGV when an allocation-info record
is first used out of the order the records were defined, while heaptrack_print reads the same
file without a complaint and with the right totals (test_heaptrack_gui_sees_a_crash shows both
on a file made so). The GUI's figures are not read here: it has no export and no command-line
view, and its offscreen platform has no accessibility bridge (test_record checks the totals
with heaptrack_print, which shares heaptrack's reader). What a user reads on its Summary tab is
read too, as a user would see it: the GUI on a virtual X server (Xvfb), a screenshot (xwd), the
summary's part of it read by OCR (tesseract): its calls, peak and leak must be the JSON
report's, written as heaptrack_gui writes them, and its temporary allocations heaptrack_print's.

"Loaded" is the process at rest: alive, and its CPU time (every thread's) unchanged for a
whole second after it used some; under a loaded machine that only takes longer."""

import os
import re
import shutil
import signal
import subprocess
import time

from helpers import TIMEOUT, Fail, Skip, expect_rc, run
from test_record import heaptrack_print, recorded
import helpers


def heaptrack_file(r, log):
    """report --format=heaptrack of log (helpers.HEAPTRACE of this mode: test_record's own
    report() keeps the first mode's)."""
    path = os.path.join(os.path.dirname(log), "run.heaptrack")
    p = run([helpers.HEAPTRACE, "report", log, "--format=heaptrack", "--outfile=%s" % path])
    if p.rc != 0:
        raise Fail("report --format=heaptrack exited %s" % p.rc, p.describe() + r.describe())
    return path


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


def open_in_gui(path, display=None, at_rest=None):
    """Run heaptrack_gui on path until it is at rest or dies: (alive, exit status, stderr).
    An alive GUI is then given to at_rest (if any), and stopped with SIGTERM, which must end
    it as SIGTERM does. display: an X display to show it on, else Qt's offscreen platform."""
    d = os.path.dirname(path)
    env = dict(os.environ, XDG_RUNTIME_DIR=d,
               HOME=d)  # its settings and caches go to the scratch directory
    if display:
        env.update(QT_QPA_PLATFORM="xcb", DISPLAY=display)
    else:
        env.update(QT_QPA_PLATFORM="offscreen")
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
        if alive and at_rest:
            at_rest()
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


def gui_bytes(n):
    """heaptrack_gui's byte format: B under 1000, then kB, MB, GB of 1000 with one decimal."""
    if n < 1000:
        return "%dB" % n
    for unit in ("kB", "MB", "GB"):
        n /= 1000
        if n < 1000 or unit == "GB":
            return "%.1f%s" % (n, unit)


class Xvfb:
    """A virtual X server on a free display (Xvfb -displayfd), 1600x1000."""

    def __init__(self):
        exe = shutil.which("Xvfb")
        if not exe:
            raise Fail("Xvfb is missing (Debian's xvfb; tests/deps.sh installs it)")
        r, w = os.pipe()
        self.p = subprocess.Popen([exe, "-displayfd", str(w), "-screen", "0", "1600x1000x24",
                                   "-nolisten", "tcp"], pass_fds=(w,),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        os.close(w)
        with os.fdopen(r) as f:
            num = f.readline().strip()
        if not num.isdigit():
            self.close()
            raise Fail("Xvfb gave no display")
        self.display = ":" + num

    def close(self):
        if self.p.poll() is None:
            self.p.terminate()
            self.p.wait(timeout=30)


def summary_text(display, shot):
    """The Summary tab's figures as OCR reads them: the screen's top, scaled 2x, into
    tesseract. Keeps the screenshot as shot (PNM)."""
    for tool in ("xwd", "xwdtopnm", "pamcut", "pamscale", "tesseract"):
        if not shutil.which(tool):
            raise Fail("%s is missing (x11-apps, netpbm, tesseract-ocr; tests/deps.sh installs "
                       "them)" % tool)
    p = subprocess.run("xwd -root -silent -display %s | xwdtopnm > %s" % (display, shot),
                       shell=True, stderr=subprocess.PIPE, timeout=TIMEOUT)
    if p.returncode:
        raise Fail("the screenshot failed", p.stderr.decode(errors="replace"))
    top = shot + ".summary.pnm"
    p = subprocess.run("pamcut -top 30 -height 170 %s | pamscale 2 > %s" % (shot, top),
                       shell=True, stderr=subprocess.PIPE, timeout=TIMEOUT)
    if p.returncode:
        raise Fail("cutting the screenshot failed", p.stderr.decode(errors="replace"))
    p = subprocess.run(["tesseract", top, "-"], capture_output=True, text=True, timeout=TIMEOUT)
    if p.returncode:
        raise Fail("tesseract exited %d" % p.returncode, p.stderr)
    return p.stdout


def summary_values(text):
    """{label: the line after it} of the Summary's "label:" / value lines."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return {l[:-1].strip(): lines[i + 1] for i, l in enumerate(lines[:-1]) if l.endswith(":")}


def test_heaptrack_gui_summary():
    """leaks and history: heaptrack_gui's Summary tab, read off the screen, says the JSON
    report's calls, peak and leak, and heaptrack_print's temporary allocations."""
    for name, opt in (("leaks", "O0"), ("history", "O0")):
        r, log = recorded(name, opt)
        expect_rc(r, 0)
        path = heaptrack_file(r, log)
        text, _ = heaptrack_print(path, "allocations")
        temp = re.search(r"temporary memory allocations: (\d+)", text)
        if not temp:
            raise Fail("heaptrack_print gives no temporary allocations", text[-2000:])
        s = r.report["summary"]
        want = {"calls to allocation functions": str(s["alloc_calls"]),
                "temporary allocations": temp.group(1),
                "peak heap memory consumption": gui_bytes(s["peak_live_bytes"]),
                "total memory leaked": gui_bytes(s["live_bytes"])}
        seen = {}

        def read_summary():
            # at rest by its CPU time, which also stands still while the machine is busy
            # elsewhere: the screen is read again until the Summary shows, TIMEOUT at most
            end = time.monotonic() + TIMEOUT
            while True:
                seen["text"] = summary_text(x.display, shot)
                if all(k in summary_values(seen["text"]) for k in want) or \
                        time.monotonic() > end:
                    return
                time.sleep(0.5)

        x = Xvfb()
        try:
            shot = path + ".pnm"
            alive, rc, err = open_in_gui(path, x.display, read_summary)
        finally:
            x.close()
        if not alive:
            raise Fail("heaptrack_gui died on %s's file with status %s" % (name, rc), err[-3000:])
        got = summary_values(seen["text"])
        # OCR's only liberty: the case of a letter, O for 0 (the figure is the first word)
        norm = lambda v: v.split(" ")[0].lower().replace("o", "0")
        bad = [k for k in want if norm(got.get(k, "?")) != norm(want[k])]
        if bad:
            raise Fail("heaptrack_gui's Summary says %s, expected %s (screenshot %s)"
                       % ({k: got.get(k) for k in bad}, {k: want[k] for k in bad}, shot),
                       seen["text"])
