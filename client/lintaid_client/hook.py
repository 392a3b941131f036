"""``lintaid-hook PROVIDER EVENT``: hand one agent event to the daemon, print what to inject.

Contract with the agent: read one JSON object on stdin, print one JSON object on stdout
(``{}`` when there is nothing to say), exit 0, and finish within the budget
(``LINTAID_HOOK_TIMEOUT_MS``, default 1000 ms) whatever happens. When the daemon is down or
slow the event goes to the spool, so no capture is lost, and (unless
``LINTAID_NO_AUTOSTART=1``) the daemon is started detached.

Imports only the standard library, pyzmq and msgpack: this runs on every agent event.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from . import lock, paths, protocol, spool
from .connection import Connection, spawn_daemon

DEFAULT_BUDGET_MS = 1000
MAX_STDIN_BYTES = 8 * 1024 * 1024
# Time kept back from the budget for spooling and printing after a failed round trip.
RESERVE_S = 0.15


def budget_seconds() -> float:
    try:
        ms = int(os.environ.get("LINTAID_HOOK_TIMEOUT_MS", DEFAULT_BUDGET_MS))
    except ValueError:
        ms = DEFAULT_BUDGET_MS
    return min(max(ms, 200), 60_000) / 1000.0


def _emit(output: Any) -> None:
    sys.stdout.write(json.dumps(output if isinstance(output, dict) else {}))
    sys.stdout.write("\n")
    sys.stdout.flush()


def _bail(*_: object) -> None:
    """Last-resort guard: the budget ran out somewhere unexpected; answer and leave."""
    try:
        _emit({})
    finally:
        os._exit(0)


def daemon_alive(root: Path) -> bool:
    """Return True when some process holds the project's daemon lock (running or starting)."""
    return lock.is_held(paths.lock_path(root))


def _parse_payload(data: bytes) -> dict[str, Any] | None:
    if not data or len(data) > MAX_STDIN_BYTES:
        return None
    try:
        payload = json.loads(data)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def _resolve_root(payload: dict[str, Any]) -> Path:
    cwd = payload.get("cwd")
    start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None
    return paths.find_project_root(start)


def _spool_and_wake(root: Path, args: dict[str, Any], start: bool) -> None:
    try:
        paths.ensure_state_dir(root)
        spool.write(root, "hook", args)
    except OSError as err:  # disk full, read-only tree: say so once, on stderr
        print(f"lintaid-hook: could not spool event: {err}", file=sys.stderr)
        return
    if start and os.environ.get("LINTAID_NO_AUTOSTART") != "1":
        try:
            spawn_daemon(root)
        except OSError as err:
            print(f"lintaid-hook: could not start daemon: {err}", file=sys.stderr)


def answer(provider: str, event: str, data: bytes) -> dict[str, Any]:
    """What the agent must read on stdout for one event whose stdin was ``data``.

    Never raises for a daemon that is down, slow or refusing: the event is spooled instead.
    """
    started = time.monotonic()
    budget = budget_seconds()
    payload = _parse_payload(data)
    if payload is None:
        return {}
    root = _resolve_root(payload)
    args = {"provider": provider, "event": event, "payload": payload}
    if not daemon_alive(root):
        _spool_and_wake(root, args, start=True)
        return {}
    remaining = budget - (time.monotonic() - started) - RESERVE_S
    if remaining <= 0.05:
        _spool_and_wake(root, args, start=False)
        return {}
    conn = Connection(root)
    try:
        result = conn.call("hook", args, timeout=remaining)
    except protocol.DaemonUnavailable:
        _spool_and_wake(root, args, start=True)
        return {}
    except protocol.DaemonTimeout:
        # It may still process the event; ids derive from content, so the replay is harmless.
        _spool_and_wake(root, args, start=False)
        return {}
    except protocol.ProtocolMismatch as err:
        # A daemon of another version: keep the event for a daemon that speaks ours.
        print(f"lintaid-hook: {err.message}; run `lintaid stop` to restart it", file=sys.stderr)
        _spool_and_wake(root, args, start=False)
        return {}
    except protocol.RemoteError as err:
        print(f"lintaid-hook: {err.code}: {err.message}", file=sys.stderr)
        if err.retryable:  # disk full, daemon stopping: keep the event for later
            _spool_and_wake(root, args, start=False)
        return {}
    finally:
        conn.close()
    output = result.get("output") if isinstance(result, dict) else None
    return output if isinstance(output, dict) else {}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGALRM, _bail)
    signal.setitimer(signal.ITIMER_REAL, budget_seconds())
    if len(argv) != 2:
        print("usage: lintaid-hook PROVIDER EVENT   (e.g. lintaid-hook claude-code Stop)",
              file=sys.stderr)
        _emit({})
        os._exit(0)
    try:
        output = answer(argv[0], argv[1], sys.stdin.buffer.read(MAX_STDIN_BYTES + 1))
    except Exception as err:  # fail open: the agent must never be blocked by memory
        print(f"lintaid-hook: {type(err).__name__}: {err}", file=sys.stderr)
        output = {}
    signal.setitimer(signal.ITIMER_REAL, 0)
    _emit(output)
    # Skip interpreter teardown (zmq context term, module GC): it only costs time here.
    os._exit(0)


if __name__ == "__main__":
    main()
