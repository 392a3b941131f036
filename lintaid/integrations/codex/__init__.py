"""Codex CLI: hooks in ``.codex/hooks.json``, the MCP server in ``.codex/config.toml``.

Captures on Stop, SubagentStop (a finished turn), PreCompact (before a compaction) and
SessionEnd, reading the rollout transcript; when the payload's ``transcript_path`` is null the
rollout is found by session id under ``$CODEX_HOME/sessions``. Injects on SessionStart (which
Codex also fires after a compaction, ``source: compact``) and UserPromptSubmit through
``hookSpecificOutput.additionalContext``; records the prompt on UserPromptSubmit.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from lintaid.capture.transcript import Exchange, read_messages, summarize

from ..base import (
    AgentClient,
    HookEvent,
    Installer,
    additional_context,
    path_field,
    text_field,
)
from . import install
from .transcript import codex_home, find_rollout, parse_line

CAPTURE_EVENTS: Final = {
    "Stop": "outcome",
    "SubagentStop": "outcome",
    "PreCompact": "checkpoint",
    "SessionEnd": "session-summary",
}
INJECT_EVENTS: Final = frozenset({"SessionStart", "UserPromptSubmit"})


class Codex(AgentClient):
    name = "codex"
    title = "Codex"
    installer: ClassVar[Installer] = install

    def parse(self, event: str, payload: Mapping[str, Any]) -> HookEvent:
        transcript_keys = ("agent_transcript_path", "transcript_path") \
            if event == "SubagentStop" else ("transcript_path",)
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
            # A Stop re-fired because a stop hook made Codex continue: captured already.
            skip=event in ("Stop", "SubagentStop") and payload.get("stop_hook_active") is True,
        )

    def read_exchange(self, event: HookEvent) -> Exchange:
        path: str | Path | None = event.transcript_path
        if not path and event.name != "SubagentStop":
            path = find_rollout(event.session_id)
        messages = read_messages(path, parse_line) if path else []
        return summarize(messages, event.last_message)

    def output(self, event: HookEvent, context: str | None) -> dict[str, Any]:
        return additional_context(event, context if event.name in INJECT_EVENTS else None)


    def config_files(self, root: Path) -> list[Path]:
        # The project's .codex holds hooks.json and config.toml; $CODEX_HOME the rollouts.
        return [install.config_dir(root, "project"), install.config_dir(root, "user"),
                codex_home()]
