"""The web viewer against a real daemon: how long its pages take to serve at 1,000 and 10,000
records, and how soon an open timeline hears of a new write.

    python benchmarks/viewer.py                        # 1,000 and 10,000 records
    python benchmarks/viewer.py --sizes 2000 --requests 100

Starts a daemon process (``LINTAID_NO_WATCH=1``) in a temporary project, grows it through
``Memory.add_many`` (a tenth of the records state a setting, so chains grow long: one subject
is set again every 25 records of its kind), opens the viewer with ``lintaid ui --no-open``
and times whole HTTP requests from this process over the loopback address: the timeline's
first page, the same filtered to superseded records, a search (history on and off), a
record page (claims, chains, relations, provenance, audit), a forgotten record's page, the
conflicts and review page, the audit listing (its newest page, and filtered to an actor with
one change among them all) and the status page. The live
figure is the time from an acknowledged add to the ``change`` event on an open
``/events`` stream. Prints figures; no assertions on timing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

from lintaid_client import Memory

TOPICS = ["billing", "deploy", "gateway", "retry", "postgres", "redis", "queue", "auth",
          "cache", "search", "ledger", "helm", "kafka", "staging", "backup"]


def text(i: int, rnd: random.Random) -> str:
    a, b = rnd.sample(TOPICS, 2)
    if i % 10 == 0:  # a setting: the same subject again and again, a long chain
        return f"The {a} timeout is {rnd.randrange(1, 300) * 10} ms."
    return (f"Note {i}: the {a} {b} decision was reviewed by team {i % 97}; "
            f"see the {b} runbook for the {a} rollout steps.")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))]


def fmt(values: list[float]) -> str:
    return (f"p50 {percentile(values, 50) * 1000:7.2f} ms  p95 {percentile(values, 95) * 1000:7.2f}"
            f" ms  mean {statistics.fmean(values) * 1000:7.2f} ms  (n={len(values)})")


class Client:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.port = int(parts.port or 80)
        self.base = parts.path.rstrip("/")
        self.host = f"127.0.0.1:{self.port}"

    def get(self, path: str) -> tuple[float, int, int]:
        started = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request("GET", self.base + path, headers={"Host": self.host})
        response = conn.getresponse()
        body = response.read()
        conn.close()
        return time.perf_counter() - started, response.status, len(body)


def live_latency(client: Client, mem: Memory, rounds: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", client.port, timeout=60)
    conn.request("GET", client.base + "/events", headers={"Host": client.host})
    stream = conn.getresponse()
    stream.readline()
    stream.readline()
    out = []
    for i in range(rounds):
        started = time.perf_counter()
        mem.add(f"Live note {i}: the deploy window moved to {i % 24}:00.")
        while stream.readline() != b"event: change\n":
            pass
        out.append(time.perf_counter() - started)
        stream.readline()  # data
        stream.readline()  # blank
    conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--requests", type=int, default=50, help="requests per page and size")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    root = Path(tempfile.mkdtemp(prefix="lintaid-viewer-bench-"))
    env = {**os.environ, "LINTAID_NO_WATCH": "1"}
    env.pop("LINTAID_PROJECT", None)
    run = [sys.executable, "-m", "lintaid"]
    subprocess.run([*run, "start", "--project", str(root)], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    try:
        out = subprocess.run([*run, "ui", "--no-open", "--json", "--project", str(root)],
                             check=True, env=env, capture_output=True, text=True).stdout
        client = Client(json.loads(out)["url"])
        rnd = random.Random(3)
        print(f"lintaid viewer benchmark: {args.requests} requests per page, "
              f"python {sys.version.split()[0]}")
        with Memory(root, autostart=False, timeout=120) as mem:
            have = 0
            for size in sizes:
                while have < size:
                    n = min(500, size - have)
                    mem.add_many([text(have + k, rnd) for k in range(n)])
                    have += n
                record = mem.search("gateway timeout ms", top_k=1)["results"][0]["id"]
                if size == sizes[0]:  # one forgotten record (its page), one change by "cli"
                    gone = mem.add(f"A note to forget, {size}.")["results"][0]["id"]
                    subprocess.run([*run, "forget", gone, "--project", str(root)], check=True,
                                   env=env, stdout=subprocess.DEVNULL)
                pages = {
                    "timeline": "/",
                    "timeline, superseded only": "/?status=superseded",
                    "search": "/search?q=gateway+timeout",
                    "search, history": "/search?q=gateway+timeout&history=1",
                    "record (chains, audit)": f"/record/{quote(record)}",
                    "forgotten record": f"/record/{quote(gone)}",
                    "conflicts & review": "/conflicts",
                    "audit, newest page": "/audit",
                    "audit, actor matching 1": "/audit?actor=cli",
                    "status": "/status",
                }
                print(f"\n{size} records")
                for name, path in pages.items():
                    times = []
                    for _ in range(args.requests):
                        took, status, length = client.get(path)
                        assert status == 200, (path, status)
                        times.append(took)
                    print(f"  {name:<26} {fmt(times)}  {length / 1024:6.1f} KiB")
                print(f"  {'live: add -> change event':<26} "
                      f"{fmt(live_latency(client, mem, min(args.requests, 50)))}")
    finally:
        subprocess.run([*run, "stop", "--project", str(root)], env=env,
                       stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
