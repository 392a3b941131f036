"""SessionStart brings the project's state: current decisions grouped by subject, what changed
since the last session, unresolved conflicts, the last outcomes on this branch; after a
compaction, what this session decided. End to end through the real hook shim against a real
daemon watching a real git work tree; the renderer's budget on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from lintaid.integrations import injection
from lintaid_client import models
from lintaid_client.models import Change, Conflict, Hit, ProjectState, Statement
from tests.conftest import (
    Served,
    lintaid_env,
    run_cli,
    run_hook,
    start_daemon,
    stop_daemon,
    wait_for,
)
from tests.test_e2e_policy import capture
from tests.test_e2e_spine import git_init
from tests.transcripts import stop_payload, write_transcript

WATCH = lintaid_env(LINTAID_NO_WATCH="0")


def turn(root: Path, session: str, request: str, result: str, *, append: bool = False) -> None:
    """One finished turn of ``session``, captured by its Stop hook."""
    path = root.parent / f"{session}.jsonl"
    write_transcript(path, [("user", request), ("assistant", result)], session_id=session,
                     cwd=str(root), append=append)
    run_hook(root, "Stop", stop_payload(path, session_id=session, cwd=str(root)), env=WATCH)


def session_start(root: Path, session: str, source: str = "startup") -> str:
    out = run_hook(root, "SessionStart", {"session_id": session, "source": source},
                      env=WATCH)
    if not out:
        return ""
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    return str(out["hookSpecificOutput"]["additionalContext"])


def section(text: str, title: str) -> str:
    """The lines of the section whose title starts with ``title`` ("" when absent)."""
    blocks = text.split("\n\n")
    found = [b for b in blocks if b.startswith(title)]
    return found[0] if found else ""


def ready(root: Path) -> bool:
    from tests.conftest import run_json

    return bool(run_json(root, "status", env=WATCH).get("workspace", {}).get("ready"))


@pytest.fixture
def tree(project: Path) -> Path:
    git_init(project)
    (project / "docs").mkdir()
    (project / "docs" / "owners.md").write_text(
        "# Owners\n\nWho answers for what.\n\nAna owns the billing service.\n")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("TIMEOUT = 5  # the caching layer reads this\n")
    start_daemon(project, env=WATCH)
    wait_for(lambda: ready(project), timeout=30)
    yield project
    stop_daemon(project, env=WATCH)


@pytest.mark.slow
def test_session_start_brings_the_project_state(tree: Path) -> None:
    turn(tree, "sess-a", "Set up caching for the gateway.", "Done. We use Redis for caching.")
    run_hook(tree, "UserPromptSubmit", {"session_id": "sess-b",
                                        "prompt": "Which cache do we use for the gateway?"},
             env=WATCH)
    turn(tree, "sess-b", "Switch caching to Memcached.",
         "Done. We use Memcached for caching instead of Redis.")
    turn(tree, "sess-b", "Who runs the deploys now?", "Done. Deploys go through Argo.",
         append=True)
    # One note that says two things about one subject: neither can win, both are marked
    # (two notes would not do: the later one supersedes the earlier).
    run_cli(tree, "add", "Dan owns the payments service. Eve owns the payments service.",
            env=WATCH)

    text = session_start(tree, "sess-c")
    assert text.startswith("Project state (lintaid)")
    assert "notes captured in earlier sessions" not in text
    assert len(text.encode()) <= 8000
    decisions = section(text, "Current decisions")
    # The current value is a decision; the retired one is not.
    assert "We use Memcached for caching instead of Redis" in decisions
    assert "We use Redis for caching" not in decisions
    # A decision document's claim, with its file and line; no code, no prompt.
    assert "Ana owns the billing service" in text and "docs/owners.md:5" in text
    assert "src/app.py" not in text and "TIMEOUT" not in text
    assert "Which cache" not in text and "User prompt" not in text
    # What changed since the last session began: the supersession, and the new conflict.
    changes = section(text, "Changed since your last session began")
    assert "now: " in changes and "Memcached" in changes.split("before:")[0]
    assert "We use Redis for caching" in changes.split("before:")[1]
    assert "new conflict:" in changes and "Dan owns" in changes and "Eve owns" in changes
    assert "CONFLICTED" in decisions
    # The newest outcomes on this branch, newest first.
    outcomes = section(text, "Last outcomes on branch main")
    assert outcomes.index("Who runs the deploys now?") < outcomes.index("Switch caching")

    # A later session: the conflict is no longer new, but still unresolved.
    turn(tree, "sess-d", "Add a health check.", "Added GET /healthz to the gateway.")
    later = session_start(tree, "sess-e")
    assert "Dan owns" in section(later, "Unresolved conflicts")
    assert "Eve owns" in section(later, "Unresolved conflicts")
    assert "new conflict" not in later


@pytest.mark.slow
def test_after_a_compaction_the_session_gets_back_what_it_decided(tree: Path) -> None:
    turn(tree, "old", "Pick a queue.", "We use RabbitMQ for queueing.")
    turn(tree, "sess", "Pick a cache.", "Done. We use Redis for caching.")
    turn(tree, "sess", "Pick a log library.", "Done. We use structlog for logging.", append=True)
    text = session_start(tree, "sess", "compact")
    mine = section(text, "Decided and done earlier in this session")
    assert "We use Redis for caching" in mine and "We use structlog for logging" in mine
    assert "RabbitMQ" not in mine  # another session's decision: listed as a decision only
    assert "RabbitMQ" in section(text, "Current decisions")
    assert "Pick a log library." in mine  # this session's turns too
    assert "Last outcomes" not in text or "Pick a queue." in section(text, "Last outcomes")

    # Resumed: what changed while it was away, counted from its own last record.
    assert "Changed since" not in session_start(tree, "sess", "resume")
    run_cli(tree, "add", "We use Memcached for caching instead of Redis.", env=WATCH)
    resumed = session_start(tree, "sess", "resume")
    changes = section(resumed, "Changed since this session last ran")
    assert "Memcached" in changes and "We use Redis for caching" in changes


def statement(n: int, subject: str, text: str, **kw: object) -> Statement:
    return Statement(claim_id=f"c{n}", record_id=f"m{n}", subject=subject, predicate="value",
                     value=str(n), evidence=text, created_at=1_700_000_000.0 + n, **kw)


def test_the_budget_is_shared_between_sections() -> None:
    words = "lorem ipsum dolor sit amet " * 8
    state = ProjectState(
        decisions=[statement(i, f"setting {i}", f"Setting {i} is {i}. {words}")
                   for i in range(200)],
        changes=[Change(old=statement(900, "cache", "We use Redis for caching."),
                        new=statement(901, "cache", "We use Memcached for caching."))],
        conflicts=[Conflict(a=statement(902, "owner", "Bob owns billing.",
                                        status=models.CONFLICTED),
                            b=statement(903, "owner", "Ana owns billing.",
                                        status=models.CONFLICTED))],
        outcomes=[Hit(id="m999", content="Request: add retries\nResult: retries added",
                      kind="capture", doc_type="outcome", source="claude-code://s/outcome")],
        since=1_600_000_000.0,
    )
    where = injection.Where("main", None, None)
    text = injection.render_state(state, where=where, source="startup")
    assert text is not None and len(text.encode()) <= injection.DEFAULT_MAX_BYTES
    # Two hundred long decisions do not crowd out the rest.
    assert "Memcached" in text and "Bob owns billing." in text and "m999" in text
    assert text.index("Current decisions") < text.index("Changed since")
    small = injection.render_state(state, where=where, source="startup", max_bytes=2000)
    assert small is not None and len(small.encode()) <= 2000
    assert injection.render_state(ProjectState(), where=where, source="startup") is None
    # What the other sections leave goes to the decisions: with nothing else to say, they
    # fill the budget, not their share of it alone.
    alone = injection.render_state(ProjectState(decisions=state.decisions), where=where,
                                   source="startup")
    share = injection.STATE_SHARES["decisions"] * injection.DEFAULT_MAX_BYTES
    assert alone is not None and share * 1.5 < len(alone.encode()) <= \
        injection.DEFAULT_MAX_BYTES
    # Same subject: at most two statements, the newest first.
    same = ProjectState(decisions=[statement(i, "cache", f"Cache option {i}.")
                                   for i in (3, 2, 1)])
    lines = injection.render_state(same, where=where, source="startup")
    assert lines is not None and "Cache option 3." in lines and "Cache option 2." in lines
    assert "Cache option 1." not in lines


def test_a_statement_is_quoted_without_its_capture_label() -> None:
    """A captured turn's sentence starts with its line's label; the quote drops it."""
    state = ProjectState(decisions=[statement(
        1, "artifact bucket", "Result: The artifact bucket is now s3://b instead of s3://a.")])
    text = injection.render_state(state, where=injection.Where("main", None, None),
                                  source="startup")
    assert text is not None
    assert '"The artifact bucket is now s3://b instead of s3://a."' in text
    assert "Result:" not in text


def test_a_turn_about_nothing_of_the_projects_lists_no_decision(served: Served) -> None:
    """Small talk and a question about the craft have answers, and the answers have values
    ("3 days off", "capacity 4"), but they are no decisions of the project's."""
    capture(served, "s1", "cool, thanks! have a good weekend",
            "You too! The office is closed for 3 days, back on Tuesday.")
    capture(served, "s2", "What's the difference between a buffered and an unbuffered channel?",
            "An unbuffered channel blocks the sender until a receiver takes the value; "
            "a buffered channel with capacity 4 accepts 4 values before it blocks.")
    capture(served, "s3", "Where do we deploy?", "Deploys go to Fly.io, region fra.")
    served.call("search", {"query": "settle", "top_k": 1})
    out = served.hook("SessionStart", {"session_id": "s4", "source": "startup"})
    text = str(out["hookSpecificOutput"]["additionalContext"])
    decisions = section(text, "Current decisions")
    assert "Fly.io" in decisions, text
    assert "3 days" not in decisions and "capacity 4" not in decisions, decisions
