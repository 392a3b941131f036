"""The cost of one index per user: ingest, memory, threads, disk and search at 10,000 records.

lintaid keeps each user's records in a Tantivy index of their own, so one user's ranking never
depends on another's records (``lintaid/store/user_index.py``). This measures what that costs
against the number of users holding the records, in process through the real ``MemoryStore``,
``Writer`` and ``Reader`` (SQLite and Tantivy in a temporary folder), each configuration in a
fresh process so resident memory is its own:

* ingest: ``--records`` notes (``benchmarks/client.py``'s corpus) written 50 per writer job and
  searchable at the end; ``grouped``: each job holds one user's records (an ``add_many`` call),
  ``interleaved``: each job holds records of users drawn at random (the worst case: a pass of
  the indexer commits once per user it touched);
* resident memory (RSS) and threads after ingest, and after reopening the store (a restart);
* index size on disk; search p50/p99 over ``--queries`` searches (top 5) of random users.

Run it against an older checkout (one shared index) with ``PYTHONPATH`` pointing there to
compare. No assertions; figures only.

    python benchmarks/user_indexes.py [--records 10000] [--users 1,10,100,1000]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def measure(records: int, users: int, pattern: str, queries: int) -> dict[str, float]:
    import psutil

    sys.path.insert(0, str(BENCH))
    from client import Corpus
    from lintaid.capture.record import NewRecord
    from lintaid.search import Reader, SearchRequest
    from lintaid.store.memory import MemoryStore
    from lintaid.writer import Writer

    proc = psutil.Process()
    corpus = Corpus()
    rnd = random.Random(1)
    owners = [f"user-{i}" for i in range(users)]
    if pattern == "grouped":
        order = [owners[(i // 50) % users] for i in range(records)]
    else:
        order = [rnd.choice(owners) for _ in range(records)]
    texts = [corpus.text() for _ in range(records)]
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="lintaid-users-") as tmp:
        root = Path(tmp)
        rss0 = proc.memory_info().rss
        store = MemoryStore(root)
        writer = Writer(store)
        writer.start()
        started = time.perf_counter()
        futures = []
        for start in range(0, records, 50):
            batch = [NewRecord(content=texts[i], kind="note", source="bench", user_id=order[i],
                               created_at=1_700_000_000.0 + i)
                     for i in range(start, min(records, start + 50))]
            futures.append(writer.submit(
                lambda batch=batch: [store.put(r, "bench") for r in batch]))
        for future in futures:
            future.result()
        reader = Reader(memory=store, wait_visible=writer.wait_visible)
        assert reader.settle(getattr(futures[-1], "token", None), wait_s=3600)
        out["ingest_s"] = time.perf_counter() - started
        out["rss_mib"] = (proc.memory_info().rss - rss0) / 2**20
        out["threads"] = proc.num_threads()
        writer.stop()
        store.close()
        index = root / ".lint-ai" / "index" / "memory"
        out["disk_mib"] = sum(f.stat().st_size for f in index.rglob("*") if f.is_file()) / 2**20
        rss1 = proc.memory_info().rss
        started = time.perf_counter()
        store = MemoryStore(root)
        out["reopen_s"] = time.perf_counter() - started
        writer = Writer(store)
        writer.start()
        reader = Reader(memory=store, wait_visible=writer.wait_visible)
        qrnd = random.Random(5)
        latencies = []
        for n in range(queries + 20):
            req = SearchRequest(query=corpus.query(qrnd), user_id=qrnd.choice(owners),
                                top_k=5, store="memory")
            t = time.perf_counter()
            reader.search(req)
            if n >= 20:  # warm-up
                latencies.append(time.perf_counter() - t)
        out["reopen_rss_mib"] = (proc.memory_info().rss - rss1) / 2**20
        out["reopen_threads"] = proc.num_threads()
        latencies.sort()
        out["search_p50_ms"] = 1000 * latencies[len(latencies) // 2]
        out["search_p99_ms"] = 1000 * latencies[int(len(latencies) * 0.99)]
        out["search_mean_ms"] = 1000 * statistics.fmean(latencies)
        writer.stop()
        store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--users", default="1,10,100,1000")
    parser.add_argument("--patterns", default="grouped,interleaved")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # users:pattern, in a child process
    args = parser.parse_args()
    if args.one:
        users, pattern = args.one.split(":")
        print(json.dumps(measure(args.records, int(users), pattern, args.queries)))
        return
    print(f"{args.records:,} records; one process per row\n")
    print("| users | writes | ingest s | RSS after ingest MiB | threads | reopen s | RSS after "
          "reopen + searches MiB | threads | index MiB | search p50 ms | p99 ms |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for pattern in args.patterns.split(","):
        for users in (int(u) for u in args.users.split(",")):
            if users == 1 and pattern == "interleaved":
                continue  # the same as grouped
            child = subprocess.run(
                [sys.executable, __file__, "--records", str(args.records), "--queries",
                 str(args.queries), "--one", f"{users}:{pattern}"],
                capture_output=True, text=True, check=True)
            r = json.loads(child.stdout.strip().splitlines()[-1])
            print(f"| {users:,} | {pattern} | {r['ingest_s']:.1f} | {r['rss_mib']:.0f} | "
                  f"{r['threads']:.0f} | {r['reopen_s']:.2f} | {r['reopen_rss_mib']:.0f} | "
                  f"{r['reopen_threads']:.0f} | {r['disk_mib']:.1f} | "
                  f"{r['search_p50_ms']:.2f} | {r['search_p99_ms']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
