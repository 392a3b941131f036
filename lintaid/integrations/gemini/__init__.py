"""Gemini CLI: hooks and the MCP server in ``.gemini/settings.json``.

Injects on SessionStart and BeforeAgent (the prompt) through
``hookSpecificOutput.additionalContext``; records the prompt on BeforeAgent; captures on
AfterAgent (a finished turn: the payload carries the prompt and the response), PreCompress
and SessionEnd, reading the chat recording for the tools and files used. Gemini CLI writes
injected context into the user's message (``<hook_context>`` parts, the ``<session_context>``
that opens a chat), in the recording and in the prompt fields alike: the readers drop it
(``lintaid.capture.echo``). Gemini CLI parses
stderr when stdout is empty, so every answer is JSON, ``{}`` when there is nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from lintaid.capture import echo
from lintaid.capture.transcript import Exchange, compact, summarize, turn_key
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
from . import install, transcript

CAPTURE_EVENTS: Final = {
    "AfterAgent": "outcome",
    "PreCompress": "checkpoint",
    "SessionEnd": "session-summary",
}
INJECT_EVENTS: Final = frozenset({"SessionStart", "BeforeAgent"})


class Gemini(AgentClient):
    name = "gemini"
    title = "Gemini CLI"
    installer: ClassVar[Installer] = install

    def parse(self, event: str, payload: Mapping[str, Any]) -> HookEvent:
        turn = event in ("BeforeAgent", "AfterAgent")
        return HookEvent(
            client=self.name, name=event, payload=payload,
            inject=event in INJECT_EVENTS,
            capture=CAPTURE_EVENTS.get(event),
            prompt=text_field(payload, "prompt") if event == "BeforeAgent" else None,
            session_start=event == "SessionStart",
            source=text_field(payload, "source"),
            session_id=text_field(payload, "session_id"),
            cwd=text_field(payload, "cwd"),
            transcript_path=path_field(payload, "transcript_path"),
            last_message=text_field(payload, "prompt_response") if turn else None,
            # AfterAgent re-fired because a hook asked for a retry: captured already.
            skip=event == "AfterAgent" and payload.get("stop_hook_active") is True,
        )

    def read_exchange(self, event: HookEvent) -> Exchange:
        messages = transcript.read(event.transcript_path) if event.transcript_path else []
        exchange = summarize(messages, event.last_message)
        prompt = text_field(event.payload, "prompt") if event.name == "AfterAgent" else None
        # Gemini CLI puts SessionStart's context into the turn's prompt (<hook_context>).
        prompt = echo.strip(prompt) if prompt else None
        if prompt:  # the recording may lag the turn; the payload does not
            request = compact(redact(prompt))
            if request != exchange.request:  # lagging: the recording's id is another turn's
                exchange.request = request
                exchange.turn_id = turn_key(request)
        return exchange

    def output(self, event: HookEvent, context: str | None) -> dict[str, Any]:
        return additional_context(event, context if event.name in INJECT_EVENTS else None)


    def config_files(self, root: Path) -> list[Path]:
        scopes: tuple[Scope, ...] = ("project", "user")
        files = [install.settings_path(root, scope) for scope in scopes]
        return [*with_backups(files), Path.home() / ".gemini" / "tmp"]
