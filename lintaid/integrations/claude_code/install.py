"""Install and uninstall the Claude Code integration: hooks in settings.json, MCP in .mcp.json.

These files belong to the developer and hold other tools' settings, so the installer merges
rather than writes: it touches only handlers it recognises as its own, is idempotent, backs up
a file before changing it, writes atomically, and refuses to touch a file it cannot parse.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, Final

from ..base import Check, Commands, InstallReport, Scope
from ..checks import Registration, as_argv, group_commands, run_all
from ..config_files import (
    ConfigError,
    load_json,
    remove_empty_folder,
    save_json,
    save_or_remove,
)
from ..hook_entries import is_hook_command, our_mcp_entry

PROVIDER_ARG: Final = "claude-code"
MCP_SERVER_NAME: Final = "lintaid"
PROJECT_ENV: Final = "CLAUDE_PROJECT_DIR"
SESSION_ENV: Final = "CLAUDE_CODE_SESSION_ID"
"""What Claude Code gives its stdio MCP servers (2.1.154 on): the session id its hooks get."""

# (event, matcher or None, timeout in seconds)
HOOK_EVENTS: Final[tuple[tuple[str, str | None, int], ...]] = (
    ("SessionStart", "startup|resume|clear|compact", 10),
    ("UserPromptSubmit", None, 10),
    ("Stop", None, 10),
    ("SubagentStop", None, 10),
    ("PreCompact", None, 10),
    ("SessionEnd", None, 5),
)


def settings_path(root: Path, scope: Scope) -> Path:
    """``<root>/.claude/settings.json`` or the user's (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""
    if scope == "project":
        return Path(root) / ".claude" / "settings.json"
    if scope == "user":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        folder = Path(base).expanduser() if base else Path.home() / ".claude"
        return folder / "settings.json"
    raise ConfigError(f"unknown scope {scope!r}: expected 'project' or 'user'")


def mcp_path(root: Path, scope: Scope = "project") -> Path:
    """The project's ``.mcp.json``, or the user's ``~/.claude.json`` (user-level servers)."""
    if scope == "user":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base).expanduser() / ".claude.json") if base \
            else Path.home() / ".claude.json"
    return Path(root) / ".mcp.json"


def install(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    """Merge lintaid's hooks into settings.json and its MCP server into ``.mcp.json``
    (project) or ``~/.claude.json`` (user); idempotent."""
    report = InstallReport()
    path = settings_path(root, scope)
    settings = load_json(path)
    load_json(mcp_path(root, scope))  # refuse a broken MCP file before writing anything
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f"{path}: 'hooks' is not an object; not touching it")
    pristine = not any(isinstance(groups, list) and _without_ours(groups)[1]
                       for groups in hooks.values())
    changed = False
    for event, matcher, timeout in HOOK_EVENTS:
        change = _install_event(hooks, event, matcher, timeout, commands, path)
        if change:
            report.changes.append(f"{change} {event} hook in {path}")
            changed = True
    if changed:
        save_json(path, settings, pristine=pristine)
    mcp_changes = _install_mcp(mcp_path(root, scope), commands, scope, root)
    report.changes.extend(mcp_changes)
    if report.changes:
        report.next_steps.append("restart Claude Code (or run /hooks) so it loads the hooks")
    if mcp_changes and scope == "project":
        report.next_steps.append(
            "approve the project's 'lintaid' MCP server when Claude Code asks (or run /mcp)")
    return report


def uninstall(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    """Remove exactly lintaid's hook handlers and MCP server entry; nothing else.

    Matcher groups, event keys and top-level keys left empty by the removal are dropped; a file
    left holding nothing at all is deleted (it was ours).
    """
    report = InstallReport()
    path = settings_path(root, scope)
    if path.exists():
        settings = load_json(path)
        hooks = settings.get("hooks")
        if isinstance(hooks, dict):
            for event in list(hooks):
                groups = hooks[event]
                if not isinstance(groups, list):
                    continue
                kept, removed = _without_ours(groups)
                if removed:
                    report.changes.append(f"removed {event} hook from {path}")
                    if kept:
                        hooks[event] = kept
                    else:
                        del hooks[event]
            if report.changes and not hooks:
                del settings["hooks"]
        if report.changes:
            save_or_remove(path, settings)
    report.changes.extend(_uninstall_mcp(mcp_path(root, scope)))
    if scope == "project":
        remove_empty_folder(path.parent)
    return report


def installed(root: Path) -> list[str]:
    """The settings files (project's, user's) holding at least one of lintaid's hooks."""
    out = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = settings_path(root, scope)
        try:
            settings = load_json(path)
        except ConfigError:
            continue
        hooks = settings.get("hooks")
        if isinstance(hooks, dict) and any(
                isinstance(groups, list) and _without_ours(groups)[1]
                for groups in hooks.values()):
            out.append(str(path))
    return out


def doctor(root: Path) -> list[Check]:
    """Each scope holding lintaid's hooks: the hooks run, the MCP server answers."""
    regs = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = settings_path(root, scope)
        try:
            hooks = group_commands(load_json(path).get("hooks"), _is_ours)
        except ConfigError:
            continue
        if not hooks:
            continue
        mpath = mcp_path(root, scope)
        try:
            servers = load_json(mpath).get("mcpServers")
        except ConfigError:
            servers = None
        regs.append(Registration(PROVIDER_ARG, "Claude Code", scope, path, as_argv(hooks),
                                 mpath, our_mcp_entry(servers)))
    return run_all(regs, root)


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and is_our_command(handler.get("command"))


# --- hook handlers ----------------------------------------------------------------------------


def is_our_command(command: Any) -> bool:
    """True for a command that runs lintaid's hook shim for Claude Code, however installed."""
    return is_hook_command(command, PROVIDER_ARG)


def _handler(event: str, timeout: int, commands: Commands) -> dict[str, Any]:
    return {
        "type": "command",
        "command": shlex.join([*commands.hook, PROVIDER_ARG, event]),
        "timeout": timeout,
    }


def _install_event(
    hooks: dict[str, Any],
    event: str,
    matcher: str | None,
    timeout: int,
    commands: Commands,
    path: Path,
) -> str | None:
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise ConfigError(f"{path}: hooks.{event} is not a list; not touching it")
    wanted = _handler(event, timeout, commands)
    ours = [
        (group, handler)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for handler in group["hooks"]
        if isinstance(handler, dict) and is_our_command(handler.get("command"))
    ]
    if len(ours) == 1:
        group, handler = ours[0]
        if handler == wanted and group.get("matcher") == matcher and len(group["hooks"]) == 1:
            return None
    kept, _removed = _without_ours(groups)
    group = {"matcher": matcher, "hooks": [wanted]} if matcher else {"hooks": [wanted]}
    hooks[event] = [*kept, group]
    return "updated" if ours else "added"


def _without_ours(groups: list[Any]) -> tuple[list[Any], int]:
    """Return the groups minus our handlers, dropping only groups that we emptied."""
    kept: list[Any] = []
    removed = 0
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        handlers = [
            h
            for h in group["hooks"]
            if not (isinstance(h, dict) and is_our_command(h.get("command")))
        ]
        dropped = len(group["hooks"]) - len(handlers)
        removed += dropped
        if not dropped:
            kept.append(group)
        elif handlers:
            kept.append({**group, "hooks": handlers})
    return kept, removed


# --- MCP server -------------------------------------------------------------------------------


def _install_mcp(path: Path, commands: Commands, scope: Scope, root: Path) -> list[str]:
    config = load_json(path)
    servers = config.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: 'mcpServers' is not an object; not touching it")
    current = servers.get(MCP_SERVER_NAME)
    wanted = {"type": "stdio", "command": commands.mcp[0],
              "args": [*commands.mcp[1:], "--project-env", PROJECT_ENV,
                       "--session-env", SESSION_ENV]}
    if isinstance(current, dict):
        merged = {**current, **wanted}  # keep the developer's extras (env, timeout)
        if merged == current:
            return []
        servers[MCP_SERVER_NAME] = merged
        verb = "updated"
    else:
        servers[MCP_SERVER_NAME] = wanted
        verb = "added"
    save_json(path, config, pristine=not isinstance(current, dict))
    return [f"{verb} MCP server '{MCP_SERVER_NAME}' in {path}"]


def _uninstall_mcp(path: Path) -> list[str]:
    if not path.exists():
        return []
    config = load_json(path)
    servers = config.get("mcpServers")
    if not isinstance(servers, dict) or MCP_SERVER_NAME not in servers:
        return []
    del servers[MCP_SERVER_NAME]
    if not servers:
        del config["mcpServers"]
    save_or_remove(path, config)
    return [f"removed MCP server '{MCP_SERVER_NAME}' from {path}"]
