"""Install and uninstall the Cursor integration: ``hooks.json`` (version 1) and ``mcp.json``
in ``<project>/.cursor/`` or the user's ``~/.cursor/``.

Three events are registered: ``sessionStart`` (where Cursor reads injected context),
``beforeSubmitPrompt`` and ``stop``. Cursor drops a whole hooks file naming an event it does
not know, and some early builds with hooks did not know ``sessionStart``: on those, update
Cursor (the report says so). The MCP server gets the project through
Cursor's ``${workspaceFolder}`` (expanded by Cursor when it starts the server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from ..base import Check, Commands, InstallReport, Scope
from ..checks import Registration, as_argv, flat_commands, run_all
from ..config_files import (
    ConfigError,
    load_json,
    remove_empty_folder,
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

CLIENT: Final = "cursor"
HOOK_EVENTS: Final = ("sessionStart", "beforeSubmitPrompt", "stop")
HOOKS_VERSION: Final = 1
PROJECT_VARIABLE: Final = "${workspaceFolder}"
OWNS: Final = owned_by(CLIENT)


def config_dir(root: Path, scope: Scope) -> Path:
    if scope == "project":
        return Path(root) / ".cursor"
    if scope == "user":
        return Path.home() / ".cursor"
    raise ConfigError(f"unknown scope {scope!r}: expected 'project' or 'user'")


def hooks_path(root: Path, scope: Scope) -> Path:
    return config_dir(root, scope) / "hooks.json"


def mcp_path(root: Path, scope: Scope) -> Path:
    return config_dir(root, scope) / "mcp.json"


def install(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = hooks_path(root, scope)
    mpath = mcp_path(root, scope)
    data = load_json(path)
    config = load_json(mpath)  # refuse a broken mcp.json before writing anything
    version = data.setdefault("version", HOOKS_VERSION)
    if version != HOOKS_VERSION:
        raise ConfigError(f"{path}: version {version!r} is not {HOOKS_VERSION}, the only "
                          "hooks.json version lintaid knows; not touching it")
    hooks = object_at(data, "hooks", path)
    pristine = not _holds_ours(hooks)
    for event in HOOK_EVENTS:
        change = merge_flat(hooks, event, {"command": hook_command(commands, CLIENT, event,
                                                                     ("workspace_roots",))},
                            OWNS, path)
        if change:
            report.changes.append(f"{change} {event} hook in {path}")
    if report.changes:
        save_json(path, data, pristine=pristine)
    servers = object_at(config, "mcpServers", mpath)
    mcp_pristine = MCP_SERVER_NAME not in servers
    change = merge_mcp(servers, mcp_entry(commands, "--project", PROJECT_VARIABLE))
    if change:
        save_json(mpath, config, pristine=mcp_pristine)
        report.changes.append(f"{change} MCP server '{MCP_SERVER_NAME}' in {mpath}")
        report.next_steps.append(
            "turn the 'lintaid' MCP server on in Cursor Settings > MCP if Cursor lists it off")
    if report.changes:
        report.next_steps.insert(0, "restart Cursor so it loads the hooks and the MCP server")
        report.next_steps.append(
            "a Cursor build that does not know the sessionStart hook ignores the whole hooks "
            "file: if lintaid's hooks never run, update Cursor")
    return report


def uninstall(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = hooks_path(root, scope)
    mpath = mcp_path(root, scope)
    if path.exists():
        data = load_json(path)
        hooks = data.get("hooks")
        changed = strip_flat(hooks, OWNS) if isinstance(hooks, dict) else []
        if changed:
            if not hooks:
                del data["hooks"]
            save_or_remove(path, data, skeleton={"version": HOOKS_VERSION})
            report.changes.extend(f"removed {event} hook from {path}" for event in changed)
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
        remove_empty_folder(config_dir(root, scope))
    return report


def installed(root: Path) -> list[str]:
    out = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = hooks_path(root, scope)
        try:
            data = load_json(path)
        except ConfigError:
            continue
        if _holds_ours(data.get("hooks")):
            out.append(str(path))
    return out


def doctor(root: Path) -> list[Check]:
    regs = []
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
        entry = our_mcp_entry(servers)
        if entry is not None and isinstance(entry.get("args"), list):
            # Cursor expands its variable when it starts the server: so does the check.
            entry = {**entry, "args": [str(a).replace(PROJECT_VARIABLE, str(root))
                                       for a in entry["args"]]}
        regs.append(Registration(CLIENT, "Cursor", scope, path, as_argv(hooks), mpath, entry))
    return run_all(regs, root)


def _holds_ours(hooks: Any) -> bool:
    return isinstance(hooks, dict) and any(
        isinstance(handlers, list) and any(OWNS(h) for h in handlers)
        for handlers in hooks.values())
