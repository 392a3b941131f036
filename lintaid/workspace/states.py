"""Workspace files in the current-state policy: which files take part, as what, and their state.

Pure bookkeeping over ``lintaid.policy`` (no storage): the workspace store owns one
``PolicyState`` on the writer thread and feeds it every change.

Decisions:
- Only documentation files (Markdown, plain text, reST, ...) yield claims: a code file's
  ``TIMEOUT = 5`` is the code, not a statement that another file can retire.
- A file's effective time is its mtime; its source kind is ``document``.
- Frontmatter ``supersedes: other.md`` names a file relative to the file's folder, else to the
  root; the first target that exists wins. The engine carries one link per file.
- A file with no claims and no link stays out of the engine entirely: it is always current,
  which keeps the engine's size proportional to the project's decision documents, not its code.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from lintaid.policy import (
    CURRENT,
    Derived,
    RecordInput,
    RecordState,
    derive,
    derive_incremental,
    extract_claims,
)

from .chunking import frontmatter_list

DOCUMENT_EXTS: Final = frozenset({
    ".md", ".markdown", ".mdx", ".mdown", ".mkd", ".txt", ".text", ".rst", ".adoc", ".org",
})


def is_document(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    dot = name.rfind(".")
    return dot > 0 and name[dot:] in DOCUMENT_EXTS


def link_candidates(path: str, frontmatter: dict[str, Any]) -> list[str]:
    """Where each ``supersedes:`` target may live: beside the file first, then from the root."""
    out: list[str] = []
    folder = posixpath.dirname(path)
    for raw in frontmatter_list(frontmatter, "supersedes"):
        target = raw.strip().replace("\\", "/")
        if target.startswith("/"):
            places = [target.lstrip("/")]  # "/docs/a.md": from the root only
        else:
            places = [posixpath.join(folder, target), target]
        for candidate in places:
            norm = posixpath.normpath(candidate)
            if norm in (".", "") or norm.startswith("../") or norm == "..":
                continue
            if norm != path and norm not in out:
                out.append(norm)
    return out


def policy_text(path: str, text: str, frontmatter: dict[str, Any]) -> str | None:
    """The text the engine must see for ``path``, or None when the file takes no part.

    Runs on the watcher's worker thread, so the writer never extracts claims for the many files
    that have none.
    """
    if not is_document(path):
        return None
    if frontmatter_list(frontmatter, "supersedes"):
        return text
    return text if extract_claims(text) else None


@dataclass(frozen=True)
class PolicyFile:
    """What the engine knows about one indexed file."""

    path: str
    mtime: float  # seconds
    text: str | None  # None: no claims and no link (see ``policy_text``)
    links: tuple[str, ...] = ()  # candidate targets, in resolution order


@dataclass
class PolicyState:
    """The derived state of every participating file, updated incrementally."""

    files: dict[str, PolicyFile] = field(default_factory=dict)  # every indexed file
    derived: Derived = field(default_factory=Derived)
    inputs: dict[str, RecordInput] = field(default_factory=dict)
    _by_candidate: dict[str, set[str]] = field(default_factory=dict)

    # -- building ----------------------------------------------------------------------------
    def rebuild(self, files: Iterable[PolicyFile]) -> None:
        self.files = {f.path: f for f in files}
        self._by_candidate = {}
        for f in self.files.values():
            self._index_links(f)
        self.inputs = {}
        for path in self._members():
            record = self._input(path)
            if record is not None:
                self.inputs[path] = record
        self.derived = derive(self.inputs.values())

    def update(self, changed: Iterable[PolicyFile], removed: Iterable[str]) -> dict[str, RecordState]:
        """Apply upserted and deleted files; return the files whose state changed.

        A file that left the engine (or the workspace) and was not current maps to a current
        ``RecordState``, so the caller can clear it.
        """
        dirty: set[str] = set()
        for path in removed:
            old = self.files.pop(path, None)
            if old is not None:
                self._unindex_links(old)
                dirty |= self._neighbours(old)
            dirty.add(path)
        for f in changed:
            old = self.files.get(f.path)
            if old is not None:
                self._unindex_links(old)
                dirty |= self._neighbours(old)
            self.files[f.path] = f
            self._index_links(f)
            dirty |= self._neighbours(f)
            dirty.add(f.path)
        # A file appearing or vanishing may complete or break another file's link.
        for path in list(dirty):
            dirty |= self._by_candidate.get(path, set())
        # ... and re-resolving that link changes the membership of its targets.
        for path in list(dirty):
            f = self.files.get(path)
            if f is not None:
                dirty |= self._neighbours(f)
        upserts: list[RecordInput] = []
        gone: list[str] = []
        for path in sorted(dirty):
            want = self._input(path) if self._is_member(path) else None
            have = self.inputs.get(path)
            if want == have:
                continue
            if want is None:
                del self.inputs[path]
                gone.append(path)
            else:
                self.inputs[path] = want
                upserts.append(want)
        if not upserts and not gone:
            return {}
        before = self.derived.record_states
        self.derived = derive_incremental(self.derived, upserts, gone, self.inputs)
        after = self.derived.record_states
        out: dict[str, RecordState] = {}
        for path in set(before) | set(after):
            old_state = before.get(path, RecordState())
            new_state = after.get(path, RecordState())
            if old_state != new_state:
                out[path] = new_state
        return out

    def state(self, path: str) -> RecordState:
        return self.derived.record_states.get(path, RecordState(CURRENT))

    def states(self) -> dict[str, RecordState]:
        return {p: s for p, s in self.derived.record_states.items() if s.status != CURRENT}

    # -- links ------------------------------------------------------------------------------------
    def _index_links(self, f: PolicyFile) -> None:
        for candidate in f.links:
            self._by_candidate.setdefault(candidate, set()).add(f.path)

    def _unindex_links(self, f: PolicyFile) -> None:
        for candidate in f.links:
            sources = self._by_candidate.get(candidate)
            if sources is not None:
                sources.discard(f.path)
                if not sources:
                    del self._by_candidate[candidate]

    def resolve(self, f: PolicyFile) -> str | None:
        return next((c for c in f.links if c in self.files), None)

    def _neighbours(self, f: PolicyFile) -> set[str]:
        """Files whose membership may depend on ``f``'s link.

        Every existing candidate, not only the resolved one: when a nearer candidate appears,
        the target ``f`` used to resolve to must be re-stated too.
        """
        return {c for c in f.links if c in self.files}

    def _superseders(self, path: str) -> list[PolicyFile]:
        out = []
        for source in self._by_candidate.get(path, ()):
            f = self.files.get(source)
            if f is not None and self.resolve(f) == path:
                out.append(f)
        return out

    # -- membership ---------------------------------------------------------------------------------
    def _members(self) -> list[str]:
        return [p for p in self.files if self._is_member(p)]

    def _is_member(self, path: str) -> bool:
        f = self.files.get(path)
        if f is None:
            return False
        return f.text is not None or bool(self._superseders(path))

    def _input(self, path: str) -> RecordInput | None:
        f = self.files.get(path)
        if f is None:
            return None
        return RecordInput(
            record_id=path, text=f.text or "", kind="document", created_at=f.mtime,
            valid_at=f.mtime, path=path, explicit_supersedes=self.resolve(f),
        )
