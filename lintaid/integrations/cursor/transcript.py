"""Cursor's agent transcript: ``~/.cursor/projects/<project>/agent-transcripts/``.

Current builds write JSONL, one ``{"role": "user"|"assistant", "message": {"content":
[blocks]}}`` per line, the person's text wrapped in ``<user_query>`` (other tags around it are
context Cursor adds: attached files, rules); ``tool_use`` blocks name the tools. Older builds
wrote plain text (``user:`` / ``assistant:`` sections), read here as well. The hook payload's
``transcript_path`` may be null: the transcript is then looked up by conversation id.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Final

from lintaid.capture.transcript import MAX_TAIL_BYTES, Message, read_messages
from lintaid_client.redact import redact

MAX_VISITED: Final = 10_000
_PATH_KEYS: Final = ("file_path", "path", "target_file", "filePath")
_QUERY_RE: Final = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_TAG_BLOCK_RE: Final = re.compile(r"<([a-z_]+)>.*?</\1>", re.DOTALL)
_ID_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
_SECTION_RE: Final = re.compile(r"^(user|assistant):\s*$", re.MULTILINE)


def parse_line(raw: bytes) -> Message | None:
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict):
        return None
    role = entry.get("role")
    message = entry.get("message")
    if role not in ("user", "assistant") or not isinstance(message, dict):
        return None
    texts: list[str] = []
    tools: list[str] = []
    paths: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use":
                name = block.get("name")
                if isinstance(name, str) and name:
                    tools.append(name)
                tool_input = block.get("input")
                if isinstance(tool_input, dict):
                    paths.extend(v.strip() for k in _PATH_KEYS
                                 if isinstance(v := tool_input.get(k), str) and v.strip())
    text = "\n".join(texts)
    if role == "user":
        text = user_text(text)
    if not text.strip() and not tools:
        return None
    return Message(role=str(role), text=redact(text), tools=tools,
                   paths=[redact(p) for p in paths])


def user_text(text: str) -> str:
    """What the person typed: the ``<user_query>`` when there is one, else the text without
    the context blocks Cursor wraps around it."""
    queries = _QUERY_RE.findall(text)
    if queries:
        return "\n".join(queries)
    return _TAG_BLOCK_RE.sub("", text).strip()


def read(path: str) -> list[Message]:
    if path.endswith(".txt"):
        return _read_text(path)
    return read_messages(path, parse_line)


def _read_text(path: str) -> list[Message]:
    """The older plain-text transcript: ``user:`` and ``assistant:`` sections."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - MAX_TAIL_BYTES))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    parts = _SECTION_RE.split(text)
    out: list[Message] = []
    for role, body in zip(parts[1::2], parts[2::2], strict=False):
        lines = []
        in_tool = False  # a tool call's arguments or a tool's result, up to a blank line
        for line in body.splitlines():
            if line.startswith(("[Tool call]", "[Tool result]", "[Thinking]")):
                in_tool = not line.startswith("[Thinking]")
                continue
            if not line.strip():
                in_tool = False
            if not in_tool:
                lines.append(line)
        cleaned = "\n".join(lines).strip()
        if role == "user":
            cleaned = user_text(cleaned)
        if cleaned:
            out.append(Message(role=role, text=redact(cleaned)))
    return out


def cursor_home() -> Path:
    return Path.home() / ".cursor"


def find_transcript(conversation_id: str | None, home: Path | None = None,
                    max_visited: int = MAX_VISITED) -> Path | None:
    """The transcript of ``conversation_id`` under ``~/.cursor/projects/*/agent-transcripts``
    (``<id>.jsonl``, ``<id>/<id>.jsonl`` or ``<id>.txt``), newest first; at most
    ``max_visited`` candidates looked at."""
    if not conversation_id or not _ID_RE.match(conversation_id):
        return None
    projects = (home or cursor_home()) / "projects"
    try:
        folders = sorted(projects.iterdir(), key=_mtime, reverse=True)
    except OSError:
        return None
    names = (f"{conversation_id}.jsonl", f"{conversation_id}/{conversation_id}.jsonl",
             f"{conversation_id}.txt")
    for visited, folder in enumerate(folders):
        if visited >= max_visited:
            break
        for name in names:
            candidate = folder / "agent-transcripts" / name
            if candidate.is_file():
                return candidate
    return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def first(value: Any) -> str | None:
    """The first non-blank string of a list (``workspace_roots``), or the string itself."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    return value.strip() if isinstance(value, str) and value.strip() else None
