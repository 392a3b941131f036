"""Injection quality: what reaches the agent, at the byte budget, over a scripted project.

A coding project is played out over 32 agent sessions (``SESSIONS``): decisions are made in
turns, changed ("instead of"), reverted ("again", restated), written down in notes and in
decision documents (ADRs in a real git work tree, one superseding another, one edited in
place); prompts are asked, two sessions are compacted. Beside them sit what a real project
holds and an agent must never be given: Claude Code's settings with lintaid's hooks, the MCP
file, a ``.env``, a document with an AWS key in it.

Everything goes through a real daemon (in process: ``Daemon(root).run()`` on a thread, its
watcher on) over its socket: each hook event is the ``hook`` op the shim sends (Claude Code's
payloads, a real JSONL transcript per session); notes are the ``add`` op; documents are
committed and re-read (``reindex``). After every write the script waits until it is
searchable, so each probe sees what came before it.

Probes, each answered with the text the agent would get:

* ``start``: SessionStart (``startup``) at the start of every session. Expected: every fact
  currently decided (the decision's current value), and the previous session's last outcome.
* ``compact``: SessionStart (``compact``) after a PreCompact. Expected: the facts this session
  decided and its last outcome.
* ``prompt``: a question (UserPromptSubmit). Expected: the current value of the facts it
  asks about.

Scoring. The injected text is cut into items: for a prompt, one per memory entry; at
SessionStart, one per ``- `` line. An item *presents* a statement when the statement's sentence
(as the script said it) is in the item's text outside what the text marks as not current: a
``Superseded here`` note, the ``before:`` half of a change, a line or entry marked conflicted.
A statement states one value of one fact; it is *current* when that value is the fact's value
at the probe (a revert makes the first statement current again), *stale* otherwise.

* precision: items that present a statement of an expected (or, at SessionStart, any current)
  fact or outcome, and no stale statement; over all items.
* recall: expected facts (and outcomes) presented by at least one item; over all expected.
* stale presentations: (probe, item, statement) triples presenting a stale statement as current.

Also counted: prompts echoed back (``User prompt``), configuration leaked (the settings file,
``"timeout": 10``), secrets leaked, bytes injected. Beside the project's own code sit two
small libraries vendored under ``src/`` (copies of h11 and idna, installed here): their
docstrings are about HTTP requests and hosts, so the prompts about the gateway's HTTP library
(``vendored`` probes) say whether the memory that answers comes first (``first answers``) and
how many entries showed library code (``third-party entries``). Targets (issue 9, for the final product):
precision >= 0.8, recall >= 0.9, stale presentations 0.

    python benchmarks/injection.py [--sessions N] [--max-bytes 8000] [--json PATH] [--show N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client")]

from lintaid.daemon import Config, Daemon  # noqa: E402
from lintaid_client import connection, paths  # noqa: E402

TARGETS = {"precision": 0.8, "recall": 0.9, "stale": 0}
SECRETS = ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "s3cr3tPassw0rd")
CONFIG_LEAKS = ('"timeout": 10', "settings.json", ".mcp.json", "lintaid-hook")
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}

# ---------------------------------------------------------------------------------------------
# What the project decides: every sentence the script says about a fact, and its value.

FACTS: dict[str, dict[str, list[str]]] = {
    "http client": {
        "requests": ["The gateway uses requests for outbound HTTP calls.",
                     "The gateway uses requests again instead of httpx."],
        "httpx": ["The gateway now uses httpx instead of requests."],
    },
    "cache": {
        "redis": ["We use Redis for caching."],
        "memcached": ["We use Memcached for caching instead of Redis.",
                      "We use Memcached for caching."],
    },
    "retry attempts": {
        "2": ["Gateway timeout retry attempts: 2."],
        "3": ["Gateway timeout retry attempts: 3."],
    },
    "billing owner": {
        "ana": ["Ana owns the billing service."],
        "bob": ["Bob owns the billing service."],
    },
    "logging": {"structlog": ["We use structlog for logging."]},
    "dependencies": {
        "uv": ["We use uv for dependency management."],
        "poetry": ["We use poetry for dependency management instead of uv.",
                   "We use poetry for dependency management."],
    },
    "queue": {
        "rabbitmq": ["We use RabbitMQ for queueing."],
        "kafka": ["We use Kafka for queueing instead of RabbitMQ.",
                  "We use Kafka for queueing."],
    },
    "pool size": {"10": ["Database pool size: 10."], "20": ["Database pool size: 20."]},
    "ci": {"github actions": ["We switched from Jenkins to GitHub Actions for CI."]},
    "python": {"3.11": ["Python version is 3.11."], "3.12": ["Python version is 3.12."]},
    "artifact bucket": {"alpha": ["Artifact bucket: s3://acme-alpha."],
                        "beta": ["Artifact bucket: s3://acme-beta."]},
    "page size": {"50": ["The default page size is 50."],
                  "100": ["The default page size is 100."]},
    "request timeout": {"30": ["Request timeout seconds: 30."]},
    "search owner": {"carol": ["Carol owns the search service."]},
    "database": {"postgres": ["We use Postgres for the main database."]},
    "deploys": {"argo": ["Deploys go through Argo."]},
}
STATEMENTS: dict[str, tuple[str, str]] = {
    sentence: (topic, value)
    for topic, values in FACTS.items() for value, sentences in values.items()
    for sentence in sentences
}

# ---------------------------------------------------------------------------------------------
# The script: sessions of steps.


@dataclass(frozen=True)
class Turn:
    request: str
    says: tuple[str, ...] = ()  # fact statements in the result
    work: str = ""  # what was done: the outcome a later SessionStart should bring
    edits: tuple[str, ...] = ()  # files it edits (else those its work names)


@dataclass(frozen=True)
class Ask:
    prompt: str
    topics: tuple[str, ...]
    vendored: bool = False  # the vendored libraries' docstrings match it too


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Doc:
    path: str
    text: str


@dataclass(frozen=True)
class Compact:
    summary: str


Step = Turn | Ask | Note | Doc | Compact

ADR_ALPHA = "# ADR 1: artifact storage\n\nBuild artifacts go to S3.\n\nArtifact bucket: " \
    "s3://acme-alpha.\n"
ADR_BETA = ("---\nsupersedes: 0001-artifacts.md\n---\n# ADR 2: artifact storage, moved\n\n"
            "The alpha account is closing.\n\nArtifact bucket: s3://acme-beta.\n")
PYTHON = "# ADR 3: runtime\n\nWe pin one interpreter for every service.\n\nPython version is {}.\n"
API = "# API conventions\n\nList endpoints paginate with cursors.\n\nThe default page size is {}.\n"
CONFIG = ("# Gateway configuration\n\nTimeouts are in seconds.\n\n"
          "Request timeout seconds: 30.\n")
DEPLOY = ("# Deploy runbook\n\nRun the pipeline from main; it builds and pushes the image.\n"
          "The release job reads the bucket credentials from the CI store, not from here:\n"
          f"AWS_ACCESS_KEY_ID={SECRETS[0]} and the secret {SECRETS[1]} were rotated.\n"
          "Roll back by re-running the previous pipeline.\n")
SETTINGS = json.dumps({"hooks": {event: [{"hooks": [{
    "type": "command", "command": f"lintaid-hook claude-code {event}", "timeout": 10}]}]
    for event in ("SessionStart", "UserPromptSubmit", "Stop")}}, indent=2) + "\n"
MCP = json.dumps({"mcpServers": {"lintaid": {"command": "lintaid-mcp"}}}, indent=2) + "\n"
ENV = f"DB_PASSWORD={SECRETS[2]}\nAWS_SECRET_ACCESS_KEY={SECRETS[1]}\n"


def answer(topic: str, value: str) -> str:
    """The agent answering a question about a fact states it (the last sentence on file)."""
    return FACTS[topic][value][-1]


SESSIONS: list[list[Step]] = [
    [Turn("Set up the gateway's HTTP layer.", ("The gateway uses requests for outbound HTTP "
                                               "calls.",),
          "Added gateway/http.py with a session wrapper.")],
    [Turn("Add caching in front of the upstream.", ("We use Redis for caching.",),
          "Wired gateway/cache.py into the request path."),
     Turn("Retry upstream timeouts.", ("Gateway timeout retry attempts: 2.",),
          "Added RetryPolicy in gateway/retry.py.")],
    [Ask("Which cache does the gateway use?", ("cache",)),
     Note("Ana owns the billing service."),
     Turn("Set up logging.", ("We use structlog for logging.",),
          "Configured JSON logs in gateway/log.py.")],
    [Doc("docs/adr/0001-artifacts.md", ADR_ALPHA), Doc("docs/config.md", CONFIG),
     Doc("docs/deploy.md", DEPLOY), Doc(".claude/settings.json", SETTINGS),
     Doc(".mcp.json", MCP), Doc(".env", ENV),
     Ask("Which S3 bucket holds the build artifacts?", ("artifact bucket",)),
     Ask("What timeout should we use?", ("request timeout",)),
     Turn("Set up packaging.", ("We use uv for dependency management.",),
          "Added pyproject.toml and uv.lock.")],
    [Turn("Add the queue consumer.", ("We use RabbitMQ for queueing.",),
          "Added workers/consumer.py."),
     Note("Database pool size: 10."),
     Ask("What timeout should gateway requests use?", ("request timeout",))],
    [Turn("Switch the cache to Memcached.", ("We use Memcached for caching instead of Redis.",),
          "Updated gateway/cache.py for pymemcache."),
     Ask("Which cache does the gateway use?", ("cache",))],
    [Doc("docs/adr/0003-runtime.md", PYTHON.format("3.11")),
     Turn("Move CI off Jenkins.", ("We switched from Jenkins to GitHub Actions for CI.",),
          "Added .github/workflows/ci.yml.")],
    [Ask("Who owns the billing service?", ("billing owner",)),
     Note("Carol owns the search service."),
     Doc("docs/api.md", API.format(50)),
     Turn("Add pagination to the list endpoints.", (), "Added cursor pagination to /items.",
          ("api/items.py",))],
    [Turn("Replace the HTTP client.", ("The gateway now uses httpx instead of requests.",),
          "Rewrote gateway/http.py on httpx.AsyncClient."),
     Ask("Which HTTP client does the gateway use?", ("http client",), vendored=True),
     Ask("Which HTTP library does the gateway use for outbound calls?", ("http client",),
         vendored=True),
     Compact("Moved the gateway to httpx; tests green.")],
    [Turn("Retry more on timeouts.", ("Gateway timeout retry attempts: 3.",),
          "Raised the limit in gateway/retry.py."),
     Ask("How many retry attempts does the gateway make on a timeout?", ("retry attempts",))],
    [Note("Deploys go through Argo."),
     Ask("How do deploys work?", ("deploys",)),
     Turn("Add the database layer.", ("We use Postgres for the main database.",),
          "Added db/session.py with SQLAlchemy.")],
    [Turn("Billing moves to Bob's team.", ("Bob owns the billing service.",),
          "Updated CODEOWNERS for billing/.", ("CODEOWNERS",))],
    [Ask("Who owns the billing service?", ("billing owner",)),
     Note("Database pool size: 20.")],
    [Turn("Move packaging to poetry.", ("We use poetry for dependency management instead of "
                                        "uv.",),
          "Replaced uv.lock with poetry.lock."),
     Ask("Which tool manages the dependencies?", ("dependencies",))],
    [Doc("docs/adr/0003-runtime.md", PYTHON.format("3.12")),
     Ask("Which Python version do we target?", ("python",))],
    [Doc("docs/adr/0002-artifacts.md", ADR_BETA),
     Ask("Which S3 bucket holds the build artifacts?", ("artifact bucket",))],
    [Turn("Move the workers to Kafka.", ("We use Kafka for queueing instead of RabbitMQ.",),
          "Ported workers/consumer.py to aiokafka."),
     Compact("Moved the workers to Kafka.")],
    [Ask("What is the database pool size?", ("pool size",)),
     Turn("Add a health check.", (), "Added GET /healthz to the gateway.",
          ("gateway/health.py",))],
    [Doc("docs/api.md", API.format(100)),
     Ask("What is the default page size?", ("page size",))],
    [Turn("Go back to the old HTTP client.", ("The gateway uses requests again instead of "
                                              "httpx.",),
          "httpx broke the proxy setup; restored gateway/http.py."),
     Ask("Which HTTP client does the gateway use?", ("http client",), vendored=True)],
    [Ask("Which queue do the workers use?", ("queue",)),
     Turn("Add metrics.", (), "Added Prometheus metrics to the gateway.",
          ("gateway/metrics.py",))],
    [Turn("Lower the retries again.", ("Gateway timeout retry attempts: 2.",),
          "Three retries doubled the tail latency; the limit is back down.",
          ("gateway/retry.py",)),
     Ask("How many retry attempts does the gateway make on a timeout?", ("retry attempts",))],
    [Ask("Which cache does the gateway use?", ("cache",))],
    [Ask("What timeout should we use?", ("request timeout",))],
    [Turn("Add rate limiting.", (), "Added a token bucket limiter in gateway/limits.py."),
     Ask("Who owns the search service?", ("search owner",))],
    [Ask("Which HTTP client does the gateway use, and how many retry attempts does it make?",
         ("http client", "retry attempts")),
     Turn("Tidy the retry code.", (), "Split gateway/retry.py into policy and backoff."),
     Compact("Reviewed the gateway client and retries.")],
    [Ask("Which tool manages dependencies, and which Python version do we target?",
         ("dependencies", "python"))],
    [Ask("Which database do we use?", ("database",))],
    [Turn("Add request ids to the logs.", (), "Added request ids to the log context.",
          ("gateway/log.py",)),
     Ask("Which logging library do we use?", ("logging",))],
    [Ask("Which S3 bucket holds the build artifacts?", ("artifact bucket",)),
     Ask("Which AWS key does the release job use?", ("deploys",))],
    [Ask("How do deploys work, and which CI do we use?", ("deploys", "ci"))],
    [Ask("Who owns billing, and what is the database pool size?",
         ("billing owner", "pool size"))],
]

# ---------------------------------------------------------------------------------------------
# The project and the daemon


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(root), "-c", "commit.gpgsign=false", *args],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, **GIT_ENV})
    return out.stdout.strip()


class Harness:
    """A git project with a daemon running in this process, spoken to over its socket."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")
        (root / "README.md").write_text("# acme gateway\n\nThe HTTP gateway in front of the "
                                        "acme services.\n")
        (root / "gateway").mkdir()
        (root / "gateway" / "app.py").write_text("TIMEOUT = 5\n\ndef handle(request):\n"
                                                 "    return request\n")
        vendor(root / "src")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "init")
        paths.ensure_state_dir(root)
        self.daemon = Daemon(root, Config(inject_max_bytes=max_bytes, watch_workspace=True))
        self.thread = threading.Thread(target=self.daemon.run, name="bench-daemon", daemon=True)
        self.thread.start()
        if not self.daemon.ready.wait(60):
            raise RuntimeError("the daemon did not start")
        self.conn = connection.Connection(root)
        self.wait_workspace()

    def close(self) -> None:
        self.conn.close()
        self.daemon.request_shutdown()
        self.thread.join(60)

    def call(self, op: str, args: dict[str, Any], timeout: float = 60.0) -> Any:
        return self.conn.call(op, args, timeout=timeout)

    def settle(self) -> None:
        """Wait until the last write is searchable (the daemon's read-your-writes token)."""
        self.conn.call("search", {"query": "settle", "top_k": 1}, timeout=60,
                       after=self.conn.last_token)

    def hook(self, event: str, payload: dict[str, Any]) -> str | None:
        result = self.call("hook", {"provider": "claude-code", "event": event,
                                    "payload": {"cwd": str(self.root), "hook_event_name": event,
                                                **payload}})
        self.settle()
        out = result.get("output") or {}
        context = out.get("hookSpecificOutput", {}).get("additionalContext")
        return context if isinstance(context, str) else None

    def note(self, text: str) -> None:
        self.call("add", {"content": text, "source": "cli", "actor": "cli"})
        self.settle()

    def doc(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", f"docs: {rel}")
        self.call("reindex", {"full": False}, timeout=120)
        self.wait_workspace()

    def wait_workspace(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ws = self.call("status", {}).get("workspace") or {}
            if ws.get("ready") and not ws.get("pending_index") and not ws.get("queue_depth"):
                return
            time.sleep(0.05)


class Transcript:
    """One Claude Code session's JSONL transcript."""

    def __init__(self, path: Path, session: str, cwd: str) -> None:
        self.path, self.session, self.cwd = path, session, cwd
        self.parent: str | None = None

    def add(self, role: str, text: str, edits: Iterable[str] = ()) -> None:
        """A user or assistant line; an assistant's ``edits`` are Edit tool calls before its
        words."""
        entry_id = str(uuid.uuid4())
        message: dict[str, Any] = {"role": role, "content": text}
        if role == "assistant":
            blocks: list[dict[str, Any]] = [
                {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": "Edit",
                 "input": {"file_path": f"{self.cwd}/{path}", "old_string": "a",
                           "new_string": "b"}} for path in edits]
            message = {"id": "msg_" + uuid.uuid4().hex[:22], "type": "message",
                       "role": "assistant", "content": [*blocks, {"type": "text", "text": text}]}
        entry = {"parentUuid": self.parent, "type": role, "uuid": entry_id,
                 "sessionId": self.session, "cwd": self.cwd,
                 "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                 "message": message}
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
        self.parent = entry_id


# ---------------------------------------------------------------------------------------------
# Scoring


@dataclass
class Probe:
    kind: str  # start | compact | prompt
    session: int
    query: str
    expected_facts: set[tuple[str, str]]
    relevant_facts: set[tuple[str, str]]
    expected_work: set[str]
    relevant_work: set[str]
    current: dict[str, str]
    text: str | None = None
    vendored: bool = False


@dataclass
class Item:
    text: str  # what it presents as current (lowercased, whitespace collapsed)
    disputed: str  # what it shows as conflicted
    raw: str


@dataclass
class Score:
    probes: int = 0
    items: int = 0
    relevant_items: int = 0
    expected: int = 0
    found: int = 0
    stale: int = 0
    prompt_echoes: int = 0
    config_leaks: int = 0
    secret_leaks: int = 0
    bytes: list[int] = field(default_factory=list)
    empty: int = 0

    def add(self, other: Score) -> None:
        for name in ("probes", "items", "relevant_items", "expected", "found", "stale",
                     "prompt_echoes", "config_leaks", "secret_leaks", "empty"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.bytes += other.bytes

    def figures(self) -> dict[str, Any]:
        return {
            "probes": self.probes, "items": self.items,
            "precision": round(self.relevant_items / self.items, 3) if self.items else None,
            "recall": round(self.found / self.expected, 3) if self.expected else None,
            "stale_presentations": self.stale, "expected": self.expected, "found": self.found,
            "prompt_echoes": self.prompt_echoes, "config_leaks": self.config_leaks,
            "secret_leaks": self.secret_leaks, "empty_injections": self.empty,
            "mean_bytes": round(sum(self.bytes) / len(self.bytes)) if self.bytes else 0,
            "max_bytes": max(self.bytes, default=0),
        }


def fold(text: str) -> str:
    return " ".join(text.lower().split())


def items(text: str, kind: str) -> list[Item]:
    """The injected text cut into items (see the module docstring): memory entries (what a
    prompt gets, and what SessionStart got before it brought the project's state), else one
    item per ``- `` line."""
    out: list[Item] = []
    if kind == "prompt":
        for entry in _entries(text):
            lines = entry.splitlines()
            label = lines[0]
            current, disputed = [], []
            for line in lines:
                stripped = line.strip()
                if stripped.startswith("Superseded here:"):
                    continue
                if "CONFLICTED" in label or stripped.endswith("[conflicted]"):
                    disputed.append(stripped)
                else:
                    current.append(stripped)
            out.append(Item(fold(" ".join(current)), fold(" ".join(disputed)), entry))
        return out
    section = ""
    for line in text.splitlines():
        if line and not line.startswith("- "):
            section = line
            continue
        if not line.startswith("- "):
            continue
        body = line[2:]
        if "Unresolved conflicts" in section or body.startswith("new conflict:") \
                or "[CONFLICTED" in body:
            out.append(Item("", fold(body), line))
            continue
        now = body.split("; before:", 1)[0]
        out.append(Item(fold(now), "", line))
    return out


def _entries(text: str) -> list[str]:
    """A prompt's block cut into entries: each top-level ``- `` line (its provenance) with the
    indented lines after it (its statements and notes); the header is no entry."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("- "):
            out.append(line)
        elif line.startswith((" ", "\t")) and out and line.strip():
            out[-1] += "\n" + line
    return out


def presented(item: Item) -> list[tuple[str, tuple[str, str]]]:
    # A statement may be quoted without its full stop ("We use Redis for caching").
    return [(s, fact) for s, fact in STATEMENTS.items() if fold(s).rstrip(".") in item.text]


def score(probe: Probe) -> Score:
    sc = Score(probes=1)
    text = probe.text or ""
    if not text:
        sc.empty = 1
    sc.bytes.append(len(text.encode("utf-8")))
    sc.prompt_echoes = text.count("User prompt:")
    sc.config_leaks = sum(text.count(leak) for leak in CONFIG_LEAKS)
    sc.secret_leaks = sum(text.count(secret) for secret in SECRETS)
    found_facts: set[tuple[str, str]] = set()
    found_work: set[str] = set()
    for item in items(text, probe.kind):
        sc.items += 1
        shown = presented(item)
        stale = [s for s, (topic, value) in shown
                 if topic in probe.current and probe.current[topic] != value]
        sc.stale += len(stale)
        good_facts = {fact for _s, fact in shown if fact in probe.relevant_facts}
        good_work = {w for w in probe.relevant_work if fold(w) in item.text}
        if (good_facts or good_work) and not stale:
            sc.relevant_items += 1
        found_facts |= {fact for _s, fact in shown if fact in probe.expected_facts}
        found_work |= {w for w in probe.expected_work if fold(w) in item.text}
    sc.expected = len(probe.expected_facts) + len(probe.expected_work)
    sc.found = len(found_facts) + len(found_work)
    return sc


# ---------------------------------------------------------------------------------------------
# The run


@dataclass
class Timeline:
    current: dict[str, str] = field(default_factory=dict)
    session_facts: set[tuple[str, str]] = field(default_factory=set)
    session_work: list[str] = field(default_factory=list)
    last_work: list[str] = field(default_factory=list)  # the last session with turns

    def say(self, sentences: Iterable[str]) -> None:
        for sentence in sentences:
            if sentence in STATEMENTS:
                topic, value = STATEMENTS[sentence]
                self.current[topic] = value
                self.session_facts.add((topic, value))

    def doc(self, text: str) -> None:
        said = [line.strip() for line in text.splitlines() if line.strip() in STATEMENTS]
        self.say(said)

    def facts(self) -> set[tuple[str, str]]:
        return set(self.current.items())


def run(sessions: int, max_bytes: int, workdir: Path, log: Any = None) -> list[Probe]:
    script = SESSIONS[:sessions]
    harness = Harness(workdir / "acme", max_bytes)
    probes: list[Probe] = []
    tl = Timeline()
    try:
        for n, steps in enumerate(script, start=1):
            session = f"session-{n:02d}-{uuid.uuid4().hex[:8]}"
            transcript = Transcript(workdir / f"{session}.jsonl", session, str(harness.root))
            tl.session_facts, tl.session_work = set(), []
            last = tl.last_work[-1:] if tl.last_work else []
            probe = Probe("start", n, "startup", tl.facts(), tl.facts(), set(last),
                          set(tl.last_work), dict(tl.current))
            probe.text = harness.hook("SessionStart", {"session_id": session,
                                                       "source": "startup"})
            probes.append(probe)
            for step in steps:
                if isinstance(step, Doc):
                    harness.doc(step.path, step.text)
                    tl.doc(step.text)
                elif isinstance(step, Note):
                    harness.note(step.text)
                    tl.say([step.text])
                elif isinstance(step, Ask):
                    wanted = {(t, tl.current[t]) for t in step.topics if t in tl.current}
                    probe = Probe("prompt", n, step.prompt, wanted, wanted, set(), set(),
                                  dict(tl.current), vendored=step.vendored)
                    probe.text = harness.hook("UserPromptSubmit", {"session_id": session,
                                                                   "prompt": step.prompt})
                    probes.append(probe)
                    # The agent answers (from the code, correctly) and the turn is captured.
                    reply = " ".join(answer(t, tl.current[t]) for t in step.topics
                                     if t in tl.current) or "I could not find that."
                    _turn(harness, transcript, session, step.prompt, reply)
                    tl.say(answer(t, tl.current[t]) for t in step.topics if t in tl.current)
                elif isinstance(step, Turn):
                    harness.hook("UserPromptSubmit", {"session_id": session,
                                                      "prompt": step.request})
                    result = " ".join(("Done.", *step.says, step.work)).strip()
                    _turn(harness, transcript, session, step.request, result,
                          step.edits or FILE_RE.findall(step.work))
                    tl.say(step.says)
                    if step.work:
                        tl.session_work.append(step.work)
                elif isinstance(step, Compact):
                    harness.hook("PreCompact", {"session_id": session,
                                                "transcript_path": str(transcript.path),
                                                "trigger": "manual",
                                                "custom_instructions": step.summary})
                    decided = {f for f in tl.session_facts if tl.current.get(f[0]) == f[1]}
                    work = set(tl.session_work[-1:])
                    probe = Probe("compact", n, "compact", decided, tl.facts(), work,
                                  set(tl.session_work), dict(tl.current))
                    probe.text = harness.hook("SessionStart", {"session_id": session,
                                                               "source": "compact"})
                    probes.append(probe)
            harness.hook("SessionEnd", {"session_id": session,
                                        "transcript_path": str(transcript.path),
                                        "reason": "prompt_input_exit"})
            if tl.session_work:
                tl.last_work = list(tl.session_work)
            if log:
                log(f"session {n:2d}/{len(script)} done")
    finally:
        harness.close()
    return probes


FILE_RE = re.compile(r"[\w.-]+/[\w./-]*\w|[\w-]+\.(?:py|toml|lock|yml)\b")


def _turn(harness: Harness, transcript: Transcript, session: str, request: str,
          result: str, edits: Iterable[str] = ()) -> None:
    """One turn, captured by its Stop: work edits files, an answer edits none."""
    transcript.add("user", request)
    transcript.add("assistant", result, edits=edits)
    harness.hook("Stop", {"session_id": session, "transcript_path": str(transcript.path),
                          "stop_hook_active": False, "last_assistant_message": result,
                          "permission_mode": "default"})


VENDORED_LIBRARIES = ("h11", "idna")


def vendor(folder: Path) -> None:
    """Copy the vendored libraries (installed here) into ``folder``, one package each."""
    import importlib
    import shutil

    for name in VENDORED_LIBRARIES:
        source = Path(importlib.import_module(name).__file__ or "").parent
        shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))


def vendored_figures(probes: list[Probe]) -> dict[str, Any]:
    """The vendored probes: how often the first entry presents the answer, and how many
    entries showed the vendored libraries' code."""
    asked = [p for p in probes if p.vendored]
    first = third_party = 0
    for probe in asked:
        found = items(probe.text or "", probe.kind)
        shown = [item for item in found if any(f"src/{lib}/" in item.raw
                                               for lib in VENDORED_LIBRARIES)]
        third_party += len(shown)
        if found and {fact for _s, fact in presented(found[0])} & probe.expected_facts:
            first += 1
    return {"probes": len(asked), "first_answers": first, "third_party_entries": third_party}


def report(probes: list[Probe]) -> dict[str, Any]:
    by_kind: dict[str, Score] = {}
    overall = Score()
    for probe in probes:
        sc = score(probe)
        by_kind.setdefault(probe.kind, Score()).add(sc)
        overall.add(sc)
    out = {"sessions": max((p.session for p in probes), default=0),
           "by_probe": {k: v.figures() for k, v in sorted(by_kind.items())},
           "overall": overall.figures(), "targets": TARGETS}
    fig = out["overall"]
    out["meets_targets"] = bool(
        fig["precision"] is not None and fig["precision"] >= TARGETS["precision"]
        and fig["recall"] is not None and fig["recall"] >= TARGETS["recall"]
        and fig["stale_presentations"] == TARGETS["stale"])
    out["stale_examples"] = _stale_examples(probes)
    out["vendored"] = vendored_figures(probes)
    return out


def _stale_examples(probes: list[Probe], limit: int = 5) -> list[dict[str, Any]]:
    found: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], dict[str, Any]] = {}
    for probe in probes:
        for item in items(probe.text or "", probe.kind):
            for sentence, (topic, value) in presented(item):
                if topic in probe.current and probe.current[topic] != value:
                    key = (probe.kind, sentence)
                    found[key] += 1
                    examples.setdefault(key, {"probe": probe.kind, "session": probe.session,
                                              "query": probe.query, "stale": sentence,
                                              "current": probe.current[topic]})
    return [{**examples[k], "times": n} for k, n in found.most_common(limit)]


def explain(probe: Probe) -> str:
    """Each item of one probe, marked: ``+`` relevant and current, ``!`` stale, ``.`` neither;
    then the expected facts and outcomes it missed."""
    out = [f"--- {probe.kind} (session {probe.session}): {probe.query}"]
    found: set[Any] = set()
    for item in items(probe.text or "", probe.kind):
        shown = presented(item)
        stale = [s for s, (t, v) in shown if t in probe.current and probe.current[t] != v]
        good = {f for _s, f in shown if f in probe.relevant_facts} | {
            w for w in probe.relevant_work if fold(w) in item.text}
        found |= {f for _s, f in shown} | {w for w in probe.expected_work
                                           if fold(w) in item.text}
        mark = "!" if stale else "+" if good else "."
        first = " ".join(item.raw.split())[:150]
        out.append(f"  {mark} {first}")
    missed = sorted(str(f) for f in (probe.expected_facts | probe.expected_work) - found)
    if missed:
        out.append(f"  missed: {', '.join(missed)}")
    return "\n".join(out)


def table(result: dict[str, Any]) -> str:
    rows = [("probe", "probes", "items", "precision", "recall", "stale", "echoes", "leaks",
             "mean B", "max B")]
    for name, fig in [*result["by_probe"].items(), ("all", result["overall"])]:
        rows.append((name, str(fig["probes"]), str(fig["items"]), _f(fig["precision"]),
                     _f(fig["recall"]), str(fig["stale_presentations"]),
                     str(fig["prompt_echoes"]),
                     str(fig["config_leaks"] + fig["secret_leaks"]), str(fig["mean_bytes"]),
                     str(fig["max_bytes"])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths, strict=True)))
                     for row in rows)


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=len(SESSIONS),
                    help=f"play the first N sessions (default all {len(SESSIONS)})")
    ap.add_argument("--max-bytes", type=int, default=8000, help="the injection byte budget")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--show", type=int, default=0,
                    help="print the injected text of the first N probes, as the agent reads it")
    ap.add_argument("--explain", choices=("start", "compact", "prompt", "all"),
                    help="print every probe of this kind item by item: + relevant and "
                    "current, ! stale, . neither; and what it missed")
    args = ap.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lintaid-injection-") as tmp:
        probes = run(args.sessions, args.max_bytes, Path(tmp),
                     log=lambda m: print(m, file=sys.stderr))
    result = report(probes)
    result["seconds"] = round(time.monotonic() - started, 1)
    for probe in probes[:args.show]:
        print(f"--- {probe.kind} (session {probe.session}): {probe.query}\n{probe.text or ''}")
    for probe in probes:
        if args.explain in (probe.kind, "all"):
            print(explain(probe))
    print(table(result))
    print(f"targets: precision >= {TARGETS['precision']}, recall >= {TARGETS['recall']}, "
          f"stale presentations {TARGETS['stale']}; met: {result['meets_targets']}")
    ven = result["vendored"]
    print(f"vendored libraries under src/: the first entry answers {ven['first_answers']} of "
          f"{ven['probes']} probes; third-party entries shown: {ven['third_party_entries']}")
    for ex in result["stale_examples"]:
        print(f"stale: {ex['stale']!r} shown as current {ex['times']}x ({ex['probe']}, "
              f"first in session {ex['session']}: {ex['query']!r}; now {ex['current']!r})")
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
