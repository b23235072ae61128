#!/usr/bin/env python3
"""A small HTTP/1.1 file server for the download tests.

Serves --root on 127.0.0.1 at an ephemeral port and prints that port on stdout. It honours
Range requests (206 + Content-Range, 416 past the end), and two path prefixes change the
behaviour so the tests can provoke what real mirrors do:

  /cut/N/name      drops the connection once the response has reached byte N of the file,
                   like a transfer interrupted midway; a request starting at or past N is
                   served whole, so the same URL resumes cleanly.
  /norange/name    ignores Range and always answers 200 with the whole file.
  /slow/N/name     sends at about N bytes per second, to watch progress reporting.
  /nolength/name   sends the file with no Content-Length, ending it by closing the connection.
  /redirect/URL    answers 302 with Location: URL (the rest of the path, scheme included).
  /portal/anything answers 200 with an HTML login page served as text/html, the way a
                   captive portal answers every URL.

Files ending in .html are served as text/html. With --tls CERT KEY it serves HTTPS instead.

Every request is appended to --log as "METHOD path range" (range "-" when absent).
"""

import argparse
import os
import re
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG_LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = "."
    log_path = None

    def log_message(self, format, *args):  # noqa: A002 - keep stderr quiet
        pass

    def record(self):
        if not self.log_path:
            return
        with LOG_LOCK, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(f"{self.command} {self.path} {self.headers.get('Range', '-')}\n")

    def do_HEAD(self):
        self.serve(send_body=False)

    def do_GET(self):
        self.serve(send_body=True)

    def send_plain(self, code, text, extra=None):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def serve(self, send_body):
        self.record()
        if self.path.startswith("/redirect/"):
            self.send_plain(302, "moved\n", {"Location": self.path[len("/redirect/"):]})
            return
        path = self.path.split("?", 1)[0]
        if path.startswith("/portal/"):
            self.send_page(PORTAL_PAGE)
            return
        cut = None
        rate = None
        honour_range = True
        send_length = True
        m = re.match(r"^/(cut|slow)/(\d+)(/.*)$", path)
        if m and m.group(1) == "cut":
            cut, path = int(m.group(2)), m.group(3)
        elif m:
            rate, path = max(1, int(m.group(2))), m.group(3)
        elif path.startswith("/norange/"):
            honour_range, path = False, path[len("/norange"):]
        elif path.startswith("/nolength/"):
            honour_range, send_length, path = False, False, path[len("/nolength"):]

        rel = os.path.normpath(path.lstrip("/"))
        full = os.path.join(self.root, rel)
        if rel.startswith("..") or not os.path.isfile(full):
            self.send_plain(404, "not found\n")
            return
        size = os.path.getsize(full)

        start, end = 0, size - 1
        rng = self.headers.get("Range") if honour_range else None
        partial = False
        if rng:
            m = re.match(r"^bytes=(\d*)-(\d*)$", rng.strip())
            if not m or (m.group(1) == "" and m.group(2) == ""):
                self.send_plain(400, "bad range\n")
                return
            if m.group(1) == "":  # suffix range: the last N bytes
                start = max(0, size - int(m.group(2)))
            else:
                start = int(m.group(1))
                if m.group(2):
                    end = min(end, int(m.group(2)))
            if start >= size or start > end:
                self.send_plain(416, "range not satisfiable\n",
                                {"Content-Range": f"bytes */{size}"})
                return
            partial = True

        length = end - start + 1
        self.send_response(206 if partial else 200)
        html = full.endswith(".html")
        self.send_header("Content-Type",
                         "text/html; charset=utf-8" if html else "application/octet-stream")
        if send_length:
            self.send_header("Content-Length", str(length))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.send_header("Accept-Ranges", "bytes" if honour_range else "none")
        if partial:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if not send_body:
            return

        stop = end + 1
        if cut is not None and start < cut < stop:
            stop = cut
        with open(full, "rb") as f:
            f.seek(start)
            left = stop - start
            step = min(64 * 1024, rate // 10 + 1) if rate else 64 * 1024
            while left > 0:
                chunk = f.read(min(left, step))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)
                if rate:
                    self.wfile.flush()
                    time.sleep(len(chunk) / rate)
        if stop != end + 1:
            # Promised Content-Length bytes but sent fewer: the client must see a broken transfer.
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass


    def send_page(self, text):
        body = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


PORTAL_PAGE = """<!DOCTYPE html>
<html><head><title>Guest WiFi</title></head>
<body><form action="/login">Accept the terms to continue</form></body></html>
"""


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that gives up midway (the resume tests do) is not a server error.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="directory to serve")
    parser.add_argument("--log", help="file to append one line per request to")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve HTTPS")
    args = parser.parse_args()

    Handler.root = os.path.abspath(args.root)
    Handler.log_path = args.log
    server = Server(("127.0.0.1", 0), Handler)
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
