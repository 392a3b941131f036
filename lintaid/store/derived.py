"""Derived policy state in memory.db (claims, relations, statuses), updated incrementally.

The rules live in ``lintaid.policy`` (pure functions); this module applies them to what is
stored. A write touches a few records: their claims are re-extracted, and only the chains
those claims join or leave (and the explicit links that name them) are related again. The
result must equal ``lintaid.policy.derive`` run over every stored record, which a randomized
test holds side by side.

Held records (forgotten) take no part in chains or links, so forgetting the newer record
brings the older one back. Claims an explicit link retires stay out of inference: a person's
or an agent's explicit decision wins. Expiry is not a derived state: it is applied by the
search query at read time, since time passing changes it without any write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable

from lintaid.policy import (
    ClaimRef,
    ClaimState,
    RecordInput,
    Relation,
    chain_key,
    claim_statuses,
    explicit_relations,
    record_claims,
    record_status,
    relate_chain,
)

ChainKey = tuple[str, str, str]


def chain_id(key: ChainKey) -> str:
    return "\x1f".join(key)


def _input(row: sqlite3.Row) -> RecordInput:
    return RecordInput(
        record_id=row["id"], text=row["content"], kind=row["kind"], user_id=row["user_id"],
        created_at=row["created_at"], valid_at=row["valid_at"],
        explicit_supersedes=row["supersedes"],
    )


def _ref(row: sqlite3.Row) -> ClaimRef:
    return ClaimRef(
        claim_id=row["claim_id"], record_id=row["record_id"], scope=row["scope"],
        subject=row["subject"], predicate=row["predicate"], value=row["value"],
        effective_at=row["effective_at"], source_kind=row["source_kind"], cue=bool(row["cue"]),
        replaces=row["replaces"], order_key=(row["created_at"], row["record_id"], row["n"]),
        evidence=row["evidence"], start=row["start"], end=row["end"],
    )


_CLAIM_COLUMNS = "c.*, r.created_at"


def _records(db: sqlite3.Connection, ids: Iterable[str]) -> dict[str, sqlite3.Row]:
    out: dict[str, sqlite3.Row] = {}
    ids = list(ids)
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        for row in db.execute(f"SELECT * FROM records WHERE id IN ({marks})", chunk):
            out[row["id"]] = row
    return out


def _claims_of(db: sqlite3.Connection, record_ids: Iterable[str]) -> list[ClaimRef]:
    ids = list(record_ids)
    out: list[ClaimRef] = []
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        out.extend(_ref(r) for r in db.execute(
            f"SELECT {_CLAIM_COLUMNS} FROM claims c JOIN records r ON r.id = c.record_id"
            f" WHERE c.record_id IN ({marks}) ORDER BY c.record_id, c.n", chunk))
    return out


def _live(row: sqlite3.Row | None) -> bool:
    return row is not None and row["forgotten_at"] is None


def _links_touching(db: sqlite3.Connection, ids: set[str]) -> set[tuple[str, str]]:
    """Active declared links (new, old) with either end in ``ids``."""
    if not ids:
        return set()
    links: set[tuple[str, str]] = set()
    marks = ",".join("?" * len(ids))
    params = list(ids)
    for row in db.execute(
        "SELECT n.id AS new_id, n.supersedes AS old_id FROM records n"
        " JOIN records o ON o.id = n.supersedes"
        f" WHERE (n.id IN ({marks}) OR n.supersedes IN ({marks}))"
        " AND n.forgotten_at IS NULL AND o.forgotten_at IS NULL AND n.id != n.supersedes",
        params + params,
    ):
        links.add((row["new_id"], row["old_id"]))
    return links


def _explicit_targets(db: sqlite3.Connection) -> Callable[[list[str]], set[str]]:
    def targets(claim_ids: list[str]) -> set[str]:
        out: set[str] = set()
        for i in range(0, len(claim_ids), 500):
            chunk = claim_ids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            out.update(r[0] for r in db.execute(
                f"SELECT target_claim FROM relations WHERE chain IS NULL"
                f" AND target_claim IN ({marks})", chunk))
        return out

    return targets


def _insert_relations(db: sqlite3.Connection, chain: str | None,
                      relations: Iterable[Relation]) -> None:
    db.executemany(
        "INSERT OR REPLACE INTO relations(chain, source_claim, target_claim, source_record,"
        " target_record, kind, confidence, method, evidence) VALUES (?,?,?,?,?,?,?,?,?)",
        [(chain, r.source_claim, r.target_claim, r.source_record, r.target_record, r.kind,
          r.confidence, r.method, r.evidence) for r in relations],
    )


def _relation(row: sqlite3.Row) -> Relation:
    return Relation(row["kind"], row["source_claim"], row["target_claim"], row["source_record"],
                    row["target_record"], row["confidence"], row["method"], row["evidence"])


def refresh(db: sqlite3.Connection, changed: set[str],
            mark_dirty: Callable[[Iterable[str]], None]) -> None:
    """Bring the derived tables in step after ``changed`` records were written or forgotten."""
    if not changed:
        return
    touched: set[ChainKey] = set()
    restate: set[str] = set(changed)
    reindex: set[str] = set()

    # 1. Re-extract the changed records' claims; remember the chains they leave and join.
    old_claims = _claims_of(db, changed)
    touched.update(chain_key(c) for c in old_claims)
    marks = ",".join("?" * len(changed))
    db.execute(f"DELETE FROM claim_state WHERE record_id IN ({marks})", list(changed))
    db.execute(f"DELETE FROM claims WHERE record_id IN ({marks})", list(changed))
    rows = _records(db, changed)
    new_claims: list[ClaimRef] = []
    for rid in changed:
        row = rows.get(rid)
        if _live(row):
            new_claims.extend(record_claims(_input(row)))
    db.executemany(
        "INSERT INTO claims(claim_id, record_id, n, source_kind, scope, subject, predicate,"
        " value, evidence, start, end, effective_at, cue, replaces)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [(c.claim_id, c.record_id, c.order_key[2], c.source_kind, c.scope, c.subject,
          c.predicate, c.value, c.evidence, c.start, c.end, c.effective_at, int(c.cue),
          c.replaces) for c in new_claims],
    )
    touched.update(chain_key(c) for c in new_claims)

    # 2. Explicit links naming a changed record: drop and recompute them.
    old_explicit = [_relation(r) for r in db.execute(
        f"SELECT * FROM relations WHERE chain IS NULL AND (source_record IN ({marks})"
        f" OR target_record IN ({marks}))", list(changed) * 2)]
    db.execute(f"DELETE FROM relations WHERE chain IS NULL AND (source_record IN ({marks})"
               f" OR target_record IN ({marks}))", list(changed) * 2)
    links = _links_touching(db, changed)
    ends = {rid for link in links for rid in link}
    by_record: dict[str, list[ClaimRef]] = {rid: [] for rid in ends}
    for claim in _claims_of(db, ends):
        by_record[claim.record_id].append(claim)
    new_explicit = explicit_relations(sorted(links), by_record)
    _insert_relations(db, None, new_explicit)
    # A claim entering or leaving the retired set changes its chain's membership.
    for rel in (*old_explicit, *new_explicit):
        restate.update((rel.source_record, rel.target_record))
    flipped = {r.target_claim for r in old_explicit} ^ {r.target_claim for r in new_explicit}
    for claim in _claims_of(db, {r.target_record for r in (*old_explicit, *new_explicit)}):
        if claim.claim_id in flipped or claim.claim_id in {r.target_claim for r in new_explicit}:
            touched.add(chain_key(claim))
    for claim in _claims_of(db, {r.source_record for r in (*old_explicit, *new_explicit)}):
        touched.add(chain_key(claim))

    # 3. Relate every touched chain again, and restate its claims.
    retired_of = _explicit_targets(db)
    for key in sorted(touched):
        members = [_ref(r) for r in db.execute(
            f"SELECT {_CLAIM_COLUMNS} FROM claims c JOIN records r ON r.id = c.record_id"
            " WHERE c.scope = ? AND c.subject = ? AND c.predicate = ? AND r.forgotten_at IS NULL",
            key)]
        ids = [c.claim_id for c in members]
        retired = retired_of(ids)
        relations = relate_chain([c for c in members if c.claim_id not in retired])
        cid = chain_id(key)
        db.execute("DELETE FROM relations WHERE chain = ?", (cid,))
        _insert_relations(db, cid, relations)
        explicit = [_relation(r) for r in db.execute(
            "SELECT * FROM relations WHERE chain IS NULL AND (source_claim IN"
            f" ({','.join('?' * len(ids))}) OR target_claim IN ({','.join('?' * len(ids))}))",
            ids + ids)] if ids else []
        states = claim_statuses([*explicit, *relations])
        before = dict(db.execute(
            f"SELECT claim_id, status FROM claim_state WHERE claim_id IN"
            f" ({','.join('?' * len(ids))})", ids).fetchall()) if ids else {}
        # A record whose claims changed status must be re-indexed: its indexed text omits
        # its superseded claims.
        reindex.update(c.record_id for c in members
                       if before.get(c.claim_id, "current")
                       != states.get(c.claim_id, ClaimState()).status)
        db.executemany(
            "INSERT OR REPLACE INTO claim_state(claim_id, record_id, status, superseded_by_claim,"
            " superseded_by_record, confidence) VALUES (?,?,?,?,?,?)",
            [(c.claim_id, c.record_id, s.status, s.superseded_by_claim, s.superseded_by_record,
              s.confidence) for c in members for s in [states.get(c.claim_id, ClaimState())]],
        )
        restate.update(c.record_id for c in members)

    # 4. Restate the records; a record whose status changed must be re-indexed.
    _restate(db, restate, changed | reindex, mark_dirty)


def _restate(db: sqlite3.Connection, ids: set[str], changed: set[str],
             mark_dirty: Callable[[Iterable[str]], None]) -> None:
    rows = _records(db, ids)
    claims: dict[str, list[ClaimRef]] = {rid: [] for rid in ids}
    for claim in _claims_of(db, ids):
        claims[claim.record_id].append(claim)
    states: dict[str, ClaimState] = {}
    claim_ids = [c.claim_id for cs in claims.values() for c in cs]
    for i in range(0, len(claim_ids), 500):
        chunk = claim_ids[i:i + 500]
        for r in db.execute(f"SELECT * FROM claim_state WHERE claim_id IN"
                            f" ({','.join('?' * len(chunk))})", chunk):
            states[r["claim_id"]] = ClaimState(r["status"], r["superseded_by_claim"],
                                               r["superseded_by_record"], r["confidence"])
    reindex: list[str] = []
    for rid in sorted(ids):
        row = rows.get(rid)
        before = db.execute("SELECT status, superseded_by FROM record_state WHERE record_id = ?",
                            (rid,)).fetchone()
        if not _live(row):
            db.execute("DELETE FROM record_state WHERE record_id = ?", (rid,))
            if before is not None:
                reindex.append(rid)
            continue
        by = db.execute(
            "SELECT id FROM records WHERE supersedes = ? AND forgotten_at IS NULL AND id != ?"
            " ORDER BY created_at DESC, id DESC LIMIT 1", (rid, rid)).fetchone()
        state = record_status(rid, row["content"], claims[rid], states, by[0] if by else None)
        db.execute(
            "INSERT OR REPLACE INTO record_state(record_id, status, superseded_by, confidence,"
            " evidence) VALUES (?,?,?,?,?)",
            (rid, state.status, state.superseded_by, state.confidence, state.evidence),
        )
        if before is None or before["status"] != state.status or rid in changed:
            reindex.append(rid)
    mark_dirty(reindex)


def rebuild(db: sqlite3.Connection, mark_dirty: Callable[[Iterable[str]], None]) -> None:
    """Recompute every derived table from the records (a repair tool and a test oracle)."""
    db.execute("DELETE FROM relations")
    db.execute("DELETE FROM claim_state")
    db.execute("DELETE FROM record_state")
    db.execute("DELETE FROM claims")
    ids = {r[0] for r in db.execute("SELECT id FROM records")}
    refresh(db, ids, mark_dirty)
