"""``lintaid-mcp``: an MCP stdio server whose tools forward to the project's lintaid daemon.

It answers ``initialize`` at once: the standard library's JSON-RPC (``mcp_rpc``) is all that
loads before; the tools (``mcp_tools``, built from the op declarations) load on the first
``tools/list``, and pyzmq, msgpack and the daemon only on the first tool call (which starts
the daemon, detached, if it is down). The process exits on stdin EOF, once the calls it was
given are answered, and as soon as its parent process dies. Nothing but the protocol ever
reaches stdout: file descriptor 1 is pointed at stderr while serving.

Project root (found on the first tool call): ``--project DIR``; else ``LINTAID_PROJECT``; else
found (as the hooks find it) from the folder in the environment variable named by
``--project-env VAR``, when it is set (``lintaid install`` passes the agent client's project
variable); else found from the working directory.

Environment: ``LINTAID_MCP_LOG`` (debug, info, warning or error: log lines on stderr; none by
default), ``LINTAID_MCP_TIMEOUT`` (seconds to wait for each daemon answer; default 10),
``LINTAID_NO_AUTOSTART=1`` (never start the daemon; tool calls fail until it runs),
``LINTAID_CLIENT`` (the agent client board posts name; default: the peer's ``clientInfo``),
``LINTAID_SESSION_ID``, else the variable ``--session-env VAR`` names (the agent session the
board tools act for; default: an id of this connection's own).
"""

# ruff: noqa: E402  (the parent pid is read before anything else)
from __future__ import annotations

import os

_PARENT_PID = os.getppid()  # read first, so a parent that dies while we start still counts

import argparse
import re
import sys
import threading
import time
from typing import IO, TYPE_CHECKING

from . import __version__
from .mcp_rpc import Log, Server, Tools

if TYPE_CHECKING:
    from pathlib import Path

INSTRUCTIONS = """\
Project memory for this repository, kept by the lintaid daemon: decisions, outcomes and notes \
captured from earlier agent sessions, plus an index of the project's files. Search before \
re-deriving something. Every hit carries a status: trust current; check conflicted and \
partly_superseded; superseded and expired ones appear only in history searches (marked \
historical). Memory hits also carry a staleness level: fresh, aging (verify), stale (check \
before relying on it) or expired. Use get_memory for a hit's full text, claims and \
provenance. Record durable decisions with add_memory; when you have checked that an aging or \
stale memory still holds, say so with confirm_memory; when a fact changes, retire the old \
memory with supersede_memory rather than adding a contradicting one. For short status notes \
to other agents working on this repository at the same time (what you are doing, what to \
leave alone, what you found), use the bulletin board: board_open a key, board_post, and \
board_read with after_sequence to catch up; board posts are not memory."""

DEFAULT_TIMEOUT = 10.0


def resolve_root(project: str | None, project_env: str | None = None) -> Path:
    """The project root, as the module docstring orders the sources. Called on the first tool
    call: the handshake needs no project (nor ``paths``' imports)."""
    from pathlib import Path

    from . import paths

    if project:
        root = Path(project).expanduser().resolve()
        if not root.is_dir():
            raise paths.ProjectError(f"--project {project}: not a folder")
        return root
    start = os.environ.get(project_env) if project_env else None
    if start and not os.path.isdir(start):
        start = None  # a stale variable: fall back to the working directory
    return paths.find_project_root(start or None)


def watch_parent(interval: float = 1.0, parent: int | None = None) -> threading.Thread:
    """Exit at once when the parent process dies (we get re-parented): no orphaned shims."""
    parent = _PARENT_PID if parent is None else parent
    if os.getppid() != parent:
        os._exit(0)

    def run() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(0)

    thread = threading.Thread(target=run, name="lintaid-mcp-parent-watch", daemon=True)
    thread.start()
    return thread


def claim_stdout() -> IO[bytes]:
    """A private handle on the protocol stream; fd 1 then points at stderr, so a stray
    print (ours, a library's or a child's) can never corrupt the protocol."""
    sys.stdout.flush()
    wire = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr at all: stray output goes nowhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    return os.fdopen(wire, "wb")


def _timeout() -> float:
    try:
        value = float(os.environ.get("LINTAID_MCP_TIMEOUT") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def client_label(name: str | None) -> str | None:
    """The agent client's name as board posts carry it: ``--client``, ``LINTAID_CLIENT`` or
    the peer's ``clientInfo.name``, lowercased, its ``-mcp-client`` suffix dropped
    (``codex-mcp-client`` -> ``codex``), at most 64 characters of ``[a-z0-9._-]``."""
    if not name:
        return None
    text = re.sub(r"[^a-z0-9._-]+", "-", name.strip().lower()).strip("-")
    text = re.sub(r"-?mcp-client$", "", text) or text
    return text[:64] or None


def agent_session(session_env: str | None = None) -> str | None:
    """The agent session this server serves, when its environment says: ``LINTAID_SESSION_ID``,
    else the variable ``--session-env`` names (``lintaid install`` passes the agent client's,
    where it gives its MCP servers the id its hooks get). None: the tools use the
    connection's own id."""
    for name in ("LINTAID_SESSION_ID", session_env):
        value = (os.environ.get(name) or "").strip() if name else ""
        if value:
            return value[:200]
    return None


def build_server(project: str | None, project_env: str | None, out: IO[bytes],
                 log: Log, client: str | None = None,
                 session_env: str | None = None) -> Server:
    autostart = os.environ.get("LINTAID_NO_AUTOSTART") != "1"
    timeout = _timeout()
    named = client or os.environ.get("LINTAID_CLIENT")
    session = agent_session(session_env)

    def root() -> Path:
        found = resolve_root(project, project_env)
        log("info", f"project {found}")
        return found

    def tools() -> Tools:
        from .mcp_tools import Toolbox

        return Toolbox(root, log=log, autostart=autostart, timeout=timeout,
                       client=lambda: client_label(named or server.client_name),
                       session_id=session)

    server = Server(name="lintaid", version=__version__, instructions=INSTRUCTIONS,
                    tools=tools, out=out, log=log)
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="lintaid-mcp", description="MCP stdio server for a project's lintaid memory.")
    parser.add_argument("--project", metavar="DIR", help="the project root")
    parser.add_argument("--project-env", metavar="VAR",
                        help="find the project from the folder in this environment variable "
                             "(the agent client's project variable), when it is set")
    parser.add_argument("--session-env", metavar="VAR",
                        help="the environment variable holding the agent's session id, for "
                             "the board tools (default: LINTAID_SESSION_ID, else none)")
    parser.add_argument("--client", metavar="NAME",
                        help="the agent client this server serves, as board posts name it "
                             "(default: LINTAID_CLIENT, else the client's own name)")
    parser.add_argument("--version", action="version", version=f"lintaid-mcp {__version__}")
    args = parser.parse_args(argv)
    if args.project and not os.path.isdir(os.path.expanduser(args.project)):
        parser.error(f"--project {args.project}: not a folder")
    log = Log(os.environ.get("LINTAID_MCP_LOG"), sys.stderr)
    watch_parent()
    code = 0
    try:
        server = build_server(args.project, args.project_env, claim_stdout(), log,
                              args.client, args.session_env)
        server.serve(sys.stdin.buffer)
    except KeyboardInterrupt:
        pass
    except Exception:  # never a traceback on stdout; stderr gets it when asked
        log("error", "the MCP server stopped", trace=True)
        code = 1
    # A worker may still wait on the daemon past the drain bound: do not let it hold the exit.
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
