"""Bulletin board: how soon a post made through one MCP client is seen by another.

Starts a daemon process for a temporary project and two ``lintaid-mcp`` processes, spoken to
in MCP's JSON-RPC lines as an agent client does (clientInfo ``claude-code`` and ``codex``).
For each of N posts, client B has a ``board_read`` waiting (``wait`` 25 s, after the last
sequence it saw) when client A sends ``board_post``; measured:
  * post-to-visible: from A writing its ``tools/call`` to B reading the answer holding the post;
  * post acknowledged: from A writing its ``tools/call`` to A reading its own answer;
  * catch-up read: B's ``board_read`` after a sequence with nothing waited for (a poll).
Prints median and p99 of each, in milliseconds.

    python benchmarks/board.py [--posts 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from lintaid_client import connection

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}}


class Shim:
    """One ``lintaid-mcp`` process, spoken to one JSON-RPC line at a time."""

    def __init__(self, root: Path, name: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lintaid_client.mcp", "--project", str(root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.next_id = 1
        self.request("initialize", {**INIT, "clientInfo": {"name": name, "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write((json.dumps(message) + "\n").encode())
        self.stdin.flush()

    def start(self, method: str, params: dict[str, Any]) -> int:
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def answer(self, rid: int) -> dict[str, Any]:
        reply = json.loads(self.stdout.readline())
        if reply.get("id") != rid or "result" not in reply:
            raise SystemExit(f"unexpected answer: {reply}")
        result: dict[str, Any] = reply["result"]
        if result.get("isError"):
            raise SystemExit(f"tool error: {result}")
        return result

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.answer(self.start(method, params))

    def tool(self, name: str, args: dict[str, Any]) -> int:
        return self.start("tools/call", {"name": name, "arguments": args})

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait(30)


def _seen(shim: Shim, rid: int, box: dict[str, Any]) -> None:
    """Read the waiting read's answer, and when it came."""
    box["seen"] = shim.answer(rid)
    box["at"] = time.perf_counter()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def show(label: str, seconds: list[float]) -> None:
    ms = [s * 1000 for s in seconds]
    print(f"  {label:<22} p50 {statistics.median(ms):7.2f} ms   p99 {pct(ms, 0.99):7.2f} ms"
          f"   (n={len(ms)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lintaid-bench-board-"))
    root = work / "proj"
    root.mkdir()
    runtime = work / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "LINTAID_NO_WATCH": "1",
           "LINTAID_NO_AUTOSTART": "1"}
    env.pop("LINTAID_PROJECT", None)
    daemon = subprocess.Popen(
        [sys.executable, "-m", "lintaid", "start", "--foreground", "--project", str(root)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)  # this process's pings find the same socket
    a = b = None
    try:
        deadline = time.monotonic() + 60
        while connection.ping(root, timeout=0.5) is None:
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the daemon did not start")
            time.sleep(0.05)
        a, b = Shim(root, "claude-code", env), Shim(root, "codex", env)
        a.answer(a.tool("board_open", {"key": "bench", "title": "benchmark"}))
        b.answer(b.tool("board_read", {"board_id": "bench"}))  # B's first call: connected
        visible, acked, polls = [], [], []
        last = 0
        for n in range(args.posts):
            waiting = b.tool("board_read", {"board_id": "bench", "after_sequence": last,
                                            "wait": 25})
            time.sleep(0.005)  # B's read reaches the daemon and waits there
            box: dict[str, Any] = {}
            watcher = threading.Thread(target=_seen, args=(b, waiting, box))
            watcher.start()
            started = time.perf_counter()
            posted = a.tool("board_post", {"content": f"status note {n}: working on step {n}",
                                           "request_id": f"bench-{n}"})
            a.answer(posted)
            acked.append(time.perf_counter() - started)
            watcher.join(60)
            seen = box["seen"]
            visible.append(box["at"] - started)
            last = seen["structuredContent"]["last_sequence"]
            if seen["structuredContent"]["posts"][-1]["content"] != f"status note {n}: " \
                    f"working on step {n}":
                raise SystemExit(f"B saw the wrong post: {seen}")
            started = time.perf_counter()
            b.answer(b.tool("board_read", {"board_id": "bench", "after_sequence": last}))
            polls.append(time.perf_counter() - started)
        print(f"bulletin board, two MCP clients (claude-code posts, codex reads), "
              f"{args.posts} posts")
        show("post-to-visible", visible)
        show("post acknowledged", acked)
        show("catch-up read (poll)", polls)
    finally:
        for shim in (a, b):
            if shim is not None:
                shim.close()
        daemon.terminate()
        daemon.wait(60)


if __name__ == "__main__":
    main()
