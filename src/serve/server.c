// SPDX-License-Identifier: GPL-2.0-only
/*
 * --serve's thread: the listening socket, the connections and their time-outs, and the view the
 * tracer's loop drives (server.h). Everything here but serve_view's step runs off the loop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define PR_DOMAIN "serve"
#include "serve/capture.h"
#include "serve/endpoints.h"
#include "serve/http.h"
#include "serve/listen.h"
#include "serve/server.h"
#include "util/log.h"
#include "util/util.h"

#define LINGER_NS 2000000000ull /* after the response: the client's last bytes read, then close */
#define DISCARD_MAX (1u << 20) /* bytes read and dropped from a client after its request */
#define ACCEPTS_PER_TURN 16
/* A connection is closed for a new one only after this long without a complete request: a
 * client whose request had not arrived when it was accepted is not pushed out by a flood of
 * idle ones before its bytes can be read. */
#define EVICT_GRACE_NS 500000000ull

enum cstate { C_FREE, C_READ, C_QUEUED, C_ASKED, C_DELTA, C_WRITE, C_LINGER };

struct conn {
	int fd;
	enum cstate st;
	uint64_t deadline;
	uint64_t order; /* accepted (C_READ) or queued (C_QUEUED) as the order-th */
	uint64_t opened; /* when accepted */
	char *in; /* the request's head so far, HTTP_HEAD_MAX bytes */
	size_t inlen, discarded;
	struct endpoint_plan plan;
	bool delta; /* counted in srv.ndeltas */
	struct capture_profile *base; /* a delta's start, once taken */
	struct response out;
	size_t off;
};

static struct {
	const char *arg;
	struct listen_addr addr;
	int lfd, cfd, sfd; /* listening socket, capture's answers, stop */
	pthread_t thread;
	bool running;
	struct conn conns[SERVER_CONNS];
	unsigned nopen, ndeltas;
	bool asking; /* a snapshot is asked for: asker's, or nobody's once asker closed */
	struct conn *asker;
	uint64_t seq;
} srv = { .lfd = -1, .cfd = -1, .sfd = -1 };

int serve_parse(const char *arg, char *why, size_t len)
{
	srv.arg = arg;
	return listen_parse(arg, &srv.addr, why, len);
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	free(c->in);
	free(c->out.buf);
	capture_free_profile(c->base);
	if (c->delta)
		srv.ndeltas--;
	if (srv.asker == c)
		srv.asker = NULL; /* the answer is dropped when it comes */
	*c = (struct conn){ .fd = -1 };
	srv.nopen--;
}

static void conn_reply(struct conn *c, struct response *resp)
{
	c->out = *resp;
	c->off = 0;
	c->st = C_WRITE;
	c->deadline = now_ns() + SERVER_WRITE_NS;
	free(c->in);
	c->in = NULL;
}

static void conn_error(struct conn *c, int status, const char *msg)
{
	struct response r;

	endpoint_error(&r, status, msg, false);
	conn_reply(c, &r);
}

/* A complete head: route it. */
static void conn_request(struct conn *c, const struct http_request *req)
{
	struct response r;

	if (endpoint_plan(req, &c->plan, &r)) {
		conn_reply(c, &r);
		return;
	}
	if (c->plan.ep == EP_INDEX) {
		endpoint_index(&c->plan, &r);
		conn_reply(c, &r);
		return;
	}
	if (c->plan.seconds) {
		if (srv.ndeltas >= SERVER_DELTAS) {
			conn_error(c, 503, "too many ?seconds= requests at once");
			return;
		}
		srv.ndeltas++;
		c->delta = true;
	}
	c->st = C_QUEUED;
	c->order = ++srv.seq;
}

static void conn_read_head(struct conn *c)
{
	struct http_request req;
	size_t used;
	ssize_t n = recv(c->fd, c->in + c->inlen, HTTP_HEAD_MAX - c->inlen, 0);
	int ret;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c); /* gone before asking anything */
		return;
	}
	if (n < 0)
		return;
	c->inlen += (size_t)n;
	ret = http_parse(c->in, c->inlen, &req, &used);
	if (ret == 1)
		return;
	if (ret)
		conn_error(c, ret, http_reason(ret));
	else
		conn_request(c, &req);
}

/* Bytes after the request (or while it waits): read and dropped; the end of them closes. */
static void conn_discard(struct conn *c)
{
	char buf[4096];
	ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0 || (c->discarded += (size_t)n) > DISCARD_MAX)
		conn_close(c); /* a delta's client gone: nothing to wait for (as Go's handler) */
}

static void conn_write(struct conn *c)
{
	ssize_t n = send(c->fd, c->out.buf + c->off, c->out.len - c->off, MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->off += (size_t)n;
	if (c->off < c->out.len)
		return;
	/* all sent: closing now with unread bytes would reset the connection before the client
	 * read the answer; its reading side is emptied for a moment first */
	shutdown(c->fd, SHUT_WR);
	c->st = C_LINGER;
	c->deadline = now_ns() + LINGER_NS;
}

/* The next queued request asks the loop for its snapshot. */
static void ask_next(void)
{
	struct conn *next = NULL;
	enum capture_kind kind;

	if (srv.asking)
		return;
	for (unsigned i = 0; i < SERVER_CONNS; i++) {
		struct conn *c = &srv.conns[i];

		if (c->st == C_QUEUED && (!next || c->order < next->order))
			next = c;
	}
	if (!next)
		return;
	kind = next->plan.ep == EP_METRICS ? CAPTURE_METRICS :
	       next->plan.seconds && !next->base ? CAPTURE_PROFILE_FIGURES : CAPTURE_PROFILE;
	next->st = C_ASKED;
	srv.asker = next;
	srv.asking = true;
	capture_ask(kind, next->plan.pid);
}

/* The loop answered: the asker's response made of it, here, off the loop. */
static void take_answer(void)
{
	enum capture_status st;
	struct capture_profile *prof = NULL;
	struct capture_metrics *met = NULL;
	struct conn *c = srv.asker;
	struct response r;

	if (!capture_take(&st, &prof, &met))
		return;
	srv.asking = false;
	srv.asker = NULL;
	if (!c) {
		/* its client left */
	} else if (st != CAPTURE_OK) {
		endpoint_failed(&c->plan, st, &r);
		conn_reply(c, &r);
	} else if (met) {
		endpoint_metrics(&c->plan, met, &r);
		conn_reply(c, &r);
	} else if (c->plan.seconds && !c->base) {
		c->base = prof; /* the delta's start: the end comes seconds later */
		prof = NULL;
		c->st = C_DELTA;
		c->deadline = now_ns() + c->plan.seconds * 1000000000ull;
	} else {
		endpoint_profile(&c->plan, prof, c->base, &r);
		conn_reply(c, &r);
	}
	capture_free_profile(prof);
	capture_free_metrics(met);
}

/* A free slot, making one by closing the connection that has waited longest (EVICT_GRACE_NS at
 * least) for its request's head; NULL if none has (the new ones wait in the listen queue). */
static struct conn *free_slot(uint64_t now)
{
	struct conn *old = NULL;

	for (unsigned i = 0; i < SERVER_CONNS; i++) {
		struct conn *c = &srv.conns[i];

		if (c->st == C_FREE)
			return c;
		if (c->st == C_READ && now - c->opened >= EVICT_GRACE_NS &&
		    (!old || c->order < old->order))
			old = c;
	}
	if (old) {
		pr_dbg(0, "connection cap reached: closing the longest idle one");
		conn_close(old);
	}
	return old;
}

static void accept_some(void)
{
	for (unsigned k = 0; k < ACCEPTS_PER_TURN; k++) {
		uint64_t now = now_ns();
		struct conn *c = free_slot(now);
		int fd;

		if (!c)
			return;
		fd = accept4(srv.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or EMFILE: the others wait in the queue */
		*c = (struct conn){ .fd = fd, .st = C_READ, .order = ++srv.seq, .opened = now,
				    .deadline = now + SERVER_READ_NS,
				    .in = xmalloc(HTTP_HEAD_MAX) };
		srv.nopen++;
		conn_read_head(c); /* a request is often there already */
	}
}

static void expire(struct conn *c, uint64_t now)
{
	if (c->st == C_FREE || !c->deadline || now < c->deadline)
		return;
	if (c->st == C_READ) {
		conn_error(c, 408, "no complete request in time");
	} else if (c->st == C_DELTA) {
		c->st = C_QUEUED; /* the delta's end */
		c->order = ++srv.seq;
		c->deadline = 0;
	} else if (c->st == C_WRITE || c->st == C_LINGER) {
		conn_close(c);
	}
}

static void handle(struct conn *c, short rev)
{
	if (c->st == C_READ && (rev & (POLLIN | POLLHUP | POLLERR)))
		conn_read_head(c);
	else if (c->st == C_WRITE && (rev & (POLLOUT | POLLHUP | POLLERR)))
		conn_write(c);
	else if ((c->st == C_DELTA || c->st == C_QUEUED || c->st == C_ASKED ||
		  c->st == C_LINGER) && (rev & (POLLIN | POLLHUP | POLLERR)))
		conn_discard(c);
}

/* The poll set; return the time-out in ms. */
static int poll_set(struct pollfd *pf, struct conn **who, nfds_t *n, uint64_t now)
{
	uint64_t first = now + 1000000000ull;

	pf[0] = (struct pollfd){ .fd = srv.sfd, .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = srv.cfd, .events = POLLIN };
	pf[2] = (struct pollfd){ .fd = srv.lfd, .events = POLLIN };
	*n = 3;
	for (unsigned i = 0; i < SERVER_CONNS; i++) {
		struct conn *c = &srv.conns[i];

		if (c->st == C_FREE)
			continue;
		pf[*n] = (struct pollfd){ .fd = c->fd, .events = c->st == C_WRITE ? POLLOUT : POLLIN };
		who[*n] = c;
		(*n)++;
		if (c->deadline && c->deadline < first)
			first = c->deadline;
	}
	return first > now ? (int)((first - now + 999999) / 1000000) : 0;
}

static void *serve_thread(void *arg)
{
	struct pollfd pf[SERVER_CONNS + 3];
	struct conn *who[SERVER_CONNS + 3];

	(void)arg;
	for (;;) {
		uint64_t now = now_ns();
		nfds_t n;
		int timeout = poll_set(pf, who, &n, now);

		if (poll(pf, n, timeout) < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			break;
		if (pf[1].revents)
			take_answer();
		for (nfds_t i = 3; i < n; i++)
			if (pf[i].revents && who[i]->fd == pf[i].fd)
				handle(who[i], pf[i].revents);
		if (pf[2].revents)
			accept_some();
		now = now_ns();
		for (unsigned i = 0; i < SERVER_CONNS; i++)
			expire(&srv.conns[i], now);
		ask_next();
	}
	return NULL;
}

static int serve_prepare(const struct tracer_opts *o)
{
	char shown[160];
	int fd;

	(void)o;
	for (unsigned i = 0; i < SERVER_CONNS; i++)
		srv.conns[i] = (struct conn){ .fd = -1 };
	fd = listen_open(&srv.addr, shown, sizeof(shown));
	if (fd < 0) {
		pr_err("--serve=%s: %s", srv.arg, strerror(-fd));
		return fd;
	}
	srv.lfd = fd;
	srv.cfd = capture_init();
	srv.sfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv.cfd < 0 || srv.sfd < 0) {
		pr_err("--serve: eventfd: %s", strerror(errno));
		return -EMFILE;
	}
	if (!srv.addr.loopback)
		pr_warn("--serve=%s is reachable from other machines and has no authentication: "
			"whoever reaches it reads the traced programs' heap profiles", srv.arg);
	fprintf(stderr, "heaptrace: serving on %s\n", shown);
	return 0;
}

static void serve_child_setup(void)
{
	/* the sockets are close-on-exec */
}

static void serve_begin(int pid)
{
	sigset_t all, old;
	int ret;

	capture_set_default(pid);
	/* the thread takes no signal: heaptrace's own go to its signal thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&srv.thread, NULL, serve_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		pr_err("--serve: cannot start its thread: %s (tracing goes on)", strerror(ret));
	srv.running = !ret;
}

static bool serve_step(uint64_t now, uint64_t *until)
{
	capture_step(now, until);
	return false;
}

static void serve_end(void)
{
	capture_close();
}

static void serve_finish(void)
{
	uint64_t one = 1;

	capture_close();
	if (srv.running && write(srv.sfd, &one, sizeof(one)) == sizeof(one))
		pthread_join(srv.thread, NULL);
	srv.running = false;
	for (unsigned i = 0; i < SERVER_CONNS; i++)
		if (srv.conns[i].st != C_FREE)
			conn_close(&srv.conns[i]);
	if (srv.lfd >= 0) {
		close(srv.lfd);
		if (srv.addr.unix_path)
			unlink(((const struct sockaddr_un *)&srv.addr.ss)->sun_path);
	}
	if (srv.sfd >= 0)
		close(srv.sfd);
	srv.lfd = srv.sfd = -1;
	capture_fini();
}

const struct tracer_view serve_view = {
	.prepare = serve_prepare,
	.child_setup = serve_child_setup,
	.begin = serve_begin,
	.step = serve_step,
	.end = serve_end,
	.finish = serve_finish,
};
