"""How fast ``lintaid-mcp`` answers the MCP handshake, from process start.

Prints median and p99 over N runs of, interleaved so machine noise hits all alike:
  * the floor: ``python -I -S -c pass`` (a bare interpreter, no site);
  * ``python -c pass`` in this virtual environment (site and its ``.pth`` files);
  * ``lintaid-mcp`` (the console script), process start to the ``initialize`` answer;
  * the same process on to the ``tools/list`` answer (``notifications/initialized`` and
    ``tools/list`` sent once ``initialize`` is answered, as a client does): the session ready.
No daemon runs: the handshake and the listing never touch it.

    python benchmarks/mcp_initialize.py [--runs 40]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "benchmark", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def line(message: dict[str, object]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def timed_pass(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - started


def timed_shim(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(seconds to the initialize answer, seconds to the tools/list answer)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line(INITIALIZE))
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    initialized = time.perf_counter() - started
    if reply.get("id") != 1 or "result" not in reply:
        raise SystemExit(f"unexpected initialize answer: {reply}")
    proc.stdin.write(line(INITIALIZED) + line(TOOLS_LIST))
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    listed = time.perf_counter() - started
    if reply.get("id") != 2 or not reply.get("result", {}).get("tools"):
        raise SystemExit(f"unexpected tools/list answer: {reply}")
    proc.stdin.close()
    proc.wait(timeout=30)
    return initialized, listed


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def report(name: str, values: list[float], floor: float) -> str:
    med = statistics.median(values)
    return (f"{name:<48} median {med * 1000:7.1f} ms   p99 {pct(values, 0.99) * 1000:7.1f} ms"
            f"   {med / floor:5.2f}x floor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    shim = Path(sys.executable).parent / "lintaid-mcp"
    if not shim.exists():
        raise SystemExit(f"{shim} not found: install the project (pip install -e .) first")
    floor_cmd = [sys.executable, "-I", "-S", "-c", "pass"]
    site_cmd = [sys.executable, "-c", "pass"]
    with tempfile.TemporaryDirectory(prefix="lintaid-bench-mcp-") as tmp:
        root = Path(tmp) / "proj"
        root.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "LINTAID_PROJECT"}
        shim_cmd = [str(shim), "--project", str(root)]
        timed_shim(shim_cmd, env)  # warm the file cache and the byte-code
        floor: list[float] = []
        site: list[float] = []
        init: list[float] = []
        ready: list[float] = []
        for _ in range(args.runs):
            floor.append(timed_pass(floor_cmd))
            site.append(timed_pass(site_cmd))
            first, second = timed_shim(shim_cmd, env)
            init.append(first)
            ready.append(second)
    base = statistics.median(floor)
    print(f"{args.runs} interleaved runs, {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(report("python -I -S -c pass (floor)", floor, base))
    print(report("python -c pass (virtual environment, site)", site, base))
    print(report("lintaid-mcp: start to initialize answer", init, base))
    print(report("lintaid-mcp: start to tools/list answer", ready, base))


if __name__ == "__main__":
    main()
