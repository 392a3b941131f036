"""Search's fixed cost: what a top-5 search spends beyond the index, and hydration before and
after it became set queries, side by side in one run.

Builds a store of ``--records`` notes through a real daemon (in process, ``add`` in batches),
then prints, over ``--runs`` queries of two content words:

* top-5 search: the Reader in process, and the ``search`` op through the Python client;
* hydrating five hits (records, claims, their time spans, relations, pending review items):
  as it was (``get_rows``, ``claims_for``, ``claim_spans``, ``relations_for`` and the review
  query that scanned every relation of its kinds) and as it is (``hit_rows``: one query; the
  review query driven by the hits' own relations), with the SQL statements each runs;
* the whole of ``Reader.hydrate`` (staleness included) and where a search's time goes
  (cProfile, top functions by own time).

    python benchmarks/search_cost.py [--records 10000] [--runs 200]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client")]

from lintaid.daemon import Config, Daemon  # noqa: E402
from lintaid.search import SearchRequest  # noqa: E402
from lintaid.store.reviews import _PAIRS  # noqa: E402
from lintaid.store.sqlite import in_batches  # noqa: E402
from lintaid_client import Memory, connection  # noqa: E402

WORDS = ("gateway retry cache billing owner deploy region bucket queue worker timeout pool "
         "logging schema migration token").split()
# The review query as it was: relations filtered on either end with OR, which SQLite ran from
# the index on the relation's kind, reading every supersedes and conflicts_with relation.
_OLD_PAIRS = _PAIRS + " AND (r.source_record IN ({ids}) OR r.target_record IN ({ids}))"


def build(root: Path, records: int) -> tuple[Daemon, threading.Thread]:
    daemon = Daemon(root, Config(watch_workspace=False))
    thread = threading.Thread(target=daemon.run, name="bench-daemon", daemon=True)
    thread.start()
    if not daemon.ready.wait(60):
        raise SystemExit("the daemon did not start")
    rng = random.Random(1)
    conn = connection.Connection(root)
    for start in range(0, records, 500):
        conn.call("add", {"items": [
            {"content": f"Decision {i}: the {rng.choice(WORDS)} {rng.choice(WORDS)} uses "
                        f"setting {i % 97} for the {rng.choice(WORDS)}."}
            for i in range(start, min(records, start + 500))]}, timeout=600)
    conn.call("search", {"query": "settle"}, timeout=600, after=conn.last_token)
    conn.close()
    return daemon, thread


def timed(fn: Callable[[], Any], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def line(name: str, values: list[float], base: list[float] | None = None) -> str:
    ordered = sorted(values)
    med = statistics.median(ordered)
    text = (f"{name:<44} p50 {med * 1000:7.3f} ms   p99 "
            f"{ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000:7.3f} ms")
    if base:
        text += f"   {statistics.median(base) / med:4.1f}x faster"
    return text


def statements(store: Any, fn: Callable[[], Any]) -> int:
    """How many SQL statements ``fn`` runs on this thread's read connection."""
    seen: list[str] = []
    conn = store._read()
    conn.set_trace_callback(seen.append)
    try:
        fn()
    finally:
        conn.set_trace_callback(None)
    return len(seen)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lintaid-search-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        started = time.perf_counter()
        daemon, thread = build(root, args.records)
        built = time.perf_counter() - started
        try:
            report(daemon, root, args, built)
        finally:
            daemon.request_shutdown()
            thread.join(60)
    return 0


def report(daemon: Daemon, root: Path, args: Any, built: float) -> None:
    reader, store = daemon.reader, daemon.store
    rng = random.Random(2)
    queries = [f"{rng.choice(WORDS)} {rng.choice(WORDS)}" for _ in range(args.runs)]
    for query in queries[:20]:  # warm: the first searches open readers and fill caches
        reader.search(SearchRequest(query=query, top_k=5))
    it = iter(queries * 3)
    in_process = timed(lambda: reader.search(SearchRequest(query=next(it), top_k=5)), args.runs)
    with Memory(root, autostart=False) as mem:
        client = timed(lambda: mem.search(next(it), top_k=5), args.runs)
    ids = [h.id for h in reader.search(SearchRequest(query="gateway retry", top_k=5)).results]

    def before() -> None:
        store.get_rows(ids)
        store.claims_for(ids)
        store.claim_spans(ids)
        store.relations_for(ids)
        in_batches(store._read(), _OLD_PAIRS, ids, [0.0, "local", "local", 0.0, 0.0])

    def after() -> None:
        store.hit_rows(ids)
        store.reviews.pairs("local", 0.0, record_ids=ids)

    old, new = timed(before, args.runs), timed(after, args.runs)
    whole = timed(lambda: reader.hydrate(ids), args.runs)
    relations = store._read().execute("SELECT COUNT(*) FROM relations").fetchone()[0]
    profile = cProfile.Profile()
    profile.enable()
    for query in queries:
        reader.search(SearchRequest(query=query, top_k=5))
    profile.disable()
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(8)
    print(f"search cost: {args.records} records ({relations} relations), built in "
          f"{built:.0f} s; {args.runs} queries of two words")
    print(line("search top-5, Reader in process", in_process))
    print(line("search top-5, Python client (socket)", client))
    print(line(f"hydrate 5 hits as it was ({statements(store, before)} statements)", old))
    print(line(f"hydrate 5 hits as it is ({statements(store, after)} statements)", new, old))
    print(line(f"Reader.hydrate, staleness included ({statements(store, lambda: reader.hydrate(ids))} st.)", whole))
    print("where a search's time goes (own time):")
    body = out.getvalue().splitlines()
    start = next((i for i, row in enumerate(body) if "ncalls" in row), 0)
    for row in body[start:start + 9]:
        print("  " + row.strip()[:150])


if __name__ == "__main__":
    sys.exit(main())
