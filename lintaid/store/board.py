"""The bulletin board's rows (``boards``, ``board_posts``, ``board_members``,
``board_sessions``; migration ``m009_bulletin_board``): persistence only.

Posts are held apart from memory: no record, no claim, no index entry; their full-text search
is SQLite FTS5 over ``board_posts`` (``board_posts_fts``), so a memory search can never meet
one. Every read and write names the user: a user never reads another's boards.

Mutating methods run on the writer thread (inside a ``Writer`` job); reads on any thread.
What a post may say (redaction, limits) and which board a session means are decided before
(``lintaid.board``); here rows are written and read as asked.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import uuid
from collections.abc import Callable
from typing import Any, Final

DEFAULT_KEY: Final = "default"
_WORDS: Final = re.compile(r"\w+", re.UNICODE)
POST_COLUMNS: Final = ("p.post_id, p.board_id, b.key AS board_key, p.sequence, p.content,"
                       " p.author, p.client, p.session_id, p.request_id, p.created_at")


def board_id_for(user_id: str, key: str) -> str:
    """A board's id: stable for (user, key), so the same key names the same board after a
    restart, a backup restored or a recovery."""
    digest = hashlib.sha256(f"{user_id}\0{key}".encode()).hexdigest()
    return "b_" + digest[:16]


def _post(row: sqlite3.Row) -> dict[str, Any]:
    return {k: row[k] for k in row.keys()}


class BoardTable:
    def __init__(self, write: sqlite3.Connection, read: Callable[[], sqlite3.Connection]) -> None:
        self._write = write
        self._read = read

    # -- writer thread ---------------------------------------------------------------------
    def open(self, user_id: str, key: str, title: str, at: float, client: str | None,
             session_id: str | None, since: float = 0.0) -> tuple[dict[str, Any], bool]:
        """The board of ``key``, created if new; (its row, counting the posts made at or
        after ``since``; whether it was created)."""
        board_id = board_id_for(user_id, key)
        cur = self._write.execute(
            "INSERT OR IGNORE INTO boards(board_id, user_id, key, title, created_at, client,"
            " session_id) VALUES (?,?,?,?,?,?,?)",
            (board_id, user_id, key, title, at, client, session_id))
        row = self.board(user_id, board_id, since, conn=self._write)
        assert row is not None
        return row, cur.rowcount > 0

    def join(self, user_id: str, board_id: str, session_id: str, client: str | None,
             at: float, *, default: bool) -> None:
        """``session_id`` joins the board (``default``: it becomes the session's board)."""
        self._write.execute(
            "INSERT INTO board_members(board_id, user_id, session_id, client, joined_at,"
            " seen_at) VALUES (?,?,?,?,?,?) ON CONFLICT(board_id, session_id) DO UPDATE SET"
            " seen_at = excluded.seen_at, client = COALESCE(excluded.client, client)",
            (board_id, user_id, session_id, client, at, at))
        if default:
            self._write.execute(
                "INSERT INTO board_sessions(user_id, session_id, board_id, at) VALUES (?,?,?,?)"
                " ON CONFLICT(user_id, session_id) DO UPDATE SET board_id = excluded.board_id,"
                " at = excluded.at", (user_id, session_id, board_id, at))

    def mark_read(self, user_id: str, board_id: str, session_id: str, sequence: int,
                  at: float) -> None:
        """The session has read the board up to ``sequence`` (never moves back)."""
        self._write.execute(
            "UPDATE board_members SET read_sequence = MAX(read_sequence, ?), seen_at = ?"
            " WHERE board_id = ? AND session_id = ? AND user_id = ?",
            (sequence, at, board_id, session_id, user_id))

    def post(self, user_id: str, board_id: str, content: str, request_id: str,
             author: str | None, client: str | None, session_id: str | None,
             at: float) -> dict[str, Any]:
        """Append a post with the board's next sequence."""
        sequence = int(self._write.execute(
            "UPDATE boards SET last_sequence = last_sequence + 1 WHERE board_id = ?"
            " AND user_id = ? RETURNING last_sequence", (board_id, user_id)).fetchone()[0])
        post_id = "p_" + uuid.uuid4().hex[:20]
        self._write.execute(
            "INSERT INTO board_posts(post_id, board_id, user_id, sequence, content, author,"
            " client, session_id, request_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (post_id, board_id, user_id, sequence, content, author, client, session_id,
             request_id, at))
        found = self.get(user_id, post_id, 0.0, conn=self._write)
        assert found is not None
        return found

    def by_request(self, user_id: str, request_id: str) -> dict[str, Any] | None:
        row = self._write.execute(
            f"SELECT {POST_COLUMNS} FROM board_posts p JOIN boards b USING (board_id)"
            " WHERE p.user_id = ? AND p.request_id = ?", (user_id, request_id)).fetchone()
        return _post(row) if row is not None else None

    def prune(self, before: float) -> int:
        """Drop posts made before ``before`` (their search rows go with them), and the
        session rows no session has touched since."""
        cur = self._write.execute("DELETE FROM board_posts WHERE created_at < ?", (before,))
        self._write.execute("DELETE FROM board_sessions WHERE at < ?", (before,))
        self._write.execute("DELETE FROM board_members WHERE seen_at < ?", (before,))
        return cur.rowcount

    # -- any thread ------------------------------------------------------------------------
    def board(self, user_id: str, board_id: str, since: float = 0.0,
              conn: sqlite3.Connection | None = None) -> dict[str, Any] | None:
        """One board with its counts (posts made at or after ``since``: the live ones)."""
        rows = self._boards(conn or self._read(), user_id, "b.board_id = ?", (board_id,), since)
        return rows[0] if rows else None

    def board_by_key(self, user_id: str, key: str, since: float = 0.0) -> dict[str, Any] | None:
        rows = self._boards(self._read(), user_id, "b.key = ?", (key,), since)
        return rows[0] if rows else None

    def boards(self, user_id: str, since: float = 0.0) -> list[dict[str, Any]]:
        return self._boards(self._read(), user_id, "1", (), since)

    def _boards(self, conn: sqlite3.Connection, user_id: str, where: str,
                params: tuple[Any, ...], since: float) -> list[dict[str, Any]]:
        rows = conn.execute(
            "SELECT b.board_id, b.key, b.title, b.created_at, b.client, b.session_id,"
            " b.last_sequence, COUNT(p.seq) AS posts, MAX(p.created_at) AS last_post_at"
            " FROM boards b LEFT JOIN board_posts p ON p.board_id = b.board_id"
            " AND p.created_at >= ?"
            f" WHERE b.user_id = ? AND {where} GROUP BY b.board_id"
            " ORDER BY COALESCE(MAX(p.created_at), b.created_at) DESC",
            (since, user_id, *params)).fetchall()
        return [_post(r) for r in rows]

    def session_board(self, user_id: str, session_id: str) -> str | None:
        row = self._read().execute(
            "SELECT board_id FROM board_sessions WHERE user_id = ? AND session_id = ?",
            (user_id, session_id)).fetchone()
        return str(row[0]) if row is not None else None

    def memberships(self, user_id: str, session_id: str) -> dict[str, int]:
        """The boards ``session_id`` joined: board id -> the last sequence it read."""
        return {str(r[0]): int(r[1]) for r in self._read().execute(
            "SELECT board_id, read_sequence FROM board_members WHERE user_id = ?"
            " AND session_id = ?", (user_id, session_id))}

    def unread(self, user_id: str, session_id: str, since: float) -> list[dict[str, Any]]:
        """The boards ``session_id`` joined that hold live posts it has not read (by other
        sessions), with how many."""
        rows = self._read().execute(
            "SELECT b.board_id, b.key, b.title, COUNT(p.seq) AS unread FROM board_members m"
            " JOIN boards b ON b.board_id = m.board_id JOIN board_posts p ON"
            " p.board_id = m.board_id AND p.sequence > m.read_sequence AND p.created_at >= ?"
            " AND p.session_id IS NOT m.session_id"
            " WHERE m.user_id = ? AND m.session_id = ? GROUP BY b.board_id"
            " ORDER BY MAX(p.created_at) DESC", (since, user_id, session_id)).fetchall()
        return [_post(r) for r in rows]

    def read(self, user_id: str, board_id: str, after: int, limit: int,
             since: float) -> list[dict[str, Any]]:
        """The live posts after sequence ``after``, in order."""
        rows = self._read().execute(
            f"SELECT {POST_COLUMNS} FROM board_posts p JOIN boards b USING (board_id)"
            " WHERE p.user_id = ? AND p.board_id = ? AND p.sequence > ? AND p.created_at >= ?"
            " ORDER BY p.sequence LIMIT ?", (user_id, board_id, after, since, limit)).fetchall()
        return [_post(r) for r in rows]

    def get(self, user_id: str, post_id: str, since: float,
            conn: sqlite3.Connection | None = None) -> dict[str, Any] | None:
        row = (conn or self._read()).execute(
            f"SELECT {POST_COLUMNS} FROM board_posts p JOIN boards b USING (board_id)"
            " WHERE p.user_id = ? AND p.post_id = ? AND p.created_at >= ?",
            (user_id, post_id, since)).fetchone()
        return _post(row) if row is not None else None

    def search(self, user_id: str, query: str, board_id: str | None, limit: int,
               since: float) -> list[dict[str, Any]]:
        """Posts matching any word of ``query`` (FTS5, bm25 order, best first); the words
        are quoted, so the query's punctuation is never FTS syntax."""
        words = _WORDS.findall(query)
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:64])
        clauses, params = ["p.user_id = ?", "p.created_at >= ?"], [user_id, since]
        if board_id is not None:
            clauses.append("p.board_id = ?")
            params.append(board_id)
        rows = self._read().execute(
            f"SELECT {POST_COLUMNS}, bm25(board_posts_fts) AS rank FROM board_posts_fts"
            " JOIN board_posts p ON p.seq = board_posts_fts.rowid JOIN boards b"
            " ON b.board_id = p.board_id WHERE board_posts_fts MATCH ? AND "
            + " AND ".join(clauses) + " ORDER BY rank, p.created_at DESC LIMIT ?",
            (match, *params, limit)).fetchall()
        out = []
        for r in rows:
            post = _post(r)
            post["score"] = -float(post.pop("rank"))  # bm25: lower is better
            out.append(post)
        return out
