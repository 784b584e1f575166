/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_ENDPOINTS_H
#define HEAPTRACE_ENDPOINTS_H

/*
 * What --serve answers, on the server's thread: which snapshot a request needs (endpoint_plan),
 * and the response made of it. The routes are fixed strings compared with the request's path
 * as sent; nothing of a request is ever used as a file name.
 *
 *   /                     the HTML page of --format=html, of the moment
 *   /debug/pprof/         a short index of the two below
 *   /debug/pprof/heap     gzipped profile.proto, as Go's runtime writes a heap profile
 *   /debug/pprof/allocs   the same, alloc_space shown first
 *   /metrics              Prometheus' text format (metrics.h)
 *
 * ?pid=N picks the traced process (default: the launched or first attached one); on the two
 * profiles ?seconds=N (1 to ENDPOINT_SECONDS_MAX) answers the difference between now and N
 * seconds later, as Go's handlers do.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/capture.h"
#include "serve/http.h"

#define ENDPOINT_SECONDS_MAX 3600

enum endpoint { EP_PAGE, EP_INDEX, EP_HEAP, EP_ALLOCS, EP_METRICS };

struct endpoint_plan {
	enum endpoint ep;
	bool head; /* HEAD: the same head, no body */
	pid_t pid; /* 0: the default process */
	unsigned seconds; /* a delta over this many seconds; 0: none */
};

/* A response: its head and body in one buffer. */
struct response {
	char *buf;
	size_t len;
};

/* The plan of req. Return 0, or fill *resp with the error to answer and return its status. */
int endpoint_plan(const struct http_request *req, struct endpoint_plan *plan,
		  struct response *resp);

/* Fill *resp with a plain-text error (status, and msg as its body). */
void endpoint_error(struct response *resp, int status, const char *msg, bool head);

/* The response of plan from a profile snapshot (base: the start of a delta, or NULL). */
void endpoint_profile(const struct endpoint_plan *plan, const struct capture_profile *prof,
		      const struct capture_profile *base, struct response *resp);

void endpoint_metrics(const struct endpoint_plan *plan, const struct capture_metrics *m,
		      struct response *resp);

/* The response of a snapshot that could not be taken. */
void endpoint_failed(const struct endpoint_plan *plan, enum capture_status st,
		     struct response *resp);

/* The index page (needs no snapshot). */
void endpoint_index(const struct endpoint_plan *plan, struct response *resp);

#endif
