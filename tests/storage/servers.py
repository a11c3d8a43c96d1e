"""Real endpoints on 127.0.0.1 for the storage tests: moto's S3 server, a plain HTTP file server with ranges, and a
proxy that adds latency and injects faults into what passes through it."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import logging
import os
import re
import socket
import threading
import time


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 running in a thread; ``url`` reaches it."""

    def __init__(self, handler: type):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Quiet(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass


class FileServer(_Server):
    """Serves the files under ``root`` with HEAD and ranged GETs (206), as object stores and CDNs do; with
    ``sizes=False``, as a server that streams every file whole and never says how big it is."""

    def __init__(self, root: str, sizes: bool = True):
        self.root = root
        self.sizes = sizes
        super().__init__(_FileHandler)


class _FileHandler(_Quiet):
    def _file(self) -> str | None:
        path = os.path.join(self.server.owner.root, self.path.lstrip("/").split("?")[0])
        return path if os.path.isfile(path) else None

    def do_HEAD(self) -> None:
        path = self._file()
        if path is None:
            self.send_error(404)
            return
        self.send_response(200)
        if self.server.owner.sizes:
            self.send_header("Content-Length", str(os.path.getsize(path)))
            self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_GET(self) -> None:
        path = self._file()
        if path is None:
            self.send_error(404)
            return
        if not self.server.owner.sizes:
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            with open(path, "rb") as f:
                self.wfile.write(f.read())
            self.close_connection = True
            return
        size = os.path.getsize(path)
        start, end = 0, size - 1
        ranged = re.match(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if ranged:
            start = int(ranged.group(1))
            end = min(size - 1, int(ranged.group(2))) if ranged.group(2) else size - 1
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read(end - start + 1)
        self.send_response(206 if ranged else 200)
        if ranged:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


FAULTS = ("503", "cut", "short", "stall")


class FaultProxy(_Server):
    """Forwards every request to ``upstream`` after ``delay`` seconds. Every ``every``-th GET of a byte range gets
    ``fault`` instead of its answer:

    * ``"503"``: a 503 SlowDown answer (what S3 says when throttling);
    * ``"cut"``: the headers and half the body, then the connection is closed;
    * ``"short"``: a well-formed answer with only the first half of the range (rounded up);
    * ``"stall"``: no answer for ``stall`` seconds, then the connection is closed (a client's read timeout).
    """

    def __init__(self, upstream: str, delay: float = 0.0, fault: str | None = None, every: int = 3,
                 stall: float = 2.0):  # fmt: skip
        assert fault is None or fault in FAULTS
        self.upstream = upstream.split("://", 1)[1]
        self.delay, self.fault, self.every, self.stall = delay, fault, every, stall
        self.gone = False  # (go_away(): the endpoint disappears)
        self.requests = 0
        self.ranged_gets = 0
        self.faults = 0
        self._lock = threading.Lock()
        super().__init__(_ProxyHandler)

    def go_away(self) -> None:
        """The endpoint disappears: connections open now are dropped at their next request, new ones refused."""
        self.gone = True
        self.stop()

    def pick(self, command: str, headers) -> str | None:
        with self._lock:
            self.requests += 1
        if command != "GET" or "Range" not in headers:
            return None
        with self._lock:
            self.ranged_gets += 1
            if self.fault is None or self.ranged_gets % self.every:
                return None
            self.faults += 1
            return self.fault


_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"}


class _ProxyHandler(_Quiet):
    def _forward(self) -> None:
        proxy = self.server.owner
        if proxy.gone:
            self._drop()
            return
        if proxy.delay:
            time.sleep(proxy.delay)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        fault = proxy.pick(self.command, self.headers)
        if fault == "503":
            data = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
            self.send_response(503)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if fault == "stall":
            time.sleep(proxy.stall)
            self._drop()
            return
        conn = http.client.HTTPConnection(proxy.upstream, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        conn.request(self.command, self.path, body=body, headers=headers)
        answer = conn.getresponse()
        data = answer.read()
        conn.close()
        sent = data[: (len(data) + 1) // 2] if fault in ("cut", "short") else data
        self.send_response(answer.status)
        for k, v in answer.getheaders():
            if k.lower() not in _HOP:
                self.send_header(k, v)
        length = answer.getheader("Content-Length") if self.command == "HEAD" else len(data)
        self.send_header("Content-Length", str(len(sent) if fault == "short" else length))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(sent)
        if fault == "cut":
            self.wfile.flush()
            self._drop()

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward


class S3Server:
    """moto's S3 server (server mode, as s3fs's own tests use it) on 127.0.0.1."""

    def __init__(self):
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.url = f"http://{host}:{port}"

    def stop(self) -> None:
        self._server.stop()


def s3_options(endpoint: str, **extra) -> dict:
    """s3fs options for a local endpoint; ``extra`` adds to them. Test credentials: nothing leaves 127.0.0.1."""
    return {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
            "use_listings_cache": False, "skip_instance_cache": True, **extra}  # fmt: skip
