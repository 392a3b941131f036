"""Protocol v1: the one envelope both sides speak, defined once.

A request is one map ``{"v": 1, "id": str, "op": str, "args": map}``, optionally with
``"after": token`` (read-your-writes: answer only once the write that returned ``token`` is
searchable). A reply is ``{"v": 1, "id": same, "ok": true, "result": ...}`` (a write's reply
also carries ``"token"``) or ``{"v": 1, "id": same, "ok": false, "error": {"code": str,
"message": str, "retryable": bool}}``.

On the wire a message is one ZeroMQ frame holding msgpack, or two frames
``[CONTENT_JSON, json]`` for peers without msgpack (the standard-library hook). The daemon
answers in the shape it was asked in.

This module is imported by the hook shim on every event: it imports only the standard library
at module level; msgpack is loaded on first use by ``pack``/``unpack``.

Exception tree::

    LintaidError
    ├── DaemonUnavailable      nobody answers on the endpoint (nothing was sent)
    ├── DaemonTimeout          the daemon took longer than the deadline
    └── RemoteError            the daemon answered ok=false (carries .code, .retryable)
        ├── BadRequest         bad_request, too_large
        ├── UnknownOp          unknown_op
        ├── ProtocolMismatch   unsupported_version
        ├── NotFound           not_found
        ├── Forbidden          forbidden
        └── Unavailable        unavailable (transient: disk full, stopping; a retry may help)
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Any, Final

VERSION: Final = 1
MAX_MESSAGE_BYTES: Final = 8 * 1024 * 1024
CONTENT_JSON: Final = b"application/json"
MAX_DEPTH: Final = 64

BAD_REQUEST: Final = "bad_request"
UNKNOWN_OP: Final = "unknown_op"
UNSUPPORTED_VERSION: Final = "unsupported_version"
NOT_FOUND: Final = "not_found"
FORBIDDEN: Final = "forbidden"
TOO_LARGE: Final = "too_large"
UNAVAILABLE: Final = "unavailable"
INTERNAL: Final = "internal"

RETRYABLE: Final = frozenset({UNAVAILABLE, INTERNAL})
"""Codes for which the same request may succeed later: the hook spools such an event."""


class LintaidError(Exception):
    """Base of every error the client side raises."""


class DaemonUnavailable(LintaidError):
    """No daemon answers for this project."""


class DaemonTimeout(LintaidError):
    """The daemon did not answer before the deadline."""


class DaemonGone(DaemonTimeout):
    """The daemon went away (killed, crashed) after the request was sent: no answer will
    come, and what it did before it went is all that was done."""


class RemoteError(LintaidError):
    """The daemon answered with ``ok: false``."""

    code = INTERNAL

    def __init__(self, message: str, code: str | None = None, *, arg: str | None = None,
                 retryable: bool | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.arg = arg
        self.retryable = self.code in RETRYABLE if retryable is None else retryable


class BadRequest(RemoteError, ValueError):
    """The request is wrong as sent (also a ValueError: the caller's mistake)."""

    code = BAD_REQUEST


class UnknownOp(RemoteError):
    code = UNKNOWN_OP


class ProtocolMismatch(RemoteError):
    code = UNSUPPORTED_VERSION


class NotFound(RemoteError):
    code = NOT_FOUND


class Forbidden(RemoteError):
    code = FORBIDDEN


class Unavailable(RemoteError):
    code = UNAVAILABLE


_ERRORS_BY_CODE: Final[dict[str, type[RemoteError]]] = {
    BAD_REQUEST: BadRequest,
    TOO_LARGE: BadRequest,
    UNKNOWN_OP: UnknownOp,
    UNSUPPORTED_VERSION: ProtocolMismatch,
    NOT_FOUND: NotFound,
    FORBIDDEN: Forbidden,
    UNAVAILABLE: Unavailable,
}

_counter = itertools.count(1)


def new_request_id() -> str:
    """Return an id unique across processes: pid, a counter and random bits."""
    return f"{os.getpid():x}-{next(_counter):x}-{os.urandom(4).hex()}"


# -- codecs ----------------------------------------------------------------------------------
def pack(message: Any) -> bytes:
    import msgpack

    data: bytes = msgpack.packb(message, use_bin_type=True)
    return data


def unpack(data: bytes) -> Any:
    """Decode one msgpack message; raise ValueError for anything that is not well-formed.

    Only plain data decodes: string map keys, no extension types (a msgpack Timestamp is an
    error, not a value), nesting at most ``MAX_DEPTH`` deep.
    """
    import msgpack

    if len(data) > MAX_MESSAGE_BYTES:
        raise ValueError("message too large")
    try:
        value = msgpack.unpackb(
            data, raw=False, strict_map_key=True, max_str_len=MAX_MESSAGE_BYTES,
            max_bin_len=MAX_MESSAGE_BYTES, max_array_len=1_000_000, max_map_len=1_000_000,
            ext_hook=_refuse_ext,
        )
    except (UnicodeDecodeError, TypeError) as err:
        raise ValueError(str(err)) from None
    check_depth(value)
    return value


def _refuse_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"msgpack extension type {code} is not accepted")


_PLAIN: Final = (str, bytes, int, float, bool, type(None))


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise ValueError when containers nest deeper than ``limit``, or when a value is not
    plain data (a msgpack Timestamp, which msgpack decodes before any ``ext_hook`` sees it).
    Iteratively: no recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        elif isinstance(item, _PLAIN):
            continue
        else:
            raise ValueError(f"a msgpack {type(item).__name__} is not accepted, only plain data")
        if depth >= limit:
            raise ValueError(f"nested deeper than {limit} levels")
        stack.extend((child, depth + 1) for child in children)


def dump_json(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8", "surrogatepass")


def load_json(data: bytes) -> Any:
    if len(data) > MAX_MESSAGE_BYTES:
        raise ValueError("message too large")
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError) as err:
        raise ValueError(str(err)) from None
    check_depth(value)
    return value


def encode(message: Any, content_type: bytes | None = None) -> list[bytes]:
    """The frames of one message: msgpack by default, or ``[CONTENT_JSON, json]``."""
    if content_type == CONTENT_JSON:
        return [CONTENT_JSON, dump_json(message)]
    return [pack(message)]


def decode(frames: list[bytes]) -> tuple[Any, bytes | None]:
    """(message, content type) from a message's body frames; ValueError when unreadable."""
    if len(frames) == 1:
        return unpack(frames[0]), None
    if len(frames) == 2 and frames[0] == CONTENT_JSON:
        return load_json(frames[1]), CONTENT_JSON
    raise ValueError("a message is one msgpack frame or [content type, body]")


# -- envelope --------------------------------------------------------------------------------
def request(op: str, args: dict[str, Any] | None = None, request_id: str | None = None,
            *, after: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"v": VERSION, "id": request_id or new_request_id(), "op": op,
                               "args": args or {}}
    if after:
        message["after"] = after
    return message


def ok_reply(request_id: str, result: Any, token: str | None = None) -> dict[str, Any]:
    reply: dict[str, Any] = {"v": VERSION, "id": request_id, "ok": True, "result": result}
    if token:
        reply["token"] = token
    return reply


def error_reply(request_id: str | None, code: str, message: str, *,
                arg: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "retryable": code in RETRYABLE}
    if arg:
        error["arg"] = arg
    return {"v": VERSION, "id": request_id, "ok": False, "error": error}


def peek_id(frames: list[bytes]) -> str | None:
    """The request id of a message that does not decode (too large, invalid UTF-8 in some
    string, an integer key, an extension type, too deep), so it can still be answered; None
    when no string id can be found. Reads the top-level map's keys and skips the values."""
    try:
        if len(frames) == 2 and frames[0] == CONTENT_JSON:
            import re

            found = re.search(rb'"id"\s*:\s*("(?:[^"\\]|\\.){1,400}")', frames[1][:8192])
            value = json.loads(found.group(1)) if found else None
        elif len(frames) == 1:
            import msgpack

            unpacker = msgpack.Unpacker(raw=False, unicode_errors="surrogateescape",
                                        strict_map_key=False, max_buffer_size=len(frames[0]))
            unpacker.feed(frames[0])
            value = None
            for _ in range(min(unpacker.read_map_header(), 64)):
                if unpacker.unpack() == "id":
                    value = unpacker.unpack()
                    break
                unpacker.skip()
        else:
            return None
    except Exception:  # anything unreadable: there is no id to answer to
        return None
    if not isinstance(value, str) or not 0 < len(value) <= 200:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def raise_for_error(reply: dict[str, Any]) -> Any:
    """Return the reply's result, or raise the RemoteError its error code names."""
    if reply.get("ok"):
        return reply.get("result")
    error = reply.get("error") or {}
    code = str(error.get("code") or INTERNAL)
    message = str(error.get("message") or "daemon error")
    arg = error.get("arg") if isinstance(error.get("arg"), str) else None
    retryable = error.get("retryable")
    raise remote_error(code, message, arg=arg,
                       retryable=retryable if isinstance(retryable, bool) else None)


def remote_error(code: str, message: str, *, arg: str | None = None,
                 retryable: bool | None = None) -> RemoteError:
    """The ``RemoteError`` subclass a reply with this error code raises (``BadRequest`` for
    ``bad_request`` ...), for callers that run an op without a socket."""
    return _ERRORS_BY_CODE.get(code, RemoteError)(message, code, arg=arg, retryable=retryable)
