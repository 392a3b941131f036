"""``lintaid doctor``: is everything lintaid needs in order, and if not, how to fix it.

The generic checks live here: the daemon and its version, the privacy of ``.lint-ai/`` and
of the socket, the indexes, the spool, the disk, the watcher, a pause. Each agent client
checks its own hooks and MCP registration behind the seam (``AgentClient.doctor``). Nothing
here changes anything, and nothing starts a daemon.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from lintaid_client import connection, paths, protocol
from lintaid_client import spool as spool_files

from . import __version__
from .integrations import registry
from .integrations.base import Check
from .integrations.checks import without_running

SPOOL_FULL: Final = 100  # events waiting: something keeps the daemon from draining
SPOOL_STUCK_S: Final = 600.0  # an event this old was not drained
DISK_MIN_FREE: Final = 200 * 2**20
DISK_MIN_FRACTION: Final = 0.02
SHOWN: Final = 5  # offending files named in a detail


def run(root: Path) -> list[Check]:
    """Every check, generic ones first, then each agent client's."""
    status = _daemon_status(root)
    checks = [_daemon(root, status), _files(root), _socket(root, status),
              *_memory_db(root, status), *_indexes(status), *_spool(root, status),
              _disk(root), *_watcher(status), *_pause(status), *_team(root, status)]
    return checks + _clients(root)


def registrations(root: Path) -> list[Check]:
    """What is wrong with the agent clients' registrations, found without running a hook or
    an MCP server (entries, programs, scripts, the launcher's lintaid): the daemon asks at
    start, so ``lintaid status`` can say when hooks point at something missing."""
    with without_running():
        return [check for check in _clients(root) if not check.ok]


def _clients(root: Path) -> list[Check]:
    checks: list[Check] = []
    for name, client in registry.CLIENTS.items():
        try:
            checks.extend(client.doctor(root))
        except Exception as err:  # a bug in one client's checks must not hide the rest
            checks.append(Check(f"{name} checks", False, f"could not run: "
                                f"{type(err).__name__}: {err}", "report this as a bug"))
    return checks


def to_dict(root: Path, checks: Iterable[Check]) -> dict[str, Any]:
    found = list(checks)
    problems = sum(not c.ok for c in found)
    return {"root": str(root), "ok": problems == 0, "problems": problems,
            "checks": [asdict(c) for c in found]}


# -- the daemon ----------------------------------------------------------------------------------
def _daemon_status(root: Path) -> dict[str, Any] | None:
    """The daemon's own status, or None when it does not answer."""
    with connection.Connection(root) as conn:
        try:
            data = conn.call("status", timeout=3.0)
        except protocol.LintaidError:
            return None
    return data if isinstance(data, dict) else None


def _pid_running(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError):
        return False
    return True


def _daemon(root: Path, status: dict[str, Any] | None) -> Check:
    restart = f"lintaid stop --project {root} && lintaid start --project {root}"
    if status is not None:
        versions = status.get("versions") or {}
        running = (versions.get("lintaid"), versions.get("protocol"))
        if running != (__version__, protocol.VERSION):
            return Check("daemon", False, f"pid {status.get('pid')} runs lintaid {running[0]} "
                         f"(protocol {running[1]}); this install is {__version__} (protocol "
                         f"{protocol.VERSION})", f"restart it on this version: {restart}")
        return Check("daemon", True, f"running, pid {status.get('pid')}, lintaid "
                     f"{__version__}, protocol {protocol.VERSION}")
    held = connection.read_status(root)
    if held is not None and _pid_running(held.get("pid")):
        return Check("daemon", False, f"pid {held.get('pid')} holds {paths.status_path(root)} "
                     "but does not answer", f"{restart} (stop escalates to SIGTERM and "
                     "SIGKILL); `lintaid logs` may say why it hangs")
    try:
        failure = paths.start_error_path(root).read_text(errors="replace").strip()
    except OSError:
        failure = ""
    if failure:
        last = failure.splitlines()[-1].removeprefix("lintaid: ")
        return Check("daemon", False, f"not running; its last start failed: {last}",
                     f"fix that, then: lintaid start --project {root}")
    if held is not None:
        return Check("daemon", True, "not running; it stopped without removing its status "
                     "file (a crash?); hooks and commands start it when needed",
                     "`lintaid logs` shows its last lines", warn=True)
    return Check("daemon", True, "not running; hooks and commands start it when needed")


# -- privacy -------------------------------------------------------------------------------------
def _loose(st: os.stat_result) -> bool:
    return bool(st.st_mode & 0o077) or st.st_uid != os.getuid()


def _describe(path: Path, st: os.stat_result) -> str:
    owner = "" if st.st_uid == os.getuid() else f", owner uid {st.st_uid}"
    return f"{path} ({stat.filemode(st.st_mode)}{owner})"


def _files(root: Path) -> Check:
    """``.lint-ai/`` 0700 and everything in it private to this user."""
    state = paths.state_dir(root)
    fix = f"chmod -R go-rwx {state}"
    try:
        top = state.lstat()
    except FileNotFoundError:
        return Check("files", True, f"{state} does not exist yet")
    except OSError as err:
        return Check("files", False, f"{state}: {err.strerror}", fix)
    loose = [_describe(state, top)] if _loose(top) or not stat.S_ISDIR(top.st_mode) else []
    seen = 1
    for folder, dirs, files in os.walk(state):
        for name in (*dirs, *files):
            path = Path(folder) / name
            try:
                st = path.lstat()
            except OSError:
                continue  # gone meanwhile (a spool file drained)
            seen += 1
            if stat.S_ISLNK(st.st_mode):
                continue
            if _loose(st):
                loose.append(_describe(path, st))
    if loose:
        if any("owner uid" in item for item in loose):
            fix = f"chown -R {os.getuid()} {state} && {fix}"
        more = f" and {len(loose) - SHOWN} more" if len(loose) > SHOWN else ""
        return Check("files", False, "others can read or write: "
                     + ", ".join(loose[:SHOWN]) + more, fix)
    return Check("files", True, f"{seen} entries under {state}, private (0700 folders, "
                 "0600 files)")


def _socket(root: Path, status: dict[str, Any] | None) -> Check:
    held = status or connection.read_status(root)
    endpoint = str((held or {}).get("endpoint") or "")
    if not endpoint.startswith("ipc://"):
        return Check("socket", True, "no socket: the daemon is not running")
    path = Path(endpoint.removeprefix("ipc://"))
    problems = []
    try:
        st = path.lstat()
        if not stat.S_ISSOCK(st.st_mode):
            problems.append(f"{path} is not a socket")
        elif _loose(st):
            problems.append(f"{_describe(path, st)}: others may connect")
    except FileNotFoundError:
        problems.append(f"{path} is missing, though the daemon runs")
    except OSError as err:
        problems.append(f"{path}: {err.strerror}")
    try:
        folder = path.parent.lstat()
        if _loose(folder) or not stat.S_ISDIR(folder.st_mode):
            problems.append(f"{_describe(path.parent, folder)}: the folder must be 0700 "
                            "and this user's")
    except OSError as err:
        problems.append(f"{path.parent}: {err.strerror}")
    if problems:
        return Check("socket", False, "; ".join(problems),
                     f"chmod 700 {path.parent} && chmod 600 {path}, or restart the daemon "
                     f"(lintaid stop && lintaid start), which makes both private again")
    return Check("socket", True, f"{path}, 0600 in a 0700 folder")


# -- data ----------------------------------------------------------------------------------------
def _memory_db(root: Path, status: dict[str, Any] | None) -> list[Check]:
    """What the daemon would refuse at its next start, looked at while it is down: a damaged
    memory.db (the daemon checks it itself when it runs), and what killed backups left."""
    from .store import backup, integrity

    out = []
    db = paths.memory_db_path(root)
    if status is None:
        damage = integrity.check_closed(db)
        if damage is not None:
            out.append(Check("memory.db", False, f"{db} is damaged ({damage}): the daemon "
                             "will not start on it", f"lintaid recover --project {root}"))
        elif db.exists():
            out.append(Check("memory.db", True, "whole (quick_check, read only)"))
            # what the last start found lost with the WAL, as it keeps it in memory.db
            out += _missing_acknowledged(integrity.missing_closed(db))
    else:
        found = status.get("integrity") or {}
        out.append(Check("memory.db", True, f"checked at start: {found.get('memory', '?')}"))
        out += _missing_acknowledged(found.get("missing_acknowledged"))
    left = backup.leftovers(root)
    if left:
        size = sum(p.stat().st_size for p in left if p.exists())
        out.append(Check("backups", True, f"{len(left)} temporary file(s) of unfinished "
                         f"backups ({size / 2**20:.1f} MiB) in {backup.backup_dir(root)}",
                         "the daemon removes them at its next start (lintaid stop && lintaid "
                         "start)", warn=True))
    return out


def _missing_acknowledged(missing: dict[str, Any] | None) -> list[Check]:
    """The report of acknowledged writes a start found missing from memory.db (its WAL
    damaged or deleted) and what it wrote back from the index, the same whether the daemon
    runs or not: a warning when every one came back, a problem when some did not."""
    if not missing:
        return []
    try:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(missing["newest_at"])))
    except (KeyError, TypeError, ValueError, OverflowError, OSError):
        when = "?"
    found = (f"{missing.get('count', '?')} acknowledged write(s), the newest at {when}, were "
             "missing from memory.db: its WAL was damaged or deleted")
    recovered = missing.get("recovered")
    unrecovered = missing.get("unrecovered")
    if not isinstance(recovered, dict) or not isinstance(unrecovered, int):  # an older report
        return [Check("acknowledged writes", False, found + "; ids in the log "
                      "(acknowledged_writes_missing)", _READD)]
    back = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in recovered.items() if n)
    if unrecovered:
        return [Check("acknowledged writes", False,
                      f"{found}; written back from the index: {back or 'none'}; "
                      f"{unrecovered} not (the index kept no copy): ids in the log "
                      "(acknowledged_writes_missing)", _READD)]
    return [Check("acknowledged writes", True,
                  f"{found}; all written back from the index ({back}); forget reasons, "
                  "review decisions and confirmations made since the last checkpoint are "
                  "not in it", "nothing to do; this report is shown for a week", warn=True)]


_READD = ("add them again from where they came (a backup taken after them, a teammate's "
          "store, the agent's transcript); this report is shown for a week")


def _indexes(status: dict[str, Any] | None) -> list[Check]:
    """The derived indexes, as the daemon found them: it opens and checks each one when it
    starts and rebuilds what is missing, damaged or outdated from the databases. The doctor
    never opens an index itself (only the daemon's store touches one)."""
    if status is None:
        return [Check("indexes", True, "not checked while the daemon is down; at its next start "
                      "it checks each index and rebuilds a damaged or outdated one from the "
                      "databases (nothing is lost)")]
    found = status.get("indexes") or {}
    out = []
    memory = found.get("memory")
    if memory is not None:
        detail = (f"{memory['users']} user index{'es' if memory['users'] != 1 else ''}, "
                  f"{(status.get('memory') or {}).get('pending_index', 0)} records waiting "
                  "to be indexed")
        if memory.get("rebuilt_at_start") or memory.get("recreated_users"):
            detail += ("; built at this start from memory.db (it was new, missing, damaged or "
                       "outdated)")
        out.append(Check("memory index", True, detail))
    workspace = found.get("workspace")
    if workspace is not None:
        out.append(Check("workspace index", True, "built at this start from the project's "
                         "files" if workspace.get("rebuilt_at_start") else "in use"))
    return out


def _spooled_at(path: Path) -> float:
    """When a spool file was written: its name starts with the time in nanoseconds."""
    try:
        return int(path.name.split("-", 1)[0]) / 1e9
    except ValueError:
        try:
            return path.stat().st_mtime
        except OSError:
            return time.time()


def _spool(root: Path, status: dict[str, Any] | None) -> list[Check]:
    pending = spool_files.pending(root)
    out = []
    age = time.time() - min(map(_spooled_at, pending)) if pending else 0.0
    detail = f"{len(pending)} events waiting" + (f", the oldest {age:.0f}s old" if pending
                                                   else "")
    if len(pending) >= SPOOL_FULL or age > SPOOL_STUCK_S:
        fix = ("the daemon runs but does not drain them: `lintaid logs` (spool_retry_later) "
               "says why; a full disk or a read-only .lint-ai/ stops it"
               if status is not None else
               f"start the daemon, which drains them: lintaid start --project {root}"
               " (`lintaid logs` says why it stopped)")
        out.append(Check("spool", False, f"{paths.spool_dir(root)}: {detail}", fix))
    else:
        out.append(Check("spool", True, detail))
    for folder in spool_files.folders(root):
        rejected = sorted(folder.glob("rejected/*.reason"))
        if rejected:
            out.append(Check("rejected events", False,
                             f"{len(rejected)} events the daemon refused are kept in "
                             f"{folder / 'rejected'}",
                             "read the .reason beside each, then delete the files"))
    return out


def _disk(root: Path) -> Check:
    state = paths.state_dir(root)
    where = state if state.exists() else root
    try:
        usage = shutil.disk_usage(where)
    except OSError as err:
        return Check("disk", False, f"{where}: {err.strerror}", "")
    free = f"{usage.free / 2**30:.1f} GiB free of {usage.total / 2**30:.1f} GiB"
    if usage.free < DISK_MIN_FREE or usage.free < usage.total * DISK_MIN_FRACTION:
        return Check("disk", False, f"{free} on the file system of {where}: captures wait "
                     "in the spool when the disk is full", "free some space there")
    return Check("disk", True, free)


# -- what the daemon says -------------------------------------------------------------------------
def _watcher(status: dict[str, Any] | None) -> list[Check]:
    if status is None:
        return []
    ws = status.get("workspace")
    if not ws:
        return [Check("watcher", True, "off: project files are not indexed (LINTAID_NO_WATCH=1,"
                      " or it could not start: see `lintaid logs`)",
                      "start the daemon without LINTAID_NO_WATCH=1 for file memory",
                      warn=True)]
    mode = ws.get("watcher_mode")
    if ws.get("error") or ws.get("watcher_alive") is False:
        return [Check("watcher", False, f"{mode}: {ws.get('error') or 'its observer stopped'}",
                      "restart the daemon; `lintaid logs` says what failed")]
    if mode == "polling":
        return [Check("watcher", True, "polling (more CPU than inotify): the inotify watch "
                      "limit was reached, or LINTAID_WATCHER=polling", "raise the limit: "
                      "sudo sysctl fs.inotify.max_user_watches=524288, then restart the "
                      "daemon", warn=True)]
    return [Check("watcher", True, f"{mode}, {ws.get('files', 0)} files indexed")]


def _team(root: Path, status: dict[str, Any] | None) -> list[Check]:
    """The team tier, when the project joined one (as the running daemon reports it)."""
    from .team import config as team_config
    from .team.report import check

    team = (status or {}).get("team")
    if team:
        ok, warn, detail, fix = check(team)
        return [Check("team", ok, detail, fix, warn=warn)]
    if status is None and team_config.path(root).exists():
        return [Check("team", True, "joined a team; the daemon is not running, so nothing is "
                      "pushed or pulled", "any lintaid command starts it", warn=True)]
    return []


def _pause(status: dict[str, Any] | None) -> list[Check]:
    pause = (status or {}).get("pause") or {}
    what = []
    if pause.get("all"):
        until = pause["all"].get("until")
        what.append("everything " + ("until resumed" if until is None else
                                     time.strftime("until %Y-%m-%d %H:%M",
                                                   time.localtime(until))))
    if pause.get("sessions"):
        what.append(f"{len(pause['sessions'])} sessions")
    if not what:
        return []
    return [Check("pause", True, "capture and injection paused: " + ", ".join(what),
                  "lintaid resume", warn=True)]
