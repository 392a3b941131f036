"""MemoryCode: does the current-state policy surface the latest version of an updated instruction?

MemoryCode (for-ai/MemoryCode, Apache-2.0) is a set of 360 synthetic mentor/mentee dialogues in
which coding instructions ("always start variable names with 'x_'") are introduced in one
session and updated in later ones, buried among chit-chat. The data lives outside the repo
(``--data``, default ``../shared/bench-data/memorycode`` beside the repo root); see its README.

Per dialogue, in a fresh temporary store driven in process (``MemoryStore`` + ``Writer``, as in
``tests/test_store_policy.py``), every session is written, in order, as one capture record
(``source=memorycode://<dialogue>/<session>``, ``created_at`` one hour apart), each write its own
writer batch. Then, for every instruction *chain* with at least one update (the dialogue's
``instructions`` lists ``[instruction_id, version]`` per session), the last session mentioning the
instruction is the **current gold** (its version is current) and every earlier mention is
**stale** (its version is superseded): the README's suggested gold.

Queries, top 5, each run in both arms:

* ``topic`` (the headline): the instruction's object, ``regex[v][0]`` of the latest version
  ("variable", "function argument", "class"). It names what the instruction governs, which is
  what a retrieval of "the current rule about X" has to match.
* ``eval_query``: the instruction's ``eval_query`` from topics.json, a coding task ("LRU cache
  class with get and put methods") that never names the instruction's subject, so its top 5
  mostly measures lexical luck, not the policy. Reported beside the headline.

Arms:

* ``policy ON``: ``search(...)`` as every entry point calls it (superseded records excluded,
  statuses and claim marks as the policy derived them).
* ``policy OFF``: ``search(..., history=True)`` (nothing excluded; ranking is otherwise the same
  BM25 query), and every hit is then presented as is, i.e. as a store without a current-state
  policy would present it: status ``current`` and no claims. The same definitions below are then
  applied unchanged; with no status and no claims nothing marks a stale version, so every stale
  session in the top 5 counts as leakage.

Definitions (identical for both arms). A hit *presents version v of instruction i as current*
when

1. its status is ``current`` or ``conflicted`` (not superseded, historical, expired, forgotten), and
2. either none of its claims states v (no claim was extracted for it), and its text contains v's
   marker (below); or at least one claim stating v has a status other than ``superseded``.

A claim *states v* when either its subject names the instruction's object (``regex[v][0]``,
e.g. "variable", but not a longer object containing it, so "function" does not take "function
argument names") and v's marker occurs in its subject or value; or its subject names no
instruction's object at all (a garbled subject such as "team") and v's marker occurs in its
value. The evidence sentence is not used: one sentence often states two instructions on the
same object ("start attribute names with 'at_' and end them with '_x'").

* **current-version recall@5**: share of queries whose top 5 contains the current gold session's
  record presenting the latest version as current.
* **stale leakage@5**: share of queries whose top 5 contains at least one stale session's record
  presenting that session's (superseded) version as current.

Markers. ``regex[v][1]`` matches identifiers in generated code (``^x_.*``, ``.*_a$``; the case
patterns accept any capitalised or lowercase word), not prose, so it cannot say which version a
sentence states. A version's text marker is therefore derived from ``text[v]``: its quoted affix
('x_' -> ``x_`` not preceded by a word character; '_a' -> ``_a`` not followed by one), whose
orientation is checked against ``regex[v][1]``; or, when nothing is quoted, its distinctive word
("CamelCase" -> ``camel[ _-]?case``, case-insensitive). Mentions whose session text lacks the
marker are counted and printed (they can only be found by the no-claim rule if the text has it).

Also printed: dialogues, chains, queries, records, claims extracted, ingest time, mean search
latency, and diagnostics (gold retrieved at all; a stale session retrieved at all). ``--explain``
prints failure categories and 5 failing examples of the headline query with the policy ON.
Targets (from the issue): recall@5 >= 0.95, leakage@5 <= 0.02.

    python benchmarks/memorycode.py [--data DIR] [--limit N] [--jobs N] [--explain]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lintaid.capture.record import NewRecord
from lintaid.search import Reader, SearchRequest
from lintaid.store.memory import MemoryStore
from lintaid.writer import Writer

REPO = Path(__file__).resolve().parent.parent
# ../shared beside the repository (a clone), or two levels up (a worktree under wt/).
DEFAULT_DATA = next((p / "shared" / "bench-data" / "memorycode" for p in (REPO.parent,
                     REPO.parent.parent) if (p / "shared" / "bench-data" / "memorycode").is_dir()),
                    REPO.parent / "shared" / "bench-data" / "memorycode")
TOP_K = 5
BASE_TIME = 1_700_000_000.0
SESSION_GAP = 3600.0
TARGET_RECALL = 0.95
TARGET_LEAKAGE = 0.02
QUERY_KINDS = ("topic", "eval_query")
HEADLINE = "topic"
ARMS = ("on", "off")
PRESENTED = ("current", "partly_superseded", "conflicted")

# ---------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class Version:
    instruction: int
    index: int
    text: str
    obj: str  # regex[v][0]: what the instruction governs ("variable")
    marker: re.Pattern[str]


@dataclass
class Instruction:
    id: int
    eval_query: str
    versions: list[Version]
    longer_objects: list[str] = field(default_factory=list)  # objects containing this one
    other_objects: list[str] = field(default_factory=list)  # every other instruction's object


@dataclass(frozen=True)
class Chain:
    instruction: int
    mentions: tuple[tuple[int, int], ...]  # (session index, version index), in session order

    @property
    def current(self) -> tuple[int, int]:
        return self.mentions[-1]

    @property
    def stale(self) -> tuple[tuple[int, int], ...]:
        return self.mentions[:-1]


_QUOTED = re.compile(r"'([^'\s]+)'")
_WORDS = re.compile(r"[A-Za-z0-9_]+")


def version_marker(text: str, others: list[str], pattern: str) -> re.Pattern[str]:
    """A regex that finds version ``text`` in prose (see the module docstring)."""
    quoted = _QUOTED.search(text)
    if quoted:
        affix = quoted.group(1)
        if re.fullmatch(pattern, affix + "name"):
            return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(affix))
        if re.fullmatch(pattern, "name" + affix):
            return re.compile(re.escape(affix) + r"(?![A-Za-z0-9_])")
        raise ValueError(f"{affix!r} is neither a prefix nor a suffix for {pattern!r}")
    common: set[str] = set()
    for other in others:
        common |= {w.lower() for w in _WORDS.findall(other)}
    own = [w.lower() for w in _WORDS.findall(text) if w.lower() not in common]
    if not own:
        raise ValueError(f"no distinctive word in {text!r}")
    word = max(own, key=len)
    if word.endswith("case") and len(word) > 4:
        stem = word[:-4].rstrip("_")
        return re.compile(r"\b" + re.escape(stem) + r"[ _-]?case\b", re.IGNORECASE)
    return re.compile(r"\b" + re.escape(word) + r"\b", re.IGNORECASE)


def load_topics(data: Path) -> dict[int, Instruction]:
    """The instructions that have more than one version, with a text marker per version."""
    raw = json.loads((data / "topics.json").read_text())
    out: dict[int, Instruction] = {}
    for item in raw["instructions"]:
        texts: list[str] = item["text"]
        if len(texts) < 2:
            continue  # never updated, so never part of a chain with updates
        versions = []
        for v, text in enumerate(texts):
            obj, pattern = item["regex"][v]
            marker = version_marker(text, [t for t in texts if t != text], pattern)
            versions.append(Version(item["id"], v, text, obj, marker))
        out[item["id"]] = Instruction(item["id"], item["eval_query"], versions)
    objects = {v.obj for ins in out.values() for v in ins.versions}
    for ins in out.values():
        obj = ins.versions[0].obj
        ins.longer_objects = sorted(o for o in objects if o != obj and obj in o)
        ins.other_objects = sorted(o for o in objects if o != obj)
    return out


def load_dialogue(data: Path, number: int) -> dict[str, Any]:
    return json.loads((data / "dataset" / f"dialogue_{number}.json").read_text())


def dialogue_numbers(data: Path) -> list[int]:
    names = (p.stem for p in (data / "dataset").glob("dialogue_*.json"))
    return sorted(int(n.split("_")[1]) for n in names)


def updated_chains(dialogue: dict[str, Any]) -> list[Chain]:
    """Chains (one per instruction id) mentioned in more than one session."""
    mentions: dict[int, list[tuple[int, int]]] = {}
    for session, pairs in enumerate(dialogue["instructions"]):
        if pairs == [-1]:
            continue
        for instruction, version in pairs:
            mentions.setdefault(instruction, []).append((session, version))
    return [Chain(i, tuple(m)) for i, m in mentions.items() if len(m) > 1]


# ---------------------------------------------------------------------------------------------
# Scoring


def _names(subject: str, obj: str, longer: list[str]) -> bool:
    subject = subject.lower()
    if not re.search(r"\b" + re.escape(obj) + r"s?\b", subject):
        return False
    return not any(o in subject for o in longer)


def _names_object(subject: str, ins: Instruction) -> bool:
    return _names(subject, ins.versions[0].obj, ins.longer_objects)


def _names_other_object(subject: str, ins: Instruction) -> bool:
    return any(o in subject.lower() for o in ins.other_objects)


def claims_stating(claims: list[dict[str, Any]], version: Version,
                   ins: Instruction) -> list[dict[str, Any]]:
    """The claims that state ``version`` of ``ins`` (rules in the module docstring)."""
    out = []
    for c in claims:
        subject, value = c["subject"] or "", c["value"] or ""
        if _names_object(subject, ins):
            if version.marker.search(value) or version.marker.search(subject):
                out.append(c)
        elif not _names_other_object(subject, ins) and version.marker.search(value):
            out.append(c)
    return out


def presents_as_current(hit: dict[str, Any], version: Version, ins: Instruction) -> bool:
    if hit["status"] not in PRESENTED:
        return False
    stating = claims_stating(hit["claims"], version, ins)
    if not stating:
        return bool(version.marker.search(hit["content"]))
    return any(c["status"] != "superseded" for c in stating)


def plain_search(ctx: Reader, query: str) -> list[dict[str, Any]]:
    """The same records ranked by their whole text, nothing excluded: a store without a
    current-state policy (BM25 with stemming over the full text, as lintaid indexes it)."""
    index = ctx.memory.index.for_user("local")  # one index per user; every record is local's
    text = index.text_query(query, ["content_all"]) if index is not None else None
    if index is None or text is None:
        return []
    searcher = index.searcher()
    result = searcher.search(text, limit=TOP_K)
    ids = [str(searcher.doc(addr).get_first("id")) for _score, addr in result.hits]
    hits = ctx.hydrate(ids)
    return [hits[i].to_dict() for i in ids if i in hits]


def without_policy(hit: dict[str, Any]) -> dict[str, Any]:
    """A hit as a store without a current-state policy would present it."""
    return {**hit, "status": "current", "claims": [], "superseded_by": None}


@dataclass
class QueryResult:
    dialogue: int
    instruction: int
    kind: str  # topic | eval_query
    arm: str  # on | off
    query: str
    current_session: int
    versions: dict[int, int]  # session -> version, for every mention of the chain
    recall: bool
    leak_sessions: list[int]
    gold_retrieved: bool  # the current gold session is in the top 5, whatever its status
    stale_retrieved: bool  # some stale session is in the top 5, whatever its status
    history_mode: bool
    latency: float
    top: list[dict[str, Any]]  # session, status, claims stating a chain version: for --explain
    gold_rank: int | None = None  # --explain, policy ON: 1-based rank in the top 100
    gold_state: str | None = None  # --explain: the gold record's stored status


def score(hits: list[dict[str, Any]], chain: Chain, ins: Instruction,
          session_of: dict[str, int]) -> tuple[bool, list[int], bool, bool]:
    by_session = {session_of[h["id"]]: h for h in hits if h["id"] in session_of}
    cur_session, cur_version = chain.current
    gold = by_session.get(cur_session)
    recall = gold is not None and presents_as_current(gold, ins.versions[cur_version], ins)
    leaks = [s for s, v in chain.stale
             if s in by_session and v != cur_version
             and presents_as_current(by_session[s], ins.versions[v], ins)]
    stale_retrieved = any(s in by_session for s, _ in chain.stale)
    return recall, leaks, gold is not None, stale_retrieved


def _explain_top(hits: list[dict[str, Any]], chain: Chain, ins: Instruction,
                 session_of: dict[str, int]) -> list[dict[str, Any]]:
    versions = {v for _, v in chain.mentions}
    out = []
    for h in hits:
        session = session_of.get(h["id"], -1)
        claims = []
        for v in sorted(versions):
            for c in claims_stating(h["claims"], ins.versions[v], ins):
                claims.append({"version": v, "status": c["status"], "subject": c["subject"],
                               "predicate": c["predicate"], "value": c["value"],
                               "evidence": c["evidence"]})
        out.append({"session": session, "status": h["status"], "claims": claims,
                    "n_claims": len(h["claims"]),
                    "marker_in_text": [v for v in sorted(versions)
                                       if ins.versions[v].marker.search(h["content"])]})
    return out


def _locate_gold(ctx: Reader, result: QueryResult, gold_id: str) -> None:
    deep = ctx.search(SearchRequest(query=result.query, top_k=100)).results
    ranks = [i for i, h in enumerate(deep, 1) if h["id"] == gold_id]
    result.gold_rank = ranks[0] if ranks else None
    result.gold_state = ctx.memory.get_rows([gold_id])[gold_id]["state"]


# ---------------------------------------------------------------------------------------------
# One dialogue


@dataclass
class DialogueResult:
    dialogue: int
    sessions: int
    records: int
    claims: int
    ingest_seconds: float
    chains: int
    mentions: int
    marker_missing: int  # chain mentions whose session text lacks the version's marker
    queries: list[QueryResult]
    records_superseded: int = 0  # hidden records
    records_conflicted: int = 0  # visible records with some superseded or conflicting claim
    mentions_with_claim: int = 0  # chain mentions whose record has a claim stating the version
    stale_mentions: int = 0
    stale_retired: int = 0  # stale mentions with claims stating the version, all superseded


def run_dialogue(data: Path, number: int, topics: dict[int, Instruction],
                 explain: bool = False) -> DialogueResult:
    dialogue = load_dialogue(data, number)
    chains = updated_chains(dialogue)
    sessions = dialogue["sessions"]
    marker_missing = sum(
        1 for chain in chains for s, v in chain.mentions
        if not topics[chain.instruction].versions[v].marker.search(sessions[s]["text"])
    )
    with tempfile.TemporaryDirectory(prefix="lintaid-memorycode-") as tmp:
        store = MemoryStore(Path(tmp))
        writer = Writer(store)
        writer.start()
        try:
            session_of: dict[str, int] = {}
            started = time.perf_counter()
            for index, session in enumerate(sessions):
                rec = NewRecord(content=session["text"], kind="capture",
                                source=f"memorycode://{number}/{index}",
                                created_at=BASE_TIME + index * SESSION_GAP)
                rid, _event = writer.run(lambda rec=rec: store.put(rec, "memorycode"))
                session_of[rid] = index
            writer.wait_visible()
            record_of = {index: rid for rid, index in session_of.items()}
            ingest = time.perf_counter() - started
            counts = store.counts()
            coverage = _claim_coverage(store, chains, topics, record_of)
            ctx = Reader(memory=store, wait_visible=writer.wait_visible)
            results = []
            for chain in chains:
                ins = topics[chain.instruction]
                latest = ins.versions[chain.current[1]]
                for kind, query in (("topic", latest.obj), ("eval_query", ins.eval_query)):
                    for arm in ARMS:
                        t0 = time.perf_counter()
                        if arm == "on":
                            found = ctx.search(SearchRequest(query=query, top_k=TOP_K))
                            hits = [h.to_dict() for h in found.results]
                            asked_history = found.history
                        else:
                            hits = [without_policy(h) for h in plain_search(ctx, query)]
                            asked_history = False
                        latency = time.perf_counter() - t0
                        recall, leaks, gold, stale = score(hits, chain, ins, session_of)
                        result = QueryResult(
                            number, chain.instruction, kind, arm, query, chain.current[0],
                            dict(chain.mentions), recall, leaks, gold, stale,
                            asked_history, latency, [])
                        if explain:
                            result.top = _explain_top(hits, chain, ins, session_of)
                            if arm == "on":
                                _locate_gold(ctx, result, record_of[chain.current[0]])
                        results.append(result)
        finally:
            writer.stop()
            store.close()
    return DialogueResult(number, len(sessions), counts["records"], counts["claims"], ingest,
                          len(chains), sum(len(c.mentions) for c in chains), marker_missing,
                          results, counts["superseded"], counts["conflicted"], *coverage)


def _claim_coverage(store: MemoryStore, chains: list[Chain], topics: dict[int, Instruction],
                    record_of: dict[int, str]) -> tuple[int, int, int]:
    """Retrieval-independent: (mentions with a claim, stale mentions, stale mentions retired)."""
    claims = store.claims_for(list(record_of.values()))
    with_claim = stale = retired = 0
    for chain in chains:
        ins = topics[chain.instruction]
        for position, (session, version) in enumerate(chain.mentions):
            stating = claims_stating(claims[record_of[session]], ins.versions[version], ins)
            with_claim += bool(stating)
            if position < len(chain.mentions) - 1:
                stale += 1
                retired += bool(stating) and all(c["status"] == "superseded" for c in stating)
    return with_claim, stale, retired


# ---------------------------------------------------------------------------------------------
# Report


def share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return sum(values) / len(values) if values else float("nan")


def select(results: list[QueryResult], kind: str, arm: str) -> list[QueryResult]:
    return [r for r in results if r.kind == kind and r.arm == arm]


def table(results: list[QueryResult]) -> str:
    head = (f"{'query':<11} {'policy':<6} {'recall@5':>9} {'leak@5':>7} "
            f"{'gold in top5':>13} {'stale in top5':>14} {'n':>5}")
    lines = [head, "-" * len(head)]
    for kind in QUERY_KINDS:
        for arm in ARMS:
            rows = select(results, kind, arm)
            label = kind + (" *" if kind == HEADLINE else "")
            lines.append(
                f"{label:<11} {arm.upper():<6} {share(r.recall for r in rows):>9.3f} "
                f"{share(bool(r.leak_sessions) for r in rows):>7.3f} "
                f"{share(r.gold_retrieved for r in rows):>13.3f} "
                f"{share(r.stale_retrieved for r in rows):>14.3f} {len(rows):>5}"
            )
    lines.append(f"target      {'':<6} {'>= ' + str(TARGET_RECALL):>9} "
                 f"{'<= ' + str(TARGET_LEAKAGE):>7}")
    lines.append(f"* headline query: {HEADLINE} (regex[v][0] of the latest version)")
    return "\n".join(lines)


def by_length(done: list[DialogueResult]) -> str:
    """The headline query per dialogue length: where recall and leakage come from."""
    head = (f"{'sessions':>8} {'chains':>6} {'recall ON':>9} {'leak ON':>7} {'leak OFF':>8} "
            f"{'ingest ms/session':>17}")
    lines = [f"by dialogue length ({HEADLINE} query)", head, "-" * len(head)]
    for size in sorted({d.sessions for d in done}):
        group = [d for d in done if d.sessions == size]
        qs = [q for d in group for q in d.queries if q.kind == HEADLINE]
        on = [q for q in qs if q.arm == "on"]
        off = [q for q in qs if q.arm == "off"]
        ms = 1000 * sum(d.ingest_seconds for d in group) / sum(d.sessions for d in group)
        if not on:
            lines.append(f"{size:>8} {0:>6} {'-':>9} {'-':>7} {'-':>8} {ms:>17.1f}")
            continue
        lines.append(f"{size:>8} {len(on):>6} {share(q.recall for q in on):>9.3f} "
                     f"{share(bool(q.leak_sessions) for q in on):>7.3f} "
                     f"{share(bool(q.leak_sessions) for q in off):>8.3f} {ms:>17.1f}")
    return "\n".join(lines)


def recall_category(r: QueryResult) -> str:
    if r.recall:
        return "ok"
    gold = next((t for t in r.top if t["session"] == r.current_session), None)
    if gold is None:
        if r.gold_state == "superseded":
            return "gold record superseded, so hidden"
        stale = any(t["session"] in r.versions for t in r.top)
        where = ("not in top 100" if r.gold_rank is None
                 else "rank 6-10" if r.gold_rank <= 10 else "rank > 10")
        if stale:
            return f"gold outranked ({where}); stale sessions of the chain in the top 5"
        return f"gold outranked ({where}) by unrelated sessions only"
    if gold["status"] not in PRESENTED:
        return f"gold record status {gold['status']}"
    return "gold claim for the latest version marked superseded"


def leak_category(r: QueryResult, session: int, version: int) -> str:
    hit = next(t for t in r.top if t["session"] == session)
    statuses = {c["status"] for c in hit["claims"] if c["version"] == version}
    if not statuses:
        return "no claim extracted for the stale statement (nothing to retire)"
    if "superseded" in statuses:
        return "stale claim superseded, but a second claim for it (other chain) left current"
    return "stale claim never superseded (the newer statement did not reach its chain)"


def explain(results: list[QueryResult], topics: dict[int, Instruction], examples: int = 5) -> None:
    on = select(results, HEADLINE, "on")
    recall_cats = Counter(recall_category(r) for r in on if not r.recall)
    leak_cats: Counter[str] = Counter()
    for r in on:
        for s in r.leak_sessions:
            leak_cats[leak_category(r, s, r.versions[s])] += 1
    print(f"\nFailure categories ({HEADLINE} query, policy ON)")
    misses = [r for r in on if not r.recall]
    stale_slots = [sum(t["session"] in r.versions for t in r.top) for r in misses]
    print(f"  recall misses: {len(misses)} (stale sessions per missed top 5: mean "
          f"{statistics.fmean(stale_slots) if stale_slots else 0:.2f})")
    for cat, n in recall_cats.most_common():
        print(f"    {n:5}  {cat}")
    print(f"  leaking stale hits: {sum(leak_cats.values())} "
          f"in {sum(bool(r.leak_sessions) for r in on)} queries")
    for cat, n in leak_cats.most_common():
        print(f"    {n:5}  {cat}")
    failing = [r for r in on if not r.recall or r.leak_sessions]
    step = max(1, len(failing) // examples)
    for r in failing[::step][:examples]:
        versions = r.versions
        ins = topics[r.instruction]
        print(f"\n- dialogue {r.dialogue}, instruction {r.instruction}, query {r.query!r}: "
              f"recall={r.recall} leaks={r.leak_sessions} gold rank={r.gold_rank} "
              f"({recall_category(r)})")
        chain = ", ".join(f"s{s}:{ins.versions[v].text!r}" for s, v in sorted(versions.items()))
        print(f"  chain (last is current): {chain}")
        for t in r.top:
            role = ("CURRENT" if t["session"] == r.current_session
                    else "stale" if t["session"] in versions else "other")
            print(f"  s{t['session']:<3} {role:<7} {t['status']:<10} claims={t['n_claims']:<2} "
                  f"markers in text: versions {t['marker_in_text']}")
            for c in t["claims"]:
                print(f"        v{c['version']} {c['status']:<10} ({c['subject']} | "
                      f"{c['predicate']} | {c['value']}) <- {c['evidence'][:110]!r}")


# ---------------------------------------------------------------------------------------------
# Main


def _worker(args: tuple[Path, int, bool]) -> DialogueResult:
    data, number, want_explain = args
    return run_dialogue(data, number, load_topics(data), want_explain)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="the MemoryCode folder holding topics.json and dataset/")
    parser.add_argument("--limit", type=int, default=None, help="N dialogues spread evenly over the set (all lengths)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="dialogues run in parallel (separate processes)")
    parser.add_argument("--explain", action="store_true",
                        help="print failure categories and 5 failing examples")
    args = parser.parse_args(argv)
    data: Path = args.data.resolve()
    if not (data / "topics.json").is_file() or not (data / "dataset").is_dir():
        print(f"MemoryCode data not found at {data}: expected topics.json and dataset/. "
              "Pass --data DIR (see /work/shared/bench-data/memorycode/README.md).",
              file=sys.stderr)
        return 2
    import logging

    logging.getLogger("lintaid").setLevel(logging.CRITICAL)  # lintaid.logs: stdlib loggers
    topics = load_topics(data)
    numbers = dialogue_numbers(data)
    if args.limit is not None and 0 < args.limit < len(numbers):
        # Spread evenly: the files are ordered by dialogue length, so a prefix is all 1-session.
        step = len(numbers) / args.limit
        numbers = [numbers[int(i * step)] for i in range(args.limit)]
    started = time.perf_counter()
    jobs = [(data, n, args.explain) for n in numbers]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            done = list(pool.map(_worker, jobs, chunksize=1))
    else:
        done = [run_dialogue(data, n, topics, args.explain) for n in numbers]
    wall = time.perf_counter() - started
    results = [q for d in done for q in d.queries]
    history_hits = {r.query for r in results if r.history_mode}
    latencies = [r.latency for r in results]
    print(f"MemoryCode ({data})")
    print(f"dialogues {len(done)}   sessions/records {sum(d.sessions for d in done)}/"
          f"{sum(d.records for d in done)}   claims extracted {sum(d.claims for d in done)}")
    print(f"chains with updates {sum(d.chains for d in done)}   chain mentions "
          f"{sum(d.mentions for d in done)} (marker not in session text: "
          f"{sum(d.marker_missing for d in done)})   queries {len(results)} "
          f"({len(QUERY_KINDS)} kinds x {len(ARMS)} arms per chain)")
    ingest = sum(d.ingest_seconds for d in done)
    sessions = max(1, sum(d.sessions for d in done))
    search_ms = (f"search mean {1000 * statistics.fmean(latencies):.2f} ms "
                 f"(p50 {1000 * statistics.median(latencies):.2f})" if latencies else "no queries")
    print(f"ingest total {ingest:.1f} s ({1000 * ingest / sessions:.1f} ms/session, one writer "
          f"batch per session)   {search_ms}")
    mentions = sum(d.mentions for d in done)
    print(f"records superseded (hidden) {sum(d.records_superseded for d in done)}   conflicted "
          f"{sum(d.records_conflicted for d in done)}   chain mentions with a claim for their "
          f"version {sum(d.mentions_with_claim for d in done)}/{mentions}   stale mentions "
          f"retired (every such claim superseded) {sum(d.stale_retired for d in done)}/"
          f"{sum(d.stale_mentions for d in done)}")
    print(f"wall {wall:.1f} s with {args.jobs} process(es)"
          + (f"   history phrase in ON queries: {sorted(history_hits)}" if history_hits else ""))
    print()
    print(table(results))
    print()
    print(by_length(done))
    if args.explain:
        explain(results, topics)
    return 0


if __name__ == "__main__":
    sys.exit(main())
