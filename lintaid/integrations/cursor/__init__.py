"""Cursor: hooks in ``.cursor/hooks.json`` (version 1), the MCP server in ``.cursor/mcp.json``.

Injects the project's state on ``sessionStart``, the one event whose answer Cursor reads
context from (``additional_context``); ``beforeSubmitPrompt`` answers only whether the prompt
goes on (``{"continue": true}``: Cursor reads no context there) and records the prompt, and
the model finds the memories for a prompt through the MCP server. Captures on ``stop`` from
the transcript (``afterAgentResponse``, ``preCompact`` and ``sessionEnd`` are understood too). The session is the ``conversation_id``, the project the first of
``workspace_roots``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from lintaid.capture.transcript import Exchange, summarize, turn_key

from ..base import (
    AgentClient,
    HookEvent,
    Installer,
    Scope,
    path_field,
    text_field,
)
from ..config_files import with_backups
from . import install, transcript

CAPTURE_EVENTS: Final = {
    "stop": "outcome",
    "afterAgentResponse": "outcome",
    "preCompact": "checkpoint",
    "sessionEnd": "session-summary",
}
INJECT_EVENTS: Final = frozenset({"sessionStart"})


class Cursor(AgentClient):
    name = "cursor"
    title = "Cursor"
    installer: ClassVar[Installer] = install

    def parse(self, event: str, payload: Mapping[str, Any]) -> HookEvent:
        cwd = transcript.first(payload.get("workspace_roots")) or text_field(payload, "cwd")
        return HookEvent(
            client=self.name, name=event, payload=payload,
            inject=event in INJECT_EVENTS,
            capture=CAPTURE_EVENTS.get(event),
            prompt=text_field(payload, "prompt") if event == "beforeSubmitPrompt" else None,
            session_start=event == "sessionStart",
            source=text_field(payload, "source"),
            session_id=text_field(payload, "conversation_id", "session_id"),
            cwd=cwd,
            transcript_path=path_field(payload, "transcript_path"),
            last_message=text_field(payload, "text") if event == "afterAgentResponse" else None,
        )

    def read_exchange(self, event: HookEvent) -> Exchange:
        path: str | Path | None = event.transcript_path \
            or transcript.find_transcript(event.session_id)
        messages = transcript.read(str(path)) if path else []
        exchange = summarize(messages, event.last_message)
        # Cursor's transcript has no ids or times; a generation is one prompt's turn.
        generation = text_field(event.payload, "generation_id")
        if generation and exchange.turn_id:
            exchange.turn_id = turn_key(exchange.request, request_id=generation)
        return exchange

    def output(self, event: HookEvent, context: str | None) -> dict[str, Any]:
        if event.name == "beforeSubmitPrompt":
            return {"continue": True}  # a gate: its answer carries no context
        if event.name == "sessionStart" and context:
            return {"additional_context": context}
        return {}


    def config_files(self, root: Path) -> list[Path]:
        scopes: tuple[Scope, ...] = ("project", "user")
        files = [path for scope in scopes
                 for path in (install.hooks_path(root, scope), install.mcp_path(root, scope))]
        return [*with_backups(files), transcript.cursor_home() / "projects"]
