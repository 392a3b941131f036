"""Workspace files in the current-state policy: the retry-policy decision files (reference §8.1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lintaid.workspace.documents import link_candidates, policy_text
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
        # The file's state is in the database; its chunks reach the index a moment later.
        run.wait_searchable("quinceword", "legacy/old.md", history=True)
        run.wait_gone("quinceword", "legacy/old.md")
        assert run.paths("quinceword") == {"adr/new.md"}
        assert run.paths("quinceword", history=True) == {"adr/new.md", "legacy/old.md"}


def test_code_files_take_no_part() -> None:
    assert policy_text("src/settings.py", "RETRY_ATTEMPTS = 5\n", {}) is None
    assert policy_text("docs/a.md", "Retry attempts: 5.\n", {}) is not None
    assert policy_text("docs/readme.md", "Just prose here.\n", {}) is None
    assert link_candidates("docs/adr/b.md", {"supersedes": "a.md"}) == ["docs/adr/a.md", "a.md"]
    assert link_candidates("b.md", {"supersedes": ["/x/a.md", "../escape.md"]}) == ["x/a.md"]


def test_links_re_resolve_when_a_nearer_target_comes_and_goes(tmp_path: Path) -> None:
    """Store level, no watcher: the first existing ``supersedes:`` target wins, so adding or
    removing a nearer one re-states both targets although the linking file did not change."""
    from lintaid.derivation import apply_files
    from lintaid.store.workspace import WorkspaceStore
    from lintaid.workspace.service import file_update

    def update(rel: str, text: str):  # noqa: ANN202 - a FileUpdate
        data = text.encode()
        return file_update(rel, data, len(data), JAN_2025 * 10**9, read_at=JAN_2026)

    store = WorkspaceStore(tmp_path, derived_version="test")
    try:
        apply_files(store, [update("docs/new.md", "---\nsupersedes: [old.md, legacy.md]\n---\n"
                                   "# Owner\n\nquinceword\n"),
                            update("legacy.md", "# Owner\n\nquinceword legacy\n")], [])
        assert store.file_state("legacy.md")["status"] == "superseded"
        result = apply_files(store, [update("docs/old.md", "# Owner\n\nquinceword old\n")], [])
        assert store.file_state("docs/old.md")["status"] == "superseded"
        assert store.file_state("legacy.md")["status"] == "current"
        assert set(result.restated) == {"docs/old.md", "legacy.md"}
        result = apply_files(store, [], ["docs/old.md"])
        assert store.file_state("legacy.md")["status"] == "superseded"
        assert result.restated == ["legacy.md"]
        assert store.counts()["superseded"] == 1
    finally:
        store.close()
