"""The hook dispatcher: one agent event in, injected context and records out.

It runs on the daemon's reader pool, never on the request loop: transcript reading, git calls,
file hashing and the injection search all happen here. Records go to the writer; the reply
resolves once they are committed. The agent client is found in the registry; everything
client-specific happens behind its interface.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import stat
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from lintaid.logs import get_logger
from lintaid_client import protocol
from lintaid_client.redact import redact, redact_value

from . import ledger
from .capture import git
from .capture.record import (
    REQUEST,
    RESULT,
    NewRecord,
    checkpoint_record,
    prompt_record,
    sections,
    turn_record,
)
from .futures import resolved, then
from .integrations import injection, registry
from .integrations.base import CAPTURE_SESSION, CAPTURE_TURN, AgentClient, HookEvent
from .retrieval import admit
from .retrieval.query import parts
from .search import Reader, SearchRequest, StateRequest

log = get_logger("lintaid.hooks")

STARTUP = "startup"
MAX_HASHED_FILE = 1024 * 1024
MAX_HASHED_PATHS = 50
MAX_PROMPT_CHARS = 20_000
"""A prompt is cut to this before anything reads it: nothing downstream uses more (the query
takes the first 20,000 characters, the stored prompt its first 4,000 bytes), and redacting,
matching and rendering a 1 MB paste would cost the hook its budget."""
_LAST_SPACE = re.compile(r"\s\S*\Z")
# Payload keys worth keeping as provenance (redacted); the rest is noise or already a field.
METADATA_KEYS = ("agent_id", "agent_type", "trigger", "reason", "source", "permission_mode",
                 "prompt_id", "transcript_path", "agent_transcript_path")


class RecordWrites(Protocol):
    @property
    def ledger(self) -> ledger.LedgerRows: ...

    def put(self, rec: NewRecord, actor: str) -> tuple[str, str]: ...

    def held_request(self, user_id: str, session_id: str | None,
                     request_hash: str | None) -> tuple[str, str, bool] | None: ...

    def complete_turn(self, record_id: str, rec: NewRecord, actor: str) -> None: ...


class Submit(Protocol):
    def __call__(self, job: Callable[[], Any], *, recall: bool = True) -> Future[Any]: ...


@dataclass(frozen=True)
class InjectConfig:
    top_k: int = injection.DEFAULT_MAX_RECORDS  # entries a prompt is given at most
    max_bytes: int = 8000
    max_tokens: int = injection.DEFAULT_MAX_TOKENS  # a prompt's block, estimated
    wait_s: float = 0.5  # at most, for captures and notes to become searchable
    floor: float = admit.FLOOR  # the best hit's calibrated relevance, or nothing at all
    relative: float = admit.RELATIVE  # every other hit's share of the best one's
    candidates: int = 15  # hits the search returns for admission to choose from


class Paused(Protocol):
    def __call__(self, session_id: str | None, at: float | None = None) -> bool: ...


class HookDispatcher:
    def __init__(self, root: Path, reader: Reader, writes: RecordWrites, submit: Submit,
                 config: InjectConfig | None = None, paused: Paused | None = None,
                 board_note: Callable[[str], str | None] | None = None) -> None:
        self.root = root
        self.reader = reader
        self.writes = writes
        self.submit = submit
        self.config = config or InjectConfig()
        self.paused = paused
        # SessionStart's one line on the bulletin board: unread posts on the boards the
        # session joined (None: nothing unread). Never memory: no record, no hit.
        self.board_note = board_note

    def handle(self, provider: str, event: str, payload: dict[str, Any], *,
               inject: bool = True, at: float | None = None) -> Future[dict[str, Any]]:
        """Answer one event: ``{"output": <client stdout JSON>, "captured": [ids]}``.

        ``at``: when the event happened, if not now (a spooled one), to judge a pause by.
        """
        try:
            client = registry.get(provider)
        except KeyError as err:
            raise protocol.BadRequest(str(err.args[0]), arg="provider") from None
        ev = cut_prompt(client.event(event, payload))
        if self.paused is not None and self.paused(ev.session_id, at):
            # Paused: the client's answer for nothing to inject, no record, no search.
            output = client.output(ev, None)
            return resolved({"output": output, "stdout": json.dumps(output), "captured": [],
                             "paused": True})
        # Every event gets the client's answer: some clients need one even with nothing to
        # inject (a tool gate that must say "allow").
        block = self.inject(ev) if inject and ev.inject else None
        output = client.output(ev, block.text if block else None)
        records = self.records(client, ev)
        if ev.capture == CAPTURE_TURN and not ev.skip and ev.transcript_path and (
                any(open_turn(rec) for rec in records)
                or not any(rec.kind == "capture" for rec in records)):
            self.read_again_later(client, ev)  # the log holds no whole turn yet
        noted = None
        if block is not None:
            kind = ledger.START if ev.session_start and not ev.prompt else ledger.PROMPT
            noted = ledger.entry(client.name, ev.session_id, ev.name, kind, block, ev.prompt)
        stdout = json.dumps(output, ensure_ascii=False)  # the shim prints it as it is
        return then(self.write(records, noted),
                    lambda ids: {"output": output, "stdout": stdout, "captured": ids})

    # -- capture -----------------------------------------------------------------------------
    def read_again_later(self, client: AgentClient, ev: HookEvent, attempt: int = 0) -> None:
        """A turn's Stop found its transcript without the turn or without its reply yet (a
        client that writes its log after running the hook): read it again a little later, a
        few times, as a catch-up that adds the turn or completes the one already held
        (``completes``)."""
        if attempt >= len(REREAD_AFTER_S):
            return
        again = dataclasses.replace(ev, capture=CAPTURE_SESSION, prompt=None, inject=False)

        def reread() -> None:
            try:
                records = [r for r in self.records(client, again) if r.kind == "capture"]
                if records:
                    self.write(records)
                else:
                    self.read_again_later(client, ev, attempt + 1)
            except Exception as err:  # a stopped writer, a vanished log: nothing to do
                log.info("reread_skipped", error=type(err).__name__)

        timer = threading.Timer(REREAD_AFTER_S[attempt], reread)
        timer.daemon = True
        timer.start()

    def records(self, client: AgentClient, ev: HookEvent) -> list[NewRecord]:
        records = build_records(client, ev)
        for rec in records:
            if rec.paths:
                rec.file_hashes = self.file_hashes(rec.paths, rec.cwd)
        return records

    def write(self, records: list[NewRecord],
              noted: ledger.Entry | None = None) -> Future[list[str]]:
        """Store the event's records; note its injection in the ledger (and judge the
        session's earlier ones at a captured turn) in the same writer job."""
        if not records and noted is None:
            return resolved([])
        writes = self.writes

        def job() -> list[str]:
            ids = []
            for rec in records:
                held = writes.held_request(rec.user_id, rec.session_id, rec.request_hash) \
                    if rec.catch_up else None
                if held is not None:
                    rid, content, forgotten = held
                    if not forgotten and completes(content, rec.content):
                        # Its Stop read the log before the client wrote the reply (a client
                        # that flushes late): the same turn, now whole.
                        writes.complete_turn(rid, rec, f"hook:{rec.provider}")
                        ids.append(rid)
                    continue  # the session holds this turn already: nothing to add
                ids.append(writes.put(rec, actor=f"hook:{rec.provider}")[0])
                ledger.judge(writes.ledger, rec)
            if noted is not None:
                ledger.note(writes.ledger, noted)
            return ids

        # A prompt's own record is not something injection recalls: nobody waits for it.
        future = self.submit(job, recall=any(rec.kind != "prompt" for rec in records))
        # An injection's ledger row alone (SessionStart): the hook does not wait for it.
        return future if records else resolved([])

    def file_hashes(self, rec_paths: list[str], cwd: str | None) -> dict[str, str]:
        """Hash each named file as it is now, so a later search can say it changed."""
        out: dict[str, str] = {}
        for name in rec_paths[:MAX_HASHED_PATHS]:
            path = Path(name)
            if not path.is_absolute():
                path = Path(cwd or self.root) / path
            try:
                path = path.resolve()
                rel = path.relative_to(self.root)
                st = path.stat()
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_HASHED_FILE:
                    continue  # a FIFO or device must never block a capture
                out[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest()
            except (OSError, ValueError):
                continue
        return out

    # -- injection ---------------------------------------------------------------------------
    def inject(self, ev: HookEvent) -> injection.Block | None:
        if ev.session_start and not ev.prompt:
            return self.inject_state(ev)
        query = ev.prompt
        if not query or admit.small_talk(query):
            return None
        cfg = self.config
        self.reader.settle(None, cfg.wait_s, recall_only=True)
        limits = admit.Limits(floor=cfg.floor, relative=cfg.relative, count=cfg.top_k)
        # Each question of the prompt on its own ("who owns billing, and what is the pool
        # size?"), so one that half the prompt's words are about does not drown the other.
        # Prompts are left out by default: a question is never recalled as an answer.
        # A hit under ``relative`` of the floor can never be admitted: no passages for it.
        least = cfg.floor * cfg.relative
        # A question about the craft is judged whole: its halves ("how can I detect one in
        # tests?") are each short enough for a word or two of memory to match most of.
        asked = [query] if admit.generic_question(query) else parts(query)
        hits = admit.interleave([admit.admit(self.reader.search(SearchRequest(
            query=part, top_k=cfg.candidates, passages=True, passages_from=least)).results,
            part, limits) for part in asked], cfg.top_k)
        if not hits:
            return None
        cwd = ev.cwd or str(self.root)
        branch, revision = git.git_state(cwd)
        return injection.recall(hits, where=injection.Where(branch, revision, cwd),
                                max_records=cfg.top_k, max_bytes=cfg.max_bytes,
                                max_tokens=cfg.max_tokens)

    def inject_state(self, ev: HookEvent) -> injection.Block | None:
        """SessionStart: the project's state. What changed is counted from the start of the
        last session (a new session), from this session's last record (resumed), or from
        this session's start (compacted, when its own decisions and turns come first)."""
        self.reader.settle(None, self.config.wait_s, recall_only=True)
        source = (ev.source or STARTUP).lower()
        reader = self.reader
        span = reader.session_span(None, ev.session_id)
        if source == injection.COMPACT:
            since = span[0] if span else None
        elif source == injection.RESUME and span is not None:
            since = span[1]
        else:
            since = reader.previous_session_start(None, ev.session_id, ev.client)
        cwd = ev.cwd or str(self.root)
        branch, revision = git.git_state(cwd)
        state = reader.project_state(StateRequest(
            since=since, branch=branch, session_id=ev.session_id,
            this_session=source == injection.COMPACT))
        verify = reader.needs_verifying(None, limit=5)
        block = injection.state_block(state, where=injection.Where(branch, revision, cwd),
                                      source=source, max_bytes=self.config.max_bytes,
                                      verify=verify,
                                      verify_hits=reader.hydrate([str(v["id"]) for v in verify]))
        return self.with_board_note(block, ev.session_id)

    def with_board_note(self, block: injection.Block | None,
                        session_id: str | None) -> injection.Block | None:
        """The block with the board's line at its end, when the session has unread posts."""
        if self.board_note is None or not session_id:
            return block
        try:
            line = self.board_note(session_id)
        except Exception as err:  # the board is a courtesy: SessionStart answers without it
            log.warning("board_note_failed", error=str(err))
            return block
        if not line:
            return block
        if block is None:
            return injection.Block(text=line, ids=[], markers=[])
        return dataclasses.replace(block, text=block.text.rstrip("\n") + "\n\n" + line)


REREAD_AFTER_S: Final = (0.5, 1.0, 2.0, 4.0, 8.0)
"""When an open turn's transcript is read again (about 15 s in all)."""


def open_turn(rec: NewRecord) -> bool:
    """A turn's capture that holds its request and no result yet."""
    if rec.kind != "capture" or rec.catch_up:
        return False
    parts = sections(rec.content)
    return bool(parts.get(REQUEST)) and not parts.get(RESULT)


def completes(held: str, caught_up: str) -> bool:
    """Whether a turn read again (``caught_up``) holds the result its held capture lacked."""
    return not sections(held).get(RESULT) and bool(sections(caught_up).get(RESULT))


def cut_prompt(ev: HookEvent, limit: int = MAX_PROMPT_CHARS) -> HookEvent:
    """The event with its prompt cut to ``limit`` characters at a whitespace boundary, so a
    secret is never split into a half the redactor cannot recognise (a first word longer than
    the limit is dropped whole). Before redaction, search and storage."""
    if ev.prompt is None or len(ev.prompt) <= limit:
        return ev
    head = ev.prompt[:limit + 1]
    end = _LAST_SPACE.search(head)
    cut = head[:end.start()].rstrip() if end else ""
    log.info("prompt_cut", chars=len(ev.prompt), kept=len(cut))
    return dataclasses.replace(ev, prompt=cut)


def build_records(client: AgentClient, ev: HookEvent, *,
                  now: float | None = None) -> list[NewRecord]:
    """The records one event yields: its prompt; the turn it closes, read from the client's
    transcript; and what a compaction kept. A turn is one record whichever events see it: a
    compaction or a session end re-reads the last turn only to catch it up when its Stop was
    never captured (``catch_up``), never to copy it. Content never holds a timestamp, so a
    replayed event yields the same record ids. ``now`` None: the store stamps them."""
    created = now
    branch, revision = git.git_state(ev.cwd)
    metadata = redact_value({k: ev.payload[k] for k in METADATA_KEYS
                             if ev.payload.get(k) not in (None, "", [], {})})
    out: list[NewRecord] = []
    if ev.prompt:
        rec = prompt_record(client=client.name, session_id=ev.session_id, event=ev.name,
                            prompt=redact(ev.prompt), cwd=ev.cwd, branch=branch,
                            revision=revision, metadata=metadata, created_at=created)
        if rec is not None:
            out.append(rec)
    if ev.capture and not ev.skip:
        exchange = client.exchange(ev)
        rec = turn_record(
            client=client.name, session_id=ev.session_id, event=ev.name,
            turn_id=exchange.turn_id, request=exchange.request, result=exchange.result,
            paths=exchange.paths, tools=exchange.tools, cwd=ev.cwd, branch=branch,
            revision=revision, metadata=metadata, created_at=created,
            catch_up=ev.capture != CAPTURE_TURN)
        if rec is not None:
            out.append(rec)
        summary = checkpoint_record(
            client=client.name, session_id=ev.session_id, event=ev.name,
            summary=exchange.summary, cwd=ev.cwd, branch=branch, revision=revision,
            metadata=metadata, created_at=created)
        if summary is not None:
            out.append(summary)
    return out
