"""Install and uninstall the OpenClaw integration.

OpenClaw's configuration is per user: ``$OPENCLAW_CONFIG_PATH``, else ``openclaw.json`` in
``$OPENCLAW_STATE_DIR`` (else ``~/.openclaw``). The install copies the plugin shipped with
lintaid into ``<state>/extensions/lintaid/`` and registers it in ``plugins.entries.lintaid``
(enabled, allowed to read the conversation for ``agent_end``, told how to start the hook
shim), plus the MCP server in ``mcp.servers.lintaid``. A project install pins the project in
both (the plugin's ``project``, the server's ``--project``); a user install pins nothing, and
each run uses the agent's workspace. ``openclaw.json`` may be JSON5: lintaid edits plain JSON
only and refuses anything else, naming the line.
"""

from __future__ import annotations

import filecmp
import os
from pathlib import Path
from typing import Any, Final

from lintaid import files

from ..base import Check, Commands, InstallReport, Scope
from ..checks import Registration, run_all
from ..config_files import ConfigError, load_json, save_json, save_or_remove
from ..hook_entries import MCP_SERVER_NAME, mcp_entry, merge_mcp, object_at, our_mcp_entry

PLUGIN_ID: Final = "lintaid"
PLUGIN_SOURCE: Final = Path(__file__).resolve().parent / "plugin"
PLUGIN_FILES: Final = ("index.js", "package.json", "openclaw.plugin.json")


def state_dir() -> Path:
    base = os.environ.get("OPENCLAW_STATE_DIR")
    return Path(base).expanduser() if base else Path.home() / ".openclaw"


def config_path() -> Path:
    override = os.environ.get("OPENCLAW_CONFIG_PATH")
    return Path(override).expanduser() if override else state_dir() / "openclaw.json"


def plugin_dir() -> Path:
    return state_dir() / "extensions" / PLUGIN_ID


def _check_scope(scope: Scope) -> None:
    if scope not in ("project", "user"):
        raise ConfigError(f"unknown scope {scope!r}: expected 'project' or 'user'")


def plugin_entry(root: Path, scope: Scope, commands: Commands) -> dict[str, Any]:
    config: dict[str, Any] = {"hookCommand": list(commands.hook)}
    if scope == "project":
        config["project"] = str(root)
    return {"enabled": True, "hooks": {"allowConversationAccess": True}, "config": config}


def install(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    _check_scope(scope)
    report = InstallReport()
    path = config_path()
    try:
        data = load_json(path)
    except ConfigError as err:
        raise ConfigError(f"{err} (JSON5 is not edited: add plugins.entries.{PLUGIN_ID} and "
                          f"mcp.servers.{MCP_SERVER_NAME} by hand)") from None
    plugins = object_at(data, "plugins", path)
    entries = object_at(plugins, "entries", path, "plugins.")
    mcp = object_at(data, "mcp", path)
    servers = object_at(mcp, "servers", path, "mcp.")
    pristine = PLUGIN_ID not in entries and MCP_SERVER_NAME not in servers

    report.changes.extend(_copy_plugin())
    wanted = plugin_entry(root, scope, commands)
    current = entries.get(PLUGIN_ID)
    merged = _merge_entry(current, wanted)
    changed = False
    if merged != current:
        entries[PLUGIN_ID] = merged
        verb = "added" if current is None else "updated"
        report.changes.append(f"{verb} plugin entry '{PLUGIN_ID}' in {path}")
        changed = True
    allow = plugins.get("allow")
    if isinstance(allow, list) and PLUGIN_ID not in allow:
        allow.append(PLUGIN_ID)
        report.changes.append(f"added '{PLUGIN_ID}' to plugins.allow in {path}")
        changed = True
    extra = ("--project", str(root)) if scope == "project" else ()
    change = merge_mcp(servers, mcp_entry(commands, *extra))
    if change:
        report.changes.append(f"{change} MCP server '{MCP_SERVER_NAME}' in {path}")
        changed = True
    if changed:
        save_json(path, data, pristine=pristine)
    if report.changes:
        report.next_steps.append("restart the OpenClaw gateway (openclaw gateway restart) so it "
                                 "loads the plugin; `openclaw plugins list` shows it")
        pinned = f"every agent run uses {root}" if scope == "project" else \
            "each agent run uses its own workspace"
        report.next_steps.append(f"OpenClaw's configuration is per user: {pinned} "
                                 "(reinstall with or without --user to change that)")
    return report


def uninstall(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    _check_scope(scope)
    report = InstallReport()
    path = config_path()
    if path.exists():
        data = load_json(path)
        changed = False
        plugins = data.get("plugins")
        if isinstance(plugins, dict):
            entries = plugins.get("entries")
            if isinstance(entries, dict) and PLUGIN_ID in entries:
                del entries[PLUGIN_ID]
                if not entries:
                    del plugins["entries"]
                report.changes.append(f"removed plugin entry '{PLUGIN_ID}' from {path}")
                changed = True
                allow = plugins.get("allow")
                if isinstance(allow, list) and PLUGIN_ID in allow:
                    allow.remove(PLUGIN_ID)
                    report.changes.append(f"removed '{PLUGIN_ID}' from plugins.allow in {path}")
            if not plugins:
                del data["plugins"]
        mcp = data.get("mcp")
        if isinstance(mcp, dict):
            servers = mcp.get("servers")
            if isinstance(servers, dict) and MCP_SERVER_NAME in servers:
                del servers[MCP_SERVER_NAME]
                if not servers:
                    del mcp["servers"]
                if not mcp:
                    del data["mcp"]
                report.changes.append(f"removed MCP server '{MCP_SERVER_NAME}' from {path}")
                changed = True
        if changed:
            save_or_remove(path, data)
    report.changes.extend(_remove_plugin())
    return report


def installed(root: Path) -> list[str]:
    try:
        data = load_json(config_path())
    except ConfigError:
        return []
    plugins = data.get("plugins")
    entries = plugins.get("entries") if isinstance(plugins, dict) else None
    return [str(config_path())] if isinstance(entries, dict) and PLUGIN_ID in entries else []


def _merge_entry(current: Any, wanted: dict[str, Any]) -> dict[str, Any]:
    """Our entry with the developer's extra keys kept (hook timeouts, other config keys)."""
    if not isinstance(current, dict):
        return wanted
    merged = {**current, **wanted}
    for key in ("hooks", "config"):
        if isinstance(current.get(key), dict):
            base = dict(current[key])
            if key == "config":
                base.pop("project", None)  # a user install unpins
            merged[key] = {**base, **wanted[key]}
    return merged


def _copy_plugin() -> list[str]:
    """Copy the shipped plugin into OpenClaw's extensions folder; say so when it changed."""
    target = plugin_dir()
    fresh = not target.exists()
    changed = [name for name in PLUGIN_FILES
               if not (target / name).is_file()
               or not filecmp.cmp(PLUGIN_SOURCE / name, target / name, shallow=False)]
    if not changed:
        return []
    target.mkdir(parents=True, exist_ok=True)
    os.chmod(target, 0o755)  # OpenClaw refuses a plugin folder others can write to
    for name in changed:
        files.write_atomic(target / name, (PLUGIN_SOURCE / name).read_bytes(), mode=0o644)
    return [f"{'added' if fresh else 'updated'} the lintaid plugin in {target}"]


def _remove_plugin() -> list[str]:
    target = plugin_dir()
    if not target.is_dir():
        return []
    for name in PLUGIN_FILES:
        try:
            (target / name).unlink()
        except FileNotFoundError:
            pass
    try:
        target.rmdir()
    except OSError:
        return [f"removed the lintaid plugin's files from {target} (other files left there)"]
    return [f"removed the lintaid plugin from {target}"]


def doctor(root: Path) -> list[Check]:
    """The plugin's files are the shipped ones and enabled, its hook command runs, the MCP
    server answers."""
    path = config_path()
    try:
        data = load_json(path)
    except ConfigError:
        return []
    plugins = data.get("plugins")
    entries = plugins.get("entries") if isinstance(plugins, dict) else None
    entry = entries.get(PLUGIN_ID) if isinstance(entries, dict) else None
    if not isinstance(entry, dict):
        return []
    config: dict[str, Any] = entry["config"] if isinstance(entry.get("config"), dict) else {}
    pinned = config.get("project")
    scope: Scope = "project" if pinned else "user"
    checks: list[Check] = []
    stale = [name for name in PLUGIN_FILES
             if not (plugin_dir() / name).is_file()
             or not filecmp.cmp(PLUGIN_SOURCE / name, plugin_dir() / name, shallow=False)]
    fix = "lintaid install openclaw" + (" --user" if scope == "user" else "")
    checks.append(Check("openclaw plugin", not stale and entry.get("enabled") is not False,
                        f"{plugin_dir()}: " + (f"missing or changed: {', '.join(stale)}" if stale
                                               else "the shipped files")
                        + ("; disabled in " + str(path) if entry.get("enabled") is False
                           else ""),
                        fix if stale or entry.get("enabled") is False else ""))
    if pinned and os.path.realpath(str(pinned)) != os.path.realpath(str(root)):
        checks.append(Check("openclaw project", True, f"the plugin is pinned to {pinned}, "
                            "not this project", "lintaid install openclaw --user (each run "
                            "then uses its own workspace)", warn=True))
    command = config.get("hookCommand")
    hook = [*command, "openclaw", "agent_end"] if isinstance(command, list) else []
    mcp = data.get("mcp")
    servers = mcp.get("servers") if isinstance(mcp, dict) else None
    reg = Registration("openclaw", "OpenClaw", scope, path, {"agent_end": hook}, path,
                       our_mcp_entry(servers))
    return checks + run_all([reg], root)
