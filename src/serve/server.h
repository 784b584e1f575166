/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SERVER_H
#define HEAPTRACE_SERVER_H

/*
 * --serve: heaptrace as an HTTP endpoint (endpoints.h lists what it answers) for as long as it
 * traces.
 *
 * The tracer's loop is single-threaded and must never wait for a client, so every byte of
 * network I/O happens on a thread of its own (poll over non-blocking sockets, request parsing,
 * time-outs, the connection cap), and so does encoding (the profile, its gzip, the HTML page,
 * the metrics text). What needs the tracing state is asked of the loop, one snapshot at a time
 * (capture.h): at its next turn the loop copies the per-backtrace figures and symbolises the
 * frames it has not seen yet, in slices, and wakes this thread. A client, however slow or
 * hostile, costs the loop at most that copy per request it completes.
 *
 * Bounds: SERVER_CONNS connections at once (when full, the one that has waited longest for its
 * request, and at least half a second, is closed for a new one); a request's head within SERVER_READ_NS and HTTP_HEAD_MAX
 * bytes; a response written within SERVER_WRITE_NS; SERVER_DELTAS ?seconds= requests waiting
 * at once. One request per connection. heaptrace's own file descriptors stay under
 * SERVER_CONNS + a few, whatever the clients do.
 */
#include <stdbool.h>
#include <stddef.h>

#include "trace/session.h"

#define SERVER_CONNS 32
#define SERVER_DELTAS 4
#define SERVER_READ_NS 10000000000ull
#define SERVER_WRITE_NS 30000000000ull

/* Parse --serve=ADDR (kept for serve_view). Return 0, or -EINVAL with why filled. */
int serve_parse(const char *arg, char *why, size_t len);

/* The view tracer.c drives (session.h): prepare listens (its failure is said and stops the run
 * before anything is traced), begin starts the thread, end answers what is asked from then on
 * with 503, finish stops the thread and closes every socket. */
extern const struct tracer_view serve_view;

#endif
