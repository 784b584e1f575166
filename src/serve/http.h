/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_HTTP_H
#define HEAPTRACE_HTTP_H

/*
 * The little of HTTP/1.1 --serve speaks, pure (no sockets, unit tested): a request's head
 * parsed from the bytes received so far, and a response's head. One request per connection,
 * answered with "Connection: close": the clients that scrape (Prometheus, go tool pprof,
 * Pyroscope, Parca) open one per scrape anyway.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 8192 /* bytes of request line and headers; more: 431 */
#define HTTP_PATH_MAX 256

enum http_method { HTTP_GET, HTTP_HEAD };

struct http_request {
	enum http_method method;
	char path[HTTP_PATH_MAX]; /* as sent, no query, not decoded: compared with the routes only */
	/* the query parameters the endpoints know; -1: absent */
	int64_t seconds, pid, debug;
	bool bad_number; /* one of them is not a decimal number (or too large) */
};

/*
 * Parse the head of a request, buf[0..len) being every byte received so far. Return 0 with
 * *req filled (*used: the head's length), 1 if the head is not complete yet, or the HTTP status
 * to answer with and close: 400 (malformed), 405 (not GET or HEAD), 414 (target too long),
 * 431 (no end of the head within HTTP_HEAD_MAX bytes), 505 (not HTTP/1.x).
 */
int http_parse(const char *buf, size_t len, struct http_request *req, size_t *used);

/* The reason phrase of status ("Not Found"); "Error" for one this file does not know. */
const char *http_reason(int status);

/* The head of a response (status line, Content-Type, Content-Length, Connection: close and the
 * fixed headers) into buf. Return its length, or 0 if cap is too small. */
size_t http_head(char *buf, size_t cap, int status, const char *type, size_t length,
		 const char *extra);

#endif
