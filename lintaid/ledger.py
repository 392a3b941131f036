"""The ledger of what memory did: for every injection, what it gave the agent and whether the
agent used it.

At an injection the hook notes which records it showed, its size in bytes and estimated
tokens, and the values, identifiers and paths its statements hold (``retrieval.markers``)
that the prompt did not already name. At the session's next capture (the turn the agent
finished after it) the writer reads what the agent said and which files and tools it used,
and an injection whose markers reappear there (and not in the person's request of that turn)
was used; the others were not. Both happen in
the writer job that stores the hook's own records, so the hook waits for nothing more.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from .capture.record import REQUEST, TURN, NewRecord
from .integrations.injection import Block
from .retrieval.markers import used

PROMPT: Final = "prompt"
START: Final = "start"


class LedgerRows(Protocol):
    def add(self, *, at: float, client: str | None, session_id: str | None, event: str,
            kind: str, records: Sequence[str], size: int, tokens: int,
            markers: Sequence[str]) -> int: ...

    def waiting(self, session_id: str, until: float) -> list[tuple[int, list[str]]]: ...

    def judge(self, seq: int, used: Sequence[str], at: float) -> None: ...


@dataclass(frozen=True)
class Entry:
    """One injection, to be noted."""

    client: str
    session_id: str | None
    event: str
    kind: str  # PROMPT | START
    records: list[str]
    size: int
    tokens: int
    markers: list[str]


def entry(client: str, session_id: str | None, event: str, kind: str, block: Block,
          prompt: str | None = None) -> Entry:
    """The ledger's entry for ``block``; markers the prompt names already are left out (an
    agent repeating the person's words shows nothing about memory)."""
    asked = (prompt or "").lower()
    marks = [m for m in block.markers if m.lower() not in asked]
    return Entry(client, session_id, event, kind, list(block.ids), block.bytes, block.tokens,
                 marks)


def note(rows: LedgerRows, item: Entry, at: float | None = None) -> int:
    """Writer thread: add ``item``."""
    return rows.add(at=time.time() if at is None else at, client=item.client,
                    session_id=item.session_id, event=item.event, kind=item.kind,
                    records=item.records, size=item.size, tokens=item.tokens,
                    markers=item.markers)


def said(rec: NewRecord) -> str:
    """What the agent said and did in a captured turn: its result, the files it touched and
    the tools it used (not the request: those are the person's words)."""
    lines = [line for line in rec.content.splitlines()
             if not line.startswith(f"{REQUEST}:")]
    return "\n".join([*lines, *rec.paths, *rec.tools])


def asked(rec: NewRecord) -> str:
    """What the person asked in a captured turn: its request."""
    return "\n".join(line for line in rec.content.splitlines()
                     if line.startswith(f"{REQUEST}:"))


def judge(rows: LedgerRows, rec: NewRecord, at: float | None = None) -> int:
    """Writer thread, at a captured turn: judge the session's injections still waiting;
    returns how many."""
    if rec.doc_type != TURN or not rec.session_id:
        return 0
    now = time.time() if at is None else at
    text, request = said(rec), asked(rec)
    waiting = rows.waiting(rec.session_id, now)
    for seq, marks in waiting:
        # A marker the person's own request names shows nothing about memory.
        rows.judge(seq, used(marks, text, request), now)
    return len(waiting)
