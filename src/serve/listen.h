/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_LISTEN_H
#define HEAPTRACE_LISTEN_H

/*
 * --serve's address: IP:PORT ([IPv6]:PORT), :PORT or PORT (host 127.0.0.1), or the path of a
 * unix socket (anything with a '/'). Numeric addresses and "localhost" only: no name is looked
 * up. Port 0 lets the kernel choose; the address listened on is said on standard error.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

struct listen_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	bool loopback; /* 127.0.0.0/8, ::1, or a unix socket */
	bool unix_path;
};

/* Parse arg into *a. Return 0, or -EINVAL with why (for a usage error) filled. */
int listen_parse(const char *arg, struct listen_addr *a, char *why, size_t len);

/* A listening socket on a (non-blocking, close-on-exec; a unix socket is made mode 0600 and
 * never replaces an existing file), and its URL or path in shown. Return the fd, or -errno. */
int listen_open(const struct listen_addr *a, char *shown, size_t len);

#endif
