"""Who may talk to the viewer: three checks every request passes before any page runs.

1. **Host** (DNS rebinding): the ``Host`` header must name the loopback address and the
   viewer's port (``127.0.0.1:PORT`` or ``localhost:PORT``). A page on another site whose
   name was re-pointed at 127.0.0.1 sends its own name, and is answered 421.
2. **Token**: every path starts with this daemon's random token (``/TOKEN/...``); anything
   else is answered 401, static files and the live-update stream included. The token lives in
   the daemon's memory only and changes with every daemon.
3. **Same origin** (CSRF): a request that may change something (any method but GET and HEAD)
   must come from a page of the viewer itself: its ``Origin`` names the same scheme, host and
   port (or, without ``Origin``, ``Sec-Fetch-Site`` says ``same-origin``); else 403.

The HTTP API (every path not below the viewer's token, when the server has one) passes the
same Host check; then its bearer token (``Authorization: Bearer TOKEN``, the project's token
file) or 401; then, whatever the method, no web page of another origin (an ``Origin`` that is
not this server's, or ``Sec-Fetch-Site`` saying another site): 403. Programs (curl, Node's
``fetch``) send neither.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Final, Protocol
from urllib.parse import urlsplit

LOOPBACK: Final = "127.0.0.1"
SAFE_METHODS: Final = frozenset({"GET", "HEAD"})


class Headers(Protocol):
    def get(self, name: str, /) -> str | None: ...


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str
    api: bool = False  # a refusal of an API request (answered as the API answers errors)


@dataclass(frozen=True)
class ApiRequest:
    """An API request let through: its target as sent (path and query)."""

    target: str


def new_token() -> str:
    """32 random bytes, URL-safe: what a path segment may hold as it is."""
    return secrets.token_urlsafe(32)


class Gate:
    """``api_token``: the HTTP API's bearer token; None: the server serves no API."""

    def __init__(self, token: str, port: int, api_token: str | None = None) -> None:
        self.token = token
        self.port = port
        self.api_token = api_token
        self.hosts = frozenset({f"{LOOPBACK}:{port}", f"localhost:{port}"})

    def check(self, method: str, target: str, headers: Headers) -> Refusal | ApiRequest | str:
        """The path below the token (``/...``, query kept) when a viewer request may go on,
        an ``ApiRequest`` when an API request may; otherwise the refusal to send."""
        host = (headers.get("Host") or "").strip().lower()
        rest = self.below_token(target)
        api = rest is None and self.api_token is not None
        if host not in self.hosts:
            return Refusal(421, "This server answers only at its loopback address "
                                f"http://{LOOPBACK}:{self.port}/.", api)
        if api:
            return self._api(host, target, headers)
        if rest is None:
            return Refusal(401, "Open the address `lintaid ui` prints: it holds this "
                                "daemon's token.")
        if method not in SAFE_METHODS and not self.same_origin(host, headers):
            return Refusal(403, "A change must come from a page of this viewer "
                                "(cross-origin request refused).")
        return rest

    def _api(self, host: str, target: str, headers: Headers) -> Refusal | ApiRequest:
        assert self.api_token is not None
        scheme, _, given = (headers.get("Authorization") or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
                given.strip().encode(), self.api_token.encode()):
            return Refusal(401, "Send the project's token as 'Authorization: Bearer TOKEN' "
                                "(the file .lint-ai/http-token holds it).", True)
        origin = headers.get("Origin")
        site = (headers.get("Sec-Fetch-Site") or "").strip().lower()
        if (origin is not None and origin.strip().lower() != f"http://{host}") or (
                site in ("cross-site", "same-site")):
            return Refusal(403, "A request from a web page of another origin is refused.",
                           True)
        return ApiRequest(target)

    def below_token(self, target: str) -> str | None:
        """``target`` without its leading ``/TOKEN``; None when it does not start with it."""
        parts = urlsplit(target)
        segment, _, rest = parts.path.lstrip("/").partition("/")
        if not hmac.compare_digest(segment.encode(), self.token.encode()):
            return None
        return "/" + rest + (f"?{parts.query}" if parts.query else "")

    @staticmethod
    def same_origin(host: str, headers: Headers) -> bool:
        origin = headers.get("Origin")
        if origin is not None:
            return origin.strip().lower() == f"http://{host}"
        return (headers.get("Sec-Fetch-Site") or "").strip().lower() == "same-origin"
