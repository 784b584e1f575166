# SPDX-License-Identifier: GPL-2.0-only
"""A signal handler's allocation (tests/targets/sigmalloc.c): on_signal mallocs, raised by
raise() in by_raise, by pthread_kill() in by_kill, and by a CPU-time timer that interrupts the
loop of busy. The backtrace goes through the kernel's signal frame (the C library's restorer,
which its unwind tables mark as a signal frame, is not shown: it is no call) to the code the
signal interrupted: malloc <- on_signal <- the C library's raise or pthread_kill <- by_raise or
by_kill <- main, and malloc <- on_signal <- busy <- by_timer <- main exactly. Every frame is
found by the unwind tables or frame records, none by a stack scan, and no other frame is in
the chain (the scan used to add stale ones: _dl_lookup_symbol_x, check_match, _dl_fixup).

And a handler that frees and mallocs while the code it interrupted is inside a traced call
(tests/targets/sigover.c): its calls are its own, each counted."""

import helpers
from helpers import (OPTS, check_sites, check_summary, expect_rc, fn_name, heaptrace,
                     site_records, sites, summary_record, target, variants)

# what the C library runs between raise() or pthread_kill() and the system call
LIBC_KILL = {"raise", "gsignal", "pthread_kill", "__pthread_kill_implementation",
             "__pthread_kill_internal"}
CALLERS = {"raise": "by_raise", "kill": "by_kill", "timer": "by_timer"}


def check_chain(r, way, site):
    chain = site.chain
    if way == "timer":
        ok = chain == ["on_signal", "busy", "by_timer", "main"]
    else:
        ok = (len(chain) >= 4 and chain[0] == "on_signal" and chain[-2:] == [CALLERS[way], "main"]
              and set(chain[1:-2]) <= LIBC_KILL)
    if not ok:
        r.fail("%s: chain %s" % (way, ",".join(chain)))
    for f in site.frames[1:len(chain) + 1]:
        if f.get("how") not in ("cfi", "fp"):
            r.fail("%s: frame %s found by %r" % (way, fn_name(f), f.get("how")))


@variants(*["%s-%s" % (w, o) for o in OPTS for w in ("raise", "kill", "timer")])
def test_signal_handler_backtrace(variant):
    way, opt = variant.split("-")
    r = heaptrace(target("sigmalloc", opt), args=[way], opts=["--depth=16"],
                  name="sigmalloc-%s-%s" % (way, opt))
    expect_rc(r, 0)
    check_sites(r, r.report, site_records(r))
    mine = [s for s in sites(r.report) if s.chain and s.chain[0] == "on_signal"]
    if len(mine) != 1:
        r.fail("%d backtraces from on_signal, expected 1" % len(mine))
    check_chain(r, way, mine[0])


@variants("stack", "altstack", "realloc")
def test_handler_over_calls(where):
    """sigover: a SIGPROF handler every 100 us of CPU time frees its last block and mallocs a
    new one of 7,777 bytes, unless the signal landed in the C library. Under the entry stubs the
    signal lands mostly in a stub, with a malloc or free in flight: the handler's calls were
    taken for calls made inside it and dropped (8 of 12 in a run). The summary must equal the
    program's own count (every call of main's loop and of the handler), one block of 7,777 bytes
    live, no unknown free; with stubs, some signals must have landed outside the C library and
    the program (in a stub), else the run tested nothing. Again with the handler on a
    sigaltstack (a guard page above it), whose signal frame the stubs' copy must still hold.
    And with main's blocks grown by realloc: a handler's free while glibc's realloc is in flight
    (its stub's return path), which a free record cannot show to be the handler's, is not
    realloc's own (26 to 75 frees of the handler's were lost in 1,000,000 pairs)."""
    # a fifth of the pairs with a stop per call: still hundreds of handler calls; with realloc
    # more pairs, as signals landing in the stubs are fewer (tens of handler calls)
    if helpers.MODE != "stubs":
        pairs = 40000
    else:
        pairs = 1000000 if where == "realloc" else 200000
    handler_over_calls(where, pairs)


def handler_over_calls(where, pairs):
    """test_handler_over_calls' run and checks, with pairs made by main (a guest of make
    check-cross makes fewer)."""
    args = [pairs] + ([where] if where != "stack" else [])
    r = heaptrace(target("sigover"), args=args, name="sigover-" + where)
    expect_rc(r, 0)
    words = r.proc.stdout.split()
    if len(words) != 4 or words[0] != "handler" or words[2] != "over_other":
        r.fail("sigover said %r" % r.proc.stdout)
    if int(words[1]) == 0:
        r.fail("the handler never allocated: nothing was tested")
    if helpers.MODE == "stubs" and int(words[3]) == 0:
        r.fail("no signal landed in a stub: nothing was tested")
    check_summary(r, r.report, summary_record(r))
    check_sites(r, r.report, site_records(r))
