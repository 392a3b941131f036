"""Claude Code: hooks in ``.claude/settings.json``, the MCP server in ``.mcp.json``.

Captures on Stop, SubagentStop (a finished turn), PreCompact (before a compaction) and
SessionEnd; injects on SessionStart and UserPromptSubmit through
``hookSpecificOutput.additionalContext``; records the prompt on UserPromptSubmit.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from lintaid.capture.transcript import Exchange, compact, read_messages, summarize
from lintaid_client.redact import redact

from ..base import (
    AgentClient,
    HookEvent,
    Installer,
    Scope,
    additional_context,
    path_field,
    text_field,
)
from ..config_files import with_backups
from . import install
from .transcript import parse_line

CAPTURE_EVENTS: Final = {
    "Stop": "outcome",
    "SubagentStop": "outcome",
    "PreCompact": "checkpoint",
    "SessionEnd": "session-summary",
}
INJECT_EVENTS: Final = frozenset({"SessionStart", "UserPromptSubmit"})


class ClaudeCode(AgentClient):
    name = "claude-code"
    title = "Claude Code"
    installer: ClassVar[Installer] = install

    def parse(self, event: str, payload: Mapping[str, Any]) -> HookEvent:
        transcript_keys = ("agent_transcript_path", "transcript_path") \
            if event == "SubagentStop" else ("transcript_path",)
        summary = text_field(payload, "compact_summary", "custom_instructions") \
            if event == "PreCompact" else None
        return HookEvent(
            client=self.name, name=event, payload=payload,
            inject=event in INJECT_EVENTS,
            capture=CAPTURE_EVENTS.get(event),
            prompt=text_field(payload, "prompt") if event == "UserPromptSubmit" else None,
            session_start=event == "SessionStart",
            source=text_field(payload, "source"),
            session_id=text_field(payload, "session_id"),
            cwd=text_field(payload, "cwd"),
            transcript_path=path_field(payload, *transcript_keys),
            last_message=text_field(payload, "last_assistant_message"),
            summary=summary,
            # A Stop re-fired because a stop hook made Claude continue: captured already.
            skip=event in ("Stop", "SubagentStop") and payload.get("stop_hook_active") is True,
        )

    def read_exchange(self, event: HookEvent) -> Exchange:
        messages = read_messages(event.transcript_path, parse_line) \
            if event.transcript_path else []
        exchange = summarize(messages, event.last_message)
        if event.summary:
            exchange.summary = compact(redact(event.summary))
        return exchange

    def output(self, event: HookEvent, context: str | None) -> dict[str, Any]:
        return additional_context(event, context)


    def config_files(self, root: Path) -> list[Path]:
        scopes: tuple[Scope, ...] = ("project", "user")
        files = [install.settings_path(root, scope) for scope in scopes]
        files += [root / ".claude" / "settings.local.json", install.mcp_path(root, "project")]
        return [*with_backups(files), Path.home() / ".claude" / "projects"]
