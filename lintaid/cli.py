"""The operator CLI: thin click commands that parse, call the daemon, and print.

Heavy modules (the stores, tantivy, watchdog) are imported only by ``start --foreground``;
every other command talks to the daemon over the socket, starting it when needed.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from lintaid_client import connection, core, launch, lock, ops, paths, protocol
from lintaid_client import spool as spool_files
from lintaid_client.models import Hit, ReviewItem, SearchResult

from . import __version__

EXIT_ERROR = 1
EXIT_UNAVAILABLE = 3
EXIT_LOCKED = launch.EXIT_LOCKED  # another daemon holds the project's lock
DOC_LEVELS = ("error", "warning", "note")  # ``lint --docs --fail-on``: SARIF's levels


def project_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    @click.option("--project", "project",
                  type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
                  help="Project root (default: found from the working directory).")
    @functools.wraps(fn)
    def wrapper(*args: Any, project: Path | None, **kwargs: Any) -> Any:
        try:
            root = project.resolve() if project is not None else paths.find_project_root()
        except paths.ProjectError as err:
            fail(str(err))
        return fn(*args, root=root, **kwargs)

    return wrapper


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    click.echo(f"lintaid: {message}", err=True)
    sys.exit(code)


def _spelled(op: str, err: protocol.RemoteError) -> str:
    """The error's message with the argument spelled as the person typed it (``--top-k``)."""
    message = err.message
    if err.arg and op in ops.OPS:
        try:
            option = ops.OPS[op].arg(err.arg).option
        except KeyError:
            option = None
        if option:  # 'top_k' or top_k, once each (``--history`` holds its own name)
            name = re.escape(err.arg)
            message = re.sub(rf"'{name}'|(?<![-\w]){name}(?!\w)", option, message)
    return message


def call(root: Path, op: str, args: dict[str, Any] | None = None, *, timeout: float = 30.0,
         autostart: bool = True, underway: bool = False) -> Any:
    """One request to the project's daemon, checked against the op's declaration first.

    When nobody answers (or the daemon speaks another protocol, then after stopping it), the
    daemon is started and the request sent once more; unless the request is a later step of
    an operation ``underway`` (an import's next batch): then the daemon went away under it,
    which is said as such, and none is started to go on half-way.
    """
    args = {k: v for k, v in (args or {}).items() if v is not None}
    try:
        ops.validate(op, args)
    except protocol.RemoteError as err:
        fail(_spelled(op, err))
    autostart = autostart and os.environ.get("LINTAID_NO_AUTOSTART") != "1"

    def send() -> Any:
        with connection.Connection(root) as conn:
            return conn.call(op, args, timeout=timeout)

    def start() -> None:
        try:
            connection.ensure_daemon(root)
        except protocol.DaemonUnavailable as err:
            fail(str(err), EXIT_UNAVAILABLE)

    def restart() -> None:
        click.echo("lintaid: daemon speaks another protocol; restarting it", err=True)
        stop_daemon(root)

    try:  # the client core's retry policy (``core.send_retrying``), as ``Memory`` sends
        return core.send_retrying(send, start=start if autostart and not underway else None,
                                  on_mismatch=restart)
    except protocol.ProtocolMismatch:
        fail("the daemon speaks another protocol even after a restart")
    except protocol.DaemonUnavailable as err:
        if underway:
            fail(f"the lintaid daemon went away during the {op}: what it acknowledged "
                 "before is kept, the rest was not done (run it again: what is "
                 "already there is skipped)", EXIT_UNAVAILABLE)
        fail(f"{err} (start it with: lintaid start --project {root})", EXIT_UNAVAILABLE)
    except protocol.DaemonTimeout as err:
        fail(str(err), EXIT_UNAVAILABLE)
    except protocol.RemoteError as err:
        fail(f"{err.code}: {_spelled(op, err)}")


def op_options(op_name: str, *, skip: tuple[str, ...] = ()) -> Callable[[Any], Any]:
    """Add the op's arguments to a command as the declaration says: the positional one, then
    options with the declared types, ranges and defaults."""
    spec = ops.OPS[op_name]

    def decorate(fn: Any) -> Any:
        for arg in reversed(spec.args):
            if arg.cli is None or arg.name in skip:
                continue
            if arg.cli == "ARG":
                fn = click.argument(arg.name, metavar=arg.name.upper())(fn)
                continue
            decls = (arg.option or "", arg.name)
            if arg.type == ops.BOOL:
                fn = click.option(*decls, is_flag=True, default=bool(arg.default),
                                  help=arg.help)(fn)
            elif arg.type == ops.INT:
                fn = click.option(*decls, type=click.IntRange(arg.lo, arg.hi),
                                  default=arg.default, show_default=arg.default is not None,
                                  help=arg.help)(fn)
            elif arg.type == ops.CHOICE:
                fn = click.option(*decls, type=click.Choice(arg.choices), default=arg.default,
                                  show_default=True, help=arg.help)(fn)
            elif arg.type == ops.MAP:
                fn = click.option(*decls, callback=_json_map, metavar="JSON",
                                  help=arg.help)(fn)
            else:
                metavar = {ops.TIME: "TIME", ops.DURATION: "DURATION"}.get(arg.type)
                fn = click.option(*decls, default=None, help=arg.help, metavar=metavar)(fn)
        return fn

    return decorate


def _json_map(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    try:
        data = json.loads(value)
    except ValueError as err:
        raise click.BadParameter(f"not JSON: {err}") from None
    if not isinstance(data, dict):
        raise click.BadParameter("must be a JSON object")
    return data


def op_args(op_name: str, values: dict[str, Any]) -> dict[str, Any]:
    """The request's arguments: the command's values the op declares."""
    names = {a.name for a in ops.OPS[op_name].args}
    return {k: v for k, v in values.items() if k in names and v is not None}


def _text(value: str) -> str:
    """``-`` reads the text from standard input (long texts, pipes)."""
    if value != "-":
        return value
    data = sys.stdin.read()
    if not data.strip():
        fail("nothing on standard input")
    return data


json_flag = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


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
        sys.exit(_run_foreground(root))
    answer = connection.ping(root)
    if answer is not None:
        click.echo(f"lintaid daemon already running (pid {answer['pid']}) for {root}")
        return
    try:
        answer = connection.ensure_daemon(root)
    except protocol.DaemonUnavailable as err:
        fail(str(err), EXIT_UNAVAILABLE)
    click.echo(f"lintaid daemon started (pid {answer['pid']}) for {root}")


def _run_foreground(root: Path) -> int:
    """Run the daemon here; a failure to start is logged and said in one line on stderr."""
    try:
        paths.ensure_state_dir(root)
        fd = lock.acquire(paths.lock_path(root))
    except lock.AlreadyRunning as err:
        fail(str(err), EXIT_LOCKED)
    except OSError as err:
        fail(f"cannot use {err.filename or paths.state_dir(root)}: {err.strerror}")
    try:
        from .daemon import Config, Daemon, StartError

        config = Config.from_env()
        config.log_stderr = _log_to_stderr()
        daemon = Daemon(root, config)
        daemon.install_signal_handlers()
        try:
            code = daemon.run()
        except StartError as err:
            fail(str(err))
    finally:
        lock.release(fd)
    if daemon.stop_reason == "idle" and spool_files.pending(root):
        # Events spooled while it stopped, by a hook that found the lock still held (so it
        # started nobody): start the next daemon for them now the lock is free.
        launch.start_detached(root)
    return code


def _log_to_stderr() -> bool:
    """Whether the foreground daemon also logs to stderr: under systemd (the journal reads
    it) or whenever stderr is not a terminal; ``LINTAID_LOG_STDERR=0|1`` decides instead (a
    daemon started in the background sets 0: its stderr file is for why a start failed)."""
    flag = os.environ.get("LINTAID_LOG_STDERR")
    if flag in ("0", "1"):
        return flag == "1"
    if os.environ.get("INVOCATION_ID") or os.environ.get("NOTIFY_SOCKET"):
        return True
    try:
        return not sys.stderr.isatty()
    except (AttributeError, ValueError):
        return True


def _pid_alive(status: dict[str, Any]) -> bool:
    import psutil

    try:
        proc = psutil.Process(int(status["pid"]))
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return bool(abs(proc.create_time() - float(status.get("create_time", 0))) < 1.0)
    except (psutil.Error, KeyError, TypeError, ValueError):
        return False


def stop_daemon(root: Path, timeout: float = 10.0) -> str:
    """Stop the daemon: ask, then SIGTERM, then SIGKILL. Return the step that worked."""
    status = connection.read_status(root)
    running = status is not None and _pid_alive(status)
    with connection.Connection(root) as conn:
        try:
            conn.call("shutdown", timeout=2.0)
            asked = True
        except protocol.LintaidError:
            asked = False
    if status is None or not _pid_alive(status):
        return "shutdown" if asked or running else "not-running"
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
            time.sleep(0.01)
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
        f" {mem['claims']} claims; {mem.get('prompts', 0)} prompts kept apart",
        *(["  users     " + ", ".join(
            f"{user} {n['records']} records, {n['prompts']} prompts"
            for user, n in mem["users"].items())] if mem.get("users") else []),
        f"  queues    writer {data['writer_queue']}, spool {data['spool_depth']},"
        f" index pending {mem['pending_index']}",
        f"  process   RSS {data['rss_bytes'] / 2**20:.1f} MiB, {data['threads']} threads,"
        f" {data['requests']} requests served",
    ]
    search = data.get("search")
    if search:
        lines.append(f"  search    {search.get('mode')}, one index per user "
                     f"({search.get('users', 0)} users)")
    ws = data.get("workspace")
    if ws:
        lines.append(
            f"  workspace {ws.get('files', 0)} files, {ws.get('chunks', 0)} chunks, watcher "
            f"{ws.get('watcher_mode', '?')}, queue {ws.get('queue_depth', 0)}, last event "
            f"{_ago(ws.get('last_event_at'))}"
        )
        skipped = sum((ws.get("third_party") or {}).values())
        if skipped:
            lines.append(f"  third-party files left out: {skipped} ("
                         + ", ".join(f"{n} {why}" for why, n in ws["third_party"].items() if n)
                         + ")")
        if ws.get("recovered"):
            lines.append(f"  workspace.db was damaged ({ws['recovered']['reason']}): set aside "
                         f"as {ws['recovered']['moved_to']} and rebuilt from the files")
    week = (data.get("ledger") or {}).get("last_7_days")
    if week:
        lines.append(f"  injected  {week['injections']} times in 7 days, {week['tokens']} "
                     f"tokens; {_used(week)} (`lintaid stats`)")
    backups = data.get("backups") or {}
    lines.append(f"  backups   {backups.get('kept', 0)} kept"
                 + (f" ({backups['bytes'] / 2**20:.1f} MiB of at most "
                    f"{backups['max_bytes'] / 2**20:.0f})" if "max_bytes" in backups else "")
                 + (f", newest {_ago(backups.get('newest_at'))} ({backups['newest']})"
                    if backups.get("newest") else ""))
    if data.get("idle"):
        lines.append(f"  idle stop {_idle_text(data['idle'])}")
    lines.append(f"  paused    {_paused_text(data.get('pause') or {})}")
    if data.get("team"):
        from .team.report import summary

        lines.append(f"  team      {summary(data['team'])}")
    viewer = data.get("viewer")
    lines.append(f"  viewer    {viewer['url'] if viewer else 'off (`lintaid ui` starts it)'}")
    http = data.get("http")
    lines.append(f"  http      {http['url']} (token in {http['token_file']})" if http
                 else "  http      off (`lintaid http` starts it)")
    clients = [name for name, files in (data.get("clients") or {}).items() if files]
    lines.append(f"  clients   {', '.join(clients) or 'none installed'}")
    for problem in data.get("registrations") or []:
        lines.append(f"  BROKEN    {problem['name']}: {problem['detail']}"
                     + (f"; fix: {problem['fix']}" if problem.get("fix") else ""))
    v = data["versions"]
    lines.append(f"  versions  lintaid {v['lintaid']}, protocol {v['protocol']}, "
                 f"python {v['python']}, pyzmq {v['pyzmq']}, tantivy {v['tantivy']}")
    click.echo("\n".join(lines))


def _idle_text(idle: dict[str, Any]) -> str:
    """When an idle daemon stops, in one line."""
    if idle.get("stops_at") is None:
        return "never (LINTAID_IDLE_EXIT_S=0)"
    when = time.strftime("%H:%M:%S", time.localtime(idle["stops_at"]))
    text = (f"at {when} if still idle ({_duration(idle['exit_after_s'])} without requests"
            " or work; LINTAID_IDLE_EXIT_S)")
    if idle.get("pending"):
        text += f"; waiting on: {idle['pending']}"
    return text


def _until(until: float | None) -> str:
    if until is None:
        return "until `lintaid resume`"
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(until))
    return f"until {when} ({_duration(max(0.0, until - time.time()))} left)"


def _paused_text(pause: dict[str, Any]) -> str:
    """One line: what is paused, and until when."""
    parts = []
    whole = pause.get("all")
    if whole:
        parts.append(f"everything {_until(whole.get('until'))}")
    for session, span in (pause.get("sessions") or {}).items():
        parts.append(f"session {session} {_until(span.get('until'))}")
    return "; ".join(parts) or "no"


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


@main.command()
@project_option
@op_options("pause")
@json_flag
def pause(root: Path, as_json: bool, **values: Any) -> None:
    """Pause capture and injection (everything, or one --session), --for a while or until
    `lintaid resume`; hooks still answer at once."""
    result = call(root, "pause", op_args("pause", values))
    if as_json:
        click.echo(json.dumps(result))
        return
    what = f"session {result['session_id']}" if result.get("session_id") else "everything"
    click.echo(f"lintaid: paused capture and injection for {what} {_until(result['until'])}")


@main.command()
@project_option
@op_options("resume")
@json_flag
def resume(root: Path, as_json: bool, **values: Any) -> None:
    """Resume capture and injection (everything, or one --session)."""
    result = call(root, "resume", op_args("resume", values))
    if as_json:
        click.echo(json.dumps(result))
        return
    what = f"session {result['session_id']}" if result.get("session_id") else "everything"
    if result["resumed"]:
        click.echo(f"lintaid: resumed capture and injection for {what}")
    else:
        click.echo(f"lintaid: {what} was not paused; nothing changed")


@main.command()
@project_option
@op_options("ui")
@click.option("--no-open", is_flag=True, help="Print the address; do not open a browser.")
@json_flag
def ui(root: Path, no_open: bool, as_json: bool, **values: Any) -> None:
    """Open the web viewer: served by the daemon on 127.0.0.1 only, behind a token that
    changes with every daemon (the printed address holds it)."""
    result = call(root, "ui", op_args("ui", values))
    if as_json:
        click.echo(json.dumps(result))
    else:
        click.echo(f"lintaid viewer: {result['url']}")
    if not no_open:
        import webbrowser

        if not webbrowser.open(result["url"]) and not as_json:
            click.echo("lintaid: no browser could be started; open the address above",
                       err=True)


@main.command("http")
@project_option
@op_options("http")
@json_flag
def http_api(root: Path, as_json: bool, **values: Any) -> None:
    """Serve the HTTP API (and the viewer) on 127.0.0.1, or find where it is served: its URL,
    its OpenAPI document, and the file holding its bearer token (kept across daemons)."""
    result = call(root, "http", op_args("http", values))
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"lintaid HTTP API: {result['url']}")
    click.echo(f"  OpenAPI  {result['openapi']}")
    click.echo(f"  token    {result['token_file']} (send its contents in an Authorization header as a bearer token)")


# -- memory ----------------------------------------------------------------------------------
def _short(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 3] + "..."


def _print_hit(hit: Hit) -> None:
    label = "historical" if hit.historical else hit.status
    click.echo(f"{hit.id}  {label:<10} {hit.score:6.2f}  {hit.location()}")
    click.echo(f"    {_short(hit.content)}")
    if hit.superseded_by:
        click.echo(f"    superseded by {hit.superseded_by}")
    for path in hit.changed_files:
        click.echo(f"    file changed since capture: {path}")


@main.command()
@project_option
@op_options("search")
@json_flag
def search(root: Path, as_json: bool, **values: Any) -> None:
    """Search memory and the workspace; superseded records are hidden unless --history."""
    result = SearchResult.from_dict(call(root, "search", op_args("search", values)))
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    if not result.results:
        click.echo("no results" + (f" ({result.hidden} hidden)" if result.hidden else ""))
        return
    for hit in result.results:
        _print_hit(hit)
    if result.hidden:
        click.echo(f"({result.hidden} hidden: superseded or expired; use --history)")


@main.command()
@project_option
@op_options("add")
@json_flag
def add(root: Path, as_json: bool, **values: Any) -> None:
    """Add a memory (CONTENT, or - to read it from standard input)."""
    args = op_args("add", values)
    args.update(content=_text(values["content"]), source="cli", actor="cli")
    result = call(root, "add", args)
    if as_json:
        click.echo(json.dumps({"id": result["id"], "event": result["event"]}))
    elif result["event"] == "NONE":
        click.echo(f"already stored: {result['id']}")
    elif result["event"] == "FORGOTTEN":
        click.echo(f"forgotten earlier, so not stored again: {result['id']}")
    else:
        click.echo(f"added: {result['id']}")


@main.command()
@project_option
@op_options("get")
@json_flag
def get(root: Path, as_json: bool, **values: Any) -> None:
    """Show one memory with its status, claims and provenance."""
    hit = Hit.from_dict(call(root, "get", op_args("get", values)))
    if as_json:
        click.echo(json.dumps(hit.to_dict(), indent=2))
        return
    click.echo(f"{hit.id}  {hit.status}  {hit.source}")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(hit.created_at or 0))
    click.echo(f"captured {when}  branch {hit.branch or '-'}  "
               f"revision {(hit.revision or '-')[:12]}")
    click.echo(hit.content)
    for claim in hit.claims:
        line = f"  claim [{claim.status}] {claim.subject} {claim.predicate} {claim.value}"
        if claim.superseded_by:  # a memory id, or the decision document that replaced it
            now = f"now {claim.replaced_by_value}, " if claim.replaced_by_value else ""
            line += f" ({now}per {claim.superseded_by})"
        click.echo(line)


@main.command()
@project_option
@op_options("update")
@json_flag
def edit(root: Path, as_json: bool, **values: Any) -> None:
    """Replace a memory's text (--text, or --text - for standard input)."""
    args = op_args("update", values)
    args.update(content=_text(values["content"]), actor="cli")
    result = call(root, "update", args)
    click.echo(json.dumps(result) if as_json else f"updated: {result['id']}")


@main.command()
@project_option
@op_options("forget")
def forget(root: Path, **values: Any) -> None:
    """Forget a memory: hidden everywhere, and the same text captured again stays forgotten."""
    result = call(root, "forget", {**op_args("forget", values), "actor": "cli"})
    click.echo(f"forgotten: {result['id']}")


@main.command()
@project_option
@op_options("supersede")
def supersede(root: Path, **values: Any) -> None:
    """Mark OLD_ID as superseded by another memory (--by ID) or by new text (--text)."""
    args = {**op_args("supersede", values), "actor": "cli", "source": "cli"}
    if args.get("content") is not None:
        args["content"] = _text(args["content"])
    result = call(root, "supersede", args)
    click.echo(f"{result['old_id']} superseded by {result['new_id']}")


@main.command()
@project_option
@op_options("history")
@json_flag
def history(root: Path, as_json: bool, **values: Any) -> None:
    """Show the audit trail of one memory."""
    result = call(root, "history", op_args("history", values))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for ev in result["results"]:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ev["created_at"]))
        click.echo(f"{when}  {ev['event']:<10} by {ev['actor']}  {json.dumps(ev['detail'])}")


@main.command(name="list")
@project_option
@op_options("list")
@json_flag
def list_(root: Path, as_json: bool, **values: Any) -> None:
    """List the newest memories that are currently believed."""
    result = call(root, "list", op_args("list", values))
    hits = [Hit.from_dict(h) for h in result["results"]]
    if as_json:
        click.echo(json.dumps({"results": [h.to_dict() for h in hits]}, indent=2))
        return
    for hit in hits:
        click.echo(f"{hit.id}  {hit.status:<10} {_short(hit.content, 90)}")


@main.command()
@project_option
@op_options("confirm")
@json_flag
def confirm(root: Path, as_json: bool, **values: Any) -> None:
    """Confirm a memory is still true: its staleness is measured from now."""
    result = call(root, "confirm", {**op_args("confirm", values), "actor": "cli"})
    click.echo(json.dumps(result) if as_json else f"confirmed: {result['id']}")


@main.command()
@project_option
@op_options("restore")
@json_flag
def restore(root: Path, as_json: bool, **values: Any) -> None:
    """Bring a forgotten memory back (and let its text be captured again)."""
    result = call(root, "restore", {**op_args("restore", values), "actor": "cli"})
    click.echo(json.dumps(result) if as_json else f"restored: {result['id']}")


@main.command()
@project_option
@click.argument("action", required=False, type=click.Choice(["accept", "reject"]))
@click.argument("item", required=False, metavar="[ID]")
@op_options("review")
@click.option("--reason", default=None, help="Why (with accept or reject); kept in the audit "
                                               "log.")
@json_flag
def review(root: Path, action: str | None, item: str | None, reason: str | None,
           as_json: bool, **values: Any) -> None:
    """The review queue: inferred supersessions too weak to hide the older memory, and
    conflicts. `review accept ID`: the newer statement wins (its memory explicitly supersedes
    the older one's); `review reject ID`: the two are never related again, both stand."""
    if action is None:
        if item is not None or reason is not None:
            fail("give accept or reject before the item's id (lintaid review accept ID)")
        result = call(root, "review", op_args("review", values))
        items = [ReviewItem.from_dict(i) for i in result["results"]]
        if as_json:
            click.echo(json.dumps({"results": [i.to_dict() for i in items],
                                   "count": len(items)}, indent=2))
            return
        if not items:
            click.echo("nothing waits for review")
            return
        for it in items:
            what = "conflicts with" if it.kind == "conflicts_with" else "may supersede"
            click.echo(f"{it.id}  {it.subject} {it.predicate}: {it.newer.value!r} {what} "
                       f"{it.older.value!r} ({it.method}, {it.confidence:.2f})")
            click.echo(f"    newer {it.newer.location()}: {_short(it.newer.evidence, 90)}")
            click.echo(f"    older {it.older.location()}: {_short(it.older.evidence, 90)}")
        click.echo(f"{len(items)} waiting; decide with `lintaid review accept|reject ID`")
        return
    if item is None:
        fail(f"give the item's id: lintaid review {action} ID")
    args = {"id": item, "decision": action, "reason": reason, "actor": "cli",
            "user_id": values.get("user_id")}
    decided = call(root, "decide", args)
    if as_json:
        click.echo(json.dumps(decided))
    elif decided["event"] == "NONE":
        click.echo(f"{decided['id']} was {decided['status']} already; nothing changed")
    elif action == "accept" and decided.get("document"):
        click.echo(f"accepted {decided['id']}: {decided['newer_id']} stands; "
                   f"{decided['document']}")
    elif action == "accept":
        click.echo(f"accepted {decided['id']}: {decided['newer_id']} supersedes "
                   f"{decided['older_id']}")
    else:
        click.echo(f"rejected {decided['id']}: {decided['newer_id']} and "
                   f"{decided['older_id']} will not be related again")


def _utc(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


@main.command()
@project_option
@op_options("audit")
@json_flag
def audit(root: Path, as_json: bool, **values: Any) -> None:
    """Every change made to memories, oldest first (or --order newest): when (UTC), who,
    what, which memory, and its content's hashes before and after."""
    result = call(root, "audit", op_args("audit", values), timeout=120)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for ev in result["results"]:
        hashes = f"{(ev['before_hash'] or '-')[:12]} -> {(ev['after_hash'] or '-')[:12]}"
        detail = json.dumps(ev["detail"]) if ev["detail"] else ""
        click.echo(f"{ev['id']:>6}  {_utc(ev['created_at'])}  {ev['actor']:<8} "
                   f"{ev['event']:<9} {ev['memory_id']}  {hashes}  {detail}".rstrip())
    if not result["results"]:
        click.echo("no changes recorded")
    if result.get("next") is not None:
        click.echo("(more: narrow with --id, --since or --actor, or raise --limit)", err=True)


@main.command()
@project_option
@op_options("stats")
@click.option("--by", "by", type=click.Choice(["day", "client", "session"]), default="day",
              show_default=True, help="How to group the table (--json prints every grouping).")
@json_flag
def stats(root: Path, by: str, as_json: bool, **values: Any) -> None:
    """What memory did: injections, the memories and estimated tokens they gave, and how
    often the agent's next reply or tool calls used them (judged at the session's next
    capture)."""
    result = call(root, "stats", op_args("stats", values))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    total = result["totals"]
    if not total["injections"]:
        click.echo("nothing injected yet")
        return
    click.echo(f"{total['injections']} injections, {total['records']} memories shown, "
               f"{total['tokens']} tokens (about {total['mean_tokens']} each); "
               f"{_used(total)}")
    click.echo(f"{by:<26} {'injections':>10} {'memories':>8} {'tokens':>8} {'judged':>6} "
               f"{'used':>5}")
    for row in result[f"by_{by}"]:
        click.echo(f"{str(row[by] or '-')[:26]:<26} {row['injections']:>10} "
                   f"{row['records']:>8} {row['tokens']:>8} {row['judged']:>6} "
                   f"{row['used']:>5}")
    for item in result["recent"]:
        used = "-" if item["used"] is None else "used" if item["used"] else "unused"
        click.echo(f"  {_utc(item['at'])} {item['client'] or '-'} {item['event']}: "
                   f"{len(item['records'])} memories, {item['tokens']} tokens, {used}"
                   + (f" ({', '.join(item['used_markers'][:3])})" if item["used_markers"]
                      else ""))


def _used(figures: dict[str, Any]) -> str:
    if not figures["judged"]:
        return "none judged yet (the next capture of a session judges its injections)"
    return (f"used in {figures['used']} of {figures['judged']} judged "
            f"({100 * figures['used_share']:.0f}%)")


@main.command(name="export")
@project_option
@op_options("export")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "mem0", "memlint"]),
              default="jsonl", show_default=True,
              help="lintaid's JSON Lines (every row), mem0's export, or memlint's input.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write here (mode 0600, atomically) instead of standard output.")
def export_(root: Path, fmt: str, output: Path | None, **values: Any) -> None:
    """Export memories: records with their claims and relations, links, review decisions,
    confirmations and tombstones (and with --include-history the audit log). Forgotten
    memories are left out; their tombstones keep them forgotten wherever this is imported.
    Stored prompts and local paths are left out unless --include-prompts, --include-paths.
    Importing the file again, here or elsewhere, adds nothing already there."""
    from . import transfer
    from .policy.staleness import fact_category

    args = {**op_args("export", values), "limit": 500}
    rows: list[dict[str, Any]] = []
    for page in core.pages(lambda after: call(root, "export", {**args, "after": after},
                                              timeout=120)):
        rows.extend(page["rows"])
    if fmt == "mem0":
        text = json.dumps(transfer.to_mem0(rows), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "memlint":
        entries = transfer.to_memlint(rows, category=lambda t: fact_category(t, None))
        text = json.dumps(entries, indent=2, ensure_ascii=False) + "\n"
    else:
        head = transfer.header(values.get("user_id") or "", bool(values.get("include_history")),
                               time.time(), __version__)
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [head, *rows])
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        transfer.write_private(output, text)
    except OSError as err:
        fail(f"{output}: {err.strerror or err}")
    records = sum(1 for r in rows if r["type"] == "record")
    click.echo(f"exported {records} records ({len(rows)} rows) to {output}", err=True)


@main.command(name="import")
@project_option
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["auto", "jsonl", "mem0"]), default="auto",
              show_default=True, help="FILE's format: lintaid's JSON Lines, or mem0's export "
              "(a memlint list, lintaid's --format memlint included, reads as mem0's).")
@op_options("import")
@json_flag
def import_(root: Path, file: Path, fmt: str, as_json: bool, **values: Any) -> None:
    """Import an export (lintaid's JSON Lines, mem0's, or memlint's): importing the same file
    twice adds nothing; every row added is audited as an import; explicit times are kept.
    FILE - reads standard input. The whole file is checked before anything is sent."""
    from . import transfer

    try:
        text = transfer.read_file(file)
        head, rows = transfer.read(text, fmt, str(file))
    except transfer.TransferError as err:
        fail(str(err))
    user = values.get("user_id") or ""
    owner = (head or {}).get("user_id")
    if owner is not None and owner != (user.strip() or "local"):
        fail(f"{file} holds user {owner!r}'s memories: import it with --user {owner}")
    counts: dict[str, dict[str, int]] = {}
    skipped: list[str] = []
    for n, batch in enumerate(core.batches(rows)):
        result = call(root, "import", {"items": batch, "user_id": values.get("user_id"),
                                       "actor": "cli"}, timeout=600, underway=n > 0)
        for row in result["results"]:
            seen = counts.setdefault(row["type"], {})
            seen[row["event"]] = seen.get(row["event"], 0) + 1
            if row["event"] == "SKIP":
                skipped.append(f"{row['type']}: {row.get('reason')}")
    if as_json:
        click.echo(json.dumps({"counts": counts, "skipped": skipped}, indent=2))
        return
    for row_type, events in counts.items():
        said = ", ".join(f"{n} {_IMPORT_WORDS.get(e, e.lower())}" for e, n in events.items())
        click.echo(f"{row_type}s: {said}")
    for reason in skipped[:10]:
        click.echo(f"  skipped {reason}")
    if len(skipped) > 10:
        click.echo(f"  ... and {len(skipped) - 10} more skipped")


_IMPORT_WORDS = {"ADD": "added", "NONE": "already here", "FORGOTTEN": "forgotten here",
                 "SKIP": "skipped"}


@main.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--project", "project",
              type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Project root (default: found from the working directory).")
@op_options("lint")
@click.option("--format", "fmt", type=click.Choice(["auto", "json", "mem0", "jsonl"]),
              default="auto", show_default=True,
              help="FILE's format: told from its content, or memlint's JSON list, a mem0 "
                   "export, lintaid's JSON Lines export.")
@click.option("--names", type=click.Choice(["lintaid", "memlint"]), default="lintaid",
              show_default=True, help="With --json: lintaid's field names, or memlint's "
                                      "(fact_id, staleness_score, staleness_level, "
                                      "recommendation ...) for scripts written for memlint.")
@click.option("--enrich", "enrich_to", type=click.Path(dir_okay=False, path_type=Path),
              help="Write FILE's documents back here with memlint_score, memlint_level, "
                   "memlint_age_days and memlint_checked_at added.")
@click.option("--docs", is_flag=True,
              help="Lint the project's Markdown and reStructuredText documents instead "
                   "(links, orphans, cross-references, terminology, statements a current "
                   "decision superseded, stale decision records).")
@click.option("--sarif", "as_sarif", is_flag=True,
              help="With --docs: print the findings as SARIF 2.1.0 (for CI and editors).")
@click.option("--fail-on", type=click.Choice(["stale", "expired", *DOC_LEVELS]), default=None,
              help="Exit 1 when a record is at this level or beyond (stale, expired), or "
                   "with --docs when a finding is (error, warning, note); for CI.")
@json_flag
@click.pass_context
def lint(ctx: click.Context, /, file: Path | None, project: Path | None, fmt: str, names: str,
         enrich_to: Path | None, docs: bool, as_sarif: bool, fail_on: str | None,
         as_json: bool, **values: Any) -> None:
    """Judge memories for staleness: the project's store (through the daemon), or FILE, a
    memory export, on its own. Prints id, content, category, age in days, score, level and
    action per memory, then a summary; exits 1 with --fail-on when something is that stale.

    With --docs, lint the project's documents (as the workspace index holds them) and print
    each finding's file, line, level, rule, message and suggested fix."""
    from . import lint as linting

    if docs:
        _lint_docs(ctx, file, project, fmt, names, enrich_to, as_sarif, fail_on, as_json,
                   values)
        return
    if as_sarif:
        fail("--sarif applies to --docs")
    if fail_on in DOC_LEVELS:
        fail(f"--fail-on {fail_on} applies to --docs (memories: stale or expired)")
    if names != "lintaid" and not as_json:
        fail("--names applies to --json (the table has memlint's columns already)")
    at = values.get("at")
    if file is None:
        if enrich_to is not None:
            fail("--enrich needs FILE (the export to write back)")
        try:
            root = project.resolve() if project is not None else paths.find_project_root()
        except paths.ProjectError as err:
            fail(str(err))
        result = call(root, "lint", op_args("lint", values), timeout=600)
        noun = "records"
    else:
        try:
            now = ops.parse_time(at, "--at") if at is not None else time.time()
            config = linting.load_config(_config_root(project))
            export = linting.load_export(file, fmt, now)
            result = linting.audit(export, now, config)
            if enrich_to is not None:
                count = linting.enrich(export, result, enrich_to)
                click.echo(f"wrote {count} documents to {enrich_to}", err=True)
            result = linting.narrow(result, bool(values.get("only_flagged")),
                                    values.get("limit"))
        except (ValueError, OSError) as err:  # ExportError, ConfigError, a bad --at
            fail(str(err))
        noun = "facts"
    if as_json:
        shown = linting.as_memlint(result) if names == "memlint" else result
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
    else:
        for line in linting.table(result, noun):
            click.echo(line)
    if linting.fails(result, fail_on):
        sys.exit(EXIT_ERROR)


def _lint_docs(ctx: click.Context, file: Path | None, project: Path | None, fmt: str,
               names: str, enrich_to: Path | None, as_sarif: bool, fail_on: str | None,
               as_json: bool, values: dict[str, Any]) -> None:
    """``lint --docs``: the daemon lints; this prints and gives the exit code."""
    from .doclint import report

    given = {name for name in ("only_flagged", "at", "fmt", "names")
             if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE}
    if file is not None or enrich_to is not None or given:
        fail("--docs lints the project's documents: FILE, --enrich, --format, --names, "
             "--only-flagged and --at apply to memories")
    if fail_on in ("stale", "expired"):
        fail(f"--fail-on {fail_on} applies to memories; with --docs: error, warning or note")
    if as_json and as_sarif:
        fail("give --json or --sarif, not both")
    try:
        root = project.resolve() if project is not None else paths.find_project_root()
    except paths.ProjectError as err:
        fail(str(err))
    args = {"user_id": values.get("user_id")}
    if ctx.get_parameter_source("limit") == click.core.ParameterSource.COMMANDLINE:
        args["limit"] = values.get("limit")
    result = call(root, "lint_docs", args, timeout=600)
    if as_sarif:
        click.echo(json.dumps(report.sarif(result, result.get("root"), __version__),
                              indent=2, ensure_ascii=False))
    elif as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        for line in report.table(result):
            click.echo(line)
    if report.fails(result, fail_on):
        sys.exit(EXIT_ERROR)


def _config_root(project: Path | None) -> Path | None:
    """Where a file audit reads staleness settings: the project's, when there is one."""
    if project is not None:
        return project.resolve()
    try:
        root = paths.find_project_root()
    except paths.ProjectError:
        return None
    return root if paths.state_dir(root).is_dir() else None


@main.command()
@project_option
@op_options("reindex")
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
    misses = 0
    with Progress(transient=True) as progress, connection.Connection(root) as conn:
        task = progress.add_task("re-indexing workspace", total=None)
        while worker.is_alive():
            worker.join(0.2)
            try:
                ws = conn.call("status", timeout=2.0).get("workspace") or {}
                misses = 0
            except protocol.LintaidError:
                misses += 1
                if misses >= 5:  # the daemon stopped answering: do not wait forever
                    fail("the daemon stopped answering during the re-index; "
                         "run `lintaid reindex` again", EXIT_UNAVAILABLE)
                continue
            state = ws.get("progress") or {}
            if state.get("total"):
                progress.update(task, total=state["total"], completed=state.get("done", 0))
    if "error" in outcome:
        err = outcome["error"]
        if isinstance(err, protocol.DaemonTimeout):  # it went away, or never answered
            fail(str(err), EXIT_UNAVAILABLE)
        fail(f"{getattr(err, 'code', 'error')}: {getattr(err, 'message', err)}")
    result = outcome.get("result", {})
    click.echo(f"workspace: {result.get('files_listed', 0)} files checked, "
               f"{result.get('added', 0)} added, {result.get('changed', 0)} changed, "
               f"{result.get('removed', 0)} removed in {result.get('seconds', 0)}s")


# -- team ---------------------------------------------------------------------------------------
@main.group()
def team() -> None:
    """Share this project's memory with your team through a PostgreSQL server."""


@team.command(name="join")
@project_option
@op_options("team_join")
@json_flag
def team_join(root: Path, as_json: bool, **values: Any) -> None:
    """Join a team on the PostgreSQL server at DSN; every clone of this repository that joins
    the same team meets there. A password in DSN goes to the keyring or a pgpass file."""
    result = call(root, "team_join", op_args("team_join", values), timeout=60)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    if result.get("already"):
        click.echo(f"lintaid: already in team {result['team']} on {result['dsn']}")
        return
    click.echo(f"joined team {result['team']} as {result['member']} ({result['machine']}) on "
               f"{result['dsn']}")
    click.echo(f"  repository  {result['repo_key']}: every clone of it in this team meets here")
    if result.get("password_kept_in"):
        click.echo(f"  password    kept in {result['password_kept_in']}, not in .lint-ai/")
    click.echo(f"  password    read from {result.get('password_source') or '?'}")
    click.echo(f"  sharing     {result.get('queued', 0)} records and decisions queued; prompts "
               "and private records stay on this machine")


@team.command(name="add-member")
@project_option
@op_options("team_add_member")
@json_flag
def team_add_member(root: Path, as_json: bool, **values: Any) -> None:
    """Create NAME's own role on the team server (you need CREATEROLE there) and print the
    address NAME joins with: send it to them privately; it holds their new password."""
    result = call(root, "team_add_member", op_args("team_add_member", values), timeout=60)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    verb = "added" if result["created"] else "gave a new password to"
    click.echo(f"{verb} {result['member']}; they join with (keep it private):")
    click.echo(f"  lintaid team join '{result['dsn']}'")


@team.command(name="leave")
@project_option
@json_flag
def team_leave(root: Path, as_json: bool) -> None:
    """Leave the team: nothing more is shared or pulled (pulled memories stay)."""
    result = call(root, "team_leave")
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"left team {result['left']}; {result['undelivered']} change(s) not yet "
               "delivered were dropped")


@team.command(name="status")
@project_option
@json_flag
def team_status(root: Path, as_json: bool) -> None:
    """Connection, lag each way, the outbox, the last error."""
    from .team.report import lines

    result = call(root, "team_status")
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for line in lines(result):
        click.echo(line)


@team.command(name="private")
@project_option
@op_options("team_private")
@json_flag
def team_private(root: Path, as_json: bool, **values: Any) -> None:
    """Keep what CLIENT captures on this machine (--share: share it again)."""
    result = call(root, "team_private", op_args("team_private", values))
    if as_json:
        click.echo(json.dumps(result))
        return
    state = "stays on this machine" if result["private"] else "is shared with the team"
    click.echo(f"what {result['client']} captures {state}")


# -- the bulletin board --------------------------------------------------------------------------
BOARD_FOLLOW_WAIT_S = 25  # each read of ``board read -f`` waits this long for a post


@main.group()
def board() -> None:
    """The bulletin board: short status notes agents working on this project leave each
    other (not memory: never searched as memory, never injected)."""


def _board_args(values: dict[str, Any], op: str) -> dict[str, Any]:
    return {**op_args(op, values), "client": "cli"}


def _print_post(post: dict[str, Any]) -> None:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(post["created_at"]))
    who = post.get("author") or post.get("client") or "?"
    if post.get("client") and post.get("client") != who:
        who = f"{who} ({post['client']})"
    click.echo(f"#{post['sequence']:<4} {when}  {post['board_key']}  {who}"
               + (f"  session {post['session_id']}" if post.get("session_id") else ""))
    for line in post["content"].splitlines() or [""]:
        click.echo(f"      {line}")


@board.command(name="list")
@project_option
@op_options("board_list", skip=("session_id",))
@json_flag
def board_list(root: Path, as_json: bool, **values: Any) -> None:
    """The project's boards, newest activity first."""
    result = call(root, "board_list", _board_args(values, "board_list"))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for item in result["boards"]:
        last = _ago(item["last_post_at"]) if item.get("last_post_at") else "no posts"
        click.echo(f"{item['key']:<24} {item['posts']:>5} post(s)  last #{item['last_sequence']}"
                   f"  {last}  {_short(item['title'], 60)}")


@board.command(name="open")
@project_option
@op_options("board_open", skip=("session_id",))
@json_flag
def board_open(root: Path, as_json: bool, **values: Any) -> None:
    """Open (or create) the board KEY."""
    result = call(root, "board_open", _board_args(values, "board_open"))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    verb = "created" if result["created"] else "opened"
    click.echo(f"{verb} board {result['key']} ({result['board_id']}): {result['title']}")


@board.command(name="post")
@project_option
@op_options("board_post", skip=("session_id",))
@click.option("--request-id", "request_id", default=None,
              help="your id for this post: the same id posts once (default: a new one)")
@json_flag
def board_post(root: Path, as_json: bool, **values: Any) -> None:
    """Post CONTENT (or - to read it from standard input) to a board (--board; default:
    the project's 'default' board)."""
    import uuid

    args = _board_args(values, "board_post")
    args.update(content=_text(values["content"]),
                request_id=values.get("request_id") or "cli-" + uuid.uuid4().hex)
    result = call(root, "board_post", args)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    said = "posted" if result["event"] == "ADD" else "already posted"
    click.echo(f"{said} #{result['sequence']} on {result['board_key']}: {result['post_id']}")


@board.command(name="read")
@project_option
@click.argument("board_ref", metavar="[BOARD]", required=False)
@op_options("board_read", skip=("board_id", "session_id", "wait"))
@click.option("-f", "--follow", is_flag=True, help="Keep printing new posts as they come.")
@click.option("--max", "max_posts", type=click.IntRange(1), default=None,
              help="With -f: stop after this many posts.")
@json_flag
def board_read(root: Path, board_ref: str | None, follow: bool, max_posts: int | None,
               as_json: bool, **values: Any) -> None:
    """Read BOARD's posts in order (default: the 'default' board); -f follows it."""
    args = _board_args(values, "board_read")
    if board_ref:
        args["board_id"] = board_ref
    try:
        _read_board(root, args, follow, max_posts, as_json)
    except KeyboardInterrupt:  # the way out of -f
        pass


def _read_board(root: Path, args: dict[str, Any], follow: bool, max_posts: int | None,
                as_json: bool) -> None:
    shown = 0
    while True:
        result = call(root, "board_read", args,
                      timeout=30.0 + (BOARD_FOLLOW_WAIT_S if follow else 0))
        if as_json and not follow:
            click.echo(json.dumps(result, indent=2))
            return
        for post in result["posts"]:
            if as_json:
                click.echo(json.dumps(post))
            else:
                _print_post(post)
            shown += 1
            if max_posts is not None and shown >= max_posts:
                return
        if not follow and not result["more"]:
            if not result["posts"] and not as_json:
                click.echo(f"no posts on {result['key']} after #{args['after_sequence']}")
            return
        args = {**args, "after_sequence": result["last_sequence"],
                "wait": 0 if result["more"] else BOARD_FOLLOW_WAIT_S}


@board.command(name="search")
@project_option
@op_options("board_search")
@json_flag
def board_search(root: Path, as_json: bool, **values: Any) -> None:
    """Search the boards' posts (--board: one board)."""
    result = call(root, "board_search", op_args("board_search", values))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    if not result["posts"]:
        click.echo("no posts found")
    for post in result["posts"]:
        _print_post(post)


# -- backups and recovery --------------------------------------------------------------------
@main.command()
@project_option
@op_options("backup")
@json_flag
def backup(root: Path, as_json: bool, **values: Any) -> None:
    """Back up memory.db now, consistently while the daemon runs: to --to FILE, or as the
    next rolling backup in .lint-ai/backups/."""
    args = op_args("backup", values)
    if args.get("to"):
        args["to"] = os.path.abspath(os.path.expanduser(args["to"]))
    result = call(root, "backup", args, timeout=600)
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"backed up memory.db to {result['path']} "
               f"({result['bytes'] / 2**20:.1f} MiB, {result['seconds']:.2f}s)")


@main.command()
@project_option
@json_flag
def recover(root: Path, as_json: bool) -> None:
    """Salvage a damaged memory.db: every readable row, then the newest backup; the damaged
    file is kept aside. Stops the daemon first; spooled events replay when it starts."""
    from .daemon import StartError
    from .daemon import recover as recover_project

    fd = None
    for _attempt in range(3):  # an agent's hook may start the daemon again meanwhile
        step = stop_daemon(root)
        if step != "not-running" and not as_json:
            click.echo(f"lintaid daemon stopped ({step})", err=True)
        try:
            fd = lock.acquire(paths.lock_path(root), retry_s=5.0)
            break
        except lock.AlreadyRunning:
            time.sleep(0.5)
    if fd is None:
        fail("a daemon keeps starting for this project; stop its agents' sessions and run "
             "`lintaid recover` again")
    try:
        report = recover_project(root)
    except StartError as err:
        fail(str(err))
    finally:
        lock.release(fd)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    for line in report.lines():
        click.echo(line)


# -- integrations ----------------------------------------------------------------------------
def _commands(*, install: bool = True) -> Any:
    """How agents must start the shims (``integrations.hook_entries.commands``): the hook
    through the launcher in lintaid's data folder, written when ``install``."""
    from .integrations.hook_entries import commands

    return commands(install=install)


class _ClientChoice(click.Choice[str]):
    """The agent clients' names, read from the registry when a command first needs them:
    importing every client's installer is a third of the CLI's start, and only ``install``
    and ``uninstall`` use them."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from .integrations import registry

        return tuple(registry.names())

    @choices.setter
    def choices(self, _value: tuple[str, ...]) -> None:
        pass  # set by Choice.__init__; the registry is the one source


def _client_choice() -> click.Choice[str]:
    return _ClientChoice()


def _scope(user_scope: bool) -> str:
    return "user" if user_scope else "project"


@main.command()
@project_option
@click.argument("client", type=_client_choice())
@click.option("--user", "user_scope", is_flag=True,
              help="Install for every project of this user, not only this one.")
def install(root: Path, client: str, user_scope: bool) -> None:
    """Install the hooks and the MCP server for an agent client."""
    from .integrations import registry
    from .integrations.config_files import ConfigError

    agent = registry.get(client)
    try:
        report = agent.install(root, _scope(user_scope), _commands())  # type: ignore[arg-type]
    except ConfigError as err:
        fail(str(err))
    except OSError as err:  # a read-only or foreign-owned configuration folder
        fail(f"{err.filename or agent.title}: {err.strerror or err}; fix that and run the "
             "command again (it is safe to repeat)")
    for line in report.changes:
        click.echo(line)
    if not report.changes:
        click.echo(f"lintaid: {agent.title} hooks and MCP server already installed; "
                   "nothing changed")
    for step in report.next_steps:
        click.echo(f"next: {step}")


@main.command()
@project_option
@click.argument("client", type=_client_choice())
@click.option("--user", "user_scope", is_flag=True, help="Remove the user-level install.")
def uninstall(root: Path, client: str, user_scope: bool) -> None:
    """Remove exactly what `lintaid install` added."""
    from .integrations import registry
    from .integrations.config_files import ConfigError

    agent = registry.get(client)
    try:
        report = agent.uninstall(root, _scope(user_scope), _commands(install=False))  # type: ignore[arg-type]
    except ConfigError as err:
        fail(str(err))
    except OSError as err:  # a read-only or foreign-owned configuration folder
        fail(f"{err.filename or agent.title}: {err.strerror or err}; fix that and run the "
             "command again (it is safe to repeat)")
    for line in report.changes:
        click.echo(line)
    if not report.changes:
        click.echo(f"lintaid: nothing of lintaid's was installed for {agent.title}")


# -- doctor -------------------------------------------------------------------------------------
@main.command()
@project_option
@json_flag
def doctor(root: Path, as_json: bool) -> None:
    """Check the daemon, file and socket privacy, indexes, spool, disk, watcher and each
    installed agent client's hooks and MCP server; print the fix for each problem (exit 1
    when something is broken)."""
    from . import doctor as checks

    found = checks.run(root)
    report = checks.to_dict(root, found)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(f"lintaid doctor: {root}")
        for check in found:
            label = "FAIL" if not check.ok else "warn" if check.warn else "ok"
            click.echo(f"  {label:<5} {check.name:<28} {check.detail}")
            if check.fix and (not check.ok or check.warn):
                click.echo(f"  {'':<5} {'':<28} fix: {check.fix}")
        problems = report["problems"]
        click.echo(f"{problems} problem{'s' if problems != 1 else ''} found" if problems
                   else "no problems found")
    if not report["ok"]:
        sys.exit(EXIT_ERROR)


# -- service managers --------------------------------------------------------------------------
@main.group()
def service() -> None:
    """Run the project's daemon under systemd (Linux) or launchd (macOS)."""


def _service_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--manager", type=click.Choice(["systemd", "launchd"]), default=None,
                      help="The service manager (default: this system's).")(fn)
    return project_option(fn)


def _service_plan(root: Path, manager: str | None) -> Any:
    from .service import ServiceError, plan

    try:
        return plan(root, manager)
    except ServiceError as err:
        fail(str(err))


@service.command(name="install")
@_service_options
@click.option("--dry-run", is_flag=True, help="Print the file and the commands; change nothing.")
def service_install(root: Path, manager: str | None, dry_run: bool) -> None:
    """Write the unit (or LaunchAgent) for this project, enable and start it."""
    from .service import ServiceError, install

    p = _service_plan(root, manager)
    if dry_run:
        click.echo(f"# {p.path}")
        click.echo(p.text.rstrip("\n"))
        click.echo(f"# then, for {root}:")
        for command in p.enable:
            click.echo(" ".join(command))
        return
    try:
        install(root, p, stop_running=lambda: stop_daemon(root), say=click.echo)
    except ServiceError as err:
        fail(str(err), EXIT_UNAVAILABLE)
    if p.manager == "systemd":
        click.echo(f"next: `lintaid service status` or `journalctl --user -u {p.name}`; "
                   "`loginctl enable-linger` keeps it running while you are logged out")
    else:
        click.echo(f"next: `lintaid service status`; logs in {paths.log_dir(root)}")


@service.command(name="uninstall")
@_service_options
@click.option("--dry-run", is_flag=True, help="Print the commands; change nothing.")
def service_uninstall(root: Path, manager: str | None, dry_run: bool) -> None:
    """Stop and disable this project's service, and remove its file."""
    from .service import ServiceError, uninstall

    p = _service_plan(root, manager)
    if dry_run:
        for command in p.disable:
            click.echo(" ".join(command))
        click.echo(f"rm {p.path}  # unless other projects' services use it")
        return
    try:
        uninstall(p, say=click.echo)
    except ServiceError as err:
        fail(str(err), EXIT_UNAVAILABLE)


@service.command(name="status")
@_service_options
@json_flag
def service_status(root: Path, manager: str | None, as_json: bool) -> None:
    """Whether this project's service is installed, enabled and running."""
    from .service import ServiceError, status

    p = _service_plan(root, manager)
    try:
        info = status(p)
    except ServiceError as err:
        if as_json:
            click.echo(json.dumps({"manager": p.manager, "name": p.name, "file": str(p.path),
                                   "installed": p.path.exists(), "error": str(err)}))
        fail(str(err), EXIT_UNAVAILABLE)
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"{p.manager} service {p.name}")
    click.echo(f"  file     {p.path} ({'present' if info['installed'] else 'absent'})")
    if p.manager == "systemd":
        click.echo(f"  enabled  {info['enabled']}")
        click.echo(f"  state    {info.get('ActiveState', '?')} ({info.get('SubState', '?')}), "
                   f"pid {info.get('MainPID') or '-'}, restarts {info.get('NRestarts') or 0}")
        click.echo(f"  logs     {info['logs']}")
    else:
        click.echo(f"  loaded   {'yes' if info['loaded'] else 'no'}")
        click.echo(f"  state    {'running' if info['active'] else 'not running'}, "
                   f"pid {info.get('pid') or '-'}")
    if not info["active"]:
        sys.exit(EXIT_UNAVAILABLE)


def run() -> None:
    """The console script: no traceback ever reaches a person, only one line."""
    try:
        main()
    except (KeyboardInterrupt, BrokenPipeError):
        sys.exit(130)
    except Exception as err:  # a bug: say what, where the log is, and stop
        message = f"{type(err).__name__}: {err}".encode("utf-8", "replace").decode()
        print(f"lintaid: unexpected error: {message}", file=sys.stderr)
        sys.exit(EXIT_ERROR)
