"""Gemini CLI's chat recording: ``~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl``.

An append-only log replayed the way Gemini CLI replays it: a metadata first line; message
records ``{id, timestamp, type: user|gemini|info|error|warning, content, toolCalls?, ...}``
where a record written again under the same id replaces the earlier one (tool results and
token counts are added that way); ``{"$rewindTo": id}`` drops that message and every later one
(all of them when the id is unknown); ``{"$set": {...}}`` patches metadata, and a ``messages``
list in it replaces the conversation. Older builds wrote one ``.json`` object with a
``messages`` list. ``content`` is a string or a list of Gemini parts (``{"text": ...}``).
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, Final

from lintaid.capture.transcript import MAX_TAIL_BYTES, Message, read_messages
from lintaid_client.redact import redact

_ROLES: Final = {"user": "user", "gemini": "assistant"}
_PATH_KEYS: Final = ("file_path", "absolute_path", "path", "dir_path")
_SLASH_COMMAND_RE: Final = re.compile(r"^/[A-Za-z][\w:-]*$")


@dataclass
class GeminiMessage(Message):
    """A message with its record id, or a replay instruction for the messages before it."""

    record_id: str | None = None
    rewind_to: str | None = None
    replace: list[Message] | None = field(default=None)


def parse_line(raw: bytes) -> Message | None:
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict):
        return None
    rewind = entry.get("$rewindTo")
    if isinstance(rewind, str):
        return GeminiMessage(role="replay", text="", rewind_to=rewind)
    patch = entry.get("$set")
    if isinstance(patch, dict) and isinstance(patch.get("messages"), list):
        return GeminiMessage(role="replay", text="", replace=_records(patch["messages"]))
    return record(entry)


def record(entry: Any) -> GeminiMessage | None:
    """One message record as a message; None for info, errors and anything else."""
    if not isinstance(entry, dict):
        return None
    role = _ROLES.get(entry.get("type"))  # type: ignore[arg-type]
    if role is None:
        return None
    text = _text(entry.get("content"))
    tools: list[str] = []
    paths: list[str] = []
    calls = entry.get("toolCalls")
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, dict):
                continue
            name = call.get("name")
            if isinstance(name, str) and name:
                tools.append(name)
            args = call.get("args")
            if isinstance(args, dict):
                for key in _PATH_KEYS:
                    value = args.get(key)
                    if isinstance(value, str) and value.strip():
                        paths.append(value.strip())
    if not text.strip() and not tools:
        return None
    record_id = entry.get("id")
    timestamp = entry.get("timestamp")
    return GeminiMessage(
        role=role, text=redact(text), tools=tools, paths=[redact(p) for p in paths],
        timestamp=timestamp if isinstance(timestamp, str) else None,
        is_request=not (role == "user" and _SLASH_COMMAND_RE.match(text.strip())),
        record_id=record_id if isinstance(record_id, str) else None,
        request_id=record_id if isinstance(record_id, str) and role == "user" else None,
    )


def _records(entries: list[Any]) -> list[Message]:
    return [m for m in map(record, entries) if m is not None]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    return "\n".join(
        part["text"] for part in content
        if isinstance(part, dict) and isinstance(part.get("text"), str)
        and not part.get("thought"))


def replay(messages: list[Message]) -> list[Message]:
    """Apply upserts, rewinds and replacements, in order; plain messages after."""
    out: list[Message] = []
    for msg in messages:
        if isinstance(msg, GeminiMessage) and msg.replace is not None:
            out = list(msg.replace)
            continue
        if isinstance(msg, GeminiMessage) and msg.rewind_to is not None:
            ids = [m.record_id if isinstance(m, GeminiMessage) else None for m in out]
            out = out[:ids.index(msg.rewind_to)] if msg.rewind_to in ids else []
            continue
        rid = msg.record_id if isinstance(msg, GeminiMessage) else None
        if rid is not None:
            for index, prev in enumerate(out):
                if isinstance(prev, GeminiMessage) and prev.record_id == rid:
                    out[index] = msg
                    break
            else:
                out.append(msg)
        else:
            out.append(msg)
    return out


def read(path: str) -> list[Message]:
    """The conversation in the recording at ``path`` (JSONL, or an older single JSON file)."""
    if path.endswith(".json"):
        return _read_whole(path)
    return replay(read_messages(path, parse_line))


def _read_whole(path: str) -> list[Message]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return []
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_TAIL_BYTES:
            return []
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            data = json.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return []
    finally:
        if fd >= 0:
            os.close(fd)
    messages = data.get("messages") if isinstance(data, dict) else None
    return _records(messages) if isinstance(messages, list) else []
