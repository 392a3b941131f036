"""Staleness lint figures against a real daemon: ``lintaid lint`` over the whole store, the
search round trip now that every hit is judged, and the file audit of a memlint export.

    python benchmarks/lint.py                        # 10,000 records, a 2,000-fact export
    python benchmarks/lint.py --sizes 10000,100000 --export 10000

Starts a daemon (``LINTAID_NO_WATCH=1``) in a temporary project, grows it through
``Memory.add_many`` with a mix of notes about people (jobs, homes, names, moves), coding
decisions (versions, settings, conventions) and turn-like records, created over two years, then
times the ``lint`` op (the whole report over the socket), searches and gets. The export is
audited in this process (``lintaid.lint.audit``: no daemon). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lintaid_client import Memory, connection, paths

DAY = 86400.0
PEOPLE = ["Priya", "Arun", "Mei", "Tomas", "Ines", "Kofi", "Lena", "Omar"]
ORGS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell"]
TOWNS = ["Delhi", "Mumbai", "Lisbon", "Berlin", "Nairobi", "Osaka", "Quito", "Oslo"]
TOOLS = ["Django", "Flask", "Redis", "Postgres", "Kafka", "Helm", "Terraform", "React"]


def fact(rnd: random.Random, i: int) -> str:
    kind = rnd.randrange(8)
    who, org, town, tool = (rnd.choice(PEOPLE), rnd.choice(ORGS), rnd.choice(TOWNS),
                            rnd.choice(TOOLS))
    return [
        f"{who} works at {org} (note {i}).",
        f"{who} left {org}; note {i}.",
        f"{who} lives in {town}, note {i}.",
        f"{who} moved from {town} to {rnd.choice(TOWNS)} (note {i}).",
        f"We pin {tool} to {rnd.randint(1, 9)}.{rnd.randint(0, 9)} for service {i % 50}.",
        f"Service {i % 50} retry attempts: {rnd.randint(1, 9)}.",
        f"Always start function names in module {i % 40} with 'm{i % 40}_'.",
        f"Debugged the {tool} timeout in service {i % 50} today (note {i}).",
    ][kind]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))]


def grow(m: Memory, rnd: random.Random, start: int, stop: int, now: float) -> None:
    for lo in range(start, stop, 500):
        m.add_many([{"content": fact(rnd, i), "created_at": now - rnd.uniform(0, 730) * DAY}
                    for i in range(lo, min(stop, lo + 500))])


def bench_store(sizes: list[int], queries: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="lintaid-lint-bench-"))
    env_cmd = [sys.executable, "-m", "lintaid", "start", "--project", str(root)]
    paths.ensure_state_dir(root)
    subprocess.run(env_cmd, check=True, capture_output=True,
                   env={**__import__("os").environ, "LINTAID_NO_WATCH": "1"})
    rnd = random.Random(5)
    now = time.time()
    try:
        with Memory(root, timeout=600) as m:
            have = 0
            for size in sizes:
                t = time.perf_counter()
                grow(m, rnd, have, size, now)
                have = size
                grown = time.perf_counter() - t
                runs = []
                for _ in range(3):
                    t = time.perf_counter()
                    report = m.lint(limit=5000)
                    runs.append(time.perf_counter() - t)
                flagged = report["counts"]["stale"] + report["counts"]["expired"]
                lat = []
                for q in range(queries):
                    t = time.perf_counter()
                    m.search(f"{TOOLS[q % len(TOOLS)]} {ORGS[q % len(ORGS)]} service",
                             top_k=5)
                    lat.append((time.perf_counter() - t) * 1000)
                ids = [r["id"] for r in report["results"][:200]]
                gets = []
                for rid in ids:
                    t = time.perf_counter()
                    m.get(rid)
                    gets.append((time.perf_counter() - t) * 1000)
                print(f"{size:>7,} records (added in {grown:.1f}s): lint {min(runs):.2f}s "
                      f"(median of 3 {statistics.median(runs):.2f}s; {report['total']:,} judged,"
                      f" {flagged:,} flagged, counts {report['counts']}); search p50 "
                      f"{percentile(lat, 50):.2f} ms p99 {percentile(lat, 99):.2f} ms; get p50 "
                      f"{percentile(gets, 50):.2f} ms")
    finally:
        with connection.Connection(root) as conn:
            try:
                conn.call("shutdown", timeout=5)
            except Exception:
                pass
        time.sleep(0.5)
        shutil.rmtree(root, ignore_errors=True)


def bench_export(n: int) -> None:
    from lintaid import lint

    rnd = random.Random(9)
    now = time.time()
    docs = [{"id": f"mem_{i:06d}", "content": fact(rnd, i),
             "created_at": now - rnd.uniform(0, 730) * DAY} for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "export.json"
        src.write_text(json.dumps(docs))
        t = time.perf_counter()
        export = lint.load_export(src, "json", now)
        loaded = time.perf_counter() - t
        t = time.perf_counter()
        result = lint.audit(export, now)
        judged = time.perf_counter() - t
        t = time.perf_counter()
        lint.enrich(export, result, Path(tmp) / "out.json")
        written = time.perf_counter() - t
    print(f"export of {n:,} facts: read and classified {loaded:.2f}s, judged {judged:.2f}s, "
          f"enriched and written {written:.2f}s; counts {result['counts']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--export", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=300)
    args = ap.parse_args()
    bench_export(args.export)
    bench_store([int(s) for s in args.sizes.split(",")], args.queries)


if __name__ == "__main__":
    main()
