"""``doctor`` checks every client shares: lintaid's hook commands and MCP server entry in a
client's configuration exist, point at programs that exist, and run.

A hook command is run as the client would run it, in the project, with ``{}`` on stdin when
the daemon answers (one real round trip; an empty event captures nothing) and with nothing
on stdin otherwise (the shim then answers ``{}`` without touching the project, so a probe
never spools an event). The MCP server is started and asked ``initialize``. Neither ever
starts a daemon (``LINTAID_NO_AUTOSTART=1``).

``without_running()`` leaves the running out: what remains (entries there, programs, scripts
and the launcher's lintaid found) is what the daemon checks at start for ``lintaid status``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lintaid_client import connection

from .base import Check, Scope
from .hook_entries import HOOK_SCRIPT_NAMES, Owns, launcher_problem

RUN_TIMEOUT_S: Final = 20.0
_RUN: ContextVar[bool] = ContextVar("lintaid_doctor_runs", default=True)
MCP_INITIALIZE: Final = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "lintaid-doctor", "version": "1"}}}) + "\n"


@dataclass
class Registration:
    """lintaid's entries in one client's configuration, in one scope."""

    client: str  # the name `lintaid install` takes
    title: str
    scope: Scope
    hooks_path: Path
    hooks: dict[str, list[str]] = field(default_factory=dict)  # event -> argv
    mcp_path: Path | None = None  # None: this client has no MCP registration to check
    mcp: Mapping[str, Any] | None = None  # lintaid's MCP entry, None when missing

    @property
    def reinstall(self) -> str:
        return f"lintaid install {self.client}" + (" --user" if self.scope == "user" else "")


def group_commands(hooks: Any, owns: Owns) -> dict[str, str]:
    """event -> lintaid's command line, for hooks grouped ``{"matcher", "hooks": [...]}``."""
    out: dict[str, str] = {}
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for handler in group.get("hooks", []) if isinstance(group, dict) else []:
                if owns(handler):
                    out[str(event)] = handler["command"]
    return out


def flat_commands(hooks: Any, owns: Owns) -> dict[str, str]:
    """event -> lintaid's command line, for hooks listing handlers directly."""
    out: dict[str, str] = {}
    if not isinstance(hooks, dict):
        return out
    for event, handlers in hooks.items():
        for handler in handlers if isinstance(handlers, list) else []:
            if owns(handler):
                out[str(event)] = handler["command"]
    return out


def argv(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["LINTAID_NO_AUTOSTART"] = "1"
    env.pop("LINTAID_PROJECT", None)
    return env


def _missing_program(words: Sequence[str]) -> str | None:
    """Why ``words`` cannot start: its program or the hook script it names is not there."""
    if not words:
        return "an empty or unreadable command line"
    program = words[0]
    if os.sep in program:
        if not os.path.isfile(program):
            return f"it runs {program}, which does not exist"
        if not os.access(program, os.X_OK):
            return f"it runs {program}, which is not executable"
    elif not _on_path(program):
        return f"it runs {program}, which is not on PATH"
    for word in words[1:]:
        if os.path.basename(word) in HOOK_SCRIPT_NAMES and os.sep in word \
                and not os.path.isfile(word):
            return f"its script {word} does not exist"
    return launcher_problem(words)


@contextlib.contextmanager
def without_running() -> Iterator[None]:
    """Within this block (this thread), every client's ``doctor`` checks its registrations
    without running a hook or an MCP server: entries, programs, scripts, launchers only."""
    token = _RUN.set(False)
    try:
        yield
    finally:
        _RUN.reset(token)


def _on_path(program: str) -> bool:
    return any(os.access(os.path.join(folder, program), os.X_OK)
               for folder in os.environ.get("PATH", "").split(os.pathsep) if folder)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def probe_hook(words: Sequence[str], root: Path, *, daemon_up: bool) -> str | None:
    """Run one hook command as the client would; None when it answered a JSON object and
    exited 0, else why not."""
    try:
        proc = subprocess.run(list(words), input=b"{}" if daemon_up else b"",
                              capture_output=True, cwd=str(root), env=_env(),
                              timeout=RUN_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"it could not be run: {err}"
    out = proc.stdout.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        return (f"it exited with status {proc.returncode}: "
                f"{_last_line(proc.stderr.decode('utf-8', 'replace')) or 'no message'}")
    try:
        answer = json.loads(out)
    except ValueError:
        return f"it printed {out[:80]!r}, not JSON"
    return None if isinstance(answer, dict) else f"it printed {out[:80]!r}, not an object"


def _mcp_words(entry: Mapping[str, Any]) -> list[str]:
    """The MCP entry's command line; empty when it has none."""
    command = entry.get("command")
    args = entry.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list):
        return []
    return [command, *map(str, args)]


def probe_mcp(entry: Mapping[str, Any], root: Path) -> str | None:
    """Start the MCP server as the client would and ask ``initialize``; None when it answers."""
    words = _mcp_words(entry)
    if not words:
        return "its entry has no command"
    missing = _missing_program(words)
    if missing:
        return missing
    try:
        proc = subprocess.run(words, input=MCP_INITIALIZE.encode(), capture_output=True,
                              cwd=str(root), env=_env(), timeout=RUN_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"it could not be run: {err}"
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        try:
            reply = json.loads(line)
        except ValueError:
            continue
        if isinstance(reply, dict) and reply.get("id") == 1:
            if isinstance(reply.get("result"), dict) and "serverInfo" in reply["result"]:
                return None
            return f"it refused initialize: {json.dumps(reply.get('error'))[:120]}"
    return (f"it did not answer initialize (exit status {proc.returncode}: "
            f"{_last_line(proc.stderr.decode('utf-8', 'replace')) or 'no message'})")


def daemon_answers(root: Path) -> bool:
    """Whether the project's daemon answers; without a status file no daemon runs, and
    nobody need wait for a ping."""
    if connection.read_status(root) is None:
        return False
    return connection.ping(root, timeout=1.0) is not None


def registration_checks(reg: Registration, root: Path, *,
                        daemon_up: bool | None = None) -> list[Check]:
    """The hooks of one registration (present, programs there, one of them run) and its MCP
    server (present, answering)."""
    checks: list[Check] = []
    name = f"{reg.client} hooks, {reg.scope}"
    problems = []
    for event, words in reg.hooks.items():
        missing = _missing_program(words)
        if missing:
            problems.append(f"{event}: {missing}")
    if not reg.hooks:
        checks.append(Check(name, False, f"none of lintaid's hooks in {reg.hooks_path}",
                            reg.reinstall))
    elif problems:
        checks.append(Check(name, False, f"{reg.hooks_path}: " + "; ".join(problems),
                            f"{reg.reinstall} (registers this interpreter, {sys.executable})"))
    elif not _RUN.get():
        checks.append(Check(name, True, f"{len(reg.hooks)} in {reg.hooks_path}; not run"))
    else:
        up = daemon_answers(root) if daemon_up is None else daemon_up
        event, words = next(iter(reg.hooks.items()))
        failure = probe_hook(words, root, daemon_up=up)
        if failure:
            checks.append(Check(name, False, f"{reg.hooks_path}: {event}: {failure}",
                                f"{reg.reinstall}; if that does not help, run the command "
                                "by hand with {} on stdin"))
        else:
            how = "answered through the daemon" if up else \
                "starts and answers (the daemon is down, so no event was sent)"
            checks.append(Check(name, True, f"{len(reg.hooks)} in {reg.hooks_path}; "
                                            f"the {event} hook {how}"))
    if reg.mcp_path is not None:
        mcp_name = f"{reg.client} MCP, {reg.scope}"
        if reg.mcp is None:
            checks.append(Check(mcp_name, False, f"not registered in {reg.mcp_path}, so "
                                f"{reg.title} cannot search memory on its own",
                                reg.reinstall))
        elif not _RUN.get():
            failure = _missing_program(_mcp_words(reg.mcp))
            checks.append(Check(mcp_name, failure is None,
                                f"{reg.mcp_path}: {failure or 'registered; not run'}",
                                reg.reinstall if failure else ""))
        else:
            failure = probe_mcp(reg.mcp, root)
            checks.append(Check(mcp_name, failure is None,
                                f"{reg.mcp_path}: {failure or 'answers initialize'}",
                                f"{reg.reinstall}" if failure else ""))
    return checks


def as_argv(commands: Mapping[str, str]) -> dict[str, list[str]]:
    return {event: argv(command) for event, command in commands.items()}


def run_all(registrations: Sequence[Registration], root: Path) -> list[Check]:
    """Every registration's checks; whether the daemon answers is asked once."""
    if not registrations:
        return []
    up = daemon_answers(root) if _RUN.get() else False
    return [check for reg in registrations
            for check in registration_checks(reg, root, daemon_up=up)]


def notes_as_checks(client: str, notes: Sequence[str]) -> list[Check]:
    """Settings that turn lintaid's hooks off, as failed checks."""
    return [Check(f"{client} hooks turned off", False, note.split(";")[0],
                  note.split(";", 1)[1].strip() if ";" in note else "")
            for note in notes]
