"""Run a project's daemon under the user's service manager: systemd (Linux) or launchd
(macOS).

``plan`` renders the file (the shipped template with the real interpreter and project
filled in) and the commands that enable it; ``install``, ``uninstall`` and ``status`` carry
a plan out. Where the manager's tool is absent, or answers with an error, the step is refused
in one line (``ServiceError``) before anything is written.
"""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lintaid_client import paths

from .files import write_atomic

TEMPLATES: Final = Path(__file__).resolve().parent / "templates"
UNIT_TEMPLATE: Final = "lintaid@.service"
PLIST_TEMPLATE: Final = "dev.lintaid.plist"
LABEL_PREFIX: Final = "dev.lintaid."
MANAGERS: Final = ("systemd", "launchd")
UNIT_NAME_MAX: Final = 255
COMMAND_TIMEOUT_S: Final = 60.0


class ServiceError(Exception):
    """A step that cannot be taken here; the message says why in one line."""


@dataclass
class Plan:
    """What installing the service for one project means on one manager."""

    manager: str
    name: str  # the unit (lintaid@....service) or the label (dev.lintaid.<key>)
    path: Path  # where the file goes
    text: str  # the file, rendered
    tool: str  # systemctl | launchctl
    enable: list[list[str]] = field(default_factory=list)
    disable: list[list[str]] = field(default_factory=list)


def default_manager(platform: str = sys.platform) -> str:
    return "launchd" if platform == "darwin" else "systemd"


# -- systemd ---------------------------------------------------------------------------------
def escape_path(path: str | os.PathLike[str]) -> str:
    """``systemd-escape --path``: the path as a unit-name instance (``/home/a b`` ->
    ``home-a\\x20b``)."""
    text = os.path.normpath(os.fspath(path)).strip("/")
    if not text:
        return "-"
    out = []
    for i, byte in enumerate(text.encode("utf-8", "surrogateescape")):
        ch = chr(byte)
        if ch == "/":
            out.append("-")
        elif byte < 128 and (ch.isalnum() or ch in ":_.") and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.append(f"\\x{byte:02x}")
    return "".join(out)


def unit_name(root: Path) -> str:
    name = f"lintaid@{escape_path(root)}.service"
    if len(name) > UNIT_NAME_MAX:
        raise ServiceError(f"the project path is too long for a systemd unit name "
                           f"({len(name)} characters, at most {UNIT_NAME_MAX}): {root}")
    return name


def exec_word(word: str) -> str:
    """One word of a unit's ``ExecStart=``: ``%`` and ``$`` kept literal, quoted when it
    holds a space, a quote or a backslash."""
    text = word.replace("%", "%%").replace("$", "$$")
    if re.search(r"[\s\"'\\;]", text):
        text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def render_unit(python: str) -> str:
    """The unit template with the interpreter that runs lintaid."""
    template = (TEMPLATES / UNIT_TEMPLATE).read_text(encoding="utf-8")
    return template.replace("@PYTHON@", exec_word(python))


def systemd_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def _systemd_plan(root: Path, python: str) -> Plan:
    unit = unit_name(root)
    return Plan(
        manager="systemd", name=unit, path=systemd_dir() / UNIT_TEMPLATE,
        text=render_unit(python), tool="systemctl",
        enable=[["systemctl", "--user", "daemon-reload"],
                ["systemctl", "--user", "enable", "--now", unit]],
        disable=[["systemctl", "--user", "disable", "--now", unit]],
    )


# -- launchd ---------------------------------------------------------------------------------
def label(root: Path) -> str:
    return LABEL_PREFIX + paths.project_key(root)


def render_plist(root: Path, python: str) -> str:
    """The LaunchAgent for ``root``: the template's placeholders filled in, as plist XML."""
    values = {"@LABEL@": label(root), "@PYTHON@": python, "@PROJECT@": str(root),
              "@LOGS@": str(paths.log_dir(root))}

    def fill(node: Any) -> Any:
        if isinstance(node, str):
            for key, value in values.items():
                node = node.replace(key, value)
            return node
        if isinstance(node, list):
            return [fill(item) for item in node]
        if isinstance(node, dict):
            return {key: fill(value) for key, value in node.items()}
        return node

    template = plistlib.loads((TEMPLATES / PLIST_TEMPLATE).read_bytes())
    return plistlib.dumps(fill(template), sort_keys=False).decode("utf-8")


def _launchd_plan(root: Path, python: str) -> Plan:
    name = label(root)
    path = Path.home() / "Library" / "LaunchAgents" / f"{name}.plist"
    domain = f"gui/{os.getuid()}"
    return Plan(
        manager="launchd", name=name, path=path, text=render_plist(root, python),
        tool="launchctl",
        enable=[["launchctl", "enable", f"{domain}/{name}"],
                ["launchctl", "bootstrap", domain, str(path)]],
        disable=[["launchctl", "bootout", f"{domain}/{name}"]],
    )


def plan(root: Path, manager: str | None = None, python: str | None = None) -> Plan:
    """The service for ``root`` on ``manager`` (default: this system's), run by ``python``
    (default: this interpreter, by its absolute path, so no PATH or activation is needed)."""
    manager = manager or default_manager()
    python = python or sys.executable
    if not os.path.isabs(python):
        raise ServiceError(f"the interpreter must be an absolute path, not {python!r}")
    if manager == "systemd":
        return _systemd_plan(root, python)
    if manager == "launchd":
        return _launchd_plan(root, python)
    raise ServiceError(f"unknown service manager {manager!r}; known: {', '.join(MANAGERS)}")


# -- carrying a plan out -----------------------------------------------------------------------
def run(command: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run one manager command; ServiceError naming it and its last line when it fails."""
    try:
        proc = subprocess.run(command, capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise ServiceError(f"{command[0]} is not available here") from None
    except subprocess.TimeoutExpired:
        raise ServiceError(f"`{' '.join(command)}` did not finish within "
                           f"{COMMAND_TIMEOUT_S:.0f}s") from None
    if check and proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise ServiceError(f"`{' '.join(command)}` failed: "
                           f"{lines[-1] if lines else f'exit status {proc.returncode}'}")
    return proc


def require_manager(p: Plan) -> None:
    """Refuse, in one line, where the manager cannot be reached: its tool is missing, or
    (systemd) the user's manager does not answer."""
    if shutil.which(p.tool) is None:
        raise ServiceError(f"{p.tool} is not available here (no {p.manager}); nothing was "
                           f"changed. `lintaid service install --dry-run` shows the {p.manager} "
                           "files, and `lintaid start` runs the daemon without a service "
                           "manager")
    if p.manager == "systemd":
        proc = run(["systemctl", "--user", "show-environment"], check=False)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            raise ServiceError(f"systemd's user manager does not answer here "
                               f"({lines[-1] if lines else 'no reason given'}); nothing was "
                               "changed")


def active(p: Plan) -> bool:
    """Whether the manager runs the project's daemon now."""
    if p.manager == "systemd":
        return run(["systemctl", "--user", "is-active", "--quiet", p.name],
                   check=False).returncode == 0
    proc = run(["launchctl", "print", f"gui/{os.getuid()}/{p.name}"], check=False)
    return proc.returncode == 0 and "state = running" in proc.stdout


def write_file(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` atomically; False when it already held exactly that."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text, mode=0o644)
    return True


def install(root: Path, p: Plan, *, stop_running: Callable[[], str],
            say: Callable[[str], None]) -> None:
    """Write the file, stop a daemon the manager did not start, enable and start the
    service. ``stop_running`` stops the project's daemon (returns how, or "not-running")."""
    require_manager(p)
    if p.manager == "launchd":  # launchd opens the log files before the daemon runs
        paths.ensure_state_dir(root)
        paths.log_dir(root).mkdir(mode=0o700, exist_ok=True)
    verb = "wrote" if write_file(p.path, p.text) else "unchanged:"
    say(f"{verb} {p.path}")
    if not active(p):
        # One daemon per project: one started by a hook or `lintaid start` holds the lock.
        if stop_running() != "not-running":
            say("stopped the daemon that ran outside the service manager")
    if p.manager == "launchd":  # a loaded agent keeps its old file until booted out
        for command in p.disable:
            run(command, check=False)
    for command in p.enable:
        run(command)
        say(f"ran {' '.join(command)}")


def uninstall(p: Plan, *, say: Callable[[str], None]) -> None:
    """Stop and disable the project's service; remove the file when no other project's
    service still needs it (the systemd template is shared by every project)."""
    require_manager(p)
    for command in p.disable:
        proc = run(command, check=False)
        if proc.returncode == 0:
            say(f"ran {' '.join(command)}")
    if p.manager == "systemd" and _other_instances(p):
        say(f"kept {p.path}: other projects' services use it")
        return
    if p.path.exists():
        p.path.unlink()
        say(f"removed {p.path}")
    if p.manager == "systemd":
        run(["systemctl", "--user", "daemon-reload"])


def _other_instances(p: Plan) -> list[str]:
    """Other projects' enabled instances of the systemd template."""
    wants = p.path.parent / "default.target.wants"
    try:
        return [entry.name for entry in wants.iterdir()
                if entry.name.startswith("lintaid@") and entry.name != p.name]
    except OSError:
        return []


def status(p: Plan) -> dict[str, Any]:
    """What the manager says of the project's service: installed, enabled, active, pid."""
    info: dict[str, Any] = {"manager": p.manager, "name": p.name, "file": str(p.path),
                            "installed": p.path.exists()}
    require_manager(p)
    if p.manager == "systemd":
        enabled = run(["systemctl", "--user", "is-enabled", p.name], check=False)
        info["enabled"] = enabled.stdout.strip() or "unknown"
        shown = run(["systemctl", "--user", "show", p.name, "--property",
                     "ActiveState,SubState,MainPID,NRestarts"], check=False)
        for line in shown.stdout.splitlines():
            key, _, value = line.partition("=")
            info[key] = value
        info["active"] = info.get("ActiveState") == "active"
        info["logs"] = f"journalctl --user -u {p.name}"
    else:
        proc = run(["launchctl", "print", f"gui/{os.getuid()}/{p.name}"], check=False)
        info["loaded"] = proc.returncode == 0
        info["active"] = "state = running" in proc.stdout
        pid = re.search(r"^\s*pid = (\d+)", proc.stdout, re.M)
        info["pid"] = int(pid.group(1)) if pid else None
    return info
