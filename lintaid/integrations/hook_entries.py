"""Hook handlers and MCP server entries as agents' configuration files hold them.

Every client starts the same hook shim: ``<commands.hook...> <client> <Event>``. A handler is
recognised as lintaid's by its last two words (the client's name, then the event) following a
word that names the hook script, however lintaid was installed (a console script, an
interpreter running ``hook.py``, or one running the launcher), so a reinstall replaces it and
uninstall finds it.

``commands`` says what every installer registers: this interpreter running the launcher
(``hook_launcher``) that ``install_launcher`` keeps in lintaid's data folder, never a path
inside the installed package, so a reinstall, an upgrade or a switch between a wheel and an
editable install leaves every registered hook working.

Most clients group handlers under an event as ``{"matcher": ..., "hooks": [handler, ...]}``,
some list handlers directly; the helpers here merge lintaid's handler into either kind of list
and take it out again, touching nothing else.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from lintaid import files

from . import hook_launcher
from .base import Commands
from .config_files import ConfigError

LAUNCHER_NAME: Final = "lintaid-hook.py"
HOOK_SCRIPT_NAMES: Final = frozenset({"lintaid-hook", "hook.py", LAUNCHER_NAME})
MCP_SERVER_NAME: Final = "lintaid"
LOCATE_TIMEOUT_S: Final = 10.0

Owns = Callable[[Any], bool]


# --- what agents run --------------------------------------------------------------------------
def data_dir() -> Path:
    """lintaid's own data folder: ``$XDG_DATA_HOME/lintaid``, else ``~/.local/share/lintaid``."""
    base = os.environ.get("XDG_DATA_HOME")
    return (Path(base) if base and os.path.isabs(base)
            else Path.home() / ".local" / "share") / "lintaid"


def launcher_path(executable: str) -> Path:
    """Where the launcher for ``executable`` lives (one folder per interpreter path)."""
    key = hashlib.sha256(executable.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return data_dir() / "hooks" / key / LAUNCHER_NAME


def install_launcher(executable: str | None = None) -> Path:
    """Write (or renew) the launcher for ``executable`` (default: this interpreter) and
    record where that interpreter's lintaid is now; return the launcher's path."""
    executable = executable or sys.executable
    path = launcher_path(executable)
    for folder in (data_dir(), path.parent.parent, path.parent):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    source = Path(hook_launcher.__file__).read_bytes()
    try:
        current = path.read_bytes()
    except OSError:
        current = None
    if current != source:
        files.write_atomic(path, source)
    if hook_launcher.known(str(path.parent), executable) is None:
        try:  # the launcher asks again at its next run if this did not get an answer
            hook_launcher.locate(str(path.parent), executable, LOCATE_TIMEOUT_S)
        except hook_launcher.TooSlow:
            pass
    return path


def renew_launcher() -> Path | None:
    """The daemon at start: when this interpreter's launcher is installed, renew its file
    (a newer lintaid may ship a newer one) and where it finds lintaid; None when none is."""
    if not launcher_path(sys.executable).is_file():
        return None
    return install_launcher()


def commands(*, install: bool = True) -> Commands:
    """How agents must start lintaid's programs. The hook: this interpreter by absolute path
    (no PATH or virtual environment needed), without site (``-I -S``), running the launcher in
    lintaid's data folder (written when ``install``), which finds this interpreter's lintaid
    wherever it is installed now. The MCP shim: the same interpreter isolated from the
    environment and the working folder (``-I``), as a module of the installed package, found
    through site (it talks to the daemon with pyzmq and starts once per agent session, not
    once per event)."""
    launcher = install_launcher() if install else launcher_path(sys.executable)
    return Commands(hook=(sys.executable, "-I", "-S", str(launcher)),
                    mcp=(sys.executable, "-I", "-m", "lintaid_client.mcp"))


def launcher_problem(words: Sequence[str]) -> str | None:
    """Why a hook command that runs the launcher cannot reach lintaid: its interpreter has
    none installed (asked anew when lintaid moved since); None when it can, or when the
    command runs no launcher."""
    script = next((w for w in words[1:] if os.path.basename(w) == LAUNCHER_NAME), None)
    if script is None or not words:
        return None
    here, executable = os.path.dirname(script), words[0]
    try:
        folder = hook_launcher.known(here, executable) or hook_launcher.locate(
            here, executable, LOCATE_TIMEOUT_S)
    except hook_launcher.TooSlow as err:
        return f"its launcher could not tell where lintaid is: {err}"
    if folder and hook_launcher.found(here, executable):
        return None
    return f"its interpreter {executable} has no lintaid installed (the launcher finds none)"


def hook_command(commands: Commands, client: str, event: str,
                 root_keys: tuple[str, ...] = ()) -> str:
    """The shell command line that runs lintaid's hook shim for ``client`` and ``event``.

    ``root_keys``: payload fields that name the project folder (a path, or a list whose first
    entry is one), for clients whose payload has no ``cwd``; the shim reads them first.
    """
    options = [word for key in root_keys for word in ("--root-key", key)]
    return shlex.join([*commands.hook, *options, client, event])


def is_hook_command(command: Any, client: str) -> bool:
    """True for a command line that runs lintaid's hook shim for ``client``."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return (len(words) >= 3 and words[-2] == client
            and any(os.path.basename(w) in HOOK_SCRIPT_NAMES for w in words[:-2]))


def owned_by(client: str) -> Owns:
    """A predicate: this handler (a dict with ``command``) is lintaid's hook for ``client``."""
    return lambda handler: isinstance(handler, dict) and is_hook_command(
        handler.get("command"), client)


def mcp_entry(commands: Commands, *extra_args: str) -> dict[str, Any]:
    """``{"command": ..., "args": [...]}`` starting lintaid's MCP shim."""
    return {"command": commands.mcp[0], "args": [*commands.mcp[1:], *extra_args]}


def our_mcp_entry(servers: Any) -> dict[str, Any] | None:
    """lintaid's entry in a client's table of MCP servers, when both are what they should be
    (a table, holding a table under ``MCP_SERVER_NAME``); None otherwise."""
    entry = servers.get(MCP_SERVER_NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


def merge_mcp(servers: dict[str, Any], wanted: dict[str, Any]) -> str | None:
    """Put lintaid's server into ``servers``, keeping the developer's extra keys (env,
    timeout, ...); returns "added", "updated" or None when it was there already."""
    current = servers.get(MCP_SERVER_NAME)
    if isinstance(current, dict):
        merged = {**current, **wanted}
        if merged == current:
            return None
        servers[MCP_SERVER_NAME] = merged
        return "updated"
    servers[MCP_SERVER_NAME] = wanted
    return "added"


def object_at(data: dict[str, Any], key: str, path: Path, where: str = "") -> dict[str, Any]:
    """``data[key]`` as an object, created when missing; a ConfigError when it is not one."""
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: '{where}{key}' is not an object; not touching it")
    return value


# --- matcher groups ---------------------------------------------------------------------------
def strip_groups(groups: list[Any], owns: Owns) -> tuple[list[Any], int]:
    """The groups minus lintaid's handlers, dropping only groups that became empty."""
    kept: list[Any] = []
    removed = 0
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        handlers = [h for h in group["hooks"] if not owns(h)]
        dropped = len(group["hooks"]) - len(handlers)
        removed += dropped
        if not dropped:
            kept.append(group)
        elif handlers:
            kept.append({**group, "hooks": handlers})
    return kept, removed


def merge_group(hooks: dict[str, Any], event: str, handler: dict[str, Any],
                matcher: str | None, owns: Owns, path: Path) -> str | None:
    """Make lintaid's one handler for ``event`` exactly ``handler`` in its own group.

    Returns "added", "updated", or None when it was already so.
    """
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise ConfigError(f"{path}: hooks.{event} is not a list; not touching it")
    ours = [
        (group, h)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for h in group["hooks"]
        if owns(h)
    ]
    if len(ours) == 1:
        group, current = ours[0]
        if current == handler and group.get("matcher") == matcher and len(group["hooks"]) == 1:
            return None
    kept, _removed = strip_groups(groups, owns)
    group = {"matcher": matcher, "hooks": [handler]} if matcher is not None \
        else {"hooks": [handler]}
    hooks[event] = [*kept, group]
    return "updated" if ours else "added"


def strip_events(hooks: dict[str, Any], owns: Owns) -> list[str]:
    """Take lintaid's handlers out of every event (groups of handlers); returns the events
    changed. An event left with no group is dropped."""
    changed = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept, removed = strip_groups(groups, owns)
        if removed:
            changed.append(event)
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    return changed


def holds_ours(hooks: Any, owns: Owns) -> bool:
    """True when some event of ``hooks`` (groups of handlers) has one of lintaid's."""
    return isinstance(hooks, dict) and any(
        isinstance(groups, list) and strip_groups(groups, owns)[1]
        for groups in hooks.values())


# --- flat handler lists -----------------------------------------------------------------------
def merge_flat(hooks: dict[str, Any], event: str, handler: dict[str, Any], owns: Owns,
               path: Path) -> str | None:
    """Like ``merge_group`` for a client whose events list handlers directly."""
    handlers = hooks.get(event, [])
    if not isinstance(handlers, list):
        raise ConfigError(f"{path}: hooks.{event} is not a list; not touching it")
    ours = [h for h in handlers if owns(h)]
    if ours == [handler]:
        return None
    hooks[event] = [*(h for h in handlers if not owns(h)), handler]
    return "updated" if ours else "added"


def strip_flat(hooks: dict[str, Any], owns: Owns) -> list[str]:
    changed = []
    for event in list(hooks):
        handlers = hooks[event]
        if not isinstance(handlers, list):
            continue
        kept = [h for h in handlers if not owns(h)]
        if len(kept) != len(handlers):
            changed.append(event)
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    return changed

