"""The operator CLI: thin click commands that parse, call the daemon, and print.

Heavy modules (the stores, tantivy, watchdog) are imported only by ``start --foreground``;
every other command talks to the daemon over the socket, starting it when needed.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from lintaid_client import connection, lock, paths, protocol

from . import __version__

EXIT_ERROR = 1
EXIT_UNAVAILABLE = 3


def project_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    @click.option("--project", "project", type=click.Path(file_okay=False, path_type=Path),
                  default=None, help="Project root (default: found from the working directory).")
    @functools.wraps(fn)
    def wrapper(*args: Any, project: Path | None, **kwargs: Any) -> Any:
        root = paths.find_project_root(project.resolve() if project else None)
        if project is not None:
            root = project.resolve()
        return fn(*args, root=root, **kwargs)

    return wrapper


def fail(message: str, code: int = EXIT_ERROR) -> None:
    click.echo(f"lintaid: {message}", err=True)
    sys.exit(code)


def call(root: Path, op: str, args: dict[str, Any] | None = None, *, timeout: float = 30.0,
         autostart: bool = True) -> Any:
    """One request to the project's daemon.

    When nobody answers (or the daemon speaks another protocol, then after stopping it), the
    daemon is started and the request sent once more.
    """
    autostart = autostart and os.environ.get("LINTAID_NO_AUTOSTART") != "1"
    for attempt in range(2):
        with connection.Connection(root) as conn:
            try:
                return conn.call(op, args, timeout=timeout)
            except protocol.ProtocolMismatch:
                if attempt:
                    raise
                click.echo("lintaid: daemon speaks another protocol; restarting it", err=True)
                stop_daemon(root)
            except protocol.DaemonUnavailable as err:
                if attempt or not autostart:
                    fail(f"{err} (start it with: lintaid start --project {root})",
                         EXIT_UNAVAILABLE)
            except protocol.DaemonTimeout as err:
                fail(str(err), EXIT_UNAVAILABLE)
            except protocol.RemoteError as err:
                fail(f"{err.code}: {err.message}")
        if autostart:  # nothing was sent on DaemonUnavailable, so sending again is safe
            try:
                connection.ensure_daemon(root)
            except protocol.DaemonUnavailable as err:
                fail(str(err), EXIT_UNAVAILABLE)
    raise AssertionError("unreachable")


@click.group()
@click.version_option(__version__, prog_name="lintaid")
def main() -> None:
    """lintaid: per-project memory for coding agents."""


# -- daemon life cycle -----------------------------------------------------------------------
@main.command()
@project_option
@click.option("--foreground", is_flag=True, help="Run in this process (for systemd/launchd).")
def start(root: Path, foreground: bool) -> None:
    """Start the project's daemon (detached unless --foreground)."""
    if foreground:
        paths.ensure_state_dir(root)
        try:
            fd = lock.acquire(paths.lock_path(root))
        except lock.AlreadyRunning as err:
            fail(str(err))
        try:
            from .daemon import Daemon

            daemon = Daemon(root)
            daemon.install_signal_handlers()
            code = daemon.run()
        finally:
            lock.release(fd)
        sys.exit(code)
    answer = connection.ping(root)
    if answer is not None:
        click.echo(f"lintaid daemon already running (pid {answer['pid']}) for {root}")
        return
    try:
        answer = connection.ensure_daemon(root)
    except protocol.DaemonUnavailable as err:
        fail(str(err), EXIT_UNAVAILABLE)
    click.echo(f"lintaid daemon started (pid {answer['pid']}) for {root}")


def _pid_alive(status: dict[str, Any]) -> bool:
    import psutil

    try:
        proc = psutil.Process(int(status["pid"]))
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return abs(proc.create_time() - float(status.get("create_time", 0))) < 1.0
    except (psutil.Error, KeyError, TypeError, ValueError):
        return False


def stop_daemon(root: Path, timeout: float = 10.0) -> str:
    """Stop the daemon: ask, then SIGTERM, then SIGKILL. Return the step that worked."""
    status = connection.read_status(root)
    with connection.Connection(root) as conn:
        try:
            conn.call("shutdown", timeout=2.0)
            asked = True
        except protocol.LintaidError:
            asked = False
    if status is None or not _pid_alive(status):
        return "shutdown" if asked else "not-running"
    pid = int(status["pid"])
    for step, sig in (("shutdown", None), ("sigterm", signal.SIGTERM), ("sigkill", signal.SIGKILL)):
        if sig is not None:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return step
        deadline = time.monotonic() + timeout / 2
        while time.monotonic() < deadline:
            if not _pid_alive(status):
                return step
            time.sleep(0.05)
    return "sigkill"


@main.command()
@project_option
def stop(root: Path) -> None:
    """Stop the project's daemon."""
    step = stop_daemon(root)
    if step == "not-running":
        click.echo("lintaid daemon is not running")
    else:
        click.echo(f"lintaid daemon stopped ({step})")


@main.command()
@project_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(root: Path, as_json: bool) -> None:
    """Show whether the daemon runs, and what it holds."""
    with connection.Connection(root) as conn:
        try:
            data = conn.call("status", timeout=3.0)
        except protocol.LintaidError:
            data = None
    if data is None:
        stale = connection.read_status(root)
        info = {"running": False, "root": str(root),
                "stale_status_file": bool(stale and not _pid_alive(stale))}
        if as_json:
            click.echo(json.dumps(info))
        else:
            click.echo(f"lintaid daemon: not running ({root})")
        sys.exit(EXIT_UNAVAILABLE)
    data["running"] = True
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    mem = data["memory"]
    lines = [
        f"lintaid daemon: running, pid {data['pid']}, up {_duration(data['uptime_s'])}",
        f"  project   {data['root']}",
        f"  endpoint  {data['endpoint']}",
        f"  memory    {mem['records']} records ({mem['superseded']} superseded, "
        f"{mem['conflicted']} conflicted, {mem['expired']} expired, {mem['forgotten']} forgotten),"
        f" {mem['claims']} claims",
        f"  queues    writer {data['writer_queue']}, spool {data['spool_depth']},"
        f" index pending {mem['pending_index']}",
        f"  process   RSS {data['rss_bytes'] / 2**20:.1f} MiB, {data['threads']} threads,"
        f" {data['requests']} requests served",
    ]
    ws = data.get("workspace")
    if ws:
        lines.append(
            f"  workspace {ws.get('files', 0)} files, {ws.get('chunks', 0)} chunks, watcher "
            f"{ws.get('watcher_mode', '?')}, queue {ws.get('queue_depth', 0)}, last event "
            f"{_ago(ws.get('last_event_at'))}"
        )
    v = data["versions"]
    lines.append(f"  versions  lintaid {v['lintaid']}, protocol {v['protocol']}, "
                 f"python {v['python']}, pyzmq {v['pyzmq']}, tantivy {v['tantivy']}")
    click.echo("\n".join(lines))


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"


def _ago(when: float | None) -> str:
    return "never" if not when else f"{_duration(time.time() - when)} ago"


@main.command()
@project_option
@click.option("-f", "--follow", is_flag=True, help="Keep printing new lines.")
@click.option("-n", "--lines", default=50, show_default=True, help="How many lines to show.")
def logs(root: Path, follow: bool, lines: int) -> None:
    """Print the daemon's log (JSON lines)."""
    path = paths.log_path(root)
    if not path.exists():
        fail(f"no log yet at {path}")
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for line in fh.readlines()[-lines:]:
            click.echo(line.rstrip("\n"))
        while follow:
            line = fh.readline()
            if line:
                click.echo(line.rstrip("\n"))
            else:
                time.sleep(0.25)


# -- memory ----------------------------------------------------------------------------------
def _user_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--user", "user_id", default=None,
                        help="User id (default: the local user).")(fn)


def _short(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 3] + "..."


@main.command()
@project_option
@click.argument("query")
@click.option("--top-k", "-k", default=5, show_default=True, type=click.IntRange(1, 100))
@click.option("--history", is_flag=True, help="Include superseded records, marked historical.")
@click.option("--store", type=click.Choice(["memory", "workspace", "all"]), default="all",
              show_default=True)
@click.option("--as-of", type=float, default=None, help="What was believed at this epoch time.")
@_user_option
@click.option("--json", "as_json", is_flag=True)
def search(root: Path, query: str, top_k: int, history: bool, store: str, as_of: float | None,
           user_id: str | None, as_json: bool) -> None:
    """Search memory and the workspace; superseded records are hidden unless --history."""
    args: dict[str, Any] = {"query": query, "top_k": top_k, "history": history, "store": store,
                            "user_id": user_id}
    if as_of is not None:
        args["as_of"] = as_of
    result = call(root, "search", args)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    if not result["results"]:
        click.echo("no results" + (f" ({result['hidden']} hidden)" if result["hidden"] else ""))
        return
    for hit in result["results"]:
        where = hit.get("path") or hit.get("source")
        if hit.get("store") == "workspace":
            where = f"{hit['path']}:{hit.get('start_line')}-{hit.get('end_line')}"
        click.echo(f"{hit['id']}  {hit['status']:<10} {hit['score']:6.2f}  {where}")
        click.echo(f"    {_short(hit['content'])}")
        if hit.get("superseded_by"):
            click.echo(f"    superseded by {hit['superseded_by']}")
        for path in hit.get("changed_files") or []:
            click.echo(f"    file changed since capture: {path}")
    if result["hidden"]:
        click.echo(f"({result['hidden']} hidden: superseded or expired; use --history)")


@main.command()
@project_option
@click.argument("text")
@click.option("--supersedes", default=None, help="Id of the memory this one replaces.")
@click.option("--expires-at", type=float, default=None, help="Epoch seconds it stops being true.")
@_user_option
@click.option("--json", "as_json", is_flag=True)
def add(root: Path, text: str, supersedes: str | None, expires_at: float | None,
        user_id: str | None, as_json: bool) -> None:
    """Add a memory."""
    result = call(root, "add", {"content": text, "supersedes": supersedes, "source": "cli",
                                "actor": "cli", "expires_at": expires_at, "user_id": user_id})
    click.echo(json.dumps({"id": result["id"], "event": result["event"]}) if as_json
               else f"{result['event'].lower()}: {result['id']}")


@main.command()
@project_option
@click.argument("memory_id")
@_user_option
@click.option("--json", "as_json", is_flag=True)
def get(root: Path, memory_id: str, user_id: str | None, as_json: bool) -> None:
    """Show one memory with its status, claims and provenance."""
    hit = call(root, "get", {"id": memory_id, "user_id": user_id})
    if as_json:
        click.echo(json.dumps(hit, indent=2))
        return
    click.echo(f"{hit['id']}  {hit['status']}  {hit['source']}")
    click.echo(f"captured {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(hit['created_at']))}"
               f"  branch {hit.get('branch') or '-'}  revision {(hit.get('revision') or '-')[:12]}")
    click.echo(hit["content"])
    for claim in hit.get("claims", []):
        click.echo(f"  claim [{claim['status']}] {claim['subject']} {claim['predicate']} "
                   f"{claim['value']}")


@main.command()
@project_option
@click.argument("memory_id")
@click.option("--reason", default=None)
@_user_option
def forget(root: Path, memory_id: str, reason: str | None, user_id: str | None) -> None:
    """Forget a memory: hidden everywhere, and the same text captured again stays forgotten."""
    call(root, "forget", {"id": memory_id, "reason": reason, "actor": "cli", "user_id": user_id})
    click.echo(f"forgotten: {memory_id}")


@main.command()
@project_option
@click.argument("old_id")
@click.option("--by", "new_id", default=None, help="Id of an existing replacement.")
@click.option("--text", "content", default=None, help="Text of a new replacement.")
@_user_option
def supersede(root: Path, old_id: str, new_id: str | None, content: str | None,
              user_id: str | None) -> None:
    """Mark OLD_ID as superseded by another memory (existing, or new text)."""
    result = call(root, "supersede", {"old_id": old_id, "new_id": new_id, "content": content,
                                      "actor": "cli", "user_id": user_id})
    click.echo(f"{result['old_id']} superseded by {result['new_id']}")


@main.command()
@project_option
@click.argument("memory_id")
@_user_option
@click.option("--json", "as_json", is_flag=True)
def history(root: Path, memory_id: str, user_id: str | None, as_json: bool) -> None:
    """Show the audit trail of one memory."""
    result = call(root, "history", {"id": memory_id, "user_id": user_id})
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for ev in result["results"]:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ev["created_at"]))
        click.echo(f"{when}  {ev['event']:<10} by {ev['actor']}  {json.dumps(ev['detail'])}")


@main.command(name="list")
@project_option
@click.option("--limit", default=20, show_default=True)
@_user_option
@click.option("--json", "as_json", is_flag=True)
def list_(root: Path, limit: int, user_id: str | None, as_json: bool) -> None:
    """List the newest memories that are currently believed."""
    result = call(root, "list", {"limit": limit, "user_id": user_id})
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for hit in result["results"]:
        click.echo(f"{hit['id']}  {hit['status']:<10} {_short(hit['content'], 90)}")


@main.command()
@project_option
@click.option("--full", is_flag=True, help="Re-read every file, not only changed ones.")
def reindex(root: Path, full: bool) -> None:
    """Bring the workspace index in step with the files, with a progress bar."""
    import threading

    from rich.progress import Progress

    call(root, "ping")  # start the daemon first if needed
    outcome: dict[str, Any] = {}

    def run() -> None:
        with connection.Connection(root) as conn:
            try:
                outcome["result"] = conn.call("reindex", {"full": full}, timeout=3600)
            except protocol.LintaidError as err:
                outcome["error"] = err

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    with Progress(transient=True) as progress, connection.Connection(root) as conn:
        task = progress.add_task("re-indexing workspace", total=None)
        while worker.is_alive():
            worker.join(0.2)
            try:
                ws = conn.call("status", timeout=2.0).get("workspace") or {}
            except protocol.LintaidError:
                continue
            state = ws.get("progress") or {}
            if state.get("total"):
                progress.update(task, total=state["total"], completed=state.get("done", 0))
    if "error" in outcome:
        err = outcome["error"]
        fail(f"{getattr(err, 'code', 'error')}: {getattr(err, 'message', err)}")
    result = outcome.get("result", {})
    click.echo(f"workspace: {result.get('files_listed', 0)} files checked, "
               f"{result.get('added', 0)} added, {result.get('changed', 0)} changed, "
               f"{result.get('removed', 0)} removed in {result.get('seconds', 0)}s")


# -- integrations ----------------------------------------------------------------------------
def _script(name: str) -> str:
    """The bare script name when the agent will find it on PATH, else its absolute path."""
    import shutil

    beside = Path(sys.executable).parent / name
    on_path = shutil.which(name)
    if on_path and (not beside.exists() or Path(on_path).resolve() == beside.resolve()):
        return name
    return str(beside) if beside.exists() else name


@main.command()
@project_option
@click.argument("client", type=click.Choice(["claude-code"]))
@click.option("--user", "user_scope", is_flag=True, help="Install in ~/.claude (all projects).")
def install(root: Path, client: str, user_scope: bool) -> None:
    """Install the hooks (and the MCP server) for an agent client."""
    from .integrations.install import install_claude_code

    lines = install_claude_code(root, "user" if user_scope else "project",
                                hook_command=_script("lintaid-hook"),
                                mcp_command=_script("lintaid-mcp"))
    for line in lines:
        click.echo(line)
    if not lines:
        click.echo("lintaid: Claude Code hooks and MCP server already installed; nothing changed")


@main.command()
@project_option
@click.argument("client", type=click.Choice(["claude-code"]))
@click.option("--user", "user_scope", is_flag=True, help="Remove from ~/.claude.")
def uninstall(root: Path, client: str, user_scope: bool) -> None:
    """Remove exactly what `lintaid install` added."""
    from .integrations.install import uninstall_claude_code

    lines = uninstall_claude_code(root, "user" if user_scope else "project")
    for line in lines:
        click.echo(line)
    if not lines:
        click.echo("lintaid: nothing of lintaid's was installed for Claude Code")
