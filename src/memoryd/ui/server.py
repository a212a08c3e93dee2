"""The HTTP side of ``memoryd ui``: a stdlib threading server that only its own page can use.

Why these rules (a memory folder holds a person's notes; any local process or web page
may try to read it through this server):

- it listens on 127.0.0.1 only, on a random free port unless told otherwise;
- every request carries the per-run token (``?token=`` in the URL the command prints, or
  the ``X-Memoryd-Token`` header the page sends), compared in constant time;
- the Host header must name 127.0.0.1 or localhost at this port, so a DNS-rebinding page
  (evil.example resolving to 127.0.0.1) is refused even before the token is looked at;
- a write is a POST with a JSON body, the ``X-CSRF-Token`` header (a second per-run
  secret that lives only in the page, never in a URL) and, when the browser sends one,
  an Origin equal to this server's; a GET never changes anything;
- static assets come from a fixed list inside the package, never from a path the request
  names; memory files are read only through :mod:`memoryd.ui.views`, which keeps them
  inside the roots;
- every response forbids framing, sniffing, referrers (the token is in the URL) and any
  script, style or connection that is not this server's own (Content-Security-Policy).
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from memoryd.app import App
from memoryd.errors import MemorydError, PathError
from memoryd.ui.views import Views

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}
TOKEN_MISSING = "memoryd ui: open the link that 'memoryd ui' printed (it carries this run's token)"


class UIServer(ThreadingHTTPServer):
    """One run of the page: its address, its two secrets and the views it answers with."""

    daemon_threads = True
    allow_reuse_address = False  # never share a port another process holds

    def __init__(self, app: App, port: int = 0) -> None:
        super().__init__((HOST, port), Handler)
        self.views = Views(app)
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/?token={self.token}"

    def allowed_hosts(self) -> set[str]:
        return {f"{HOST}:{self.port}", f"localhost:{self.port}"}


def make_server(app: App, port: int = 0) -> UIServer:
    """The server bound to 127.0.0.1:``port`` (0: a free one), not yet serving."""
    try:
        return UIServer(app, port)
    except OSError as exc:
        raise MemorydError(
            f"cannot listen on {HOST}:{port}: {exc.strerror or exc}",
            hint="leave --port out for a free port, or pick another one",
        ) from exc


class Refusal(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Handler(BaseHTTPRequestHandler):
    server: UIServer
    server_version = "memoryd-ui"
    sys_version = ""
    timeout = 30  # a silent connection is dropped, never held forever

    # -- the two methods; anything else gets http.server's own 501
    def do_GET(self) -> None:
        self._answer(write=False)

    def do_POST(self) -> None:
        self._answer(write=True)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def _answer(self, write: bool) -> None:
        url = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        try:
            self._check_host()
            self._check_token(params.get("token"))
            if write:
                self._check_write()
                params = self._body()
            self._route(url.path, params, write)
        except Refusal as exc:
            self._send_error(exc.status, exc.message, url.path)

    # -- checks
    def _check_host(self) -> None:
        host = self.headers.get("Host", "")
        if host.lower() not in self.server.allowed_hosts():
            raise Refusal(HTTPStatus.FORBIDDEN, f"memoryd ui: Host {host!r} is not this server")

    def _check_token(self, from_query: str | None) -> None:
        given = self.headers.get("X-Memoryd-Token") or from_query or ""
        if not hmac.compare_digest(given.encode(), self.server.token.encode()):
            raise Refusal(HTTPStatus.FORBIDDEN, TOKEN_MISSING)

    def _check_write(self) -> None:
        csrf = self.headers.get("X-CSRF-Token", "")
        if not hmac.compare_digest(csrf.encode(), self.server.csrf.encode()):
            raise Refusal(HTTPStatus.FORBIDDEN, "memoryd ui: a change needs this page's CSRF token")
        origin = self.headers.get("Origin")
        if origin is not None and origin not in {
            f"http://{h}" for h in self.server.allowed_hosts()
        }:
            raise Refusal(HTTPStatus.FORBIDDEN, f"memoryd ui: Origin {origin!r} is not this page")
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise Refusal(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "memoryd ui: a change is sent as JSON")

    def _body(self) -> dict[str, str]:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            raise Refusal(HTTPStatus.BAD_REQUEST, "memoryd ui: the request body is too large")
        try:
            data = json.loads(self.rfile.read(length) or b"{}")
        except ValueError as exc:
            message = f"memoryd ui: the body is not JSON: {exc}"
            raise Refusal(HTTPStatus.BAD_REQUEST, message) from exc
        if not isinstance(data, dict):
            raise Refusal(HTTPStatus.BAD_REQUEST, "memoryd ui: the body must be a JSON object")
        return {str(k): _flat(v) for k, v in data.items()}

    # -- routes
    def _route(self, path: str, params: dict[str, str], write: bool) -> None:
        if path == "/" and not write:
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", self._page())
        elif path.startswith("/static/") and not write:
            name = path.removeprefix("/static/")
            if name not in ASSETS:
                raise Refusal(HTTPStatus.NOT_FOUND, "memoryd ui: no such asset")
            self._send(HTTPStatus.OK, ASSETS[name], _asset(name))
        elif path.startswith("/api/"):
            self._api(path.removeprefix("/api/"), params, write)
        else:
            raise Refusal(HTTPStatus.NOT_FOUND, f"memoryd ui: nothing at {path}")

    def _api(self, name: str, params: dict[str, str], write: bool) -> None:
        views = self.server.views
        if not write and views.is_write(name):
            raise Refusal(HTTPStatus.METHOD_NOT_ALLOWED, f"memoryd ui: {name} is a change: POST")
        try:
            data = views.post(name, params) if write else views.get(name, params)
        except LookupError:
            raise Refusal(HTTPStatus.NOT_FOUND, f"memoryd ui: no API {name!r}") from None
        except PathError as exc:
            self._send_json(HTTPStatus.FORBIDDEN, {"error": exc.message, "hint": exc.hint})
            return
        except MemorydError as exc:
            status = HTTPStatus.BAD_REQUEST if exc.exit_code == 2 else HTTPStatus.CONFLICT
            self._send_json(status, {"error": exc.message, "hint": exc.hint})
            return
        except Exception as exc:  # a bug: the log keeps the traceback, the page says so
            log.exception("memoryd ui: %s failed", name)
            self._send_json(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                {"error": f"internal error: {type(exc).__name__}: {exc}", "hint": None},
            )
            return
        self._send_json(HTTPStatus.OK, data)

    def _page(self) -> bytes:
        page = _asset("index.html").decode("utf-8")
        page = page.replace("{{TOKEN}}", self.server.token).replace("{{CSRF}}", self.server.csrf)
        return page.encode("utf-8")

    # -- sending
    def _send_json(self, status: HTTPStatus, data: Any) -> None:
        text = json.dumps(data, ensure_ascii=False, default=str)
        body = text.encode("utf-8", "backslashreplace")  # a non-UTF-8 file name: \udcXX escapes
        self._send(status, "application/json; charset=utf-8", body)

    def _send_error(self, status: HTTPStatus, message: str, path: str) -> None:
        if path.startswith("/api/"):
            self._send_json(status, {"error": message, "hint": None})
        else:
            self._send(status, "text/plain; charset=utf-8", (message + "\n").encode("utf-8"))

    def _send(self, status: HTTPStatus, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def _asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


def _flat(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)
