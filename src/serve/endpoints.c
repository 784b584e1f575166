// SPDX-License-Identifier: GPL-2.0-only
/* What --serve answers, made from the loop's snapshots on the server's thread (endpoints.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "serve"
#include "output/html.h"
#include "output/pprof.h"
#include "serve/endpoints.h"
#include "serve/metrics.h"
#include "util/log.h"
#include "util/util.h"

static const struct {
	const char *path;
	enum endpoint ep;
} routes[] = {
	{ "/", EP_PAGE },
	{ "/debug/pprof/", EP_INDEX },
	{ "/debug/pprof/heap", EP_HEAP },
	{ "/debug/pprof/allocs", EP_ALLOCS },
	{ "/metrics", EP_METRICS },
};

/* *resp: the head of status (type, the body's length; extra headers or NULL) and body. */
static void respond(struct response *resp, int status, const char *type, const char *extra,
		    const char *body, size_t len, bool head)
{
	char h[512];
	size_t hlen = http_head(h, sizeof(h), status, type, len, extra);

	resp->len = hlen + (head ? 0 : len);
	resp->buf = xmalloc(resp->len ? resp->len : 1);
	memcpy(resp->buf, h, hlen);
	if (!head && len)
		memcpy(resp->buf + hlen, body, len);
}

void endpoint_error(struct response *resp, int status, const char *msg, bool head)
{
	char body[256];
	int n = snprintf(body, sizeof(body), "%s\n", msg);

	respond(resp, status, "text/plain; charset=utf-8", NULL, body,
		n > 0 ? (size_t)n < sizeof(body) ? (size_t)n : sizeof(body) - 1 : 0, head);
}

int endpoint_plan(const struct http_request *req, struct endpoint_plan *plan,
		  struct response *resp)
{
	bool head = req->method == HTTP_HEAD;
	size_t i;

	*plan = (struct endpoint_plan){ .head = head };
	for (i = 0; i < ARRAY_SIZE(routes); i++)
		if (!strcmp(req->path, routes[i].path))
			break;
	if (i == ARRAY_SIZE(routes)) {
		endpoint_error(resp, 404, "not found: the endpoints are /, /debug/pprof/heap, "
				      "/debug/pprof/allocs and /metrics", head);
		return 404;
	}
	plan->ep = routes[i].ep;
	if (req->bad_number || req->pid == 0 || req->pid > INT32_MAX) {
		endpoint_error(resp, 400, "pid, seconds and debug take a positive decimal number",
			       head);
		return 400;
	}
	if (req->debug > 0) {
		endpoint_error(resp, 400, "debug=N is not offered: the profiles are profile.proto only",
			       head);
		return 400;
	}
	plan->pid = req->pid > 0 ? (pid_t)req->pid : 0;
	if (req->seconds >= 0) {
		if (plan->ep != EP_HEAP && plan->ep != EP_ALLOCS) {
			endpoint_error(resp, 400, "\"seconds\" parameter is not supported here", head);
			return 400;
		}
		if (req->seconds < 1 || req->seconds > ENDPOINT_SECONDS_MAX) {
			endpoint_error(resp, 400, "invalid value for \"seconds\": 1 to 3600", head);
			return 400;
		}
		plan->seconds = (unsigned)req->seconds;
	}
	return 0;
}

void endpoint_index(const struct endpoint_plan *plan, struct response *resp)
{
	static const char body[] =
		"heaptrace: heap profiles of the traced processes (?pid=N picks one)\n"
		"/debug/pprof/heap    live heap and every allocation (profile.proto, gzipped)\n"
		"/debug/pprof/allocs  the same, alloc_space first\n"
		"/metrics             Prometheus text format\n";

	respond(resp, 200, "text/plain; charset=utf-8", NULL, body, sizeof(body) - 1, plan->head);
}

void endpoint_failed(const struct endpoint_plan *plan, enum capture_status st,
		     struct response *resp)
{
	char msg[128];

	if (st == CAPTURE_NO_PROCESS) {
		if (plan->pid)
			snprintf(msg, sizeof(msg), "no traced process %d", (int)plan->pid);
		else
			snprintf(msg, sizeof(msg), "no traced process");
		endpoint_error(resp, 404, msg, plan->head);
	} else if (st == CAPTURE_CHANGED) {
		endpoint_error(resp, 503, "the process ran execve meanwhile: ask again", plan->head);
	} else {
		endpoint_error(resp, 503, "tracing has ended", plan->head);
	}
}

/* cur - base per backtrace (base NULL: cur), as Go's handlers subtract two profiles: a
 * backtrace whose counts did not change is left out (pprof.c skips a backtrace with no calls
 * and no live blocks). An execve between the two makes
 * the whole of cur the difference (its backtraces are new). */
static struct table delta(const struct capture_profile *cur, const struct capture_profile *base)
{
	struct table d = cur->t;
	uint32_t n = base && base->t.epoch == cur->t.epoch ? base->t.nbts : 0;

	d.bts = xmalloc((cur->t.nbts ? cur->t.nbts : 1) * sizeof(*d.bts));
	memcpy(d.bts, cur->t.bts, cur->t.nbts * sizeof(*d.bts));
	for (uint32_t i = 0; i < n && i < d.nbts; i++) {
		struct bt *b = &d.bts[i];
		const struct bt *o = &base->t.bts[i];

		/* unsigned differences: the encoder reads them as signed (inuse may shrink) */
		b->count -= o->count;
		b->size -= o->size;
		b->total_count -= o->total_count;
		b->total_size -= o->total_size;
	}
	return d;
}

static void profile_pprof(const struct endpoint_plan *plan, const struct capture_profile *prof,
			  const struct capture_profile *base, struct response *resp)
{
	struct table t = delta(prof, base);
	struct pprof_info pi = {
		.mods = prof->mods,
		.nmods = prof->nmods,
		.resolve = sframes_resolve,
		.resolve_ctx = prof->frames,
		.duration_ns = base ? prof->now_ns - base->now_ns : prof->elapsed_ns,
		.comment = prof->command,
		.time_ns = prof->wall_ns,
		.default_type = plan->ep == EP_ALLOCS ? "alloc_space" : NULL,
	};
	char *buf = NULL, disp[96];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int ret = m ? pprof_write(m, &t, &pi) : -errno;

	if (m)
		fclose(m);
	free(t.bts);
	if (ret) {
		endpoint_error(resp, ret == -ENOTSUP ? 501 : 500,
			       ret == -ENOTSUP ? "this heaptrace was built without pprof output" :
						 strerror(-ret), plan->head);
	} else {
		snprintf(disp, sizeof(disp), "Content-Disposition: attachment; filename=\"%s\"\r\n",
			 plan->ep == EP_ALLOCS ? "allocs" : "heap");
		respond(resp, 200, "application/octet-stream", disp, buf, len, plan->head);
	}
	free(buf);
}

static void profile_page(const struct endpoint_plan *plan, const struct capture_profile *prof,
			 struct response *resp)
{
	const char *allocs[CAPTURE_ALLOCATORS];
	struct report_info ri = {
		.pid = prof->pid,
		.command = prof->command,
		.has_statm = prof->has_statm,
		.statm_vss = prof->statm[0],
		.statm_rss = prof->statm[1],
		.statm_shared = prof->statm[2],
		.now_ns = prof->now_ns,
		.elapsed_ns = prof->elapsed_ns,
		.kind = "served",
		.allocators = allocs,
		.nallocators = prof->nallocators,
		.resolve = sframes_resolve,
		.resolve_ctx = prof->frames,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int ret;

	for (unsigned i = 0; i < prof->nallocators; i++)
		allocs[i] = prof->allocators[i];
	ret = m ? html_write(m, &prof->t, &ri, NULL) : -errno;
	if (m)
		fclose(m);
	if (ret)
		endpoint_error(resp, 500, strerror(-ret), plan->head);
	else
		respond(resp, 200, "text/html; charset=utf-8", NULL, buf, len, plan->head);
	free(buf);
}

void endpoint_profile(const struct endpoint_plan *plan, const struct capture_profile *prof,
		      const struct capture_profile *base, struct response *resp)
{
	if (plan->ep == EP_PAGE)
		profile_page(plan, prof, resp);
	else
		profile_pprof(plan, prof, base, resp);
}

void endpoint_metrics(const struct endpoint_plan *plan, const struct capture_metrics *met,
		      struct response *resp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		endpoint_error(resp, 500, strerror(errno), plan->head);
		return;
	}
	metrics_write(m, met);
	fclose(m);
	respond(resp, 200, "text/plain; version=0.0.4; charset=utf-8", NULL, buf, len, plan->head);
	free(buf);
}
