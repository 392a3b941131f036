"""LoCoMo retrieval: evidence recall of lintaid's search beside plain BM25, and ranking experiments.

LoCoMo (snap-research/LoCoMo, CC BY-NC 4.0; Maharana et al., ACL 2024) is 10 long two-person
conversations with questions whose gold evidence is a list of turns (``dia_id``). The data lives
outside the repository (``--data``, default ``../shared/bench-data/locomo`` beside the repo
root); see its README. Nothing of it is copied here.

Setup (issue 10, item 1). Every turn is one record, stored as a conversation is meant to be
given to lintaid: ``"speaker: text"`` with the speaker as ``metadata.author`` and its session as
``session_id``; one user id per conversation, all conversations in one lintaid store, written
through the real ``Writer`` (one writer job per session) and read through the real ``Reader``
(``store="memory"``, top 25). Each record's ``created_at`` is its session's date-time (plus one
second per turn), as a capture would carry it. Questions of categories 1-4 are searched as they
are, a year after the conversation's last session (so "last week" in a question never means a
week of the conversation). ``--plain`` adds the issue's first setup as another row: the record
``"[dia_id] speaker: text"``, with no author and no session.

Gold. The ``evidence`` ids, split on ``;`` and whitespace, normalised (``D:11:26`` -> ``D11:26``,
``D30:05`` -> ``D30:5``) and kept when the conversation has that turn; a question none of whose
ids resolves is left out (counted in the output). The second gold set is the same with the
audit's ``correct_evidence`` (locomo-audit ``errors.json``) wherever the audit gives one.

Metric: evidence recall at k (LoCoMo's R@k): the share of a question's evidence turns in the top
k, averaged over questions, per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)
and overall, for k = 5, 10, 25. Plain BM25 is ``rank_bm25.BM25Okapi`` per conversation over the
same record texts, lowercase ``\\w+`` tokens. Latency is lintaid's ``Reader.search`` wall time.

``--analyse``: where lintaid misses at k=10 (see ``analyse``). ``--experiments``: candidate
improvements of issue 10, built directly on tantivy-py with lintaid's ``en_stem`` tokenizer so they
measure ranking ideas, not lintaid's plumbing (see the "Experiments" section below). Rules there
are general: nothing is keyed to this data set's names, phrasings or dates.

    python benchmarks/locomo.py [--data DIR] [--conversations N] [--json OUT]
                                [--analyse] [--experiments]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import tantivy

from lintaid.retrieval import query as query_rules
from lintaid.retrieval.dates import DAY, FORMS, month_number

REPO = Path(__file__).resolve().parent.parent
# ../shared beside the repository (a clone), or two levels up (a worktree under wt/).
DEFAULT_DATA = next((p / "shared" / "bench-data" / "locomo" for p in (REPO.parent,
                     REPO.parent.parent) if (p / "shared" / "bench-data" / "locomo").is_dir()),
                    REPO.parent / "shared" / "bench-data" / "locomo")
DATA_FILE = "locomo10.json"
AUDIT_FILE = "locomo-audit-errors.json"
KS = (5, 10, 25)
TOP_K = max(KS)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
GOLDS = ("locomo", "audit")
# Published comparison (LoCoMo paper, Table 3: DRAGON over dialogue turns, R@5/10/25).
DRAGON = {5: 56.7, 10: 66.2, 25: 76.7}

# ---------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    index: int  # position in its session, 0-based
    speaker: str
    text: str
    at: float  # the session's date-time, UTC seconds

    @property
    def record(self) -> str:
        return f"[{self.dia_id}] {self.speaker}: {self.text}"


@dataclass
class Question:
    conv: str
    number: int  # index into the conversation's qa list
    text: str
    category: int
    gold: dict[str, tuple[str, ...]]  # gold set name -> evidence dia_ids


@dataclass
class Conversation:
    sample_id: str
    user: str
    speakers: tuple[str, ...]
    turns: list[Turn]
    questions: list[Question]
    by_id: dict[str, Turn] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {t.dia_id: t for t in self.turns}

    def neighbours(self, dia_id: str) -> tuple[str | None, str | None]:
        """The turns before and after ``dia_id`` in its session."""
        t = self.by_id[dia_id]
        prev = f"D{t.session}:{t.index}" if t.index > 0 else None
        nxt = f"D{t.session}:{t.index + 2}"
        # dia_ids are D<session>:<1-based position>; check they exist rather than assume.
        return (prev if prev in self.by_id else None, nxt if nxt in self.by_id else None)


_SESSION_DATE = "%I:%M %p on %d %B, %Y"


def parse_session_time(text: str) -> float:
    return datetime.strptime(text.strip(), _SESSION_DATE).replace(tzinfo=timezone.utc).timestamp()


_ID = re.compile(r"^D:?(\d+):0*(\d+)$")


def evidence_ids(raw: Iterable[str], known: dict[str, Turn]) -> tuple[str, ...]:
    """Split, normalise and resolve evidence references; unknown ids are dropped."""
    out: list[str] = []
    for item in raw:
        for piece in re.split(r"[;\s]+", str(item)):
            m = _ID.match(piece.strip())
            if not m:
                continue
            dia = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia in known and dia not in out:
                out.append(dia)
    return tuple(out)


def parse_conversation(raw: dict[str, Any], audit: dict[tuple[str, int], list[str]],
                       position: int) -> tuple[Conversation, int]:
    """One conversation; returns it and the number of questions left out (no resolvable gold)."""
    conv = raw["conversation"]
    sessions = sorted(int(k.split("_")[1]) for k in conv
                      if re.fullmatch(r"session_\d+", k))
    turns: list[Turn] = []
    for s in sessions:
        at = parse_session_time(conv[f"session_{s}_date_time"])
        for i, t in enumerate(conv[f"session_{s}"]):
            turns.append(Turn(t["dia_id"], s, i, t["speaker"], t["text"], at))
    sample = raw["sample_id"]
    speakers = (conv["speaker_a"], conv["speaker_b"])
    c = Conversation(sample, f"locomo-{sample}", speakers, turns, [])
    # Turn ids of the form D<s>:<n> with n the 1-based position: neighbours() relies on it.
    assert all(t.dia_id == f"D{t.session}:{t.index + 1}" for t in turns), sample
    dropped = 0
    for n, qa in enumerate(raw["qa"]):
        if qa.get("category") not in CATEGORIES:
            continue
        original = evidence_ids(qa.get("evidence", []), c.by_id)
        corrected = evidence_ids(audit.get((str(position), n), []), c.by_id) or original
        if not original:
            dropped += 1
            continue
        c.questions.append(Question(sample, n, qa["question"], qa["category"],
                                    {"locomo": original, "audit": corrected}))
    return c, dropped


def load(data: Path, limit: int | None = None) -> tuple[list[Conversation], int, int]:
    """Conversations (the first ``limit``), questions dropped, audit corrections applied."""
    raw = json.loads((data / DATA_FILE).read_text())
    audit: dict[tuple[str, int], list[str]] = {}
    audit_path = data / AUDIT_FILE
    if audit_path.is_file():
        for rec in json.loads(audit_path.read_text()):
            m = re.fullmatch(r"locomo_(\d+)_qa(\d+)", rec["question_id"])
            if m and rec.get("correct_evidence"):
                audit[(m.group(1), int(m.group(2)))] = list(rec["correct_evidence"])
    convs, dropped = [], 0
    for position, item in enumerate(raw[:limit] if limit else raw):
        conv, lost = parse_conversation(item, audit, position)
        convs.append(conv)
        dropped += lost
    changed = sum(q.gold["audit"] != q.gold["locomo"] for c in convs for q in c.questions)
    return convs, dropped, changed


# ---------------------------------------------------------------------------------------------
# Metric


def recall_at(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """Share of ``evidence`` in the first ``k`` of ``ranked`` (1.0 when there is no evidence)."""
    if not evidence:
        return 1.0
    top = set(ranked[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


Rankings = dict[tuple[str, int], list[str]]  # (conversation, question number) -> dia_ids


def recall_table(convs: list[Conversation], ranked: Rankings, gold: str) -> dict[str, Any]:
    """R@k per category and overall, in percent, with question counts."""
    per: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for c in convs:
        for q in c.questions:
            r = ranked[(c.sample_id, q.number)]
            for k in KS:
                value = recall_at(r, q.gold[gold], k)
                per[str(q.category)][k].append(value)
                per["all"][k].append(value)
    out: dict[str, Any] = {}
    for cat in [*map(str, CATEGORIES), "all"]:
        values = per.get(cat)
        if not values:
            continue
        out[cat] = {f"R@{k}": round(100 * statistics.fmean(values[k]), 2) for k in KS}
        out[cat]["n"] = len(values[KS[0]])
    return out


def overall(convs: list[Conversation], ranked: Rankings, gold: str) -> dict[int, float]:
    table = recall_table(convs, ranked, gold)["all"]
    return {k: table[f"R@{k}"] for k in KS}


# ---------------------------------------------------------------------------------------------
# lintaid, in process


@dataclass
class LintaidRun:
    ranked: Rankings
    latencies: list[float]  # seconds per search
    ingest_seconds: float
    records: int
    hidden_by_policy: int  # matches the policy kept out, summed over questions
    superseded_records: int


def run_lintaid(convs: list[Conversation], order: Sequence[int] | None = None,
                plain: bool = False, top_k: int = TOP_K) -> LintaidRun:
    """Store every turn through lintaid's writer, then search every question.

    A turn is stored as a conversation turn is meant to be given to lintaid: ``"speaker:
    text"`` with ``metadata.author`` the speaker and ``session_id`` its session. ``plain``:
    as the issue first stored them, ``"[dia_id] speaker: text"`` with neither (no author, no
    session: no name field, no neighbour fusion, no context)."""
    from lintaid.capture.record import NewRecord
    from lintaid.search import Reader, SearchRequest
    from lintaid.store.memory import MemoryStore
    from lintaid.writer import Writer

    ranked: Rankings = {}
    latencies: list[float] = []
    hidden = 0
    with tempfile.TemporaryDirectory(prefix="lintaid-locomo-") as tmp:
        store = MemoryStore(Path(tmp))
        writer = Writer(store)
        writer.start()
        try:
            dia_of: dict[str, str] = {}
            started = time.perf_counter()
            for ci in order if order is not None else range(len(convs)):
                c = convs[ci]
                sessions: dict[int, list[Turn]] = defaultdict(list)
                for t in c.turns:
                    sessions[t.session].append(t)
                for s in sorted(sessions):
                    batch = [NewRecord(content=t.record if plain else f"{t.speaker}: {t.text}",
                                       kind="note",
                                       source=f"locomo://{c.sample_id}/{t.dia_id}",
                                       user_id=c.user, created_at=t.at + t.index,
                                       session_id=None if plain else f"{c.sample_id}/{s}",
                                       metadata={} if plain else {"author": t.speaker})
                             for t in sessions[s]]
                    results = writer.run(
                        lambda batch=batch: [store.put(rec, "bench") for rec in batch])
                    for t, (rid, _event) in zip(sessions[s], results, strict=True):
                        dia_of[rid] = t.dia_id
            reader = Reader(memory=store, wait_visible=writer.wait_visible)
            reader.settle(None, wait_s=600)
            ingest = time.perf_counter() - started
            counts = store.counts()
            for c in convs:
                # The questions are asked a year after the conversations ended: "last week"
                # in a question never means a week of the conversation.
                now = max(t.at for t in c.turns) + 365 * DAY
                for q in c.questions:
                    t0 = time.perf_counter()
                    found = reader.search(SearchRequest(query=q.text, user_id=c.user,
                                                        top_k=top_k, store="memory", now=now))
                    latencies.append(time.perf_counter() - t0)
                    hidden += found.hidden
                    ranked[(c.sample_id, q.number)] = [dia_of[h.id] for h in found.results
                                                       if h.id in dia_of]
        finally:
            writer.stop()
            store.close()
    return LintaidRun(ranked, latencies, ingest, counts["records"], hidden,
                      counts["superseded"])


# ---------------------------------------------------------------------------------------------
# Plain BM25


_WORD = re.compile(r"\w+")


def simple_tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def run_bm25(convs: list[Conversation]) -> Rankings:
    from rank_bm25 import BM25Okapi

    ranked: Rankings = {}
    for c in convs:
        bm25 = BM25Okapi([simple_tokens(t.record) for t in c.turns])
        ids = [t.dia_id for t in c.turns]
        for q in c.questions:
            scores = bm25.get_scores(simple_tokens(q.text))
            # Only turns sharing a word with the question count as retrieved (rank_bm25 scores
            # every turn; Tantivy returns matches only).
            matched = [i for i in range(len(ids)) if scores[i] > 0]
            order = sorted(matched, key=lambda i: (-scores[i], i))[:TOP_K]
            ranked[(c.sample_id, q.number)] = [ids[i] for i in order]
    return ranked


# ---------------------------------------------------------------------------------------------
# Shared text tools (analysis and experiments)

# The query-side stop list lintaid's search uses (a general English one, not tuned here).
STOP_WORDS = query_rules.STOP_WORDS

_ANALYZER: Any = None


def analyzer() -> Any:
    """Tantivy's ``en_stem`` chain (simple tokenizer, remove long, lowercase, English stemmer)."""
    global _ANALYZER
    if _ANALYZER is None:
        _ANALYZER = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
                     .filter(tantivy.Filter.remove_long(40))
                     .filter(tantivy.Filter.lowercase())
                     .filter(tantivy.Filter.stemmer("english"))
                     .build())
    return _ANALYZER


def stems(text: str) -> list[str]:
    return list(analyzer().analyze(text))


def content_stems(text: str) -> set[str]:
    """Stems of the non-stop words of ``text``."""
    words = [w for w in simple_tokens(text) if w not in STOP_WORDS]
    return set(stems(" ".join(words))) if words else set()


_QUERY_SPECIALS = set('+-&|!(){}[]^"~*?:\\/<>=\'`')


def query_words(text: str) -> list[str]:
    """lintaid's query preprocessing: specials to spaces, lowercase, distinct words in order."""
    return list(dict.fromkeys(
        "".join(" " if ch in _QUERY_SPECIALS else ch for ch in text).lower().split()))


def edit_distance(a: str, b: str, cap: int = 3) -> int:
    if abs(len(a) - len(b)) >= cap:
        return cap
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return min(prev[-1], cap)


def name_in(word: str, names: Iterable[str]) -> str | None:
    """The known name ``word`` denotes: equal, or one edit away for names of 5+ letters."""
    w = word.lower().removesuffix("'s")
    for name in names:
        n = name.lower()
        if w == n or (len(n) >= 5 and len(w) >= 4 and edit_distance(w, n) <= 1):
            return name
    return None


# Dates named in a question: the product's forms (``lintaid.retrieval.dates``); a month
# without a year is resolved here against the user's own timeline, for the experiments.


def _span(y: int, m: int, d: int | None = None) -> tuple[float, float]:
    if d is not None:
        lo = datetime(y, m, d, tzinfo=timezone.utc)
        return lo.timestamp(), (lo + timedelta(days=1)).timestamp()
    lo = datetime(y, m, 1, tzinfo=timezone.utc)
    hi = datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=timezone.utc)
    return lo.timestamp(), hi.timestamp()


def date_spans(question: str, years: Iterable[int], now: float) -> list[tuple[float, float]]:
    """Time spans a question names: ``[lo, hi)`` UTC seconds; empty when it names none.

    A month without a year means that month in any year of ``years`` (the user's timeline);
    relative phrases are taken against ``now`` (the user's latest record)."""
    spans: list[tuple[float, float]] = []
    taken: list[tuple[int, int]] = []

    def free(m: re.Match[str]) -> bool:
        return all(m.end() <= a or m.start() >= b for a, b in taken)

    for kind, pattern in FORMS:
        for m in pattern.finditer(question):
            if not free(m):
                continue
            try:
                if kind == "day_month_year":
                    spans.append(_span(int(m.group(3)), month_number(m.group(2)),
                                       int(m.group(1))))
                elif kind == "month_day_year":
                    spans.append(_span(int(m.group(3)), month_number(m.group(1)),
                                       int(m.group(2))))
                elif kind == "month_year":
                    spans.append(_span(int(m.group(2)), month_number(m.group(1))))
                elif kind == "month":
                    spans.extend(_span(y, month_number(m.group(1))) for y in years)
                elif kind == "year":
                    y = int(m.group(1))
                    spans.append((_span(y, 1)[0], _span(y + 1, 1)[0]))
                else:
                    phrase = " ".join(m.group(1).lower().split())
                    back = (1 if phrase == "yesterday" else 31 if "month" in phrase
                            else 366 if "year" in phrase else 10 if "days" in phrase
                            else 21 if "weeks" in phrase else 8)
                    spans.append((now - back * DAY, now + DAY))
            except ValueError:
                continue
            taken.append((m.start(), m.end()))
    return spans


def names_date(question: str) -> bool:
    return bool(date_spans(question, [2000], 0.0))


# ---------------------------------------------------------------------------------------------
# Error analysis (--analyse)


def analyse(convs: list[Conversation], ranked: Rankings, gold: str = "locomo",
            k: int = 10) -> dict[str, Any]:
    """Where lintaid misses at k.

    * ``no_shared_word``: missed evidence turns whose text (without the ``[id] speaker:``
      prefix) shares no content stem (stop words removed) with the question.
    * ``neighbour_in_top``: missed evidence turns whose previous or next turn in the same
      session is in the top k; ``questions_neighbour_in_top``: the same per question (questions
      missing some evidence where a missed turn's neighbour is in the top k).
    * ``date_bound_missed``: questions naming a date or a relative time that miss some evidence.
    * ``named_speaker_share``: for questions naming one speaker of the conversation, the mean
      share of the top k that are that speaker's turns (``base`` is that speaker's share of the
      conversation's turns), and how often the top k is at least 80% that speaker's.
    * ``misspelled_names``: question words one edit from a speaker's name but not equal to it.
    """
    missed = no_word = near = 0
    q_missing = q_near = 0
    date_q = date_missed = 0
    named: list[float] = []
    base: list[float] = []
    heavy = 0
    misspelled = 0
    for c in convs:
        for q in c.questions:
            top = ranked[(c.sample_id, q.number)][:k]
            evidence = q.gold[gold]
            q_stems = content_stems(q.text)
            lost = [e for e in evidence if e not in top]
            q_missing += bool(lost)
            any_near = False
            for e in lost:
                missed += 1
                no_word += not (q_stems & content_stems(c.by_id[e].text))
                prev, nxt = c.neighbours(e)
                any_near |= (prev in top) or (nxt in top)
                near += (prev in top) or (nxt in top)
            q_near += any_near
            if names_date(q.text):
                date_q += 1
                date_missed += bool(lost)
            words = re.findall(r"[A-Za-z']+", q.text)
            named_speakers = {s for s in c.speakers if any(name_in(w, [s]) for w in words)}
            misspelled += any(name_in(w, c.speakers) and w.lower() not in
                              {s.lower() for s in c.speakers} and
                              w.lower().removesuffix("'s") not in
                              {s.lower() for s in c.speakers} for w in words)
            if len(named_speakers) == 1 and top:
                who = next(iter(named_speakers))
                share = sum(c.by_id[d].speaker == who for d in top) / len(top)
                named.append(share)
                base.append(sum(t.speaker == who for t in c.turns) / len(c.turns))
                heavy += share >= 0.8

    def pct(a: int, b: int) -> float:
        return round(100 * a / b, 1) if b else float("nan")

    return {
        "k": k, "gold": gold, "missed_evidence_turns": missed,
        "no_shared_word": pct(no_word, missed),
        "neighbour_in_top": pct(near, missed),
        "questions_missing_evidence": q_missing,
        "questions_neighbour_in_top": pct(q_near, q_missing),
        "date_bound_questions": date_q,
        "date_bound_missed": pct(date_missed, date_q),
        "questions_naming_one_speaker": len(named),
        "named_speaker_share": round(100 * statistics.fmean(named), 1) if named else None,
        "named_speaker_base": round(100 * statistics.fmean(base), 1) if base else None,
        "named_speaker_top_80pct": pct(heavy, len(named)),
        "questions_with_misspelled_name": misspelled,
    }


# ---------------------------------------------------------------------------------------------
# Experiments (--experiments): ranking ideas of issue 10 on a bare Tantivy index.
#
# Each idea is one switch in ``Config``; ``run_experiment`` applies the switched-on ideas to the
# same index and questions. The baseline (every switch off, one index shared by all users) is
# lintaid's query on lintaid's tokenizer without the store: it should track lintaid closely.


@dataclass(frozen=True)
class Config:
    name: str
    per_user: bool = False  # (d) one index per user (conversation) instead of one shared
    reverse: bool = False  # (d) shared index written in the reverse conversation order
    stop_words: bool = False  # (b) drop stop words from the query
    names: str = "text"  # (b) text: names are words | field: speaker field, body without names
    name_weight: float = 0.0  # (b) constant bonus for a turn by a named speaker ("field" mode)
    fuse: str | None = None  # (a) "prev", "next", "both", "max-prev": neighbour score fusion
    fuse_weight: float = 0.5
    expand: str | None = None  # (a) "next" | "both": each hit brings its neighbours, same budget
    date: str | None = None  # (c) "boost" | "filter" by the session time of a named date
    date_boost: float = 1.5
    date_slack_days: float = 30.0  # an event is talked about up to this long after it
    prf: bool = False  # (e) RM3-style expansion with the top terms of the top 3 hits
    prf_terms: int = 10
    prf_weight: float = 0.5
    pool: int | None = None  # score only the top ``pool`` matches (None: every match)
    proximity: float = 0.0  # (f) bonus weight for adjacent query words near each other
    slop: int = 3  # (f) how far apart (positions) they may be


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("user", tokenizer_name="raw")
    sb.add_text_field("content", tokenizer_name="en_stem")  # the record, as lintaid indexes it
    sb.add_text_field("body", tokenizer_name="en_stem")  # the turn text alone
    sb.add_text_field("speaker", tokenizer_name="raw")  # lowercased author name
    sb.add_integer_field("at", indexed=True, fast=True)
    return sb.build()


class LexIndex:
    """A RAM Tantivy index over some conversations' turns (one doc per turn)."""

    def __init__(self, convs: Sequence[Conversation]) -> None:
        self.schema = _schema()
        self.index = tantivy.Index(self.schema)
        writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        for c in convs:
            for t in c.turns:
                writer.add_document(tantivy.Document(
                    id=f"{c.user}|{t.dia_id}", user=c.user, content=t.record, body=t.text,
                    speaker=t.speaker.lower(), at=int(t.at)))
            writer.commit()  # one commit per user, like batches arriving over time
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def text_query(self, words: list[str], fld: str) -> Any:
        if not words:
            return None
        query, _errors = self.index.parse_query_lenient(" ".join(words), [fld])
        return query

    def scores(self, query: Any, user: str, limit: int) -> dict[str, float]:
        """dia_id -> score for every matching turn of ``user`` (up to ``limit``)."""
        owner = tantivy.Query.term_query(self.schema, "user", user)
        q = tantivy.Query.boolean_query([(tantivy.Occur.Must, query),
                                         (tantivy.Occur.Must, owner)])
        result = self.searcher.search(q, limit=limit)
        out: dict[str, float] = {}
        for score, addr in result.hits:
            out[self.searcher.doc(addr).get_first("id").split("|", 1)[1]] = float(score)
        return out


def _rank(scores: dict[str, float], conv: Conversation) -> list[str]:
    """Best first; ties in conversation order (stable across index layouts)."""
    position = {t.dia_id: i for i, t in enumerate(conv.turns)}
    return sorted(scores, key=lambda d: (-scores[d], position[d]))


def _fuse(scores: dict[str, float], conv: Conversation, how: str, w: float) -> dict[str, float]:
    out: dict[str, float] = {}
    for t in conv.turns:
        own = scores.get(t.dia_id, 0.0)
        prev, nxt = conv.neighbours(t.dia_id)
        p = scores.get(prev, 0.0) if prev else 0.0
        n = scores.get(nxt, 0.0) if nxt else 0.0
        if how == "prev":
            s = own + w * p
        elif how == "next":
            s = own + w * n
        elif how == "both":
            s = own + w * (p + n)
        elif how == "max-prev":
            s = max(own, w * p)
        else:
            raise ValueError(how)
        if s > 0:
            out[t.dia_id] = s
    return out


def _expand(ranked: list[str], conv: Conversation, how: str, budget: int) -> list[str]:
    out: list[str] = []
    for d in ranked:
        prev, nxt = conv.neighbours(d)
        group = [d, nxt] if how == "next" else [prev, d, nxt]
        for g in group:
            if g and g not in out:
                out.append(g)
        if len(out) >= budget:
            break
    return out[:budget]


def _prf_terms(top: list[str], conv: Conversation, scores: dict[str, float],
               exclude: set[str], n_terms: int) -> list[tuple[str, float]]:
    """RM3's feedback model: sum over the top docs of P(term|doc) x normalised doc score."""
    total = sum(scores[d] for d in top) or 1.0
    weight: Counter[str] = Counter()
    for d in top:
        words = [w for w in simple_tokens(conv.by_id[d].text) if w not in STOP_WORDS
                 and not w.isdigit()]
        terms = stems(" ".join(words)) if words else []
        if not terms:
            continue
        for term, tf in Counter(terms).items():
            if term not in exclude:
                weight[term] += tf / len(terms) * scores[d] / total
    return weight.most_common(n_terms)


class Experiments:
    """The indexes the configs need, built once and shared."""

    def __init__(self, convs: list[Conversation]) -> None:
        self.convs = convs
        self._shared: dict[bool, LexIndex] = {}
        self._own: dict[str, LexIndex] = {}

    def index_for(self, cfg: Config, conv: Conversation) -> LexIndex:
        if cfg.per_user:
            if conv.user not in self._own:
                self._own[conv.user] = LexIndex([conv])
            return self._own[conv.user]
        if cfg.reverse not in self._shared:
            convs = self.convs[::-1] if cfg.reverse else self.convs
            self._shared[cfg.reverse] = LexIndex(convs)
        return self._shared[cfg.reverse]

    def search(self, cfg: Config, conv: Conversation, question: str,
               index: LexIndex | None = None) -> list[str]:
        ix = index or self.index_for(cfg, conv)
        limit = min(cfg.pool, len(conv.turns)) if cfg.pool else len(conv.turns)
        words = query_words(question)
        if cfg.stop_words:
            kept = [w for w in words if w not in STOP_WORDS]
            words = kept or words
        named: set[str] = set()
        fld = "content"
        if cfg.names == "field":
            fld = "body"
            kept = []
            for w in words:
                who = name_in(w, conv.speakers)
                if who:
                    named.add(who)
                else:
                    kept.append(w)
            words = kept or words
        query = ix.text_query(words, fld)
        if query is None:
            return []
        if cfg.proximity > 0 and len(words) > 1:
            terms = [stems(w) for w in words]
            pairs = [(a[0], b[0]) for a, b in zip(terms, terms[1:], strict=False) if a and b]
            near = [(tantivy.Occur.Should, tantivy.Query.boost_query(
                tantivy.Query.phrase_query(ix.schema, fld, list(pair), slop=cfg.slop),
                cfg.proximity)) for pair in pairs if pair[0] != pair[1]]
            if near:
                query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), *near])
        if named and cfg.name_weight > 0:
            bonus = [(tantivy.Occur.Should, tantivy.Query.const_score_query(
                tantivy.Query.term_query(ix.schema, "speaker", n.lower()), cfg.name_weight))
                for n in sorted(named)]
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), *bonus])
        scores = ix.scores(query, conv.user, limit)
        if cfg.prf and scores:
            top = _rank(scores, conv)[:3]
            exclude = set(stems(" ".join(words)))
            exclude |= {n.lower() for n in conv.speakers}
            terms = _prf_terms(top, conv, scores, exclude, cfg.prf_terms)
            if terms:
                top_w = terms[0][1]
                extra = [(tantivy.Occur.Should, tantivy.Query.boost_query(
                    tantivy.Query.term_query(ix.schema, fld, term), cfg.prf_weight * w / top_w))
                    for term, w in terms]
                expanded = tantivy.Query.boolean_query([(tantivy.Occur.Should, query), *extra])
                scores = ix.scores(expanded, conv.user, limit)
        if cfg.fuse:
            scores = _fuse(scores, conv, cfg.fuse, cfg.fuse_weight)
        if cfg.date:
            years = sorted({datetime.fromtimestamp(t.at, timezone.utc).year
                            for t in conv.turns})
            now = max(t.at for t in conv.turns)
            spans = date_spans(question, years, now)
            if spans:
                slack = cfg.date_slack_days * DAY

                def inside(d: str) -> bool:
                    at = conv.by_id[d].at
                    return any(lo <= at < hi + slack for lo, hi in spans)

                if cfg.date == "filter":
                    scores = {d: s for d, s in scores.items() if inside(d)} or scores
                else:
                    scores = {d: s * (cfg.date_boost if inside(d) else 1.0)
                              for d, s in scores.items()}
        ranked = _rank(scores, conv)
        if cfg.expand:
            return _expand(ranked, conv, cfg.expand, TOP_K)
        return ranked[:TOP_K]

    def run(self, cfg: Config) -> Rankings:
        return {(c.sample_id, q.number): self.search(cfg, c, q.text)
                for c in self.convs for q in c.questions}


BASELINE = Config("bare Tantivy en_stem, shared index (as lintaid)")
# The candidates, one idea at a time, then together. Small grids; every point is reported.
EXPERIMENTS: list[Config] = [
    BASELINE,
    # (a) neighbour context
    replace(BASELINE, name="(a) hit + next turn, same budget", expand="next"),
    replace(BASELINE, name="(a) prev + hit + next, same budget", expand="both"),
    replace(BASELINE, name="(a) fuse: s + 0.5 s(prev)", fuse="prev", fuse_weight=0.5),
    replace(BASELINE, name="(a) fuse: s + 0.25 s(prev) + 0.25 s(next)", fuse="both",
            fuse_weight=0.25),
    replace(BASELINE, name="(a) fuse: s + 0.5 s(next)", fuse="next", fuse_weight=0.5),
    replace(BASELINE, name="(a) fuse: max(s, 0.8 s(prev))", fuse="max-prev", fuse_weight=0.8),
    # (b) stop words, names
    replace(BASELINE, name="(b) stop words removed", stop_words=True),
    replace(BASELINE, name="(b) names as a field, no name bonus", names="field"),
    replace(BASELINE, name="(b) names as a field, bonus 1.0", names="field", name_weight=1.0),
    replace(BASELINE, name="(b) stop words + names field, bonus 1.0", stop_words=True,
            names="field", name_weight=1.0),
    # (c) date as data
    replace(BASELINE, name="(c) date boost x1.5 (slack 30 d)", date="boost"),
    replace(BASELINE, name="(c) date boost x3 (slack 30 d)", date="boost", date_boost=3.0),
    replace(BASELINE, name="(c) date filter (slack 30 d)", date="filter"),
    replace(BASELINE, name="(c) date filter (slack 0)", date="filter", date_slack_days=0.0),
    # (d) per-user statistics
    replace(BASELINE, name="(d) shared index, reverse order", reverse=True),
    replace(BASELINE, name="(d) one index per user", per_user=True),
    # (e) pseudo-relevance feedback
    replace(BASELINE, name="(e) RM3: 10 terms of top 3, weight 0.5", prf=True),
    replace(BASELINE, name="(e) RM3: 10 terms of top 3, weight 0.2", prf=True, prf_weight=0.2),
]
_BEST_QUERY = dict(stop_words=True, names="field", name_weight=1.0)
COMBINED = [
    Config("shared + stop words + names field 1.0 + max(s, 0.8 s(prev))", **_BEST_QUERY,
           fuse="max-prev", fuse_weight=0.8),
    Config("per user + stop words + names field 1.0", per_user=True, **_BEST_QUERY),
    Config("... + s + 0.5 s(prev)", per_user=True, **_BEST_QUERY, fuse="prev"),
    Config("... + max(s, 0.8 s(prev))", per_user=True, **_BEST_QUERY, fuse="max-prev",
           fuse_weight=0.8),
    Config("... + max(s, 0.8 s(prev)) + date boost x1.5", per_user=True, **_BEST_QUERY,
           fuse="max-prev", fuse_weight=0.8, date="boost"),
    Config("... + max(s, 0.8 s(prev)) + date filter (slack 0)", per_user=True, **_BEST_QUERY,
           fuse="max-prev", fuse_weight=0.8, date="filter", date_slack_days=0.0),
    Config("... + max(s, 0.8 s(prev)) + date boost x1.5 + RM3 0.2", per_user=True,
           **_BEST_QUERY, fuse="max-prev", fuse_weight=0.8, date="boost", prf=True,
           prf_weight=0.2),
    Config("... + max(s, 0.8 s(prev)) + date boost x1.5, candidate pool 100", per_user=True,
           **_BEST_QUERY, fuse="max-prev", fuse_weight=0.8, date="boost", pool=100),
    Config("... + hit + next turn, same budget (no fusion) + date boost x1.5", per_user=True,
           **_BEST_QUERY, date="boost", expand="next"),
    # (f) proximity: adjacent query words (after stop words) found near each other
    Config("... + max(s, 0.8 s(prev)) + date boost x1.5 + proximity 0.5 (slop 3)",
           per_user=True, **_BEST_QUERY, fuse="max-prev", fuse_weight=0.8, date="boost",
           proximity=0.5),
    Config("... + max(s, 0.8 s(prev)) + date boost x1.5 + proximity 2.0 (slop 3)",
           per_user=True, **_BEST_QUERY, fuse="max-prev", fuse_weight=0.8, date="boost",
           proximity=2.0),
    Config("... + max(s, 0.8 s(prev)) + date boost x1.5 + phrase 1.0 (slop 0)",
           per_user=True, **_BEST_QUERY, fuse="max-prev", fuse_weight=0.8, date="boost",
           proximity=1.0, slop=0),
]


def order_effect(exp: Experiments, convs: list[Conversation],
                 lintaid_forward: Rankings) -> dict[str, Any]:
    """(d): one user's R@10 with its index shared (two write orders) and alone, on a bare
    Tantivy index and on lintaid's store."""
    out: dict[str, Any] = {}
    modes = {"shared": BASELINE, "shared_reverse": replace(BASELINE, reverse=True),
             "per_user": replace(BASELINE, per_user=True)}
    per_conv: dict[str, dict[str, float]] = {}
    for label, cfg in modes.items():
        ranked = exp.run(cfg)
        for c in convs:
            values = [recall_at(ranked[(c.sample_id, q.number)], q.gold["locomo"], 10)
                      for q in c.questions]
            per_conv.setdefault(c.sample_id, {})[label] = round(100 * statistics.fmean(values), 2)
    # The same through lintaid's real store: written in reverse order, and one store per user.
    lint_modes = {"lintaid_shared": lintaid_forward,
                  "lintaid_reverse": run_lintaid(convs, list(range(len(convs)))[::-1]).ranked}
    alone: Rankings = {}
    for c in convs:
        alone.update(run_lintaid([c]).ranked)
    lint_modes["lintaid_alone"] = alone
    for label, ranked in lint_modes.items():
        for c in convs:
            values = [recall_at(ranked[(c.sample_id, q.number)], q.gold["locomo"], 10)
                      for q in c.questions]
            per_conv[c.sample_id][label] = round(100 * statistics.fmean(values), 2)
    out["per_conversation_R@10"] = per_conv
    pairs = {"tantivy_order": ("shared", "shared_reverse"),
             "tantivy_shared_vs_alone": ("shared", "per_user"),
             "lintaid_order": ("lintaid_shared", "lintaid_reverse"),
             "lintaid_shared_vs_alone": ("lintaid_shared", "lintaid_alone")}
    out["max_abs_diff"] = {name: round(max(abs(v[a] - v[b]) for v in per_conv.values()), 2)
                           for name, (a, b) in pairs.items()}
    for label in ("lintaid_shared", "lintaid_reverse", "lintaid_alone"):
        out[f"{label}_R@10"] = overall(convs, lint_modes[label], "locomo")[10]
    return out


def run_experiments(convs: list[Conversation], lintaid_forward: Rankings,
                    log: Callable[[str], None]) -> dict[str, Any]:
    exp = Experiments(convs)
    rows: list[dict[str, Any]] = []
    base_conv: dict[str, float] = {}
    for cfg in [*EXPERIMENTS, *COMBINED]:
        t0 = time.perf_counter()
        ranked = exp.run(cfg)
        row = {"name": cfg.name, "config": {k: v for k, v in vars(cfg).items() if k != "name"},
               "seconds": round(time.perf_counter() - t0, 1)}
        for gold in GOLDS:
            row[gold] = recall_table(convs, ranked, gold)
        # Robustness: in how many conversations R@10 beats / loses to the baseline.
        per_conv = {c.sample_id: overall([c], ranked, "locomo")[10] for c in convs}
        base_conv = base_conv or per_conv
        row["conversations_up_down"] = (
            sum(per_conv[s] > base_conv[s] + 1e-9 for s in per_conv),
            sum(per_conv[s] < base_conv[s] - 1e-9 for s in per_conv))
        half = len(convs) // 2 or 1
        row["R@10_halves"] = (overall(convs[:half], ranked, "locomo")[10],
                              overall(convs[half:], ranked, "locomo")[10]
                              if convs[half:] else float("nan"))
        rows.append(row)
        log(f"  {cfg.name}: R@10 {row['locomo']['all']['R@10']} ({row['seconds']} s)")
    return {"rows": rows, "order_effect": order_effect(exp, convs, lintaid_forward)}


# ---------------------------------------------------------------------------------------------
# Report


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[rank]


def markdown_recall(systems: dict[str, dict[str, Any]]) -> str:
    """systems: name -> {gold -> recall_table}."""
    lines = ["| system | gold | category | n | R@5 | R@10 | R@25 |",
             "|---|---|---|---:|---:|---:|---:|"]
    for name, golds in systems.items():
        for gold in GOLDS:
            table = golds[gold]
            for cat in [*map(str, CATEGORIES), "all"]:
                if cat not in table:
                    continue
                row = table[cat]
                label = "**all**" if cat == "all" else f"{cat} {CATEGORIES[int(cat)]}"
                lines.append(f"| {name} | {gold} | {label} | {row['n']} | {row['R@5']:.1f} | "
                             f"{row['R@10']:.1f} | {row['R@25']:.1f} |")
    lines.append(f"| DRAGON (paper, Table 3) | locomo | all | | {DRAGON[5]} | {DRAGON[10]} | "
                 f"{DRAGON[25]} |")
    return "\n".join(lines)


def markdown_experiments(rows: list[dict[str, Any]]) -> str:
    lines = ["| experiment | LoCoMo R@5 | R@10 | R@25 | audit R@5 | R@10 | R@25 | convs +/- "
             "| R@10 halves |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    base = rows[0]["locomo"]["all"]["R@10"]
    for row in rows:
        a, b = row["locomo"]["all"], row["audit"]["all"]
        delta = a["R@10"] - base
        up, down = row["conversations_up_down"]
        h1, h2 = row["R@10_halves"]
        lines.append(f"| {row['name']} | {a['R@5']:.1f} | {a['R@10']:.1f} ({delta:+.1f}) | "
                     f"{a['R@25']:.1f} | {b['R@5']:.1f} | {b['R@10']:.1f} | {b['R@25']:.1f} | "
                     f"{up}/{down} | {h1:.1f} / {h2:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="folder holding locomo10.json and locomo-audit-errors.json")
    parser.add_argument("--conversations", type=int, default=None,
                        help="only the first N conversations")
    parser.add_argument("--json", type=Path, default=None, help="write all figures here")
    parser.add_argument("--analyse", action="store_true", help="where lintaid misses at k=10")
    parser.add_argument("--experiments", action="store_true",
                        help="the ranking experiments of issue 10 on a bare Tantivy index")
    parser.add_argument("--reverse", action="store_true",
                        help="store the conversations in lintaid in reverse order")
    parser.add_argument("--plain", action="store_true",
                        help="also store the turns as plain text ('[dia_id] speaker: text', no "
                        "author, no session) in a second lintaid store, as another row")
    args = parser.parse_args(argv)
    data: Path = args.data.resolve()
    if not (data / DATA_FILE).is_file():
        print(f"LoCoMo data not found at {data}: expected {DATA_FILE}. Pass --data DIR "
              "(see /work/shared/bench-data/locomo/README.md).", file=sys.stderr)
        return 2
    wall0 = time.perf_counter()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    convs, dropped, changed = load(data, args.conversations)
    n_q = sum(len(c.questions) for c in convs)
    n_t = sum(len(c.turns) for c in convs)
    log(f"{len(convs)} conversations, {n_t} turns, {n_q} questions (categories 1-4; {dropped} "
        f"without resolvable evidence left out; audit changes the gold of {changed})")
    order = list(range(len(convs)))[::-1] if args.reverse else None
    lint = run_lintaid(convs, order)
    log(f"lintaid: {lint.records} records stored in {lint.ingest_seconds:.1f} s")
    bm25 = run_bm25(convs)
    systems = {
        "lintaid": {g: recall_table(convs, lint.ranked, g) for g in GOLDS},
        "plain BM25": {g: recall_table(convs, bm25, g) for g in GOLDS},
    }
    if args.plain:
        plain = run_lintaid(convs, order, plain=True)
        systems["lintaid, plain-text turns"] = {g: recall_table(convs, plain.ranked, g)
                                                for g in GOLDS}
    latency = {"p50_ms": round(1000 * percentile(lint.latencies, 50), 2),
               "p99_ms": round(1000 * percentile(lint.latencies, 99), 2),
               "mean_ms": round(1000 * statistics.fmean(lint.latencies), 2)}
    out: dict[str, Any] = {
        "conversations": len(convs), "turns": n_t, "questions": n_q,
        "questions_dropped": dropped, "audit_changed": changed,
        "lintaid": {"recall": systems["lintaid"], "latency": latency,
                    "ingest_seconds": round(lint.ingest_seconds, 1), "records": lint.records,
                    "superseded_records": lint.superseded_records,
                    "hidden_matches": lint.hidden_by_policy,
                    "order": "reverse" if args.reverse else "forward"},
        "bm25": {"recall": systems["plain BM25"]},
        **({"lintaid_plain": {"recall": systems["lintaid, plain-text turns"]}} if args.plain
           else {}),
    }
    if args.analyse:
        out["analysis"] = {"lintaid": analyse(convs, lint.ranked),
                           "plain BM25": analyse(convs, bm25)}
    if args.experiments:
        log("experiments:")
        out["experiments"] = run_experiments(convs, lint.ranked, log)
    wall = time.perf_counter() - wall0
    out["wall_seconds"] = round(wall, 1)

    print(f"## LoCoMo evidence recall ({len(convs)} conversations, {n_t} turns, {n_q} questions)")
    print()
    print(markdown_recall(systems))
    print()
    print(f"lintaid search latency: p50 {latency['p50_ms']} ms, p99 {latency['p99_ms']} ms "
          f"(mean {latency['mean_ms']} ms, top {TOP_K}); ingest {lint.ingest_seconds:.1f} s for "
          f"{lint.records} records; superseded by the policy: {lint.superseded_records}")
    if args.analyse:
        for name, a in out["analysis"].items():
            print()
            print(f"### Misses of {name} at k={a['k']} ({a['gold']} gold)")
            print(f"- missed evidence turns: {a['missed_evidence_turns']}")
            print(f"- no content word shared with the evidence turn: {a['no_shared_word']}%")
            print(f"- a neighbouring turn (same session, ±1) in the top {a['k']}: "
                  f"{a['neighbour_in_top']}% of missed turns; "
                  f"{a['questions_neighbour_in_top']}% of the {a['questions_missing_evidence']} "
                  "questions missing evidence")
            print(f"- date-bound questions missing evidence: {a['date_bound_missed']}% of "
                  f"{a['date_bound_questions']}")
            print(f"- questions naming one speaker: {a['questions_naming_one_speaker']}; that "
                  f"speaker's share of the top {a['k']}: {a['named_speaker_share']}% (base rate "
                  f"{a['named_speaker_base']}%); top {a['k']} at least 80% theirs: "
                  f"{a['named_speaker_top_80pct']}%")
            print(f"- questions with a misspelled speaker name: "
                  f"{a['questions_with_misspelled_name']}")
    if args.experiments:
        print()
        print("## Experiments (bare Tantivy, en_stem; R@10 delta against the first row)")
        print()
        print(markdown_experiments(out["experiments"]["rows"]))
        eff = out["experiments"]["order_effect"]
        print()
        print("(d) Per-user statistics: R@10 per conversation, LoCoMo gold")
        print()
        cols = ["shared", "shared_reverse", "per_user", "lintaid_shared", "lintaid_reverse",
                "lintaid_alone"]
        print("| conversation | Tantivy shared | shared, reverse order | own index | "
              "lintaid shared | lintaid, reverse order | lintaid, own store |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for sample, v in eff["per_conversation_R@10"].items():
            print(f"| {sample} | " + " | ".join(f"{v[col]:.1f}" for col in cols) + " |")
        print()
        print("max per-conversation |difference| in R@10: " + ", ".join(
            f"{k} {v:.2f}" for k, v in eff["max_abs_diff"].items()))
        print(f"lintaid overall R@10: shared {eff['lintaid_shared_R@10']}, reverse order "
              f"{eff['lintaid_reverse_R@10']}, own store per user {eff['lintaid_alone_R@10']}")
    print()
    print(f"wall time: {wall:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
