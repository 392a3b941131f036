"""Workspace files in the current-state policy: which files take part, and their links.

Runs on the watcher's worker thread, as each file is read; the one policy engine derives the
files' states on the writer thread (``lintaid.derivation``).

Decisions:
- Only documentation files (Markdown, plain text, reST, ...) yield claims: a code file's
  ``TIMEOUT = 5`` is the code, not a statement that another file can retire.
- A file's effective time is its mtime; its source kind is ``document``.
- Frontmatter ``supersedes: other.md`` names a file relative to the file's folder, else to the
  root; the first target that exists wins (resolved in ``lintaid.derivation``): one link per
  file.
- A file with no claims and no link stays out of the engine entirely: it is always current,
  which keeps the engine's size proportional to the project's decision documents, not its code.
"""

from __future__ import annotations

import posixpath
from typing import Any, Final

from lintaid.policy import DOCUMENT_KIND, record_claims_of

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
    that have none. Read by the engine's own reader of a document (``record_claims_of``), so a
    page of plain prose ("Uploads are stored on MinIO.") takes part as the engine would read
    it, not only one holding a ``key: value`` line.
    """
    if not is_document(path):
        return None
    if frontmatter_list(frontmatter, "supersedes"):
        return text
    return text if record_claims_of(text, DOCUMENT_KIND) else None
