"""Python client round trips against a real daemon: search latency at 10k and 100k records, and
add throughput, one caller at a time and many concurrent callers.

    python benchmarks/client.py                          # 10,000 and 100,000 records
    python benchmarks/client.py --sizes 2000,20000 --queries 300 --threads 16

Starts a daemon (``LINTAID_NO_WATCH=1``: memory only) in a temporary project, grows it to each
size through ``Memory.add`` (the API path, nothing bulk-loaded behind its back), and prints
figures. No assertions on timing.

Adds are timed three ways: one caller, one add per round trip; ``--threads`` concurrent
callers, each with its own ``Memory`` (the single writer commits whatever is queued in one
transaction, so a commit's cost is shared); and batched, ``Memory.add_many`` of ``--batch``
records per round trip and transaction, which also grows the store to each size.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from lintaid_client import Memory, connection, paths

WORDS = 3000
TOPICS = ["billing", "deploy", "gateway", "retry", "postgres", "redis", "queue", "auth",
          "cache", "search", "ledger", "timeout", "helm", "kafka", "ci", "staging", "backup",
          "feature", "flag", "migration", "schema", "index", "latency", "budget", "owner"]


def vocabulary(seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "zo", "pe", "shu", "dra", "qi"]
    out: set[str] = set()
    while len(out) < WORDS:
        out.add("".join(rnd.choice(syllables) for _ in range(rnd.randint(2, 4))))
    return sorted(out)


class Corpus:
    def __init__(self, seed: int = 11) -> None:
        self.words = vocabulary()
        self.rnd = random.Random(seed)
        self.lock = threading.Lock()
        self.n = 0

    def text(self) -> str:
        with self.lock:
            i = self.n
            self.n += 1
            rnd = self.rnd
            topic = rnd.sample(TOPICS, 2)
            # Zipf-like: a few words are common, most rare, like real notes.
            body = [self.words[min(int(rnd.paretovariate(1.1)) - 1, WORDS - 1)]
                    for _ in range(rnd.randint(8, 30))]
        return (f"Note {i}: the {topic[0]} {topic[1]} decision - "
                f"{' '.join(body)}. Owner team {i % 97}.")

    def query(self, rnd: random.Random) -> str:
        if rnd.random() < 0.5:
            return f"{rnd.choice(TOPICS)} {rnd.choice(TOPICS)}"
        return " ".join([rnd.choice(TOPICS)] + [self.words[rnd.randrange(200)]
                                                for _ in range(rnd.randint(1, 3))])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def fmt_ms(values: list[float]) -> str:
    return (f"p50 {percentile(values, 50) * 1000:6.2f} ms  p99 {percentile(values, 99) * 1000:6.2f}"
            f" ms  mean {statistics.fmean(values) * 1000:6.2f} ms  (n={len(values)})")


def add_single(root: Path, corpus: Corpus, count: int) -> float:
    with Memory(root, autostart=False, timeout=60) as mem:
        started = time.perf_counter()
        for _ in range(count):
            mem.add(corpus.text())
        return time.perf_counter() - started


def add_concurrent(root: Path, corpus: Corpus, count: int, threads: int) -> float:
    remaining = [count]
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with Memory(root, autostart=False, timeout=120) as mem:
                while True:
                    with lock:
                        if remaining[0] <= 0:
                            return
                        remaining[0] -= 1
                    mem.add(corpus.text())
        except BaseException as err:  # noqa: BLE001 - re-raised below
            errors.append(err)

    pool = [threading.Thread(target=work) for _ in range(threads)]
    started = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - started


def add_batched(root: Path, corpus: Corpus, count: int, batch: int) -> float:
    with Memory(root, autostart=False, timeout=120) as mem:
        started = time.perf_counter()
        while count > 0:
            n = min(batch, count)
            mem.add_many([corpus.text() for _ in range(n)])
            count -= n
        return time.perf_counter() - started


def measure_reads(root: Path, corpus: Corpus, queries: int, top_k: int) -> dict[str, list[float]]:
    rnd = random.Random(5)
    out: dict[str, list[float]] = {"search": [], "get": [], "ping": []}
    with Memory(root, autostart=False, timeout=60) as mem:
        sample_ids = [h["id"] for h in mem.get_all(limit=200)["results"]]
        for _ in range(20):  # warm caches and the socket
            mem.search(corpus.query(rnd), top_k=top_k)
        hits = 0
        for _ in range(queries):
            q = corpus.query(rnd)
            t = time.perf_counter()
            res = mem.search(q, top_k=top_k)
            out["search"].append(time.perf_counter() - t)
            hits += len(res["results"])
        for i in range(min(queries, 500)):
            t = time.perf_counter()
            mem.get(sample_ids[i % len(sample_ids)])
            out["get"].append(time.perf_counter() - t)
            t = time.perf_counter()
            mem.ping()
            out["ping"].append(time.perf_counter() - t)
        out["hits_per_query"] = [hits / max(queries, 1)]
    return out


def daemon_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LINTAID_PROJECT", None)
    env["LINTAID_NO_WATCH"] = "1"
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000",
                        help="record counts to measure at, ascending (default 10000,100000)")
    parser.add_argument("--threads", type=int, default=32, help="concurrent adders")
    parser.add_argument("--batch", type=int, default=500, help="records per add_many call")
    parser.add_argument("--concurrent", type=int, default=3000,
                        help="how many adds to time from concurrent callers (default 3000)")
    parser.add_argument("--single", type=int, default=1000,
                        help="how many adds to time one at a time (default 1000)")
    parser.add_argument("--queries", type=int, default=1000, help="searches per size")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--project", type=Path, default=None,
                        help="project folder to use (default: a temporary one, removed after)")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))

    tmp = None
    if args.project is None:
        tmp = tempfile.mkdtemp(prefix="lintaid-bench-")
        root = Path(tmp)
    else:
        root = args.project.resolve()
        root.mkdir(parents=True, exist_ok=True)
    env = daemon_env()
    subprocess.run([sys.executable, "-m", "lintaid", "start", "--project", str(root)],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    try:
        print(f"lintaid client benchmark: project {root}, {args.threads} concurrent adders, "
              f"top_k {args.top_k}, python {sys.version.split()[0]}")
        corpus = Corpus()
        with Memory(root, autostart=False) as mem:
            have = int(mem.status()["memory"]["records"])
        if have:
            print(f"(the project already holds {have} records; sizes count new ones on top)")

        single_n = min(args.single, sizes[0])
        elapsed = add_single(root, corpus, single_n)
        print(f"adds, one caller:            {single_n / elapsed:8.0f} adds/s "
              f"({elapsed / single_n * 1000:.2f} ms per acknowledged add, n={single_n})")
        concurrent_n = min(args.concurrent, sizes[0] - single_n)
        elapsed = add_concurrent(root, corpus, concurrent_n, args.threads)
        print(f"adds, {args.threads} concurrent callers: {concurrent_n / elapsed:8.0f} adds/s "
              f"(n={concurrent_n})")
        done = single_n + concurrent_n
        for size in sizes:
            todo = size - done
            if todo > 0:
                elapsed = add_batched(root, corpus, todo, args.batch)
                print(f"adds, batched (add_many of {args.batch}): {todo / elapsed:8.0f} adds/s "
                      f"({todo} adds to reach {size:,} in {elapsed:.1f} s)")
                done = size
            reads = measure_reads(root, corpus, args.queries, args.top_k)
            with Memory(root, autostart=False) as mem:
                status = mem.status()
            db = paths.memory_db_path(root).stat().st_size
            index = sum(f.stat().st_size for f in paths.index_dir(root, "memory").rglob("*")
                        if f.is_file())
            print(f"\nat {size:,} records (daemon RSS {status['rss_bytes'] / 2**20:.0f} MiB, "
                  f"memory.db {db / 2**20:.1f} MiB, index {index / 2**20:.1f} MiB):")
            print(f"  search round trip  {fmt_ms(reads['search'])}, "
                  f"{reads['hits_per_query'][0]:.1f} hits/query")
            print(f"  get round trip     {fmt_ms(reads['get'])}")
            print(f"  ping round trip    {fmt_ms(reads['ping'])}")
    finally:
        subprocess.run([sys.executable, "-m", "lintaid", "stop", "--project", str(root)],
                       env=env, stdout=subprocess.DEVNULL, check=False)
        if connection.ping(root, timeout=0.3) is not None:
            print("warning: the daemon did not stop", file=sys.stderr)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
