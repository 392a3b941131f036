"""Workspace memory end to end: a real daemon (in this process) watching a real git work tree."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lintaid_client import paths
from tests.conftest import Served, wait_for
from tests.test_e2e_spine import git_init
from tests.transcripts import stop_payload, write_transcript

RETRY_Q = "How many retry attempts should we use for gateway timeouts?"


def ws_hits(served: Served, query: str, *extra: str) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = served.json("search", query, "--store", "workspace",
                                             *extra)["results"]
    return hits


def ready(served: Served) -> bool:
    return bool(served.json("status").get("workspace", {}).get("ready"))


@pytest.fixture
def tree(project: Path, serve: Callable[..., Served]) -> Served:
    """A git work tree with a daemon watching it, its first index complete."""
    git_init(project)
    (project / ".gitignore").write_text("secret_build/\n*.log\n")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text(
        "def handler(request):\n    return 'the pelican responds with status 200'\n")
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("# Guide\n\nThe albatross setting lives here.\n")
    (project / "secret_build").mkdir()
    (project / "secret_build" / "out.txt").write_text("the ignored ocelot artefact\n")
    (project / "debug.log").write_text("ocelot log line\n")
    (project / "blob.bin").write_bytes(b"ocelot\x00\x01\x02binary")
    served = serve(project, watch=True)
    wait_for(lambda: ready(served), timeout=60)
    return served


def test_files_are_searchable_and_follow_edits_renames_moves_and_deletes(tree: Served) -> None:
    root = tree.root
    hit = ws_hits(tree, "pelican responds")[0]
    assert hit["store"] == "workspace" and hit["path"] == "src/app.py"
    assert hit["start_line"] == 1 and hit["end_line"] >= 2
    assert ws_hits(tree, "ocelot") == []  # ignored by git, and binary: never indexed

    (root / "src" / "app.py").write_text("def handler(request):\n    return 'the heron waits'\n")
    wait_for(lambda: ws_hits(tree, "heron waits"), timeout=10)
    assert ws_hits(tree, "pelican responds") == []

    (root / "docs" / "guide.md").rename(root / "docs" / "manual.md")
    wait_for(lambda: [h for h in ws_hits(tree, "albatross") if h["path"] == "docs/manual.md"])
    assert all(h["path"] != "docs/guide.md" for h in ws_hits(tree, "albatross"))

    (root / "archive").mkdir()
    (root / "docs" / "manual.md").rename(root / "archive" / "manual.md")
    wait_for(lambda: [h for h in ws_hits(tree, "albatross") if h["path"] == "archive/manual.md"])

    (root / "archive" / "manual.md").unlink()
    wait_for(lambda: not ws_hits(tree, "albatross"), timeout=10)


def test_restart_reindexes_exactly_the_files_changed_while_down(tree: Served) -> None:
    root = tree.root
    for n in range(8):
        (root / "src" / f"mod{n}.py").write_text(f"VALUE_{n} = 'kestrel {n}'\n")
    wait_for(lambda: len(ws_hits(tree, "kestrel", "--top-k", "20")) == 8, timeout=15)
    tree.stop()
    (root / "src" / "mod1.py").write_text("VALUE_1 = 'osprey'\n")
    (root / "src" / "mod2.py").unlink()
    (root / "src" / "new.py").write_text("NEW = 'osprey too'\n")
    tree.start()
    wait_for(lambda: ready(tree), timeout=60)
    lines = paths.log_path(root).read_text().splitlines()
    events = [json.loads(line) for line in lines if "workspace_reconciled" in line]
    last = events[-1]
    assert last["changed_paths"] == ["src/mod1.py"]
    assert last["removed_paths"] == ["src/mod2.py"]
    assert last["added_paths"] == ["src/new.py"]
    assert last["added"] + last["changed"] + last["removed"] == 3
    assert {h["path"] for h in ws_hits(tree, "osprey")} == {"src/mod1.py", "src/new.py"}


def test_decision_files_supersede_by_frontmatter_and_by_time(tree: Served) -> None:
    root = tree.root
    for variant, explicit in (("explicit", True), ("timeline", False)):
        folder = root / "decisions" / variant
        folder.mkdir(parents=True)
        a = folder / "decision-a.md"
        a.write_text("# Gateway Retry Policy\n\nGateway timeout retry attempts: 5.\n")
        front = "---\nsupersedes: decision-a.md\n---\n" if explicit else ""
        b = folder / "decision-b.md"
        b.write_text(f"{front}# Gateway Retry Policy\n\nGateway timeout retry attempts: 2.\n")
        if not explicit:
            os.utime(a, (1735689600, 1735689600))
            os.utime(b, (1767225600, 1767225600))

    def current() -> list[tuple[str, str]]:
        return sorted((h["path"], h["status"]) for h in ws_hits(tree, RETRY_Q, "--top-k", "10"))

    want = [("decisions/explicit/decision-b.md", "current"),
            ("decisions/timeline/decision-b.md", "current")]
    wait_for(lambda: current() == want, timeout=15)
    history = {h["path"]: "historical" if h["historical"] else h["status"] for h in
               ws_hits(tree, "what changed in the gateway retry attempts?", "--top-k", "10")}
    for variant in ("explicit", "timeline"):
        assert history[f"decisions/{variant}/decision-a.md"] == "historical"
        assert history[f"decisions/{variant}/decision-b.md"] == "current"


def test_a_memory_about_a_file_is_marked_when_the_file_changed(tree: Served) -> None:
    root = tree.root
    transcript = write_transcript(root.parent / "t.jsonl", [
        ("user", "Make the handler in src/app.py return the pelican status."),
        ("assistant", [
            {"type": "tool_use", "id": "toolu_1", "name": "Edit",
             "input": {"file_path": str(root / "src" / "app.py"), "old_string": "a",
                       "new_string": "b"}},
        ]),
        ("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]),
        ("assistant", "The pelican handler in src/app.py now returns status 200."),
    ], cwd=str(root))
    assert tree.hook("Stop", stop_payload(transcript, cwd=str(root))) == {}
    hit = tree.json("search", "pelican handler", "--store", "memory")["results"][0]
    assert hit["changed_files"] == []
    (root / "src" / "app.py").write_text("def handler(request):\n    return 'rewritten'\n")
    wait_for(lambda: ws_hits(tree, "rewritten"), timeout=10)
    hit = tree.json("search", "pelican handler", "--store", "memory")["results"][0]
    assert hit["changed_files"] == ["src/app.py"]
    out = tree.hook("UserPromptSubmit", {"session_id": "x",
                                         "prompt": "what does the pelican handler do"})
    assert "changed since: src/app.py" in out["hookSpecificOutput"]["additionalContext"]
    text = tree.cli("search", "pelican handler", "--store", "memory").stdout
    assert "file changed since capture: src/app.py" in text


def test_status_shows_the_watcher_and_reindex_reports(tree: Served) -> None:
    ws = tree.json("status")["workspace"]
    assert ws["files"] >= 3 and ws["watcher_mode"] in ("inotify", "polling")
    assert "queue_depth" in ws and "last_event_at" in ws
    result = tree.cli("reindex")
    assert result.exit_code == 0, result.stderr
    assert re.search(r"workspace: \d+ files checked, 0 added, 0 changed, 0 removed",
                     result.stdout), result.stdout
