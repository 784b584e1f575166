// SPDX-License-Identifier: GPL-2.0-only
/* A request's head parsed, a response's head written (http.h). */
#include <stdio.h>
#include <string.h>

#include "serve/http.h"

/* The end of the head (after its empty line) in buf[0..len), or 0. Bare LFs are taken too, as
 * RFC 9112 lets a server do. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* A visible ASCII byte (RFC 9110's VCHAR): what a request target and a token are made of. */
static bool vchar(char c)
{
	return c > 0x20 && c < 0x7f;
}

/* Every line after the request line: "name: value", no control bytes but tab. */
static bool headers_ok(const char *p, const char *end)
{
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl && nl > p && nl[-1] == '\r' ? nl - 1 : nl;
		const char *colon;

		if (!nl)
			return false;
		if (stop == p) /* the empty line */
			return nl + 1 == end;
		colon = memchr(p, ':', (size_t)(stop - p));
		if (!colon || colon == p)
			return false;
		for (const char *c = p; c < colon; c++)
			if (!vchar(*c))
				return false;
		for (const char *c = colon + 1; c < stop; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t')
				return false;
		p = nl + 1;
	}
	return false;
}

/* The decimal value of s[0..n), at most 2^40; -1 if it is none. */
static int64_t decimal(const char *s, size_t n)
{
	int64_t v = 0;

	if (!n || n > 12)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v > (1ll << 40) ? -1 : v;
}

/* The parameters of the query q[0..n) the endpoints know; the others are ignored, as Go's
 * handlers do. */
static void parse_query(const char *q, size_t n, struct http_request *req)
{
	const char *end = q + n;

	while (q < end) {
		const char *amp = memchr(q, '&', (size_t)(end - q)), *stop = amp ? amp : end;
		const char *eq = memchr(q, '=', (size_t)(stop - q));
		size_t klen = (size_t)((eq ? eq : stop) - q);
		int64_t *slot = NULL;

		if (klen == 7 && !memcmp(q, "seconds", 7))
			slot = &req->seconds;
		else if (klen == 3 && !memcmp(q, "pid", 3))
			slot = &req->pid;
		else if (klen == 5 && !memcmp(q, "debug", 5))
			slot = &req->debug;
		if (slot) {
			*slot = eq ? decimal(eq + 1, (size_t)(stop - eq - 1)) : -1;
			if (*slot < 0)
				req->bad_number = true;
		}
		q = stop + 1;
	}
}

/* The request line buf[0..n): method, target, version. Return 0 or the status. */
static int request_line(const char *buf, size_t n, struct http_request *req)
{
	const char *sp1 = memchr(buf, ' ', n), *sp2, *end = buf + n, *q;
	size_t plen;

	if (!sp1)
		return 400;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (!sp2 || end - sp2 != 9 || memcmp(sp2 + 1, "HTTP/1.", 7))
		return sp2 && end - sp2 > 5 && !memcmp(sp2 + 1, "HTTP/", 5) ? 505 : 400;
	if (sp2[8] != '0' && sp2[8] != '1')
		return 505;
	for (const char *c = buf; c < sp1; c++)
		if (!vchar(*c))
			return 400;
	for (const char *c = sp1 + 1; c < sp2; c++)
		if (!vchar(*c))
			return 400;
	if (sp1[1] != '/') /* origin-form only: no proxy requests, no "*" */
		return 400;
	if ((size_t)(sp1 - buf) == 3 && !memcmp(buf, "GET", 3))
		req->method = HTTP_GET;
	else if ((size_t)(sp1 - buf) == 4 && !memcmp(buf, "HEAD", 4))
		req->method = HTTP_HEAD;
	else
		return 405;
	q = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
	plen = (size_t)((q ? q : sp2) - sp1 - 1);
	if (plen >= HTTP_PATH_MAX)
		return 414;
	memcpy(req->path, sp1 + 1, plen);
	req->path[plen] = '\0';
	if (q)
		parse_query(q + 1, (size_t)(sp2 - q - 1), req);
	return 0;
}

int http_parse(const char *buf, size_t len, struct http_request *req, size_t *used)
{
	size_t end = head_end(buf, len);
	const char *nl;
	size_t n;

	*req = (struct http_request){ .seconds = -1, .pid = -1, .debug = -1 };
	if (!end) {
		/* a head that cannot be one: answered at once rather than at the time-out */
		if (len && !vchar(buf[0]))
			return 400;
		return len >= HTTP_HEAD_MAX ? 431 : 1;
	}
	if (end > HTTP_HEAD_MAX)
		return 431;
	nl = memchr(buf, '\n', end);
	n = (size_t)(nl - buf);
	if (n && buf[n - 1] == '\r')
		n--;
	if (!n || memchr(buf, '\0', end))
		return 400;
	*used = end;
	if (!headers_ok(nl + 1, buf + end))
		return 400;
	return request_line(buf, n, req);
}

const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

size_t http_head(char *buf, size_t cap, int status, const char *type, size_t length,
		 const char *extra)
{
	int n = snprintf(buf, cap,
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\nCache-Control: no-store\r\n"
			 "X-Content-Type-Options: nosniff\r\n%s%s\r\n",
			 status, http_reason(status), type, length, extra ? extra : "",
			 status == 405 ? "Allow: GET, HEAD\r\n" : "");

	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}
