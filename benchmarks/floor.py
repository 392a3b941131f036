"""Where the relevance floor sits: what each floor would let through, on project histories.

Replays each history exactly as ``benchmarks/histories.py`` does (its replay, its value
matching), then asks every probe with the floor lifted: the hits the prompt would be given
(``retrieval.admit`` at floor 0) and the best hit's relevance (what the floor is compared
with). For each floor it prints how many general programming questions (which need nothing
from memory) would still get something, and how many memory questions would still get an
entry that presents the expected value and no retired one.

    python benchmarks/floor.py [FILES ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client"), str(REPO / "benchmarks")]

import histories  # noqa: E402

from lintaid.integrations import injection  # noqa: E402
from lintaid.retrieval import admit  # noqa: E402
from lintaid.retrieval.query import parts  # noqa: E402
from lintaid.search import SearchRequest  # noqa: E402

FLOORS = (0.10, 0.12, 0.14, 0.16, 0.18, 0.20, 0.22, 0.24, 0.26)


def probe(harness: histories.Harness, question: str) -> tuple[float, str | None]:
    """The best admitted relevance for ``question`` and the block it would get, floor 0."""
    reader = harness.daemon.inject_reader
    reader.settle(None, 5.0)
    limits = admit.Limits(floor=0.0)
    found, best = [], 0.0
    for part in parts(question):
        hits = reader.search(SearchRequest(query=part, top_k=15, passages=True)).results
        kept = admit.admit(hits, part, limits)
        found.append(kept)
        best = max([best, *(admit.answered(h) for h in kept)])
    block = injection.recall(admit.interleave(found, limits.count),
                             where=injection.Where(None, None, None))
    return best, block.text if block else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args(argv)
    files = args.files or histories.default_files("dev")
    if not files:
        print("no histories found")
        return 0
    rows: list[tuple[bool, float, bool]] = []  # (needs memory, best relevance, answers)
    for path in files:
        history = json.loads(path.read_text(encoding="utf-8"))
        probes, history["probes"] = history["probes"], []
        with tempfile.TemporaryDirectory(prefix="lintaid-floor-") as tmp:
            _run, harness = histories.replay(history, Path(tmp), 8000)
            try:
                for item in probes:
                    best, text = probe(harness, item["question"])
                    good = False
                    if item.get("needs_memory") and text:
                        bad = item.get("must_not_present_as_current") or []
                        good = any(histories.presents(e, item["expected"])
                                   and not any(histories.presents(e, v) for v in bad)
                                   for e in histories.entries(text))
                    rows.append((bool(item.get("needs_memory")), best, good))
            finally:
                harness.close()
        print(f"{history['id']}: {len(probes)} probes asked")
    general = [r for r in rows if not r[0]]
    memory = [r for r in rows if r[0]]
    answerable = sum(1 for r in memory if r[2])
    print(f"{len(general)} general questions, {len(memory)} memory questions "
          f"({answerable} get an entry presenting the answer with no floor)")
    print(f"{'floor':>6} {'general given':>14} {'memory answered':>16}")
    for floor in FLOORS:
        given = sum(1 for r in general if r[1] >= floor)
        kept = sum(1 for r in memory if r[2] and r[1] >= floor)
        mark = "  <- admit.FLOOR" if abs(floor - admit.FLOOR) < 1e-9 else ""
        print(f"{floor:6.2f} {given:>8}/{len(general):<5} {kept:>9}/{answerable:<6}{mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
