"""How long the request loop makes a plain ping wait while the daemon is busy.

A real daemon (in this process, on its own socket) takes, at the same time:
  * a writer client adding 1,000-record batches back to back (``--batch-size``) (each batch is one transaction
    and then a Tantivy commit on the indexer thread);
  * two clients searching in a loop;
  * one client pinging, whose round-trip times are the figures.
Prints ping median, p99 and max under that load, and at rest for comparison, plus how many
batches and searches ran meanwhile.

    python benchmarks/loop.py [--seconds 20] [--batches 10] [--batch-size 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lintaid.daemon import Config, Daemon  # noqa: E402
from lintaid_client import Memory, lock, paths  # noqa: E402
from lintaid_client.connection import Connection  # noqa: E402

WORDS = ("gateway retry policy cache eviction deploy queue worker billing ledger auth token "
         "session timeout schema migration index shard replica backup").split()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def pings(root: Path, stop: threading.Event, out: list[float]) -> None:
    with Connection(root) as conn:
        while not stop.is_set():
            started = time.perf_counter()
            conn.call("ping", timeout=10)
            out.append(time.perf_counter() - started)
            time.sleep(0.005)


def searches(root: Path, stop: threading.Event, count: list[int]) -> None:
    with Memory(root, autostart=False) as mem:
        n = 0
        while not stop.is_set():
            mem.search(f"{WORDS[n % len(WORDS)]} {WORDS[(n * 7) % len(WORDS)]}", top_k=10)
            n += 1
        count.append(n)


def batches(root: Path, total: int, size: int, done: list[int]) -> None:
    with Memory(root, autostart=False, timeout=120) as mem:
        for b in range(total):
            mem.add_many([f"Batch {b} note {i}: the {WORDS[i % len(WORDS)]} uses "
                          f"{WORDS[(i * 3 + b) % len(WORDS)]} setting {i}." for i in range(size)])
            done.append(b)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20.0, help="idle ping sample length")
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=1000, help="records per batch")
    opts = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="lintaid-loop-")) / "proj"
    root.mkdir()
    paths.ensure_state_dir(root)
    fd = lock.acquire(paths.lock_path(root))
    daemon = Daemon(root, Config(watch_workspace=False))
    thread = threading.Thread(target=daemon.run, daemon=True)
    thread.start()
    daemon.ready.wait(60)
    try:
        idle: list[float] = []
        stop = threading.Event()
        pinger = threading.Thread(target=pings, args=(root, stop, idle))
        pinger.start()
        time.sleep(min(opts.seconds, 5.0))
        stop.set()
        pinger.join()

        busy: list[float] = []
        done: list[int] = []
        searched: list[int] = []
        stop = threading.Event()
        workers = [threading.Thread(target=pings, args=(root, stop, busy)),
                   threading.Thread(target=searches, args=(root, stop, searched)),
                   threading.Thread(target=searches, args=(root, stop, searched))]
        writer = threading.Thread(target=batches, args=(root, opts.batches, opts.batch_size, done))
        started = time.perf_counter()
        for w in workers:
            w.start()
        writer.start()
        writer.join()
        stop.set()
        for w in workers:
            w.join()
        elapsed = time.perf_counter() - started
    finally:
        daemon.request_shutdown()
        thread.join(60)
        lock.release(fd)

    def line(name: str, values: list[float]) -> str:
        return (f"{name:<32} n={len(values):5d}  median {statistics.median(values) * 1000:6.2f} ms"
                f"  p99 {pct(values, 0.99) * 1000:6.2f} ms  max {max(values) * 1000:7.2f} ms")

    print("ping round trip through the request loop")
    print(line("at rest", idle))
    print(line("under load", busy))
    print(f"load: {len(done)} batches of {opts.batch_size:,} records and {sum(searched)} searches from two "
          f"clients in {elapsed:.1f} s")


if __name__ == "__main__":
    main()
