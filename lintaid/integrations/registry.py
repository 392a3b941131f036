"""The agent clients lintaid speaks to: one line each. The hook dispatcher, the CLI's choices,
the installer, ``status`` and ``doctor`` all read this and nothing else."""

from __future__ import annotations

from .agy import Antigravity
from .base import AgentClient
from .claude_code import ClaudeCode
from .codex import Codex
from .copilot import Copilot
from .cursor import Cursor
from .gemini import Gemini
from .openclaw import OpenClaw
from .opencode import OpenCode

CLIENTS: dict[str, AgentClient] = {client.name: client for client in (
    ClaudeCode(),
    Codex(),
    Gemini(),
    Cursor(),
    Antigravity(),
    OpenClaw(),
    OpenCode(),
    Copilot(),
)}


def names() -> list[str]:
    return list(CLIENTS)


def get(name: str) -> AgentClient:
    """The client called ``name``; KeyError naming the known ones otherwise."""
    try:
        return CLIENTS[name]
    except KeyError:
        raise KeyError(f"unknown agent client {name!r}; known: {', '.join(CLIENTS)}") from None
