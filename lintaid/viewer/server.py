"""The viewer's HTTP server: the standard library's ``ThreadingHTTPServer`` on 127.0.0.1,
serving from a thread of the daemon (one more thread per open connection).

Every request passes the gate (Host, token, same origin for changes) before a page runs, and
every answer carries headers that keep the page to itself: no framing, no scripts or styles
but the viewer's own files, no referrer to other sites, nothing cached. HTTP/1.0 without
keep-alive: a connection serves one request, so stopping never waits on an idle browser.

The same server serves the HTTP API (``lintaid.api``, mounted by the daemon): a path not
below the viewer's token goes to it once the gate has checked its Host, bearer token and
origin, with its body read here within ``MAX_BODY_BYTES``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

from lintaid.logs import get_logger
from lintaid_client import protocol

from ..ops import Services
from .gate import LOOPBACK, ApiRequest, Gate, Headers, Refusal, new_token
from .live import Changes
from .routes import App, Request, Response, parse_query

log = get_logger("lintaid.viewer")

MAX_FORM_BYTES: Final = 512 * 1024
"""A form larger than this is refused (413): the largest text an op takes is 256 KiB."""
MAX_BODY_BYTES: Final = protocol.MAX_MESSAGE_BYTES
"""An API request's body may be as large as a socket message (8 MiB), no larger (413)."""
DRAIN_BYTES: Final = 8 * 1024 * 1024
"""A refused body up to this size is read and dropped before the answer; a larger one is
answered at once and the connection closed."""
HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class Mount(Protocol):
    """The HTTP API as this server serves it (``lintaid.api.app.Api``)."""

    token: str

    def handle(self, method: str, path: str, query: str, headers: Headers,
               body: bytes) -> Response: ...

    def refused(self, status: int, reason: str) -> Response: ...


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins the request threads
    block_on_close = True
    gate: Gate
    app: App
    changes: Changes
    on_request: Callable[[], None] | None
    api: Mount | None


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    server_version = "lintaid-viewer"
    sys_version = ""
    protocol_version = "HTTP/1.0"
    timeout = 30  # a client that sends its request this slowly is dropped

    def do_GET(self) -> None:
        self._serve("GET")

    def do_HEAD(self) -> None:
        self._serve("HEAD")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_OPTIONS(self) -> None:
        self._serve("OPTIONS")

    def _serve(self, method: str) -> None:
        if self.server.on_request is not None:  # a page in use keeps the daemon up
            self.server.on_request()
        verdict = self.server.gate.check(method, self.path, self.headers)
        api = self.server.api
        if isinstance(verdict, Refusal):
            if verdict.api and api is not None:
                self._discard(self._length() or 0)
                self._answer(api.refused(verdict.status, verdict.reason), method)
                return
            self._answer(Response(status=verdict.status, body=verdict.reason.encode() + b"\n",
                                  content_type="text/plain; charset=utf-8"), method)
            return
        if isinstance(verdict, ApiRequest):
            assert api is not None
            self._api(api, method, verdict.target)
            return
        parts = urlsplit(verdict)
        try:
            request = Request(method, parts.path, parse_query(parts.query),
                              self._form() if method == "POST" else {})
        except _Refused as refused:
            self._answer(refused.response, method)
            return
        except ValueError:
            self._answer(_plain(400, "The request's query or form could not be read."), method)
            return
        try:
            response = self.server.app.handle(request)
        except Exception as err:  # a bug: the page says so, the daemon keeps serving
            log.error("viewer_page_failed", path=parts.path[:80], error=str(err), exc_info=err)
            response = self.server.app.error(500, f"{type(err).__name__}: {err}")
        self._answer(response, method)

    def _api(self, api: Mount, method: str, target: str) -> None:
        parts = urlsplit(target)
        if self.headers.get("Transfer-Encoding"):
            self._answer(api.refused(411, "Send the body with its Content-Length."), method)
            return
        size = self._length()
        if size is None or size < 0:
            self._answer(api.refused(400, "The Content-Length is not a number."), method)
            return
        if size > MAX_BODY_BYTES:
            self._discard(size)
            self._answer(api.refused(413, f"A body may hold at most {MAX_BODY_BYTES} bytes; "
                                          f"this one has {size}."), method)
            return
        body = self.rfile.read(size) if size else b""
        if len(body) != size:
            return  # the client went away mid-body: nobody to answer, nothing done
        self._answer(api.handle(method, parts.path, parts.query, self.headers, body), method)

    def _length(self) -> int | None:
        """The request's Content-Length (0 when it has none); None when not a number."""
        try:
            return int(self.headers.get("Content-Length") or "0")
        except ValueError:
            return None

    def _form(self) -> dict[str, str]:
        try:
            size = int(self.headers.get("Content-Length") or "")
        except ValueError:
            raise _Refused(_plain(411, "A form needs its Content-Length.")) from None
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            self._discard(size)
            raise _Refused(_plain(415, "Changes are sent as forms "
                                       "(application/x-www-form-urlencoded)."))
        if size < 0 or size > MAX_FORM_BYTES:
            self._discard(size)
            raise _Refused(_plain(413, f"A form may hold at most {MAX_FORM_BYTES} bytes."))
        return parse_query(self.rfile.read(size).decode("utf-8"))

    def _discard(self, size: int) -> None:
        """Read a refused body (up to ``DRAIN_BYTES``), so the browser, still sending it,
        gets the answer instead of a reset connection."""
        left = min(size, DRAIN_BYTES)
        while left > 0:
            chunk = self.rfile.read(min(left, 65536))
            if not chunk:
                return
            left -= len(chunk)

    def _answer(self, response: Response, method: str) -> None:
        self.send_response(response.status)
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.send_header("Content-Type", response.content_type)
        if response.location:
            self.send_header("Location", response.location)
        for name, value in response.headers.items():
            self.send_header(name, value)
        if response.stream is not None:
            self.end_headers()
            if method != "HEAD":
                self._stream(response)
            return
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(response.body)

    def _stream(self, response: Response) -> None:
        def write(data: bytes) -> None:
            self.wfile.write(data)
            self.wfile.flush()

        assert response.stream is not None
        try:
            response.stream(write)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the page went away

    def log_message(self, format: str, *args: Any) -> None:
        """Never the request line: its path holds the token."""


class _Refused(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


def _plain(status: int, text: str) -> Response:
    return Response(status=status, body=text.encode() + b"\n",
                    content_type="text/plain; charset=utf-8")


class Viewer:
    """One daemon's viewer: bound by ``start``, stopped (every request thread joined) by
    ``stop``. ``changed`` is the writer's after-commit hook."""

    def __init__(self, services: Services, root: Path, port: int | None = None, *,
                 on_request: Callable[[], None] | None = None,
                 api: Mount | None = None) -> None:
        """``on_request``: called at each request (the daemon's idle clock); a live stream
        left open counts once, when it opens. ``api``: the HTTP API this server serves too."""
        self.services = services
        self.api = api
        self.on_request = on_request
        self.root = root
        self.requested_port = port or 0
        self.token = new_token()
        self.changes = Changes()
        self.started_at: float | None = None
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "not started"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/{self.token}/"

    def start(self) -> None:
        """Listen on the loopback address only; OSError when the port cannot be had."""
        httpd = _HTTPServer((LOOPBACK, self.requested_port), _Handler)
        httpd.gate = Gate(self.token, int(httpd.server_address[1]),
                          self.api.token if self.api is not None else None)
        httpd.api = self.api
        httpd.changes = self.changes
        httpd.on_request = self.on_request
        httpd.app = App(self.services, self.root, f"/{self.token}", self.changes)
        self._httpd = httpd
        self.started_at = time.time()
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="lintaid-viewer", daemon=True)
        self._thread.start()
        log.info("viewer_started", port=self.port)

    def changed(self) -> None:
        self.changes.changed()

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self.changes.close()  # live streams end
        httpd.shutdown()
        httpd.server_close()  # joins the request threads
        if self._thread is not None:
            self._thread.join(10)
        log.info("viewer_stopped")

    def to_dict(self) -> dict[str, Any]:
        return {"url": self.url, "port": self.port, "address": LOOPBACK,
                "started_at": self.started_at}
