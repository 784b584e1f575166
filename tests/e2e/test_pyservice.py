# SPDX-License-Identifier: GPL-2.0-only
"""A Python web service attached under load: tests/targets/python/service.py (http.server on
127.0.0.1, a thread per request) answers two client threads that ask for one page after
another while heaptrace attaches (-p), traces for a while, takes its report and detaches. Every
request before, during and after must be answered in full; the report's backtraces of the pages
the service keeps carry its request handler's Python frames (Catalog.render at its lines,
called from Handler.do_GET); the service stops cleanly when asked. Both interpreters, with the
default allocator (pymalloc, through CPython's tables). The main thread starts a thread per
request, so the detach often finds it stopped at a clone event: heaptrace must not inject its
calls from there (before, the clone ran twice and the service died of a double free)."""

import os
import signal
import subprocess
import threading
import time
import urllib.request

import helpers
from helpers import Fail, Skip, excerpt, need_heaptrace, parse_json_reports, said, scratch

PYENV = "/root/.pyenv/versions/3.11.7/bin/python3.11"
DEBIAN = "/usr/bin/python3.11"
TRACED_S = 2  # how long the service is traced under load (not a measure of anything)


def service():
    return os.path.join(helpers.TARGETS_SRC, "python", "service.py")


def site_lines():
    with open(service(), encoding="utf-8") as f:
        return {text.split("# site ")[1].strip(): i + 1
                for i, text in enumerate(f.read().splitlines()) if "# site " in text}


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
        return r.status, r.read().decode()


class Load:
    """Client threads asking for /item/N, N counting up, until stopped: the failures kept."""

    def __init__(self, port, threads=2):
        self.port, self.stop, self.lock = port, threading.Event(), threading.Lock()
        self.next, self.ok, self.bad = 0, 0, []
        self.threads = [threading.Thread(target=self.run) for _ in range(threads)]
        for t in self.threads:
            t.start()

    def run(self):
        while not self.stop.is_set():
            with self.lock:
                self.next += 1
                n = self.next
            try:
                status, body = get(self.port, "/item/%d" % n)
                good = status == 200 and body.endswith("<li>item %d row 19</li></ul>" % n)
            except OSError as e:
                status, good = repr(e), False
            with self.lock:
                if good:
                    self.ok += 1
                else:
                    self.bad.append((n, status))

    def end(self):
        self.stop.set()
        for t in self.threads:
            t.join(helpers.TIMEOUT)


def python_frames(bt):
    return [f for f in bt["frames"] if f.get("how") == "python"]


def check_handler_frames(report, path):
    """Some live backtrace's innermost Python frame is Catalog.render at a site line, with
    Handler.do_GET outside it."""
    lines = set(site_lines().values())
    for bt in report["backtraces"]:
        py = python_frames(bt)
        if (py and py[0]["file"] == path and py[0]["function"] == "Catalog.render" and
                py[0]["line"] in lines and
                any(f["function"] == "Handler.do_GET" for f in py[1:])):
            return
    named = sorted({(f["function"], f["line"]) for bt in report["backtraces"]
                    for f in python_frames(bt) if f["file"] == path})
    raise Fail("no backtrace from Catalog.render (lines %s) called by Handler.do_GET"
               % sorted(lines), "Python frames of the service: %s" % named)


def check(python):
    need_heaptrace()
    if not os.access(python, os.X_OK):
        raise Skip("%s is not installed" % python)
    d = scratch("pyservice-%s" % os.path.basename(os.path.dirname(os.path.dirname(python))))
    outfile = os.path.join(d, "report")
    env = dict(os.environ)
    env.pop("PYTHONMALLOC", None)
    svc = subprocess.Popen([python, "-S", service()], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=d,
                           start_new_session=True)
    tracer = load = None
    try:
        first = svc.stdout.readline().decode().split()
        if len(first) != 2 or first[0] != "port":
            raise Fail("service.py did not say its port: %r" % first)
        port = int(first[1])
        load = Load(port)
        time.sleep(0.3)
        tracer = subprocess.Popen([helpers.HEAPTRACE, "-p", str(svc.pid), "--format=json",
                                   "--outfile=" + outfile], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True)
        deadline = time.monotonic() + helpers.TIMEOUT
        while (tracer.pid not in helpers.tracer_pids(svc.pid).values() and
               tracer.poll() is None):
            if time.monotonic() > deadline:
                raise Fail("heaptrace did not attach")
            time.sleep(0.02)
        time.sleep(TRACED_S)
        served_traced = load.ok
        if tracer.poll() is not None:
            raise Fail("heaptrace -p ended by itself (%s) while the service ran (it %s)"
                       % (tracer.returncode, "runs" if svc.poll() is None else
                          "exited %s" % svc.returncode),
                       excerpt(tracer.stderr.read().decode()))
        tracer.send_signal(signal.SIGINT)  # the report, then the detach
        err = tracer.communicate(timeout=helpers.TIMEOUT)[1].decode()
        if tracer.returncode != 0:
            raise Fail("heaptrace -p exited %s" % tracer.returncode, excerpt(err))
        time.sleep(0.3)
        load.end()
        if load.bad or not load.ok:
            dead = svc.poll()
            raise Fail("%d requests answered, %d not: %s; the service %s"
                       % (load.ok, len(load.bad), load.bad[:5],
                          "runs" if dead is None else "exited %s" % dead),
                       excerpt(err + (svc.stderr.read().decode() if dead is not None else "")))
        status, count = get(port, "/count")
        if status != 200 or int(count) != load.next:
            raise Fail("the service keeps %s pages, the clients asked for %d"
                       % (count, load.next))
        get(port, "/quit")
        if svc.wait(timeout=helpers.TIMEOUT) != 0:
            raise Fail("the service exited %s" % svc.returncode,
                       excerpt(svc.stderr.read().decode()))
    finally:
        if load:
            load.end()
        for p in (tracer, svc):
            if p and p.poll() is None:
                p.kill()
                p.wait()
    if said(err):
        raise Fail("heaptrace said: %s" % said(err))
    if served_traced == 0:
        raise Fail("no request answered while traced")
    with open(outfile, encoding="utf-8") as f:
        check_handler_frames(parse_json_reports(f.read())[-1], service())


def test_pyenv_service():
    check(PYENV)


def test_debian_service():
    check(DEBIAN)
