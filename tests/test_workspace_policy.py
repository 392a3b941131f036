"""Workspace files in the current-state policy: the retry-policy decision files (reference §8.1)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from lintaid.policy import RecordState
from lintaid.workspace.states import PolicyFile, PolicyState, link_candidates, policy_text
from tests.workspace_harness import JAN_2025, JAN_2026, running_workspace, wait_for, write

QUERY = "How many retry attempts should we use for gateway timeouts?"
DECISION_A = "# Gateway Retry Policy\n\nGateway timeout retry attempts: 5.\n"
DECISION_B = "# Gateway Retry Policy\n\nGateway timeout retry attempts: 2.\n"
DECISION_B_EXPLICIT = "---\nsupersedes: decision-a.md\n---\n" + DECISION_B


@pytest.fixture
def root(project: Path) -> Path:
    return project


def _assert_only_b_current(run, folder: str = "") -> None:  # noqa: ANN001 - harness object
    a, b = f"{folder}decision-a.md", f"{folder}decision-b.md"
    hits, hidden = run.search(QUERY)
    assert [h["path"] for h in hits] == [b]
    assert hits[0]["status"] == "current"
    assert "retry attempts: 2" in hits[0]["content"]
    assert hidden == 1
    history, hidden = run.search(QUERY, history=True)
    by_path = {h["path"]: h for h in history}
    assert set(by_path) == {a, b} and hidden == 0
    assert by_path[a]["status"] == "historical"
    assert by_path[a]["superseded_by"] == b
    assert by_path[b]["status"] == "current"


def test_explicit_supersedes_frontmatter(root: Path) -> None:
    write(root / "decision-a.md", DECISION_A)
    write(root / "decision-b.md", DECISION_B_EXPLICIT)
    with running_workspace(root) as run:
        _assert_only_b_current(run)
        state = run.ws.store.file_state("decision-a.md")
        assert state["confidence"] == 1.0 and "explicitly supersedes" in state["evidence"]


def test_metadata_free_files_ordered_by_mtime(root: Path) -> None:
    write(root / "docs" / "decision-a.md", DECISION_A, mtime=JAN_2025)
    write(root / "docs" / "decision-b.md", DECISION_B, mtime=JAN_2026)
    with running_workspace(root) as run:
        _assert_only_b_current(run, "docs/")
        state = run.ws.store.file_state("docs/decision-a.md")
        assert state["confidence"] == pytest.approx(0.90)


def test_live_changes_restate_files(root: Path) -> None:
    write(root / "docs" / "decision-a.md", DECISION_A, mtime=JAN_2025)
    with running_workspace(root) as run:
        assert run.paths(QUERY) == {"docs/decision-a.md"}
        write(root / "docs" / "decision-b.md", DECISION_B, mtime=JAN_2026)
        wait_for(lambda: run.paths(QUERY) == {"docs/decision-b.md"})
        # The newer file goes away: the older one is current again.
        (root / "docs" / "decision-b.md").unlink()
        wait_for(lambda: run.paths(QUERY) == {"docs/decision-a.md"})
        hits, _ = run.search(QUERY)
        assert hits[0]["status"] == "current"
        # An mtime change alone (no content change) reorders the chain.
        write(root / "docs" / "decision-b.md", DECISION_B, mtime=JAN_2025 - 86400)
        wait_for(lambda: run.paths(QUERY) == {"docs/decision-a.md"})
        os.utime(root / "docs" / "decision-b.md", (JAN_2026, JAN_2026))
        wait_for(lambda: run.paths(QUERY) == {"docs/decision-b.md"})


def test_explicitly_superseded_file_edited_later_stays_retired(root: Path) -> None:
    write(root / "decision-a.md", DECISION_A, mtime=JAN_2025)
    write(root / "decision-b.md", DECISION_B_EXPLICIT, mtime=JAN_2025 + 60)
    with running_workspace(root) as run:
        _assert_only_b_current(run)
        # A typo fix in the old file makes it the newest by mtime, but b still retires it.
        write(root / "decision-a.md", DECISION_A.replace("Policy", "Policy "), mtime=JAN_2026)
        wait_for(lambda: run.ws.store.fingerprints_for(["decision-a.md"])["decision-a.md"]
                 .mtime_ns == JAN_2026 * 10**9)
        _assert_only_b_current(run)
        assert run.ws.store.file_state("decision-a.md")["status"] == "superseded"


def test_supersedes_relative_to_root_and_late_target(root: Path) -> None:
    write(root / "adr" / "new.md", "---\nsupersedes: legacy/old.md\n---\n# Owner\n\nquinceword\n")
    with running_workspace(root) as run:
        # The target appears after the link: the link completes then.
        write(root / "legacy" / "old.md", "# Owner\n\nquinceword legacy\n")
        wait_for(lambda: run.ws.store.file_state("legacy/old.md")["status"] == "superseded")
        assert run.paths("quinceword") == {"adr/new.md"}
        assert run.paths("quinceword", history=True) == {"adr/new.md", "legacy/old.md"}


def test_code_files_take_no_part() -> None:
    assert policy_text("src/settings.py", "RETRY_ATTEMPTS = 5\n", {}) is None
    assert policy_text("docs/a.md", "Retry attempts: 5.\n", {}) is not None
    assert policy_text("docs/readme.md", "Just prose here.\n", {}) is None
    assert link_candidates("docs/adr/b.md", {"supersedes": "a.md"}) == ["docs/adr/a.md", "a.md"]
    assert link_candidates("b.md", {"supersedes": ["/x/a.md", "../escape.md"]}) == ["x/a.md"]


# -- incremental equals full ---------------------------------------------------------------------

TEXTS = [
    "# Gateway Retry Policy\n\nGateway timeout retry attempts: {n}.\n",
    "# Gateway Retry Policy\n\nGateway timeout retry attempts: {n}.\n\nExtra rationale stays "
    "relevant for operators.\n",
    "# Cache\n\nWe use {tech} for caching.\n",
    "The {team} team owns the control surface.\n",
    "# Notes\n\nNothing to claim here.\n",
]
NAMES = [f"docs/f{i}.md" for i in range(7)]


def _random_file(rng: random.Random, path: str) -> PolicyFile:
    template = rng.choice(TEXTS)
    text = template.format(n=rng.randint(1, 3), tech=rng.choice(["redis", "memcached"]),
                           team=rng.choice(["platform", "reliability"]))
    frontmatter: dict[str, object] = {}
    if rng.random() < 0.3:
        frontmatter = {"supersedes": rng.choice(["f0.md", "f1.md", "docs/f2.md", "missing.md"])}
        text = f"---\nsupersedes: {frontmatter['supersedes']}\n---\n{text}"
    mtime = float(rng.choice([JAN_2025, JAN_2025 + 10, JAN_2026]))
    return PolicyFile(path, mtime, policy_text(path, text, frontmatter),
                      tuple(link_candidates(path, frontmatter)))


def _states(policy: PolicyState) -> dict[str, RecordState]:
    return {p: policy.state(p) for p in policy.files}


@pytest.mark.parametrize("seed", range(25))
def test_incremental_policy_equals_full_rebuild(seed: int) -> None:
    rng = random.Random(seed)
    live = PolicyState()
    files: dict[str, PolicyFile] = {}
    for _step in range(30):
        changed, removed = [], []
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(NAMES)
            if path in files and rng.random() < 0.3:
                del files[path]
                removed.append(path)
                changed = [f for f in changed if f.path != path]
            else:
                files[path] = _random_file(rng, path)
                removed = [p for p in removed if p != path]
                changed = [f for f in changed if f.path != path] + [files[path]]
        before = _states(live)
        diff = live.update(changed, removed)
        full = PolicyState()
        full.rebuild(files.values())
        assert _states(live) == _states(full)
        after = _states(live)
        reported = {p for p, s in diff.items() if before.get(p, RecordState()) != s}
        actual = {p for p in set(before) | set(after)
                  if before.get(p, RecordState()) != after.get(p, RecordState())}
        assert actual <= set(diff) and reported <= set(diff)
