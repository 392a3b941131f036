"""OpenClaw: a small plugin (``plugin/``, JavaScript) whose typed hooks call lintaid's hook
shim, registered in ``~/.openclaw/openclaw.json`` with the MCP server.

``before_prompt_build`` carries the prompt (the person's own request, ``currentUserMessage``,
where OpenClaw gives it): it is recorded and recalled against, and the context goes back as
``prependContext``. (``before_agent_start``, its name before OpenClaw 2026.9, which no longer
calls it, is still read, for events spooled by an older plugin.) ``before_agent_finalize`` (which OpenClaw awaits, where it does
not await ``agent_end`` on a one-shot run) and ``agent_end`` carry the run's messages: the last
request and reply are captured from them (OpenClaw's runtime-context carriers skipped), one
record for the run whichever event sees it. The
session is OpenClaw's session id (else its key); the project is the one the install pinned,
else the agent's workspace.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from lintaid.capture.transcript import Exchange, Message, summarize, turn_key
from lintaid_client.redact import redact

from ..base import (
    AgentClient,
    HookEvent,
    Installer,
    text_field,
)
from . import install

CAPTURE_EVENTS: Final = {"before_agent_finalize": "outcome", "agent_end": "outcome",
                         "before_reset": "session-summary"}
INJECT_EVENTS: Final = frozenset({"before_prompt_build", "before_agent_start"})
CARRIER_TYPE: Final = "openclaw.runtime-context"
CARRIER_PREFIX: Final = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
_PATH_KEYS: Final = ("path", "file_path", "filePath", "file")


class OpenClaw(AgentClient):
    name = "openclaw"
    title = "OpenClaw"
    installer: ClassVar[Installer] = install

    def parse(self, event: str, payload: Mapping[str, Any]) -> HookEvent:
        return HookEvent(
            client=self.name, name=event, payload=payload,
            inject=event in INJECT_EVENTS,
            capture=CAPTURE_EVENTS.get(event),
            prompt=text_field(payload, "prompt") if event in INJECT_EVENTS else None,
            session_id=text_field(payload, "session_id", "session_key"),
            cwd=text_field(payload, "cwd", "workspace_dir"),
            last_message=text_field(payload, "last_assistant_message"),
            # A failed run's messages end in an error, not an outcome worth keeping; a
            # finalize re-run because a hook asked for another pass was captured already.
            skip=(event == "agent_end" and payload.get("success") is False)
            or (event == "before_agent_finalize" and payload.get("stop_hook_active") is True),
        )

    def read_exchange(self, event: HookEvent) -> Exchange:
        raw = event.payload.get("messages")
        messages = [m for m in map(message, raw) if m is not None] \
            if isinstance(raw, list) else []
        exchange = summarize(messages, event.last_message)
        run = text_field(event.payload, "run_id")  # one run answers one prompt
        if run and exchange.turn_id:
            exchange.turn_id = turn_key(exchange.request, request_id=run)
        return exchange

    def output(self, event: HookEvent, context: str | None) -> dict[str, Any]:
        if not context or event.name not in INJECT_EVENTS:
            return {}
        return {"prependContext": context}


    def config_files(self, root: Path) -> list[Path]:
        return [install.state_dir(), install.config_path()]


def message(entry: Any) -> Message | None:
    """One OpenClaw agent message as lintaid reads it; None for carriers and tool results."""
    if not isinstance(entry, Mapping):
        return None
    role = entry.get("role")
    if role not in ("user", "assistant"):
        return None
    if entry.get("customType") == CARRIER_TYPE or entry.get("runtimeContextCarrier"):
        return None
    texts: list[str] = []
    tools: list[str] = []
    paths: list[str] = []
    content = entry.get("content")
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") in ("toolCall", "tool_use"):
                name = block.get("name")
                if isinstance(name, str) and name:
                    tools.append(name)
                args = block.get("arguments")
                if isinstance(args, Mapping):
                    paths.extend(v.strip() for k in _PATH_KEYS
                                 if isinstance(v := args.get(k), str) and v.strip())
    text = "\n".join(texts)
    if text.lstrip().startswith(CARRIER_PREFIX):
        return None
    if not text.strip() and not tools:
        return None
    return Message(role=str(role), text=redact(text), tools=tools,
                   paths=[redact(p) for p in paths])
