"""Install and uninstall the Claude Code integration: hooks in settings.json, MCP in .mcp.json.

These files belong to the developer and hold other tools' settings, so the installer merges
rather than writes: it touches only handlers it recognises as its own, is idempotent, backs up
a file before changing it, writes atomically, and refuses to touch a file it cannot parse.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any, Final, Literal

Scope = Literal["project", "user"]

PROVIDER_ARG: Final = "claude-code"
MCP_SERVER_NAME: Final = "lintaid"
BACKUP_SUFFIX: Final = ".lintaid.bak"
DEFAULT_HOOK_COMMAND: Final = "lintaid-hook"

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
    raise ValueError(f"unknown scope {scope!r}: expected 'project' or 'user'")


def mcp_path(root: Path) -> Path:
    return Path(root) / ".mcp.json"


def install_claude_code(
    root: Path,
    scope: Scope,
    hook_command: str = DEFAULT_HOOK_COMMAND,
    mcp_command: str | None = "lintaid-mcp",
) -> list[str]:
    """Merge lintaid's hooks (and, for project scope, its MCP server) into Claude Code's files.

    Returns one message per change; an empty list means everything was already in place.
    """
    messages: list[str] = []
    path = settings_path(root, scope)
    settings = _load(path)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError(f"{path}: 'hooks' is not an object; not touching it")
    for event, matcher, timeout in HOOK_EVENTS:
        change = _install_event(hooks, event, matcher, timeout, hook_command, path)
        if change:
            messages.append(f"{change} {event} hook in {path}")
    if messages:
        _save(path, settings)

    if mcp_command and scope == "project":
        messages.extend(_install_mcp(mcp_path(root), mcp_command))
    return messages


def uninstall_claude_code(
    root: Path, scope: Scope, hook_command: str = DEFAULT_HOOK_COMMAND
) -> list[str]:
    """Remove exactly lintaid's hook handlers and MCP server entry; nothing else.

    Matcher groups, event keys and top-level keys left empty by the removal are dropped; a file
    left holding nothing at all is deleted (it was ours).
    """
    messages: list[str] = []
    path = settings_path(root, scope)
    if path.exists():
        settings = _load(path)
        hooks = settings.get("hooks")
        if isinstance(hooks, dict):
            for event in list(hooks):
                groups = hooks[event]
                if not isinstance(groups, list):
                    continue
                kept, removed = _without_ours(groups, hook_command)
                if removed:
                    messages.append(f"removed {event} hook from {path}")
                    if kept:
                        hooks[event] = kept
                    else:
                        del hooks[event]
            if messages and not hooks:
                del settings["hooks"]
        if messages:
            _save_or_remove(path, settings)

    if scope == "project":
        messages.extend(_uninstall_mcp(mcp_path(root)))
    return messages


# --- hook handlers ----------------------------------------------------------------------------


def is_our_command(command: Any, hook_command: str = DEFAULT_HOOK_COMMAND) -> bool:
    """True for ``<hook_command> claude-code <Event>``, also when installed from another path."""
    if not isinstance(command, str):
        return False
    if command.startswith(f"{hook_command} {PROVIDER_ARG} "):
        return True
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    names = {os.path.basename(hook_command), DEFAULT_HOOK_COMMAND}
    return len(words) >= 3 and os.path.basename(words[0]) in names and words[1] == PROVIDER_ARG


def _handler(event: str, timeout: int, hook_command: str) -> dict[str, Any]:
    return {
        "type": "command",
        "command": f"{hook_command} {PROVIDER_ARG} {event}",
        "timeout": timeout,
    }


def _install_event(
    hooks: dict[str, Any],
    event: str,
    matcher: str | None,
    timeout: int,
    hook_command: str,
    path: Path,
) -> str | None:
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise ValueError(f"{path}: hooks.{event} is not a list; not touching it")
    wanted = _handler(event, timeout, hook_command)
    ours = [
        (group, handler)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for handler in group["hooks"]
        if isinstance(handler, dict) and is_our_command(handler.get("command"), hook_command)
    ]
    if len(ours) == 1:
        group, handler = ours[0]
        if handler == wanted and group.get("matcher") == matcher and len(group["hooks"]) == 1:
            return None
    kept, _removed = _without_ours(groups, hook_command)
    group = {"matcher": matcher, "hooks": [wanted]} if matcher else {"hooks": [wanted]}
    hooks[event] = [*kept, group]
    return "updated" if ours else "added"


def _without_ours(
    groups: list[Any], hook_command: str
) -> tuple[list[Any], int]:
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
            if not (isinstance(h, dict) and is_our_command(h.get("command"), hook_command))
        ]
        dropped = len(group["hooks"]) - len(handlers)
        removed += dropped
        if not dropped:
            kept.append(group)
        elif handlers:
            kept.append({**group, "hooks": handlers})
    return kept, removed


# --- MCP server -------------------------------------------------------------------------------


def _install_mcp(path: Path, mcp_command: str) -> list[str]:
    config = _load(path)
    servers = config.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ValueError(f"{path}: 'mcpServers' is not an object; not touching it")
    current = servers.get(MCP_SERVER_NAME)
    wanted = {"type": "stdio", "command": mcp_command, "args": []}
    if isinstance(current, dict):
        merged = {**current, **wanted}  # keep the developer's extras (env, timeout)
        if merged == current:
            return []
        servers[MCP_SERVER_NAME] = merged
        verb = "updated"
    else:
        servers[MCP_SERVER_NAME] = wanted
        verb = "added"
    _save(path, config)
    return [f"{verb} MCP server '{MCP_SERVER_NAME}' in {path}"]


def _uninstall_mcp(path: Path) -> list[str]:
    if not path.exists():
        return []
    config = _load(path)
    servers = config.get("mcpServers")
    if not isinstance(servers, dict) or MCP_SERVER_NAME not in servers:
        return []
    del servers[MCP_SERVER_NAME]
    if not servers:
        del config["mcpServers"]
    _save_or_remove(path, config)
    return [f"removed MCP server '{MCP_SERVER_NAME}' from {path}"]


# --- files ------------------------------------------------------------------------------------


def _load(path: Path) -> dict[str, Any]:
    """Parse a JSON object file; a missing or blank file is ``{}``; anything else is refused."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc}); fix it, lintaid will not") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path} is not valid JSON ({exc}); fix or remove it first, "
            "lintaid will not overwrite it"
        ) from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object; lintaid will not overwrite it")
    return data


def _backup(path: Path) -> None:
    if path.exists():
        shutil.copy2(path, path.with_name(path.name + BACKUP_SUFFIX))


def _save(path: Path, data: dict[str, Any]) -> None:
    """Back up the old file, then write the new one atomically (temp file + ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _backup(path)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _save_or_remove(path: Path, data: dict[str, Any]) -> None:
    if data:
        _save(path, data)
    else:
        path.unlink()  # only our entries were left: nothing of the developer's to back up
