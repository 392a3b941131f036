"""One Tantivy index per user id: a user's ranking never depends on another user's records.

BM25 weighs a word by how rare it is among the documents of an index and a document's length
against the index's average; in one index shared by every user, what one user stores moves
another's ranking (LoCoMo: up to 2.6 points of recall per conversation from the order alone).
Each user's records therefore live in an index of their own, ``<folder>/u<hash of the user>``,
which also holds the user id (``lintaid-user``) and the schema version. The whole set is
derived: an old version at the top (``lintaid-schema``) throws every index away; one user's
unreadable index is recreated empty. ``rebuilt`` and ``broken`` tell the owner what to re-feed.

Cost (``benchmarks/user_indexes.py``): an open index keeps one Tantivy thread, a writer several
threads and its arena, and a pass of the indexer commits once per user it touched. So at most
``open_limit`` indexes stay open (least recently used closed first; reopening one costs about
half a millisecond) and at most ``writer_limit`` writers.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import tantivy

from .index import SCHEMA_FILE, TantivyIndex

USER_FILE = "lintaid-user"
WRITER_HEAP = 15_000_000  # Tantivy's least per writer thread


def user_dir_name(user_id: str) -> str:
    return "u" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]


class UserIndexes:
    """The per-user indexes under ``path``. Readers call ``for_user``; the writer side
    (the store's indexer) ``replace`` then ``commit``."""

    def __init__(self, path: Path, build_schema: Callable[[], tantivy.Schema], version: int, *,
                 open_limit: int = 128, writer_limit: int = 4) -> None:
        self.path = path
        self.version = version
        self.build_schema = build_schema
        self.schema = build_schema()
        self.open_limit = open_limit
        self.writer_limit = writer_limit
        self.rebuilt = False
        self.broken: list[str] = []  # users whose index was recreated empty at open
        self._lock = threading.Lock()
        self._open: OrderedDict[str, TantivyIndex] = OrderedDict()  # least recent first
        self._writing: OrderedDict[str, TantivyIndex] = OrderedDict()  # holding a writer
        self._users: set[str] = set()
        self._check()

    # -- opening ---------------------------------------------------------------------------
    def _check(self) -> None:
        """Start: an old or missing version throws everything away; every user's index is
        opened once, so a damaged one is found (and recreated) before serving."""
        marker = self.path / SCHEMA_FILE
        try:
            current = marker.read_text().strip() == str(self.version)
        except OSError:
            current = False
        if not current:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path.mkdir(parents=True, exist_ok=True)
            marker.write_text(f"{self.version}\n")
            self.rebuilt = True
            return
        for folder in sorted(self.path.iterdir()):
            if not folder.is_dir():
                continue
            try:
                user = (folder / USER_FILE).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                user = None
            if user is None or folder.name != user_dir_name(user):
                # Whose records these were is unknown: only a full rebuild restores them.
                shutil.rmtree(self.path, ignore_errors=True)
                self.path.mkdir(parents=True, exist_ok=True)
                marker.write_text(f"{self.version}\n")
                self.rebuilt = True
                self._users.clear()
                self._open.clear()
                return
            index = self._open_index(user)
            if index.rebuilt:
                self.broken.append(user)
            self._users.add(user)
            self._remember(user, index)

    def _open_index(self, user: str) -> TantivyIndex:
        folder = self.path / user_dir_name(user)
        index = TantivyIndex(folder, self.build_schema, self.version, heap_size=WRITER_HEAP)
        (folder / USER_FILE).write_text(user, encoding="utf-8")
        return index

    def _remember(self, user: str, index: TantivyIndex) -> None:
        """Keep ``index`` open as the most recent; close the least recent beyond the limit
        (never one holding a writer). Under ``_lock``."""
        self._open[user] = index
        self._open.move_to_end(user)
        while len(self._open) > self.open_limit:
            oldest = next((u for u in self._open if u not in self._writing), None)
            if oldest is None:
                break
            del self._open[oldest]

    def users(self) -> list[str]:
        with self._lock:
            return sorted(self._users)

    def for_user(self, user: str) -> TantivyIndex | None:
        """The user's index, opened if need be; None when the user has none yet."""
        with self._lock:
            index = self._writing.get(user) or self._open.get(user)
            if index is None:
                if user not in self._users:
                    return None
                index = self._open_index(user)
            self._remember(user, index)
            return index

    # -- writing (the store's indexer thread only) -------------------------------------------
    def replace(self, user: str,
                docs: Iterable[tuple[str, dict[str, Any] | None]]) -> list[tuple[str, str]]:
        """For each (id, doc) of ``user``: delete the id's document, add doc unless None;
        returns (id, reason) for each document the schema refused (``TantivyIndex.replace``)."""
        with self._lock:
            index = self._writing.get(user) or self._open.get(user)
            if index is None:
                index = self._open_index(user)
                self._users.add(user)
            self._writing[user] = index
            self._writing.move_to_end(user)
            self._remember(user, index)
        return index.replace("id", docs)

    def commit(self) -> None:
        """Commit every user index written since the last commit; then close the least
        recently written writers beyond ``writer_limit``."""
        with self._lock:
            writing = list(self._writing.items())
        for _user, index in writing:
            if index.dirty:
                index.commit()
        with self._lock:
            while len(self._writing) > self.writer_limit:
                _user, index = self._writing.popitem(last=False)
                index.close()

    def rest(self) -> None:
        """The indexer thread (the one that writes these): let go of every open index and
        writer (``TantivyIndex.rest``); each opens again when next used."""
        with self._lock:
            indexes = list({id(i): i for i in (*self._open.values(),
                                               *self._writing.values())}.values())
            self._writing = OrderedDict()
        for index in indexes:
            index.rest()

    def close(self) -> None:
        with self._lock:
            writing, self._writing = list(self._writing.values()), OrderedDict()
            self._open.clear()
        for index in writing:
            index.close()

    def num_docs(self) -> int:
        return sum(index.num_docs() for index in
                   (self.for_user(u) for u in self.users()) if index is not None)
