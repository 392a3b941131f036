"""Read the tail of an agent's JSONL transcript and boil the last exchange down to a capture.

Transcripts grow to many megabytes and the hook budget is small, so we read only the end of the
file, growing the window until it holds a real request and a reply. Each client's line format
differs, so the caller passes its own ``parse_line``; entries are opaque and change between
releases, so a parser skips anything it does not know. Everything returned has been through
``redact``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from lintaid_client.redact import redact

from . import echo

INITIAL_TAIL_BYTES: Final = 64 * 1024
MAX_TAIL_BYTES: Final = 4 * 1024 * 1024
MAX_FIELD_BYTES: Final = 1500


@dataclass
class Message:
    """One user or assistant turn (assistant lines sharing ``message.id`` already merged)."""

    role: str
    text: str
    tools: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    timestamp: str | None = None
    message_id: str | None = None
    request_id: str | None = None  # a user line's own id, where the client has one
    is_request: bool = True  # a user line the person wrote (not a harness notice)
    is_result: bool = True  # an assistant line that says something (not tool narration)


LineParser = Callable[[bytes], "Message | None"]


@dataclass
class Exchange:
    """The last request, its result, and what was touched on the way: one capture's worth."""

    request: str = ""
    result: str = ""
    tools: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    summary: str = ""  # what the client itself summarised (a compaction), redacted
    turn_id: str = ""  # the turn's identity in its session (``turn_key``); "" when empty


def turn_key(request: str, *, request_id: str | None = None, timestamp: str | None = None,
             result: str = "") -> str:
    """A turn's identity within its session: the request's own id where the client has one,
    its timestamp, and its (redacted, compacted) text; the result only when there is no
    request at all. Every event that reads the same turn from the same transcript gets the
    same key, so a turn is stored once however many events see it."""
    parts = [request_id or "", timestamp or "", request]
    if not any(parts):
        parts.append(result)
    if not any(parts):
        return ""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:20]


def read_messages(path: str | os.PathLike[str], parse_line: LineParser,
                  max_bytes: int = MAX_TAIL_BYTES) -> list[Message]:
    """Return the messages in the tail of the transcript at ``path``, oldest first.

    Starts with the last 64 KiB and doubles the window (parsing only the newly read part) until
    it holds a real user request and an assistant message, or ``max_bytes`` is reached. The
    first line of a window that does not start at the beginning of the file is partial and is
    carried into the next, larger window. A missing or unreadable file yields ``[]``.
    """
    try:
        # O_NONBLOCK: a FIFO or device named as a transcript must not hang the reader.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError, TypeError):
        return []
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return []
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            return _read_tail(handle, st.st_size, max(1, max_bytes), parse_line)
    except (OSError, ValueError):
        return []
    finally:
        if fd >= 0:
            os.close(fd)


def _read_tail(handle: Any, size: int, max_bytes: int,
               parse_line: LineParser) -> list[Message]:
    limit = min(size, max_bytes)
    messages: list[Message] = []
    window_start = size  # first file offset already covered
    carry = b""  # partial first line of the previous window
    want = min(INITIAL_TAIL_BYTES, limit)
    while True:
        new_start = size - want
        handle.seek(new_start)
        block = handle.read(window_start - new_start) + carry
        lines = block.split(b"\n")
        if new_start > 0:
            carry = lines.pop(0)
        else:
            carry = b""
        window_start = new_start
        messages[:0] = [m for m in map(parse_line, lines) if m is not None]
        if want >= limit or _has_exchange(messages):
            break
        want = min(want * 2, limit)
    return _merge(messages)


def _has_exchange(messages: list[Message]) -> bool:
    has_user = any(m.role == "user" and _is_request(m) for m in messages)
    return has_user and any(m.role == "assistant" for m in messages)


def _merge(messages: list[Message]) -> list[Message]:
    """Fold consecutive assistant lines of one API response (same ``message.id``) together."""
    merged: list[Message] = []
    for msg in messages:
        prev = merged[-1] if merged else None
        if (
            prev is not None
            and msg.role == "assistant"
            and prev.role == "assistant"
            and msg.message_id is not None
            and msg.message_id == prev.message_id
        ):
            prev.text = "\n".join(t for t in (prev.text, msg.text) if t)
            prev.tools.extend(msg.tools)
            prev.paths.extend(msg.paths)
            continue
        merged.append(msg)
    return merged


def _is_request(msg: Message) -> bool:
    """A user line the person wrote, with something left once injected context is dropped."""
    return msg.is_request and bool(echo.strip(msg.text).strip())


def _is_result(msg: Message) -> bool:
    return msg.is_result and bool(msg.text.strip())


def summarize(messages: list[Message], last_assistant_message: str | None = None) -> Exchange:
    """Condense the tail into the last request, its result, and the tools and paths used.

    The request is the last real user text, without the context lintaid or the client put
    into it (``echo``); the result is ``last_assistant_message`` (Stop
    payloads carry it and it does not lag like the transcript) or else the last assistant text
    after that request. Tools and paths come from the messages after the request.
    """
    start = 0
    request = ""
    asked: Message | None = None
    for index in range(len(messages) - 1, -1, -1):
        msg = messages[index]
        if msg.role == "user" and _is_request(msg):
            request = echo.strip(msg.text)
            asked = msg
            start = index + 1
            break
    since = messages[start:]

    result = ""
    if last_assistant_message and last_assistant_message.strip():
        result = last_assistant_message
    else:
        for msg in reversed(since):
            if msg.role == "assistant" and _is_result(msg):
                result = msg.text
                break

    tools = _unique(tool for msg in since for tool in msg.tools)
    paths = _unique(path for msg in since for path in msg.paths)
    request_text = compact(redact(request))
    result_text = compact(redact(result))
    return Exchange(
        request=request_text,
        result=result_text,
        tools=[redact(t) for t in tools],
        paths=[redact(p) for p in paths],
        turn_id=turn_key(request_text, request_id=asked.request_id if asked else None,
                         timestamp=asked.timestamp if asked else None, result=result_text),
    )


def compact(text: str, max_bytes: int = MAX_FIELD_BYTES) -> str:
    """Trailing spaces off every line, runs of blank lines down to one, none at either end
    (nor spaces before the first line or after the last), capped at ``max_bytes`` UTF-8 bytes. The lines themselves are kept: list items, headings,
    tables, fenced code and paragraphs are what the policy reads statements from (a list
    joined into one line made every item part of one long sentence, its subject glued from
    several items).
    """
    lines: list[str] = []
    for line in text.strip().splitlines():
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    return cap_bytes("\n".join(lines), max_bytes)


def cap_bytes(text: str, max_bytes: int, suffix: str = "...") -> str:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes on a character boundary, + ``suffix``."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    room = max(0, max_bytes - len(suffix.encode("utf-8")))
    return data[:room].decode("utf-8", "ignore").rstrip() + suffix


def _unique(items: Any) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return list(seen)
