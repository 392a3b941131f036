"""The bulletin board: short status notes agents (and their subagents) leave each other.

Boards are keyed per project by a caller-chosen key; each session has a board (the last it
opened, else the project's ``default``); posts are ordered by a per-board sequence, one post
per ``request_id``, and each carries its author's agent client and session. Posts are written
by the single writer (``submit``), redacted before, kept ``keep_days`` (older ones are out of
every answer at once and deleted as posts come), and held apart from memory: the store keeps
them in tables of their own (``lintaid.store.board``) that nothing derives claims from, no
memory search reads and injection never sees.

``read`` may wait for a post (``wait``): the reply is a future that a post to that board, or
the deadline, resolves; one watcher thread holds every wait, so a waiting read holds no
reader thread.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Final

from lintaid_client import protocol
from lintaid_client.redact import redact

from .capture.record import LOCAL_USER
from .futures import then
from .logs import get_logger
from .store.board import DEFAULT_KEY, BoardTable, board_id_for

log = get_logger("lintaid.board")

KEEP_DAYS: Final = 14.0  # LINTAID_BOARD_KEEP_DAYS
PRUNE_EVERY_S: Final = 3600.0
NOTE_BOARDS: Final = 5  # boards SessionStart's line names at most
SESSION_PREFIX: Final = "session:"
DEFAULT_TITLE: Final = "The project's board"
_KEY: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]*")
Submit = Callable[[Callable[[], Any]], "Future[Any]"]
Args = dict[str, Any]


def check_key(key: str) -> str:
    """A board key as given, or a ``BadRequest`` saying what is wrong with it."""
    key = key.strip()
    if key.lower() == DEFAULT_KEY:
        raise protocol.BadRequest(
            "'key': 'default' is the project's board; it always exists: post and read "
            "without board_id (or with board_id 'default')", arg="key")
    if key.lower().startswith(SESSION_PREFIX):
        raise protocol.BadRequest("'key': keys starting with 'session:' are reserved",
                                  arg="key")
    if not _KEY.fullmatch(key):
        raise protocol.BadRequest("'key' must start with a letter or digit and hold only "
                                  "letters, digits and . _ - / :", arg="key")
    if redact(key) != key:
        raise protocol.BadRequest("'key' looks like a secret; choose another", arg="key")
    return key


@dataclass
class _Wait:
    user_id: str
    board_id: str
    after: int
    limit: int
    deadline: float
    future: Future[Args]
    answer: Callable[[list[Args]], Args]


class Board:
    """The board service over the store's rows; ``wall``: the clock expiry reads."""

    def __init__(self, table: BoardTable, submit: Submit, stamp: Callable[[], float], *,
                 keep_days: float = KEEP_DAYS, wall: Callable[[], float] = time.time) -> None:
        self.table = table
        self.submit = submit
        self.stamp = stamp  # writer thread: the store's clock's next stamp
        self.keep_s = max(0.0, keep_days) * 86400.0
        self.wall = wall
        self._pruned_at = 0.0
        self._waits: list[_Wait] = []
        self._cond = threading.Condition()
        self._changed: set[str] = set()
        self._closed = False
        self._thread: threading.Thread | None = None
        self.listeners: list[Callable[[], None]] = []  # told after a post is committed
        # What sessions read that the writer has not committed yet: (user, board, session)
        # -> sequence, so a session's next answer already counts what it just read.
        self._reading: dict[tuple[str, str, str], int] = {}
        self._reading_lock = threading.Lock()

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="lintaid-board-watch",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Answer every waiting read now (with what there is), then stop the watcher."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(10)

    def since(self) -> float:
        """Posts made before this are expired: out of every answer."""
        return self.wall() - self.keep_s if self.keep_s else 0.0

    # -- which board -----------------------------------------------------------------------
    def _default(self, user: str) -> Args:
        found = self.table.board(user, board_id_for(user, DEFAULT_KEY), self.since())
        return found or {"board_id": board_id_for(user, DEFAULT_KEY), "key": DEFAULT_KEY,
                         "title": DEFAULT_TITLE, "created_at": None, "client": None,
                         "session_id": None, "last_sequence": 0, "posts": 0,
                         "last_post_at": None}

    def resolve(self, user: str, ref: str | None, session: str | None) -> Args:
        """The board ``ref`` names (an id or a key), else the session's, else the default."""
        since = self.since()
        if ref is None:
            chosen = self.table.session_board(user, session) if session else None
            found = self.table.board(user, chosen, since) if chosen else None
            return found or self._default(user)
        ref = ref.strip()
        if ref.lower() == DEFAULT_KEY:
            return self._default(user)
        found = self.table.board(user, ref, since) or self.table.board_by_key(user, ref, since)
        if found is None:
            raise protocol.NotFound(f"no board {ref!r} in this project: open it with "
                                    "board_open, or see board_list", arg="board_id")
        return found

    def _view(self, board: Args, user: str, session: str | None,
              joined: dict[str, int] | None = None, mine: str | None = None) -> Args:
        """A board as answered: the store's row, and this session's view of it."""
        out = dict(board)
        out["created_by_client"] = out.pop("client")
        out["created_by_session"] = out.pop("session_id")
        if session is not None:
            joined = self._joined(user, session) if joined is None else joined
            if mine is None:
                mine = self.table.session_board(user, session) or board_id_for(user,
                                                                               DEFAULT_KEY)
            read = joined.get(board["board_id"])
            out["joined"] = read is not None
            out["read_sequence"] = read or 0
            out["unread"] = max(0, int(board["last_sequence"]) - (read or 0)) \
                if read is not None else None
            out["session_board"] = board["board_id"] == mine
        else:
            out.update(joined=False, read_sequence=0, unread=None, session_board=False)
        return out

    # -- ops -------------------------------------------------------------------------------
    def open(self, user: str, key: str, title: str | None, client: str | None,
             session: str | None) -> Future[Args]:
        key = check_key(key)
        title = redact(" ".join((title or key).split()))[:200]
        session, client = _plain(session), _plain(client)

        def job() -> Args:
            at = self.stamp()
            if session:  # joined first: the row below is the one answered
                self.table.join(user, board_id_for(user, key), session, client, at,
                                default=True)
            board, created = self.table.open(user, key, title, at, client, session,
                                             self.since())
            return {"row": board, "created": created}

        def shape(result: Args) -> Args:
            return {**self._view(result["row"], user, session), "created": result["created"]}

        return _then(self.submit(job), shape)

    def boards(self, user: str, session: str | None) -> Args:
        since = self.since()
        boards = self.table.boards(user, since)
        if not any(b["key"] == DEFAULT_KEY for b in boards):
            boards.append(self._default(user))
        joined = self._joined(user, session) if session else None
        mine = (self.table.session_board(user, session) or board_id_for(user, DEFAULT_KEY)) \
            if session else None
        return {"boards": [self._view(b, user, session, joined, mine) for b in boards]}

    def info(self, user: str, ref: str | None, session: str | None) -> Args:
        return self._view(self.resolve(user, ref, session), user, session)

    def post(self, user: str, ref: str | None, content: str, request_id: str,
             author: str | None, client: str | None, session: str | None) -> Future[Args]:
        if redact(request_id) != request_id:
            raise protocol.BadRequest("'request_id' looks like a secret; choose another",
                                      arg="request_id")
        session, client = _plain(session), _plain(client)
        board = self.resolve(user, ref, session)
        board_id, key = board["board_id"], board["key"]
        text = redact(content)
        who = redact(" ".join(author.split()))[:100] if author and author.strip() else client

        def job() -> Args:
            before = self.table.by_request(user, request_id)
            if before is not None:
                if before["board_id"] != board_id or before["content"] != text:
                    raise protocol.BadRequest(
                        f"request_id {request_id!r} was used for another post "
                        f"({before['post_id']} on board {before['board_key']!r}); use a new "
                        "request_id for a new post", arg="request_id")
                return {**before, "event": "NONE"}
            at = self.stamp()
            self._prune(at)
            if key == DEFAULT_KEY:
                self.table.open(user, DEFAULT_KEY, DEFAULT_TITLE, at, client, session)
            post = self.table.post(user, board_id, text, request_id, who, client, session, at)
            if session:  # a poster joins the board, and has read what it wrote
                self.table.join(user, board_id, session, client, at, default=False)
                self.table.mark_read(user, board_id, session, post["sequence"], at)
            return {**post, "event": "ADD"}

        def committed(result: Args) -> Args:
            if result["event"] == "ADD":
                self._notify(board_id)
            return result

        return _then(self.submit(job), committed)

    def read(self, user: str, ref: str | None, after: int, limit: int, wait: int,
             session: str | None, client: str | None) -> Args | Future[Args]:
        session, client = _plain(session), _plain(client)
        board = self.resolve(user, ref, session)
        board_id = board["board_id"]

        def answer(posts: list[Args]) -> Args:
            last = posts[-1]["sequence"] if posts else after
            if session and posts:
                self._mark_read(user, board_id, session, client, int(last))
            return {"board_id": board_id, "key": board["key"], "posts": posts,
                    "last_sequence": int(last),
                    "more": len(posts) == limit}

        posts = self.table.read(user, board_id, after, limit, self.since())
        if posts or wait <= 0:
            return answer(posts)
        pending = _Wait(user, board_id, after, limit, time.monotonic() + wait, Future(), answer)
        with self._cond:
            if self._closed:
                return answer(posts)
            self._waits.append(pending)
            self._changed.add(board_id)  # look once more: a post may have landed meanwhile
            self._cond.notify_all()
        return pending.future

    def get(self, user: str, post_id: str, ref: str | None) -> Args:
        post = self.table.get(user, post_id, self.since())
        if post is None:
            raise protocol.NotFound(f"no post {post_id!r} (expired posts are gone)",
                                    arg="post_id")
        if ref is not None and ref.strip() not in (post["board_id"], post["board_key"]):
            raise protocol.NotFound(f"post {post_id!r} is not on board {ref!r}",
                                    arg="post_id")
        return post

    def search(self, user: str, query: str, ref: str | None, top_k: int) -> Args:
        board_id = self.resolve(user, ref, None)["board_id"] if ref is not None else None
        return {"posts": self.table.search(user, query, board_id, top_k, self.since())}

    def unread(self, user: str, session: str) -> list[Args]:
        """The boards ``session`` joined with posts by others it has not read."""
        return self.table.unread(user, session, self.since())

    def note(self, session: str, user: str = LOCAL_USER) -> str | None:
        """SessionStart's one line: unread posts on the boards ``session`` joined, or None."""
        boards = self.unread(user, session)
        if not boards:
            return None
        total = sum(int(b["unread"]) for b in boards)
        named = ", ".join(f"{b['key']} ({b['unread']})" for b in boards[:NOTE_BOARDS])
        more = f" and {len(boards) - NOTE_BOARDS} more" if len(boards) > NOTE_BOARDS else ""
        return (f"Bulletin board: {total} unread post(s) on {named}{more}; catch up with "
                "board_read (board_id, after_sequence) before you go on.")

    # -- inside ----------------------------------------------------------------------------
    def _prune(self, at: float) -> None:
        """Writer thread: delete expired posts, at most once an hour."""
        if not self.keep_s or at - self._pruned_at < PRUNE_EVERY_S:
            return
        self._pruned_at = at
        dropped = self.table.prune(self.wall() - self.keep_s)
        if dropped:
            log.info("board_posts_expired", posts=dropped)

    def prune_now(self) -> Future[int]:
        """Delete expired posts now (at start, and for tests)."""
        def job() -> int:
            return self.table.prune(self.wall() - self.keep_s) if self.keep_s else 0
        return self.submit(job)

    def _joined(self, user: str, session: str) -> dict[str, int]:
        """The boards ``session`` joined -> the last sequence it read, counting reads the
        writer has not committed yet."""
        joined = self.table.memberships(user, session)
        with self._reading_lock:
            for (who, board_id, sid), sequence in self._reading.items():
                if who == user and sid == session:
                    joined[board_id] = max(joined.get(board_id, 0), sequence)
        return joined

    def _mark_read(self, user: str, board_id: str, session: str, client: str | None,
                   sequence: int) -> None:
        """Record, off the reply's path, that the session read up to ``sequence``."""
        key = (user, board_id, session)
        with self._reading_lock:
            self._reading[key] = max(self._reading.get(key, 0), sequence)

        def job() -> None:
            at = self.stamp()
            self.table.join(user, board_id, session, client, at, default=False)
            self.table.mark_read(user, board_id, session, sequence, at)

        def committed(_future: Future[None]) -> None:
            with self._reading_lock:
                if self._reading.get(key, 0) <= sequence:
                    self._reading.pop(key, None)

        try:
            self.submit(job).add_done_callback(committed)
        except Exception as err:  # bookkeeping only: the read itself succeeded
            log.warning("board_mark_read_failed", error=str(err))
            committed(Future())

    def _notify(self, board_id: str) -> None:
        with self._cond:
            self._changed.add(board_id)
            self._cond.notify_all()
        for listener in self.listeners:
            try:
                listener()
            except Exception as err:
                log.warning("board_listener_failed", error=str(err))

    def _watch(self) -> None:
        """Answer waiting reads when their board gets a post or their deadline passes."""
        while True:
            with self._cond:
                while not (self._closed or self._changed or self._due()):
                    nearest = min((w.deadline for w in self._waits), default=None)
                    self._cond.wait(None if nearest is None else
                                    max(0.0, nearest - time.monotonic()))
                changed, self._changed = self._changed, set()
                now = time.monotonic()
                ready = [w for w in self._waits if self._closed or w.board_id in changed
                         or w.deadline <= now]
                self._waits = [w for w in self._waits if w not in ready]
                closed = self._closed
            for w in ready:
                try:
                    posts = self.table.read(w.user_id, w.board_id, w.after, w.limit,
                                            self.since())
                    if posts or w.deadline <= time.monotonic() or closed:
                        w.future.set_result(w.answer(posts))
                    else:
                        with self._cond:
                            self._waits.append(w)
                except Exception as err:
                    w.future.set_exception(err)
            if closed:
                return

    def _due(self) -> bool:
        now = time.monotonic()
        return any(w.deadline <= now for w in self._waits)


def _plain(name: str | None) -> str | None:
    """A session id or client name as stored: redacted (an agent's id is not ours to trust),
    None when blank."""
    return redact(name.strip()) if name and name.strip() else None


def _then(future: Future[Args], fn: Callable[[Args], Args]) -> Future[Args]:
    return then(future, fn)
