"""What the policy holds about the documents' statements, read through the stores' state
queries (never a database of its own):

- a document's claim another document retired: the workspace's ``retired_since`` (from the
  beginning), the old claim and the one that replaced it, each with its file and line;
- a document retired as a whole (frontmatter ``supersedes:`` of a later file): its state;
- a document's claim a memory retired: memory's relations aimed at the document
  (``relations_into``), kept when the memory's claim is still current and its record one
  the user may read; the claim located by the workspace's ``claims_by_id``.

The rules decide what to report (``rules.superseded_statements``, ``rules.adr_status``).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable
from typing import Any, Final, Protocol

from lintaid.capture.record import normalize_user
from lintaid.policy import CURRENT, SUPERSEDED, SUPERSEDES
from lintaid_client.models import PROMPT

from .rules import Facts, Replacement, Retired

MAX_RETIRED: Final = 20_000


class DocumentState(Protocol):
    def retired_since(self, since: float, limit: int) -> list[dict[str, Any]]: ...

    def claims_by_id(self, claim_ids: Collection[str]) -> list[dict[str, Any]]: ...

    def file_states(self, paths: Iterable[str]) -> dict[str, dict[str, Any]]: ...


class MemoryState(Protocol):
    def relations_into(self, record_ids: Iterable[str]) -> list[Any]: ...

    def claims_for(self, ids: list[str]) -> dict[str, list[dict[str, Any]]]: ...

    def get_rows(self, ids: list[str]) -> dict[str, Any]: ...


def gather(documents: DocumentState, memory: MemoryState | None, user_id: str | None,
           paths: Collection[str], now: float | None = None) -> Facts:
    """The facts about the documents at ``paths``."""
    now = time.time() if now is None else now
    wanted = set(paths)
    facts = Facts()
    newest: dict[tuple[str, int, str, str], Retired] = {}

    def keep(r: Retired) -> None:
        key = (r.path, r.line, r.subject, r.value)
        old = newest.get(key)
        if old is None or (r.by.created_at or 0.0) > (old.by.created_at or 0.0):
            newest[key] = r

    for row in documents.retired_since(0.0, MAX_RETIRED):
        if row["o_path"] not in wanted:
            continue
        keep(Retired(row["o_path"], row["o_line"] or 1, row["o_subject"], row["o_value"],
                     row["o_evidence"], Replacement(
                         value=row.get("n_value") or "",
                         evidence=row.get("n_evidence") or _first_line(row.get("new_text")),
                         store="workspace", path=row.get("n_path") or row.get("new_path"),
                         line=row.get("n_line"), created_at=row.get("new_created_at"))))
    for path, state in documents.file_states(sorted(wanted)).items():
        if state["status"] == SUPERSEDED and state.get("superseded_by"):
            facts.superseded_files[path] = Replacement(
                value="", evidence=state.get("evidence") or "", store="workspace",
                path=state["superseded_by"], confidence=state.get("confidence"))
    if memory is not None:
        for r in _retired_by_memory(documents, memory, normalize_user(user_id), wanted, now):
            keep(r)
    facts.retired = sorted(newest.values(), key=lambda r: (r.path, r.line, r.subject))
    return facts


def _retired_by_memory(documents: DocumentState, memory: MemoryState, user: str,
                       paths: set[str], now: float) -> list[Retired]:
    relations = [r for r in memory.relations_into(sorted(paths)) if r["kind"] == SUPERSEDES]
    if not relations:
        return []
    sources = sorted({r["source_record"] for r in relations})
    records = {rid: row for rid, row in memory.get_rows(sources).items()
               if row["user_id"] == user and row["forgotten_at"] is None
               and (row["expires_at"] is None or row["expires_at"] > now)
               and row["kind"] != PROMPT}
    claims = {c["claim_id"]: c for rid, found in memory.claims_for(sorted(records)).items()
              for c in found}
    located = {row["c_claim_id"]: row for row in documents.claims_by_id(
        sorted({r["target_claim"] for r in relations}))}
    out = []
    for rel in relations:
        claim = claims.get(rel["source_claim"])
        doc = located.get(rel["target_claim"])
        if claim is None or doc is None or claim["status"] != CURRENT:
            continue
        rec = records[rel["source_record"]]
        out.append(Retired(doc["c_path"], doc["c_line"] or 1, doc["c_subject"], doc["c_value"],
                           doc["c_evidence"], Replacement(
                               value=claim["value"], evidence=claim["evidence"], store="memory",
                               record_id=rel["source_record"], created_at=rec["created_at"],
                               source=rec["source"], session_id=rec["session_id"],
                               client=rec["provider"], method=rel["method"],
                               confidence=rel["confidence"])))
    return out


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip() and line.strip() != "---" and not line.lstrip().startswith("#"):
            return " ".join(line.split())
    return ""
