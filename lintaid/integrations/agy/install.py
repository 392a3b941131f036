"""Install and uninstall the Antigravity CLI integration, user level only: hooks in
``~/.gemini/config/hooks.json`` under lintaid's own top-level key, and ``mcpServers.lintaid``
in ``~/.gemini/config/mcp_config.json``.

Antigravity reads these files for every workspace; lintaid knows of no project-level file, so
a project install is refused with the command to run instead. Each hook finds the project
from the event (``workspacePaths``); the MCP server from its working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from ..base import Check, Commands, InstallReport, Scope
from ..checks import Registration, as_argv, flat_commands, run_all
from ..config_files import ConfigError, load_json, save_json, save_or_remove
from ..hook_entries import (
    MCP_SERVER_NAME,
    hook_command,
    mcp_entry,
    merge_mcp,
    object_at,
    our_mcp_entry,
    owned_by,
)

CLIENT: Final = "agy"
HOOKS_KEY: Final = "lintaid"
HOOK_EVENTS: Final = ("PreInvocation", "PostInvocation", "Stop")


def config_dir() -> Path:
    return Path.home() / ".gemini" / "config"


def hooks_path() -> Path:
    return config_dir() / "hooks.json"


def mcp_path() -> Path:
    return config_dir() / "mcp_config.json"


def _check_scope(scope: Scope) -> None:
    if scope == "project":
        raise ConfigError(
            f"Antigravity CLI reads hooks only from {hooks_path()}, for every workspace; "
            "run `lintaid install agy --user`")
    if scope != "user":
        raise ConfigError(f"unknown scope {scope!r}: expected 'project' or 'user'")


def wanted_hooks(commands: Commands) -> dict[str, Any]:
    return {event: [{"type": "command", "command": hook_command(
        commands, CLIENT, event, ("workspacePaths",))}]
            for event in HOOK_EVENTS}


def install(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    _check_scope(scope)
    report = InstallReport()
    path = hooks_path()
    mpath = mcp_path()
    data = load_json(path)
    config = load_json(mpath)  # refuse a broken file before writing anything
    wanted = wanted_hooks(commands)
    current = data.get(HOOKS_KEY)
    if current != wanted:
        data[HOOKS_KEY] = wanted
        save_json(path, data, pristine=current is None)
        verb = "added" if current is None else "updated"
        report.changes.append(f"{verb} {', '.join(HOOK_EVENTS)} hooks in {path}")
    servers = object_at(config, "mcpServers", mpath)
    pristine = MCP_SERVER_NAME not in servers
    change = merge_mcp(servers, mcp_entry(commands))
    if change:
        save_json(mpath, config, pristine=pristine)
        report.changes.append(f"{change} MCP server '{MCP_SERVER_NAME}' in {mpath}")
    if report.changes:
        report.next_steps.append("restart Antigravity CLI (agy) so it loads the hooks and the "
                                 "MCP server")
    return report


def uninstall(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    _check_scope(scope)
    report = InstallReport()
    path = hooks_path()
    mpath = mcp_path()
    if path.exists():
        data = load_json(path)
        if HOOKS_KEY in data:
            del data[HOOKS_KEY]
            save_or_remove(path, data)
            report.changes.append(f"removed {', '.join(HOOK_EVENTS)} hooks from {path}")
    if mpath.exists():
        config = load_json(mpath)
        servers = config.get("mcpServers")
        if isinstance(servers, dict) and MCP_SERVER_NAME in servers:
            del servers[MCP_SERVER_NAME]
            if not servers:
                del config["mcpServers"]
            save_or_remove(mpath, config)
            report.changes.append(f"removed MCP server '{MCP_SERVER_NAME}' from {mpath}")
    return report


def installed(root: Path) -> list[str]:
    try:
        data = load_json(hooks_path())
    except ConfigError:
        return []
    return [str(hooks_path())] if isinstance(data.get(HOOKS_KEY), dict) else []


def doctor(root: Path) -> list[Check]:
    try:
        hooks = flat_commands(load_json(hooks_path()).get(HOOKS_KEY), owned_by(CLIENT))
    except ConfigError:
        return []
    if not hooks:
        return []
    try:
        servers = load_json(mcp_path()).get("mcpServers")
    except ConfigError:
        servers = None
    return run_all([Registration(CLIENT, "Antigravity CLI", "user", hooks_path(),
                                 as_argv(hooks), mcp_path(), our_mcp_entry(servers))], root)
