"""Documents in memory's chains: what linking a workspace and editing a decision document cost.

Grows a memory store in process (``MemoryStore`` + ``Writer``, every record through the policy
engine) with captured turns that decide things about many subjects ("We use X for Y.", "Artifact
bucket for Y: s3://..."), and a workspace store (``WorkspaceStore``) of decision documents
stating the same kind of thing about some of those subjects. Then times, on the writer thread
as the daemon runs them:

* ``link``: ``Writer.link_documents`` as a daemon start runs it: the first time (or after
  memory was derived without the documents) every memory chain the documents take part in is
  derived again; on a restart with nothing changed, a lookup;
* ``edit``: one document rewritten (``apply_files`` with memory: the file, then the memory
  chains its claims left and joined), as the watcher's job runs it;
* ``capture``: one batch of 10 captures against the documents, beside the same without them.

Prints figures; no assertions.

    python benchmarks/documents.py [--records 20000] [--documents 200] [--runs 20]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client")]

from lintaid.capture.record import NewRecord  # noqa: E402
from lintaid.derivation import apply_files  # noqa: E402
from lintaid.store.memory import MemoryStore  # noqa: E402
from lintaid.store.workspace import WorkspaceStore  # noqa: E402
from lintaid.workspace.service import file_update  # noqa: E402
from lintaid.writer import Writer  # noqa: E402
from lintaid_client import paths  # noqa: E402

TOOLS = ["redis", "memcached", "kafka", "rabbitmq", "postgres", "mysql", "uv", "poetry",
         "httpx", "requests"]
SUBJECTS = [f"service{i}" for i in range(400)]
BATCH = 500
T0 = 1.7e9


def turn(i: int, rnd: random.Random) -> NewRecord:
    subject = rnd.choice(SUBJECTS)
    return NewRecord(
        content=(f"Request: task {i}\nResult: Done. We use {rnd.choice(TOOLS)} for {subject}. "
                 f"Artifact bucket for {subject}: s3://{rnd.choice(TOOLS)}-{i % 7}."),
        kind="capture", provider="claude-code", source=f"claude-code://s{i // 10}/outcome",
        session_id=f"s{i // 10}", doc_type="outcome", created_at=T0 + i)


def document(n: int, rnd: random.Random, at: float) -> Any:
    subjects = rnd.sample(SUBJECTS, 3)
    text = f"# ADR {n}\n\n" + "".join(
        f"We use {rnd.choice(TOOLS)} for {s}.\n\nArtifact bucket for {s}: s3://adr-{n}.\n\n"
        for s in subjects)
    data = text.encode()
    return file_update(f"docs/adr/{n:04d}.md", data, len(data), int(at * 1e9), read_at=at)


def timed(runs: int, fn: Callable[[int], Any]) -> tuple[float, float]:
    took = []
    for i in range(runs):
        t0 = time.perf_counter()
        fn(i)
        took.append((time.perf_counter() - t0) * 1000)
    took.sort()
    return round(statistics.median(took), 1), round(took[int(0.95 * (len(took) - 1))], 1)


def measure(records: int, documents: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="lintaid-documents-") as tmp:
        root = Path(tmp)
        paths.ensure_state_dir(root)
        store = MemoryStore(root)
        workspace = WorkspaceStore(root, derived_version="bench")
        writer = Writer(store)
        writer.start()
        rnd = random.Random(1)
        for first in range(0, records, BATCH):
            batch = [turn(i, rnd) for i in range(first, min(records, first + BATCH))]
            writer.run(lambda batch=batch: [store.put(r, "bench") for r in batch],
                       timeout=3600)
        # Half the documents older than the captures, half newer.
        docs = [document(n, rnd, T0 + (n - documents // 2) * records / documents)
                for n in range(documents)]
        writer.run(lambda: apply_files(workspace, docs, []), timeout=3600)
        t0 = time.perf_counter()
        chains = writer.link_documents(workspace).result(timeout=3600)
        link_ms = round((time.perf_counter() - t0) * 1000, 1)
        t0 = time.perf_counter()
        again = writer.link_documents(workspace).result(timeout=3600)
        relink_ms = round((time.perf_counter() - t0) * 1000, 1)
        retired = store.db.execute(
            "SELECT COUNT(*) FROM claim_state WHERE superseded_by_record LIKE 'docs/%'"
        ).fetchone()[0]
        edit = timed(runs, lambda i: writer.run(lambda: apply_files(
            workspace, [document(i % documents, rnd, T0 + records + i)], [], store),
            timeout=600))
        fresh = iter(range(records, records + 100 * runs))

        def captures(_i: int) -> None:
            batch = [turn(next(fresh), rnd) for _ in range(10)]
            writer.run(lambda: [store.put(r, "bench") for r in batch], timeout=600)

        with_docs = timed(runs, captures)
        writer.run(lambda: setattr(writer, "documents", None))
        without = timed(runs, captures)
        writer.stop()
        workspace.close()
        store.close()
    return {"records": records, "documents": documents, "chains": chains, "link_ms": link_ms,
            "relink_ms": relink_ms, "relinked_chains": again,
            "retired_by_documents": retired, "edit": edit, "capture": with_docs,
            "capture_without": without}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=20000)
    ap.add_argument("--documents", type=int, default=200)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    r = measure(args.records, args.documents, args.runs)
    print(f"memory records {r['records']}, decision documents {r['documents']} "
          f"(chains they take part in: {r['chains']}; memory claims they retire: "
          f"{r['retired_by_documents']})")
    print(f"link, first start       {r['link_ms']:>8} ms")
    print(f"link, restart           {r['relink_ms']:>8} ms ({r['relinked_chains']} chains)")
    print(f"edit one document       p50 {r['edit'][0]} ms, p95 {r['edit'][1]} ms")
    print(f"10 captures, documents  p50 {r['capture'][0]} ms, p95 {r['capture'][1]} ms")
    print(f"10 captures, none       p50 {r['capture_without'][0]} ms, "
          f"p95 {r['capture_without'][1]} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
