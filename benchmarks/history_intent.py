"""History intent: how well a question alone tells lintaid it asks about the past.

``lintaid.policy.history.is_history_query`` decides whether a search lifts the supersession
filter. The labelled questions in ``benchmarks/data/questions/`` (400, written by a helper
that never saw the rules: ``history``, ``current``, ``event``, ``general``) are split by id
into a development half (even ids; the weights were set on it) and a test half (odd ids,
frozen before tuning). Printed per split: precision and recall of ``history``, the share of
the other labels switched into history mode (false switches), and the misjudged questions
with ``--show``.

    python benchmarks/history_intent.py [--split dev|test|both] [--show N]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client")]

from lintaid.policy.history import is_history_query, score  # noqa: E402

DATA = REPO / "benchmarks" / "data" / "questions"


def evaluate(split: str, show: int) -> dict[str, float | int]:
    rows = json.loads((DATA / f"history.{split}.json").read_text(encoding="utf-8"))
    tp = fp = fn = 0
    wrong: list[str] = []
    for q in rows:
        said = is_history_query(q["question"])
        truth = q["label"] == "history"
        if said and truth:
            tp += 1
        elif said:
            fp += 1
            wrong.append(f"  false switch [{q['label']}] {score(q['question']):+.1f} {q['question']}")
        elif truth:
            fn += 1
            wrong.append(f"  missed  {score(q['question']):+.1f} {q['question']}")
    others = sum(1 for q in rows if q["label"] != "history")
    out = {"questions": len(rows), "history": tp + fn,
           "precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
           "recall": round(tp / (tp + fn), 3) if tp + fn else 0.0,
           "false_switch_rate": round(fp / others, 3) if others else 0.0}
    print(f"{split}: {out}")
    for line in wrong[:show]:
        print(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    ap.add_argument("--show", type=int, default=0)
    args = ap.parse_args(argv)
    for split in (("dev", "test") if args.split == "both" else (args.split,)):
        evaluate(split, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
