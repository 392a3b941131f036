"""Protocol v1: the one envelope both sides speak, defined once.

A request is one msgpack map ``{"v": 1, "id": str, "op": str, "args": map}``; a reply is
``{"v": 1, "id": same, "ok": true, "result": ...}`` or
``{"v": 1, "id": same, "ok": false, "error": {"code": str, "message": str}}``.

This module is imported by the hook shim on every event, so it imports only the standard
library and msgpack.

Exception tree::

    LintaidError
    ├── DaemonUnavailable      nobody answers on the endpoint
    ├── DaemonTimeout          the daemon took longer than the deadline
    └── RemoteError            the daemon answered ok=false (carries .code)
        ├── BadRequest         bad_request, too_large
        ├── UnknownOp          unknown_op
        ├── ProtocolMismatch   unsupported_version
        ├── NotFound           not_found
        └── Forbidden          forbidden
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Final

import msgpack

VERSION: Final = 1
MAX_MESSAGE_BYTES: Final = 8 * 1024 * 1024

BAD_REQUEST: Final = "bad_request"
UNKNOWN_OP: Final = "unknown_op"
UNSUPPORTED_VERSION: Final = "unsupported_version"
NOT_FOUND: Final = "not_found"
FORBIDDEN: Final = "forbidden"
TOO_LARGE: Final = "too_large"
INTERNAL: Final = "internal"


class LintaidError(Exception):
    """Base of every error the client side raises."""


class DaemonUnavailable(LintaidError):
    """No daemon answers for this project."""


class DaemonTimeout(LintaidError):
    """The daemon did not answer before the deadline."""


class RemoteError(LintaidError):
    """The daemon answered with ``ok: false``."""

    code = INTERNAL

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message


class BadRequest(RemoteError):
    code = BAD_REQUEST


class UnknownOp(RemoteError):
    code = UNKNOWN_OP


class ProtocolMismatch(RemoteError):
    code = UNSUPPORTED_VERSION


class NotFound(RemoteError):
    code = NOT_FOUND


class Forbidden(RemoteError):
    code = FORBIDDEN


_ERRORS_BY_CODE: Final[dict[str, type[RemoteError]]] = {
    BAD_REQUEST: BadRequest,
    TOO_LARGE: BadRequest,
    UNKNOWN_OP: UnknownOp,
    UNSUPPORTED_VERSION: ProtocolMismatch,
    NOT_FOUND: NotFound,
    FORBIDDEN: Forbidden,
}

_counter = itertools.count(1)


def new_request_id() -> str:
    """Return an id unique across processes: pid, a counter and random bits."""
    return f"{os.getpid():x}-{next(_counter):x}-{os.urandom(4).hex()}"


def pack(message: dict[str, Any]) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def unpack(data: bytes) -> Any:
    """Decode one message; raise ValueError for anything that is not well-formed msgpack."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise ValueError("message too large")
    return msgpack.unpackb(
        data,
        raw=False,
        strict_map_key=True,
        max_str_len=MAX_MESSAGE_BYTES,
        max_bin_len=MAX_MESSAGE_BYTES,
        max_array_len=1_000_000,
        max_map_len=1_000_000,
    )


def request(op: str, args: dict[str, Any] | None = None, request_id: str | None = None) -> dict:
    return {"v": VERSION, "id": request_id or new_request_id(), "op": op, "args": args or {}}


def ok_reply(request_id: str, result: Any) -> dict:
    return {"v": VERSION, "id": request_id, "ok": True, "result": result}


def error_reply(request_id: str | None, code: str, message: str) -> dict:
    return {
        "v": VERSION,
        "id": request_id,
        "ok": False,
        "error": {"code": code, "message": message},
    }


def raise_for_error(reply: dict) -> Any:
    """Return the reply's result, or raise the RemoteError its error code names."""
    if reply.get("ok"):
        return reply.get("result")
    error = reply.get("error") or {}
    code = str(error.get("code") or INTERNAL)
    message = str(error.get("message") or "daemon error")
    raise _ERRORS_BY_CODE.get(code, RemoteError)(message, code)
