"""Claude Code's transcript: one JSON object per line (``type`` user or assistant, ``message``
with ``role`` and ``content`` blocks). Assistant lines of one API response share
``message.id`` and are merged by the generic reader.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from lintaid.capture.transcript import Message
from lintaid_client.redact import redact

_PATH_KEYS: Final = ("file_path", "path", "notebook_path")
# User entries that are not something the person asked: harness notices and slash-command echo.
_NOT_A_REQUEST_RE: Final = re.compile(
    r"^(?:<(?:task-notification|command-[a-z-]+|local-command-[a-z-]+|system-reminder)>"
    r"|\[Request interrupted by user)"
)
# Assistant text that only narrates a tool call.
_NOT_A_RESULT_RE: Final = re.compile(r"^(?:\*\*Tool:|<tool-)")


def parse_line(raw: bytes) -> Message | None:
    """One transcript line as a message, or None for anything that is not one."""
    # Cheap filter before json: only user/assistant entries can matter.
    if b'"user"' not in raw and b'"assistant"' not in raw:
        return None
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("isMeta") is True:
        return None
    kind = entry.get("type")
    if kind not in ("user", "assistant"):
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    role = str(message.get("role") if message.get("role") in ("user", "assistant") else kind)
    text, tools, paths = _content_parts(message.get("content"))
    if not text and not tools:
        return None  # tool results, thinking-only lines, images
    timestamp = entry.get("timestamp")
    msg_id = message.get("id")
    uuid = entry.get("uuid")
    stripped = text.lstrip()
    return Message(
        role=role,
        text=redact(text),
        tools=tools,
        paths=[redact(p) for p in paths],
        timestamp=timestamp if isinstance(timestamp, str) else None,
        message_id=msg_id if isinstance(msg_id, str) and role == "assistant" else None,
        request_id=uuid if isinstance(uuid, str) and role == "user" else None,
        is_request=not _NOT_A_REQUEST_RE.match(stripped),
        is_result=not _NOT_A_RESULT_RE.match(stripped),
    )


def _content_parts(content: Any) -> tuple[str, list[str], list[str]]:
    if isinstance(content, str):
        return content, [], []
    if not isinstance(content, list):
        return "", [], []
    texts: list[str] = []
    tools: list[str] = []
    paths: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_use":
            name = block.get("name")
            if isinstance(name, str) and name:
                tools.append(name)
            tool_input = block.get("input")
            if isinstance(tool_input, dict):
                for key in _PATH_KEYS:
                    value = tool_input.get(key)
                    if isinstance(value, str) and value.strip():
                        paths.append(value.strip())
    return "\n".join(texts), tools, paths
