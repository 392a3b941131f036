"""Project histories replayed through the hooks: what is current, what reaches the agent.

Each history (the format of ``../shared/bench-data/histories/README.md``: sessions of turns,
gold facts with every mention and how it relates, probe questions) is replayed through a real
daemon (in process, over its socket) exactly as Claude Code would deliver it: for every
session a SessionStart, then per turn a UserPromptSubmit with the user's text, the turn
appended to a real JSONL transcript, and a Stop; a SessionEnd when the session changes. Then
each probe is asked in a fresh session (SessionStart, then UserPromptSubmit with the
question), in order, in the same store.

Figures, per history and in total:

* prompt probes (the UserPromptSubmit injection of each probe). A value is *presented* by an
  injected entry when its key tokens are in the entry outside what the entry marks as not
  current (a superseded note, the ``before:`` half of a change, a line or entry marked
  conflicted, the old side of a transition: "instead of X", "from X", "X ->"). A memory probe
  is a *stale error* when an entry presents one of its retired values or abandoned proposals
  as current, *correct* when one presents the expected value; *precision* is the share of
  injected entries that present an expected value and no stale one; a no-memory probe
  (general programming question) should get nothing: how many got anything, and bytes.
* SessionStart after the replay (a fresh session): how many of the facts' current values it
  presents as current, and how many retired values it presents as current.
* relations (read from memory.db after the replay), judged against the gold mentions: a
  relation is judged when one side's evidence overlaps a gold quote of a tracked fact; it is
  right when the gold says the same thing of those two turns for that fact (``replaces`` and
  ``reverts`` supersede the mentions of the value they retire; ``same`` and a revert's
  restated value confirm the earlier mentions of that value). Recall is over the gold pairs.

Value matching is loose by design (values are short canonical strings): a value matches a
text when every number in it (durations compared in seconds) and at least 60% of its other
key words are there; a value with a parenthesis ("fra (Frankfurt)") matches by either part.

    python benchmarks/histories.py [FILES ...] [--json PATH] [--show N] [--max-bytes 8000]

Without FILES: the three histories in ``../shared/bench-data/histories/`` and, if present,
``benchmarks/data/histories/dev/``. ``--split test`` runs the frozen test split instead.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client")]

from lintaid.daemon import Config, Daemon  # noqa: E402
from lintaid_client import connection, paths  # noqa: E402

SHARED = REPO.parent / "shared" / "bench-data" / "histories"
OWN = REPO / "benchmarks" / "data" / "histories"
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


# ---------------------------------------------------------------------------------------------
# Matching values in text

_STOP = frozenset(
    "a an the of for to in on at by with and or is are be as per via from into its it "
    "this that our we use uses used using".split())
_DURATION_UNITS = {
    "ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800,
    "month": 2592000, "months": 2592000,
}
_NUM_UNIT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([a-z]+)?", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9][a-z0-9_./@:-]*[a-z0-9]|[a-z0-9]", re.IGNORECASE)


def fold(text: str) -> str:
    return " ".join(text.lower().split())


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _numbers(text: str) -> set[str]:
    """Numbers in ``text``, durations also as ``<seconds>s``."""
    out: set[str] = set()
    for m in _NUM_UNIT.finditer(text):
        number, unit = m.group(1), (m.group(2) or "").lower()
        out.add(number.rstrip("0").rstrip(".") if "." in number else number)
        if unit in _DURATION_UNITS:
            out.add(f"{float(number) * _DURATION_UNITS[unit]:g}s")
    return out


@dataclass(frozen=True)
class ValueKey:
    raw: str
    numbers: frozenset[str]
    durations: frozenset[str]
    words: tuple[str, ...]


def value_keys(value: str) -> list[ValueKey]:
    """One key per alternative of ``value`` ("fra (Frankfurt)": "fra" and "Frankfurt")."""
    parts = [value]
    inside = re.findall(r"\(([^)]*)\)", value)
    if inside:
        parts = [re.sub(r"\([^)]*\)", " ", value), *inside]
    keys = []
    for part in parts:
        nums = _numbers(part)
        durations = frozenset(n for n in nums if n.endswith("s") and not n[:-1].isalpha())
        plain = frozenset(n for n in nums if n not in durations)
        words = tuple(dict.fromkeys(
            _stem(w.lower()) for w in _WORD.findall(part)
            if w.lower() not in _STOP and not _NUM_UNIT.fullmatch(w)
            and w.lower() not in _DURATION_UNITS))
        if plain or durations or words:
            keys.append(ValueKey(part.strip(), plain, durations, words))
    return keys


def _text_terms(text: str) -> tuple[set[str], set[str]]:
    words = {_stem(w.lower()) for w in _WORD.findall(text)}
    # "kettle-media" also as its parts; "`go 1.23.0`" as "go"
    for w in list(words):
        words.update(p for p in re.split(r"[-_/.:@`]", w) if p)
    return words, _numbers(text)


def matches(value: str, text: str) -> bool:
    words, numbers = _text_terms(text)
    for key in value_keys(value):
        if key.numbers and not key.numbers <= numbers:
            continue
        if key.durations and not key.durations <= numbers:
            continue
        if key.words:
            hit = sum(1 for w in key.words if w in words)
            need = math.ceil(0.6 * len(key.words)) if (key.numbers or key.durations) \
                else max(1, math.ceil(0.6 * len(key.words)))
            if hit < need:
                continue
        return True
    return False


# What a text marks as not current: superseded notes, the old side of a change or transition.
_NOT_CURRENT_LINE = re.compile(
    r"superseded|historical|\bretired\b|\[conflicted|conflicted\b|review pending", re.I)
_OLD_SIDE = re.compile(
    r"(?:\b(?:instead\s+of|rather\s+than|in\s+place\s+of|replac(?:ed|ing|es)|from|"
    r"no\s+longer|not|was|were|previously|formerly|used\s+to|old|before:?|dropp(?:ed|ing)|"
    r"removed|retired|deprecated)\s+)([^.;,\n]{1,60})"
    r"|([^\s,;]{1,40}(?:\s+[^\s,;]{1,20}){0,2})\s*(?:\u2192|->|=>)", re.I)


# Provenance is no statement: a memory id or a capture time ("19:10Z") must not match a
# value ("10%").
_PROVENANCE = re.compile(r"\bm[0-9a-f]{23}\b|\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?Z")


def current_text(segment: str) -> str:
    """``segment`` with what it marks as not current blanked out."""
    kept = []
    for line in _PROVENANCE.sub(" ", segment).splitlines():
        if _NOT_CURRENT_LINE.search(line):
            continue
        line = line.split("; before:", 1)[0]
        kept.append(_OLD_SIDE.sub(" ", line))
    return "\n".join(kept)


def entries(text: str | None) -> list[str]:
    """Injected text cut into entries: each top-level ``- `` line with the indented lines
    after it. The header is no entry."""
    out: list[str] = []
    for line in (text or "").splitlines():
        if line.startswith("- "):
            out.append(line)
        elif line.startswith((" ", "\t")) and out and line.strip():
            out[-1] += "\n" + line
    return out


# ---------------------------------------------------------------------------------------------
# The daemon


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "commit.gpgsign=false", *args],
                   capture_output=True, text=True, check=True, env={**os.environ, **GIT_ENV})


class Harness:
    """A git project with a daemon running in this process, spoken to over its socket."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")
        (root / "README.md").write_text("# project\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "init")
        paths.ensure_state_dir(root)
        self.daemon = Daemon(root, Config(inject_max_bytes=max_bytes, watch_workspace=False))
        self.thread = threading.Thread(target=self.daemon.run, name="bench-daemon", daemon=True)
        self.thread.start()
        if not self.daemon.ready.wait(60):
            raise RuntimeError("the daemon did not start")
        self.conn = connection.Connection(root)

    def close(self) -> None:
        self.conn.close()
        self.daemon.request_shutdown()
        self.thread.join(60)

    def hook(self, event: str, payload: dict[str, Any]) -> tuple[str | None, list[str]]:
        result = self.conn.call("hook", {"provider": "claude-code", "event": event,
                                         "payload": {"cwd": str(self.root),
                                                     "hook_event_name": event, **payload}},
                                timeout=120)
        self.conn.call("search", {"query": "settle", "top_k": 1}, timeout=120,
                       after=self.conn.last_token)
        out = result.get("output") or {}
        context = out.get("hookSpecificOutput", {}).get("additionalContext")
        return (context if isinstance(context, str) else None), list(result.get("captured") or [])


class Transcript:
    def __init__(self, path: Path, session: str, cwd: str) -> None:
        self.path, self.session, self.cwd = path, session, cwd
        self.parent: str | None = None

    def add(self, role: str, text: str, at: str) -> None:
        entry_id = str(uuid.uuid4())
        message: dict[str, Any] = {"role": role, "content": text}
        if role == "assistant":
            message = {"id": "msg_" + uuid.uuid4().hex[:22], "type": "message",
                       "role": "assistant", "content": [{"type": "text", "text": text}]}
        entry = {"parentUuid": self.parent, "type": role, "uuid": entry_id,
                 "sessionId": self.session, "cwd": self.cwd, "timestamp": at,
                 "message": message}
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
        self.parent = entry_id


# ---------------------------------------------------------------------------------------------
# Replay and probes


@dataclass
class Run:
    name: str
    turn_records: dict[int, str] = field(default_factory=dict)
    probe_texts: list[tuple[dict[str, Any], str | None, str | None]] = field(default_factory=list)
    final_start: str | None = None
    db: Path | None = None
    replay_s: float = 0.0


def replay(history: dict[str, Any], workdir: Path, max_bytes: int) -> tuple[Run, Harness]:
    harness = Harness(workdir / "project", max_bytes)
    run = Run(history["id"])
    started = time.perf_counter()
    session: str | None = None
    transcript: Transcript | None = None
    for index, turn in enumerate(history["turns"]):
        if turn["session"] != session:
            if session is not None:
                harness.hook("SessionEnd", {"session_id": session, "reason": "other",
                                            "transcript_path": str(transcript.path)})
            session = f"{turn['session']}-{uuid.uuid4().hex[:8]}"
            transcript = Transcript(workdir / f"{session}.jsonl", session, str(harness.root))
            transcript.path.touch()
            harness.hook("SessionStart", {"session_id": session, "source": "startup",
                                          "transcript_path": str(transcript.path)})
        assert transcript is not None
        harness.hook("UserPromptSubmit", {"session_id": session, "prompt": turn["user"],
                                          "transcript_path": str(transcript.path)})
        transcript.add("user", turn["user"], turn["at"])
        transcript.add("assistant", turn["assistant"], turn["at"])
        _text, captured = harness.hook("Stop", {
            "session_id": session, "transcript_path": str(transcript.path),
            "stop_hook_active": False, "last_assistant_message": turn["assistant"]})
        if captured:
            run.turn_records[index] = captured[-1]
    if session is not None and transcript is not None:
        harness.hook("SessionEnd", {"session_id": session, "reason": "other",
                                    "transcript_path": str(transcript.path)})
    run.replay_s = time.perf_counter() - started
    fresh = f"probe-start-{uuid.uuid4().hex[:8]}"
    run.final_start, _ = harness.hook("SessionStart", {"session_id": fresh,
                                                       "source": "startup"})
    for probe in history["probes"]:
        sid = f"probe-{probe['id']}-{uuid.uuid4().hex[:8]}"
        start, _ = harness.hook("SessionStart", {"session_id": sid, "source": "startup"})
        prompt, _ = harness.hook("UserPromptSubmit", {"session_id": sid,
                                                      "prompt": probe["question"]})
        run.probe_texts.append((probe, start, prompt))
    run.db = harness.root / ".lint-ai" / "memory.db"
    return run, harness


# ---------------------------------------------------------------------------------------------
# Scoring


@dataclass
class Score:
    memory_probes: int = 0
    correct: int = 0
    stale: int = 0
    missed: int = 0
    entries: int = 0
    good_entries: int = 0
    general_probes: int = 0
    general_given: int = 0
    general_bytes: list[int] = field(default_factory=list)
    prompt_bytes: list[int] = field(default_factory=list)
    start_facts: int = 0
    start_current: int = 0
    start_retired_shown: int = 0
    start_bytes: int = 0
    rel: Counter[str] = field(default_factory=Counter)
    secrets_injected: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, other: Score) -> None:
        for name, value in vars(other).items():
            mine = getattr(self, name)
            if isinstance(value, Counter):
                mine.update(value)
            elif isinstance(value, list):
                mine.extend(value)
            else:
                setattr(self, name, mine + value)

    def figures(self) -> dict[str, Any]:
        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 3) if b else None

        r = self.rel
        return {
            "memory_probes": self.memory_probes,
            "stale_probes": self.stale, "stale_rate": ratio(self.stale, self.memory_probes),
            "correct": self.correct, "recall": ratio(self.correct, self.memory_probes),
            "precision": ratio(self.good_entries, self.entries), "entries": self.entries,
            "general_given": f"{self.general_given}/{self.general_probes}",
            "mean_prompt_bytes": round(sum(self.prompt_bytes) / len(self.prompt_bytes))
            if self.prompt_bytes else 0,
            "start_current": f"{self.start_current}/{self.start_facts}",
            "start_retired_as_current": self.start_retired_shown,
            "start_bytes": self.start_bytes,
            "secrets_injected": self.secrets_injected,
            "relations": {
                kind: {"precision": ratio(r[f"{kind}_right"], r[f"{kind}_judged"]),
                       "recall": ratio(r[f"{kind}_found"], r[f"{kind}_gold"]),
                       "judged": r[f"{kind}_judged"], "gold": r[f"{kind}_gold"],
                       "unjudged": r[f"{kind}_unjudged"]}
                for kind in ("supersedes", "confirms", "conflicts")},
        }


def retired_values(fact: dict[str, Any]) -> list[str]:
    return [*fact.get("retired", []), *fact.get("abandoned_proposals", [])]


def presents(entry: str, value: str) -> bool:
    return matches(value, current_text(entry))


def score_probe(probe: dict[str, Any], prompt: str | None, facts: dict[str, Any],
                sc: Score, secrets: list[str]) -> None:
    text = prompt or ""
    size = len(text.encode("utf-8"))
    sc.prompt_bytes.append(size)
    sc.secrets_injected += sum(1 for s in secrets if s and s in text)
    if not probe.get("needs_memory"):
        sc.general_probes += 1
        sc.general_bytes.append(size)
        sc.general_given += 1 if text else 0
        return
    sc.memory_probes += 1
    expected = probe["expected"]
    bad = probe.get("must_not_present_as_current") or []
    stale = correct = False
    for entry in entries(text):
        sc.entries += 1
        shows_bad = [v for v in bad if presents(entry, v)]
        shows_good = presents(entry, expected)
        if shows_bad:
            stale = True
            if len(sc.examples) < 400:
                sc.examples.append(f"STALE {probe['id']} {probe['question']!r} -> "
                                   f"{shows_bad}: {entry[:300]!r}")
        if shows_good and not shows_bad:
            sc.good_entries += 1
        correct = correct or shows_good
    if stale:
        sc.stale += 1
    if correct and not stale:
        sc.correct += 1
    if not correct and not stale:
        sc.missed += 1


def score_start(text: str | None, facts: list[dict[str, Any]], sc: Score) -> None:
    body = text or ""
    sc.start_bytes += len(body.encode("utf-8"))
    items = entries(body)
    for fact in facts:
        sc.start_facts += 1
        if any(presents(item, fact["current"]) for item in items):
            sc.start_current += 1
        shown = [v for v in fact.get("retired", []) if any(presents(i, v) for i in items)]
        if shown:
            sc.start_retired_shown += 1
            sc.examples.append(f"START-RETIRED {fact['id']}: {shown} in "
                               + repr([i for i in items if any(presents(i, v) for v in shown)][:2]))


# -- relations ---------------------------------------------------------------------------------
def _norm(text: str) -> str:
    return re.sub(r"[`*_#>|]", "", fold(text))


def overlaps(evidence: str, quote: str) -> bool:
    a, b = _norm(evidence), _norm(quote)
    if not a or not b:
        return False
    if a in b or b in a:
        return True
    m = difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match(
        0, len(a), 0, len(b))
    return m.size >= min(0.6 * min(len(a), len(b)), 25)


def gold_pairs(facts: list[dict[str, Any]]) -> set[tuple[int, int, str, str]]:
    """(newer turn, older turn, fact id, supersedes|confirms) the gold implies."""
    out: set[tuple[int, int, str, str]] = set()
    for fact in facts:
        said: dict[str, list[int]] = {}
        current: str | None = None
        for m in sorted(fact["mentions"], key=lambda m: m["turn"]):
            value, turn, rel = m["value"], m["turn"], m["relation"]
            if rel == "abandoned-proposal":
                continue
            key = fold(value)
            if rel in ("replaces", "reverts") and current is not None:
                for older in said.get(current, []):
                    if older != turn:
                        out.add((turn, older, fact["id"], "supersedes"))
            if rel in ("same", "reverts", "new"):
                for older in said.get(key, []):
                    if older != turn:
                        out.add((turn, older, fact["id"], "confirms"))
            said.setdefault(key, []).append(turn)
            current = key
    return out


def score_relations(history: dict[str, Any], run: Run, sc: Score) -> None:
    if run.db is None or not run.db.exists():
        return
    turn_of = {rid: t for t, rid in run.turn_records.items()}
    mentions: dict[int, list[tuple[str, str]]] = {}
    for fact in history["facts"]:
        for m in fact["mentions"]:
            mentions.setdefault(m["turn"], []).append((fact["id"], m["quote"]))
    gold = gold_pairs(history["facts"])
    conn = sqlite3.connect(f"file:{run.db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    evidence = {r["claim_id"]: r["evidence"] for r in conn.execute(
        "SELECT claim_id, evidence FROM claims")}
    found: set[tuple[int, int, str, str]] = set()
    for row in conn.execute("SELECT * FROM relations"):
        kind = row["kind"]
        if kind == "supersedes" and row["confidence"] < 0.9:
            kind = "conflicts"
        elif kind == "conflicts_with":
            kind = "conflicts"
        ts = turn_of.get(row["source_record"])
        tt = turn_of.get(row["target_record"])
        if ts is None or tt is None or ts == tt:
            continue
        facts_s = {f for f, q in mentions.get(ts, []) if overlaps(evidence.get(
            row["source_claim"], ""), q)}
        facts_t = {f for f, q in mentions.get(tt, []) if overlaps(evidence.get(
            row["target_claim"], ""), q)}
        judged_facts = facts_s | facts_t
        if not judged_facts:
            sc.rel[f"{kind}_unjudged"] += 1
            continue
        sc.rel[f"{kind}_judged"] += 1
        gold_kind = "supersedes" if kind == "conflicts" else kind
        hits = {(ts, tt, f, gold_kind) for f in judged_facts} & gold
        if kind != "conflicts" and hits:
            sc.rel[f"{kind}_right"] += 1
            found |= hits
        elif kind == "conflicts" and any(
                (ts, tt, f, "conflicts") in gold for f in judged_facts):
            sc.rel["conflicts_right"] += 1
    conn.close()
    for pair in gold:
        kind = pair[3]
        sc.rel[f"{kind}_gold"] += 1
        if pair in found:
            sc.rel[f"{kind}_found"] += 1


def secrets_of(history: dict[str, Any]) -> list[str]:
    return [s["quote"] for s in history.get("annotations", {}).get("secrets", [])]


def evaluate(history: dict[str, Any], run: Run) -> Score:
    sc = Score()
    facts = {f["id"]: f for f in history["facts"]}
    secrets = secrets_of(history)
    for probe, _start, prompt in run.probe_texts:
        score_probe(probe, prompt, facts, sc, secrets)
    score_start(run.final_start, history["facts"], sc)
    score_relations(history, run, sc)
    return sc


# ---------------------------------------------------------------------------------------------


def default_files(split: str) -> list[Path]:
    if split == "test":
        return sorted((OWN / "test").glob("*.json"))
    files = sorted(SHARED.glob("*.json")) if SHARED.is_dir() else []
    return files + sorted((OWN / "dev").glob("*.json"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--max-bytes", type=int, default=8000)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--show", type=int, default=0, help="print this many stale examples")
    ap.add_argument("--dump", type=Path, help="write every probe's injected text here")
    ap.add_argument("--keep", type=Path, help="replay into this folder and keep it (one "
                    "history per subfolder) to read its memory.db afterwards")
    ap.add_argument("--turns", type=int, default=0, help="replay only the first N turns "
                    "(a smoke run)")
    args = ap.parse_args(argv)
    files = args.files or default_files(args.split)
    if not files:
        print("no histories found (../shared/bench-data/histories/ is not here)")
        return 0
    total = Score()
    report: dict[str, Any] = {}
    dump: list[dict[str, Any]] = []
    for path in files:
        history = json.loads(path.read_text(encoding="utf-8"))
        if args.turns:
            history["turns"] = history["turns"][: args.turns]
        with tempfile.TemporaryDirectory(prefix="lintaid-hist-") as tmp:
            where = Path(tmp)
            if args.keep:
                where = args.keep / history["id"]
                where.mkdir(parents=True, exist_ok=False)
            run, harness = replay(history, where, args.max_bytes)
            try:
                sc = evaluate(history, run)
            finally:
                harness.close()
        total.add(sc)
        report[history["id"]] = sc.figures()
        figs = sc.figures()
        print(f"{history['id']}: {len(history['turns'])} turns replayed in {run.replay_s:.1f} s")
        _print(figs)
        if args.dump:
            dump.append({"history": history["id"], "final_start": run.final_start,
                         "probes": [{"probe": p, "start": s, "prompt": t}
                                    for p, s, t in run.probe_texts]})
        for line in sc.examples[: args.show]:
            print("   ", line)
    if len(files) > 1:
        print("total:")
        _print(total.figures())
    report["total"] = total.figures()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    if args.dump:
        args.dump.write_text(json.dumps(dump, indent=1) + "\n")
    return 0


def _print(figs: dict[str, Any]) -> None:
    rel = figs["relations"]
    print(f"  prompt probes: stale {figs['stale_probes']}/{figs['memory_probes']} "
          f"({figs['stale_rate']}), correct {figs['correct']} (recall {figs['recall']}), "
          f"precision {figs['precision']} over {figs['entries']} entries, "
          f"no-memory given {figs['general_given']}, mean bytes {figs['mean_prompt_bytes']}")
    print(f"  SessionStart: current {figs['start_current']}, retired shown as current "
          f"{figs['start_retired_as_current']}, {figs['start_bytes']} bytes; "
          f"secrets injected {figs['secrets_injected']}")
    print("  relations: " + "; ".join(
        f"{k} P {v['precision']} R {v['recall']} (judged {v['judged']}, gold {v['gold']}, "
        f"unjudged {v['unjudged']})" for k, v in rel.items()))


if __name__ == "__main__":
    sys.exit(main())
