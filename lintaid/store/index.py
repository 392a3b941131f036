"""A derived Tantivy index: opened, checked and rebuilt when missing, corrupt or of an old schema.

The index never holds anything the SQLite source of truth lacks, so throwing it away is always
safe; ``TantivyIndex.open`` reports ``rebuilt=True`` and the owner re-feeds it from SQLite.
"""

from __future__ import annotations

import math
import shutil
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import tantivy

from lintaid.retrieval.query import MAX_QUERY_CHARS, MAX_QUERY_TERMS, words

SCHEMA_FILE = "lintaid-schema"
I64_MAX = 2**63 - 1
BM25_K1 = 1.2
"""Tantivy's BM25 term-frequency saturation: one term scores at most ``idf x (k1 + 1)``."""
BOUND_TERMS = 12
"""A query's terms a relevance bound counts at most (a statement holds no more)."""
__all__ = ["MAX_QUERY_CHARS", "MAX_QUERY_TERMS", "Terms", "TantivyIndex", "boolean",
           "const_score", "millis", "stems"]

# What the ``en_stem`` tokenizer makes of a text (tantivy's definition: the simple tokenizer,
# tokens over 40 bytes dropped, lowercased, English Snowball stems), so a text's terms can be
# compared with what the index holds. Thread-safe.
_EN_STEM = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stemmer("english")).build())


def stems(text: str) -> list[str]:
    """The terms an ``en_stem`` field holds for ``text``, in order."""
    return list(_EN_STEM.analyze(text))


def millis(seconds: float | None) -> int:
    """A time as the index holds it: whole milliseconds (i64); None is the far future.

    Milliseconds, not seconds: two writes a few milliseconds apart must sort apart in ``as_of``
    and expiry queries. A time beyond the i64 range (a row written before times were checked)
    is held at the range's end; anything that is not a number raises ValueError.
    """
    if seconds is None:
        return I64_MAX
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise ValueError(f"not a time: {seconds!r}")
    if math.isnan(seconds):
        raise ValueError("not a time: NaN")
    scaled = seconds * 1000
    if scaled >= I64_MAX:
        return I64_MAX
    if scaled <= -I64_MAX:
        return -I64_MAX
    return int(scaled)


class TantivyIndex:
    """One index directory with one long-lived writer, owned by the writer thread.

    ``rest`` (any thread) lets go of the writer and the index while nothing uses them; the
    writer's calls hold ``_lock``, so a rest never lands in the middle of one.
    """

    def __init__(self, path: Path, build_schema: Callable[[], tantivy.Schema], version: int,
                 *, heap_size: int = 50_000_000):
        self.path = path
        self.version = version
        self.schema = build_schema()
        self.rebuilt = False
        self.heap_size = heap_size
        self.dirty = False  # written since the last commit
        self._index: tantivy.Index | None = self._open()
        self._writer: tantivy.IndexWriter | None = None
        self._lock = threading.RLock()

    @property
    def index(self) -> tantivy.Index:
        """The open index; opened again on first use after ``rest`` (any thread)."""
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    self._index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
                index = self._index
        return index

    def rest(self) -> None:
        """Commit and close the writer, and let go of the index until it is used again (any
        thread). An open index polls its ``meta.json`` twice a second on a thread of its own,
        for as long as anything holds it; an idle daemon should not."""
        with self._lock:
            self.close()
            self._index = None

    def _open(self) -> tantivy.Index:
        marker = self.path / SCHEMA_FILE
        try:
            if marker.read_text().strip() != str(self.version):
                raise ValueError("schema version changed")
            if not tantivy.Index.exists(str(self.path)):
                raise ValueError("no index")
            index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
            index.searcher()  # fails on a corrupt meta.json or segments
            return index
        except (OSError, ValueError, RuntimeError):
            return self._recreate()

    def _recreate(self) -> tantivy.Index:
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(self.schema, path=str(self.path), reuse=False)
        (self.path / SCHEMA_FILE).write_text(f"{self.version}\n")
        self.rebuilt = True
        return index

    # -- writing (writer thread only) -------------------------------------------------------
    def writer(self) -> tantivy.IndexWriter:
        with self._lock:
            if self._writer is None:
                self._writer = self.index.writer(heap_size=self.heap_size, num_threads=1)
            return self._writer

    def replace(self, key_field: str,
                docs: Iterable[tuple[str, dict[str, Any] | None]]) -> list[tuple[str, str]]:
        """For each (key, doc): delete the key's documents, then add doc when it is not None.

        A document the schema refuses (a value out of range) is left out, never the batch:
        returns (key, reason) for each one left out, for the caller to log.
        """
        with self._lock:
            return self._replace(key_field, docs)

    def _replace(self, key_field: str,
                 docs: Iterable[tuple[str, dict[str, Any] | None]]) -> list[tuple[str, str]]:
        w = self.writer()
        self.dirty = True
        skipped: list[tuple[str, str]] = []
        for key, doc in docs:
            w.delete_documents_by_term(key_field, key)
            if doc is None:
                continue
            try:
                document = tantivy.Document.from_dict(doc, self.schema)
            except (ValueError, TypeError, OverflowError) as err:
                skipped.append((key, str(err)[:200]))
                continue
            w.add_document(document)
        return skipped

    def commit(self) -> None:
        with self._lock:
            w = self.writer()
            try:
                w.commit()
            except ValueError:
                # A failed indexing thread leaves a one-thread writer publishing nothing:
                # start over.
                w.rollback()
                self._writer = None
                raise
            self.dirty = False
            self.index.reload()

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                try:
                    self._writer.commit()
                    self._writer.wait_merging_threads()
                    self.dirty = False
                except (ValueError, RuntimeError):
                    pass
                self._writer = None

    # -- reading ---------------------------------------------------------------------------
    def searcher(self) -> tantivy.Searcher:
        return self.index.searcher()

    def text_query(self, text: str, fields: list[str],
                   boosts: dict[str, float] | None = None) -> tantivy.Query | None:
        """Parse free text as OR'ed words (never as query syntax); None when nothing is left."""
        # A pasted log or a huge prompt must not become a million-term query that stalls the
        # daemon: distinct words, first MAX_QUERY_TERMS of them (``retrieval.query.words``).
        return self.words_query(words(text), fields, boosts)

    def words_query(self, terms: list[str], fields: list[str],
                    boosts: dict[str, float] | None = None) -> tantivy.Query | None:
        """Words already split (``retrieval.query.words``) as OR'ed terms; None if none."""
        if not terms:
            return None
        query, _errors = self.index.parse_query_lenient(" ".join(terms), fields,
                                                        field_boosts=boosts or {})
        return query

    def fuzzy(self, field: str, word: str, distance: int) -> tantivy.Query:
        """``word`` or a term within ``distance`` edits of it (a transposition is one)."""
        return tantivy.Query.fuzzy_term_query(self.schema, field, word, distance=distance)

    def count(self, query: tantivy.Query) -> int:
        result: Any = self.searcher().search(query, limit=1, count=True)
        return int(result.count)  # tantivy's stub lacks ``count``

    def term(self, field: str, value: str) -> tantivy.Query:
        return tantivy.Query.term_query(self.schema, field, value)

    def term_set(self, field: str, values: list[str]) -> tantivy.Query:
        return tantivy.Query.term_set_query(self.schema, field, values)

    def int_range(self, field: str, lower: int | None, upper: int | None) -> tantivy.Query:
        """A filter on a numeric field that adds the same score (1.0) to every match.

        Left bare, Tantivy scores a range 1.0 in some segments and 0 in others (one whose
        every document matches), so a record's score, and its rank, would depend on how the
        index happened to be segmented: an index rebuilt or imported would rank differently.
        """
        return tantivy.Query.const_score_query(tantivy.Query.range_query(
            self.schema, field, tantivy.FieldType.Integer,
            lower if lower is not None else -I64_MAX, upper if upper is not None else I64_MAX,
        ), 1.0)

    def num_docs(self) -> int:
        return self.index.searcher().num_docs


class Terms:
    """A query's words as one index weighs them: each stem's BM25 idf in ``field``.

    ``bound`` is the most any document can score on ``field`` for these terms (every term
    at BM25's saturation, ``idf x (k1 + 1)``), so ``relevance`` (a hit's score on ``field``
    alone as a share of it) is a number in [0, 1] that means the same in every index, where
    raw BM25 does not: it grows with the number and rarity of the query's words in that index,
    and with the index's other fields and boosts. ``match`` says which of the terms a text
    holds and how much of the query's weight each carries.
    """

    def __init__(self, index: TantivyIndex, searcher: tantivy.Searcher, field: str,
                 words: list[str], without: tantivy.Query | None = None) -> None:
        """``without``: documents the weights leave out (stored prompts, which a search
        leaves out too: a person's own questions, asked again and again, must not make
        their words weigh as if memory held them)."""
        self.index, self.searcher, self.field, self.words = index, searcher, field, words
        total = max(1, int(searcher.num_docs) - (_count(searcher, without) if without else 0))
        self.idf: dict[str, float] = {}
        held: dict[str, float] = {}  # the terms some document holds
        for word in words:
            for stem in stems(word):
                if stem not in self.idf:
                    df = int(searcher.doc_freq(field, stem))
                    if without is not None and df:
                        df -= _count(searcher, boolean([
                            ("must", tantivy.Query.term_query(index.schema, field, stem)),
                            ("must", without)]))
                    self.idf[stem] = math.log(1 + (total - df + 0.5) / (df + 0.5))
                    if df:
                        held[stem] = self.idf[stem]
        if held:
            # A word no document holds weighs no more than the rarest word one holds: in a
            # young index (a handful of memories) an unheld word's idf is several times a
            # held one's, and one unknown word of a question ("settle" in "which upload
            # limit did we settle on?") would outweigh every word the answer holds.
            most = max(held.values())
            for stem, weight in self.idf.items():
                if stem not in held:
                    self.idf[stem] = min(weight, most)
        weights = list(self.idf.values())
        if len(weights) > BOUND_TERMS:
            # A long prompt (a pasted log): no document holds all of it, and most of its
            # words no document holds at all. The bound is what its BOUND_TERMS rarest terms
            # that the index holds could score.
            weights = sorted(held.values(), reverse=True)[:BOUND_TERMS]
        self.total = sum(weights)
        self.bound = self.total * (BM25_K1 + 1)

    def relevance(self, key_field: str, keys: list[str]) -> dict[str, float]:
        """For each key's document (``key_field`` holds it): its BM25 score on ``field``
        alone for the query's words, over ``bound``. One query, however many keys."""
        query = self.index.words_query(self.words, [self.field])
        if query is None or not keys or self.bound <= 0:
            return {}
        only = const_score(self.index.term_set(key_field, keys), 0.0)
        found = self.searcher.search(boolean([("must", query), ("must", only)]),
                                     limit=len(keys))
        out: dict[str, float] = {}
        for score, addr in found.hits:
            key = str(self.searcher.doc(addr).get_first(key_field))
            out[key] = min(1.0, max(0.0, float(score) / self.bound))
        return out

    def match(self, text: str) -> dict[str, float]:
        """The query's terms ``text`` holds (in query order), each with its share of the
        query's idf mass (``total``, the bound's terms)."""
        if self.total <= 0:
            return {}
        held = set(stems(text))
        return {stem: w / self.total for stem, w in self.idf.items() if stem in held}


def _count(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    result: Any = searcher.search(query, limit=1, count=True)
    return int(result.count)


def const_score(query: tantivy.Query, score: float) -> tantivy.Query:
    """``query``'s matches, each scored ``score`` (a bonus, whatever the term statistics)."""
    return tantivy.Query.const_score_query(query, score)


def boolean(clauses: list[tuple[str, tantivy.Query]]) -> tantivy.Query:
    occur = {"must": tantivy.Occur.Must, "should": tantivy.Occur.Should,
             "not": tantivy.Occur.MustNot}
    return tantivy.Query.boolean_query([(occur[kind], q) for kind, q in clauses])
