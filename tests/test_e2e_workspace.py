"""Workspace memory end to end: a real daemon watching a real git work tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lintaid_client import paths
from tests.conftest import (
    lintaid_env,
    run_cli,
    run_hook,
    run_json,
    start_daemon,
    stop_daemon,
    wait_for,
)
from tests.test_e2e_spine import git_init
from tests.transcripts import stop_payload, write_transcript

RETRY_Q = "How many retry attempts should we use for gateway timeouts?"
WATCH = lintaid_env(LINTAID_NO_WATCH="0")


def ws_hits(root: Path, query: str, *extra: str) -> list[dict]:
    return run_json(root, "search", query, "--store", "workspace", *extra, env=WATCH)["results"]


def ready(root: Path) -> bool:
    status = run_json(root, "status", env=WATCH)
    return bool(status.get("workspace", {}).get("ready"))


@pytest.fixture
def tree(project: Path) -> Path:
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
    start_daemon(project, env=WATCH)
    wait_for(lambda: ready(project), timeout=30)
    yield project
    stop_daemon(project, env=WATCH)


def test_files_are_searchable_and_follow_edits_renames_moves_and_deletes(tree: Path) -> None:
    hit = ws_hits(tree, "pelican responds")[0]
    assert hit["store"] == "workspace" and hit["path"] == "src/app.py"
    assert hit["start_line"] == 1 and hit["end_line"] >= 2
    assert ws_hits(tree, "ocelot") == []  # ignored by git, and binary: never indexed

    (tree / "src" / "app.py").write_text("def handler(request):\n    return 'the heron waits'\n")
    wait_for(lambda: ws_hits(tree, "heron waits"), timeout=10)
    assert ws_hits(tree, "pelican responds") == []

    (tree / "docs" / "guide.md").rename(tree / "docs" / "manual.md")
    wait_for(lambda: [h for h in ws_hits(tree, "albatross") if h["path"] == "docs/manual.md"])
    assert all(h["path"] != "docs/guide.md" for h in ws_hits(tree, "albatross"))

    (tree / "archive").mkdir()
    (tree / "docs" / "manual.md").rename(tree / "archive" / "manual.md")
    wait_for(lambda: [h for h in ws_hits(tree, "albatross") if h["path"] == "archive/manual.md"])

    (tree / "archive" / "manual.md").unlink()
    wait_for(lambda: not ws_hits(tree, "albatross"), timeout=10)


def test_restart_reindexes_exactly_the_files_changed_while_down(tree: Path) -> None:
    for n in range(8):
        (tree / "src" / f"mod{n}.py").write_text(f"VALUE_{n} = 'kestrel {n}'\n")
    wait_for(lambda: len(ws_hits(tree, "kestrel", "--top-k", "20")) == 8, timeout=15)
    stop_daemon(tree, env=WATCH)
    (tree / "src" / "mod1.py").write_text("VALUE_1 = 'osprey'\n")
    (tree / "src" / "mod2.py").unlink()
    (tree / "src" / "new.py").write_text("NEW = 'osprey too'\n")
    start_daemon(tree, env=WATCH)
    wait_for(lambda: ready(tree), timeout=30)
    lines = paths.log_path(tree).read_text().splitlines()
    events = [json.loads(line) for line in lines if "workspace_reconciled" in line]
    last = events[-1]
    assert last["changed_paths"] == ["src/mod1.py"]
    assert last["removed_paths"] == ["src/mod2.py"]
    assert last["added_paths"] == ["src/new.py"]
    assert last["added"] + last["changed"] + last["removed"] == 3
    assert {h["path"] for h in ws_hits(tree, "osprey")} == {"src/mod1.py", "src/new.py"}


def test_decision_files_supersede_by_frontmatter_and_by_time(tree: Path) -> None:
    for variant, explicit in (("explicit", True), ("timeline", False)):
        folder = tree / "decisions" / variant
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


def test_a_memory_about_a_file_is_marked_when_the_file_changed(tree: Path) -> None:
    transcript = write_transcript(tree.parent / "t.jsonl", [
        ("user", "Make the handler in src/app.py return the pelican status."),
        ("assistant", [
            {"type": "tool_use", "id": "toolu_1", "name": "Edit",
             "input": {"file_path": str(tree / "src" / "app.py"), "old_string": "a",
                       "new_string": "b"}},
        ]),
        ("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]),
        ("assistant", "The pelican handler in src/app.py now returns status 200."),
    ], cwd=str(tree))
    run_hook(tree, "Stop", stop_payload(transcript, cwd=str(tree)), env=WATCH)
    hit = run_json(tree, "search", "pelican handler", "--store", "memory", env=WATCH)["results"][0]
    assert hit["changed_files"] == []
    (tree / "src" / "app.py").write_text("def handler(request):\n    return 'rewritten'\n")
    wait_for(lambda: ws_hits(tree, "rewritten"), timeout=10)
    hit = run_json(tree, "search", "pelican handler", "--store", "memory", env=WATCH)["results"][0]
    assert hit["changed_files"] == ["src/app.py"]
    out, _ = run_hook(tree, "UserPromptSubmit", {"session_id": "x",
                                                 "prompt": "what does the pelican handler do"},
                      env=WATCH)
    assert "file changed since capture: src/app.py" in out["hookSpecificOutput"][
        "additionalContext"]
    text = run_cli(tree, "search", "pelican handler", "--store", "memory", env=WATCH).stdout
    assert "file changed since capture: src/app.py" in text


def test_status_shows_the_watcher(tree: Path) -> None:
    ws = run_json(tree, "status", env=WATCH)["workspace"]
    assert ws["files"] >= 3 and ws["watcher_mode"] in ("inotify", "polling")
    assert "queue_depth" in ws and "last_event_at" in ws
    out = run_cli(tree, "reindex", env=WATCH).stdout
    assert "files" in out or "{" in out
