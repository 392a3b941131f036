"""Install and uninstall the Codex integration: hooks in ``hooks.json``, the MCP server in
``config.toml`` (``[mcp_servers.lintaid]``, edited with tomlkit so comments and layout stay).

Project scope writes ``<project>/.codex/``, which Codex reads only for a trusted project; user
scope writes ``$CODEX_HOME`` (else ``~/.codex``). Codex runs a new or changed hook only after
the person trusts it in ``/hooks``, so the report says so. Hooks are on by default; an
explicit ``[features] hooks = false`` (or the older ``codex_hooks``) is reported, not changed.
Codex has no project variable for MCP servers: the server finds the project from the working
directory Codex starts it in.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Final

import tomlkit

from ..base import Check, Commands, InstallReport, Scope
from ..checks import Registration, as_argv, group_commands, notes_as_checks, run_all
from ..config_files import (
    ConfigError,
    finish_removal,
    load_json,
    load_toml,
    remove_empty_folder,
    save_json,
    save_or_remove,
    toml_plain,
    write_atomic,
)
from ..hook_entries import (
    MCP_SERVER_NAME,
    holds_ours,
    hook_command,
    mcp_entry,
    merge_group,
    object_at,
    our_mcp_entry,
    owned_by,
    strip_events,
)
from .transcript import codex_home

CLIENT: Final = "codex"
# (event, matcher or None, timeout in seconds); SessionEnd hooks may take at most 3 s.
HOOK_EVENTS: Final[tuple[tuple[str, str | None, int], ...]] = (
    ("SessionStart", "startup|resume|clear|compact", 10),
    ("UserPromptSubmit", None, 10),
    ("Stop", None, 10),
    ("SubagentStop", None, 10),
    ("PreCompact", None, 10),
    ("SessionEnd", None, 3),
)
OWNS: Final = owned_by(CLIENT)


def config_dir(root: Path, scope: Scope) -> Path:
    if scope == "project":
        return Path(root) / ".codex"
    if scope == "user":
        return codex_home()
    raise ConfigError(f"unknown scope {scope!r}: expected 'project' or 'user'")


def hooks_path(root: Path, scope: Scope) -> Path:
    return config_dir(root, scope) / "hooks.json"


def config_path(root: Path, scope: Scope) -> Path:
    return config_dir(root, scope) / "config.toml"


def install(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = hooks_path(root, scope)
    toml_path = config_path(root, scope)
    data = load_json(path)
    doc = load_toml(toml_path)  # refuse a broken config.toml before writing anything
    hooks = object_at(data, "hooks", path)
    pristine = not holds_ours(hooks, OWNS)
    hook_changes = []
    for event, matcher, timeout in HOOK_EVENTS:
        handler = {"type": "command", "command": hook_command(commands, CLIENT, event),
                   "timeout": timeout}
        change = merge_group(hooks, event, handler, matcher, OWNS, path)
        if change:
            hook_changes.append(f"{change} {event} hook in {path}")
    if hook_changes:
        save_json(path, data, pristine=pristine)
    report.changes.extend(hook_changes)
    mcp_change = _install_mcp(doc, toml_path, commands)
    report.changes.extend(mcp_change)
    if hook_changes:
        report.next_steps.append(
            "Codex runs new or changed hooks only once trusted: open /hooks in Codex and "
            "trust lintaid's hooks (Codex asks again whenever a hook's command changes)")
    if report.changes:
        report.next_steps.append("restart Codex so it loads the hooks and the MCP server")
    if scope == "project" and report.changes:
        report.next_steps.append(
            f"Codex reads {config_dir(root, scope)} only for a trusted project: trust "
            f"{root} when Codex asks, or use `lintaid install codex --user`")
    report.next_steps.extend(_disabled_notes(root))
    return report


def uninstall(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = hooks_path(root, scope)
    toml_path = config_path(root, scope)
    data = load_json(path) if path.exists() else None
    doc = load_toml(toml_path) if toml_path.exists() else None
    if data is not None:
        hooks = data.get("hooks")
        changed = strip_events(hooks, OWNS) if isinstance(hooks, dict) else []
        if changed:
            if not hooks:
                del data["hooks"]
            save_or_remove(path, data)
            report.changes.extend(f"removed {event} hook from {path}" for event in changed)
    if doc is not None:
        servers = doc.get("mcp_servers")
        if isinstance(servers, MutableMapping) and MCP_SERVER_NAME in servers:
            del servers[MCP_SERVER_NAME]
            if not servers:
                del doc["mcp_servers"]
            finish_removal(toml_path, doc.unwrap(), lambda: tomlkit.dumps(doc), toml_plain)
            report.changes.append(f"removed MCP server '{MCP_SERVER_NAME}' from {toml_path}")
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
        if holds_ours(data.get("hooks"), OWNS):
            out.append(str(path))
    return out


def doctor(root: Path) -> list[Check]:
    regs = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = hooks_path(root, scope)
        try:
            hooks = group_commands(load_json(path).get("hooks"), OWNS)
        except ConfigError:
            continue
        if not hooks:
            continue
        toml_path = config_path(root, scope)
        try:
            servers = load_toml(toml_path).unwrap().get("mcp_servers")
        except ConfigError:
            servers = None
        regs.append(Registration(CLIENT, "Codex", scope, path, as_argv(hooks), toml_path,
                                 our_mcp_entry(servers)))
    return run_all(regs, root) + (notes_as_checks(CLIENT, _disabled_notes(root))
                                  if regs else [])


def _install_mcp(doc: tomlkit.TOMLDocument, path: Path, commands: Commands) -> list[str]:
    wanted = mcp_entry(commands)
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    elif not isinstance(servers, MutableMapping):
        raise ConfigError(f"{path}: 'mcp_servers' is not a table; not touching it")
    pristine = MCP_SERVER_NAME not in servers
    current = servers.get(MCP_SERVER_NAME)
    if current is not None and not isinstance(current, MutableMapping):
        raise ConfigError(f"{path}: 'mcp_servers.{MCP_SERVER_NAME}' is not a table; "
                          "not touching it")
    if current is not None:
        plain = {k: _plain(v) for k, v in current.items()}
        if all(plain.get(k) == v for k, v in wanted.items()):
            return []
        for key, value in wanted.items():
            current[key] = value  # the developer's other keys (env, timeouts) stay
        verb = "updated"
    else:
        table = tomlkit.inline_table() if _is_inline(servers) else tomlkit.table()
        for key, value in wanted.items():
            table[key] = value
        if not _is_inline(servers) and len(doc) > 1:
            table.add(tomlkit.nl())  # a blank line before whatever table follows
        servers[MCP_SERVER_NAME] = table
        verb = "added"
    write_atomic(path, tomlkit.dumps(doc), pristine=pristine)
    return [f"{verb} MCP server '{MCP_SERVER_NAME}' in {path}"]


def _is_inline(value: Any) -> bool:
    return isinstance(value, tomlkit.items.InlineTable)


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _disabled_notes(root: Path) -> list[str]:
    """Say so when a Codex configuration turns hooks off."""
    notes = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = config_path(root, scope)
        try:
            features = load_toml(path).get("features") if path.exists() else None
        except ConfigError:
            continue
        if not isinstance(features, MutableMapping):
            continue
        for key in ("hooks", "codex_hooks"):
            if features.get(key) is False:
                notes.append(f"{path} turns Codex hooks off ([features] {key} = false); "
                             "set it to true or lintaid captures and recalls nothing")
    return notes
