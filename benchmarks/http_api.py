"""HTTP search beside socket search, same daemon, same run: p50/p99 of each.

    python benchmarks/http_api.py                      # 2,000 records, 300 searches each way
    python benchmarks/http_api.py --records 10000 --requests 1000

Starts a daemon process (``LINTAID_NO_WATCH=1``) in a temporary project, adds the records
through ``Memory.add_many``, starts the HTTP API with ``lintaid http --json`` and then, for
each query in turn, searches once over the ZeroMQ socket (``Connection.call``, the Python
client's path) and once over HTTP (``POST /ops/search`` and mem0's ``POST /search``, a new
loopback connection each: the server speaks HTTP/1.0 without keep-alive), the ways taking
turns so they share the machine's load. The floors are a socket ``ping`` and
``GET /health``. Prints figures; no assertions on timing.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's folder comes first on the path, and this file is named after
# the standard library's ``http``: leave the folder out, so ``http.client`` is the library's.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import argparse  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

from lintaid_client import Memory, connection  # noqa: E402

TOPICS = ["billing", "deploy", "gateway", "retry", "postgres", "redis", "queue", "auth",
          "cache", "search", "ledger", "helm", "kafka", "staging", "backup"]


def text(i: int, rnd: random.Random) -> str:
    a, b = rnd.sample(TOPICS, 2)
    if i % 10 == 0:
        return f"The {a} timeout is {rnd.randrange(1, 300) * 10} ms."
    return (f"Note {i}: the {a} {b} decision was reviewed by team {i % 97}; "
            f"see the {b} runbook for the {a} rollout steps.")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))]


def fmt(values: list[float]) -> str:
    return (f"p50 {percentile(values, 50) * 1000:7.2f} ms  p99 {percentile(values, 99) * 1000:7.2f}"
            f" ms  mean {statistics.fmean(values) * 1000:7.2f} ms  (n={len(values)})")


class Http:
    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.headers = {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {token}",
                        "Content-Type": "application/json"}

    def request(self, method: str, path: str, body: Any = None) -> Any:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path, body=json.dumps(body) if body is not None else None,
                         headers=self.headers)
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
        return json.loads(data)


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=300, help="searches each way")
    parser.add_argument("--top-k", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="lintaid-http-bench-"))
    env = {**os.environ, "LINTAID_NO_WATCH": "1"}
    env.pop("LINTAID_PROJECT", None)
    env.pop("LINTAID_HTTP_PORT", None)
    run = [sys.executable, "-m", "lintaid"]
    subprocess.run([*run, "start", "--project", str(root)], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    try:
        rnd = random.Random(7)
        with Memory(root, autostart=False, timeout=120) as mem:
            for start in range(0, args.records, 500):
                mem.add_many([text(i, rnd) for i in range(start, min(start + 500,
                                                                      args.records))])
        out = subprocess.run([*run, "http", "--json", "--project", str(root)], check=True,
                             env=env, capture_output=True, text=True).stdout
        info = json.loads(out)
        api = Http(info["port"], Path(info["token_file"]).read_text().strip())
        queries = [f"{a} {b} timeout" for a in TOPICS for b in TOPICS if a != b]
        rnd.shuffle(queries)
        figures: dict[str, list[float]] = {k: [] for k in (
            "socket search", "HTTP POST /ops/search", "HTTP POST /search (mem0)",
            "socket ping", "HTTP GET /health")}
        with connection.Connection(root) as conn:
            for _ in range(20):  # warm both paths
                conn.call("search", {"query": "gateway retry", "top_k": args.top_k})
                api.request("POST", "/ops/search", {"query": "gateway retry"})
            for i in range(args.requests):
                query = queries[i % len(queries)]
                ways: list[tuple[str, Callable[[], Any]]] = [
                    ("socket search", lambda q=query: conn.call(  # type: ignore[misc]
                        "search", {"query": q, "top_k": args.top_k})),
                    ("HTTP POST /ops/search", lambda q=query: api.request(  # type: ignore[misc]
                        "POST", "/ops/search", {"query": q, "top_k": args.top_k})),
                    ("HTTP POST /search (mem0)", lambda q=query: api.request(  # type: ignore[misc]
                        "POST", "/search", {"query": q, "limit": args.top_k})),
                    ("socket ping", lambda: conn.call("ping", {})),
                    ("HTTP GET /health", lambda: api.request("GET", "/health")),
                ]
                if i % 2:
                    ways.reverse()
                answers = {}
                for name, call in ways:
                    took, answers[name] = timed(call)
                    figures[name].append(took)
                socket_ids = [h["id"] for h in answers["socket search"]["results"]]
                http_ids = [h["id"] for h in answers["HTTP POST /ops/search"]["results"]]
                assert socket_ids == http_ids, (query, socket_ids, http_ids)
        print(f"lintaid HTTP benchmark: {args.records} records, {args.requests} searches each "
              f"way (top_k {args.top_k}), python {sys.version.split()[0]}, "
              f"{os.cpu_count()} cores")
        for name, values in figures.items():
            print(f"  {name:<26} {fmt(values)}")
        print("  (the same hits each way, checked per query)")
    finally:
        subprocess.run([*run, "stop", "--project", str(root)], env=env,
                       stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
