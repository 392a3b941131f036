"""The record format: what every write path (hooks, API, CLI, MCP) hands to the writer."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Final

from .transcript import MAX_FIELD_BYTES, cap_bytes

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
    kind: str  # "capture" | "prompt" | "note"
    source: str  # "claude-code://<session>/<doc_type>", "cli", "api", "mcp", ...
    user_id: str = LOCAL_USER
    provider: str | None = None
    session_id: str | None = None
    event: str | None = None
    doc_type: str | None = None  # checkpoint | outcome | session-summary | prompt | note
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

    @property
    def record_id(self) -> str:
        if self.explicit_id:
            return self.explicit_id
        basis = "\x1f".join(
            [
                normalize_user(self.user_id),
                self.kind,
                self.source,
                self.session_id or "",
                self.doc_type or "",
                content_fingerprint(self.content),
            ]
        )
        return "m" + hashlib.sha256(basis.encode()).hexdigest()[:23]


# -- the record format of hook events --------------------------------------------------------
MAX_PROMPT_BYTES: Final = 4000
# Lines a capture is made of; the policy reads the labels as context, not as claims.
REQUEST, RESULT, SUMMARY, PATHS, TOOLS = (
    "Request", "Result", "Compact summary", "Affected paths", "Tools used")


def prompt_record(*, client: str, session_id: str | None, event: str, prompt: str,
                  cwd: str | None, branch: str | None, revision: str | None,
                  metadata: dict[str, Any],
                  created_at: float | None = None) -> NewRecord | None:
    """The record of a prompt the person submitted (already redacted), or None if blank."""
    lines = [line.rstrip() for line in prompt.splitlines() if line.strip()]
    if not lines:
        return None
    return NewRecord(
        content=cap_bytes("User prompt: " + "\n".join(lines).strip(), MAX_PROMPT_BYTES),
        kind="prompt", source=f"{client}://{session_id or 'unknown'}/prompt", provider=client,
        session_id=session_id, event=event, doc_type="prompt", cwd=cwd, branch=branch,
        revision=revision, metadata=metadata, created_at=created_at,
    )


def capture_record(*, client: str, session_id: str | None, event: str, doc_type: str,
                   request: str, result: str, summary: str, paths: list[str],
                   tools: list[str], cwd: str | None, branch: str | None,
                   revision: str | None, metadata: dict[str, Any],
                   created_at: float | None = None) -> NewRecord | None:
    """The record of a finished turn, compaction or session (fields already redacted)."""
    if not (request or result or summary):
        return None
    lines = []
    if request:
        lines.append(f"{REQUEST}: {request}")
    if result:
        lines.append(f"{RESULT}: {result}")
    if summary:
        lines.append(f"{SUMMARY}: {summary}")
    if paths:
        lines.append(f"{PATHS}: " + cap_bytes(", ".join(paths), MAX_FIELD_BYTES))
    if tools:
        lines.append(f"{TOOLS}: " + cap_bytes(", ".join(tools), MAX_FIELD_BYTES))
    return NewRecord(
        content="\n".join(lines), kind="capture",
        source=f"{client}://{session_id or 'unknown'}/{doc_type}", provider=client,
        session_id=session_id, event=event, doc_type=doc_type, cwd=cwd, branch=branch,
        revision=revision, paths=list(paths), tools=list(tools), metadata=metadata,
        created_at=created_at,
    )
