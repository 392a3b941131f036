"""GitHub Copilot CLI: hooks in a file of lintaid's own (``.github/hooks/lintaid.json``, or the
user's ``~/.copilot/hooks/lintaid.json``), the MCP server in ``.github/mcp.json`` (or the
user's ``~/.copilot/mcp-config.json``).

The hooks are registered under Claude Code's event names, for which Copilot CLI sends
Claude-style payloads (``hook_event_name``, ``session_id``, ``transcript_path``); it reads a
top-level ``additionalContext`` back (not Claude's ``hookSpecificOutput``): SessionStart and UserPromptSubmit inject (the prompt
is recorded), Stop captures the turn from the session log (``events.jsonl``), PreCompact and
SessionEnd catch it up.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from lintaid.capture.transcript import Exchange, read_messages, summarize

from ..base import (
    CAPTURE_COMPACTION,
    CAPTURE_SESSION,
    CAPTURE_TURN,
    AgentClient,
    HookEvent,
    Installer,
    Scope,
    path_field,
    text_field,
)
from ..config_files import with_backups
from . import install
from .transcript import parse_line

CAPTURE_EVENTS: Final = {"Stop": CAPTURE_TURN, "PreCompact": CAPTURE_COMPACTION,
                         "SessionEnd": CAPTURE_SESSION}
INJECT_EVENTS: Final = frozenset({"SessionStart", "UserPromptSubmit"})


class Copilot(AgentClient):
    name = "copilot"
    title = "GitHub Copilot CLI"
    installer: ClassVar[Installer] = install

    def parse(self, event: str, payload: Mapping[str, Any]) -> HookEvent:
        return HookEvent(
            client=self.name, name=event, payload=payload,
            inject=event in INJECT_EVENTS,
            capture=CAPTURE_EVENTS.get(event),
            prompt=text_field(payload, "prompt") if event == "UserPromptSubmit" else None,
            session_start=event == "SessionStart",
            # Copilot says "new" where Claude Code says "startup".
            source={"new": "startup"}.get(str(payload.get("source")),
                                          text_field(payload, "source")),
            session_id=text_field(payload, "session_id", "sessionId"),
            cwd=text_field(payload, "cwd"),
            transcript_path=path_field(payload, "transcript_path", "transcriptPath"),
            skip=event == "Stop" and payload.get("stop_hook_active") is True,
        )

    def read_exchange(self, event: HookEvent) -> Exchange:
        messages = read_messages(event.transcript_path, parse_line) \
            if event.transcript_path else []
        if not messages and event.session_id:  # PreCompact and SessionEnd name no log
            log = install.session_log(event.session_id)
            messages = read_messages(log, parse_line) if log.is_file() else []
        return summarize(messages)

    def output(self, event: HookEvent, context: str | None) -> dict[str, Any]:
        # Copilot's own field, top level, for Claude's event names too: it ignores
        # hookSpecificOutput (tried with Copilot CLI 1.0.102).
        if not context or event.name not in INJECT_EVENTS:
            return {}
        return {"additionalContext": context}

    def config_files(self, root: Path) -> list[Path]:
        scopes: tuple[Scope, ...] = ("project", "user")
        files = [p for s in scopes for p in (install.hooks_path(root, s),
                                              install.mcp_path(root, s))]
        return [*with_backups(files), install.copilot_home() / "session-state"]
