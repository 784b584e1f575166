# SPDX-License-Identifier: GPL-2.0-only
"""--live: the terminal view under tmux (a private server, a fixed window size; keys with
send-keys, the screen with capture-pane), launched and attached, and the plain text frames
without a terminal. The target, tests/targets/grower.c, grows its heap when told to through a
FIFO and says so; the figures expected on the screen come from the constants in its source.
Every wait polls the screen (or the output) with a time limit; nothing sleeps a fixed time."""

import fcntl
import os
import re
import select
import shlex
import signal
import struct
import subprocess
import termios
import threading
import time

import helpers
from helpers import Fail, Skip, scratch, site_lines, target, need_heaptrace

WIDTH, HEIGHT = 120, 40
WAIT = 60  # seconds: only to catch a hang


def grower_figures():
    """HOLD_* and GROW_* from grower.c: (hold bytes, hold blocks, bytes per grow, blocks per grow)."""
    with open(os.path.join(helpers.TARGETS_SRC, "grower.c")) as f:
        defs = dict(re.findall(r"^#define (\w+) (\d+)$", f.read(), re.M))
    v = {k: int(x) for k, x in defs.items()}
    return (v["HOLD_BLOCKS"] * v["HOLD_SIZE"], v["HOLD_BLOCKS"],
            v["GROW_BLOCKS"] * v["GROW_SIZE"], v["GROW_BLOCKS"])


HOLD_BYTES, HOLD_BLOCKS, GROW_BYTES, GROW_BLOCKS = 0, 0, 0, 0


def prepare():
    global HOLD_BYTES, HOLD_BLOCKS, GROW_BYTES, GROW_BLOCKS
    need_heaptrace()
    if not helpers.which("tmux"):
        raise Skip("tmux is not installed (tests/deps.sh installs it)")
    HOLD_BYTES, HOLD_BLOCKS, GROW_BYTES, GROW_BLOCKS = grower_figures()
    out = subprocess.run([helpers.HEAPTRACE, "--help"], capture_output=True, text=True).stdout
    if "--live" not in out:
        raise Fail("--live is not in --help")


def rows(screen):
    """The table rows under the BYTES header: [(bytes, blocks, growth, site)]."""
    lines = screen.splitlines()
    out = []
    for i, l in enumerate(lines):
        if re.match(r"\s+BYTES\s+BLOCKS\s+GROWTH\s+ALLOCATED BY", l):
            for r in lines[i + 1:]:
                m = re.match(r"\s+(\d+)\s+(\d+)\s+([+-]\d+)\s+(.*\S)", r)
                if not m:
                    break
                out.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)))
            break
    return out


def site_text(fn):
    f, n = site_lines("grower")[fn]
    return "%s (%s:%d)" % (fn, f, n)


class Grower:
    """The FIFO grower reads its commands from."""

    def __init__(self, d):
        self.fifo = os.path.join(d, "fifo")
        os.mkfifo(self.fifo)
        # held open for reading too, so that a write never blocks on a reader still starting
        self.keep = os.open(self.fifo, os.O_RDWR)

    def send(self, line):
        fd = os.open(self.fifo, os.O_WRONLY)
        os.write(fd, (line + "\n").encode())
        os.close(fd)

    def close(self):
        os.close(self.keep)


class Tmux:
    """One command in a detached tmux session of a private server, WIDTH x HEIGHT. When the
    command ends its exit status is written to a file and the pane stays."""

    def __init__(self, name, argv):
        self.dir = scratch(name)
        self.sock = "heaptrace-e2e-%d-%s" % (os.getpid(), os.path.basename(self.dir))
        self.status_file = os.path.join(self.dir, "status")
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEAPTRACE_")}
        env["TERM"] = "xterm"  # of the client; inside, tmux sets its own
        shell = "%s; echo $? > %s; exec sleep %d" % (
            " ".join(shlex.quote(str(a)) for a in argv), shlex.quote(self.status_file), WAIT * 5)
        self.tmux("new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT), shell, env=env)

    def tmux(self, *args, env=None):
        p = subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null"] + list(args),
                           capture_output=True, text=True, env=env, timeout=WAIT)
        if p.returncode:
            raise Fail("tmux %s: %s" % (args[0], p.stderr.strip()))
        return p.stdout

    def screen(self):
        return self.tmux("capture-pane", "-p")

    def keys(self, *keys):
        self.tmux("send-keys", *keys)

    def alternate_on(self):
        return self.tmux("display-message", "-p", "#{alternate_on}").strip() == "1"

    def wait(self, pred, what):
        """Poll the screen until pred(screen) holds; return the screen."""
        end = time.monotonic() + WAIT
        while True:
            s = self.screen()
            if pred(s):
                return s
            if time.monotonic() > end:
                # CI shows the reason line only: the screen's last lines go into it
                tail = [l.strip() for l in s.splitlines() if l.strip()][-3:]
                raise Fail("the screen never showed %s; it ends: %s"
                           % (what, " | ".join(tail) or "(empty)"), s)
            time.sleep(0.05)

    def status(self):
        """heaptrace's exit status, once it ended."""
        end = time.monotonic() + WAIT
        while not os.path.exists(self.status_file) or not open(self.status_file).read():
            if time.monotonic() > end:
                raise Fail("heaptrace did not end", self.screen())
            time.sleep(0.05)
        return int(open(self.status_file).read())

    def heaptrace_pid(self):
        """The pid of heaptrace: the child of the pane's shell (or the wrapper of --mode)."""
        shell = int(self.tmux("display-message", "-p", "#{pane_pid}"))
        with open("/proc/%d/task/%d/children" % (shell, shell)) as f:
            kids = f.read().split()
        if not kids:
            raise Fail("no heaptrace under the pane's shell")
        return int(kids[0])

    def close(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)


def top_is(fn, nbytes, nblocks, growth=None):
    def pred(s):
        r = rows(s)
        return bool(r) and r[0][3] == site_text(fn) and r[0][:2] == (nbytes, nblocks) and (
            growth is None or r[0][2] == growth)
    return pred


def launched(name, g, opts=()):
    return Tmux(name, [helpers.HEAPTRACE, "--live"] + list(opts)
                + [target("grower"), g.fifo])


def test_live_launched_sort_and_q():
    """The growing site on top with its bytes after a refresh; s cycles size, count, growth
    (the header says which, the order follows); q detaches and the program runs on with its
    own output (also what it wrote while the view was up) and exit status."""
    prepare()
    d = scratch("live-launched")
    g = Grower(d)
    out = os.path.join(d, "report.json")
    t = launched("live-launched", g, ["--interval=0.3", "--format=json", "--outfile=" + out])
    try:
        t.wait(top_is("hold_many", HOLD_BYTES, HOLD_BLOCKS), "hold_many's blocks")
        if not t.alternate_on():
            raise Fail("the view is not on the alternate screen", t.screen())
        for n in (1, 2):
            g.send("grow")
            t.wait(lambda s, n=n: "grower: grew %d" % n in s, "the program's 'grew %d'" % n)
        s = t.wait(top_is("grow_site", 2 * GROW_BYTES, 2 * GROW_BLOCKS),
                   "grow_site on top with %d bytes" % (2 * GROW_BYTES))
        if "sort: size" not in s or [r[3] for r in rows(s)][:2] != [
                site_text("grow_site"), site_text("hold_many")]:
            raise Fail("by size: expected grow_site, then hold_many", s)
        t.keys("s")
        s = t.wait(lambda s: "sort: count" in s, "sort: count")
        if [r[3] for r in rows(s)][:2] != [site_text("hold_many"), site_text("grow_site")]:
            raise Fail("by count: expected hold_many (%d blocks) first" % HOLD_BLOCKS, s)
        t.keys("s")
        t.wait(lambda s: "sort: growth" in s, "sort: growth")
        # the growth of one screen shows for one refresh: grow until a screen is caught
        for n in range(3, 9):
            g.send("grow")
            try:
                end = time.monotonic() + 3
                while time.monotonic() < end:
                    r = rows(t.screen())
                    if r and r[0][3] == site_text("grow_site") and r[0][2] > 0:
                        # a screen may come in the middle of a grow: whole blocks
                        if r[0][2] % (GROW_BYTES // GROW_BLOCKS) or r[1][2] != 0:
                            raise Fail("by growth: grow_site grew %d, hold_many %d" %
                                       (r[0][2], r[1][2]), t.screen())
                        break
                    time.sleep(0.05)
                else:
                    continue
                break
            except IndexError:
                raise Fail("by growth: fewer than two rows", t.screen())
        else:
            raise Fail("by growth: grow_site never came first with its growth", t.screen())
        grows = n
        t.wait(top_is("grow_site", grows * GROW_BYTES, grows * GROW_BLOCKS),
               "grow_site with %d bytes" % (grows * GROW_BYTES))
        t.keys("q")
        # the view shows the program's last lines too: wait for the normal screen (no rows)
        s = t.wait(lambda s: "grower: ready" in s and "grower: grew %d" % grows in s and
                   not rows(s), "the program's output after q")
        if t.alternate_on():
            raise Fail("still on the alternate screen after q", s)
        g.send("say output after the detach")
        g.send("exit 7")
        rc = t.status()
        s = t.wait(lambda s: "output after the detach" in s, "the program's output after q")
        if rc != 7:
            raise Fail("heaptrace exited %d, the program 7" % rc, s)
        rep = helpers.parse_json_reports(open(out).read())[-1]
        bts = {tuple(f["function"] for f in b["frames"][1:2]): b for b in rep["backtraces"]}
        got = bts.get(("grow_site",), {}).get("size")
        if got != grows * GROW_BYTES:
            raise Fail("final report: grow_site holds %s bytes, expected %d"
                       % (got, grows * GROW_BYTES))
    finally:
        t.close()
        g.close()


def test_live_frames_and_pause():
    """Enter shows the selected backtrace's frames with file:line; p pauses."""
    prepare()
    d = scratch("live-frames")
    g = Grower(d)
    t = launched("live-frames", g, ["--interval=0.3"])
    try:
        g.send("grow")
        t.wait(top_is("grow_site", GROW_BYTES, GROW_BLOCKS), "grow_site on top")
        t.keys("Enter")
        f, n = site_lines("grower")["grow_site"]
        s = t.wait(lambda s: re.search(r"^\s+1\s+0x[0-9a-f]+\s+grow_site\+0x[0-9a-f]+\s+%s:%d"
                                       % (re.escape(f), n), s, re.M), "grow_site's frame 1")
        if not re.search(r"^\s+0\s+0x[0-9a-f]+\s+malloc\b", s, re.M):
            raise Fail("frame 0 is not malloc", s)
        t.keys("Enter")
        t.wait(lambda s: rows(s), "the table again")
        t.keys("p")
        t.wait(lambda s: "PAUSED" in s, "PAUSED")
        g.send("grow")
        t.wait(lambda s: "grower: grew 2" in s, "the program's 'grew 2' while paused")
        if rows(t.screen())[0][0] != GROW_BYTES:
            raise Fail("the figures changed while paused", t.screen())
        t.keys("p")
        t.wait(top_is("grow_site", 2 * GROW_BYTES, 2 * GROW_BLOCKS), "the figures after pause")
        t.keys("q")
        g.send("exit 0")
        if t.status() != 0:
            raise Fail("heaptrace exited %d" % t.status(), t.screen())
    finally:
        t.close()
        g.close()


def test_live_ctrl_c():
    """Ctrl-C in the view detaches like q: the program gets no SIGINT and runs on."""
    prepare()
    d = scratch("live-ctrl-c")
    g = Grower(d)
    t = launched("live-ctrl-c", g, ["--interval=0.3"])
    try:
        t.wait(top_is("hold_many", HOLD_BYTES, HOLD_BLOCKS), "the first screen")
        t.keys("C-c")
        t.wait(lambda s: "grower: ready" in s and not rows(s), "the normal screen")
        g.send("say alive after ctrl-c")
        g.send("exit 3")
        rc = t.status()
        s = t.wait(lambda s: "alive after ctrl-c" in s, "the program's output")
        if rc != 3 or t.alternate_on():
            raise Fail("exit status %d (expected 3), alternate screen %s" % (rc, t.alternate_on()),
                       s)
    finally:
        t.close()
        g.close()


def test_live_signals():
    """SIGTERM and SIGHUP sent to heaptrace: the terminal is restored, the program runs on."""
    prepare()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        d = scratch("live-%s" % sig.name)
        g = Grower(d)
        t = launched("live-%s" % sig.name, g, ["--interval=0.3"])
        try:
            t.wait(top_is("hold_many", HOLD_BYTES, HOLD_BLOCKS), "the first screen")
            os.kill(t.heaptrace_pid(), sig)
            t.wait(lambda s: "grower: ready" in s and not rows(s), "the normal screen")
            g.send("say alive after %s" % sig.name)
            g.send("exit 4")
            rc = t.status()
            s = t.wait(lambda s: "alive after %s" % sig.name in s,
                       "the program's output after %s (exit status %d)" % (sig.name, rc))
            if rc != 4 or t.alternate_on():
                raise Fail("%s: exit status %d (expected 4), alternate screen %s"
                           % (sig.name, rc, t.alternate_on()), s)
        finally:
            t.close()
            g.close()


class StalledTerminal:
    """A terminal of our own (a pseudo-terminal, WIDTH x HEIGHT) for heaptrace's standard output
    and input, read by a thread into out, which stops reading while stalled is clear, as a
    terminal that is scrolled back or far away does. heaptrace's standard error goes to a file:
    its messages do not cut the program's lines."""

    def __init__(self, argv, err):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", HEIGHT, WIDTH, 0, 0))
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEAPTRACE_")}
        env["TERM"] = "xterm"
        with open(err, "w") as e:
            self.p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=e, env=env,
                                      start_new_session=True)
        os.close(slave)
        self.out, self.lock = bytearray(), threading.Lock()
        self.reading = threading.Event()
        self.reading.set()
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        while self.reading.wait():
            try:
                b = os.read(self.master, 1024)
            except OSError:  # EIO: heaptrace and what it started closed the terminal
                return
            if not b:
                return
            with self.lock:
                self.out += b

    def wait(self, pred, what):
        end = time.monotonic() + WAIT
        while True:
            with self.lock:
                got = bytes(self.out)
            if pred(got):
                return got
            if time.monotonic() > end:
                raise Fail("the terminal never showed %s" % what, got[-2000:].decode("latin-1"))
            time.sleep(0.05)

    def close(self):
        self.reading.set()
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self.reader.join(WAIT)
        os.close(self.master)


def test_live_output_to_stalled_terminal():
    """What the program writes after the view closed reaches the terminal whole, even when the
    terminal takes nothing until after the program ended: heaptrace ends after the last byte.
    The program writes more than one pseudo-terminal holds (about 18 KiB): the rest waits in the
    program's, for heaptrace to copy."""
    prepare()
    d = scratch("live-stalled-terminal")
    g = Grower(d)
    t = StalledTerminal([helpers.HEAPTRACE, "--live", "--interval=0.3", target("grower"),
                         g.fifo], os.path.join(d, "stderr"))
    n = 480  # lines of 64 bytes: 30 KiB
    try:
        t.wait(lambda b: b"ALLOCATED BY" in b, "the first screen")
        os.kill(t.p.pid, signal.SIGTERM)
        got = t.wait(lambda b: re.search(rb"\x1b\[\?1049l.*grower: ready (\d+)", b, re.S),
                     "the normal screen")
        pid = int(re.search(rb"\x1b\[\?1049l.*grower: ready (\d+)", got, re.S).group(1))
        t.reading.clear()
        fd = os.open(g.fifo, os.O_WRONLY)
        try:
            lines = "".join("say line %05d %s\n" % (i, "x" * 49) for i in range(n))
            os.write(fd, (lines + "exit 6\n").encode())
        finally:
            os.close(fd)
        end = time.monotonic() + WAIT
        while os.path.exists("/proc/%d" % pid):  # ended and reaped by heaptrace
            if time.monotonic() > end:
                raise Fail("the program did not end with its output unread")
            time.sleep(0.05)
        time.sleep(1)  # the terminal stalls on: longer than heaptrace lingers (200 ms)
        t.reading.set()
        rc = t.p.wait(WAIT)
        t.reader.join(WAIT)
        got = [int(x) for x in re.findall(rb"line (\d{5}) x{49}\r*\n", bytes(t.out))]
        if rc != 6 or got != list(range(n)):
            missing = sorted(set(range(n)) - set(got))
            raise Fail("heaptrace exited %d (the program 6); of the program's %d lines the "
                       "terminal got %d, %d missing (from %s)"
                       % (rc, n, len(got), len(missing), missing[:1]))
    finally:
        t.close()
        g.close()


def test_live_attached():
    """-p: the growing site on top after a refresh, q detaches, the process runs on untraced
    with its own output and exit status."""
    prepare()
    d = scratch("live-attached")
    g = Grower(d)
    p = subprocess.Popen([target("grower"), g.fifo], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    t = None
    try:
        ready, _, _ = select.select([p.stdout], [], [], WAIT)
        line = p.stdout.readline() if ready else b""
        m = re.fullmatch(rb"grower: ready (\d+)\n", line)
        if not m:
            raise Fail("grower did not get ready (said %r)" % line)
        pid = int(m.group(1))
        t = Tmux("live-attached-view", [helpers.HEAPTRACE, "--live", "--interval=0.3",
                                        "-p", pid])
        t.wait(lambda s: rows(s), "the first screen")
        g.send("grow")
        t.wait(top_is("grow_site", GROW_BYTES, GROW_BLOCKS), "grow_site on top")
        t.keys("q")
        rc = t.status()
        if rc != 0:
            raise Fail("heaptrace -p exited %d" % rc, t.screen())
        if any(helpers.tracer_pids(pid).values()):
            raise Fail("still traced after q: %s" % helpers.tracer_pids(pid))
        g.send("say alive after detach")
        g.send("exit 5")
        out, err = p.communicate(timeout=WAIT)
        want = "grower: grew 1\nalive after detach\n"
        if p.returncode != 5 or out.decode() != want:
            raise Fail("after the detach grower exited %s and said %r, expected 5 and %r"
                       % (p.returncode, out.decode(), want))
    finally:
        if t:
            t.close()
        if p.returncode is None:
            p.kill()
            p.communicate()
        g.close()


def test_live_plain_text():
    """Standard output not a terminal: a plain text frame every --interval, on standard output
    (with the program's own); the frame after a grow has grow_site first with its growth."""
    prepare()
    d = scratch("live-plain")
    g = Grower(d)
    p = subprocess.Popen([helpers.HEAPTRACE, "--live", "--interval=0.2", target("grower"),
                          g.fifo], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    text = ""
    try:
        def read_until(pred, what):
            nonlocal text
            end = time.monotonic() + WAIT
            while not pred(text):
                ready, _, _ = select.select([p.stdout], [], [], 1)
                if ready:
                    chunk = os.read(p.stdout.fileno(), 65536).decode()
                    if not chunk:
                        raise Fail("heaptrace's output ended before %s" % what, text[-3000:])
                    text += chunk
                if time.monotonic() > end:
                    raise Fail("no %s in heaptrace's output" % what, text[-3000:])

        def frames():
            return [f for f in text.split("heaptrace --live: ")[1:] if f.endswith("\n\n")]

        read_until(lambda _: any(rows(f) and rows(f)[0][3] == site_text("hold_many")
                                 for f in frames()), "a frame with hold_many")
        g.send("grow")
        full = (GROW_BYTES, GROW_BLOCKS)
        read_until(lambda _: any(rows(f) and rows(f)[0][3] == site_text("grow_site")
                                 and rows(f)[0][:2] == full for f in frames()),
                   "a frame with grow_site first, %d bytes in %d blocks" % full)
        # a frame may come in the middle of the grow: the growths up to the full one add up
        grown = 0
        for f in frames():
            r = [x for x in rows(f) if x[3] == site_text("grow_site")]
            grown += r[0][2] if r else 0
            if r and r[0][:2] == full:
                break
        if grown != GROW_BYTES:
            raise Fail("grow_site's growth adds up to %d, expected %d" % (grown, GROW_BYTES),
                       text[-3000:])
        g.send("exit 0")
        out, err = p.communicate(timeout=WAIT)
        text += out.decode()
        if p.returncode != 0 or "grower: grew 1\n" not in text:
            raise Fail("heaptrace exited %s; the program's line is %s" % (
                p.returncode, "there" if "grower: grew 1" in text else "missing"), err.decode())
        if "\x1b" in text:
            raise Fail("terminal escapes in the plain text", text[-2000:])
    finally:
        if p.returncode is None:
            # heaptrace and the program (its own session): the program holds the pipes too
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.communicate(timeout=WAIT)
        g.close()


def test_live_plain_sampled():
    """--sample-bytes: the plain frames' header says the rows are sampled, and of what (the
    figures beside it are the exact summary's)."""
    if helpers.MODE != "stubs":
        raise Skip("the same view in both modes")
    need_heaptrace()
    p = helpers.run([helpers.HEAPTRACE, "--live", "--interval=0.05", "--sample-bytes=4096",
                     target("sampling"), "50"], timeout=WAIT)
    heads = [line for line in p.stdout.splitlines() if line.startswith("allocations ")]
    if p.rc != 0 or not heads:
        raise Fail("heaptrace --live exited %s with %d frames" % (p.rc, len(heads)),
                   p.describe())
    if not all(line.endswith("   rows sampled (1 in 4096 bytes)") for line in heads):
        raise Fail("a frame's header does not say the rows are sampled: %r" % heads[-1])


def test_live_usage():
    """--live takes no --count, no --core, no --record=-."""
    prepare()
    for args in (["--live", "--interval=1", "--count=2", "true"],
                 ["--live", "--core=x"], ["--live", "--record=-", "-p", "1"]):
        r = helpers.run([helpers.HEAPTRACE] + args)
        helpers.one_error_line(r, 1)


def demo_log(d):
    log = os.path.join(d, "demo.log")
    r = helpers.run([helpers.HEAPTRACE, "--record=" + log, "--outfile=/dev/null",
                     target("demo")])
    if r.rc != 0:
        raise Fail("recording demo failed", r.describe())
    return open(log, "rb").read()


def test_report_progress():
    """heaptrace report on a log that comes slowly: after half a second a progress line on the
    terminal (standard error), erased at the end; none when standard error is a file."""
    prepare()
    d = scratch("report-progress")
    data = demo_log(d)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    out = os.path.join(d, "report.txt")
    t = Tmux("report-progress", ["sh", "-c", 'exec "$0" report - --outfile="$1" < "$2"',
                                 helpers.HEAPTRACE, out, fifo])
    fd = os.open(fifo, os.O_WRONLY)
    try:
        # a byte at a time until the line shows: every read of heaptrace's may redraw it
        pos = 0
        end = time.monotonic() + WAIT
        while "heaptrace: standard input:" not in t.screen():
            if pos >= len(data) - 1 or time.monotonic() > end:
                raise Fail("no progress line after %d of %d bytes" % (pos, len(data)),
                           t.screen())
            os.write(fd, data[pos:pos + 1])
            pos += 1
            time.sleep(0.05)
        s = t.screen()
        if not re.search(r"^heaptrace: standard input: \d+\.\d MiB\s*$", s, re.M):
            raise Fail("the progress line is not one line of bytes read", s)
        os.write(fd, data[pos:])
        os.close(fd)
        fd = -1
        if t.status() != 0:
            raise Fail("report exited %d" % t.status(), t.screen())
        if "heaptrace:" in t.screen():
            raise Fail("the progress line was not erased", t.screen())
        if "cache_new_bucket" not in open(out).read():
            raise Fail("the report misses the demo's sites", open(out).read())
    finally:
        if fd >= 0:
            os.close(fd)
        t.close()
    # standard error a file: the same slow log gives no progress text
    p = subprocess.Popen([helpers.HEAPTRACE, "report", "-", "--outfile=" + out],
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    start = time.monotonic()
    for i in range(len(data)):
        p.stdin.write(data[i:i + 1])
        p.stdin.flush()
        if time.monotonic() - start < 1.0:
            time.sleep(0.005)
    _, err = p.communicate(timeout=WAIT)
    if p.returncode != 0 or err:
        raise Fail("report with stderr a pipe: exit %d, said %r" % (p.returncode, err))
