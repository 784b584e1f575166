# SPDX-License-Identifier: GPL-2.0-only
"""--serve: heaptrace as a pprof endpoint and a Prometheus target.

The traced program is tests/targets/served.c, whose heap changes only on a command from the
test (a line on its standard input, answered "ok" once done), so its heap is known at every
moment. The profiles are read by Go's own pprof (`go tool pprof`, Debian's golang-go) over
HTTP and compared per function with heaptrace's JSON report of the same moment (SIGUSR1, the
target idle) and with what the target allocated; /metrics is scraped by Debian's Prometheus
and read back through its query API."""

import collections
import http.client
import json
import os
import re
import resource
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import helpers
from helpers import Fail, Skip, scratch, target

SITE_A, SITE_B, SITE_C = 1000, 4096, 65536  # the target's block sizes (served.c)


def wait_line(f, timeout, what):
    """One line of the pipe f, within timeout seconds (only to catch hangs)."""
    r, _, _ = select.select([f], [], [], timeout)
    if not r:
        raise Fail("no %s within %ss" % (what, timeout))
    return f.readline()


class Target:
    """A served process of our own (for -p), driven through its standard input."""

    def __init__(self, opt="O0"):
        self.p = subprocess.Popen([target("served", opt)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, start_new_session=True)
        self.pid = self.p.pid

    def cmd(self, c):
        self.p.stdin.write((c + "\n").encode())
        self.p.stdin.flush()
        if c == "q":
            return
        line = wait_line(self.p.stdout, helpers.TIMEOUT, "answer to %r" % c)
        if line != b"ok\n":
            raise Fail("the target answered %r to %r" % (line, c))

    def stop(self):
        if self.p.poll() is None:
            self.cmd("q")
        try:
            return self.p.wait(timeout=helpers.TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise Fail("the served target did not end")


class Served(Target):
    """heaptrace --serve=127.0.0.1:0 --format=json --outfile=F OPTS, launching served (its
    standard input and output are the target's) or attached to pids."""

    def __init__(self, name, opts=(), pids=None, opt="O0", serve="127.0.0.1:0"):
        helpers.need_heaptrace()
        self.dir = scratch(name)
        self.outfile = os.path.join(self.dir, "report")
        argv = [helpers.HEAPTRACE, "--serve=" + serve, "--format=json",
                "--outfile=" + self.outfile] + list(opts)
        argv += ["-p", ",".join(str(p) for p in pids)] if pids else ["--", target("served", opt)]
        self.argv = argv
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, start_new_session=True, cwd=self.dir)
        self.pid = self.p.pid
        self.err = []
        self.url = None
        first = wait_line(self.p.stderr, helpers.TIMEOUT, "'serving on' line").decode()
        self.err.append(first)
        m = re.match(r"heaptrace: serving on (http://\S+/)$", first.strip())
        if not m:
            self.kill()
            raise Fail("heaptrace's first line is not 'serving on URL'", self.describe())
        self.url = m.group(1)
        self.host, self.port = urllib.parse.urlsplit(self.url).netloc.rsplit(":", 1)
        self.port = int(self.port)
        # the rest of heaptrace's standard error, so that the pipe never fills
        self.reader = threading.Thread(target=self._read_err, daemon=True)
        self.reader.start()
        self.reports_seen = 0

    def _read_err(self):
        for line in self.p.stderr:
            self.err.append(line.decode("utf-8", "replace"))

    def describe(self):
        return "$ %s\n--- stderr ---\n%s" % (" ".join(self.argv), "".join(self.err)[-4000:])

    def fail(self, reason, details=""):
        self.kill()
        raise Fail(reason, details + "\n" + self.describe())

    def kill(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()

    def get(self, path, timeout=60):
        """GET path: (status, body)."""
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def report_now(self):
        """heaptrace's JSON report now (SIGUSR1), the target being idle."""
        os.kill(self.pid, signal.SIGUSR1)
        self.reports_seen += 1
        deadline = time.monotonic() + helpers.TIMEOUT
        while time.monotonic() < deadline:
            if os.path.exists(self.outfile):
                with open(self.outfile) as f:
                    lines = [x for x in f.read().splitlines() if x.strip()]
                if len(lines) >= self.reports_seen and lines[-1].endswith("}"):
                    try:
                        return json.loads(lines[self.reports_seen - 1])
                    except ValueError:
                        pass
            time.sleep(0.02)  # polling a file heaptrace writes: no result depends on it
        self.fail("no SIGUSR1 report within %ss" % helpers.TIMEOUT)

    def finish(self, quit_target=True):
        """The target ends (q); heaptrace's exit status."""
        if quit_target:
            self.cmd("q")
        try:
            rc = self.p.wait(timeout=helpers.TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail("heaptrace did not end after its target")
        self.reader.join(5)
        return rc

    def final_report(self):
        with open(self.outfile) as f:
            lines = [x for x in f.read().splitlines() if x.strip()]
        return json.loads(lines[-1])


# ---------------------------------------------------------------------------------------------
# go tool pprof


def go_pprof(args, source, d):
    """go tool pprof ARGS SOURCE (a URL or a file), its profiles saved under d."""
    go = shutil.which("go")
    if not go:
        raise Fail("go is missing (golang-go; tests/deps.sh --tests installs it)")
    env = dict(os.environ, PPROF_TMPDIR=d, HOME=d, GOCACHE=os.path.join(d, "gocache"))
    p = helpers.run([go, "tool", "pprof"] + args + [source], env_replace=env)
    if p.rc != 0:
        raise Fail("go tool pprof exited %s" % p.rc, p.describe())
    return p.stdout


def pprof_top(source, index, d):
    """go tool pprof -top for one sample type: ({function: cum}, total, text)."""
    text = go_pprof(["-top", "-sample_index=" + index, "-nodefraction=0", "-edgefraction=0",
                     "-unit=B" if "space" in index else "-unit=count"], source, d)
    cum, total = {}, None
    for line in text.splitlines():
        m = re.match(r"Showing nodes accounting for \S+, \S+ of (\d+)B? total", line)
        if m:
            total = int(m.group(1))
        m = re.match(r"\s*(\d+)B?\s+\S+%\s+\S+%\s+(\d+)B?\s+\S+%\s+(.+)$", line)
        if m:
            cum[m.group(3)] = int(m.group(2))
    if total is None:
        raise Fail("pprof -top printed no total", text)
    return cum, total, text


def per_function(backtraces, key):
    """Cumulative key per function over the JSON report's backtraces (test_pprof's rule)."""
    cum = collections.Counter()
    for b in backtraces:
        names = {fr["function"] or fr["module"] or "??" for fr in b["frames"]}
        names |= {(i["function"] or "??") + " (inline)" for fr in b["frames"]
                  for i in fr.get("inlined", [])}
        for name in names:
            cum[name] += b[key]
    return {k: v for k, v in cum.items() if v}


def compare_with_json(s, source, report, d):
    """go tool pprof's inuse figures per function and its totals are the JSON report's."""
    for index, key, total in (("inuse_space", "size", "live_bytes"),
                              ("inuse_objects", "count", "live_blocks")):
        cum, tot, text = pprof_top(source, index, d)
        if tot != report["summary"][total]:
            s.fail("pprof's %s total is %d, the JSON report's %s %d"
                   % (index, tot, total, report["summary"][total]), text)
        cum = {k: v for k, v in cum.items() if v}
        want = per_function(report["backtraces"], key)
        if cum != want:
            s.fail("%s per function differs from the JSON report" % index,
                   "pprof: %s\njson:  %s\n%s" % (cum, want, text))
    for index, total in (("alloc_space", "total_allocated_bytes"),
                         ("alloc_objects", "alloc_calls")):
        _, tot, text = pprof_top(source, index, d)
        if tot != report["summary"][total]:
            s.fail("pprof's %s total is %d, the JSON report's %s %d"
                   % (index, tot, total, report["summary"][total]), text)


# ---------------------------------------------------------------------------------------------
# The profiles


@helpers.variants(*helpers.OPTS)
def test_heap_profile_is_the_json_report(opt):
    """go tool pprof fetches /debug/pprof/heap over HTTP: per function, inuse_space and
    inuse_objects are the JSON report's of the same moment, the alloc totals its summary's, and
    site_a and site_b hold what the target allocated; after site_a's blocks are freed, the next
    profile says so. -raw shows Go's heap profile's sample and period types, period 1, and the
    executable's mapping with its build-id."""
    s = Served("serve-heap-" + opt, opt=opt)
    try:
        s.cmd("a 3")
        s.cmd("b 2")
        url = s.url + "debug/pprof/heap"
        report = s.report_now()
        compare_with_json(s, url, report, s.dir)
        cum, _, text = pprof_top(url, "inuse_space", s.dir)
        if cum.get("site_a") != 3 * SITE_A or cum.get("site_b") != 2 * SITE_B:
            s.fail("site_a/site_b hold %s/%s bytes, the target allocated %d/%d"
                   % (cum.get("site_a"), cum.get("site_b"), 3 * SITE_A, 2 * SITE_B), text)
        raw = go_pprof(["-raw"], url, s.dir)
        for want in ("PeriodType: space bytes", "Period: 1",
                     "alloc_objects/count alloc_space/bytes inuse_objects/count "
                     "inuse_space/bytes"):
            if want not in raw:
                s.fail("pprof -raw does not show %r" % want, raw[:3000])
        exe = os.path.realpath(target("served", opt))
        if not any(exe in line and re.search(r"\b[0-9a-f]{40}\b", line)
                   for line in raw.splitlines()):
            s.fail("no mapping of %s with its build-id" % exe, raw[-3000:])
        s.cmd("f")
        report = s.report_now()
        compare_with_json(s, url, report, s.dir)
        cum, _, text = pprof_top(url, "inuse_space", s.dir)
        if "site_a" in cum and cum["site_a"]:
            s.fail("site_a's blocks were freed, the profile still holds %d bytes"
                   % cum["site_a"], text)
        cum, _, text = pprof_top(s.url + "debug/pprof/allocs", "alloc_space", s.dir)
        if cum.get("site_a") != 3 * SITE_A:
            s.fail("allocs: site_a allocated %s bytes, the target %d"
                   % (cum.get("site_a"), 3 * SITE_A), text)
        if s.finish() != 0:
            s.fail("heaptrace did not exit with its program's status 0")
        final = s.final_report()
        if final["summary"]["alloc_calls"] != 5 or final["summary"]["free_calls"] != 3:
            s.fail("final report: %d calls, %d frees; the target made 5 and 3"
                   % (final["summary"]["alloc_calls"], final["summary"]["free_calls"]))
    finally:
        s.kill()


def test_sampled_profile():
    """--sample-bytes=2000 (test_sampling.py checks the estimates): go tool pprof -raw shows
    period 2000 and a comment that the values are estimates; per function, the inuse figures are
    the JSON report's of the same moment (the same estimates), and site_b's blocks of 4096
    bytes, at or above 2000, are exact."""
    s = Served("serve-sampled", opts=["--sample-bytes=2000"])
    try:
        s.cmd("a 60")
        s.cmd("b 3")
        url = s.url + "debug/pprof/heap"
        report = s.report_now()
        for index, key in (("inuse_space", "size"), ("inuse_objects", "count")):
            cum, _, text = pprof_top(url, index, s.dir)
            cum = {k: v for k, v in cum.items() if v}
            want = per_function(report["backtraces"], key)
            if cum != want:
                s.fail("%s per function differs from the JSON report" % index,
                       "pprof: %s\njson:  %s\n%s" % (cum, want, text))
        if want.get("site_b") != 3:
            s.fail("site_b holds %s blocks, the target made 3" % want.get("site_b"))
        raw = go_pprof(["-raw"], url, s.dir)
        for line in ("Period: 2000", "sampled by --sample-bytes: the values are estimates"):
            if line not in raw:
                s.fail("pprof -raw does not show %r" % line, raw[:3000])
        if s.finish() != 0:
            s.fail("heaptrace did not exit with its program's status 0")
    finally:
        s.kill()


def test_delta_over_seconds():
    """/debug/pprof/allocs?seconds=3 (Go's delta): exactly what the target allocated in the
    window (site_a: 4 blocks made during it), nothing of what was made before it; the page at
    / is served meanwhile."""
    s = Served("serve-delta")
    try:
        s.cmd("b 2")  # before the window: not in the delta
        got = {}

        def fetch():
            got["r"] = s.get("/debug/pprof/allocs?seconds=3")

        t = threading.Thread(target=fetch)
        t.start()
        # the window's start is taken at the loop's next turn (milliseconds): the allocation
        # comes well inside the 3 s (not asserted: a late one would fail the figures below)
        time.sleep(1)
        s.cmd("a 4")
        status, page = s.get("/")
        if status != 200 or b"heaptrace-data" not in page:
            s.fail("/ answered %d without the report's page" % status)
        t.join(helpers.TIMEOUT)
        status, body = got.get("r", (None, b""))
        if status != 200 or body[:2] != b"\x1f\x8b":
            s.fail("?seconds=3 answered %s, %d bytes" % (status, len(body)))
        path = os.path.join(s.dir, "delta.pb.gz")
        with open(path, "wb") as f:
            f.write(body)
        for index, want in (("alloc_space", {"site_a": 4 * SITE_A}),
                            ("alloc_objects", {"site_a": 4})):
            cum, tot, text = pprof_top(path, index, s.dir)
            leaf = {k: v for k, v in cum.items() if k.startswith("site_") and v}
            if leaf != want or tot != sum(want.values()):
                s.fail("the delta's %s is %s (total %d), the target made %s in the window"
                       % (index, leaf, tot, want), text)
        cum, tot, text = pprof_top(path, "inuse_space", s.dir)
        if tot != 4 * SITE_A:
            s.fail("the delta's inuse_space is %d, the heap grew by %d" % (tot, 4 * SITE_A),
                   text)
        for bad in ("0", "-1", "x", "3601"):
            status, _ = s.get("/debug/pprof/heap?seconds=" + bad)
            if status != 400:
                s.fail("?seconds=%s answered %d, not 400" % (bad, status))
        s.finish()
    finally:
        s.kill()


# ---------------------------------------------------------------------------------------------
# Prometheus


def free_port():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def prom_query(base, q):
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())["data"]["result"]


def test_prometheus_scrapes_metrics():
    """Debian's Prometheus scrapes /metrics every second: heaptrace_live_bytes grows by one of
    site_c's 64 KiB blocks at each step the test makes the target take (read back from its
    query API), heaptrace_alloc_calls_total counts the calls, and the series carry the pid and
    command. One mode: Prometheus' start-up costs seconds."""
    if helpers.MODE != "stubs":
        raise Skip("Prometheus is started once, in stubs mode")
    prom = shutil.which("prometheus")
    if not prom:
        raise Fail("prometheus is missing (tests/deps.sh --tests installs it)")
    s = Served("serve-prometheus")
    pp = None
    try:
        d = s.dir
        port = free_port()
        with open(os.path.join(d, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: heaptrace\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % s.port)
        pp = subprocess.Popen([prom, "--config.file=" + os.path.join(d, "prometheus.yml"),
                               "--storage.tsdb.path=" + os.path.join(d, "tsdb"),
                               "--web.listen-address=127.0.0.1:%d" % port],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "prom.log"),
                                                                     "w"),
                              start_new_session=True)
        base = "http://127.0.0.1:%d" % port
        q = 'heaptrace_live_bytes{heap="malloc"}'

        def wait_value(query, want):
            deadline = time.monotonic() + 60
            last = None
            while time.monotonic() < deadline:
                try:
                    res = prom_query(base, query)
                except OSError:
                    res = []
                if res:
                    last = res
                    if float(res[0]["value"][1]) == want:
                        return res[0]
                time.sleep(0.2)  # polling Prometheus: no figure depends on when
            with open(os.path.join(d, "prom.log")) as f:
                log = f.read()[-2000:]
            s.fail("Prometheus never showed %s = %s (last: %s)" % (query, want, last), log)

        first = wait_value(q, 0)
        labels = first["metric"]
        if labels.get("pid") != str(s.pid) and not labels.get("command", "").endswith("served"):
            s.fail("the series' labels are %s" % labels)
        for step in range(1, 5):
            s.cmd("c 1")
            wait_value(q, step * SITE_C)
            wait_value('heaptrace_alloc_calls_total{heap="malloc"}', step)
        # the stored series: only multiples of the block, never decreasing
        res = prom_query(base, q + "[2m]")
        values = [int(float(v)) for _, v in res[0]["values"]]
        if any(v % SITE_C for v in values) or values != sorted(values) or \
                values[-1] != 4 * SITE_C:
            s.fail("the series of live bytes is %s" % values)
        for name in ("process_cpu_seconds_total", "process_resident_memory_bytes",
                     "heaptrace_ring_waiting_bytes", "heaptrace_peak_live_bytes"):
            if not prom_query(base, name):
                s.fail("Prometheus has no series %s" % name)
        s.finish()
    finally:
        if pp:
            pp.terminate()
            try:
                pp.wait(30)
            except subprocess.TimeoutExpired:
                pp.kill()
        s.kill()


# ---------------------------------------------------------------------------------------------
# Abuse


def raw_request(s, data, timeout=15, read=True):
    """Send data on a new connection; heaptrace's answer (bytes, maybe empty)."""
    with socket.create_connection((s.host, s.port), timeout=timeout) as so:
        try:
            so.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        out = b""
        while read:
            try:
                chunk = so.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            out += chunk
        return out


def status_of(answer):
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", answer)
    return int(m.group(1)) if m else None


def test_abuse():
    """On loopback: 1,000 idle connections at once, garbage, a request trickled a byte at a
    time, 10 MB of headers, path traversal in several encodings, other methods. Each gets a
    400/404/405/431 (or is closed), a real request still gets its answer meanwhile, and at the
    end the target's counts are exact and the profile right."""
    s = Served("serve-abuse")
    idle = []
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        s.cmd("a 2")
        # 1,000 idle connections (this process needs the fds; heaptrace keeps at most 32)
        if soft < 1100 <= hard or hard == resource.RLIM_INFINITY:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1100), hard))
        for _ in range(1000):
            so = socket.socket()
            so.setblocking(False)
            so.connect_ex((s.host, s.port))
            idle.append(so)
        s.cmd("a 3")
        status, body = s.get("/metrics", timeout=60)
        if status != 200 or b"heaptrace_live_blocks" not in body:
            s.fail("/metrics behind 1,000 idle connections answered %d" % status)
        fds = len(os.listdir("/proc/%d/fd" % s.pid))
        if fds > 64:
            s.fail("heaptrace has %d file descriptors open with 1,000 clients" % fds)
        for so in idle:
            so.close()
        idle = []
        cases = [
            (b"\x00\xff\xfe garbage \r\n\r\n", (400,)),
            (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", (400,)),  # a TLS hello
            (b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", (404,)),
            (b"GET /%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", (404,)),
            (b"GET /debug/pprof/..%2f..%2f..%2fetc%2fpasswd HTTP/1.1\r\n\r\n", (404,)),
            (b"GET //etc/passwd HTTP/1.1\r\n\r\n", (404,)),
            (b"GET /metrics/../../../etc/passwd HTTP/1.1\r\n\r\n", (404,)),
            (b"GET http://127.0.0.1/etc/passwd HTTP/1.1\r\n\r\n", (400,)),
            (b"GET /metrics?pid=../../etc HTTP/1.1\r\n\r\n", (400,)),
            (b"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", (405,)),
            (b"GET /metrics HTTP/2.0\r\n\r\n", (505,)),
            (b"GET /metrics HTTP/1.1\r\nbad header line\r\n\r\n", (400,)),
            (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\n\r\n", (414,)),
        ]
        for data, want in cases:
            ans = raw_request(s, data)
            if status_of(ans) not in want:
                s.fail("%r answered %r, not %s" % (data[:60], ans[:80], want))
            if b"root:" in ans:
                s.fail("%r answered a file's contents" % data[:60])
        # 10 MB of headers: 431 after the first 8 KiB, then the connection ends
        big = b"GET /metrics HTTP/1.1\r\n" + b"X-Filler: " + b"y" * (10 << 20) + b"\r\n\r\n"
        ans = raw_request(s, big, timeout=30)
        if ans and status_of(ans) != 431:
            s.fail("10 MB of headers answered %r" % ans[:80])
        # a request trickled one byte at a time is answered once complete
        with socket.create_connection((s.host, s.port), timeout=30) as so:
            for b in b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n":
                so.send(bytes([b]))
                time.sleep(0.02)  # the trickle itself: what is tested is only the answer
            ans = b""
            while True:
                chunk = so.recv(65536)
                if not chunk:
                    break
                ans += chunk
        if status_of(ans) != 200:
            s.fail("the trickled request answered %r" % ans[:80])
        s.cmd("a 1")
        report = s.report_now()
        compare_with_json(s, s.url + "debug/pprof/heap", report, s.dir)
        cum, _, text = pprof_top(s.url + "debug/pprof/heap", "inuse_objects", s.dir)
        if cum.get("site_a") != 6:
            s.fail("after the abuse the profile gives site_a %s blocks, the target has 6"
                   % cum.get("site_a"), text)
        s.finish()
        final = s.final_report()
        if final["summary"]["alloc_calls"] != 6 or final["summary"]["live_bytes"] != 6 * SITE_A:
            s.fail("final report: %d calls, %d bytes; the target made 6 calls, %d bytes"
                   % (final["summary"]["alloc_calls"], final["summary"]["live_bytes"],
                      6 * SITE_A))
    finally:
        for so in idle:
            so.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        s.kill()


def test_unfinished_request_times_out():
    """A request that never ends (one byte, then nothing) is answered 408 and closed after the
    read time-out (10 s), while the target and the other clients go on. One mode: it waits."""
    if helpers.MODE != "stubs":
        raise Skip("a 10 s time-out, waited for in stubs mode only")
    s = Served("serve-timeout")
    try:
        with socket.create_connection((s.host, s.port), timeout=60) as so:
            so.send(b"G")
            s.cmd("a 1")
            status, _ = s.get("/metrics")
            if status != 200:
                s.fail("/metrics answered %d beside a stalled client" % status)
            ans = so.recv(65536)
        if status_of(ans) != 408:
            s.fail("the unfinished request answered %r, not 408" % ans[:80])
        s.finish()
    finally:
        s.kill()


# ---------------------------------------------------------------------------------------------
# Several processes, and the options


def test_two_pids():
    """-p PID,PID: each attached process has its own profile, chosen with ?pid=, and both are
    in /metrics labelled with pid and command; an unknown ?pid= is a 404. Both run on
    untraced after heaptrace's SIGINT."""
    a, b = Target(), Target()
    s = None
    try:
        a.cmd("a 0")  # started and waiting
        b.cmd("a 0")
        s = Served("serve-two-pids", opts=["--no-inventory"], pids=[a.pid, b.pid])
        # the endpoint answers once every process is attached (it listens from the start)
        status, body = s.get("/metrics")
        if status != 200 or b"heaptrace_processes 2\n" not in body:
            s.fail("/metrics after the attach: %d\n%s" % (status, body.decode()[:2000]))
        a.cmd("a 2")
        b.cmd("a 5")
        b.cmd("b 1")
        for t, want in ((a, {"site_a": 2 * SITE_A}),
                        (b, {"site_a": 5 * SITE_A, "site_b": SITE_B})):
            cum, _, text = pprof_top(s.url + "debug/pprof/heap?pid=%d" % t.pid, "inuse_space",
                                     s.dir)
            got = {k: v for k, v in cum.items() if k.startswith("site_") and v}
            if got != want:
                s.fail("?pid=%d: %s, the target holds %s" % (t.pid, got, want), text)
        status, body = s.get("/metrics")
        text = body.decode()
        for t, want in ((a, 2 * SITE_A), (b, 5 * SITE_A + SITE_B)):
            m = re.search(r'heaptrace_live_bytes\{pid="%d",command="([^"]*)",heap="malloc"\} '
                          r'(\d+)' % t.pid, text)
            if not m or int(m.group(2)) != want or "served" not in m.group(1):
                s.fail("/metrics for pid %d: %s, want %d bytes" % (t.pid, m and m.group(0),
                                                                   want), text)
        status, _ = s.get("/debug/pprof/heap?pid=1")
        if status != 404:
            s.fail("?pid=1 (not traced) answered %d, not 404" % status)
        os.kill(s.pid, signal.SIGINT)
        if s.finish(quit_target=False) != 0:
            s.fail("heaptrace -p did not exit 0 after SIGINT")
        for t in (a, b):
            t.cmd("a 1")  # untraced now: a breakpoint left behind would kill it
            if t.stop() != 0:
                raise Fail("pid %d did not run on after the detach" % t.pid)
    finally:
        if s:
            s.kill()
        for t in (a, b):
            if t.p.poll() is None:
                t.p.kill()


def test_bad_serve_values():
    """A bad --serve: one line, exit 1 (usage) or 2 (cannot listen), the program not started
    and, with -p, the process not attached."""
    helpers.need_heaptrace()
    prog = target("served")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        cases = [("--serve=127.0.0.1:%d" % port, 2, "Address already in use"),
                 ("--serve=999.1.1.1:80", 1, "invalid --serve address"),
                 ("--serve=127.0.0.1:70000", 1, "invalid --serve address"),
                 ("--serve=localhost:http", 1, "invalid --serve address"),
                 ("--serve=/" + "d" * 200, 1, "path has at most")]
        for opt, rc, words in cases:
            d = scratch("serve-bad")
            marker = os.path.join(d, "started")
            p = helpers.run([helpers.HEAPTRACE, opt, "--", "/bin/sh", "-c",
                             "touch %s; %s </dev/null" % (marker, prog)], cwd=d)
            helpers.one_error_line(p, rc, [words])
            if os.path.exists(marker):
                raise Fail("%s: the program was started" % opt, p.describe())
        t = Target()
        try:
            t.cmd("a 0")
            p = helpers.run([helpers.HEAPTRACE, "--serve=127.0.0.1:%d" % port, "-p",
                             str(t.pid)])
            helpers.one_error_line(p, 2, ["Address already in use"])
            with open("/proc/%d/status" % t.pid) as f:
                if "TracerPid:\t0\n" not in f.read():
                    raise Fail("the process stayed traced after a failed --serve")
            t.cmd("a 1")
            if t.stop() != 0:
                raise Fail("the process did not run on")
        finally:
            if t.p.poll() is None:
                t.p.kill()


def test_unix_socket():
    """--serve=PATH: a unix socket of mode 0600 answering the same endpoints, removed at the
    end."""
    d = scratch("serve-unix")
    path = os.path.join(d, "heaptrace.sock")
    helpers.need_heaptrace()
    p = subprocess.Popen([helpers.HEAPTRACE, "--serve=" + path, "--outfile=/dev/null", "--",
                          target("served")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        line = wait_line(p.stderr, helpers.TIMEOUT, "'serving on' line").decode()
        if line.strip() != "heaptrace: serving on " + path:
            raise Fail("first line %r" % line)
        if os.stat(path).st_mode & 0o777 != 0o600:
            raise Fail("the socket's mode is %o" % (os.stat(path).st_mode & 0o777))
        with socket.socket(socket.AF_UNIX) as so:
            so.settimeout(30)
            so.connect(path)
            so.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
            ans = b""
            while True:
                chunk = so.recv(65536)
                if not chunk:
                    break
                ans += chunk
        if status_of(ans) != 200 or b"heaptrace_processes 1" not in ans:
            raise Fail("the unix socket answered %r" % ans[:200])
        p.stdin.write(b"q\n")
        p.stdin.flush()
        p.wait(timeout=helpers.TIMEOUT)
        if os.path.exists(path):
            raise Fail("the socket %s is left behind" % path)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_one_of_several_pids_gone():
    """-p LIVE,GONE: the process that is gone is said, the other traced and served; heaptrace
    exits 0 after SIGINT. -p GONE,GONE: exit status 2."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    t = Target()
    s = None
    try:
        t.cmd("a 0")
        s = Served("serve-pid-gone", opts=["--no-inventory"], pids=[t.pid, gone.pid])
        status, body = s.get("/metrics")
        if status != 200 or b"heaptrace_processes 1\n" not in body:
            s.fail("/metrics with one of two processes traced: %d" % status, body.decode())
        t.cmd("a 3")
        cum, _, text = pprof_top(s.url + "debug/pprof/heap", "inuse_space", s.dir)
        if cum.get("site_a") != 3 * SITE_A:
            s.fail("the traced process's profile gives site_a %s bytes" % cum.get("site_a"),
                   text)
        os.kill(s.pid, signal.SIGINT)
        if s.finish(quit_target=False) != 0:
            s.fail("heaptrace did not exit 0")
        err = "".join(s.err)
        if "no such process: %d" % gone.pid not in err or "1 of the 2 processes" not in err:
            s.fail("the process gone is not said")
        if t.stop() != 0:
            raise Fail("the traced process did not run on")
    finally:
        if s:
            s.kill()
        if t.p.poll() is None:
            t.p.kill()
    gone2 = subprocess.Popen(["true"])
    gone2.wait()
    p = helpers.run([helpers.HEAPTRACE, "-p", "%d,%d" % (gone.pid, gone2.pid)])
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    if p.rc != 2 or len(lines) != 2 or not all("no such process" in x for x in lines):
        raise Fail("-p GONE,GONE: exit status %s, expected 2 and a line each" % p.rc,
                   p.describe())
