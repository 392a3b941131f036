"""Codex's rollout transcript: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``.

Each line is ``{"timestamp", "type", "payload"}``. Messages and tool calls are
``response_item`` lines: a ``message`` with ``role`` and ``content`` blocks (``input_text``,
``output_text``), a ``function_call`` / ``custom_tool_call`` / ``local_shell_call``.
``event_msg`` lines repeat the messages for the UI and are skipped, as are the harness's own
user messages (environment context, AGENTS.md, user instructions). Codex calls the format
unstable, so anything unknown is skipped.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Final

from lintaid.capture.transcript import Message
from lintaid_client.redact import redact

MAX_VISITED: Final = 10_000
_TEXT_BLOCKS: Final = ("input_text", "output_text", "text")
_TOOL_ITEMS: Final = ("function_call", "custom_tool_call", "local_shell_call")
_PATH_KEYS: Final = ("file_path", "path", "filename")
# User messages the harness writes, not the person.
_NOT_A_REQUEST_RE: Final = re.compile(
    r"^(?:<(?:environment_context|user_instructions|turn_aborted|user_shell_command)>"
    r"|# AGENTS\.md instructions)"
)
_PATCH_PATH_RE: Final = re.compile(
    r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)
_SESSION_ID_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


def codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    home = os.environ.get("CODEX_HOME")
    return Path(home).expanduser() if home else Path.home() / ".codex"


def parse_line(raw: bytes) -> Message | None:
    """One rollout line as a message (text, or a tool call with the files it names)."""
    if b'"response_item"' not in raw:
        return None
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("type") != "response_item":
        return None
    item = entry.get("payload")
    if not isinstance(item, dict):
        return None
    timestamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant"):
            return None  # developer and system messages are the harness's
        text = _text(item.get("content"))
        if not text.strip():
            return None
        return Message(role=str(role), text=redact(text), timestamp=timestamp,
                       is_request=not _NOT_A_REQUEST_RE.match(text.lstrip()))
    if kind in _TOOL_ITEMS:
        name = item.get("name")
        if not isinstance(name, str) or not name:
            name = "shell" if kind == "local_shell_call" else "tool"
        return Message(role="assistant", text="", tools=[name],
                       paths=[redact(p) for p in _paths(item)], timestamp=timestamp)
    return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"] for block in content
        if isinstance(block, dict) and block.get("type") in _TEXT_BLOCKS
        and isinstance(block.get("text"), str))


def _paths(item: dict[str, Any]) -> list[str]:
    """Files a tool call names: apply_patch headers, or path-like arguments."""
    found: list[str] = []
    texts: list[str] = []
    raw_input = item.get("input")  # custom_tool_call (apply_patch): the patch text
    if isinstance(raw_input, str):
        texts.append(raw_input)
    args: Any = item.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            texts.append(args)
            args = None
    action = item.get("action")  # local_shell_call
    if isinstance(action, dict):
        args = action
    if isinstance(args, dict):
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                found.append(value.strip())
        for key in ("input", "patch"):
            if isinstance(args.get(key), str):
                texts.append(args[key])
        command = args.get("command")
        if isinstance(command, list):
            texts.extend(str(word) for word in command if isinstance(word, str))
        elif isinstance(command, str):
            texts.append(command)
    for text in texts:
        if "*** " in text:
            found.extend(m.group(1) for m in _PATCH_PATH_RE.finditer(text))
    return found


def find_rollout(session_id: str | None, home: Path | None = None,
                 max_visited: int = MAX_VISITED) -> Path | None:
    """The rollout file of ``session_id`` (newest day first), visiting at most ``max_visited``
    folder entries; None when there is none or the id is not an id."""
    if not session_id or not _SESSION_ID_RE.match(session_id):
        return None
    sessions = (home or codex_home()) / "sessions"
    suffix = f"-{session_id}.jsonl"
    visited = 0
    for year in _subdirs(sessions):
        for month in _subdirs(year):
            for day in _subdirs(month):
                visited += 1
                try:
                    names = sorted(os.listdir(day), reverse=True)
                except OSError:
                    continue
                for name in names:
                    visited += 1
                    if visited > max_visited:
                        return None
                    if name.startswith("rollout-") and name.endswith(suffix):
                        return day / name
    return None


def _subdirs(folder: Path) -> list[Path]:
    try:
        names = sorted((n for n in os.listdir(folder) if n.isdigit()), reverse=True)
    except OSError:
        return []
    return [folder / n for n in names]
