"""The derived indexes' health, read only, for ``lintaid doctor``: this never rebuilds or
writes anything (the daemon rebuilds a damaged index from SQLite when it starts)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tantivy

from lintaid_client import paths

from .index import SCHEMA_FILE
from .memory import INDEX_VERSION as MEMORY_VERSION
from .memory import _memory_schema
from .workspace import INDEX_VERSION as WORKSPACE_VERSION
from .workspace import _workspace_schema

INDEXES: dict[str, tuple[Callable[[], tantivy.Schema], int]] = {
    "memory": (_memory_schema, MEMORY_VERSION),
    "workspace": (_workspace_schema, WORKSPACE_VERSION),
}


@dataclass
class IndexHealth:
    name: str
    path: Path
    exists: bool
    problem: str | None = None  # None: it opens and reads
    docs: int = 0


def index_health(root: Path, name: str) -> IndexHealth:
    build, version = INDEXES[name]
    path = paths.index_dir(root, name)
    if not path.exists():
        return IndexHealth(name, path, exists=False)
    try:
        marker = (path / SCHEMA_FILE).read_text().strip()
    except OSError:
        marker = None
    if marker != str(version):
        return IndexHealth(name, path, True, f"of schema {marker or 'unknown'}, not {version}")
    try:
        index = tantivy.Index(build(), path=str(path), reuse=True)
        searcher = index.searcher()
        searcher.search(tantivy.Query.all_query(), limit=1)
        return IndexHealth(name, path, True, docs=int(searcher.num_docs))
    except (OSError, ValueError, RuntimeError) as err:
        return IndexHealth(name, path, True, f"unreadable: {str(err).splitlines()[0][:200]}")
