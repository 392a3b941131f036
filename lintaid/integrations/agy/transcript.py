"""Antigravity CLI's transcript: the conversation's steps, one JSON object each (JSONL), or
one JSON file holding a list of them (or ``{"steps": [...]}``).

A ``USER_INPUT`` step is the person's request (its ``<USER_REQUEST>`` wrapper taken off); a
``CHECKPOINT`` step is bookkeeping; any other step with content is the agent's: its words when
the step is a response, else what a tool returned (unless no step is named a response). The
step type may carry an enum prefix (``CORTEX_STEP_TYPE_USER_INPUT``), so only its end is
compared. A step's tool call (``toolCall`` / ``tool_call``: ``{name, args}``) names a tool and
its files.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import Any, Final

from lintaid.capture.transcript import MAX_TAIL_BYTES, Message, read_messages
from lintaid_client.redact import redact

_REQUEST_RE: Final = re.compile(r"<USER_REQUEST>\s*(.*?)\s*</USER_REQUEST>", re.DOTALL)
_PATH_KEYS: Final = ("AbsolutePath", "TargetFile", "FilePath", "file_path", "path",
                     "absolute_path")


def step_message(step: Any) -> Message | None:
    if not isinstance(step, dict):
        return None
    kind = str(step.get("type") or step.get("stepType") or "").upper()
    if kind.endswith("CHECKPOINT"):
        return None
    text = _text(step.get("content"))
    tools: list[str] = []
    paths: list[str] = []
    call = step.get("toolCall") or step.get("tool_call")
    if isinstance(call, dict):
        name = call.get("name")
        if isinstance(name, str) and name:
            tools.append(name)
        args = call.get("args") or call.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except (ValueError, RecursionError):
                args = None
        if isinstance(args, dict):
            paths.extend(v.strip() for k in _PATH_KEYS
                         if isinstance(v := args.get(k), str) and v.strip())
    if kind.endswith("USER_INPUT"):
        found = _REQUEST_RE.findall(text)
        text = "\n".join(found) if found else text
        return Message(role="user", text=redact(text)) if text.strip() else None
    if not text.strip() and not tools:
        return None
    # The model's own words are its response steps; other steps (a file viewed, a command's
    # output) are what tools returned, not a result.
    return Message(role="assistant", text=redact(text), tools=tools,
                   paths=[redact(p) for p in paths], is_result="RESPONSE" in kind or not kind)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        for key in ("text", "content", "message"):
            if isinstance(content.get(key), str):
                return str(content[key])
        return ""
    if isinstance(content, list):
        return "\n".join(t for t in map(_text, content) if t)
    return ""


def parse_line(raw: bytes) -> Message | None:
    try:
        return step_message(json.loads(raw))
    except (ValueError, RecursionError):
        return None


def read(path: str) -> list[Message]:
    """The steps of the transcript at ``path`` as messages, oldest first."""
    messages = _read_whole(path) if path.endswith(".json") else read_messages(path, parse_line)
    if not any(m.role == "assistant" and m.is_result for m in messages):
        for m in messages:  # step types named otherwise: every step with content counts
            m.is_result = True
    return messages


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
    steps = data.get("steps") if isinstance(data, dict) else data
    if not isinstance(steps, list):
        return []
    return [m for m in map(step_message, steps) if m is not None]


def last_request(path: str) -> str | None:
    """The person's last request in the transcript, for a query when the payload has none."""
    for msg in reversed(read(path)):
        if msg.role == "user" and msg.text.strip():
            return msg.text.strip()
    return None
