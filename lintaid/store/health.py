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


PER_USER = {"memory"}  # one index per user id under the folder (``user_index.py``)


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
    folders = sorted(p for p in path.iterdir() if p.is_dir()) if name in PER_USER else [path]
    docs = 0
    for folder in folders:
        try:
            index = tantivy.Index(build(), path=str(folder), reuse=True)
            searcher = index.searcher()
            searcher.search(tantivy.Query.all_query(), limit=1)
            docs += int(searcher.num_docs)
        except (OSError, ValueError, RuntimeError) as err:
            where = "" if folder == path else f" ({folder.name})"
            return IndexHealth(name, path, True,
                               f"unreadable{where}: {str(err).splitlines()[0][:200]}")
    return IndexHealth(name, path, True, docs=docs)
