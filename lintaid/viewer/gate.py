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


def new_token() -> str:
    """32 random bytes, URL-safe: what a path segment may hold as it is."""
    return secrets.token_urlsafe(32)


class Gate:
    def __init__(self, token: str, port: int) -> None:
        self.token = token
        self.port = port
        self.hosts = frozenset({f"{LOOPBACK}:{port}", f"localhost:{port}"})

    def check(self, method: str, target: str, headers: Headers) -> Refusal | str:
        """The path below the token (``/...``, query kept) when the request may go on;
        otherwise the refusal to send."""
        host = (headers.get("Host") or "").strip().lower()
        if host not in self.hosts:
            return Refusal(421, "This viewer answers only at its loopback address "
                                f"http://{LOOPBACK}:{self.port}/.")
        rest = self.below_token(target)
        if rest is None:
            return Refusal(401, "Open the address `lintaid ui` prints: it holds this "
                                "daemon's token.")
        if method not in SAFE_METHODS and not self.same_origin(host, headers):
            return Refusal(403, "A change must come from a page of this viewer "
                                "(cross-origin request refused).")
        return rest

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
