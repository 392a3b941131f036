"""OpenCode: a plugin (``.opencode/plugins/lintaid.js``) and the MCP server in
``opencode.json``.

OpenCode has no command hooks: the plugin, run by OpenCode itself, spawns lintaid's hook shim
for its own events. ``session.start`` (the first prompt of a session) and ``chat.message``
(each prompt) inject through ``additionalContext``, which the plugin adds to the system
prompt (``experimental.chat.system.transform``), never to the person's message;
``chat.message`` records the prompt. ``session.idle`` (the turn finished) captures, and
``session.compacted`` catches the last turn up; both carry the session's messages, read
through OpenCode's own client and slimmed by the plugin to the shape OpenClaw's plugin sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from lintaid.capture.transcript import Exchange, Message, summarize

from ..base import (
    CAPTURE_COMPACTION,
    CAPTURE_TURN,
    AgentClient,
    HookEvent,
    Installer,
    Scope,
    text_field,
)
from ..config_files import with_backups
from ..openclaw import message as openclaw_message
from . import install

CAPTURE_EVENTS: Final = {"session.idle": CAPTURE_TURN, "session.compacted": CAPTURE_COMPACTION}
INJECT_EVENTS: Final = frozenset({"session.start", "chat.message"})


class OpenCode(AgentClient):
    name = "opencode"
    title = "OpenCode"
    installer: ClassVar[Installer] = install

    def parse(self, event: str, payload: Mapping[str, Any]) -> HookEvent:
        return HookEvent(
            client=self.name, name=event, payload=payload,
            inject=event in INJECT_EVENTS,
            capture=CAPTURE_EVENTS.get(event),
            prompt=text_field(payload, "prompt") if event == "chat.message" else None,
            session_start=event == "session.start",
            source=text_field(payload, "source"),
            session_id=text_field(payload, "session_id"),
            cwd=text_field(payload, "cwd"),
        )

    def read_exchange(self, event: HookEvent) -> Exchange:
        raw = event.payload.get("messages")
        messages = [m for m in map(message, raw) if m is not None] \
            if isinstance(raw, list) else []
        return summarize(messages)

    def output(self, event: HookEvent, context: str | None) -> dict[str, Any]:
        if not context or event.name not in INJECT_EVENTS:
            return {}
        return {"additionalContext": context}

    def config_files(self, root: Path) -> list[Path]:
        scopes: tuple[Scope, ...] = ("project", "user")
        files = [install.config_path(root, s) for s in scopes]
        return [*with_backups(files), root / ".opencode", install.config_dir("user")]


def message(entry: Any) -> Message | None:
    """One slimmed OpenCode message; a user message keeps its id, so a turn's identity does
    not depend on its text alone."""
    msg = openclaw_message(entry)
    if msg is not None and msg.role == "user" and isinstance(entry, Mapping):
        mid = entry.get("id")
        msg.request_id = mid if isinstance(mid, str) and mid else None
    return msg
