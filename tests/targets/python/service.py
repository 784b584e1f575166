# SPDX-License-Identifier: GPL-2.0-only
"""A small Python web service for tests/e2e/test_pyservice.py: http.server on 127.0.0.1, a
thread per request. GET /item/N renders a page for N in Catalog.render (which keeps it in a
cache, so the service's memory grows with the items asked for) and answers it; GET /count
answers the cache's size; GET /quit stops the server. It prints "port P" once it listens and
exits 0 when stopped.
"""

import http.server
import sys
import threading


class Catalog:
    def __init__(self):
        self.cache = {}
        self.lock = threading.Lock()

    def render(self, n):
        rows = ["<li>item %d row %d</li>" % (n, i) for i in range(20)]  # site rows
        page = "<ul>%s</ul>" % "".join(rows)  # site page
        with self.lock:
            self.cache[n] = page
        return page


CATALOG = Catalog()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if parts[0] == "item" and len(parts) == 2 and parts[1].isdigit():
            body = CATALOG.render(int(parts[1])).encode()
        elif parts == ["count"]:
            body = str(len(CATALOG.cache)).encode()
        elif parts == ["quit"]:
            body = b"bye"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if parts == ["quit"]:  # once answered
            self.wfile.flush()
            threading.Thread(target=self.server.shutdown).start()

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("port %d" % server.server_address[1], flush=True)
    server.serve_forever()
    server.server_close()
    sys.exit(0)


main()
