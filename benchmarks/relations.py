"""Relations between statements, judged against independently written gold, without a daemon.

Each history (the format of ``../shared/bench-data/histories/README.md``) is read turn by
turn: every turn becomes the record a Claude Code capture makes of it (``Request: ...`` /
``Result: ...``, built by ``lintaid.capture.record.turn_record``), and the policy engine
derives claims, relations and statuses exactly as the daemon does, on an in-memory store
(``lintaid.policy.memory_store``). Then:

* relations (supersedes, confirms, conflicts) are judged against the gold mentions as in
  ``benchmarks/histories.py``: precision over the relations with a side on a gold quote,
  recall over the gold pairs;
* every mention of a value the gold says was retired (and was not later restored) is looked
  up: is the claim read from its quote superseded (good), still current (a retired value the
  agent could be shown as current), or was no claim read from it at all (unclaimed: its text
  is shown unjudged)?
* every fact's current value: is a current claim read from one of its mentions?

    python benchmarks/relations.py [FILES ...] [--split dev|test] [--show N] [--json PATH]

Without FILES: the three shared histories plus ``benchmarks/data/histories/dev/``;
``--split test`` reads ``benchmarks/data/histories/test/`` (the frozen test split) only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client"), str(REPO / "benchmarks")]

from histories import default_files, fold, gold_pairs, matches, overlaps  # noqa: E402

from lintaid.capture.record import turn_record  # noqa: E402
from lintaid.policy import derive  # noqa: E402
from lintaid.policy.inputs import RecordInput  # noqa: E402
from lintaid.policy.memory_store import MemoryPolicyStore  # noqa: E402
from lintaid.policy.values import find_values  # noqa: E402


def run(history: dict[str, Any]) -> tuple[MemoryPolicyStore, dict[int, str]]:
    store = MemoryPolicyStore()
    ids: dict[int, str] = {}
    for i, turn in enumerate(history["turns"]):
        rec = turn_record(client="claude-code", session_id=turn["session"], event="Stop",
                          turn_id=str(i), request=turn["user"], result=turn["assistant"],
                          paths=[], tools=[], cwd=None, branch=None, revision=None,
                          metadata={})
        assert rec is not None
        rid = f"t{i:03d}"
        ids[i] = rid
        store.put(RecordInput(record_id=rid, text=rec.content, kind="capture",
                              created_at=float(i + 1)))
        derive(store, [rid])
    return store, ids


def _values_of(fact: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(m["value"] for m in fact["mentions"]))


def _state(fact: dict[str, Any], turn: int) -> str | None:
    """The fact's value after ``turn`` (its last new/replaces/reverts mention at or before)."""
    value = None
    for m in sorted(fact["mentions"], key=lambda m: m["turn"]):
        if m["turn"] > turn:
            break
        if m["relation"] in ("new", "replaces", "reverts"):
            value = fold(m["value"])
    return value


def judge(history: dict[str, Any], store: MemoryPolicyStore, ids: dict[int, str],
          examples: list[str]) -> Counter[str]:
    """Count relations right and wrong (see the module docstring): a supersedes is right when
    both sides are about one tracked fact, the newer side states the fact's value at its
    turn and the older a value it no longer had; a confirms when both state one value of one
    fact; a conflict when the two turns are a gold disagreement."""
    c: Counter[str] = Counter()
    turn_of = {rid: t for t, rid in ids.items()}
    facts = {f["id"]: f for f in history["facts"]}
    by_turn: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for fact in history["facts"]:
        for m in fact["mentions"]:
            by_turn.setdefault(m["turn"], []).append((fact["id"], m))
    disputes = {tuple(sorted(d["turns"])[:2]) for d in history.get("disagreements", [])}
    gold = gold_pairs(history["facts"])
    claims = {cl.claim_id: cl for cl in store.all_claims()}
    found: set[tuple[int, int, str, str]] = set()
    likely: set[tuple[int, int, str, str]] = set()

    def sides(turn: int, claim: Any) -> set[tuple[str, str]]:
        if claim is None:
            return set()
        hits = [(f, m) for f, m in by_turn.get(turn, []) if overlaps(claim.evidence, m["quote"])]
        exact = {(f, fold(m["value"])) for f, m in hits if _is_value(claim.value, m["value"])}
        return exact or {(f, "?" + fold(m["value"])) for f, m in hits}

    for rel in store.all_relations():
        kind = rel.kind
        if kind == "supersedes" and rel.confidence < 0.9:
            kind = "likely"
        elif kind == "conflicts_with":
            kind = "conflicts"
        ts, tt = turn_of.get(rel.source_record), turn_of.get(rel.target_record)
        if ts is None or tt is None:
            continue
        src, dst = claims.get(rel.source_claim), claims.get(rel.target_claim)
        fs, ft = sides(ts, src), sides(tt, dst)
        # A side read from another sentence of its turn than the gold quotes: its value
        # still says which state of the other side's fact it states, if any.
        if not fs and src is not None:
            fs = {(f, _state(facts[f], ts) or "") for f, _v in ft
                  if _is_value(src.value, _state(facts[f], ts) or "\x00")}
        if not ft and dst is not None:
            ft = {(f, fold(v)) for f, _v in fs for v in _values_of(facts[f])
                  if _is_value(dst.value, v)}
        if not fs and not ft:
            c[f"{kind}_unjudged"] += 1
            continue
        c[f"{kind}_judged"] += 1
        right = False
        for f, vs in fs:
            for g, vt in ft:
                if f != g:
                    continue
                if vs.startswith("?") or vt.startswith("?"):
                    continue  # the relation's values are not the mentions' values
                if kind in ("supersedes", "likely"):
                    now = _state(facts[f], ts)
                    right = right or (vs != vt and now == vs and vt != now)
                elif kind == "confirms":
                    right = right or vs == vt
                else:
                    right = right or tuple(sorted((ts, tt))) in disputes
        if right:
            c[f"{kind}_right"] += 1
            gk = "supersedes" if kind == "likely" else kind
            hits = {(ts, tt, f, gk) for f, _v in fs | ft} & gold
            found |= hits
            if kind == "likely":
                likely |= hits
        elif len(examples) < 3000:
            examples.append(f"WRONG {kind} t{ts}->t{tt} {sorted(fs)}->{sorted(ft)} "
                            f"[{rel.method} {rel.confidence}] {(src.evidence if src else '')[:100]!r}"
                            f" -> {(dst.evidence if dst else '')[:100]!r}")
    for pair in gold:
        c[f"{pair[3]}_gold"] += 1
        if pair in found - likely:
            c[f"{pair[3]}_found"] += 1
        if pair in found:
            c[f"{pair[3]}_found_or_likely"] += 1
        elif pair[3] == "supersedes" and len(examples) < 3000:
            examples.append(f"MISSED supersedes t{pair[0]}->t{pair[1]} {pair[2]}")
    for a, b in disputes:
        c["conflicts_gold"] += 1
        if any(rel.kind == "conflicts_with" and {turn_of.get(rel.source_record),
                                                 turn_of.get(rel.target_record)} == {a, b}
               for rel in store.all_relations()):
            c["conflicts_found"] += 1
    states = store.claim_state_map()
    for fact in history["facts"]:
        retired = {v.lower() for v in fact.get("retired", [])}
        current_turns = [m for m in fact["mentions"] if m["value"].lower() ==
                         fact["current"].lower() and m["relation"] != "abandoned-proposal"]
        for m in fact["mentions"]:
            if m["value"].lower() not in retired:
                continue
            rid = ids[m["turn"]]
            here = [cl for cl in claims.values() if cl.record_id == rid
                    and overlaps(cl.evidence, m["quote"]) and _is_value(cl.value, m["value"])]
            if not here:
                c["retired_unclaimed"] += 1
                examples.append(f"UNCLAIMED retired {fact['id']} t{m['turn']} {m['quote']!r}")
            elif all(states.get(cl.claim_id) == "superseded" for cl in here):
                c["retired_superseded"] += 1
            elif all(states.get(cl.claim_id) in ("superseded", "conflicted") for cl in here):
                c["retired_disputed"] += 1
            else:
                c["retired_current"] += 1
                examples.append(f"CURRENT retired {fact['id']} t{m['turn']} {m['quote']!r} "
                                f"{[(cl.value, states.get(cl.claim_id)) for cl in here]}")
        ok = any(states.get(cl.claim_id, "current") != "superseded"
                 for m in current_turns for cl in claims.values()
                 if cl.record_id == ids[m["turn"]] and overlaps(cl.evidence, m["quote"]))
        c["facts"] += 1
        c["facts_current_claimed"] += 1 if ok else 0
        if not ok:
            examples.append(f"NO-CURRENT {fact['id']} = {fact['current']!r}")
    c["claims"] = len(claims)
    return c


def _is_value(claim_value: str, gold_value: str) -> bool:
    """Whether a claim's (canonical) value is the gold mention's value, loosely: the gold
    value read by the same value finder, or its words."""
    norms = {v.norm for v in find_values(gold_value)}
    norms |= {v.norm for part in gold_value.replace("(", ",").replace(")", ",").split(",")
              for v in find_values(part.strip())}
    return claim_value in norms or matches(gold_value, claim_value) or (
        len(claim_value) > 1 and claim_value in fold(gold_value)) or any(
        claim_value.startswith(n + ".") for n in norms if n[:1].isdigit())


def figures(c: Counter[str]) -> dict[str, Any]:
    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 3) if b else None

    out: dict[str, Any] = {
        kind: {"precision": ratio(c[f"{kind}_right"], c[f"{kind}_judged"]),
               "recall": ratio(c[f"{kind}_found"], c[f"{kind}_gold"]),
               "judged": c[f"{kind}_judged"], "gold": c[f"{kind}_gold"],
               "unjudged": c[f"{kind}_unjudged"]}
        for kind in ("supersedes", "likely", "confirms", "conflicts")}
    out["supersedes"]["recall_with_likely"] = ratio(c["supersedes_found_or_likely"],
                                                    c["supersedes_gold"])
    out["retired_mentions"] = {"superseded": c["retired_superseded"],
                               "disputed": c["retired_disputed"],
                               "still_current": c["retired_current"],
                               "unclaimed": c["retired_unclaimed"]}
    out["facts_with_current_claim"] = f"{c['facts_current_claimed']}/{c['facts']}"
    out["claims"] = c["claims"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--grep", default="", help="only show examples containing this")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    files = args.files or default_files(args.split)
    total: Counter[str] = Counter()
    report: dict[str, Any] = {}
    for path in files:
        history = json.loads(path.read_text(encoding="utf-8"))
        store, ids = run(history)
        examples: list[str] = []
        c = judge(history, store, ids, examples)
        total.update(c)
        report[history["id"]] = figures(c)
        _print(history["id"], figures(c))
        shown = [e for e in examples if args.grep in e][: args.show]
        for line in shown:
            print("   ", line)
    if len(files) > 1:
        _print("total", figures(total))
    report["total"] = figures(total)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def _print(name: str, f: dict[str, Any]) -> None:
    rel = "; ".join(f"{k} P {f[k]['precision']} R {f[k]['recall']} (judged {f[k]['judged']}, "
                    f"gold {f[k]['gold']}, unjudged {f[k]['unjudged']})"
                    for k in ("supersedes", "likely", "confirms", "conflicts"))
    r = f["retired_mentions"]
    print(f"{name}: {rel}; supersedes recall with likely "
          f"{f['supersedes']['recall_with_likely']}\n  retired mentions: superseded "
          f"{r['superseded']}, disputed {r['disputed']}, still current "
          f"{r['still_current']}, unclaimed {r['unclaimed']}; facts with a current claim "
          f"{f['facts_with_current_claim']}; {f['claims']} claims")


if __name__ == "__main__":
    sys.exit(main())
