"""Staleness of stored records: what the policy needs, read through the memory store.

The per-record inputs (category, assertions) are derived on write (``derivation``); what
depends on other records or on time is judged here, when read, by ``policy.staleness``:

- confirmations: each explicit ``confirm``; each later record whose claim confirms one of this
  record's claims on a chain (directly, or through a chain of such confirmations); each later
  record asserting the same thing about a person, or the same words;
- contradiction (the older side only): a later record superseding or conflicting with one of
  its claims that is still shown, or asserting the opposite about a person ("left Acme").

Used by the reader (every hit carries its staleness), the ``lint`` op and the SessionStart
brief (``needs_verifying``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lintaid_client import models
from lintaid_client.models import Staleness

from .capture.record import normalize_user
from .policy import CONFIRMS, SUPERSEDED, Relation
from .policy import assertions as person
from .policy import staleness as policy
from .store.memory import MemoryStore

EXCERPT_CHARS = 300
MAX_CONFIRMATION_DEPTH = 64
MAX_VERIFY_CANDIDATES = 500
AGING_AT = dict(policy.THRESHOLDS)[models.AGING]
DAY = policy.DAY
VERIFY_CATEGORIES = frozenset(policy.CATEGORIES) - {policy.EPISODIC}
"""What is worth checking: an old turn record just goes; an old decision or fact is asked
about."""


def _relation(row: Any) -> Relation:
    return Relation(row["kind"], row["source_claim"], row["target_claim"], row["source_record"],
                    row["target_record"], row["confidence"], row["method"], row["evidence"])


def _assertion(row: Any) -> person.Assertion:
    return person.Assertion(row["subject"], row["attribute"], row["value"], bool(row["leaves"]))


@dataclass
class StoreJudge:
    """Judges stored records' staleness at a time, reading only through the store."""

    store: MemoryStore
    config: policy.StalenessConfig

    def judge(self, ids: Sequence[str], at: float | None = None) -> dict[str, Staleness]:
        """Staleness of each record among ``ids`` that exists, at ``at`` (default now)."""
        now = time.time() if at is None else at
        rows = self.store.staleness_rows(ids)
        facts = {rid: self._fact(row) for rid, row in rows.items()}
        evidence = self.evidence(list(facts), {rid: row["user_id"] for rid, row in rows.items()},
                                 {rid: row["created_at"] for rid, row in rows.items()}, now)
        return {rid: policy.judge(fact, evidence[rid], now, self.config)
                for rid, fact in facts.items()}

    def _fact(self, row: Any) -> policy.Fact:
        return policy.Fact(id=row["id"], content="", created_at=row["created_at"],
                           category=row["category"] or policy.UNKNOWN, source=row["source"])

    # -- evidence ----------------------------------------------------------------------------
    def evidence(self, ids: list[str], users: dict[str, str], created: dict[str, float],
                 until: float) -> dict[str, policy.Evidence]:
        """What was known at ``until`` about each record (later records not yet).

        Known until a time after every record and confirmation, it is all there is: kept
        (``store.cache``) until the next write, so a record judged again (a hit found again,
        the next SessionStart's candidates) costs no query."""
        latest = self.store.latest_time()
        if latest is None or until < latest:
            return self._evidence(ids, users, created, until)
        cache = self.store.cache
        generation = cache.now()
        out = cache.found("evidence", ids)
        missing = [rid for rid in ids if rid not in out]
        if missing:
            found = self._evidence(missing, users, created, until)
            cache.keep("evidence", generation, found)
            out.update(found)
        return {rid: out[rid] for rid in ids}

    def _evidence(self, ids: list[str], users: dict[str, str], created: dict[str, float],
                  until: float) -> dict[str, policy.Evidence]:
        out = self._from_relations(ids, until)
        for rid, found in self._from_assertions(ids, users, created, until).items():
            out[rid] = out[rid].merged(found)
        for row in self.store.confirmation_rows(ids):
            rid = row["record_id"]
            out[rid] = out[rid].merged(policy.Evidence({f"confirm:{row['n']}": row["at"]}))
        return out

    def _from_relations(self, ids: list[str], until: float) -> dict[str, policy.Evidence]:
        into_record: dict[str, list[Relation]] = {}
        retired: set[str] = set()
        frontier: set[str] = set()
        for row in self.store.relations_into(ids):
            rel = _relation(row)
            into_record.setdefault(rel.target_record, []).append(rel)
            if row["target_status"] == SUPERSEDED:
                retired.add(rel.target_claim)
            if rel.kind == CONFIRMS:
                frontier.add(rel.source_claim)
        into_claim: dict[str, list[Relation]] = {}
        seen = set(frontier)
        for _ in range(MAX_CONFIRMATION_DEPTH):  # confirmations of confirmations, level by level
            if not frontier:
                break
            found: set[str] = set()
            for row in self.store.confirms_into(frontier):
                rel = _relation(row)
                into_claim.setdefault(rel.target_claim, []).append(rel)
                if rel.source_claim not in seen:
                    found.add(rel.source_claim)
            seen |= found
            frontier = found
        closures = {rid: policy.confirmation_closure(rid, into_record, into_claim) for rid in ids}
        sources = {r.source_record for rels in closures.values() for r in rels}
        at = self.store.created_times(sources)
        return {rid: policy.relation_evidence(rid, closures[rid], at, retired, until)
                for rid in ids}

    def _from_assertions(self, ids: list[str], users: dict[str, str],
                         created: dict[str, float], until: float) -> dict[str, policy.Evidence]:
        own: dict[str, list[person.Assertion]] = {}
        for row in self.store.assertion_rows(ids):
            own.setdefault(row["record_id"], []).append(_assertion(row))
        by_user: dict[str, list[str]] = {}
        for rid in own:
            by_user.setdefault(normalize_user(users.get(rid)), []).append(rid)
        out: dict[str, policy.Evidence] = {}
        for user, rids in by_user.items():
            values = {(a.subject, a.value) for rid in rids for a in own[rid]}
            attributes = {(a.subject, a.attribute) for rid in rids for a in own[rid]
                          if a.attribute in person.SINGLE_VALUED and not a.leaves}
            others = policy.Statements(
                (row["record_id"], row["at"], _assertion(row))
                for row in self.store.assertions_about(user, values, attributes))
            for rid in rids:
                out[rid] = policy.weigh(rid, created[rid], own[rid], others, until)
        return out

    # -- the whole store ---------------------------------------------------------------------
    def lint(self, user_id: str | None, at: float | None = None, only_flagged: bool = False,
             limit: int | None = None) -> dict[str, Any]:
        """Every record a current read may show, judged: a report (see ``report``)."""
        now = time.time() if at is None else at
        rows = self.store.lint_rows(normalize_user(user_id), now, EXCERPT_CHARS)
        ids = [r["id"] for r in rows]
        evidence = self.evidence(ids, {r["id"]: r["user_id"] for r in rows},
                                 {r["id"]: r["created_at"] for r in rows}, now)
        judged = [(r["id"], _excerpt(r["excerpt"]),
                   policy.judge(self._fact(r), evidence[r["id"]], now, self.config))
                  for r in rows]
        return policy.report(judged, now, only_flagged, limit)

    def needs_verifying(self, user_id: str | None = None, at: float | None = None,
                        limit: int = 5, candidates: int = MAX_VERIFY_CANDIDATES
                        ) -> list[dict[str, Any]]:
        """What a SessionStart brief should ask about: decisions and facts (not turn records)
        that are aging, stale or expired, most likely out of date first. Each entry: id,
        content (an excerpt), category, level, action, score, age_days, reason.

        Only records that can be past fresh are judged (old enough for their category, or
        contradicted, or about a person), at most ``candidates`` of them, oldest first: it
        stays cheap at the start of a session whatever the store's size."""
        now = time.time() if at is None else at
        aged_before = {c: now - AGING_AT / (self.config.rate(c) * policy.INFERRED_FACTOR) * DAY
                       for c in VERIFY_CATEGORIES if self.config.rate(c) > 0}
        ids = self.store.verify_candidates(normalize_user(user_id), now, aged_before,
                                           candidates)
        judged = self.judge(ids, now)
        rows = [(rid, s) for rid, s in judged.items()
                if s.level != models.FRESH and s.category in VERIFY_CATEGORIES]
        rows.sort(key=lambda item: (-item[1].score, item[0]))
        del rows[limit:]
        texts = self.store.excerpts([rid for rid, _s in rows], EXCERPT_CHARS)
        return [{"id": rid, "content": _excerpt(texts.get(rid)), "category": s.category,
                 "level": s.level, "action": s.action, "score": s.score,
                 "age_days": s.age_days, "reason": s.reason} for rid, s in rows]


def _excerpt(text: str | None) -> str:
    return " ".join((text or "").split())
