"""SessionStart's cost: reading the project's state and rendering it, as the store grows.

Grows a store in process (``MemoryStore`` + ``Writer``, every record through the policy
engine) with captured turns that decide and re-decide things ("We use X for Y.", "Team N owns
the Z module."), most of which later turns supersede; then times what a SessionStart does:
find when the last session began, read the state (``Reader.project_state``) and render it.
Prints figures; no assertions.

    python benchmarks/session_start.py [--sizes 5000,20000] [--runs 20]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client")]

from lintaid.capture.record import NewRecord  # noqa: E402
from lintaid.integrations import injection  # noqa: E402
from lintaid.search import Reader, StateRequest  # noqa: E402
from lintaid.store.memory import MemoryStore  # noqa: E402
from lintaid.writer import Writer  # noqa: E402
from lintaid_client import paths  # noqa: E402

TOOLS = ["redis", "memcached", "kafka", "rabbitmq", "postgres", "mysql", "uv", "poetry",
         "httpx", "requests"]
SUBJECTS = [f"service{i}" for i in range(400)]
BATCH = 500


def turn(i: int, rnd: random.Random) -> NewRecord:
    return NewRecord(
        content=(f"Request: task {i}\nResult: Done. We use {rnd.choice(TOOLS)} for "
                 f"{rnd.choice(SUBJECTS)}. Team {i % 50} owns the {rnd.choice(SUBJECTS)} "
                 "module."),
        kind="capture", provider="claude-code", source=f"claude-code://s{i // 10}/outcome",
        session_id=f"s{i // 10}", doc_type="outcome", created_at=1.7e9 + i, branch="main")


def measure(size: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="lintaid-session-start-") as tmp:
        root = Path(tmp)
        paths.ensure_state_dir(root)
        store = MemoryStore(root)
        writer = Writer(store)
        writer.start()
        rnd = random.Random(1)
        started = time.monotonic()
        for first in range(0, size, BATCH):
            records = [turn(i, rnd) for i in range(first, min(size, first + BATCH))]
            writer.run(lambda records=records: [store.put(r, "bench") for r in records],
                       timeout=3600)
        ingest = time.monotonic() - started
        reader = Reader(memory=store)
        where = injection.Where("main", None, None)
        took: list[float] = []
        size_bytes = 0
        for _ in range(runs):
            t0 = time.perf_counter()
            since = reader.previous_session_start(None, "new", "claude-code")
            state = reader.project_state(StateRequest(since=since, branch="main",
                                                      session_id="new"))
            text = injection.render_state(state, where=where, source="startup") or ""
            took.append((time.perf_counter() - t0) * 1000)
            size_bytes = len(text.encode())
        counts = store.counts()
        writer.stop()
        store.close()
    took.sort()
    return {"records": counts["records"], "claims": counts["claims"],
            "superseded": counts["superseded"], "ingest_s": round(ingest, 1),
            "p50_ms": round(statistics.median(took), 1),
            "p95_ms": round(took[int(0.95 * (len(took) - 1))], 1), "bytes": size_bytes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="5000,20000", help="store sizes, comma separated")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    print(f"{'records':>8} {'claims':>7} {'superseded':>10} {'ingest s':>8} {'p50 ms':>7} "
          f"{'p95 ms':>7} {'bytes':>6}")
    for size in (int(s) for s in args.sizes.split(",")):
        r = measure(size, args.runs)
        print(f"{r['records']:>8} {r['claims']:>7} {r['superseded']:>10} {r['ingest_s']:>8} "
              f"{r['p50_ms']:>7} {r['p95_ms']:>7} {r['bytes']:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
