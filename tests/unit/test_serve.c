// SPDX-License-Identifier: GPL-2.0-only
/* --serve's pure parts: request heads (serve/http.c), addresses (listen.c), label values
 * (metrics.c). */
#include <errno.h>
#include <netinet/in.h>

#include "serve/http.h"
#include "serve/listen.h"
#include "serve/metrics.h"
#include "unittest.h"

static int parse(const char *s, struct http_request *req)
{
	size_t used = 0;

	return http_parse(s, strlen(s), req, &used);
}

TEST_CASE(http_get_with_query)
{
	struct http_request req;

	CHECK_EQ(parse("GET /debug/pprof/heap?seconds=30&pid=42&gc=1 HTTP/1.1\r\nHost: x\r\n"
		       "Accept-Encoding: gzip\r\n\r\n", &req), 0);
	CHECK_STREQ(req.path, "/debug/pprof/heap");
	CHECK_EQ(req.seconds, 30);
	CHECK_EQ(req.pid, 42);
	CHECK_EQ(req.debug, -1);
	CHECK(!req.bad_number);
	CHECK_EQ(req.method, HTTP_GET);
	CHECK_EQ(parse("HEAD / HTTP/1.0\n\n", &req), 0); /* bare LFs */
	CHECK_EQ(req.method, HTTP_HEAD);
	CHECK_STREQ(req.path, "/");
}

TEST_CASE(http_incomplete_and_bad)
{
	struct http_request req;
	char big[HTTP_HEAD_MAX + 16];

	CHECK_EQ(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &req), 1);
	CHECK_EQ(parse("G", &req), 1);
	CHECK_EQ(parse("\x16\x03\x01", &req), 400); /* a TLS hello: at once */
	CHECK_EQ(parse("GET http://h/metrics HTTP/1.1\r\n\r\n", &req), 400);
	CHECK_EQ(parse("GET  /metrics HTTP/1.1\r\n\r\n", &req), 400);
	CHECK_EQ(parse("GET /me\x01trics HTTP/1.1\r\n\r\n", &req), 400);
	CHECK_EQ(parse("GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", &req), 400);
	CHECK_EQ(parse("GET /metrics HTTP/1.1\r\nA: b\x7f\x01\r\n\r\n", &req), 400);
	CHECK_EQ(parse("DELETE /metrics HTTP/1.1\r\n\r\n", &req), 405);
	CHECK_EQ(parse("GET /metrics HTTP/2.0\r\n\r\n", &req), 505);
	CHECK_EQ(parse("GET /metrics FTP/1.0\r\n\r\n", &req), 400);
	CHECK_EQ(parse("GET /metrics?pid=x HTTP/1.1\r\n\r\n", &req), 0);
	CHECK(req.bad_number);
	CHECK_EQ(parse("GET /metrics?seconds=99999999999999 HTTP/1.1\r\n\r\n", &req), 0);
	CHECK(req.bad_number);
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /", 5);
	big[sizeof(big) - 1] = '\0';
	CHECK_EQ(parse(big, &req), 431);
}

TEST_CASE(http_path_as_sent)
{
	struct http_request req;
	char line[HTTP_PATH_MAX + 32];

	/* not decoded: compared with the routes as it is */
	CHECK_EQ(parse("GET /%2e%2e/etc/passwd HTTP/1.1\r\n\r\n", &req), 0);
	CHECK_STREQ(req.path, "/%2e%2e/etc/passwd");
	snprintf(line, sizeof(line), "GET /%0*d HTTP/1.1\r\n\r\n", HTTP_PATH_MAX, 0);
	CHECK_EQ(parse(line, &req), 414);
}

TEST_CASE(http_head_fits)
{
	char buf[512];
	size_t n = http_head(buf, sizeof(buf), 404, "text/plain", 12, NULL);

	REQUIRE(n > 0);
	CHECK(!strncmp(buf, "HTTP/1.1 404 Not Found\r\n", 24));
	CHECK(strstr(buf, "Content-Length: 12\r\n") != NULL);
	CHECK(strstr(buf, "Connection: close\r\n") != NULL);
	CHECK(!strcmp(buf + n - 4, "\r\n\r\n"));
	CHECK_EQ(http_head(buf, 16, 200, "text/plain", 1, NULL), 0);
}

TEST_CASE(listen_addresses)
{
	struct listen_addr a;
	char why[256];

	CHECK_EQ(listen_parse("6060", &a, why, sizeof(why)), 0);
	CHECK(a.loopback && a.ss.ss_family == AF_INET);
	CHECK_EQ(ntohs(((struct sockaddr_in *)&a.ss)->sin_port), 6060);
	CHECK_EQ(listen_parse(":0", &a, why, sizeof(why)), 0);
	CHECK(a.loopback);
	CHECK_EQ(listen_parse("localhost:1", &a, why, sizeof(why)), 0);
	CHECK(a.loopback);
	CHECK_EQ(listen_parse("127.8.9.10:1", &a, why, sizeof(why)), 0);
	CHECK(a.loopback);
	CHECK_EQ(listen_parse("0.0.0.0:6060", &a, why, sizeof(why)), 0);
	CHECK(!a.loopback);
	CHECK_EQ(listen_parse("10.1.2.3:6060", &a, why, sizeof(why)), 0);
	CHECK(!a.loopback);
	CHECK_EQ(listen_parse("[::1]:6060", &a, why, sizeof(why)), 0);
	CHECK(a.loopback && a.ss.ss_family == AF_INET6);
	CHECK_EQ(listen_parse("[::]:6060", &a, why, sizeof(why)), 0);
	CHECK(!a.loopback);
	CHECK_EQ(listen_parse("./ht.sock", &a, why, sizeof(why)), 0);
	CHECK(a.loopback && a.unix_path);
	CHECK_EQ(listen_parse("host.example:80", &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ(listen_parse("1.2.3.4:65536", &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ(listen_parse("1.2.3.4:", &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ(listen_parse("[::1", &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ(listen_parse("::1:80", &a, why, sizeof(why)), -EINVAL);
	CHECK_EQ(listen_parse("1.2.3.4:-1", &a, why, sizeof(why)), -EINVAL);
}

TEST_CASE(metrics_label_escapes)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f != NULL);
	metrics_label(f, "a\"b\\c\nd \xff\xc3\xa9");
	fclose(f);
	CHECK_STREQ(buf, "a\\\"b\\\\c\\nd ?\xc3\xa9");
	free(buf);
}
