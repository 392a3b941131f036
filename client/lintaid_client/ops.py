"""Every op, declared once: its arguments, their types, defaults and limits.

The daemon validates each request with ``validate``; the Python client checks arguments with
the same call before sending; the CLI builds its options and the MCP shim its tool schemas
from these declarations. Unknown arguments are refused everywhere.

Standard library only.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .models import ALL_KINDS, DECISIONS, FORGOTTEN, KINDS, STATUSES
from .protocol import MAX_DEPTH, TOO_LARGE, BadRequest

READ: Final = "read"
WRITE: Final = "write"
CONTROL: Final = "control"

STR: Final = "str"
TEXT: Final = "text"
INT: Final = "int"
BOOL: Final = "bool"
TIME: Final = "time"
CHOICE: Final = "choice"
MAP: Final = "map"
LIST: Final = "list"
DURATION: Final = "duration"

MIN_TIME: Final = 0.0
MAX_TIME: Final = 253402300799.0  # 9999-12-31T23:59:59Z
MAX_CONTENT_BYTES: Final = 256 * 1024
MAX_QUERY_BYTES: Final = 64 * 1024
MAX_ID_BYTES: Final = 200
MAX_META_BYTES: Final = 64 * 1024
MAX_META_DEPTH: Final = 8
MAX_BATCH: Final = 1000
MAX_TOP_K: Final = 100
MAX_LIST: Final = 1000
MAX_PATH_BYTES: Final = 4096
BACKUPS_KEPT: Final = 5  # LINTAID_BACKUP_KEEP
BACKUPS_MAX_MB: Final = 256  # LINTAID_BACKUP_MAX_MB: the rolling backups' total, per project
MAX_LINT: Final = 5000  # rows of a lint report: well within a message's 8 MiB
STORES: Final = ("memory", "workspace", "all")
KIND_CHOICES: Final = (*KINDS, ALL_KINDS)
LISTED_STATUSES: Final = tuple(s for s in STATUSES if s != FORGOTTEN)
AUDIT_ORDERS: Final = ("oldest", "newest")
"""The statuses a list may filter by (a forgotten record is never listed)."""
TIME_HELP: Final = "ISO 8601, UTC unless it names a zone, or epoch seconds"
MAX_DURATION_S: Final = 366 * 86400
DURATION_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True)
class Arg:
    """One argument of an op.

    ``cli``: how the CLI offers it: ``""`` an option named after the argument
    (``top_k`` -> ``--top-k``), ``"--name"`` an option so named, ``"ARG"`` the positional
    argument, ``None`` not at all. ``mcp``: whether agents see it in the MCP tool.
    """

    name: str
    type: str
    help: str = ""
    required: bool = False
    default: Any = None
    lo: int | None = None
    hi: int | None = None
    max_bytes: int | None = None
    choices: tuple[str, ...] = ()
    cli: str | None = ""
    mcp: bool = True
    face: bool = False  # the face in the daemon (viewer, HTTP API) names itself here if unset

    @property
    def option(self) -> str | None:
        """The CLI spelling a person types (for messages), or None when the CLI lacks it."""
        if self.cli is None:
            return None
        if self.cli == "ARG":
            return self.name.upper()
        return self.cli or "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Op:
    name: str
    kind: str  # read | write | control
    help: str
    args: tuple[Arg, ...] = ()
    tool: str | None = None  # the MCP tool's name when agents may call it
    one_of: tuple[tuple[str, ...], ...] = field(default=())  # exactly one of each group
    waits_for_index: bool = False
    """A read that first waits until the write the request's ``after`` token names (without
    one: every committed write) is searchable: only the index lags behind a commit."""

    def arg(self, name: str) -> Arg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)


# -- shared arguments ------------------------------------------------------------------------
USER = Arg("user_id", STR, "user id (default: the local user)", cli="--user", mcp=False,
           max_bytes=MAX_ID_BYTES)
DEFAULT_ACTOR: Final = "api"
"""Who the audit log names for a change whose request names nobody and whose face stamps
nobody (a socket client that set no actor). Not the argument's default: a client that
validates its arguments and sends them (the MCP shim) would send it as its own name."""
ACTOR = Arg("actor", STR, "who asks, for the audit log", cli=None, mcp=False,
            max_bytes=MAX_ID_BYTES, face=True)
SOURCE = Arg("source", STR, "where the memory comes from", cli=None, mcp=False,
             max_bytes=MAX_ID_BYTES)
ID = Arg("id", STR, "a memory id (from search or list)", required=True, cli="ARG",
         max_bytes=MAX_ID_BYTES)
METADATA = Arg("metadata", MAP, "extra fields kept with the memory (secrets are redacted)",
               mcp=False)
CLIENT = Arg("client", STR, "only memories captured by this agent client (its name as in "
             "`lintaid install NAME`)", max_bytes=64)


MAX_POST_BYTES: Final = 16 * 1024  # a status note, not a document
MAX_BOARD_KEY_BYTES: Final = 100
MAX_BOARD_READ: Final = 100
MAX_BOARD_SEARCH: Final = 50
MAX_BOARD_WAIT_S: Final = 30
BOARD = Arg("board_id", STR, "the board: its id or its key (default: this session's board, "
            "the last one it opened, else the project's 'default' board)",
            max_bytes=MAX_ID_BYTES, cli="--board")
BOARD_SESSION = Arg("session_id", STR, "your agent session's id, if you know it (default: "
                    "this MCP connection's own)", cli="--session", max_bytes=MAX_ID_BYTES)
BOARD_CLIENT = Arg("client", STR, "the agent client that calls (the MCP shim sets it)",
                   cli=None, mcp=False, max_bytes=64, face=True)


def _add_item_args() -> tuple[Arg, ...]:
    return (
        Arg("content", TEXT, "the fact or decision to remember, self-contained (it will be "
            "read without this conversation)", max_bytes=MAX_CONTENT_BYTES, cli="ARG"),
        METADATA,
        Arg("supersedes", STR, "id of a memory this one replaces (that one is retired)",
            max_bytes=MAX_ID_BYTES),
        Arg("expires_at", TIME, f"when it stops being true ({TIME_HELP})"),
        Arg("valid_at", TIME, "when it became true, if not now", mcp=False),
        Arg("created_at", TIME, "when it was learned, for imports", cli=None, mcp=False),
        Arg("session_id", STR, "the agent session it belongs to", cli=None, mcp=False,
            max_bytes=MAX_ID_BYTES),
        Arg("private", BOOL, "keep it on this machine: never shared with a team",
            default=False, mcp=False),
    )


ITEM_ARGS: Final = _add_item_args()

OPS: Final[dict[str, Op]] = {op.name: op for op in (
    Op("ping", CONTROL, "Check that the daemon answers."),
    Op("status", READ, "The daemon's state: pid, uptime, counts, queues, versions.",
       tool="memory_status"),
    Op("shutdown", CONTROL, "Stop the daemon after answering what is in flight."),
    Op("hook", WRITE, "Hand one agent hook event to the daemon.", (
        Arg("provider", STR, "the agent client", required=True, max_bytes=64),
        Arg("event", STR, "the hook event name", required=True, max_bytes=128),
        Arg("payload", MAP, "the event as the agent sent it", required=True),
    )),
    Op("add", WRITE, "Store a memory for this project. To replace an older one, pass its id "
       "as supersedes rather than adding a contradicting memory.", (
        *ITEM_ARGS,
        Arg("items", LIST, "up to 1,000 memories to add in one transaction, each a map of "
            "the arguments above",
            cli=None, mcp=False, lo=1, hi=MAX_BATCH),
        USER, SOURCE, ACTOR,
    ), tool="add_memory", one_of=(("content", "items"),)),
    Op("search", READ, "Search project memory and project files. Superseded, expired and "
       "forgotten records are left out before ranking ('hidden' counts them); every hit "
       "carries its status: trust current, check conflicted and partly_superseded.", (
        Arg("query", TEXT, "what to look for, in plain words", required=True,
            max_bytes=MAX_QUERY_BYTES, cli="ARG"),
        Arg("top_k", INT, "how many hits", default=5, lo=1, hi=MAX_TOP_K, cli="--top-k"),
        Arg("history", BOOL, "also return retired (superseded, expired) records, marked "
            "historical",
            default=False),
        Arg("as_of", TIME, f"what the store believed at that time: only what it had "
            f"learned by then ({TIME_HELP})"),
        Arg("valid_at", TIME, f"what was true in the project at that time, whenever the store "
            f"learned it: memory records only ({TIME_HELP})"),
        Arg("store", CHOICE, "memory records, project files, or both", default="all",
            choices=STORES),
        CLIENT,
        Arg("kind", CHOICE, "only memory records of this kind (project files are left out); "
            "prompts are searched only when asked for: 'prompt', or 'all' for every kind",
            choices=KIND_CHOICES),
        Arg("passages", BOOL, "mark each hit's statements that match the query",
            default=False, cli=None, mcp=False),
        USER,
    ), tool="search", waits_for_index=True),
    Op("get", READ, "One memory in full: text, status, claims, relations and provenance.",
       (ID, USER), tool="get_memory"),
    Op("list", READ, "The newest memories that are still believed (not superseded, "
       "expired or forgotten).", (
        Arg("limit", INT, "how many, newest first", default=20, lo=1, hi=MAX_LIST),
        Arg("offset", INT, "skip this many", default=0, lo=0, hi=10**9, mcp=False),
        Arg("include_hidden", BOOL, "include superseded and expired ones", default=False,
            mcp=False),
        CLIENT,
        Arg("kind", CHOICE, "only records of this kind; prompts are listed only when asked "
            "for: 'prompt', or 'all' for every kind", choices=KIND_CHOICES),
        Arg("status", CHOICE, "only records with this status (superseded and expired ones "
            "included when asked for)", choices=LISTED_STATUSES, mcp=False),
        Arg("branch", STR, "only records captured on this git branch", max_bytes=256,
            mcp=False),
        Arg("session_id", STR, "only records of this agent session", cli="--session",
            max_bytes=MAX_ID_BYTES, mcp=False),
        Arg("since", TIME, f"only records created at or after this time ({TIME_HELP})",
            mcp=False),
        Arg("until", TIME, f"only records created before this time ({TIME_HELP})", mcp=False),
        USER,
    ), tool="list_memories"),
    Op("update", WRITE, "Replace a memory's text (its claims are derived again).", (
        ID, Arg("content", TEXT, "the new text", required=True, max_bytes=MAX_CONTENT_BYTES,
                cli="--text"),
        METADATA, USER, ACTOR,
    )),
    Op("forget", WRITE, "Forget a memory that should never have been kept: it is hidden "
       "everywhere, and the same text captured again stays forgotten. When a fact merely "
       "changed, supersede it instead.", (
        ID, Arg("reason", STR, "why; kept in the audit log", max_bytes=2000), USER, ACTOR,
    ), tool="forget_memory"),
    Op("supersede", WRITE, "Retire a memory that is no longer true, in favour of new text "
       "or of another existing memory. The old one stays in history but is no longer "
       "current.", (
        Arg("old_id", STR, "the memory that is no longer true", required=True, cli="ARG",
            max_bytes=MAX_ID_BYTES),
        Arg("new_id", STR, "an existing memory that replaces it", cli="--by",
            max_bytes=MAX_ID_BYTES),
        Arg("content", TEXT, "the text that replaces it", cli="--text",
            max_bytes=MAX_CONTENT_BYTES),
        METADATA, USER, SOURCE, ACTOR,
    ), tool="supersede_memory", one_of=(("new_id", "content"),)),
    Op("expire", WRITE, "Mark a memory as no longer true from a time (default: now).", (
        ID, Arg("at", TIME, f"when it stopped being true ({TIME_HELP})"),
        USER, ACTOR,
    )),
    Op("history", READ, "The audit trail of one memory, oldest first.", (ID, USER),
       tool="memory_history"),
    Op("confirm", WRITE, "Confirm that a memory is still true: it counts as a confirmation "
       "and its staleness is measured from now. (Stating the same thing again confirms it "
       "too.)", (ID, USER, ACTOR), tool="confirm_memory"),
    Op("lint", READ, "Judge every memory a search may show for staleness (memlint-style): "
       "category, age, score, level (fresh, aging, stale, expired) and action (use, verify, "
       "flag, discard).", (
        Arg("only_flagged", BOOL, "list only stale and expired memories (counts stay "
            "complete)", default=False),
        Arg("limit", INT, "list at most this many, most likely out of date first (counts "
            "stay complete)", default=1000, lo=1, hi=MAX_LINT),
        Arg("at", TIME, f"judge as of this time instead of now ({TIME_HELP})"),
        USER,
    )),
    Op("lint_docs", READ, "Lint the project's Markdown and reStructuredText documents as "
       "the workspace index holds them: broken links and anchors, orphan pages, missing "
       "cross-references, terminology drift, statements a current decision superseded, and "
       "decision records still marked accepted after they were replaced. Settings from "
       "[tool.lintaid.lint] in pyproject.toml.", (
        Arg("limit", INT, "list at most this many findings (counts stay complete)",
            default=MAX_LINT, lo=1, hi=MAX_LINT),
        USER,
    )),
    Op("review", READ, "The review queue: inferred supersessions too weak to hide the older "
       "memory, and conflicts, waiting for a person to accept or reject them; newest first, "
       "each with both statements, the relation, its confidence and evidence.", (
        Arg("limit", INT, "how many, newest first", default=50, lo=1, hi=MAX_LIST),
        USER,
    ), tool="review_queue"),
    Op("decide", WRITE, "Settle one review item: accept (the newer statement wins: its "
       "memory explicitly supersedes the older one's) or reject (the two statements are "
       "never related again; both stand).", (
        Arg("id", STR, "a review item id (from the review queue)", required=True, cli="ARG",
            max_bytes=MAX_ID_BYTES),
        Arg("decision", CHOICE, "accept or reject", required=True, choices=DECISIONS,
            cli=None),
        Arg("reason", STR, "why; kept in the audit log", max_bytes=2000),
        USER, ACTOR,
    ), tool="review_decide"),
    Op("restore", WRITE, "Bring a forgotten memory back: it is searched and injected again, "
       "and its text may be captured again.", (
        ID, Arg("reason", STR, "why; kept in the audit log", max_bytes=2000), USER, ACTOR,
    )),
    Op("audit", READ, "Every change made to memories, in the order made (or newest first): "
       "who (actor), when, the operation, the memory, and the content's hashes before and "
       "after.", (
        Arg("id", STR, "only changes to this memory", cli="--id", max_bytes=MAX_ID_BYTES),
        Arg("since", TIME, f"only changes made at or after this time ({TIME_HELP})"),
        Arg("actor", STR, "only changes made by this actor (cli, api, mcp, viewer, import, "
            "or a hook's client)", max_bytes=MAX_ID_BYTES),
        Arg("order", CHOICE, "oldest first (the order made) or newest first",
            default="oldest", choices=AUDIT_ORDERS),
        Arg("after", INT, "read on after this change's id, in the order asked (the previous "
            "page's 'next')", default=0, lo=0, hi=2**62, cli=None),
        Arg("limit", INT, "how many", default=1000, lo=1, hi=MAX_LINT),
        USER,
    )),
    Op("stats", READ, "What memory did: how many injections, which memories, how many "
       "bytes and estimated tokens, and how often the agent's next reply or tool calls used "
       "what was injected; in total and per day, agent client and session.", (
        Arg("since", TIME, f"only injections at or after this time ({TIME_HELP})"),
        Arg("client", STR, "only injections into this agent client", max_bytes=64),
        Arg("session_id", STR, "only injections into this agent session", cli="--session",
            max_bytes=MAX_ID_BYTES),
        Arg("limit", INT, "groups of each kind (days, clients, sessions), newest first",
            default=14, lo=1, hi=MAX_LIST),
        Arg("recent", INT, "also this many of the newest injections themselves", default=0,
            lo=0, hi=MAX_LIST),
    )),
    Op("export", READ, "One page of the memory export: records with their claims and "
       "relations, then links, review decisions, confirmations, tombstones and (asked for) "
       "the audit log; 'next' names the following page.", (
        Arg("after", STR, "where the previous page ended (its 'next')", max_bytes=200,
            cli=None),
        Arg("limit", INT, "rows per page", default=500, lo=1, hi=MAX_BATCH, cli=None),
        Arg("include_history", BOOL, "also the audit log (content of forgotten memories "
            "left out)", default=False),
        Arg("include_prompts", BOOL, "also the stored prompts (left out by default)",
            default=False),
        Arg("include_paths", BOOL, "also local paths: working folders, transcript paths, "
            "paths outside the project (left out by default)", default=False),
        USER,
    )),
    Op("import", WRITE, "Import rows of an export (lintaid's, read by `lintaid import`): "
       "idempotent, each row audited as an import, explicit times kept.", (
        Arg("items", LIST, "up to 1,000 rows, each a map with its 'type'", required=True,
            lo=1, hi=MAX_BATCH, cli=None, mcp=False),
        USER, ACTOR,
    )),
    Op("reindex", WRITE, "Bring the workspace index in step with the files.", (
        Arg("full", BOOL, "re-read every file, not only changed ones", default=False),
    )),
    Op("backup", READ, "Write a consistent copy of memory.db while the daemon runs (SQLite's "
       "online backup), checked before it is kept.", (
        Arg("to", STR, "the file to write, an absolute path (default: the next rolling "
            f"backup in .lint-ai/backups/; by default the newest {BACKUPS_KEPT} are kept, "
            f"at most {BACKUPS_MAX_MB} MiB together)",
            max_bytes=MAX_PATH_BYTES, cli="--to"),
    )),
    Op("pause", WRITE, "Pause capture and injection: hooks still answer at once, with "
       "nothing. Held by the daemon (a restart keeps it) until it runs out or resume.", (
        Arg("duration", DURATION, "how long (90s, 30m, 2h, 1d, 1h30m); default: until "
            "resumed", cli="--for"),
        Arg("session_id", STR, "pause only this agent session", cli="--session",
            max_bytes=MAX_ID_BYTES),
    )),
    Op("resume", WRITE, "Resume capture and injection: everywhere, or for one session.", (
        Arg("session_id", STR, "resume only this agent session", cli="--session",
            max_bytes=MAX_ID_BYTES),
    )),
    Op("team_join", WRITE, "Join a team: share this project's memory with every clone of "
       "its repository through a PostgreSQL server (prompts and private records stay here).", (
        Arg("dsn", STR, "the server, postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE; a "
            "password is moved to the system keyring or a pgpass file, never kept in .lint-ai/",
            required=True, cli="ARG", max_bytes=MAX_PATH_BYTES),
        Arg("name", STR, "the team's name (one server may hold several teams)",
            default="default", max_bytes=64),
        Arg("member", STR, "check that the server knows the address as this member (a "
            "member is the role it connects as)", max_bytes=MAX_ID_BYTES),
        Arg("repo_key", STR, "what tells the repository in every clone (default: its root "
            "commit; 'remote' for origin's URL; any other text as given)", cli="--repo-key",
            max_bytes=500),
    )),
    Op("team_add_member", WRITE, "Create a team member's own role on the team server (run "
       "by the team's administrator, whose role has CREATEROLE) and give back the address "
       "that member joins with; asked again, it sets a new password.", (
        Arg("name", STR, "the member's name: the role it connects as, written by the server "
            "into every row it pushes", required=True, cli="ARG", max_bytes=63),
        Arg("dsn", STR, "the administrator's address (default: the one this project joined "
            "with)", max_bytes=MAX_PATH_BYTES),
    )),
    Op("team_leave", WRITE, "Leave the team: nothing more is shared or pulled; what was not "
       "delivered yet is dropped, what was pulled stays."),
    Op("team_status", READ, "The team tier: connection, lag each way, outbox, last error."),
    Op("team_private", WRITE, "Keep what one agent client captures on this machine (or, with "
       "share, share it again).", (
        Arg("client", STR, "the agent client, as in `lintaid install NAME`", required=True,
            cli="ARG", max_bytes=64),
        Arg("share", BOOL, "share this client's captures again", default=False),
    )),
    Op("board_open", WRITE, "Open (or create) a bulletin board by key, join it, and make it "
       "this session's board: posts and reads without board_id go there. Boards hold short "
       "status notes for agents working side by side (not memory: never searched as memory, "
       "never injected).", (
        Arg("key", STR, "the board's key, chosen by you: letters, digits and . _ - / : "
            "('default' is the project's board; 'session:' is reserved)", required=True,
            cli="ARG", max_bytes=MAX_BOARD_KEY_BYTES),
        Arg("title", STR, "what the board is for (kept from its creation)", max_bytes=200),
        BOARD_SESSION, BOARD_CLIENT, USER,
    ), tool="board_open"),
    Op("board_list", READ, "The project's bulletin boards, newest activity first: key, "
       "title, posts, last sequence, and for this session whether it joined, how many posts "
       "it has not read, and which is its board.", (BOARD_SESSION, BOARD_CLIENT, USER),
       tool="board_list"),
    Op("board_info", READ, "One bulletin board: key, title, creator, posts, last sequence.", (
        BOARD, BOARD_SESSION, BOARD_CLIENT, USER,
    ), tool="board_info"),
    Op("board_post", WRITE, "Post a short status note to a bulletin board (secrets are "
       "redacted). Retry-safe: the same request_id posts once.", (
        Arg("content", TEXT, "the note, self-contained (who is doing what, what to avoid, "
            "what was found)", required=True, max_bytes=MAX_POST_BYTES, cli="ARG"),
        Arg("request_id", STR, "your id for this post: a retry with the same id posts "
            "nothing new and returns the first post", required=True, max_bytes=MAX_ID_BYTES,
            cli=None),
        BOARD,
        Arg("author", STR, "who posts, e.g. 'parent' or 'subagent tests' (default: the "
            "agent client)", max_bytes=100),
        BOARD_SESSION, BOARD_CLIENT, USER,
    ), tool="board_post"),
    Op("board_read", READ, "Read a bulletin board's posts in order, after a sequence (pass "
       "the last sequence you saw to catch up); optionally wait for new ones.", (
        BOARD,
        Arg("after_sequence", INT, "only posts after this sequence", default=0, lo=0,
            hi=2**62, cli="--after"),
        Arg("limit", INT, "how many, oldest first", default=20, lo=1, hi=MAX_BOARD_READ),
        Arg("wait", INT, "when nothing is newer, wait up to this many seconds for a post",
            default=0, lo=0, hi=MAX_BOARD_WAIT_S),
        BOARD_SESSION, BOARD_CLIENT, USER,
    ), tool="board_read"),
    Op("board_get", READ, "One bulletin board post by id.", (
        Arg("post_id", STR, "the post's id", required=True, cli="ARG", max_bytes=MAX_ID_BYTES),
        BOARD, USER,
    ), tool="board_get"),
    Op("board_search", READ, "Search bulletin board posts (one board, or all of this "
       "project's), best match first.", (
        Arg("query", TEXT, "words to look for", required=True, max_bytes=MAX_QUERY_BYTES,
            cli="ARG"),
        Arg("board_id", STR, "only this board: its id or key (default: every board)",
            max_bytes=MAX_ID_BYTES, cli="--board"),
        Arg("top_k", INT, "how many posts", default=10, lo=1, hi=MAX_BOARD_SEARCH,
            cli="--top-k"),
        USER,
    ), tool="board_search"),
    Op("ui", WRITE, "Start the daemon's web viewer on the loopback address, or find the "
       "one running: its URL, which holds this daemon's token.", (
        Arg("port", INT, "the loopback port to listen on (default: a free one)", lo=1,
            hi=65535),
    )),
    Op("http", WRITE, "Start the daemon's HTTP API on the loopback address (the viewer's "
       "server: one port serves both), or find the one running: its URL, the OpenAPI "
       "document's, and the file holding the bearer token.", (
        Arg("port", INT, "the loopback port to listen on (default: a free one)", lo=1,
            hi=65535),
    )),
)}


# -- validation ------------------------------------------------------------------------------
def _bad(arg: Arg, message: str, code: str | None = None) -> BadRequest:
    return BadRequest(f"'{arg.name}' {message}", code, arg=arg.name)


def parse_time(value: Any, name: str = "time") -> float:
    """Epoch seconds from a number or an ISO 8601 string; finite and within year 1970-9999.

    A date without a zone is read as UTC, so the same text means the same instant everywhere.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{name} must be epoch seconds or an ISO 8601 date/time")
    if isinstance(value, str):
        text = value.strip()
        try:
            seconds = float(text)
        except ValueError:
            iso = text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text
            try:
                when = _dt.datetime.fromisoformat(iso)
            except ValueError:
                raise ValueError(f"{name} {value!r} is neither epoch seconds nor an ISO 8601 "
                                 "date/time") from None
            if when.tzinfo is None:
                when = when.replace(tzinfo=_dt.timezone.utc)
            seconds = when.timestamp()
    else:
        seconds = float(value)
    if not math.isfinite(seconds) or not MIN_TIME <= seconds <= MAX_TIME:
        raise ValueError(f"{name} must be a time between 1970 and 9999")
    return seconds


def parse_duration(value: Any, name: str = "duration") -> float:
    """Seconds from ``90s``, ``30m``, ``2h``, ``1d``, ``1w`` or a sum of them (``1h30m``);
    a bare number is seconds. Between one second and a year."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"'{name}' must be a length of time such as 30m, 2h or 1d")
    if isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        if _NUMBER.fullmatch(text):
            seconds = float(text)
        elif _DURATION.fullmatch(text):
            seconds = sum(float(n) * DURATION_UNITS[u] for n, u in _PART.findall(text))
        else:
            raise ValueError(f"'{name}' must be a length of time such as 90s, 30m, 2h, 1d "
                             f"or 1h30m, not {value!r}")
    else:
        seconds = float(value)
    if not math.isfinite(seconds) or not 1 <= seconds <= MAX_DURATION_S:
        raise ValueError(f"'{name}' must be between 1 second and "
                         f"{MAX_DURATION_S // 86400} days")
    return seconds


_NUMBER: Final = re.compile(r"\d+(?:\.\d+)?")
_PART: Final = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
_DURATION: Final = re.compile(r"(?:\d+(?:\.\d+)?[smhdw])+")


def _check_utf8(arg: Arg, text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise _bad(arg, "is not valid UTF-8 text (it holds a lone surrogate)") from None


def _check_map(arg: Arg, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(arg, "must be a map")
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_META_DEPTH:
            raise _bad(arg, f"nests deeper than {MAX_META_DEPTH} levels")
        if isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise _bad(arg, "must have string keys")
                _check_utf8(arg, key)
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str):
            _check_utf8(arg, item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise _bad(arg, "must not hold NaN or infinity")
        elif not (item is None or isinstance(item, (bool, int, float))):
            raise _bad(arg, "must hold only strings, numbers, booleans, lists and maps")
    return dict(value)


def check(arg: Arg, value: Any) -> Any:
    """One argument's value, checked and normalised; raise BadRequest naming the argument."""
    kind = arg.type
    if kind in (STR, TEXT, CHOICE):
        if not isinstance(value, str):
            raise _bad(arg, "must be a string")
        data = _check_utf8(arg, value)
        if arg.max_bytes is not None and len(data) > arg.max_bytes:
            raise _bad(arg, f"is larger than {arg.max_bytes} bytes",
                       TOO_LARGE if kind == TEXT else None)
        if (arg.required or kind == TEXT) and not value.strip():  # blank text says nothing
            raise _bad(arg, "must not be empty")
        if kind == CHOICE and value not in arg.choices:
            raise _bad(arg, f"must be one of {', '.join(arg.choices)}")
        return value
    if kind == INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(arg, "must be an integer")
        if (arg.lo is not None and value < arg.lo) or (arg.hi is not None and value > arg.hi):
            raise _bad(arg, f"must be between {arg.lo} and {arg.hi}")
        return value
    if kind == BOOL:
        if not isinstance(value, bool):
            raise _bad(arg, "must be true or false")
        return value
    if kind == TIME:
        try:
            return parse_time(value, arg.name)
        except ValueError as err:
            raise BadRequest(str(err), arg=arg.name) from None
    if kind == DURATION:
        try:
            return parse_duration(value, arg.name)
        except ValueError as err:
            raise BadRequest(str(err), arg=arg.name) from None
    if kind == MAP:
        return _check_map(arg, value)
    if kind == LIST:
        if not isinstance(value, list):
            raise _bad(arg, "must be a list")
        if (arg.lo is not None and len(value) < arg.lo) or (
                arg.hi is not None and len(value) > arg.hi):
            raise _bad(arg, f"must hold between {arg.lo} and {arg.hi} entries")
        return value
    raise AssertionError(f"unknown argument type {kind!r}")


def validate(op: Op | str, args: Mapping[str, Any] | None) -> dict[str, Any]:
    """The request's arguments checked against the declaration, defaults filled in.

    ``None`` means absent. Unknown arguments are refused (a misspelled one would otherwise
    be ignored silently), as is a missing required one or a broken ``one_of`` group.
    """
    spec = OPS[op] if isinstance(op, str) else op
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise BadRequest("'args' must be a map")
    _refuse_unknown(spec.name, args, [a.name for a in spec.args])
    out: dict[str, Any] = {}
    for arg in spec.args:
        value = args.get(arg.name)
        if value is None:
            if arg.required:
                raise _bad(arg, "is required")
            out[arg.name] = arg.default
            continue
        out[arg.name] = check(arg, value)
    for group in spec.one_of:
        given = [name for name in group if out.get(name) is not None]
        if len(given) != 1:
            names = " or ".join(f"'{n}'" for n in group)
            raise BadRequest(f"{spec.name}: give exactly one of {names}", arg=group[0])
    return out


def stamp(spec: Op, args: Mapping[str, Any], face: str) -> dict[str, Any]:
    """``args`` with ``face`` (``"viewer"``, ``"http"``) in each argument the op declares a
    face fills (``Arg.face``: who acts, a board post's client) that the request left unset."""
    out = dict(args)
    for arg in spec.args:
        if arg.face and out.get(arg.name) is None:
            out[arg.name] = face
    return out


def _refuse_unknown(name: str, args: Mapping[str, Any], known: list[str]) -> None:
    unknown = sorted(str(k) for k in args if k not in known)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise BadRequest(f"{name}: unknown argument(s) {', '.join(map(repr, unknown))}; "
                         f"it takes: {allowed}", arg=unknown[0])


def validate_tool(spec: Op, args: Mapping[str, Any] | None) -> dict[str, Any]:
    """A tool call's arguments, checked as ``validate`` checks a request, except that only
    the op's ``mcp`` arguments exist: an agent cannot set what its tool does not show.

    A ``one_of`` group with a single visible member makes that member required.
    """
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise BadRequest("the arguments must be an object")
    _refuse_unknown(spec.tool or spec.name, args, [a.name for a in spec.args if a.mcp])
    for name in _required_for_tool(spec):
        if args.get(name) is None:
            raise _bad(spec.arg(name), "is required")
    return validate(spec, args)


def _required_for_tool(spec: Op) -> list[str]:
    """The tool's required arguments: the required ones, and a ``one_of`` group's only
    visible member."""
    required = [a.name for a in spec.args if a.mcp and a.required]
    for group in spec.one_of:
        visible = [name for name in group if spec.arg(name).mcp]
        if len(visible) == 1:
            required.append(visible[0])
    return required


def validate_item(item: Any, shared: Mapping[str, Any]) -> dict[str, Any]:
    """One entry of ``add``'s ``items``: the item arguments, inheriting ``shared`` ones."""
    if not isinstance(item, Mapping):
        raise BadRequest("every entry of 'items' must be a map", arg="items")
    spec = Op("add item", WRITE, "", (*ITEM_ARGS, USER, SOURCE))
    merged = {**{k: v for k, v in shared.items() if v is not None}, **item}
    out = validate(spec, merged)
    if out["content"] is None:
        raise BadRequest("every entry of 'items' needs 'content'", arg="items")
    return out


def arg_schema(arg: Arg, note: str | None = None) -> dict[str, Any]:
    """The JSON Schema of one argument's value (MCP tool inputs, the HTTP API's OpenAPI
    document); ``note`` is added to its description."""
    schema: dict[str, Any]
    if arg.type in (STR, TEXT):
        schema = {"type": "string"}
        if arg.max_bytes:
            schema["maxLength"] = arg.max_bytes
    elif arg.type == CHOICE:
        schema = {"type": "string", "enum": list(arg.choices)}
    elif arg.type == INT:
        schema = {"type": "integer"}
        if arg.lo is not None:
            schema["minimum"] = arg.lo
        if arg.hi is not None:
            schema["maximum"] = arg.hi
    elif arg.type == BOOL:
        schema = {"type": "boolean"}
    elif arg.type in (TIME, DURATION):
        schema = {"type": ["string", "number"]}
    elif arg.type == MAP:
        schema = {"type": "object"}
    else:
        schema = {"type": "array"}
    description = "; ".join(t for t in (arg.help, note) if t)
    if description:
        schema["description"] = description
    if arg.default is not None:
        schema["default"] = arg.default
    return schema


def tool_schema(spec: Op) -> dict[str, Any]:
    """The JSON Schema of an op's MCP tool input: its ``mcp`` arguments, nothing else.

    A ``one_of`` group is said in its members' descriptions, not as a schema ``oneOf``:
    several agent clients refuse ``oneOf`` at the top of a tool's input schema.
    """
    props: dict[str, Any] = {}
    required = _required_for_tool(spec)
    together: dict[str, str] = {}
    for group in spec.one_of:
        visible = [name for name in group if spec.arg(name).mcp]
        if len(visible) > 1:
            for name in visible:
                together[name] = f"give exactly one of {' or '.join(visible)}"
    for arg in spec.args:
        if not arg.mcp:
            continue
        props[arg.name] = arg_schema(arg, together.get(arg.name))
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


__all__ = ["DEFAULT_ACTOR", "OPS", "Arg", "Op", "arg_schema", "check", "parse_duration",
           "parse_time", "stamp", "tool_schema", "validate", "validate_item", "validate_tool",
           "MAX_DEPTH"]
