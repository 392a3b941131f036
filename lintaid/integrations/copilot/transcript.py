"""GitHub Copilot CLI's session log: ``~/.copilot/session-state/<session>/events.jsonl``, one
event a line ``{type, data, ...}``. ``user.message`` holds what the person typed (``content``;
``transformedContent`` is what the model got, with Copilot's own context around it);
``assistant.message`` a reply (``content``) and the tools it asked for (``toolRequests``).
Every other event (hooks, tool runs, usage) is skipped.
"""

from __future__ import annotations

import json
from typing import Any, Final

from lintaid.capture.transcript import Message
from lintaid_client.redact import redact

_PATH_KEYS: Final = ("path", "file_path", "filePath")


def parse_line(raw: bytes) -> Message | None:
    if b'"user.message"' not in raw and b'"assistant.message"' not in raw:
        return None
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("data"), dict):
        return None
    data: dict[str, Any] = entry["data"]
    kind = entry.get("type")
    content = data.get("content")
    text = content if isinstance(content, str) else ""
    mid = data.get("messageId") if isinstance(data.get("messageId"), str) else None
    stamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
    if kind == "user.message":
        if not text.strip():
            return None
        return Message(role="user", text=redact(text), timestamp=stamp, request_id=mid)
    if kind != "assistant.message":
        return None
    tools: list[str] = []
    paths: list[str] = []
    for request in data.get("toolRequests") or []:
        if not isinstance(request, dict):
            continue
        name = request.get("name")
        if isinstance(name, str) and name:
            tools.append(name)
        args = request.get("arguments")
        if isinstance(args, dict):
            paths.extend(v.strip() for k in _PATH_KEYS
                         if isinstance(v := args.get(k), str) and v.strip())
    if not text.strip() and not tools:
        return None
    return Message(role="assistant", text=redact(text), tools=tools,
                   paths=[redact(p) for p in paths], timestamp=stamp, message_id=mid)
