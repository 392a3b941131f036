"""The record format: what every write path (hooks, API, CLI, MCP) hands to the writer."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Final

from lintaid_client import models

from .transcript import MAX_FIELD_BYTES, cap_bytes, compact

LOCAL_USER: Final = "local"
"""The default user: the developer on this machine and the agents they run.

Captured records belong to it, and an empty or missing user id means it.
"""


def normalize_user(user_id: str | None) -> str:
    user = (user_id or "").strip()
    return user or LOCAL_USER


def content_fingerprint(text: str) -> str:
    """Hash of whitespace-collapsed, lowercased text: what a tombstone is keyed on."""
    folded = " ".join(text.lower().split())
    return hashlib.sha256(folded.encode()).hexdigest()


@dataclass
class NewRecord:
    """A record about to be written. ``record_id`` derives from content and provenance."""

    content: str
    kind: str  # models.KINDS: "capture" | "note" | "prompt"
    source: str  # "claude-code://<session>/<doc_type>", "cli", "api", "mcp", ...
    user_id: str = LOCAL_USER
    provider: str | None = None
    session_id: str | None = None
    event: str | None = None
    doc_type: str | None = None  # outcome (a turn) | checkpoint | prompt | None (a note)
    cwd: str | None = None
    branch: str | None = None
    revision: str | None = None
    paths: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    file_hashes: dict[str, str] = field(default_factory=dict)  # path -> sha256 at capture
    # None: stamped by the store's clock at insert, so "newer" is the order of writes even
    # when the wall clock steps back; set only for imports that carry their own time.
    created_at: float | None = None
    valid_at: float | None = None
    expires_at: float | None = None
    supersedes: str | None = None
    explicit_id: str | None = None
    turn_id: str | None = None  # a captured turn's identity in its session (``turn_key``)
    request_hash: str | None = None  # content_fingerprint of the turn's request
    catch_up: bool = False
    """Store it only if its session holds no turn with the same request: a compaction or a
    session end re-reads the last turn, which its Stop has usually captured already."""
    private: bool = False
    """Never shared with a team (``lintaid add --private``)."""
    member: str | None = None  # the teammate who wrote it, for a record pulled from the team
    machine: str | None = None  # and on which machine

    @property
    def record_id(self) -> str:
        """From content and provenance; a turn's from its session and turn identity, so every
        event that sees the same turn (Stop, PreCompact, SessionEnd, a replay) gives one id."""
        if self.explicit_id:
            return self.explicit_id
        if self.turn_id:
            parts = [normalize_user(self.user_id), self.kind, self.provider or "",
                     self.session_id or "", "turn", self.turn_id]
        else:  # the basis every earlier version used: the same record keeps its id
            parts = [normalize_user(self.user_id), self.kind, self.source,
                     self.session_id or "", self.doc_type or "",
                     content_fingerprint(self.content)]
        return "m" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:23]


# -- the record format of hook events --------------------------------------------------------
MAX_PROMPT_BYTES: Final = 4000
# Lines a capture is made of; the policy reads the labels as context, not as claims.
REQUEST, RESULT, SUMMARY, PATHS, TOOLS = (
    "Request", "Result", "Compact summary", "Affected paths", "Tools used")
# Document types of hook records: a finished turn, what a compaction kept, a prompt.
TURN, CHECKPOINT, PROMPT = "outcome", "checkpoint", "prompt"


def prompt_record(*, client: str, session_id: str | None, event: str, prompt: str,
                  cwd: str | None, branch: str | None, revision: str | None,
                  metadata: dict[str, Any],
                  created_at: float | None = None) -> NewRecord | None:
    """The record of a prompt the person submitted (already redacted), or None if blank.
    Its lines are kept as a capture keeps a turn's (``compact``): a paragraph break before
    a list or a code fence stays."""
    text = compact(prompt, MAX_PROMPT_BYTES)
    if not text:
        return None
    return NewRecord(
        content=cap_bytes("User prompt: " + text, MAX_PROMPT_BYTES),
        kind=models.PROMPT, source=f"{client}://{session_id or 'unknown'}/{PROMPT}",
        provider=client, session_id=session_id, event=event, doc_type=PROMPT, cwd=cwd, branch=branch,
        revision=revision, metadata=metadata, created_at=created_at,
    )


def turn_record(*, client: str, session_id: str | None, event: str, turn_id: str,
                request: str, result: str, paths: list[str], tools: list[str],
                cwd: str | None, branch: str | None, revision: str | None,
                metadata: dict[str, Any], created_at: float | None = None,
                catch_up: bool = False) -> NewRecord | None:
    """The record of one finished agent turn (fields already redacted), or None if empty.

    Its id derives from the session and ``turn_id``: the Stop that captures the turn and a
    later PreCompact or SessionEnd that reads the same turn again give the same record.
    """
    if not (request or result):
        return None
    lines = []
    if request:
        lines.append(labelled(REQUEST, request))
    if result:
        lines.append(labelled(RESULT, result))
    if paths:
        lines.append(f"{PATHS}: " + cap_bytes(", ".join(paths), MAX_FIELD_BYTES))
    if tools:
        lines.append(f"{TOOLS}: " + cap_bytes(", ".join(tools), MAX_FIELD_BYTES))
    return NewRecord(
        content="\n".join(lines), kind="capture",
        source=f"{client}://{session_id or 'unknown'}/{TURN}", provider=client,
        session_id=session_id, event=event, doc_type=TURN, cwd=cwd, branch=branch,
        revision=revision, paths=list(paths), tools=list(tools), metadata=metadata,
        created_at=created_at, turn_id=turn_id or None,
        request_hash=content_fingerprint(request) if request else None, catch_up=catch_up,
    )


_BLOCK_START: Final = re.compile(r"(?:```|~~~|#{1,6}\s|\||[-*+]\s|\d{1,3}[.)]\s)")


def labelled(label: str, text: str) -> str:
    """``text`` after its label: on the label's line, or below it when it opens with a block
    (a code fence, a heading, a table, a list): "Result: ```rust" is no fence to a Markdown
    reader, and the code in it would be read as prose."""
    return f"{label}:\n{text}" if _BLOCK_START.match(text) else f"{label}: {text}"


def sections(content: str) -> dict[str, str]:
    """A turn's text by label (``Request``, ``Result``, ``Affected paths``, ``Tools used``,
    ``Compact summary``): what follows each label up to the next, a result's lines kept."""
    labels = (REQUEST, RESULT, SUMMARY, PATHS, TOOLS)
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in content.split("\n"):
        label = next((name for name in labels
                      if line.startswith(f"{name}: ") or line == f"{name}:"), None)
        if label is not None and label not in out:
            current = out[label] = [line[len(label) + 2:]] if line != f"{label}:" else []
        elif current is not None:
            current.append(line)
    return {label: "\n".join(lines).strip() for label, lines in out.items()}


def with_paths(content: str, paths: list[str]) -> str:
    """A turn's text with its ``Affected paths`` line naming ``paths`` instead (the line
    left out when there are none); other text as it was."""
    lines = content.split("\n")
    label = f"{PATHS}: "
    out = [line for line in lines if not line.startswith(label)]
    if len(out) == len(lines):
        return content
    at = next(i for i, line in enumerate(lines) if line.startswith(label))
    if paths:
        out.insert(at, label + cap_bytes(", ".join(paths), MAX_FIELD_BYTES))
    return "\n".join(out)


def checkpoint_record(*, client: str, session_id: str | None, event: str, summary: str,
                      cwd: str | None, branch: str | None, revision: str | None,
                      metadata: dict[str, Any],
                      created_at: float | None = None) -> NewRecord | None:
    """The record of what a compaction kept (the client's summary, already redacted): the
    turns it compacted are captured on their own."""
    if not summary:
        return None
    return NewRecord(
        content=f"{SUMMARY}: {summary}", kind="capture",
        source=f"{client}://{session_id or 'unknown'}/{CHECKPOINT}", provider=client,
        session_id=session_id, event=event, doc_type=CHECKPOINT, cwd=cwd, branch=branch,
        revision=revision, metadata=metadata, created_at=created_at,
    )
