"""Install and uninstall the GitHub Copilot CLI integration: a hooks file of lintaid's own
(``<project>/.github/hooks/lintaid.json`` or ``$COPILOT_HOME/hooks/lintaid.json``, Copilot
loading every file in those folders) and the MCP server in ``<project>/.github/mcp.json`` or
``$COPILOT_HOME/mcp-config.json`` (``$COPILOT_HOME`` defaults to ``~/.copilot``).

Copilot CLI runs a project's hooks and MCP servers only in a folder the person trusted (its
prompt, or ``--trust-folder``). It reads ``.mcp.json`` instead of ``.github/mcp.json`` when a
project has both, so the report says when a ``.mcp.json`` without lintaid shadows the entry.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from lintaid import files

from ..base import Check, Commands, InstallReport, Scope
from ..checks import Registration, as_argv, flat_commands, run_all
from ..config_files import (
    ConfigError,
    dump_json,
    load_json,
    read_text,
    save_json,
    save_or_remove,
)
from ..hook_entries import (
    MCP_SERVER_NAME,
    hook_command,
    mcp_entry,
    merge_flat,
    merge_mcp,
    object_at,
    our_mcp_entry,
    owned_by,
    strip_flat,
)

CLIENT: Final = "copilot"
# (event, timeout in seconds): Claude Code's names, so the payloads are Claude-style.
HOOK_EVENTS: Final[tuple[tuple[str, int], ...]] = (
    ("SessionStart", 10), ("UserPromptSubmit", 10), ("Stop", 10), ("PreCompact", 10),
    ("SessionEnd", 5))
SKELETON: Final = {"version": 1}
OWNS: Final = owned_by(CLIENT)


def copilot_home() -> Path:
    base = os.environ.get("COPILOT_HOME")
    return Path(base).expanduser() if base else Path.home() / ".copilot"


def session_log(session_id: str) -> Path:
    return copilot_home() / "session-state" / session_id / "events.jsonl"


def _check_scope(scope: Scope) -> None:
    if scope not in ("project", "user"):
        raise ConfigError(f"unknown scope {scope!r}: expected 'project' or 'user'")


def hooks_path(root: Path, scope: Scope) -> Path:
    _check_scope(scope)
    folder = Path(root) / ".github" / "hooks" if scope == "project" else copilot_home() / "hooks"
    return folder / "lintaid.json"


def mcp_path(root: Path, scope: Scope) -> Path:
    _check_scope(scope)
    return Path(root) / ".github" / "mcp.json" if scope == "project" \
        else copilot_home() / "mcp-config.json"


def install(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = hooks_path(root, scope)
    mpath = mcp_path(root, scope)
    data = load_json(path)
    config = load_json(mpath)  # refuse a broken MCP file before writing anything
    data.setdefault("version", 1)
    hooks = object_at(data, "hooks", path)
    for event, timeout in HOOK_EVENTS:
        handler = {"type": "command", "command": hook_command(commands, CLIENT, event),
                   "timeoutSec": timeout}
        change = merge_flat(hooks, event, handler, OWNS, path)
        if change:
            report.changes.append(f"{change} {event} hook in {path}")
    if report.changes:  # lintaid's own file: nothing of the person's to back up
        path.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(path, dump_json(data, read_text(path)), mode=0o644)
    servers = object_at(config, "mcpServers", mpath)
    fresh = MCP_SERVER_NAME not in servers
    change = merge_mcp(servers, {"type": "local", **mcp_entry(commands), "tools": ["*"]})
    if change:
        save_json(mpath, config, pristine=fresh)
        report.changes.append(f"{change} MCP server '{MCP_SERVER_NAME}' in {mpath}")
    if report.changes:
        report.next_steps.append("restart Copilot CLI so it loads the hooks and the MCP server")
        if scope == "project":
            report.next_steps.append(
                "Copilot CLI runs a project's hooks and MCP servers only once you trust the "
                "folder (it asks; `copilot -p` takes --trust-folder)")
    report.next_steps.extend(_shadowed(root, scope))
    return report


def _shadowed(root: Path, scope: Scope) -> list[str]:
    """Copilot reads ``.mcp.json`` instead of ``.github/mcp.json`` when both are there."""
    if scope != "project":
        return []
    other = Path(root) / ".mcp.json"
    try:
        servers = load_json(other).get("mcpServers") if other.exists() else None
    except ConfigError:
        servers = None
    if other.exists() and our_mcp_entry(servers) is None:
        return [f"Copilot CLI reads {other} instead of {mcp_path(root, scope)}: add lintaid's "
                "server there too (`lintaid install claude-code` does)"]
    return []


def uninstall(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = hooks_path(root, scope)
    if path.exists():
        data = load_json(path)
        hooks = data.get("hooks")
        changed = strip_flat(hooks, OWNS) if isinstance(hooks, dict) else []
        if changed:
            if not hooks:
                del data["hooks"]
            save_or_remove(path, data, skeleton=SKELETON)
            report.changes.extend(f"removed {event} hook from {path}" for event in changed)
            _remove_empty(path.parent)
    mpath = mcp_path(root, scope)
    if mpath.exists():
        config = load_json(mpath)
        servers = config.get("mcpServers")
        if isinstance(servers, dict) and MCP_SERVER_NAME in servers:
            del servers[MCP_SERVER_NAME]
            if not servers:
                del config["mcpServers"]
            save_or_remove(mpath, config)
            report.changes.append(f"removed MCP server '{MCP_SERVER_NAME}' from {mpath}")
    if scope == "project":
        _remove_empty(Path(root) / ".github")
    return report


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass  # not empty, or not there: not lintaid's to remove


def installed(root: Path) -> list[str]:
    out = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = hooks_path(root, scope)
        try:
            if flat_commands(load_json(path).get("hooks"), OWNS):
                out.append(str(path))
        except ConfigError:
            continue
    return out


def doctor(root: Path) -> list[Check]:
    regs = []
    notes: list[Check] = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = hooks_path(root, scope)
        try:
            hooks = flat_commands(load_json(path).get("hooks"), OWNS)
        except ConfigError:
            continue
        if not hooks:
            continue
        mpath = mcp_path(root, scope)
        try:
            servers = load_json(mpath).get("mcpServers")
        except ConfigError:
            servers = None
        regs.append(Registration(CLIENT, "GitHub Copilot CLI", scope, path, as_argv(hooks),
                                 mpath, our_mcp_entry(servers)))
        notes += [Check(f"{CLIENT} MCP shadowed", True, note, "lintaid install claude-code",
                        warn=True) for note in _shadowed(root, scope)]
    return run_all(regs, root) + notes
