"""Install and uninstall the Gemini CLI integration: hooks and ``mcpServers.lintaid`` in one
settings file, ``<project>/.gemini/settings.json`` or the user's ``~/.gemini/settings.json``.

Gemini CLI timeouts are in milliseconds. It fingerprints project hooks and warns about new or
changed ones until the person trusts them, so the report says so. Gemini CLI has no project
variable for MCP servers: the server finds the project from the working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from ..base import Check, Commands, InstallReport, Scope
from ..checks import Registration, as_argv, group_commands, notes_as_checks, run_all
from ..config_files import (
    ConfigError,
    load_json,
    remove_empty_folder,
    save_json,
    save_or_remove,
)
from ..hook_entries import (
    MCP_SERVER_NAME,
    holds_ours,
    hook_command,
    mcp_entry,
    merge_group,
    merge_mcp,
    object_at,
    our_mcp_entry,
    owned_by,
    strip_events,
)

CLIENT: Final = "gemini"
# (event, timeout in milliseconds); SessionEnd is not awaited by Gemini CLI.
HOOK_EVENTS: Final[tuple[tuple[str, int], ...]] = (
    ("SessionStart", 10_000),
    ("BeforeAgent", 10_000),
    ("AfterAgent", 10_000),
    ("PreCompress", 10_000),
    ("SessionEnd", 5_000),
)
OWNS: Final = owned_by(CLIENT)


def settings_path(root: Path, scope: Scope) -> Path:
    if scope == "project":
        return Path(root) / ".gemini" / "settings.json"
    if scope == "user":
        return Path.home() / ".gemini" / "settings.json"
    raise ConfigError(f"unknown scope {scope!r}: expected 'project' or 'user'")


def handler_name(event: str) -> str:
    return f"lintaid-{event}"


def install(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = settings_path(root, scope)
    settings = load_json(path)
    hooks = object_at(settings, "hooks", path)
    servers = object_at(settings, "mcpServers", path)
    pristine = not holds_ours(hooks, OWNS) and MCP_SERVER_NAME not in servers
    for event, timeout in HOOK_EVENTS:
        handler = {"name": handler_name(event), "type": "command",
                   "command": hook_command(commands, CLIENT, event), "timeout": timeout}
        change = merge_group(hooks, event, handler, None, OWNS, path)
        if change:
            report.changes.append(f"{change} {event} hook in {path}")
    hooks_changed = bool(report.changes)
    mcp_change = merge_mcp(servers, mcp_entry(commands))
    if mcp_change:
        report.changes.append(f"{mcp_change} MCP server '{MCP_SERVER_NAME}' in {path}")
    if report.changes:
        save_json(path, settings, pristine=pristine)
        report.next_steps.append("restart Gemini CLI so it loads the hooks and the MCP server")
    if hooks_changed and scope == "project":
        report.next_steps.append(
            "Gemini CLI warns about new project hooks until you trust them: accept lintaid's "
            "(or review them with /hooks panel)")
    report.next_steps.extend(_disabled_notes(settings, path))
    return report


def uninstall(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = settings_path(root, scope)
    if not path.exists():
        return report
    settings = load_json(path)
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        for event in strip_events(hooks, OWNS):
            report.changes.append(f"removed {event} hook from {path}")
        if report.changes and not hooks:
            del settings["hooks"]
    servers = settings.get("mcpServers")
    if isinstance(servers, dict) and MCP_SERVER_NAME in servers:
        del servers[MCP_SERVER_NAME]
        if not servers:
            del settings["mcpServers"]
        report.changes.append(f"removed MCP server '{MCP_SERVER_NAME}' from {path}")
    if report.changes:
        save_or_remove(path, settings)
    if scope == "project":
        remove_empty_folder(path.parent)
    return report


def installed(root: Path) -> list[str]:
    out = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = settings_path(root, scope)
        try:
            settings = load_json(path)
        except ConfigError:
            continue
        if holds_ours(settings.get("hooks"), OWNS):
            out.append(str(path))
    return out


def doctor(root: Path) -> list[Check]:
    regs = []
    notes: list[str] = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = settings_path(root, scope)
        try:
            settings = load_json(path)
        except ConfigError:
            continue
        hooks = group_commands(settings.get("hooks"), OWNS)
        if not hooks:
            continue
        regs.append(Registration(CLIENT, "Gemini CLI", scope, path, as_argv(hooks), path,
                                 our_mcp_entry(settings.get("mcpServers"))))
        notes.extend(_disabled_notes(settings, path))
    return run_all(regs, root) + notes_as_checks(CLIENT, notes)


def _disabled_notes(settings: dict[str, Any], path: Path) -> list[str]:
    config = settings.get("hooksConfig")
    if not isinstance(config, dict):
        return []
    notes = []
    if config.get("enabled") is False:
        notes.append(f"{path} turns Gemini CLI hooks off (hooksConfig.enabled = false); "
                     "set it to true or lintaid captures and recalls nothing")
    disabled = config.get("disabled")
    if isinstance(disabled, list):
        names = sorted({handler_name(e) for e, _t in HOOK_EVENTS} & set(map(str, disabled)))
        if names:
            notes.append(f"{path} disables {', '.join(names)} (hooksConfig.disabled)")
    return notes
