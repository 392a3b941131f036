"""The seam every agent client sits behind.

An ``AgentClient`` knows one client's hook protocol and configuration files, and nothing of the
daemon: it turns a raw hook payload into a ``HookEvent``, reads the client's transcript into an
``Exchange``, shapes the injected context into the JSON the client reads on stdout, and merges
lintaid's hooks and MCP server into (and out of) the client's configuration. The hook
dispatcher, the installer, ``doctor`` and ``status`` reach clients only through this interface
and the registry.
"""

from __future__ import annotations

import dataclasses
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final, Literal, Protocol

from lintaid.capture import echo
from lintaid.capture.transcript import Exchange, compact

Scope = Literal["project", "user"]
CAPTURE_TURN: Final = "outcome"
CAPTURE_COMPACTION: Final = "checkpoint"
CAPTURE_SESSION: Final = "session-summary"


@dataclass(frozen=True)
class HookEvent:
    """One hook event as lintaid needs it, whatever client sent it.

    ``inject``: the client reads context back from this event. ``capture``: what this event
    closes, or None: a turn (``outcome``: the turn is captured), a compaction (``checkpoint``)
    or the session (``session-summary``); the last two add the client's summary, if any, and
    the last turn only when no capture of the session holds it yet.
    ``prompt``: the person's prompt, when the event carries one. ``session_start``: the
    event opens (or resumes, clears, compacts) a session; ``source`` says which.
    """

    client: str
    name: str
    payload: Mapping[str, Any]
    inject: bool = False
    capture: str | None = None
    prompt: str | None = None
    session_start: bool = False
    source: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    transcript_path: str | None = None
    last_message: str | None = None
    summary: str | None = None  # a compaction summary or custom instructions
    skip: bool = False  # the client says this event repeats one already handled


@dataclass(frozen=True)
class Commands:
    """How the client must start lintaid's programs: each a list of words (argv)."""

    hook: tuple[str, ...]
    mcp: tuple[str, ...]


@dataclass
class Check:
    """One ``doctor`` finding: ``ok`` or not, what was seen, and how to fix it. ``warn``: it
    works, but a person may want to act (``fix`` says how); it does not fail ``doctor``."""

    name: str
    ok: bool
    detail: str = ""
    fix: str = ""
    warn: bool = False


@dataclass
class InstallReport:
    """What an install or uninstall changed, and what the person must still do."""

    changes: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)


def text_field(payload: Mapping[str, Any], *keys: str) -> str | None:
    """The first non-blank string among ``keys`` in the payload, stripped."""
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def path_field(payload: Mapping[str, Any], *keys: str) -> str | None:
    value = text_field(payload, *keys)
    return os.path.expanduser(value) if value else None


class Installer(Protocol):
    """A client's ``install`` module: how lintaid merges into its configuration and out."""

    def install(self, root: Path, scope: Scope, commands: Commands) -> InstallReport: ...

    def uninstall(self, root: Path, scope: Scope, commands: Commands) -> InstallReport: ...

    def installed(self, root: Path) -> list[str]: ...

    def doctor(self, root: Path) -> list[Check]: ...


def additional_context(event: HookEvent, context: str | None) -> dict[str, Any]:
    """Claude-shaped output (Claude Code, Codex, Gemini CLI):
    ``hookSpecificOutput.additionalContext`` for the event, or ``{}`` for nothing."""
    if not context:
        return {}
    return {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": context}}


class AgentClient(ABC):
    """One agent client's protocol. Subclasses live in their own subpackage."""

    name: ClassVar[str]
    """The registry key and the word used on the command line (``lintaid install NAME``)."""
    title: ClassVar[str]
    """How people call it."""
    installer: ClassVar[Installer]
    """The subpackage's ``install`` module: configuration in and out, and its checks."""

    # -- hooks: what the dispatcher calls ----------------------------------------------------
    def event(self, name: str, payload: Mapping[str, Any]) -> HookEvent:
        """The event as lintaid needs it (``parse``), its prompt without what lintaid or the
        client injected into it (``echo``): a prompt that was only that is no prompt."""
        ev = self.parse(name, payload)
        if ev.prompt is None:
            return ev
        prompt = echo.strip(ev.prompt)
        return ev if prompt == ev.prompt else dataclasses.replace(ev, prompt=prompt or None)

    def exchange(self, event: HookEvent) -> Exchange:
        """The turn the event closes (``read_exchange``), guarded for every client: a request
        that is only injected context is no capture, and a compaction or session end that
        finds the last turn without a result yet finds a turn still open, not one to keep."""
        exchange = self.read_exchange(event)
        if exchange.request:
            request = compact(echo.strip(exchange.request))
            if not request:
                return Exchange(summary=exchange.summary)
            exchange.request = request
        if event.capture != CAPTURE_TURN and not exchange.result:
            exchange.request, exchange.tools, exchange.paths = "", [], []
            exchange.turn_id = ""
        return exchange

    # -- hooks: what each client implements -------------------------------------------------
    @abstractmethod
    def parse(self, event: str, payload: Mapping[str, Any]) -> HookEvent:
        """The event as lintaid needs it."""

    @abstractmethod
    def read_exchange(self, event: HookEvent) -> Exchange:
        """The last request, its result, the tools and files touched: from the transcript
        (and the payload), redacted. Empty fields when there is nothing to read."""

    @abstractmethod
    def output(self, event: HookEvent, context: str | None) -> dict[str, Any]:
        """The JSON the client reads on stdout: ``context`` injected, or ``{}`` for none."""

    # -- configuration ---------------------------------------------------------------------
    def install(self, root: Path, scope: Scope, commands: Commands) -> InstallReport:
        """Merge lintaid's hooks and MCP server into the client's configuration."""
        return self.installer.install(root, scope, commands)

    def uninstall(self, root: Path, scope: Scope, commands: Commands) -> InstallReport:
        """Remove exactly what ``install`` added."""
        return self.installer.uninstall(root, scope, commands)

    def installed(self, root: Path) -> list[str]:
        """The configuration files (project's and user's) that hold lintaid's hooks."""
        return self.installer.installed(root)

    @abstractmethod
    def config_files(self, root: Path) -> list[Path]:
        """Files and folders (absolute) holding this client's configuration, lintaid's
        entries in it (and their backups), and the client's transcripts: the workspace never
        indexes those inside the project. A folder stands for everything under it."""

    def doctor(self, root: Path) -> list[Check]:
        """Checks of this client's configuration for ``root``: its hooks and MCP server."""
        return self.installer.doctor(root)
