// SPDX-License-Identifier: GPL-2.0-only
/* --serve's address parsed and listened on (listen.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/listen.h"

#define LISTEN_BACKLOG 64

static bool port_of(const char *s, in_port_t *port)
{
	char *end;
	unsigned long v;

	if (!*s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 65535)
		return false;
	*port = htons((in_port_t)v);
	return true;
}

static int parse_unix(const char *arg, struct listen_addr *a, char *why, size_t len)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&a->ss;

	if (strlen(arg) >= sizeof(un->sun_path)) {
		/* the path itself is left out: it is too long to be worth quoting */
		snprintf(why, len, "--serve: a unix socket's path has at most %zu bytes, not %zu",
			 sizeof(un->sun_path) - 1, strlen(arg));
		return -EINVAL;
	}
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, arg);
	a->len = sizeof(*un);
	a->loopback = a->unix_path = true;
	return 0;
}

/* host (NUL-terminated, "" for the default) and port into a. */
static int parse_inet(const char *host, const char *port, bool v6, struct listen_addr *a)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;

	if (v6) {
		in6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1 ||
		    !port_of(port, &in6->sin6_port))
			return -EINVAL;
		a->len = sizeof(*in6);
		a->loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
			      (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
			       in6->sin6_addr.s6_addr[12] == 127);
		return 0;
	}
	in->sin_family = AF_INET;
	if (!*host || !strcmp(host, "localhost"))
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &in->sin_addr) != 1 || !port_of(port, &in->sin_port))
		return -EINVAL;
	a->len = sizeof(*in);
	a->loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	return 0;
}

int listen_parse(const char *arg, struct listen_addr *a, char *why, size_t len)
{
	char host[64];
	const char *colon, *port;
	bool v6 = arg[0] == '[';
	int ret;

	memset(a, 0, sizeof(*a));
	if (strchr(arg, '/'))
		return parse_unix(arg, a, why, len);
	colon = v6 ? strstr(arg, "]:") : strrchr(arg, ':');
	if (v6 && !colon)
		colon = NULL;
	host[0] = '\0';
	port = arg;
	if (colon) {
		size_t hlen = (size_t)(colon - arg) - v6;

		if (hlen >= sizeof(host))
			hlen = sizeof(host) - 1;
		memcpy(host, arg + v6, hlen);
		host[hlen] = '\0';
		port = colon + 1 + v6;
	}
	ret = v6 && !colon ? -EINVAL : parse_inet(host, port, v6, a);
	if (ret)
		snprintf(why, len, "invalid --serve address '%s' (IP:PORT, [IPv6]:PORT, PORT, or a "
			 "unix socket path with a '/')", arg);
	return ret;
}

/* The address fd listens on, as a URL. */
static void show(int fd, const struct listen_addr *a, char *shown, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";

	if (a->unix_path) {
		snprintf(shown, len, "%s", ((const struct sockaddr_un *)&a->ss)->sun_path);
		return;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		ss = a->ss;
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(shown, len, "http://[%s]:%u/", ip, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(shown, len, "http://%s:%u/", ip, ntohs(in->sin_port));
	}
}

int listen_open(const struct listen_addr *a, char *shown, size_t len)
{
	int one = 1, err;
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	mode_t mask;

	if (fd < 0)
		return -errno;
	if (!a->unix_path)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* a unix socket readable by its user only, from its creation on */
	mask = a->unix_path ? umask(0177) : 0;
	err = bind(fd, (const struct sockaddr *)&a->ss, a->len) ? errno : 0;
	if (a->unix_path)
		umask(mask);
	if (!err && listen(fd, LISTEN_BACKLOG)) {
		err = errno;
		if (a->unix_path) /* the file this bind made */
			unlink(((const struct sockaddr_un *)&a->ss)->sun_path);
	}
	if (err) {
		close(fd);
		return -err;
	}
	show(fd, a, shown, len);
	return fd;
}
