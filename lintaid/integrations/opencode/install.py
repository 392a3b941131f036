"""Install and uninstall the OpenCode integration: lintaid's plugin, written into OpenCode's
plugin folder (``<project>/.opencode/plugins/`` or the user's
``$XDG_CONFIG_HOME/opencode/plugins/``, both loaded without a config entry), and the MCP
server in ``opencode.json`` beside it (``mcp.lintaid``, a local server).

The plugin is the shipped ``plugin/lintaid.js`` with its ``SETTINGS`` line filled in: how to
start the hook shim and, for a project install, the project. Uninstall removes the file when
it is lintaid's and the folders it leaves empty. ``opencode.json`` may be JSONC: lintaid edits
plain JSON only and refuses anything else, naming the line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final

from lintaid import files

from ..base import Check, Commands, InstallReport, Scope
from ..checks import Registration, run_all
from ..config_files import ConfigError, load_json, read_text, save_json, save_or_remove
from ..hook_entries import MCP_SERVER_NAME, merge_mcp, object_at, our_mcp_entry

CLIENT: Final = "opencode"
PLUGIN_NAME: Final = "lintaid.js"
TEMPLATE: Final = Path(__file__).resolve().parent / "plugin" / PLUGIN_NAME
SETTINGS_PREFIX: Final = "const SETTINGS = "
MARKER: Final = "// lintaid for OpenCode:"
TIMEOUT_MS: Final = 10_000


def config_dir(scope: Scope, root: Path | None = None) -> Path:
    if scope == "project" and root is not None:
        return Path(root) / ".opencode"
    if scope == "user":
        base = os.environ.get("XDG_CONFIG_HOME")
        return (Path(base).expanduser() if base else Path.home() / ".config") / "opencode"
    raise ConfigError(f"unknown scope {scope!r}: expected 'project' or 'user'")


def config_path(root: Path, scope: Scope) -> Path:
    """``<project>/opencode.json`` or the user's ``opencode.json``."""
    return Path(root) / "opencode.json" if scope == "project" else config_dir("user") / \
        "opencode.json"


def plugin_path(root: Path, scope: Scope) -> Path:
    return config_dir(scope, root) / "plugins" / PLUGIN_NAME


def render(root: Path, scope: Scope, commands: Commands) -> str:
    """The plugin as installed: the template with its settings."""
    settings = {"hookCommand": list(commands.hook),
                "project": str(root) if scope == "project" else None, "timeoutMs": TIMEOUT_MS}
    lines = TEMPLATE.read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(f"{SETTINGS_PREFIX}{json.dumps(settings)};\n"
                   if line.startswith(SETTINGS_PREFIX) else line for line in lines)


def plugin_settings(path: Path) -> dict[str, Any] | None:
    """The settings of lintaid's plugin at ``path``; None when the file is not lintaid's."""
    try:
        text = read_text(path)
    except ConfigError:
        return None
    if text is None or not text.startswith(MARKER):
        return None
    for line in text.splitlines():
        if line.startswith(SETTINGS_PREFIX):
            try:
                settings = json.loads(line[len(SETTINGS_PREFIX):].rstrip().rstrip(";"))
            except ValueError:
                return None
            return settings if isinstance(settings, dict) else None
    return None


def mcp_server(root: Path, scope: Scope, commands: Commands) -> dict[str, Any]:
    extra = ["--project", str(root)] if scope == "project" else []
    return {"type": "local", "command": [*commands.mcp, *extra], "enabled": True}


def install(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = config_path(root, scope)
    data = load_json(path)  # refuse a broken (or JSONC) opencode.json before writing anything
    plugin = plugin_path(root, scope)
    if plugin.exists() and plugin_settings(plugin) is None:
        raise ConfigError(f"{plugin} is not lintaid's plugin; move it away first")
    wanted = render(root, scope, commands)
    if read_text(plugin) != wanted:
        verb = "updated" if plugin.exists() else "added"
        plugin.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(plugin, wanted, mode=0o644)
        report.changes.append(f"{verb} the lintaid plugin {plugin}")
    servers = object_at(data, "mcp", path)
    pristine = MCP_SERVER_NAME not in servers
    change = merge_mcp(servers, mcp_server(root, scope, commands))
    if change:
        save_json(path, data, pristine=pristine)
        report.changes.append(f"{change} MCP server '{MCP_SERVER_NAME}' in {path}")
    if report.changes:
        report.next_steps.append("restart OpenCode so it loads the plugin and the MCP server")
    return report


def uninstall(root: Path, scope: Scope, commands: Commands) -> InstallReport:
    report = InstallReport()
    path = config_path(root, scope)
    if path.exists():
        data = load_json(path)
        servers = data.get("mcp")
        if isinstance(servers, dict) and MCP_SERVER_NAME in servers:
            del servers[MCP_SERVER_NAME]
            if not servers:
                del data["mcp"]
            save_or_remove(path, data)
            report.changes.append(f"removed MCP server '{MCP_SERVER_NAME}' from {path}")
    plugin = plugin_path(root, scope)
    if plugin_settings(plugin) is not None:
        plugin.unlink()
        report.changes.append(f"removed the lintaid plugin {plugin}")
        for folder in (plugin.parent, plugin.parent.parent):
            try:
                folder.rmdir()  # only when lintaid's file was all it held
            except OSError:
                break
    return report


def installed(root: Path) -> list[str]:
    scopes: tuple[Scope, ...] = ("project", "user")
    return [str(p) for p in (plugin_path(root, s) for s in scopes)
            if plugin_settings(p) is not None]


def doctor(root: Path) -> list[Check]:
    """Each scope whose plugin is lintaid's: the hook command it runs, the MCP server."""
    regs = []
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        plugin = plugin_path(root, scope)
        settings = plugin_settings(plugin)
        if settings is None:
            continue
        command = settings.get("hookCommand")
        hook = [*map(str, command), CLIENT, "session.idle"] if isinstance(command, list) else []
        path = config_path(root, scope)
        try:
            servers = load_json(path).get("mcp")
        except ConfigError:
            servers = None
        entry = our_mcp_entry(servers)
        words = entry.get("command") if entry else None
        mcp = {"command": words[0], "args": words[1:]} \
            if isinstance(words, list) and words else None
        regs.append(Registration(CLIENT, "OpenCode", scope, plugin, {"session.idle": hook},
                                 path, mcp))
    return run_all(regs, root)
