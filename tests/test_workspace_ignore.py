"""Which files are indexed: git's ignore rules, never .git/.lint-ai, no binaries or huge files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lintaid.workspace.ignore import IgnoreRules, is_always_excluded
from lintaid_client import paths
from tests.workspace_harness import age, running_workspace, wait_for, write


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    paths.ensure_state_dir(root)
    write(root / ".gitignore", "secret.txt\nbuild/\n*.log\n")
    write(root / "keep.md", "# Keep\n\nkeepword is here.\n")
    write(root / "src" / "app.py", "def keepfunc():\n    return 'keepword'\n")
    write(root / "secret.txt", "keepword in an ignored file\n")
    write(root / "build" / "out.txt", "keepword in an ignored folder\n")
    write(root / "debug.log", "keepword in a log\n")
    (root / "blob.dat").write_bytes(b"keepword\x00\x01\x02binary")
    write(root / ".lint-ai" / "notes.md", "keepword in the state folder\n")
    write(root / ".git" / "keepword.txt", "keepword inside .git\n")
    _git(root, "add", ".gitignore", "keep.md")
    return root


def test_git_listing_honours_ignore_rules(repo: Path) -> None:
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("local-only.md\n")
    write(repo / "local-only.md", "excluded by .git/info/exclude\n")
    rules = IgnoreRules(repo)
    assert rules.git
    listed = set(rules.list_files())
    assert {"keep.md", "src/app.py", ".gitignore", "blob.dat"} <= listed
    for never in ("secret.txt", "build/out.txt", "debug.log", "local-only.md",
                  ".lint-ai/notes.md", ".git/keepword.txt"):
        assert never not in listed
    assert rules.ignored(["secret.txt", "build/x/y.txt", "new.md", ".git/config",
                          ".lint-ai/memory.db", "a.log"]) == {
        "secret.txt", "build/x/y.txt", ".git/config", ".lint-ai/memory.db", "a.log"}
    # A tracked file is never ignored, as in git itself.
    _git(repo, "add", "-f", "debug.log")
    assert "debug.log" in rules.list_files()
    assert rules.ignored(["debug.log"]) == set()


def test_binary_huge_and_outside_symlinks_are_not_indexable(repo: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINTAID_MAX_FILE_BYTES", "100")
    write(repo / "big.txt", "x" * 101)
    write(repo / "small.txt", "x" * 100)
    outside = write(tmp_path / "outside.txt", "outside the root\n")
    os.symlink(outside, repo / "link-out.txt")
    os.symlink(repo / "keep.md", repo / "link-in.md")
    rules = IgnoreRules(repo)
    assert rules.max_file_bytes == 100
    assert rules.read_file("blob.dat") is None
    assert rules.read_file("big.txt") is None
    assert rules.read_file("small.txt") is not None
    assert rules.read_file("link-out.txt") is None
    assert rules.read_file("link-in.md") is not None
    assert rules.read_file("missing.txt") is None


def test_walk_outside_git(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root / "a.md", "a\n")
    write(root / "deep" / "er" / "b.txt", "b\n")
    write(root / ".git" / "HEAD", "not a real repository\n")
    write(root / ".lint-ai" / "x.md", "state\n")
    write(root / "node_modules" / "dep" / "index.js", "junk\n")
    os.symlink(root / "deep", root / "loop")  # a folder symlink is never followed
    rules = IgnoreRules(root)
    assert not rules.git
    assert rules.list_files() == ["a.md", "deep/er/b.txt"]
    assert rules.list_files(under="deep") == ["deep/er/b.txt"]
    assert is_always_excluded(".lint-ai/x.md") and is_always_excluded("sub/.git/HEAD")
    assert not is_always_excluded("docs/.github/x.md")


def test_live_workspace_never_indexes_ignored_binary_or_state_files(repo: Path) -> None:
    age(repo)
    with running_workspace(repo) as run:
        assert run.paths("keepword") == {"keep.md", "src/app.py"}
        write(repo / "secret.txt", "keepword changed while running\n")
        write(repo / "build" / "new.txt", "keepword new in an ignored folder\n")
        (repo / "blob2.dat").write_bytes(b"keepword\x00binary")
        write(repo / ".lint-ai" / "more.md", "keepword\n")
        write(repo / "visible.txt", "keepword visible\n")
        run.wait_searchable("keepword", "visible.txt")
        assert run.paths("keepword") == {"keep.md", "src/app.py", "visible.txt"}
        # Our own writes under .lint-ai/ must not feed back as events: the worker goes quiet.
        batches = run.ws.watcher.batches
        wait_for(lambda: run.ws.status()["queue_depth"] == 0)
        run.writer.wait_visible()
        assert run.ws.watcher.batches == batches


def test_gitignore_change_triggers_reconcile(repo: Path) -> None:
    age(repo)
    with running_workspace(repo) as run:
        assert "src/app.py" in run.paths("keepword")
        write(repo / ".gitignore", "secret.txt\nbuild/\n*.log\nsrc/\n")
        run.wait_gone("keepword", "src/app.py")
        # The summary is recorded just after the removal is searchable.
        wait_for(lambda: run.ws.last_reconcile.get("reason") == "ignore_rules")
